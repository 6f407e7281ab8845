//! Internal notes in a conversation: what a mailbox's people write to each
//! other beside the mail, never sent and never shown to whoever cannot read
//! them, with @mentions of teammates who are told in their feed (decision
//! 0047).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Limits on notes, stated once because the contract publishes them.
pub mod note_limits {
    /// The longest note, in characters.
    pub const NOTE_CHARACTERS: usize = 5_000;
    /// How many notes one conversation keeps.
    pub const NOTES_PER_CONVERSATION: usize = 200;
    /// How many teammates one note may mention.
    pub const MENTIONS_PER_NOTE: usize = 20;
}

/// A teammate a note can mention: a person who may read the mailbox's notes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Teammate {
    /// The person's id (`usr_…`).
    pub id: String,
    /// Their name.
    pub name: String,
    /// What follows `@` to mention them: the part of their email address before
    /// the `@`, or the whole address where two teammates share that part.
    pub handle: String,
}

/// One internal note in a conversation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Note {
    /// The note's id (`nte_…`).
    pub id: String,
    /// The conversation it is in (`thr_…`).
    pub thread_id: String,
    /// Who wrote it (`usr_…` or `agt_…`).
    pub author: String,
    /// Their name, when the directory still has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author_name: Option<String>,
    /// What it says, as written, mentions included (`@ana`).
    #[schemars(length(max = note_limits::NOTE_CHARACTERS))]
    pub text: String,
    /// The people it mentions who were told (`usr_…`), in the order they were mentioned.
    #[schemars(length(max = note_limits::MENTIONS_PER_NOTE))]
    pub mentions: Vec<String>,
    /// When it was written (RFC 3339).
    pub created_at: String,
}

/// A conversation's notes, oldest first, and who they can mention.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct NoteList {
    /// Every note in the conversation, oldest first.
    #[schemars(length(max = note_limits::NOTES_PER_CONVERSATION))]
    pub notes: Vec<Note>,
    /// The people a note here can mention: those who may read the mailbox's
    /// notes, by name.
    pub teammates: Vec<Teammate>,
    /// How many notes one conversation keeps.
    pub limit: usize,
}

/// A new note.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddNote {
    /// What it says: 1 to `note_limits::NOTE_CHARACTERS` characters. `@handle`
    /// (a handle from list_notes' `teammates`) mentions a teammate, who is told
    /// in their notifications.
    pub text: String,
}

/// A note written, with what became of its mentions.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct NoteAdded {
    /// The note as kept.
    pub note: Note,
    /// Each `@…` in the text that names nobody who may read this mailbox's
    /// notes, as written: nobody was told of it.
    pub not_mentioned: Vec<String>,
}

/// A note deleted.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct NoteDeleted {
    /// The note's id (`nte_…`).
    pub id: String,
}
