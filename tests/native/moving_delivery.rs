//! Mail delivered to a mailbox whose mail moved (decision 0040): stored in the
//! mailbox's own database with its original under the mailbox's key, joined
//! to its conversation there, recorded in the mailbox's segment of the chain
//! (a re-delivery too, and the same message delivered twice at once is
//! stored once), read back by every route that follows the mail, and
//! nothing of it written to D1 but what the directory keeps (notices, the
//! note of a reply awaiting a decision). Its butlers act there as on D1, and a
//! copy one files in another mailbox is written where that mailbox's mail
//! is, with its own original and its entry beside it, in both directions; and
//! a butler's dry run walks such a message, with what is around it from D1.

use mailroom::mail::Delivery;
use serde_json::{Value, json};

use crate::butlers::{Butlers, SUPPORT, deliver, deliver_reply, office_in, publish};
use crate::moving_mail::moved;
use crate::support::*;

/// The butlers' office with its mail in D1, for these tests to move it.
fn office_in_d1() -> crate::desk::Desk {
    office_in(World::with_mail_in_d1())
}

/// `column` of `table`'s rows in `mailbox`'s own database, as text.
fn in_object(world: &World, mailbox: &str, sql: &str) -> Vec<Vec<String>> {
    world.node.mailboxes.database(mailbox).expect("the mailbox has its own database").database.rows(sql)
}

/// The entries of `mailbox`'s segment with `action`: (object, outcome).
fn segment_entries(world: &World, mailbox: &str, action: &str) -> Vec<(String, String)> {
    in_object(
        world,
        mailbox,
        &format!("SELECT object, outcome FROM audit_entries WHERE action = '{action}' ORDER BY seq"),
    )
    .into_iter()
    .map(|row| (row[0].clone(), row[1].clone()))
    .collect()
}

fn ok(response: mailroom::core::http::Response) -> Value {
    assert_eq!(response.status / 100, 2, "{}", text(&response));
    body(&response)
}

#[test]
fn mail_delivered_to_a_moved_mailbox_is_stored_threaded_read_and_recorded_in_its_own_database() {
    let office = office_in_d1();
    let (world, support, ben) = (&office.world, office.mailbox.clone(), office.person("ben"));
    world.grant_all(&ben.id, &["mailbox.content.read"], &support);
    let first = deliver(world, "Invoice 1", "inv1@customer.example");
    moved(world, &support);
    let d1_receipts = || world.node.database.count("SELECT count(*) FROM receipts");
    assert_eq!(d1_receipts(), 1, "D1's copy of what moved");

    // A reply to the first message, from its sender: stored in the mailbox's
    // own database alone, in the first one's conversation.
    let reply = deliver_reply(world, "Re: Invoice 1", "inv1b@customer.example", "inv1@customer.example");
    assert_eq!(d1_receipts(), 1, "nothing of it in D1");
    let stored = in_object(world, &support, &format!("SELECT raw_key, thread_id FROM receipts WHERE id = '{reply}'"));
    let first_thread = in_object(world, &support, &format!("SELECT thread_id FROM receipts WHERE id = '{first}'"));
    assert_eq!(stored.len(), 1);
    assert!(stored[0][0].starts_with(&format!("raw/{support}/")), "its original under the mailbox's key: {stored:?}");
    assert!(world.node.blobs.objects.borrow().contains_key(&stored[0][0]));
    assert_eq!(stored[0][1], first_thread[0][0], "it joined the conversation of the message it answers");
    let counted =
        in_object(world, &support, &format!("SELECT received_count FROM mail_threads WHERE id = '{}'", stored[0][1]));
    assert_eq!(counted, vec![vec!["2".to_string()]]);

    // Every route that follows the mail finds it.
    let listed = ok(world.call("GET", &format!("/api/mailboxes/{support}/messages"), Some(&ben.token), None));
    assert_eq!(listed["messages"][0]["id"], reply.as_str(), "{listed}");
    let thread_path = format!("/api/mailboxes/{support}/threads/{}", stored[0][1]);
    let shown = ok(world.call("GET", &thread_path, Some(&ben.token), None));
    assert_eq!(shown["entries"].as_array().unwrap().len(), 2, "{shown}");
    let found = ok(world.call("GET", &format!("/api/search?q=quarterly&mailbox={support}"), Some(&ben.token), None));
    assert_eq!(found["results"][0]["id"], reply.as_str(), "{found}");

    // Delivered again: not stored twice, and recorded there too.
    let raw = format!(
        "From: Ana <ana@customer.example>\r\nTo: Support <{SUPPORT}>\r\nSubject: Re: Invoice 1\r\n\
         Message-ID: <inv1b@customer.example>\r\nIn-Reply-To: <inv1@customer.example>\r\n\
         Date: Mon, 16 Nov 2026 10:00:00 +0000\r\n\r\nFollowing up on the quarterly figures.\r\n"
    );
    let again = world.node.deliver("ana@customer.example", SUPPORT, raw.as_bytes());
    assert_eq!(again, Ok(Delivery::Duplicate { receipt_id: reply.clone() }));
    let recorded = segment_entries(world, &support, "receive_mail");
    assert_eq!(recorded, vec![(reply.clone(), "ok".to_string()), (reply.clone(), "ok".to_string())]);
    assert!(
        !world
            .audit_of(None)
            .iter()
            .any(|entry| entry["action"] == "receive_mail" && entry["object"] == reply.as_str()),
        "neither entry is in D1's chain"
    );
    let walked = ok(world.admin("GET", &format!("/api/audit/verify?mailbox_id={support}"), None));
    assert_eq!(walked["intact"], true, "{walked}");

    // Another message claiming the same Message-ID is kept beside it, marked.
    let claiming = raw.replace("quarterly figures", "annual figures");
    match world.node.deliver("ana@customer.example", SUPPORT, claiming.as_bytes()) {
        Ok(Delivery::Stored { receipt_id }) => assert_ne!(receipt_id, reply),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        in_object(world, &support, "SELECT count(*) FROM receipts WHERE claimed_message_id IS NOT NULL")[0][0],
        "1"
    );
}

