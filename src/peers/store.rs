//! Every statement about peers, agents elsewhere and the outbox: the peers an
//! administrator connects, the cards the node read, the deliveries a send
//! queues and a run claims, the attempts it records, and the owner's view.

use mailroom_contract::api::{DEFAULT_MAXIMUM_ATTEMPTS, DEFAULT_REMOTE_PER_HOUR};

use super::remote::RemoteAddress;
use crate::core::storage::{Insert, Statement};

/// The columns a peer is read with.
const PEER_COLUMNS: &str =
    "id, domain, name, outbound_credential IS NOT NULL AS has_outbound_credential, created_at, created_by, revoked_at";

/// A peer as it is stored when connected.
pub(super) struct NewPeer<'a> {
    pub id: &'a str,
    pub domain: &'a str,
    pub name: &'a str,
    pub credential_hash: &'a str,
    pub outbound_credential: Option<&'a str>,
    pub created_at: i64,
    pub created_by: &'a str,
}

pub(super) fn peer_connected(peer: NewPeer<'_>) -> Statement {
    Insert::into("peers")
        .value("id", peer.id)
        .value("domain", peer.domain)
        .value("name", peer.name)
        .value("credential_hash", peer.credential_hash)
        .value("outbound_credential", peer.outbound_credential)
        .value("created_at", peer.created_at)
        .value("created_by", peer.created_by)
        .statement()
}

/// Every peer, connected ones first, newest first among each.
pub(super) fn peers() -> Statement {
    Statement::new(format!("SELECT {PEER_COLUMNS} FROM peers ORDER BY revoked_at IS NOT NULL, created_at DESC, id"))
}

/// The peer `id`, if there is one.
pub(super) fn peer(id: &str) -> Statement {
    Statement::new(format!("SELECT {PEER_COLUMNS} FROM peers WHERE id = ?1")).bind(id)
}

/// The live peer with `domain`, if there is one.
pub(super) fn live_peer_of(domain: &str) -> Statement {
    Statement::new(format!("SELECT {PEER_COLUMNS} FROM peers WHERE domain = ?1 AND revoked_at IS NULL")).bind(domain)
}

/// Sets a live peer's name and the credential it issued, where given.
pub(super) fn peer_changed(id: &str, name: Option<&str>, outbound_credential: Option<&str>) -> Statement {
    Statement::new(
        "UPDATE peers SET name = COALESCE(?2, name), outbound_credential = COALESCE(?3, outbound_credential) \
         WHERE id = ?1 AND revoked_at IS NULL",
    )
    .bind(id)
    .bind(name)
    .bind(outbound_credential)
}

/// Disconnects a live peer, forgetting the credential it issued.
pub(super) fn peer_disconnected(id: &str, by: &str, now_ms: i64) -> Statement {
    Statement::new(
        "UPDATE peers SET revoked_at = ?3, revoked_by = ?2, outbound_credential = NULL \
         WHERE id = ?1 AND revoked_at IS NULL",
    )
    .bind(id)
    .bind(by)
    .bind(now_ms)
}

/// Guard: the peer is still live (a disconnect between the read and the write).
pub(super) fn peer_live(id: &str) -> Statement {
    Statement::new("SELECT EXISTS (SELECT 1 FROM peers WHERE id = ?1 AND revoked_at IS NULL) AS held").bind(id)
}

/// Guard: this call is the one that disconnected the peer (not one before it).
pub(super) fn disconnected_by(id: &str, by: &str, now_ms: i64) -> Statement {
    Statement::new("SELECT EXISTS (SELECT 1 FROM peers WHERE id = ?1 AND revoked_by = ?2 AND revoked_at = ?3) AS held")
        .bind(id)
        .bind(by)
        .bind(now_ms)
}

