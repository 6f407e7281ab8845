//! Reminders through the real dispatcher, with the clock moved by hand: states in
//! zones east and west of UTC and across a DST change, acknowledging until the
//! next checkpoint, rescheduling, the archive, refusals naming their field,
//! sources pushing and withdrawing their own events only, and agents working in
//! their sponsor's inbox and no one else's.

use mailroom::schedule::Job;
use mailroom::testing::RequestExt;
use serde_json::{Value, json};

use crate::support::*;

/// Moves the node's clock to `moment` (never back).
fn set_clock(world: &World, moment: i64) {
    let now = mailroom::core::platform::Platform::now_ms(&world.node.platform);
    assert!(moment >= now, "the clock only moves forward");
    world.node.platform.advance(moment - now);
}

/// A person whose profile is in `zone`: (id, email, password-signed token).
fn person_in(world: &World, email: &str, zone: &str) -> (String, String) {
    let (id, token) = world.person(email);
    let changed = world.call("PATCH", "/api/me/profile", Some(&token), Some(json!({ "tz": zone })));
    assert_eq!(changed.status, 200, "{}", text(&changed));
    (id, token)
}

fn create(world: &World, token: &str, event: Value) -> Value {
    let created = world.call("POST", "/api/me/events", Some(token), Some(event));
    assert_eq!(created.status, 201, "{}", text(&created));
    body(&created)
}

fn get(world: &World, token: &str, id: &str) -> Value {
    let got = world.call("GET", &format!("/api/me/events/{id}"), Some(token), None);
    assert_eq!(got.status, 200, "{}", text(&got));
    body(&got)
}

/// Signs in again after the clock moved past an access token's 15 minutes.
fn fresh(world: &World, email: &str) -> String {
    sign_in(&world.node, email, PASSWORD).0
}

#[test]
fn a_new_event_takes_the_defaults_and_its_state_is_computed_in_the_persons_zone() {
    let world = World::at(utc("2026-11-20T16:00"));
    let (_, tokyo) = person_in(&world, "kei@example.com", "Asia/Tokyo");
    let (_, angeles) = person_in(&world, "lou@example.com", "America/Los_Angeles");
    // 16:00 UTC on the 20th is 01:00 on the 21st in Tokyo and 08:00 on the 20th in Los Angeles.
    let event = json!({ "title": "Passport photo", "due_at": "2026-11-21" });
    let in_tokyo = create(&world, &tokyo, event.clone());
    let in_angeles = create(&world, &angeles, event);
    assert_eq!(in_tokyo["state"], "today", "{in_tokyo}");
    assert_eq!(in_angeles["state"], "preparing", "{in_angeles}");
    assert_eq!(in_tokyo["fire_at"], "2026-10-22", "30 days before the due day");
    assert_eq!(in_tokyo["after_due"], "keep");
    assert_eq!(in_tokyo["done_label"], "Done");
    assert_eq!(in_tokyo["source"], "manual");
    assert_eq!(in_tokyo["editable"], true);
    assert_eq!(in_tokyo["acknowledged"], false);
    assert_eq!(in_tokyo["due_moment"], "2026-11-21T15:00:00.000Z", "the end of the 21st in Tokyo");
    assert_eq!(in_angeles["due_moment"], "2026-11-22T08:00:00.000Z", "the end of the 21st in Los Angeles");

    // Past the end of the day in Tokyo, still the day in Los Angeles.
    set_clock(&world, utc("2026-11-21T16:00"));
    let tokyo = fresh(&world, "kei@example.com");
    let angeles = fresh(&world, "lou@example.com");
    assert_eq!(get(&world, &tokyo, in_tokyo["id"].as_str().unwrap())["state"], "overdue");
    assert_eq!(get(&world, &angeles, in_angeles["id"].as_str().unwrap())["state"], "today");
}

#[test]
fn a_local_time_in_a_dst_gap_falls_due_after_the_gap_and_the_day_is_shorter() {
    let world = World::new();
    let (_, berlin) = person_in(&world, "bo@example.com", "Europe/Berlin");
    // 2027-03-28 02:30 does not exist in Berlin: clocks go from 02:00 to 03:00 CET→CEST.
    let event = create(&world, &berlin, json!({ "title": "Train", "due_at": "2027-03-28T02:30" }));
    assert_eq!(event["due_moment"], "2027-03-28T01:30:00.000Z", "03:30 CEST");
    let day = create(&world, &berlin, json!({ "title": "Clocks", "due_at": "2027-03-28" }));
    assert_eq!(day["due_moment"], "2027-03-28T22:00:00.000Z", "midnight CEST ends a 23-hour day");
    // Autumn: 2027-10-31 02:30 happens twice; the first is taken.
    let fold = create(&world, &berlin, json!({ "title": "Night bus", "due_at": "2027-10-31T02:30" }));
    assert_eq!(fold["due_moment"], "2027-10-31T00:30:00.000Z", "02:30 CEST, the earlier of the two");
}

