//! Each mailbox's own database (decision 0040): the port the layers above ask
//! for a mailbox's storage through, the schema every such database is built
//! from (`migrations/mailbox/`), and the form a batch of statements and its
//! results take between the Worker and the object that holds the database.
//!
//! On Cloudflare a mailbox's database is a SQLite-backed Durable Object named
//! by the mailbox's id (`adapter::mailboxes`); natively it is SQLite in
//! memory (`testing`). Either is a `Database`: a batch is one round trip and
//! one transaction, so a store's statements, write guards included, run there
//! as they run on D1. The object decides nothing: the Worker has checked who
//! may do what before it hands a mailbox a batch, and only the Worker can
//! reach the object (a binding, never a URL).

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use crate::core::storage::{Database, QueryResult, Row, Statement, StorageError, Value};

/// Where each mailbox's database is.
pub trait MailboxStorage {
    /// The database of the mailbox `mailbox_id`, created, empty and migrated,
    /// on its first batch.
    fn of(&self, mailbox_id: &str) -> Rc<dyn Database>;

    /// The database of the mailbox `mailbox_id` for reading only if it was
    /// ever created: a batch sent to one never created creates nothing and
    /// fails (`NEVER_CREATED`). What a read asks before the route's checks
    /// have passed goes here, so no caller can have a database made for an
    /// id of their choosing.
    fn if_created(&self, mailbox_id: &str) -> Rc<dyn Database>;

    /// The mailbox at `address` whose mail this storage remembers being in
    /// its own database (`remember_moved`), if any. What it remembers stays
    /// true: an address never changes mailbox, no mailbox is deleted, and a
    /// mailbox's mail, once moved, never moves back (decision 0040). So the
    /// email handler may ask that database beside D1's first read, instead of
    /// after it; D1 still says where the mail is.
    fn moved_at(&self, _address: &str) -> Option<String> {
        None
    }

    /// Remembers, for `moved_at`, that the mail of mailbox `mailbox_id` at
    /// `address` is in its own database, as D1 said.
    fn remember_moved(&self, _address: &str, _mailbox_id: &str) {}
}

/// Why a batch sent through `MailboxStorage::if_created` failed when the
/// mailbox's database was never created.
/// What D1 answers (`refused:mail_moved`, migration 0035) to a write of a
/// mailbox's mail there once the mailbox's mail has moved into its own
/// database: the write was decided by a read made before the move's switch,
/// so the call applied nothing and is handled again, following the mail.
pub const MAIL_MOVED: &str = "mail_moved";

pub const NEVER_CREATED: &str = "the mailbox's database was never created";

/// Whether `error` is a batch's through `MailboxStorage::if_created` to a
/// database never created: for a read, a mailbox that holds nothing.
pub fn never_created(error: &StorageError) -> bool {
    matches!(error, StorageError::Backend(message) if message == NEVER_CREATED)
}

/// One file of `migrations/mailbox/`, built into the Worker: a mailbox's
/// object applies those it has not yet applied before its first batch after a
/// deployment.
#[derive(Debug)]
pub struct MailboxMigration {
    /// The file's name, which orders the migrations and records one applied.
    pub name: &'static str,
    pub sql: &'static str,
}

/// A file of `migrations/mailbox/`, named once: its name, and its text
/// compiled in from it.
macro_rules! mailbox_migration {
    ($name:literal) => {
        MailboxMigration { name: $name, sql: include_str!(concat!("../../migrations/mailbox/", $name)) }
    };
}

/// Every migration of a mailbox's database, in the order they apply: the
/// files of `migrations/mailbox/`, each named once (a test holds this list to
/// the directory).
pub const MAILBOX_MIGRATIONS: &[MailboxMigration] = &[
    mailbox_migration!("0001_write_guards.sql"),
    mailbox_migration!("0002_audit_segment.sql"),
    mailbox_migration!("0003_mail.sql"),
    mailbox_migration!("0004_moves.sql"),
    mailbox_migration!("0005_a_send_keeps_what_its_writer_read.sql"),
    mailbox_migration!("0006_receipts_by_time.sql"),
    mailbox_migration!("0007_replays.sql"),
    mailbox_migration!("0008_audit_filters.sql"),
    mailbox_migration!("0009_thread_notes.sql"),
    mailbox_migration!("0010_snoozed_conversations.sql"),
];

