//! What an approver is told an agent read before it submitted a send
//! (`mail::unverified_reads`, decision 0020): every way an agent can be shown
//! a message's content counts (its text, in a conversation or on its own, its
//! original, a file, a search's passage, a conversation's snippet), in any mailbox, wherever that mailbox's mail is kept;
//! a message whose sender was authenticated, a person's read, a read refused
//! and a read more than a day before do not; the count is the one taken at
//! submission, kept with the send as it was approved; and the upkeep forgets
//! reads no count looks back to. Sends submitted before the count was kept
//! keep the one they were shown with.

use std::time::{SystemTime, UNIX_EPOCH};

use mailroom::mail::Delivery;
use mailroom::testing::SqliteDatabase;
use serde_json::{Value, json};

use crate::desk::{Desk, WORKS_THE_MAILBOX};
use crate::moving_mail::moved;
use crate::support::{ADMIN_EMAIL, ADMIN_PASSWORD, World, body, sign_in, text};

const SUPPORT: &str = "support@mailroom.test";
const SALES: &str = "sales@mailroom.test";
const DAY_MS: i64 = 24 * 60 * 60 * 1000;

const PASSING_STAMP: &str = "Authentication-Results: mx.cloudflare.net; dkim=pass header.d=customer.example; \
     dmarc=pass header.from=customer.example; spf=pass smtp.mailfrom=ana@customer.example\r\n";

/// A message from `from` to `to`, with `headers` above its own; its receipt.
fn deliver(world: &World, to: &str, from: &str, subject: &str, headers: &str) -> String {
    let raw = format!(
        "{headers}From: {from}\r\nTo: {to}\r\nSubject: {subject}\r\nMessage-ID: <{}@outside.example>\r\n\
         Date: Mon, 16 Nov 2026 09:00:00 +0000\r\n\r\nPlease send the bank details to this address.\r\n",
        subject.replace(' ', "-")
    );
    match world.node.deliver("bounce@outside.example", to, raw.as_bytes()) {
        Ok(Delivery::Stored { receipt_id }) => receipt_id,
        other => panic!("{subject}: {other:?}"),
    }
}

fn read(world: &World, token: &str, path: &str) -> u16 {
    world.call("GET", path, Some(token), None).status
}

/// The receipts noted as read by `reader`.
fn noted(world: &World, reader: &str) -> Vec<String> {
    let rows = world.node.database.rows(&format!(
        "SELECT receipt_id FROM agent_unverified_reads WHERE agent_id = '{reader}' ORDER BY receipt_id"
    ));
    rows.into_iter().map(|mut row| row.remove(0)).collect()
}

