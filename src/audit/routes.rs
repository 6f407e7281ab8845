//! The audit chain's routes: reading the trail a page at a time, verifying it,
//! and writing a checkpoint on demand. Administrators' questions and acts,
//! never offered to machines; the chain itself is `chain`, its checks `walk`,
//! its checkpoints `checkpoints`. Their refusals are unusable query parameters
//! (`RequestError`: a cursor this route did not write, or what the dispatcher
//! refuses by the parameter's declaration) and a checkpoint refused
//! (`AuditError`), with its words beside it.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mailroom_contract::api::{
    AuditCheckpoint, AuditPage, AuditVerification, ChainFault, ChainHead, SegmentVerification,
};

use crate::audit::alarm::{CHAIN_BROKEN, TellAdministrators, alarm, alarm_detail};
use crate::audit::chain::{ChainOf, StoredEntry, VERIFY_PAGE};
use crate::audit::checkpoints::{
    Lagging, Recorded, checkpoint, keep_in_object_store, latest_checkpoint, latest_recorded, reconcile, record,
    record_missing,
};
use crate::audit::segments;
use crate::audit::upkeep::start_from;
use crate::audit::walk::{Anchor, Failure, Walk, walk};
use crate::audit::witness::tell_witnesses;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::node::Config;
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;
use crate::core::storage::QueryResult;
use crate::core::time;

use super::store::{self, AuditFilter};

/// Why a checkpoint was not written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuditError {
    /// The chain does not verify from the latest checkpoint to its head, or the
    /// two records of the latest checkpoint disagree: nothing was signed.
    ChainBroken(Failure),
    /// Another checkpoint took the number first, or the latest checkpoint lies
    /// further ahead than one call walks.
    CheckpointInProgress { why: &'static str },
}

impl From<AuditError> for Refusal {
    fn from(error: AuditError) -> Refusal {
        match error {
            AuditError::ChainBroken(failure) => Refusal::new(
                409,
                CHAIN_BROKEN,
                format!("The audit chain does not verify ({}), so no checkpoint was signed.", failure.fault.name()),
                format!("{}. Administrators were notified.", capitalised(&failure.sentence())),
                "Read verify_audit_chain for what failed and where; the chain's history must be restored (from a \
                 backup, or by whoever changed the database) before the node signs another checkpoint."
                    .to_string(),
            ),
            AuditError::CheckpointInProgress { why } => Refusal::new(
                409,
                "checkpoint_in_progress",
                "No checkpoint was written just now.".to_string(),
                why.to_string(),
                "Ask again in a moment, or read the latest checkpoint in verify_audit_chain.".to_string(),
            ),
        }
    }
}

/// `text` with its first letter a capital, to open a sentence.
fn capitalised(text: &str) -> String {
    let mut characters = text.chars();
    characters.next().map(|first| first.to_uppercase().chain(characters).collect()).unwrap_or_default()
}

fn encode_cursor(seq: i64) -> String {
    URL_SAFE_NO_PAD.encode(format!("audit-before:{seq}"))
}

fn decode_cursor(cursor: &str) -> Option<i64> {
    let text = String::from_utf8(URL_SAFE_NO_PAD.decode(cursor).ok()?).ok()?;
    text.strip_prefix("audit-before:")?.parse().ok().filter(|seq| *seq > 0)
}

/// `GET /api/audit`: entries newest first, a page at a time.
pub async fn list_entries(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let limit = paging::limit(context)?;
    let before = match context.query("cursor") {
        None => i64::MAX,
        Some(cursor) => decode_cursor(cursor).ok_or(RequestError::InvalidQueryParameter {
            name: "cursor".into(),
            expected: "the `next_cursor` of a previous page, unchanged".into(),
        })?,
    };
    let filter = audit_filter(context)?;
    let page = match context.query("mailbox_id").map(str::to_string) {
        None => {
            let [page] = context.read_array([store::entries_before(before, limit + 1, &filter)]).await?;
            page
        }
        Some(mailbox_id) => segment_entries_before(context, &mailbox_id, before, limit + 1, &filter).await?,
    };
    let mut entries: Vec<StoredEntry> = page.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = if entries.len() as i64 > limit {
        entries.truncate(limit as usize);
        entries.last().map(|entry| encode_cursor(entry.seq))
    } else {
        None
    };
    let entries = entries.into_iter().map(StoredEntry::present).collect();
    Ok(context.json(&AuditPage { entries, next_cursor }))
}

