//! Inbound mail as the node reads it: what a message Email Routing delivers
//! is, and why one is refused.
//!
//! A message is parsed once (mail-parser: charsets, encoded words, multipart,
//! its parts delimited only where RFC 2046 says, `boundaries`; an HTML-only
//! body rendered to text by `mailroom_html_text`); `receiving` stores it. A
//! message over the size cap, beyond the limits on its shape (`limits`), or
//! that is not a message at all is rejected with an SMTP reason and stored
//! nowhere; what a receipt keeps of the rest is cut to the limits.
//!
//! A Message-ID is a claim the sender makes, not a key the node can trust
//! (decision 0029). The same message delivered to one mailbox again (the same
//! content, the trace the servers on the way add left out, with the same
//! sender verdict) is stored once, and the delivery is audited; another
//! message claiming a Message-ID the mailbox already holds is stored too,
//! under a key of its own, and marked as reusing it. Nothing that arrives is
//! dropped without an entry in the audit chain.

use mail_parser::{Address, HeaderValue, Message, MessageParser, MimeHeaders, PartType};
use mailroom_contract::api::limits::HTML_BYTES;
use mailroom_contract::api::{AttachmentSummary, EmailAddress};
use sha2::{Digest, Sha256};

use crate::core::addresses;
use crate::core::crypto::hex;
use crate::mail::boundaries::ForTheParser;
use crate::mail::headers;
use crate::mail::limits::{self, Exceeded};
use crate::mail::message_ids;
use mailroom_html_text as html_text;

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
    /// The node's database is at its limit (`DATABASE_LIMIT_BYTES`): nothing
    /// more is stored until room is made; administrators are told.
    DatabaseFull,
    /// The mailbox's own database is at its limit (`MAILBOX_LIMIT_BYTES`,
    /// decision 0040): nothing more is stored for it until room is made;
    /// administrators are told.
    MailboxFull { address: String },
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
            Rejection::DatabaseFull => {
                "452 4.3.1 Insufficient storage: this mail node is full; try again later".to_string()
            }
            Rejection::MailboxFull { address } => format!("452 4.2.2 Mailbox full: {address}; try again later"),
        }
    }

    /// Whether the sender may succeed by trying again later (the node could
    /// not store it now), rather than never.
    pub fn is_temporary(&self) -> bool {
        matches!(self, Rejection::TemporaryFailure | Rejection::DatabaseFull | Rejection::MailboxFull { .. })
    }
}

/// What happened to an accepted message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// A new receipt (`rcp_…`): a new message, or one that reuses a Message-ID
    /// the mailbox holds with other content (marked so).
    Stored { receipt_id: String },
    /// This mailbox already holds this very message (`receipt_id`): a
    /// re-delivery, recorded in the audit chain and not stored again.
    Duplicate { receipt_id: String },
}

/// A message, parsed into what a receipt records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedMessage {
    /// Message-ID without angle brackets; derived from the content when absent.
    pub message_id: String,
    /// The From line's first address that is one, with its name.
    pub from: Option<EmailAddress>,
    /// How many addresses the From line held as parsed, kept or not: a sender
    /// verdict covers one (`trust`).
    pub from_addresses: usize,
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
    /// What the message is, as a hash: its own header fields and its body,
    /// without the trace mail servers add on the way (`content_digest`).
    pub content_digest: String,
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
    with_message(raw, |message, _| read(&message, raw)).flatten()
}

/// `then` given `raw` as mail-parser reads it, through the boundary
/// workaround (`ForTheParser`, which maps a part back to the bytes sent), or
/// `None` when mail-parser reads nothing: the one place received mail is
/// parsed, so no caller can hand mail-parser the raw bytes by mistake.
fn with_message<T>(raw: &[u8], then: impl FnOnce(Message<'_>, &ForTheParser<'_>) -> T) -> Option<T> {
    let for_the_parser = ForTheParser::of(raw);
    let message = MessageParser::default().parse(for_the_parser.bytes())?;
    Some(then(message, &for_the_parser))
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
    let content_digest = content_digest(raw);
    let message_id = match message.message_id().and_then(message_ids::message_id) {
        Some(id) => id,
        // Without a Message-ID (or with one that is not one, which is never kept:
        // a reply would write it out), its content identifies the message, so a
        // redelivery is still recognised.
        None => message_ids::derived(&content_digest),
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
        from_addresses: message.from().map_or(0, |from| from.iter().count()),
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
        content_digest,
    })
}

