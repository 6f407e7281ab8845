//! Snoozing a conversation (decision 0048): a moment held to its limits and
//! refused naming `snoozed_until`, by whoever may set the status; the list
//! leaves it out until then (and `snoozed=true` shows it); the minute's job
//! opens it again at its moment, not before, tells its assignee once and
//! records the node's act; a message received wakes it early; a snooze moved
//! later or ended by hand is not woken at the old moment; the same in D1 and
//! in a mailbox's own database, and carried by the move between them.

use mailroom::mail::Delivery;
use mailroom::schedule::{Job, run_job};
use serde_json::{Value, json};

use crate::desk::{Desk, READS_THE_MAILBOX, WORKS_THE_MAILBOX};
use crate::support::*;

const SUPPORT: &str = "support@mailroom.test";
/// A few minutes: a test's whole story stays within the quarter of an hour its
/// access tokens last.
const STEP_MS: i64 = 4 * 60_000;
const DAY_MS: i64 = 24 * 3_600_000;

/// A message from Ana, delivered to the support mailbox (answering
/// `in_reply_to` when given): the receipt's id.
fn deliver(world: &World, message_id: &str, in_reply_to: Option<&str>) -> String {
    let answering = in_reply_to.map(|id| format!("In-Reply-To: <{id}>\r\n")).unwrap_or_default();
    let raw = format!(
        "{answering}From: Ana <ana@customer.example>\r\nTo: Support <{SUPPORT}>\r\nSubject: Refund for order 88\r\n\
         Message-ID: <{message_id}>\r\nDate: Mon, 16 Nov 2026 09:00:00 +0000\r\n\r\nWhere is my refund?\r\n"
    );
    match world.node.deliver("bounce@outside.example", SUPPORT, raw.as_bytes()) {
        Ok(Delivery::Stored { receipt_id }) => receipt_id,
        other => panic!("{message_id}: {other:?}"),
    }
}

/// Ben and Cleo work the mailbox; Rob only reads it. Ana's message is in.
fn desk_in(world: World) -> (Desk, String) {
    let desk = Desk::in_world(world, SUPPORT)
        .with("ben@example.com", WORKS_THE_MAILBOX)
        .with("cleo@example.com", WORKS_THE_MAILBOX)
        .with("rob@example.com", READS_THE_MAILBOX);
    let receipt = deliver(&desk.world, "r1@customer.example", None);
    let thread = desk.world.thread_of(&desk.mailbox, &receipt);
    (desk, thread)
}

/// The test, once with the mailbox's mail in its own database and once in D1.
fn in_both_stores(test: impl Fn(World)) {
    test(World::new());
    test(World::with_mail_in_d1());
}

fn now(world: &World) -> i64 {
    mailroom::core::platform::Platform::now_ms(&world.node.platform)
}

fn moment(milliseconds: i64) -> String {
    mailroom::core::time::rfc3339(milliseconds)
}

fn change(desk: &Desk, thread: &str, token: &str, change: Value) -> Value {
    let answer = desk.world.call("PATCH", thread, Some(token), Some(change));
    assert_eq!(answer.status, 200, "{}", text(&answer));
    body(&answer)
}

/// The ids of the conversations the list shows with `query`.
fn listed(desk: &Desk, token: &str, query: &str) -> Vec<String> {
    let path = format!("/api/mailboxes/{}/threads{query}", desk.mailbox);
    let answer = desk.world.call("GET", &path, Some(token), None);
    assert_eq!(answer.status, 200, "{}", text(&answer));
    body(&answer)["threads"].as_array().unwrap().iter().map(|thread| thread["id"].as_str().unwrap().into()).collect()
}

fn thread_id(thread: &str) -> String {
    thread.rsplit('/').next().unwrap().to_string()
}

fn shown(desk: &Desk, thread: &str, token: &str) -> Value {
    body(&desk.world.call("GET", thread, Some(token), None))
}

