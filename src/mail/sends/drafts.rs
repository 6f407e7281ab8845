//! The author's side of a send: drafting it (new, or in reply to a received
//! message), editing and deleting the draft, submitting it for a second
//! person's decision, and taking a submission back.
//!
//! A reply is filled as a mail client fills it (decisions 0020, 0029): to the
//! message's Reply-To unless that is this mailbox itself, else its sender;
//! with everyone else it went to in Cc for a reply to all, even past what a
//! send may have (the draft holds them, says how many to remove, and is
//! submitted only once trimmed); threaded by RFC 5322 §3.6.4's References.

use mailroom_contract::api::limits::OUTBOUND_MESSAGE_BYTES;
use mailroom_contract::api::{CreateDraft, EmailAddress, NotificationKind, SendState, UpdateDraft};
use mailroom_contract::{PathParameter, Relation};

use super::errors::{Oversized, SendError};
use super::limits::{
    MAXIMUM_DRAFT_RECIPIENTS, MAXIMUM_RECIPIENTS, MAXIMUM_REFERENCES, MAXIMUM_SUBJECT_CHARACTERS, MAXIMUM_TEXT_BYTES,
};
use super::record::{Asked, TheSend, answer, caller_id, json_list, list_of, the_send};
use super::store::{self, MailboxAndWriter, NewSend, ReplyTarget, SendRow, no_one};
use super::version::Submission;
use crate::authz::holder_of;
use crate::authz::tuples;
use crate::core::addresses;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, new_id};
use crate::core::platform::Platform;
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Statement};
use crate::mail::threads::linking;
use crate::mail::{location, message_ids, unverified_reads};
use crate::notifications::{self, Addressee, Notice};

/// Each recipient as stored: `Name <address>` or the address, normalised, each
/// address once (the first time it is written wins).
fn recipients(list: &[String]) -> Result<Vec<String>, SendError> {
    let mut kept: Vec<(Option<String>, String)> = Vec::new();
    for written in list {
        let (name, address) =
            addresses::recipient(written).ok_or_else(|| SendError::InvalidRecipient { address: written.clone() })?;
        if !kept.iter().any(|(_, seen)| *seen == address) {
            kept.push((name, address));
        }
    }
    Ok(kept.into_iter().map(|(name, address)| addresses::display(name.as_deref(), &address)).collect())
}

/// The address of a recipient as stored.
fn address_in(recipient: &str) -> String {
    addresses::recipient(recipient).map(|(_, address)| address).unwrap_or_default()
}

fn validate_subject(subject: &str) -> Result<String, SendError> {
    let subject = subject.trim();
    let valid = !subject.is_empty()
        && subject.chars().count() <= MAXIMUM_SUBJECT_CHARACTERS
        && !subject.chars().any(|c| c == '\r' || c == '\n' || (c.is_control() && c != '\t'));
    if valid { Ok(subject.to_string()) } else { Err(SendError::InvalidSubject) }
}

fn validate_text(text: &str) -> Result<String, SendError> {
    if text.len() > MAXIMUM_TEXT_BYTES { Err(SendError::TextTooLong) } else { Ok(text.to_string()) }
}

/// `to` and `cc` as stored, refusing none in To or more than `at_most` in all.
/// A draft holds up to `MAXIMUM_DRAFT_RECIPIENTS` while its writer trims it; a
/// send is submitted with at most `MAXIMUM_RECIPIENTS`.
fn validate_recipients(to: &[String], cc: &[String], at_most: usize) -> Result<(Vec<String>, Vec<String>), SendError> {
    let (to, cc) = (recipients(to)?, recipients(cc)?);
    if to.is_empty() || to.len() + cc.len() > at_most {
        return Err(SendError::RecipientCount);
    }
    Ok((to, cc))
}

