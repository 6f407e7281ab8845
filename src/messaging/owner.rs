//! The owner plane: an agent's messaging as its sponsor or an administrator
//! watches and sets it (SPEC §10). Its connection (when it last looked at its
//! inbox), its delivery policy, and its inbox with every message's state now.
//! Nothing here asks for, or can use, the agent's credential.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{
    AgentMessageList, AgentMessaging, MAXIMUM_ALLOWED_PEERS, MAXIMUM_ATTEMPTS_RANGE, PENDING_CAP_RANGE,
    RATE_PER_MINUTE_RANGE, SponsoredAgent, SponsoredAgentList, UpdateAgentMessaging,
};
use serde::Deserialize;
use serde_json::json;

use super::{
    MESSAGE_COLUMNS, MESSAGE_FROM, MessageRow, MessagingError, PolicyNumber, held_because_sql, in_range, policy_sql,
};
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::storage::Statement;
use crate::core::time::rfc3339;

#[derive(Deserialize)]
struct MessagingRow {
    id: String,
    name: String,
    sponsor_id: String,
    paused_at: Option<i64>,
    revoked_at: Option<i64>,
    last_seen_at: Option<i64>,
    allowed_peers: Option<String>,
    rate_per_minute: i64,
    pending_cap: i64,
    maximum_attempts: i64,
    waiting: i64,
    leased: i64,
    listed_on_node_card: i64,
}

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
        }
    }
}

/// The statement reading an agent's messaging (`?1` the time, `?2` the agent).
fn messaging_of(agent_id: &str, now_ms: i64) -> Statement {
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

/// `GET /api/agents/:agentId/messaging`.
pub async fn get_messaging(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let agent_id = context.path(PathParameter::AgentId)?.to_string();
    let [found] = context.read_array([messaging_of(&agent_id, context.now_ms())]).await?;
    let Some(row) = found.first() else { return Err(MessagingError::NoSuchAgent { id: agent_id }.into()) };
    let row: MessagingRow = row.decode().map_err(|error| context.internal(error))?;
    Ok(context.json(&row.present(context.config().origin_of(context.request()))))
}

/// `PATCH /api/agents/:agentId/messaging`.
pub async fn update_messaging(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let agent_id = context.path(PathParameter::AgentId)?.to_string();
    let body: UpdateAgentMessaging = context.optional_body()?;
    let now = context.now_ms();
    let [found] = context.read_array([messaging_of(&agent_id, now)]).await?;
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
        if let Some(peer) = peers.iter().find(|peer| !is_id_of(peer, IdKind::Agent) && !is_id_of(peer, IdKind::Person))
        {
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
    let by = context.caller().actor_id().unwrap_or_default().to_string();
    // Only what the body names is written, so two owners changing different
    // parts of the policy at once both keep their change.
    let allowlist_changes = body.allowed_peers.is_some() || body.allow_everyone == Some(true);
    context.write(
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
        .bind(agent_id.as_str())
        .bind(row.allowed_peers.clone())
        .bind(row.rate_per_minute)
        .bind(row.pending_cap)
        .bind(row.maximum_attempts)
        .bind(now)
        .bind(by)
        .bind(i64::from(allowlist_changes))
        .bind(body.rate_per_minute)
        .bind(body.pending_cap)
        .bind(body.maximum_attempts)
        .bind(row.listed_on_node_card)
        .bind(body.listed_on_node_card.map(i64::from)),
    );
    context.audit_detail(json!({
        "allowed_peers": row.allowed_peers.as_deref().and_then(|peers| serde_json::from_str::<serde_json::Value>(peers).ok()),
        "rate_per_minute": row.rate_per_minute,
        "pending_cap": row.pending_cap,
        "maximum_attempts": row.maximum_attempts,
        "listed_on_node_card": row.listed_on_node_card != 0,
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
    let exists = Statement::new("SELECT 1 AS found FROM agents WHERE id = ?1").bind(agent_id.as_str());
    let page = Statement::new(format!(
        "SELECT {MESSAGE_COLUMNS}, {} {MESSAGE_FROM} \
         WHERE m.recipient_id = ?2 AND (m.created_at, m.id) < (?3, ?4) \
         ORDER BY m.created_at DESC, m.id DESC LIMIT ?5",
        held_because_sql()
    ))
    .bind(now)
    .bind(agent_id.as_str())
    .bind(before_at)
    .bind(before_id)
    .bind(limit + 1);
    let [exists, page] = context.read_array([exists, page]).await?;
    if exists.first().is_none() {
        return Err(MessagingError::NoSuchAgent { id: agent_id }.into());
    }
    let mut rows: Vec<MessageRow> = page.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = paging::cut(&mut rows, limit, |row| (row.created_at, row.id.as_str()));
    Ok(context.json(&AgentMessageList { messages: rows.iter().map(|row| row.present(now)).collect(), next_cursor }))
}

#[derive(Deserialize)]
struct SponsoredRow {
    id: String,
    name: String,
    paused_at: Option<i64>,
    revoked_at: Option<i64>,
    last_seen_at: Option<i64>,
}

/// `GET /api/me/agents`: the agents that act under the caller's authority.
pub async fn list_sponsored_agents(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let person_id = match context.caller() {
        Caller::Person { person_id, .. } => person_id.clone(),
        // An agent sponsors nobody; the route is never in an agent's ceiling.
        _ => String::new(),
    };
    let agents = Statement::new(
        "SELECT id, name, paused_at, revoked_at, last_seen_at FROM agents WHERE sponsor_id = ?1 \
         ORDER BY created_at DESC, id DESC",
    )
    .bind(person_id);
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

/// An agent its owner lists on the node's own A2A card.
#[derive(Deserialize)]
pub struct ListedAgent {
    pub id: String,
    pub name: String,
}

/// The agents whose owners list them on the node's A2A card and that are not
/// revoked, oldest first: what anyone who asks the node may learn of its agents.
pub fn listed_on_node_card() -> Statement {
    Statement::new(
        "SELECT a.id, a.name FROM agents a JOIN agent_messaging_policies p ON p.agent_id = a.id \
         WHERE p.listed_on_node_card = 1 AND a.revoked_at IS NULL ORDER BY a.created_at, a.id",
    )
}
