//! Outbound mail under dual control: drafts, submission, a second person's
//! decision, sealing and dispatch.
//!
//! draft → submitted → sealed → dispatched | failed, or submitted → refused;
//! cancel takes a submission back to a draft, and retry a failed send back to
//! sealed and on to the recipients it has not reached (decision 0010). Drafts
//! are their author's alone; everything after is visible to the mailbox's
//! proposers and deciders. Approval
//! is the governed step: a second person who holds `approval.decide`, never the
//! submitter, never an agent. At approval the send is sealed (the manifest's hash
//! goes into the audit chain, and a trigger makes the row immutable), the author's
//! `send.propose` is checked again inside the same transaction, and only then is
//! the message handed to the mail binding.

use mailroom_contract::PathParameter;
use mailroom_contract::Relation;
use mailroom_contract::api::{ApprovalQueue, CreateDraft, RefuseSend, Send, SendList, SendState, UpdateDraft};
use serde::Deserialize;

use crate::authz::holder_of;
use crate::authz::tuples::{self, Holder};
use crate::core::addresses;
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of, new_id};
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::storage::{Statement, Value};
use crate::core::time::rfc3339;
use crate::mail::outbound::Manifest;

/// The most recipients (To and Cc together) one send may have.
pub const MAXIMUM_RECIPIENTS: usize = 50;
/// The longest subject, in characters (RFC 5322's line limit).
pub const MAXIMUM_SUBJECT_CHARACTERS: usize = 998;
/// The longest body, in bytes.
pub const MAXIMUM_TEXT_BYTES: usize = 256 * 1024;
/// How many References a reply carries: the most recent ones.
const MAXIMUM_REFERENCES: usize = 20;

/// What can be wrong with a send or a request about one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendError {
    /// No send with this id in this mailbox that the caller may see.
    NoSuchSend { id: String },
    /// The message replied to is not in this mailbox, or not visible.
    NoSuchReplyTarget { id: String },
    /// A recipient is not an address.
    InvalidRecipient { address: String },
    /// No To recipient, or too many recipients.
    RecipientCount,
    /// The subject is empty, too long, or spans lines.
    InvalidSubject,
    /// The body is too long.
    TextTooLong,
    /// The send is not in the state this needs.
    WrongState { state: SendState, needs: SendState },
    /// The caller is not the draft's author or the submission's submitter.
    NotYours,
    /// The caller submitted this send, so cannot be its second person.
    OwnSubmission,
    /// An agent tried to decide; it acts as its sponsor and is never a second person.
    AgentsCannotDecide,
    /// The author no longer holds send.propose on the mailbox at sealing.
    AuthorLostAuthority { author: String },
    /// A refusal needs a reason.
    InvalidReason,
    /// Another decision or edit got there first.
    Raced,
    /// A sealed send's row no longer hashes to the manifest recorded when it was
    /// sealed (changed outside the node), or was sealed before the node kept what
    /// rebuilding it needs: it cannot be sent again as approved.
    NotAsApproved { id: String },
}

