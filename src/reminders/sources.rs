//! Sources: services that keep people's reminders in step with their own
//! records. An administrator creates one (its `mr_src_` credential shown once)
//! and revokes it; the source pushes (upserts, keyed by its `source_ref` and
//! `topic`) and withdraws events for a person named by address, and touches no
//! other source's events: its own id is part of every key it writes under.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{
    CreateReminderSource, PushEvent, ReminderSource, ReminderSourceCreated, ReminderSourceList,
};
use serde::Deserialize;

use super::events::{EVENT_COLUMNS, EVENT_FROM, EventRow, Fields, closing, open_events_within_limit, upsert, zone_of};
use super::{MANUAL_SOURCE, ReminderError, SOURCE_REF, TOPIC, ZONE_OR_DEFAULT, line};
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

#[derive(Deserialize)]
struct SourceRow {
    id: String,
    name: String,
    created_at: i64,
    created_by: String,
    revoked_at: Option<i64>,
}

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

const SOURCE_COLUMNS: &str = "id, name, created_at, created_by, revoked_at";

/// `GET /api/reminder-sources`.
pub async fn list_sources(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let sources = Statement::new(format!("SELECT {SOURCE_COLUMNS} FROM reminder_sources ORDER BY created_at, id"));
    let [sources] = context.read_array([sources]).await?;
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
    let existing = Statement::new("SELECT id FROM reminder_sources WHERE lower(name) = lower(?1)").bind(name.as_str());
    let [existing] = context.read_array([existing]).await?;
    if !existing.rows.is_empty() {
        return Err(ReminderError::SourceNameTaken.into());
    }
    let id = new_id(IdKind::Source, context.platform());
    let credential = NamingCredential::Source.issue(&id, context.platform());
    let created_by = context.caller().actor_id().unwrap_or_default().to_string();
    let now_ms = context.now_ms();
    context.write(
        Statement::new(
            "INSERT INTO reminder_sources (id, name, credential_hash, created_at, created_by) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .bind(id.as_str())
        .bind(name.as_str())
        .bind(hash_secret(&credential))
        .bind(now_ms)
        .bind(created_by.as_str()),
    );
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
    let source =
        Statement::new(format!("SELECT {SOURCE_COLUMNS} FROM reminder_sources WHERE id = ?1")).bind(id.as_str());
    let [source] = context.read_array([source]).await?;
    let Some(row) = source.first() else {
        return Err(ReminderError::NoSuchSource { id }.into());
    };
    let mut source: SourceRow = row.decode().map_err(|error| context.internal(error))?;
    context.audit_object(id.clone());
    if source.revoked_at.is_some() {
        return Err(ReminderError::SourceAlreadyRevoked.into());
    }
    let now_ms = context.now_ms();
    context.write_changing_one_row(
        Statement::new("UPDATE reminder_sources SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL")
            .bind(id.as_str())
            .bind(now_ms),
        ReminderError::SourceAlreadyRevoked,
    );
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
/// person (enabled, by address) and their zone, the source's name, and the
/// event under the key, if any.
fn about(source_id: &str, person: &str, source_ref: &str, topic: &str) -> [Statement; 3] {
    let email = person.trim().to_lowercase();
    let person = Statement::new(format!(
        "SELECT p.id AS person_id, {ZONE_OR_DEFAULT} FROM people p \
         LEFT JOIN reminder_profiles r ON r.person_id = p.id WHERE p.email = ?1 AND p.disabled_at IS NULL"
    ))
    .bind(email.as_str());
    let name = Statement::new("SELECT name FROM reminder_sources WHERE id = ?1").bind(source_id);
    let event = Statement::new(format!(
        "SELECT {EVENT_COLUMNS} FROM {EVENT_FROM} JOIN people p ON p.id = e.person_id \
         WHERE p.email = ?1 AND e.source_id = ?2 AND e.source_ref = ?3 AND e.topic = ?4"
    ))
    .bind(email.as_str())
    .bind(source_id)
    .bind(source_ref)
    .bind(topic);
    [person, name, event]
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
    context.write(upsert(&row, &source_id));
    if !row.is_closed_at(now_ms) {
        context.guard(open_events_within_limit(&person_id), ReminderError::TooManyOpenEvents);
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
        context.write(closing(&row.id, "withdrawn", now_ms));
        row.closed_as = Some("withdrawn".to_string());
        row.closed_at = Some(now_ms);
        row.updated_at = now_ms;
    }
    Ok(context.json(&row.present(now_ms, &[])))
}
