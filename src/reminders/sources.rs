//! Sources: services that keep people's reminders in step with their own
//! records. An administrator creates one (its `mr_src_` credential shown once)
//! and revokes it; the source pushes (upserts, keyed by its `source_ref` and
//! `topic`) and withdraws events for a person named by address, and touches no
//! other source's events: its own id is part of every key it writes under.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{
    CreateReminderSource, PushEvent, ReminderSource, ReminderSourceCreated, ReminderSourceList,
};

use super::checks::{SOURCE_REF, TOPIC, line};
use super::errors::ReminderError;
use super::events::{Fields, MANUAL_SOURCE, zone_of};
use super::store::{self, EventRow, SourceRow};
use crate::authz::credentials::NamingCredential;
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::crypto::hash_secret;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of, new_id};
use crate::core::refusal::Refusal;
use crate::core::storage::Statement;
use crate::core::time::rfc3339;
use mailroom_contract::api::SOURCE_NAME_MAXIMUM;

impl SourceRow {
    fn present(&self) -> ReminderSource {
        ReminderSource {
            id: self.id.clone(),
            name: self.name.clone(),
            created_at: rfc3339(self.created_at),
            created_by: self.created_by.clone(),
            revoked_at: self.revoked_at.map(rfc3339),
        }
    }
}

/// `GET /api/reminder-sources`.
pub async fn list_sources(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let [sources] = context.read_array([store::all_sources()]).await?;
    let sources: Vec<SourceRow> = sources.decode_all().map_err(|error| context.internal(error))?;
    Ok(context.json(&ReminderSourceList { sources: sources.iter().map(SourceRow::present).collect() }))
}

/// A source's name, checked: ASCII letters, digits, `-`, `_` and `.` only, so
/// no other script's lookalike or invisible character can pass for another
/// name, and never `manual` in any case, since a person reads `Manual` or
/// `MANUAL` on an event as `manual`, the events people add themselves.
fn source_name(name: &str) -> Result<String, ReminderError> {
    let name = name.trim();
    let acceptable = !name.is_empty()
        && name.len() <= SOURCE_NAME_MAXIMUM
        && !name.eq_ignore_ascii_case(MANUAL_SOURCE)
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if acceptable { Ok(name.to_string()) } else { Err(ReminderError::InvalidSourceName) }
}

/// `POST /api/reminder-sources`.
pub async fn create_source(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: CreateReminderSource = context.body()?;
    let name = source_name(&request.name)?;
    // Names are shown on events, where `Visa-Office` reads as `visa-office`: a
    // name taken in another case is taken.
    let [existing] = context.read_array([store::source_named(&name)]).await?;
    if !existing.rows.is_empty() {
        return Err(ReminderError::SourceNameTaken.into());
    }
    let id = new_id(IdKind::Source, context.platform());
    let credential = NamingCredential::Source.issue(&id, context.platform());
    let created_by = context.caller().actor_id().unwrap_or_default().to_string();
    let now_ms = context.now_ms();
    context.write(store::new_source(&id, &name, hash_secret(&credential), now_ms, &created_by));
    context.on_constraint_violation("reminder_sources.name", ReminderError::SourceNameTaken);
    context.audit_object(id.clone());
    context.audit_detail(serde_json::json!({ "name": name }));
    let source = SourceRow { id, name, created_at: now_ms, created_by, revoked_at: None };
    Ok(context.json(&ReminderSourceCreated { source: source.present(), credential }))
}

/// `POST /api/reminder-sources/:sourceId/revoke`.
pub async fn revoke_source(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let id = context.path(PathParameter::SourceId)?.to_string();
    if !is_id_of(&id, IdKind::Source) {
        return Err(ReminderError::NoSuchSource { id }.into());
    }
    let [source] = context.read_array([store::source(&id)]).await?;
    let Some(row) = source.first() else {
        return Err(ReminderError::NoSuchSource { id }.into());
    };
    let mut source: SourceRow = row.decode().map_err(|error| context.internal(error))?;
    context.audit_object(id.clone());
    if source.revoked_at.is_some() {
        return Err(ReminderError::SourceAlreadyRevoked.into());
    }
    let now_ms = context.now_ms();
    context.write_changing_one_row(store::revoke_source(&id, now_ms), ReminderError::SourceAlreadyRevoked);
    source.revoked_at = Some(now_ms);
    Ok(context.json(&source.present()))
}

