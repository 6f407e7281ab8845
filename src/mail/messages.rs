//! Received messages: a mailbox's list, one message's metadata, its text (and,
//! asked for, its HTML), its original bytes and its attachments.
//!
//! The line between metadata and content is drawn by the contract: the list and
//! the metadata answer holders of `mailbox.metadata.read` (decision 0007); the
//! text and attachments need `mailbox.content.read`; the original needs content
//! and export. The routes that reach content are recorded in the audit
//! chain by the dispatcher, because the contract marks them.
//!
//! A receipt holds what `limits` lets it keep; a summary, which lists and
//! searches answer pages of, shows its first few recipients and how many there
//! were, so a page's size has a ceiling whatever arrived (decision 0017).

use mailroom_contract::PathParameter;
use mailroom_contract::api::limits::RECIPIENTS_SHOWN;
use mailroom_contract::api::{AttachmentSummary, EmailAddress, Message, MessageBody, MessagePage, MessageSummary};

use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::storage::QueryResult;
use crate::core::time::rfc3339;
pub use crate::mail::store::messages::SummaryRow;
use crate::mail::store::messages::{self as store, DetailRow};
use crate::mail::{inbound, location, trust, unverified_reads};

/// What can be wrong with a request about a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MessageError {
    /// No message with this id in this mailbox.
    NoSuchMessage { id: String },
    /// The message has no attachment at this index.
    NoSuchAttachment { index: String },
    /// The message's original is no longer in the object store: deleted while the
    /// same bytes arrived again (decision 0017), or lost by the store.
    OriginalGone { id: String },
}

impl From<MessageError> for Refusal {
    fn from(error: MessageError) -> Refusal {
        match error {
            MessageError::NoSuchMessage { id } => Refusal::not_found("message", &id),
            MessageError::NoSuchAttachment { index } => Refusal::new(
                404,
                "not_found",
                format!("This message has no attachment {index}."),
                "Attachments are numbered from 0, in the order get_message lists them.",
                "Use an `index` from the message's `attachments`.",
            ),
            MessageError::OriginalGone { id } => Refusal::new(
                404,
                "original_gone",
                format!("The original of message {id} is no longer stored."),
                "Its bytes were removed from the object store (a copy of it was deleted as it arrived again, or the store lost them); its details and text are still here.",
                "Read its text with get_message_body; if you need the original or its attachments, ask the sender to send it again.",
            ),
        }
    }
}

/// The addresses a receipt keeps in one of its lists.
fn addresses(json: &str) -> Vec<EmailAddress> {
    serde_json::from_str(json).unwrap_or_default()
}

/// How many addresses a list had: those kept and those counted.
fn had(kept: &[EmailAddress], not_kept: i64) -> i64 {
    i64::try_from(kept.len()).unwrap_or(i64::MAX).saturating_add(not_kept)
}

impl SummaryRow {
    fn from(&self) -> Option<EmailAddress> {
        self.from_address
            .as_ref()
            .map(|address| EmailAddress { address: address.clone(), name: self.from_name.clone() })
    }

    /// The summary a list or a search shows: the first `RECIPIENTS_SHOWN` To and
    /// Cc recipients, and how many there were.
    pub fn present(&self) -> MessageSummary {
        let (mut to, mut cc) = (addresses(&self.to_json), addresses(&self.cc_json));
        let (to_count, cc_count) = (had(&to, self.to_not_kept), had(&cc, self.cc_not_kept));
        to.truncate(RECIPIENTS_SHOWN);
        cc.truncate(RECIPIENTS_SHOWN);
        MessageSummary {
            id: self.id.clone(),
            mailbox_id: self.mailbox_id.clone(),
            from: self.from(),
            to,
            to_count,
            cc,
            cc_count,
            subject: self.subject.clone(),
            sent_at: self.sent_at.map(rfc3339),
            received_at: rfc3339(self.received_at),
            size: self.size,
            attachment_count: self.attachment_count,
            sender_authentication: self.sender_authentication,
        }
    }
}

/// `GET /api/mailboxes/:mailboxId/messages`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let limit = paging::limit(context)?;
    let after = paging::cursor_id(context, IdKind::Receipt)?;
    // Newest first in the order the receipts were stored, walked backwards along
    // the mailbox's index: a page costs the same however much the mailbox holds.
    let page = store::page(&mailbox_id, limit, after.as_deref());
    let read = location::read(context, &mailbox_id, vec![], vec![page]).await?;
    let page = read.mail.first().ok_or_else(Refusal::internal)?;
    let mut rows: Vec<SummaryRow> = page.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = paging::cut_at_id(&mut rows, limit, |row| &row.id);
    Ok(context.json(&MessagePage { messages: rows.iter().map(SummaryRow::present).collect(), next_cursor }))
}

/// Reads the path's receipt, in the path's mailbox, refusing one that is not there.
async fn receipt(context: &mut Context<'_>) -> Result<DetailRow, Refusal> {
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let receipt_id = context.path(PathParameter::ReceiptId)?.to_string();
    context.audit_object(receipt_id.clone());
    if !is_id_of(&receipt_id, IdKind::Receipt) {
        return Err(MessageError::NoSuchMessage { id: receipt_id }.into());
    }
    // The body's text only for a route that declares it reads content.
    let statement = store::detail(&receipt_id, &mailbox_id, context.route().reaches_content);
    let read = location::read(context, &mailbox_id, vec![], vec![statement]).await?;
    let row = read.mail.first().and_then(QueryResult::first).ok_or(MessageError::NoSuchMessage { id: receipt_id })?;
    row.decode().map_err(|error| context.internal(error))
}

