//! The notifications feed: what reaches whom (a writer hears of a refusal, a
//! send's outcome; deciders of an approval waiting, never the submitter's side;
//! a person of an assignment by someone else; an owner of a reminder due, once
//! per checkpoint), read state per person, paging, retention, and the
//! delegation intersection on an agent reading its sponsor's feed.

use mailroom::core::time::DAY_MS;
use serde_json::{Value, json};

use crate::desk::{Desk, WORKS_AND_DECIDES};
use crate::support::*;

const SUPPORT: &str = "support@mailroom.test";

/// Ben writes from the mailbox, and could decide too; Cleo decides on its sends
/// (and could write).
fn desk() -> Desk {
    Desk::new(SUPPORT)
        .receiving("plain")
        .with("ben@example.com", WORKS_AND_DECIDES)
        .with("cleo@example.com", &["mailbox.metadata.read", "approval.decide", "send.propose"])
}

/// The desk's feeds and sends, as these tests read and make them.
trait Feeds {
    fn submitted(&self, token: &str, subject: &str) -> String;
    fn feed(&self, token: &str, query: &str) -> Value;
    fn kinds(&self, token: &str) -> Vec<String>;
}

impl Feeds for Desk {
    /// A send drafted and submitted with `token`: its path.
    fn submitted(&self, token: &str, subject: &str) -> String {
        let created = self.world.call(
            "POST",
            &self.sends(),
            Some(token),
            Some(json!({ "to": ["ana@customer.example"], "subject": subject, "text": "Thanks." })),
        );
        assert_eq!(created.status, 201, "{}", text(&created));
        let path = format!("{}/{}", self.sends(), body(&created)["id"].as_str().unwrap());
        let submitted = self.world.call("POST", &format!("{path}/submit"), Some(token), None);
        assert_eq!(submitted.status, 200, "{}", text(&submitted));
        path
    }

    fn feed(&self, token: &str, query: &str) -> Value {
        let listed = self.world.call("GET", &format!("/api/me/notifications{query}"), Some(token), None);
        assert_eq!(listed.status, 200, "{}", text(&listed));
        body(&listed)
    }

    /// The kinds in `token`'s feed, newest first.
    fn kinds(&self, token: &str) -> Vec<String> {
        self.feed(token, "")["notifications"]
            .as_array()
            .unwrap()
            .iter()
            .map(|notification| notification["kind"].as_str().unwrap().to_string())
            .collect()
    }
}

#[test]
fn a_refused_send_tells_its_writer_why_and_the_approval_it_asked_for_resolves() {
    let desk = desk();
    let (world, ben, cleo) = (&desk.world, desk.person("ben"), desk.person("cleo"));
    let send = desk.submitted(&ben.token, "Re: invoice 4471");

    // Cleo decides here and is not on ben's side: the approval waits for her.
    let cleo_feed = desk.feed(&cleo.token, "");
    assert_eq!(cleo_feed["unread_count"], 1, "{cleo_feed}");
    let waiting = &cleo_feed["notifications"][0];
    assert_eq!(waiting["kind"], "approval_waiting");
    assert_eq!(waiting["title"], "Re: invoice 4471");
    assert_eq!(waiting["actor"], ben.id.as_str());
    assert_eq!(waiting["actor_name"], "ben");
    assert_eq!(waiting["mailbox_address"], SUPPORT);
    assert_eq!(waiting["resolved"], false);
    // Ben holds approval.decide too, but it is his own submission.
    assert!(desk.kinds(&ben.token).is_empty(), "{}", desk.feed(&ben.token, ""));

    let refusal = world.refusal_of(&cleo.token, &send, "The invoice number is wrong.");
    let refused = world.call("POST", &format!("{send}/refuse"), Some(&cleo.token), Some(refusal));
    assert_eq!(refused.status, 200, "{}", text(&refused));

    let ben_feed = desk.feed(&ben.token, "");
    assert_eq!(ben_feed["unread_count"], 1);
    let told = &ben_feed["notifications"][0];
    assert_eq!(told["kind"], "send_refused");
    assert_eq!(told["detail"], "The invoice number is wrong.");
    assert_eq!(told["actor_name"], "cleo");
    assert_eq!(told["object_id"], send.rsplit('/').next().unwrap());
    // The approval no longer needs anyone: still listed, resolved, not counted,
    // and not among the unread.
    let cleo_feed = desk.feed(&cleo.token, "");
    assert_eq!(cleo_feed["notifications"][0]["resolved"], true);
    assert_eq!(cleo_feed["unread_count"], 0);
    assert_eq!(desk.feed(&cleo.token, "?unread=true")["notifications"], json!([]));
    // Cleo refused it herself: nothing tells her of her own act.
    assert_eq!(desk.kinds(&cleo.token), ["approval_waiting"]);
}

