//! Inbound mail: what the Worker's email handler does with a message Email
//! Routing delivers.
//!
//! A message is parsed once (mail-parser: charsets, encoded words, multipart,
//! its parts delimited only where RFC 2046 says, `boundaries`; an HTML-only
//! body rendered to text by `mailroom_html_text`), its raw bytes stored in
//! R2, and a receipt
//! written to D1 for the mailbox it was delivered to, with its search index rows
//! and an audit entry, in one batch. A message to an unknown address, over the
//! size cap, beyond the limits on its shape (`limits`), or that is not a message
//! at all is rejected with an SMTP reason and stored nowhere; what a receipt
//! keeps of the rest is cut to the limits.
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
use mailroom_contract::api::{
    AttachmentSummary, AuthenticationResults, EmailAddress, SenderAuthentication, SenderVerdictBasis,
};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::audit::AuditChain;
use crate::core::addresses;
use crate::core::background::{Background, BackgroundError};
use crate::core::context::ports::AuditRecord;
use crate::core::crypto::{hex, sha256_hex};
use crate::core::events::Topic;
use crate::core::ids::{IdKind, new_id};
use crate::core::node::{DATABASE_WARNING_PERCENT, Node};
use crate::core::storage::{QueryResult, StorageError};
use crate::mail::boundaries::ForTheParser;
use crate::mail::butlers;
use crate::mail::headers;
use crate::mail::limits::{self, Exceeded};
use crate::mail::message_ids;
use crate::mail::search::index;
use crate::mail::store::inbound::{self as store, Claimant, NewReceipt};
use crate::mail::threads::linking;
use crate::mail::trust;
use crate::notifications::{self, DatabaseFullness};
use mailroom_html_text as html_text;

/// The key a received message's raw bytes are stored under in the object store
/// for mailbox `mailbox_id`: named by the mailbox and addressed by content, so
/// storing it again is harmless, and whether its bytes are still needed is a
/// question for that mailbox's receipts alone, wherever they are kept (decision
/// 0040). Keys stored before named the content only (`raw/<sha256>`) and are
/// shared by every mailbox the message reached.
pub fn raw_message_key(mailbox_id: &str, raw: &[u8]) -> String {
    format!("{}{}", raw_key_prefix(mailbox_id), sha256_hex(raw))
}

/// The beginning of every key `raw_message_key` gives mailbox `mailbox_id`.
pub fn raw_key_prefix(mailbox_id: &str) -> String {
    format!("raw/{mailbox_id}/")
}

/// The mailbox a key of `raw_message_key` names, or `None` for a key shared
/// across mailboxes (stored before keys named their mailbox).
pub fn mailbox_of_raw_key(raw_key: &str) -> Option<&str> {
    let (mailbox_id, _) = raw_key.strip_prefix("raw/")?.split_once('/')?;
    Some(mailbox_id)
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
    /// The node's database is at its limit (`DATABASE_LIMIT_BYTES`): nothing
    /// more is stored until room is made; administrators are told.
    DatabaseFull,
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
        }
    }

    /// Whether the sender may succeed by trying again later (the node could
    /// not store it now), rather than never.
    pub fn is_temporary(&self) -> bool {
        matches!(self, Rejection::TemporaryFailure | Rejection::DatabaseFull)
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
fn within_limits(raw: &[u8]) -> Result<Kept, Rejection> {
    limits::refuse_header_block(raw).map_err(Rejection::Exceeds)?;
    let parsed = with_message(raw, |message, _| {
        let message = limits::refuse_nesting(message).map_err(Rejection::Exceeds)?;
        read(&message, raw).ok_or(Rejection::Unparseable)
    });
    Ok(Kept::cut_to_the_limits(parsed.ok_or(Rejection::Unparseable)??))
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
    let kept = within_limits(raw)?;
    let shown = trust::ShownFrom { sender: kept.parsed.from.as_ref(), addresses: kept.parsed.from_addresses };
    let authentication = trust::authentication_of(raw, &shown);
    let arrival = Arrival {
        envelope_from: envelope_from.trim(),
        recipient: addresses::normalize(envelope_to).unwrap_or_else(|| envelope_to.trim().to_lowercase()),
        raw,
        kept: &kept,
        authentication: &authentication,
    };
    // A delivery that lost a race to a concurrent one of the same Message-ID is
    // read again once: the other is then either this very message or another
    // one reusing its id, and is answered as such.
    match store(node, &arrival, Attempt::First).await {
        Err(Stored::Raced) => match store(node, &arrival, Attempt::AfterARace).await {
            Err(Stored::Raced) => Err(arrival.failure(node, &"lost the race for its Message-ID twice")),
            Err(Stored::Rejected(rejection)) => Err(rejection),
            Ok(delivery) => Ok(delivery),
        },
        Err(Stored::Rejected(rejection)) => Err(rejection),
        Ok(delivery) => Ok(delivery),
    }
}

/// A message on its way into one mailbox: what it is, and whom it is for.
struct Arrival<'a> {
    envelope_from: &'a str,
    /// The envelope recipient, normalised: the mailbox's address.
    recipient: String,
    raw: &'a [u8],
    kept: &'a Kept,
    authentication: &'a AuthenticationResults,
}