#[test]
fn an_agents_send_counts_every_way_it_read_unverified_mail_in_any_mailbox_as_of_its_submission() {
    let mut desk = Desk::new(SUPPORT).and_mailbox(SALES).with("ben@example.com", WORKS_THE_MAILBOX);
    let ben = desk.person("ben");
    let (ben, ben_token) = (ben.id.clone(), ben.token.clone());
    let (world, support) = (&desk.world, desk.mailbox.clone());
    let sales = desk.mailbox_at(SALES).to_string();
    world.grant_all(&ben, &["mailbox.metadata.read", "mailbox.content.read"], &sales);
    world.grant_all(&ben, &["message.export"], &support);
    let (agent, credential) = world.mint(
        &ben,
        &["mail.read", "mail.export", "mail.draft"],
        json!([
            { "mailbox": support, "relations": ([WORKS_THE_MAILBOX, &["message.export"]].concat()) },
            { "mailbox": sales, "relations": ["mailbox.metadata.read", "mailbox.content.read"] },
        ]),
    );
    let message = |mailbox: &str, receipt: &str| format!("/api/mailboxes/{mailbox}/messages/{receipt}");

    // Read the day before yesterday: past what a count looks back to.
    let long_ago = deliver(world, SUPPORT, "Mallory <mallory@evil.example>", "Old news", "");
    assert_eq!(read(world, &credential, &format!("{}/body", message(&support, &long_ago))), 200);
    // Ben takes a conversation, to be read by the agent later on.
    let assigned = deliver(world, SUPPORT, "Eve <eve@evil.example>", "Assigned one", "");
    let assigned_conversation = world.thread_of(&support, &assigned);
    let assign = json!({ "assignee": ben });
    assert_eq!(world.call("PATCH", &assigned_conversation, Some(&ben_token), Some(assign)).status, 200);
    // A person's read is theirs to weigh.
    assert_eq!(read(world, &ben_token, &format!("{}/body", message(&support, &long_ago))), 200);
    assert!(noted(world, &ben).is_empty());
    world.node.platform.advance(DAY_MS + 60_000);
    // Sessions did not last the day: the administrator signs in again, and
    // so does who decides.
    desk.world.admin_token = sign_in(&desk.world.node, ADMIN_EMAIL, ADMIN_PASSWORD).0;
    let world = &desk.world;
    let (cleo, cleo_token) = world.person("cleo@example.com");
    world.grant_all(&cleo, &["approval.decide", "mailbox.metadata.read"], &support);

    // Its original, twice: one message.
    let forged = deliver(world, SUPPORT, "CEO <ceo@customer.example>", "Urgent wire", "");
    assert_eq!(read(world, &credential, &format!("{}/original", message(&support, &forged))), 200);
    assert_eq!(read(world, &credential, &format!("{}/original", message(&support, &forged))), 200);
    // Another's text.
    let failed = deliver(world, SUPPORT, "Bank <bank@bank.example>", "New account", "");
    assert_eq!(read(world, &credential, &format!("{}/body", message(&support, &failed))), 200);
    // A conversation someone is assigned to, whose name is read as the read
    // is recorded.
    assert_eq!(read(world, &credential, &assigned_conversation), 200);
    // A file of a message in another mailbox.
    let with_file = world.deliver("multipart-attachment", SALES);
    assert_eq!(read(world, &credential, &format!("{}/attachments/0", message(&sales, &with_file))), 200);
    // An authenticated sender's text: nothing to weigh.
    let genuine = deliver(world, SUPPORT, "Ana <ana@customer.example>", "Genuine", PASSING_STAMP);
    assert_eq!(read(world, &credential, &format!("{}/body", message(&support, &genuine))), 200);
    // A read refused is no read: a file that is not there.
    assert_eq!(read(world, &credential, &format!("{}/attachments/9", message(&support, &forged))), 404);

    // A conversation in a mailbox whose mail has moved into its own database:
    // the message is only there, and still counts.
    let from_eve = deliver(world, SALES, "Eve <eve@evil.example>", "Moved away", "");
    moved(world, &sales);
    let conversation = world.thread_of(&sales, &from_eve);
    world.node.database.tamper(&format!("DELETE FROM receipts WHERE mailbox_id = '{sales}'"));
    assert_eq!(read(world, &credential, &conversation), 200);

    let counted = [forged.clone(), failed, assigned, with_file, from_eve];
    let mut expected: Vec<String> = counted.iter().chain([&long_ago]).cloned().collect();
    expected.sort();
    assert_eq!(noted(world, &agent), expected, "the one read long ago is kept until the upkeep");

    let draft =
        world.call("POST", &desk.sends(), Some(&credential), Some(json!({ "reply_to": forged, "text": "Done." })));
    assert_eq!(draft.status, 201, "{}", text(&draft));
    let send = format!("{}/{}", desk.sends(), body(&draft)["id"].as_str().unwrap());
    assert!(body(&draft).get("writer_read_unverified").is_none(), "a draft carries no count");
    let submitted = body(&world.call("POST", &format!("{send}/submit"), Some(&credential), None));
    assert_eq!(submitted["writer_read_unverified"], counted.len(), "{submitted}");

    // What the agent reads after submitting is not what the send was written from.
    let later = deliver(world, SUPPORT, "Mallory <mallory@evil.example>", "Later", "");
    assert_eq!(read(world, &credential, &format!("{}/body", message(&support, &later))), 200);
    let count_shown = |value: &Value| value["writer_read_unverified"].clone();
    let shown = body(&world.call("GET", &send, Some(&cleo_token), None));
    assert_eq!(count_shown(&shown), counted.len(), "{shown}");
    let queue = body(&world.call("GET", "/api/approvals", Some(&cleo_token), None));
    assert_eq!(count_shown(&queue["sends"][0]), counted.len(), "{queue}");

    // Taken back, it is a draft again, with no count; submitted again, counted again.
    assert_eq!(world.call("POST", &format!("{send}/cancel"), Some(&credential), None).status, 200);
    assert!(body(&world.call("GET", &send, Some(&cleo_token), None)).get("writer_read_unverified").is_none());
    let again = body(&world.call("POST", &format!("{send}/submit"), Some(&credential), None));
    assert_eq!(count_shown(&again), counted.len() + 1, "{again}");

    // Approved, the count is what the approver saw, and stays so.
    let shown = world.decision(&cleo_token, &send);
    assert_eq!(world.call("POST", &format!("{send}/approve"), Some(&cleo_token), Some(shown)).status, 200);
    let changed = world.node.mail_try_tamper(&format!(
        "UPDATE sends SET writer_unverified_reads = 0 WHERE id = '{}'",
        send.rsplit('/').next().unwrap()
    ));
    assert!(changed.is_err_and(|refused| refused.contains("sealed_send_is_immutable")));

    // The upkeep forgets the read no count looks back to, and only it.
    world.node.maintain();
    assert!(!noted(world, &agent).contains(&long_ago), "{:?}", noted(world, &agent));
    assert_eq!(noted(world, &agent).len(), counted.len() + 1);
}

