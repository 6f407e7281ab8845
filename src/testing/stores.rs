//! Which store a statement can run in (decision 0040): D1, or one mailbox's
//! own database. A mailbox's database holds its mail and nothing of the
//! directory, so a statement that names a table of mail may name only tables
//! a mailbox's database has; one that joins mail with people, agents or the
//! mailbox list could never be sent to the mailbox's object. Every statement
//! the native tests run is held to that (`SqliteDatabase`): whether it names
//! mail is told by SQLite's own authorizer as it compiles the statement, not
//! by reading the SQL's text, and one that does must compile in a mailbox's
//! database too.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock};

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};

use crate::core::mailbox_storage::{APPLIED_MIGRATIONS, RECORD_MIGRATION, SCHEMA_TABLE, pending_migrations};

/// Tables a store has for its own machinery, not mail: the write guards a
/// batch may carry and the audit chain (D1's, or the mailbox's segment), which
/// every store has; and a mailbox's record of its migrations and of its mail's
/// move out of D1 (`mail::moving`), which only a mailbox has.
const MACHINERY: [&str; 7] = [
    "write_guards",
    "audit_entries",
    "mailbox_schema",
    "mail_moves",
    "mail_move_checks",
    "mail_move_replays",
    "mail_emptying",
];

/// Builds a mailbox's database on `connection` as its object builds it on
/// its first batch: the schema table, then every migration of
/// `MAILBOX_MIGRATIONS` (the Worker's own copy of `migrations/mailbox/`) it
/// records as not yet applied.
pub(super) fn migrate_as_a_mailbox(connection: &rusqlite::Connection) {
    connection.execute_batch(SCHEMA_TABLE).expect("the schema table is made");
    let applied: Vec<String> = connection
        .prepare(APPLIED_MIGRATIONS)
        .and_then(|mut statement| statement.query_map([], |row| row.get(0))?.collect())
        .expect("the schema table reads");
    for migration in pending_migrations(&applied) {
        connection.execute_batch(migration.sql).unwrap_or_else(|error| panic!("{}: {error}", migration.name));
        connection.execute(RECORD_MIGRATION, (migration.name, 0)).expect("the migration is recorded");
    }
}

/// A mailbox's database, built apart from any test's, to ask of its schema.
fn a_mailbox() -> rusqlite::Connection {
    let connection = rusqlite::Connection::open_in_memory().expect("in-memory SQLite opens");
    migrate_as_a_mailbox(&connection);
    connection
}

/// The tables of a mailbox's database, as `migrations/mailbox/` builds it.
pub fn mailbox_tables() -> &'static BTreeSet<String> {
    static TABLES: OnceLock<BTreeSet<String>> = OnceLock::new();
    TABLES.get_or_init(|| {
        a_mailbox()
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            .and_then(|mut statement| statement.query_map([], |row| row.get(0))?.collect())
            .expect("the schema reads")
    })
}

/// Whether `sql` compiles in a mailbox's database, as its object would be
/// asked to run it: SQLite's refusal if not (a table the mailbox lacks).
pub(super) fn compiles_in_a_mailbox(sql: &str) -> Result<(), String> {
    thread_local! {
        static MAILBOX: rusqlite::Connection = a_mailbox();
    }
    MAILBOX.with(|mailbox| mailbox.prepare(sql).map(drop).map_err(|error| error.to_string()))
}

/// The tables of mail: those of a mailbox's database but the machinery every
/// store has.
pub fn mail_tables() -> &'static BTreeSet<String> {
    static TABLES: OnceLock<BTreeSet<String>> = OnceLock::new();
    TABLES
        .get_or_init(|| mailbox_tables().iter().filter(|table| !MACHINERY.contains(&table.as_str())).cloned().collect())
}

/// The tables the statement being compiled names, collected by an authorizer
/// installed on the connection once.
#[derive(Clone, Default)]
pub(super) struct TablesNamed(Arc<Mutex<BTreeSet<String>>>);

impl TablesNamed {
    /// Installs the collecting authorizer on `connection`.
    pub(super) fn install(&self, connection: &mut rusqlite::Connection) {
        let named = Arc::clone(&self.0);
        let collect = move |context: AuthContext<'_>| {
            let table = match context.action {
                AuthAction::Read { table_name, .. }
                | AuthAction::Insert { table_name }
                | AuthAction::Update { table_name, .. }
                | AuthAction::Delete { table_name } => Some(table_name),
                _ => None,
            };
            if let (Some(table), Ok(mut named)) = (table, named.lock()) {
                named.insert(table.to_string());
            }
            Authorization::Allow
        };
        connection.authorizer(Some(collect)).expect("the authorizer installs");
    }

    /// Forgets what was named so far: called before compiling a statement.
    pub(super) fn forget(&self) {
        if let Ok(mut named) = self.0.lock() {
            named.clear();
        }
    }

    /// What was named since `forget`.
    pub(super) fn taken(&self) -> BTreeSet<String> {
        self.0.lock().map(|mut named| std::mem::take(&mut *named)).unwrap_or_default()
    }
}

/// Whether `named` includes a table of mail.
pub(super) fn names_mail(named: &BTreeSet<String>) -> bool {
    named.iter().any(|table| mail_tables().contains(table))
}