/// Records the agent elsewhere at `address` (its id derived from its card),
/// and the peer it spoke for when it sent here.
pub fn remote_agent_seen(address: &RemoteAddress, peer_id: Option<&str>, now_ms: i64) -> Statement {
    Statement::new(
        "INSERT INTO remote_agents (id, card_url, domain, peer_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5) \
         ON CONFLICT (id) DO UPDATE SET peer_id = COALESCE(excluded.peer_id, peer_id)",
    )
    .bind(address.id.as_str())
    .bind(address.card_url.as_str())
    .bind(address.domain.as_str())
    .bind(peer_id)
    .bind(now_ms)
}

/// Queues a message for the agent elsewhere: its first attempt is due now.
pub fn delivery_queued(message_id: &str, remote_agent_id: &str, sender_id: &str, now_ms: i64) -> Statement {
    Insert::into("remote_deliveries")
        .value("message_id", message_id)
        .value("remote_agent_id", remote_agent_id)
        .value("sender_id", sender_id)
        .value("state", "pending")
        .value("next_attempt_at", now_ms)
        .value("created_at", now_ms)
        .value("updated_at", now_ms)
        .statement()
}

/// `SELECT remote_recipients, remote_per_hour, sent_in_hour`: the sender's
/// outbound policy (none for a person, who sends as themselves) and how many
/// messages it sent elsewhere in the hour before `now_ms`.
pub fn outbound_policy(sender_id: &str, now_ms: i64) -> Statement {
    Statement::new(format!(
        "SELECT (SELECT remote_recipients FROM agent_messaging_policies WHERE agent_id = ?1) AS remote_recipients, \
                COALESCE((SELECT remote_per_hour FROM agent_messaging_policies WHERE agent_id = ?1), \
                         {DEFAULT_REMOTE_PER_HOUR}) AS remote_per_hour, \
                (SELECT COUNT(*) FROM remote_deliveries WHERE sender_id = ?1 AND created_at > ?2 - 3600000) \
                  AS sent_in_hour"
    ))
    .bind(sender_id)
    .bind(now_ms)
}

/// Guard: the sender has not reached its hourly cap, counted as the commit
/// runs (two sends at once cannot both pass the last place).
pub fn within_hourly_cap(sender_id: &str, now_ms: i64) -> Statement {
    Statement::new(format!(
        "SELECT (SELECT COUNT(*) FROM remote_deliveries WHERE sender_id = ?1 AND created_at > ?2 - 3600000) \
           <= COALESCE((SELECT remote_per_hour FROM agent_messaging_policies WHERE agent_id = ?1), \
                       {DEFAULT_REMOTE_PER_HOUR}) AS held"
    ))
    .bind(sender_id)
    .bind(now_ms)
}

/// Claims up to `limit` deliveries due at `now_ms` until `claim_until` (a run
/// after an answer and the schedule never work on one at once); with
/// `pushed_since`, only those pushed since then.
pub fn claim_due(now_ms: i64, claim_until: i64, limit: usize, pushed_since: Option<i64>) -> Statement {
    Statement::new(
        "UPDATE remote_deliveries SET claimed_until = ?2 WHERE message_id IN ( \
           SELECT message_id FROM remote_deliveries \
           WHERE state IN ('pending', 'sent') AND next_attempt_at <= ?1 AND claimed_until <= ?1 \
             AND (?4 IS NULL OR pushed_at >= ?4) \
           ORDER BY next_attempt_at LIMIT ?3)",
    )
    .bind(now_ms)
    .bind(claim_until)
    .bind(limit as i64)
    .bind(pushed_since)
}

/// The live peer whose domain the card of `ra` is on (or beneath), as SQL
/// over `peers p`: the most specific, when two are.
const PEER_OF_CARD: &str = "p.revoked_at IS NULL AND (ra.domain = p.domain OR ra.domain LIKE '%.' || p.domain)";

