//! Sources' SQL: the sources an administrator lists, creates and revokes, and
//! what a source's call about one person's event reads.

use serde::Deserialize;

use super::events::{EVENT_COLUMNS, EVENT_FROM, ZONE_OR_DEFAULT};
use crate::core::storage::{Insert, Statement};

/// A source as stored (its credential's hash aside).
#[derive(Deserialize)]
pub(crate) struct SourceRow {
    pub id: String,
    pub name: String,
    pub created_at: i64,
    pub created_by: String,
    pub revoked_at: Option<i64>,
}

const SOURCE_COLUMNS: &str = "id, name, created_at, created_by, revoked_at";

/// Every source, oldest first, as [`SourceRow`]s.
pub(crate) fn all_sources() -> Statement {
    Statement::new(format!("SELECT {SOURCE_COLUMNS} FROM reminder_sources ORDER BY created_at, id"))
}

/// The source named `name` in any case (a row with its `id`, or none).
pub(crate) fn source_named(name: &str) -> Statement {
    Statement::new("SELECT id FROM reminder_sources WHERE lower(name) = lower(?1)").bind(name)
}

/// A new source, its credential kept as a hash.
pub(crate) fn new_source(id: &str, name: &str, credential_hash: String, now_ms: i64, created_by: &str) -> Statement {
    Insert::into("reminder_sources")
        .value("id", id)
        .value("name", name)
        .value("credential_hash", credential_hash)
        .value("created_at", now_ms)
        .value("created_by", created_by)
        .statement()
}

/// The source `id`, as a [`SourceRow`].
pub(crate) fn source(id: &str) -> Statement {
    Statement::new(format!("SELECT {SOURCE_COLUMNS} FROM reminder_sources WHERE id = ?1")).bind(id)
}

/// Revokes the source `id`, unless it is revoked already.
pub(crate) fn revoke_source(id: &str, now_ms: i64) -> Statement {
    Statement::new("UPDATE reminder_sources SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL")
        .bind(id)
        .bind(now_ms)
}

/// The statements reading, for a source's call about one person's event: the
/// person (enabled, by address) and their zone, the source's name, and the
/// event under the key, if any.
pub(crate) fn about(source_id: &str, email: &str, source_ref: &str, topic: &str) -> [Statement; 3] {
    let person = Statement::new(format!(
        "SELECT p.id AS person_id, {ZONE_OR_DEFAULT} FROM people p \
         LEFT JOIN reminder_profiles r ON r.person_id = p.id WHERE p.email = ?1 AND p.disabled_at IS NULL"
    ))
    .bind(email);
    let name = Statement::new("SELECT name FROM reminder_sources WHERE id = ?1").bind(source_id);
    let event = Statement::new(format!(
        "SELECT {EVENT_COLUMNS} FROM {EVENT_FROM} JOIN people p ON p.id = e.person_id \
         WHERE p.email = ?1 AND e.source_id = ?2 AND e.source_ref = ?3 AND e.topic = ?4"
    ))
    .bind(email)
    .bind(source_id)
    .bind(source_ref)
    .bind(topic);
    [person, name, event]
}
