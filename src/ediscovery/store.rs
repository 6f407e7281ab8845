//! Every statement about exports and their items: the request that fixes an
//! export's selection (mail hands the receipts it selects), the requester's
//! reads, deleting one, and the per-minute run's copying and manifest.

use serde::{Deserialize, Serialize};

use crate::core::storage::{Insert, Statement};

/// How many of `requester`'s exports are building: one column, `n`.
pub(super) fn building_of(requester: &str) -> Statement {
    Statement::new("SELECT count(*) AS n FROM exports WHERE requester = ?1 AND state = 'building'").bind(requester)
}

/// An export as requested, before anything is copied.
pub(super) struct NewExport<'a> {
    pub(super) id: &'a str,
    pub(super) requester: &'a str,
    pub(super) mailbox_ids_json: String,
    pub(super) query: Option<String>,
    pub(super) since: Option<String>,
    pub(super) until: Option<String>,
    pub(super) messages_total: i64,
    pub(super) created_at: i64,
}

/// The export's row, building: its manifest's hash and when it was finished
/// are left to their defaults until the run that finishes it.
pub(super) fn export_requested(row: NewExport<'_>) -> Insert {
    Insert::into("exports")
        .value("id", row.id)
        .value("requester", row.requester)
        .value("mailbox_ids_json", row.mailbox_ids_json)
        .value("query", row.query)
        .value("since", row.since)
        .value("until", row.until)
        .value("state", "building")
        .value("messages_total", row.messages_total)
        .value("created_at", row.created_at)
}

/// How many bytes of items one statement writes at most (as JSON, one
/// parameter), well within D1's limit on a value.
const ITEMS_BYTES_PER_STATEMENT: usize = 512 * 1024;

/// Export `export_id`'s items: `selected` (each serialised with `receipt_id`,
/// `mailbox_id`, `message_id`, `subject`, `received_at` and `raw_key`),
/// numbered from 1 in the order given, in as many statements as their size
/// needs.
pub(super) fn items_written<Item: Serialize>(export_id: &str, selected: &[Item]) -> Vec<Statement> {
    let mut statements = Vec::new();
    let mut chunk: Vec<serde_json::Value> = Vec::new();
    let mut bytes = 0;
    let flush = |chunk: &mut Vec<serde_json::Value>, statements: &mut Vec<Statement>| {
        if chunk.is_empty() {
            return;
        }
        let items = serde_json::Value::Array(std::mem::take(chunk)).to_string();
        statements.push(
            Statement::new(
                "INSERT INTO export_items (export_id, position, receipt_id, mailbox_id, message_id, subject, \
                 received_at, raw_key) SELECT ?1, json_extract(i.value, '$.position'), \
                 json_extract(i.value, '$.receipt_id'), json_extract(i.value, '$.mailbox_id'), \
                 json_extract(i.value, '$.message_id'), json_extract(i.value, '$.subject'), \
                 json_extract(i.value, '$.received_at'), json_extract(i.value, '$.raw_key') FROM json_each(?2) i",
            )
            .bind(export_id)
            .bind(items),
        );
    };
    for (index, item) in selected.iter().enumerate() {
        let mut value = serde_json::to_value(item).unwrap_or_default();
        value["position"] = (index as i64 + 1).into();
        bytes += value.to_string().len();
        chunk.push(value);
        if bytes >= ITEMS_BYTES_PER_STATEMENT {
            flush(&mut chunk, &mut statements);
            bytes = 0;
        }
    }
    flush(&mut chunk, &mut statements);
    statements
}

/// The columns an export is read with, its progress counted from its items.
const EXPORT_COLUMNS: &str = "e.id, e.requester, e.mailbox_ids_json, e.query, e.since, e.until, e.state, \
     e.messages_total, e.manifest_sha256, e.created_at, e.completed_at, \
     (SELECT count(*) FROM export_items i WHERE i.export_id = e.id AND (i.sha256 IS NOT NULL OR i.missing = 1)) AS done, \
     (SELECT count(*) FROM export_items i WHERE i.export_id = e.id AND i.missing = 1) AS missing, \
     (SELECT COALESCE(sum(i.size), 0) FROM export_items i WHERE i.export_id = e.id) AS bytes";