#[test]
fn a_taken_back_submission_resolves_its_approval_and_an_approved_one_tells_its_writer_it_was_sent() {
    let desk = desk();
    let (world, ben, cleo) = (&desk.world, desk.person("ben"), desk.person("cleo"));
    let taken_back = desk.submitted(&ben.token, "First try");
    world.call("POST", &format!("{taken_back}/cancel"), Some(&ben.token), None);
    assert_eq!(desk.feed(&cleo.token, "")["notifications"][0]["resolved"], true);

    let send = desk.submitted(&ben.token, "Second try");
    let approved =
        world.call("POST", &format!("{send}/approve"), Some(&cleo.token), Some(world.decision(&cleo.token, &send)));
    assert_eq!(body(&approved)["state"], "dispatched", "{}", text(&approved));
    assert_eq!(desk.kinds(&ben.token), ["send_sent"]);

    // Failed for one recipient: the writer is told who it did not reach.
    let failing = desk.submitted(&ben.token, "Third try");
    let failed = world.approve_while_refusing(&cleo.token, &failing, "ana@customer.example");
    assert_eq!(failed["state"], "failed", "{failed}");
    let feed = desk.feed(&ben.token, "");
    assert_eq!(feed["notifications"][0]["kind"], "send_failed");
    assert!(
        feed["notifications"][0]["detail"].as_str().unwrap().contains("ana@customer.example"),
        "{}",
        feed["notifications"][0]
    );
}

