//! Building exports in the background: each run of the per-minute schedule
//! copies up to `export_limits::COPIED_PER_RUN` originals of the exports still
//! building, oldest first, into the object store, hashing each, and records
//! them a batch per export; the run that finds nothing of an export left to
//! copy writes its manifest and puts the manifest's hash in the audit chain. Whatever a run does not finish, the next one
//! resumes: a copy is recorded only after it is stored, and storing it again is
//! harmless.

use mailroom_contract::api::{ExportManifest, ManifestMessage, NotificationKind, export_limits};

use super::objects::{MANIFEST, object_key};
use super::store::{self, ExportFacts, ItemFacts, PendingRow};
use crate::core::background::{Background, BackgroundError};
use crate::core::context::ports::AuditRecord;
use crate::core::crypto::sha256_hex;
use crate::core::events::Topic;
use crate::core::time::rfc3339;
use crate::mail::owe_deletion_of;
use crate::notifications::{self, Addressee, Notice};

/// What one run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildReport {
    /// Originals copied.
    pub copied: usize,
    /// Selected messages found deleted.
    pub missing: usize,
    /// Exports made ready.
    pub completed: usize,
}

/// How many exports one run may work on: a run moves on to the next building
/// export once one is done, while its copying budget lasts, and each costs a
/// few statements of the invocation's allowance.
const EXPORTS_PER_RUN: usize = export_limits::BUILDING_PER_REQUESTER;

/// One run: the building exports, oldest first, copied while the run's budget
/// of `export_limits::COPIED_PER_RUN` copies lasts, each finished with its
/// manifest once nothing of it is left to copy.
pub async fn build_exports(work: &Background<'_>) -> Result<BuildReport, BackgroundError> {
    let mut report = BuildReport::default();
    for _ in 0..EXPORTS_PER_RUN {
        let budget = export_limits::COPIED_PER_RUN - report.copied - report.missing;
        if budget == 0 || !build_oldest(work, budget, &mut report).await? {
            break;
        }
    }
    Ok(report)
}

/// Copies up to `budget` items of the oldest building export, and finishes it
/// if that was the last of them. Answers whether it finished one, so the run
/// may go on to the next.
async fn build_oldest(work: &Background<'_>, budget: usize, report: &mut BuildReport) -> Result<bool, BackgroundError> {
    let node = work.node();
    // The oldest building export, with its next uncopied items (none once all
    // are copied: the export's row still comes back, to be finished).
    let pending = store::oldest_building(budget as i64);
    let results = work.run(vec![pending]).await?;
    let rows: Vec<PendingRow> = results[0].decode_all()?;
    let Some(export_id) = rows.first().map(|row| row.export_id.clone()) else {
        return Ok(false);
    };
    let mut recorded = Vec::new();
    for row in &rows {
        let (Some(receipt_id), Some(raw_key), Some(position)) = (&row.receipt_id, &row.raw_key, row.position) else {
            continue;
        };
        let original = node.blobs.get(raw_key).await?;
        let Some(bytes) = original else {
            report.missing += 1;
            recorded.push(store::item_missing(&export_id, position));
            continue;
        };
        node.blobs.put(&object_key(&export_id, receipt_id), &bytes).await?;
        report.copied += 1;
        recorded.push(store::item_copied(&export_id, position, sha256_hex(&bytes), bytes.len() as i64));
    }
    if !recorded.is_empty() {
        // An export deleted while this run copied leaves its copies owed to the
        // upkeep that deletes objects nothing refers to.
        let copied = serde_json::json!(rows.iter().filter_map(|row| row.receipt_id.as_deref()).collect::<Vec<_>>());
        recorded
            .push(owe_deletion_of(store::copies_if_deleted(&export_id, copied.to_string()), node.platform.now_ms()));
        work.run(recorded).await?;
    }
    let copied_everything = rows.len() < budget || rows.iter().all(|row| row.position.is_none());
    if copied_everything && finish(work, &export_id).await? {
        report.completed += 1;
        return Ok(true);
    }
    Ok(false)
}

/// Writes the manifest of an export with nothing left to copy, and marks it
/// ready in the batch that puts the manifest's hash in the audit chain.
/// Answers whether it did.
async fn finish(work: &Background<'_>, export_id: &str) -> Result<bool, BackgroundError> {
    let node = work.node();
    let facts = store::facts(export_id);
    let results = work.run(vec![facts]).await?;
    let Some(row) = results[0].first() else { return Ok(false) };
    let facts: ExportFacts = row.decode()?;
    let items: Vec<ItemFacts> =
        serde_json::from_str(&facts.items_json).map_err(|error| BackgroundError::Unreadable(error.to_string()))?;
    // Another run is still copying some: that run, or the next, finishes it.
    if items.iter().any(|item| item.pending) {
        return Ok(false);
    }
    let missing = items.iter().filter(|item| item.sha256.is_none()).count();
    let manifest = ExportManifest {
        export_id: export_id.to_string(),
        requester: facts.requester.clone(),
        mailbox_ids: serde_json::from_str(&facts.mailbox_ids_json).unwrap_or_default(),
        query: facts.query,
        since: facts.since,
        until: facts.until,
        requested_at: rfc3339(facts.created_at),
        messages: items
            .into_iter()
            .map(|item| ManifestMessage {
                receipt_id: item.receipt_id,
                mailbox_id: item.mailbox_id,
                message_id: item.message_id,
                subject: item.subject,
                received_at: rfc3339(item.received_at),
                size: item.size,
                sha256: item.sha256,
            })
            .collect(),
    };
    let bytes = serde_json::to_vec(&manifest).map_err(|error| BackgroundError::Unreadable(error.to_string()))?;
    let sha256 = sha256_hex(&bytes);
    node.blobs.put(&object_key(export_id, MANIFEST), &bytes).await?;
    let now = node.platform.now_ms();
    let record = AuditRecord {
        at: now,
        actor: None,
        delegator: None,
        surface: Some("schedule"),
        action: "build_export".into(),
        object: Some(export_id.to_string()),
        outcome: "ok",
        detail: Some(
            serde_json::json!({
                "requester": &facts.requester,
                "manifest_sha256": sha256,
                "messages": manifest.messages.len(),
                "missing": missing,
            })
            .to_string(),
        ),
        topic: Some(Topic::Person(facts.requester.clone())),
    };
    let title = match manifest.messages.len() {
        1 => "1 message".to_string(),
        count => format!("{count} messages"),
    };
    let detail = (missing > 0).then(|| format!("{missing} deleted before they could be copied"));
    let notice = Notice {
        kind: NotificationKind::ExportReady,
        object_id: export_id,
        mailbox_id: None,
        actor: None,
        title: &title,
        detail: detail.as_deref(),
    };
    work.commit(
        vec![
            store::ready(export_id, &sha256, now),
            notifications::notify(&notice, Addressee::PersonOf(&facts.requester), node.platform),
        ],
        &[record],
    )
    .await?;
    Ok(true)
}
