//! A moved mailbox's sends (decision 0040): once a mailbox's mail is in its
//! own database, a send is drafted there (a reply found there, the draft
//! begun there resumed), edited, given files and relieved of them,
//! submitted, taken back, refused, written again, approved and dispatched,
//! each change committed there with its entry in the mailbox's segment of
//! the chain; the deciders' notices follow on D1; names and the mailbox's
//! address come from D1 beside; dual control is decided as on D1 (neither
//! the agent's sponsor nor who minted it approves); and a send whose author
//! lost send.propose before the approval is refused as on D1, from D1's note
//! of whose the send is, and one whose author lost it by the time it is
//! sealed is failed, naming why, and leaves for nobody, then or when sent
//! again. Nothing of it is read from, or written to, what D1 still holds.
//! The approval queue finds what awaits a decider in every mailbox, moved
//! or not, from D1's notes, page by page, and leaves out a stale note.

use mailroom::mail::Delivery;
use mailroom_contract::api::NotificationKind;
use serde_json::{Value, json};

use crate::desk::{Desk, WORKS_AND_DECIDES, WORKS_THE_MAILBOX};
use crate::moving_mail::moved;
use crate::support::{World, body, text};

const SUPPORT: &str = "support@mailroom.test";

fn ok(response: mailroom::core::http::Response) -> Value {
    assert_eq!(response.status / 100, 2, "{}", text(&response));
    body(&response)
}

fn refused(response: mailroom::core::http::Response, status: u16, code: &str) {
    assert_eq!(response.status, status, "{}", text(&response));
    assert_eq!(body(&response)["error"]["code"], code, "{}", text(&response));
}

/// Notices about `send` of `kind` still asking for something, on D1.
fn open_notices(world: &World, kind: NotificationKind, send: &str) -> i64 {
    world.node.database.count(&format!(
        "SELECT count(*) FROM notifications WHERE kind = '{}' AND object_id = '{send}' AND resolved_at IS NULL",
        kind.name()
    ))
}

/// The sends D1 notes as awaiting a decision.
fn awaiting(world: &World) -> Vec<String> {
    let rows = world.node.database.rows("SELECT send_id FROM sends_awaiting_decision ORDER BY send_id");
    rows.into_iter().map(|mut row| row.remove(0)).collect()
}

