//! The mailboxes' segments of the audit chain (decision 0040). A change of a
//! mailbox's mail is recorded in that mailbox's own database, in the same
//! transaction (`chain::append_to_mailbox`), as a segment: the same columns,
//! sealed and walked by the same code as the organisation's chain in D1, its
//! MACs and seals also covering the mailbox's id (`ChainOf::Mailbox`).
//!
//! The organisation's chain anchors every segment. The upkeep seals each
//! segment, walks it from the head last anchored for it, and appends to D1's
//! chain an entry naming its new head (`ANCHOR_ACTION`, the mailbox as its
//! object, the head's `seq` and `hash` as its detail), which is then sealed,
//! checkpointed to R2 and sent to the witness with everything else. A segment
//! that no longer holds its anchored head (its newest entries deleted, or its
//! history rewritten up to it) or that does not walk raises the chain's alarm,
//! once per fault, and is not anchored further.

use futures_util::future::join_all;
use mailroom_contract::api::{ChainFault, ChainHead};
use serde::{Deserialize, Serialize};

use super::store::{self, SegmentsWanted};
use crate::audit::alarm::{TellAdministrators, raise_alarm};
use crate::audit::chain::{ChainOf, StoredEntry, VERIFY_PAGE, append, same};
use crate::audit::seal::seal_chain;
use crate::audit::walk::{Anchor, Failure, Walk, walk};
use crate::core::background::{Background, BackgroundError};
use crate::core::context::MAILBOXES_PER_READ;
use crate::core::context::ports::AuditRecord;
use crate::core::node::{Config, Node};
use crate::core::storage::{Counted, QueryResult, Statement, StorageError};

/// The action of the organisation's entry that anchors a segment's head.
pub const ANCHOR_ACTION: &str = "anchor_mailbox_segment";
/// How many mailboxes' segments one run of the upkeep checks: those checked
/// longest ago. Each costs its object two or three subrequests, and the free
/// plan allows an invocation 50 with the upkeep's own D1 and R2 calls, so
/// every segment has its turn, however many mailboxes, a few at a time.
pub const SEGMENTS_PER_RUN: i64 = 8;
/// How many mailboxes' segments one verification checks from their anchors,
/// all at once: as many as one read may ask of mailboxes' databases. The
/// next are asked for with `segments_after`.
pub const SEGMENTS_PER_VERIFY: usize = MAILBOXES_PER_READ;

/// A segment's head as an anchoring entry records it.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
struct Anchored {
    seq: i64,
    hash: String,
}

/// What walking a segment found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentCheck {
    /// The last sealed entry the walk verified, or the entry it started after.
    pub head: Option<ChainHead>,
    /// Entries checked.
    pub checked: i64,
    /// The last entry checked.
    pub verified_through: Option<i64>,
    /// Entries still waiting for their seal.
    pub awaiting_seal: i64,
    /// Where to continue, when a page did not reach the segment's end.
    pub next_after_seq: Option<i64>,
    /// The first thing wrong, naming the mailbox.
    pub failure: Option<Failure>,
}

/// The statements that read up to `VERIFY_PAGE` entries of a segment after
/// its entry `after` (0: from its start), for `judge_segment`: one round trip
/// in the mailbox's database.
pub(crate) fn segment_page(after: i64) -> Vec<Statement> {
    vec![store::entry_at(after), store::entries_after(after, VERIFY_PAGE), store::last_seq()]
}

/// Walks what `segment_page(after)` read of `mailbox_id`'s segment, and holds
/// the segment to `anchored`, the head the organisation's chain last anchored
/// for it: the segment must still reach it and hold it unchanged.
pub(crate) fn judge_segment(
    config: &Config,
    mailbox_id: &str,
    after: i64,
    read: &[QueryResult],
    anchored: Option<&ChainHead>,
) -> Result<SegmentCheck, StorageError> {
    let [at_after, entries, ends] = read else {
        return Err(StorageError::Backend("a segment's read answered the wrong number of results".into()));
    };
    let at_after: Vec<StoredEntry> = at_after.decode_all()?;
    let entries: Vec<StoredEntry> = entries.decode_all()?;
    let last_seq = ends.first().map_or(Ok(0), |row| row.integer("last_seq"))?;
    let page = Page { after, at_after: at_after.first(), entries: &entries, last_seq };
    Ok(check_segment(config, mailbox_id, page, anchored))
}

