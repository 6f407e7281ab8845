//! A person's reminder profile: the zone their events' states are computed in,
//! their quiet hours, and the channels notifications go through.
//!
//! Changing the zone recomputes the moments of every open event in the same
//! commit, so no event is ever judged in a zone the person has left. Where
//! notifications go (the webhook and its secret) is set by the person alone,
//! signed in: those routes are never offered to a machine.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mailroom_contract::api::{
    ReminderChannels, ReminderProfile, ReminderWebhookSet, SetReminderWebhook, UpdateReminderProfile,
    WEBHOOK_URL_MAXIMUM,
};

use super::errors::ReminderError;
use super::schedule::{AfterDue, Checkpoints, ClockTime, Day, DueAt, Timing, Zone};
use super::store::{self, EventRow, ProfileRow, Secret};
use super::whose::owner_after_read;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::outbound::Destination;
use crate::core::platform::random_bytes;
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Statement};

impl ProfileRow {
    fn present(&self) -> ReminderProfile {
        ReminderProfile {
            person_id: self.person_id.clone(),
            email: self.email.clone(),
            tz: self.time_zone.clone(),
            quiet_start: self.quiet_start.clone(),
            quiet_end: self.quiet_end.clone(),
            channels: ReminderChannels { email: self.email_channel == 1, webhook_url: self.webhook_url.clone() },
        }
    }
}

fn decode_profile(context: &Context<'_>, result: &QueryResult) -> Result<ProfileRow, Refusal> {
    result
        .first()
        .ok_or_else(|| context.internal("a personal call's person is missing"))?
        .decode()
        .map_err(|error| context.internal(error))
}

/// `GET /api/me/profile`.
pub async fn get_profile(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let [profile] = context.read_array([store::owner_profile(&store::owner(context.caller()))]).await?;
    let profile = decode_profile(context, &profile)?;
    Ok(context.json(&profile.present()))
}

/// A time of day from a profile change: `Some(None)` removes it.
fn clock(field: &'static str, text: Option<&str>) -> Result<Option<Option<String>>, ReminderError> {
    match text.map(str::trim) {
        None => Ok(None),
        Some("") => Ok(Some(None)),
        Some(text) => ClockTime::parse(text)
            .map(|time| Some(Some(time.to_string())))
            .map_err(|error| ReminderError::Schedule { field, error }),
    }
}

/// `PATCH /api/me/profile`.
pub async fn update_profile(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let changes: UpdateReminderProfile = context.body()?;
    let zone = match changes.tz.as_deref() {
        Some(name) => Some(Zone::parse(name.trim()).map_err(|error| ReminderError::Schedule { field: "tz", error })?),
        None => None,
    };
    let quiet_start = clock("quiet_start", changes.quiet_start.as_deref())?;
    let quiet_end = clock("quiet_end", changes.quiet_end.as_deref())?;
    let owner = store::owner(context.caller());
    let open_events = store::owner_open_events(&owner);
    // Open events are read only to move them to a new zone.
    let mut statements = vec![store::owner_profile(&owner)];
    statements.extend(zone.is_some().then_some(open_events));
    let mut results = context.read(statements).await?.into_iter();
    let (Some(profile), open_events) = (results.next(), results.next()) else {
        return Err(context.internal("a profile read answered nothing"));
    };
    let person_id = owner_after_read(context)?;
    let mut profile = decode_profile(context, &profile)?;
    let now_ms = context.now_ms();
    let new_zone = zone.filter(|zone| zone.name() != profile.time_zone);
    if let Some(zone) = &new_zone {
        profile.time_zone = zone.name().to_string();
    }
    if let Some(start) = quiet_start {
        profile.quiet_start = start;
    }
    if let Some(end) = quiet_end {
        profile.quiet_end = end;
    }
    if profile.quiet_start.is_some() != profile.quiet_end.is_some() {
        return Err(ReminderError::HalfQuietHours.into());
    }
    if let Some(email) = changes.email {
        profile.email_channel = i64::from(email);
    }
    context.write(store::store_profile(&profile, Secret::Kept, now_ms));
    if let Some(zone) = &new_zone {
        let events: Vec<EventRow> =
            open_events.unwrap_or_default().decode_all().map_err(|error| context.internal(error))?;
        if let Some(statement) = recompute_moments(&person_id, &events, zone, now_ms) {
            context.write(statement);
        }
    }
    context.audit_object(person_id);
    context.audit_detail(serde_json::json!({ "tz": profile.time_zone, "email": profile.email_channel == 1 }));
    Ok(context.json(&profile.present()))
}

/// One statement that moves every one of `events` to its moments in `zone`:
/// the new moments travel as one JSON object keyed by event id.
fn recompute_moments(person_id: &str, events: &[EventRow], zone: &Zone, now_ms: i64) -> Option<Statement> {
    let mut by_event = serde_json::Map::new();
    for event in events {
        let (Ok(due), Ok(fire_at)) = (DueAt::parse(&event.due_at), Day::parse(&event.fire_at)) else { continue };
        let after_due = AfterDue::parse(&event.after_due).unwrap_or(AfterDue::Keep);
        let checkpoints = Checkpoints::of(&Timing { due, fire_at, after_due }, zone);
        let instants = [checkpoints.fire_day_start, checkpoints.due_day_start, checkpoints.due_moment];
        by_event.insert(event.id.clone(), serde_json::json!(instants));
    }
    if by_event.is_empty() {
        return None;
    }
    Some(store::move_moments(person_id, serde_json::Value::Object(by_event).to_string(), now_ms))
}

/// `PUT /api/me/profile/webhook`: the address, and a new secret shown once.
pub async fn set_webhook(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: SetReminderWebhook = context.body()?;
    let url = request.url.trim().to_string();
    // Checked here and again before every delivery (`notify`).
    Destination::check(&url, WEBHOOK_URL_MAXIMUM, &context.config().outbound_policy())
        .map_err(|refused| ReminderError::InvalidWebhookUrl { why: refused.why() })?;
    let [profile] = context.read_array([store::owner_profile(&store::owner(context.caller()))]).await?;
    let mut profile = decode_profile(context, &profile)?;
    let secret_bytes: [u8; 32] = random_bytes(context.platform());
    let secret = format!("whsec_{}", URL_SAFE_NO_PAD.encode(secret_bytes));
    profile.webhook_url = Some(url.clone());
    context.write(store::store_profile(&profile, Secret::New(&secret), context.now_ms()));
    context.audit_object(profile.person_id.clone());
    context.audit_detail(serde_json::json!({ "webhook_url": url }));
    Ok(context.json(&ReminderWebhookSet { profile: profile.present(), secret }))
}

/// `DELETE /api/me/profile/webhook`.
pub async fn remove_webhook(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let [profile] = context.read_array([store::owner_profile(&store::owner(context.caller()))]).await?;
    let mut profile = decode_profile(context, &profile)?;
    profile.webhook_url = None;
    context.write(store::store_profile(&profile, Secret::Removed, context.now_ms()));
    context.audit_object(profile.person_id.clone());
    Ok(context.json(&profile.present()))
}
