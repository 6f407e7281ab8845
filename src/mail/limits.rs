//! What a received message may make the node store and serve (decision 0017).
//!
//! The limits are stated once, in the contract (`mailroom_contract::api::limits`,
//! re-exported here), because the schemas it publishes are derived from them.
//! This module applies them. Two refuse a message before anything is stored: a
//! header block too big to read, and MIME parts nested too deep (the parser's own
//! structures would then be dropped recursively, deep enough to overflow the
//! Worker's stack). Everything else is cut to fit: the first recipients,
//! attachments and threading ids are kept and the rest counted; names, subjects
//! and file names are cut to their length. (What is a Message-ID at all, and how
//! long one may be, is `message_ids`' to say.) So a receipt, and a page of them, has a
//! size that can be computed from the limits, whatever arrived.
//!
//! Plain functions over plain values: no storage, no clock.

use mail_parser::{Message, PartType};
use mailroom_contract::api::{AttachmentSummary, EmailAddress};

pub use mailroom_contract::api::limits::*;

/// Why a message was refused for its shape, before anything was stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exceeded {
    /// Its header block is bigger than `HEADER_BYTES`.
    HeaderBlock { limit: usize },
    /// Its MIME parts nest deeper than `MIME_DEPTH`.
    Nesting { limit: usize },
}

impl Exceeded {
    /// The SMTP reply for the sender: a reply code, an enhanced status code, words.
    pub fn smtp_reason(&self) -> String {
        match self {
            Exceeded::HeaderBlock { limit } => {
                format!("552 5.3.4 Message header too large for this mailbox (limit {limit} bytes)")
            }
            Exceeded::Nesting { limit } => {
                format!("554 5.6.0 Message parts are nested too deeply (limit {limit} levels)")
            }
        }
    }
}

/// Refuses a message whose header block (everything before its first empty line,
/// or all of it when there is none) is bigger than `HEADER_BYTES`. Reads at most
/// that many bytes and one more line, so a refusal costs no more than the limit.
pub fn refuse_header_block(raw: &[u8]) -> Result<(), Exceeded> {
    let mut start = 0;
    while start < raw.len() {
        if start > HEADER_BYTES {
            return Err(Exceeded::HeaderBlock { limit: HEADER_BYTES });
        }
        let end = raw[start..].iter().position(|byte| *byte == b'\n').map_or(raw.len(), |at| start + at + 1);
        if matches!(&raw[start..end], b"\n" | b"\r\n") {
            return Ok(());
        }
        start = end;
    }
    if raw.len() > HEADER_BYTES { Err(Exceeded::HeaderBlock { limit: HEADER_BYTES }) } else { Ok(()) }
}