/// A reply's References, by RFC 5322 §3.6.4: the parent's References or, when
/// it has none, its In-Reply-To when that names one message; then the parent's
/// own Message-ID. Only what is a Message-ID, each once, and the most recent
/// `MAXIMUM_REFERENCES`, so the parent stays last.
fn reply_references(references: &[String], in_reply_to: &[String], parent: Option<&str>) -> Vec<String> {
    let mut chain: Vec<String> = match (references, in_reply_to) {
        ([], [only]) => vec![only.clone()],
        _ => references.to_vec(),
    };
    chain.extend(parent.map(str::to_string));
    let mut kept: Vec<String> = Vec::with_capacity(chain.len());
    for id in chain.into_iter().rev() {
        if message_ids::is_message_id(&id) && !message_ids::is_made_up(&id) && !kept.contains(&id) {
            kept.push(id);
        }
    }
    kept.truncate(MAXIMUM_REFERENCES);
    kept.reverse();
    kept
}

/// The Message-ID a reply to a received message names: the one it carried,
/// never one the node made up for it.
fn parent_id(message_id: &str) -> Option<String> {
    Some(message_id.to_string()).filter(|id| message_ids::is_message_id(id) && !message_ids::is_made_up(id))
}

/// The stored form of a received message's addresses (`[{"address","name"}]`).
fn stored_recipients(json: &str) -> Vec<String> {
    let addresses: Vec<EmailAddress> = serde_json::from_str(json).unwrap_or_default();
    addresses
        .iter()
        .filter_map(|address| {
            let address_only = addresses::normalize(&address.address)?;
            let name = address.name.as_deref().filter(|name| {
                !name.chars().any(|c| c.is_control() || matches!(c, '<' | '>' | '"'))
                    && name.chars().count() <= addresses::MAXIMUM_NAME_CHARACTERS
            });
            Some(addresses::display(name, &address_only))
        })
        .collect()
}

/// The subject of a reply to `subject`: `Re: ` before it, unless it already reads as one.
fn reply_subject(subject: &str) -> String {
    if linking::subject_key(subject).1 { subject.to_string() } else { format!("Re: {subject}") }
}

/// The mailbox's address and the writer's name, from `store::mailbox_and_writer`'s
/// answer (nothing of either when it has no row).
fn mailbox_and_writer(context: &Context<'_>, answer: &QueryResult) -> Result<MailboxAndWriter, Refusal> {
    match answer.first() {
        Some(row) => row.decode().map_err(|error| context.internal(error)),
        None => Ok(MailboxAndWriter { address: None, display_name: None, name: None }),
    }
}