/// The snooze notices in the feed of the holder of `token`.
fn back_from_snooze(world: &World, token: &str) -> Vec<Value> {
    let feed = body(&world.call("GET", "/api/me/notifications", Some(token), None));
    feed["notifications"].as_array().unwrap().iter().filter(|item| item["kind"] == "snooze_ended").cloned().collect()
}

fn minute_passes(world: &World, milliseconds: i64) {
    world.node.platform.advance(milliseconds);
    world.node.run_every_minute();
}

#[test]
fn a_snoozed_conversation_leaves_the_list_and_wakes_at_its_moment_telling_its_assignee_once() {
    in_both_stores(|world| {
        let (desk, thread) = desk_in(world);
        let (ben, cleo) = (desk.person("ben"), desk.person("cleo"));
        change(&desk, &thread, &ben.token, json!({ "assignee": cleo.id, "status": "waiting" }));
        let until = now(&desk.world) + 2 * STEP_MS;
        let snoozed = change(&desk, &thread, &ben.token, json!({ "snoozed_until": moment(until) }));
        assert_eq!(snoozed["snoozed_until"], moment(until));
        assert_eq!(snoozed["status"], "waiting", "snoozing keeps the status");
        let entry = desk.world.last_audit_entry();
        assert_eq!(entry["action"], "update_thread");
        assert_eq!(entry["detail"]["snoozed_until"], moment(until));

        let id = thread_id(&thread);
        assert!(listed(&desk, &ben.token, "").is_empty(), "a snoozed conversation is left out of the list");
        assert!(listed(&desk, &ben.token, "?status=waiting").is_empty());
        assert_eq!(listed(&desk, &ben.token, "?snoozed=true"), [id.as_str()]);
        assert_eq!(shown(&desk, &thread, &ben.token)["snoozed_until"], moment(until));

        // Not before its moment.
        minute_passes(&desk.world, STEP_MS);
        assert_eq!(shown(&desk, &thread, &ben.token)["snoozed_until"], moment(until));
        assert!(back_from_snooze(&desk.world, &cleo.token).is_empty());

        // At it: open again, listed, its assignee told once, the node's act recorded.
        minute_passes(&desk.world, STEP_MS);
        let woken = shown(&desk, &thread, &ben.token);
        assert_eq!((woken["status"].as_str(), woken.get("snoozed_until")), (Some("open"), None), "{woken}");
        assert_eq!(listed(&desk, &ben.token, "?status=open"), [id.as_str()]);
        assert!(listed(&desk, &ben.token, "?snoozed=true").is_empty());
        let notices = back_from_snooze(&desk.world, &cleo.token);
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert_eq!(
            (notices[0]["object_id"].as_str(), notices[0]["title"].as_str()),
            (Some(id.as_str()), Some("Refund for order 88"))
        );
        assert!(back_from_snooze(&desk.world, &ben.token).is_empty(), "only the assignee is told");
        let woke: Vec<Value> =
            desk.world.audit().into_iter().filter(|entry| entry["action"] == "wake_thread").collect();
        assert_eq!(woke.len(), 1, "{woke:?}");
        assert_eq!((woke[0]["actor"].clone(), woke[0]["object"].as_str()), (Value::Null, Some(id.as_str())));

        // A run again does nothing more.
        minute_passes(&desk.world, 60_000);
        assert_eq!(back_from_snooze(&desk.world, &cleo.token).len(), 1);
        assert_eq!(desk.world.node.database.count("SELECT count(*) FROM thread_wakeups"), 0);
        assert_eq!(desk.world.verify()["intact"], true, "{}", desk.world.verify());
    });
}

