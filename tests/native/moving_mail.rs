//! A mailbox's mail moved out of D1 into its own database (decision 0040,
//! `mail::moving`): a mailbox built through the node's own routes and inbound
//! path, copied a page per call until done, is row for row what D1 holds of
//! it, searchable there with a sound index, verified by count and hash on
//! both sides and audited; a page sent twice, or the job run again, changes
//! nothing; an altered or missing row is found naming its table; and no row
//! of another mailbox is ever copied, whatever ids it was given. The batches a
//! move sends are kept with the twin's answers, for the mailbox objects on
//! workerd to answer alike (`tests/e2e/mailbox-objects.test.mjs`).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

use mailroom::audit::AuditChain;
use mailroom::core::background::Background;
use mailroom::core::mailbox_storage::{MailboxStorage, NEVER_CREATED, WireBatch};
use mailroom::core::node::Node;
use mailroom::core::storage::{Database, LocalBoxFuture, QueryResult, Statement, StorageError};
use mailroom::mail::Delivery;
use mailroom::mail::moving::{
    Key, MOVE_ACTION, MOVED_TABLES, MoveProgress, MoveStage, MovedTable, NOT_MOVED, Owner, SEARCH_INDEXES,
    Verification, advance_move, move_mail, verify_move,
};
use mailroom::testing::RequestExt;
use mailroom::testing::{SqliteDatabase, mail_tables};
use serde_json::{Value, json};

use crate::desk::{Desk, WORKS_AND_DECIDES};
use crate::support::{World, body, text};

const SUPPORT: &str = "support@mailroom.test";
const SALES: &str = "sales@mailroom.test";
/// One page per call: the positions' read, a page's read and its write.
const ONE_PAGE: u32 = 3;
/// Enough for a verification's call to read a page or two and conclude:
/// its first read, a replay's read, a page (both sides), and its save.
const ONE_CHECK: u32 = 6;

/// A message delivered to `to`; its receipt.
pub(crate) fn deliver(world: &World, to: &str, message_id: &str, subject: &str, headers: &str, text: &str) -> String {
    let raw = format!(
        "{headers}From: Ana <ana@customer.example>\r\nTo: <{to}>\r\nSubject: {subject}\r\n\
         Message-ID: <{message_id}>\r\nDate: Mon, 16 Nov 2026 09:00:00 +0000\r\n\r\n{text}\r\n"
    );
    match world.node.deliver("ana@customer.example", to, raw.as_bytes()) {
        Ok(Delivery::Stored { receipt_id }) => receipt_id,
        other => panic!("{message_id}: {other:?}"),
    }
}

pub(crate) fn ok(response: mailroom::core::http::Response) -> Value {
    assert!(response.status < 300, "{}", text(&response));
    serde_json::from_slice(&response.body).unwrap_or(Value::Null)
}

/// Support with mail of every kind, through the node's routes and inbound
/// path: a butler running on every delivery, more messages than a first page
/// holds, a reply threaded into its conversation, labels, a read mark, a
/// note, a draft, and a submitted send with a file. Sales, beside it, has its own.
pub(crate) fn desk_with_mail() -> Desk {
    let desk =
        Desk::in_world(World::with_mail_in_d1(), SUPPORT).and_mailbox(SALES).with("ben@example.com", WORKS_AND_DECIDES);
    let sales = desk.mailbox_at(SALES).to_string();
    let world = &desk.world;
    let ben = desk.person("ben");
    world.grant_all(&ben.id, WORKS_AND_DECIDES, &sales);
    for mailbox in [&desk.mailbox, &sales] {
        let butler = ok(world.admin(
            "POST",
            &format!("/api/mailboxes/{mailbox}/butlers"),
            Some(json!({ "name": "Invoices wait", "sponsor": ben.id, "rules": {
                "conditions": [{ "on": "subject", "contains": "invoice" }],
                "effects": [{ "do": "set_status", "status": "waiting" }] } })),
        ));
        let path = format!("/api/mailboxes/{mailbox}/butlers/{}", butler["id"].as_str().unwrap());
        ok(world.admin("POST", &format!("{path}/publish"), Some(json!({ "version": 1 }))));
    }
    let question = deliver(world, SUPPORT, "q1@customer.example", "Invoice 4471", "", "Where is the zeppelin invoice?");
    deliver(
        world,
        SUPPORT,
        "q2@customer.example",
        "Re: Invoice 4471",
        "In-Reply-To: <q1@customer.example>\r\n",
        "Hello?",
    );
    for n in 0..18 {
        deliver(world, SUPPORT, &format!("m{n}@customer.example"), &format!("Invoice {n}"), "", "Another one.");
    }
    let thread = world.thread_of(&desk.mailbox, &question);
    ok(world.call("PATCH", &thread, Some(&ben.token), Some(json!({ "add_labels": ["vip", "billing"] }))));
    ok(world.call("PUT", &format!("{thread}/read"), Some(&ben.token), None));
    ok(world.call("POST", &format!("{thread}/notes"), Some(&ben.token), Some(json!({ "text": "Billing knows." }))));
    let sends = desk.sends();
    let reply =
        ok(world.call("POST", &sends, Some(&ben.token), Some(json!({ "reply_to": question, "text": "Attached." }))));
    let reply = format!("{sends}/{}", reply["id"].as_str().unwrap());
    ok(world.call(
        "POST",
        &format!("{reply}/attachments"),
        Some(&ben.token),
        Some(json!({ "name": "invoice.pdf", "content_type": "application/pdf",
                     "content_base64": "JVBERi0xLjcgaW52b2ljZSA0NDcx" })),
    ));
    ok(world.call("POST", &format!("{reply}/submit"), Some(&ben.token), None));
    ok(world.call(
        "POST",
        &sends,
        Some(&ben.token),
        Some(json!({ "to": ["bo@customer.example"], "subject": "Hello", "text": "A draft." })),
    ));

    let elsewhere = deliver(world, SALES, "s1@customer.example", "Invoice 9", "", "A zeppelin for sales.");
    let thread = world.thread_of(&sales, &elsewhere);
    ok(world.call("PATCH", &thread, Some(&ben.token), Some(json!({ "add_labels": ["sales"] }))));
    ok(world.call("POST", &format!("{thread}/notes"), Some(&ben.token), Some(json!({ "text": "A sales note." }))));
    ok(world.call("PUT", &format!("{thread}/read"), Some(&ben.token), None));
    desk
}

