//! A mailbox's mail moved out of D1 while it keeps changing (decision 0040,
//! migration 0035, `mail::moving`): D1's triggers note every write to a
//! moving mailbox's mail and are derived from the tables the move copies; a
//! mailbox that receives mail, is worked and answered at every step of its
//! move ends row for row what D1 holds of it; a write decided by a read made
//! before the switch is refused by D1 and handled again where the mail went;
//! a replay sent twice rolls back whole; a row altered in the mailbox's
//! database is found unless a write to it is noted, and then replaced by
//! D1's; and the schedule moves every mailbox, one at a time, only when
//! switched on.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use mailroom::core::mailbox_storage::MailboxStorage;
use mailroom::core::node::Node;
use mailroom::core::storage::{Database, LocalBoxFuture, QueryResult, Statement, StorageError};
use mailroom::mail::Delivery;
use mailroom::mail::moving::{
    COPY_REMOVED_ACTION, Key, MOVE_ACTION, MOVED_TABLES, MoveStage, MovedTable, Owner, SEARCH_INDEXES, Verification,
    advance_move,
};
use mailroom::testing::{RequestExt, SqliteDatabase};
use serde_json::json;

use crate::desk::{Desk, WORKS_AND_DECIDES};
use crate::moving_mail::{
    advance, deliver, desk_with_mail, holds_what_d1_holds, move_whole, object, ok, rows, verify_whole, with_work,
};
use crate::support::{World, text};

const SUPPORT: &str = "support@mailroom.test";
/// The fewest round trips a step can switch in.
const SMALLEST_STEP: u32 = mailroom::mail::moving::FEWEST_TO_SWITCH;

/// The trigger D1 runs after `event` on `table` (migration 0035), as the
/// table's key and owner say it must be written.
fn expected_trigger(table: &MovedTable, event: &str) -> String {
    let row = if event == "DELETE" { "OLD" } else { "NEW" };
    let mailbox = |row: &str| match table.owner {
        Owner::Mailbox => format!("{row}.mailbox_id"),
        Owner::Parent { column, parent } => format!("(SELECT mailbox_id FROM {parent} WHERE id = {row}.{column})"),
    };
    let key = |row: &str| match table.key {
        Key::Rowid => format!("json_array({row}.rowid)"),
        Key::Primary(columns) => {
            format!(
                "json_array({})",
                columns.iter().map(|column| format!("{row}.{column}")).collect::<Vec<_>>().join(", ")
            )
        }
    };
    let name = table.name;
    let (m, k) = (mailbox(row), key(row));
    let mut sql = format!(
        "CREATE TRIGGER {name}_{}_while_moving AFTER {event} ON {name} \
         WHEN EXISTS (SELECT 1 FROM mailboxes WHERE id = {m} AND (mail_moving_since IS NOT NULL OR mail_moved_at IS NOT NULL)) \
         BEGIN SELECT RAISE(ABORT, 'refused:mail_moved') FROM mailboxes WHERE id = {m} AND mail_moved_at IS NOT NULL \
         AND NOT EXISTS (SELECT 1 FROM mail_emptying WHERE mailbox_id = mailboxes.id); \
         INSERT INTO mail_changes (mailbox_id, table_name, key, seq) SELECT id, '{name}', {k}, 1 FROM mailboxes \
         WHERE id = {m} AND mail_moved_at IS NULL ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;",
        event.to_lowercase()
    );
    if event == "UPDATE" {
        let (old_m, old_k) = (mailbox("OLD"), key("OLD"));
        sql.push_str(&format!(
            " INSERT INTO mail_changes (mailbox_id, table_name, key, seq) SELECT id, '{name}', {old_k}, 1 FROM mailboxes \
             WHERE id = {old_m} AND mail_moved_at IS NULL AND {old_k} IS NOT {k} \
             ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;"
        ));
    }
    if event == "DELETE" {
        for (child, column) in table.children() {
            let child_key = match child.key {
                Key::Rowid => "json_array(c.rowid)".to_string(),
                Key::Primary(columns) => format!(
                    "json_array({})",
                    columns.iter().map(|column| format!("c.{column}")).collect::<Vec<_>>().join(", ")
                ),
            };
            sql.push_str(&format!(
                " INSERT INTO mail_changes (mailbox_id, table_name, key, seq) SELECT m.id, '{}', {child_key}, 1 \
                 FROM mailboxes m JOIN {} c ON c.{column} = OLD.id WHERE m.id = {m} AND m.mail_moved_at IS NULL \
                 ON CONFLICT (mailbox_id, table_name, key) DO UPDATE SET seq = seq + 1;",
                child.name, child.name
            ));
        }
    }
    sql.push_str(" END");
    sql
}