/// The deliveries `claim_due` claimed until `claim_until`, with everything a
/// run needs: the message, the agent elsewhere and its cached card, the
/// credential its peer issued, whether the sender may still send, and what
/// its policy says now.
pub fn claimed(claim_until: i64) -> Statement {
    Statement::new(format!(
        "SELECT d.message_id, d.remote_agent_id, d.sender_id, d.state, d.attempts, d.remote_task_id, d.progress_key, \
                m.conversation_id, m.kind, m.content, m.state AS message_state, m.expires_at, \
                (SELECT e.remote_context_id FROM remote_deliveries e JOIN agent_messages n ON n.id = e.message_id \
                   WHERE n.conversation_id = m.conversation_id AND e.remote_agent_id = d.remote_agent_id \
                     AND e.remote_context_id IS NOT NULL ORDER BY e.updated_at DESC LIMIT 1) AS remote_context_id, \
                ra.card_url, ra.domain, ra.endpoint_url, ra.protocol_version, ra.card_fresh_until, \
                ra.push_notifications, \
                (SELECT p.outbound_credential FROM peers p WHERE {peer_of_card} ORDER BY length(p.domain) DESC LIMIT 1) \
                  AS outbound_credential, \
                (SELECT p.domain FROM peers p WHERE {peer_of_card} ORDER BY length(p.domain) DESC LIMIT 1) \
                  AS peer_domain, \
                CASE WHEN d.sender_id LIKE 'agt\\_%' ESCAPE '\\' THEN \
                       (SELECT CASE WHEN a.revoked_at IS NOT NULL THEN 'revoked' \
                                    WHEN a.paused_at IS NOT NULL THEN 'paused' END \
                          FROM agents a WHERE a.id = d.sender_id) \
                     ELSE (SELECT CASE WHEN u.disabled_at IS NOT NULL THEN 'disabled' END \
                             FROM people u WHERE u.id = d.sender_id) END AS sender_stopped, \
                (SELECT remote_recipients FROM agent_messaging_policies WHERE agent_id = d.sender_id) \
                  AS remote_recipients, \
                COALESCE((SELECT maximum_attempts FROM agent_messaging_policies WHERE agent_id = d.sender_id), \
                         {DEFAULT_MAXIMUM_ATTEMPTS}) AS maximum_attempts \
         FROM remote_deliveries d JOIN agent_messages m ON m.id = d.message_id \
              JOIN remote_agents ra ON ra.id = d.remote_agent_id \
         WHERE d.claimed_until = ?1 ORDER BY d.next_attempt_at",
        peer_of_card = PEER_OF_CARD,
    ))
    .bind(claim_until)
}

/// Records one attempt, numbered after the message's earlier ones.
pub fn attempt_recorded(message_id: &str, at_ms: i64, step: &str, outcome: &str, detail: &str) -> Statement {
    Statement::new(
        "INSERT INTO remote_delivery_attempts (message_id, attempt, at, step, attempt_outcome, detail) \
         SELECT ?1, COALESCE(MAX(attempt), 0) + 1, ?2, ?3, ?4, ?5 FROM remote_delivery_attempts WHERE message_id = ?1",
    )
    .bind(message_id)
    .bind(at_ms)
    .bind(step)
    .bind(outcome)
    .bind(detail)
}

/// Where a delivery stands after a run's attempt.
pub struct Progress<'a> {
    pub message_id: &'a str,
    /// When the run that made this progress claimed the delivery: a push
    /// since then makes it due at once, whatever `next_attempt_at` says.
    pub claimed_at: i64,
    pub state: &'a str,
    pub attempts: i64,
    pub next_attempt_at: i64,
    pub remote_task_id: Option<&'a str>,
    /// The agent elsewhere's context for the task, once learned.
    pub remote_context_id: Option<&'a str>,
    pub last_error: Option<&'a str>,
    pub now_ms: i64,
}

/// Records a delivery's progress and releases its claim.
pub fn delivery_progressed(progress: &Progress<'_>) -> Statement {
    Statement::new(
        "UPDATE remote_deliveries SET state = ?2, attempts = ?3, \
           next_attempt_at = CASE WHEN pushed_at >= ?8 THEN MIN(?4, ?7) ELSE ?4 END, \
           remote_task_id = COALESCE(?5, remote_task_id), last_error = ?6, updated_at = ?7, claimed_until = 0, \
           remote_context_id = COALESCE(?9, remote_context_id) \
         WHERE message_id = ?1",
    )
    .bind(progress.message_id)
    .bind(progress.state)
    .bind(progress.attempts)
    .bind(progress.next_attempt_at)
    .bind(progress.remote_task_id)
    .bind(progress.last_error)
    .bind(progress.now_ms)
    .bind(progress.claimed_at)
    .bind(progress.remote_context_id)
}

