//! The feed's routes: a person (or an agent of theirs) lists their
//! notifications and marks them read or unread, each answer carrying the
//! unread count read in the same round trip.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{
    MarkNotificationsRead, Notification, NotificationPage, NotificationsMarked, notification_limits,
};

use super::errors::NotificationError;
use super::store::{self, NotificationRow, Reader};
use crate::authz::holder_of;
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;
use crate::core::storage::QueryResult;
use crate::core::time::rfc3339;

/// The reader of a personal call.
fn reader_of(context: &Context<'_>) -> Result<Reader, Refusal> {
    let holder = holder_of(context.caller(), context.now_ms()).ok_or_else(Refusal::internal)?;
    match context.caller() {
        Caller::Person { person_id, .. } => Ok(Reader { holder, caller_id: person_id.clone(), is_agent: false }),
        Caller::Agent { agent_id, .. } => Ok(Reader { holder, caller_id: agent_id.clone(), is_agent: true }),
        Caller::Stranger | Caller::Source { .. } | Caller::Peer { .. } => Err(Refusal::internal()),
    }
}

/// The unread count a write batch's last statement (`unread_count`) answered.
fn counted(results: &[QueryResult]) -> i64 {
    results.last().and_then(QueryResult::first).and_then(|row| row.integer("unread").ok()).unwrap_or(0)
}

impl NotificationRow {
    fn present(&self) -> Notification {
        Notification {
            id: self.id.clone(),
            kind: self.kind,
            at: rfc3339(self.at),
            title: self.title.clone(),
            detail: self.detail.clone(),
            object_id: self.object_id.clone(),
            mailbox_id: self.mailbox_id.clone(),
            mailbox_address: self.mailbox_address.clone(),
            actor: self.actor.clone(),
            actor_name: self.actor_name.clone(),
            read: self.read != 0,
            resolved: self.resolved != 0,
        }
    }
}

/// `GET /api/me/notifications`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let only_unread = context.query("unread") == Some("true");
    let limit = paging::limit(context)?;
    let after = paging::cursor_id(context, IdKind::Notification)?;
    let reader = reader_of(context)?;
    let page = store::feed_page(&reader, only_unread, after, limit);
    let [rows, count] = context.read_array([page, store::unread_count(&reader)]).await?;
    let mut rows: Vec<NotificationRow> = rows.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = paging::cut_at_id(&mut rows, limit, |row| &row.id);
    Ok(context.json(&NotificationPage {
        notifications: rows.iter().map(NotificationRow::present).collect(),
        unread_count: counted(std::slice::from_ref(&count)),
        next_cursor,
    }))
}

/// The ids `request` names, checked, or `None` for all of them.
fn named(request: MarkNotificationsRead) -> Result<Option<Vec<String>>, Refusal> {
    let ids = match (request.notification_ids, request.all) {
        (Some(ids), None | Some(false)) if !ids.is_empty() => ids,
        (None, Some(true)) => return Ok(None),
        _ => return Err(NotificationError::NothingNamed.into()),
    };
    if ids.len() > notification_limits::MARKED_AT_ONCE {
        return Err(RequestError::wrong_field(
            "notification_ids",
            format!(
                "at most {} ids; mark more in several calls, or all with `all`",
                notification_limits::MARKED_AT_ONCE
            ),
        ));
    }
    if let Some(position) = ids.iter().position(|id| !is_id_of(id, IdKind::Notification)) {
        return Err(RequestError::wrong_field(
            &format!("notification_ids[{position}]"),
            "a notification's id (`ntf_…`), from list_notifications".to_string(),
        ));
    }
    Ok(Some(ids))
}

/// Commits a marking (the handler's first write) with the reader's new unread
/// count read after it in the same batch, and answers both.
async fn marked_and_counted(context: &mut Context<'_>, reader: &Reader) -> Result<Response, Refusal> {
    context.write(store::unread_count(reader));
    let results = context.commit_returning().await?;
    let marked = results.first().map_or(0, |result| result.changes as i64);
    Ok(context.json(&NotificationsMarked { marked, unread_count: counted(&results) }))
}

/// `POST /api/me/notifications/read`.
pub async fn mark_read(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let ids = named(context.body()?)?;
    let reader = reader_of(context)?;
    context.write(store::mark_read(&reader, ids.as_deref(), context.now_ms()));
    context.audit_detail(serde_json::json!({ "named": ids.as_ref().map(Vec::len), "all": ids.is_none() }));
    marked_and_counted(context, &reader).await
}

/// `DELETE /api/me/notifications/:notificationId/read`.
pub async fn mark_unread(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let id = context.path(PathParameter::NotificationId)?.to_string();
    let reader = reader_of(context)?;
    let [found] = context.read_array([store::in_the_feed(&reader, &id)]).await?;
    if found.rows.is_empty() {
        return Err(NotificationError::NoSuchNotification { id }.into());
    }
    context.audit_object(id.clone());
    context.write(store::mark_unread(&reader, &id));
    marked_and_counted(context, &reader).await
}