#[derive(Deserialize)]
pub(super) struct ExportRow {
    pub(super) id: String,
    pub(super) requester: String,
    pub(super) mailbox_ids_json: String,
    pub(super) query: Option<String>,
    pub(super) since: Option<String>,
    pub(super) until: Option<String>,
    pub(super) state: String,
    pub(super) messages_total: i64,
    pub(super) manifest_sha256: Option<String>,
    pub(super) created_at: i64,
    pub(super) completed_at: Option<i64>,
    pub(super) done: i64,
    pub(super) missing: i64,
    pub(super) bytes: i64,
}

/// Export `id` of `requester` (an `ExportRow`).
pub(super) fn export_of(id: &str, requester: &str) -> Statement {
    Statement::new(format!("SELECT {EXPORT_COLUMNS} FROM exports e WHERE e.id = ?1 AND e.requester = ?2"))
        .bind(id)
        .bind(requester)
}

/// A page of `requester`'s exports (`ExportRow`s), newest first, before `after`.
pub(super) fn exports_of(requester: &str, after: Option<String>, limit: i64) -> Statement {
    Statement::new(format!(
        "SELECT {EXPORT_COLUMNS} FROM exports e WHERE e.requester = ?1 AND (?2 IS NULL OR e.id < ?2) \
         ORDER BY e.id DESC LIMIT ?3"
    ))
    .bind(requester)
    .bind(after)
    .bind(limit + 1)
}

/// The object store keys of export `export_id`'s copies and manifest: a query
/// of keys for mail's `owe_deletion_of`.
pub(super) fn copies_of(export_id: &str) -> Statement {
    Statement::new(
        "SELECT 'exports/' || ?1 || '/' || receipt_id || '.eml' FROM export_items \
         WHERE export_id = ?1 AND sha256 IS NOT NULL \
         UNION ALL SELECT 'exports/' || ?1 || '/manifest.json' FROM exports WHERE id = ?1 AND state = 'ready'",
    )
    .bind(export_id)
}

/// Export `export_id` deleted, its items first.
pub(super) fn export_deleted(export_id: &str) -> [Statement; 2] {
    [
        Statement::new("DELETE FROM export_items WHERE export_id = ?1").bind(export_id),
        Statement::new("DELETE FROM exports WHERE id = ?1").bind(export_id),
    ]
}

#[derive(Deserialize)]
pub(super) struct ItemRow {
    pub(super) position: i64,
    pub(super) receipt_id: String,
    pub(super) mailbox_id: String,
    pub(super) subject: String,
    pub(super) received_at: i64,
    pub(super) size: Option<i64>,
    pub(super) sha256: Option<String>,
    pub(super) missing: i64,
}

/// A page of export `export_id`'s items (`ItemRow`s) in its order, after `after`.
pub(super) fn items_of(export_id: &str, after: i64, limit: i64) -> Statement {
    Statement::new(
        "SELECT position, receipt_id, mailbox_id, subject, received_at, size, sha256, missing FROM export_items \
         WHERE export_id = ?1 AND position > ?2 ORDER BY position LIMIT ?3",
    )
    .bind(export_id)
    .bind(after)
    .bind(limit + 1)
}

/// Export `export_id`'s copy of `receipt_id`: `sha256`, `missing`.
pub(super) fn item(export_id: &str, receipt_id: &str) -> Statement {
    Statement::new("SELECT sha256, missing FROM export_items WHERE export_id = ?1 AND receipt_id = ?2")
        .bind(export_id)
        .bind(receipt_id)
}

#[derive(Deserialize)]
pub(super) struct PendingRow {
    pub(super) export_id: String,
    pub(super) receipt_id: Option<String>,
    pub(super) raw_key: Option<String>,
    pub(super) position: Option<i64>,
}

/// The oldest building export, with up to `budget` of its uncopied items
/// (`PendingRow`s; none once all are copied: the export's row still comes
/// back, to be finished).
pub(super) fn oldest_building(budget: i64) -> Statement {
    Statement::new(
        "SELECT e.id AS export_id, i.receipt_id, i.raw_key, i.position \
         FROM (SELECT id FROM exports WHERE state = 'building' ORDER BY id LIMIT 1) e \
         LEFT JOIN (SELECT * FROM export_items WHERE sha256 IS NULL AND missing = 0) i ON i.export_id = e.id \
         ORDER BY i.position LIMIT ?1",
    )
    .bind(budget)
}

