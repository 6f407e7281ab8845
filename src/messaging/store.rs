//! Agent messaging's SQL: every statement over `agent_messages`,
//! `agent_conversations`, their participants and `agent_messaging_policies`,
//! and the rows they read. Each function only builds a statement: the handler
//! decides what rides in one round trip.
//!
//! Messaging also reads what it needs of an agent's own row (its sponsor,
//! whether it is paused or revoked) and writes when the agent last looked at
//! its inbox (`last_seen_at`): the delivery policy is judged against them inside
//! the same statements, so they are spelled here beside the policy they serve.

use mailroom_contract::api::{
    DEFAULT_MAXIMUM_ATTEMPTS, DEFAULT_PENDING_CAP, DEFAULT_RATE_PER_MINUTE, MAXIMUM_WAITING_MESSAGES,
};
use serde::Deserialize;

use crate::authz::tuples::{self, Holder};
use crate::core::storage::{Insert, Statement, Value};

/// The columns every reading of a message selects, from `agent_messages m`
/// joined as [`MESSAGE_FROM`] has it. `?1` is the time now: the recipient's
/// caps are judged at it for a waiting message's `held_because`.
const MESSAGE_COLUMNS: &str = "m.id, m.conversation_id, m.sender_id, m.recipient_id, m.kind, \
    m.in_reply_to, m.content, m.state, m.reason, m.attempts, m.fencing_token, m.lease_granted_at, m.lease_expires_at, \
    m.created_at, m.updated_at, m.expires_at, r.id AS reply_id, r.content AS reply_content, \
    r.created_at AS reply_created_at";

/// The tables [`MESSAGE_COLUMNS`] reads from.
const MESSAGE_FROM: &str = "FROM agent_messages m LEFT JOIN agent_messages r ON r.id = m.reply_id";

/// Why a waiting message is held back now, as SQL over `m` (`?1` the time):
/// the recipient is paused, holds as many live leases as its cap, or was
/// delivered its rate in the last minute. NULL for a message not waiting.
fn held_because_sql() -> String {
    format!(
        "{} AS held_because, {} AS maximum_attempts",
        held_because_expression(),
        policy_sql(PolicyNumber::MaximumAttempts, "m.recipient_id"),
    )
}

