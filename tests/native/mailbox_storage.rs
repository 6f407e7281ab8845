//! Each mailbox's own database (decision 0040), natively: built from
//! `migrations/mailbox/` as its object builds it, one per mailbox, a batch one
//! transaction whose write guards and constraints roll it back as D1's do,
//! every value and answer carried in the object's own form.

use mailroom::core::mailbox_storage::{MailboxStorage, spans_stores};
use mailroom::core::storage::{Database, Statement, StorageError, Value};
use mailroom::testing::{SqliteDatabase, SqliteMailboxes, VirtualClock, mail_tables, mailbox_tables, run};

fn execute(
    database: &dyn Database,
    statements: Vec<Statement>,
) -> Result<Vec<mailroom::core::storage::QueryResult>, StorageError> {
    run(&VirtualClock::at(0), database.execute(statements))
}

fn notes_table() -> Statement {
    Statement::new("CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY, body TEXT NOT NULL, n INTEGER)")
}

#[test]
fn a_mailbox_database_is_built_from_its_own_migrations_and_records_each() {
    let mailboxes = SqliteMailboxes::default();
    let database = mailboxes.of("mbx_1");
    let [applied] = <[_; 1]>::try_from(
        execute(&*database, vec![Statement::new("SELECT name FROM mailbox_schema ORDER BY name")]).unwrap(),
    )
    .unwrap();
    let names: Vec<String> = applied.rows.iter().map(|row| row.text("name").unwrap()).collect();
    let expected: Vec<String> = mailroom::core::mailbox_storage::MAILBOX_MIGRATIONS
        .iter()
        .map(|migration| migration.name.to_string())
        .collect();
    assert_eq!(names, expected);
    // D1's tables are not there: the directory stays in D1.
    let directory = execute(&*database, vec![Statement::new("SELECT count(*) AS n FROM people")]);
    assert!(matches!(directory, Err(StorageError::Backend(message)) if message.contains("no such table")));
}

#[test]
fn each_mailbox_has_its_own_database() {
    let mailboxes = SqliteMailboxes::default();
    for mailbox in ["mbx_1", "mbx_2"] {
        execute(&*mailboxes.of(mailbox), vec![notes_table()]).unwrap();
    }
    execute(&*mailboxes.of("mbx_1"), vec![Statement::new("INSERT INTO notes (id, body) VALUES ('a', 'one')")]).unwrap();
    let count = |mailbox: &str| {
        execute(&*mailboxes.of(mailbox), vec![Statement::new("SELECT count(*) AS n FROM notes")]).unwrap()[0]
            .first()
            .unwrap()
            .integer("n")
            .unwrap()
    };
    assert_eq!((count("mbx_1"), count("mbx_2")), (1, 0));
    assert_eq!(mailboxes.ids(), ["mbx_1", "mbx_2"]);
}

#[test]
fn a_failing_write_guard_rolls_the_whole_batch_back_naming_its_slot() {
    let mailboxes = SqliteMailboxes::default();
    let database = mailboxes.of("mbx_1");
    execute(&*database, vec![notes_table()]).unwrap();
    let refused = execute(
        &*database,
        vec![
            Statement::new("INSERT INTO notes (id, body) VALUES ('a', 'written before the guard')"),
            Statement::write_guard(3, Statement::new("EXISTS (SELECT 1 FROM notes WHERE id = ?1)").bind("b")),
        ],
    );
    assert_eq!(refused.unwrap_err(), StorageError::Check("write_guard_3".into()));
    let left = execute(&*database, vec![Statement::new("SELECT count(*) AS n FROM notes")]).unwrap();
    assert_eq!(left[0].first().unwrap().integer("n").unwrap(), 0, "nothing of the batch stayed");

    execute(&*database, vec![Statement::new("INSERT INTO notes (id, body) VALUES ('a', 'one')")]).unwrap();
    let twice = execute(&*database, vec![Statement::new("INSERT INTO notes (id, body) VALUES ('a', 'again')")]);
    assert_eq!(twice.unwrap_err(), StorageError::Unique("notes.id".into()));
}