fn folded(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ").replace("( ", "(").replace(" )", ")")
}

#[test]
fn d1_notes_writes_to_a_moving_mailbox_by_triggers_derived_from_the_tables_the_move_copies() {
    let d1 = SqliteDatabase::migrated();
    let triggers = d1
        .rows("SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND name LIKE '%!_while!_moving' ESCAPE '!'");
    assert_eq!(triggers.len(), MOVED_TABLES.len() * 3, "three for each table moved, and no other");
    for table in MOVED_TABLES {
        for event in ["INSERT", "UPDATE", "DELETE"] {
            let expected = expected_trigger(table, event);
            let name = format!("{}_{}_while_moving", table.name, event.to_lowercase());
            let found = triggers.iter().find(|trigger| trigger[0] == name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(folded(&found[1]), folded(&expected), "{name}");
        }
    }

    // Support's move begins: its writes are noted from then on, sales' not.
    let desk = desk_with_mail();
    let (world, support) = (&desk.world, desk.mailbox.as_str());
    assert!(matches!(advance(world, support, 2), MoveStage::Copying(_)), "begun, nothing copied yet");
    assert_eq!(world.node.database.count("SELECT count(*) FROM mail_changes"), 0);
    deliver(
        world,
        SUPPORT,
        "new@customer.example",
        "Re: Invoice 4471",
        "In-Reply-To: <q1@customer.example>\r\n",
        "Me again.",
    );
    deliver(world, "sales@mailroom.test", "s2@customer.example", "Hello sales", "", "Not moving.");
    let noted = world.node.database.rows("SELECT mailbox_id, table_name, seq FROM mail_changes ORDER BY table_name");
    let tables: Vec<&str> = noted.iter().map(|note| note[1].as_str()).collect();
    assert!(noted.iter().all(|note| note[0] == support), "{noted:?}");
    for table in ["receipts", "mail_threads", "mail_thread_message_ids", "butler_runs"] {
        assert!(tables.contains(&table), "{table} noted: {tables:?}");
    }
}

/// Changes support's mail as its people and its senders do, a different
/// change at each `step`.
struct Busy<'a> {
    desk: &'a Desk,
    question_thread: String,
    deleted: Cell<usize>,
    drafts: RefCell<Vec<String>>,
}

impl Busy<'_> {
    fn change(&self, step: usize) {
        let world = &self.desk.world;
        let ben = &self.desk.person("ben").token;
        let support = &self.desk.mailbox;
        let sends = self.desk.sends();
        match step % 8 {
            0 => {
                deliver(
                    world,
                    SUPPORT,
                    &format!("new{step}@customer.example"),
                    &format!("Order {step}"),
                    "",
                    "Shipped?",
                );
            }
            1 => {
                let headers = "In-Reply-To: <q1@customer.example>\r\n";
                deliver(
                    world,
                    SUPPORT,
                    &format!("re{step}@customer.example"),
                    "Re: Invoice 4471",
                    headers,
                    "Still here.",
                );
            }
            2 => {
                // Snoozed and woken by hand in turn (decision 0048): the snooze is the conversation's own row.
                let now = mailroom::core::platform::Platform::now_ms(&world.node.platform);
                let snoozed_until =
                    if step % 16 == 2 { mailroom::core::time::rfc3339(now + 86_400_000) } else { String::new() };
                let labels = json!({ "add_labels": [format!("l{}", step % 7)], "remove_labels": [format!("l{}", (step + 3) % 7), "vip"], "snoozed_until": snoozed_until });
                ok(world.call("PATCH", &self.question_thread, Some(ben), Some(labels)));
            }
            3 => {
                let method = if step % 16 == 3 { "DELETE" } else { "PUT" };
                ok(world.call(method, &format!("{}/read", self.question_thread), Some(ben), None));
            }
            4 => {
                let draft =
                    json!({ "to": ["bo@customer.example"], "subject": format!("Draft {step}"), "text": "Soon." });
                let draft = ok(world.call("POST", &sends, Some(ben), Some(draft)));
                self.drafts.borrow_mut().push(draft["id"].as_str().unwrap().to_string());
            }
            5 => {
                let receipt = world
                    .node
                    .database
                    .peek(&format!(
                        "SELECT id FROM receipts WHERE mailbox_id = '{support}' AND subject NOT LIKE '%4471%' \
                         ORDER BY rowid LIMIT 1"
                    ))
                    .unwrap();
                ok(world.admin("DELETE", &format!("/api/mailboxes/{support}/messages/{receipt}"), None));
                self.deleted.set(self.deleted.get() + 1);
            }
            6 => {
                if let Some(draft) = self.drafts.borrow_mut().pop() {
                    ok(world.call("DELETE", &format!("{sends}/{draft}"), Some(ben), None));
                }
            }
            _ => {
                let draft = self.drafts.borrow().last().cloned();
                if let Some(draft) = draft {
                    let edit = json!({ "text": format!("Edited at step {step}.") });
                    ok(world.call("PATCH", &format!("{sends}/{draft}"), Some(ben), Some(edit)));
                }
            }
        }
    }
}