/// The calling source's id: the dispatcher admits no one else to its routes.
fn calling_source(context: &Context<'_>) -> Result<String, Refusal> {
    match context.caller() {
        Caller::Source { source_id, .. } => Ok(source_id.clone()),
        _ => Err(context.internal("a source route without a source")),
    }
}

/// The statements reading, for a source's call about one person's event: the
/// person (enabled, by address, in any case) and their zone, the source's
/// name, and the event under the key, if any.
fn about(source_id: &str, person: &str, source_ref: &str, topic: &str) -> [Statement; 3] {
    store::about(source_id, &person.trim().to_lowercase(), source_ref, topic)
}

/// `PUT /api/source/events`.
pub async fn push_event(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: PushEvent = context.body()?;
    let source_id = calling_source(context)?;
    let source_ref = line(SOURCE_REF.0, &request.source_ref, SOURCE_REF.1, true)?;
    let topic = line(TOPIC.0, &request.topic, TOPIC.1, false)?;
    let fields = Fields::new(
        &request.title,
        &request.due_at,
        request.subtitle.as_deref(),
        request.fire_at.as_deref(),
        request.after_due,
        request.done_label.as_deref(),
        request.deep_link.as_deref(),
    )?;
    let [person, name, existing] = context.read_array(about(&source_id, &request.person, &source_ref, &topic)).await?;
    let Some(person_id) = person.first().and_then(|row| row.text("person_id").ok()) else {
        return Err(ReminderError::NoSuchPerson { email: request.person.trim().to_string() }.into());
    };
    let zone = zone_of(&person);
    let source_name = name.first().and_then(|row| row.text("name").ok()).unwrap_or_default();
    let now_ms = context.now_ms();
    let row = match existing.first() {
        Some(row) => {
            let existing: EventRow = row.decode().map_err(|error| context.internal(error))?;
            let rescheduled = existing.due_at != fields.due.to_string();
            fields.applied_to(&existing, rescheduled, &zone, now_ms)
        }
        None => {
            let id = new_id(IdKind::Event, context.platform());
            fields.new_row(id, person_id.clone(), source_id.clone(), source_name, source_ref, topic, &zone, now_ms)
        }
    };
    context.write(store::upsert(&row, &source_id).statement());
    if !row.is_closed_at(now_ms) {
        context.guard(store::open_events_within_limit(&person_id), ReminderError::TooManyOpenEvents);
    }
    context.audit_object(row.id.clone());
    context.audit_detail(serde_json::json!({ "person": person_id, "source_ref": row.source_ref, "topic": row.topic, "due_at": row.due_at }));
    Ok(context.json(&row.present(now_ms, &[])))
}

/// `DELETE /api/source/events`.
pub async fn withdraw_event(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let source_id = calling_source(context)?;
    let person = context.query("person").unwrap_or_default().to_string();
    let source_ref = context.query("source_ref").unwrap_or_default().to_string();
    let topic = context.query("topic").unwrap_or_default().to_string();
    let [_, _, existing] = context.read_array(about(&source_id, &person, &source_ref, &topic)).await?;
    let Some(row) = existing.first() else {
        return Err(ReminderError::NoSuchSourceEvent { source_ref, topic }.into());
    };
    let mut row: EventRow = row.decode().map_err(|error| context.internal(error))?;
    let now_ms = context.now_ms();
    context.audit_object(row.id.clone());
    if row.closed_as.is_none() {
        context.write(store::closing(&row.id, "withdrawn", now_ms));
        row.closed_as = Some("withdrawn".to_string());
        row.closed_at = Some(now_ms);
        row.updated_at = now_ms;
    }
    Ok(context.json(&row.present(now_ms, &[])))
}
