//! The statements of deleting received mail: what a deletion reads first, the
//! receipt taken out with its index entries and links, where it was in storage
//! order, and the originals owed deletion from the object store.

use serde::Deserialize;

use crate::core::mailbox_storage::spans_stores;
use crate::core::storage::Statement;

/// What the deletion reads of the receipt first.
#[derive(Deserialize)]
pub(crate) struct Target {
    pub(crate) raw_key: String,
    pub(crate) message_id: String,
    pub(crate) size: i64,
}

/// Whether another receipt than `receipt_id` in the database asked refers
/// to its original: one row, `shared`. D1 answers for every receipt it holds
/// (every mailbox's whose mail it keeps, and a copy of those moved before
/// delivery followed them, decision 0040); a mailbox's own database for that
/// mailbox's, which are all that refer to an original under its own key
/// (`originals::raw_message_key`).
pub(crate) fn shared(receipt_id: &str) -> Statement {
    Statement::new(
        "SELECT EXISTS (SELECT 1 FROM receipts other WHERE other.id <> ?1 \
           AND other.raw_key = (SELECT raw_key FROM receipts WHERE id = ?1)) AS shared",
    )
    .bind(receipt_id)
}

/// Which of `raw_keys` (a JSON array) a receipt refers to: one column,
/// `raw_key`. What the upkeep asks a mailbox's own database before deleting
/// originals under that mailbox's keys.
pub(crate) fn referred_to(raw_keys: String) -> Statement {
    Statement::new(
        "SELECT k.value AS raw_key FROM json_each(?1) k WHERE EXISTS (SELECT 1 FROM receipts WHERE raw_key = k.value)",
    )
    .bind(raw_keys)
}

/// Receipt `receipt_id` of `mailbox_id` as a deletion reads it (`Target`).
pub(crate) fn target(receipt_id: &str, mailbox_id: &str) -> Statement {
    Statement::new("SELECT r.raw_key, r.message_id, r.size FROM receipts r WHERE r.id = ?1 AND r.mailbox_id = ?2")
        .bind(receipt_id)
        .bind(mailbox_id)
}

/// Sends that answer receipt `receipt_id` lose the link to it.
pub(crate) fn replies_unlinked(receipt_id: &str) -> Statement {
    Statement::new("UPDATE sends SET reply_to = NULL WHERE reply_to = ?1").bind(receipt_id)
}

/// Receipt `receipt_id` taken out of both search indexes, given the values
/// they indexed (as an external-content FTS5 index needs).
pub(crate) fn unindexed(receipt_id: &str) -> [Statement; 2] {
    super::search::unindexed(receipt_id)
}

/// Where receipt `receipt_id` was in storage order, kept for a page that ended at it.
pub(crate) fn remembered_as_deleted(receipt_id: &str) -> Statement {
    Statement::new("INSERT INTO deleted_receipts (id, stored) SELECT id, rowid FROM receipts WHERE id = ?1")
        .bind(receipt_id)
}

/// Receipt `receipt_id` of `mailbox_id` deleted.
pub(crate) fn receipt_deleted(receipt_id: &str, mailbox_id: &str) -> Statement {
    Statement::new("DELETE FROM receipts WHERE id = ?1 AND mailbox_id = ?2").bind(receipt_id).bind(mailbox_id)
}

/// The original at `raw_key`, when no receipt refers to it: a query of keys
/// for `owed_deletion`.
pub(crate) fn original_if_unreferenced(raw_key: &str) -> Statement {
    spans_stores(Statement::new("SELECT ?1 WHERE NOT EXISTS (SELECT 1 FROM receipts WHERE raw_key = ?1)").bind(raw_key))
}

/// A guard: no receipt refers to the original at `raw_key`.
pub(crate) fn no_receipt_refers_to(raw_key: &str) -> Statement {
    Statement::new("NOT EXISTS (SELECT 1 FROM receipts WHERE raw_key = ?)").bind(raw_key)
}

/// The objects `keys` answers (one column, parameters numbered `?1`, …) owed
/// deletion from `since`, `since` bound after the keys' parameters; a key
/// already owed stays owed from when it first was.
pub(crate) fn owed_deletion(keys: Statement, since: i64) -> Statement {
    let Statement { sql, mut parameters } = keys;
    parameters.push(since.into());
    Statement {
        sql: format!(
            "WITH owed (raw_key) AS ({sql}) INSERT INTO originals_to_delete (raw_key, since) \
             SELECT raw_key, ?{} FROM owed WHERE true ON CONFLICT (raw_key) DO NOTHING",
            parameters.len()
        )
        .into(),
        parameters,
    }
}

/// `raw_key` no longer owed deletion.
pub(crate) fn no_longer_owed(raw_key: &str) -> Statement {
    Statement::new("DELETE FROM originals_to_delete WHERE raw_key = ?1").bind(raw_key)
}

/// The oldest `limit` originals owed deletion: `raw_key`; `needed` when a
/// receipt in D1 refers to it again; and `kept_for`, a JSON array of the
/// mailboxes whose moved mail may still refer to it under a key not their
/// own (`originals_kept_for`).
pub(crate) fn owed(limit: i64) -> Statement {
    spans_stores(
        Statement::new(
            "SELECT o.raw_key, EXISTS (SELECT 1 FROM receipts r WHERE r.raw_key = o.raw_key) AS needed, \
               (SELECT json_group_array(k.mailbox_id) FROM originals_kept_for k WHERE k.raw_key = o.raw_key) AS kept_for \
             FROM originals_to_delete o ORDER BY o.since LIMIT ?1",
        )
        .bind(limit),
    )
}

/// Mailbox `mailbox_id`'s own database no longer refers to the original at
/// `raw_key`.
pub(crate) fn no_longer_kept_for(raw_key: &str, mailbox_id: &str) -> Statement {
    Statement::new("DELETE FROM originals_kept_for WHERE raw_key = ?1 AND mailbox_id = ?2")
        .bind(raw_key)
        .bind(mailbox_id)
}