#[test]
fn values_rows_changes_and_size_come_back_as_they_were() {
    let mailboxes = SqliteMailboxes::default();
    let database = mailboxes.of("mbx_1");
    let before = execute(&*database, vec![notes_table()]).unwrap()[0].size_after.unwrap();
    let body = "Grüße, ‘quoted’ and \u{1F600}".repeat(2_000);
    let results = execute(
        &*database,
        vec![
            Statement::new("INSERT INTO notes (id, body, n) VALUES (?1, ?2, ?3)")
                .bind("a")
                .bind(body.clone())
                .bind(1_795_000_000_123_i64),
            Statement::new("INSERT INTO notes (id, body, n) VALUES (?1, ?2, ?3)")
                .bind("b")
                .bind("two")
                .bind(Value::Null),
            Statement::new("UPDATE notes SET n = 7 WHERE n IS NULL OR n > 0"),
            Statement::new("SELECT id, body, n FROM notes ORDER BY id"),
        ],
    )
    .unwrap();
    assert_eq!(results.iter().map(|result| result.changes).take(3).collect::<Vec<_>>(), [1, 1, 2]);
    let rows = &results[3].rows;
    assert_eq!(rows[0].text("body").unwrap(), body);
    assert_eq!(rows[1].integer("n").unwrap(), 7);
    let after = results[3].size_after.unwrap();
    assert!(after > before, "the size the object reports grows with what it holds: {before} then {after}");
}

#[test]
fn a_mailbox_has_the_write_guards_d1_has() {
    // A store's guards (`Statement::write_guard`) name slots by number: the two
    // schemas, written in two migration directories, are held to each other.
    let d1 = mailroom::testing::SqliteDatabase::migrated().column_names("write_guards");
    let mailbox = mailroom::testing::SqliteDatabase::for_a_mailbox().column_names("write_guards");
    assert_eq!(mailbox, d1);
}

/// The SQL of `table`'s indexes and triggers in `database` (whitespace and
/// comments folded away), and of each index SQLite made for a key, its
/// columns: what a store's statements and its write guards rely on.
fn indexes_and_triggers(database: &SqliteDatabase, table: &str) -> Vec<Vec<String>> {
    let mut shapes = database.rows(&format!(
        "SELECT s.type, s.name, coalesce(s.sql, (SELECT group_concat(i.name, ',') FROM pragma_index_info(s.name) i)) \
         FROM sqlite_schema s WHERE s.tbl_name = '{table}' AND s.type IN ('index', 'trigger') \
           AND s.name NOT LIKE '%!_while!_moving' ESCAPE '!' ORDER BY s.name"
    ));
    for shape in &mut shapes {
        shape[2] = folded(&shape[2]);
    }
    shapes
}