impl From<SendError> for Refusal {
    fn from(error: SendError) -> Refusal {
        match error {
            SendError::NoSuchSend { id } => Refusal::not_found("send", &id),
            SendError::NoSuchReplyTarget { id } => Refusal::new(
                404,
                "not_found",
                format!("There is no message {id} to reply to in this mailbox."),
                "A reply must answer a message this mailbox received and that you can see.",
                "Use a message id from list_messages for this mailbox, or leave `reply_to` out.",
            ),
            SendError::InvalidRecipient { address } => Refusal::new(
                400,
                "invalid_recipient",
                format!("`{address}` is not an address mail can be sent to."),
                "Each recipient is one plain address, without a display name or angle brackets.",
                "Send addresses such as ana@example.com, one per list entry.",
            ),
            SendError::RecipientCount => Refusal::new(
                400,
                "recipient_count",
                "A send needs at least one To recipient, and at most 50 recipients in all.",
                "Mail without a recipient goes nowhere; very wide sends are not what a shared mailbox is for.",
                "Name between 1 and 50 recipients across `to` and `cc`.",
            ),
            SendError::InvalidSubject => Refusal::new(
                400,
                "invalid_subject",
                "That subject cannot be sent.",
                "A subject is one line of 1 to 998 characters, with no line breaks.",
                "Send a single-line subject.",
            ),
            SendError::TextTooLong => Refusal::new(
                400,
                "text_too_long",
                "The message text is too long.",
                "A send's text may have at most 256 KiB.",
                "Shorten the text.",
            ),
            SendError::WrongState { state, needs } => Refusal::new(
                409,
                "wrong_state",
                format!("This send is {}, and this needs it to be {}.", state.as_str(), needs.as_str()),
                match needs {
                    SendState::Draft => "Only a draft can be edited, deleted or submitted.",
                    SendState::Failed => {
                        "Only a send whose dispatch failed can be sent again; a dispatched one has reached everyone, and one still sealed is being handed over."
                    }
                    _ => "Only a submitted send can be cancelled, approved or refused.",
                },
                "Get the send to see its state; cancel a submission to edit it again.",
            ),
            SendError::NotAsApproved { id } => Refusal::new(
                409,
                "not_as_approved",
                format!("Send {id} cannot be sent again as it was approved."),
                "What leaves is rebuilt from the stored send, and the stored send no longer hashes to the manifest recorded when it was sealed (or was sealed before the node kept the sender it was sealed with).",
                "Do not send it: verify the audit chain (GET /api/audit/verify), then draft it again for a new approval.",
            ),
            SendError::NotYours => Refusal::new(
                403,
                "not_yours",
                "Only the person or agent who wrote this draft, or submitted it, can do that.",
                "Drafts and submissions are their author's until a second person decides.",
                "Ask the author, or draft your own.",
            ),
            SendError::OwnSubmission => Refusal::new(
                403,
                "own_submission",
                "You submitted this send, so you cannot be the one to decide on it.",
                "Dual control needs a second person: the submitter never approves their own send.",
                "Ask another person who holds approval.decide on this mailbox to approve or refuse it; to change it yourself, cancel the submission.",
            ),
            SendError::AgentsCannotDecide => Refusal::new(
                403,
                "agents_cannot_decide",
                "An agent cannot approve or refuse a send.",
                "An agent acts under its sponsor's authority, so it can never be the second person dual control needs.",
                "Ask a person who holds approval.decide on this mailbox to decide.",
            ),
            SendError::AuthorLostAuthority { author } => Refusal::new(
                409,
                "author_lost_authority",
                "This send cannot be sealed: its author no longer holds send.propose on the mailbox.",
                format!(
                    "{author} lost send.propose after submitting; a send is sealed only while its author may still propose it."
                ),
                "Refuse it, or ask an administrator to grant send.propose to the author again.",
            ),
            SendError::InvalidReason => Refusal::new(
                400,
                "invalid_reason",
                "A refusal needs a reason.",
                "The reason tells the submitter why; it has 1 to 1,000 characters.",
                "Send `{\"reason\": \"…\"}`.",
            ),
            SendError::Raced => Refusal::new(
                409,
                "raced",
                "Someone else changed this send a moment ago.",
                "Another request edited, submitted or decided it between your read and your change.",
                "Get the send again and decide from its current state.",
            ),
        }
    }
}

const SEND_COLUMNS: &str = "s.id, s.mailbox_id, s.author, s.state, s.to_json, s.cc_json, s.subject, s.text, s.reply_to, \
     s.in_reply_to, s.references_json, s.created_at, s.updated_at, s.submitted_at, s.submitted_by, s.decided_at, \
     s.decided_by, s.refusal_reason, s.message_id, s.manifest_hash, s.sealed_at, s.dispatched_at, s.dispatch_error, \
     s.sealed_from_address, s.sealed_from_name, s.delivered_json, \
     (SELECT m.address FROM mailboxes m WHERE m.id = s.mailbox_id) AS mailbox_address, \
     COALESCE((SELECT p.name FROM people p WHERE p.id = s.author), (SELECT a.name FROM agents a WHERE a.id = s.author)) \
       AS author_name, \
     (SELECT p.name FROM people p WHERE p.id = s.decided_by) AS decided_by_name";