/// The trail's narrowing as the query asks for it: `actor`, `action`, and
/// `since` and `until` as moments in RFC 3339.
fn audit_filter(context: &Context<'_>) -> Result<AuditFilter, Refusal> {
    let moment = |name: &str| -> Result<Option<i64>, Refusal> {
        match context.query(name) {
            None => Ok(None),
            Some(text) => time::instant(text).map(Some).ok_or_else(|| {
                RequestError::InvalidQueryParameter {
                    name: name.into(),
                    expected: "a moment in RFC 3339, such as 2026-12-05T09:00:00Z".into(),
                }
                .into()
            }),
        }
    };
    let named = |name: &str| context.query(name).filter(|text| !text.is_empty()).map(str::to_string);
    let filter = AuditFilter {
        actor: named("actor"),
        action: named("action"),
        since: moment("since")?,
        until: moment("until")?,
    };
    if let (Some(since), Some(until)) = (filter.since, filter.until)
        && until < since
    {
        return Err(RequestError::InvalidQueryParameter {
            name: "until".into(),
            expected: "a moment on or after `since`".into(),
        }
        .into());
    }
    Ok(filter)
}

/// Up to `limit` entries of mailbox `mailbox_id`'s segment of the chain
/// before `before`, newest first, read beside D1's word that the mailbox is
/// one of the node's.
async fn segment_entries_before(
    context: &mut Context<'_>,
    mailbox_id: &str,
    before: i64,
    limit: i64,
    filter: &AuditFilter,
) -> Result<QueryResult, Refusal> {
    let (known, page) = context
        .read_beside_mailbox(
            vec![segments::anchor_statement(mailbox_id)],
            mailbox_id,
            vec![store::entries_before(before, limit, filter)],
        )
        .await?;
    let known = known.first().ok_or_else(|| context.internal("the mailbox was not read"))?;
    if segments::read_anchors(known).map_err(|error| context.internal(error))?.is_empty() {
        return Err(RequestError::InvalidQueryParameter {
            name: "mailbox_id".into(),
            expected: "the id of one of the node's mailboxes (`mbx_…`)".into(),
        }
        .into());
    }
    // A segment whose database no write has made answers an empty page.
    page.map_err(|error| context.internal(error))?
        .pop()
        .ok_or_else(|| context.internal("the segment's page was not read"))
}

