//! Deleting a received message: an administrator's decision, governed (it cannot
//! be undone) and audited like every change (decision 0017).
//!
//! One commit takes out the receipt, its entries in both search indexes (given
//! the values they indexed, as an external-content FTS5 index needs), and the
//! links sends had to it (a sealed send keeps the In-Reply-To it was sealed
//! with; only `reply_to` may change, migration 0011), and records where the
//! receipt was in storage order, so a page that ended at it goes on. Its original
//! bytes are its own (`originals`: a key names the mailbox and the receipt);
//! those stored before keys did are shared by every receipt of the message, in
//! any mailbox, so bytes go with the last receipt that refers to them: the commit records them as owed
//! deletion only when no receipt is left, and they are deleted from the object
//! store after the commit. Should that fail, they stay owed, and the scheduled
//! upkeep (`delete_originals_owed`) deletes them; the receipt is never kept for
//! want of its bytes being deleted, and the bytes never outlive it for good.
//! Whatever else leaves objects behind (an export's copies) owes them the same
//! way, through `owe_deletion_of`, the one writer of what is owed.
//!
//! A receipt in a mailbox's own database (decision 0040) is deleted there,
//! with the call's entry, and D1's copy of it (kept for receipts moved before
//! delivery followed the mail) after the commit. An original stored under the
//! mailbox's own key (`originals::raw_message_key`) is needed by that mailbox's
//! receipts alone, so the question is asked and guarded there and its bytes
//! deleted after the commit, as on D1; one stored before under a key shared
//! across mailboxes is left owed, and the upkeep answers whether any store
//! still needs it.
//!
//! It never reads content: the text body is named only in the statements that
//! take the receipt out of the body index, which are writes.

use futures_util::future::join_all;
use mailroom_contract::PathParameter;
use mailroom_contract::api::{MessageDeleted, OriginalFate};

use crate::core::background::{Background, BackgroundError};
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::mailbox_storage::never_created;
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Statement};
use crate::mail::location::{self, MailStore};
use crate::mail::messages::MessageError;
use crate::mail::originals;
use crate::mail::store::deletion::{self as store, Target, no_longer_owed};
use crate::mail::store::moving;
use crate::mail::threads::linking;

/// How many originals owed deletion one upkeep deletes: a bounded amount of work
/// per run; the next run takes the rest.
const ORIGINALS_PER_UPKEEP: i64 = 50;

/// How many mailboxes' own databases one upkeep asks which originals they
/// still need: each is a subrequest, and a run has few.
const MAILBOXES_PER_UPKEEP: usize = 8;

