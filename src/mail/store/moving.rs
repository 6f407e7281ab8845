//! The SQL of a mailbox's move out of D1 into its own database (decision
//! 0040, `mail::moving`): the tables of mail that move, in the order their
//! references allow, each with how one mailbox's rows are chosen and the key
//! they are paged by (`MOVED_TABLES`); and the statements that read a page of
//! them, write it into the mailbox's database with its search index rows and
//! the position it reached, behind a guard on the position it started from,
//! and keep a verification's progress there.

use super::search;
use crate::core::mailbox_storage::{MAILBOX_MIGRATIONS, spans_stores};
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
    /// Its primary key's columns: what names a row whatever its key (a rowid
    /// table's rowid can name another row after one was deleted), and what a
    /// replayed row replaces by.
    pub identity: &'static [&'static str],
    /// Columns of other moved tables that refer to its `id` without being
    /// its rows (a send answering a receipt): a replay that removes the row
    /// unlinks them first, as the route that removed it in D1 did.
    pub referred_to_by: &'static [(&'static str, &'static str)],
}

/// Every table of mail that moves, parents before the rows that reference
/// them: receipts before the sends that answer them and the butler runs on
/// them, conversations before their Message-IDs, reads, labels and notes, sends
/// before their versions and files. `tests/native/moving_mail.rs` holds this
/// list to the mailbox's schema: every table of mail is here, rebuilt (the
/// search indexes) or named in `NOT_MOVED`, and each key is the table's own.
pub const MOVED_TABLES: &[MovedTable] = &[
    table("receipts", Owner::Mailbox, Key::Rowid).named_by(ID).referred_to_by(&[("sends", "reply_to")]).searchable(),
    table("mail_threads", Owner::Mailbox, Key::Rowid).named_by(ID),
    table("mail_thread_message_ids", Owner::Mailbox, Key::Primary(&["mailbox_id", "message_id"])),
    table("mail_thread_reads", THREAD, Key::Primary(&["thread_id", "reader"])),
    table("thread_labels", THREAD, Key::Primary(&["thread_id", "label"])),
    table("thread_notes", THREAD, Key::Primary(&["id"])),
    table("sends", Owner::Mailbox, Key::Rowid).named_by(ID),
    table("send_versions", SEND, Key::Rowid).named_by(&["send_id", "version"]),
    table("send_attachments", SEND, Key::Primary(&["send_id", "position"])).lifting(&[
        "send_attachments_change_only_on_drafts_insert",
        "send_attachments_change_only_on_drafts_update",
        "send_attachments_change_only_on_drafts_delete",
    ]),
    table(
        "butler_runs",
        Owner::Parent { column: "receipt_id", parent: "receipts" },
        Key::Primary(&["butler_id", "receipt_id"]),
    ),
];

const ID: &[&str] = &["id"];

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
    let identity = match key {
        Key::Rowid => &[],
        Key::Primary(columns) => columns,
    };
    MovedTable { name, owner, key, searchable: false, lifted_triggers: &[], identity, referred_to_by: &[] }
}

impl MovedTable {
    const fn searchable(self) -> MovedTable {
        MovedTable { searchable: true, ..self }
    }

