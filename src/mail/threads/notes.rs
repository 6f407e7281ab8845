//! Internal notes in a conversation (decision 0047): what a mailbox's people
//! write to each other beside its mail, kept where the conversation is (D1,
//! or the mailbox's own database), never sent, quoted or exported as mail.
//! This module owns the three note routes, how a note's `@handle` mentions
//! are read against the people who may read the mailbox's notes, the
//! notification each mentioned person is given in the same commit, and the
//! refusals; its SQL is in `store::notes`.
//!
//! A mention's handle is the part of a person's email address before the
//! `@` (the whole address where two teammates share that part): an address is
//! the directory's one unique name for a person, and its first part is what
//! people already call each other by; names have spaces and repeat.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{
    AddNote, Note, NoteAdded, NoteDeleted, NoteList, NotificationKind, Teammate, note_limits,
};

use super::routes::{TheThread, the_thread};
use crate::core::context::Context;
use crate::core::events::Topic;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of, new_id};
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;
use crate::core::storage::QueryResult;
use crate::core::text;
use crate::core::time::rfc3339;
use crate::mail::location;
use crate::mail::names::Names;
use crate::mail::store::notes::{self as store, NoteRow, NoteWritten, TeammateRow};
use crate::notifications::{self, Addressee, Notice};

/// Why a call about notes was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoteError {
    /// No note of the conversation has the id.
    NoSuchNote { id: String },
    /// The note was written by someone else.
    NotTheAuthor { id: String },
    /// The conversation keeps as many notes as one may.
    TooMany,
}

impl From<NoteError> for Refusal {
    fn from(error: NoteError) -> Refusal {
        match error {
            NoteError::NoSuchNote { id } => Refusal::new(
                404,
                "not_found",
                format!("There is no note {id} in this conversation."),
                "No note of this conversation has this id; it may have been deleted.",
                "List the conversation's notes with list_notes and use an id from there.",
            ),
            NoteError::NotTheAuthor { id } => Refusal::new(
                403,
                "not_the_author",
                format!("The note {id} was written by someone else."),
                "Only a note's author deletes it: a note is what its author said, and the team reads it as theirs.",
                "Ask its author to delete it, or write a note of your own that corrects it.",
            ),
            NoteError::TooMany => Refusal::new(
                409,
                "too_many_notes",
                "The note was not written: the conversation keeps as many notes as one may.",
                format!("A conversation keeps at most {} notes.", note_limits::NOTES_PER_CONVERSATION),
                "Delete a note of yours that is no longer needed (delete_note), then write this one.",
            ),
        }
    }
}

/// The `@handle`s written in `text`, lower-cased, each once, in order. An `@`
/// starts one only at the start or after a character that cannot be in an
/// address, so `ana@customer.example` in a sentence mentions nobody; a handle
/// may be a whole address (`@ana@org.example`); a full stop ending a
/// sentence is not part of it.
pub fn mentions_in(text: &str) -> Vec<String> {
    let in_local = |character: char| character.is_ascii_alphanumeric() || "._+-".contains(character);
    let in_domain = |character: char| character.is_ascii_alphanumeric() || ".-".contains(character);
    let characters: Vec<char> = text.chars().collect();
    let mut found: Vec<String> = Vec::new();
    let mut index = 0;
    while index < characters.len() {
        let starts = characters[index] == '@'
            && (index == 0 || !(in_local(characters[index - 1]) || characters[index - 1] == '@'));
        if !starts {
            index += 1;
            continue;
        }
        let mut end = index + 1;
        while end < characters.len() && in_local(characters[end]) {
            end += 1;
        }
        if end > index + 1 && end + 1 < characters.len() && characters[end] == '@' && in_domain(characters[end + 1]) {
            end += 1;
            while end < characters.len() && in_domain(characters[end]) {
                end += 1;
            }
        }
        let handle: String = characters[index + 1..end].iter().collect::<String>().trim_end_matches('.').to_string();
        let handle = handle.to_lowercase();
        if !handle.is_empty() && !found.contains(&handle) {
            found.push(handle);
        }
        index = end.max(index + 1);
    }
    found
}

