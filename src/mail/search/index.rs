//! The search indexes' side of storing a received message: the statements that
//! make a receipt searchable by its headers and by its text, written in the
//! batch that stores it, whether it was delivered or filed by a butler.

use crate::core::storage::Statement;
use crate::mail::store::search;

/// The statements that make receipt `receipt_id` searchable, by its headers
/// and by its text: after its insert, in the same batch.
pub fn indexed(receipt_id: &str) -> [Statement; 2] {
    search::indexed(receipt_id)
}
