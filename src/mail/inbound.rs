//! Inbound mail: what the Worker's email handler does with a message Email
//! Routing delivers.
//!
//! A message is parsed once (mail-parser: charsets, encoded words, multipart;
//! an HTML-only body rendered to text by `html_text`), its raw bytes stored in
//! R2, and a receipt
//! written to D1 for the mailbox it was delivered to, with its search index rows
//! and an audit entry, in one batch. A message to an unknown address, over the
//! size cap, beyond the limits on its shape (`limits`), or that is not a message
//! at all is rejected with an SMTP reason and stored nowhere; what a receipt
//! keeps of the rest is cut to the limits. The same Message-ID delivered twice to
//! one mailbox is stored once.

use mail_parser::{Address, HeaderValue, Message, MessageParser, MimeHeaders, PartType};
use mailroom_contract::api::limits::HTML_BYTES;
use mailroom_contract::api::{AttachmentSummary, EmailAddress, SenderAuthentication};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::audit::chain;
use crate::core::addresses;
use crate::core::context::ports::AuditRecord;
use crate::core::crypto::{hex, sha256_hex};
use crate::core::ids::{IdKind, new_id};
use crate::core::node::Node;
use crate::core::storage::{Counted, Statement, StorageError};
use crate::mail::butlers;
use crate::mail::html_text;
use crate::mail::limits::{self, Exceeded};
use crate::mail::message_ids;
use crate::mail::search::index;
use crate::mail::threads::linking;
use crate::mail::trust;

/// The key a received message's raw bytes are stored under in the object store:
/// content-addressed, so a message delivered to two mailboxes is stored once and
/// storing it again is harmless.
pub fn raw_message_key(raw: &[u8]) -> String {
    format!("raw/{}", sha256_hex(raw))
}

/// The most text kept per message for reading and search; the original keeps all.
pub const MAXIMUM_TEXT_BYTES: usize = 256 * 1024;

/// Why a message was not accepted, as the SMTP reply Email Routing gives the sender.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// Bigger than the configured cap.
    TooLarge { limit: usize },
    /// Not a message: no header could be read.
    Unparseable,
    /// Beyond what the node reads: its header block or its nesting.
    Exceeds(Exceeded),
    /// No mailbox has the envelope recipient's address.
    UnknownRecipient { address: String },
    /// The node could not store it; the sender should try again later.
    TemporaryFailure,
}

impl Rejection {
    /// The reason handed to `setReject`: an SMTP reply code, an enhanced status
    /// code and words for the sender.
    pub fn smtp_reason(&self) -> String {
        match self {
            Rejection::TooLarge { limit } => {
                format!("552 5.3.4 Message too big for this mailbox (limit {limit} bytes)")
            }
            Rejection::Unparseable => "550 5.6.0 Message could not be parsed as RFC 5322".to_string(),
            Rejection::Exceeds(exceeded) => exceeded.smtp_reason(),
            Rejection::UnknownRecipient { address } => format!("550 5.1.1 No such mailbox here: {address}"),
            Rejection::TemporaryFailure => {
                "451 4.3.0 Temporary failure storing the message; try again later".to_string()
            }
        }
    }
}

/// What happened to an accepted message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// A new receipt (`rcp_…`).
    Stored { receipt_id: String },
    /// This mailbox already holds a message with this Message-ID.
    Duplicate { receipt_id: String },
}

/// A message, parsed into what a receipt records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedMessage {
    /// Message-ID without angle brackets; derived from the bytes when absent.
    pub message_id: String,
    pub from: Option<EmailAddress>,
    pub to: Vec<EmailAddress>,
    pub cc: Vec<EmailAddress>,
    /// The Reply-To addresses, when the sender gave them.
    pub reply_to: Vec<EmailAddress>,
    pub subject: String,
    /// The Date header, in milliseconds since the epoch.
    pub sent_at: Option<i64>,
    pub in_reply_to: Vec<String>,
    pub references: Vec<String>,
    pub text: String,
    /// `text`, `html` (rendered from an HTML-only body) or `none`.
    pub text_source: &'static str,
    pub text_truncated: bool,
    pub attachments: Vec<AttachmentSummary>,
}

