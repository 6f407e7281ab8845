//! An agent's own inbox: what waits for it, claims as fenced leases, and the
//! four ways a lease ends or goes on (acknowledge, reply, reject, renew).
//!
//! A claim is one statement: an UPDATE of the oldest deliverable messages whose
//! LIMIT is the recipient's policy computed inside it (what it asked for, less
//! what its lease cap and its rate cap leave), so two claims racing for one
//! message cannot both win, and no claim exceeds a cap, whatever runs beside
//! it. In the same batch, lapsed leases that had their attempts are recorded as
//! failed and waiting messages from senders the allowlist no longer names are
//! recorded as refused: policy at delivery.
//!
//! Acknowledge, renew, reply and reject are each one guarded UPDATE that
//! matches only the live lease with its current fencing token. The first round
//! trip reads the message beside the credential so a refusal can say what is
//! stale; the commit's guard is what decides, so a lease that lapses or is
//! re-granted in between is refused too.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{
    AckAgentMessage, AgentMessageKind, AgentMessageList, AgentMessageState, ClaimAgentMessages, ClaimedAgentMessages,
    DEFAULT_LEASE_SECONDS, DEFAULT_MESSAGE_EXPIRY_SECONDS, MAXIMUM_CLAIM, MAXIMUM_LEASE_SECONDS,
    REJECTION_REASON_MAXIMUM, RejectAgentMessage, RenewAgentLease, ReplyToAgentMessage,
};
use serde_json::json;

use super::send::NOT_ALLOWED;
use super::{
    MESSAGE_COLUMNS, MESSAGE_FROM, MessageRow, MessagingError, PolicyNumber, content_text, held_because_sql, in_range,
    inbox_owner, policy_sql,
};
use crate::core::context::Context;
use crate::core::crypto::sha256_hex;
use crate::core::http::Response;
use crate::core::ids::{IdKind, new_id};
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::storage::Statement;

/// A message the recipient may be delivered now, as SQL over `m` (`?1` the time).
const DELIVERABLE: &str =
    "m.expires_at > ?1 AND (m.state = 'queued' OR (m.state = 'leased' AND m.lease_expires_at <= ?1))";

/// How often, at most, an agent's `last_seen_at` is written: once a minute.
const LAST_SEEN_RESOLUTION_MS: i64 = 60_000;

/// Records that the agent looked at its inbox, after the answer and at most
/// once a minute, so polling never writes on every call.
fn seen(context: &mut Context<'_>, agent_id: &str) {
    let now = context.now_ms();
    context.defer_write(
        Statement::new(
            "UPDATE agents SET last_seen_at = ?1 WHERE id = ?2 AND (last_seen_at IS NULL OR last_seen_at <= ?1 - ?3)",
        )
        .bind(now)
        .bind(agent_id)
        .bind(LAST_SEEN_RESOLUTION_MS),
    );
}

/// `GET /api/agent-inbox`: what waits for the calling agent or is leased by it,
/// oldest first.
pub async fn list_inbox(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let agent_id = inbox_owner(context.caller())?;
    let limit = paging::limit(context)?;
    let (after_at, after_id) = paging::cursor(context, IdKind::AgentMessage, i64::MIN)?;
    let now = context.now_ms();
    let page = Statement::new(format!(
        "SELECT {MESSAGE_COLUMNS}, {} {MESSAGE_FROM} \
         WHERE m.recipient_id = ?2 AND m.state IN ('queued', 'leased') AND m.expires_at > ?1 \
           AND (m.created_at, m.id) > (?3, ?4) \
         ORDER BY m.created_at, m.id LIMIT ?5",
        held_because_sql()
    ))
    .bind(now)
    .bind(agent_id.as_str())
    .bind(after_at)
    .bind(after_id)
    .bind(limit + 1);
    let [page] = context.read_array([page]).await?;
    let mut rows: Vec<MessageRow> = page.decode_all().map_err(|error| context.internal(error))?;
    // A lease that lapsed on its last attempt has failed: no longer waiting.
    rows.retain(|row| row.state_at(now).0 != AgentMessageState::Failed);
    let next_cursor = paging::cut(&mut rows, limit, |row| (row.created_at, row.id.as_str()));
    seen(context, &agent_id);
    Ok(context.json(&AgentMessageList { messages: rows.iter().map(|row| row.present(now)).collect(), next_cursor }))
}

