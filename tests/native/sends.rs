//! Outbound mail under dual control: drafts, submission, a second person's
//! decision, sealing and dispatch.

use serde_json::{Value, json};

use crate::desk::{Desk, WORKS_AND_DECIDES};
use crate::support::*;

const SUPPORT: &str = "support@mailroom.test";

/// A mailbox with a received message, a writer (reads, proposes and decides) and
/// an approver (reads and decides).
fn desk() -> Desk {
    desk_in(World::new())
}

fn desk_in(world: World) -> Desk {
    Desk::in_world(world, SUPPORT)
        .receiving("plain")
        .with("writer@example.com", WORKS_AND_DECIDES)
        .with("approver@example.com", &["mailbox.metadata.read", "mailbox.content.read", "approval.decide"])
}

/// The desk's sends, as these tests drive them.
trait Sends {
    fn path(&self, send: &str) -> String;
    fn decision(&self, token: &str, send: &str) -> Value;
    fn call(&self, token: &str, method: &str, suffix: &str, payload: Option<Value>) -> mailroom::core::http::Response;
    fn reply_draft(&self) -> String;
    fn submitted(&self) -> String;
}

impl Sends for Desk {
    /// The path of one of the mailbox's sends.
    fn path(&self, send: &str) -> String {
        format!("/api/mailboxes/{}/sends/{send}", self.mailbox)
    }

    /// What deciding on `send` as the holder of `token` sends: the version shown.
    fn decision(&self, token: &str, send: &str) -> Value {
        self.world.decision(token, &self.path(send))
    }

    fn call(&self, token: &str, method: &str, suffix: &str, payload: Option<Value>) -> mailroom::core::http::Response {
        self.world.call(method, &format!("/api/mailboxes/{}/sends{suffix}", self.mailbox), Some(token), payload)
    }

    fn reply_draft(&self) -> String {
        let created = self.call(
            &self.person("writer").token,
            "POST",
            "",
            Some(json!({
                "to": ["ana@customer.example"],
                "subject": "Re: Where is my invoice?",
                "text": "Hello Ana,\n\nHere it is again.\n",
                "reply_to": self.receipt(),
            })),
        );
        assert_eq!(created.status, 201, "{}", text(&created));
        body(&created)["id"].as_str().unwrap().to_string()
    }

    fn submitted(&self) -> String {
        let send = self.reply_draft();
        let submitted = self.call(&self.person("writer").token, "POST", &format!("/{send}/submit"), None);
        assert_eq!(submitted.status, 200, "{}", text(&submitted));
        send
    }
}

#[test]
fn a_reply_is_drafted_submitted_approved_by_a_second_person_sealed_and_sent() {
    let desk = desk();
    let (writer, approver) = (desk.person("writer"), desk.person("approver"));
    let send = desk.reply_draft();
    let draft = body(&desk.call(&writer.token, "GET", &format!("/{send}"), None));
    assert_eq!(draft["state"], "draft");
    assert_eq!(draft["mailbox_address"], SUPPORT);
    assert_eq!(draft["author_name"], "writer", "an approver who cannot list people still sees who wrote it");
    assert_eq!(draft["in_reply_to"], "invoice-question-1@customer.example");
    assert_eq!(draft["references"], json!(["invoice-question-1@customer.example"]));

    let submitted = body(&desk.call(&writer.token, "POST", &format!("/{send}/submit"), None));
    assert_eq!(submitted["state"], "submitted");
    assert_eq!(submitted["submitted_by"], writer.id);

    let queue = body(&desk.world.call("GET", "/api/approvals", Some(&approver.token), None));
    assert_eq!(queue["sends"][0]["id"], send);
    assert_eq!(queue["sends"][0]["author_name"], "writer");
    assert_eq!(queue["sends"][0]["mailbox_address"], SUPPORT);
    let own_queue = body(&desk.world.call("GET", "/api/approvals", Some(&writer.token), None));
    assert_eq!(own_queue["sends"], json!([]), "nobody is asked to approve their own submission");

    let approved =
        desk.call(&approver.token, "POST", &format!("/{send}/approve"), Some(desk.decision(&approver.token, &send)));
    assert_eq!(approved.status, 200, "{}", text(&approved));
    assert!(approved.round_trips <= 2, "approving took {} round trips", approved.round_trips);
    let approved = body(&approved);
    assert_eq!(approved["state"], "dispatched");
    assert_eq!(approved["decided_by"], approver.id);
    assert_eq!(approved["decided_by_name"], "approver", "the writer sees who approved it by name");
    let stored = body(&desk.call(&writer.token, "GET", &format!("/{send}"), None));
    assert_eq!(stored["decided_by_name"], "approver");
    let manifest_hash = approved["manifest_hash"].as_str().unwrap().to_string();

    let sent = desk.world.node.mailer.sent.borrow().clone();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].envelope_from, SUPPORT);
    assert_eq!(sent[0].envelope_to, "ana@customer.example");
    let written = String::from_utf8_lossy(&sent[0].raw).to_ascii_lowercase();
    assert!(!written.contains("auto-submitted"), "a person's reply, approved by a person, is no machine's (RFC 3834)");
    let parsed = mailroom::mail::inbound::parse(&sent[0].raw).unwrap();
    assert_eq!(parsed.subject, "Re: Where is my invoice?");
    assert_eq!(parsed.in_reply_to, vec!["invoice-question-1@customer.example"]);
    assert_eq!(parsed.references, vec!["invoice-question-1@customer.example"]);
    assert_eq!(parsed.message_id, format!("{send}@mailroom.test"));
    assert_eq!(parsed.from.unwrap().address, SUPPORT);

    let stored = body(&desk.call(&writer.token, "GET", &format!("/{send}"), None));
    assert_eq!(stored["state"], "dispatched", "the dispatch outcome was recorded after the answer");
    let sealing = desk.world.audit().into_iter().find(|entry| entry["action"] == "approve_send").unwrap();
    assert_eq!(sealing["detail"]["manifest_hash"], manifest_hash, "the manifest's hash is in the chain");
    assert_eq!(sealing["actor"], approver.id);
    assert_eq!(desk.world.verify()["intact"], true);
}