#[derive(Clone, Debug, Deserialize)]
struct SendRow {
    id: String,
    mailbox_id: String,
    author: String,
    state: SendState,
    to_json: String,
    cc_json: String,
    subject: String,
    text: String,
    reply_to: Option<String>,
    in_reply_to: Option<String>,
    references_json: String,
    created_at: i64,
    updated_at: i64,
    submitted_at: Option<i64>,
    submitted_by: Option<String>,
    decided_at: Option<i64>,
    decided_by: Option<String>,
    refusal_reason: Option<String>,
    message_id: Option<String>,
    manifest_hash: Option<String>,
    sealed_at: Option<i64>,
    dispatched_at: Option<i64>,
    dispatch_error: Option<String>,
    #[serde(default)]
    sealed_from_address: Option<String>,
    #[serde(default)]
    sealed_from_name: Option<String>,
    /// The envelope recipients the binding has accepted it for.
    #[serde(default = "no_one")]
    delivered_json: String,
    #[serde(default)]
    mailbox_address: Option<String>,
    #[serde(default)]
    mailbox_display_name: Option<String>,
    #[serde(default)]
    author_name: Option<String>,
    #[serde(default)]
    decided_by_name: Option<String>,
    /// When an agent submitted it, the agent's sponsor.
    #[serde(default)]
    submitted_by_sponsor: Option<String>,
    /// The name of the person asking, when read for a decision.
    #[serde(default)]
    caller_name: Option<String>,
}

fn no_one() -> String {
    "[]".into()
}

fn list_of(json: &str) -> Vec<String> {
    serde_json::from_str(json).unwrap_or_default()
}

impl SendRow {
    fn present(&self) -> Send {
        Send {
            id: self.id.clone(),
            mailbox_id: self.mailbox_id.clone(),
            mailbox_address: self.mailbox_address.clone().unwrap_or_default(),
            state: self.state,
            author: self.author.clone(),
            author_name: self.author_name.clone().unwrap_or_default(),
            to: list_of(&self.to_json),
            cc: list_of(&self.cc_json),
            subject: self.subject.clone(),
            text: self.text.clone(),
            reply_to: self.reply_to.clone(),
            in_reply_to: self.in_reply_to.clone(),
            references: list_of(&self.references_json),
            created_at: rfc3339(self.created_at),
            updated_at: rfc3339(self.updated_at),
            submitted_at: self.submitted_at.map(rfc3339),
            submitted_by: self.submitted_by.clone(),
            decided_at: self.decided_at.map(rfc3339),
            decided_by: self.decided_by.clone(),
            decided_by_name: self.decided_by_name.clone(),
            refusal_reason: self.refusal_reason.clone(),
            message_id: self.message_id.clone(),
            manifest_hash: self.manifest_hash.clone(),
            manifest_intact: self
                .sealed_manifest()
                .zip(self.manifest_hash.as_ref())
                .map(|(manifest, recorded)| manifest.hash() == *recorded),
            sealed_from_address: self.sealed_from_address.clone(),
            sealed_from_name: self.sealed_from_name.clone(),
            dispatched_at: self.dispatched_at.map(rfc3339),
            dispatch_error: self.dispatch_error.clone(),
            delivered_to: list_of(&self.delivered_json),
        }
    }

    /// What a second person approves: this send from `from`, approved by
    /// `approved_by` at `sealed_at`.
    fn manifest(&self, from_address: &str, from_name: &str, approved_by: &str, sealed_at: i64) -> Manifest {
        Manifest {
            send_id: self.id.clone(),
            mailbox_id: self.mailbox_id.clone(),
            from_name: from_name.to_string(),
            to: list_of(&self.to_json),
            cc: list_of(&self.cc_json),
            subject: self.subject.clone(),
            text: self.text.clone(),
            in_reply_to: self.in_reply_to.clone(),
            references: list_of(&self.references_json),
            message_id: format!("{}@{}", self.id, addresses::domain(from_address)),
            from_address: from_address.to_string(),
            author: self.author.clone(),
            submitted_by: self.submitted_by.clone().unwrap_or_default(),
            approved_by: approved_by.to_string(),
            sealed_at,
        }
    }

    /// The manifest this sealed send was approved as, rebuilt from the row alone.
    fn sealed_manifest(&self) -> Option<Manifest> {
        Some(self.manifest(
            self.sealed_from_address.as_deref()?,
            self.sealed_from_name.as_deref()?,
            self.decided_by.as_deref()?,
            self.sealed_at?,
        ))
    }

    /// Drafts are their author's alone; everything else is the mailbox's.
    fn visible_to(&self, caller: &str) -> bool {
        self.state != SendState::Draft || self.author == caller
    }
}