#[test]
fn a_moved_mailbox_s_butlers_act_in_its_own_database_and_tell_the_directory_after() {
    let office = office_in_d1();
    let (world, support, ben, cleo) =
        (&office.world, office.mailbox.clone(), office.person("ben"), office.person("cleo"));
    world.grant_all(&cleo.id, &["approval.decide"], &support);
    let butler = office.create(json!({
        "conditions": [{ "on": "subject", "contains": "invoice" }],
        "effects": [
            { "do": "assign", "assignee": cleo.id },
            { "do": "label", "label": "billing" },
            { "do": "set_status", "status": "waiting" },
            { "do": "draft_reply", "text": "We have your message about {subject}." }
        ]
    }));
    publish(world, &butler);
    deliver(world, "Lunch?", "lunch@customer.example");
    moved(world, &support);

    let receipt = deliver(world, "Invoice 9", "inv9@customer.example");
    let thread =
        in_object(world, &support, &format!("SELECT thread_id FROM receipts WHERE id = '{receipt}'"))[0][0].clone();
    let conversation =
        in_object(world, &support, &format!("SELECT assignee, status FROM mail_threads WHERE id = '{thread}'"));
    assert_eq!(conversation, vec![vec![cleo.id.clone(), "waiting".to_string()]]);
    assert_eq!(
        in_object(world, &support, &format!("SELECT label FROM thread_labels WHERE thread_id = '{thread}'")),
        vec![vec!["billing".to_string()]]
    );
    let runs = in_object(world, &support, &format!("SELECT matched FROM butler_runs WHERE receipt_id = '{receipt}'"));
    assert_eq!(runs, vec![vec!["1".to_string()]]);
    let effects = segment_entries(world, &support, "butler_effect");
    assert_eq!(effects.len(), 4, "each effect recorded in the segment: {effects:?}");
    assert!(effects.iter().all(|(object, outcome)| *object == thread && outcome == "ok"), "{effects:?}");
    assert_eq!(world.node.database.count("SELECT count(*) FROM sends"), 0, "the reply is written where the mail is");

    // The directory hears after: Cleo is told of the assignment, and the
    // reply waits in her queue from D1's note, for her to approve.
    let feed = ok(world.call("GET", "/api/me/notifications", Some(&cleo.token), None));
    let kinds: Vec<&str> =
        feed["notifications"].as_array().unwrap().iter().map(|item| item["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"conversation_assigned") && kinds.contains(&"approval_waiting"), "{kinds:?}");
    let queued = ok(world.call("GET", "/api/approvals", Some(&cleo.token), None));
    let send = queued["sends"][0].clone();
    assert_eq!(send["reply_to"], receipt.as_str(), "{queued}");
    assert_eq!(send["author"], ben.id.as_str());
    let path = format!("/api/mailboxes/{support}/sends/{}", send["id"].as_str().unwrap());
    let approved =
        ok(world.call("POST", &format!("{path}/approve"), Some(&cleo.token), Some(world.decision(&cleo.token, &path))));
    assert_eq!(approved["state"], "dispatched", "{approved}");
    let walked = ok(world.admin("GET", &format!("/api/audit/verify?mailbox_id={support}"), None));
    assert_eq!(walked["intact"], true, "{walked}");
}

/// A butler of `from` that files every delivery in `to`, sponsored by Ben,
/// who reads both.
fn forwarding(office: &crate::desk::Desk, to: &str) -> String {
    let world = &office.world;
    let ben = office.person("ben");
    world.grant_all(&ben.id, &["mailbox.metadata.read", "mailbox.content.read"], &office.mailbox);
    world.grant_all(&ben.id, &["mailbox.metadata.read", "mailbox.content.read", "send.propose"], to);
    world.grant_all(&world.admin_id, &["mailbox.metadata.read", "mailbox.content.read", "message.export"], to);
    let butler = office.create(json!({ "conditions": [], "effects": [{ "do": "forward", "mailbox": to }] }));
    publish(world, &butler);
    butler.rsplit('/').next().unwrap().to_string()
}

/// The copy `butler` filed of receipt `original`, from its run's outcome.
fn copy_of(world: &World, butler: &str, original: &str) -> String {
    let effect = world.audit().into_iter().find(|entry| {
        entry["action"] == "butler_effect" && entry["actor"] == butler && entry["detail"]["receipt"] == original
    });
    let outcome = effect.map(|entry| entry["detail"]["outcome"].as_str().unwrap().to_string()).unwrap_or_default();
    outcome.rsplit(": ").next().unwrap().to_string()
}

#[test]
fn a_copy_filed_from_a_moved_mailbox_is_written_in_d1_with_its_own_original_and_entry() {
    let office = office_in_d1();
    let (world, support) = (&office.world, office.mailbox.clone());
    let billing = world.mailbox("billing@mailroom.test");
    let butler = forwarding(&office, &billing);
    deliver(world, "Hello", "hello@customer.example");
    moved(world, &support);

    let original = deliver(world, "Invoice 5", "inv5@customer.example");
    // The effect's entry is where the copy is: D1's chain, as billing's mail is in D1.
    let copy = copy_of(world, &butler, &original);
    assert!(copy.starts_with("rcp_"), "{copy}");
    let copied = world
        .node
        .database
        .rows(&format!("SELECT mailbox_id, raw_key, filed_by, subject FROM receipts WHERE id = '{copy}'"));
    assert_eq!(copied.len(), 1, "the copy is in D1");
    assert_eq!(copied[0][0], billing);
    assert!(copied[0][1].starts_with(&format!("raw/{billing}/")), "its own original: {copied:?}");
    assert_eq!((copied[0][2].as_str(), copied[0][3].as_str()), (butler.as_str(), "Invoice 5"));
    assert!(world.node.blobs.objects.borrow().contains_key(&copied[0][1]));
    let shown = world.admin("GET", &format!("/api/mailboxes/{billing}/messages/{copy}/original"), None);
    assert_eq!(shown.status, 200, "{}", text(&shown));
    assert!(String::from_utf8_lossy(&shown.body).contains("Subject: Invoice 5"));
    // In a conversation of billing, found by its search.
    let found = ok(world.admin("GET", &format!("/api/search?q=hello&mailbox={billing}"), None));
    assert!(found["results"].as_array().unwrap().iter().any(|hit| hit["id"] == copy.as_str()), "{found}");
    let threads = ok(world.admin("GET", &format!("/api/mailboxes/{billing}/threads"), None));
    assert_eq!(threads["threads"].as_array().unwrap().len(), 2, "{threads}");
    // Deleting the delivery leaves the copy its own original.
    assert_eq!(
        ok(world.admin("DELETE", &format!("/api/mailboxes/{support}/messages/{original}"), None))["original"],
        "deleted"
    );
    assert!(world.node.blobs.objects.borrow().contains_key(&copied[0][1]));
    assert_eq!(world.verify()["intact"], true, "{}", world.verify());
}

#[test]
fn a_copy_filed_in_a_moved_mailbox_is_written_in_its_own_database_joining_its_conversation_there() {
    let office = office_in_d1();
    let world = &office.world;
    let billing = world.mailbox("billing@mailroom.test");
    let butler = forwarding(&office, &billing);
    let original = deliver(world, "Invoice 6", "inv6@customer.example");
    let first_copy = copy_of(world, &butler, &original);
    moved(world, &billing);

    // A follow-up: its copy joins the first copy's conversation in billing's own database.
    let follow_up = deliver_reply(world, "Re: Invoice 6", "inv6b@customer.example", "inv6@customer.example");
    let copy = in_object(
        world,
        &billing,
        &format!(
            "SELECT id, raw_key, filed_by, thread_id FROM receipts WHERE filed_by IS NOT NULL AND id <> '{first_copy}'"
        ),
    );
    assert_eq!(copy.len(), 1, "the copy is in billing's own database: {copy:?}");
    assert_eq!(world.node.database.count(&format!("SELECT count(*) FROM receipts WHERE id = '{}'", copy[0][0])), 0);
    assert!(copy[0][1].starts_with(&format!("raw/{billing}/")), "{copy:?}");
    assert_eq!(copy[0][2], butler);
    let first_thread = in_object(world, &billing, &format!("SELECT thread_id FROM receipts WHERE id = '{first_copy}'"));
    assert_eq!(copy[0][3], first_thread[0][0], "it joined the first copy's conversation");
    // Its entry is in billing's segment; the delivery's in D1's chain.
    let filed = segment_entries(world, &billing, "butler_effect");
    assert_eq!(filed.len(), 1, "{filed:?}");
    assert!(
        world
            .audit_of(None)
            .iter()
            .any(|entry| entry["action"] == "receive_mail" && entry["object"] == follow_up.as_str())
    );
    let walked = ok(world.admin("GET", &format!("/api/audit/verify?mailbox_id={billing}"), None));
    assert_eq!(walked["intact"], true, "{walked}");
    let shown = ok(world.admin("GET", &format!("/api/mailboxes/{billing}/threads/{}", copy[0][3]), None));
    assert_eq!(shown["entries"].as_array().unwrap().len(), 2, "{shown}");
}

/// A mailbox's database in which another delivery of the same message
/// commits just before this one's: the first batch that stores a receipt is
/// run first with its receipt's id replaced by `rival`'s (less its entry,
/// whose seal covers the id), then as sent.
struct AnotherDeliveryFirst<'a> {
    mailboxes: &'a mailroom::testing::SqliteMailboxes,
    rival: &'a str,
    done: std::rc::Rc<std::cell::Cell<bool>>,
}

impl mailroom::core::mailbox_storage::MailboxStorage for AnotherDeliveryFirst<'_> {
    fn of(&self, mailbox_id: &str) -> std::rc::Rc<dyn mailroom::core::storage::Database> {
        let database = self.mailboxes.of(mailbox_id);
        std::rc::Rc::new(RivalFirst { database, rival: self.rival.to_string(), done: self.done.clone() })
    }

    fn if_created(&self, mailbox_id: &str) -> std::rc::Rc<dyn mailroom::core::storage::Database> {
        self.mailboxes.if_created(mailbox_id)
    }
}