/// `POST /api/mailboxes/:mailboxId/sends`.
pub async fn create_draft(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: CreateDraft = context.body()?;
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let caller = caller_id(context)?;
    let holder = holder_of(context.caller(), context.now_ms()).ok_or_else(Refusal::internal)?;
    let names = store::mailbox_and_writer(&mailbox_id, &caller);
    let mut to = request.to.clone();
    let mut cc = request.cc.clone();
    let mut subject = request.subject.clone();
    let (in_reply_to, references, thread_id, names, mail_store) = match &request.reply_to {
        None => {
            let read = location::read(context, &mailbox_id, vec![names], Vec::new()).await?;
            let names = read.directory.first().ok_or_else(Refusal::internal)?;
            (None, Vec::new(), None, mailbox_and_writer(context, names)?, read.store)
        }
        Some(receipt_id) => {
            // A message kept under a key of its own (it reused another's id) is
            // answered by the id it carried.
            let target = store::reply_target(receipt_id, &mailbox_id);
            // The caller's draft already open in the same conversation, if any.
            let open_draft =
                |with_names| store::open_draft_in_conversation_of(&caller, &mailbox_id, receipt_id, with_names);
            // Replying to a message means seeing it: its metadata at least.
            let directory = vec![tuples::relations_on(&holder, &mailbox_id), names];
            let mail = (vec![target.clone(), open_draft(true)], vec![target, open_draft(false)]);
            let read = location::read_each(context, &mailbox_id, directory, mail).await?;
            let (held, names, target, open_draft) = match (read.directory.as_slice(), read.mail.as_slice()) {
                ([held, names], [target, open_draft]) => (held, names, target, open_draft),
                _ => return Err(context.internal("a reply's read answered too little")),
            };
            let mail_store = read.store;
            let sees = held.rows.iter().filter_map(|row| row.text("relation").ok()).any(|relation| {
                relation == Relation::MailboxMetadataRead.name() || relation == Relation::MailboxContentRead.name()
            });
            let Some(row) = target.first().filter(|_| sees) else {
                return Err(SendError::NoSuchReplyTarget { id: receipt_id.clone() }.into());
            };
            // Reopening Reply (a reply that brings nothing of its own) resumes the
            // draft already begun there, never a second identical one.
            let brings_nothing = request.to.is_empty()
                && request.cc.is_empty()
                && request.subject.is_none()
                && request.text.is_empty()
                && !request.reply_all;
            if let Some(draft) = open_draft.first().filter(|_| brings_nothing) {
                let mut draft: SendRow = draft.decode().map_err(|error| context.internal(error))?;
                // The caller's own: named, with its mailbox, as the directory said.
                let names = mailbox_and_writer(context, names)?;
                draft.author_name = draft.author_name.or(names.name);
                draft.mailbox_address = draft.mailbox_address.or(names.address);
                context.audit_object(draft.id.clone());
                context.audit_detail(
                    serde_json::json!({ "mailbox": mailbox_id, "reply_to": receipt_id, "resumed": true }),
                );
                let mut answer = draft.present();
                answer.resumed = Some(true);
                return Ok(context.json(&answer));
            }
            let row: ReplyTarget = row.decode().map_err(|error| context.internal(error))?;
            let text = |column: &Option<String>| column.clone().unwrap_or_default();
            let names = mailbox_and_writer(context, names)?;
            let mailbox_address = names.address.clone();
            let not_this_mailbox =
                |recipient: &String| Some(address_in(recipient)) != mailbox_address.as_deref().map(str::to_string);
            if to.is_empty() {
                // Where the sender asked replies to go, or else the sender. A
                // Reply-To naming this mailbox would answer ourselves: it is
                // passed over for the sender.
                to = stored_recipients(&text(&row.reply_to_json));
                to.retain(not_this_mailbox);
                if to.is_empty()
                    && let Some(from) = row.from_address.clone()
                {
                    let from_name = row.from_name.clone();
                    to = stored_recipients(&serde_json::json!([{ "address": from, "name": from_name }]).to_string());
                    to.retain(not_this_mailbox);
                }
            }
            if request.reply_all {
                let mut everyone = stored_recipients(&text(&row.to_json));
                everyone.extend(stored_recipients(&text(&row.cc_json)));
                let addressed: Vec<String> = to.iter().chain(&cc).map(|recipient| address_in(recipient)).collect();
                everyone.retain(|recipient| not_this_mailbox(recipient) && !addressed.contains(&address_in(recipient)));
                cc.extend(everyone);
            }
            subject = subject.or_else(|| Some(reply_subject(&text(&row.subject))));
            // Checked again here, not only on the way in: a receipt stored before
            // the node dropped what is not a Message-ID must not write it out.
            let message_id = parent_id(&text(&row.message_id));
            let references = reply_references(
                &list_of(&text(&row.references_json)),
                &list_of(&text(&row.in_reply_to_json)),
                message_id.as_deref(),
            );
            let thread_id = row.thread_id;
            (message_id, references, thread_id, names, mail_store)
        }
    };
    // A reply to all may gather more than a send may have: the draft keeps them
    // all, and says how many to remove before it can be submitted.
    let (to, cc) = validate_recipients(&to, &cc, MAXIMUM_DRAFT_RECIPIENTS)?;
    let subject = validate_subject(subject.as_deref().unwrap_or_default())?;
    let text = validate_text(&request.text)?;
    let names = (names.address.unwrap_or_default(), names.name.unwrap_or_default());
    let send_id = new_id(IdKind::Send, context.platform());
    // The message it answers may be deleted between the read and the commit
    // (decision 0017): then nothing is written, and the answer is that it is gone.
    let draft = NewSend {
        id: &send_id,
        mailbox_id: &mailbox_id,
        author: &caller,
        state: SendState::Draft,
        to_json: json_list(&to),
        cc_json: json_list(&cc),
        subject: &subject,
        text: &text,
        reply_to: request.reply_to.as_deref(),
        in_reply_to: in_reply_to.as_deref(),
        references_json: json_list(&references),
        now_ms: context.now_ms(),
        thread_id: thread_id.as_deref(),
    };
    let gone = SendError::NoSuchReplyTarget { id: request.reply_to.clone().unwrap_or_default() };
    let drafted = store::draft_while_its_message_is_there(draft);
    location::write_changing_one_row(context, mail_store, &mailbox_id, drafted, gone)?;
    context.audit_object(send_id.clone());
    let over = (to.len() + cc.len()).saturating_sub(MAXIMUM_RECIPIENTS);
    context.audit_detail(serde_json::json!({
        "mailbox": mailbox_id,
        "reply_to": request.reply_to,
        "recipients_to_remove": (over > 0).then_some(over),
    }));
    let row = SendRow {
        id: send_id,
        mailbox_id,
        author: caller,
        state: SendState::Draft,
        to_json: json_list(&to),
        cc_json: json_list(&cc),
        subject,
        text,
        reply_to: request.reply_to,
        in_reply_to,
        references_json: json_list(&references),
        created_at: context.now_ms(),
        updated_at: context.now_ms(),
        submitted_at: None,
        submitted_by: None,
        decided_at: None,
        decided_by: None,
        refusal_reason: None,
        message_id: None,
        manifest_hash: None,
        sealed_at: None,
        dispatched_at: None,
        dispatch_error: None,
        sealed_from_address: None,
        sealed_from_name: None,
        delivered_json: no_one(),
        submitted_version: None,
        thread_id,
        sent_message_ids_json: no_one(),
        attachments_json: None,
        answers_json: None,
        writer_unverified_reads: None,
        decided_by_name: None,
        caller_name: None,
        mailbox_address: Some(names.0),
        mailbox_display_name: None,
        author_name: Some(names.1),
        submitted_by_sponsor: None,
        submitted_by_minter: None,
        submitted_by_credential_issuer: None,
    };
    let mut answer = row.present();
    answer.resumed = answer.reply_to.is_some().then_some(false);
    Ok(context.json(&answer))
}