/// The table a mailbox's database records its applied migrations in.
pub const SCHEMA_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS mailbox_schema (name TEXT PRIMARY KEY NOT NULL, applied_at INTEGER NOT NULL)";
/// A row if the mailbox's database was ever created (its record of
/// migrations exists), none if not.
pub const WAS_CREATED: &str = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'mailbox_schema'";
/// The names of the migrations a mailbox's database has applied.
pub const APPLIED_MIGRATIONS: &str = "SELECT name FROM mailbox_schema";
/// Records migration `?1` as applied at `?2` (milliseconds).
pub const RECORD_MIGRATION: &str = "INSERT INTO mailbox_schema (name, applied_at) VALUES (?1, ?2)";

/// What a statement that still reads D1's directory beside mail begins with
/// (`spans_stores`). Mail moves into each mailbox's database store by store,
/// and such a statement could run in neither: D1 will no longer hold its mail,
/// and a mailbox's database never holds the directory. The native tests run
/// every other statement that names mail in a mailbox's database too, so what
/// is left to split before a store moves is exactly what carries this mark,
/// wherever in a statement it is (one built around a marked one carries it
/// too).
pub const SPANS_STORES: &str = "/* spans D1 and a mailbox: split before its mail moves (decision 0040) */ ";

/// `statement`, marked as one that reads D1's directory beside mail
/// (`SPANS_STORES`); the mark is an SQL comment, so D1 runs it unchanged.
pub fn spans_stores(mut statement: Statement) -> Statement {
    statement.sql = format!("{SPANS_STORES}{}", statement.sql).into();
    statement
}

/// The migrations not among `applied` (names read from the schema table), in
/// order.
pub fn pending_migrations(applied: &[String]) -> impl Iterator<Item = &'static MailboxMigration> + '_ {
    MAILBOX_MIGRATIONS.iter().filter(|migration| !applied.iter().any(|name| name == migration.name))
}

/// A batch as the Worker hands it to a mailbox's object.
#[derive(Debug, Deserialize, Serialize)]
pub struct WireBatch {
    pub statements: Vec<WireStatement>,
    /// Run only in a database that was created before: in one that was not,
    /// nothing is created and the answer is `NeverCreated`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub only_if_created: bool,
}

/// One statement of a batch: its SQL and its parameters as JSON (`null`, a
/// number or a string, as D1 takes them).
#[derive(Debug, Deserialize, Serialize)]
pub struct WireStatement {
    pub sql: String,
    pub parameters: Vec<Json>,
}

/// What a statement produced, as the object answers it.
#[derive(Debug, Default, Deserialize, Serialize)]
pub struct WireResult {
    pub rows: Vec<Map<String, Json>>,
    pub changes: u64,
}

/// The object's answer to a batch: every statement's result and the
/// database's size after them, or why the batch was rolled back (SQLite's
/// own message, which `StorageError::from_message` classifies as D1's).
#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum WireAnswer {
    Committed {
        results: Vec<WireResult>,
        size: u64,
    },
    RolledBack {
        message: String,
    },
    /// A batch asked `only_if_created` of a database never created.
    NeverCreated,
}

impl WireBatch {
    /// `statements` as the object reads them.
    pub fn of(statements: &[Statement]) -> WireBatch {
        let statements = statements
            .iter()
            .map(|statement| WireStatement {
                sql: statement.sql.to_string(),
                parameters: statement.parameters.iter().map(value_to_json).collect(),
            })
            .collect();
        WireBatch { statements, only_if_created: false }
    }

    /// `of`, to run only in a database that was created before.
    pub fn if_created(statements: &[Statement]) -> WireBatch {
        WireBatch { only_if_created: true, ..WireBatch::of(statements) }
    }

    /// The statements again, as `of` wrote them: what the native twin runs,
    /// or why a parameter cannot be bound.
    pub fn into_statements(self) -> Result<Vec<Statement>, StorageError> {
        self.statements
            .into_iter()
            .map(|statement| Ok(Statement { parameters: statement.values()?, sql: statement.sql.into() }))
            .collect()
    }
}

impl WireStatement {
    /// The parameters as values, or why one cannot be bound (a JSON boolean,
    /// array or object, which no store binds).
    pub fn values(&self) -> Result<Vec<Value>, StorageError> {
        self.parameters.iter().map(json_to_value).collect()
    }
}