/// The header fields that make a message what it is: who wrote it to whom,
/// about what, when, in answer to what, and how its body is to be read. The
/// rest of the header block is mostly trace the servers on the way prepend
/// (`Received`, the receiving service's stamp, ARC), which differ between two
/// deliveries of one message.
const CONTENT_FIELDS: &[&str] = &[
    "from",
    "sender",
    "reply-to",
    "to",
    "cc",
    "subject",
    "date",
    "message-id",
    "in-reply-to",
    "references",
    "mime-version",
    "content-type",
    "content-transfer-encoding",
    "content-disposition",
];

/// SHA-256 (hex) of what a message is: its `CONTENT_FIELDS` in the order they
/// came (names lower-cased, values unfolded) and its body, byte for byte. Two
/// deliveries of one message share it; a message that differs in any of them
/// does not.
pub fn content_digest(raw: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"mailroom content 1");
    let mut part = |bytes: &[u8]| {
        hasher.update((bytes.len() as u64).to_be_bytes());
        hasher.update(bytes);
    };
    for (name, value) in headers::fields(raw) {
        let name = name.to_ascii_lowercase();
        if CONTENT_FIELDS.contains(&name.as_str()) {
            part(name.as_bytes());
            part(value.as_bytes());
        }
    }
    part(headers::body(raw));
    hex(&hasher.finalize())
}

/// A message as a receipt keeps it (decision 0017): refused before anything is
/// stored when its header block is too big or its parts nest too deep, otherwise
/// parsed and cut to the limits, counting the recipients and attachments not kept.
pub(super) fn within_limits(raw: &[u8]) -> Result<Kept, Rejection> {
    limits::refuse_header_block(raw).map_err(Rejection::Exceeds)?;
    let parsed = with_message(raw, |message, _| {
        let message = limits::refuse_nesting(message).map_err(Rejection::Exceeds)?;
        read(&message, raw).ok_or(Rejection::Unparseable)
    });
    Ok(Kept::cut_to_the_limits(parsed.ok_or(Rejection::Unparseable)??))
}

/// A parsed message cut to what a receipt keeps, with what it did not keep counted.
pub(super) struct Kept {
    pub(super) parsed: ParsedMessage,
    pub(super) to_not_kept: i64,
    pub(super) cc_not_kept: i64,
    pub(super) attachments_not_listed: i64,
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
/// file name: an attached message's as it was sent (`ForTheParser::as_sent`).
pub fn attachment(raw: &[u8], index: usize) -> Option<(Vec<u8>, String, Option<String>)> {
    // One parse serves the part's bytes and the content type its summary
    // names, instead of a second parse of the message for the summary.
    with_message(raw, |message, for_the_parser| {
        let part = message.attachment(u32::try_from(index).ok()?)?;
        let content_type = read(&message, raw)?.attachments.get(index)?.content_type.clone();
        let contents = for_the_parser.as_sent(part.contents()).to_vec();
        Some((contents, content_type, part.attachment_name().map(str::to_string)))
    })
    .flatten()
}

/// The HTML part of a raw message as the node hands it out: as its sender wrote
/// it (in UTF-8), cut at `limits::HTML_BYTES`, and whether it was cut; `None`
/// when the message has no HTML.
pub fn html_part(raw: &[u8]) -> Option<(String, bool)> {
    with_message(raw, |message, _| match &message.html_part(0)?.body {
        PartType::Html(html) => Some(truncate(html, HTML_BYTES)),
        _ => None,
    })
    .flatten()
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