fn caller_id(context: &Context<'_>) -> Result<String, Refusal> {
    context.caller().actor_id().map(str::to_string).ok_or_else(Refusal::internal)
}

fn recipients(list: &[String]) -> Result<Vec<String>, SendError> {
    list.iter()
        .map(|address| {
            addresses::normalize(address).ok_or_else(|| SendError::InvalidRecipient { address: address.clone() })
        })
        .collect()
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

fn validate_recipients(to: &[String], cc: &[String]) -> Result<(Vec<String>, Vec<String>), SendError> {
    let (to, cc) = (recipients(to)?, recipients(cc)?);
    if to.is_empty() || to.len() + cc.len() > MAXIMUM_RECIPIENTS {
        return Err(SendError::RecipientCount);
    }
    Ok((to, cc))
}

fn json_list(list: &[String]) -> String {
    serde_json::to_string(list).unwrap_or_else(|_| "[]".into())
}

/// The path's send, in the path's mailbox, with the mailbox's address; refuses
/// one that does not exist or that the caller may not see.
async fn the_send(
    context: &mut Context<'_>,
    extra: Vec<Statement>,
) -> Result<(SendRow, Vec<crate::core::storage::QueryResult>), Refusal> {
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let send_id = context.path(PathParameter::SendId)?.to_string();
    context.audit_object(send_id.clone());
    if !is_id_of(&send_id, IdKind::Send) {
        return Err(SendError::NoSuchSend { id: send_id }.into());
    }
    let caller = caller_id(context)?;
    let statement = Statement::new(format!(
        "SELECT {SEND_COLUMNS}, m.display_name AS mailbox_display_name, \
                (SELECT a.sponsor_id FROM agents a WHERE a.id = s.submitted_by) AS submitted_by_sponsor, \
                (SELECT p.name FROM people p WHERE p.id = ?3) AS caller_name \
         FROM sends s JOIN mailboxes m ON m.id = s.mailbox_id WHERE s.id = ?1 AND s.mailbox_id = ?2"
    ))
    .bind(send_id.as_str())
    .bind(mailbox_id.as_str())
    .bind(caller.as_str());
    let mut statements = vec![statement];
    statements.extend(extra);
    let mut results = context.read(statements).await?;
    let rest = results.split_off(1);
    let row: SendRow = match results[0].first() {
        Some(row) => row.decode().map_err(|error| context.internal(error))?,
        None => return Err(SendError::NoSuchSend { id: send_id }.into()),
    };
    if !row.visible_to(&caller) {
        return Err(SendError::NoSuchSend { id: send_id }.into());
    }
    Ok((row, rest))
}

/// Queues the move of a send from one state to another, with `assignments`
/// (and their `parameters`) alongside, conditional on its state not having
/// moved since it was read: a race loses with a refusal, never a silent overwrite.
fn transition(
    context: &mut Context<'_>,
    send_id: &str,
    (from, to): (SendState, SendState),
    assignments: &str,
    parameters: Vec<Value>,
) {
    let mut statement = Statement::new(format!("UPDATE sends SET state = ?, {assignments} WHERE id = ? AND state = ?"));
    statement.parameters.push(to.as_str().into());
    statement.parameters.extend(parameters);
    statement.parameters.push(send_id.into());
    statement.parameters.push(from.as_str().into());
    context.write_changing_one_row(statement, SendError::Raced);
}

/// `POST /api/mailboxes/:mailboxId/sends`.
pub async fn create_draft(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: CreateDraft = context.body()?;
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let (to, cc) = validate_recipients(&request.to, &request.cc)?;
    let subject = validate_subject(&request.subject)?;
    let text = validate_text(&request.text)?;
    let caller = caller_id(context)?;
    let holder = holder_of(context.caller(), context.now_ms()).ok_or_else(Refusal::internal)?;
    let names = Statement::new(
        "SELECT (SELECT address FROM mailboxes WHERE id = ?1) AS address, \
                COALESCE((SELECT name FROM people WHERE id = ?2), (SELECT name FROM agents WHERE id = ?2)) AS name",
    )
    .bind(mailbox_id.as_str())
    .bind(caller.as_str());
    let (in_reply_to, references, names) = match &request.reply_to {
        None => {
            let [names] = context.read_array([names]).await?;
            (None, Vec::new(), names)
        }
        Some(receipt_id) => {
            let target =
                Statement::new("SELECT message_id, references_json FROM receipts WHERE id = ?1 AND mailbox_id = ?2")
                    .bind(receipt_id.as_str())
                    .bind(mailbox_id.as_str());
            // Replying to a message means seeing it: its metadata at least.
            let [target, held, names] =
                context.read_array([target, tuples::relations_on(&holder, &mailbox_id), names]).await?;
            let sees = held.rows.iter().filter_map(|row| row.text("relation").ok()).any(|relation| {
                relation == Relation::MailboxMetadataRead.name() || relation == Relation::MailboxContentRead.name()
            });
            let Some(row) = target.first().filter(|_| sees) else {
                return Err(SendError::NoSuchReplyTarget { id: receipt_id.clone() }.into());
            };
            let message_id = row.text("message_id").map_err(|error| context.internal(error))?;
            let mut references = list_of(&row.text("references_json").map_err(|error| context.internal(error))?);
            references.push(message_id.clone());
            let skip = references.len().saturating_sub(MAXIMUM_REFERENCES);
            (Some(message_id), references.split_off(skip), names)
        }
    };
    let names = names
        .first()
        .map(|row| {
            (
                row.optional_text("address").ok().flatten().unwrap_or_default(),
                row.optional_text("name").ok().flatten().unwrap_or_default(),
            )
        })
        .unwrap_or_default();
    let send_id = new_id(IdKind::Send, context.platform());
    context.write(
        Statement::new(
            "INSERT INTO sends (id, mailbox_id, author, state, to_json, cc_json, subject, text, reply_to, in_reply_to, \
             references_json, created_at, updated_at) VALUES (?1, ?2, ?3, ?12, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11)",
        )
        .bind(send_id.as_str())
        .bind(mailbox_id.as_str())
        .bind(caller.as_str())
        .bind(json_list(&to))
        .bind(json_list(&cc))
        .bind(subject.as_str())
        .bind(text.as_str())
        .bind(request.reply_to.clone())
        .bind(in_reply_to.clone())
        .bind(json_list(&references))
        .bind(context.now_ms())
        .bind(SendState::Draft.as_str()),
    );
    context.audit_object(send_id.clone());
    context.audit_detail(serde_json::json!({ "mailbox": mailbox_id, "reply_to": request.reply_to }));
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
        decided_by_name: None,
        caller_name: None,
        mailbox_address: Some(names.0),
        mailbox_display_name: None,
        author_name: Some(names.1),
        submitted_by_sponsor: None,
    };
    Ok(context.json(&row.present()))
}

