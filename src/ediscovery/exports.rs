//! eDiscovery exports (decision 0024): a reviewer holding ediscovery.export asks
//! for the mail some mailboxes received, between two days and matching some
//! words. The request fixes the selection (`export_items`) in the batch that
//! records it; the per-minute schedule copies the originals into the object
//! store and writes the manifest (`build`); only the requester lists and
//! downloads what it holds, and each download is an audited content read.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{
    Export, ExportList, ExportObject, ExportObjectKind, ExportObjectPage, ExportState, RequestExport, export_limits,
};

use serde::{Deserialize, Serialize};

use crate::core::context::{Context, MAILBOXES_PER_READ};
use crate::core::crypto::sha256_hex;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of, new_id};
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;
use crate::core::storage::{QueryResult, Statement};
use crate::core::time::{DAY_MS, calendar_day, rfc3339, utc_day_start};
use crate::mail::{
    MAXIMUM_QUERY_LENGTH, MAXIMUM_TERMS, ReceiptSelection, SelectedIn, fts_query, mailboxes_among, owe_deletion_of,
};

use super::errors::ExportError;
use super::objects::{MANIFEST, object_key};
use super::store::{self, ExportRow, ItemRow, NewExport};

/// A `YYYY-MM-DD` day as the millisecond it starts (UTC), or the refusal naming `field`.
fn day_start(field: &str, day: &str) -> Result<i64, Refusal> {
    calendar_day(day.as_bytes())
        .map(utc_day_start)
        .ok_or_else(|| RequestError::wrong_field(field, "a day on the calendar, written YYYY-MM-DD"))
}

/// The request's checks, answered as the mailboxes it names (each once) and
/// the receipts it selects.
fn selection(request: &RequestExport) -> Result<(Vec<String>, ReceiptSelection), Refusal> {
    let mut mailbox_ids: Vec<String> = Vec::new();
    for (index, id) in request.mailbox_ids.iter().enumerate() {
        if !is_id_of(id, IdKind::Mailbox) {
            return Err(RequestError::wrong_field(&format!("mailbox_ids[{index}]"), "a mailbox's id (`mbx_…`)"));
        }
        if !mailbox_ids.contains(id) {
            mailbox_ids.push(id.clone());
        }
    }
    if mailbox_ids.is_empty() || mailbox_ids.len() > export_limits::MAILBOXES {
        return Err(RequestError::wrong_field("mailbox_ids", format!("1 to {} mailbox ids", export_limits::MAILBOXES)));
    }
    let since = request.since.as_deref().map(|day| day_start("since", day)).transpose()?;
    let until = request.until.as_deref().map(|day| day_start("until", day)).transpose()?;
    if let (Some(since), Some(until)) = (since, until)
        && until < since
    {
        return Err(RequestError::wrong_field("until", "a day on or after `since`"));
    }
    let words = request
        .query
        .as_deref()
        .map(|query| {
            fts_query(query).map_err(|_| {
                RequestError::wrong_field(
                    "query",
                    format!(
                        "words to search for, as search_messages reads them: letters or digits, every \" closed, at most {MAXIMUM_TERMS} terms and {MAXIMUM_QUERY_LENGTH} characters"
                    ),
                )
            })
        })
        .transpose()?;
    let selected = ReceiptSelection::new(&mailbox_ids, since, until.map(|until| until + DAY_MS), words.as_deref());
    Ok((mailbox_ids, selected))
}

/// One selected message as the export keeps it, numbered later in the order
/// received across every mailbox.
#[derive(Deserialize, Serialize)]
struct Selected {
    receipt_id: String,
    mailbox_id: String,
    message_id: String,
    subject: String,
    received_at: i64,
    raw_key: String,
}

// One read asks every mailbox an export may name.
const _: () = assert!(export_limits::MAILBOXES <= MAILBOXES_PER_READ);