#[test]
fn a_moved_mailbox_s_sends_live_their_whole_life_in_its_own_database() {
    let desk = Desk::in_world(World::with_mail_in_d1(), SUPPORT)
        .with("ben@example.com", WORKS_AND_DECIDES)
        .with("cleo@example.com", &["mailbox.metadata.read", "approval.decide"])
        .with_admin(&["approval.decide", "mailbox.metadata.read"]);
    let (world, mailbox) = (&desk.world, desk.mailbox.clone());
    let (ben, cleo) = (desk.person("ben"), desk.person("cleo"));
    let raw = "From: Ana <ana@customer.example>\r\nTo: Support <support@mailroom.test>\r\nSubject: Invoice 4471\r\n\
               Message-ID: <q1@customer.example>\r\nDate: Mon, 16 Nov 2026 09:00:00 +0000\r\n\r\nWhere is it?\r\n";
    let Ok(Delivery::Stored { receipt_id: question }) =
        world.node.deliver("ana@customer.example", SUPPORT, raw.as_bytes())
    else {
        panic!("the question was not stored");
    };
    let (agent, credential) = world.mint(
        &ben.id,
        &["mail.read", "mail.draft"],
        json!([{ "mailbox": mailbox, "relations": WORKS_THE_MAILBOX }]),
    );
    let conversation = world.thread_of(&mailbox, &question);
    moved(world, &mailbox);
    // What D1 still holds of the mailbox's mail is read by nothing: gone, it
    // changes nothing below.
    world.node.database.tamper(&format!("DELETE FROM receipts WHERE mailbox_id = '{mailbox}'"));
    let object = world.node.mailboxes.database(&mailbox).expect("the mailbox has its own database");
    let entries_before = object.database.count("SELECT count(*) FROM audit_entries");
    let sends = desk.sends();
    let agent_calls =
        |method: &str, path: &str, payload: Option<Value>| world.call(method, path, Some(&credential), payload);

    // Drafted in reply to the message only the mailbox's database holds, and
    // resumed when Reply is asked again.
    ok(agent_calls("GET", &conversation, None));
    let reply = json!({ "reply_to": question, "text": "It is attached." });
    let draft = ok(agent_calls("POST", &sends, Some(reply)));
    let send = format!("{sends}/{}", draft["id"].as_str().unwrap());
    assert_eq!((draft["author_name"].as_str(), draft["mailbox_address"].as_str()), (Some("Test agent"), Some(SUPPORT)));
    assert_eq!(draft["to"], json!(["Ana <ana@customer.example>"]), "{draft}");
    let resumed = ok(agent_calls("POST", &sends, Some(json!({ "reply_to": question }))));
    assert_eq!((resumed["id"].clone(), resumed["resumed"].clone()), (draft["id"].clone(), json!(true)));
    assert_eq!(resumed["author_name"], "Test agent");

    // Edited, given a file, relieved of it, given it again.
    let edited = ok(agent_calls("PATCH", &send, Some(json!({ "text": "The invoice is attached." }))));
    assert_eq!(edited["text"], "The invoice is attached.");
    let file = json!({ "name": "invoice.txt", "content_type": "text/plain", "content_base64": "NDQ3MQ==" });
    assert_eq!(
        ok(agent_calls("POST", &format!("{send}/attachments"), Some(file.clone())))["attachments"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(ok(agent_calls("DELETE", &format!("{send}/attachments/0"), None))["attachments"], json!([]));
    ok(agent_calls("POST", &format!("{send}/attachments"), Some(file)));

    // Submitted, with what its agent read; the deciders hear of it on D1.
    let submitted = ok(agent_calls("POST", &format!("{send}/submit"), None));
    assert_eq!(
        (submitted["state"].as_str(), submitted["writer_read_unverified"].as_i64()),
        (Some("submitted"), Some(1))
    );
    let send_id = submitted["id"].as_str().unwrap().to_string();
    assert_eq!(open_notices(world, NotificationKind::ApprovalWaiting, &send_id), 1);
    assert_eq!(awaiting(world), std::slice::from_ref(&send_id), "D1 notes whose it is");
    // Taken back and submitted again.
    assert_eq!(ok(agent_calls("POST", &format!("{send}/cancel"), None))["state"], "draft");
    assert_eq!(open_notices(world, NotificationKind::ApprovalWaiting, &send_id), 0);
    assert!(awaiting(world).is_empty());
    ok(agent_calls("POST", &format!("{send}/submit"), None));

    // Dual control, as on D1: neither the agent's sponsor nor who minted it.
    let shown = ok(world.call("GET", &send, Some(&cleo.token), None));
    assert_eq!((shown["author_name"].as_str(), shown["mailbox_address"].as_str()), (Some("Test agent"), Some(SUPPORT)));
    assert_eq!(shown["answers"]["id"], question.as_str());
    let version = json!({ "version": shown["version"] });
    refused(
        world.call("POST", &format!("{send}/approve"), Some(&ben.token), Some(version.clone())),
        403,
        "own_submission",
    );
    refused(world.admin("POST", &format!("{send}/approve"), Some(version.clone())), 403, "handed_the_agent");

    // Refused, written again by the agent, and approved: it leaves, and the
    // conversation shows it.
    let refusal = json!({ "version": shown["version"], "reason": "Say which invoice." });
    let refused_send = ok(world.call("POST", &format!("{send}/refuse"), Some(&cleo.token), Some(refusal)));
    assert_eq!(
        (refused_send["state"].as_str(), refused_send["decided_by_name"].as_str()),
        (Some("refused"), Some("cleo"))
    );
    assert!(awaiting(world).is_empty());
    let again = ok(agent_calls("POST", &format!("{send}/redraft"), None));
    assert_eq!(again["attachments"].as_array().unwrap().len(), 1, "{again}");
    let send = format!("{sends}/{}", again["id"].as_str().unwrap());
    ok(agent_calls("POST", &format!("{send}/submit"), None));
    let shown = ok(world.call("GET", &send, Some(&cleo.token), None));
    let approved = ok(world.call(
        "POST",
        &format!("{send}/approve"),
        Some(&cleo.token),
        Some(json!({ "version": shown["version"] })),
    ));
    assert_eq!(approved["state"], "dispatched", "{approved}");
    assert!(awaiting(world).is_empty());
    assert_eq!(world.node.mailer.sent.borrow().len(), 1);
    let now = ok(world.call("GET", &send, Some(&cleo.token), None));
    assert_eq!((now["state"].as_str(), now["decided_by_name"].as_str()), (Some("dispatched"), Some("cleo")));
    assert_eq!(now["manifest_intact"], true);
    let thread = ok(world.call("GET", &conversation, Some(&ben.token), None));
    let sent: Vec<&Value> = thread["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["kind"] == "sent")
        .map(|entry| &entry["sent"]["state"])
        .collect();
    assert_eq!(sent, [&json!("refused"), &json!("dispatched")], "{thread}");

    // All of it in the mailbox's own database, each change with its entry.
    assert_eq!(world.node.database.count("SELECT count(*) FROM sends"), 0, "D1 holds no send");
    assert_eq!(object.database.count("SELECT count(*) FROM sends"), 2);
    assert!(object.database.count("SELECT count(*) FROM audit_entries") >= entries_before + 12);
    world.node.seal();
    let verified = ok(world.admin("GET", &format!("/api/audit/verify?mailbox_id={mailbox}"), None));
    assert_eq!(verified["intact"], true, "{verified}");

    // An author who lost send.propose before the approval: refused, as on
    // D1, from D1's note of whose the send is, asked before it is read.
    let late = ok(agent_calls(
        "POST",
        &sends,
        Some(json!({ "to": ["ana@customer.example"], "subject": "Also", "text": "One more." })),
    ));
    let late_id = late["id"].as_str().unwrap().to_string();
    let late = format!("{sends}/{late_id}");
    ok(agent_calls("POST", &format!("{late}/submit"), None));
    let shown = ok(world.call("GET", &late, Some(&cleo.token), None));
    let version = json!({ "version": shown["version"] });
    assert_eq!(world.revoke(&agent, "send.propose", &mailbox).status, 200);
    let approve = || world.call("POST", &format!("{late}/approve"), Some(&cleo.token), Some(version.clone()));
    refused(approve(), 409, "author_lost_authority");
    assert_eq!(ok(world.call("GET", &late, Some(&cleo.token), None))["state"], "submitted");

    // Without that note (its write after the submission lost), the check as
    // the seal commits catches it: failed, saying why, handed to nobody.
    world.node.database.tamper(&format!("DELETE FROM sends_awaiting_decision WHERE send_id = '{late_id}'"));
    let stopped = ok(approve());
    assert_eq!(stopped["state"], "failed", "{stopped}");
    assert!(stopped["dispatch_error"].as_str().is_some_and(|error| error.contains("may no longer send")), "{stopped}");
    assert_eq!(world.node.mailer.sent.borrow().len(), 1, "handed to nobody");
    // Its failure noted on D1, sending it again is refused up front.
    refused(world.call("POST", &format!("{late}/retry"), Some(&ben.token), None), 409, "author_lost_authority");
    assert_eq!(world.node.mailer.sent.borrow().len(), 1, "handed to nobody when sent again");
    assert_eq!(ok(world.call("GET", &late, Some(&ben.token), None))["state"], "failed");
}

#[test]
fn the_approval_queue_finds_what_awaits_in_every_mailbox_wherever_its_mail_is() {
    const SALES: &str = "sales@mailroom.test";
    let desk = Desk::in_world(World::with_mail_in_d1(), SUPPORT)
        .and_mailbox(SALES)
        .with("ben@example.com", WORKS_AND_DECIDES)
        .with("cleo@example.com", &["mailbox.metadata.read", "approval.decide"]);
    let (world, support) = (&desk.world, desk.mailbox.clone());
    let sales = desk.mailbox_at(SALES).to_string();
    let (ben, cleo) = (desk.person("ben"), desk.person("cleo"));
    world.grant_all(&ben.id, WORKS_AND_DECIDES, &sales);
    world.grant_all(&cleo.id, &["mailbox.metadata.read", "approval.decide"], &sales);
    let submit = |mailbox: &str, subject: &str| {
        let sends = format!("/api/mailboxes/{mailbox}/sends");
        let draft = json!({ "to": ["ana@customer.example"], "subject": subject, "text": "Hello." });
        let draft = ok(world.call("POST", &sends, Some(&ben.token), Some(draft)));
        let send = format!("{sends}/{}", draft["id"].as_str().unwrap());
        ok(world.call("POST", &format!("{send}/submit"), Some(&ben.token), None));
        world.node.platform.advance(1);
        draft["id"].as_str().unwrap().to_string()
    };
    let awaiting = [submit(&support, "First"), submit(&sales, "Second"), submit(&support, "Third")];
    let queue = |token: &str, query: &str| world.call("GET", &format!("/api/approvals{query}"), Some(token), None);
    let ids = |page: &Value| -> Vec<String> {
        page["sends"].as_array().unwrap().iter().map(|send| send["id"].as_str().unwrap().to_string()).collect()
    };
    let before = queue(&cleo.token, "");
    assert_eq!((before.status, before.round_trips), (200, 1), "all of it in D1: one read");
    let before = body(&before);
    assert_eq!(ids(&before), awaiting);

    moved(world, &support);
    world.node.database.tamper(&format!("DELETE FROM sends WHERE mailbox_id = '{support}'"));
    let after = queue(&cleo.token, "");
    assert_eq!((after.status, after.round_trips), (200, 2), "D1's notes and sales, then support's own database");
    assert_eq!(body(&after), before, "the same queue, named alike");

    // Page by page, the same sends in the same order.
    let mut paged = Vec::new();
    let mut cursor = String::new();
    loop {
        let page = ok(queue(&cleo.token, &format!("?limit=1{cursor}")));
        paged.extend(ids(&page));
        match page["next_cursor"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => break,
        }
    }
    assert_eq!(paged, awaiting);
    // Dual control holds across them: nothing of ben's own awaits ben.
    assert_eq!(ok(queue(&ben.token, ""))["sends"], json!([]));

    // A note the send no longer bears out (decided, its note's removal lost)
    // is left out.
    let first = format!("/api/mailboxes/{support}/sends/{}", awaiting[0]);
    let shown = ok(world.call("GET", &first, Some(&cleo.token), None));
    let refusal = json!({ "version": shown["version"], "reason": "Not now." });
    ok(world.call("POST", &format!("{first}/refuse"), Some(&cleo.token), Some(refusal)));
    world.node.database.tamper(&format!(
        "INSERT INTO sends_awaiting_decision (send_id, mailbox_id, author, submitted_by, submitted_at) \
         VALUES ('{}', '{support}', '{ben}', '{ben}', 0)",
        awaiting[0],
        ben = ben.id
    ));
    assert_eq!(ids(&ok(queue(&cleo.token, ""))), awaiting[1..]);
}