/// `GET /api/mailboxes/:mailboxId/sends`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    // The dispatcher has refused any `state` the declaration does not name.
    let state = context.query("state").map(str::to_string);
    let caller = caller_id(context)?;
    let limit = paging::limit(context)?;
    let (before_at, before_id) = paging::cursor(context, IdKind::Send, i64::MAX)?;
    let statement = Statement::new(format!(
        "SELECT {SEND_COLUMNS} FROM sends s WHERE s.mailbox_id = ?1 AND (s.state != ?7 OR s.author = ?2) \
         AND (?3 IS NULL OR s.state = ?3) \
         AND (s.created_at < ?4 OR (s.created_at = ?4 AND (?5 = '' OR s.id < ?5))) \
         ORDER BY s.created_at DESC, s.id DESC LIMIT ?6"
    ))
    .bind(context.path(PathParameter::MailboxId)?)
    .bind(caller)
    .bind(state)
    .bind(before_at)
    .bind(before_id)
    .bind(limit + 1)
    .bind(SendState::Draft.as_str());
    let [sends] = context.read_array([statement]).await?;
    let mut rows: Vec<SendRow> = sends.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = paging::cut(&mut rows, limit, |row| (row.created_at, &row.id));
    Ok(context.json(&SendList { sends: rows.iter().map(SendRow::present).collect(), next_cursor }))
}

/// `GET /api/mailboxes/:mailboxId/sends/:sendId`.
pub async fn get(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (row, _) = the_send(context, Vec::new()).await?;
    Ok(context.json(&row.present()))
}

