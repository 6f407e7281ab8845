//! The owner plane: an agent's delivery policy, whether the node's card
//! lists it, its inbox in every state, and the agents a person sponsors.

use serde::Deserialize;

use crate::core::storage::Statement;

use super::shared::*;

// The owner plane.

/// An agent's messaging as its owner sees it.
#[derive(Deserialize)]
pub(crate) struct MessagingRow {
    pub id: String,
    pub name: String,
    pub sponsor_id: String,
    pub paused_at: Option<i64>,
    pub revoked_at: Option<i64>,
    pub last_seen_at: Option<i64>,
    pub allowed_peers: Option<String>,
    pub rate_per_minute: i64,
    pub pending_cap: i64,
    pub maximum_attempts: i64,
    pub waiting: i64,
    pub leased: i64,
    pub listed_on_node_card: i64,
    pub remote_recipients: Option<String>,
    pub remote_per_hour: i64,
}

/// The statement reading an agent's messaging (`?1` the time, `?2` the agent).
pub(crate) fn messaging_of(agent_id: &str, now_ms: i64) -> Statement {
    Statement::new(format!(
        "SELECT a.id, a.name, a.sponsor_id, a.paused_at, a.revoked_at, a.last_seen_at, \
           (SELECT allowed_peers FROM agent_messaging_policies WHERE agent_id = a.id) AS allowed_peers, \
           COALESCE((SELECT listed_on_node_card FROM agent_messaging_policies WHERE agent_id = a.id), 0) \
              AS listed_on_node_card, \
           (SELECT remote_recipients FROM agent_messaging_policies WHERE agent_id = a.id) AS remote_recipients, \
           COALESCE((SELECT remote_per_hour FROM agent_messaging_policies WHERE agent_id = a.id), \
                    {remote_per_hour}) AS remote_per_hour, \
           {rate} AS rate_per_minute, {pending} AS pending_cap, {attempts} AS maximum_attempts, \
           (SELECT COUNT(*) FROM agent_messages WHERE recipient_id = a.id AND expires_at > ?1 \
              AND (state = 'queued' OR (state = 'leased' AND lease_expires_at <= ?1 AND attempts < {attempts}))) \
              AS waiting, \
           (SELECT COUNT(*) FROM agent_messages WHERE recipient_id = a.id AND state = 'leased' \
              AND lease_expires_at > ?1) AS leased \
         FROM agents a WHERE a.id = ?2",
        rate = policy_sql(PolicyNumber::RatePerMinute, "a.id"),
        pending = policy_sql(PolicyNumber::PendingCap, "a.id"),
        attempts = policy_sql(PolicyNumber::MaximumAttempts, "a.id"),
        remote_per_hour = mailroom_contract::api::DEFAULT_REMOTE_PER_HOUR,
    ))
    .bind(now_ms)
    .bind(agent_id)
}

/// A policy as an owner's change leaves it: `row`'s numbers, written whole for
/// an agent without a policy, and otherwise only what the change names.
pub(crate) struct PolicyChange<'a> {
    pub agent_id: &'a str,
    pub allowed_peers: Option<&'a str>,
    pub rate_per_minute: i64,
    pub pending_cap: i64,
    pub maximum_attempts: i64,
    pub listed_on_node_card: i64,
    pub now_ms: i64,
    pub by: &'a str,
    /// Whether the change names the allowlist (a list, or everyone).
    pub allowlist_changes: bool,
    /// The numbers the change names, each `None` where it names none.
    pub named_rate_per_minute: Option<i64>,
    pub named_pending_cap: Option<i64>,
    pub named_maximum_attempts: Option<i64>,
    pub named_listed_on_node_card: Option<i64>,
    /// The outbound policy's list (JSON) when the change names it, and its cap.
    pub named_remote_recipients: Option<&'a str>,
    pub named_remote_per_hour: Option<i64>,
}