/// The people who may read the mailbox's notes, each with their handle: the
/// first part of their address, or all of it where another shares that part.
fn teammates(context: &Context<'_>, result: &QueryResult) -> Result<Vec<(Teammate, String)>, Refusal> {
    let rows: Vec<TeammateRow> = result.decode_all().map_err(|error| context.internal(error))?;
    let local = |email: &str| email.split('@').next().unwrap_or(email).to_lowercase();
    let shared = |email: &str| rows.iter().filter(|other| local(&other.email) == local(email)).count() > 1;
    Ok(rows
        .iter()
        .map(|row| {
            let handle = if shared(&row.email) { row.email.to_lowercase() } else { local(&row.email) };
            (Teammate { id: row.id.clone(), name: row.name.clone(), handle }, row.email.to_lowercase())
        })
        .collect())
}

impl NoteRow {
    fn present(self, names: &Names) -> Note {
        Note {
            author_name: names.of_id(&self.author),
            mentions: serde_json::from_str(&self.mentions_json).unwrap_or_default(),
            id: self.id,
            thread_id: self.thread_id,
            author: self.author,
            text: self.text,
            created_at: rfc3339(self.created_at),
        }
    }
}

fn caller_id(context: &Context<'_>) -> Result<String, Refusal> {
    context.caller().actor_id().map(str::to_string).ok_or_else(Refusal::internal)
}

/// `GET /api/mailboxes/:mailboxId/threads/:threadId/notes`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let thread_id = context.path(PathParameter::ThreadId)?.to_string();
    let directory = vec![store::teammates(&mailbox_id, context.now_ms())];
    let TheThread { directory, mail, .. } =
        the_thread(context, false, directory, vec![store::notes_of(&thread_id)]).await?;
    let teammates: Vec<Teammate> = teammates(context, &directory[0])?.into_iter().map(|(mate, _)| mate).collect();
    let rows: Vec<NoteRow> = mail[0].decode_all().map_err(|error| context.internal(error))?;
    context.audit_detail(serde_json::json!({ "mailbox": mailbox_id, "notes": rows.len() }));
    // Authors' names from the directory, read as the reading is recorded.
    let names = match rows.is_empty() {
        true => Names::default(),
        false => {
            let wanted = Names::of(rows.iter().map(|row| row.author.as_str()));
            match context.read_as_it_commits(vec![wanted]).await?.first() {
                Some(names) => Names::read(names).map_err(|error| context.internal(error))?,
                None => Names::default(),
            }
        }
    };
    let notes = rows.into_iter().map(|row| row.present(&names)).collect();
    Ok(context.json(&NoteList { notes, teammates, limit: note_limits::NOTES_PER_CONVERSATION }))
}