#[test]
fn the_submitter_can_never_approve_their_own_send() {
    let desk = desk();
    let writer = desk.person("writer");
    let send = desk.submitted();
    let own = desk.call(&writer.token, "POST", &format!("/{send}/approve"), Some(desk.decision(&writer.token, &send)));
    assert_refused(&own, 403, "own_submission");
    assert!(body(&own)["error"]["fix"].as_str().unwrap().contains("approval.decide"));
    assert!(desk.world.node.mailer.sent.borrow().is_empty());
}

#[test]
fn approving_needs_approval_decide_on_the_mailbox() {
    let desk = desk();
    let send = desk.submitted();
    let (reader, token) = desk.world.person("reader@example.com");
    desk.world.grant_all(&reader, &["mailbox.content.read"], &desk.mailbox);
    let refused = desk.call(&token, "POST", &format!("/{send}/approve"), Some(desk.decision(&token, &send)));
    assert_refused(&refused, 403, "missing_relation");
    assert!(text(&refused).contains("approval.decide"));
}

#[test]
fn sealing_cannot_be_undone() {
    let desk = desk();
    let (writer, approver) = (desk.person("writer"), desk.person("approver"));
    let send = desk.submitted();
    desk.call(&approver.token, "POST", &format!("/{send}/approve"), Some(desk.decision(&approver.token, &send)));
    let edit = desk.call(&writer.token, "PATCH", &format!("/{send}"), Some(json!({ "text": "changed" })));
    assert_refused(&edit, 409, "wrong_state");
    assert_refused(&desk.call(&writer.token, "POST", &format!("/{send}/cancel"), None), 409, "wrong_state");
    assert_refused(&desk.call(&writer.token, "DELETE", &format!("/{send}"), None), 409, "wrong_state");
    assert_refused(
        &desk.call(&approver.token, "POST", &format!("/{send}/approve"), Some(desk.decision(&approver.token, &send))),
        409,
        "wrong_state",
    );
    // Even below the API, the database refuses to change what was sealed.
    for column in ["text", "sealed_from_address", "sealed_from_name"] {
        let tampered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            desk.world.node.mail_tamper(&format!("UPDATE sends SET {column} = 'forged' WHERE id = '{send}'"))
        }));
        assert!(tampered.is_err(), "the trigger refuses an edit of a sealed send's {column}");
    }
    let deleted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        desk.world.node.mail_tamper(&format!("DELETE FROM sends WHERE id = '{send}'"))
    }));
    assert!(deleted.is_err(), "the trigger refuses to delete a sealed send");
}

