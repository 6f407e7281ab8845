//! Each mailbox's own database (decision 0040), natively: built from
//! `migrations/mailbox/` as its object builds it, one per mailbox, a batch one
//! transaction whose write guards and constraints roll it back as D1's do,
//! every value and answer carried in the object's own form.

use mailroom::core::mailbox_storage::MailboxStorage;
use mailroom::core::storage::{Database, Statement, StorageError, Value};
use mailroom::testing::{SqliteMailboxes, VirtualClock, run};

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