#[test]
fn a_mailbox_moved_while_mail_arrives_and_its_people_work_ends_row_for_row_what_d1_holds_of_it() {
    let desk = desk_with_mail();
    let (world, support) = (&desk.world, desk.mailbox.as_str());
    let sales = desk.mailbox_at("sales@mailroom.test").to_string();
    let question = world.node.database.peek("SELECT id FROM receipts WHERE subject = 'Invoice 4471'").unwrap();
    let busy = Busy {
        desk: &desk,
        question_thread: world.thread_of(support, &question),
        deleted: Cell::default(),
        drafts: RefCell::default(),
    };
    let mut stages = Vec::new();
    let mut step = 0;
    loop {
        let stage = advance(world, support, SMALLEST_STEP);
        let kind = format!("{stage:?}").split(['(', ' ', '{']).next().unwrap().to_string();
        if stages.last() != Some(&kind) {
            stages.push(kind);
        }
        match stage {
            MoveStage::Switched { .. } => break,
            MoveStage::Differs { tables } => panic!("a write went unnoticed in {tables:?}"),
            _ => busy.change(step),
        }
        step += 1;
        assert!(step < 400, "the move never switched: {stages:?}");
    }
    assert_eq!(stages.first().map(String::as_str), Some("Copying"));
    assert!(stages.iter().any(|stage| stage == "Verifying"), "{stages:?}");
    assert!(step >= 16, "every kind of change was made during the move, twice: {step} steps");
    holds_what_d1_holds(world, support);
    assert_eq!(world.node.database.count("SELECT count(*) FROM mail_changes"), 0, "the notes are forgotten");
    let entry = world.audit_of(None).pop().unwrap();
    assert_eq!((entry["action"].as_str(), entry["object"].as_str()), (Some(MOVE_ACTION), Some(support)));
    assert_eq!(world.verify()["intact"], true);

    // What came during the move is found where the mail now is, and what
    // comes next goes there alone.
    let ben = &desk.person("ben").token;
    let found = ok(world.call("GET", &format!("/api/search?q=shipped&mailbox={support}"), Some(ben), None));
    assert!(!found["results"].as_array().unwrap().is_empty(), "{found}");
    let after = deliver(world, SUPPORT, "after@customer.example", "After the move", "", "Hello.");
    let in_d1 = world.node.database.count(&format!("SELECT count(*) FROM receipts WHERE id = '{after}'"));
    let moved = object(world, support).database.count(&format!("SELECT count(*) FROM receipts WHERE id = '{after}'"));
    assert_eq!((in_d1, moved), (0, 1));

    // Then D1's copy is removed, a batch a round trip, and the move is over.
    let sales_rows = |world: &World| -> Vec<_> {
        MOVED_TABLES.iter().map(|table| rows(&world.node.database, table, Some(&sales))).collect()
    };
    let sales_before = sales_rows(world);
    let removed = copy_removed(world, support);
    assert!(removed > 40, "{removed} rows");
    for table in MOVED_TABLES {
        assert!(
            rows(&world.node.database, table, Some(support)).is_empty(),
            "D1 holds none of support's {}",
            table.name
        );
    }
    assert_eq!(sales_rows(world), sales_before, "sales' mail in D1 is untouched");
    for index in SEARCH_INDEXES {
        world.node.database.tamper(&format!("INSERT INTO {index} ({index}) VALUES ('integrity-check')"));
    }
    let entry = world.audit_of(None).pop().unwrap();
    assert_eq!((entry["action"].as_str(), entry["object"].as_str()), (Some(COPY_REMOVED_ACTION), Some(support)));
    assert!(matches!(advance(world, support, SMALLEST_STEP), MoveStage::Moved));
    let found = ok(world.call("GET", "/api/search?q=zeppelin", Some(ben), None));
    assert_eq!(found["results"].as_array().map(Vec::len), Some(2), "support's and sales' own: {found}");
    assert_eq!(world.verify()["intact"], true);
}

