//! The chain's scheduled upkeep (every five minutes): seal what is
//! waiting, fold the closed windows of refused attempts into one entry each,
//! then verify the chain from the latest checkpoint to its head and write the
//! next checkpoint, in D1 and in R2, and send it to the witness. When the chain
//! does not verify, or the two records of the latest checkpoint disagree,
//! nothing is signed and the alarm is raised (`alarm`): an entry in the chain
//! and a notification to administrators, once per fault (decision 0027).
//!
//! Every mailbox's segment of the chain is anchored first (`segments`), so the
//! anchors are sealed and checkpointed in the same run.
//!
//! Bounded: a run walks at most `UPKEEP_PAGES` pages of `VERIFY_PAGE` entries
//! from the latest checkpoint. A longer stretch is checkpointed where the walk
//! stopped, and the next run goes on from there. Walking from the checkpoint
//! rather than from the first entry is sound because a checkpoint is written
//! only after such a walk: the new head's seal chains back, through entries
//! each verified once, to the head the last checkpoint signed, so the new
//! checkpoint vouches for nothing the last did not. An entry altered behind the
//! latest checkpoint is found by `GET /api/audit/verify`, against either.

use mailroom_contract::api::AuditCheckpoint;

use super::store;
use crate::audit::alarm::{TellAdministrators, raise_alarm};
use crate::audit::chain::{ATTEMPT_WINDOW_MS, ChainOf, StoredEntry, VERIFY_PAGE, append};
use crate::audit::checkpoints::{
    Agreed, Lagging, Recorded, checkpoint, keep_in_object_store, latest_checkpoint, latest_recorded, reconcile, record,
    record_missing,
};
use crate::audit::seal::seal;
use crate::audit::segments::anchor_segments;
use crate::audit::walk::{Anchor, Failure, Walk, Walked, walk};
use crate::audit::witness::tell_witnesses;
use crate::core::background::{Background, BackgroundError};
use crate::core::context::ports::AuditRecord;
use crate::core::storage::{QueryResult, Row, Statement, StorageError};
use crate::core::time::{DAY_MS, rfc3339};

/// How many pages of `VERIFY_PAGE` entries one run of the upkeep walks.
pub const UPKEEP_PAGES: usize = 4;
/// The longest a witness goes without a checkpoint: a day, even when the chain
/// did not move.
pub const WITNESS_HEARTBEAT_MS: i64 = DAY_MS;

/// The scheduled upkeep of the chain. Answers the latest checkpoint, or none
/// when the alarm was raised instead.
pub async fn maintain(
    work: &Background<'_>,
    tell: TellAdministrators,
) -> Result<Option<AuditCheckpoint>, BackgroundError> {
    let node = work.node();
    let now_ms = node.platform.now_ms();
    // The mailboxes' segments first: their anchors are entries of this chain,
    // sealed and checkpointed below with the rest.
    anchor_segments(work, tell).await?;
    seal_all(work).await?;
    if fold_attempts(work, now_ms).await? {
        seal_all(work).await?;
    }
    let [recorded]: [QueryResult; 1] = work.run(vec![latest_recorded()]).await?.try_into().map_err(|_| {
        BackgroundError::Unreadable("the checkpoint's read answered the wrong number of results".into())
    })?;
    let recorded = Recorded::read(&recorded)?;
    let kept = latest_checkpoint(node).await.map_err(BackgroundError::from)?;
    let agreed = match reconcile(node.config, recorded.checkpoint.as_ref(), kept.as_ref()) {
        Ok(agreed) => agreed,
        Err(failure) => {
            raise_alarm(work, &failure, tell).await?;
            return Ok(None);
        }
    };
    complete(work, &agreed).await?;
    let walked = match walk_forward(work, agreed.reference.as_ref()).await? {
        Ok(walked) => walked,
        Err(failure) => {
            raise_alarm(work, &failure, tell).await?;
            return Ok(None);
        }
    };
    let Some(head) = walked.head.clone() else {
        return Ok(agreed.reference);
    };
    if let Some(reference) = &agreed.reference
        && reference.seq == head.seq
        && reference.hash == head.hash
        && reference.witness == walked.witness
        && !heartbeat_due(reference, now_ms)
    {
        // Nothing new to sign; a witness that has not taken the latest yet is
        // told again.
        let unwitnessed = agreed.lagging == Some(Lagging::Database) || recorded.witnessed_at.is_none();
        if unwitnessed
            && reference.number.is_some()
            && let Some(told) = tell_witnesses(node, reference, None).await
        {
            work.run(vec![told]).await?;
        }
        return Ok(agreed.reference);
    }
    let next = checkpoint(node.config, agreed.next_number, &head, walked.witness.clone(), now_ms);
    // D1 first: its primary key decides which of two writers owns the number.
    match work.run(vec![record(&next)]).await {
        Ok(_) => {}
        Err(BackgroundError::Storage(StorageError::Unique(_))) => {
            node.platform.log(&format!("checkpoint {} was written by another writer", agreed.next_number));
            return Ok(agreed.reference);
        }
        Err(error) => return Err(error),
    }
    keep_in_object_store(node, &next).await.map_err(BackgroundError::from)?;
    let replaced = agreed.reference.as_ref().and_then(|reference| reference.witness.as_deref());
    if let Some(told) = tell_witnesses(node, &next, replaced).await {
        work.run(vec![told]).await?;
    }
    Ok(Some(next))
}