/// The job's unit of work on `node`, as the schedule will hand it.
pub(crate) fn with_work<T>(world: &World, node: &Node<'_>, job: impl AsyncFnOnce(&Background<'_>) -> T) -> T {
    let chain = AuditChain::new(node.config, node.platform);
    let work = Background::new(node, &chain);
    world.node.run(job(&work))
}

fn move_once(world: &World, mailbox: &str, round_trips: u32) -> MoveProgress {
    let node = world.node.node();
    with_work(world, &node, async |work| move_mail(work, mailbox, round_trips).await).unwrap()
}

/// Moves `mailbox` a page per call until it is finished: the calls it took.
pub(crate) fn move_whole(world: &World, mailbox: &str) -> u32 {
    for call in 1..=200 {
        let progress = move_once(world, mailbox, ONE_PAGE);
        assert!(progress.round_trips <= ONE_PAGE, "{progress:?}");
        assert!(progress.pages <= 1, "{progress:?}");
        if progress.finished {
            return call;
        }
    }
    panic!("the move never finished");
}

/// A step of a move's `job` as the schedule runs it, held to `round_trips`,
/// the chain and segments sealed after it.
fn within<T>(world: &World, round_trips: u32, job: impl AsyncFnOnce(&Background<'_>) -> T) -> T {
    let node = world.node.node();
    let answer = with_work(world, &node, async |work| {
        let answer = job(work).await;
        assert!(work.round_trips() <= round_trips, "{} round trips", work.round_trips());
        answer
    });
    world.node.seal();
    answer
}

pub(crate) fn verify_once(world: &World, mailbox: &str, round_trips: u32) -> Verification {
    within(world, round_trips, async |work| verify_move(work, mailbox, round_trips).await).unwrap()
}

/// Moves `mailbox` whole and verifies the move, so its mail is read and
/// changed in its own database from then on: what a test of a moved
/// mailbox starts from.
pub(crate) fn moved(world: &World, mailbox: &str) {
    let moved_at = format!("SELECT count(*) FROM mailboxes WHERE id = '{mailbox}' AND mail_moved_at IS NOT NULL");
    if world.node.database.count(&moved_at) == 1 {
        // Kept in its own database from the start: nothing to move.
        return;
    }
    move_whole(world, mailbox);
    let verified = verify_whole(world, mailbox);
    assert!(matches!(verified, Verification::Verified { .. }), "{verified:?}");
    let switched = advance(world, mailbox, 50);
    assert!(matches!(switched, MoveStage::Switched { .. }), "{switched:?}");
}

/// A step of `mailbox`'s move, as the upkeep takes it, within `round_trips`.
pub(crate) fn advance(world: &World, mailbox: &str, round_trips: u32) -> MoveStage {
    within(world, round_trips, async |work| advance_move(work, mailbox, round_trips).await).unwrap()
}

/// `mailbox`'s own database holds, table by table, the rows D1 holds of it,
/// and only them, and its search indexes are sound.
pub(crate) fn holds_what_d1_holds(world: &World, mailbox: &str) {
    let moved = object(world, mailbox);
    for table in MOVED_TABLES {
        assert_eq!(
            rows(&moved.database, table, None),
            rows(&world.node.database, table, Some(mailbox)),
            "{} holds {mailbox}'s rows, and only them",
            table.name
        );
    }
    for index in SEARCH_INDEXES {
        moved.database.tamper(&format!("INSERT INTO {index} ({index}) VALUES ('integrity-check')"));
    }
}

/// Verifies `mailbox` a page per call until it concludes.
pub(crate) fn verify_whole(world: &World, mailbox: &str) -> Verification {
    for _ in 0..400 {
        match verify_once(world, mailbox, ONE_CHECK) {
            Verification::Unfinished { pages } => assert!(pages <= 2, "{pages} pages in a call"),
            concluded => return concluded,
        }
    }
    panic!("the verification never concluded");
}

pub(crate) fn object(world: &World, mailbox: &str) -> Rc<mailroom::testing::SqliteMailbox> {
    world.node.mailboxes.database(mailbox).expect("the mailbox has a database")
}

/// `table`'s rows, every column and the rowid of a rowid table, in key
/// order: `mailbox`'s in D1 (chosen here as the schema says, apart from the
/// job's own statements), or every row of a mailbox's database.
pub(crate) fn rows(database: &SqliteDatabase, table: &MovedTable, mailbox: Option<&str>) -> Vec<Vec<String>> {
    let (selected, key) = match table.key {
        Key::Rowid => ("rowid, *", "rowid".to_string()),
        Key::Primary(columns) => ("*", columns.join(", ")),
    };
    let filter = match (mailbox, table.owner) {
        (None, _) => String::new(),
        (Some(mailbox), Owner::Mailbox) => format!("WHERE mailbox_id = '{mailbox}'"),
        (Some(mailbox), Owner::Parent { column, parent }) => {
            format!("WHERE {column} IN (SELECT id FROM {parent} WHERE mailbox_id = '{mailbox}')")
        }
    };
    database.rows(&format!("SELECT {selected} FROM {} {filter} ORDER BY {key}", table.name))
}

fn schema(database: &SqliteDatabase) -> Vec<Vec<String>> {
    database.rows("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name")
}

#[test]
fn the_tables_moved_are_every_table_of_mail_each_keyed_as_its_schema_says_parents_first() {
    let mailbox = SqliteDatabase::for_a_mailbox();
    let mut covered: BTreeSet<String> = MOVED_TABLES.iter().map(|table| table.name.to_string()).collect();
    covered.extend(NOT_MOVED.iter().map(|(name, _)| name.to_string()));
    assert_eq!(NOT_MOVED.iter().map(|(name, _)| *name).collect::<Vec<_>>(), ["deleted_receipts"]);
    for table in mail_tables() {
        let rebuilt = SEARCH_INDEXES.iter().any(|index| table == *index || table.starts_with(&format!("{index}_")));
        assert!(rebuilt || covered.contains(table), "{table} is mail the move neither copies nor explains");
    }
    for (position, table) in MOVED_TABLES.iter().enumerate() {
        assert!(mail_tables().contains(table.name), "{} is a table of mail", table.name);
        let without_rowid = mailbox.count(&format!("SELECT wr FROM pragma_table_list WHERE name = '{}'", table.name));
        let primary_key: Vec<String> = mailbox
            .rows(&format!("SELECT name FROM pragma_table_info('{}') WHERE pk > 0 ORDER BY pk", table.name))
            .concat();
        match table.key {
            Key::Rowid => assert_eq!(without_rowid, 0, "{} has a rowid", table.name),
            Key::Primary(columns) => {
                assert_eq!(without_rowid, 1, "{} is WITHOUT ROWID", table.name);
                assert_eq!(primary_key, columns, "{}'s primary key", table.name);
            }
        }
        let earlier = |name: &str| MOVED_TABLES[..position].iter().any(|before| before.name == name);
        if let Owner::Parent { parent, .. } = table.owner {
            assert!(earlier(parent), "{} is moved after its parent {parent}", table.name);
        }
        let owner_column = match table.owner {
            Owner::Mailbox => "mailbox_id",
            Owner::Parent { column, .. } => column,
        };
        let columns = mailbox.column_names(table.name);
        assert!(columns.iter().any(|column| column == owner_column), "{} has {owner_column}", table.name);
        for referenced in mailbox.rows(&format!("SELECT \"table\" FROM pragma_foreign_key_list('{}')", table.name)) {
            assert!(earlier(&referenced[0]), "{} is moved after {} it references", table.name, referenced[0]);
        }
    }
}

#[test]
fn a_mailbox_moved_a_page_at_a_time_is_row_for_row_what_d1_holds_of_it_searchable_verified_and_audited() {
    let desk = desk_with_mail();
    let (world, support) = (&desk.world, desk.mailbox.as_str());
    let sales = desk.mailbox_at(SALES).to_string();
    for table in MOVED_TABLES {
        assert!(!rows(&world.node.database, table, Some(support)).is_empty(), "support has {}", table.name);
    }
    assert_eq!(verify_once(world, support, ONE_CHECK), Verification::CopyUnfinished);

    let calls = move_whole(world, support);
    assert!(calls > MOVED_TABLES.len() as u32, "some tables took more than one page: {calls} calls");
    holds_what_d1_holds(world, support);
    let moved = object(world, support);
    assert!(world.node.mailboxes.database(&sales).is_none(), "sales was not touched");
    // Copied with its rowid, a receipt is where it was in storage order.
    assert_eq!(
        moved.database.rows("SELECT rowid, id FROM receipts ORDER BY rowid"),
        world
            .node
            .database
            .rows(&format!("SELECT rowid, id FROM receipts WHERE mailbox_id = '{support}' ORDER BY rowid"))
    );
    let found = |index: &str, words: &str| {
        moved.database.count(&format!("SELECT count(*) FROM {index} WHERE {index} MATCH '{words}'"))
    };
    assert_eq!(found("receipt_bodies_index", "zeppelin"), 1, "support's message, not sales'");
    assert_eq!(found("receipt_headers_index", "invoice"), 20);
    for index in SEARCH_INDEXES {
        moved.database.tamper(&format!("INSERT INTO {index} ({index}) VALUES ('integrity-check')"));
    }
    let fresh = SqliteDatabase::for_a_mailbox();
    assert_eq!(schema(&moved.database), schema(&fresh), "the trigger lifted for sealed files is back as it was");

    let Verification::Verified { tables, left_to_replay } = verify_whole(world, support) else {
        panic!("not verified")
    };
    assert_eq!(left_to_replay, 0, "nothing changed");
    assert_ne!(world.audit_of(None).pop().unwrap()["action"], MOVE_ACTION, "a verification alone records nothing");
    let MoveStage::Switched { tables: switched } = advance(world, support, 50) else { panic!("not switched") };
    assert_eq!(switched, tables);
    let entry = world.audit_of(None).pop().unwrap();
    assert_eq!((entry["action"].as_str(), entry["object"].as_str()), (Some(MOVE_ACTION), Some(support)));
    assert_eq!(entry["detail"]["tables"], serde_json::to_value(&tables).unwrap());
    let receipts = tables.iter().find(|tally| tally.table == "receipts").unwrap();
    assert_eq!(receipts.rows, 20);
    assert_eq!(world.verify()["intact"], true);
    assert_eq!(moved.database.count("SELECT count(*) FROM mail_move_checks"), 0, "a verification concluded is cleared");
    let d1_rows = world.node.database.count("SELECT count(*) FROM receipts");
    assert_eq!(d1_rows, 21, "nothing is deleted from D1");

    // Done, the job reads the positions, finds nothing to do and changes nothing.
    let before = moved.database.snapshot();
    let again = move_once(world, support, ONE_PAGE);
    assert_eq!(again, MoveProgress { pages: 0, rows: 0, round_trips: 1, finished: true });
    assert_eq!(moved.database.snapshot(), before);
}

/// Every read of a mailbox's conversations and received messages, as
/// `token`'s holder asks: the conversations (filtered three ways) and one of
/// them, with its sends; the messages (whole, and a page and the next), one
/// message, its text, its HTML, its original and its file. Each answer and
/// the round trips it took.
fn message_reads(
    world: &World,
    (mailbox, conversation, with_file): (&str, &str, &str),
    token: &str,
) -> Vec<(String, u16, Value, u32)> {
    let messages = format!("/api/mailboxes/{mailbox}/messages");
    let first_page = ok(world.call("GET", &format!("{messages}?limit=5"), Some(token), None));
    let cursor = first_page["next_cursor"].as_str().expect("more than a page").to_string();
    let message = format!("{messages}/{with_file}");
    let threads = format!("/api/mailboxes/{mailbox}/threads");
    [
        threads.clone(),
        format!("{threads}?label=vip"),
        format!("{threads}?q=zeppelin"),
        format!("{threads}?unread=true&status=waiting&limit=3"),
        conversation.to_string(),
        format!("/api/search?q=zeppelin&mailbox={mailbox}"),
        format!("/api/search?q=invoice&mailbox={mailbox}&limit=4"),
        format!("/api/mailboxes/{mailbox}/sends"),
        messages.clone(),
        format!("{messages}?limit=5"),
        format!("{messages}?limit=5&cursor={cursor}"),
        message.clone(),
        format!("{message}/body"),
        format!("{message}/body?html=true"),
        format!("{message}/original"),
        format!("{message}/attachments/0"),
    ]
    .into_iter()
    .map(|path| {
        let response = world.call("GET", &path, Some(token), None);
        let answer = serde_json::from_slice(&response.body).unwrap_or_else(|_| json!(response.body.len()));
        (path, response.status, answer, response.round_trips)
    })
    .collect()
}

#[test]
fn once_its_move_is_verified_a_mailbox_s_messages_are_read_from_its_own_database_and_answer_as_before() {
    let desk = desk_with_mail();
    let (world, support) = (&desk.world, desk.mailbox.as_str());
    let sales = desk.mailbox_at(SALES).to_string();
    let ben = desk.person("ben");
    let with_file = world.deliver("multipart-attachment", SUPPORT);
    world.grant_all(&ben.id, &["message.export"], support);
    let question = world.node.database.peek("SELECT id FROM receipts WHERE subject = 'Invoice 4471'").unwrap();
    let assigned = json!({ "assignee": ben.id });
    let conversation = world.thread_of(support, &question);
    ok(world.call("PATCH", &conversation, Some(&ben.token), Some(assigned)));
    let reading = (support, conversation.as_str(), with_file.as_str());
    let moved_at = || {
        world.node.database.peek(&format!("SELECT CAST(mail_moved_at AS TEXT) FROM mailboxes WHERE id = '{support}'"))
    };
    let before = message_reads(world, reading, &ben.token);
    // Its own database is asked too, but a read makes none.
    assert!(world.node.mailboxes.database(support).is_none(), "no read creates a mailbox's database");
    // One round trip; two where the read is recorded in the chain (the
    // contract says which).
    // A list of sends, moved, reads their names from D1 after the mailbox.
    let expected = |moved: bool| -> Vec<u32> {
        before
            .iter()
            .map(|(path, ..)| {
                let route = mailroom::dispatch::route_for("GET", path.split('?').next().unwrap()).unwrap();
                let recorded = mailroom_contract::registry().is_audited(route);
                let names_after = moved && path.ends_with("/sends");
                if recorded || names_after { 2 } else { 1 }
            })
            .collect()
    };
    assert!(before.iter().all(|(_, status, ..)| *status == 200), "{before:?}");
    assert_eq!(before.iter().map(|read| read.3).collect::<Vec<_>>(), expected(false));

    move_whole(world, support);
    assert_eq!(moved_at(), None, "a copy not yet verified is not read");
    assert_eq!(message_reads(world, reading, &ben.token), before);
    assert!(matches!(verify_whole(world, support), Verification::Verified { .. }));
    assert_eq!(moved_at(), None, "a verification alone moves nothing");
    assert!(matches!(advance(world, support, 50), MoveStage::Switched { .. }));
    assert!(moved_at().is_some(), "the switch moved the mailbox's reads");

    // The same answers, each from the mailbox's own database, asked beside
    // the checks on D1: the same round trips as before.
    let asked_before = world.node.mailboxes.batches();
    let after = message_reads(world, reading, &ben.token);
    let answers = |reads: &[(String, u16, Value, u32)]| {
        reads.iter().map(|(path, status, answer, _)| (path.clone(), *status, answer.clone())).collect::<Vec<_>>()
    };
    assert_eq!(answers(&after), answers(&before));
    assert_eq!(after.iter().map(|read| read.3).collect::<Vec<_>>(), expected(true));
    assert_eq!(
        world.node.mailboxes.batches() - asked_before,
        after.len() as u32 + 1,
        "one batch each, and the first page's for the cursor"
    );
    let shown = &after[4].2;
    let found = &after[5].2["results"];
    assert!(found[0]["snippet"].as_str().is_some_and(|snippet| snippet.contains("[zeppelin]")), "{found}");
    assert_eq!(shown["labels"], json!(["billing", "vip"]), "{shown}");
    assert_eq!((shown["assignee"].as_str(), shown["assignee_name"].as_str()), (Some(ben.id.as_str()), Some("ben")));
    let entries = shown["entries"].as_array().unwrap();
    let sent: Vec<&Value> = entries.iter().filter(|entry| entry["kind"] == "sent").collect();
    assert_eq!(sent.len(), 1, "the submitted reply; the other draft is not in it: {shown}");
    assert_eq!(sent[0]["sent"]["author_name"], "ben");
    assert_eq!(sent[0]["sent"]["mailbox_address"], SUPPORT);

    // What D1 still holds of it is read by nothing; what its own database
    // holds is what is answered.
    world
        .node
        .database
        .tamper(&format!("UPDATE receipts SET subject = 'Changed in D1' WHERE mailbox_id = '{support}'"));
    world.node.database.tamper(&format!("DELETE FROM receipts WHERE id = '{with_file}'"));
    world.node.database.tamper(&format!("UPDATE sends SET subject = 'Changed in D1' WHERE mailbox_id = '{support}'"));
    assert_eq!(answers(&message_reads(world, reading, &ben.token)), answers(&before));
    object(world, support)
        .database
        .tamper(&format!("UPDATE receipts SET subject = 'Changed in its own database' WHERE id = '{with_file}'"));
    let message =
        ok(world.call("GET", &format!("/api/mailboxes/{support}/messages/{with_file}"), Some(&ben.token), None));
    assert_eq!(message["subject"], "Changed in its own database");

    // Sales, not moved, is read from D1 in one round trip.
    let listed = world.call("GET", &format!("/api/mailboxes/{sales}/messages"), Some(&ben.token), None);
    assert_eq!((listed.status, listed.round_trips), (200, 1));
    assert_eq!(body(&listed)["messages"][0]["subject"], "Invoice 9");

    // A change that follows the mail (marking a conversation unread, then
    // read) commits in the mailbox's own database with its entry in the
    // mailbox's segment of the chain, in the same round trips, and D1's copy
    // is left as it was.
    let object = object(world, support);
    let reads_in = |database: &SqliteDatabase| {
        database.count(&format!("SELECT count(*) FROM mail_thread_reads WHERE reader = '{}'", ben.id))
    };
    let d1_reads = reads_in(&world.node.database);
    let unread = world.call("DELETE", &format!("{conversation}/read"), Some(&ben.token), None);
    assert_eq!((unread.status, unread.round_trips), (200, 2), "{}", text(&unread));
    assert_eq!((body(&unread)["unread"].as_bool(), body(&unread)["assignee_name"].as_str()), (Some(true), Some("ben")));
    assert_eq!((reads_in(&object.database), reads_in(&world.node.database)), (0, d1_reads));
    let listed =
        ok(world.call("GET", &format!("/api/mailboxes/{support}/threads?unread=true"), Some(&ben.token), None));
    assert!(
        listed["threads"]
            .as_array()
            .unwrap()
            .iter()
            .any(|thread| conversation.ends_with(thread["id"].as_str().unwrap()))
    );
    let read = ok(world.call("PUT", &format!("{conversation}/read"), Some(&ben.token), None));
    assert_eq!(read["unread"], false);
    assert_eq!(reads_in(&object.database), 1);
    let segment = object.database.rows("SELECT action, actor FROM audit_entries ORDER BY seq");
    assert_eq!(segment, [["mark_thread_unread", ben.id.as_str()], ["mark_thread_read", ben.id.as_str()]]);

    // So does a conversation's change; the person it is now assigned to hears
    // of it once it has committed, in D1, where the feed is.
    let (cy, cy_token) = world.person("cy@example.com");
    world.grant_all(&cy, &["mailbox.metadata.read", "send.propose"], support);
    let change = json!({ "status": "closed", "assignee": cy, "add_labels": ["done"], "remove_labels": ["billing"] });
    let changed = world.call("PATCH", &conversation, Some(&ben.token), Some(change));
    assert_eq!((changed.status, changed.round_trips), (200, 2), "{}", text(&changed));
    let changed = body(&changed);
    assert_eq!((changed["status"].as_str(), changed["assignee_name"].as_str()), (Some("closed"), Some("cy")));
    assert_eq!(changed["labels"], json!(["done", "vip"]));
    let thread_id = conversation.rsplit('/').next().unwrap();
    let state = format!("SELECT status, assignee FROM mail_threads WHERE id = '{thread_id}'");
    assert_eq!(object.database.rows(&state), [["closed", cy.as_str()]]);
    assert_eq!(world.node.database.rows(&state), [["waiting", ben.id.as_str()]], "D1's copy is left as it was");
    let labels = format!("SELECT label FROM thread_labels WHERE thread_id = '{thread_id}' ORDER BY label");
    assert_eq!(object.database.rows(&labels), [["done"], ["vip"]]);
    let told: Vec<Value> = crate::butlers::feed(world, &cy_token);
    assert_eq!(
        told.iter().map(|notice| notice["kind"].as_str().unwrap()).collect::<Vec<_>>(),
        ["conversation_assigned"]
    );

    let segment = object.database.rows("SELECT action FROM audit_entries ORDER BY seq");
    assert_eq!(segment, [["mark_thread_unread"], ["mark_thread_read"], ["update_thread"]]);
    world.node.maintain();
    let walked = body(&world.admin("GET", &format!("/api/audit/verify?mailbox_id={support}"), None));
    assert_eq!((walked["intact"].clone(), walked["checked"].clone()), (json!(true), json!(3)), "{walked}");

    // A relation revoked stops the next call: the mailbox's answer is not
    // handed over.
    assert_eq!(world.revoke(&ben.id, "mailbox.content.read", support).status, 200);
    let refused =
        world.call("GET", &format!("/api/mailboxes/{support}/messages/{with_file}/body"), Some(&ben.token), None);
    assert_eq!(refused.status, 403, "{}", text(&refused));
    assert!(!text(&refused).contains("contract"), "{}", text(&refused));
    // Its search, in its own database, now walks the headers only.
    let search =
        |q: &str| ok(world.call("GET", &format!("/api/search?q={q}&mailbox={support}"), Some(&ben.token), None));
    assert_eq!(search("zeppelin")["results"], json!([]), "the word is only in a body");
    let headers = search("invoice")["results"].as_array().unwrap().clone();
    assert!(!headers.is_empty());
    assert!(headers.iter().all(|hit| hit["matched_in"] == "headers" && hit["snippet"].is_null()), "{headers:?}");
    assert_eq!(world.revoke(&ben.id, "mailbox.metadata.read", support).status, 200);
    let refused = world.call("GET", &format!("/api/mailboxes/{support}/messages"), Some(&ben.token), None);
    assert_eq!(refused.status, 403, "{}", text(&refused));
    assert!(!text(&refused).contains("Invoice"), "{}", text(&refused));
    assert_eq!(world.verify()["intact"], true);
}

#[test]
fn a_page_sent_twice_rolls_back_whole_and_a_move_resumes_where_the_mailbox_says() {
    let desk = desk_with_mail();
    let (world, support) = (&desk.world, desk.mailbox.as_str());
    let answering = Answering { inner: &world.node.mailboxes, kept: Rc::default() };
    let node = Node { mailboxes: &answering, ..world.node.node() };
    let progress = with_work(world, &node, async |work| move_mail(work, support, ONE_PAGE).await).unwrap();
    assert_eq!((progress.pages, progress.rows, progress.finished), (1, 16, false), "{progress:?}");
    let moved = object(world, support);
    let before = moved.database.snapshot();
    let page = answering.last_batch();
    let replayed = world.node.run(world.node.mailboxes.of(support).execute(page));
    assert_eq!(replayed.unwrap_err(), StorageError::Check("write_guard_1".into()));
    assert_eq!(moved.database.snapshot(), before, "nothing of the page sent again stayed");
    assert_eq!(moved.database.count("SELECT count(*) FROM receipt_bodies_index_docsize"), 16, "indexed once");

    // A lost answer is a page the next call finds written: it goes on after it.
    let next = move_once(world, support, ONE_PAGE);
    assert_eq!((next.pages, next.rows), (1, 4), "the receipts after the first sixteen");
    move_whole(world, support);
    assert!(matches!(verify_whole(world, support), Verification::Verified { .. }));
}

#[test]
fn a_row_altered_or_missing_in_the_mailbox_is_found_naming_its_table_and_not_audited() {
    let desk = desk_with_mail();
    let (world, support) = (&desk.world, desk.mailbox.as_str());
    move_whole(world, support);
    let moved = object(world, support);
    let audited = || world.audit().iter().filter(|entry| entry["action"] == MOVE_ACTION).count();
    moved.database.tamper("UPDATE thread_labels SET label = 'paid' WHERE label = 'vip'");
    let Verification::Differs { tables } = verify_whole(world, support) else { panic!() };
    assert_eq!(tables, ["thread_labels"]);

    moved.database.tamper("UPDATE thread_labels SET label = 'vip' WHERE label = 'paid'; DELETE FROM mail_thread_reads");
    let Verification::Differs { tables, .. } = verify_whole(world, support) else { panic!() };
    assert_eq!(tables, ["mail_thread_reads"]);
    moved.database.tamper("UPDATE receipts SET subject = 'Invoice 0 (paid)' WHERE subject = 'Invoice 0'");
    let Verification::Differs { tables, .. } = verify_whole(world, support) else { panic!() };
    assert_eq!(tables, ["receipts", "mail_thread_reads"]);
    assert_eq!(audited(), 0, "a verification that fails is not recorded as a move");
}

/// The attacker's view: rows in D1 that point at another mailbox's mail (a
/// label, a read mark and a butler run on sales' conversation and receipt, a
/// version of sales' send) are never copied into support's database.
#[test]
fn no_row_of_another_mailbox_is_copied_whatever_ids_it_was_given() {
    let desk = desk_with_mail();
    let (world, support) = (&desk.world, desk.mailbox.as_str());
    let sales = desk.mailbox_at(SALES).to_string();
    let peek = |sql: &str| world.node.database.peek(sql).unwrap();
    let sales_thread = peek(&format!("SELECT id FROM mail_threads WHERE mailbox_id = '{sales}'"));
    let sales_receipt = peek(&format!("SELECT id FROM receipts WHERE mailbox_id = '{sales}'"));
    let support_butler = peek(&format!(
        "SELECT butler_id FROM butler_runs WHERE receipt_id IN (SELECT id FROM receipts WHERE mailbox_id = '{support}')"
    ));
    let (ben, reader) = (desk.person("ben").id.clone(), world.admin_id.clone());
    world.node.database.tamper(&format!(
        "INSERT INTO thread_labels (thread_id, label) VALUES ('{sales_thread}', 'from-support');
         INSERT INTO mail_thread_reads (thread_id, reader, read_up_to) VALUES ('{sales_thread}', '{reader}', 1);
         INSERT INTO butler_runs (butler_id, receipt_id, version, at, matched, outcome_json)
             VALUES ('{support_butler}', '{sales_receipt}', 1, 1, 1, '{{}}');
         INSERT INTO sends (id, mailbox_id, author, state, to_json, cc_json, subject, text, references_json,
             created_at, updated_at) VALUES ('snd_sales', '{sales}', '{ben}', 'draft', '[]', '[]', 's', 't', '[]', 1, 1);
         INSERT INTO send_versions (send_id, version, submission_json, submitted_at) VALUES ('snd_sales', 'v', '{{}}', 1);"
    ));
    move_whole(world, support);
    let moved = object(world, support);
    for table in MOVED_TABLES {
        for row in rows(&moved.database, table, None) {
            for foreign in [&sales, &sales_thread, &sales_receipt, &"snd_sales".to_string()] {
                assert!(!row.contains(foreign), "{} copied a row of sales': {row:?}", table.name);
            }
        }
    }
    assert!(matches!(verify_whole(world, support), Verification::Verified { .. }));
}

/// A page read from D1 costs the same however far into the mailbox it is:
/// a key led by the mailbox's column is compared without it, so SQLite seeks
/// where the page starts instead of walking the mailbox's rows from the first.
#[test]
fn a_page_costs_the_same_however_far_into_the_mailbox_it_starts() {
    let world = World::with_mail_in_d1();
    let (support, sales) = (world.mailbox(SUPPORT), world.mailbox(SALES));
    for mailbox in [&support, &sales] {
        world.node.database.tamper(&format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 900)
             INSERT INTO mail_thread_message_ids (mailbox_id, message_id, thread_id)
             SELECT '{mailbox}', printf('m%04d@customer.example', i), 'thr_' || i FROM n"
        ));
    }
    world.node.database.take_costs();
    let progress = move_once(&world, &support, 50);
    assert_eq!((progress.rows, progress.finished), (900, true), "{progress:?}");
    let steps: Vec<i32> = world
        .node
        .database
        .take_costs()
        .into_iter()
        .filter(|cost| cost.sql.contains("FROM mail_thread_message_ids"))
        .map(|cost| cost.steps)
        .collect();
    assert!(steps.len() >= 5, "{steps:?}");
    let full_pages = &steps[1..steps.len() - 1];
    assert!(full_pages.iter().all(|steps| *steps == full_pages[0]), "each full page costs the same: {steps:?}");
}