/// `sql` with its comments dropped and every run of whitespace one space.
fn folded(sql: &str) -> String {
    let without_comments: Vec<&str> = sql.lines().map(|line| line.split("--").next().unwrap_or("")).collect();
    without_comments.join(" ").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The CHECK constraints written in `table`'s definition, folded.
fn checks(database: &SqliteDatabase, table: &str) -> Vec<String> {
    let definition = database.rows(&format!("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = '{table}'"));
    let definition = folded(&definition[0][0]);
    let mut checks = Vec::new();
    for (start, _) in definition.match_indices("CHECK (") {
        let mut depth = 0;
        for (offset, character) in definition[start..].char_indices() {
            depth += match character {
                '(' => 1,
                ')' => -1,
                _ => 0,
            };
            if character == ')' && depth == 0 {
                checks.push(definition[start..=start + offset].to_string());
                break;
            }
        }
    }
    checks.sort();
    checks
}

/// A mailbox's database holds its mail in the tables D1 holds it in today:
/// the same columns in the same order with the same types, defaults and keys,
/// the same indexes, triggers and CHECK constraints, and the same references
/// between tables of mail. So a store's statements run unchanged in either,
/// and a mailbox's rows move from D1 column for column. The one difference
/// allowed: a reference to the directory (a receipt's mailbox), which a
/// mailbox's database does not hold; and D1's triggers noting the changes
/// of a mailbox whose mail is moving (`_while_moving`, migration 0035), the
/// move's machinery, which a mailbox's own database has no use for.
#[test]
fn a_mailbox_holds_its_mail_in_the_tables_d1_holds_it_in() {
    let d1 = SqliteDatabase::migrated();
    let mailbox = SqliteDatabase::for_a_mailbox();
    let mail = mail_tables();
    for expected in ["receipts", "receipt_bodies_index", "mail_threads", "thread_labels", "sends", "butler_runs"] {
        assert!(mail.contains(expected), "{expected} is mail");
    }
    for table in mail {
        let columns = |database: &SqliteDatabase| {
            database.rows(&format!(
                "SELECT name, type, \"notnull\", dflt_value, pk, hidden FROM pragma_table_xinfo('{table}') ORDER BY cid"
            ))
        };
        assert!(!columns(&d1).is_empty(), "D1 has {table}");
        assert_eq!(columns(&mailbox), columns(&d1), "{table}'s columns");
        assert_eq!(indexes_and_triggers(&mailbox, table), indexes_and_triggers(&d1, table), "{table}'s indexes");
        assert_eq!(checks(&mailbox, table), checks(&d1, table), "{table}'s checks");
        let references = |database: &SqliteDatabase| {
            database.rows(&format!(
                "SELECT \"table\", \"from\", \"to\", on_update, on_delete FROM pragma_foreign_key_list('{table}') \
                 ORDER BY id, seq"
            ))
        };
        let d1_references_within_mail: Vec<Vec<String>> =
            references(&d1).into_iter().filter(|reference| mailbox_tables().contains(&reference[0])).collect();
        assert_eq!(references(&mailbox), d1_references_within_mail, "{table}'s references");
    }
}

/// The native tests hold every statement that names mail to one store
/// (`testing::stores`): one that joins mail with the directory fails the test
/// that runs it, unless it is marked as still to be split.
#[test]
#[should_panic(expected = "cannot run in a mailbox's database")]
fn a_statement_joining_mail_with_the_directory_fails_the_test_that_runs_it() {
    let d1 = SqliteDatabase::migrated();
    let _ = execute(
        &d1,
        vec![Statement::new(
            "SELECT r.id FROM receipts r JOIN mailboxes m ON m.id = r.mailbox_id WHERE m.address = 'a@example.com'",
        )],
    );
}

/// A mark that is no longer true (the statement runs in a mailbox as it is)
/// fails too, so what is left to split is exactly what is marked.
#[test]
#[should_panic(expected = "drop its mark")]
fn a_statement_marked_as_spanning_stores_that_does_not_fails_the_test_that_runs_it() {
    let d1 = SqliteDatabase::migrated();
    let _ = execute(&d1, vec![spans_stores(Statement::new("SELECT id FROM receipts WHERE mailbox_id = 'mbx_1'"))]);
}

/// A statement marked as spanning D1 and a mailbox runs on D1 unchanged.
#[test]
fn a_marked_statement_runs_on_d1_as_it_is() {
    let d1 = SqliteDatabase::migrated();
    let marked = spans_stores(Statement::new(
        "SELECT count(*) AS n FROM receipts r JOIN mailboxes m ON m.id = r.mailbox_id WHERE m.address = ?1",
    ))
    .bind("a@example.com");
    assert_eq!(execute(&d1, vec![marked]).unwrap()[0].first().unwrap().integer("n").unwrap(), 0);
}