/// `POST /api/exports`: fixes the selection and leaves the copying to the schedule.
pub async fn request(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: RequestExport = context.body()?;
    let (mailbox_ids, receipts) = selection(&request)?;
    let requester = context.caller().actor_id().unwrap_or_default().to_string();
    // The selection is asked where each mailbox's mail is: of D1, for those
    // whose mail is there, and at the same time of each named mailbox's own
    // database (if it has one); D1's word on where each mailbox's mail is
    // picks the answers that count (decision 0040).
    let most = export_limits::MESSAGES as i64;
    let on_d1 = vec![
        mailboxes_among(&mailbox_ids),
        store::building_of(&requester),
        receipts.counted(SelectedIn::D1),
        receipts.in_order(SelectedIn::D1, most),
    ];
    let in_own_databases = mailbox_ids
        .iter()
        .map(|id| {
            (
                id.clone(),
                vec![receipts.counted(SelectedIn::OwnDatabase), receipts.in_order(SelectedIn::OwnDatabase, most)],
            )
        })
        .collect();
    let (on_d1, in_own_databases) = context.read_beside_mailboxes(on_d1, in_own_databases).await?;
    let [known, building, counted_in_d1, selected_in_d1] =
        <[QueryResult; 4]>::try_from(on_d1).map_err(|_| Refusal::internal())?;
    let known_ids: Vec<String> = known.rows.iter().filter_map(|row| row.text("id").ok()).collect();
    if let Some(index) = request.mailbox_ids.iter().position(|id| !known_ids.contains(id)) {
        return Err(RequestError::wrong_field(&format!("mailbox_ids[{index}]"), "a mailbox of this node"));
    }
    let moved: Vec<String> = known
        .rows
        .iter()
        .filter(|row| row.optional_integer("mail_moved_at").ok().flatten().is_some())
        .filter_map(|row| row.text("id").ok())
        .collect();
    let counted = |result: &QueryResult| result.first().and_then(|row| row.integer("n").ok()).unwrap_or(0);
    if counted(&building) >= export_limits::BUILDING_PER_REQUESTER as i64 {
        return Err(ExportError::TooManyBuilding.into());
    }
    let mut total = counted(&counted_in_d1);
    let mut selected: Vec<Selected> = selected_in_d1.decode_all().map_err(|error| context.internal(error))?;
    for (mailbox_id, answered) in mailbox_ids.iter().zip(in_own_databases) {
        if !moved.contains(mailbox_id) {
            continue;
        }
        let answered = answered.map_err(|error| context.internal(error))?;
        let [counted_there, selected_there] =
            <[QueryResult; 2]>::try_from(answered).map_err(|_| Refusal::internal())?;
        total += counted(&counted_there);
        selected.extend(selected_there.decode_all::<Selected>().map_err(|error| context.internal(error))?);
    }
    if total > most {
        return Err(ExportError::TooManyMessages { selected: total }.into());
    }
    // Numbered in the order received across every mailbox. Mail that arrives
    // after this read is not part of the export; a message deleted after it
    // is found missing when the schedule copies it.
    selected.sort_by(|one, other| (one.received_at, &one.receipt_id).cmp(&(other.received_at, &other.receipt_id)));
    let id = new_id(IdKind::Export, context.platform());
    let now = context.now_ms();
    context.write(
        store::export_requested(NewExport {
            id: &id,
            requester: &requester,
            mailbox_ids_json: serde_json::json!(mailbox_ids).to_string(),
            query: request.query.clone(),
            since: request.since.clone(),
            until: request.until.clone(),
            messages_total: total,
            created_at: now,
        })
        .statement(),
    );
    for items in store::items_written(&id, &selected) {
        context.write(items);
    }
    context.audit_object(id.clone());
    context.audit_detail(serde_json::json!({
        "mailboxes": mailbox_ids, "query": request.query, "since": request.since, "until": request.until, "messages": total,
    }));
    Ok(context.json(&Export {
        id,
        requester,
        mailbox_ids,
        query: request.query,
        since: request.since,
        until: request.until,
        state: ExportState::Building,
        messages_total: total,
        messages_done: 0,
        messages_missing: 0,
        bytes: 0,
        manifest_sha256: None,
        created_at: rfc3339(now),
        completed_at: None,
    }))
}

impl ExportRow {
    fn present(self) -> Export {
        let state =
            ExportState::ALL.into_iter().find(|state| state.name() == self.state).unwrap_or(ExportState::Building);
        Export {
            id: self.id,
            requester: self.requester,
            mailbox_ids: serde_json::from_str(&self.mailbox_ids_json).unwrap_or_default(),
            query: self.query,
            since: self.since,
            until: self.until,
            state,
            messages_total: self.messages_total,
            messages_done: self.done,
            messages_missing: self.missing,
            bytes: self.bytes,
            manifest_sha256: self.manifest_sha256,
            created_at: rfc3339(self.created_at),
            completed_at: self.completed_at.map(rfc3339),
        }
    }
}

/// The caller's export `id` (the path's, read once by the handler, which may
/// bind it in `more`), with `more` read in the same round trip; anyone else's
/// answers as one that does not exist.
async fn own_export<const N: usize>(
    context: &mut Context<'_>,
    id: &str,
    more: [Statement; N],
) -> Result<(ExportRow, Vec<crate::core::storage::QueryResult>), Refusal> {
    let requester = context.caller().actor_id().unwrap_or_default().to_string();
    let mut statements = vec![store::export_of(id, &requester)];
    statements.extend(more);
    let mut results = context.read(statements).await?;
    let export = results.remove(0);
    let Some(row) = export.first() else {
        return Err(ExportError::NoSuchExport { id: id.to_string() }.into());
    };
    let row: ExportRow = row.decode().map_err(|error| context.internal(error))?;
    Ok((row, results))
}