/// Advances `mailbox`'s switched move until D1's copy is removed: the rows
/// removed.
fn copy_removed(world: &World, mailbox: &str) -> u64 {
    let mut removed = 0;
    for _ in 0..100 {
        match advance(world, mailbox, SMALLEST_STEP) {
            MoveStage::Emptying { rows } => removed += rows,
            MoveStage::Emptied { rows } => return removed + rows,
            other => panic!("{other:?}"),
        }
    }
    panic!("D1's copy was never removed");
}

/// D1, with one switch armed: just before the first batch that writes
/// `table`, the mailbox's mail is pointed at its own database, as a switch
/// committing between a call's first read and its commit does.
struct SwitchingUnder<'a> {
    inner: &'a SqliteDatabase,
    mailbox_id: String,
    table: &'static str,
    armed: Cell<bool>,
}

impl Database for SwitchingUnder<'_> {
    fn execute(&self, statements: Vec<Statement>) -> LocalBoxFuture<'_, Result<Vec<QueryResult>, StorageError>> {
        let writes = |statement: &Statement| {
            let sql = statement.sql.to_uppercase();
            (sql.contains("INSERT INTO") || sql.contains("UPDATE ") || sql.contains("DELETE FROM"))
                && sql.contains(&self.table.to_uppercase())
        };
        if self.armed.get() && statements.iter().any(writes) {
            self.armed.set(false);
            self.inner.execute_sql(&format!(
                "UPDATE mailboxes SET mail_moved_at = 1 WHERE id = '{}'; DELETE FROM mail_changes",
                self.mailbox_id
            ));
        }
        self.inner.execute(statements)
    }
}

#[test]
fn a_write_decided_before_the_switch_is_refused_by_d1_and_handled_again_where_the_mail_went() {
    let desk = desk_with_mail();
    let (world, support) = (&desk.world, desk.mailbox.as_str());
    let ben = desk.person("ben");
    move_whole(world, support);
    assert!(matches!(verify_whole(world, support), Verification::Verified { .. }));
    let thread = {
        let question = world.node.database.peek("SELECT id FROM receipts WHERE subject = 'Invoice 4471'").unwrap();
        world.thread_of(support, &question)
    };

    // A route: its first read finds the mail in D1, its commit finds it moved.
    let d1 = SwitchingUnder {
        inner: &world.node.database,
        mailbox_id: support.to_string(),
        table: "mail_threads",
        armed: Cell::new(true),
    };
    let status = |database: &SqliteDatabase| {
        database.rows(&format!("SELECT status FROM mail_threads WHERE id = '{}'", thread.rsplit('/').next().unwrap()))
    };
    let in_d1_before = status(&world.node.database);
    assert_ne!(in_d1_before, [["closed"]]);
    let node = Node { database: &d1, ..world.node.node() };
    let request = mailroom::testing::request("PATCH", &thread).bearer(&ben.token).json(json!({ "status": "closed" }));
    let response = world.node.run(mailroom::dispatch::dispatch(&node, &request, mailroom::core::http::Surface::Rest));
    assert_eq!(response.status, 200, "{}", text(&response));
    assert!(!d1.armed.get(), "the switch came between the read and the commit");
    assert_eq!(status(&object(world, support).database), [["closed"]], "handled again where the mail is");
    assert_eq!(status(&world.node.database), in_d1_before, "D1's copy refused the write");

    // A delivery: the same, answered as stored, stored once, where the mail is.
    let d1 = SwitchingUnder { table: "receipts", armed: Cell::new(true), ..d1 };
    world.node.database.execute_sql(&format!("UPDATE mailboxes SET mail_moved_at = NULL WHERE id = '{support}'"));
    let node = Node { database: &d1, ..world.node.node() };
    let raw = "From: Ana <ana@customer.example>\r\nTo: <support@mailroom.test>\r\nSubject: Racing\r\n\
               Message-ID: <race@customer.example>\r\n\r\nJust in time.\r\n";
    let delivered =
        world.node.run(mailroom::mail::receive(&node, "ana@customer.example", SUPPORT, raw.as_bytes())).unwrap();
    let Delivery::Stored { receipt_id } = delivered.delivery else { panic!("{:?}", delivered.delivery) };
    assert!(!d1.armed.get());
    let held =
        |database: &SqliteDatabase| database.count(&format!("SELECT count(*) FROM receipts WHERE id = '{receipt_id}'"));
    assert_eq!((held(&world.node.database), held(&object(world, support).database)), (0, 1));
    let original = format!("raw/{support}/{receipt_id}");
    assert!(world.node.blobs.objects.borrow().contains_key(&original), "its original kept under the same key");
}

