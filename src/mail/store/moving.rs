//! The SQL of a mailbox's move out of D1 into its own database (decision
//! 0040, `mail::moving`): the tables of mail that move, in the order their
//! references allow, each with how one mailbox's rows are chosen and the key
//! they are paged by (`MOVED_TABLES`); and the statements that read a page of
//! them, write it into the mailbox's database with its search index rows and
//! the position it reached, behind a guard on the position it started from,
//! and keep a verification's progress there.

use super::search;
use crate::core::mailbox_storage::MAILBOX_MIGRATIONS;
use crate::core::storage::{Statement, Value};

/// Whose a row of a moved table is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// The row names its mailbox (`mailbox_id`).
    Mailbox,
    /// The row belongs to the row of `parent` whose `id` its `column` names,
    /// and is the mailbox's when that row is: a row pointing at another
    /// mailbox's parent is never chosen, whatever ids it was given.
    Parent { column: &'static str, parent: &'static str },
}

/// What a moved table's rows are ordered and paged by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    /// A rowid table's rowid, copied as it is: storage order, which lists and
    /// search page by, and the search indexes' rowids carry over exactly.
    Rowid,
    /// A `WITHOUT ROWID` table's primary key, its columns in order.
    Primary(&'static [&'static str]),
}

/// One table of mail as the move copies it.
#[derive(Debug)]
pub struct MovedTable {
    pub name: &'static str,
    pub owner: Owner,
    pub key: Key,
    /// Its rows are indexed for search (the receipts): each page's index rows
    /// are written in the batch that copies it, as a delivery writes them.
    pub searchable: bool,
    /// Triggers of the table that would refuse a copied row, lifted for the
    /// statement that copies a page and restored, from the migration's own
    /// text, in the same transaction. A sealed send's files may not change
    /// (`send_attachments_change_only_on_drafts_insert`), and copying them
    /// changes nothing that D1 does not already hold.
    pub lifted_triggers: &'static [&'static str],
}

/// Every table of mail that moves, parents before the rows that reference
/// them: receipts before the sends that answer them and the butler runs on
/// them, conversations before their Message-IDs, reads and labels, sends
/// before their versions and files. `tests/native/moving_mail.rs` holds this
/// list to the mailbox's schema: every table of mail is here, rebuilt (the
/// search indexes) or named in `NOT_MOVED`, and each key is the table's own.
pub const MOVED_TABLES: &[MovedTable] = &[
    table("receipts", Owner::Mailbox, Key::Rowid).searchable(),
    table("mail_threads", Owner::Mailbox, Key::Rowid),
    table("mail_thread_message_ids", Owner::Mailbox, Key::Primary(&["mailbox_id", "message_id"])),
    table("mail_thread_reads", THREAD, Key::Primary(&["thread_id", "reader"])),
    table("thread_labels", THREAD, Key::Primary(&["thread_id", "label"])),
    table("sends", Owner::Mailbox, Key::Rowid),
    table("send_versions", SEND, Key::Rowid),
    table("send_attachments", SEND, Key::Primary(&["send_id", "position"]))
        .lifting(&["send_attachments_change_only_on_drafts_insert"]),
    table(
        "butler_runs",
        Owner::Parent { column: "receipt_id", parent: "receipts" },
        Key::Primary(&["butler_id", "receipt_id"]),
    ),
];

/// Tables of mail that do not move, each with why.
pub const NOT_MOVED: &[(&str, &str)] = &[(
    "deleted_receipts",
    "it names no mailbox (the receipt it remembers is gone), so no row of it can be given to one mailbox without \
     guessing; it keeps where a deleted receipt was in D1's storage order, for a list whose cursor names it, and \
     once a mailbox is read from its object such a cursor, handed out before the move, finds no place there and \
     ends its list, as a cursor naming no receipt does",
)];

const THREAD: Owner = Owner::Parent { column: "thread_id", parent: "mail_threads" };
const SEND: Owner = Owner::Parent { column: "send_id", parent: "sends" };

