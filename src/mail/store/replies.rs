//! The SQL of saved replies and signatures (`mail::replies`,
//! `mail::signatures`): a mailbox's saved replies, one of them, writing and
//! deleting one held to the mailbox's limit, and a mailbox's or a person's
//! signature set and removed.

use serde::Deserialize;

use crate::core::storage::{Insert, Statement};

/// A saved reply, as read.
#[derive(Deserialize)]
pub(crate) struct SavedReplyRow {
    pub id: String,
    pub mailbox_id: String,
    pub name: String,
    pub body: String,
    pub updated_by: String,
    pub updated_at: i64,
}

const SAVED_REPLY_COLUMNS: &str = "id, mailbox_id, name, body, updated_by, updated_at";

/// Every saved reply of `mailbox_id`, by name.
pub(crate) fn saved_replies(mailbox_id: &str) -> Statement {
    Statement::new(format!("SELECT {SAVED_REPLY_COLUMNS} FROM saved_replies WHERE mailbox_id = ?1 ORDER BY name, id"))
        .bind(mailbox_id)
}

/// The saved reply `id` of `mailbox_id`: one row, or none.
pub(crate) fn saved_reply(mailbox_id: &str, id: &str) -> Statement {
    Statement::new(format!("SELECT {SAVED_REPLY_COLUMNS} FROM saved_replies WHERE mailbox_id = ?1 AND id = ?2"))
        .bind(mailbox_id)
        .bind(id)
}

/// The saved reply of `mailbox_id` named `name` (whatever its case), other
/// than `except_id`: one row, or none.
pub(crate) fn named(mailbox_id: &str, name: &str, except_id: &str) -> Statement {
    Statement::new("SELECT id FROM saved_replies WHERE mailbox_id = ?1 AND name = ?2 AND id <> ?3")
        .bind(mailbox_id)
        .bind(name)
        .bind(except_id)
}

/// A saved reply as it is to be written.
pub(crate) struct SavedReplyWritten<'a> {
    pub id: &'a str,
    pub mailbox_id: &'a str,
    pub name: &'a str,
    pub body: &'a str,
    pub updated_by: &'a str,
    pub updated_at: i64,
}

/// Stores a new saved reply.
pub(crate) fn create(reply: &SavedReplyWritten<'_>) -> Statement {
    Insert::into("saved_replies")
        .value("id", reply.id)
        .value("mailbox_id", reply.mailbox_id)
        .value("name", reply.name)
        .value("body", reply.body)
        .value("updated_by", reply.updated_by)
        .value("updated_at", reply.updated_at)
        .statement()
}

/// Writes an existing saved reply's name and body again.
pub(crate) fn update(reply: &SavedReplyWritten<'_>) -> Statement {
    Statement::new(
        "UPDATE saved_replies SET name = ?3, body = ?4, updated_by = ?5, updated_at = ?6 \
         WHERE mailbox_id = ?1 AND id = ?2",
    )
    .bind(reply.mailbox_id)
    .bind(reply.id)
    .bind(reply.name)
    .bind(reply.body)
    .bind(reply.updated_by)
    .bind(reply.updated_at)
}

/// The guard that `mailbox_id` keeps no more than `limit` saved replies,
/// evaluated after the insert in the same transaction, so two saves at once
/// cannot both pass.
pub(crate) fn within_limit(mailbox_id: &str, limit: usize) -> Statement {
    Statement::new("(SELECT count(*) FROM saved_replies WHERE mailbox_id = ?1) <= ?2")
        .bind(mailbox_id)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
}

/// Deletes the saved reply `id` of `mailbox_id`.
pub(crate) fn delete(mailbox_id: &str, id: &str) -> Statement {
    Statement::new("DELETE FROM saved_replies WHERE mailbox_id = ?1 AND id = ?2").bind(mailbox_id).bind(id)
}

/// A signature, as read.
#[derive(Deserialize)]
pub(crate) struct SignatureRow {
    pub text: String,
    pub updated_by: String,
    pub updated_at: i64,
}

/// The signature of `owner_id` (a mailbox or a person): one row, or none.
pub(crate) fn signature(owner_id: &str) -> Statement {
    Statement::new("SELECT text, updated_by, updated_at FROM signatures WHERE owner_id = ?1").bind(owner_id)
}

/// Sets the signature of `owner_id`, replacing the one it had.
pub(crate) fn set_signature(owner_id: &str, text: &str, updated_by: &str, updated_at: i64) -> Statement {
    Insert::into("signatures")
        .value("owner_id", owner_id)
        .value("text", text)
        .value("updated_by", updated_by)
        .value("updated_at", updated_at)
        .then(
            "ON CONFLICT (owner_id) DO UPDATE SET text = excluded.text, updated_by = excluded.updated_by, \
             updated_at = excluded.updated_at",
        )
        .statement()
}

/// Removes the signature of `owner_id`, if it has one.
pub(crate) fn remove_signature(owner_id: &str) -> Statement {
    Statement::new("DELETE FROM signatures WHERE owner_id = ?1").bind(owner_id)
}