#[test]
fn a_moment_past_too_far_or_unreadable_is_refused_naming_the_field() {
    in_both_stores(|world| {
        let (desk, thread) = desk_in(world);
        let ben = desk.person("ben");
        let at = now(&desk.world);
        let too_far = at + 366 * DAY_MS;
        for refused in
            [moment(at), moment(at - STEP_MS), moment(too_far), "tomorrow".into(), "2026-13-01T08:00Z".into()]
        {
            let answer = desk.world.call("PATCH", &thread, Some(&ben.token), Some(json!({ "snoozed_until": refused })));
            assert_refused(&answer, 400, "invalid_body");
            let message = body(&answer)["error"]["message"].as_str().unwrap().to_string();
            assert!(message.contains("`snoozed_until`"), "{refused}: {message}");
        }
        let answer = desk.world.call("PATCH", &thread, Some(&ben.token), Some(json!({ "snoozed_until": 5 })));
        assert_refused(&answer, 400, "invalid_body");
        assert_eq!(shown(&desk, &thread, &ben.token).get("snoozed_until"), None, "nothing was snoozed");
        // A year ahead, exactly, is within the limit.
        let limit = at + 365 * DAY_MS;
        assert_eq!(
            change(&desk, &thread, &ben.token, json!({ "snoozed_until": moment(limit) }))["snoozed_until"],
            moment(limit)
        );
    });
}

#[test]
fn snoozing_asks_what_setting_the_status_asks() {
    in_both_stores(|world| {
        let (desk, thread) = desk_in(world);
        let rob = desk.person("rob");
        let until = moment(now(&desk.world) + STEP_MS);
        let answer = desk.world.call("PATCH", &thread, Some(&rob.token), Some(json!({ "snoozed_until": until })));
        assert_refused(&answer, 403, "missing_relation");
        let (_, stranger) = desk.world.person("dee@example.com");
        let answer = desk.world.call("PATCH", &thread, Some(&stranger), Some(json!({ "snoozed_until": until })));
        assert!(matches!(answer.status, 403 | 404), "{}", text(&answer));
        assert_eq!(shown(&desk, &thread, &rob.token).get("snoozed_until"), None);
        // Rob reads the mailbox, so he sees what is snoozed.
        change(&desk, &thread, &desk.person("ben").token, json!({ "snoozed_until": until }));
        assert_eq!(listed(&desk, &rob.token, "?snoozed=true"), [thread_id(&thread)]);
    });
}

#[test]
fn a_message_received_a_later_snooze_or_a_hand_wakes_it_and_the_old_moment_wakes_nothing() {
    in_both_stores(|world| {
        let (desk, thread) = desk_in(world);
        let (ben, cleo) = (desk.person("ben"), desk.person("cleo"));
        change(&desk, &thread, &ben.token, json!({ "assignee": cleo.id, "status": "closed" }));
        let id = thread_id(&thread);

        // Ana writes again while it sleeps: it wakes at once, open, and nobody is told it is back.
        let first = now(&desk.world) + STEP_MS;
        change(&desk, &thread, &ben.token, json!({ "snoozed_until": moment(first) }));
        deliver(&desk.world, "r2@customer.example", Some("r1@customer.example"));
        let woken = shown(&desk, &thread, &ben.token);
        assert_eq!(
            (woken["status"].as_str(), woken.get("snoozed_until"), woken["message_count"].as_i64()),
            (Some("open"), None, Some(2))
        );
        assert_eq!(listed(&desk, &ben.token, ""), [id.as_str()]);

        // Snoozed again, then moved later: the first moment passes and wakes nothing.
        let second = now(&desk.world) + STEP_MS;
        let later = second + 2 * STEP_MS;
        change(&desk, &thread, &ben.token, json!({ "snoozed_until": moment(second) }));
        change(&desk, &thread, &ben.token, json!({ "snoozed_until": moment(later) }));
        minute_passes(&desk.world, STEP_MS + 60_000);
        assert_eq!(shown(&desk, &thread, &ben.token)["snoozed_until"], moment(later));
        assert!(back_from_snooze(&desk.world, &cleo.token).is_empty());

        // Ended by hand: its status as it was, and the later moment wakes nothing either.
        let awake = change(&desk, &thread, &ben.token, json!({ "snoozed_until": "" }));
        assert_eq!((awake["status"].as_str(), awake.get("snoozed_until")), (Some("open"), None));
        assert_eq!(desk.world.last_audit_entry()["detail"]["snoozed_until"], "");
        // A status set by hand ends a snooze too.
        change(&desk, &thread, &ben.token, json!({ "snoozed_until": moment(now(&desk.world) + STEP_MS) }));
        let closed = change(&desk, &thread, &ben.token, json!({ "status": "closed" }));
        assert_eq!(closed.get("snoozed_until"), None, "{closed}");
        minute_passes(&desk.world, 2 * STEP_MS);
        assert_eq!(shown(&desk, &thread, &ben.token)["status"], "closed");
        assert!(back_from_snooze(&desk.world, &cleo.token).is_empty());
        assert_eq!(desk.world.node.database.count("SELECT count(*) FROM thread_wakeups"), 0);
    });
}

