//! An agent's own inbox: what it may be delivered now, claiming within its
//! policy's room, leases renewed and finished, and the scheduled sweep of what
//! expired or spent its attempts.

use crate::core::events::{Told, Topic};
use crate::core::ids::IdKind;
use crate::core::storage::{Statement, Value};

use super::shared::*;

// An agent's own inbox.

/// A message the recipient may be delivered now, as SQL over `m` (`?1` the time).
const DELIVERABLE: &str =
    "m.expires_at > ?1 AND (m.state = 'queued' OR (m.state = 'leased' AND m.lease_expires_at <= ?1))";

/// Records that the agent looked at its inbox at `now_ms`, unless it did
/// within `resolution_ms`.
pub(crate) fn agent_seen(agent_id: &str, now_ms: i64, resolution_ms: i64) -> Statement {
    Statement::new(
        "UPDATE agents SET last_seen_at = ?1 WHERE id = ?2 AND (last_seen_at IS NULL OR last_seen_at <= ?1 - ?3)",
    )
    .bind(now_ms)
    .bind(agent_id)
    .bind(resolution_ms)
}

/// One page of what waits for `agent_id` or is leased by it, oldest first,
/// after (`after_at`, `after_id`); one more than `limit` tells a next page.
pub(crate) fn inbox_page(agent_id: &str, now_ms: i64, after_at: i64, after_id: &str, limit: i64) -> Statement {
    messages_where(
        now_ms,
        "m.recipient_id = ?2 AND m.state IN ('queued', 'leased') AND m.expires_at > ?1 \
           AND (m.created_at, m.id) > (?3, ?4) \
         ORDER BY m.created_at, m.id LIMIT ?5",
    )
    .bind(agent_id)
    .bind(after_at)
    .bind(after_id)
    .bind(limit + 1)
}

/// The policy's room for a claim of `?3` messages by `?2` at `?1`, computed
/// inside each statement that needs it: what was asked for, less the live
/// leases over the lease cap, less the last minute's grants over the rate
/// cap; never negative (a negative LIMIT is no limit).
fn claim_room() -> String {
    format!(
        "MAX(0, MIN(?3, \
            {pending} - (SELECT COUNT(*) FROM agent_messages WHERE recipient_id = ?2 AND state = 'leased' AND lease_expires_at > ?1), \
            {rate} - (SELECT COUNT(*) FROM agent_messages WHERE recipient_id = ?2 AND lease_granted_at > ?1 - 60000)))",
        pending = policy_sql(PolicyNumber::PendingCap, "?2"),
        rate = policy_sql(PolicyNumber::RatePerMinute, "?2"),
    )
}

/// Whether anything is deliverable to `agent_id` now within the room a claim
/// of `wanted` has (the column `waiting`).
pub(crate) fn anything_to_claim(agent_id: &str, now_ms: i64, wanted: i64) -> Statement {
    Statement::new(format!(
        "SELECT (EXISTS (SELECT 1 FROM agent_messages m WHERE m.recipient_id = ?2 AND {DELIVERABLE}) \
           AND {} > 0) AS waiting",
        claim_room()
    ))
    .bind(now_ms)
    .bind(agent_id)
    .bind(wanted)
}

/// Records as failed the lapsed leases of `agent_id` that had their attempts.
pub(crate) fn fail_spent_leases(agent_id: &str, now_ms: i64) -> Statement {
    let attempts = policy_sql(PolicyNumber::MaximumAttempts, "?2");
    Statement::new(format!(
        "UPDATE agent_messages SET state = 'failed', updated_at = ?1 \
         WHERE recipient_id = ?2 AND state = 'leased' AND lease_expires_at <= ?1 AND attempts >= {attempts}"
    ))
    .bind(now_ms)
    .bind(agent_id)
}

/// Records as refused, for `reason`, the waiting messages to `agent_id` from
/// senders its allowlist does not name.
pub(crate) fn refuse_senders_not_allowed(agent_id: &str, now_ms: i64, reason: &str) -> Statement {
    Statement::new(
        "UPDATE agent_messages SET state = 'refused', reason = ?3, updated_at = ?1 \
         WHERE recipient_id = ?2 AND kind <> 'reply' AND state IN ('queued', 'leased') \
           AND (state = 'queued' OR lease_expires_at <= ?1) \
           AND (SELECT allowed_peers FROM agent_messaging_policies WHERE agent_id = ?2) IS NOT NULL \
           AND sender_id NOT IN (SELECT j.value FROM agent_messaging_policies p, json_each(p.allowed_peers) j \
                                  WHERE p.agent_id = ?2)",
    )
    .bind(now_ms)
    .bind(agent_id)
    .bind(reason)
}

/// Whoever sent each message `agent_id`'s claim at `now_ms` leased, as
/// `topic` (their own topic's key: an agent's or a person's) and `object` (the
/// message), read in the claim's own batch after its grant: what the claim
/// tells, queued for the endpoints subscribed there.
pub(crate) fn leased_requesters(agent_id: &str, now_ms: i64) -> Told {
    let agent_topic = Topic::Agent(String::new()).key();
    let person_topic = Topic::Person(String::new()).key();
    let agent_prefix = IdKind::Agent.prefix();
    (
        "SELECT (CASE WHEN substr(m.sender_id, 1, ?) = ? THEN ? ELSE ? END) || m.sender_id AS topic, m.id AS object \
         FROM agent_messages m WHERE m.recipient_id = ? AND m.state = 'leased' AND m.lease_granted_at = ?"
            .to_string(),
        vec![
            (agent_prefix.len() as i64).into(),
            agent_prefix.into(),
            agent_topic.into(),
            person_topic.into(),
            agent_id.into(),
            now_ms.into(),
        ],
    )
}