/// Refuses unless the caller wrote this draft and it is still a draft.
fn own_draft(context: &Context<'_>, row: &SendRow) -> Result<(), Refusal> {
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
    let (mut row, _) = the_send(context, Vec::new()).await?;
    own_draft(context, &row)?;
    let (to, cc) = validate_recipients(
        request.to.as_deref().unwrap_or(&list_of(&row.to_json)),
        request.cc.as_deref().unwrap_or(&list_of(&row.cc_json)),
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
    let parameters = vec![
        row.to_json.as_str().into(),
        row.cc_json.as_str().into(),
        row.subject.as_str().into(),
        row.text.as_str().into(),
        context.now_ms().into(),
    ];
    transition(
        context,
        &row.id,
        (SendState::Draft, SendState::Draft),
        "to_json = ?, cc_json = ?, subject = ?, text = ?, updated_at = ?",
        parameters,
    );
    Ok(context.json(&row.present()))
}

/// `DELETE /api/mailboxes/:mailboxId/sends/:sendId`.
pub async fn delete_draft(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (row, _) = the_send(context, Vec::new()).await?;
    own_draft(context, &row)?;
    context.write_changing_one_row(
        Statement::new("DELETE FROM sends WHERE id = ?1 AND state = ?2")
            .bind(row.id.as_str())
            .bind(SendState::Draft.as_str()),
        SendError::Raced,
    );
    Ok(context.json(&row.present()))
}

/// `POST /api/mailboxes/:mailboxId/sends/:sendId/submit`.
pub async fn submit(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (mut row, _) = the_send(context, Vec::new()).await?;
    own_draft(context, &row)?;
    let caller = caller_id(context)?;
    row.state = SendState::Submitted;
    row.submitted_at = Some(context.now_ms());
    row.submitted_by = Some(caller.clone());
    row.updated_at = context.now_ms();
    let parameters = vec![context.now_ms().into(), caller.as_str().into(), context.now_ms().into()];
    transition(
        context,
        &row.id,
        (SendState::Draft, SendState::Submitted),
        "submitted_at = ?, submitted_by = ?, updated_at = ?",
        parameters,
    );
    Ok(context.json(&row.present()))
}

/// `POST /api/mailboxes/:mailboxId/sends/:sendId/cancel`.
pub async fn cancel(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (mut row, _) = the_send(context, Vec::new()).await?;
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
    row.updated_at = context.now_ms();
    transition(
        context,
        &row.id,
        (SendState::Submitted, SendState::Draft),
        "submitted_at = NULL, submitted_by = NULL, updated_at = ?",
        vec![context.now_ms().into()],
    );
    Ok(context.json(&row.present()))
}

/// The checks every decision shares: a person, not the submitter, on a
/// submitted send. An agent's submission is its sponsor's for this purpose: the
/// agent acted under their authority, so they cannot be its second person.
fn decidable(context: &Context<'_>, row: &SendRow) -> Result<String, Refusal> {
    let Caller::Person { person_id, .. } = context.caller() else {
        return Err(SendError::AgentsCannotDecide.into());
    };
    if row.state != SendState::Submitted {
        return Err(SendError::WrongState { state: row.state, needs: SendState::Submitted }.into());
    }
    let submitted_as = [row.submitted_by.as_deref(), row.submitted_by_sponsor.as_deref()];
    if submitted_as.contains(&Some(person_id.as_str())) {
        return Err(SendError::OwnSubmission.into());
    }
    Ok(person_id.clone())
}

/// The holder the author's authority is read from at sealing, `now_ms`: a
/// person's own, or an agent's intersected with its sponsor's while it is live.
fn author_holder(author: &str, now_ms: i64) -> Holder {
    Holder::of_actor(author, now_ms)
}

/// `POST /api/mailboxes/:mailboxId/sends/:sendId/approve`.
pub async fn approve(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (mut row, _) = the_send(context, Vec::new()).await?;
    let approver = decidable(context, &row)?;
    let from_address = row.mailbox_address.clone().unwrap_or_default();
    let from_name = row.mailbox_display_name.clone().unwrap_or_default();
    let manifest = row.manifest(&from_address, &from_name, &approver, context.now_ms());
    let manifest_hash = manifest.hash();
    let parameters = vec![
        context.now_ms().into(),
        approver.as_str().into(),
        manifest.message_id.as_str().into(),
        manifest_hash.as_str().into(),
        context.now_ms().into(),
        context.now_ms().into(),
        from_address.as_str().into(),
        from_name.as_str().into(),
    ];
    transition(
        context,
        &row.id,
        (SendState::Submitted, SendState::Sealed),
        "decided_at = ?, decided_by = ?, message_id = ?, manifest_hash = ?, sealed_at = ?, \
         updated_at = ?, sealed_from_address = ?, sealed_from_name = ?",
        parameters,
    );
    // The seal-time check: the author must still hold send.propose here, asked
    // inside the transaction that seals, so no revocation can slip between.
    let author_may_propose =
        tuples::holds(&author_holder(&row.author, context.now_ms()), Relation::SendPropose, &row.mailbox_id);
    context.guard(
        Statement {
            sql: format!("({}) = 1", author_may_propose.sql).into(),
            parameters: author_may_propose.parameters,
        },
        SendError::AuthorLostAuthority { author: row.author.clone() },
    );
    context.audit_detail(serde_json::json!({
        "manifest_hash": manifest_hash,
        "message_id": manifest.message_id,
        "recipients": manifest.recipients().len(),
    }));
    context.commit_now().await?;

    row.state = SendState::Sealed;
    row.decided_at = Some(context.now_ms());
    row.decided_by = Some(approver);
    row.decided_by_name = row.caller_name.clone();
    row.message_id = Some(manifest.message_id.clone());
    row.manifest_hash = Some(manifest_hash);
    row.sealed_at = Some(context.now_ms());
    row.sealed_from_address = Some(from_address);
    row.sealed_from_name = Some(from_name);
    row.updated_at = context.now_ms();

    dispatch(context, &mut row, &manifest).await;
    Ok(context.json(&row.present()))
}

/// `POST /api/mailboxes/:mailboxId/sends/:sendId/retry`.
pub async fn retry(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (mut row, _) = the_send(context, Vec::new()).await?;
    if row.state != SendState::Failed {
        return Err(SendError::WrongState { state: row.state, needs: SendState::Failed }.into());
    }
    // What leaves is rebuilt from the row, so it must still be what was approved.
    let manifest = row
        .sealed_manifest()
        .filter(|manifest| row.manifest_hash.as_deref() == Some(manifest.hash().as_str()))
        .ok_or_else(|| SendError::NotAsApproved { id: row.id.clone() })?;
    // Back to sealed before anything leaves, committed: of two retries at once,
    // one finds it sealed and is refused, so nobody receives it twice.
    transition(
        context,
        &row.id,
        (SendState::Failed, SendState::Sealed),
        "updated_at = ?",
        vec![context.now_ms().into()],
    );
    context.audit_detail(serde_json::json!({
        "manifest_hash": row.manifest_hash,
        "recipients": undelivered(manifest.recipients(), &list_of(&row.delivered_json)).len(),
        "earlier_error": row.dispatch_error,
    }));
    context.commit_now().await?;
    row.state = SendState::Sealed;
    row.updated_at = context.now_ms();
    dispatch(context, &mut row, &manifest).await;
    Ok(context.json(&row.present()))
}

/// The envelope recipients of `recipients` not yet among `delivered`: those a
/// dispatch hands the message to, so nobody receives it twice.
fn undelivered<'recipient>(recipients: Vec<&'recipient str>, delivered: &[String]) -> Vec<&'recipient str> {
    recipients.into_iter().filter(|recipient| !delivered.iter().any(|done| done == recipient)).collect()
}