/// `GET /api/audit/verify`: recomputes up to `VERIFY_PAGE` entries after
/// `after_seq`, and compares the chain with the latest checkpoint's two records.
pub async fn verify_chain(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let after = context.whole_number("after_seq")?.unwrap_or(0);
    if let Some(mailbox_id) = context.query("mailbox_id").map(str::to_string) {
        return verify_one_segment(context, &mailbox_id, after).await;
    }
    let anchor = store::entry_at(after);
    let page = store::entries_after(after, VERIFY_PAGE);
    let ends = store::chain_ends();
    let segments_after = context.query("segments_after").unwrap_or_default().to_string();
    let [anchor, page, ends, recorded, anchors] = context
        .read_array([anchor, page, ends, latest_recorded(), segments::anchors_to_verify(&segments_after)])
        .await?;
    let anchor: Vec<StoredEntry> = anchor.decode_all().map_err(|error| context.internal(error))?;
    let entries: Vec<StoredEntry> = page.decode_all().map_err(|error| context.internal(error))?;
    let recorded = Recorded::read(&recorded).map_err(|error| context.internal(error))?;
    let ends = ends.first().ok_or_else(|| context.internal("the chain's ends were not read"))?;
    let last_seq = ends.integer("last_seq").map_err(|error| context.internal(error))?;
    let head = match (ends.optional_integer("head_seq"), ends.optional_text("head_hash")) {
        (Ok(Some(seq)), Ok(Some(hash))) => Some(ChainHead { seq, hash }),
        _ => None,
    };
    let kept = latest_checkpoint(context.node()).await.map_err(|error| context.internal(error))?;
    let ends = Ends { last_seq, head, checkpoint: kept, database_checkpoint: recorded.checkpoint };
    let mut verification = verify(context.config(), after, anchor.first(), &entries, ends);
    let mut anchors = segments::read_anchors(&anchors).map_err(|error| context.internal(error))?;
    if anchors.len() > segments::SEGMENTS_PER_VERIFY {
        anchors.truncate(segments::SEGMENTS_PER_VERIFY);
        verification.next_segments_after = anchors.last().map(|(mailbox_id, _)| mailbox_id.clone());
    }
    // The page's segments, each from its anchored head, all at once.
    let reads = anchors
        .iter()
        .map(|(mailbox_id, anchored)| {
            (mailbox_id.clone(), segments::segment_page(anchored.as_ref().map_or(0, |head| head.seq)))
        })
        .collect();
    let read = context.read_in_mailboxes(reads).await?;
    for ((mailbox_id, anchored), read) in anchors.into_iter().zip(read) {
        let after = anchored.as_ref().map_or(0, |head| head.seq);
        let check = segments::judge_segment(context.config(), &mailbox_id, after, &read, anchored.as_ref())
            .map_err(|error| context.internal(error))?;
        verification.segments.push(SegmentVerification {
            mailbox_id,
            intact: check.failure.is_none(),
            anchored,
            head: check.head,
            checked: check.checked,
            awaiting_seal: check.awaiting_seal,
            fault: check.failure.as_ref().map(|failure| failure.fault),
            problem: check.failure.map(|failure| failure.problem),
        });
    }
    // A segment that fails makes the whole record not intact, said in its words.
    if verification.intact
        && let Some(broken) = verification.segments.iter().find(|segment| !segment.intact)
    {
        verification.intact = false;
        verification.fault = broken.fault;
        verification.problem = broken.problem.clone();
    }
    Ok(context.json(&verification))
}

/// `GET /api/audit/verify?mailbox_id=…`: the mailbox's segment walked a page
/// at a time from its start (or `after`), held to the head the organisation's
/// chain last anchored for it.
async fn verify_one_segment(context: &mut Context<'_>, mailbox_id: &str, after: i64) -> Result<Response, Refusal> {
    let [anchor] = context.read_array([segments::anchor_statement(mailbox_id)]).await?;
    let anchors = segments::read_anchors(&anchor).map_err(|error| context.internal(error))?;
    let Some((mailbox_id, anchored)) = anchors.into_iter().next() else {
        return Err(RequestError::InvalidQueryParameter {
            name: "mailbox_id".into(),
            expected: "the id of one of the node's mailboxes (`mbx_…`)".into(),
        }
        .into());
    };
    let read = context.read_in_mailbox(&mailbox_id, segments::segment_page(after)).await?;
    let check = segments::judge_segment(context.config(), &mailbox_id, after, &read, anchored.as_ref())
        .map_err(|error| context.internal(error))?;
    Ok(context.json(&AuditVerification {
        intact: check.failure.is_none(),
        checked: check.checked,
        first_bad_seq: check.failure.as_ref().and_then(|failure| failure.seq),
        fault: check.failure.as_ref().map(|failure| failure.fault),
        problem: check.failure.map(|failure| failure.problem),
        verified_through: check.verified_through,
        next_after_seq: check.next_after_seq,
        head: check.head,
        awaiting_seal: check.awaiting_seal,
        checkpoint: None,
        database_checkpoint: None,
        segments: Vec::new(),
        next_segments_after: None,
    }))
}

/// What verification compares the chain with, besides itself.
pub(crate) struct Ends {
    /// The chain's last entry, sealed or not.
    pub last_seq: i64,
    /// The chain's last sealed entry.
    pub head: Option<ChainHead>,
    /// The latest checkpoint in the object store.
    pub checkpoint: Option<AuditCheckpoint>,
    /// The latest checkpoint D1 records.
    pub database_checkpoint: Option<AuditCheckpoint>,
}