/// Where the batches a move sends are kept for the end-to-end tests, which
/// send them to real mailbox objects on workerd and expect the answers the
/// native twin gave (`tests/e2e/mailbox-objects.test.mjs`): the statements
/// `mail::moving` writes, not a copy of them written by hand.
const RECORDED_FOR_WORKERD: &str = "target/e2e-inputs/mailbox-move.json";

/// A mailbox's storage that keeps every batch sent to a mailbox's database
/// and what it answered, in the wire's form.
struct Answering<'a> {
    inner: &'a dyn MailboxStorage,
    kept: Rc<RefCell<Vec<Value>>>,
}

impl Answering<'_> {
    /// The statements of the last batch kept, to send again.
    fn last_batch(&self) -> Vec<Statement> {
        let batch = self.kept.borrow().last().expect("a batch was sent")["batch"].clone();
        serde_json::from_value::<WireBatch>(batch).unwrap().into_statements().unwrap()
    }
}

struct AnsweringDatabase {
    mailbox_id: String,
    inner: Rc<dyn Database>,
    kept: Rc<RefCell<Vec<Value>>>,
    /// Its batches ask only a database that was created before.
    only_if_created: bool,
}

impl MailboxStorage for Answering<'_> {
    fn of(&self, mailbox_id: &str) -> Rc<dyn Database> {
        Rc::new(AnsweringDatabase {
            mailbox_id: mailbox_id.to_string(),
            inner: self.inner.of(mailbox_id),
            kept: Rc::clone(&self.kept),
            only_if_created: false,
        })
    }

    fn if_created(&self, mailbox_id: &str) -> Rc<dyn Database> {
        Rc::new(AnsweringDatabase {
            mailbox_id: mailbox_id.to_string(),
            inner: self.inner.if_created(mailbox_id),
            kept: Rc::clone(&self.kept),
            only_if_created: true,
        })
    }
}