const fn table(name: &'static str, owner: Owner, key: Key) -> MovedTable {
    MovedTable { name, owner, key, searchable: false, lifted_triggers: &[] }
}

impl MovedTable {
    const fn searchable(self) -> MovedTable {
        MovedTable { searchable: true, ..self }
    }

    const fn lifting(self, lifted_triggers: &'static [&'static str]) -> MovedTable {
        MovedTable { lifted_triggers, ..self }
    }

    /// The columns a page's key is read from, in order.
    pub fn key_columns(&self) -> &'static [&'static str] {
        match self.key {
            Key::Rowid => &["rowid"],
            Key::Primary(columns) => columns,
        }
    }
}

/// The search indexes over the receipts, rebuilt page by page from the
/// receipts copied, never copied as rows.
pub const SEARCH_INDEXES: [&str; 2] = search::INDEXES;

/// Which rows of a table a page reads.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Whose<'a> {
    /// The rows of the mailbox `mailbox_id`: D1's side.
    Mailbox(&'a str),
    /// Every row: the mailbox's own database, which should hold its rows alone.
    Every,
}

/// Up to `limit` rows of `table`, every column (and the rowid of a rowid
/// table, as `rowid`), in key order after the key `after` (its values in key
/// order; from the start when `None`).
pub(crate) fn page(table: &MovedTable, whose: Whose<'_>, after: Option<&[Value]>, limit: i64) -> Statement {
    let name = table.name;
    let selected = match table.key {
        Key::Rowid => "rowid AS rowid, *",
        Key::Primary(_) => "*",
    };
    let key = table.key_columns().join(", ");
    let mut conditions = Vec::new();
    let mut parameters = Vec::new();
    if let Whose::Mailbox(mailbox_id) = whose {
        conditions.push(match table.owner {
            Owner::Mailbox => "mailbox_id = ?".to_string(),
            Owner::Parent { column, parent } => format!("{column} IN (SELECT id FROM {parent} WHERE mailbox_id = ?)"),
        });
        parameters.push(Value::from(mailbox_id));
    }
    if let Some(after) = after {
        // A key's leading mailbox column, fixed by the condition on the
        // mailbox, is left out of the comparison: SQLite seeks the index on
        // `mailbox_id = ? AND message_id > ?`, where it scans the mailbox's
        // rows from their first for `(mailbox_id, message_id) > (?, ?)`,
        // making each page cost more than the one before.
        let fixed =
            usize::from(matches!(whose, Whose::Mailbox(_)) && table.key_columns().first() == Some(&"mailbox_id"));
        let compared = table.key_columns().get(fixed..).unwrap_or_default().join(", ");
        let placeholders = vec!["?"; after.len().saturating_sub(fixed)].join(", ");
        conditions.push(format!("({compared}) > ({placeholders})"));
        parameters.extend(after.iter().skip(fixed).cloned());
    }
    parameters.push(limit.into());
    let filter = if conditions.is_empty() { String::new() } else { format!(" WHERE {}", conditions.join(" AND ")) };
    Statement { sql: format!("SELECT {selected} FROM {name}{filter} ORDER BY {key} LIMIT ?").into(), parameters }
}

/// Inserts into `table` the rows of `rows` (a JSON array of objects, as a
/// page read them), each of `columns` taken from the object's member of that
/// name: one parameter however many rows, within a Durable Object's hundred.
/// `columns` are identifiers (checked by the caller).
pub(crate) fn copied(table: &MovedTable, columns: &[String], rows: String) -> Statement {
    let values: Vec<String> = columns.iter().map(|column| format!("json_extract(value, '$.{column}')")).collect();
    Statement::new(format!(
        "INSERT INTO {} ({}) SELECT {} FROM json_each(?1)",
        table.name,
        columns.join(", "),
        values.join(", ")
    ))
    .bind(rows)
}