/// The mailbox databases, keeping every batch sent to them.
struct Keeping<'a> {
    inner: &'a dyn MailboxStorage,
    kept: Rc<RefCell<Vec<Vec<Statement>>>>,
}

struct KeptDatabase {
    inner: Rc<dyn Database>,
    kept: Rc<RefCell<Vec<Vec<Statement>>>>,
}

impl Database for KeptDatabase {
    fn execute(&self, statements: Vec<Statement>) -> LocalBoxFuture<'_, Result<Vec<QueryResult>, StorageError>> {
        self.kept.borrow_mut().push(statements.clone());
        self.inner.execute(statements)
    }
}

impl MailboxStorage for Keeping<'_> {
    fn of(&self, mailbox_id: &str) -> Rc<dyn Database> {
        Rc::new(KeptDatabase { inner: self.inner.of(mailbox_id), kept: Rc::clone(&self.kept) })
    }

    fn if_created(&self, mailbox_id: &str) -> Rc<dyn Database> {
        Rc::new(KeptDatabase { inner: self.inner.if_created(mailbox_id), kept: Rc::clone(&self.kept) })
    }
}

#[test]
fn a_replay_sent_twice_rolls_back_whole_and_a_row_altered_where_a_write_is_noted_is_replaced_by_d1_s() {
    let desk = desk_with_mail();
    let (world, support) = (&desk.world, desk.mailbox.as_str());
    let ben = desk.person("ben");
    // Begun and copied; then changes, noted, and a row altered in the
    // mailbox's database at a noted key and at another.
    while matches!(advance(world, support, SMALLEST_STEP), MoveStage::Copying(_)) {}
    let question = world.node.database.peek("SELECT id FROM receipts WHERE subject = 'Invoice 4471'").unwrap();
    let thread = world.thread_of(support, &question);
    ok(world.call("PATCH", &thread, Some(&ben.token), Some(json!({ "status": "closed" }))));
    let moved = object(world, support);
    moved.database.tamper("UPDATE mail_threads SET status = 'waiting' WHERE subject = 'Invoice 4471'");

    let keeping = Keeping { inner: &world.node.mailboxes, kept: Rc::default() };
    let node = Node { mailboxes: &keeping, ..world.node.node() };
    let stage = with_work(world, &node, async |work| advance_move(work, support, 50).await).unwrap();
    assert!(matches!(stage, MoveStage::Switched { .. }), "{stage:?}");
    holds_what_d1_holds(world, support);
    let replay = keeping
        .kept
        .borrow()
        .iter()
        .find(|batch| batch.iter().any(|statement| statement.sql.contains("mail_move_replays (id, replays)")))
        .cloned()
        .expect("a replay was written");
    let before = moved.database.snapshot();
    let again = world.node.run(world.node.mailboxes.of(support).execute(replay));
    assert_eq!(again.unwrap_err(), StorageError::Check("write_guard_1".into()), "a replay sent twice");
    assert_eq!(moved.database.snapshot(), before, "nothing of it stayed");
}

#[test]
fn a_row_altered_in_the_mailbox_s_database_where_no_write_is_noted_fails_the_verification() {
    let desk = desk_with_mail();
    let (world, support) = (&desk.world, desk.mailbox.as_str());
    while matches!(advance(world, support, SMALLEST_STEP), MoveStage::Copying(_)) {}
    let moved = object(world, support);
    moved.database.tamper("UPDATE receipts SET subject = 'Invoice 0 (paid)' WHERE subject = 'Invoice 0'");
    let stage = (0..50)
        .map(|_| advance(world, support, SMALLEST_STEP))
        .find(|stage| !matches!(stage, MoveStage::Verifying(_)))
        .unwrap();
    assert_eq!(stage, MoveStage::Differs { tables: vec!["receipts".into()] });
    assert!(world.audit().iter().all(|entry| entry["action"] != MOVE_ACTION), "not recorded as moved");
    let moved_at = world
        .node
        .database
        .count(&format!("SELECT count(*) FROM mailboxes WHERE id = '{support}' AND mail_moved_at IS NOT NULL"));
    assert_eq!(moved_at, 0, "its mail is still read from D1");
}