struct RivalFirst {
    database: std::rc::Rc<dyn mailroom::core::storage::Database>,
    rival: String,
    done: std::rc::Rc<std::cell::Cell<bool>>,
}

impl mailroom::core::storage::Database for RivalFirst {
    fn execute(
        &self,
        statements: Vec<mailroom::core::storage::Statement>,
    ) -> futures_util::future::LocalBoxFuture<
        '_,
        Result<Vec<mailroom::core::storage::QueryResult>, mailroom::core::storage::StorageError>,
    > {
        use mailroom::core::storage::Value;
        Box::pin(async move {
            let stores = statements.first().filter(|first| first.sql.starts_with("INSERT INTO receipts"));
            if let (Some(insert), false) = (stores, self.done.get()) {
                self.done.set(true);
                let Value::Text(receipt_id) = insert.parameters[0].clone() else { panic!("a receipt's id first") };
                let rival: Vec<_> = statements
                    .iter()
                    .filter(|statement| !statement.sql.contains("audit_entries"))
                    .map(|statement| mailroom::core::storage::Statement {
                        sql: statement.sql.clone(),
                        parameters: statement
                            .parameters
                            .iter()
                            .map(|value| match value {
                                Value::Text(text) => Value::Text(text.replace(&receipt_id, &self.rival)),
                                other => other.clone(),
                            })
                            .collect(),
                    })
                    .collect();
                self.database.execute(rival).await?;
            }
            self.database.execute(statements).await
        })
    }
}