#[test]
fn read_state_is_each_persons_own_and_marking_names_ids_or_all() {
    let desk = desk();
    let (world, ben, cleo) = (&desk.world, desk.person("ben"), desk.person("cleo"));
    for subject in ["One", "Two", "Three"] {
        desk.submitted(&ben.token, subject);
    }
    // The administrator decides nowhere here, so their feed is empty; cleo's holds three.
    let admin = world.admin("GET", "/api/me/notifications", None);
    assert_eq!(body(&admin)["notifications"], json!([]), "{}", text(&admin));
    let listed = world.call("GET", "/api/me/notifications", Some(&cleo.token), None);
    assert_eq!(listed.round_trips, 1, "the feed is read beside the admission checks");
    let feed = body(&listed);
    let ids: Vec<String> =
        feed["notifications"].as_array().unwrap().iter().map(|n| n["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(ids.len(), 3);
    assert_eq!(feed["notifications"][0]["title"], "Three", "newest first");

    let marked = world.call(
        "POST",
        "/api/me/notifications/read",
        Some(&cleo.token),
        Some(json!({ "notification_ids": [ids[0]] })),
    );
    assert_eq!(body(&marked), json!({ "marked": 1, "unread_count": 2 }), "{}", text(&marked));
    let unread = desk.feed(&cleo.token, "?unread=true");
    assert_eq!(unread["notifications"].as_array().unwrap().len(), 2);
    assert_eq!(desk.feed(&cleo.token, "")["notifications"][0]["read"], true);

    // Someone else's notification is passed over when marking, and not found when unmarking.
    let (_, dora) = world.person("dora@example.com");
    let passed_over =
        world.call("POST", "/api/me/notifications/read", Some(&dora), Some(json!({ "notification_ids": [ids[1]] })));
    assert_eq!(body(&passed_over)["marked"], 0, "{}", text(&passed_over));
    assert_eq!(desk.feed(&cleo.token, "")["unread_count"], 2);
    assert_refused(
        &world.call("DELETE", &format!("/api/me/notifications/{}/read", ids[0]), Some(&dora), None),
        404,
        "not_found",
    );

    let all = world.call("POST", "/api/me/notifications/read", Some(&cleo.token), Some(json!({ "all": true })));
    assert_eq!(body(&all), json!({ "marked": 2, "unread_count": 0 }));
    let unmarked = world.call("DELETE", &format!("/api/me/notifications/{}/read", ids[2]), Some(&cleo.token), None);
    assert_eq!(body(&unmarked), json!({ "marked": 1, "unread_count": 1 }), "{}", text(&unmarked));
    // Marking is an act: audited under the reader.
    let entry = world.last_audit_entry();
    assert_eq!(entry["action"], "mark_notification_unread");
    assert_eq!(entry["actor"], cleo.id.as_str());

    for wrong in [json!({}), json!({ "all": true, "notification_ids": [ids[0]] }), json!({ "notification_ids": [] })] {
        assert_refused(
            &world.call("POST", "/api/me/notifications/read", Some(&cleo.token), Some(wrong)),
            400,
            "invalid_body",
        );
    }
    let foreign = world.call(
        "POST",
        "/api/me/notifications/read",
        Some(&cleo.token),
        Some(json!({ "notification_ids": ["snd_01JC0000000000000000000000"] })),
    );
    assert_refused(&foreign, 400, "invalid_body");
    assert!(text(&foreign).contains("notification_ids[0]"), "{}", text(&foreign));
}

#[test]
fn the_feed_pages_newest_first_without_losing_or_repeating_one() {
    let desk = desk();
    let (ben, cleo) = (desk.person("ben"), desk.person("cleo"));
    for index in 0..7 {
        desk.submitted(&ben.token, &format!("Send {index}"));
    }
    let mut seen = Vec::new();
    let mut query = "?limit=3".to_string();
    loop {
        let page = desk.feed(&cleo.token, &query);
        for notification in page["notifications"].as_array().unwrap() {
            seen.push(notification["title"].as_str().unwrap().to_string());
        }
        match page["next_cursor"].as_str() {
            Some(cursor) => query = format!("?limit=3&cursor={cursor}"),
            None => break,
        }
    }
    let expected: Vec<String> = (0..7).rev().map(|index| format!("Send {index}")).collect();
    assert_eq!(seen, expected);
    assert_refused(
        &desk.world.call("GET", "/api/me/notifications?cursor=nonsense", Some(&cleo.token), None),
        400,
        "invalid_query_parameter",
    );
}

#[test]
fn an_assignment_by_someone_else_reaches_the_assignee() {
    let desk = desk();
    let (world, ben, cleo) = (&desk.world, desk.person("ben"), desk.person("cleo"));
    let thread = world.thread_of(&desk.mailbox, desk.receipt());
    let assign = |token: &str, assignee: &str| {
        let updated = world.call("PATCH", &thread, Some(token), Some(json!({ "assignee": assignee })));
        assert_eq!(updated.status, 200, "{}", text(&updated));
    };
    assign(&ben.token, &ben.id);
    assert!(desk.kinds(&ben.token).is_empty(), "taking a conversation oneself tells nobody");
    assign(&ben.token, &cleo.id);
    let feed = desk.feed(&cleo.token, "");
    assert_eq!(feed["notifications"][0]["kind"], "conversation_assigned");
    assert_eq!(feed["notifications"][0]["object_id"], thread.rsplit('/').next().unwrap());
    assert_eq!(feed["notifications"][0]["actor_name"], "ben");
    // Setting only the status leaves the assignee, and tells nobody again.
    world.call("PATCH", &thread, Some(&ben.token), Some(json!({ "status": "waiting" })));
    assert_eq!(desk.kinds(&cleo.token), ["conversation_assigned"]);
}

#[test]
fn a_reminder_due_reaches_its_owners_feed_once_per_checkpoint() {
    let world = World::at(utc("2026-12-01T10:00"));
    world.person("ben@example.com");
    // A session lasts minutes and this test spans days: sign in afresh each time.
    let ben = || sign_in(&world.node, "ben@example.com", PASSWORD).0;
    let feed = || body(&world.call("GET", "/api/me/notifications", Some(&ben()), None));
    let event = world.reminder(&ben(), "2026-12-01");
    assert_eq!(world.node.run_reminders().in_feeds, 1);
    assert_eq!(world.node.run_reminders().in_feeds, 0, "the same checkpoint is shown once");
    let shown = feed();
    assert_eq!(shown["notifications"][0]["kind"], "reminder_due");
    assert_eq!(shown["notifications"][0]["object_id"], event.as_str());
    assert_eq!(shown["notifications"][0]["title"], "Visa renewal");
    assert!(shown["notifications"][0]["detail"].as_str().unwrap().starts_with("Due today"), "{shown}");
    // Overdue is a new checkpoint, so a second notice.
    world.node.platform.advance(DAY_MS);
    assert_eq!(world.node.run_reminders().in_feeds, 1);
    let shown = feed();
    assert!(shown["notifications"][0]["detail"].as_str().unwrap().starts_with("Overdue"), "{shown}");
    // A reminder done before its checkpoint tells nobody.
    let done = world.reminder(&ben(), "2026-12-05");
    let closed = world.call("POST", &format!("/api/me/events/{done}/done"), Some(&ben()), None);
    assert_eq!(closed.status, 200, "{}", text(&closed));
    world.node.platform.advance(4 * DAY_MS);
    assert_eq!(world.node.run_reminders().in_feeds, 0);

    // Kept for the node's retention, then forgotten by the upkeep.
    world.node.platform.advance(91 * DAY_MS);
    world.node.maintain();
    assert_eq!(feed()["notifications"], json!([]));
}

#[test]
fn an_agent_reads_its_sponsors_feed_only_where_it_and_its_sponsor_both_hold_a_relation() {
    let desk = desk();
    let (world, ben, cleo) = (&desk.world, desk.person("ben"), desk.person("cleo"));
    // A second mailbox where cleo decides but her agent holds nothing.
    let billing = world.mailbox("billing@mailroom.test");
    world.grant_all(&cleo.id, &["mailbox.metadata.read", "approval.decide"], &billing);
    world.grant_all(&ben.id, &["send.propose", "approval.decide"], &billing);
    let (agent, credential) = world.mint(
        &cleo.id,
        &["notifications.read", "notifications.manage"],
        json!([{ "mailbox": desk.mailbox, "relations": ["mailbox.metadata.read", "approval.decide"] }]),
    );
    desk.submitted(&ben.token, "In support");
    let created = world.call(
        "POST",
        &format!("/api/mailboxes/{billing}/sends"),
        Some(&ben.token),
        Some(json!({ "to": ["ana@customer.example"], "subject": "In billing", "text": "Hi." })),
    );
    let billing_send = body(&created)["id"].as_str().unwrap().to_string();
    world.call("POST", &format!("/api/mailboxes/{billing}/sends/{billing_send}/submit"), Some(&ben.token), None);
    world.reminder_in_feed(&cleo.token);

    let titles = |token: &str| -> Vec<String> {
        desk.feed(token, "")["notifications"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["title"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(titles(&cleo.token), ["Visa renewal", "In billing", "In support"]);
    // The agent: cleo's own reminder, and support, where both hold approval.decide.
    assert_eq!(titles(&credential), ["Visa renewal", "In support"]);
    // Marking by the agent marks for cleo.
    let marked = world.call("POST", "/api/me/notifications/read", Some(&credential), Some(json!({ "all": true })));
    assert_eq!(body(&marked)["marked"], 2, "{}", text(&marked));
    assert_eq!(desk.feed(&cleo.token, "")["unread_count"], 1, "billing's approval is still unread for cleo");
    assert_eq!(world.last_audit_entry()["actor"], agent.as_str());

    // The sponsor's relation revoked: the agent loses it on the next request.
    world.revoke(&cleo.id, "approval.decide", &desk.mailbox);
    assert_eq!(titles(&credential), ["Visa renewal"]);
    // An agent never stands beside its sponsor for dual control: its own
    // submission does not wait for cleo.
    let (_, drafter) =
        world.mint(&ben.id, &["mail.draft"], json!([{ "mailbox": billing, "relations": ["send.propose"] }]));
    let created = world.call(
        "POST",
        &format!("/api/mailboxes/{billing}/sends"),
        Some(&drafter),
        Some(json!({ "to": ["ana@customer.example"], "subject": "By ben's agent", "text": "Hi." })),
    );
    let agents_send = body(&created)["id"].as_str().unwrap().to_string();
    let submitted =
        world.call("POST", &format!("/api/mailboxes/{billing}/sends/{agents_send}/submit"), Some(&drafter), None);
    assert_eq!(submitted.status, 200, "{}", text(&submitted));
    assert!(titles(&cleo.token).contains(&"By ben's agent".to_string()));
    assert!(!titles(&ben.token).contains(&"By ben's agent".to_string()), "its sponsor is its own side");
}