#[test]
fn a_submission_can_be_cancelled_until_someone_decides_and_then_edited() {
    let desk = desk();
    let (writer, approver) = (desk.person("writer"), desk.person("approver"));
    let send = desk.submitted();
    let cancelled = body(&desk.call(&writer.token, "POST", &format!("/{send}/cancel"), None));
    assert_eq!(cancelled["state"], "draft");
    let edited = desk.call(&writer.token, "PATCH", &format!("/{send}"), Some(json!({ "text": "Better text." })));
    assert_eq!(body(&edited)["text"], "Better text.");
    // A draft again, it is its author's alone: nobody else can see it to approve.
    assert_refused(
        &desk.call(&approver.token, "POST", &format!("/{send}/approve"), Some(desk.decision(&approver.token, &send))),
        404,
        "not_found",
    );
}

#[test]
fn a_refusal_carries_its_reason_and_sends_nothing() {
    let desk = desk();
    let (writer, approver) = (desk.person("writer"), desk.person("approver"));
    let send = desk.submitted();
    assert_refused(
        &desk.call(
            &approver.token,
            "POST",
            &format!("/{send}/refuse"),
            Some(desk.world.refusal_of(&approver.token, &desk.path(&send), "  ")),
        ),
        400,
        "invalid_reason",
    );
    let refused = desk.call(
        &approver.token,
        "POST",
        &format!("/{send}/refuse"),
        Some(desk.world.refusal_of(&approver.token, &desk.path(&send), "Attach the invoice.")),
    );
    assert_eq!(body(&refused)["state"], "refused");
    assert_eq!(body(&refused)["refusal_reason"], "Attach the invoice.");
    assert_eq!(body(&refused)["decided_by_name"], "approver");
    assert!(desk.world.node.mailer.sent.borrow().is_empty());
    let own = desk.submitted();
    assert_refused(
        &desk.call(
            &writer.token,
            "POST",
            &format!("/{own}/refuse"),
            Some(desk.world.refusal_of(&writer.token, &desk.path(&own), "x")),
        ),
        403,
        "own_submission",
    );
}

#[test]
fn an_author_who_lost_send_propose_is_not_sealed_for() {
    let desk = desk();
    let (writer, approver) = (desk.person("writer"), desk.person("approver"));
    let send = desk.submitted();
    assert_eq!(desk.world.revoke(&writer.id, "send.propose", &desk.mailbox).status, 200);
    let approval =
        desk.call(&approver.token, "POST", &format!("/{send}/approve"), Some(desk.decision(&approver.token, &send)));
    assert_refused(&approval, 409, "author_lost_authority");
    assert_eq!(body(&desk.call(&approver.token, "GET", &format!("/{send}"), None))["state"], "submitted");
    assert!(desk.world.node.mailer.sent.borrow().is_empty());
    let entry = desk.world.last_audit_entry();
    assert_eq!(entry["action"], "approve_send");
    assert_eq!(entry["outcome"], "refused");
}

#[test]
fn a_failed_send_is_not_sent_again_for_an_author_who_lost_send_propose() {
    // Refused up front wherever the mail is: on D1 by the guard in the
    // sealing transaction, in a mailbox's own database by D1's note of the
    // failed send, asked before the send is read (decision 0040).
    for in_d1 in [true, false] {
        let desk = desk_in(if in_d1 { World::with_mail_in_d1() } else { World::new() });
        let (writer, approver) = (desk.person("writer"), desk.person("approver"));
        let send = desk.submitted();
        desk.world.approve_while_refusing(&approver.token, &desk.path(&send), "ana@customer.example");
        let failed = body(&desk.call(&approver.token, "GET", &format!("/{send}"), None));
        assert_eq!(desk.world.revoke(&writer.id, "send.propose", &desk.mailbox).status, 200);
        desk.world.grant(&approver.id, "send.propose", &desk.mailbox);
        let retried = desk.call(&approver.token, "POST", &format!("/{send}/retry"), None);
        assert_refused(&retried, 409, "author_lost_authority");
        let shown = body(&desk.call(&approver.token, "GET", &format!("/{send}"), None));
        assert_eq!(shown, failed, "in D1: {in_d1}: left as it was");
        assert!(desk.world.node.mailer.sent.borrow().is_empty());
        let entry = desk.world.last_audit_entry();
        assert_eq!((&entry["action"], &entry["outcome"]), (&json!("retry_send"), &json!("refused")), "{entry}");
        if in_d1 {
            continue;
        }
        // Without D1's note (a failure from before it was kept, or its write
        // lost), the check as the seal commits still catches it: failed
        // again, saying why, handed to nobody.
        desk.world.node.database.tamper("DELETE FROM sends_failed");
        let stopped = body(&desk.call(&approver.token, "POST", &format!("/{send}/retry"), None));
        assert_eq!(stopped["state"], "failed", "{stopped}");
        assert!(stopped["dispatch_error"].as_str().unwrap_or_default().contains("may no longer send"), "{stopped}");
        assert!(desk.world.node.mailer.sent.borrow().is_empty());
        // And noted again, so the next retry is refused up front.
        assert_refused(
            &desk.call(&approver.token, "POST", &format!("/{send}/retry"), None),
            409,
            "author_lost_authority",
        );
    }
}