#[test]
fn the_same_message_delivered_twice_at_once_to_a_moved_mailbox_is_stored_once() {
    let office = office_in_d1();
    let (world, support) = (&office.world, office.mailbox.clone());
    deliver(world, "Invoice 2", "inv2@customer.example");
    moved(world, &support);
    let rival = "rcp_01M7RIVA1DE1IVERY0000000000";
    let mailboxes = AnotherDeliveryFirst { mailboxes: &world.node.mailboxes, rival, done: Default::default() };
    let node = mailroom::core::node::Node { mailboxes: &mailboxes, ..world.node_over(&world.node.database) };
    let raw = format!(
        "From: Ana <ana@customer.example>\r\nTo: Support <{SUPPORT}>\r\nSubject: Re: Invoice 2\r\n\
         Message-ID: <inv2b@customer.example>\r\nIn-Reply-To: <inv2@customer.example>\r\n\
         Date: Mon, 16 Nov 2026 10:00:00 +0000\r\n\r\nThe same, twice.\r\n"
    );
    let received = world.node.run(mailroom::mail::receive(&node, "ana@customer.example", SUPPORT, raw.as_bytes()));
    assert!(mailboxes.done.get(), "the other delivery committed first");
    let received = received.expect("accepted");
    assert_eq!(received.delivery, Delivery::Duplicate { receipt_id: rival.to_string() });
    assert_eq!(received.segments, vec![support.clone()]);
    let stored = in_object(world, &support, "SELECT id FROM receipts WHERE message_id = 'inv2b@customer.example'");
    assert_eq!(stored, vec![vec![rival.to_string()]], "stored once");
    let recorded = segment_entries(world, &support, "receive_mail");
    assert_eq!(
        recorded.iter().filter(|(object, _)| object == rival).count(),
        1,
        "this one, delivered again (the other's entry left out above): {recorded:?}"
    );
    world.node.seal_segment(&support);
    let walked = ok(world.admin("GET", &format!("/api/audit/verify?mailbox_id={support}"), None));
    assert_eq!(walked["intact"], true, "{walked}");
    // The bytes this try stored for a receipt it did not keep are deleted:
    // every original left under the mailbox's keys is a receipt's.
    let kept: Vec<String> =
        in_object(world, &support, "SELECT raw_key FROM receipts").into_iter().map(|row| row[0].clone()).collect();
    let prefix = format!("raw/{support}/");
    let stored: Vec<String> =
        world.node.blobs.objects.borrow().keys().filter(|key| key.starts_with(&prefix)).cloned().collect();
    assert!(stored.iter().all(|key| kept.contains(key)), "{stored:?} against {kept:?}");
}