impl Arrival<'_> {
    fn verdict(&self) -> SenderAuthentication {
        self.authentication.sender.unwrap_or(SenderAuthentication::Unverified)
    }

    /// Logs why the message could not be stored, and answers the rejection that
    /// asks its sender to try again.
    fn failure(&self, node: &Node<'_>, error: &dyn std::fmt::Display) -> Rejection {
        node.platform.log(&format!("receiving mail for {}: {error}", self.recipient));
        Rejection::TemporaryFailure
    }
}

/// Whether this is the first try at storing a message, or the one after a race.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Attempt {
    First,
    /// The bytes are in the object store already.
    AfterARace,
}

/// Why one try at storing a message did not.
enum Stored {
    /// A concurrent delivery stored a receipt under the same key first.
    Raced,
    Rejected(Rejection),
}

impl Claimant {
    /// Whether it is the arriving message itself, delivered again: the same
    /// content with the same verdict on its sender (a receipt stored before
    /// contents were hashed: the same bytes, whichever key they are under).
    fn is(&self, arrival: &Arrival<'_>, raw_key: &str) -> bool {
        let bytes_hash = |key: &str| key.rsplit('/').next().map(str::to_string);
        let same_content = match &self.content_digest {
            Some(digest) => *digest == arrival.kept.parsed.content_digest,
            None => bytes_hash(&self.raw_key) == bytes_hash(raw_key),
        };
        same_content && self.sender_authentication == arrival.verdict()
    }
}