/// Hands a sealed send's message to the mail binding, one envelope recipient at
/// a time (the binding takes one), skipping those it already reached, and records
/// the outcome with a deferred write: dispatched once every recipient has it,
/// otherwise failed, saying exactly who has it and who does not.
async fn dispatch(context: &mut Context<'_>, row: &mut SendRow, manifest: &Manifest) {
    let mut delivered = list_of(&row.delivered_json);
    let mut failures = Vec::new();
    match manifest.to_message() {
        Ok(raw) => {
            let pending = undelivered(manifest.recipients(), &delivered);
            for recipient in pending {
                match context.node().mailer.send(&manifest.from_address, recipient, &raw).await {
                    Ok(()) => delivered.push(recipient.to_string()),
                    Err(error) => failures.push(format!("not delivered to {recipient}: {}", error.0)),
                }
            }
        }
        Err(error) => failures.push(error.0),
    }
    if !failures.is_empty() && !delivered.is_empty() {
        failures.push(format!("delivered to {}", delivered.join(", ")));
    }
    let delivered_json = serde_json::to_string(&delivered).unwrap_or_else(|_| no_one());
    row.delivered_json = delivered_json.clone();
    row.updated_at = context.now_ms();
    if failures.is_empty() {
        row.state = SendState::Dispatched;
        row.dispatched_at = Some(context.now_ms());
        row.dispatch_error = None;
        context.defer_write(
            Statement::new(
                "UPDATE sends SET state = ?4, dispatched_at = ?2, updated_at = ?2, dispatch_error = NULL, \
                 delivered_json = ?3 WHERE id = ?1 AND state = ?5",
            )
            .bind(row.id.as_str())
            .bind(context.now_ms())
            .bind(delivered_json)
            .bind(SendState::Dispatched.as_str())
            .bind(SendState::Sealed.as_str()),
        );
    } else {
        let error = failures.join("; ");
        context.platform().log(&format!("dispatching {}: {error}", row.id));
        row.state = SendState::Failed;
        row.dispatch_error = Some(error.clone());
        context.defer_write(
            Statement::new(
                "UPDATE sends SET state = ?5, dispatch_error = ?2, updated_at = ?3, delivered_json = ?4 \
                 WHERE id = ?1 AND state = ?6",
            )
            .bind(row.id.as_str())
            .bind(error)
            .bind(context.now_ms())
            .bind(delivered_json)
            .bind(SendState::Failed.as_str())
            .bind(SendState::Sealed.as_str()),
        );
    }
}