/// `GET /api/exports`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let limit = paging::limit(context)?;
    let after = paging::cursor_id(context, IdKind::Export)?;
    let requester = context.caller().actor_id().unwrap_or_default().to_string();
    let page = store::exports_of(&requester, after, limit);
    let [rows] = context.read_array([page]).await?;
    let mut rows: Vec<ExportRow> = rows.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = paging::cut_at_id(&mut rows, limit, |row| &row.id);
    Ok(context.json(&ExportList { exports: rows.into_iter().map(ExportRow::present).collect(), next_cursor }))
}

/// `GET /api/exports/:exportId`.
pub async fn get(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let id = context.path(PathParameter::ExportId)?.to_string();
    let (row, _) = own_export(context, &id, []).await?;
    Ok(context.json(&row.present()))
}

/// `DELETE /api/exports/:exportId`: the export and its items go now; its copies
/// are owed to the object store, which the upkeep deletes a run at a time.
pub async fn delete(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let id = context.path(PathParameter::ExportId)?.to_string();
    let (row, _) = own_export(context, &id, []).await?;
    context.write(owe_deletion_of(store::copies_of(&row.id), context.now_ms()));
    for deleted in store::export_deleted(&row.id) {
        context.write(deleted);
    }
    context.audit_object(row.id.clone());
    context.audit_detail(serde_json::json!({ "manifest_sha256": row.manifest_sha256 }));
    Ok(context.json(&row.present()))
}

impl ItemRow {
    fn present(self) -> ExportObject {
        ExportObject {
            name: format!("{}.eml", self.receipt_id),
            kind: ExportObjectKind::Message,
            mailbox_id: Some(self.mailbox_id),
            subject: Some(self.subject),
            received_at: Some(rfc3339(self.received_at)),
            available: self.sha256.is_some() && self.missing == 0,
            size: self.size,
            sha256: self.sha256,
            id: self.receipt_id,
        }
    }
}

/// `GET /api/exports/:exportId/objects`: the manifest, then the messages in its order.
pub async fn list_objects(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let limit = paging::limit(context)?;
    let after = paging::cursor(context, IdKind::Receipt, 0)?.0;
    let id = context.path(PathParameter::ExportId)?.to_string();
    let items = store::items_of(&id, after, limit);
    let (export, results) = own_export(context, &id, [items]).await?;
    let mut items: Vec<ItemRow> = results[0].decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = paging::cut(&mut items, limit, |item| (item.position, &item.receipt_id));
    let mut objects = Vec::with_capacity(items.len() + 1);
    if after == 0 {
        let ready = export.state == ExportState::Ready.name();
        objects.push(ExportObject {
            id: MANIFEST.into(),
            kind: ExportObjectKind::Manifest,
            name: format!("{}-manifest.json", export.id),
            mailbox_id: None,
            subject: None,
            received_at: None,
            size: None,
            sha256: export.manifest_sha256,
            available: ready,
        });
    }
    objects.extend(items.into_iter().map(ItemRow::present));
    Ok(context.json(&ExportObjectPage { objects, next_cursor }))
}

/// `GET /api/exports/:exportId/objects/:objectId`: the bytes, checked against
/// the hash recorded when they were copied, and that hash in the audit entry.
pub async fn download(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let export_id = context.path(PathParameter::ExportId)?.to_string();
    let object_id = context.path(PathParameter::ExportObjectId)?.to_string();
    if object_id != MANIFEST && !is_id_of(&object_id, IdKind::Receipt) {
        return Err(ExportError::NoSuchObject { id: object_id }.into());
    }
    let item = store::item(&export_id, &object_id);
    let (export, results) = own_export(context, &export_id, [item]).await?;
    let (recorded, content_type, name) = if object_id == MANIFEST {
        let Some(sha256) = export.manifest_sha256 else {
            return Err(ExportError::NotReady { id: object_id }.into());
        };
        (sha256, "application/json", format!("{export_id}-manifest.json"))
    } else {
        let Some(item) = results[0].first() else {
            return Err(ExportError::NoSuchObject { id: object_id }.into());
        };
        if item.integer("missing").unwrap_or(0) != 0 {
            return Err(ExportError::ObjectMissing { id: object_id }.into());
        }
        let Some(sha256) = item.optional_text("sha256").ok().flatten() else {
            return Err(ExportError::NotReady { id: object_id }.into());
        };
        (sha256, "message/rfc822", format!("{object_id}.eml"))
    };
    let bytes = context
        .content_blob(&object_key(&export_id, &object_id))
        .await?
        .ok_or_else(|| context.internal(format!("export object {export_id}/{object_id} is not in the object store")))?;
    // What is handed out is what was hashed: a copy altered in the object store
    // is an incident to look into, never a download.
    if sha256_hex(&bytes) != recorded {
        return Err(context.internal(format!("export object {export_id}/{object_id} no longer matches its hash")));
    }
    context.audit_object(format!("{export_id}/{object_id}"));
    context.audit_detail(serde_json::json!({ "sha256": recorded, "size": bytes.len() }));
    Ok(Response::download(200, content_type, bytes, &name))
}