/// Whether a witness has heard nothing for `WITNESS_HEARTBEAT_MS`: then a
/// checkpoint of the same head goes out, so that silence longer than that
/// means something to the witness (decision 0027).
fn heartbeat_due(reference: &AuditCheckpoint, now_ms: i64) -> bool {
    let written_at = chrono::DateTime::parse_from_rfc3339(&reference.at).map(|at| at.timestamp_millis());
    reference.witness.is_some() && written_at.is_ok_and(|written_at| now_ms - written_at >= WITNESS_HEARTBEAT_MS)
}

/// Writes the newer checkpoint to the store one behind, when one is.
async fn complete(work: &Background<'_>, agreed: &Agreed) -> Result<(), BackgroundError> {
    let node = work.node();
    let (Some(lagging), Some(reference)) = (agreed.lagging, &agreed.reference) else {
        return Ok(());
    };
    node.platform.log(&format!(
        "completing checkpoint {} in {}",
        reference.number.unwrap_or_default(),
        match lagging {
            Lagging::Database => "D1",
            Lagging::ObjectStore => "the object store",
        }
    ));
    match lagging {
        Lagging::Database => work.run(vec![record_missing(reference)]).await.map(|_| ()),
        Lagging::ObjectStore => keep_in_object_store(node, reference).await.map_err(BackgroundError::from),
    }
}

/// The entry at `seq` and up to a page after it, copies marked, and the last `seq`.
fn page_from(seq: i64) -> Vec<Statement> {
    vec![store::entries_from(seq, VERIFY_PAGE + 1), store::last_seq()]
}

/// Where a walk from `reference` starts: after its head, once the entry there
/// is shown to be the one it recorded; from the start without one.
pub(crate) fn start_from(
    config: &crate::core::node::Config,
    reference: Option<&AuditCheckpoint>,
    entries: &[StoredEntry],
    last_seq: i64,
) -> Result<(Anchor, usize), Failure> {
    let Some(reference) = reference else {
        return Ok((Anchor::genesis(), 0));
    };
    let truncated = || Failure {
        seq: Some(last_seq + 1),
        fault: mailroom_contract::api::ChainFault::Truncated,
        problem: format!("truncated after checkpoint {}: the chain ends at entry {last_seq}", reference.seq),
        about: format!("checkpoint-{}", reference.seq),
    };
    let Some(at_head) = entries.first().filter(|entry| entry.seq == reference.seq) else {
        return Err(truncated());
    };
    let anchor = Anchor::verified(config, at_head)?;
    if anchor.hash != reference.hash {
        return Err(Failure {
            seq: Some(reference.seq),
            fault: mailroom_contract::api::ChainFault::Rewritten,
            problem: format!("it is not the entry checkpoint {} recorded: the history was rewritten", reference.seq),
            about: format!("checkpoint-{}", reference.seq),
        });
    }
    Ok((anchor, 1))
}