/// Refuses unless the caller wrote this draft and it is still a draft.
pub(super) fn own_draft(context: &Context<'_>, row: &SendRow) -> Result<(), Refusal> {
    if row.author != caller_id(context)? {
        return Err(SendError::NotYours.into());
    }
    if row.state != SendState::Draft {
        return Err(SendError::WrongState { state: row.state, needs: SendState::Draft }.into());
    }
    Ok(())
}

/// `PATCH /api/mailboxes/:mailboxId/sends/:sendId`.
pub async fn update_draft(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: UpdateDraft = context.body()?;
    let TheSend { mut row, store: mail_store, .. } = the_send(context, Asked::default()).await?;
    own_draft(context, &row)?;
    let (to, cc) = validate_recipients(
        request.to.as_deref().unwrap_or(&list_of(&row.to_json)),
        request.cc.as_deref().unwrap_or(&list_of(&row.cc_json)),
        MAXIMUM_DRAFT_RECIPIENTS,
    )?;
    if let Some(subject) = &request.subject {
        row.subject = validate_subject(subject)?;
    }
    if let Some(text) = &request.text {
        row.text = validate_text(text)?;
    }
    row.to_json = json_list(&to);
    row.cc_json = json_list(&cc);
    row.updated_at = context.now_ms();
    let edited = store::draft_edited(&row.id, &row, context.now_ms());
    location::write_changing_one_row(context, mail_store, &row.mailbox_id, edited, SendError::Raced)?;
    answer(context, mail_store, row).await
}

/// `DELETE /api/mailboxes/:mailboxId/sends/:sendId`.
pub async fn delete_draft(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let TheSend { row, store: mail_store, .. } = the_send(context, Asked::default()).await?;
    own_draft(context, &row)?;
    // Its files' rows go with it; their bytes stay in the object store, named by
    // hash (another send may carry the same file).
    location::write(context, mail_store, &row.mailbox_id, store::files_deleted(&row.id))?;
    let deleted = store::draft_deleted(&row.id);
    location::write_changing_one_row(context, mail_store, &row.mailbox_id, deleted, SendError::Raced)?;
    answer(context, mail_store, row).await
}