#[test]
fn an_event_bound_to_a_place_falls_due_at_its_own_instant() {
    let world = World::new();
    let (_, berlin) = person_in(&world, "flo@example.com", "Europe/Berlin");
    let flight = create(&world, &berlin, json!({ "title": "Flight to Tokyo", "due_at": "2026-12-14T01:00+09:00" }));
    assert_eq!(flight["due_moment"], "2026-12-13T16:00:00.000Z");
    assert_eq!(flight["due_at"], "2026-12-14T01:00+09:00");
}

#[test]
fn acknowledging_silences_until_the_next_checkpoint_and_a_reschedule_reopens() {
    let world = World::at(utc("2026-12-01T10:00"));
    let (_, token) = person_in(&world, "ack@example.com", "UTC");
    let event =
        create(&world, &token, json!({ "title": "Tax return", "due_at": "2026-12-10", "fire_at": "2026-11-30" }));
    let id = event["id"].as_str().unwrap().to_string();
    assert_eq!(event["state"], "preparing");
    let acknowledged = world.call("POST", &format!("/api/me/events/{id}/ack"), Some(&token), None);
    assert_eq!(body(&acknowledged)["acknowledged"], true, "{}", text(&acknowledged));
    assert_eq!(body(&acknowledged)["quiet_until"], "2026-12-10T00:00:00.000Z", "until the due day begins");
    assert_eq!(body(&acknowledged)["state"], "preparing", "acknowledging is not done");

    set_clock(&world, utc("2026-12-10T00:00"));
    let token = fresh(&world, "ack@example.com");
    let today = get(&world, &token, &id);
    assert_eq!(today["state"], "today");
    assert_eq!(today["acknowledged"], false, "the next checkpoint ends the silence");

    // Done, then the same due_at: stays done; a new due_at: reopened and recomputed.
    let done = world.call("POST", &format!("/api/me/events/{id}/done"), Some(&token), None);
    assert_eq!(body(&done)["state"], "done");
    assert_eq!(body(&done)["closed_as"], "Done");
    let same = world.call(
        "PATCH",
        &format!("/api/me/events/{id}"),
        Some(&token),
        Some(json!({ "due_at": "2026-12-10", "title": "Tax return 2026" })),
    );
    assert_eq!(body(&same)["state"], "done", "{}", text(&same));
    assert_eq!(body(&same)["title"], "Tax return 2026");
    let moved =
        world.call("PATCH", &format!("/api/me/events/{id}"), Some(&token), Some(json!({ "due_at": "2026-12-20" })));
    assert_eq!(body(&moved)["state"], "preparing", "{}", text(&moved));
    assert_eq!(body(&moved)["closed_as"], Value::Null);
    assert_eq!(body(&moved)["fire_at"], "2026-11-30", "a fire_at that was chosen stays");
    assert_eq!(get(&world, &token, &id)["state"], "preparing", "stored as answered");
}

/// A `fire_at` someone chose is never moved silently: a new due day before it
/// is refused, naming both fields, and nothing changes; moved with it, or
/// after it, the change is taken. One left to its default follows the due day.
#[test]
fn a_due_date_before_a_chosen_fire_at_is_refused_naming_both_and_a_default_one_follows() {
    let world = World::at(utc("2026-12-01T10:00"));
    let (_, token) = person_in(&world, "move@example.com", "UTC");
    let chosen =
        create(&world, &token, json!({ "title": "Tax return", "due_at": "2027-02-10", "fire_at": "2027-01-30" }));
    let path = format!("/api/me/events/{}", chosen["id"].as_str().unwrap());
    let change = |changes: Value| world.call("PATCH", &path, Some(&token), Some(changes));

    let refused = change(json!({ "due_at": "2027-01-20" }));
    assert_refused(&refused, 400, "due_before_fire_at");
    let error = &body(&refused)["error"];
    for part in ["message", "fix"] {
        let words = error[part].as_str().unwrap();
        assert!(words.contains("`due_at`") && words.contains("`fire_at`"), "{part}: {error}");
    }
    assert!(error["message"].as_str().unwrap().contains("2027-01-20"), "{error}");
    assert!(error["message"].as_str().unwrap().contains("2027-01-30"), "{error}");
    let unchanged = get(&world, &token, chosen["id"].as_str().unwrap());
    assert_eq!((unchanged["due_at"].as_str(), unchanged["fire_at"].as_str()), (Some("2027-02-10"), Some("2027-01-30")));
    // A time on the fire day itself is not before it.
    let same_day = change(json!({ "due_at": "2027-01-30T09:00" }));
    assert_eq!(same_day.status, 200, "{}", text(&same_day));
    let both = change(json!({ "due_at": "2027-01-20", "fire_at": "2027-01-10" }));
    assert_eq!(
        (body(&both)["due_at"].as_str(), body(&both)["fire_at"].as_str()),
        (Some("2027-01-20"), Some("2027-01-10"))
    );

    // Without a fire_at of its own, the event's moves with its due day, earlier or later.
    let by_default = create(&world, &token, json!({ "title": "Visa", "due_at": "2027-02-10" }));
    assert_eq!(by_default["fire_at"], "2027-01-11");
    let path = format!("/api/me/events/{}", by_default["id"].as_str().unwrap());
    let earlier = world.call("PATCH", &path, Some(&token), Some(json!({ "due_at": "2027-01-05" })));
    assert_eq!(body(&earlier)["fire_at"], "2026-12-06", "{}", text(&earlier));
    let later = world.call("PATCH", &path, Some(&token), Some(json!({ "due_at": "2027-01-31" })));
    assert_eq!(body(&later)["fire_at"], "2027-01-01", "{}", text(&later));
}