/// One try at storing `arrival`: the first round trip reads the mailbox, the
/// receipts that claim its Message-ID, the conversation it joins and the
/// butlers; the second stores it, or records that it came again.
async fn store(node: &Node<'_>, arrival: &Arrival<'_>, attempt: Attempt) -> Result<Delivery, Stored> {
    let Kept { parsed, to_not_kept, cc_not_kept, attachments_not_listed } = arrival.kept;
    let recipient = arrival.recipient.as_str();
    let raw = arrival.raw;
    // The email handler's unit of work: its round trips counted, its entries
    // appended through the same ledger a request's commit uses.
    let ledger = AuditChain::new(node.config, node.platform);
    let work = Background::new(node, &ledger);
    let failure = |error: &dyn std::fmt::Display| Stored::Rejected(arrival.failure(node, error));

    let mailbox = store::mailbox_at(recipient);
    let claimants = store::claimants(recipient, &parsed.message_id);
    // Which conversation it joins is read in the same round trip: by the
    // Message-IDs it names, where its sender is known or its subject is the
    // conversation's, or failing those by a reply's subject (`linking`).
    let wanted = linking::wanted_ids(&parsed.message_id, &parsed.in_reply_to, &parsed.references);
    let sender = parsed.from.as_ref().map(|from| from.address.as_str());
    // Each with the conversation as it stands, for the butlers to judge.
    let by_ids = butlers::with_conversation(linking::by_message_ids(recipient, &wanted, sender, &parsed.subject));
    let by_subject =
        butlers::with_conversation(linking::by_subject(recipient, &parsed.subject, sender, node.platform.now_ms()));
    // The mailbox's published butlers, with what their sponsors hold now and
    // what their effects would meet.
    let authentication = arrival.authentication;
    let delivered = butlers::Delivered {
        from: parsed.from.as_ref(),
        reply_to: &parsed.reply_to,
        to: &parsed.to,
        cc: &parsed.cc,
        subject: &parsed.subject,
        sender_authentication: authentication.sender,
        attachments: parsed.attachments.len(),
        message_id: &parsed.message_id,
    };
    let butlers = butlers::active_on_delivery(recipient, &delivered, node.platform.now_ms());
    let results =
        work.run(vec![mailbox, claimants, by_ids, by_subject, butlers]).await.map_err(|error| failure(&error))?;
    let Some(mailbox_id) = results[0].first().and_then(|row| row.text("id").ok()) else {
        return Err(Stored::Rejected(Rejection::UnknownRecipient { address: recipient.to_string() }));
    };
    // How full the database is, as the first read found it: at its limit,
    // nothing is stored (and administrators are told, once a day); nearly
    // there, they are told in the batch that stores the message.
    let fullness = fullness_of(&results, node.config.database_limit_bytes);
    if let Some((DatabaseFullness::Full, size)) = fullness {
        let alarm = notifications::database_alarm(
            DatabaseFullness::Full,
            size,
            node.config.database_limit_bytes,
            node.platform,
        );
        if let Err(error) = work.run(vec![alarm]).await {
            node.platform.log(&format!("telling administrators the database is full failed: {error}"));
        }
        return Err(Stored::Rejected(Rejection::DatabaseFull));
    }
    let claimants: Vec<Claimant> = results[1].decode_all().map_err(|error| failure(&error))?;
    let raw_key = raw_message_key(&mailbox_id, raw);
    let now_ms = node.platform.now_ms();
    let verdict = arrival.verdict();
    if let Some(itself) = claimants.iter().find(|claimant| claimant.is(arrival, &raw_key)) {
        // Delivered again: kept once, and the delivery is on the record.
        let record = AuditRecord {
            at: now_ms,
            actor: None,
            delegator: None,
            surface: Some("email"),
            action: "receive_mail".into(),
            object: Some(itself.id.clone()),
            outcome: "ok",
            detail: Some(
                serde_json::json!({
                    "mailbox": mailbox_id,
                    "message_id": parsed.message_id,
                    "size": raw.len(),
                    "envelope_from": arrival.envelope_from,
                    "sender_authentication": verdict.name(),
                    "delivered_again": true,
                })
                .to_string(),
            ),
            topic: Some(Topic::Mailbox(mailbox_id.clone())),
        };
        work.commit(Vec::new(), &[record]).await.map_err(|error| failure(&error))?;
        return Ok(Delivery::Duplicate { receipt_id: itself.id.clone() });
    }
    // Another message claiming an id the mailbox holds is kept under a key of
    // its own, the id it claimed beside it.
    let reused_from = claimants.first().map(|claimant| claimant.id.clone());
    let stored_message_id = match reused_from {
        Some(_) => message_ids::reused_key(&parsed.content_digest, verdict.name()),
        None => parsed.message_id.clone(),
    };
    let claimed_message_id = reused_from.as_ref().map(|_| parsed.message_id.as_str());

    // The bytes first: a receipt must never point at nothing. A stored blob whose
    // receipt then fails to commit is harmless (content-addressed, written again
    // on redelivery).
    if attempt == Attempt::First {
        node.blobs.put(&raw_key, raw).await.map_err(|error| failure(&error.0))?;
    }

    let receipt_id = new_id(IdKind::Receipt, node.platform);
    let joined = [&results[2], &results[3]]
        .into_iter()
        .find_map(|result| result.first().filter(|row| row.text("thread_id").is_ok()));
    let (thread_id, new_thread) = match joined.and_then(|row| row.text("thread_id").ok()) {
        Some(thread_id) => (thread_id, false),
        None => (new_id(IdKind::Thread, node.platform), true),
    };
    let conversation = butlers::Conversation::of(joined);
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
    // What the verdict rests on is stored with it; its sentence is written when
    // it is read (`trust::stored`), so the words can change and the facts not.
    let stored_authentication = serde_json::json!({
        "spf": authentication.spf,
        "dkim": authentication.dkim,
        "dmarc": authentication.dmarc,
        "basis": authentication.basis.map(SenderVerdictBasis::name),
        "verified_domain": authentication.verified_domain,
        "from_domain": authentication.from_domain,
    });
    // Its time is this Worker's clock, read before the bytes were stored; the
    // store keeps it no earlier than the last receipt's (decision 0014).
    let insert = store::receipt(NewReceipt {
        id: &receipt_id,
        mailbox_id: &mailbox_id,
        message_id: &stored_message_id,
        envelope_from: arrival.envelope_from,
        from_address: parsed.from.as_ref().map(|from| from.address.clone()),
        from_name: parsed.from.as_ref().and_then(|from| from.name.clone()),
        to_json: addresses_json(&parsed.to),
        cc_json: addresses_json(&parsed.cc),
        recipients: recipients.join(" "),
        subject: &parsed.subject,
        sent_at: parsed.sent_at,
        received_at: now_ms,
        in_reply_to_json: serde_json::to_string(&parsed.in_reply_to).unwrap_or_else(|_| "[]".into()),
        references_json: serde_json::to_string(&parsed.references).unwrap_or_else(|_| "[]".into()),
        size: raw.len() as i64,
        raw_key: &raw_key,
        text_body: &parsed.text,
        text_source: parsed.text_source,
        text_truncated: parsed.text_truncated,
        attachments_json: serde_json::to_string(&parsed.attachments).unwrap_or_else(|_| "[]".into()),
        reply_to_json: addresses_json(&parsed.reply_to),
        to_not_kept: *to_not_kept,
        cc_not_kept: *cc_not_kept,
        attachments_not_listed: *attachments_not_listed,
        thread_id: &thread_id,
        sender_authentication: verdict.name(),
        authentication_json: stored_authentication.to_string(),
        content_digest: &parsed.content_digest,
        claimed_message_id,
    })
    .statement();
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
                "envelope_from": arrival.envelope_from,
                "thread": thread_id,
                "sender_authentication": verdict.name(),
                "sender_basis": authentication.basis.map(SenderVerdictBasis::name),
                "message_id_reused_from": reused_from,
            })
            .to_string(),
        ),
        topic: Some(Topic::Mailbox(mailbox_id.clone())),
    };
    let entry = work.append(&record);
    // One batch, one attempt: the entry's place in the chain is the database's
    // to assign, so concurrent deliveries never contend for it.
    let mut batch = vec![insert];
    batch.extend(index::indexed(&receipt_id));
    batch.extend(linking::receive_into(&thread_id, new_thread, &receipt_id, &parsed.subject));
    batch.push(entry);
    // The butlers act on the conversation once the message is in it, each effect
    // audited as the butler for its sponsor, after the delivery's own entry.
    let reply = butlers::ReplyBasis {
        message_id: &parsed.message_id,
        in_reply_to: &parsed.in_reply_to,
        references: &parsed.references,
    };
    let stored = butlers::StoredIn {
        receipt_id: &receipt_id,
        thread_id: &thread_id,
        mailbox_id: &mailbox_id,
        conversation: &conversation,
    };
    let effects = butlers::on_delivery(&results[4], &delivered.facts(), &reply, &stored, node.platform);
    batch.extend(effects.statements);
    batch.extend(effects.records.iter().map(|record| work.append(record)));
    if let Some((DatabaseFullness::Nearly, size)) = fullness {
        batch.push(notifications::database_alarm(
            DatabaseFullness::Nearly,
            size,
            node.config.database_limit_bytes,
            node.platform,
        ));
    }
    match work.run(batch).await {
        Ok(_) => {
            // A webhook that failed is recorded once it has: a round trip
            // more, paid only then.
            let failed = butlers::post_webhooks(&effects.posts, node).await;
            if !failed.records.is_empty()
                && let Err(error) = work.commit(failed.statements, &failed.records).await
            {
                node.platform.log(&format!("recording a butler's failed webhook for {recipient}: {error}"));
            }
            Ok(Delivery::Stored { receipt_id })
        }
        // A concurrent delivery stored a receipt under the same key first.
        Err(BackgroundError::Storage(StorageError::Unique(constraint)))
            if constraint.starts_with("receipts.mailbox_id") =>
        {
            Err(Stored::Raced)
        }
        Err(error) => Err(failure(&error)),
    }
}

/// How full the database is, by the largest size the read's `results` report
/// against `limit_bytes`: `None` below `DATABASE_WARNING_PERCENT` of it, or
/// when the database reports no size.
fn fullness_of(results: &[QueryResult], limit_bytes: u64) -> Option<(DatabaseFullness, u64)> {
    let size = results.iter().filter_map(|result| result.size_after).max()?;
    if size >= limit_bytes {
        Some((DatabaseFullness::Full, size))
    } else if size.saturating_mul(100) >= limit_bytes.saturating_mul(DATABASE_WARNING_PERCENT) {
        Some((DatabaseFullness::Nearly, size))
    } else {
        None
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
