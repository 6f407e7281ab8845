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
use serde::Deserialize;

use super::events::{EVENT_COLUMNS, EVENT_FROM, EventRow};
use super::schedule::{AfterDue, Checkpoints, ClockTime, Day, DueAt, Timing, Zone};
use super::{ReminderError, ZONE_OR_DEFAULT, owner_after_read, owner_cte};
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::outbound::Destination;
use crate::core::platform::random_bytes;
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Statement};

/// A profile as stored, with the person's address; the defaults where no row is.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct ProfileRow {
    pub person_id: String,
    pub email: String,
    pub time_zone: String,
    pub quiet_start: Option<String>,
    pub quiet_end: Option<String>,
    pub email_channel: i64,
    pub webhook_url: Option<String>,
}

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

/// The caller's profile (a person's own, an agent's sponsor's).
fn owner_profile(owner: (&'static str, String)) -> Statement {
    Statement::new(format!(
        "{}SELECT p.id AS person_id, p.email, {ZONE_OR_DEFAULT}, r.quiet_start, \
         r.quiet_end, COALESCE(r.email_channel, 0) AS email_channel, r.webhook_url \
         FROM owner o JOIN people p ON p.id = o.id LEFT JOIN reminder_profiles r ON r.person_id = p.id",
        owner.0
    ))
    .bind(owner.1)
}

fn decode_profile(context: &Context<'_>, result: &QueryResult) -> Result<ProfileRow, Refusal> {
    result
        .first()
        .ok_or_else(|| context.internal("a personal call's person is missing"))?
        .decode()
        .map_err(|error| context.internal(error))
}

/// What a profile write does to the webhook's secret.
enum Secret<'a> {
    /// Keeps the stored one (the webhook is not being changed).
    Kept,
    /// A new one, with a new address.
    New(&'a str),
    /// None: the webhook is removed.
    Removed,
}

/// The statement writing a whole profile. A kept secret is read inside the
/// statement, so the secret never travels through the handler, and the row's
/// rule that an address has a secret holds for the inserted values themselves.
fn store(profile: &ProfileRow, secret: Secret<'_>, now_ms: i64) -> Statement {
    let (keep, new_secret) = match secret {
        Secret::Kept => (1_i64, None),
        Secret::New(secret) => (0, Some(secret)),
        Secret::Removed => (0, None),
    };
    Statement::new(
        "INSERT INTO reminder_profiles (person_id, time_zone, quiet_start, quiet_end, email_channel, webhook_url, \
         webhook_secret, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, \
         CASE WHEN ?9 THEN (SELECT webhook_secret FROM reminder_profiles WHERE person_id = ?1) ELSE ?7 END, ?8) \
         ON CONFLICT (person_id) DO UPDATE SET time_zone = excluded.time_zone, quiet_start = excluded.quiet_start, \
         quiet_end = excluded.quiet_end, email_channel = excluded.email_channel, webhook_url = excluded.webhook_url, \
         webhook_secret = excluded.webhook_secret, updated_at = excluded.updated_at",
    )
    .bind(profile.person_id.as_str())
    .bind(profile.time_zone.as_str())
    .bind(profile.quiet_start.as_deref())
    .bind(profile.quiet_end.as_deref())
    .bind(profile.email_channel)
    .bind(profile.webhook_url.as_deref())
    .bind(new_secret)
    .bind(now_ms)
    .bind(keep)
}

/// `GET /api/me/profile`.
pub async fn get_profile(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let [profile] = context.read_array([owner_profile(owner_cte(context.caller()))]).await?;
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
    let owner = owner_cte(context.caller());
    let open_events = Statement::new(format!(
        "{}SELECT {EVENT_COLUMNS} FROM {EVENT_FROM} JOIN owner o ON e.person_id = o.id WHERE e.closed_as IS NULL",
        owner.0
    ))
    .bind(owner.1.as_str());
    // Open events are read only to move them to a new zone.
    let mut statements = vec![owner_profile(owner)];
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
    context.write(store(&profile, Secret::Kept, now_ms));
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
    Some(
        Statement::new(
            "UPDATE reminder_events SET fire_moment = json_extract(?1, '$.' || id || '[0]'), \
             day_moment = json_extract(?1, '$.' || id || '[1]'), due_moment = json_extract(?1, '$.' || id || '[2]'), \
             updated_at = ?3 \
             WHERE person_id = ?2 AND closed_as IS NULL AND json_extract(?1, '$.' || id) IS NOT NULL",
        )
        .bind(serde_json::Value::Object(by_event).to_string())
        .bind(person_id)
        .bind(now_ms),
    )
}

/// `PUT /api/me/profile/webhook`: the address, and a new secret shown once.
pub async fn set_webhook(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: SetReminderWebhook = context.body()?;
    let url = request.url.trim().to_string();
    // Checked here and again before every delivery (`notify`).
    Destination::check(&url, WEBHOOK_URL_MAXIMUM, &context.config().outbound_policy())
        .map_err(|refused| ReminderError::InvalidWebhookUrl { why: refused.why() })?;
    let [profile] = context.read_array([owner_profile(owner_cte(context.caller()))]).await?;
    let mut profile = decode_profile(context, &profile)?;
    let secret_bytes: [u8; 32] = random_bytes(context.platform());
    let secret = format!("whsec_{}", URL_SAFE_NO_PAD.encode(secret_bytes));
    profile.webhook_url = Some(url.clone());
    context.write(store(&profile, Secret::New(&secret), context.now_ms()));
    context.audit_object(profile.person_id.clone());
    context.audit_detail(serde_json::json!({ "webhook_url": url }));
    Ok(context.json(&ReminderWebhookSet { profile: profile.present(), secret }))
}

/// `DELETE /api/me/profile/webhook`.
pub async fn remove_webhook(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let [profile] = context.read_array([owner_profile(owner_cte(context.caller()))]).await?;
    let mut profile = decode_profile(context, &profile)?;
    profile.webhook_url = None;
    context.write(store(&profile, Secret::Removed, context.now_ms()));
    context.audit_object(profile.person_id.clone());
    Ok(context.json(&profile.present()))
}