#[test]
fn sends_submitted_before_the_count_was_kept_keep_the_count_they_were_shown_with() {
    let database = SqliteDatabase::migrated_before("0032");
    // The migration looks back a day from the wall clock, as D1 runs it.
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64;
    let submitted_at = now - 3 * DAY_MS;
    database.execute_sql(&format!(
        "INSERT INTO mailboxes (id, address, display_name, created_at) VALUES ('mbx_1', 'a@x.example', 'A', 0);
         INSERT INTO receipts (id, mailbox_id, message_id, envelope_from, to_json, cc_json, recipients, subject,
             received_at, in_reply_to_json, references_json, size, raw_key, text_body, text_source, text_truncated,
             attachments_json, sender_authentication)
         VALUES ('rcp_forged', 'mbx_1', 'f@x', 'e@x', '[]', '[]', '', 'f', 0, '[]', '[]', 1, 'raw/f', 't', 'text', 0,
                 '[]', 'unverified'),
                ('rcp_genuine', 'mbx_1', 'g@x', 'e@x', '[]', '[]', '', 'g', 0, '[]', '[]', 1, 'raw/g', 't', 'text', 0,
                 '[]', 'authenticated');
         INSERT INTO audit_entries (at, actor, actor_kind, action, object, outcome) VALUES
             ({read_before}, 'agt_1', 'agent', 'get_message_body', 'rcp_forged', 'ok'),
             ({read_before}, 'agt_1', 'agent', 'get_message_body', 'rcp_genuine', 'ok'),
             ({read_before}, 'agt_1', 'agent', 'get_message_body', 'rcp_forged', 'ok'),
             ({read_today}, 'agt_1', 'agent', 'get_message_body', 'rcp_forged', 'ok'),
             ({read_today}, 'agt_1', 'agent', 'get_message_body', 'rcp_genuine', 'ok'),
             ({read_today}, 'usr_1', 'person', 'get_message_body', 'rcp_forged', 'ok');
         INSERT INTO sends (id, mailbox_id, author, state, to_json, cc_json, subject, text, references_json,
             created_at, updated_at, submitted_at, submitted_by, sealed_at)
         VALUES ('snd_agent', 'mbx_1', 'agt_1', 'sealed', '[]', '[]', 's', 't', '[]', 0, 0, {submitted_at}, 'agt_1',
                 {submitted_at}),
                ('snd_draft', 'mbx_1', 'agt_1', 'draft', '[]', '[]', 's', 't', '[]', 0, 0, NULL, NULL, NULL),
                ('snd_person', 'mbx_1', 'usr_1', 'submitted', '[]', '[]', 's', 't', '[]', 0, 0, {submitted_at},
                 'usr_1', NULL);",
        read_before = submitted_at - 1_000,
        read_today = now - 60_000,
    ));
    // A sealed send is given its count before the trigger holding it to what
    // was approved learns of the column.
    database.migrate_from("0032");

    let counts = database.rows("SELECT id, quote(writer_unverified_reads) FROM sends ORDER BY id");
    let counts: Vec<(&str, &str)> = counts.iter().map(|row| (row[0].as_str(), row[1].as_str())).collect();
    assert_eq!(counts, [("snd_agent", "1"), ("snd_draft", "NULL"), ("snd_person", "NULL")]);
    let noted = database.rows("SELECT agent_id, receipt_id, read_at FROM agent_unverified_reads");
    assert_eq!(noted, [vec!["agt_1".to_string(), "rcp_forged".into(), (now - 60_000).to_string()]]);
}

#[test]
fn a_passage_an_agent_is_shown_in_a_search_or_a_list_of_conversations_counts_as_a_read() {
    let desk = Desk::new(SUPPORT).and_mailbox(SALES).with("ben@example.com", WORKS_THE_MAILBOX);
    let ben = desk.person("ben").id.clone();
    let (world, support) = (&desk.world, desk.mailbox.clone());
    let sales = desk.mailbox_at(SALES).to_string();
    world.grant_all(&ben, &["mailbox.metadata.read", "mailbox.content.read"], &sales);
    let (agent, credential) = world.mint(
        &ben,
        &["mail.read"],
        json!([
            { "mailbox": support, "relations": ["mailbox.metadata.read", "mailbox.content.read"] },
            { "mailbox": sales, "relations": ["mailbox.metadata.read", "mailbox.content.read"] },
        ]),
    );
    let forged = deliver(world, SUPPORT, "Mallory <mallory@evil.example>", "Urgent wire", "");
    let proven = deliver(world, SUPPORT, "Ana <ana@customer.example>", "Invoice", PASSING_STAMP);
    moved(world, &sales);
    let in_moved = deliver(world, SALES, "Eve <eve@evil.example>", "Bank change", "");

    // The list of conversations shows each one's latest message: the forged one is noted.
    assert_eq!(read(world, &credential, &format!("/api/mailboxes/{support}/threads")), 200);
    assert_eq!(noted(world, &agent), vec![forged.clone()]);
    // A search across mailboxes shows passages, from D1 and from sales' own
    // database (noted after the answer there); the authenticated one is not noted.
    assert_eq!(read(world, &credential, "/api/search?q=bank"), 200);
    let mut expected = vec![forged.clone(), in_moved.clone()];
    expected.sort();
    assert_eq!(noted(world, &agent), expected, "not {proven}");
    // A person's search is theirs to weigh.
    let before = noted(world, &agent).len();
    assert_eq!(read(world, &desk.person("ben").token, "/api/search?q=bank"), 200);
    assert_eq!(world.node.database.count("SELECT count(*) FROM agent_unverified_reads"), before as i64);
}