/// `GET /api/mailboxes/:mailboxId/messages/:receiptId`.
pub async fn get(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let row = receipt(context).await?;
    let ids = |json: &str| serde_json::from_str::<Vec<String>>(json).unwrap_or_default();
    let summary = &row.summary;
    let (to, cc) = (addresses(&summary.to_json), addresses(&summary.cc_json));
    Ok(context.json(&Message {
        id: summary.id.clone(),
        mailbox_id: summary.mailbox_id.clone(),
        from: summary.from(),
        to_count: had(&to, summary.to_not_kept),
        to,
        cc_count: had(&cc, summary.cc_not_kept),
        cc,
        subject: summary.subject.clone(),
        sent_at: summary.sent_at.map(rfc3339),
        received_at: rfc3339(summary.received_at),
        size: summary.size,
        attachment_count: summary.attachment_count,
        message_id_reused: row.claimed_message_id.is_some().then_some(true),
        message_id: row.claimed_message_id.unwrap_or(row.message_id),
        authentication: trust::stored(&row.authentication_json, summary.sender_authentication),
        reply_to: addresses(&row.reply_to_json),
        in_reply_to: ids(&row.in_reply_to_json),
        references: ids(&row.references_json),
        attachments: serde_json::from_str(&row.attachments_json).unwrap_or_default(),
    }))
}

/// `GET /api/mailboxes/:mailboxId/messages/:receiptId/body`: the text a receipt
/// keeps and, asked for, the HTML part of its original, which only the object
/// store holds.
pub async fn body(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let row = receipt(context).await?;
    let html = if context.query("html") == Some("true") { html_part(context, &row).await? } else { None };
    unverified_reads::note_shown(context, [(row.summary.id.as_str(), row.summary.sender_authentication)]);
    // Mail is external content: a model reads it fenced (`trust`).
    let fence = trust::fence_for(context);
    let sender = row.summary.sender_authentication;
    let fenced = |text: String| match &fence {
        Some(nonce) => trust::fence(&text, nonce, sender),
        None => text,
    };
    Ok(context.json(&MessageBody {
        id: row.summary.id,
        text: fenced(row.text_body),
        text_source: row.text_source,
        truncated: row.text_truncated != 0,
        sender_authentication: row.summary.sender_authentication,
        content_notice: fence.as_ref().map(|_| trust::CONTENT_NOTICE.to_string()),
        html_truncated: html.as_ref().map(|(_, truncated)| *truncated),
        html: html.map(|(html, _)| fenced(html)),
    }))
}

/// The HTML part of a receipt's original, cut at the node's limit, and whether
/// it was cut; none when the message has none, or its original is gone (its
/// text is still here, so reading it is not refused).
async fn html_part(context: &Context<'_>, row: &DetailRow) -> Result<Option<(String, bool)>, Refusal> {
    let Some(bytes) = context.content_blob(&row.raw_key).await? else {
        context
            .platform()
            .log(&format!("raw message {} of {} is missing from the object store", row.raw_key, row.summary.id));
        return Ok(None);
    };
    Ok(inbound::html_part(&bytes))
}

/// The raw bytes of a receipt, from the object store; refused as gone, never a
/// failure, when they are not there.
async fn original_bytes(context: &Context<'_>, receipt_id: &str, raw_key: &str) -> Result<Vec<u8>, Refusal> {
    match context.content_blob(raw_key).await? {
        Some(bytes) => Ok(bytes),
        None => {
            context.platform().log(&format!("raw message {raw_key} of {receipt_id} is missing from the object store"));
            Err(MessageError::OriginalGone { id: receipt_id.to_string() }.into())
        }
    }
}

/// `GET /api/mailboxes/:mailboxId/messages/:receiptId/original`.
pub async fn original(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let row = receipt(context).await?;
    let bytes = original_bytes(context, &row.summary.id, &row.raw_key).await?;
    unverified_reads::note_shown(context, [(row.summary.id.as_str(), row.summary.sender_authentication)]);
    Ok(Response::download(200, "message/rfc822", bytes, &format!("{}.eml", row.summary.id)))
}

/// `GET /api/mailboxes/:mailboxId/messages/:receiptId/attachments/:attachmentIndex`.
pub async fn attachment(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let index_text = context.path(PathParameter::AttachmentIndex)?.to_string();
    let row = receipt(context).await?;
    let attachments: Vec<AttachmentSummary> = serde_json::from_str(&row.attachments_json).unwrap_or_default();
    let index = index_text
        .parse::<usize>()
        .ok()
        .filter(|index| *index < attachments.len())
        .ok_or(MessageError::NoSuchAttachment { index: index_text })?;
    let bytes = original_bytes(context, &row.summary.id, &row.raw_key).await?;
    let (contents, content_type, name) = inbound::attachment(&bytes, index)
        .ok_or_else(|| context.internal("a stored attachment could not be parsed"))?;
    let file_name = name.unwrap_or_else(|| format!("attachment-{index}"));
    unverified_reads::note_shown(context, [(row.summary.id.as_str(), row.summary.sender_authentication)]);
    Ok(Response::download(200, &content_type, contents, &file_name))
}
