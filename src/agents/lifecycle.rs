//! An agent's life after minting: listing and showing agents, pausing,
//! resuming and revoking one; and the two reads the mint form is built from
//! (what a person holds on each mailbox, and the capability vocabulary).

use mailroom_contract::api::{Agent, AgentList, MailboxList};
use mailroom_contract::{PathParameter, capabilities, registry};

use super::errors::AgentError;
use super::present::present_all;
use super::store::{self, AgentRow, routes_of};
use crate::authz::tuples::{self, Holder};
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Statement};
use crate::core::time::rfc3339;
use crate::mail;

/// `GET /api/agents`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let [agents, routes, held] =
        context.read_array([store::every_agent(), routes_of(None), tuples::granted_to_agents()]).await?;
    let agents = present_all(context, &agents, &routes, &held)?;
    Ok(context.json(&AgentList { agents }))
}

/// Reads the path's agent, its routes and its tuples, refusing an unknown one.
pub(super) async fn the_agent(context: &mut Context<'_>) -> Result<(AgentRow, Agent), Refusal> {
    let (row, agent, _) = the_agent_with(context, None).await?;
    Ok((row, agent))
}

/// `the_agent`, with `also` read in the same round trip (its result answered
/// beside the agent, empty when there is none).
async fn the_agent_with(
    context: &mut Context<'_>,
    also: Option<Statement>,
) -> Result<(AgentRow, Agent, QueryResult), Refusal> {
    let agent_id = context.path(PathParameter::AgentId)?.to_string();
    context.audit_object(agent_id.clone());
    if !is_id_of(&agent_id, IdKind::Agent) {
        return Err(AgentError::NoSuchAgent { id: agent_id }.into());
    }
    let row = store::agent_by_id(&agent_id);
    let held = tuples::list(Some(&agent_id), None);
    let mut results = context.read([row, routes_of(Some(&agent_id)), held].into_iter().chain(also).collect()).await?;
    let also = if results.len() > 3 { results.pop().unwrap_or_default() } else { QueryResult::default() };
    let [row, routes, held]: [QueryResult; 3] =
        results.try_into().map_err(|_| context.internal("an agent's read answered short"))?;
    let agents = present_all(context, &row, &routes, &held)?;
    let agent = agents.into_iter().next().ok_or(AgentError::NoSuchAgent { id: agent_id })?;
    let row: AgentRow = row.rows[0].decode().map_err(|error| context.internal(error))?;
    Ok((row, agent, also))
}

/// `GET /api/agents/:agentId`.
pub async fn get(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (_, agent) = the_agent(context).await?;
    Ok(context.json(&agent))
}

/// The statement that ends an agent for good, as revoking it does: for a
/// connected app's grant ended by its client (a token revoked, a code or
/// refresh token presented twice), queued by the `oauth` domain.
pub fn ending(agent_id: &str, now_ms: i64) -> Statement {
    store::revoke_agent(agent_id, now_ms)
}

/// `SELECT name, sponsor_id` of the agent `agent_id`: who an agent is and whose
/// authority it acts under, for identity's answer to `GET /api/me`.
pub fn name_and_sponsor(agent_id: &str) -> Statement {
    store::name_and_sponsor(agent_id)
}

/// `SELECT name`: the agent `agent_id`'s name while it is not revoked, for
/// its A2A card.
pub fn unrevoked_agent_name(agent_id: &str) -> Statement {
    store::unrevoked_agent_name(agent_id)
}

/// `SELECT found`: whether the agent `agent_id` exists and is not revoked, for
/// a relation granted to it.
pub fn unrevoked_agent_exists(agent_id: &str) -> Statement {
    store::unrevoked_agent_exists(agent_id)
}

/// The agents a consent minted whose code expired unexchanged by `?1`, the
/// time now: SQL selecting their ids, which the upkeep removes whole.
pub const UNEXCHANGED_CONNECTIONS: &str = store::UNEXCHANGED_CONNECTIONS;

/// The statements that remove, whole, the agents [`UNEXCHANGED_CONNECTIONS`]
/// selects at `now_ms`: their relations, pinned routes, pairing codes and
/// messaging policy, then their rows. Queued by the `oauth` domain after it
/// removes their connections and codes, which name them too. Such an agent
/// held nothing and could do nothing while it waited, so nothing it did is
/// lost; the consent that minted it stays in the audit chain.
pub fn removing_unexchanged(now_ms: i64) -> Vec<Statement> {
    let mut removing = vec![tuples::forget_held_by(UNEXCHANGED_CONNECTIONS, vec![now_ms.into()])];
    removing.extend(store::remove_unexchanged(now_ms));
    removing
}

