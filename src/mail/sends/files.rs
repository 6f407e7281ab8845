//! The files a send carries: attached to a draft (the bytes to the object store,
//! named by their SHA-256, within the limits the contract states, the message
//! they leave in counted as it will be written), removed from
//! one, and downloaded by the author or by whoever decides on the mailbox's
//! sends. The version and the manifest name each file by hash (`record`), and
//! dispatch checks the bytes against it (`outbound`).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use mailroom_contract::PathParameter;
use mailroom_contract::api::AddAttachment;
use mailroom_contract::api::SendAttachment;
use mailroom_contract::api::limits::{
    FILE_NAME_CHARACTERS, OUTBOUND_ATTACHMENT_BYTES, OUTBOUND_ATTACHMENTS, OUTBOUND_ATTACHMENTS_TOTAL_BYTES,
    OUTBOUND_MESSAGE_BYTES,
};
use sha2::{Digest, Sha256};

use super::drafts::own_draft;
use super::errors::{Oversized, SendError};
use super::record::{Asked, TheSend, answer, the_send};
use super::store::{self, NewFile, SendRow};
use crate::core::context::Context;
use crate::core::crypto::hex;
use crate::core::http::Response;
use crate::core::refusal::Refusal;
use crate::mail::location;
use crate::mail::outbound::OutboundFile;

/// Whether `name` can be a file name in a header and on a disk: some text, no
/// path, no quotes, no controls.
fn valid_name(name: &str) -> bool {
    !name.trim().is_empty()
        && name.chars().count() <= FILE_NAME_CHARACTERS
        && !name.chars().any(|c| c.is_control() || matches!(c, '/' | '\\' | '"'))
}

/// Whether `content_type` is `type/subtype` in RFC 6838's characters.
fn valid_content_type(content_type: &str) -> bool {
    let restricted = |part: &str| {
        !part.is_empty()
            && part.len() <= 127
            && part.chars().all(|c| c.is_ascii_alphanumeric() || "!#$&-^_.+".contains(c))
    };
    content_type.split_once('/').is_some_and(|(kind, subtype)| restricted(kind) && restricted(subtype))
}

/// The path's file of `row`, by index.
fn the_file(context: &Context<'_>, row: &SendRow) -> Result<SendAttachment, Refusal> {
    let index = context.path(PathParameter::AttachmentIndex)?.to_string();
    row.attachments()
        .into_iter()
        .find(|file| file.index.to_string() == index)
        .ok_or_else(|| SendError::NoSuchFile { index }.into())
}