/// Leases to `agent_id` the oldest deliverable messages, as many as `wanted`
/// within the policy's room, for `lease_ms`; answers each as a [`MessageRow`].
pub(crate) fn grant_leases(agent_id: &str, now_ms: i64, wanted: i64, lease_ms: i64) -> Statement {
    Statement::new(format!(
        "UPDATE agent_messages SET state = 'leased', attempts = attempts + 1, fencing_token = fencing_token + 1, \
           lease_granted_at = ?1, lease_expires_at = ?1 + ?4, updated_at = ?1 \
         WHERE id IN (SELECT m.id FROM agent_messages m WHERE m.recipient_id = ?2 AND {DELIVERABLE} \
                      ORDER BY m.created_at, m.id LIMIT {room}) \
         RETURNING id, conversation_id, sender_id, recipient_id, kind, in_reply_to, content, state, reason, \
           attempts, fencing_token, lease_granted_at, lease_expires_at, created_at, updated_at, expires_at",
        room = claim_room()
    ))
    .bind(now_ms)
    .bind(agent_id)
    .bind(wanted)
    .bind(lease_ms)
}

/// The message `id` in `agent_id`'s inbox.
pub(crate) fn inbox_message(id: &str, agent_id: &str, now_ms: i64) -> Statement {
    messages_where(now_ms, "m.id = ?2 AND m.recipient_id = ?3").bind(id).bind(agent_id)
}

/// How a live lease ends or goes on.
pub(crate) enum LeaseChange<'a> {
    Acknowledged,
    /// Renewed for `lease_ms` from now, never past `longest_ms` after the grant.
    Renewed {
        lease_ms: i64,
        longest_ms: i64,
    },
    Answered {
        reply_id: &'a str,
    },
    Rejected {
        reason: &'a str,
    },
}

/// The guarded UPDATE every lease operation is: it matches only the live
/// lease of message `id` to `recipient_id` with `fencing_token`, so anything
/// stale changes no row.
pub(crate) fn change_live_lease(
    change: LeaseChange<'_>,
    id: &str,
    recipient_id: &str,
    fencing_token: i64,
    now_ms: i64,
) -> Statement {
    let (set, values): (&str, Vec<Value>) = match change {
        LeaseChange::Acknowledged => ("state = 'acknowledged', lease_expires_at = NULL", Vec::new()),
        LeaseChange::Renewed { lease_ms, longest_ms } => {
            ("lease_expires_at = MIN(?1 + ?5, lease_granted_at + ?6)", vec![lease_ms.into(), longest_ms.into()])
        }
        LeaseChange::Answered { reply_id } => {
            ("state = 'answered', lease_expires_at = NULL, reply_id = ?5", vec![reply_id.into()])
        }
        LeaseChange::Rejected { reason } => {
            ("state = 'rejected', lease_expires_at = NULL, reason = ?5", vec![reason.into()])
        }
    };
    let mut statement = Statement::new(format!(
        "UPDATE agent_messages SET {set}, updated_at = ?1 \
         WHERE id = ?2 AND recipient_id = ?3 AND state = 'leased' AND fencing_token = ?4 AND lease_expires_at > ?1"
    ))
    .bind(now_ms)
    .bind(id)
    .bind(recipient_id)
    .bind(fencing_token);
    for value in values {
        statement = statement.bind(value);
    }
    statement
}

/// A reply to a request, stored as a message of its own.
pub(crate) struct NewReply<'a> {
    pub id: &'a str,
    /// The request it answers.
    pub request_id: &'a str,
    pub content: &'a str,
    pub body_hash: &'a str,
    /// Whether the requester claims it from its inbox (an agent that asked
    /// over REST); otherwise it is delivered where it is shown.
    pub claimed_by_requester: bool,
    pub now_ms: i64,
    pub expires_at: i64,
}

/// Inserts `reply`, its conversation, parties and surface taken from the
/// request it answers.
pub(crate) fn insert_reply(reply: &NewReply<'_>) -> Statement {
    Statement::new(
        "INSERT INTO agent_messages (id, conversation_id, sender_id, recipient_id, kind, in_reply_to, content, \
           body_hash, idempotency_key, surface, state, created_at, updated_at, expires_at) \
         SELECT ?1, conversation_id, recipient_id, sender_id, 'reply', id, ?2, ?3, 'reply:' || id, surface, \
           CASE WHEN surface = 'a2a' OR ?4 = 0 THEN 'delivered' ELSE 'queued' END, ?5, ?5, ?6 \
         FROM agent_messages WHERE id = ?7",
    )
    .bind(reply.id)
    .bind(reply.content)
    .bind(reply.body_hash)
    .bind(i64::from(reply.claimed_by_requester))
    .bind(reply.now_ms)
    .bind(reply.expires_at)
    .bind(reply.request_id)
}

// The scheduled sweep.

/// Records as expired every unfinished message past its expiry.
pub(crate) fn expire_unfinished(now_ms: i64) -> Statement {
    Statement::new(
        "UPDATE agent_messages SET state = 'expired', lease_expires_at = NULL, updated_at = ?1 \
         WHERE state IN ('queued', 'leased') AND expires_at <= ?1",
    )
    .bind(now_ms)
}

/// Records as failed every lapsed lease, whoever holds it, that had its attempts.
pub(crate) fn fail_every_spent_lease(now_ms: i64) -> Statement {
    Statement::new(format!(
        "UPDATE agent_messages SET state = 'failed', updated_at = ?1 \
         WHERE state = 'leased' AND lease_expires_at <= ?1 AND attempts >= {}",
        policy_sql(PolicyNumber::MaximumAttempts, "agent_messages.recipient_id")
    ))
    .bind(now_ms)
}
