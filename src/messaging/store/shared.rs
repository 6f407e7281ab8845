//! What every messaging statement shares: the columns a message is read
//! with, why a waiting message is held back and its state now as SQL, the
//! numbers of an agent's delivery policy, and the row a message reads as.

use mailroom_contract::api::{DEFAULT_MAXIMUM_ATTEMPTS, DEFAULT_PENDING_CAP, DEFAULT_RATE_PER_MINUTE};
use serde::Deserialize;

use crate::core::storage::Statement;

/// The columns every reading of a message selects, from `agent_messages m`
/// joined as [`MESSAGE_FROM`] has it. `?1` is the time now: the recipient's
/// caps are judged at it for a waiting message's `held_because`.
pub(super) const MESSAGE_COLUMNS: &str = "m.id, m.conversation_id, m.sender_id, m.recipient_id, m.kind, \
    m.in_reply_to, m.content, m.state, m.reason, m.attempts, m.fencing_token, m.lease_granted_at, m.lease_expires_at, \
    m.created_at, m.updated_at, m.expires_at, r.id AS reply_id, r.content AS reply_content, \
    r.created_at AS reply_created_at, ra.id AS remote_id, ra.card_url AS remote_card_url, \
    ra.domain AS remote_domain, ra.name AS remote_name";

/// The tables [`MESSAGE_COLUMNS`] reads from: the message, its reply, and the
/// agent elsewhere that sent it or is its recipient (never both).
pub(super) const MESSAGE_FROM: &str = "FROM agent_messages m LEFT JOIN agent_messages r ON r.id = m.reply_id \
    LEFT JOIN remote_agents ra ON ra.id IN (m.sender_id, m.recipient_id)";

/// Why a waiting message is held back now, as SQL over `m` (`?1` the time):
/// the recipient is paused, holds as many live leases as its cap, or was
/// delivered its rate in the last minute. NULL for a message not waiting.
pub(super) fn held_because_sql() -> String {
    format!(
        "{} AS held_because, {} AS maximum_attempts",
        held_because_expression(),
        policy_sql(PolicyNumber::MaximumAttempts, "m.recipient_id"),
    )
}

/// [`held_because_sql`]'s reason, as one expression.
pub(super) fn held_because_expression() -> String {
    format!(
        "CASE WHEN m.state = 'queued' OR (m.state = 'leased' AND m.lease_expires_at <= ?1) THEN \
           CASE WHEN (SELECT paused_at FROM agents WHERE id = m.recipient_id) IS NOT NULL THEN 'paused' \
                WHEN (SELECT COUNT(*) FROM agent_messages f WHERE f.recipient_id = m.recipient_id \
                        AND f.state = 'leased' AND f.lease_expires_at > ?1) >= {pending} THEN 'pending_cap' \
                WHEN (SELECT COUNT(*) FROM agent_messages f WHERE f.recipient_id = m.recipient_id \
                        AND f.lease_granted_at > ?1 - 60000) >= {rate} THEN 'rate_cap' END END",
        pending = policy_sql(PolicyNumber::PendingCap, "m.recipient_id"),
        rate = policy_sql(PolicyNumber::RatePerMinute, "m.recipient_id"),
    )
}

/// The state a message of `m` is presented in at `?1`, as one SQL expression,
/// for filtering by it: `MessageRow::state_at` in SQL, decided in the same
/// order (expired, leased, failed, held or queued, as stored).
pub(super) fn state_now_sql() -> String {
    format!(
        "CASE WHEN m.state IN ('queued', 'leased') AND m.expires_at <= ?1 THEN 'expired' \
              WHEN m.state = 'leased' AND m.lease_expires_at > ?1 THEN 'leased' \
              WHEN m.state = 'leased' AND m.attempts >= {attempts} THEN 'failed' \
              WHEN m.state IN ('queued', 'leased') THEN CASE WHEN ({held}) IS NULL THEN 'queued' ELSE 'held' END \
              ELSE m.state END",
        attempts = policy_sql(PolicyNumber::MaximumAttempts, "m.recipient_id"),
        held = held_because_expression(),
    )
}

/// The numbers of an agent's delivery policy: each its column and its default,
/// stated once for every statement that reads one.
#[derive(Clone, Copy, Debug)]
pub(super) enum PolicyNumber {
    RatePerMinute,
    PendingCap,
    MaximumAttempts,
}

impl PolicyNumber {
    fn column_and_default(self) -> (&'static str, i64) {
        match self {
            PolicyNumber::RatePerMinute => ("rate_per_minute", DEFAULT_RATE_PER_MINUTE),
            PolicyNumber::PendingCap => ("pending_cap", DEFAULT_PENDING_CAP),
            PolicyNumber::MaximumAttempts => ("maximum_attempts", DEFAULT_MAXIMUM_ATTEMPTS),
        }
    }
}

/// One number of the policy of the agent `agent` (an SQL expression) as SQL:
/// its owner's choice, or the default.
pub(super) fn policy_sql(number: PolicyNumber, agent: &str) -> String {
    let (column, default) = number.column_and_default();
    format!("COALESCE((SELECT {column} FROM agent_messaging_policies WHERE agent_id = {agent}), {default})")
}

/// A message as stored, with its reply and what its recipient's policy says now.
#[derive(Clone, Debug, Default, Deserialize)]
pub(crate) struct MessageRow {
    pub id: String,
    pub conversation_id: String,
    pub sender_id: String,
    pub recipient_id: String,
    pub kind: String,
    pub in_reply_to: Option<String>,
    pub content: String,
    pub state: String,
    pub reason: Option<String>,
    pub attempts: i64,
    pub fencing_token: i64,
    #[serde(default)]
    pub lease_granted_at: Option<i64>,
    pub lease_expires_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    pub expires_at: i64,
    #[serde(default)]
    pub reply_id: Option<String>,
    #[serde(default)]
    pub reply_content: Option<String>,
    #[serde(default)]
    pub reply_created_at: Option<i64>,
    #[serde(default)]
    pub held_because: Option<String>,
    #[serde(default)]
    pub maximum_attempts: Option<i64>,
    #[serde(default)]
    pub remote_id: Option<String>,
    #[serde(default)]
    pub remote_card_url: Option<String>,
    #[serde(default)]
    pub remote_domain: Option<String>,
    #[serde(default)]
    pub remote_name: Option<String>,
}

/// Messages as a [`MessageRow`] reads them at `now_ms` (`?1`), where
/// `condition` (over `m`, its parameters from `?2`) holds, in `order`.
pub(super) fn messages_where(now_ms: i64, condition: &str) -> Statement {
    Statement::new(format!("SELECT {MESSAGE_COLUMNS}, {} {MESSAGE_FROM} WHERE {condition}", held_because_sql()))
        .bind(now_ms)
}