#[test]
fn an_unassigned_conversation_wakes_telling_nobody() {
    in_both_stores(|world| {
        let (desk, thread) = desk_in(world);
        let (ben, cleo) = (desk.person("ben"), desk.person("cleo"));
        change(&desk, &thread, &ben.token, json!({ "snoozed_until": moment(now(&desk.world) + STEP_MS) }));
        minute_passes(&desk.world, STEP_MS);
        assert_eq!(listed(&desk, &ben.token, "?status=open"), [thread_id(&thread)]);
        assert!(back_from_snooze(&desk.world, &ben.token).is_empty());
        assert!(back_from_snooze(&desk.world, &cleo.token).is_empty());
    });
}

#[test]
fn a_snooze_moves_with_its_mailbox_and_wakes_from_its_own_database() {
    let (desk, thread) = desk_in(World::with_mail_in_d1());
    let (ben, cleo) = (desk.person("ben"), desk.person("cleo"));
    change(&desk, &thread, &ben.token, json!({ "assignee": cleo.id }));
    let until = now(&desk.world) + 2 * STEP_MS;
    change(&desk, &thread, &ben.token, json!({ "snoozed_until": moment(until) }));
    crate::moving_mail::moved(&desk.world, &desk.mailbox);
    crate::moving_mail::holds_what_d1_holds(&desk.world, &desk.mailbox);
    assert_eq!(shown(&desk, &thread, &ben.token)["snoozed_until"], moment(until));
    assert_eq!(listed(&desk, &ben.token, "?snoozed=true"), [thread_id(&thread)]);

    minute_passes(&desk.world, 2 * STEP_MS);
    let woken = shown(&desk, &thread, &ben.token);
    assert_eq!((woken["status"].as_str(), woken.get("snoozed_until")), (Some("open"), None), "{woken}");
    assert_eq!(back_from_snooze(&desk.world, &cleo.token).len(), 1);
    let in_segment = desk.world.audit_of(Some(&desk.mailbox));
    assert!(in_segment.iter().any(|entry| entry["action"] == "wake_thread"), "woken in its mailbox's segment");
}

/// The job's round trips: one read when nothing is due; one batch more for
/// mail in D1; for a moved mailbox, its read, its commit and what follows on D1.
#[test]
fn waking_stays_within_its_round_trips() {
    for (world, expected) in [(World::with_mail_in_d1(), 2), (World::new(), 1 + 3)] {
        let (desk, thread) = desk_in(world);
        let ben = desk.person("ben");
        let node = &desk.world.node;
        assert_eq!(node.run(run_job(&node.node(), Job::WakeSnoozed)).unwrap(), 1, "nothing due: one read");
        change(&desk, &thread, &ben.token, json!({ "snoozed_until": moment(now(&desk.world) + STEP_MS) }));
        node.platform.advance(STEP_MS);
        assert_eq!(node.run(run_job(&node.node(), Job::WakeSnoozed)).unwrap(), expected);
        assert_eq!(shown(&desk, &thread, &ben.token)["status"], "open");
    }
}