/// Writes an owner's change to a policy. Only what the change names is
/// written to an existing row, so two owners changing different parts of the
/// policy at once both keep their change; the placeholders of the conflict's
/// update are why this is not an `Insert`.
pub(crate) fn change_policy(change: &PolicyChange<'_>) -> Statement {
    Statement::new(
        "INSERT INTO agent_messaging_policies \
           (agent_id, allowed_peers, rate_per_minute, pending_cap, maximum_attempts, updated_at, updated_by, \
            listed_on_node_card, remote_recipients, remote_per_hour) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?12, ?14, ?15) \
         ON CONFLICT (agent_id) DO UPDATE SET \
           allowed_peers = CASE WHEN ?8 THEN excluded.allowed_peers ELSE allowed_peers END, \
           rate_per_minute = COALESCE(?9, rate_per_minute), pending_cap = COALESCE(?10, pending_cap), \
           maximum_attempts = COALESCE(?11, maximum_attempts), \
           listed_on_node_card = COALESCE(?13, listed_on_node_card), \
           remote_recipients = COALESCE(?14, remote_recipients), remote_per_hour = COALESCE(?15, remote_per_hour), \
           updated_at = excluded.updated_at, \
           updated_by = excluded.updated_by",
    )
    .bind(change.agent_id)
    .bind(change.allowed_peers)
    .bind(change.rate_per_minute)
    .bind(change.pending_cap)
    .bind(change.maximum_attempts)
    .bind(change.now_ms)
    .bind(change.by)
    .bind(i64::from(change.allowlist_changes))
    .bind(change.named_rate_per_minute)
    .bind(change.named_pending_cap)
    .bind(change.named_maximum_attempts)
    .bind(change.listed_on_node_card)
    .bind(change.named_listed_on_node_card)
    .bind(change.named_remote_recipients)
    .bind(change.named_remote_per_hour)
}

/// Whether agent `agent_id` exists (a row with `found`, or none).
pub(crate) fn agent_exists(agent_id: &str) -> Statement {
    Statement::new("SELECT 1 AS found FROM agents WHERE id = ?1").bind(agent_id)
}

/// One page of every message to `agent_id`, newest first, before
/// (`before_at`, `before_id`); one more than `limit` tells a next page.
pub(crate) fn owned_inbox_page(agent_id: &str, now_ms: i64, before_at: i64, before_id: &str, limit: i64) -> Statement {
    messages_where(
        now_ms,
        "m.recipient_id = ?2 AND (m.created_at, m.id) < (?3, ?4) \
         ORDER BY m.created_at DESC, m.id DESC LIMIT ?5",
    )
    .bind(agent_id)
    .bind(before_at)
    .bind(before_id)
    .bind(limit + 1)
}

/// An agent as its sponsor's list shows it.
#[derive(Deserialize)]
pub(crate) struct SponsoredRow {
    pub id: String,
    pub name: String,
    pub paused_at: Option<i64>,
    pub revoked_at: Option<i64>,
    pub last_seen_at: Option<i64>,
}

/// The agents `person_id` sponsors, newest first, as [`SponsoredRow`]s.
pub(crate) fn sponsored_agents(person_id: &str) -> Statement {
    Statement::new(
        "SELECT id, name, paused_at, revoked_at, last_seen_at FROM agents WHERE sponsor_id = ?1 \
         ORDER BY created_at DESC, id DESC",
    )
    .bind(person_id)
}

/// An agent its owner lists on the node's own A2A card.
#[derive(Deserialize)]
pub struct ListedAgent {
    pub id: String,
    pub name: String,
}

/// The agents whose owners list them on the node's A2A card and that are not
/// revoked, oldest first, as [`ListedAgent`]s.
pub(crate) fn listed_on_node_card() -> Statement {
    Statement::new(
        "SELECT a.id, a.name FROM agents a JOIN agent_messaging_policies p ON p.agent_id = a.id \
         WHERE p.listed_on_node_card = 1 AND a.revoked_at IS NULL ORDER BY a.created_at, a.id",
    )
}
