//! Deleting a received message: an administrator's decision, governed (it cannot
//! be undone) and audited like every change (decision 0017).
//!
//! One commit takes out the receipt, its entries in both search indexes (given
//! the values they indexed, as an external-content FTS5 index needs), and the
//! links sends had to it (a sealed send keeps the In-Reply-To it was sealed
//! with; only `reply_to` may change, migration 0011), and records where the
//! receipt was in storage order, so a page that ended at it goes on. Its original
//! bytes are shared by every mailbox the same message was delivered to, so they
//! go with the last receipt that refers to them: the commit records them as owed
//! deletion only when no receipt is left, and they are deleted from the object
//! store after the commit. Should that fail, they stay owed, and the scheduled
//! upkeep (`delete_originals_owed`) deletes them; the receipt is never kept for
//! want of its bytes being deleted, and the bytes never outlive it for good.
//! Whatever else leaves objects behind (an export's copies) owes them the same
//! way, through `owe_deletion_of`, the one writer of what is owed.
//!
//! It never reads content: the text body is named only in the statements that
//! take the receipt out of the body index, which are writes.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{MessageDeleted, OriginalFate};

use crate::core::background::{Background, BackgroundError};
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::refusal::Refusal;
use crate::core::storage::Statement;
use crate::mail::messages::MessageError;
use crate::mail::store::deletion::{self as store, Target, no_longer_owed};
use crate::mail::threads::linking;

/// How many originals owed deletion one upkeep deletes: a bounded amount of work
/// per run; the next run takes the rest.
const ORIGINALS_PER_UPKEEP: i64 = 50;

/// What can stop a deletion that the read before it could not foresee.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeletionError {
    /// The same message arrived again, for another mailbox, between the read and
    /// the commit: its original, about to be deleted, is needed after all.
    DeliveredAgain { id: String },
}

impl From<DeletionError> for Refusal {
    fn from(error: DeletionError) -> Refusal {
        match error {
            DeletionError::DeliveredAgain { id } => Refusal::new(
                409,
                "delivered_again",
                format!("Message {id} was not deleted: the same message arrived again while it was being deleted."),
                "Its original bytes were about to be deleted with it, and the new copy needs them.",
                "Ask again: this copy is then deleted and the original kept for the other one.",
            ),
        }
    }
}

/// `DELETE /api/mailboxes/:mailboxId/messages/:receiptId`.
pub async fn delete(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let receipt_id = context.path(PathParameter::ReceiptId)?.to_string();
    context.audit_object(receipt_id.clone());
    if !is_id_of(&receipt_id, IdKind::Receipt) {
        return Err(MessageError::NoSuchMessage { id: receipt_id }.into());
    }
    let read = store::target(&receipt_id, &mailbox_id);
    let [found] = context.read_array([read]).await?;
    let target: Target = found
        .first()
        .ok_or(MessageError::NoSuchMessage { id: receipt_id.clone() })?
        .decode()
        .map_err(|error| context.internal(error))?;
    let shared = target.shared != 0;

    // Sends that answer it, whatever their state, keep their threading headers
    // and lose the link (the foreign key would refuse the deletion otherwise).
    context.write(store::replies_unlinked(&receipt_id));
    // Its conversation counts one message fewer; it keeps its Message-ID, so a
    // late reply to it still joins.
    context.write(linking::leave(&receipt_id));
    for unindexed in store::unindexed(&receipt_id) {
        context.write(unindexed);
    }
    context.write(store::remembered_as_deleted(&receipt_id));
    // Another request deleting it first leaves nothing to delete: as if it never was.
    context.write_changing_one_row(
        store::receipt_deleted(&receipt_id, &mailbox_id),
        MessageError::NoSuchMessage { id: receipt_id.clone() },
    );
    // Owed deletion only if no receipt is left that refers to it, decided inside
    // the commit, so two copies deleted at once still leave it owed.
    context.write(owe_deletion_of(store::original_if_unreferenced(&target.raw_key), context.now_ms()));
    let fate = if shared { OriginalFate::KeptForOtherCopies } else { OriginalFate::Deleted };
    if !shared {
        // The read found no other copy, so the bytes are deleted after the commit:
        // a copy delivered in between would be left without them, so it refuses.
        context.guard(
            store::no_receipt_refers_to(&target.raw_key),
            DeletionError::DeliveredAgain { id: receipt_id.clone() },
        );
    }
    context.audit_detail(serde_json::json!({
        "mailbox": mailbox_id,
        "message_id": target.message_id,
        "size": target.size,
        "original": fate.name(),
    }));
    if shared {
        return Ok(context.json(&MessageDeleted { id: receipt_id, mailbox_id, original: fate }));
    }

    // The receipt is gone for good before its bytes are touched.
    context.commit_now().await?;
    let original = match context.node().blobs.delete(&target.raw_key).await {
        Ok(()) => {
            context.defer_write(no_longer_owed(&target.raw_key));
            OriginalFate::Deleted
        }
        Err(error) => {
            context.platform().log(&format!("deleting the original of {receipt_id}: {}; the upkeep retries", error.0));
            OriginalFate::DeletedLater
        }
    };
    Ok(context.json(&MessageDeleted { id: receipt_id, mailbox_id, original }))
}

/// The one statement that records objects as owed deletion from the object store
/// (`originals_to_delete`), from `since`, for the upkeep (`delete_originals_owed`)
/// to delete: every writer of the table queues it in the batch of the change that
/// leaves them unreferenced. `keys` is a query answering one column, the objects'
/// keys, run inside that batch, so what it selects is what the commit leaves; it
/// numbers its parameters (`?1`, `?2`, …) and `since` is bound after them. A key
/// already owed stays owed from when it first was.
pub fn owe_deletion_of(keys: Statement, since: i64) -> Statement {
    store::owed_deletion(keys, since)
}

/// The scheduled upkeep's share: deletes from the object store the originals still
/// owed deletion (the object store failed when their last receipt was deleted),
/// a bounded number per run. An original a receipt refers to again (the same
/// message delivered anew since) is kept and no longer owed. Answers how many
/// were deleted.
pub async fn delete_originals_owed(work: &Background<'_>) -> Result<usize, BackgroundError> {
    let node = work.node();
    let owed = store::owed(ORIGINALS_PER_UPKEEP);
    let results = work.run(vec![owed]).await?;
    let mut settled = Vec::new();
    let mut deleted = 0;
    for row in results.into_iter().flat_map(|result| result.rows) {
        let raw_key = row.text("raw_key")?;
        let needed = row.integer("needed")? != 0;
        if needed {
            settled.push(no_longer_owed(&raw_key));
            continue;
        }
        match node.blobs.delete(&raw_key).await {
            Ok(()) => {
                deleted += 1;
                settled.push(no_longer_owed(&raw_key));
            }
            Err(error) => node.platform.log(&format!("deleting the original {raw_key}: {}", error.0)),
        }
    }
    if !settled.is_empty() {
        work.run(settled).await?;
    }
    Ok(deleted)
}