/// `POST /api/agent-inbox/leases`.
pub async fn claim(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let body: ClaimAgentMessages = context.optional_body()?;
    let agent_id = inbox_owner(context.caller())?;
    let wanted = in_range("max", body.max, 1, (1, MAXIMUM_CLAIM))?;
    let lease_seconds =
        in_range("lease_seconds", body.lease_seconds, DEFAULT_LEASE_SECONDS, (1, MAXIMUM_LEASE_SECONDS))?;
    let now = context.now_ms();
    seen(context, &agent_id);

    // The policy's room, computed inside each statement that needs it: what
    // was asked for, less the live leases over the lease cap, less the last
    // minute's grants over the rate cap; never negative (a negative LIMIT is
    // no limit).
    let room = format!(
        "MAX(0, MIN(?3, \
            {pending} - (SELECT COUNT(*) FROM agent_messages WHERE recipient_id = ?2 AND state = 'leased' AND lease_expires_at > ?1), \
            {rate} - (SELECT COUNT(*) FROM agent_messages WHERE recipient_id = ?2 AND lease_granted_at > ?1 - 60000)))",
        pending = policy_sql(PolicyNumber::PendingCap, "?2"),
        rate = policy_sql(PolicyNumber::RatePerMinute, "?2"),
    );
    // Whether anything is deliverable now: a poll that would be granted nothing
    // (an empty inbox, or caps with no room) is answered from this read and
    // changes nothing, so polling writes nothing. What it leaves unrecorded
    // (a lease that ran out of attempts) the cron's sweep records.
    let waiting = Statement::new(format!(
        "SELECT (EXISTS (SELECT 1 FROM agent_messages m WHERE m.recipient_id = ?2 AND {DELIVERABLE}) \
           AND {room} > 0) AS waiting"
    ))
    .bind(now)
    .bind(agent_id.as_str())
    .bind(wanted);
    let [waiting] = context.read_array([waiting]).await?;
    if waiting.first_flag("waiting") != Some(true) {
        context.leave_unrecorded();
        return Ok(context.json(&ClaimedAgentMessages { messages: Vec::new() }));
    }

    let attempts = policy_sql(PolicyNumber::MaximumAttempts, "?2");
    context.write(
        Statement::new(format!(
            "UPDATE agent_messages SET state = 'failed', updated_at = ?1 \
             WHERE recipient_id = ?2 AND state = 'leased' AND lease_expires_at <= ?1 AND attempts >= {attempts}"
        ))
        .bind(now)
        .bind(agent_id.as_str()),
    );
    context.write(
        Statement::new(
            "UPDATE agent_messages SET state = 'refused', reason = ?3, updated_at = ?1 \
             WHERE recipient_id = ?2 AND kind <> 'reply' AND state IN ('queued', 'leased') \
               AND (state = 'queued' OR lease_expires_at <= ?1) \
               AND (SELECT allowed_peers FROM agent_messaging_policies WHERE agent_id = ?2) IS NOT NULL \
               AND sender_id NOT IN (SELECT j.value FROM agent_messaging_policies p, json_each(p.allowed_peers) j \
                                      WHERE p.agent_id = ?2)",
        )
        .bind(now)
        .bind(agent_id.as_str())
        .bind(NOT_ALLOWED),
    );
    context.write(
        Statement::new(format!(
            "UPDATE agent_messages SET state = 'leased', attempts = attempts + 1, fencing_token = fencing_token + 1, \
               lease_granted_at = ?1, lease_expires_at = ?1 + ?4, updated_at = ?1 \
             WHERE id IN (SELECT m.id FROM agent_messages m WHERE m.recipient_id = ?2 AND {DELIVERABLE} \
                          ORDER BY m.created_at, m.id LIMIT {room}) \
             RETURNING id, conversation_id, sender_id, recipient_id, kind, in_reply_to, content, state, reason, \
               attempts, fencing_token, lease_granted_at, lease_expires_at, created_at, updated_at, expires_at"
        ))
        .bind(now)
        .bind(agent_id.as_str())
        .bind(wanted)
        .bind(lease_seconds * 1000),
    );
    context.audit_object(agent_id.clone());
    context.audit_detail(json!({ "max": wanted, "lease_seconds": lease_seconds }));
    let results = context.commit_returning().await?;
    let granted = results.last().map(|result| result.decode_all::<MessageRow>()).transpose();
    let mut granted = granted.map_err(|error| context.internal(error))?.unwrap_or_default();
    granted.sort_by(|left, right| (left.created_at, &left.id).cmp(&(right.created_at, &right.id)));
    Ok(context.json(&ClaimedAgentMessages { messages: granted.iter().map(|row| row.present(now)).collect() }))
}

