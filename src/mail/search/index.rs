//! The search indexes' side of storing a received message: the statements that
//! make a receipt searchable by its headers and by its text, written in the
//! batch that stores it, whether it was delivered or filed by a butler.

use crate::core::storage::Statement;

/// The statements that make receipt `receipt_id` searchable, by its headers
/// and by its text: after its insert, in the same batch.
pub fn indexed(receipt_id: &str) -> [Statement; 2] {
    [
        Statement::new(
            "INSERT INTO receipt_headers_index (rowid, from_address, from_name, recipients, subject, mailbox_id) \
             SELECT rowid, from_address, from_name, recipients, subject, mailbox_id FROM receipts WHERE id = ?1",
        )
        .bind(receipt_id),
        Statement::new(
            "INSERT INTO receipt_bodies_index (rowid, text_body, mailbox_id) \
             SELECT rowid, text_body, mailbox_id FROM receipts WHERE id = ?1",
        )
        .bind(receipt_id),
    ]
}
