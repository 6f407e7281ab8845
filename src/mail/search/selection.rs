//! `ReceiptSelection`: received mail chosen by mailbox, by when it arrived and
//! by words, matched as the search's two arms match them, for an eDiscovery
//! export to count and copy, asked wherever each mailbox's mail is (D1 or its
//! own database, decision 0040).

use crate::core::storage::{Statement, Value};
use crate::mail::store::search as store;
pub use crate::mail::store::search::SelectedIn;

/// Received mail chosen by mailbox, by when it arrived and by words, as both
/// arms of the search match them: what an eDiscovery export copies. Its
/// statements name their parameters in order (`?`), so a caller that wraps one
/// numbers its own after them.
#[derive(Clone, Debug, PartialEq)]
pub struct ReceiptSelection {
    /// The condition on `receipts r`, and its parameters.
    condition: (String, Vec<Value>),
}

impl ReceiptSelection {
    /// The receipts of `mailbox_ids` received from `from_ms` and before
    /// `before_ms` (each only when given) whose headers or body match `words`,
    /// an FTS5 query as `fts_query` writes one.
    pub fn new(
        mailbox_ids: &[String],
        from_ms: Option<i64>,
        before_ms: Option<i64>,
        words: Option<&str>,
    ) -> ReceiptSelection {
        ReceiptSelection { condition: store::selection(mailbox_ids, from_ms, before_ms, words) }
    }

    /// How many receipts are selected (`n`) where `place` holds mail: D1, of
    /// the mailboxes whose mail is there, or a mailbox's own database.
    pub fn counted(&self, place: SelectedIn) -> Statement {
        store::selection_counted(&self.condition, place)
    }

    /// The first `limit` selected receipts where `place` holds mail, in the
    /// order they were received (time, then id): `receipt_id`, `mailbox_id`,
    /// `message_id`, `subject`, `received_at`, `raw_key`.
    pub fn in_order(&self, place: SelectedIn, limit: i64) -> Statement {
        store::selection_in_order(&self.condition, place, limit)
    }
}
