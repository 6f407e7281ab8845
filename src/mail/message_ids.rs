//! Message-IDs as the node keeps and writes them: RFC 5322's `msg-id` without its
//! angle brackets, `id-left "@" id-right`, each a dot-atom (or the right a
//! bracketed domain literal).
//!
//! A Message-ID arrives from a stranger and leaves in a reply's In-Reply-To and
//! References, so anything else (a CR or LF that would end the header and start a
//! Bcc, a space, a bracket) is dropped on the way in and checked again when a
//! message is written: an id that is not one is never stored as one, and never
//! leaves.

use sha2::{Digest, Sha256};

use crate::core::addresses::is_dot_atom;
use crate::core::crypto::hex;
use crate::mail::limits::MESSAGE_ID_BYTES;

/// The right side of an id the node makes up for a received message that
/// carries none it keeps: under `.invalid` (RFC 2606), so it names nothing
/// anywhere, and it is never written into a reply.
const DERIVED: &str = "derived.mailroom.invalid";

/// The right side of the key a receipt is kept under when its message claims a
/// Message-ID the mailbox already holds with other content (the id it claimed
/// is kept beside it).
const REUSED: &str = "reused.mailroom.invalid";

/// The id of a received message that carries none the node keeps, from its
/// content (`inbound::content_digest`), so a redelivery is still recognised.
pub fn derived(content_digest: &str) -> String {
    format!("{}@{DERIVED}", content_digest.get(..32).unwrap_or(content_digest))
}

/// The key a receipt is kept under when its message reuses a Message-ID the
/// mailbox holds: one per content and sender verdict, so the same message
/// delivered again finds it.
pub fn reused_key(content_digest: &str, sender_verdict: &str) -> String {
    let digest = hex(&Sha256::digest(format!("{content_digest} {sender_verdict}").as_bytes()));
    format!("{}@{REUSED}", &digest[..32])
}

/// Whether `id` is one the node made up (`derived`, `reused_key`) rather than
/// one a message carried: never written into a reply's threading headers.
pub fn is_made_up(id: &str) -> bool {
    id.rsplit_once('@').is_some_and(|(_, right)| right == DERIVED || right == REUSED)
}

/// `text` as a Message-ID without angle brackets, when it is one: surrounding
/// whitespace and one pair of brackets are removed, and what is left must be an
/// RFC 5322 `id-left "@" id-right` of printable US-ASCII (or UTF-8 beyond it,
/// RFC 6532), at most `MESSAGE_ID_BYTES` (stated with the other inbound limits).
pub fn message_id(text: &str) -> Option<String> {
    let trimmed = text.trim_matches(|c: char| c == ' ' || c == '\t');
    let bare = trimmed.strip_prefix('<').and_then(|rest| rest.strip_suffix('>')).unwrap_or(trimmed);
    is_message_id(bare).then(|| bare.to_string())
}

/// Whether `id` (without brackets) is a Message-ID the node may write.
pub fn is_message_id(id: &str) -> bool {
    let Some((left, right)) = id.rsplit_once('@') else {
        return false;
    };
    id.len() <= MESSAGE_ID_BYTES && is_dot_atom(left) && (is_dot_atom(right) || is_domain_literal(right))
}

/// RFC 5322 `no-fold-literal`: `[` printable ASCII but `[`, `]` and `\` `]`.
fn is_domain_literal(text: &str) -> bool {
    text.strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
        .is_some_and(|inner| inner.bytes().all(|byte| (33..=126).contains(&byte) && !b"[]\\".contains(&byte)))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn ids_the_node_makes_up_are_known_as_its_own() {
        let digest = "ab".repeat(32);
        for id in [derived(&digest), reused_key(&digest, "unverified")] {
            assert!(is_message_id(&id), "{id}");
            assert!(is_made_up(&id), "{id}");
        }
        assert_ne!(reused_key(&digest, "unverified"), reused_key(&digest, "authenticated"));
        assert!(!is_made_up("m1@customer.example"));
    }

    #[test]
    fn a_message_id_is_kept_without_its_brackets() {
        assert_eq!(message_id("<m1@example.org>").as_deref(), Some("m1@example.org"));
        assert_eq!(message_id(" m1@example.org ").as_deref(), Some("m1@example.org"));
        assert_eq!(message_id("<a.b+c=d@[192.0.2.1]>").as_deref(), Some("a.b+c=d@[192.0.2.1]"));
        assert_eq!(message_id("<ünïcode@bücher.example>").as_deref(), Some("ünïcode@bücher.example"));
    }

    #[test]
    fn anything_that_could_end_a_header_or_is_not_an_id_is_refused() {
        for hostile in [
            "<m@evil.example\rBcc: hidden@evil.example>",
            "<m@evil.example\nBcc: hidden@evil.example>",
            "m@evil.example\r\nBcc: hidden@evil.example",
            "<m@evil.example>\r\n",
            "<m@evil\u{0}.example>",
            "<m@evil\u{7f}.example>",
            "<m id@example.org>",
            "<m@example.org> <n@example.org>",
            "<<m@example.org>>",
            "<no-at-sign>",
            "<@example.org>",
            "<m@>",
            "<m..n@example.org>",
            "<.m@example.org>",
            "<m@example.org.>",
            "<m\"q\"@example.org>",
            "<m@[a]b]>",
            "",
            "<>",
        ] {
            assert_eq!(message_id(hostile), None, "{hostile:?}");
        }
        let long = format!("{}@example.org", "a".repeat(MESSAGE_ID_BYTES));
        assert_eq!(message_id(&long), None, "too long");
    }
}
