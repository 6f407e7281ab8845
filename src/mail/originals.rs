//! Where a received message's original bytes are kept in the object store
//! (R2): the key of each receipt's original, and which mailbox a key names.
//!
//! A key names the mailbox and the receipt it was stored for (decision 0040),
//! so an original belongs to one receipt: deleting that receipt deletes it,
//! and no other delivery can come to need bytes a deletion is about to take
//! (a message delivered again is recognised by its content and stored no
//! second time; one stored again, after its receipt was deleted, has a key of
//! its own). Whether an original is still needed is then a question for that
//! mailbox's receipts alone, wherever they are kept: D1 or the mailbox's own
//! database. Keys stored before named the content only (`raw/<sha256>`) and
//! are shared by every receipt of the message, in any mailbox, so only D1,
//! which held every receipt then, can say whether one is needed.

use crate::core::crypto::sha256_hex;

/// The key of the original of receipt `receipt_id` of mailbox `mailbox_id`
/// (a butler's filed copy is a receipt of its own, with its own original).
pub fn raw_message_key(mailbox_id: &str, receipt_id: &str) -> String {
    format!("raw/{mailbox_id}/{receipt_id}")
}

/// The mailbox a key of `raw_message_key` names, or `None` for a key shared
/// across mailboxes (stored before keys named their mailbox).
pub fn mailbox_of_raw_key(raw_key: &str) -> Option<&str> {
    let (mailbox_id, _) = raw_key.strip_prefix("raw/")?.split_once('/')?;
    Some(mailbox_id)
}

/// Whether `raw_key`, a key stored before keys named their mailbox, names
/// the content `raw`: what tells a message delivered again from a receipt
/// stored before contents were hashed.
pub fn names_the_content(raw_key: &str, raw: &[u8]) -> bool {
    raw_key.strip_prefix("raw/") == Some(sha256_hex(raw).as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_names_its_mailbox_and_its_receipt() {
        let key = raw_message_key("mbx_1", "rcp_1");
        assert_eq!(key, "raw/mbx_1/rcp_1");
        assert_eq!(mailbox_of_raw_key(&key), Some("mbx_1"));
        let before = format!("raw/{}", sha256_hex(b"hello"));
        assert_eq!(mailbox_of_raw_key(&before), None, "a key stored before");
        assert!(names_the_content(&before, b"hello"));
        assert!(!names_the_content(&before, b"other"));
        assert!(!names_the_content(&key, b"hello"));
    }
}