/// Walks from `reference` towards the head, a page at a time, at most
/// `UPKEEP_PAGES` pages. Sealing was done before, so an entry still waiting is
/// counted, not sealed.
async fn walk_forward(
    work: &Background<'_>,
    reference: Option<&AuditCheckpoint>,
) -> Result<Result<Walked, Failure>, BackgroundError> {
    let node = work.node();
    let mut from = reference.map_or(1, |reference| reference.seq);
    let mut anchor: Option<Anchor> = None;
    let mut witness = reference.and_then(|reference| reference.witness.clone());
    let mut total = Walked::default();
    for _ in 0..UPKEEP_PAGES {
        let results = work.run(page_from(from)).await?;
        let [page, last]: [QueryResult; 2] = results
            .try_into()
            .map_err(|_| BackgroundError::Unreadable("the walk's read answered the wrong number of results".into()))?;
        let entries: Vec<StoredEntry> = page.decode_all()?;
        let last_seq = last.first().map(|row: &Row| row.integer("last_seq")).transpose()?;
        let (start, skip) = match &anchor {
            // The page starts at the entry the last one ended at.
            Some(anchor) => (anchor.clone(), usize::from(entries.first().is_some_and(|first| first.seq == anchor.seq))),
            None => match start_from(node.config, reference, &entries, last_seq.unwrap_or(0)) {
                Ok(start) => start,
                Err(failure) => return Ok(Err(failure)),
            },
        };
        let rest = entries.get(skip..).unwrap_or_default();
        let walked = walk(
            node.config,
            &start,
            rest,
            Walk { seal: false, reference: None, witness: witness.clone(), of: ChainOf::Organisation },
        );
        if let Some(failure) = walked.failure {
            return Ok(Err(failure));
        }
        total.checked += walked.checked;
        total.head = walked.head.clone().or(total.head);
        total.witness = walked.witness.clone();
        witness = walked.witness;
        // Go on only from a sealed entry, and only while a full page came back.
        let full = entries.len() as i64 == VERIFY_PAGE + 1;
        let Some(head) = walked.head.filter(|_| full && walked.awaiting_seal == 0) else {
            break;
        };
        let Some(at_head) = rest.iter().find(|entry| entry.seq == head.seq) else {
            break;
        };
        anchor = Some(
            Anchor::verified(node.config, at_head)
                .map_err(|failure| BackgroundError::Unreadable(failure.sentence()))?,
        );
        from = head.seq;
    }
    Ok(Ok(total))
}

/// Seals until nothing more is waiting or the sealer stops at an entry it will
/// not seal (which it logs, and which the walk then raises the alarm for).
async fn seal_all(work: &Background<'_>) -> Result<(), BackgroundError> {
    let node = work.node();
    // Bounded: a backlog past this many batches waits for the next run.
    for _ in 0..64 {
        let sealing = seal(work.database(), node.config).await?;
        if let Some(stopped) = &sealing.stopped {
            node.platform.log(&format!("the audit chain was not sealed past its head: {stopped}"));
        }
        if !sealing.more {
            break;
        }
    }
    Ok(())
}

/// Folds each closed window of refused attempts into the chain as one entry:
/// whether any was.
async fn fold_attempts(work: &Background<'_>, now_ms: i64) -> Result<bool, BackgroundError> {
    let node = work.node();
    let closed = store::closed_attempt_windows(now_ms - ATTEMPT_WINDOW_MS);
    let windows = work.run(vec![closed]).await?;
    let mut folding = Vec::new();
    for row in windows.first().map(|result| result.rows.as_slice()).unwrap_or_default() {
        let window = Window::read(row)?;
        folding.push(append(&node.config.audit_key, &window.record(), node.platform));
        folding.push(store::delete_attempt_window(window.window_start, &window.action, &window.code));
    }
    if folding.is_empty() {
        return Ok(false);
    }
    work.run(folding).await?;
    Ok(true)
}

/// A closed window of refused attempts.
struct Window {
    window_start: i64,
    action: String,
    code: String,
    attempts: i64,
    first_at: i64,
    last_at: i64,
}

impl Window {
    fn read(row: &Row) -> Result<Window, StorageError> {
        Ok(Window {
            window_start: row.integer("window_start")?,
            action: row.text("action")?,
            code: row.text("code")?,
            attempts: row.integer("attempts")?,
            first_at: row.integer("first_at")?,
            last_at: row.integer("last_at")?,
        })
    }

    /// The one entry the window becomes: who cannot be named, what was tried and
    /// refused, how often, and over what time.
    fn record(&self) -> AuditRecord {
        AuditRecord {
            at: self.last_at,
            actor: None,
            delegator: None,
            surface: None,
            action: self.action.clone(),
            object: None,
            outcome: "refused",
            detail: Some(
                serde_json::json!({
                    "code": self.code,
                    "attempts": self.attempts,
                    "from": rfc3339(self.first_at),
                    "to": rfc3339(self.last_at),
                })
                .to_string(),
            ),
            topic: None,
        }
    }
}