/// The addresses of a header, each as it can be shown and replied to: names
/// without control characters, and only what is an address by RFC 5322 (what a
/// reply could never be sent to is not kept as an address).
fn addresses_of(address: Option<&Address<'_>>) -> Vec<EmailAddress> {
    address
        .map(|address| {
            address
                .iter()
                .filter_map(|addr| {
                    let email = addr.address()?.trim().to_string();
                    if !addresses::is_address(&email.to_lowercase()) {
                        return None;
                    }
                    let name = addr.name().map(one_line).filter(|name| !name.is_empty());
                    Some(EmailAddress { address: email, name })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `text` on one line: every control character (CR and LF among them) becomes a
/// space, and the ends are trimmed. For what is shown as a header's value.
fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>().trim().to_string()
}

/// The Message-IDs of In-Reply-To or References that are Message-IDs: anything
/// else (a CR or LF that would start another header in a reply, a space, a
/// bracket) is dropped here, so it is never stored and never written out.
fn message_ids(value: &HeaderValue<'_>) -> Vec<String> {
    let ids: Vec<&str> = match value {
        HeaderValue::Text(text) => vec![text.as_ref()],
        HeaderValue::TextList(list) => list.iter().map(|id| id.as_ref()).collect(),
        _ => Vec::new(),
    };
    ids.into_iter().filter_map(message_ids::message_id).collect()
}

/// Cuts `text` to at most `limit` bytes, on a character boundary.
fn truncate(text: &str, limit: usize) -> (String, bool) {
    if text.len() <= limit {
        return (text.to_string(), false);
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text[..end].to_string(), true)
}

/// Parses a raw RFC 5322 message, or `None` when it is not one.
pub fn parse(raw: &[u8]) -> Option<ParsedMessage> {
    read(&MessageParser::default().parse(raw)?, raw)
}

/// What a receipt records of `message`, parsed from `raw`, or `None` when it is
/// not a message.
fn read(message: &Message<'_>, raw: &[u8]) -> Option<ParsedMessage> {
    // A parser this lenient reads almost any bytes as something; a message is
    // what carries at least one of the headers every message has.
    let identifying = message.from().is_some()
        || message.to().is_some()
        || message.subject().is_some()
        || message.date().is_some()
        || message.message_id().is_some();
    if !identifying {
        return None;
    }
    let message_id = match message.message_id().and_then(message_ids::message_id) {
        Some(id) => id,
        // Without a Message-ID (or with one that is not one, which is never kept:
        // a reply would write it out), the bytes themselves identify the message,
        // so a redelivery is still recognised.
        None => derived_message_id(raw),
    };
    let (text, text_source) = match message.text_part(0).map(|part| &part.body) {
        // Only HTML came: its text as a browser shows it, paragraphs kept.
        Some(PartType::Html(html)) => (html_text::render(html, MAXIMUM_TEXT_BYTES), "html"),
        Some(_) => (message.body_text(0).map(|text| text.into_owned()).unwrap_or_default(), "text"),
        None => (String::new(), "none"),
    };
    let (text, text_truncated) = truncate(&text, MAXIMUM_TEXT_BYTES);
    let attachments = message
        .attachments()
        .enumerate()
        .map(|(index, part)| AttachmentSummary {
            index: index as i64,
            name: part.attachment_name().map(str::to_string),
            content_type: part
                .content_type()
                .map(|kind| match kind.subtype() {
                    Some(subtype) => format!("{}/{}", kind.ctype(), subtype),
                    None => kind.ctype().to_string(),
                })
                .unwrap_or_else(|| "application/octet-stream".to_string())
                .to_lowercase(),
            size: part.len() as i64,
        })
        .collect();
    Some(ParsedMessage {
        message_id,
        from: addresses_of(message.from()).into_iter().next(),
        to: addresses_of(message.to()),
        cc: addresses_of(message.cc()),
        reply_to: addresses_of(message.reply_to()),
        subject: one_line(message.subject().unwrap_or_default()),
        sent_at: message.date().map(|date| date.to_timestamp() * 1000),
        in_reply_to: message_ids(message.in_reply_to()),
        references: message_ids(message.references()),
        text,
        text_source,
        text_truncated,
        attachments,
    })
}

/// The Message-ID of a message that has none the node keeps: derived from its
/// bytes, so a redelivery is still recognised.
fn derived_message_id(raw: &[u8]) -> String {
    format!("{}@derived.mailroom.invalid", &hex(&Sha256::digest(raw))[..32])
}

/// A message as a receipt keeps it (decision 0017): refused before anything is
/// stored when its header block is too big or its parts nest too deep, otherwise
/// parsed and cut to the limits, counting the recipients and attachments not kept.
fn within_limits(raw: &[u8]) -> Result<Kept, Rejection> {
    limits::refuse_header_block(raw).map_err(Rejection::Exceeds)?;
    let message = MessageParser::default().parse(raw).ok_or(Rejection::Unparseable)?;
    let message = limits::refuse_nesting(message).map_err(Rejection::Exceeds)?;
    let parsed = read(&message, raw).ok_or(Rejection::Unparseable)?;
    Ok(Kept::cut_to_the_limits(parsed))
}

/// A parsed message cut to what a receipt keeps, with what it did not keep counted.
struct Kept {
    parsed: ParsedMessage,
    to_not_kept: i64,
    cc_not_kept: i64,
    attachments_not_listed: i64,
}

impl Kept {
    fn cut_to_the_limits(parsed: ParsedMessage) -> Kept {
        let (to, to_not_kept) = limits::addresses(parsed.to);
        let (cc, cc_not_kept) = limits::addresses(parsed.cc);
        let (reply_to, _) = limits::addresses(parsed.reply_to);
        let (attachments, attachments_not_listed) = limits::attachments(parsed.attachments);
        let parsed = ParsedMessage {
            from: parsed.from.and_then(limits::address),
            to,
            cc,
            reply_to,
            subject: limits::cut(&parsed.subject, limits::SUBJECT_CHARACTERS),
            in_reply_to: limits::in_reply_to(parsed.in_reply_to),
            references: limits::references(parsed.references),
            attachments,
            ..parsed
        };
        Kept { parsed, to_not_kept, cc_not_kept, attachments_not_listed }
    }
}

/// The bytes of attachment `index` of a raw message, with its content type and
/// file name.
pub fn attachment(raw: &[u8], index: usize) -> Option<(Vec<u8>, String, Option<String>)> {
    let message = MessageParser::default().parse(raw)?;
    let part = message.attachment(u32::try_from(index).ok()?)?;
    let content_type = parse(raw)?.attachments.get(index)?.content_type.clone();
    Some((part.contents().to_vec(), content_type, part.attachment_name().map(str::to_string)))
}

/// The HTML part of a raw message as the node hands it out: as its sender wrote
/// it (in UTF-8), cut at `limits::HTML_BYTES`, and whether it was cut; `None`
/// when the message has no HTML.
pub fn html_part(raw: &[u8]) -> Option<(String, bool)> {
    let message = MessageParser::default().parse(raw)?;
    match &message.html_part(0)?.body {
        PartType::Html(html) => Some(truncate(html, HTML_BYTES)),
        _ => None,
    }
}

#[derive(Serialize)]
struct StoredAddress<'a> {
    address: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
}

fn addresses_json(addresses: &[EmailAddress]) -> String {
    let stored: Vec<StoredAddress<'_>> = addresses
        .iter()
        .map(|address| StoredAddress { address: &address.address, name: address.name.as_deref() })
        .collect();
    serde_json::to_string(&stored).unwrap_or_else(|_| "[]".into())
}

/// Receives one message for one envelope recipient.
pub async fn receive(
    node: &Node<'_>,
    envelope_from: &str,
    envelope_to: &str,
    raw: &[u8],
) -> Result<Delivery, Rejection> {
    let limit = node.config.maximum_message_bytes;
    if raw.len() > limit {
        return Err(Rejection::TooLarge { limit });
    }
    let Kept { parsed, to_not_kept, cc_not_kept, attachments_not_listed } = within_limits(raw)?;
    let recipient = addresses::normalize(envelope_to).unwrap_or_else(|| envelope_to.trim().to_lowercase());
    let database = Counted::new(node.database);
    let failure = |error: &dyn std::fmt::Display| {
        node.platform.log(&format!("receiving mail for {recipient}: {error}"));
        Rejection::TemporaryFailure
    };

    let mailbox = Statement::new("SELECT id FROM mailboxes WHERE address = ?1").bind(recipient.as_str());
    let existing = Statement::new(
        "SELECT r.id FROM receipts r JOIN mailboxes m ON m.id = r.mailbox_id WHERE m.address = ?1 AND r.message_id = ?2",
    )
    .bind(recipient.as_str())
    .bind(parsed.message_id.as_str());
    // Which conversation it joins is read in the same round trip: by the
    // Message-IDs it names, or failing those by its subject (`linking`).
    let wanted = linking::wanted_ids(&parsed.message_id, &parsed.in_reply_to, &parsed.references);
    let by_ids = linking::by_message_ids(&recipient, &wanted);
    let sender = parsed.from.as_ref().map(|from| from.address.as_str());
    let by_subject = linking::by_subject(&recipient, &parsed.subject, sender, node.platform.now_ms());
    // The mailbox's published butlers, with what their sponsors hold now.
    let butlers = butlers::active_on_delivery(&recipient);
    let results = database
        .execute(vec![mailbox, existing, by_ids, by_subject, butlers])
        .await
        .map_err(|error| failure(&error))?;
    let Some(mailbox_id) = results[0].first().and_then(|row| row.text("id").ok()) else {
        return Err(Rejection::UnknownRecipient { address: recipient });
    };
    if let Some(receipt_id) = results[1].first().and_then(|row| row.text("id").ok()) {
        return Ok(Delivery::Duplicate { receipt_id });
    }

    // The bytes first: a receipt must never point at nothing. A stored blob whose
    // receipt then fails to commit is harmless (content-addressed, written again
    // on redelivery).
    let raw_key = raw_message_key(raw);
    node.blobs.put(&raw_key, raw).await.map_err(|error| failure(&error.0))?;

    let receipt_id = new_id(IdKind::Receipt, node.platform);
    let joined = [&results[2], &results[3]]
        .into_iter()
        .find_map(|result| result.first().and_then(|row| row.text("thread_id").ok()));
    let (thread_id, new_thread) = match joined {
        Some(thread_id) => (thread_id, false),
        None => (new_id(IdKind::Thread, node.platform), true),
    };
    let authentication = trust::authentication_of(raw, sender);
    let now_ms = node.platform.now_ms();
    let recipients: Vec<String> = parsed
        .to
        .iter()
        .chain(&parsed.cc)
        .map(|address| match &address.name {
            Some(name) => format!("{name} {}", address.address),
            None => address.address.clone(),
        })
        .collect();
    // Mail is listed and searched newest first in the order it was stored (the
    // receipts' rowid, decision 0014). Its time is this Worker's clock, read
    // before the bytes were stored, so a delivery that commits after another can
    // hold an earlier time; it takes the time of the one stored before it
    // instead, so that newest first by time and by storage never disagree.
    let insert = Statement::new(
        "INSERT INTO receipts (id, mailbox_id, message_id, envelope_from, from_address, from_name, to_json, cc_json, \
         recipients, subject, sent_at, received_at, in_reply_to_json, references_json, size, raw_key, text_body, \
         text_source, text_truncated, attachments_json, reply_to_json, to_not_kept, cc_not_kept, attachments_not_listed, \
         thread_id, sender_authentication, authentication_json) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, \
         MAX(?12, COALESCE((SELECT latest.received_at FROM receipts latest ORDER BY latest.rowid DESC LIMIT 1), ?12)), \
         ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)",
    )
    .bind(receipt_id.as_str())
    .bind(mailbox_id.as_str())
    .bind(parsed.message_id.as_str())
    .bind(envelope_from.trim())
    .bind(parsed.from.as_ref().map(|from| from.address.clone()))
    .bind(parsed.from.as_ref().and_then(|from| from.name.clone()))
    .bind(addresses_json(&parsed.to))
    .bind(addresses_json(&parsed.cc))
    .bind(recipients.join(" "))
    .bind(parsed.subject.as_str())
    .bind(parsed.sent_at)
    .bind(now_ms)
    .bind(serde_json::to_string(&parsed.in_reply_to).unwrap_or_else(|_| "[]".into()))
    .bind(serde_json::to_string(&parsed.references).unwrap_or_else(|_| "[]".into()))
    .bind(raw.len() as i64)
    .bind(raw_key.as_str())
    .bind(parsed.text.as_str())
    .bind(parsed.text_source)
    .bind(i64::from(parsed.text_truncated))
    .bind(serde_json::to_string(&parsed.attachments).unwrap_or_else(|_| "[]".into()))
    .bind(addresses_json(&parsed.reply_to))
    .bind(to_not_kept)
    .bind(cc_not_kept)
    .bind(attachments_not_listed)
    .bind(thread_id.as_str())
    .bind(authentication.sender.unwrap_or(SenderAuthentication::Unverified).name())
    .bind(serde_json::json!({ "spf": authentication.spf, "dkim": authentication.dkim, "dmarc": authentication.dmarc }).to_string());
    let record = AuditRecord {
        at: now_ms,
        actor: None,
        delegator: None,
        surface: Some("email"),
        action: "receive_mail".into(),
        object: Some(receipt_id.clone()),
        outcome: "ok",
        detail: Some(
            serde_json::json!({
                "mailbox": mailbox_id,
                "message_id": parsed.message_id,
                "size": raw.len(),
                "envelope_from": envelope_from.trim(),
                "thread": thread_id,
                "sender_authentication": authentication.sender.map(SenderAuthentication::name),
            })
            .to_string(),
        ),
    };
    let entry = chain::append(&node.config.audit_key, &record, node.platform);
    // One batch, one attempt: the entry's place in the chain is the database's
    // to assign, so concurrent deliveries never contend for it.
    let mut batch = vec![insert];
    batch.extend(index::indexed(&receipt_id));
    batch.extend(linking::receive_into(&thread_id, new_thread, &receipt_id, &parsed.subject));
    batch.push(entry);
    // The butlers act on the conversation once the message is in it, each effect
    // audited as the butler for its sponsor, after the delivery's own entry.
    let facts = butlers::facts_of_delivery(
        parsed.from.as_ref(),
        parsed.to.iter().chain(&parsed.cc).cloned(),
        &parsed.subject,
        authentication.sender,
        parsed.attachments.len(),
    );
    let reply = butlers::ReplyBasis {
        to: if parsed.reply_to.is_empty() { parsed.from.as_slice() } else { &parsed.reply_to },
        message_id: &parsed.message_id,
        references: &parsed.references,
    };
    let work = butlers::on_delivery(&results[4], &facts, &reply, &receipt_id, &thread_id, &mailbox_id, node.platform);
    batch.extend(work.statements);
    batch.extend(work.records.iter().map(|record| chain::append(&node.config.audit_key, record, node.platform)));
    match database.execute(batch).await {
        Ok(_) => {
            butlers::post_webhooks(&work.posts, &node.config.session_key, node.webhooks, node.platform).await;
            Ok(Delivery::Stored { receipt_id })
        }
        // A concurrent delivery of the same message to the same mailbox won.
        Err(StorageError::Unique(constraint)) if constraint.starts_with("receipts.mailbox_id") => {
            Ok(Delivery::Duplicate { receipt_id: String::new() })
        }
        Err(error) => Err(failure(&error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_whole_characters() {
        assert_eq!(truncate("héllo", 2), ("h".to_string(), true));
        assert_eq!(truncate("héllo", 3), ("hé".to_string(), true));
        assert_eq!(truncate("hi", 10), ("hi".to_string(), false));
    }

    #[test]
    fn html_is_handed_out_as_sent_and_cut_at_the_limit() {
        let message = |body: &str| {
            format!("From: a@b.example\r\nSubject: s\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{body}")
                .into_bytes()
        };
        let html = "<p onclick=\"x()\">é</p>";
        assert_eq!(html_part(&message(html)), Some((html.to_string(), false)));
        let long = "é".repeat(HTML_BYTES / 2 + 1);
        let (cut, truncated) = html_part(&message(&long)).unwrap();
        assert!(truncated);
        assert_eq!(cut.len(), HTML_BYTES, "whole characters, up to the limit");
        assert_eq!(html_part(b"From: a@b.example\r\nSubject: s\r\n\r\nplain text"), None, "text is not HTML");
    }

    #[test]
    fn rejections_carry_smtp_codes() {
        assert!(Rejection::UnknownRecipient { address: "x@y.z".into() }.smtp_reason().starts_with("550 5.1.1"));
        assert!(Rejection::TooLarge { limit: 10 }.smtp_reason().starts_with("552"));
        assert!(Rejection::TemporaryFailure.smtp_reason().starts_with("451"));
    }
}
