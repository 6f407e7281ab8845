//! Profiles' SQL: the caller's profile as read, and the one statement that
//! writes a whole profile.

use serde::Deserialize;

use super::events::{Owner, ZONE_OR_DEFAULT};
use crate::core::storage::Statement;

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

/// The caller's profile (a person's own, an agent's sponsor's).
pub(crate) fn owner_profile(owner: &Owner) -> Statement {
    owner.reading(&format!(
        "SELECT p.id AS person_id, p.email, {ZONE_OR_DEFAULT}, r.quiet_start, \
         r.quiet_end, COALESCE(r.email_channel, 0) AS email_channel, r.webhook_url \
         FROM owner o JOIN people p ON p.id = o.id LEFT JOIN reminder_profiles r ON r.person_id = p.id"
    ))
}

/// What a profile write does to the webhook's secret.
pub(crate) enum Secret<'a> {
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
/// The secret's expression reads two parameters, which is why this is not an
/// `Insert`.
pub(crate) fn store_profile(profile: &ProfileRow, secret: Secret<'_>, now_ms: i64) -> Statement {
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