/// `POST /api/mailboxes/:mailboxId/threads/:threadId/notes`.
pub async fn add(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: AddNote = context.body()?;
    text::refuse_direction_controls("text", &request.text)?;
    let written = request.text.trim_end();
    if written.trim().is_empty() || written.chars().count() > note_limits::NOTE_CHARACTERS {
        let most = note_limits::NOTE_CHARACTERS;
        return Err(RequestError::wrong_field("text", format!("1 to {most} characters, not only blanks")));
    }
    let handles = mentions_in(written);
    if handles.len() > note_limits::MENTIONS_PER_NOTE {
        let most = note_limits::MENTIONS_PER_NOTE;
        return Err(RequestError::wrong_field("text", format!("a note mentioning at most {most} teammates")));
    }
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let author = caller_id(context)?;
    let directory = vec![store::teammates(&mailbox_id, context.now_ms())];
    let TheThread { store: mail, row, directory, .. } = the_thread(context, false, directory, Vec::new()).await?;
    let teammates = teammates(context, &directory[0])?;
    // Each handle names at most one teammate; the author is not told of their own note.
    let mut mentioned: Vec<String> = Vec::new();
    let mut not_mentioned: Vec<String> = Vec::new();
    for handle in handles {
        match teammates.iter().find(|(mate, email)| mate.handle == handle || *email == handle) {
            Some((mate, _)) if mate.id == author || mentioned.contains(&mate.id) => {}
            Some((mate, _)) => mentioned.push(mate.id.clone()),
            None => not_mentioned.push(format!("@{handle}")),
        }
    }
    let id = new_id(IdKind::Note, context.platform());
    let mentions_json = serde_json::to_string(&mentioned).map_err(|error| context.internal(error))?;
    let note = NoteWritten {
        id: &id,
        thread_id: &row.id,
        author: &author,
        text: written,
        mentions_json: &mentions_json,
        created_at: context.now_ms(),
    };
    location::write_changing_one_row(
        context,
        mail,
        &mailbox_id,
        store::added(&note, note_limits::NOTES_PER_CONVERSATION),
        NoteError::TooMany,
    )?;
    for person in &mentioned {
        let notice = Notice {
            kind: NotificationKind::NoteMention,
            object_id: &row.id,
            mailbox_id: Some(&mailbox_id),
            actor: Some(&author),
            title: &row.subject,
            detail: None,
        };
        let notice = notifications::notify(&notice, Addressee::PersonOf(person), context.platform());
        location::write_after(context, mail, notice);
        if let Some(topic) = Topic::of_party(person) {
            context.tell_also(topic);
        }
    }
    // Ids only: what a note says is never in the audit chain.
    context.audit_detail(serde_json::json!({ "mailbox": mailbox_id, "note": id, "mentioned": mentioned }));
    let author_name = teammates.iter().find(|(mate, _)| mate.id == author).map(|(mate, _)| mate.name.clone());
    let note = Note {
        id: id.clone(),
        thread_id: row.id.clone(),
        author: author.clone(),
        author_name,
        text: written.to_string(),
        mentions: mentioned,
        created_at: rfc3339(note.created_at),
    };
    Ok(context.json(&NoteAdded { note, not_mentioned }))
}

/// `DELETE /api/mailboxes/:mailboxId/threads/:threadId/notes/:noteId`.
pub async fn delete(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let thread_id = context.path(PathParameter::ThreadId)?.to_string();
    let id = context.path(PathParameter::NoteId)?.to_string();
    if !is_id_of(&id, IdKind::Note) {
        return Err(NoteError::NoSuchNote { id }.into());
    }
    let author = caller_id(context)?;
    let TheThread { store: mail, mail: found, .. } =
        the_thread(context, false, Vec::new(), vec![store::note(&thread_id, &id)]).await?;
    let rows: Vec<NoteRow> = found[0].decode_all().map_err(|error| context.internal(error))?;
    let Some(note) = rows.into_iter().next() else {
        return Err(NoteError::NoSuchNote { id }.into());
    };
    if note.author != author {
        return Err(NoteError::NotTheAuthor { id }.into());
    }
    location::write_changing_one_row(
        context,
        mail,
        &mailbox_id,
        store::deleted(&thread_id, &id, &author),
        NoteError::NoSuchNote { id: id.clone() },
    )?;
    context.audit_detail(serde_json::json!({ "mailbox": mailbox_id, "note": id }));
    Ok(context.json(&NoteDeleted { id }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mention_is_an_at_sign_where_an_address_could_not_be_going_on() {
        assert_eq!(mentions_in("@ana can you look? cc @Ben."), ["ana", "ben"]);
        assert_eq!(mentions_in("write to ana@customer.example"), Vec::<String>::new());
        assert_eq!(mentions_in("(@ana.b) and @ana.b again, @dora@org.example."), ["ana.b", "dora@org.example"]);
        assert_eq!(mentions_in("@ @. @@x"), Vec::<String>::new());
    }
}