/// `POST /api/mailboxes/:mailboxId/sends/:sendId/refuse`.
pub async fn refuse(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: RefuseSend = context.body()?;
    let reason = request.reason.trim().to_string();
    if reason.is_empty() || reason.chars().count() > 1000 {
        return Err(SendError::InvalidReason.into());
    }
    let (mut row, _) = the_send(context, Vec::new()).await?;
    let decider = decidable(context, &row)?;
    row.state = SendState::Refused;
    row.decided_at = Some(context.now_ms());
    row.decided_by = Some(decider.clone());
    row.decided_by_name = row.caller_name.clone();
    row.refusal_reason = Some(reason.clone());
    row.updated_at = context.now_ms();
    let parameters =
        vec![context.now_ms().into(), decider.as_str().into(), reason.as_str().into(), context.now_ms().into()];
    transition(
        context,
        &row.id,
        (SendState::Submitted, SendState::Refused),
        "decided_at = ?, decided_by = ?, refusal_reason = ?, updated_at = ?",
        parameters,
    );
    context.audit_detail(serde_json::json!({ "reason": reason }));
    Ok(context.json(&row.present()))
}

/// `GET /api/approvals`.
pub async fn approvals(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let holder = holder_of(context.caller(), context.now_ms()).ok_or_else(Refusal::internal)?;
    let caller = caller_id(context)?;
    let (all_of, any_of) = context.route().authority.rows_where().ok_or_else(Refusal::internal)?;
    let limit = paging::limit(context)?;
    // Oldest first, the order a queue is worked in.
    let (after_at, after_id) = paging::cursor(context, IdKind::Send, i64::MIN)?;
    let (deciding, deciding_parameters) = tuples::mailbox_ids_where(&holder, all_of, any_of);
    let mut parameters: Vec<Value> = vec![SendState::Submitted.as_str().into()];
    parameters.extend(deciding_parameters);
    parameters.push(caller.as_str().into());
    parameters.push(caller.as_str().into());
    parameters.extend([after_at.into(), after_at.into(), after_id.as_str().into(), after_id.as_str().into()]);
    parameters.push((limit + 1).into());
    let statement = Statement {
        sql: format!(
            "SELECT {SEND_COLUMNS} FROM sends s WHERE s.state = ? AND s.mailbox_id IN ({deciding}) \
             AND s.submitted_by != ? \
             AND COALESCE((SELECT a.sponsor_id FROM agents a WHERE a.id = s.submitted_by), '') != ? \
             AND (s.submitted_at > ? OR (s.submitted_at = ? AND (? = '' OR s.id > ?))) \
             ORDER BY s.submitted_at, s.id LIMIT ?"
        )
        .into(),
        parameters,
    };
    let [sends] = context.read_array([statement]).await?;
    let mut rows: Vec<SendRow> = sends.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = paging::cut(&mut rows, limit, |row| (row.submitted_at.unwrap_or_default(), &row.id));
    Ok(context.json(&ApprovalQueue { sends: rows.iter().map(SendRow::present).collect(), next_cursor }))
}
