//! Who sees what: a message with whether the caller sponsors its parties,
//! the sender's filtered list, conversations and their messages, cancelling.

use serde::Deserialize;

use crate::authz::tuples::{self, Holder};
use crate::core::storage::Statement;

use super::shared::*;

// Who sees what.

/// Whether the holder administers the node, read beside what it asks for;
/// nobody does for a caller who holds nothing.
pub(crate) fn administers(holder: Option<&Holder>) -> Statement {
    match holder {
        Some(holder) => tuples::is_administrator(holder),
        None => Statement::new("SELECT 0 AS held"),
    }
}

/// The message `id` with whether `me` sponsors its sender or its recipient
/// (the column `sponsors`), at `now_ms`.
pub(crate) fn message_with_sponsorship(id: &str, me: &str, now_ms: i64) -> Statement {
    Statement::new(format!(
        "SELECT {MESSAGE_COLUMNS}, {}, EXISTS (SELECT 1 FROM agents a \
           WHERE a.id IN (m.sender_id, m.recipient_id) AND a.sponsor_id = ?2) AS sponsors \
         {MESSAGE_FROM} WHERE m.id = ?3",
        held_because_sql()
    ))
    .bind(now_ms)
    .bind(me)
    .bind(id)
}

/// What the sender's list of its messages filters by; `None` filters nothing.
pub(crate) struct SentFilter<'a> {
    pub now_ms: i64,
    pub sender: &'a str,
    pub recipient: Option<&'a str>,
    pub kind: Option<&'a str>,
    pub conversation: Option<&'a str>,
    /// 1 for messages ever delivered, 0 for never.
    pub attempted: Option<i64>,
    pub changed_since: Option<i64>,
    /// The states now, as a JSON array of names.
    pub states: Option<String>,
}

/// The condition a sent message matches [`SentFilter`] by; `?1` is the time,
/// as the state and `held_because` are judged at it.
fn sent_matching() -> String {
    format!(
        "m.sender_id = ?2 AND m.kind <> 'reply' AND (?3 IS NULL OR m.recipient_id = ?3) \
           AND (?4 IS NULL OR m.kind = ?4) AND (?5 IS NULL OR m.conversation_id = ?5) \
           AND (?6 IS NULL OR (m.attempts > 0) = ?6) AND (?7 IS NULL OR m.updated_at >= ?7) \
           AND (?8 IS NULL OR ({}) IN (SELECT value FROM json_each(?8)))",
        state_now_sql()
    )
}

impl SentFilter<'_> {
    fn bound(&self, statement: Statement) -> Statement {
        statement
            .bind(self.now_ms)
            .bind(self.sender)
            .bind(self.recipient)
            .bind(self.kind)
            .bind(self.conversation)
            .bind(self.attempted)
            .bind(self.changed_since)
            .bind(self.states.clone())
    }
}

/// One page of what `filter` matches, most recently changed first, before
/// (`before_at`, `before_id`); one more than `limit` tells a next page.
pub(crate) fn sent_page(filter: &SentFilter<'_>, before_at: i64, before_id: &str, limit: i64) -> Statement {
    filter
        .bound(Statement::new(format!(
            "SELECT {MESSAGE_COLUMNS}, {} {MESSAGE_FROM} WHERE {} AND (m.updated_at, m.id) < (?9, ?10) \
             ORDER BY m.updated_at DESC, m.id DESC LIMIT ?11",
            held_because_sql(),
            sent_matching()
        )))
        .bind(before_at)
        .bind(before_id)
        .bind(limit + 1)
}

/// How many messages `filter` matches in all (`total`).
pub(crate) fn sent_total(filter: &SentFilter<'_>) -> Statement {
    filter.bound(Statement::new(format!("SELECT COUNT(*) AS total FROM agent_messages m WHERE {}", sent_matching())))
}

/// A conversation as its list shows it.
#[derive(Deserialize)]
pub(crate) struct ConversationRow {
    pub id: String,
    /// The participants' ids, joined by commas.
    pub participants: String,
    pub message_count: i64,
    pub last_activity_at: i64,
    pub canceled_at: Option<i64>,
}