/// [`held_because_sql`]'s reason, as one expression.
fn held_because_expression() -> String {
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
fn state_now_sql() -> String {
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
enum PolicyNumber {
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
fn policy_sql(number: PolicyNumber, agent: &str) -> String {
    let (column, default) = number.column_and_default();
    format!("COALESCE((SELECT {column} FROM agent_messaging_policies WHERE agent_id = {agent}), {default})")
}

/// A message as stored, with its reply and what its recipient's policy says now.
#[derive(Clone, Debug, Default, Deserialize)]
pub(super) struct MessageRow {
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
}

/// Messages as a [`MessageRow`] reads them at `now_ms` (`?1`), where
/// `condition` (over `m`, its parameters from `?2`) holds, in `order`.
fn messages_where(now_ms: i64, condition: &str) -> Statement {
    Statement::new(format!("SELECT {MESSAGE_COLUMNS}, {} {MESSAGE_FROM} WHERE {condition}", held_because_sql()))
        .bind(now_ms)
}

// Who sees what.

/// Whether the holder administers the node, read beside what it asks for;
/// nobody does for a caller who holds nothing.
pub(super) fn administers(holder: Option<&Holder>) -> Statement {
    match holder {
        Some(holder) => tuples::is_administrator(holder),
        None => Statement::new("SELECT 0 AS held"),
    }
}

/// The message `id` with whether `me` sponsors its sender or its recipient
/// (the column `sponsors`), at `now_ms`.
pub(super) fn message_with_sponsorship(id: &str, me: &str, now_ms: i64) -> Statement {
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
pub(super) struct SentFilter<'a> {
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
pub(super) fn sent_page(filter: &SentFilter<'_>, before_at: i64, before_id: &str, limit: i64) -> Statement {
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
pub(super) fn sent_total(filter: &SentFilter<'_>) -> Statement {
    filter.bound(Statement::new(format!("SELECT COUNT(*) AS total FROM agent_messages m WHERE {}", sent_matching())))
}

/// A conversation as its list shows it.
#[derive(Deserialize)]
pub(super) struct ConversationRow {
    pub id: String,
    /// The participants' ids, joined by commas.
    pub participants: String,
    pub message_count: i64,
    pub last_activity_at: i64,
    pub canceled_at: Option<i64>,
}

/// Whether `whose` is `me` or an agent `me` sponsors (the column `mine`).
pub(super) fn is_mine(whose: &str, me: &str) -> Statement {
    Statement::new("SELECT (?1 = ?2 OR EXISTS (SELECT 1 FROM agents WHERE id = ?1 AND sponsor_id = ?2)) AS mine")
        .bind(whose)
        .bind(me)
}

/// One page of the conversations `whose` takes part in, most recently active
/// first, as [`ConversationRow`]s; one more than `limit` tells a next page.
pub(super) fn conversations_page(whose: &str, before_at: i64, before_id: &str, limit: i64) -> Statement {
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
pub(super) fn conversation_seen_by(id: &str, me: &str, now_ms: i64) -> Statement {
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
pub(super) fn conversation_messages(id: &str, now_ms: i64) -> Statement {
    messages_where(now_ms, "m.conversation_id = ?2 ORDER BY m.created_at, m.id").bind(id)
}

/// Cancels conversation `id` as `by`, unless it is canceled already.
pub(super) fn cancel_conversation(id: &str, by: &str, now_ms: i64) -> Statement {
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
pub(super) fn cancel_unfinished_messages(conversation_id: &str, now_ms: i64) -> Statement {
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
pub(super) fn conversation_active(conversation_id: &str, now_ms: i64) -> Statement {
    Statement::new("UPDATE agent_conversations SET last_activity_at = ?2 WHERE id = ?1")
        .bind(conversation_id)
        .bind(now_ms)
}

// An agent's own inbox.

/// A message the recipient may be delivered now, as SQL over `m` (`?1` the time).
const DELIVERABLE: &str =
    "m.expires_at > ?1 AND (m.state = 'queued' OR (m.state = 'leased' AND m.lease_expires_at <= ?1))";

/// Records that the agent looked at its inbox at `now_ms`, unless it did
/// within `resolution_ms`.
pub(super) fn agent_seen(agent_id: &str, now_ms: i64, resolution_ms: i64) -> Statement {
    Statement::new(
        "UPDATE agents SET last_seen_at = ?1 WHERE id = ?2 AND (last_seen_at IS NULL OR last_seen_at <= ?1 - ?3)",
    )
    .bind(now_ms)
    .bind(agent_id)
    .bind(resolution_ms)
}

/// One page of what waits for `agent_id` or is leased by it, oldest first,
/// after (`after_at`, `after_id`); one more than `limit` tells a next page.
pub(super) fn inbox_page(agent_id: &str, now_ms: i64, after_at: i64, after_id: &str, limit: i64) -> Statement {
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
pub(super) fn anything_to_claim(agent_id: &str, now_ms: i64, wanted: i64) -> Statement {
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
pub(super) fn fail_spent_leases(agent_id: &str, now_ms: i64) -> Statement {
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
pub(super) fn refuse_senders_not_allowed(agent_id: &str, now_ms: i64, reason: &str) -> Statement {
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

/// Leases to `agent_id` the oldest deliverable messages, as many as `wanted`
/// within the policy's room, for `lease_ms`; answers each as a [`MessageRow`].
pub(super) fn grant_leases(agent_id: &str, now_ms: i64, wanted: i64, lease_ms: i64) -> Statement {
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
pub(super) fn inbox_message(id: &str, agent_id: &str, now_ms: i64) -> Statement {
    messages_where(now_ms, "m.id = ?2 AND m.recipient_id = ?3").bind(id).bind(agent_id)
}

/// How a live lease ends or goes on.
pub(super) enum LeaseChange<'a> {
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
pub(super) fn change_live_lease(
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
pub(super) struct NewReply<'a> {
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
pub(super) fn insert_reply(reply: &NewReply<'_>) -> Statement {
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

// The owner plane.

/// An agent's messaging as its owner sees it.
#[derive(Deserialize)]
pub(super) struct MessagingRow {
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
}

/// The statement reading an agent's messaging (`?1` the time, `?2` the agent).
pub(super) fn messaging_of(agent_id: &str, now_ms: i64) -> Statement {
    Statement::new(format!(
        "SELECT a.id, a.name, a.sponsor_id, a.paused_at, a.revoked_at, a.last_seen_at, \
           (SELECT allowed_peers FROM agent_messaging_policies WHERE agent_id = a.id) AS allowed_peers, \
           COALESCE((SELECT listed_on_node_card FROM agent_messaging_policies WHERE agent_id = a.id), 0) \
              AS listed_on_node_card, \
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
    ))
    .bind(now_ms)
    .bind(agent_id)
}

/// A policy as an owner's change leaves it: `row`'s numbers, written whole for
/// an agent without a policy, and otherwise only what the change names.
pub(super) struct PolicyChange<'a> {
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
}

/// Writes an owner's change to a policy. Only what the change names is
/// written to an existing row, so two owners changing different parts of the
/// policy at once both keep their change; the placeholders of the conflict's
/// update are why this is not an `Insert`.
pub(super) fn change_policy(change: &PolicyChange<'_>) -> Statement {
    Statement::new(
        "INSERT INTO agent_messaging_policies \
           (agent_id, allowed_peers, rate_per_minute, pending_cap, maximum_attempts, updated_at, updated_by, \
            listed_on_node_card) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?12) \
         ON CONFLICT (agent_id) DO UPDATE SET \
           allowed_peers = CASE WHEN ?8 THEN excluded.allowed_peers ELSE allowed_peers END, \
           rate_per_minute = COALESCE(?9, rate_per_minute), pending_cap = COALESCE(?10, pending_cap), \
           maximum_attempts = COALESCE(?11, maximum_attempts), \
           listed_on_node_card = COALESCE(?13, listed_on_node_card), updated_at = excluded.updated_at, \
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
}

/// Whether agent `agent_id` exists (a row with `found`, or none).
pub(super) fn agent_exists(agent_id: &str) -> Statement {
    Statement::new("SELECT 1 AS found FROM agents WHERE id = ?1").bind(agent_id)
}

/// One page of every message to `agent_id`, newest first, before
/// (`before_at`, `before_id`); one more than `limit` tells a next page.
pub(super) fn owned_inbox_page(agent_id: &str, now_ms: i64, before_at: i64, before_id: &str, limit: i64) -> Statement {
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
pub(super) struct SponsoredRow {
    pub id: String,
    pub name: String,
    pub paused_at: Option<i64>,
    pub revoked_at: Option<i64>,
    pub last_seen_at: Option<i64>,
}

/// The agents `person_id` sponsors, newest first, as [`SponsoredRow`]s.
pub(super) fn sponsored_agents(person_id: &str) -> Statement {
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
pub(super) fn listed_on_node_card() -> Statement {
    Statement::new(
        "SELECT a.id, a.name FROM agents a JOIN agent_messaging_policies p ON p.agent_id = a.id \
         WHERE p.listed_on_node_card = 1 AND a.revoked_at IS NULL ORDER BY a.created_at, a.id",
    )
}

// Sending.

/// The recipient `recipient_id` at `now_ms`: its id, whether it is `live`
/// (not revoked, connected, not expired), and its `allowed_peers`.
pub(super) fn recipient(recipient_id: &str, now_ms: i64) -> Statement {
    Statement::new(
        "SELECT a.id, \
           (a.revoked_at IS NULL AND a.connection_pending_until IS NULL \
            AND (a.expires_at IS NULL OR a.expires_at > ?1)) AS live, \
           (SELECT allowed_peers FROM agent_messaging_policies WHERE agent_id = a.id) AS allowed_peers \
         FROM agents a WHERE a.id = ?2",
    )
    .bind(now_ms)
    .bind(recipient_id)
}

/// The message `sender` sent earlier under `key`, with its `body_hash`.
pub(super) fn sent_under_key(sender: &str, key: &str, now_ms: i64) -> Statement {
    Statement::new(format!(
        "SELECT {MESSAGE_COLUMNS}, {}, m.body_hash {MESSAGE_FROM} WHERE m.sender_id = ?2 AND m.idempotency_key = ?3",
        held_because_sql()
    ))
    .bind(now_ms)
    .bind(sender)
    .bind(key)
}

/// The conversation `conversation_id` as `sender` continues it: its
/// `canceled_at` and whether `sender` `takes_part`.
pub(super) fn conversation_continued(conversation_id: &str, sender: &str) -> Statement {
    Statement::new(
        "SELECT c.canceled_at, EXISTS (SELECT 1 FROM agent_conversation_participants p \
                WHERE p.conversation_id = c.id AND p.participant_id = ?2) AS takes_part \
         FROM agent_conversations c WHERE c.id = ?1",
    )
    .bind(conversation_id)
    .bind(sender)
}

/// A new conversation `id`, started by `started_by` at `now_ms`.
pub(super) fn start_conversation(id: &str, started_by: &str, now_ms: i64) -> Statement {
    Insert::into("agent_conversations")
        .value("id", id)
        .value("started_by", started_by)
        .value("created_at", now_ms)
        .value("last_activity_at", now_ms)
        .statement()
}

/// The condition a commit continuing conversation `id` keeps: it is not canceled.
pub(super) fn conversation_not_canceled(id: &str) -> Statement {
    Statement::new("(SELECT canceled_at FROM agent_conversations WHERE id = ?) IS NULL").bind(id)
}

/// A message as sent: every column but those a lease, a reply or a
/// conversation's later life sets.
pub(super) struct NewMessage<'a> {
    pub id: &'a str,
    pub conversation_id: &'a str,
    pub sender_id: &'a str,
    pub recipient_id: &'a str,
    pub kind: &'a str,
    pub content: &'a str,
    pub body_hash: &'a str,
    pub idempotency_key: &'a str,
    pub surface: &'a str,
    pub state: &'a str,
    pub reason: Option<&'a str>,
    pub now_ms: i64,
    pub expires_at: i64,
}

/// The row of a message sent.
pub(super) fn new_message(message: &NewMessage<'_>) -> Insert {
    Insert::into("agent_messages")
        .value("id", message.id)
        .value("conversation_id", message.conversation_id)
        .value("sender_id", message.sender_id)
        .value("recipient_id", message.recipient_id)
        .value("kind", message.kind)
        .value("content", message.content)
        .value("body_hash", message.body_hash)
        .value("idempotency_key", message.idempotency_key)
        .value("surface", message.surface)
        .value("state", message.state)
        .value("reason", message.reason)
        .value("created_at", message.now_ms)
        .value("updated_at", message.now_ms)
        .value("expires_at", message.expires_at)
}

/// Records who takes part in a conversation (a no-op for those already in it).
pub(super) fn participants(conversation_id: &str, ids: &[&str]) -> Statement {
    let values: Vec<String> = (0..ids.len()).map(|index| format!("(?1, ?{})", index + 2)).collect();
    let values = values.join(", ");
    let mut statement = Statement::new(format!(
        "INSERT OR IGNORE INTO agent_conversation_participants (conversation_id, participant_id) VALUES {values}"
    ))
    .bind(conversation_id);
    for id in ids {
        statement = statement.bind(*id);
    }
    statement
}

/// The condition a commit sending to `recipient_id` keeps: its inbox holds no
/// more unfinished messages than the node keeps.
pub(super) fn inbox_has_room(recipient_id: &str) -> Statement {
    Statement::new(format!(
        "(SELECT COUNT(*) FROM agent_messages WHERE recipient_id = ? AND state IN ('queued', 'leased')) <= {MAXIMUM_WAITING_MESSAGES}"
    ))
    .bind(recipient_id)
}

// The scheduled sweep.

/// Records as expired every unfinished message past its expiry.
pub(super) fn expire_unfinished(now_ms: i64) -> Statement {
    Statement::new(
        "UPDATE agent_messages SET state = 'expired', lease_expires_at = NULL, updated_at = ?1 \
         WHERE state IN ('queued', 'leased') AND expires_at <= ?1",
    )
    .bind(now_ms)
}

/// Records as failed every lapsed lease, whoever holds it, that had its attempts.
pub(super) fn fail_every_spent_lease(now_ms: i64) -> Statement {
    Statement::new(format!(
        "UPDATE agent_messages SET state = 'failed', updated_at = ?1 \
         WHERE state = 'leased' AND lease_expires_at <= ?1 AND attempts >= {}",
        policy_sql(PolicyNumber::MaximumAttempts, "agent_messages.recipient_id")
    ))
    .bind(now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::SqliteDatabase;

    /// A message is written whole from one place, the send: every column of
    /// the table is in its row but those its later life sets.
    #[test]
    fn a_sent_message_names_every_column_but_those_its_later_life_sets() {
        let message = NewMessage {
            id: "",
            conversation_id: "",
            sender_id: "",
            recipient_id: "",
            kind: "",
            content: "",
            body_hash: "",
            idempotency_key: "",
            surface: "",
            state: "",
            reason: None,
            now_ms: 0,
            expires_at: 0,
        };
        let mut named: Vec<String> = new_message(&message).columns().iter().map(|column| column.to_string()).collect();
        named.extend(
            ["in_reply_to", "attempts", "fencing_token", "lease_granted_at", "lease_expires_at", "reply_id"]
                .map(str::to_string),
        );
        named.sort();
        let mut in_the_table = SqliteDatabase::migrated().column_names("agent_messages");
        in_the_table.sort();
        assert_eq!(named, in_the_table);
    }
}
