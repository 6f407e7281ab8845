//! The SQL of a conversation's internal notes (`mail::threads::notes`,
//! decision 0047): the notes of a conversation, one of them, writing one held
//! to the conversation's limit and deleting one; and, from the directory, the
//! people who may read a mailbox's notes, whom a note can mention.

use mailroom_contract::Relation;
use serde::Deserialize;

use crate::authz::tuples::{self, Holder};
use crate::core::storage::Statement;

/// A note, as read.
#[derive(Deserialize)]
pub(crate) struct NoteRow {
    pub id: String,
    pub thread_id: String,
    pub author: String,
    pub text: String,
    pub mentions_json: String,
    pub created_at: i64,
}

const NOTE_COLUMNS: &str = "id, thread_id, author, text, mentions_json, created_at";

/// Every note of conversation `thread_id`, oldest first.
pub(crate) fn notes_of(thread_id: &str) -> Statement {
    Statement::new(format!("SELECT {NOTE_COLUMNS} FROM thread_notes WHERE thread_id = ?1 ORDER BY created_at, id"))
        .bind(thread_id)
}

/// The note `id` of conversation `thread_id`: one row, or none.
pub(crate) fn note(thread_id: &str, id: &str) -> Statement {
    Statement::new(format!("SELECT {NOTE_COLUMNS} FROM thread_notes WHERE thread_id = ?1 AND id = ?2"))
        .bind(thread_id)
        .bind(id)
}

/// A note as it is to be written.
pub(crate) struct NoteWritten<'a> {
    pub id: &'a str,
    pub thread_id: &'a str,
    pub author: &'a str,
    pub text: &'a str,
    pub mentions_json: &'a str,
    pub created_at: i64,
}

/// Stores a new note unless its conversation keeps `limit` already: it then
/// changes no row, and the call is refused. Counted in the statement that
/// writes, so two notes at once cannot both pass.
pub(crate) fn added(note: &NoteWritten<'_>, limit: usize) -> Statement {
    Statement::new(
        "INSERT INTO thread_notes (id, thread_id, author, text, mentions_json, created_at) \
         SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE (SELECT count(*) FROM thread_notes WHERE thread_id = ?2) < ?7",
    )
    .bind(note.id)
    .bind(note.thread_id)
    .bind(note.author)
    .bind(note.text)
    .bind(note.mentions_json)
    .bind(note.created_at)
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
}

/// Deletes the note `id` of conversation `thread_id` written by `author`.
pub(crate) fn deleted(thread_id: &str, id: &str, author: &str) -> Statement {
    Statement::new("DELETE FROM thread_notes WHERE thread_id = ?1 AND id = ?2 AND author = ?3")
        .bind(thread_id)
        .bind(id)
        .bind(author)
}

/// A person who may read a mailbox's notes, as read.
#[derive(Deserialize)]
pub(crate) struct TeammateRow {
    pub id: String,
    pub name: String,
    pub email: String,
}

/// The enabled people who hold `mailbox.content.read` on `mailbox_id` (as
/// themselves or through a team), by name: those a note there can mention.
pub(crate) fn teammates(mailbox_id: &str, now_ms: i64) -> Statement {
    let holder = Holder::ActorIn { column: "p.id", now_ms };
    let (holds, mut parameters) = tuples::holds_in_sql(&holder, Relation::MailboxContentRead, "?");
    // The object's parameter follows the relation's, before the holder's.
    parameters.insert(1, mailbox_id.into());
    Statement {
        sql: format!(
            "SELECT p.id, p.name, p.email FROM people p WHERE p.disabled_at IS NULL AND {holds} ORDER BY p.name, p.id"
        )
        .into(),
        parameters,
    }
}