/// Verifies `entries`, the rows after `after` in `seq` order (`anchor` being
/// the row at `after`), against the latest checkpoint's two records.
pub(crate) fn verify(
    config: &Config,
    after: i64,
    anchor: Option<&StoredEntry>,
    entries: &[StoredEntry],
    ends: Ends,
) -> AuditVerification {
    let Ends { last_seq, head, checkpoint, database_checkpoint } = ends;
    let mut verification = AuditVerification {
        intact: true,
        checked: 0,
        first_bad_seq: None,
        fault: None,
        problem: None,
        verified_through: None,
        next_after_seq: None,
        head,
        awaiting_seal: 0,
        checkpoint: checkpoint.clone(),
        database_checkpoint: database_checkpoint.clone(),
        segments: Vec::new(),
        next_segments_after: None,
    };
    let failed = |mut verification: AuditVerification, failure: Failure| {
        verification.intact = false;
        verification.first_bad_seq = failure.seq;
        verification.fault = Some(failure.fault);
        verification.problem = Some(failure.problem);
        verification
    };
    let agreed = match reconcile(config, database_checkpoint.as_ref(), checkpoint.as_ref()) {
        Ok(agreed) => agreed,
        Err(failure) => return failed(verification, failure),
    };
    if let Some(reference) = agreed.reference.as_ref().filter(|reference| last_seq < reference.seq) {
        return failed(verification, truncated(reference, last_seq));
    }
    let start = match (after, anchor) {
        (0, _) => Anchor::genesis(),
        (_, Some(anchor)) => match Anchor::verified(config, anchor) {
            Ok(start) => start,
            Err(failure) => return failed(verification, failure),
        },
        (_, None) => {
            let failure =
                Failure::at_entry(after, ChainFault::SeqGap, format!("there is no entry {after} to continue from"));
            return failed(verification, failure);
        }
    };
    let walked = walk(
        config,
        &start,
        entries,
        Walk { seal: false, reference: agreed.reference.as_ref(), witness: None, of: ChainOf::Organisation },
    );
    verification.checked = walked.checked;
    verification.verified_through = walked.verified_through;
    verification.awaiting_seal = walked.awaiting_seal;
    if let Some(failure) = walked.failure {
        return failed(verification, failure);
    }
    if let Some(through) = walked.verified_through
        && walked.checked == VERIFY_PAGE
        && last_seq > through
    {
        verification.next_after_seq = Some(through);
    }
    verification
}

/// The chain ends at `last_seq`, before `reference`'s head.
fn truncated(reference: &AuditCheckpoint, last_seq: i64) -> Failure {
    Failure {
        seq: Some(last_seq + 1),
        fault: ChainFault::Truncated,
        problem: format!("truncated after checkpoint {}: the chain ends at entry {last_seq}", reference.seq),
        about: format!("checkpoint-{}", reference.seq),
    }
}

/// The refusal of a checkpoint over a chain that failed, with its alarm: the
/// notification and its key stand with the refusal, whose own entry says what failed.
fn refused_with_alarm(context: &mut Context<'_>, failure: Failure, tell: TellAdministrators) -> Refusal {
    context.platform().log(&format!("the audit chain does not verify; nothing was signed: {}", failure.sentence()));
    for statement in alarm(&failure, tell, context.platform()) {
        context.write_whatever_the_outcome(statement);
    }
    context.audit_detail(alarm_detail(&failure));
    AuditError::ChainBroken(failure).into()
}

