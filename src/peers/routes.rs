//! The peers' routes (an administrator's: connect, list, change, disconnect)
//! and the owner plane's list of an agent's messages to agents elsewhere.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{
    CreatePeer, PEER_CREDENTIAL_MAXIMUM, PEER_NAME_MAXIMUM, Peer, PeerCreated, PeerList, RemoteAgent, RemoteAttempt,
    RemoteAttemptOutcome, RemoteAttemptStep, RemoteDelivery, RemoteDeliveryList, RemoteDeliveryState, UpdatePeer,
};
use serde::Deserialize;
use serde_json::json;

use super::errors::PeersError;
use super::remote::is_domain;
use super::store::{self, NewPeer};
use crate::authz::credentials::NamingCredential;
use crate::core::context::Context;
use crate::core::crypto::hash_secret;
use crate::core::http::Response;
use crate::core::ids::{IdKind, new_id};
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Row, StorageError};
use crate::core::time::rfc3339;

/// A peer as its row reads.
#[derive(Deserialize)]
struct PeerRow {
    id: String,
    domain: String,
    name: String,
    has_outbound_credential: i64,
    created_at: i64,
    created_by: String,
    revoked_at: Option<i64>,
}

impl PeerRow {
    fn present(self) -> Peer {
        Peer {
            id: self.id,
            domain: self.domain,
            name: self.name,
            has_outbound_credential: self.has_outbound_credential != 0,
            created_at: rfc3339(self.created_at),
            created_by: self.created_by,
            revoked_at: self.revoked_at.map(rfc3339),
        }
    }
}

/// The one peer a read found, or the refusal naming `id`.
fn found_peer(result: &QueryResult, id: &str) -> Result<PeerRow, Refusal> {
    let row = result.first().ok_or_else(|| PeersError::NoSuchPeer { id: id.to_string() })?;
    row.decode().map_err(|_| Refusal::internal())
}

fn valid_name(name: &str) -> Result<String, PeersError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > PEER_NAME_MAXIMUM || name.chars().any(char::is_control) {
        return Err(PeersError::InvalidName);
    }
    Ok(name.to_string())
}

/// A credential sent as `Authorization: Bearer`: printable, without spaces.
fn valid_credential(credential: &str) -> Result<String, PeersError> {
    let credential = credential.trim();
    let printable = credential.chars().all(|character| character.is_ascii_graphic());
    if credential.is_empty() || credential.len() > PEER_CREDENTIAL_MAXIMUM || !printable {
        return Err(PeersError::InvalidCredential);
    }
    Ok(credential.to_string())
}

/// `GET /api/peers`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let [peers] = context.read_array([store::peers()]).await?;
    let peers: Vec<PeerRow> = peers.decode_all().map_err(|error| context.internal(error))?;
    Ok(context.json(&PeerList { peers: peers.into_iter().map(PeerRow::present).collect() }))
}

/// `POST /api/peers`.
pub async fn create(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: CreatePeer = context.body()?;
    let domain = request.domain.trim().trim_end_matches('.').to_ascii_lowercase();
    if !is_domain(&domain) {
        return Err(PeersError::InvalidDomain { domain: request.domain }.into());
    }
    let name = valid_name(&request.name)?;
    let outbound_credential = request.outbound_credential.as_deref().map(valid_credential).transpose()?;
    let [taken] = context.read_array([store::live_peer_of(&domain)]).await?;
    if !taken.rows.is_empty() {
        return Err(PeersError::DomainTaken { domain }.into());
    }
    let id = new_id(IdKind::Peer, context.platform());
    let credential = NamingCredential::Peer.issue(&id, context.platform());
    let created_by = context.caller().actor_id().unwrap_or_default().to_string();
    let now = context.now_ms();
    context.write(store::peer_connected(NewPeer {
        id: &id,
        domain: &domain,
        name: &name,
        credential_hash: &hash_secret(&credential),
        outbound_credential: outbound_credential.as_deref(),
        created_at: now,
        created_by: &created_by,
    }));
    // Two connections of one domain at once: the unique live domain refuses
    // the second's insert, and it is handled again to find the first.
    context.on_constraint_violation_handle_again("peers.domain");
    context.audit_object(id.clone());
    context.audit_detail(json!({ "domain": domain, "outbound_credential_set": outbound_credential.is_some() }));
    let peer = Peer {
        id,
        domain,
        name,
        has_outbound_credential: outbound_credential.is_some(),
        created_at: rfc3339(now),
        created_by,
        revoked_at: None,
    };
    Ok(context.json(&PeerCreated { peer, credential }))
}