/// The agents `sponsor`'s OAuth consents minted, newest first, presented; read
/// in one round trip with `also`, whose result comes back beside them. An app
/// whose code was never exchanged is not connected: it is not among them.
pub async fn connected_by(
    context: &mut Context<'_>,
    sponsor: &str,
    also: Statement,
) -> Result<(Vec<Agent>, QueryResult), Refusal> {
    let agents = store::connected_by(sponsor);
    let routes = store::routes_sponsored_by(sponsor);
    let [agents, routes, held, also] = context.read_array([agents, routes, tuples::granted_to_agents(), also]).await?;
    Ok((present_all(context, &agents, &routes, &held)?, also))
}

/// Revokes the path's agent for `sponsor`, when it is an app their own consent
/// connected: the person disconnecting it. Anything else is no agent of theirs.
/// `also` is read in the same round trip, its result answered beside the agent.
pub async fn disconnect(
    context: &mut Context<'_>,
    sponsor: &str,
    also: Statement,
) -> Result<(Agent, QueryResult), Refusal> {
    let (row, agent, also) = the_agent_with(context, Some(also)).await?;
    if row.sponsor_id != sponsor || row.connected.is_none() {
        return Err(AgentError::NoSuchAgent { id: row.id }.into());
    }
    Ok((apply_state(context, row, agent, StateChange::Revoke)?, also))
}

/// Pause, resume or revoke: a change to the agent's own row.
async fn set_state(context: &mut Context<'_>, change: StateChange) -> Result<Response, Refusal> {
    let (row, agent) = the_agent(context).await?;
    let agent = apply_state(context, row, agent, change)?;
    Ok(context.json(&agent))
}

fn apply_state(
    context: &mut Context<'_>,
    mut row: AgentRow,
    mut agent: Agent,
    change: StateChange,
) -> Result<Agent, Refusal> {
    if row.revoked_at.is_some() {
        return Err(AgentError::Revoked.into());
    }
    let now_ms = context.now_ms();
    // Pausing twice keeps the first pause's time: it is when the agent stopped.
    let statement = match change {
        StateChange::Pause => {
            row.paused_at = Some(row.paused_at.unwrap_or(now_ms));
            store::pause_agent(&row.id, now_ms)
        }
        StateChange::Resume => {
            row.paused_at = None;
            store::resume_agent(&row.id)
        }
        StateChange::Revoke => {
            row.revoked_at = Some(now_ms);
            store::revoke_agent(&row.id, now_ms)
        }
    };
    context.write(statement);
    if change == StateChange::Revoke {
        // Nothing can pair a revoked agent again.
        context.write(store::redeem_pairing_codes_of(&row.id, now_ms));
    }
    // The answer is the row as it now stands, judged as every other read judges
    // it: resuming an expired agent answers `expired`, not `active`.
    agent.state = row.state(now_ms);
    agent.paused_at = row.paused_at.map(rfc3339);
    agent.revoked_at = row.revoked_at.map(rfc3339);
    Ok(agent)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum StateChange {
    Pause,
    Resume,
    Revoke,
}

/// `POST /api/agents/:agentId/pause`.
pub async fn pause(context: &mut Context<'_>) -> Result<Response, Refusal> {
    set_state(context, StateChange::Pause).await
}

/// `POST /api/agents/:agentId/resume`.
pub async fn resume(context: &mut Context<'_>) -> Result<Response, Refusal> {
    set_state(context, StateChange::Resume).await
}

/// `POST /api/agents/:agentId/revoke`.
pub async fn revoke(context: &mut Context<'_>) -> Result<Response, Refusal> {
    set_state(context, StateChange::Revoke).await
}

/// `GET /api/people/:personId/mailboxes`.
pub async fn person_mailboxes(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let person_id = context.path(PathParameter::PersonId)?.to_string();
    if !is_id_of(&person_id, IdKind::Person) {
        return Err(AgentError::NoSuchSponsor { id: person_id }.into());
    }
    let person = store::person_id_if_any(&person_id);
    let [person, mailboxes] =
        context.read_array([person, tuples::every_mailbox_with_held(&Holder::Person(person_id.clone()))]).await?;
    if person.rows.is_empty() {
        return Err(AgentError::NoSuchSponsor { id: person_id }.into());
    }
    let mailboxes = mail::present_mailboxes(context, &mailboxes, None)?;
    Ok(context.json(&MailboxList { mailboxes }))
}

/// `GET /api/agent-capabilities`.
pub async fn list_capabilities(context: &mut Context<'_>) -> Result<Response, Refusal> {
    Ok(context.json(&capabilities::vocabulary(registry())))
}