#[test]
fn a_binding_that_refuses_leaves_the_send_failed_and_says_why() {
    let desk = desk();
    let (writer, approver) = (desk.person("writer"), desk.person("approver"));
    desk.world.node.mailer.refuse.borrow_mut().push("ana@customer.example".into());
    let send = desk.submitted();
    let approved = body(&desk.call(
        &approver.token,
        "POST",
        &format!("/{send}/approve"),
        Some(desk.decision(&approver.token, &send)),
    ));
    assert_eq!(approved["state"], "failed");
    assert!(approved["dispatch_error"].as_str().unwrap().contains("not allowed"));
    let stored = body(&desk.call(&writer.token, "GET", &format!("/{send}"), None));
    assert_eq!(stored["state"], "failed");
    assert!(stored["manifest_hash"].is_string(), "it was sealed before it was handed over");
}

#[test]
fn a_send_that_reaches_some_recipients_and_not_others_says_who_has_it() {
    let desk = desk();
    let (writer, approver) = (desk.person("writer"), desk.person("approver"));
    desk.world.node.mailer.refuse.borrow_mut().push("bea@customer.example".into());
    let created = desk.call(
        &writer.token,
        "POST",
        "",
        Some(json!({ "to": ["ana@customer.example", "bea@customer.example"], "cc": ["cy@customer.example"], "subject": "S", "text": "T" })),
    );
    let send = body(&created)["id"].as_str().unwrap().to_string();
    desk.call(&writer.token, "POST", &format!("/{send}/submit"), None);
    let approved = body(&desk.call(
        &approver.token,
        "POST",
        &format!("/{send}/approve"),
        Some(desk.decision(&approver.token, &send)),
    ));
    assert_eq!(approved["state"], "failed");
    let error = approved["dispatch_error"].as_str().unwrap();
    assert!(error.contains("not delivered to bea@customer.example"), "{error}");
    assert!(error.contains("delivered to ana@customer.example, cy@customer.example"), "{error}");
    let sent: Vec<String> =
        desk.world.node.mailer.sent.borrow().iter().map(|message| message.envelope_to.clone()).collect();
    assert_eq!(sent, vec!["ana@customer.example", "cy@customer.example"]);
}

#[test]
fn a_sealed_send_can_be_checked_against_its_manifest_hash_from_its_row_alone() {
    let desk = desk();
    let (writer, approver) = (desk.person("writer"), desk.person("approver"));
    let send = desk.submitted();
    let approved = body(&desk.call(
        &approver.token,
        "POST",
        &format!("/{send}/approve"),
        Some(desk.decision(&approver.token, &send)),
    ));
    assert_eq!(approved["manifest_intact"], true, "{approved}");
    assert_eq!(approved["sealed_from_address"], SUPPORT);
    let recorded = desk.world.audit().into_iter().find(|entry| entry["action"] == "approve_send").unwrap();
    assert_eq!(recorded["detail"]["manifest_hash"], approved["manifest_hash"]);

    // Renaming the mailbox changes what it would send from next, not what was sealed.
    let renamed = desk.world.admin(
        "PATCH",
        &format!("/api/mailboxes/{}", desk.mailbox),
        Some(json!({ "display_name": "Customer care" })),
    );
    assert_eq!(renamed.status, 200, "{}", text(&renamed));
    let stored = body(&desk.call(&writer.token, "GET", &format!("/{send}"), None));
    assert_eq!(stored["manifest_intact"], true, "{stored}");
    assert_eq!(stored["sealed_from_name"], approved["sealed_from_name"]);

    // Changed outside the node (the trigger dropped first), it no longer matches.
    desk.world.node.mail_tamper("DROP TRIGGER sends_sealed_are_immutable");
    desk.world.node.mail_tamper(&format!("UPDATE sends SET text = 'Something else' WHERE id = '{send}'"));
    let tampered = body(&desk.call(&writer.token, "GET", &format!("/{send}"), None));
    assert_eq!(tampered["manifest_intact"], false);
}