#[test]
fn a_dry_run_walks_a_message_delivered_to_a_moved_mailbox_with_what_is_around_it_from_d1() {
    let office = office_in_d1();
    let (world, support, cleo) = (&office.world, office.mailbox.clone(), office.person("cleo"));
    let butler = office.create(json!({
        "conditions": [{ "on": "subject", "contains": "invoice" }],
        "effects": [
            { "do": "assign", "assignee": cleo.id },
            { "do": "draft_reply", "text": "Thanks." }
        ]
    }));
    moved(world, &support);
    let receipt = deliver(world, "Invoice 12", "inv12@customer.example");
    let walk =
        |receipt: &str| ok(world.admin("POST", &format!("{butler}/simulate"), Some(json!({ "receipt_id": receipt }))));
    let run = walk(&receipt);
    assert_eq!(run["matched"], true, "{run}");
    let would: Vec<bool> =
        run["effects"].as_array().unwrap().iter().map(|effect| effect["would_run"].as_bool().unwrap()).collect();
    assert_eq!(would, [true, true], "{run}");

    // What is around it is D1's to say: Cleo no longer works the mailbox, and
    // a message from the mailbox's own address is never answered.
    world.revoke(&cleo.id, "send.propose", &support);
    let own = format!(
        "From: Support <{SUPPORT}>\r\nTo: Support <{SUPPORT}>\r\nSubject: Invoice 13\r\n\
         Message-ID: <inv13@customer.example>\r\nDate: Mon, 16 Nov 2026 09:00:00 +0000\r\n\r\nLooping.\r\n"
    );
    let looping = match world.node.deliver(SUPPORT, SUPPORT, own.as_bytes()) {
        Ok(Delivery::Stored { receipt_id }) => receipt_id,
        other => panic!("{other:?}"),
    };
    let run = walk(&looping);
    let would: Vec<bool> =
        run["effects"].as_array().unwrap().iter().map(|effect| effect["would_run"].as_bool().unwrap()).collect();
    assert_eq!(would, [false, false], "{run}");
    assert_eq!(world.node.database.count(&format!("SELECT count(*) FROM receipts WHERE id = '{looping}'")), 0);
}