/// What every lease operation starts with: the message the path names, as the
/// calling agent's first read finds it in its own inbox, and the time; refused
/// (saying which staleness) unless `fencing_token` is its live lease's. The
/// commit's guard (`on_live_lease`) is what decides; this says why early.
async fn live_leased_message(context: &mut Context<'_>, fencing_token: i64) -> Result<(MessageRow, i64), Refusal> {
    let agent_id = inbox_owner(context.caller())?;
    let id = context.path(PathParameter::AgentMessageId)?.to_string();
    let now = context.now_ms();
    let message = Statement::new(format!(
        "SELECT {MESSAGE_COLUMNS}, {} {MESSAGE_FROM} WHERE m.id = ?2 AND m.recipient_id = ?3",
        held_because_sql()
    ))
    .bind(now)
    .bind(id.as_str())
    .bind(agent_id.as_str());
    let [message] = context.read_array([message]).await?;
    let Some(row) = message.first() else { return Err(MessagingError::NoSuchMessage { id }.into()) };
    context.audit_object(id);
    let row: MessageRow = row.decode().map_err(|error| context.internal(error))?;
    let stale = |why| Err(MessagingError::StaleLease { id: row.id.clone(), why }.into());
    match row.state_at(now).0 {
        AgentMessageState::Leased if fencing_token != row.fencing_token => {
            stale("the fencing token is not the current one")
        }
        AgentMessageState::Leased => Ok((row, now)),
        AgentMessageState::Queued | AgentMessageState::Held => stale("the lease lapsed"),
        _ => stale("the message is no longer leased"),
    }
}

/// The row as a finishing statement leaves it: `state`, no lease, changed now.
fn finished(row: &mut MessageRow, state: AgentMessageState, now_ms: i64) {
    row.state = state.name().into();
    row.lease_expires_at = None;
    row.updated_at = now_ms;
}

/// The guarded UPDATE every lease operation is: it matches only the live lease
/// with this token, so anything stale changes no row and refuses the commit.
fn on_live_lease(
    context: &mut Context<'_>,
    row: &MessageRow,
    fencing_token: i64,
    set: &str,
    values: Vec<crate::core::storage::Value>,
) {
    let mut statement = Statement::new(format!(
        "UPDATE agent_messages SET {set}, updated_at = ?1 \
         WHERE id = ?2 AND recipient_id = ?3 AND state = 'leased' AND fencing_token = ?4 AND lease_expires_at > ?1"
    ))
    .bind(context.now_ms())
    .bind(row.id.as_str())
    .bind(row.recipient_id.as_str())
    .bind(fencing_token);
    for value in values {
        statement = statement.bind(value);
    }
    let stale = MessagingError::StaleLease { id: row.id.clone(), why: "another call changed the lease first" };
    context.write_changing_one_row(statement, stale);
    context.audit_detail(json!({ "fencing_token": fencing_token }));
}

/// `POST /api/agent-inbox/:agentMessageId/ack`.
pub async fn acknowledge(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let body: AckAgentMessage = context.body()?;
    let (mut row, now) = live_leased_message(context, body.fencing_token).await?;
    on_live_lease(context, &row, body.fencing_token, "state = 'acknowledged', lease_expires_at = NULL", Vec::new());
    finished(&mut row, AgentMessageState::Acknowledged, now);
    Ok(context.json(&row.present(now)))
}