#[test]
fn drafts_are_their_author_s_alone() {
    let desk = desk();
    let writer = desk.person("writer");
    let send = desk.reply_draft();
    let (colleague, token) = desk.world.person("colleague@example.com");
    desk.world.grant_all(&colleague, &["send.propose"], &desk.mailbox);
    assert_refused(&desk.call(&token, "GET", &format!("/{send}"), None), 404, "not_found");
    assert_refused(&desk.call(&token, "POST", &format!("/{send}/submit"), None), 404, "not_found");
    let listed = body(&desk.call(&token, "GET", "", None));
    assert_eq!(listed["sends"], json!([]));
    let mine = body(&desk.call(&writer.token, "GET", "?state=draft", None));
    assert_eq!(mine["sends"][0]["id"], send);
    assert_refused(&desk.call(&writer.token, "GET", "?state=lost", None), 400, "invalid_query_parameter");
}

#[test]
fn drafts_are_validated_before_anything_is_kept() {
    let desk = desk();
    let writer = desk.person("writer");
    let draft = |payload: Value| desk.call(&writer.token, "POST", "", Some(payload));
    assert_refused(&draft(json!({ "to": [], "subject": "s", "text": "t" })), 400, "recipient_count");
    for hostile in ["Ana <ana@x.example", "Ana\r\nBcc: evil@x.example <ana@x.example>", "\"Ana <ana@x.example>"] {
        assert_refused(&draft(json!({ "to": [hostile], "subject": "s", "text": "t" })), 400, "invalid_recipient");
    }
    let named =
        body(&draft(json!({ "to": ["\"Lima, Ana\" <Ana@X.example>", "ana@x.example"], "subject": "s", "text": "t" })));
    assert_eq!(named["to"], json!(["Lima, Ana <ana@x.example>"]), "the name kept, the address once: {named}");
    assert_refused(
        &draft(json!({ "to": ["ana@x.example"], "subject": "a\r\nBcc: evil@x.example", "text": "t" })),
        400,
        "invalid_subject",
    );
    assert_refused(
        &draft(
            json!({ "to": ["ana@x.example"], "subject": "s", "text": "t", "reply_to": "rcp_00000000000000000000000000" }),
        ),
        404,
        "not_found",
    );
    let (proposer, token) = desk.world.person("proposer@example.com");
    desk.world.grant_all(&proposer, &["send.propose"], &desk.mailbox);
    let blind_reply = desk.call(
        &token,
        "POST",
        "",
        Some(json!({ "to": ["ana@x.example"], "subject": "s", "text": "t", "reply_to": desk.receipt() })),
    );
    assert_refused(&blind_reply, 404, "not_found");
    assert_eq!(desk.world.node.mail_count("SELECT COUNT(*) FROM sends"), 1, "only the well-named draft");
}

#[test]
fn two_approvals_of_one_send_seal_it_once() {
    let desk = desk();
    let approver = desk.person("approver");
    let send = desk.submitted();
    let (third, token) = desk.world.person("third@example.com");
    desk.world.grant_all(&third, &["approval.decide"], &desk.mailbox);
    assert_eq!(
        desk.call(&approver.token, "POST", &format!("/{send}/approve"), Some(desk.decision(&approver.token, &send)))
            .status,
        200
    );
    assert_refused(
        &desk.call(&token, "POST", &format!("/{send}/approve"), Some(desk.decision(&token, &send))),
        409,
        "wrong_state",
    );
    assert_eq!(desk.world.node.mailer.sent.borrow().len(), 1);
}

/// Every page of `path` (which already has a query) at `limit`, followed by
/// `next_cursor` to the end: the ids of `key`'s items, page by page.
fn pages(world: &World, token: &str, path: &str, key: &str, limit: usize) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let after = cursor.as_ref().map(|cursor| format!("&cursor={cursor}")).unwrap_or_default();
        let page = body(&world.call("GET", &format!("{path}&limit={limit}{after}"), Some(token), None));
        let ids: Vec<String> =
            page[key].as_array().unwrap().iter().map(|item| item["id"].as_str().unwrap().into()).collect();
        assert!(ids.len() <= limit, "{page}");
        pages.push(ids);
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => return pages,
        }
        assert!(pages.len() < 20, "paging never ends");
    }
}

