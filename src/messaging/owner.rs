//! The owner plane: an agent's messaging as its sponsor or an administrator
//! watches and sets it (SPEC §10). Its connection (when it last looked at its
//! inbox), its delivery policy, and its inbox with every message's state now.
//! Nothing here asks for, or can use, the agent's credential.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{
    AgentMessageList, AgentMessaging, MAXIMUM_ALLOWED_PEERS, MAXIMUM_ATTEMPTS_RANGE, PENDING_CAP_RANGE,
    RATE_PER_MINUTE_RANGE, REMOTE_PER_HOUR_RANGE, SponsoredAgent, SponsoredAgentList, UpdateAgentMessaging,
};
use serde_json::json;

use super::errors::MessagingError;
use super::shared::in_range;
use super::store::{self, MessageRow, MessagingRow, PolicyChange, SponsoredRow};
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::storage::Statement;
use crate::core::time::rfc3339;
use crate::peers;

impl MessagingRow {
    fn present(self, origin: &str) -> AgentMessaging {
        AgentMessaging {
            agent_card_url: format!("{origin}/a2a/{}/.well-known/agent-card.json", self.id),
            agent_id: self.id,
            name: self.name,
            sponsor: self.sponsor_id,
            paused: self.paused_at.is_some(),
            last_seen_at: self.last_seen_at.map(rfc3339),
            allowed_peers: self.allowed_peers.and_then(|peers| serde_json::from_str(&peers).ok()),
            rate_per_minute: self.rate_per_minute,
            pending_cap: self.pending_cap,
            maximum_attempts: self.maximum_attempts,
            waiting: self.waiting,
            leased: self.leased,
            listed_on_node_card: self.listed_on_node_card != 0,
            remote_recipients: self
                .remote_recipients
                .and_then(|entries| serde_json::from_str(&entries).ok())
                .unwrap_or_default(),
            remote_per_hour: self.remote_per_hour,
        }
    }
}

/// `GET /api/agents/:agentId/messaging`.
pub async fn get_messaging(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let agent_id = context.path(PathParameter::AgentId)?.to_string();
    let [found] = context.read_array([store::messaging_of(&agent_id, context.now_ms())]).await?;
    let Some(row) = found.first() else { return Err(MessagingError::NoSuchAgent { id: agent_id }.into()) };
    let row: MessagingRow = row.decode().map_err(|error| context.internal(error))?;
    Ok(context.json(&row.present(context.config().origin_of(context.request()))))
}

