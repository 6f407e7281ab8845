//! Replaying into a mailbox's own database the writes D1 noted while the
//! mailbox's mail was moving (migration 0035): a round reads a page of the
//! pending notes with D1's row at each noted key now, and writes those rows
//! there in one transaction, in place of what it holds at those keys (or
//! removes what D1 no longer holds), with the search index entries of the
//! receipts among them.
//!
//! A round is written behind a guard that the database has taken exactly the
//! replays it had before the round read D1, and counts itself: a round that
//! read D1 before another round wrote rolls back instead of writing older
//! rows over newer ones. Its notes are marked replayed in D1 afterwards, each
//! only at the count it was read at, so a write to a row after the round
//! read it leaves the note pending for the next.

use serde_json::{Map, Value as Json};

use super::rows::{Mailbox, PAGE_BYTES, is_identifier, whole};
use crate::core::background::{Background, BackgroundError};
use crate::core::storage::{Row, Statement, StorageError};
use crate::mail::store::moving::{self as store, Key, MOVED_TABLES, MovedTable, NOTE_KEY, NOTE_SEQ};

/// The most notes of one table a round reads.
pub const NOTES_PER_ROUND: i64 = 100;

/// What one round replayed.
pub(super) struct Round {
    /// The notes it wrote (a JSON array of `[table, key, seq]`), for D1 to
    /// mark replayed once the mailbox's database holds their rows.
    pub notes: String,
    pub count: usize,
    /// It read every note pending when it read D1.
    pub complete: bool,
}

/// One table's notes as D1 answered them.
struct Noted<'a> {
    table: &'a MovedTable,
    notes: Vec<Note>,
}

/// A pending note, with D1's row at its key now (`None`: there is none).
struct Note {
    key_text: String,
    seq: i64,
    key: Vec<Json>,
    row: Option<Map<String, Json>>,
}

/// Replays one page of mailbox `mailbox_id`'s pending notes into its own
/// database, which has taken `replays` replays: two round trips (D1's read,
/// the database's write), one when nothing is pending. Answers the notes
/// written, still to be marked replayed in D1.
pub(super) async fn replay_round(
    work: &Background<'_>,
    mailbox: &Mailbox<'_, '_>,
    mailbox_id: &str,
    replays: i64,
) -> Result<Round, BackgroundError> {
    let reads = MOVED_TABLES.iter().map(|table| store::noted(table, mailbox_id, NOTES_PER_ROUND)).collect();
    let answers = work.database().execute(reads).await?;
    let mut complete = true;
    let mut bytes = 0;
    let mut noted = Vec::new();
    for (table, answer) in MOVED_TABLES.iter().zip(answers) {
        if answer.rows.len() as i64 >= NOTES_PER_ROUND {
            complete = false;
        }
        let mut notes = Vec::new();
        for row in answer.rows {
            let note = note_of(table, row)?;
            let size = note.row.as_ref().map_or(0, |row| Json::Object(row.clone()).to_string().len());
            if bytes > 0 && bytes + size > PAGE_BYTES {
                complete = false;
                break;
            }
            bytes += size.max(1);
            notes.push(note);
        }
        if !notes.is_empty() {
            noted.push(Noted { table, notes });
        }
    }
    let count = noted.iter().map(|noted| noted.notes.len()).sum();
    let marks: Vec<Json> = noted
        .iter()
        .flat_map(|noted| noted.notes.iter().map(|note| serde_json::json!([noted.table.name, note.key_text, note.seq])))
        .collect();
    if count > 0 {
        mailbox.execute_all(written(&noted, replays)?).await?;
    }
    Ok(Round { notes: Json::Array(marks).to_string(), count, complete })
}

fn note_of(table: &MovedTable, row: Row) -> Result<Note, StorageError> {
    let mut columns = row.0;
    let key_text = match columns.remove(NOTE_KEY) {
        Some(Json::String(key)) => key,
        other => return Err(StorageError::Decode(format!("a note of {} has the key {other:?}", table.name))),
    };
    let seq = columns
        .remove(NOTE_SEQ)
        .and_then(|seq| whole(&seq).as_i64())
        .ok_or_else(|| StorageError::Decode(format!("a note of {} has no count", table.name)))?;
    let key: Vec<Json> =
        serde_json::from_str(&key_text).map_err(|error| StorageError::Decode(format!("a note's key: {error}")))?;
    let present =
        table.key_columns().first().and_then(|column| columns.get(*column)).is_some_and(|value| !value.is_null());
    let row = present.then(|| columns.into_iter().map(|(column, value)| (column, whole(&value))).collect());
    Ok(Note { key_text, seq, key, row })
}

/// The batch writing `noted` into the mailbox's database: the guard on its
/// replays, the triggers a replayed row would meet lifted, the receipts'
/// index entries taken out, what D1 no longer holds removed (children before
/// parents), D1's rows written (parents before children), the receipts
/// indexed again, the triggers restored, and the replay counted.
fn written(noted: &[Noted<'_>], replays: i64) -> Result<Vec<Statement>, StorageError> {
    let mut batch = vec![store::replays_are(replays)];
    let lifted: Vec<&str> = noted.iter().flat_map(|noted| noted.table.lifted_triggers.iter().copied()).collect();
    batch.extend(lifted.iter().map(|name| store::trigger_lifted(name)));
    let searchable = noted.iter().find(|noted| noted.table.searchable);
    let rowids = |present_only: bool| -> String {
        let rowids: Vec<Json> = searchable
            .map(|noted| {
                noted
                    .notes
                    .iter()
                    .filter(|note| !present_only || note.row.is_some())
                    .filter_map(|note| note.key.first().cloned())
                    .collect()
            })
            .unwrap_or_default();
        Json::Array(rowids).to_string()
    };
    if searchable.is_some() {
        batch.extend(store::unindexed(&rowids(false)));
    }
    for noted in noted.iter().rev() {
        let removals: Vec<Json> = noted
            .notes
            .iter()
            .map(|note| {
                let kept = note.row.as_ref().map(|row| {
                    Json::Array(
                        noted
                            .table
                            .identity
                            .iter()
                            .map(|column| row.get(*column).cloned().unwrap_or(Json::Null))
                            .collect(),
                    )
                });
                serde_json::json!({ "key": note.key, "kept": kept })
            })
            .collect();
        batch.extend(store::removed(noted.table, &Json::Array(removals).to_string()));
    }
    for noted in noted {
        let rows: Vec<&Map<String, Json>> = noted.notes.iter().filter_map(|note| note.row.as_ref()).collect();
        let Some(first) = rows.first() else { continue };
        let columns: Vec<String> = first.keys().cloned().collect();
        if let Some(column) = columns.iter().find(|column| !is_identifier(column)) {
            return Err(StorageError::Decode(format!("{} has a column named {column:?}", noted.table.name)));
        }
        if noted.table.key == Key::Rowid && !columns.iter().any(|column| column == "rowid") {
            return Err(StorageError::Decode(format!("{}'s rows came without their rowid", noted.table.name)));
        }
        let json = serde_json::to_string(&rows).map_err(|error| StorageError::Decode(error.to_string()))?;
        batch.push(store::replaced(noted.table, &columns, json));
    }
    if searchable.is_some() {
        batch.extend(store::indexed(&rowids(true)));
    }
    for name in lifted {
        let restored = store::trigger_restored(name)
            .ok_or_else(|| StorageError::Backend(format!("no mailbox migration creates trigger {name}")))?;
        batch.push(restored);
    }
    batch.push(store::replays_counted(replays + 1));
    Ok(batch)
}