impl Database for AnsweringDatabase {
    fn execute(&self, statements: Vec<Statement>) -> LocalBoxFuture<'_, Result<Vec<QueryResult>, StorageError>> {
        Box::pin(async move {
            let batch = match self.only_if_created {
                true => WireBatch::if_created(&statements),
                false => WireBatch::of(&statements),
            };
            let batch = serde_json::to_value(batch).unwrap();
            let answered = self.inner.execute(statements).await;
            let answer = match &answered {
                Ok(results) => json!({
                    "outcome": "committed",
                    "results": results
                        .iter()
                        .map(|result| json!({ "rows": result.rows.iter().map(|row| &row.0).collect::<Vec<_>>(), "changes": result.changes }))
                        .collect::<Vec<_>>(),
                }),
                Err(StorageError::Check(constraint)) => json!({ "outcome": "rolled_back", "constraint": constraint }),
                Err(StorageError::Backend(message)) if message == NEVER_CREATED => {
                    json!({ "outcome": "never_created" })
                }
                Err(other) => panic!("a batch failed natively: {other}"),
            };
            self.kept.borrow_mut().push(json!({ "mailbox": self.mailbox_id, "batch": batch, "answer": answer }));
            answered
        })
    }
}

/// A whole move, a page of it sent twice, its verification, and then the
/// routes that follow the mail as a person calls them (reads beside D1, the
/// changes with their entries in the segment, another mailbox asked before
/// it has a database), each batch kept with the twin's answer for the
/// objects on workerd to be held to.
#[test]
fn the_batches_of_a_move_and_of_the_routes_after_it_are_kept_for_the_objects_on_workerd() {
    let desk = desk_with_mail();
    let (world, support) = (&desk.world, desk.mailbox.as_str());
    let sales = desk.mailbox_at(SALES).to_string();
    let ben = desk.person("ben");
    let answering = Answering { inner: &world.node.mailboxes, kept: Rc::default() };
    let node = Node { mailboxes: &answering, ..world.node.node() };
    let first = with_work(world, &node, async |work| move_mail(work, support, ONE_PAGE).await).unwrap();
    assert_eq!(first.pages, 1);
    // The page sent again, as a retry after a lost answer would: refused whole.
    assert!(world.node.run(answering.of(support).execute(answering.last_batch())).is_err());
    loop {
        let progress = with_work(world, &node, async |work| move_mail(work, support, 50).await).unwrap();
        if progress.finished {
            break;
        }
    }
    let switched = with_work(world, &node, async |work| advance_move(work, support, 50).await).unwrap();
    assert!(matches!(switched, MoveStage::Switched { .. }), "{switched:?}");

    let question = world.node.database.peek("SELECT id FROM receipts WHERE subject = 'Invoice 4471'").unwrap();
    let conversation = world.thread_of(support, &question);
    let receipt = world.node.database.peek(&format!("SELECT id FROM receipts WHERE mailbox_id = '{support}' LIMIT 1"));
    let calls = [
        ("GET", format!("/api/mailboxes/{support}/messages?limit=5"), None),
        ("GET", format!("/api/mailboxes/{support}/messages/{}/body", receipt.unwrap()), None),
        ("GET", format!("/api/mailboxes/{support}/threads?unread=true"), None),
        ("GET", conversation.clone(), None),
        ("GET", format!("/api/search?q=zeppelin&mailbox={support}"), None),
        ("GET", format!("/api/mailboxes/{support}/sends"), None),
        ("DELETE", format!("{conversation}/read"), None),
        ("PATCH", conversation.clone(), Some(json!({ "status": "closed", "add_labels": ["done"] }))),
        ("GET", format!("/api/mailboxes/{sales}/messages"), None),
    ];
    for (method, path, payload) in calls {
        let mut request = mailroom::testing::request(method, &path).bearer(&ben.token);
        if let Some(payload) = payload {
            request = request.json(payload);
        }
        let response =
            world.node.run(mailroom::dispatch::dispatch(&node, &request, mailroom::core::http::Surface::Rest));
        assert!(response.status < 300, "{method} {path}: {}", text(&response));
    }
    let kept = answering.kept.take();
    let asked = |outcome: &str| kept.iter().filter(|batch| batch["answer"]["outcome"] == outcome).count();
    assert_eq!(asked("never_created"), 1, "sales, asked beside D1, has no database");
    assert!(kept.iter().filter(|batch| batch["batch"]["only_if_created"] == true).count() >= 7);
    assert!(kept.iter().any(|batch| batch["answer"]["outcome"] == "rolled_back"));
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(RECORDED_FOR_WORKERD);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, serde_json::to_string(&kept).unwrap()).unwrap();
}
