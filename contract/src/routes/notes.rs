//! Internal notes in a conversation: listed, written and deleted by those who
//! read the mailbox's mail, never sent (decision 0047).

use crate::api::{AddNote, NoteAdded, NoteDeleted, NoteList};
use crate::relation::Relation;
use crate::route::Method::{Delete, Get, Post};
use crate::route::{PathParameter, Refuses, Route, Tier};
use crate::route_id::RouteId;

use super::shared::on_mailbox;

const NOTES: &str = "/api/mailboxes/:mailboxId/threads/:threadId/notes";

pub(super) fn list_notes() -> Route {
    Route::new(RouteId::ListNotes, Get, NOTES, "list_notes")
        .summary("List a conversation's internal notes")
        .description("Lists the internal notes a mailbox's people wrote in a conversation, oldest first: who wrote each, when, what it says and whom it mentioned. Notes are the team's own words about the mail, never sent to anyone outside. The answer also lists the teammates a note here can mention, each with the handle written after @. Every reading is recorded in the audit chain.")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::ThreadId])
        .response::<NoteList>()
        .authority(on_mailbox(&[Relation::MailboxContentRead]))
        .reaches_content()
}

pub(super) fn add_note() -> Route {
    Route::new(RouteId::AddNote, Post, NOTES, "add_note")
        .summary("Write an internal note in a conversation")
        .description("Writes an internal note in a conversation, for the mailbox's people alone: it is never sent, quoted in a reply or exported as mail. Each @handle of a teammate (from list_notes) who may read the mailbox's notes tells them in their notifications, once, unless they wrote it; an @ that names nobody who may is listed back in `not_mentioned`, and nobody is told of it.")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::ThreadId])
        .request::<AddNote>()
        .response::<NoteAdded>()
        .created()
        .tier(Tier::Act)
        .refuses(const { &[Refuses::Conflict("The conversation keeps as many notes as one may.")] })
        .authority(on_mailbox(&[Relation::MailboxContentRead, Relation::SendPropose]))
}

pub(super) fn delete_note() -> Route {
    Route::new(
        RouteId::DeleteNote,
        Delete,
        "/api/mailboxes/:mailboxId/threads/:threadId/notes/:noteId",
        "delete_note",
    )
    .summary("Delete an internal note")
    .description("Deletes an internal note its caller wrote; the notifications of its mentions stay, and lead to the conversation.")
    .path_parameters(&[PathParameter::MailboxId, PathParameter::ThreadId, PathParameter::NoteId])
    .response::<NoteDeleted>()
    .tier(Tier::Act)
    .refuses(const { &[Refuses::Forbidden("The note was written by someone else: only its author deletes it.")] })
    .authority(on_mailbox(&[Relation::MailboxContentRead, Relation::SendPropose]))
}
