//! Building exports in the background: each run of the per-minute schedule
//! copies up to `export_limits::COPIED_PER_RUN` originals of the exports still
//! building, oldest first, into the object store, hashing each, and records
//! them a batch per export; the run that finds nothing of an export left to
//! copy writes its manifest and puts the manifest's hash in the audit chain. Whatever a run does not finish, the next one
//! resumes: a copy is recorded only after it is stored, and storing it again is
//! harmless.

use mailroom_contract::api::{ExportManifest, ManifestMessage, NotificationKind, export_limits};
use serde::Deserialize;

use super::objects::{MANIFEST, object_key};
use crate::audit::chain;
use crate::core::context::ports::AuditRecord;
use crate::core::crypto::sha256_hex;
use crate::core::node::Node;
use crate::core::storage::Statement;
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

#[derive(Deserialize)]
struct PendingRow {
    export_id: String,
    receipt_id: Option<String>,
    raw_key: Option<String>,
    position: Option<i64>,
}

/// How many exports one run may work on: a run moves on to the next building
/// export once one is done, while its copying budget lasts, and each costs a
/// few statements of the invocation's allowance.
const EXPORTS_PER_RUN: usize = export_limits::BUILDING_PER_REQUESTER;

/// One run: the building exports, oldest first, copied while the run's budget
/// of `export_limits::COPIED_PER_RUN` copies lasts, each finished with its
/// manifest once nothing of it is left to copy.
pub async fn build_exports(node: &Node<'_>) -> Result<BuildReport, String> {
    let mut report = BuildReport::default();
    for _ in 0..EXPORTS_PER_RUN {
        let budget = export_limits::COPIED_PER_RUN - report.copied - report.missing;
        if budget == 0 || !build_oldest(node, budget, &mut report).await? {
            break;
        }
    }
    Ok(report)
}

/// Copies up to `budget` items of the oldest building export, and finishes it
/// if that was the last of them. Answers whether it finished one, so the run
/// may go on to the next.
async fn build_oldest(node: &Node<'_>, budget: usize, report: &mut BuildReport) -> Result<bool, String> {
    // The oldest building export, with its next uncopied items (none once all
    // are copied: the export's row still comes back, to be finished).
    let pending = Statement::new(
        "SELECT e.id AS export_id, i.receipt_id, i.raw_key, i.position \
         FROM (SELECT id FROM exports WHERE state = 'building' ORDER BY id LIMIT 1) e \
         LEFT JOIN (SELECT * FROM export_items WHERE sha256 IS NULL AND missing = 0) i ON i.export_id = e.id \
         ORDER BY i.position LIMIT ?1",
    )
    .bind(budget as i64);
    let results = node.database.execute(vec![pending]).await.map_err(|error| error.to_string())?;
    let rows: Vec<PendingRow> = results[0].decode_all().map_err(|error| error.to_string())?;
    let Some(export_id) = rows.first().map(|row| row.export_id.clone()) else {
        return Ok(false);
    };
    let mut recorded = Vec::new();
    for row in &rows {
        let (Some(receipt_id), Some(raw_key), Some(position)) = (&row.receipt_id, &row.raw_key, row.position) else {
            continue;
        };
        let original = node.blobs.get(raw_key).await.map_err(|error| error.0)?;
        let Some(bytes) = original else {
            report.missing += 1;
            recorded.push(
                Statement::new("UPDATE export_items SET missing = 1 WHERE export_id = ?1 AND position = ?2")
                    .bind(export_id.as_str())
                    .bind(position),
            );
            continue;
        };
        node.blobs.put(&object_key(&export_id, receipt_id), &bytes).await.map_err(|error| error.0)?;
        report.copied += 1;
        recorded.push(
            Statement::new("UPDATE export_items SET sha256 = ?3, size = ?4 WHERE export_id = ?1 AND position = ?2")
                .bind(export_id.as_str())
                .bind(position)
                .bind(sha256_hex(&bytes))
                .bind(bytes.len() as i64),
        );
    }
    if !recorded.is_empty() {
        // An export deleted while this run copied leaves its copies owed to the
        // upkeep that deletes objects nothing refers to.
        recorded.push(owe_deletion_of(
            Statement::new(
                "SELECT 'exports/' || ?1 || '/' || value || '.eml' FROM json_each(?2) \
                 WHERE NOT EXISTS (SELECT 1 FROM exports WHERE id = ?1)",
            )
            .bind(export_id.as_str())
            .bind(
                serde_json::json!(rows.iter().filter_map(|row| row.receipt_id.as_deref()).collect::<Vec<_>>())
                    .to_string(),
            ),
            node.platform.now_ms(),
        ));
        node.database.execute(recorded).await.map_err(|error| error.to_string())?;
    }
    let copied_everything = rows.len() < budget || rows.iter().all(|row| row.position.is_none());
    if copied_everything && finish(node, &export_id).await? {
        report.completed += 1;
        return Ok(true);
    }
    Ok(false)
}

#[derive(Deserialize)]
struct ExportFacts {
    requester: String,
    mailbox_ids_json: String,
    query: Option<String>,
    since: Option<String>,
    until: Option<String>,
    created_at: i64,
    items_json: String,
}

#[derive(Deserialize)]
struct ItemFacts {
    receipt_id: String,
    mailbox_id: String,
    message_id: String,
    subject: String,
    received_at: i64,
    size: Option<i64>,
    sha256: Option<String>,
    pending: bool,
}

/// Writes the manifest of an export with nothing left to copy, and marks it
/// ready in the batch that puts the manifest's hash in the audit chain.
/// Answers whether it did.
async fn finish(node: &Node<'_>, export_id: &str) -> Result<bool, String> {
    let facts = Statement::new(
        "SELECT e.requester, e.mailbox_ids_json, e.query, e.since, e.until, e.created_at, \
           (SELECT json_group_array(json_object('receipt_id', i.receipt_id, 'mailbox_id', i.mailbox_id, \
              'message_id', i.message_id, 'subject', i.subject, 'received_at', i.received_at, 'size', i.size, \
              'sha256', i.sha256, 'pending', json(CASE WHEN i.sha256 IS NULL AND i.missing = 0 THEN 'true' ELSE 'false' END))) \
            FROM (SELECT * FROM export_items WHERE export_id = e.id ORDER BY position) i) AS items_json \
         FROM exports e WHERE e.id = ?1 AND e.state = 'building'",
    )
    .bind(export_id);
    let results = node.database.execute(vec![facts]).await.map_err(|error| error.to_string())?;
    let Some(row) = results[0].first() else { return Ok(false) };
    let facts: ExportFacts = row.decode().map_err(|error| error.to_string())?;
    let items: Vec<ItemFacts> = serde_json::from_str(&facts.items_json).map_err(|error| error.to_string())?;
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
    let bytes = serde_json::to_vec(&manifest).map_err(|error| error.to_string())?;
    let sha256 = sha256_hex(&bytes);
    node.blobs.put(&object_key(export_id, MANIFEST), &bytes).await.map_err(|error| error.0)?;
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
    node.database
        .execute(vec![
            Statement::new(
                "UPDATE exports SET state = 'ready', manifest_sha256 = ?2, completed_at = ?3 \
                 WHERE id = ?1 AND state = 'building'",
            )
            .bind(export_id)
            .bind(sha256.as_str())
            .bind(now),
            chain::append(&node.config.audit_key, &record, node.platform),
            notifications::notify(&notice, Addressee::PersonOf(&facts.requester), node.platform),
        ])
        .await
        .map_err(|error| error.to_string())?;
    Ok(true)
}
