//! The SQL of the senders whose remote images a person always sees
//! (`mail::image_senders`): a person's list, one sender of it, adding one
//! held to the limit, and removing one.

use serde::Deserialize;

use crate::core::storage::{Insert, Statement};

/// A sender on a person's list, as read.
#[derive(Deserialize)]
pub(crate) struct ImageSenderRow {
    pub address: String,
    pub added_at: i64,
}

/// Every sender on `person_id`'s list, by address.
pub(crate) fn list(person_id: &str) -> Statement {
    Statement::new("SELECT address, added_at FROM image_senders WHERE person_id = ?1 ORDER BY address").bind(person_id)
}

/// The sender `address` on `person_id`'s list: one row, or none.
pub(crate) fn one(person_id: &str, address: &str) -> Statement {
    Statement::new("SELECT address, added_at FROM image_senders WHERE person_id = ?1 AND address = ?2")
        .bind(person_id)
        .bind(address)
}

/// Adds `address` to `person_id`'s list at `added_at`; a sender already there
/// keeps the time it was first added.
pub(crate) fn add(person_id: &str, address: &str, added_at: i64) -> Statement {
    Insert::into("image_senders")
        .value("person_id", person_id)
        .value("address", address)
        .value("added_at", added_at)
        .then("ON CONFLICT (person_id, address) DO NOTHING")
        .statement()
}

/// The guard that `person_id` keeps no more than `limit` senders, evaluated
/// after the add in the same transaction, so two adds at once cannot both pass.
pub(crate) fn within_limit(person_id: &str, limit: usize) -> Statement {
    Statement::new("(SELECT count(*) FROM image_senders WHERE person_id = ?1) <= ?2")
        .bind(person_id)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
}

/// Takes `address` off `person_id`'s list.
pub(crate) fn remove(person_id: &str, address: &str) -> Statement {
    Statement::new("DELETE FROM image_senders WHERE person_id = ?1 AND address = ?2").bind(person_id).bind(address)
}