/// The statements that index the receipts copied at `rowids` (a JSON array)
/// for search, after their insert.
pub(crate) fn indexed(rowids: &str) -> [Statement; 2] {
    search::indexed_at(rowids)
}

/// Drops trigger `name`, for the one statement it is lifted for.
pub(crate) fn trigger_lifted(name: &str) -> Statement {
    Statement::new(format!("DROP TRIGGER {name}"))
}

/// Creates trigger `name` again from the text of the mailbox migration that
/// created it, so what is restored is what the schema says; `None` when no
/// migration creates it.
pub(crate) fn trigger_restored(name: &str) -> Option<Statement> {
    let opening = format!("CREATE TRIGGER {name}\n");
    MAILBOX_MIGRATIONS.iter().find_map(|migration| {
        let start = migration.sql.find(&opening)?;
        let length = migration.sql[start..].find("\nEND;")? + "\nEND".len();
        Some(Statement::new(&migration.sql[start..start + length]))
    })
}

/// Every table's position in the mailbox's database (`table_name`,
/// `last_key`, `rows`, `finished`).
pub(crate) fn positions() -> Statement {
    Statement::new("SELECT table_name, last_key, rows, finished FROM mail_moves")
}

/// A table's position as the mailbox's database records it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Position {
    /// The key of the last row copied, as JSON text; `None` before the first.
    pub(crate) last_key: Option<String>,
    pub(crate) rows: i64,
    pub(crate) finished: bool,
}

/// A guard (slot 1): `table`'s recorded position is exactly `position`
/// (`None`: nothing recorded yet), still unfinished. A page sent twice finds
/// the position it wrote, and rolls back whole.
pub(crate) fn position_is(table: &str, position: Option<&Position>) -> Statement {
    let condition = match position {
        None => Statement::new("NOT EXISTS (SELECT 1 FROM mail_moves WHERE table_name = ?)").bind(table),
        Some(position) => Statement::new(
            "EXISTS (SELECT 1 FROM mail_moves WHERE table_name = ? AND last_key IS ? AND rows = ? AND finished = 0)",
        )
        .bind(table)
        .bind(position.last_key.clone())
        .bind(position.rows),
    };
    Statement::write_guard(1, condition)
}

/// Records `table`'s position as `position`.
pub(crate) fn position_recorded(table: &str, position: &Position) -> Statement {
    Statement::new(
        "INSERT INTO mail_moves (table_name, last_key, rows, finished) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (table_name) DO UPDATE SET last_key = excluded.last_key, rows = excluded.rows, \
         finished = excluded.finished",
    )
    .bind(table)
    .bind(position.last_key.clone())
    .bind(position.rows)
    .bind(i64::from(position.finished))
}

/// The verification under way (`progress`, `saved`), if any.
pub(crate) fn checks() -> Statement {
    Statement::new("SELECT progress, saved FROM mail_move_checks WHERE id = 1")
}

/// A guard (slot 1): the verification's saves so far are `saved` (`None`:
/// none is under way), so two verifications never interleave their saves.
pub(crate) fn checks_are(saved: Option<i64>) -> Statement {
    let condition = match saved {
        None => Statement::new("NOT EXISTS (SELECT 1 FROM mail_move_checks)"),
        Some(saved) => Statement::new("EXISTS (SELECT 1 FROM mail_move_checks WHERE id = 1 AND saved = ?)").bind(saved),
    };
    Statement::write_guard(1, condition)
}

/// Keeps the verification's `progress` as its save number `saved`.
pub(crate) fn checks_saved(progress: String, saved: i64) -> Statement {
    Statement::new(
        "INSERT INTO mail_move_checks (id, progress, saved) VALUES (1, ?1, ?2) \
         ON CONFLICT (id) DO UPDATE SET progress = excluded.progress, saved = excluded.saved",
    )
    .bind(progress)
    .bind(saved)
}

/// Forgets the verification, which has concluded.
pub(crate) fn checks_cleared() -> Statement {
    Statement::new("DELETE FROM mail_move_checks")
}