#[test]
fn the_list_shows_open_events_by_state_and_the_archive_how_each_closed() {
    let world = World::at(utc("2026-12-01T10:00"));
    let (_, token) = person_in(&world, "lists@example.com", "UTC");
    create(&world, &token, json!({ "title": "Later", "due_at": "2027-06-01" }));
    create(&world, &token, json!({ "title": "Soon", "due_at": "2026-12-20" }));
    create(&world, &token, json!({ "title": "Now", "due_at": "2026-12-01T18:00" }));
    create(&world, &token, json!({ "title": "Late", "due_at": "2026-11-30" }));
    create(&world, &token, json!({ "title": "Gone", "due_at": "2026-11-30", "after_due": "expire" }));
    let done = create(&world, &token, json!({ "title": "Finished", "due_at": "2026-12-02", "done_label": "Paid" }));
    world.call("POST", &format!("/api/me/events/{}/done", done["id"].as_str().unwrap()), Some(&token), None);
    let deleted = create(&world, &token, json!({ "title": "Dropped", "due_at": "2026-12-03" }));
    world.call("DELETE", &format!("/api/me/events/{}", deleted["id"].as_str().unwrap()), Some(&token), None);

    let titles = |query: &str| -> Vec<String> {
        let listed = world.call("GET", &format!("/api/me/events{query}"), Some(&token), None);
        assert_eq!(listed.status, 200, "{}", text(&listed));
        body(&listed)["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|event| event["title"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(titles(""), ["Late", "Now", "Soon", "Later"], "open, soonest due first");
    assert_eq!(titles("?state=overdue"), ["Late"]);
    assert_eq!(titles("?state=today"), ["Now"]);
    assert_eq!(titles("?state=preparing"), ["Soon"]);
    assert_eq!(titles("?state=scheduled"), ["Later"]);
    let archive = world.call("GET", "/api/me/events?archive=true", Some(&token), None);
    let archive = body(&archive)["events"].as_array().unwrap().clone();
    let closed: Vec<(String, String)> = archive
        .iter()
        .map(|event| (event["title"].as_str().unwrap().to_string(), event["closed_as"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        closed,
        [("Dropped".into(), "Withdrawn".into()), ("Finished".into(), "Paid".into()), ("Gone".into(), "Expired".into())],
        "most recently closed first"
    );
    assert_eq!(world.call("GET", "/api/me/events?state=done", Some(&token), None).status, 400, "done is the archive's");
}

#[test]
fn each_malformed_field_is_refused_by_name_and_nothing_is_stored() {
    let world = World::new();
    let (_, token) = person_in(&world, "bad@example.com", "UTC");
    let cases = [
        (json!({ "title": "x", "due_at": "2026-2-3" }), "due_at"),
        (json!({ "title": "x", "due_at": "2026-02-30" }), "due_at"),
        (json!({ "title": "x", "due_at": "2026-12-14T24:00" }), "due_at"),
        (json!({ "title": "x", "due_at": "2026-12-14T09:00+19:00" }), "due_at"),
        (json!({ "title": "x", "due_at": "2026-12-14", "fire_at": "2026-12-15" }), "fire_at"),
        (json!({ "title": "x", "due_at": "2026-12-14", "fire_at": "14.12.2026" }), "fire_at"),
        (json!({ "title": "", "due_at": "2026-12-14" }), "title"),
        (json!({ "title": "x".repeat(201), "due_at": "2026-12-14" }), "title"),
        (json!({ "title": "two\nlines", "due_at": "2026-12-14" }), "title"),
        (json!({ "title": "x", "due_at": "2026-12-14", "subtitle": "y".repeat(201) }), "subtitle"),
        (json!({ "title": "x", "due_at": "2026-12-14", "done_label": "z".repeat(41) }), "done_label"),
        (json!({ "title": "x", "due_at": "2026-12-14", "deep_link": "javascript:alert(1)" }), "deep_link"),
        (json!({ "title": "x", "due_at": "2026-12-14", "after_due": "forget" }), "after_due"),
    ];
    for (event, field) in cases {
        let refused = world.call("POST", "/api/me/events", Some(&token), Some(event.clone()));
        assert_eq!(refused.status, 400, "{event}: {}", text(&refused));
        let error = &body(&refused)["error"];
        let words = format!("{} {} {}", error["message"], error["reason"], error["fix"]);
        assert!(words.contains(field), "{event}: the refusal names `{field}`: {words}");
    }
    for (profile, field) in [
        (json!({ "tz": "Mars/Olympus" }), "tz"),
        (json!({ "quiet_start": "7:00", "quiet_end": "08:00" }), "quiet_start"),
        (json!({ "quiet_start": "22:00" }), "quiet_end"),
    ] {
        let refused = world.call("PATCH", "/api/me/profile", Some(&token), Some(profile.clone()));
        assert_eq!(refused.status, 400, "{profile}: {}", text(&refused));
        assert!(text(&refused).contains(field), "{profile}: names `{field}`: {}", text(&refused));
    }
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM reminder_events"), 0);
    let profile = body(&world.call("GET", "/api/me/profile", Some(&token), None));
    assert_eq!(profile["tz"], "UTC");
    assert_eq!(profile["quiet_start"], Value::Null);
}

#[test]
fn changing_the_zone_moves_open_events_to_it() {
    let world = World::new();
    let (_, token) = person_in(&world, "mover@example.com", "UTC");
    let event = create(&world, &token, json!({ "title": "Dentist", "due_at": "2026-12-14T09:00" }));
    assert_eq!(event["due_moment"], "2026-12-14T09:00:00.000Z");
    let moved = world.call("PATCH", "/api/me/profile", Some(&token), Some(json!({ "tz": "America/New_York" })));
    assert_eq!(body(&moved)["tz"], "America/New_York", "{}", text(&moved));
    let event = get(&world, &token, event["id"].as_str().unwrap());
    assert_eq!(event["due_moment"], "2026-12-14T14:00:00.000Z", "09:00 EST");
}

#[test]
fn a_source_pushes_and_withdraws_its_own_events_only() {
    let world = World::at(utc("2026-12-01T10:00"));
    let (_, ben_token) = person_in(&world, "ben@example.com", "UTC");
    let (_, visas) = world.source("visa-office");
    let (_, banks) = world.source("bank");
    let push = |credential: &str, payload: Value| {
        world.node.send(mailroom::testing::request("PUT", "/api/source/events").bearer(credential).json(payload))
    };
    let visa = json!({ "person": "Ben@Example.com", "source_ref": "visa-4471", "topic": "renewal", "title": "Visa renewal", "due_at": "2026-12-20" });
    let first = push(&visas, visa.clone());
    assert_eq!(first.status, 200, "{}", text(&first));
    let id = body(&first)["id"].as_str().unwrap().to_string();
    assert_eq!(body(&first)["source"], "visa-office");
    assert_eq!(body(&first)["editable"], false);

    // The same key updates the one event; the person closes it; the same due_at leaves it closed.
    let mut renamed = visa.clone();
    renamed["title"] = json!("Visa renewal (passport ready)");
    assert_eq!(body(&push(&visas, renamed.clone()))["id"], id.as_str());
    world.call("POST", &format!("/api/me/events/{id}/done"), Some(&ben_token), None);
    assert_eq!(body(&push(&visas, renamed.clone()))["state"], "done");
    // A new due_at reopens it.
    renamed["due_at"] = json!("2027-01-20");
    let reopened = push(&visas, renamed);
    assert_eq!(body(&reopened)["state"], "scheduled", "reopened, 30 days before: {}", text(&reopened));
    assert_eq!(body(&reopened)["closed_as"], Value::Null);
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM reminder_events"), 1);

    // Another source cannot reach it under the same key: its own key makes its own event.
    let other = push(&banks, visa.clone());
    assert_ne!(body(&other)["id"], id.as_str());
    let withdraw = |credential: &str| {
        world.node.send(
            mailroom::testing::request(
                "DELETE",
                "/api/source/events?person=ben@example.com&source_ref=visa-4471&topic=renewal",
            )
            .bearer(credential),
        )
    };
    assert_eq!(body(&withdraw(&banks))["id"], body(&other)["id"]);
    assert_eq!(get(&world, &ben_token, &id)["state"], "scheduled", "the bank withdrew its own event, not the office's");
    let withdrawn = withdraw(&visas);
    assert_eq!(body(&withdrawn)["state"], "withdrawn", "{}", text(&withdrawn));
    let missing = world.node.send(
        mailroom::testing::request("DELETE", "/api/source/events?person=ben@example.com&source_ref=nothing&topic=")
            .bearer(&visas),
    );
    assert_refused(&missing, 404, "not_found");

    // The person cannot edit or delete a source's event: the refusal names the source.
    let edit = world.call("PATCH", &format!("/api/me/events/{id}"), Some(&ben_token), Some(json!({ "title": "Mine" })));
    assert_refused(&edit, 403, "other_sources_event");
    assert!(text(&edit).contains("visa-office"), "{}", text(&edit));
    assert_refused(
        &world.call("DELETE", &format!("/api/me/events/{id}"), Some(&ben_token), None),
        403,
        "other_sources_event",
    );

    // A source's calls are its own in the audit chain, with no one behind them.
    let entry = world.node.database.count(&format!(
        "SELECT COUNT(*) FROM audit_entries WHERE action = 'push_event' AND actor LIKE 'src_%' AND delegator IS NULL AND object = '{id}'"
    ));
    assert!(entry >= 3, "every push is recorded as the source");

    // A source credential opens nothing else, and a person cannot push.
    assert_refused(&world.call("GET", "/api/me", Some(&visas), None), 403, "source_only_pushes");
    assert_refused(&world.call("GET", "/api/me/events", Some(&visas), None), 403, "source_only_pushes");
    assert_refused(&push(&ben_token, visa.clone()), 403, "sources_only");
    assert_refused(&world.call("PUT", "/api/source/events", None, Some(visa.clone())), 401, "not_signed_in");
    let unknown = json!({ "person": "nobody@example.com", "source_ref": "x", "title": "x", "due_at": "2026-12-20" });
    assert_refused(&push(&visas, unknown), 404, "not_found");
}

#[test]
fn a_revoked_source_or_a_forged_credential_is_refused_as_dead() {
    let world = World::new();
    world.person("ben@example.com");
    let (source, credential) = world.source("visa-office");
    let visa = json!({ "person": "ben@example.com", "source_ref": "v", "title": "Visa", "due_at": "2026-12-20" });
    let push = |credential: &str| {
        world.node.send(mailroom::testing::request("PUT", "/api/source/events").bearer(credential).json(visa.clone()))
    };
    assert_eq!(push(&credential).status, 200);
    let forged = format!("{}AAAA", &credential[..credential.len() - 4]);
    let refused = push(&forged);
    assert_refused(&refused, 401, "source_credential_invalid");
    assert!(refused.header("www-authenticate").unwrap_or_default().contains("invalid_token"));
    let revoked = world.admin("POST", &format!("/api/reminder-sources/{source}/revoke"), None);
    assert!(body(&revoked)["revoked_at"].is_string(), "{}", text(&revoked));
    assert_refused(&push(&credential), 401, "source_revoked");
    assert_refused(
        &world.admin("POST", &format!("/api/reminder-sources/{source}/revoke"), None),
        409,
        "source_revoked",
    );
    let listed = body(&world.admin("GET", "/api/reminder-sources", None));
    assert_eq!(listed["sources"][0]["name"], "visa-office");
    assert!(
        !text(&world.admin("GET", "/api/reminder-sources", None)).contains("mr_src_"),
        "the credential is shown once"
    );
    assert_refused(
        &world.admin("POST", "/api/reminder-sources", Some(json!({ "name": "visa-office" }))),
        409,
        "source_name_taken",
    );
}

#[test]
fn a_source_name_never_passes_for_manual_or_for_another_in_another_case() {
    let world = World::new();
    world.source("visa-office");
    // `manual` names the events people add: reserved in any case and spacing,
    // and a name taken in one case is taken in every other.
    for reserved in ["manual", "Manual", "MANUAL", "mAnUaL", "  manual ", "\tManual\n"] {
        let refused = world.admin("POST", "/api/reminder-sources", Some(json!({ "name": reserved })));
        assert_refused(&refused, 400, "invalid_source_name");
        assert!(body(&refused)["error"]["reason"].as_str().unwrap().contains("`manual` in any case"));
    }
    for lookalike in ["m\u{0430}nual", "manual\u{200b}", "\u{ff4d}anual"] {
        assert_refused(
            &world.admin("POST", "/api/reminder-sources", Some(json!({ "name": lookalike }))),
            400,
            "invalid_source_name",
        );
    }
    assert_refused(
        &world.admin("POST", "/api/reminder-sources", Some(json!({ "name": "Visa-Office" }))),
        409,
        "source_name_taken",
    );
    assert!(!text(&world.admin("GET", "/api/reminder-sources", None)).to_lowercase().contains("\"manual\""));
}

#[test]
fn an_agent_works_in_its_sponsors_inbox_and_no_one_elses() {
    let world = World::at(utc("2026-12-01T10:00"));
    let (ben, ben_token) = person_in(&world, "ben@example.com", "Europe/Berlin");
    let (_, cy_token) = person_in(&world, "cy@example.com", "UTC");
    let (_, agent) = world.mint(&ben, &["reminders.read", "reminders.manage"], json!([]));
    let (_, reader) = world.mint(&ben, &["reminders.read"], json!([]));
    let (_, visas) = world.source("visa-office");

    // The agent's event is manual, in Ben's inbox, in Ben's zone.
    let created = world.call(
        "POST",
        "/api/me/events",
        Some(&agent),
        Some(json!({ "title": "Call the embassy", "due_at": "2026-12-14T09:00" })),
    );
    assert_eq!(created.status, 201, "{}", text(&created));
    let created = body(&created);
    assert_eq!(created["source"], "manual");
    assert_eq!(created["due_moment"], "2026-12-14T08:00:00.000Z", "09:00 in Berlin");
    let by_hand = create(&world, &ben_token, json!({ "title": "Renew the lease", "due_at": "2026-12-18" }));
    let listed = body(&world.call("GET", "/api/me/events", Some(&agent), None));
    assert_eq!(listed["events"].as_array().unwrap().len(), 2, "{listed}");

    // It edits and deletes manual events, its person's own included, and reschedules.
    let hand_id = by_hand["id"].as_str().unwrap();
    let edited = world.call(
        "PATCH",
        &format!("/api/me/events/{hand_id}"),
        Some(&agent),
        Some(json!({ "due_at": "2026-12-19" })),
    );
    assert_eq!(body(&edited)["due_at"], "2026-12-19", "{}", text(&edited));
    assert_eq!(world.call("DELETE", &format!("/api/me/events/{hand_id}"), Some(&agent), None).status, 200);

    // A source's event: closed or acknowledged, never edited or withdrawn.
    let pushed = world.node.send(
        mailroom::testing::request("PUT", "/api/source/events").bearer(&visas).json(
            json!({ "person": "ben@example.com", "source_ref": "visa-4471", "title": "Visa renewal", "due_at": "2026-12-20" }),
        ),
    );
    let visa = body(&pushed)["id"].as_str().unwrap().to_string();
    let refused = world.call("PATCH", &format!("/api/me/events/{visa}"), Some(&agent), Some(json!({ "title": "x" })));
    assert_refused(&refused, 403, "other_sources_event");
    assert!(text(&refused).contains("visa-office") && text(&refused).contains("overwrite"), "{}", text(&refused));
    assert_refused(
        &world.call("DELETE", &format!("/api/me/events/{visa}"), Some(&agent), None),
        403,
        "other_sources_event",
    );
    assert_eq!(
        body(&world.call("POST", &format!("/api/me/events/{visa}/ack"), Some(&agent), None))["acknowledged"],
        true
    );
    assert_eq!(body(&world.call("POST", &format!("/api/me/events/{visa}/done"), Some(&agent), None))["state"], "done");

    // Cy's events are not there for Ben's agent: answered as if they did not exist.
    let cys = create(&world, &cy_token, json!({ "title": "Cy's own", "due_at": "2026-12-14" }));
    let cys = cys["id"].as_str().unwrap();
    assert_refused(&world.call("GET", &format!("/api/me/events/{cys}"), Some(&agent), None), 404, "not_found");
    assert_refused(&world.call("POST", &format!("/api/me/events/{cys}/done"), Some(&agent), None), 404, "not_found");
    assert_eq!(get(&world, &cy_token, cys)["state"], "preparing");

    // The profile is the sponsor's; where notifications go is the person's alone.
    assert_eq!(body(&world.call("GET", "/api/me/profile", Some(&agent), None))["email"], "ben@example.com");
    let webhook =
        world.call("PUT", "/api/me/profile/webhook", Some(&agent), Some(json!({ "url": "https://evil.example/" })));
    assert_refused(&webhook, 403, "not_for_agents");

    // A reader cannot change anything; the audit names the agent for its sponsor.
    let refused =
        world.call("POST", "/api/me/events", Some(&reader), Some(json!({ "title": "x", "due_at": "2026-12-14" })));
    assert_refused(&refused, 403, "outside_ceiling");
    assert_eq!(world.call("GET", "/api/me/events", Some(&reader), None).status, 200);
    let recorded = world.node.database.count(&format!(
        "SELECT COUNT(*) FROM audit_entries WHERE action = 'create_event' AND actor LIKE 'agt_%' AND delegator = '{ben}' AND outcome = 'ok'"
    ));
    assert_eq!(recorded, 1);
}

#[test]
fn an_inbox_holds_a_bounded_number_of_open_events() {
    let world = World::new();
    let (ben, token) = person_in(&world, "full@example.com", "UTC");
    let limit = fill_open_events(&world, &ben);
    let refused = world.call(
        "POST",
        "/api/me/events",
        Some(&token),
        Some(json!({ "title": "One more", "due_at": "2027-01-02" })),
    );
    assert_refused(&refused, 409, "too_many_open_events");
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM reminder_events"), limit);
}

/// Fills `person`'s inbox with as many open events as the node keeps,
/// straight into the table; answers how many that is.
pub(crate) fn fill_open_events(world: &World, person: &str) -> i64 {
    let limit = mailroom_contract::api::MAXIMUM_OPEN_EVENTS as i64;
    world.node.database.execute_sql(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {limit}) \
         INSERT INTO reminder_events (id, person_id, source_id, source_ref, topic, title, due_at, fire_at, after_due, \
         done_label, fire_moment, day_moment, due_moment, created_by, created_at, updated_at) \
         SELECT 'evt_' || printf('%026d', i), '{person}', 'manual', 'manual:' || i, '', 'Filler', '2027-01-01', \
         '2026-12-02', 'keep', 'Done', 0, 0, 1, '{person}', 0, 0 FROM n"
    ));
    limit
}

/// The person's webhook secret and a signature check as a receiver would do it.
pub(crate) fn verify_signature(secret: &str, header: &str, body: &str) -> bool {
    use hmac::{Hmac, KeyInit, Mac};
    let Some((timestamp, signature)) = header.strip_prefix("t=").and_then(|rest| rest.split_once(",v1=")) else {
        return false;
    };
    let mut mac = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{timestamp}.{body}").as_bytes());
    let expected: String = mac.finalize().into_bytes().iter().map(|byte| format!("{byte:02x}")).collect();
    expected == signature
}

pub(crate) fn header<'a>(posted: &'a mailroom::testing::PostedWebhook, name: &str) -> &'a str {
    posted.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str()).unwrap_or_default()
}