#[test]
fn a_copy_a_moved_mailbox_already_holds_is_recorded_as_skipped_there_and_kept_once() {
    let office = office_in_d1();
    let world = &office.world;
    let billing = world.mailbox("billing@mailroom.test");
    forwarding(&office, &billing);
    moved(world, &billing);
    // Ana wrote to billing too: it holds the message before support's copy comes.
    let raw = |to: &str| {
        format!(
            "From: Ana <ana@customer.example>\r\nTo: Support <{SUPPORT}>, Billing <{to}>\r\nSubject: Invoice 7\r\n\
             Message-ID: <inv7@customer.example>\r\nDate: Mon, 16 Nov 2026 09:00:00 +0000\r\n\r\nBoth of you.\r\n"
        )
    };
    let direct = match world.node.deliver(
        "ana@customer.example",
        "billing@mailroom.test",
        raw("billing@mailroom.test").as_bytes(),
    ) {
        Ok(Delivery::Stored { receipt_id }) => receipt_id,
        other => panic!("{other:?}"),
    };
    match world.node.deliver("ana@customer.example", SUPPORT, raw("billing@mailroom.test").as_bytes()) {
        Ok(Delivery::Stored { .. }) => {}
        other => panic!("{other:?}"),
    }
    let held = in_object(world, &billing, "SELECT id FROM receipts WHERE message_id = 'inv7@customer.example'");
    assert_eq!(held, vec![vec![direct]], "billing keeps the one it has");
    let filed = segment_entries(world, &billing, "butler_effect");
    assert_eq!(filed.len(), 1, "{filed:?}");
    assert_eq!(filed[0].1, "skipped");
    let detail = in_object(world, &billing, "SELECT detail FROM audit_entries WHERE action = 'butler_effect'");
    assert!(detail[0][0].contains("already holds this message"), "{detail:?}");
    assert!(!world.node.platform.logs.borrow().iter().any(|line| line.contains("filing")), "nothing failed");
}

