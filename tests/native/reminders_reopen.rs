//! Taking back a Done or a Delete (`reopen_event`): the event opens again in
//! the state its kept moments give it now, is not told of twice for a
//! checkpoint it was already told of, and only what a person closed by hand
//! reopens: not another source's withdrawal, not an expiry, not past the
//! inbox's bound.

use mailroom::testing::RequestExt;
use serde_json::{Value, json};

use crate::support::*;

fn create(world: &World, token: &str, event: Value) -> String {
    let created = world.call("POST", "/api/me/events", Some(token), Some(event));
    assert_eq!(created.status, 201, "{}", text(&created));
    body(&created)["id"].as_str().unwrap().to_string()
}

fn post(world: &World, token: &str, id: &str, verb: &str) -> mailroom::core::http::Response {
    world.call("POST", &format!("/api/me/events/{id}/{verb}"), Some(token), None)
}

#[test]
fn a_done_event_reopens_in_the_state_its_moments_give_and_is_not_told_of_twice() {
    let world = World::at(utc("2026-12-05T09:00"));
    let (ben, token) = world.person("ben@example.com");
    world.call("PATCH", "/api/me/profile", Some(&token), Some(json!({ "email": true })));
    let id = create(&world, &token, json!({ "title": "Pay rent", "due_at": "2026-12-05" }));
    assert_eq!(world.node.run_reminders().delivered, 1, "due today: told once by email");

    let done = post(&world, &token, &id, "done");
    assert_eq!(body(&done)["state"], "done");
    let reopened = post(&world, &token, &id, "reopen");
    assert_eq!(reopened.status, 200, "{}", text(&reopened));
    assert_eq!(body(&reopened)["state"], "today", "as if it had never closed: {}", text(&reopened));
    assert_eq!(body(&reopened)["closed_as"], Value::Null);
    assert_eq!(body(&reopened)["closed_at"], Value::Null);
    let listed = body(&world.call("GET", "/api/me/events", Some(&token), None));
    assert_eq!(listed["events"].as_array().unwrap().len(), 1, "back in the open list: {listed}");
    assert_eq!(world.node.run_reminders().delivered, 0, "today was told of already");
    assert_eq!(world.node.mailer.sent.borrow().len(), 1);

    // Reopening an open event changes nothing and is answered as it is.
    let again = post(&world, &token, &id, "reopen");
    assert_eq!((again.status, body(&again)["state"].clone()), (200, json!("today")));
    assert_eq!(
        world.node.database.count(&format!(
            "SELECT COUNT(*) FROM audit_entries WHERE action = 'reopen_event' AND actor = '{ben}' AND object = '{id}' AND outcome = 'ok'"
        )),
        2,
        "each call is in the chain, named for the event"
    );
}

#[test]
fn a_deleted_manual_event_reopens_but_a_source_s_withdrawal_and_an_expiry_do_not() {
    let world = World::at(utc("2026-12-05T09:00"));
    let (_, token) = world.person("ben@example.com");
    let deleted = create(&world, &token, json!({ "title": "Call the bank", "due_at": "2027-02-20" }));
    world.call("DELETE", &format!("/api/me/events/{deleted}"), Some(&token), None);
    assert_eq!(body(&post(&world, &token, &deleted, "reopen"))["state"], "scheduled");

    let expired =
        create(&world, &token, json!({ "title": "Offer ends", "due_at": "2026-12-04", "after_due": "expire" }));
    assert_eq!(world.node.run_reminders().expired, 1);
    let refused = post(&world, &token, &expired, "reopen");
    assert_refused(&refused, 409, "expired_by_itself");
    assert!(text(&refused).contains("update_event"), "the fix names the way back: {}", text(&refused));

    let (_, visas) = world.source("visa-office");
    let source = |method: &str, query: &str, payload: Option<Value>| {
        let request = mailroom::testing::request(method, &format!("/api/source/events{query}")).bearer(&visas);
        world.node.send(match payload {
            Some(payload) => request.json(payload),
            None => request,
        })
    };
    let visa = json!({ "person": "ben@example.com", "source_ref": "visa-4471", "topic": "renewal", "title": "Visa renewal", "due_at": "2027-02-20" });
    let pushed = body(&source("PUT", "", Some(visa.clone())))["id"].as_str().unwrap().to_string();
    // The person's own Done on a source's event is theirs to take back.
    post(&world, &token, &pushed, "done");
    assert_eq!(body(&post(&world, &token, &pushed, "reopen"))["state"], "scheduled");
    // The source's withdrawal is not.
    source("DELETE", "?person=ben@example.com&source_ref=visa-4471&topic=renewal", None);
    let refused = post(&world, &token, &pushed, "reopen");
    assert_refused(&refused, 403, "other_sources_event");
    assert!(text(&refused).contains("visa-office"), "{}", text(&refused));
    assert_eq!(
        world
            .node
            .database
            .count(&format!("SELECT COUNT(*) FROM reminder_events WHERE id = '{pushed}' AND closed_as = 'withdrawn'")),
        1
    );
}

#[test]
fn reopening_stops_at_the_inbox_s_bound_and_at_other_people_s_events() {
    let world = World::at(utc("2026-12-05T09:00"));
    let (ben, token) = world.person("ben@example.com");
    let id = create(&world, &token, json!({ "title": "Renew the lease", "due_at": "2027-01-02" }));
    post(&world, &token, &id, "done");
    crate::reminders::fill_open_events(&world, &ben);
    assert_refused(&post(&world, &token, &id, "reopen"), 409, "too_many_open_events");
    assert_eq!(
        world
            .node
            .database
            .count(&format!("SELECT COUNT(*) FROM reminder_events WHERE id = '{id}' AND closed_as = 'done'")),
        1,
        "refused, it stays done"
    );

    let (_, ana) = world.person("ana@example.com");
    assert_refused(&post(&world, &ana, &id, "reopen"), 404, "not_found");
}