#[test]
fn a_mailbox_s_sends_and_the_approval_queue_are_paged_without_gaps_or_repeats() {
    let desk = desk();
    let (writer, approver) = (desk.person("writer"), desk.person("approver"));
    let drafts: Vec<String> = (0..3).map(|_| desk.reply_draft()).collect();
    let submitted: Vec<String> = (0..3).map(|_| desk.submitted()).collect();
    let sends = format!("/api/mailboxes/{}/sends?", desk.mailbox);
    let every = pages(&desk.world, &writer.token, &sends, "sends", 100);
    assert_eq!(every.len(), 1);
    assert_eq!(every[0].len(), drafts.len() + submitted.len());
    let paged = pages(&desk.world, &writer.token, &sends, "sends", 4);
    assert_eq!(paged.iter().map(Vec::len).collect::<Vec<_>>(), vec![4, 2]);
    assert_eq!(paged.concat(), every[0], "the same sends in the same order, newest first");
    // A filter holds across pages.
    let only_drafts = pages(&desk.world, &writer.token, &format!("{sends}state=draft"), "sends", 2);
    assert_eq!(only_drafts.concat().len(), drafts.len());

    // The queue is worked oldest first, and pages the same way.
    let queue = pages(&desk.world, &approver.token, "/api/approvals?", "sends", 2);
    assert_eq!(queue.iter().map(Vec::len).collect::<Vec<_>>(), vec![2, 1]);
    assert_eq!(queue.concat(), submitted, "oldest submission first");

    // A cursor is this list's own: another list's, or a made-up one, is refused.
    desk.world.deliver("reply", SUPPORT);
    let messages = body(&desk.world.call(
        "GET",
        &format!("/api/mailboxes/{}/messages?limit=1", desk.mailbox),
        Some(&writer.token),
        None,
    ));
    let foreign = messages["next_cursor"].as_str().unwrap();
    for cursor in [foreign, "not-a-cursor"] {
        let refused = desk.world.call("GET", &format!("{sends}cursor={cursor}"), Some(&writer.token), None);
        assert_refused(&refused, 400, "invalid_query_parameter");
    }
    assert_refused(
        &desk.world.call("GET", &format!("{sends}limit=101"), Some(&writer.token), None),
        400,
        "invalid_query_parameter",
    );
}

#[test]
fn a_failed_send_goes_again_as_approved_and_only_to_those_it_did_not_reach() {
    let desk = desk();
    let (writer, approver) = (desk.person("writer"), desk.person("approver"));
    let mailer = &desk.world.node.mailer;
    mailer.refuse.borrow_mut().push("bea@customer.example".into());
    let created = desk.call(
        &writer.token,
        "POST",
        "",
        Some(json!({ "to": ["ana@customer.example", "bea@customer.example"], "subject": "S", "text": "T" })),
    );
    let send = body(&created)["id"].as_str().unwrap().to_string();
    desk.call(&writer.token, "POST", &format!("/{send}/submit"), None);
    let failed = body(&desk.call(
        &approver.token,
        "POST",
        &format!("/{send}/approve"),
        Some(desk.decision(&approver.token, &send)),
    ));
    assert_eq!(failed["state"], "failed");
    assert_eq!(failed["delivered_to"], json!(["ana@customer.example"]));
    let first = mailer.sent.borrow()[0].raw.clone();
    // D1 notes the failure (its mail in the mailbox's own database), until it is dispatched.
    let noted = || desk.world.node.database.count("SELECT count(*) FROM sends_failed");
    assert_eq!(noted(), 1);

    // Still refused: failed again, and still not sent twice to Ana.
    let again = body(&desk.call(&writer.token, "POST", &format!("/{send}/retry"), None));
    assert_eq!(again["state"], "failed", "{again}");
    assert_eq!(mailer.sent.borrow().len(), 1);

    mailer.refuse.borrow_mut().clear();
    let retried = desk.call(&writer.token, "POST", &format!("/{send}/retry"), None);
    let retried = body(&retried);
    assert_eq!(retried["state"], "dispatched", "{retried}");
    assert_eq!(noted(), 0, "dispatched, its note goes");
    assert_eq!(retried["delivered_to"], json!(["ana@customer.example", "bea@customer.example"]));
    assert!(retried.get("dispatch_error").is_none(), "{retried}");
    let sent: Vec<(String, Vec<u8>)> =
        mailer.sent.borrow().iter().map(|message| (message.envelope_to.clone(), message.raw.clone())).collect();
    assert_eq!(sent, vec![("ana@customer.example".into(), first.clone()), ("bea@customer.example".into(), first)]);
    let stored = body(&desk.call(&writer.token, "GET", &format!("/{send}"), None));
    assert_eq!(stored["state"], "dispatched");
    assert_eq!(stored["manifest_intact"], true);
    let entry = desk.world.last_audit_entry();
    assert_eq!(entry["action"], "retry_send");
    assert_eq!(entry["actor"], writer.id);

    // Once it has reached everyone there is nothing to send again.
    let refused = desk.call(&writer.token, "POST", &format!("/{send}/retry"), None);
    assert_refused(&refused, 409, "wrong_state");
    assert_eq!(mailer.sent.borrow().len(), 2);
}