/// Item `position` of export `export_id` found deleted before it was copied.
pub(super) fn item_missing(export_id: &str, position: i64) -> Statement {
    Statement::new("UPDATE export_items SET missing = 1 WHERE export_id = ?1 AND position = ?2")
        .bind(export_id)
        .bind(position)
}

/// Item `position` of export `export_id` copied, with its hash and size.
pub(super) fn item_copied(export_id: &str, position: i64, sha256: String, size: i64) -> Statement {
    Statement::new("UPDATE export_items SET sha256 = ?3, size = ?4 WHERE export_id = ?1 AND position = ?2")
        .bind(export_id)
        .bind(position)
        .bind(sha256)
        .bind(size)
}

/// The keys of the copies of `receipt_ids` (a JSON array) made for export
/// `export_id`, when it was deleted meanwhile: a query of keys for mail's
/// `owe_deletion_of`.
pub(super) fn copies_if_deleted(export_id: &str, receipt_ids: String) -> Statement {
    Statement::new(
        "SELECT 'exports/' || ?1 || '/' || value || '.eml' FROM json_each(?2) \
         WHERE NOT EXISTS (SELECT 1 FROM exports WHERE id = ?1)",
    )
    .bind(export_id)
    .bind(receipt_ids)
}

#[derive(Deserialize)]
pub(super) struct ExportFacts {
    pub(super) requester: String,
    pub(super) mailbox_ids_json: String,
    pub(super) query: Option<String>,
    pub(super) since: Option<String>,
    pub(super) until: Option<String>,
    pub(super) created_at: i64,
    /// `ItemFacts`, as a JSON array.
    pub(super) items_json: String,
}

#[derive(Deserialize)]
pub(super) struct ItemFacts {
    pub(super) receipt_id: String,
    pub(super) mailbox_id: String,
    pub(super) message_id: String,
    pub(super) subject: String,
    pub(super) received_at: i64,
    pub(super) size: Option<i64>,
    pub(super) sha256: Option<String>,
    pub(super) pending: bool,
}

/// What building export `export_id`'s manifest says (`ExportFacts`).
pub(super) fn facts(export_id: &str) -> Statement {
    Statement::new(
        "SELECT e.requester, e.mailbox_ids_json, e.query, e.since, e.until, e.created_at, \
           (SELECT json_group_array(json_object('receipt_id', i.receipt_id, 'mailbox_id', i.mailbox_id, \
              'message_id', i.message_id, 'subject', i.subject, 'received_at', i.received_at, 'size', i.size, \
              'sha256', i.sha256, 'pending', json(CASE WHEN i.sha256 IS NULL AND i.missing = 0 THEN 'true' ELSE 'false' END))) \
            FROM (SELECT * FROM export_items WHERE export_id = e.id ORDER BY position) i) AS items_json \
         FROM exports e WHERE e.id = ?1 AND e.state = 'building'",
    )
    .bind(export_id)
}

/// Building export `export_id` made ready, its manifest's hash recorded.
pub(super) fn ready(export_id: &str, manifest_sha256: &str, completed_at: i64) -> Statement {
    Statement::new(
        "UPDATE exports SET state = 'ready', manifest_sha256 = ?2, completed_at = ?3 \
         WHERE id = ?1 AND state = 'building'",
    )
    .bind(export_id)
    .bind(manifest_sha256)
    .bind(completed_at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::SqliteDatabase;

    /// An export's row is written whole when it is requested, but for what
    /// the run that finishes it sets.
    #[test]
    fn a_requested_export_takes_every_column_but_those_its_finishing_sets() {
        let insert = export_requested(NewExport {
            id: "exp_1",
            requester: "usr_1",
            mailbox_ids_json: "[]".into(),
            query: None,
            since: None,
            until: None,
            messages_total: 0,
            created_at: 0,
        });
        assert_eq!(SqliteDatabase::migrated().columns_not_named(&insert), ["completed_at", "manifest_sha256"]);
    }
}