/// What the card of the agent elsewhere said, kept until `fresh_until`.
pub fn card_cached(remote_agent_id: &str, card: &CardRead<'_>, now_ms: i64, fresh_until: i64) -> Statement {
    Statement::new(
        "UPDATE remote_agents SET endpoint_url = ?2, protocol_version = ?3, name = COALESCE(?4, name), \
           push_notifications = ?5, card_read_at = ?6, card_fresh_until = ?7 WHERE id = ?1",
    )
    .bind(remote_agent_id)
    .bind(card.endpoint_url)
    .bind(card.protocol_version)
    .bind(card.name)
    .bind(i64::from(card.push_notifications))
    .bind(now_ms)
    .bind(fresh_until)
}

/// What a card said that the outbox keeps.
pub struct CardRead<'a> {
    pub endpoint_url: &'a str,
    pub protocol_version: &'a str,
    pub name: Option<&'a str>,
    pub push_notifications: bool,
}

/// Makes a delivery due now: the agent elsewhere pushed word that its task
/// changed (the push proved by its token), so the next run asks after it.
pub fn due_now(message_id: &str, now_ms: i64) -> Statement {
    Statement::new(
        "UPDATE remote_deliveries SET next_attempt_at = MIN(next_attempt_at, ?2), pushed_at = ?2 \
         WHERE message_id = ?1 AND state IN ('pending', 'sent')",
    )
    .bind(message_id)
    .bind(now_ms)
}

/// Records the task's latest word of progress as brought into the conversation.
pub fn progress_noted(message_id: &str, key: &str) -> Statement {
    Statement::new("UPDATE remote_deliveries SET progress_key = ?2 WHERE message_id = ?1").bind(message_id).bind(key)
}

/// Records that the agent elsewhere refused a push config: it is asked after
/// by polling until its card is read again.
pub fn pushes_refused(remote_agent_id: &str) -> Statement {
    Statement::new("UPDATE remote_agents SET push_notifications = 0 WHERE id = ?1").bind(remote_agent_id)
}

/// Forgets what the card said, so the next attempt reads it again (the
/// endpoint it named no longer answers as one).
pub fn card_forgotten(remote_agent_id: &str) -> Statement {
    Statement::new("UPDATE remote_agents SET card_fresh_until = 0 WHERE id = ?1").bind(remote_agent_id)
}

/// A page of the messages `sender_id` sent elsewhere, newest first, after
/// `cursor` (a message id), with the agent each went to and every attempt.
pub(super) fn deliveries_of(sender_id: &str, cursor: Option<&str>, limit: i64) -> Statement {
    Statement::new(
        "SELECT d.message_id, d.sender_id, d.state, d.remote_task_id, d.next_attempt_at, d.last_error, d.created_at, \
                ra.id AS remote_agent_id, ra.card_url, ra.domain, ra.name, \
                (SELECT json_group_array(json_object('attempt', t.attempt, 'at', t.at, 'step', t.step, \
                                                     'outcome', t.attempt_outcome, 'detail', t.detail)) \
                   FROM (SELECT * FROM remote_delivery_attempts WHERE message_id = d.message_id ORDER BY attempt) t) \
                  AS attempts \
         FROM remote_deliveries d JOIN remote_agents ra ON ra.id = d.remote_agent_id \
         WHERE d.sender_id = ?1 AND (?2 IS NULL OR d.message_id < ?2) \
         ORDER BY d.message_id DESC LIMIT ?3",
    )
    .bind(sender_id)
    .bind(cursor)
    .bind(limit + 1)
}