/// What can stop a deletion that the read before it could not foresee.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeletionError {
    /// Another receipt referring to its original was stored between the read
    /// and the commit (the message delivered again, or filed as a copy): its
    /// original, about to be deleted, is needed after all.
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
    // is asked where the mail is, and of D1's copy of every receipt beside it
    // (an original stored before keys named their mailbox may be another
    // mailbox's too).
    let target = store::target(&receipt_id, &mailbox_id);
    let read = location::read(
        context,
        &mailbox_id,
        vec![store::shared(&receipt_id)],
        vec![target, store::shared(&receipt_id)],
    )
    .await?;
    let mail_store = read.store;
    let target: Target = read
        .mail
        .first()
        .and_then(QueryResult::first)
        .ok_or(MessageError::NoSuchMessage { id: receipt_id.clone() })?
        .decode()
        .map_err(|error| context.internal(error))?;
    let shared_where = |results: &[QueryResult]| results.iter().find_map(|result| result.first_flag("shared"));
    let shared_here = shared_where(&read.mail[1..]).unwrap_or(true);
    let shared_in_d1 = shared_where(&read.directory).unwrap_or(true);
    // Where the question is answered whole: where the mail is, for an original
    // under this mailbox's own key; otherwise (a key shared across mailboxes,
    // in a mailbox whose mail moved) by the upkeep, after D1's copy goes.
    let own_key = originals::mailbox_of_raw_key(&target.raw_key) == Some(mailbox_id.as_str());
    let answered_here = mail_store == MailStore::D1 || own_key;
    let shared = if answered_here { shared_here } else { shared_here || shared_in_d1 };

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
        // D1 refuses a write to a moved mailbox's mail but this removal of
        // its copy, which names the mailbox as emptying in its transaction.
        for statement in [moving::emptying_begins(&mailbox_id), store::replies_unlinked(&receipt_id)]
            .into_iter()
            .chain(store::unindexed(&receipt_id))
            .chain([store::receipt_deleted(&receipt_id, &mailbox_id), moving::emptying_ends(&mailbox_id)])
        {
            location::write_after(context, mail_store, statement);
        }
    }
    // Owed deletion only if no receipt is left that refers to it, decided inside
    // the commit (on D1, after it), so two copies deleted at once still leave it owed.
    let owed = owe_deletion_of(store::original_if_unreferenced(&target.raw_key), context.now_ms());
    location::write_after(context, mail_store, owed);
    let fate = match (shared, answered_here) {
        (true, _) => OriginalFate::KeptForOtherCopies,
        (false, true) => OriginalFate::Deleted,
        (false, false) => OriginalFate::DeletedLater,
    };
    if fate == OriginalFate::Deleted {
        // The read found no other copy, so the bytes are deleted after the commit:
        // a copy delivered in between would be left without them, so it refuses.
        // Checked in the commit's own database, which holds every receipt that
        // could refer to them.
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
/// owed deletion (the object store failed when their last receipt was deleted,
/// or the receipt was in a mailbox's own database and the key shared), a
/// bounded number per run. An original a receipt refers to again (the same
/// message delivered anew since) is kept and no longer owed: asked of D1, of
/// the own database of the mailbox its key names, and of those of the
/// mailboxes whose moved mail may refer to it under a key not their own
/// (`originals_kept_for`, each forgotten once it answers that it no longer
/// does). Answers how many were deleted.
pub async fn delete_originals_owed(work: &Background<'_>) -> Result<usize, BackgroundError> {
    let node = work.node();
    let owed = store::owed(ORIGINALS_PER_UPKEEP);
    let results = work.run(vec![owed]).await?;
    let mut owed = Vec::new();
    for row in results.into_iter().flat_map(|result| result.rows) {
        let raw_key = row.text("raw_key")?;
        let kept_for: Vec<String> = serde_json::from_str(&row.text("kept_for")?).unwrap_or_default();
        let mut asked: Vec<String> = originals::mailbox_of_raw_key(&raw_key).map(str::to_string).into_iter().collect();
        for mailbox_id in &kept_for {
            if !asked.contains(mailbox_id) {
                asked.push(mailbox_id.clone());
            }
        }
        owed.push(Owed { raw_key, needed_in_d1: row.integer("needed")? != 0, asked, kept_for });
    }
    let answers = needed_in_mailboxes(work, &owed).await;
    let mut settled = Vec::new();
    let mut deleted = 0;
    'owed: for original in owed {
        let mut needed = original.needed_in_d1;
        for mailbox_id in &original.asked {
            match answers.iter().find(|(key, mailbox, _)| *key == original.raw_key && mailbox == mailbox_id) {
                Some((_, _, true)) => needed = true,
                Some((_, _, false)) => {
                    if original.kept_for.contains(mailbox_id) {
                        settled.push(store::no_longer_kept_for(&original.raw_key, mailbox_id));
                    }
                }
                // The mailbox was not asked this run, or did not answer.
                None => continue 'owed,
            }
        }
        if needed {
            settled.push(no_longer_owed(&original.raw_key));
            continue;
        }
        match node.blobs.delete(&original.raw_key).await {
            Ok(()) => {
                deleted += 1;
                settled.push(no_longer_owed(&original.raw_key));
            }
            Err(error) => node.platform.log(&format!("deleting the original {}: {}", original.raw_key, error.0)),
        }
    }
    if !settled.is_empty() {
        work.run(settled).await?;
    }
    Ok(deleted)
}

/// An original owed deletion, as the upkeep weighs it.
struct Owed {
    raw_key: String,
    needed_in_d1: bool,
    /// The mailboxes whose own databases are asked whether they refer to it.
    asked: Vec<String>,
    /// Those of them D1 keeps it in mind for (`originals_kept_for`).
    kept_for: Vec<String>,
}

/// Whether each mailbox asked of each of the `owed` originals refers to it
/// in its own database: `(raw_key, mailbox, referred)`, each mailbox asked
/// once (at most `MAILBOXES_PER_UPKEEP`, the rest left to the next run). A
/// mailbox whose database was never created refers to nothing; the keys of
/// one that could not answer are left out, to be asked again.
async fn needed_in_mailboxes(work: &Background<'_>, owed: &[Owed]) -> Vec<(String, String, bool)> {
    let mut by_mailbox: Vec<(&str, Vec<&str>)> = Vec::new();
    for original in owed {
        for mailbox_id in &original.asked {
            let asked = by_mailbox.len();
            match by_mailbox.iter_mut().find(|(id, _)| id == mailbox_id) {
                Some((_, keys)) => keys.push(&original.raw_key),
                None if asked < MAILBOXES_PER_UPKEEP => by_mailbox.push((mailbox_id, vec![&original.raw_key])),
                None => {}
            }
        }
    }
    let node = work.node();
    let asked = by_mailbox.iter().map(|(mailbox_id, keys)| {
        let keys = serde_json::to_string(keys).unwrap_or_else(|_| "[]".into());
        let database = node.mailboxes.if_created(mailbox_id);
        async move { database.execute(vec![store::referred_to(keys)]).await }
    });
    let answers = join_all(asked).await;
    work.count_elsewhere(by_mailbox.len() as u32);
    let mut known = Vec::new();
    for ((mailbox_id, keys), answer) in by_mailbox.into_iter().zip(answers) {
        let referred: Vec<String> = match answer {
            Ok(results) => {
                results.iter().flat_map(|result| &result.rows).filter_map(|row| row.text("raw_key").ok()).collect()
            }
            Err(error) if never_created(&error) => Vec::new(),
            Err(error) => {
                node.platform.log(&format!("asking {mailbox_id} which originals it still needs: {error}"));
                continue;
            }
        };
        known.extend(
            keys.into_iter()
                .map(|key| (key.to_string(), mailbox_id.to_string(), referred.iter().any(|referred| referred == key))),
        );
    }
    known
}