#[test]
fn the_scheduled_run_notifies_once_per_checkpoint_at_the_local_time_outside_quiet_hours() {
    let world = World::at(utc("2026-12-04T12:00"));
    let (_, token) = person_in(&world, "kei@example.com", "Asia/Tokyo");
    let set = world.call(
        "PATCH",
        "/api/me/profile",
        Some(&token),
        Some(json!({ "quiet_start": "22:00", "quiet_end": "07:00", "email": true })),
    );
    assert_eq!(set.status, 200, "{}", text(&set));
    let webhook = world.call(
        "PUT",
        "/api/me/profile/webhook",
        Some(&token),
        Some(json!({ "url": "https://hooks.example.org/kei" })),
    );
    assert_eq!(webhook.status, 200, "{}", text(&webhook));
    let secret = body(&webhook)["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"));
    assert!(!text(&world.call("GET", "/api/me/profile", Some(&token), None)).contains(&secret), "shown once");
    let event =
        create(&world, &token, json!({ "title": "Visa renewal", "due_at": "2026-12-10", "fire_at": "2026-12-05" }));
    let id = event["id"].as_str().unwrap().to_string();

    // 21:00 in Tokyo on the 4th: still scheduled.
    assert_eq!(world.node.run_reminders().delivered, 0);
    // Midnight in Tokyo on the 5th: preparing, but inside quiet hours.
    set_clock(&world, utc("2026-12-04T15:00"));
    let run = world.node.run_reminders();
    assert_eq!((run.delivered, run.waiting_for_quiet_hours), (0, 2), "{run:?}");
    // 07:00 in Tokyo: quiet hours are over; both channels, once.
    set_clock(&world, utc("2026-12-04T22:00"));
    assert_eq!(world.node.run_reminders().delivered, 2);
    assert_eq!(world.node.run_reminders().delivered, 0, "once per checkpoint");
    let posted = world.node.webhooks.posted.borrow().clone();
    assert_eq!(posted.len(), 1);
    assert_eq!(posted[0].url, "https://hooks.example.org/kei");
    assert!(
        verify_signature(&secret, header(&posted[0], "mailroom-signature"), &posted[0].body),
        "signed with the shown secret"
    );
    assert!(!verify_signature("whsec_other", header(&posted[0], "mailroom-signature"), &posted[0].body));
    let delivered: Value = serde_json::from_str(&posted[0].body).unwrap();
    assert_eq!(delivered["state"], "preparing");
    assert_eq!(delivered["event"]["id"], id.as_str());
    assert_eq!(delivered["checkpoint"], "2026-12-04T15:00:00.000Z", "midnight on the fire_at day in Tokyo");
    let mail = world.node.mailer.sent.borrow().clone();
    assert_eq!(mail.len(), 1);
    assert_eq!(mail[0].envelope_to, "kei@example.com");
    assert_eq!(mail[0].envelope_from, mailroom::testing::TEST_REMINDER_SENDER);
    let written = String::from_utf8_lossy(&mail[0].raw).into_owned();
    assert!(written.contains("Coming up: Visa renewal"), "{written}");
    // Dated by the node's clock, never the system's (which workerd lacks).
    assert!(written.contains("Date: Fri, 4 Dec 2026 22:00:00 +0000"), "{written}");

    // With a webhook set, the rest of the profile still changes and the secret stays.
    let changed = world.call(
        "PATCH",
        "/api/me/profile",
        Some(&fresh(&world, "kei@example.com")),
        Some(json!({ "quiet_start": "23:00", "quiet_end": "06:00" })),
    );
    assert_eq!(changed.status, 200, "{}", text(&changed));
    assert_eq!(body(&changed)["channels"]["webhook_url"], "https://hooks.example.org/kei");
    let token = fresh(&world, "kei@example.com");
    let shown = get(&world, &token, &id);
    let outcomes: Vec<&str> =
        shown["deliveries"].as_array().unwrap().iter().map(|d| d["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["delivered", "delivered"], "{shown}");
    let listed = body(&world.call("GET", "/api/me/events", Some(&token), None));
    assert_eq!(listed["events"][0]["deliveries"], shown["deliveries"], "the list shows what the event shows");

    // Acknowledged: the due day's start is the next checkpoint, and it is notified.
    world.call("POST", &format!("/api/me/events/{id}/ack"), Some(&token), None);
    set_clock(&world, utc("2026-12-09T22:00"));
    let run = world.node.run_reminders();
    assert_eq!(run.delivered, 2, "the due day, 07:00 in Tokyo: {run:?}");
    assert_eq!(world.node.webhooks.posted.borrow().len(), 2);

    // Overdue, acknowledged at once: nothing more until rescheduled.
    set_clock(&world, utc("2026-12-10T15:00"));
    let token = fresh(&world, "kei@example.com");
    world.call("POST", &format!("/api/me/events/{id}/ack"), Some(&token), None);
    set_clock(&world, utc("2026-12-10T23:00"));
    assert_eq!(world.node.run_reminders().delivered, 0, "acknowledged while overdue");
    assert_eq!(world.node.webhooks.posted.borrow().len(), 2);
}

#[test]
fn a_failed_delivery_is_tried_again_by_the_next_run_without_sending_twice() {
    let world = World::at(utc("2026-12-05T09:00"));
    let (_, token) = person_in(&world, "flaky@example.com", "UTC");
    world.call("PATCH", "/api/me/profile", Some(&token), Some(json!({ "email": true })));
    world.call(
        "PUT",
        "/api/me/profile/webhook",
        Some(&token),
        Some(json!({ "url": "https://hooks.example.org/flaky" })),
    );
    let event = create(&world, &token, json!({ "title": "Rent", "due_at": "2026-12-05T18:00" }));
    world.node.webhooks.status.set(503);
    let first = world.node.run_reminders();
    assert_eq!((first.delivered, first.failed), (1, 1), "{first:?}");
    let shown = get(&world, &token, event["id"].as_str().unwrap());
    let webhook = shown["deliveries"].as_array().unwrap().iter().find(|d| d["channel"] == "webhook").unwrap().clone();
    assert_eq!(webhook["outcome"], "failed");
    assert_eq!(webhook["last_error"], "the webhook answered 503");
    world.node.webhooks.status.set(200);
    set_clock(&world, utc("2026-12-05T09:01"));
    let second = world.node.run_reminders();
    assert_eq!((second.delivered, second.failed), (1, 0), "only the webhook again: {second:?}");
    assert_eq!(world.node.mailer.sent.borrow().len(), 1, "the email went once");
    assert_eq!(world.node.webhooks.posted.borrow().len(), 2, "one failed, one delivered");
    let shown = get(&world, &token, event["id"].as_str().unwrap());
    let webhook = shown["deliveries"].as_array().unwrap().iter().find(|d| d["channel"] == "webhook").unwrap().clone();
    assert_eq!((webhook["outcome"].clone(), webhook["attempts"].clone()), (json!("delivered"), json!(2)));
}

#[test]
fn the_run_closes_events_that_expire_and_never_notifies_them() {
    let world = World::at(utc("2026-12-05T09:00"));
    let (_, token) = person_in(&world, "expiring@example.com", "UTC");
    world.call("PATCH", "/api/me/profile", Some(&token), Some(json!({ "email": true })));
    create(&world, &token, json!({ "title": "Offer ends", "due_at": "2026-12-04", "after_due": "expire" }));
    let run = world.node.run_reminders();
    assert_eq!((run.expired, run.delivered), (1, 0), "{run:?}");
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM reminder_events WHERE closed_as = 'expired'"), 1);
}

/// wrangler.toml's cron triggers are exactly the schedule's table: a trigger
/// the table does not name would run nothing, and a row wrangler never fires
/// would never run.
#[test]
fn wrangler_declares_exactly_the_cron_triggers_the_schedule_names() {
    let wrangler = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/wrangler.toml")).unwrap();
    let crons = wrangler.lines().find(|line| line.starts_with("crons")).unwrap_or_default();
    let declared: Vec<&str> = crons.split('"').skip(1).step_by(2).collect();
    let named: Vec<&str> = mailroom::schedule::CRONS.iter().map(|(expression, _)| *expression).collect();
    assert_eq!(declared, named, "wrangler.toml: {crons}");
    for job in [Job::DeliverReminders, Job::SweepAgentMessages, Job::BuildExports, Job::Upkeep] {
        assert!(mailroom::schedule::cron_of(job).is_some(), "no cron runs {job:?}");
    }
}

/// A cron the table does not name runs nothing and says so, rather than
/// running some job by default.
#[test]
fn an_unknown_cron_runs_nothing_and_names_itself() {
    let world = World::at(utc("2026-12-01T10:00"));
    let (_, token) = person_in(&world, "unknown-cron@example.com", "UTC");
    create(&world, &token, json!({ "title": "Due now", "due_at": "2026-12-01T09:00" }));
    let failures = world.node.run(mailroom::schedule::on_schedule(&world.node.node(), "0 0 * * *")).unwrap_err();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0], mailroom::schedule::JobFailure::UnknownCron("0 0 * * *".into()));
    assert!(failures[0].to_string().contains("0 0 * * *"), "{}", failures[0]);
    let delivered = world.node.database.count("SELECT COUNT(*) FROM notifications");
    assert_eq!(delivered, 0, "no reminder went out on a cron that runs nothing");
}