/// Support and sales with five messages each, on a node moving mail into
/// mailboxes' own databases or not, `round_trips` a run.
fn two_mailboxes_moving(switched_on: bool, round_trips: u32) -> Desk {
    let mut world = World::with_mail_in_d1();
    world.node.config.move_mail_into_own_databases = switched_on;
    world.node.config.move_round_trips_per_run = round_trips;
    let desk =
        Desk::in_world(world, SUPPORT).and_mailbox("sales@mailroom.test").with("ben@example.com", WORKS_AND_DECIDES);
    for n in 0..5 {
        deliver(&desk.world, SUPPORT, &format!("a{n}@customer.example"), "Hello", "", "Support's.");
        deliver(&desk.world, "sales@mailroom.test", &format!("b{n}@customer.example"), "Hello", "", "Sales'.");
    }
    desk
}

/// The scheduled runs it takes `world`'s node to move every mailbox's mail
/// and remove D1's copy, each held to the round trips it is given and
/// moving one mailbox at a time.
fn runs_to_move_everything(world: &World) -> u32 {
    let run = |world: &World| {
        let node = world.node.node();
        world.node.run(mailroom::schedule::run_job(&node, mailroom::schedule::Job::MoveMail)).unwrap()
    };
    let in_d1 = |world: &World| {
        world
            .node
            .database
            .count("SELECT count(*) FROM mailboxes WHERE mail_moved_at IS NULL OR mail_moving_since IS NOT NULL")
    };
    let mut runs = 0;
    while in_d1(world) > 0 {
        let round_trips = run(world);
        assert!(round_trips <= world.node.config.move_round_trips_per_run, "{round_trips}");
        let moving = world
            .node
            .database
            .count("SELECT count(*) FROM mailboxes WHERE mail_moving_since IS NOT NULL AND mail_moved_at IS NULL");
        assert!(moving <= 1, "one mailbox at a time");
        runs += 1;
        assert!(runs < 60, "never finished");
    }
    assert_eq!(run(world), 1, "done: one read finds nothing to move");
    runs
}

#[test]
fn the_schedule_moves_every_mailbox_one_at_a_time_only_when_switched_on_as_fast_as_it_is_let() {
    let moved =
        |world: &World| world.node.database.count("SELECT count(*) FROM mailboxes WHERE mail_moved_at IS NOT NULL");
    let off = two_mailboxes_moving(false, 24);
    let node = off.world.node.node();
    let asked = off.world.node.run(mailroom::schedule::run_job(&node, mailroom::schedule::Job::MoveMail)).unwrap();
    assert_eq!((asked, moved(&off.world)), (0, 0), "off: nothing asked, nothing moved");

    let desk = two_mailboxes_moving(true, 24);
    let world = &desk.world;
    let runs = runs_to_move_everything(world);
    world.node.seal();
    assert_eq!(moved(world), 2);
    let recorded = |action: &str| world.audit().iter().filter(|entry| entry["action"] == action).count();
    assert_eq!((recorded(MOVE_ACTION), recorded(COPY_REMOVED_ACTION)), (2, 2));
    assert_eq!(world.node.database.count("SELECT count(*) FROM receipts"), 0, "D1 holds no mail");
    let ben = &desk.person("ben").token;
    let listed = ok(world.call("GET", &format!("/api/mailboxes/{}/messages", desk.mailbox), Some(ben), None));
    assert_eq!(listed["messages"].as_array().map(Vec::len), Some(5), "{listed}");

    // Let take more round trips a run, the node moves the same in fewer runs;
    // given the fewest a switch needs, in more, but it still gets there.
    let faster = two_mailboxes_moving(true, 200);
    assert!(runs_to_move_everything(&faster.world) < runs, "{runs} runs at 24 round trips");
    let slowest = two_mailboxes_moving(true, mailroom::mail::moving::FEWEST_TO_SWITCH + 1);
    assert!(runs_to_move_everything(&slowest.world) > runs, "{runs} runs at 24 round trips");
}