#[test]
fn a_failed_send_changed_outside_the_node_is_never_sent_again() {
    let desk = desk();
    let (writer, approver) = (desk.person("writer"), desk.person("approver"));
    let send = desk.submitted();
    desk.world.approve_while_refusing(&approver.token, &desk.path(&send), "ana@customer.example");
    // Past the trigger that keeps sealed sends immutable, as someone with the
    // database itself could.
    desk.world.node.mail_tamper("DROP TRIGGER sends_sealed_are_immutable");
    desk.world.node.mail_tamper(&format!("UPDATE sends SET text = 'Something else.' WHERE id = '{send}'"));
    let refused = desk.call(&writer.token, "POST", &format!("/{send}/retry"), None);
    assert_refused(&refused, 409, "not_as_approved");
    assert!(desk.world.node.mailer.sent.borrow().is_empty());
}

#[test]
fn sending_again_needs_send_propose_on_the_mailbox() {
    let desk = desk();
    let approver = desk.person("approver");
    let send = desk.submitted();
    desk.world.approve_while_refusing(&approver.token, &desk.path(&send), "ana@customer.example");
    let refused = desk.call(&approver.token, "POST", &format!("/{send}/retry"), None);
    assert_refused(&refused, 403, "missing_relation");
}

/// Delivers a message from Ana with `headers` to the desk's mailbox.
fn received(desk: &Desk, message_id: &str, headers: &str) -> String {
    let raw = format!(
        "From: Ana Lima <ana@customer.example>\r\nTo: Support <{SUPPORT}>\r\n{headers}Subject: Invoice\r\n\
         Message-ID: <{message_id}>\r\nDate: Mon, 16 Nov 2026 09:00:00 +0000\r\n\r\nHello.\r\n"
    );
    match desk.world.node.deliver("ana@customer.example", SUPPORT, raw.as_bytes()) {
        Ok(mailroom::mail::Delivery::Stored { receipt_id }) => receipt_id,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_replys_references_follow_rfc_5322_and_what_leaves_carries_them() {
    let desk = desk();
    let (writer, approver) = (desk.person("writer"), desk.person("approver"));
    let reply = |receipt: &str| {
        let created = desk.call(&writer.token, "POST", "", Some(json!({ "reply_to": receipt, "text": "Yes." })));
        assert_eq!(created.status, 201, "{}", text(&created));
        body(&created)
    };
    // The parent's References, then the parent's own id.
    let with_references =
        received(&desk, "m3@customer.example", "References: <m1@customer.example> <m2@customer.example>\r\n");
    let draft = reply(&with_references);
    assert_eq!(draft["references"], json!(["m1@customer.example", "m2@customer.example", "m3@customer.example"]));
    assert_eq!(draft["in_reply_to"], "m3@customer.example");
    // No References, but an In-Reply-To naming one message: it begins the chain.
    let with_parent = received(&desk, "n2@customer.example", "In-Reply-To: <n1@customer.example>\r\n");
    let draft = reply(&with_parent);
    assert_eq!(draft["references"], json!(["n1@customer.example", "n2@customer.example"]), "{draft}");
    // Within the limit: the most recent, the parent last.
    let long: Vec<String> = (0..20).map(|n| format!("<l{n}@customer.example>")).collect();
    let with_long = received(&desk, "l20@customer.example", &format!("References: {}\r\n", long.join(" ")));
    let draft = reply(&with_long);
    let references = draft["references"].as_array().unwrap();
    assert_eq!(references.len(), 20);
    assert_eq!(
        (references[0].as_str(), references[19].as_str()),
        (Some("l1@customer.example"), Some("l20@customer.example"))
    );

    // What leaves carries them as approved.
    let with_parent_draft = reply(&with_parent)["id"].as_str().unwrap().to_string();
    desk.call(&writer.token, "POST", &format!("/{with_parent_draft}/submit"), None);
    let approved = desk.call(
        &approver.token,
        "POST",
        &format!("/{with_parent_draft}/approve"),
        Some(desk.decision(&approver.token, &with_parent_draft)),
    );
    assert_eq!(body(&approved)["state"], "dispatched", "{}", text(&approved));
    let sent = desk.world.node.mailer.sent.borrow().clone();
    let parsed = mailroom::mail::inbound::parse(&sent[0].raw).unwrap();
    assert_eq!(parsed.references, vec!["n1@customer.example", "n2@customer.example"]);
    assert_eq!(parsed.in_reply_to, vec!["n2@customer.example"]);
}

#[test]
fn a_reply_to_all_past_the_limit_is_a_draft_to_trim_and_is_submitted_only_once_trimmed() {
    let desk = desk();
    let writer = desk.person("writer");
    let copied: Vec<String> = (0..60).map(|n| format!("Person {n} <p{n}@customer.example>")).collect();
    let wide = received(&desk, "wide@customer.example", &format!("Cc: {}\r\n", copied.join(", ")));
    let created =
        desk.call(&writer.token, "POST", "", Some(json!({ "reply_to": wide, "reply_all": true, "text": "Noted." })));
    assert_eq!(created.status, 201, "kept as a draft: {}", text(&created));
    let draft = body(&created);
    assert_eq!(draft["to"], json!(["Ana Lima <ana@customer.example>"]));
    assert_eq!(draft["cc"].as_array().unwrap().len(), 60, "everyone, names kept");
    assert_eq!(draft["recipients_to_remove"], 11, "61 recipients, 50 may be sent to: {draft}");
    let send = draft["id"].as_str().unwrap().to_string();
    let entry = desk.world.last_audit_entry();
    assert_eq!(entry["detail"]["recipients_to_remove"], 11, "{entry}");

    // Submitting it is refused, saying how many to remove and how.
    let refused = desk.call(&writer.token, "POST", &format!("/{send}/submit"), None);
    assert_refused(&refused, 409, "too_many_recipients");
    assert!(text(&refused).contains("Remove 11") && text(&refused).contains("update_draft"), "{}", text(&refused));
    assert_eq!(body(&desk.world.call("GET", &desk.path(&send), Some(&writer.token), None))["state"], "draft");

    // Trimmed part of the way, still refused; trimmed to the limit, submitted.
    let keep = |count: usize| draft["cc"].as_array().unwrap()[..count].to_vec();
    let partly = body(&desk.call(&writer.token, "PATCH", &format!("/{send}"), Some(json!({ "cc": keep(55) }))));
    assert_eq!(partly["recipients_to_remove"], 6);
    assert_refused(&desk.call(&writer.token, "POST", &format!("/{send}/submit"), None), 409, "too_many_recipients");
    let trimmed = body(&desk.call(&writer.token, "PATCH", &format!("/{send}"), Some(json!({ "cc": keep(49) }))));
    assert!(trimmed.get("recipients_to_remove").is_none(), "{trimmed}");
    let submitted = desk.call(&writer.token, "POST", &format!("/{send}/submit"), None);
    assert_eq!(submitted.status, 200, "{}", text(&submitted));

    // A draft holds no more than a reply to all can gather.
    let too_many: Vec<String> = (0..300).map(|n| format!("q{n}@customer.example")).collect();
    let refused = desk.call(
        &writer.token,
        "POST",
        "",
        Some(json!({ "to": ["ana@customer.example"], "cc": too_many, "subject": "s", "text": "t" })),
    );
    assert_refused(&refused, 400, "recipient_count");
}

#[test]
fn a_reply_to_naming_the_mailbox_itself_answers_the_sender() {
    let desk = desk();
    let writer = desk.person("writer");
    let receipt = received(&desk, "rt@customer.example", &format!("Reply-To: Support <{SUPPORT}>\r\n"));
    let created = desk.call(&writer.token, "POST", "", Some(json!({ "reply_to": receipt, "text": "Hello Ana." })));
    assert_eq!(created.status, 201, "{}", text(&created));
    assert_eq!(body(&created)["to"], json!(["Ana Lima <ana@customer.example>"]), "{}", text(&created));
    // Among other Reply-To addresses, only the mailbox itself is passed over.
    let several = received(
        &desk,
        "rt2@customer.example",
        &format!("Reply-To: {SUPPORT}, Tickets <queue@tickets.customer.example>\r\n"),
    );
    let created = desk.call(&writer.token, "POST", "", Some(json!({ "reply_to": several, "text": "Hi." })));
    assert_eq!(body(&created)["to"], json!(["Tickets <queue@tickets.customer.example>"]), "{}", text(&created));
}