/// `POST /api/mailboxes/:mailboxId/sends/:sendId/submit`.
pub async fn submit(context: &mut Context<'_>) -> Result<Response, Refusal> {
    // An agent's submission keeps how many messages from unauthenticated
    // senders it read in the day before, for whoever decides on it.
    let count = unverified_reads::count_before(context, context.now_ms());
    let asked = Asked { directory: count.into_iter().collect(), ..Asked::default() };
    let TheSend { mut row, store: mail_store, directory: counted, .. } = the_send(context, asked).await?;
    own_draft(context, &row)?;
    row.writer_unverified_reads = match counted.first() {
        Some(result) => Some(unverified_reads::reads_in(result).map_err(|error| context.internal(error))?),
        None => None,
    };
    if row.text.trim().is_empty() {
        return Err(SendError::EmptyText.into());
    }
    let count = list_of(&row.to_json).len() + list_of(&row.cc_json).len();
    if count > MAXIMUM_RECIPIENTS {
        return Err(SendError::TooManyRecipients { count }.into());
    }
    // Its text can have grown since its last file was attached.
    let size = row.message_size(context.now_ms());
    if size > OUTBOUND_MESSAGE_BYTES {
        return Err(SendError::MessageTooLarge { size, step: Oversized::Submitting }.into());
    }
    let caller = caller_id(context)?;
    row.state = SendState::Submitted;
    row.submitted_at = Some(context.now_ms());
    row.submitted_by = Some(caller.clone());
    row.updated_at = context.now_ms();
    // Every submission is a new version, kept whole so that a decision on an
    // older one can be told what changed.
    let submission = row.submission().ok_or_else(Refusal::internal)?;
    let version = submission.version();
    row.submitted_version = Some(version.clone());
    let submitted = store::submitted(&row.id, &caller, context.now_ms(), &version, row.writer_unverified_reads);
    location::write_changing_one_row(context, mail_store, &row.mailbox_id, submitted, SendError::Raced)?;
    // Evaluated where the commit goes, as the last of its batch.
    context.guard(store::still_as_read(&row.id, &row), SendError::Raced);
    let submission_json = serde_json::to_string(&submission).map_err(|error| context.internal(error))?;
    let recorded = store::version_recorded(&row.id, &version, submission_json, context.now_ms()).statement();
    location::write(context, mail_store, &row.mailbox_id, recorded)?;
    // Whoever decides on sends here hears of it, unless they are the
    // submitter's own side (the feed asks that when it is read).
    let notice = Notice {
        kind: NotificationKind::ApprovalWaiting,
        object_id: &row.id,
        mailbox_id: Some(&row.mailbox_id),
        actor: Some(&caller),
        title: &row.subject,
        detail: None,
    };
    let notified = notifications::notify(&notice, Addressee::Deciders, context.platform());
    location::write_after(context, mail_store, notified);
    let awaiting = store::awaiting((&row.id, &row.mailbox_id, &row.author), &caller, context.now_ms());
    location::write_after(context, mail_store, awaiting);
    context.audit_detail(serde_json::json!({ "version": version }));
    answer(context, mail_store, row).await
}

/// `POST /api/mailboxes/:mailboxId/sends/:sendId/cancel`.
pub async fn cancel(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let TheSend { mut row, store: mail_store, .. } = the_send(context, Asked::default()).await?;
    let caller = caller_id(context)?;
    if row.state != SendState::Submitted {
        return Err(SendError::WrongState { state: row.state, needs: SendState::Submitted }.into());
    }
    if row.submitted_by.as_deref() != Some(caller.as_str()) {
        return Err(SendError::NotYours.into());
    }
    row.state = SendState::Draft;
    row.submitted_at = None;
    row.submitted_by = None;
    row.submitted_version = None;
    row.writer_unverified_reads = None;
    row.updated_at = context.now_ms();
    let cancelled = store::cancelled(&row.id, context.now_ms());
    location::write_changing_one_row(context, mail_store, &row.mailbox_id, cancelled, SendError::Raced)?;
    let resolved = notifications::resolve(NotificationKind::ApprovalWaiting, &row.id, context.now_ms());
    location::write_after(context, mail_store, resolved);
    location::write_after(context, mail_store, store::no_longer_awaiting(&row.id));
    answer(context, mail_store, row).await
}

