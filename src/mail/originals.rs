//! Where a received message's original bytes are kept in the object store
//! (R2): the key of each mailbox's copy, and which mailbox a key names.
//!
//! A key names its mailbox and the bytes' hash (decision 0040), so storing the
//! same message again is harmless, and whether an original is still needed is
//! a question for that mailbox's receipts alone, wherever they are kept: D1
//! or the mailbox's own database. Keys stored before named the content only
//! (`raw/<sha256>`) and are shared by every mailbox the message reached, so
//! only D1, which held every receipt then, can say whether one is needed.

use crate::core::crypto::sha256_hex;

/// The key of mailbox `mailbox_id`'s copy of the message `raw`.
pub fn raw_message_key(mailbox_id: &str, raw: &[u8]) -> String {
    format!("raw/{mailbox_id}/{}", sha256_hex(raw))
}

/// The mailbox a key of `raw_message_key` names, or `None` for a key shared
/// across mailboxes (stored before keys named their mailbox).
pub fn mailbox_of_raw_key(raw_key: &str) -> Option<&str> {
    let (mailbox_id, _) = raw_key.strip_prefix("raw/")?.split_once('/')?;
    Some(mailbox_id)
}

/// Whether `a` and `b` are keys of the same bytes, whichever mailbox each names.
pub fn same_bytes(a: &str, b: &str) -> bool {
    a.rsplit('/').next() == b.rsplit('/').next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_names_its_mailbox_and_its_bytes() {
        let key = raw_message_key("mbx_1", b"hello");
        assert_eq!(mailbox_of_raw_key(&key), Some("mbx_1"));
        assert_eq!(mailbox_of_raw_key(&format!("raw/{}", sha256_hex(b"hello"))), None, "a key stored before");
        assert!(same_bytes(&key, &format!("raw/{}", sha256_hex(b"hello"))));
        assert!(same_bytes(&key, &raw_message_key("mbx_2", b"hello")));
        assert!(!same_bytes(&key, &raw_message_key("mbx_1", b"other")));
    }
}