#[test]
fn open_events_page_soonest_first_and_the_archive_is_one_page() {
    let world = World::at(utc("2026-12-01T10:00"));
    let (_, token) = person_in(&world, "pages@example.com", "UTC");
    for day in 1..=5 {
        create(&world, &token, json!({ "title": format!("Day {day}"), "due_at": format!("2027-01-0{day}") }));
    }
    let mut titles = Vec::new();
    let mut path = "/api/me/events?limit=2".to_string();
    loop {
        let page = body(&world.call("GET", &path, Some(&token), None));
        titles.extend(
            page["events"].as_array().unwrap().iter().map(|event| event["title"].as_str().unwrap().to_string()),
        );
        let Some(cursor) = page["next_cursor"].as_str() else { break };
        path = format!("/api/me/events?limit=2&cursor={cursor}");
    }
    assert_eq!(titles, ["Day 1", "Day 2", "Day 3", "Day 4", "Day 5"]);
    let archive = body(&world.call("GET", "/api/me/events?archive=true&limit=2", Some(&token), None));
    assert_eq!(archive["next_cursor"], Value::Null);
    let foreign = world.call("GET", "/api/me/events?cursor=not-a-cursor", Some(&token), None);
    assert_eq!(foreign.status, 400, "{}", text(&foreign));
}