/// `PATCH /api/peers/:peerId`.
pub async fn update(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: UpdatePeer = context.body()?;
    let id = context.path(PathParameter::PeerId)?.to_string();
    let name = request.name.as_deref().map(valid_name).transpose()?;
    let outbound_credential = request.outbound_credential.as_deref().map(valid_credential).transpose()?;
    let [found] = context.read_array([store::peer(&id)]).await?;
    let mut peer = found_peer(&found, &id)?;
    if peer.revoked_at.is_some() {
        return Err(PeersError::Disconnected { id }.into());
    }
    context.write(store::peer_changed(&id, name.as_deref(), outbound_credential.as_deref()));
    context.guard(store::peer_live(&id), PeersError::Disconnected { id: id.clone() });
    context.audit_object(id.clone());
    // The credential itself never enters the audit: only that it changed.
    context.audit_detail(json!({ "name": name, "outbound_credential_set": outbound_credential.is_some() }));
    if let Some(name) = name {
        peer.name = name;
    }
    if outbound_credential.is_some() {
        peer.has_outbound_credential = 1;
    }
    Ok(context.json(&peer.present()))
}

/// `DELETE /api/peers/:peerId`.
pub async fn disconnect(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let id = context.path(PathParameter::PeerId)?.to_string();
    let [found] = context.read_array([store::peer(&id)]).await?;
    let mut peer = found_peer(&found, &id)?;
    if peer.revoked_at.is_some() {
        return Err(PeersError::Disconnected { id }.into());
    }
    let by = context.caller().actor_id().unwrap_or_default().to_string();
    let now = context.now_ms();
    context.write(store::peer_disconnected(&id, &by, now));
    context.guard(store::disconnected_by(&id, &by, now), PeersError::Disconnected { id: id.clone() });
    context.audit_object(id.clone());
    context.audit_detail(json!({ "domain": peer.domain }));
    peer.revoked_at = Some(now);
    peer.has_outbound_credential = 0;
    Ok(context.json(&peer.present()))
}

/// One attempt as its row's JSON reads.
#[derive(Deserialize)]
struct AttemptRow {
    attempt: i64,
    at: i64,
    step: String,
    outcome: String,
    detail: String,
}

fn delivery_of(row: &Row) -> Result<RemoteDelivery, StorageError> {
    let decode = |what: &str| StorageError::Decode(format!("a remote delivery's {what}"));
    let attempts: Vec<AttemptRow> =
        serde_json::from_str(&row.optional_text("attempts")?.unwrap_or_else(|| "[]".into()))
            .map_err(|_| decode("attempts"))?;
    let state = RemoteDeliveryState::parse(&row.text("state")?).ok_or_else(|| decode("state"))?;
    let waiting = matches!(state, RemoteDeliveryState::Pending | RemoteDeliveryState::Sent);
    Ok(RemoteDelivery {
        message_id: row.text("message_id")?,
        sender: row.text("sender_id")?,
        remote_agent: RemoteAgent {
            id: row.text("remote_agent_id")?,
            card_url: row.text("card_url")?,
            domain: row.text("domain")?,
            name: row.optional_text("name")?,
        },
        state,
        remote_task_id: row.optional_text("remote_task_id")?,
        next_attempt_at: waiting.then(|| row.integer("next_attempt_at").map(rfc3339)).transpose()?,
        last_error: row.optional_text("last_error")?,
        attempts: attempts
            .into_iter()
            .map(|attempt| {
                Ok(RemoteAttempt {
                    attempt: attempt.attempt,
                    at: rfc3339(attempt.at),
                    step: RemoteAttemptStep::parse(&attempt.step).ok_or_else(|| decode("step"))?,
                    outcome: RemoteAttemptOutcome::parse(&attempt.outcome).ok_or_else(|| decode("outcome"))?,
                    detail: attempt.detail,
                })
            })
            .collect::<Result<_, StorageError>>()?,
        created_at: rfc3339(row.integer("created_at")?),
    })
}

/// `GET /api/agents/:agentId/remote-deliveries`.
pub async fn list_deliveries(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let agent_id = context.path(PathParameter::AgentId)?.to_string();
    let limit = paging::limit(context)?;
    let after = paging::cursor_id(context, IdKind::AgentMessage)?;
    let [found] = context.read_array([store::deliveries_of(&agent_id, after.as_deref(), limit)]).await?;
    let mut deliveries: Vec<RemoteDelivery> =
        found.rows.iter().map(delivery_of).collect::<Result<_, _>>().map_err(|error| context.internal(error))?;
    let next_cursor = paging::cut_at_id(&mut deliveries, limit, |delivery| delivery.message_id.as_str());
    Ok(context.json(&RemoteDeliveryList { deliveries, next_cursor }))
}