/// `POST /api/mailboxes/:mailboxId/sends/:sendId/attachments`.
pub async fn add(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: AddAttachment = context.body()?;
    crate::core::text::refuse_direction_controls("name", &request.name)?;
    if !valid_name(&request.name) {
        return Err(SendError::InvalidFile { field: "name" }.into());
    }
    let content_type = request.content_type.trim().to_ascii_lowercase();
    if !valid_content_type(&content_type) {
        return Err(SendError::InvalidFile { field: "content_type" }.into());
    }
    // Refused by its encoded length first, so no more than the limit is decoded.
    if request.content_base64.len() > OUTBOUND_ATTACHMENT_BYTES.div_ceil(3) * 4 + 4 {
        return Err(SendError::FileTooLarge.into());
    }
    let bytes = STANDARD
        .decode(request.content_base64.trim())
        .map_err(|_| SendError::InvalidFile { field: "content_base64" })?;
    if bytes.len() > OUTBOUND_ATTACHMENT_BYTES {
        return Err(SendError::FileTooLarge.into());
    }
    let TheSend { mut row, store: mail_store, .. } = the_send(context, Asked::default()).await?;
    own_draft(context, &row)?;
    let files = row.attachments();
    if files.len() >= OUTBOUND_ATTACHMENTS {
        return Err(SendError::TooManyFiles.into());
    }
    let sha256 = hex(&Sha256::digest(&bytes));
    let index = files.last().map_or(0, |file| file.index + 1);
    let mut listed = files;
    listed.push(SendAttachment {
        index,
        name: request.name.trim().to_string(),
        content_type: content_type.clone(),
        size: bytes.len() as i64,
        sha256: sha256.clone(),
    });
    row.attachments_json = serde_json::to_string(&listed).ok();
    // The message it would leave as, this file in it, counted as written.
    let size = row.message_size(context.now_ms());
    if size > OUTBOUND_MESSAGE_BYTES {
        return Err(SendError::MessageTooLarge { size, step: Oversized::attaching(size, bytes.len()) }.into());
    }
    // The bytes first, as inbound mail does: a row must never name nothing. Bytes
    // whose row then fails to commit are harmless (content-addressed).
    context.node().blobs.put(&OutboundFile::key(&sha256), &bytes).await.map_err(|error| context.internal(error.0))?;
    // Still a draft of the caller's, still within the limits, when it commits:
    // its count of files, and their bytes no more than a message can carry,
    // which a file attached at the same moment could take it past (submitting
    // counts the message again).
    let file = NewFile {
        position: index,
        name: request.name.trim(),
        content_type: &content_type,
        size: bytes.len() as i64,
        sha256: &sha256,
    };
    let limits = (OUTBOUND_ATTACHMENTS as i64, OUTBOUND_ATTACHMENTS_TOTAL_BYTES as i64);
    let added = store::file_added_within(&row.id, &row.author, file, limits);
    location::write_changing_one_row(context, mail_store, &row.mailbox_id, added, SendError::Raced)?;
    location::write(context, mail_store, &row.mailbox_id, store::touched(&row.id, context.now_ms()))?;
    context.audit_detail(serde_json::json!({
        "file": request.name.trim(),
        "size": bytes.len(),
        "sha256": sha256,
        "message_size": size,
    }));
    row.updated_at = context.now_ms();
    answer(context, mail_store, row).await
}

/// `DELETE /api/mailboxes/:mailboxId/sends/:sendId/attachments/:attachmentIndex`.
pub async fn remove(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let TheSend { mut row, store: mail_store, .. } = the_send(context, Asked::default()).await?;
    own_draft(context, &row)?;
    let file = the_file(context, &row)?;
    let removed = store::file_removed(&row.id, file.index, &row.author);
    location::write_changing_one_row(context, mail_store, &row.mailbox_id, removed, SendError::Raced)?;
    // The files after it move up one place, so indexes stay 0, 1, 2, ….
    for statement in store::files_closed_up_after(&row.id, file.index) {
        location::write(context, mail_store, &row.mailbox_id, statement)?;
    }
    location::write(context, mail_store, &row.mailbox_id, store::touched(&row.id, context.now_ms()))?;
    context.audit_detail(serde_json::json!({ "file": file.name, "sha256": file.sha256 }));
    let remaining: Vec<SendAttachment> = row
        .attachments()
        .into_iter()
        .filter(|kept| kept.index != file.index)
        .map(|kept| SendAttachment { index: if kept.index > file.index { kept.index - 1 } else { kept.index }, ..kept })
        .collect();
    row.attachments_json = serde_json::to_string(&remaining).ok();
    row.updated_at = context.now_ms();
    answer(context, mail_store, row).await
}

/// `GET /api/mailboxes/:mailboxId/sends/:sendId/attachments/:attachmentIndex`.
pub async fn download(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let TheSend { row, .. } = the_send(context, Asked::default()).await?;
    let file = the_file(context, &row)?;
    context.audit_detail(serde_json::json!({ "file": file.name, "sha256": file.sha256 }));
    let bytes = context
        .content_blob(&OutboundFile::key(&file.sha256))
        .await?
        .ok_or_else(|| context.internal(format!("the bytes of {} are not in the object store", file.sha256)))?;
    Ok(Response::download(200, &file.content_type, bytes, &file.name))
}
