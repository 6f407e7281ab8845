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

use super::errors::MessagingError;
use super::send::NOT_ALLOWED;
use super::shared::{content_text, in_range, inbox_owner};
use super::store::{self, LeaseChange, MessageRow, NewReply};
use crate::core::context::Context;
use crate::core::crypto::sha256_hex;
use crate::core::events::Topic;
use crate::core::http::Response;
use crate::core::ids::{IdKind, new_id};
use crate::core::paging;
use crate::core::refusal::Refusal;

/// How often, at most, an agent's `last_seen_at` is written: once a minute.
const LAST_SEEN_RESOLUTION_MS: i64 = 60_000;

/// Records that the agent looked at its inbox, after the answer and at most
/// once a minute, so polling never writes on every call.
fn seen(context: &mut Context<'_>, agent_id: &str) {
    let now = context.now_ms();
    context.defer_write(store::agent_seen(agent_id, now, LAST_SEEN_RESOLUTION_MS));
}

/// `GET /api/agent-inbox`: what waits for the calling agent or is leased by it,
/// oldest first.
pub async fn list_inbox(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let agent_id = inbox_owner(context.caller())?;
    let limit = paging::limit(context)?;
    let (after_at, after_id) = paging::cursor(context, IdKind::AgentMessage, i64::MIN)?;
    let now = context.now_ms();
    let page = store::inbox_page(&agent_id, now, after_at, &after_id, limit);
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

    // Whether anything is deliverable now, within the room the policy leaves
    // (what was asked for, less the live leases over the lease cap, less the
    // last minute's grants over the rate cap): a poll that would be granted
    // nothing (an empty inbox, or caps with no room) is answered from this
    // read and changes nothing, so polling writes nothing. What it leaves
    // unrecorded (a lease that ran out of attempts) the cron's sweep records.
    let waiting = store::anything_to_claim(&agent_id, now, wanted);
    let [waiting] = context.read_array([waiting]).await?;
    if waiting.first_flag("waiting") != Some(true) {
        context.leave_unrecorded();
        return Ok(context.json(&ClaimedAgentMessages { messages: Vec::new() }));
    }

    context.write(store::fail_spent_leases(&agent_id, now));
    context.write(store::refuse_senders_not_allowed(&agent_id, now, NOT_ALLOWED));
    context.write(store::grant_leases(&agent_id, now, wanted, lease_seconds * 1000));
    // Its inbox changed: told to whoever watches it (its owner's page). Each
    // requester is told too, once the commit names them (below); their
    // endpoints' deliveries are queued in the commit itself.
    context.tell_also(Topic::Agent(agent_id.clone()));
    context.queue_told_by(store::leased_requesters(&agent_id, now));
    context.audit_object(agent_id.clone());
    context.audit_detail(json!({ "max": wanted, "lease_seconds": lease_seconds }));
    let results = context.commit_returning().await?;
    let granted = results.last().map(|result| result.decode_all::<MessageRow>()).transpose();
    let mut granted = granted.map_err(|error| context.internal(error))?.unwrap_or_default();
    granted.sort_by(|left, right| (left.created_at, &left.id).cmp(&(right.created_at, &right.id)));
    // Leased: told to whoever asked, so a stream following the request shows
    // it being worked on.
    for row in &granted {
        if let Some(requester) = Topic::of_party(&row.sender_id) {
            context.tell_committed(requester, &row.id);
        }
    }
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
    let message = store::inbox_message(&id, &agent_id, now);
    let [message] = context.read_array([message]).await?;
    let Some(row) = message.first() else { return Err(MessagingError::NoSuchMessage { id }.into()) };
    context.audit_object(id);
    // Whatever the lease operation does changes the agent's inbox: told to
    // whoever watches it (its owner's page), once it commits.
    context.tell_also(Topic::Agent(agent_id.clone()));
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
fn on_live_lease(context: &mut Context<'_>, row: &MessageRow, fencing_token: i64, change: LeaseChange<'_>) {
    let statement = store::change_live_lease(change, &row.id, &row.recipient_id, fencing_token, context.now_ms());
    let stale = MessagingError::StaleLease { id: row.id.clone(), why: "another call changed the lease first" };
    context.write_changing_one_row(statement, stale);
    context.audit_detail(json!({ "fencing_token": fencing_token }));
}

/// `POST /api/agent-inbox/:agentMessageId/ack`.
pub async fn acknowledge(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let body: AckAgentMessage = context.body()?;
    let (mut row, now) = live_leased_message(context, body.fencing_token).await?;
    on_live_lease(context, &row, body.fencing_token, LeaseChange::Acknowledged);
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
        LeaseChange::Renewed { lease_ms: lease_seconds * 1000, longest_ms: MAXIMUM_LEASE_SECONDS * 1000 },
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
    on_live_lease(context, &row, body.fencing_token, LeaseChange::Answered { reply_id: &reply_id });
    // A reply goes to the requester's inbox when the requester is an agent that
    // asked over REST; a person, or an A2A task, reads it where it is shown.
    let claimed_by_requester = row.sender_id.starts_with(IdKind::Agent.prefix());
    context.write(store::insert_reply(&NewReply {
        id: &reply_id,
        request_id: &row.id,
        content: &content,
        body_hash: &sha256_hex(content.as_bytes()),
        claimed_by_requester,
        now_ms: now,
        expires_at: now + DEFAULT_MESSAGE_EXPIRY_SECONDS * 1000,
    }));
    context.write(store::conversation_active(&row.conversation_id, now));
    context.audit_detail(json!({ "fencing_token": body.fencing_token, "reply": reply_id }));
    // Answered: told to whoever asked, in their own inbox or feed.
    if let Some(requester) = Topic::of_party(&row.sender_id) {
        context.tell_on(requester);
    }
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
    on_live_lease(context, &row, body.fencing_token, LeaseChange::Rejected { reason: &reason });
    if let Some(requester) = Topic::of_party(&row.sender_id) {
        context.tell_on(requester);
    }
    finished(&mut row, AgentMessageState::Rejected, now);
    row.reason = Some(reason);
    Ok(context.json(&row.present(now)))
}
