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
//! A receipt in a mailbox's own database (decision 0040) is deleted there,
//! with the call's entry; D1 still keeps a copy of every receipt (delivery
//! writes them there), so that copy goes after the commit, and with it the
//! question whether the original is still needed, which the upkeep then
//! answers, deleting it if not.
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
use crate::core::storage::{QueryResult, Statement};
use crate::mail::location::{self, MailStore};
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
    // Where the mailbox's mail is; whether another copy refers to its original
    // is asked of D1's copy of every receipt beside it.
    let target = store::target(&receipt_id, &mailbox_id);
    let shared_in_d1 = store::shared_as_d1_holds_it(&receipt_id);
    let read = location::read(context, &mailbox_id, vec![shared_in_d1], vec![target]).await?;
    let mail_store = read.store;
    let target: Target = read
        .mail
        .first()
        .and_then(QueryResult::first)
        .ok_or(MessageError::NoSuchMessage { id: receipt_id.clone() })?
        .decode()
        .map_err(|error| context.internal(error))?;
    let shared = read.directory.first().and_then(|shared| shared.first_flag("shared")).unwrap_or(true);

    // Sends that answer it, whatever their state, keep their threading headers
    // and lose the link (the foreign key would refuse the deletion otherwise).
    location::write(context, mail_store, &mailbox_id, store::replies_unlinked(&receipt_id))?;
    // Its conversation counts one message fewer; it keeps its Message-ID, so a
    // late reply to it still joins.
    location::write(context, mail_store, &mailbox_id, linking::leave(&receipt_id))?;
    for unindexed in store::unindexed(&receipt_id) {
        location::write(context, mail_store, &mailbox_id, unindexed)?;
    }
    location::write(context, mail_store, &mailbox_id, store::remembered_as_deleted(&receipt_id))?;
    // Another request deleting it first leaves nothing to delete: as if it never was.
    location::write_changing_one_row(
        context,
        mail_store,
        &mailbox_id,
        store::receipt_deleted(&receipt_id, &mailbox_id),
        MessageError::NoSuchMessage { id: receipt_id.clone() },
    )?;
    if mail_store == MailStore::OwnDatabase {
        // D1's copy goes after it (what still reads D1's receipts, a search
        // across mailboxes and an export's selection, no longer finds it),
        // and with it the question whether the original is still needed:
        // answered by the upkeep, which deletes it if not.
        for statement in [store::replies_unlinked(&receipt_id)]
            .into_iter()
            .chain(store::unindexed(&receipt_id))
            .chain([store::receipt_deleted(&receipt_id, &mailbox_id)])
        {
            location::write_after(context, mail_store, statement);
        }
    }
    // Owed deletion only if no receipt is left that refers to it, decided inside
    // the commit (on D1, after it), so two copies deleted at once still leave it owed.
    let owed = owe_deletion_of(store::original_if_unreferenced(&target.raw_key), context.now_ms());
    location::write_after(context, mail_store, owed);
    let fate = match (shared, mail_store) {
        (true, _) => OriginalFate::KeptForOtherCopies,
        (false, MailStore::D1) => OriginalFate::Deleted,
        (false, MailStore::OwnDatabase) => OriginalFate::DeletedLater,
    };
    if !shared && mail_store == MailStore::D1 {
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
    if fate != OriginalFate::Deleted {
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
