//! The author's side of a send: drafting it (new, or in reply to a received
//! message), editing and deleting the draft, submitting it for a second
//! person's decision, and taking a submission back.

use mailroom_contract::api::{CreateDraft, SendState, UpdateDraft};
use mailroom_contract::{PathParameter, Relation};

use super::record::{SendRow, caller_id, json_list, list_of, no_one, the_send, transition};
use super::{MAXIMUM_RECIPIENTS, MAXIMUM_REFERENCES, MAXIMUM_SUBJECT_CHARACTERS, MAXIMUM_TEXT_BYTES, SendError};
use crate::authz::holder_of;
use crate::authz::tuples;
use crate::core::addresses;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, new_id};
use crate::core::refusal::Refusal;
use crate::core::storage::Statement;
use crate::mail::message_ids;

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
            // Checked again here, not only on the way in: a receipt stored before
            // the node dropped what is not a Message-ID must not write it out.
            let message_id = Some(row.text("message_id").map_err(|error| context.internal(error))?)
                .filter(|id| message_ids::is_message_id(id));
            let mut references = list_of(&row.text("references_json").map_err(|error| context.internal(error))?);
            references.extend(message_id.clone());
            references.retain(|id| message_ids::is_message_id(id));
            let skip = references.len().saturating_sub(MAXIMUM_REFERENCES);
            (message_id, references.split_off(skip), names)
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
    // The message it answers may be deleted between the read and the commit
    // (decision 0017): then nothing is written, and the answer is that it is gone.
    context.write_changing_one_row(
        Statement::new(
            "INSERT INTO sends (id, mailbox_id, author, state, to_json, cc_json, subject, text, reply_to, in_reply_to, \
             references_json, created_at, updated_at) SELECT ?1, ?2, ?3, ?12, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11 \
             WHERE ?8 IS NULL OR EXISTS (SELECT 1 FROM receipts WHERE id = ?8 AND mailbox_id = ?2)",
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
        .bind(SendState::Draft.name()),
        SendError::NoSuchReplyTarget { id: request.reply_to.clone().unwrap_or_default() },
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
        submitted_version: None,
        decided_by_name: None,
        caller_name: None,
        mailbox_address: Some(names.0),
        mailbox_display_name: None,
        author_name: Some(names.1),
        submitted_by_sponsor: None,
        submitted_by_minter: None,
        submitted_by_credential_issuer: None,
    };
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
            .bind(SendState::Draft.name()),
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
    // Every submission is a new version, kept whole so that a decision on an
    // older one can be told what changed.
    let submission = row.submission().ok_or_else(Refusal::internal)?;
    let version = submission.version();
    row.submitted_version = Some(version.clone());
    let parameters =
        vec![context.now_ms().into(), caller.as_str().into(), context.now_ms().into(), version.as_str().into()];
    transition(
        context,
        &row.id,
        (SendState::Draft, SendState::Submitted),
        "submitted_at = ?, submitted_by = ?, updated_at = ?, submitted_version = ?",
        parameters,
    );
    let submission_json = serde_json::to_string(&submission).map_err(|error| context.internal(error))?;
    context.write(
        Statement::new(
            "INSERT INTO send_versions (send_id, version, submission_json, submitted_at) VALUES (?1, ?2, ?3, ?4)",
        )
        .bind(row.id.as_str())
        .bind(version.as_str())
        .bind(submission_json)
        .bind(context.now_ms()),
    );
    context.audit_detail(serde_json::json!({ "version": version }));
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
    row.submitted_version = None;
    row.updated_at = context.now_ms();
    transition(
        context,
        &row.id,
        (SendState::Submitted, SendState::Draft),
        "submitted_at = NULL, submitted_by = NULL, submitted_version = NULL, updated_at = ?",
        vec![context.now_ms().into()],
    );
    Ok(context.json(&row.present()))
}