/// `POST /api/mailboxes/:mailboxId/sends/:sendId/redraft`.
pub async fn redraft(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let TheSend { row: refused, store: mail_store, .. } = the_send(context, Asked::default()).await?;
    let caller = caller_id(context)?;
    if refused.author != caller {
        return Err(SendError::NotYours.into());
    }
    if refused.state != SendState::Refused {
        return Err(SendError::WrongState { state: refused.state, needs: SendState::Refused }.into());
    }
    let send_id = new_id(IdKind::Send, context.platform());
    let copied = store::draft_copied_from(&send_id, &refused.id, context.now_ms());
    location::write(context, mail_store, &refused.mailbox_id, copied)?;
    location::write(context, mail_store, &refused.mailbox_id, store::files_copied(&send_id, &refused.id))?;
    context.audit_object(send_id.clone());
    context.audit_detail(serde_json::json!({ "mailbox": refused.mailbox_id, "from_refused": refused.id }));
    let draft = SendRow {
        id: send_id,
        state: SendState::Draft,
        created_at: context.now_ms(),
        updated_at: context.now_ms(),
        submitted_at: None,
        submitted_by: None,
        submitted_version: None,
        decided_at: None,
        decided_by: None,
        decided_by_name: None,
        refusal_reason: None,
        answers_json: refused.answers_json.clone(),
        writer_unverified_reads: None,
        ..refused
    };
    answer(context, mail_store, draft).await
}

/// Why a butler's reply to `to`, answering `subject` with `text` (filled in),
/// could not be written as a send, in words; `None` when it could. The dry run
/// and a delivery ask this before `submitted_for_butler`, which holds to the
/// same checks, so neither records as drafted a reply that was not.
pub fn butler_reply_unwritable(to: &[EmailAddress], subject: &str, text: &str) -> Option<&'static str> {
    let to = stored_recipients(&serde_json::to_string(to).ok()?);
    if validate_recipients(&to, &[], MAXIMUM_RECIPIENTS).is_err() {
        return Some("the message names no address a reply could be written to");
    }
    if validate_subject(&reply_subject(subject)).is_err() {
        return Some("the reply's subject, the message's with “Re: ”, would be longer than a send's");
    }
    if validate_text(text).is_err() {
        return Some("the reply's text, with the sender and subject filled in, would be longer than a send's");
    }
    None
}

/// A reply a butler drafts and submits in its sponsor's name, for a second
/// person to decide on.
pub struct ButlerReply<'a> {
    pub mailbox_id: &'a str,
    pub thread_id: &'a str,
    /// The delivery it answers (`rcp_…`), stored in the same batch.
    pub receipt_id: &'a str,
    /// The sponsor: the send's author and submitter, so dual control counts
    /// them (and their agents) on the submitter's side.
    pub sponsor: &'a str,
    /// Whom it answers: the delivery's Reply-To or, without one, its From,
    /// never one of the node's own mailboxes (`butlers::rules`).
    pub to: &'a [EmailAddress],
    /// The delivery's subject.
    pub subject: &'a str,
    pub text: String,
    /// The delivery's Message-ID, In-Reply-To and References.
    pub message_id: &'a str,
    pub in_reply_to: &'a [String],
    pub references: &'a [String],
}