/// What one read of a segment answered.
struct Page<'a> {
    after: i64,
    at_after: Option<&'a StoredEntry>,
    entries: &'a [StoredEntry],
    last_seq: i64,
}

/// `judge_segment`'s judgement, on the rows decoded. Pure.
fn check_segment(config: &Config, mailbox_id: &str, page: Page<'_>, anchored: Option<&ChainHead>) -> SegmentCheck {
    let of = ChainOf::Mailbox(mailbox_id);
    let failed = |failure: Failure| SegmentCheck {
        head: None,
        checked: 0,
        verified_through: None,
        awaiting_seal: 0,
        next_after_seq: None,
        failure: Some(in_segment(mailbox_id, failure)),
    };
    let holds =
        |entry: &StoredEntry, head: &ChainHead| entry.hash.as_deref().is_some_and(|hash| same(hash, &head.hash));
    if let Some(head) = anchored.filter(|head| page.last_seq < head.seq) {
        return failed(rewritten(head, "it is gone: the segment's newest entries were deleted"));
    }
    let start = match (page.after, page.at_after) {
        (0, _) => Anchor::genesis_of(of),
        (after, None) => {
            return failed(Failure::at_entry(
                after,
                ChainFault::SeqGap,
                format!("there is no entry {after} to continue from"),
            ));
        }
        (_, Some(entry)) => {
            if let Some(head) = anchored.filter(|head| head.seq == entry.seq && !holds(entry, head)) {
                return failed(rewritten(head, "it is not the entry anchored there: the segment was rewritten"));
            }
            match Anchor::verified_in(config, entry, of) {
                Ok(anchor) => anchor,
                Err(failure) => return failed(failure),
            }
        }
    };
    let walked = walk(config, &start, page.entries, Walk { seal: false, reference: None, witness: None, of });
    let mut failure = walked.failure;
    // The anchored head, where this page walked past it, is the entry anchored.
    if failure.is_none()
        && let Some(head) = anchored
        && let Some(entry) = page.entries.iter().find(|entry| entry.seq == head.seq)
        && !holds(entry, head)
    {
        failure = Some(rewritten(head, "it is not the entry anchored there: the segment was rewritten"));
    }
    let next_after_seq = walked
        .verified_through
        .filter(|through| failure.is_none() && walked.checked == VERIFY_PAGE && page.last_seq > *through);
    SegmentCheck {
        head: walked.head,
        checked: walked.checked,
        verified_through: walked.verified_through,
        awaiting_seal: walked.awaiting_seal,
        next_after_seq,
        failure: failure.map(|failure| in_segment(mailbox_id, failure)),
    }
}

fn rewritten(head: &ChainHead, problem: &str) -> Failure {
    Failure::at_entry(
        head.seq,
        ChainFault::SegmentRewritten,
        format!("it is the head anchored for the segment, and {problem}"),
    )
}

/// `failure`, said of `mailbox_id`'s segment, and raised once per mailbox.
fn in_segment(mailbox_id: &str, failure: Failure) -> Failure {
    Failure {
        problem: format!("in the audit segment of mailbox {mailbox_id}, {}", failure.sentence()),
        about: format!("{mailbox_id}:{}", failure.about),
        ..failure
    }
}

/// Every mailbox with the head last anchored for its segment, read from
/// `anchors` (the result of `anchors_statement`).
pub(crate) fn read_anchors(anchors: &QueryResult) -> Result<Vec<(String, Option<ChainHead>)>, StorageError> {
    let mut segments = Vec::with_capacity(anchors.rows.len());
    for row in &anchors.rows {
        let mailbox_id = row.text("mailbox_id")?;
        let anchored = match row.optional_text("anchored")? {
            None => None,
            Some(detail) => {
                let anchored: Anchored = serde_json::from_str(&detail)
                    .map_err(|error| StorageError::Decode(format!("an anchor of {mailbox_id}: {error}")))?;
                Some(ChainHead { seq: anchored.seq, hash: anchored.hash })
            }
        };
        segments.push((mailbox_id, anchored));
    }
    Ok(segments)
}

