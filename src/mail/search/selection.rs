//! `ReceiptSelection`: received mail chosen by mailbox, by when it arrived and
//! by words, matched as the search's two arms match them, for an eDiscovery
//! export to count and copy.

use crate::core::storage::{Statement, Value};
use crate::mail::store::search as store;

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

    /// How many receipts are selected (`n`), and the last of them in storage
    /// order (`last`, its rowid): what arrives after it is not selected.
    pub fn counted(&self) -> Statement {
        store::selection_counted(&self.condition)
    }

    /// The selected receipts stored up to `last`, numbered from 1 in the order
    /// they were received: `position`, `receipt_id`, `mailbox_id`,
    /// `message_id`, `subject`, `received_at`, `raw_key`.
    pub fn in_order_up_to(&self, last: i64) -> Statement {
        store::selection_in_order_up_to(&self.condition, last)
    }
}