/// `POST /api/agent-inbox/:agentMessageId/renew`.
pub async fn renew(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let body: RenewAgentLease = context.body()?;
    let lease_seconds =
        in_range("lease_seconds", body.lease_seconds, DEFAULT_LEASE_SECONDS, (1, MAXIMUM_LEASE_SECONDS))?;
    let (mut row, now) = live_leased_message(context, body.fencing_token).await?;
    // Never past twelve hours after the grant: the row holds when it was.
    on_live_lease(
        context,
        &row,
        body.fencing_token,
        "lease_expires_at = MIN(?1 + ?5, lease_granted_at + ?6)",
        vec![(lease_seconds * 1000).into(), (MAXIMUM_LEASE_SECONDS * 1000).into()],
    );
    // The answer states what the statement sets, from the grant time read.
    let cap = row.lease_granted_at.unwrap_or(now) + MAXIMUM_LEASE_SECONDS * 1000;
    row.lease_expires_at = Some((now + lease_seconds * 1000).min(cap));
    row.updated_at = now;
    Ok(context.json(&row.present(now)))
}

/// `POST /api/agent-inbox/:agentMessageId/reply`.
pub async fn reply(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let body: ReplyToAgentMessage = context.body()?;
    let content = content_text(&body.content)?;
    let (mut row, now) = live_leased_message(context, body.fencing_token).await?;
    if row.kind != AgentMessageKind::Request.name() {
        return Err(MessagingError::EventsAreAcknowledged.into());
    }
    let reply_id = new_id(IdKind::AgentMessage, context.platform());
    on_live_lease(
        context,
        &row,
        body.fencing_token,
        "state = 'answered', lease_expires_at = NULL, reply_id = ?5",
        vec![reply_id.as_str().into()],
    );
    // A reply goes to the requester's inbox when the requester is an agent that
    // asked over REST; a person, or an A2A task, reads it where it is shown.
    let claimed_by_requester = row.sender_id.starts_with(IdKind::Agent.prefix());
    context.write(
        Statement::new(
            "INSERT INTO agent_messages (id, conversation_id, sender_id, recipient_id, kind, in_reply_to, content, \
               body_hash, idempotency_key, surface, state, created_at, updated_at, expires_at) \
             SELECT ?1, conversation_id, recipient_id, sender_id, 'reply', id, ?2, ?3, 'reply:' || id, surface, \
               CASE WHEN surface = 'a2a' OR ?4 = 0 THEN 'delivered' ELSE 'queued' END, ?5, ?5, ?6 \
             FROM agent_messages WHERE id = ?7",
        )
        .bind(reply_id.as_str())
        .bind(content.as_str())
        .bind(sha256_hex(content.as_bytes()))
        .bind(i64::from(claimed_by_requester))
        .bind(now)
        .bind(now + DEFAULT_MESSAGE_EXPIRY_SECONDS * 1000)
        .bind(row.id.as_str()),
    );
    context.write(
        Statement::new("UPDATE agent_conversations SET last_activity_at = ?2 WHERE id = ?1")
            .bind(row.conversation_id.as_str())
            .bind(now),
    );
    context.audit_detail(json!({ "fencing_token": body.fencing_token, "reply": reply_id }));
    finished(&mut row, AgentMessageState::Answered, now);
    row.reply_id = Some(reply_id);
    row.reply_content = Some(content);
    row.reply_created_at = Some(now);
    Ok(context.json(&row.present(now)))
}

/// `POST /api/agent-inbox/:agentMessageId/reject`.
pub async fn reject(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let body: RejectAgentMessage = context.body()?;
    let reason = body.reason.trim().to_string();
    if reason.is_empty() || reason.chars().count() > REJECTION_REASON_MAXIMUM || reason.chars().any(char::is_control) {
        return Err(MessagingError::InvalidReason.into());
    }
    let (mut row, now) = live_leased_message(context, body.fencing_token).await?;
    on_live_lease(
        context,
        &row,
        body.fencing_token,
        "state = 'rejected', lease_expires_at = NULL, reason = ?5",
        vec![reason.as_str().into()],
    );
    finished(&mut row, AgentMessageState::Rejected, now);
    row.reason = Some(reason);
    Ok(context.json(&row.present(now)))
}