/// The statement reading the segments the upkeep checks this run, with their latest anchors.
fn anchors_to_check() -> Statement {
    store::segment_anchors(ANCHOR_ACTION, SegmentsWanted::LongestUnchecked { limit: SEGMENTS_PER_RUN })
}

/// The statement reading a page of segments to verify (those after the
/// mailbox `after`, in id order), with their latest anchors: one more than
/// `SEGMENTS_PER_VERIFY`, to know whether another page exists.
pub(crate) fn anchors_to_verify(after: &str) -> Statement {
    store::segment_anchors(ANCHOR_ACTION, SegmentsWanted::After { after, limit: SEGMENTS_PER_VERIFY as i64 + 1 })
}

/// `anchors_to_check`, for the one mailbox `mailbox_id`.
pub(crate) fn anchor_statement(mailbox_id: &str) -> Statement {
    store::segment_anchors(ANCHOR_ACTION, SegmentsWanted::Only(mailbox_id))
}

/// Each of `segments` sealed, then checked from its anchored head, all at
/// once (at most `SEGMENTS_PER_RUN`), in the order given, with the round
/// trips each took in its mailbox's database; a segment that cannot be read
/// is answered as its error.
async fn seal_and_check(
    node: &Node<'_>,
    segments: Vec<(String, Option<ChainHead>)>,
) -> Vec<(String, Option<ChainHead>, Result<SegmentCheck, StorageError>, u32)> {
    let checks = segments.into_iter().map(|(mailbox_id, anchored)| async move {
        let database = node.mailboxes.of(&mailbox_id);
        let counted = Counted::new(&*database);
        let check = async {
            seal_chain(&counted, node.config, ChainOf::Mailbox(&mailbox_id)).await?;
            let after = anchored.as_ref().map_or(0, |head| head.seq);
            let read = counted.execute(segment_page(after)).await?;
            judge_segment(node.config, &mailbox_id, after, &read, anchored.as_ref())
        }
        .await;
        let round_trips = counted.round_trips();
        (mailbox_id, anchored, check, round_trips)
    });
    join_all(checks).await
}

/// The upkeep's pass over the `SEGMENTS_PER_RUN` segments checked longest ago:
/// each is sealed, walked from its anchored head, and its new head anchored
/// in the organisation's chain, with the time it was checked, in one batch
/// for all; a segment that fails raises the alarm instead. A mailbox whose
/// database cannot be reached is logged, and tried again on its next turn.
pub async fn anchor_segments(work: &Background<'_>, tell: TellAdministrators) -> Result<(), BackgroundError> {
    let node = work.node();
    let [anchors]: [QueryResult; 1] =
        work.run(vec![anchors_to_check()]).await?.try_into().map_err(|_| {
            BackgroundError::Unreadable("the segments' read answered the wrong number of results".into())
        })?;
    let checks = seal_and_check(node, read_anchors(&anchors)?).await;
    let mut batch = Vec::new();
    for (mailbox_id, anchored, checked, round_trips) in checks {
        work.count_elsewhere(round_trips);
        // Marked checked even when it could not be read: one that never can
        // must not hold the others' turns for ever; it is tried on its next.
        batch.push(store::segment_checked(&mailbox_id, node.platform.now_ms()));
        let check = match checked {
            Ok(check) => check,
            Err(error) => {
                node.platform.log(&format!("the audit segment of {mailbox_id} could not be read: {error}"));
                continue;
            }
        };
        if let Some(failure) = &check.failure {
            raise_alarm(work, failure, tell).await?;
            continue;
        }
        let Some(head) = check.head.filter(|head| anchored.as_ref() != Some(head)) else { continue };
        let detail = serde_json::to_string(&Anchored { seq: head.seq, hash: head.hash })
            .map_err(|error| BackgroundError::Unreadable(error.to_string()))?;
        let record = AuditRecord {
            at: node.platform.now_ms(),
            actor: None,
            delegator: None,
            surface: None,
            action: ANCHOR_ACTION.into(),
            object: Some(mailbox_id),
            outcome: "ok",
            detail: Some(detail),
            topic: None,
        };
        batch.push(append(&node.config.audit_key, &record, node.platform));
    }
    if !batch.is_empty() {
        work.run(batch).await?;
    }
    Ok(())
}