/// `POST /api/audit/checkpoints`: verifies the chain from the latest
/// checkpoint D1 records to its head, seals its waiting entries with this
/// call's own commit, and records the next checkpoint in D1, then in the object
/// store, then tells the witness. One read: the latest record, the entries from
/// its head on, and the chain's end.
pub async fn write_checkpoint(context: &mut Context<'_>, tell: TellAdministrators) -> Result<Response, Refusal> {
    let page = store::entries_from_recorded_checkpoint(VERIFY_PAGE + 1);
    let [recorded, page, last] = context.read_array([latest_recorded(), page, store::last_seq()]).await?;
    let recorded = Recorded::read(&recorded).map_err(|error| context.internal(error))?;
    let entries: Vec<StoredEntry> = page.decode_all().map_err(|error| context.internal(error))?;
    let last_seq = last.first().and_then(|row| row.integer("last_seq").ok()).unwrap_or(0);
    let kept = latest_checkpoint(context.node()).await.map_err(|error| context.internal(error))?;
    let agreed = match reconcile(context.config(), recorded.checkpoint.as_ref(), kept.as_ref()) {
        Ok(agreed) => agreed,
        Err(failure) => return Err(refused_with_alarm(context, failure, tell)),
    };
    if let Some(reference) = agreed.reference.as_ref().filter(|reference| last_seq < reference.seq) {
        return Err(refused_with_alarm(context, truncated(reference, last_seq), tell));
    }
    // The page begins at D1's record; the walk checks the newer record's head
    // (R2's, while D1 is one behind) as it passes it.
    let (start, skip) = match start_from(context.config(), recorded.checkpoint.as_ref(), &entries, last_seq) {
        Ok(start) => start,
        Err(failure) => return Err(refused_with_alarm(context, failure, tell)),
    };
    let rest = entries.get(skip..).unwrap_or_default();
    let witness = recorded.checkpoint.as_ref().and_then(|recorded| recorded.witness.clone());
    let walked = walk(
        context.config(),
        &start,
        rest,
        Walk { seal: true, reference: agreed.reference.as_ref(), witness, of: ChainOf::Organisation },
    );
    if let Some(failure) = walked.failure {
        return Err(refused_with_alarm(context, failure, tell));
    }
    let head = walked.head.clone().ok_or_else(|| context.internal("a checkpoint was asked of an empty chain"))?;
    if agreed.reference.as_ref().is_some_and(|reference| head.seq < reference.seq) {
        return Err(AuditError::CheckpointInProgress {
            why: "The latest checkpoint lies more than 5,000 entries past the one D1 records: the scheduled upkeep \
                  verifies up to it within five minutes.",
        }
        .into());
    }
    let next = checkpoint(context.config(), agreed.next_number, &head, walked.witness.clone(), context.now_ms());
    let sealed = walked.seals.len();
    for seal in walked.seals {
        context.write(seal);
    }
    if let (Some(Lagging::Database), Some(reference)) = (agreed.lagging, &agreed.reference) {
        context.write(record_missing(reference));
    }
    context.write(record(&next));
    context.on_constraint_violation(
        "audit_checkpoints.number",
        AuditError::CheckpointInProgress {
            why: "Another checkpoint was written at the same moment, under the same number.",
        },
    );
    context.audit_detail(serde_json::json!({
        "number": next.number, "seq": next.seq, "sealed": sealed, "witness": next.witness,
    }));
    // D1 first, whose primary key settles a race for the number; then R2.
    context.commit_now().await?;
    keep_in_object_store(context.node(), &next).await.map_err(|error| context.internal(error))?;
    let replaced = agreed.reference.as_ref().and_then(|reference| reference.witness.as_deref());
    if let Some(told) = tell_witnesses(context.node(), &next, replaced).await {
        context.defer_write(told);
    }
    Ok(context.json(&next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verify_route_says_how_many_entries_one_call_checks() {
        let route = mailroom_contract::registry().route(mailroom_contract::RouteId::VerifyAuditChain);
        let thousands = VERIFY_PAGE / 1000;
        let written = format!("{thousands},{:03}", VERIFY_PAGE % 1000);
        assert!(route.description.contains(&written), "the description states {written}: {}", route.description);
    }

    #[test]
    fn cursors_round_trip_and_refuse_tampering() {
        assert_eq!(decode_cursor(&encode_cursor(17)), Some(17));
        assert_eq!(decode_cursor("not a cursor"), None);
        assert_eq!(decode_cursor(&URL_SAFE_NO_PAD.encode("audit-before:-3")), None);
    }
}