#[test]
fn a_moved_mailbox_nearly_full_tells_administrators_and_a_full_one_refuses_its_mail_storing_nothing() {
    let office = office_in_d1();
    let (world, support) = (&office.world, office.mailbox.clone());
    deliver(world, "Invoice 20", "inv20@customer.example");
    moved(world, &support);
    let object = world.node.mailboxes.database(&support).unwrap();
    let limit = mailroom::core::node::DEFAULT_MAILBOX_LIMIT_BYTES;
    let alarms = || {
        let feed = ok(world.admin("GET", "/api/me/notifications", None));
        feed["notifications"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|item| item["kind"] == "database_nearly_full")
            .map(|item| item["title"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    object.database.pretend_size(Some(limit / 100 * 85));
    deliver(world, "Invoice 21", "inv21@customer.example");
    assert_eq!(alarms(), [format!("The mailbox {SUPPORT} is nearly full")]);
    object.database.pretend_size(Some(limit));
    let stored = object.database.count("SELECT count(*) FROM receipts");
    let raw = format!(
        "From: Ana <ana@customer.example>\r\nTo: Support <{SUPPORT}>\r\nSubject: Invoice 22\r\n\
         Message-ID: <inv22@customer.example>\r\nDate: Mon, 16 Nov 2026 09:00:00 +0000\r\n\r\nHello.\r\n"
    );
    let refused = world.node.deliver("ana@customer.example", SUPPORT, raw.as_bytes());
    let rejection = mailroom::mail::Rejection::MailboxFull { address: SUPPORT.to_string() };
    assert_eq!(refused, Err(rejection.clone()));
    assert!(rejection.is_temporary() && rejection.smtp_reason().starts_with("452 4.2.2 "));
    object.database.pretend_size(None);
    assert_eq!(object.database.count("SELECT count(*) FROM receipts"), stored, "nothing stored half");
    let told = alarms();
    assert!(told.contains(&format!("The mailbox {SUPPORT} is full: its inbound mail is refused")), "{told:?}");
    // Another mailbox, and D1, are not full: mail to them is stored.
    assert!(!told.iter().any(|title| title.contains("node's database")), "{told:?}");
}

#[test]
fn a_mailbox_known_to_have_moved_is_asked_its_lookups_beside_d1_s_first_read() {
    let office = office_in_d1();
    let (world, support) = (&office.world, office.mailbox.clone());
    deliver(world, "Invoice 30", "inv30@customer.example");
    moved(world, &support);
    // The first delivery after the move learns from D1 where the mail is.
    deliver(world, "Invoice 31", "inv31@customer.example");
    let object = world.node.mailboxes.database(&support).unwrap();
    world.node.database.take_costs();
    let batches_before = object.database.batches();
    let raw = format!(
        "From: Ana <ana@customer.example>\r\nTo: Support <{SUPPORT}>\r\nSubject: Re: Invoice 31\r\n\
         Message-ID: <inv31b@customer.example>\r\nIn-Reply-To: <inv31@customer.example>\r\n\
         Date: Mon, 16 Nov 2026 10:00:00 +0000\r\n\r\nA follow-up.\r\n"
    );
    let node = world.node.node();
    let received = world.node.run(mailroom::mail::receive(&node, "ana@customer.example", SUPPORT, raw.as_bytes()));
    let receipt = match received.map(|received| received.delivery) {
        Ok(Delivery::Stored { receipt_id }) => receipt_id,
        other => panic!("{other:?}"),
    };
    // D1 was not asked which conversation it joins; the mailbox was, beside
    // D1's first read, then the message committed there: two batches.
    let on_d1: Vec<String> = world.node.database.take_costs().into_iter().map(|cost| cost.sql).collect();
    assert!(on_d1.iter().any(|sql| sql.contains("SELECT id, mail_moved_at FROM mailboxes")), "{on_d1:#?}");
    assert!(!on_d1.iter().any(|sql| sql.contains("mail_thread_message_ids")), "{on_d1:#?}");
    assert_eq!(object.database.batches() - batches_before, 2);
    let threads = in_object(
        world,
        &support,
        &format!(
            "SELECT count(DISTINCT thread_id) FROM receipts WHERE id = '{receipt}' OR message_id = 'inv31@customer.example'"
        ),
    );
    assert_eq!(threads, vec![vec!["1".to_string()]], "it joined its conversation there");
}