/// Whether `whose` is `me` or an agent `me` sponsors (the column `mine`).
pub(crate) fn is_mine(whose: &str, me: &str) -> Statement {
    Statement::new("SELECT (?1 = ?2 OR EXISTS (SELECT 1 FROM agents WHERE id = ?1 AND sponsor_id = ?2)) AS mine")
        .bind(whose)
        .bind(me)
}

/// One page of the conversations `whose` takes part in, most recently active
/// first, as [`ConversationRow`]s; one more than `limit` tells a next page.
pub(crate) fn conversations_page(whose: &str, before_at: i64, before_id: &str, limit: i64) -> Statement {
    Statement::new(
        "SELECT c.id, c.last_activity_at, c.canceled_at, \
           (SELECT GROUP_CONCAT(participant_id) FROM agent_conversation_participants WHERE conversation_id = c.id) AS participants, \
           (SELECT COUNT(*) FROM agent_messages WHERE conversation_id = c.id) AS message_count \
         FROM agent_conversation_participants p JOIN agent_conversations c ON c.id = p.conversation_id \
         WHERE p.participant_id = ?1 AND (c.last_activity_at, c.id) < (?2, ?3) \
         ORDER BY c.last_activity_at DESC, c.id DESC LIMIT ?4",
    )
    .bind(whose)
    .bind(before_at)
    .bind(before_id)
    .bind(limit + 1)
}

/// The conversation `id` as `me` may see it: its `canceled_at`, its
/// `participants` joined by commas, whether `me` `takes_part`, and whether
/// `me` `sees` it (takes part, or sponsors an agent that does).
pub(crate) fn conversation_seen_by(id: &str, me: &str, now_ms: i64) -> Statement {
    Statement::new(
        "SELECT c.canceled_at, \
           (SELECT GROUP_CONCAT(participant_id) FROM agent_conversation_participants WHERE conversation_id = c.id) AS participants, \
           EXISTS (SELECT 1 FROM agent_conversation_participants WHERE conversation_id = c.id AND participant_id = ?2) AS takes_part, \
           EXISTS (SELECT 1 FROM agent_conversation_participants p \
      LEFT JOIN agents a ON a.id = p.participant_id \
      WHERE p.conversation_id = ?3 AND (p.participant_id = ?2 OR a.sponsor_id = ?2)) AS sees \
         FROM agent_conversations c WHERE c.id = ?3 AND ?1 = ?1",
    )
    .bind(now_ms)
    .bind(me)
    .bind(id)
}

/// Every message of conversation `id`, oldest first.
pub(crate) fn conversation_messages(id: &str, now_ms: i64) -> Statement {
    messages_where(now_ms, "m.conversation_id = ?2 ORDER BY m.created_at, m.id").bind(id)
}

/// Cancels conversation `id` as `by`, unless it is canceled already.
pub(crate) fn cancel_conversation(id: &str, by: &str, now_ms: i64) -> Statement {
    Statement::new(
        "UPDATE agent_conversations SET canceled_at = ?2, canceled_by = ?3, last_activity_at = ?2 \
         WHERE id = ?1 AND canceled_at IS NULL",
    )
    .bind(id)
    .bind(now_ms)
    .bind(by)
}

/// Cancels what is still unfinished in conversation `id`: not expired, and
/// not a lapsed lease that had its attempts (failed, though not yet recorded so).
pub(crate) fn cancel_unfinished_messages(conversation_id: &str, now_ms: i64) -> Statement {
    let attempts = policy_sql(PolicyNumber::MaximumAttempts, "recipient_id");
    Statement::new(format!(
        "UPDATE agent_messages SET state = 'canceled', lease_expires_at = NULL, updated_at = ?2 \
         WHERE conversation_id = ?1 AND expires_at > ?2 \
           AND (state = 'queued' OR (state = 'leased' AND (lease_expires_at > ?2 OR attempts < {attempts})))"
    ))
    .bind(conversation_id)
    .bind(now_ms)
}

/// Marks a conversation active at `now_ms`.
pub(crate) fn conversation_active(conversation_id: &str, now_ms: i64) -> Statement {
    Statement::new("UPDATE agent_conversations SET last_activity_at = ?2 WHERE id = ?1")
        .bind(conversation_id)
        .bind(now_ms)
}