/// The statements that write `reply` as a send submitted for approval: the send
/// and its first version, and the approval waiting in the feed of whoever may
/// decide. `None` when the delivery gives nobody to reply to, or the text is
/// over the limit of a send.
pub fn submitted_for_butler(reply: &ButlerReply<'_>, platform: &dyn Platform) -> Option<ButlerSubmission> {
    let to = stored_recipients(&serde_json::to_string(reply.to).ok()?);
    let (to, cc) = validate_recipients(&to, &[], MAXIMUM_RECIPIENTS).ok()?;
    let subject = validate_subject(&reply_subject(reply.subject)).ok()?;
    let text = validate_text(&reply.text).ok()?;
    let message_id = parent_id(reply.message_id);
    let references = reply_references(reply.references, reply.in_reply_to, message_id.as_deref());
    let now_ms = platform.now_ms();
    let send_id = new_id(IdKind::Send, platform);
    let submission = Submission {
        send_id: send_id.clone(),
        mailbox_id: reply.mailbox_id.to_string(),
        author: reply.sponsor.to_string(),
        to: to.clone(),
        cc: cc.clone(),
        subject: subject.clone(),
        text: text.clone(),
        in_reply_to: message_id.clone(),
        references: references.clone(),
        submitted_by: reply.sponsor.to_string(),
        submitted_at: now_ms,
        attachments: Vec::new(),
    };
    let version = submission.version();
    let notice = Notice {
        kind: NotificationKind::ApprovalWaiting,
        object_id: &send_id,
        mailbox_id: Some(reply.mailbox_id),
        actor: Some(reply.sponsor),
        title: &subject,
        detail: None,
    };
    let send = NewSend {
        id: &send_id,
        mailbox_id: reply.mailbox_id,
        author: reply.sponsor,
        state: SendState::Submitted,
        to_json: json_list(&to),
        cc_json: json_list(&cc),
        subject: &subject,
        text: &text,
        reply_to: Some(reply.receipt_id),
        in_reply_to: message_id.as_deref(),
        references_json: json_list(&references),
        now_ms,
        thread_id: Some(reply.thread_id),
    };
    Some(ButlerSubmission {
        in_mailbox: vec![
            store::submitted_send(send, reply.sponsor, &version).statement(),
            store::version_recorded(&send_id, &version, serde_json::to_string(&submission).ok()?, now_ms).statement(),
        ],
        on_d1: vec![
            store::awaiting((&send_id, reply.mailbox_id, reply.sponsor), reply.sponsor, now_ms),
            notifications::notify(&notice, Addressee::Deciders, platform),
        ],
        send_id,
    })
}

/// A butler's reply as the statements that submit it: the send where its
/// mailbox's mail is, and in the directory the note that it awaits a decision
/// and its deciders' notice (after the send commits, where the mail is in the
/// mailbox's own database).
pub struct ButlerSubmission {
    pub send_id: String,
    pub in_mailbox: Vec<Statement>,
    pub on_d1: Vec<Statement>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|id| id.to_string()).collect()
    }

    #[test]
    fn a_replys_references_follow_rfc_5322() {
        // The parent's References, then its own id.
        assert_eq!(reply_references(&ids(&["a@x", "b@x"]), &ids(&["b@x"]), Some("c@x")), ids(&["a@x", "b@x", "c@x"]));
        // No References: its In-Reply-To when it names one message, then its own id.
        assert_eq!(reply_references(&[], &ids(&["b@x"]), Some("c@x")), ids(&["b@x", "c@x"]));
        assert_eq!(reply_references(&[], &ids(&["a@x", "b@x"]), Some("c@x")), ids(&["c@x"]), "two parents: neither");
        // The first message of a conversation.
        assert_eq!(reply_references(&[], &[], Some("c@x")), ids(&["c@x"]));
        // What is not a Message-ID, an id made up by the node, or one twice, is left out.
        let made_up = message_ids::derived(&"ab".repeat(32));
        assert_eq!(
            reply_references(&ids(&["a@x", "not an id", "a@x"]), &[], Some(&made_up)),
            ids(&["a@x"]),
            "each once, nothing made up"
        );
        // The most recent within the limit, the parent last.
        let long: Vec<String> = (0..30).map(|n| format!("m{n}@x")).collect();
        let kept = reply_references(&long, &[], Some("parent@x"));
        assert_eq!(kept.len(), MAXIMUM_REFERENCES);
        assert_eq!(kept.last().map(String::as_str), Some("parent@x"));
        assert_eq!(kept.first().map(String::as_str), Some("m11@x"));
    }
}