    const fn lifting(self, lifted_triggers: &'static [&'static str]) -> MovedTable {
        MovedTable { lifted_triggers, ..self }
    }

    const fn named_by(self, identity: &'static [&'static str]) -> MovedTable {
        MovedTable { identity, ..self }
    }

    const fn referred_to_by(self, referred_to_by: &'static [(&'static str, &'static str)]) -> MovedTable {
        MovedTable { referred_to_by, ..self }
    }

    /// The moved tables whose rows are this one's (`Owner::Parent`), with
    /// the column naming it.
    pub fn children(&self) -> impl Iterator<Item = (&'static MovedTable, &'static str)> {
        let name = self.name;
        MOVED_TABLES.iter().filter_map(move |child| match child.owner {
            Owner::Parent { column, parent } if parent == name => Some((child, column)),
            _ => None,
        })
    }

    /// The condition, on the table's rows as `t`, that they are mailbox
    /// `?1`'s.
    fn whose(&self) -> String {
        match self.owner {
            Owner::Mailbox => "t.mailbox_id = ?1".to_string(),
            Owner::Parent { column, parent } => {
                format!("t.{column} IN (SELECT id FROM {parent} WHERE mailbox_id = ?1)")
            }
        }
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
        // `?1`: the placeholders after it number on from it.
        conditions.push(table.whose());
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
    Statement { sql: format!("SELECT {selected} FROM {name} t{filter} ORDER BY {key} LIMIT ?").into(), parameters }
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

/// Creates trigger `name` again from the text of the latest mailbox
/// migration that created it, so what is restored is what the schema says; `None` when no
/// migration creates it.
pub(crate) fn trigger_restored(name: &str) -> Option<Statement> {
    let opening = format!("CREATE TRIGGER {name}\n");
    // The last migration that creates it: a later one may have made it anew.
    MAILBOX_MIGRATIONS.iter().rev().find_map(|migration| {
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

/// Names mailbox `mailbox_id` as having D1's copy of its moved mail removed,
/// for the transaction this opens: D1 refuses any other write to a moved
/// mailbox's mail (migration 0035).
pub(crate) fn emptying_begins(mailbox_id: &str) -> Statement {
    Statement::new("INSERT INTO mail_emptying (mailbox_id) VALUES (?1)").bind(mailbox_id)
}

/// The statements removing up to `?2` rows of `table` that are mailbox `?1`'s
/// from D1, in key order, once its mail moved (inside `emptying_begins`): a
/// receipt's index entries go first, and an original its receipt refers to
/// under a key that does not name the mailbox is kept in mind for it
/// (`originals_kept_for`), since only its own database can say from now on
/// whether it still refers to it.
pub(crate) fn emptied(table: &MovedTable, mailbox_id: &str, limit: i64) -> Vec<Statement> {
    let name = table.name;
    let key = table.key_columns().join(", ");
    let page = format!("SELECT {key} FROM {name} t WHERE {} ORDER BY {key} LIMIT ?2", table.whose());
    let mut statements = Vec::new();
    if table.searchable {
        statements.push(spans_stores(Statement::new(format!(
            "INSERT INTO originals_kept_for (raw_key, mailbox_id) \
             SELECT raw_key, mailbox_id FROM receipts WHERE rowid IN ({page}) \
             AND raw_key NOT LIKE 'raw/' || mailbox_id || '/%' ON CONFLICT DO NOTHING"
        ))));
        statements.extend(search::unindexed_in(&page));
    }
    statements.push(Statement::new(format!("DELETE FROM {name} WHERE ({key}) IN ({page})")));
    statements.into_iter().map(|statement| statement.bind(mailbox_id).bind(limit)).collect()
}

/// Whether D1 holds any row of `table` that is mailbox `mailbox_id`'s:
/// `held`.
pub(crate) fn holds_any(table: &MovedTable, mailbox_id: &str) -> Statement {
    Statement::new(format!("SELECT EXISTS (SELECT 1 FROM {} t WHERE {}) AS held", table.name, table.whose()))
        .bind(mailbox_id)
}

/// D1 holds nothing more of mailbox `mailbox_id`'s moved mail: its move is
/// over.
pub(crate) fn copy_removed(mailbox_id: &str) -> Statement {
    Statement::new("UPDATE mailboxes SET mail_moving_since = NULL WHERE id = ?1 AND mail_moved_at IS NOT NULL")
        .bind(mailbox_id)
}

/// Ends what `emptying_begins` opened, in the same transaction.
pub(crate) fn emptying_ends(mailbox_id: &str) -> Statement {
    Statement::new("DELETE FROM mail_emptying WHERE mailbox_id = ?1").bind(mailbox_id)
}

/// Where mailbox `mailbox_id`'s move stands in D1: `mail_moving_since` and
/// `mail_moved_at`.
pub(crate) fn move_state(mailbox_id: &str) -> Statement {
    Statement::new("SELECT mail_moving_since, mail_moved_at FROM mailboxes WHERE id = ?1").bind(mailbox_id)
}

/// Begins mailbox `mailbox_id`'s move at `now_ms`: from this commit on, D1
/// notes every write to its mail (migration 0035), so the copy that starts
/// after it misses nothing.
pub(crate) fn move_begun(mailbox_id: &str, now_ms: i64) -> Statement {
    Statement::new(
        "UPDATE mailboxes SET mail_moving_since = ?2 WHERE id = ?1 AND mail_moving_since IS NULL AND mail_moved_at IS NULL",
    )
    .bind(mailbox_id)
    .bind(now_ms)
}

/// The first mailbox D1 still holds mail of (still in D1, or moved and its
/// copy not yet removed), one whose move began first: `id`, with where its
/// move stands as `move_state` reads it; or no row.
pub(crate) fn next_to_move() -> Statement {
    Statement::new(
        "SELECT id, mail_moving_since, mail_moved_at FROM mailboxes \
         WHERE mail_moved_at IS NULL OR mail_moving_since IS NOT NULL \
         ORDER BY mail_moving_since IS NULL, mail_moving_since, id LIMIT 1",
    )
}

/// The column names a noted row's note is read under, beside the row's own.
pub(crate) const NOTE_KEY: &str = "change_key";
pub(crate) const NOTE_SEQ: &str = "change_seq";

/// Up to `limit` of `table`'s pending notes for mailbox `mailbox_id`, in key
/// order, each with D1's row at its key now (every column NULL when there
/// is none): the note's key (as D1 wrote it) and count as `NOTE_KEY` and
/// `NOTE_SEQ`.
pub(crate) fn noted(table: &MovedTable, mailbox_id: &str, limit: i64) -> Statement {
    let name = table.name;
    let selected = match table.key {
        Key::Rowid => "t.rowid AS rowid, t.*",
        Key::Primary(_) => "t.*",
    };
    let at_key: Vec<String> = table
        .key_columns()
        .iter()
        .enumerate()
        .map(|(position, column)| format!("t.{column} = json_extract(c.key, '$[{position}]')"))
        .collect();
    // D1's alone: only D1 notes writes, and only of mail it still holds.
    spans_stores(Statement::new(format!(
        "SELECT c.key AS {NOTE_KEY}, c.seq AS {NOTE_SEQ}, {selected} \
         FROM (SELECT key, seq FROM mail_changes WHERE mailbox_id = ?1 AND table_name = '{name}' AND seq > replayed \
               ORDER BY key LIMIT ?2) c \
         LEFT JOIN {name} t ON {} AND {}",
        at_key.join(" AND "),
        table.whose()
    )))
    .bind(mailbox_id)
    .bind(limit)
}

/// Marks the notes of `notes` (a JSON array of `[table, key, seq]`) replayed,
/// each only at the count it was read at: a write since keeps it pending.
pub(crate) fn notes_replayed(mailbox_id: &str, notes: String) -> Statement {
    Statement::new(
        "UPDATE mail_changes SET replayed = seq WHERE mailbox_id = ?1 AND (table_name, key, seq) IN \
         (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') \
          FROM json_each(?2))",
    )
    .bind(mailbox_id)
    .bind(notes)
}

/// A guard (slot 1): no note of mailbox `mailbox_id` is pending.
pub(crate) fn nothing_pending(mailbox_id: &str) -> Statement {
    Statement::write_guard(
        1,
        Statement::new("NOT EXISTS (SELECT 1 FROM mail_changes WHERE mailbox_id = ?1 AND seq > replayed)")
            .bind(mailbox_id),
    )
}

/// Forgets mailbox `mailbox_id`'s notes, every one replayed.
pub(crate) fn notes_forgotten(mailbox_id: &str) -> Statement {
    Statement::new("DELETE FROM mail_changes WHERE mailbox_id = ?1").bind(mailbox_id)
}

/// Which of `keys` (a JSON array of keys, each an array of the key's values)
/// of `table` have a pending note for mailbox `mailbox_id`: `key`, as D1's
/// triggers write it.
pub(crate) fn pending_among(table: &MovedTable, mailbox_id: &str, keys: String) -> Statement {
    let parts: Vec<String> =
        (0..table.key_columns().len()).map(|position| format!("json_extract(value, '$[{position}]')")).collect();
    Statement::new(format!(
        "SELECT key FROM mail_changes WHERE mailbox_id = ?1 AND table_name = '{}' AND seq > replayed \
         AND key IN (SELECT json_array({}) FROM json_each(?2))",
        table.name,
        parts.join(", ")
    ))
    .bind(mailbox_id)
    .bind(keys)
}

/// How many replays the mailbox's database has taken (`replays`; no row
/// before the first).
pub(crate) fn replays() -> Statement {
    Statement::new("SELECT replays FROM mail_move_replays WHERE id = 1")
}

/// A guard (slot 1): the mailbox's database has taken `replays` replays.
pub(crate) fn replays_are(replays: i64) -> Statement {
    Statement::write_guard(
        1,
        Statement::new("coalesce((SELECT replays FROM mail_move_replays WHERE id = 1), 0) = ?").bind(replays),
    )
}

/// Records that the mailbox's database has taken `replays` replays.
pub(crate) fn replays_counted(replays: i64) -> Statement {
    Statement::new(
        "INSERT INTO mail_move_replays (id, replays) VALUES (1, ?1) \
         ON CONFLICT (id) DO UPDATE SET replays = excluded.replays",
    )
    .bind(replays)
}

/// The condition, on `table`'s rows as `t`, that a replay removes them:
/// their key is among `?1`'s notes (a JSON array of `{"key": [...],
/// "kept": [...] or null}`), and D1 keeps no row named as they are there.
fn removed_by_replay(table: &MovedTable) -> String {
    let key = table.key_columns();
    let parts = |path: &str, count: usize| -> String {
        (0..count).map(|position| format!("json_extract(value, '$.{path}[{position}]')")).collect::<Vec<_>>().join(", ")
    };
    let noted_key = format!("({}) IN (SELECT {} FROM json_each(?1))", columns_of_t(key), parts("key", key.len()));
    let same_key: Vec<String> = key
        .iter()
        .enumerate()
        .map(|(position, column)| format!("json_extract(value, '$.key[{position}]') = t.{column}"))
        .collect();
    format!(
        "{noted_key} AND ({}) IS NOT (SELECT {} FROM json_each(?1) WHERE {})",
        columns_of_t(table.identity),
        parts("kept", table.identity.len()),
        same_key.join(" AND ")
    )
}

fn columns_of_t(columns: &[&str]) -> String {
    columns.iter().map(|column| format!("t.{column}")).collect::<Vec<_>>().join(", ")
}

/// The statements that remove from the mailbox's database the rows of
/// `table` a replay's notes (`notes`, as `removed_by_replay` reads them) say
/// D1 no longer holds: first what refers to them by id (unlinked) and their
/// own rows in other tables (removed), then them.
pub(crate) fn removed(table: &MovedTable, notes: &str) -> Vec<Statement> {
    let condition = removed_by_replay(table);
    let mut statements = Vec::new();
    for (other, column) in table.referred_to_by {
        statements.push(Statement::new(format!(
            "UPDATE {other} SET {column} = NULL WHERE {column} IN (SELECT t.id FROM {} t WHERE {condition})",
            table.name
        )));
    }
    for (child, column) in table.children() {
        statements.push(Statement::new(format!(
            "DELETE FROM {} WHERE {column} IN (SELECT t.id FROM {} t WHERE {condition})",
            child.name, table.name
        )));
    }
    statements.push(Statement::new(format!("DELETE FROM {} AS t WHERE {condition}", table.name)));
    statements.into_iter().map(|statement| statement.bind(notes.to_string())).collect()
}

/// Writes `rows` (a JSON array of objects, as D1 answered them) into `table`
/// in the mailbox's database, each replacing the row named as it is there:
/// `columns` are identifiers (checked by the caller).
pub(crate) fn replaced(table: &MovedTable, columns: &[String], rows: String) -> Statement {
    let values: Vec<String> = columns.iter().map(|column| format!("json_extract(value, '$.{column}')")).collect();
    let changed: Vec<String> = columns
        .iter()
        .filter(|column| column.as_str() != "rowid" && !table.identity.contains(&column.as_str()))
        .map(|column| format!("{column} = excluded.{column}"))
        .collect();
    let on_conflict =
        if changed.is_empty() { "NOTHING".to_string() } else { format!("UPDATE SET {}", changed.join(", ")) };
    Statement::new(format!(
        "INSERT INTO {} ({}) SELECT {} FROM json_each(?1) WHERE true ON CONFLICT ({}) DO {on_conflict}",
        table.name,
        columns.join(", "),
        values.join(", "),
        table.identity.join(", ")
    ))
    .bind(rows)
}

/// The statements that take the receipts at `rowids` (a JSON array) out of
/// the search indexes, with the values they were indexed with, before a
/// replay replaces or removes them.
pub(crate) fn unindexed(rowids: &str) -> [Statement; 2] {
    search::unindexed_at(rowids)
}