/// How deeply `message`'s parts nest: its own top part is the first level; a part
/// inside a multipart, or the top part of a message attached to another, is one
/// level deeper than what holds it. Walked with a list, not by recursion, since
/// the message may be arbitrarily deep.
pub fn depth(message: &Message<'_>) -> usize {
    let mut deepest = 0;
    let mut pending: Vec<(&Message<'_>, usize, usize)> = vec![(message, 0, 1)];
    while let Some((message, part, level)) = pending.pop() {
        deepest = deepest.max(level);
        match message.parts.get(part).map(|part| &part.body) {
            // A part's children come after it in the message's list of parts; a
            // child said to come before it would be a loop, and is not followed.
            Some(PartType::Multipart(children)) => pending.extend(
                children
                    .iter()
                    .map(|child| *child as usize)
                    .filter(|child| *child > part)
                    .map(|child| (message, child, level + 1)),
            ),
            Some(PartType::Message(attached)) => pending.push((attached, 0, level + 1)),
            _ => {}
        }
    }
    deepest
}

/// `message`, or the refusal of one whose parts nest deeper than `MIME_DEPTH`. A
/// refused message is taken apart one attached message at a time: dropped whole,
/// its nesting would be dropped by recursion, as deep as it goes.
pub fn refuse_nesting(message: Message<'_>) -> Result<Message<'_>, Exceeded> {
    if depth(&message) <= MIME_DEPTH {
        return Ok(message);
    }
    let mut pending = vec![message];
    while let Some(mut message) = pending.pop() {
        for part in message.parts.drain(..) {
            if let PartType::Message(attached) = part.body {
                pending.push(attached);
            }
        }
    }
    Err(Exceeded::Nesting { limit: MIME_DEPTH })
}

/// `text` cut to at most `characters` characters.
pub fn cut(text: &str, characters: usize) -> String {
    match text.char_indices().nth(characters) {
        Some((end, _)) => text[..end].to_string(),
        None => text.to_string(),
    }
}

/// An address as a receipt keeps it: its name cut to `NAME_CHARACTERS`, or
/// nothing when the address is longer than any server delivers to.
pub fn address(address: EmailAddress) -> Option<EmailAddress> {
    (address.address.chars().count() <= ADDRESS_CHARACTERS)
        .then(|| EmailAddress { name: address.name.map(|name| cut(&name, NAME_CHARACTERS)), address: address.address })
}

/// The first `RECIPIENTS_KEPT` of `addresses` that are kept (see `address`), and
/// how many were not.
pub fn addresses(addresses: Vec<EmailAddress>) -> (Vec<EmailAddress>, i64) {
    let had = addresses.len();
    let kept: Vec<EmailAddress> = addresses.into_iter().filter_map(address).take(RECIPIENTS_KEPT).collect();
    let not_kept = had - kept.len();
    (kept, i64::try_from(not_kept).unwrap_or(i64::MAX))
}

/// The In-Reply-To ids a receipt keeps: the first `REFERENCES_KEPT` (a message
/// normally answers one). Each is a Message-ID of at most `MESSAGE_ID_BYTES`
/// already (`message_ids`).
pub fn in_reply_to(mut ids: Vec<String>) -> Vec<String> {
    ids.truncate(REFERENCES_KEPT);
    ids
}

/// The References ids a receipt keeps: the most recent `REFERENCES_KEPT`, oldest
/// first as the header has them, so the parent stays last.
pub fn references(mut ids: Vec<String>) -> Vec<String> {
    let older = ids.len().saturating_sub(REFERENCES_KEPT);
    ids.split_off(older)
}

/// The attachments a receipt lists: the first `ATTACHMENTS_LISTED`, names and
/// content types cut to their length; and how many were not listed.
pub fn attachments(attachments: Vec<AttachmentSummary>) -> (Vec<AttachmentSummary>, i64) {
    let had = attachments.len();
    let listed: Vec<AttachmentSummary> = attachments
        .into_iter()
        .take(ATTACHMENTS_LISTED)
        .map(|attachment| AttachmentSummary {
            name: attachment.name.map(|name| cut(&name, FILE_NAME_CHARACTERS)),
            content_type: cut(&attachment.content_type, CONTENT_TYPE_CHARACTERS),
            ..attachment
        })
        .collect();
    let not_listed = had - listed.len();
    (listed, i64::try_from(not_listed).unwrap_or(i64::MAX))
}

/// The passage a search hit shows: cut to `SNIPPET_CHARACTERS`, with an ellipsis
/// where it was cut. A passage is a dozen words, but one word can be as long as a
/// message's whole text.
pub fn snippet(passage: String) -> String {
    if passage.chars().count() <= SNIPPET_CHARACTERS {
        return passage;
    }
    let mut cut_passage = cut(&passage, SNIPPET_CHARACTERS - 1);
    cut_passage.push('…');
    cut_passage
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(address: &str, name: Option<&str>) -> EmailAddress {
        EmailAddress { address: address.into(), name: name.map(str::to_string) }
    }

    #[test]
    fn the_header_block_ends_at_the_first_empty_line() {
        let within = format!("Subject: {}\r\n\r\n{}", "x".repeat(HEADER_BYTES - 20), "body ".repeat(HEADER_BYTES));
        assert_eq!(refuse_header_block(within.as_bytes()), Ok(()));
        let bare_newlines = format!("Subject: hi\n\n{}", "x".repeat(2 * HEADER_BYTES));
        assert_eq!(refuse_header_block(bare_newlines.as_bytes()), Ok(()));
        let over = format!("To: {}\r\n\r\nhi", "a@b.example, ".repeat(HEADER_BYTES / 10));
        assert_eq!(refuse_header_block(over.as_bytes()), Err(Exceeded::HeaderBlock { limit: HEADER_BYTES }));
        let no_body = "X-Long: y\r\n".repeat(HEADER_BYTES / 8);
        assert!(refuse_header_block(no_body.as_bytes()).is_err(), "with no empty line, it is all header");
        assert_eq!(refuse_header_block(b"Subject: short"), Ok(()));
    }

    #[test]
    fn an_address_kept_is_never_longer_than_an_address_can_be() {
        // `core::addresses` drops what is not an address on the way in; the length
        // a receipt publishes for one must be no shorter than what that admits.
        assert_eq!(ADDRESS_CHARACTERS, crate::core::addresses::MAXIMUM_ADDRESS_BYTES);
    }

    #[test]
    fn addresses_keep_the_first_and_count_the_rest() {
        let many: Vec<EmailAddress> =
            (0..RECIPIENTS_KEPT + 7).map(|n| named(&format!("u{n}@x.example"), None)).collect();
        let (kept, not_kept) = addresses(many);
        assert_eq!(kept.len(), RECIPIENTS_KEPT);
        assert_eq!(kept[0].address, "u0@x.example");
        assert_eq!(not_kept, 7);

        let long_address = format!("{}@x.example", "a".repeat(ADDRESS_CHARACTERS));
        let long_name = "N".repeat(NAME_CHARACTERS + 10);
        let (kept, not_kept) = addresses(vec![named(&long_address, None), named("b@x.example", Some(&long_name))]);
        assert_eq!(not_kept, 1, "an address no server delivers to is counted, not kept");
        assert_eq!(kept[0].name.as_ref().map(|name| name.chars().count()), Some(NAME_CHARACTERS));
    }

    #[test]
    fn references_keep_the_most_recent_and_in_reply_to_the_first() {
        let ids: Vec<String> = (0..30).map(|n| format!("m{n}@x.example")).collect();
        let kept = references(ids.clone());
        assert_eq!(kept.len(), REFERENCES_KEPT);
        assert_eq!(kept.first().map(String::as_str), Some("m10@x.example"));
        assert_eq!(kept.last().map(String::as_str), Some("m29@x.example"), "the parent stays last");
        assert_eq!(in_reply_to(ids)[0], "m0@x.example");
    }

    #[test]
    fn cutting_keeps_whole_characters() {
        assert_eq!(cut("héllo", 2), "hé");
        assert_eq!(cut("hi", 10), "hi");
        assert_eq!(snippet("ab".into()), "ab");
        let long = snippet("é".repeat(SNIPPET_CHARACTERS * 2));
        assert_eq!(long.chars().count(), SNIPPET_CHARACTERS);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn attachments_are_listed_up_to_the_limit() {
        let many: Vec<AttachmentSummary> = (0..ATTACHMENTS_LISTED + 3)
            .map(|index| AttachmentSummary {
                index: index as i64,
                name: Some("f".repeat(FILE_NAME_CHARACTERS + 1)),
                content_type: "application/octet-stream".into(),
                size: 1,
            })
            .collect();
        let (listed, not_listed) = attachments(many);
        assert_eq!((listed.len(), not_listed), (ATTACHMENTS_LISTED, 3));
        assert_eq!(listed[0].name.as_ref().map(|name| name.chars().count()), Some(FILE_NAME_CHARACTERS));
    }

    /// A message whose every level is a multipart holding the next, `levels` deep.
    fn nested_multiparts(levels: usize) -> String {
        let mut raw = String::from("From: a@b.example\r\nSubject: deep\r\n");
        for level in 0..levels {
            raw.push_str(&format!("Content-Type: multipart/mixed; boundary=\"b{level}\"\r\n\r\n--b{level}\r\n"));
        }
        raw.push_str("Content-Type: text/plain\r\n\r\nhello\r\n");
        for level in (0..levels).rev() {
            raw.push_str(&format!("--b{level}--\r\n"));
        }
        raw
    }

    /// A message attaching a message attaching a message…, `levels` deep.
    fn nested_messages(levels: usize) -> String {
        let mut raw = String::from("From: a@b.example\r\nSubject: deep\r\n");
        for _ in 0..levels {
            raw.push_str("Content-Type: message/rfc822\r\n\r\nSubject: inner\r\n");
        }
        raw.push_str("Content-Type: text/plain\r\n\r\nhello\r\n");
        raw
    }

    fn parsed_depth(raw: &str) -> Result<usize, Exceeded> {
        let message = mail_parser::MessageParser::default().parse(raw.as_bytes()).expect("parses");
        let depth = depth(&message);
        refuse_nesting(message).map(|_| depth)
    }

    #[test]
    fn nesting_is_measured_and_refused_past_the_limit() {
        assert_eq!(parsed_depth("Subject: flat\r\n\r\nhello"), Ok(1));
        assert_eq!(parsed_depth(&nested_multiparts(1)), Ok(2));
        assert_eq!(parsed_depth(&nested_messages(1)), Ok(2));
        assert_eq!(parsed_depth(&nested_multiparts(MIME_DEPTH - 1)), Ok(MIME_DEPTH));
        assert_eq!(parsed_depth(&nested_multiparts(MIME_DEPTH)), Err(Exceeded::Nesting { limit: MIME_DEPTH }));
        assert_eq!(parsed_depth(&nested_messages(MIME_DEPTH)), Err(Exceeded::Nesting { limit: MIME_DEPTH }));
    }

    #[test]
    fn a_message_nested_far_past_the_limit_is_refused_without_overflowing_the_stack() {
        // Dropped whole, this many attached messages overflow even a native stack.
        let raw = nested_messages(100_000);
        let message = mail_parser::MessageParser::default().parse(raw.as_bytes()).expect("parses");
        assert!(refuse_nesting(message).is_err());
    }
}