impl WireAnswer {
    /// The answer as the `Database` port returns it: each result reports the
    /// size the database has after the batch.
    pub fn into_results(self) -> Result<Vec<QueryResult>, StorageError> {
        match self {
            WireAnswer::Committed { results, size } => Ok(results
                .into_iter()
                .map(|result| QueryResult {
                    rows: result.rows.into_iter().map(Row).collect(),
                    changes: result.changes,
                    size_after: Some(size),
                })
                .collect()),
            WireAnswer::RolledBack { message } => Err(StorageError::from_message(&message)),
            WireAnswer::NeverCreated => Err(StorageError::Backend(NEVER_CREATED.to_string())),
        }
    }
}

fn value_to_json(value: &Value) -> Json {
    match value {
        Value::Null => Json::Null,
        Value::Integer(integer) => Json::from(*integer),
        // A real that JSON cannot carry (NaN, infinity) is stored as SQLite
        // stores a NaN it is bound: as NULL.
        Value::Real(real) => serde_json::Number::from_f64(*real).map_or(Json::Null, Json::Number),
        Value::Text(text) => Json::String(text.clone()),
    }
}

fn json_to_value(json: &Json) -> Result<Value, StorageError> {
    match json {
        Json::Null => Ok(Value::Null),
        Json::Number(number) => match number.as_i64() {
            Some(integer) => Ok(Value::Integer(integer)),
            None => number
                .as_f64()
                .map(Value::Real)
                .ok_or_else(|| StorageError::Backend(format!("the parameter {number} is out of range"))),
        },
        Json::String(text) => Ok(Value::Text(text.clone())),
        other => Err(StorageError::Backend(format!("a parameter must be null, a number or text, not {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_migrations_built_in_are_the_files_of_the_directory_in_order() {
        let directory = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/mailbox");
        let mut files: Vec<String> = std::fs::read_dir(&directory)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".sql"))
            .collect();
        files.sort();
        let built_in: Vec<&str> = MAILBOX_MIGRATIONS.iter().map(|migration| migration.name).collect();
        assert_eq!(built_in, files, "every file, once, in file-name order");
        for migration in MAILBOX_MIGRATIONS {
            assert_eq!(migration.sql, std::fs::read_to_string(directory.join(migration.name)).unwrap());
        }
    }

    #[test]
    fn only_the_migrations_not_applied_are_pending() {
        let all: Vec<&str> = pending_migrations(&[]).map(|migration| migration.name).collect();
        assert_eq!(all.len(), MAILBOX_MIGRATIONS.len());
        let applied = vec![MAILBOX_MIGRATIONS[0].name.to_string()];
        assert!(pending_migrations(&applied).all(|migration| migration.name != MAILBOX_MIGRATIONS[0].name));
    }

    #[test]
    fn a_batch_carries_every_value_as_it_was_bound() {
        let statement = Statement::new("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)")
            .bind(Value::Null)
            .bind(9_007_199_254_740_993_i64)
            .bind(Value::Real(1.5))
            .bind("text ‘quoted’")
            .bind(Value::Real(f64::NAN));
        let wire: WireBatch =
            serde_json::from_str(&serde_json::to_string(&WireBatch::of(&[statement])).unwrap()).unwrap();
        assert_eq!(
            wire.statements[0].values().unwrap(),
            [
                Value::Null,
                Value::Integer(9_007_199_254_740_993),
                Value::Real(1.5),
                Value::from("text ‘quoted’"),
                Value::Null
            ]
        );
        let wrong = WireStatement { sql: "SELECT ?1".into(), parameters: vec![Json::Bool(true)] };
        assert!(matches!(wrong.values(), Err(StorageError::Backend(_))));
    }

    #[test]
    fn an_answer_reports_the_size_after_and_a_rollback_is_classified_as_on_d1() {
        let committed = WireAnswer::Committed {
            results: vec![WireResult { rows: vec![Map::from_iter([("n".to_string(), Json::from(1))])], changes: 0 }],
            size: 8192,
        };
        let results = committed.into_results().unwrap();
        assert_eq!(results[0].size_after, Some(8192));
        assert_eq!(results[0].first().unwrap().integer("n").unwrap(), 1);
        let refused =
            WireAnswer::RolledBack { message: "CHECK constraint failed: write_guard_2: SQLITE_CONSTRAINT".into() };
        assert_eq!(refused.into_results(), Err(StorageError::Check("write_guard_2".into())));
    }
}