/// `PATCH /api/agents/:agentId/messaging`.
pub async fn update_messaging(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let agent_id = context.path(PathParameter::AgentId)?.to_string();
    let body: UpdateAgentMessaging = context.optional_body()?;
    let now = context.now_ms();
    let [found] = context.read_array([store::messaging_of(&agent_id, now)]).await?;
    let Some(row) = found.first() else { return Err(MessagingError::NoSuchAgent { id: agent_id }.into()) };
    let mut row: MessagingRow = row.decode().map_err(|error| context.internal(error))?;
    context.audit_object(agent_id.clone());
    if row.revoked_at.is_some() {
        return Err(MessagingError::AgentRevoked.into());
    }
    row.rate_per_minute =
        in_range("rate_per_minute", body.rate_per_minute, row.rate_per_minute, RATE_PER_MINUTE_RANGE)?;
    row.pending_cap = in_range("pending_cap", body.pending_cap, row.pending_cap, PENDING_CAP_RANGE)?;
    row.maximum_attempts =
        in_range("maximum_attempts", body.maximum_attempts, row.maximum_attempts, MAXIMUM_ATTEMPTS_RANGE)?;
    if let Some(peers) = &body.allowed_peers {
        if peers.len() > MAXIMUM_ALLOWED_PEERS {
            return Err(MessagingError::OutOfRange {
                field: "allowed_peers",
                minimum: 0,
                maximum: MAXIMUM_ALLOWED_PEERS as i64,
            }
            .into());
        }
        let sender_kinds = [IdKind::Agent, IdKind::Person, IdKind::RemoteAgent];
        if let Some(peer) = peers.iter().find(|peer| !sender_kinds.iter().any(|kind| is_id_of(peer, *kind))) {
            return Err(MessagingError::InvalidPeer { peer: peer.clone() }.into());
        }
        let mut peers = peers.clone();
        peers.sort();
        peers.dedup();
        row.allowed_peers = Some(serde_json::to_string(&peers).map_err(|error| context.internal(error))?);
    }
    if body.allow_everyone == Some(true) {
        row.allowed_peers = None;
    }
    if let Some(listed) = body.listed_on_node_card {
        row.listed_on_node_card = i64::from(listed);
    }
    row.remote_per_hour =
        in_range("remote_per_hour", body.remote_per_hour, row.remote_per_hour, REMOTE_PER_HOUR_RANGE)?;
    let remote_recipients = match &body.remote_recipients {
        None => None,
        Some(entries) => {
            let entries = peers::valid_remote_recipients(entries)?;
            Some(serde_json::to_string(&entries).map_err(|error| context.internal(error))?)
        }
    };
    if let Some(entries) = &remote_recipients {
        row.remote_recipients = Some(entries.clone());
    }
    let by = context.caller().actor_id().unwrap_or_default().to_string();
    // Only what the body names is written, so two owners changing different
    // parts of the policy at once both keep their change.
    let allowlist_changes = body.allowed_peers.is_some() || body.allow_everyone == Some(true);
    context.write(store::change_policy(&PolicyChange {
        agent_id: &agent_id,
        allowed_peers: row.allowed_peers.as_deref(),
        rate_per_minute: row.rate_per_minute,
        pending_cap: row.pending_cap,
        maximum_attempts: row.maximum_attempts,
        listed_on_node_card: row.listed_on_node_card,
        now_ms: now,
        by: &by,
        allowlist_changes,
        named_rate_per_minute: body.rate_per_minute,
        named_pending_cap: body.pending_cap,
        named_maximum_attempts: body.maximum_attempts,
        named_listed_on_node_card: body.listed_on_node_card.map(i64::from),
        named_remote_recipients: remote_recipients.as_deref(),
        named_remote_per_hour: body.remote_per_hour,
    }));
    context.audit_detail(json!({
        "allowed_peers": row.allowed_peers.as_deref().and_then(|peers| serde_json::from_str::<serde_json::Value>(peers).ok()),
        "rate_per_minute": row.rate_per_minute,
        "pending_cap": row.pending_cap,
        "maximum_attempts": row.maximum_attempts,
        "listed_on_node_card": row.listed_on_node_card != 0,
        "remote_recipients": row.remote_recipients.as_deref().and_then(|entries| serde_json::from_str::<serde_json::Value>(entries).ok()),
        "remote_per_hour": row.remote_per_hour,
    }));
    Ok(context.json(&row.present(context.config().origin_of(context.request()))))
}

/// `GET /api/agents/:agentId/inbox`: every message to the agent, newest first.
pub async fn list_owned_inbox(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let agent_id = context.path(PathParameter::AgentId)?.to_string();
    let limit = paging::limit(context)?;
    let (before_at, before_id) = paging::cursor(context, IdKind::AgentMessage, i64::MAX)?;
    let before_id = if before_id.is_empty() { "~".to_string() } else { before_id };
    let now = context.now_ms();
    let exists = store::agent_exists(&agent_id);
    let page = store::owned_inbox_page(&agent_id, now, before_at, &before_id, limit);
    let [exists, page] = context.read_array([exists, page]).await?;
    if exists.first().is_none() {
        return Err(MessagingError::NoSuchAgent { id: agent_id }.into());
    }
    let mut rows: Vec<MessageRow> = page.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = paging::cut(&mut rows, limit, |row| (row.created_at, row.id.as_str()));
    Ok(context.json(&AgentMessageList { messages: rows.iter().map(|row| row.present(now)).collect(), next_cursor }))
}

/// `GET /api/me/agents`: the agents that act under the caller's authority.
pub async fn list_sponsored_agents(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let person_id = match context.caller() {
        Caller::Person { person_id, .. } => person_id.clone(),
        // An agent sponsors nobody; the route is never in an agent's ceiling.
        _ => String::new(),
    };
    let agents = store::sponsored_agents(&person_id);
    let [agents] = context.read_array([agents]).await?;
    let agents: Vec<SponsoredRow> = agents.decode_all().map_err(|error| context.internal(error))?;
    let agents = agents
        .into_iter()
        .map(|row| SponsoredAgent {
            id: row.id,
            name: row.name,
            paused: row.paused_at.is_some(),
            revoked: row.revoked_at.is_some(),
            last_seen_at: row.last_seen_at.map(rfc3339),
        })
        .collect();
    Ok(context.json(&SponsoredAgentList { agents }))
}

/// The agents whose owners list them on the node's A2A card and that are not
/// revoked, oldest first, each read as a [`ListedAgent`](super::ListedAgent):
/// what anyone who asks the node may learn of its agents.
pub fn listed_on_node_card() -> Statement {
    store::listed_on_node_card()
}
