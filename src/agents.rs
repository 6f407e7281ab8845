//! Agents: principals that act in their own right under a named person's
//! authority, and the routes an administrator mints, shows, pauses, resumes,
//! revokes and pairs them with.
//!
//! At mint the chosen capabilities are expanded to routes and the routes are
//! pinned (`agent_routes`); nothing widens them later. The agent's mailbox
//! relations are tuples like anyone's, granted through the same table and only
//! where the sponsor holds them; `authz::tuples` intersects them with the
//! sponsor's on every read. The credential is shown once and stored as a hash;
//! a pairing code can stand in for it, redeemed once within ten minutes.

use std::collections::{BTreeMap, BTreeSet};

use chrono::DateTime;
use mailroom_contract::api::{
    Agent, AgentCredential, AgentList, AgentState, CapabilityHeld, CredentialDelivery, MailboxGrant, MailboxList,
    MintAgent, MintedAgent, PairingCode, RedeemPairingCode,
};
use mailroom_contract::capabilities::{CAPABILITIES, Capability};
use mailroom_contract::{ObjectKind, Relation, capabilities, registry};
use serde::Deserialize;

use crate::authz::tuples::{self, Holder};
use crate::context::Context;
use crate::credentials::{Caller, hash_secret, new_agent_credential, new_pairing_code};
use crate::http::Response;
use crate::ids::{IdKind, is_id_of, new_id};
use crate::refusal::Refusal;
use crate::sessions::FAILURE_WINDOW_MS;
use crate::storage::{QueryResult, Statement, Value};
use crate::time::{MINUTE_MS, rfc3339};

/// How long a pairing code works.
pub const PAIRING_CODE_LIFETIME_MS: i64 = 10 * MINUTE_MS;
/// Failed redemptions from one address within the window before it pauses.
pub const PAIRING_FAILURE_LIMIT: i64 = 20;

/// What can be wrong with an agent or a request about one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentError {
    /// Empty or over-long name.
    InvalidName,
    /// No agent has this id.
    NoSuchAgent { id: String },
    /// No person has the sponsor's id.
    NoSuchSponsor { id: String },
    /// The sponsor is disabled.
    SponsorDisabled,
    /// No capabilities were chosen.
    NoCapabilities,
    /// A capability name is not in the vocabulary.
    UnknownCapability { name: String },
    /// A mailbox named in a grant does not exist.
    NoSuchMailbox { id: String },
    /// The same mailbox was named twice.
    DuplicateMailbox { id: String },
    /// A grant names something that is not a mailbox relation.
    NotAMailboxRelation { relation: String },
    /// The sponsor does not hold a relation the grant asks for.
    SponsorLacks { relation: String, mailbox: String },
    /// No chosen mailbox grants everything a chosen capability needs.
    CapabilityUnsatisfiable { capability: String, requires: Vec<String> },
    /// The expiry is not an RFC 3339 time in the future.
    InvalidExpiry,
    /// The agent was revoked; nothing more can be done with it.
    Revoked,
    /// The pairing code is unknown, used or expired.
    PairingCodeInvalid,
    /// Too many failed redemptions from this address.
    TooManyPairingAttempts { retry_after_seconds: u32 },
}

#[derive(Clone, Debug, Deserialize)]
struct AgentRow {
    id: String,
    name: String,
    sponsor_id: String,
    credential_hash: Option<String>,
    created_at: i64,
    created_by: String,
    expires_at: Option<i64>,
    paused_at: Option<i64>,
    revoked_at: Option<i64>,
}

const AGENT_COLUMNS: &str =
    "id, name, sponsor_id, credential_hash, created_at, created_by, expires_at, paused_at, revoked_at";

#[derive(Deserialize)]
struct RouteRow {
    agent_id: String,
    route: String,
}

#[derive(Deserialize)]
struct TupleRow {
    subject: String,
    relation: String,
    object: String,
}

impl AgentRow {
    fn state(&self, now_ms: i64) -> AgentState {
        if self.revoked_at.is_some() {
            AgentState::Revoked
        } else if self.expires_at.is_some_and(|expires_at| expires_at <= now_ms) {
            AgentState::Expired
        } else if self.paused_at.is_some() {
            AgentState::Paused
        } else if self.credential_hash.is_none() {
            AgentState::AwaitingPairing
        } else {
            AgentState::Active
        }
    }

    fn present(&self, now_ms: i64, routes: &[String], tuples: &[(String, String)]) -> Agent {
        let pinned: BTreeSet<&str> = routes.iter().map(String::as_str).collect();
        let capabilities = CAPABILITIES
            .iter()
            .filter_map(|capability| {
                let held = capability.routes.iter().filter(|id| pinned.contains(registry().route(**id).tool)).count();
                (held > 0).then(|| CapabilityHeld {
                    name: capability.name.to_string(),
                    held: held as i64,
                    total: capability.routes.len() as i64,
                })
            })
            .collect();
        let other_routes = routes
            .iter()
            .filter(|route| {
                registry().route_by_tool(route).and_then(|route| capabilities::capability_of(route.id)).is_none()
            })
            .cloned()
            .collect();
        let mut by_mailbox: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for (relation, object) in tuples {
            by_mailbox.entry(object).or_default().push(relation.clone());
        }
        Agent {
            id: self.id.clone(),
            name: self.name.clone(),
            sponsor: self.sponsor_id.clone(),
            state: self.state(now_ms),
            created_at: rfc3339(self.created_at),
            created_by: self.created_by.clone(),
            expires_at: self.expires_at.map(rfc3339),
            paused_at: self.paused_at.map(rfc3339),
            revoked_at: self.revoked_at.map(rfc3339),
            capabilities,
            other_routes,
            routes: routes.to_vec(),
            mailboxes: by_mailbox
                .into_iter()
                .map(|(mailbox, relations)| MailboxGrant { mailbox: mailbox.to_string(), relations })
                .collect(),
        }
    }
}

/// Presents agents from their rows, their pinned routes and their tuples.
fn present_all(
    context: &Context<'_>,
    agents: &QueryResult,
    routes: &QueryResult,
    tuples: &QueryResult,
) -> Result<Vec<Agent>, Refusal> {
    let agents: Vec<AgentRow> = agents.decode_all().map_err(|error| context.internal(error))?;
    let routes: Vec<RouteRow> = routes.decode_all().map_err(|error| context.internal(error))?;
    let tuples: Vec<TupleRow> = tuples.decode_all().map_err(|error| context.internal(error))?;
    Ok(agents
        .iter()
        .map(|agent| {
            let pinned: Vec<String> =
                routes.iter().filter(|row| row.agent_id == agent.id).map(|row| row.route.clone()).collect();
            let held: Vec<(String, String)> = tuples
                .iter()
                .filter(|row| row.subject == agent.id)
                .map(|row| (row.relation.clone(), row.object.clone()))
                .collect();
            agent.present(context.now_ms, &pinned, &held)
        })
        .collect())
}

fn routes_of(agent_id: Option<&str>) -> Statement {
    Statement::new(
        "SELECT agent_id, route FROM agent_routes WHERE (?1 IS NULL OR agent_id = ?1) ORDER BY agent_id, route",
    )
    .bind(agent_id)
}

/// `GET /api/agents`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let agents = Statement::new(format!("SELECT {AGENT_COLUMNS} FROM agents ORDER BY created_at DESC, id DESC"));
    let [agents, routes, held] = context.read_array([agents, routes_of(None), tuples::granted_to_agents()]).await?;
    let agents = present_all(context, &agents, &routes, &held)?;
    Ok(context.json(&AgentList { agents }))
}

/// Reads the path's agent, its routes and its tuples, refusing an unknown one.
async fn the_agent(context: &mut Context<'_>) -> Result<(AgentRow, Agent), Refusal> {
    let agent_id = context.path("agentId").to_string();
    context.audit_object(agent_id.clone());
    if !is_id_of(&agent_id, IdKind::Agent) {
        return Err(AgentError::NoSuchAgent { id: agent_id }.into());
    }
    let row = Statement::new(format!("SELECT {AGENT_COLUMNS} FROM agents WHERE id = ?1")).bind(agent_id.as_str());
    let held = tuples::list(Some(&agent_id), None);
    let [row, routes, held] = context.read_array([row, routes_of(Some(&agent_id)), held]).await?;
    let agents = present_all(context, &row, &routes, &held)?;
    let agent = agents.into_iter().next().ok_or(AgentError::NoSuchAgent { id: agent_id })?;
    let row: AgentRow = row.rows[0].decode().map_err(|error| context.internal(error))?;
    Ok((row, agent))
}

/// `GET /api/agents/:agentId`.
pub async fn get(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (_, agent) = the_agent(context).await?;
    Ok(context.json(&agent))
}

/// Pause, resume or revoke: a change to the agent's own row.
async fn set_state(context: &mut Context<'_>, change: StateChange) -> Result<Response, Refusal> {
    let (mut row, mut agent) = the_agent(context).await?;
    if row.revoked_at.is_some() {
        return Err(AgentError::Revoked.into());
    }
    let now_ms = context.now_ms;
    // Pausing twice keeps the first pause's time: it is when the agent stopped.
    let assignment = match change {
        StateChange::Pause => {
            row.paused_at = Some(row.paused_at.unwrap_or(now_ms));
            "paused_at = COALESCE(paused_at, ?2)"
        }
        StateChange::Resume => {
            row.paused_at = None;
            "paused_at = NULL"
        }
        StateChange::Revoke => {
            row.revoked_at = Some(now_ms);
            "revoked_at = ?2"
        }
    };
    let statement = Statement::new(format!("UPDATE agents SET {assignment} WHERE id = ?1 AND revoked_at IS NULL"))
        .bind(row.id.as_str());
    context.write(if assignment.contains("?2") { statement.bind(now_ms) } else { statement });
    if change == StateChange::Revoke {
        // Nothing can pair a revoked agent again.
        context.write(
            Statement::new("UPDATE pairing_codes SET redeemed_at = ?2 WHERE agent_id = ?1 AND redeemed_at IS NULL")
                .bind(row.id.as_str())
                .bind(now_ms),
        );
    }
    // The answer is the row as it now stands, judged as every other read judges
    // it: resuming an expired agent answers `expired`, not `active`.
    agent.state = row.state(now_ms);
    agent.paused_at = row.paused_at.map(rfc3339);
    agent.revoked_at = row.revoked_at.map(rfc3339);
    Ok(context.json(&agent))
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

/// Queues a new pairing code for `agent_id` and answers it.
fn issue_code(context: &mut Context<'_>, agent_id: &str) -> PairingCode {
    let code = new_pairing_code(context.node.platform);
    let expires_at = context.now_ms + PAIRING_CODE_LIFETIME_MS;
    context.write(
        Statement::new(
            "INSERT INTO pairing_codes (code_hash, agent_id, created_at, expires_at) VALUES (?1, ?2, ?3, ?4)",
        )
        .bind(hash_secret(&code))
        .bind(agent_id)
        .bind(context.now_ms)
        .bind(expires_at),
    );
    PairingCode { agent_id: agent_id.to_string(), code, expires_at: rfc3339(expires_at) }
}

/// `POST /api/agents/:agentId/pairing-code`.
pub async fn issue_pairing_code(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (row, _) = the_agent(context).await?;
    if row.revoked_at.is_some() {
        return Err(AgentError::Revoked.into());
    }
    let code = issue_code(context, &row.id);
    context.audit_detail(serde_json::json!({ "expires_at": code.expires_at }));
    Ok(context.json(&code))
}

fn failure_key(address: Option<&str>) -> String {
    format!("pairing:{}", address.unwrap_or("unknown"))
}

/// `POST /api/agents/pair`.
pub async fn redeem_pairing_code(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: RedeemPairingCode = context.body()?;
    let key = failure_key(context.request.client_address.as_deref());
    let code_hash = hash_secret(request.code.trim());
    let code = Statement::new(
        "SELECT c.agent_id, c.expires_at, c.redeemed_at, a.revoked_at, a.sponsor_id \
         FROM pairing_codes c JOIN agents a ON a.id = c.agent_id WHERE c.code_hash = ?1",
    )
    .bind(code_hash.as_str());
    let failures =
        Statement::new("SELECT failures, window_started_at FROM sign_in_failures WHERE key = ?1").bind(key.as_str());
    let [code, failures] = context.read_array([code, failures]).await?;
    if let Some(row) = failures.first() {
        let count = row.integer("failures").unwrap_or(0);
        let window_ends = row.integer("window_started_at").unwrap_or(0) + FAILURE_WINDOW_MS;
        if count >= PAIRING_FAILURE_LIMIT && window_ends > context.now_ms {
            let retry_after_seconds = ((window_ends - context.now_ms) / 1000).max(1) as u32;
            return Err(AgentError::TooManyPairingAttempts { retry_after_seconds }.into());
        }
    }
    let usable = code.first().filter(|row| {
        row.optional_integer("redeemed_at").ok().flatten().is_none()
            && row.optional_integer("revoked_at").ok().flatten().is_none()
            && row.integer("expires_at").is_ok_and(|expires_at| expires_at > context.now_ms)
    });
    let Some(row) = usable else {
        context.write_whatever_the_outcome(crate::sessions::count_failure(&key, context.now_ms));
        return Err(AgentError::PairingCodeInvalid.into());
    };
    let agent_id = row.text("agent_id").map_err(|error| context.internal(error))?;
    let sponsor = row.text("sponsor_id").map_err(|error| context.internal(error))?;
    let credential = new_agent_credential(&agent_id, context.node.platform);
    context.write_changing_one_row(
        Statement::new("UPDATE pairing_codes SET redeemed_at = ?2 WHERE code_hash = ?1 AND redeemed_at IS NULL")
            .bind(code_hash.as_str())
            .bind(context.now_ms),
        AgentError::PairingCodeInvalid,
    );
    context.write(
        Statement::new("UPDATE agents SET credential_hash = ?2 WHERE id = ?1")
            .bind(agent_id.as_str())
            .bind(hash_secret(&credential)),
    );
    // The code proved who is redeeming it: the entry names the agent, under its sponsor.
    context.caller = Caller::Agent { agent_id: agent_id.clone(), credential_hash: hash_secret(&credential) };
    context.delegator = Some(sponsor);
    context.audit_object(agent_id.clone());
    Ok(context.json(&AgentCredential { agent_id, credential }))
}

/// A mint request, checked for shape.
struct ValidMint {
    name: String,
    sponsor: String,
    capabilities: Vec<&'static Capability>,
    grants: Vec<(String, Vec<Relation>)>,
    expires_at: Option<i64>,
}

fn validate(request: &MintAgent, now_ms: i64) -> Result<ValidMint, AgentError> {
    let name = request.name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(AgentError::InvalidName);
    }
    if !is_id_of(&request.sponsor, IdKind::Person) {
        return Err(AgentError::NoSuchSponsor { id: request.sponsor.clone() });
    }
    if request.capabilities.is_empty() {
        return Err(AgentError::NoCapabilities);
    }
    let mut capabilities: Vec<&'static Capability> = Vec::new();
    for name in &request.capabilities {
        let capability = CAPABILITIES
            .iter()
            .find(|capability| capability.name == name)
            .ok_or_else(|| AgentError::UnknownCapability { name: name.clone() })?;
        if !capabilities.iter().any(|chosen| chosen.name == capability.name) {
            capabilities.push(capability);
        }
    }
    let mut grants: Vec<(String, Vec<Relation>)> = Vec::new();
    for grant in &request.mailboxes {
        if !is_id_of(&grant.mailbox, IdKind::Mailbox) {
            return Err(AgentError::NoSuchMailbox { id: grant.mailbox.clone() });
        }
        if grants.iter().any(|(mailbox, _)| *mailbox == grant.mailbox) {
            return Err(AgentError::DuplicateMailbox { id: grant.mailbox.clone() });
        }
        let mut relations = Vec::new();
        for name in &grant.relations {
            let relation = Relation::parse(name)
                .filter(|relation| relation.object_kind() == ObjectKind::Mailbox)
                .ok_or_else(|| AgentError::NotAMailboxRelation { relation: name.clone() })?;
            if !relations.contains(&relation) {
                relations.push(relation);
            }
        }
        grants.push((grant.mailbox.clone(), relations));
    }
    let expires_at = match &request.expires_at {
        None => None,
        Some(text) => {
            let moment = DateTime::parse_from_rfc3339(text).map_err(|_| AgentError::InvalidExpiry)?;
            let milliseconds = moment.timestamp_millis();
            if milliseconds <= now_ms {
                return Err(AgentError::InvalidExpiry);
            }
            Some(milliseconds)
        }
    };
    Ok(ValidMint { name: name.to_string(), sponsor: request.sponsor.clone(), capabilities, grants, expires_at })
}

/// `POST /api/agents`.
pub async fn mint(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: MintAgent = context.body()?;
    let mint = validate(&request, context.now_ms)?;
    let sponsor = Statement::new("SELECT id, disabled_at FROM people WHERE id = ?1").bind(mint.sponsor.as_str());
    let held_by_sponsor = tuples::every_mailbox_with_held(&Holder::Person(mint.sponsor.clone()));
    let [sponsor, mailboxes] = context.read_array([sponsor, held_by_sponsor]).await?;
    let Some(sponsor_row) = sponsor.first() else {
        return Err(AgentError::NoSuchSponsor { id: mint.sponsor }.into());
    };
    if sponsor_row.optional_integer("disabled_at").ok().flatten().is_some() {
        return Err(AgentError::SponsorDisabled.into());
    }
    // What the sponsor holds on each mailbox: the most an agent can be granted there.
    let sponsor_holds: BTreeMap<String, Vec<Relation>> = mailboxes
        .rows
        .iter()
        .filter_map(|row| {
            let id = row.text("id").ok()?;
            let held = row.optional_text("held").ok().flatten().unwrap_or_default();
            Some((id, held.split(',').filter_map(Relation::parse).collect()))
        })
        .collect();
    for (mailbox, relations) in &mint.grants {
        let Some(held) = sponsor_holds.get(mailbox) else {
            return Err(AgentError::NoSuchMailbox { id: mailbox.clone() }.into());
        };
        if let Some(missing) = relations.iter().find(|relation| !held.contains(relation)) {
            return Err(AgentError::SponsorLacks { relation: missing.name().into(), mailbox: mailbox.clone() }.into());
        }
    }
    // Requirements are evaluated per mailbox: a capability needing two relations
    // together is satisfied only where one mailbox grants both.
    for capability in &mint.capabilities {
        let requires = capability.requirements(registry());
        let satisfied = requires.is_empty()
            || mint.grants.iter().any(|(_, granted)| requires.iter().all(|relation| granted.contains(relation)));
        if !satisfied {
            return Err(AgentError::CapabilityUnsatisfiable {
                capability: capability.name.to_string(),
                requires: requires.iter().map(|relation| relation.name().to_string()).collect(),
            }
            .into());
        }
    }

    let agent_id = new_id(IdKind::Agent, context.node.platform);
    let caller = context.caller.actor_id().unwrap_or_default().to_string();
    let routes: BTreeSet<&'static str> = mint
        .capabilities
        .iter()
        .flat_map(|capability| capability.routes.iter().map(|id| registry().route(*id).tool))
        .collect();
    let (credential, credential_hash) = match request.delivery {
        CredentialDelivery::Credential => {
            let credential = new_agent_credential(&agent_id, context.node.platform);
            let hash = hash_secret(&credential);
            (Some(credential), Some(hash))
        }
        CredentialDelivery::PairingCode => (None, None),
    };
    context.write(
        Statement::new(
            "INSERT INTO agents (id, name, sponsor_id, credential_hash, created_at, created_by, expires_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .bind(agent_id.as_str())
        .bind(mint.name.as_str())
        .bind(mint.sponsor.as_str())
        .bind(credential_hash)
        .bind(context.now_ms)
        .bind(caller.as_str())
        .bind(mint.expires_at),
    );
    let mut pin = Statement::new(format!(
        "INSERT INTO agent_routes (agent_id, route) VALUES {}",
        vec!["(?, ?)"; routes.len()].join(", ")
    ));
    for route in &routes {
        pin.parameters.push(Value::from(agent_id.as_str()));
        pin.parameters.push(Value::from(*route));
    }
    context.write(pin);
    for (mailbox, relations) in &mint.grants {
        for relation in relations {
            context.write(tuples::grant(&agent_id, *relation, mailbox, context.now_ms, &caller));
        }
    }
    let pairing = (request.delivery == CredentialDelivery::PairingCode).then(|| issue_code(context, &agent_id));
    context.audit_object(agent_id.clone());
    context.audit_detail(serde_json::json!({
        "name": mint.name,
        "sponsor": mint.sponsor,
        "capabilities": mint.capabilities.iter().map(|capability| capability.name).collect::<Vec<_>>(),
        "routes": routes.len(),
        "mailboxes": request.mailboxes.iter().map(|grant| &grant.mailbox).collect::<Vec<_>>(),
        "delivery": if pairing.is_some() { "pairing_code" } else { "credential" },
    }));
    let row = AgentRow {
        id: agent_id,
        name: mint.name,
        sponsor_id: mint.sponsor,
        credential_hash: credential.as_ref().map(|credential| hash_secret(credential)),
        created_at: context.now_ms,
        created_by: caller,
        expires_at: mint.expires_at,
        paused_at: None,
        revoked_at: None,
    };
    let held: Vec<(String, String)> = mint
        .grants
        .iter()
        .flat_map(|(mailbox, relations)| {
            relations.iter().map(|relation| (relation.name().to_string(), mailbox.clone()))
        })
        .collect();
    let routes: Vec<String> = routes.iter().map(|route| route.to_string()).collect();
    let agent = row.present(context.now_ms, &routes, &held);
    Ok(context.json(&MintedAgent { agent, credential, pairing }))
}

/// `GET /api/people/:personId/mailboxes`.
pub async fn person_mailboxes(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let person_id = context.path("personId").to_string();
    if !is_id_of(&person_id, IdKind::Person) {
        return Err(crate::people::PersonError::NoSuchPerson { id: person_id }.into());
    }
    let person = Statement::new("SELECT id FROM people WHERE id = ?1").bind(person_id.as_str());
    let [person, mailboxes] =
        context.read_array([person, tuples::every_mailbox_with_held(&Holder::Person(person_id.clone()))]).await?;
    if person.rows.is_empty() {
        return Err(crate::people::PersonError::NoSuchPerson { id: person_id }.into());
    }
    let mailboxes = crate::mailboxes::present_all(context, &mailboxes, None)?;
    Ok(context.json(&MailboxList { mailboxes }))
}

/// `GET /api/agent-capabilities`.
pub async fn list_capabilities(context: &mut Context<'_>) -> Result<Response, Refusal> {
    Ok(context.json(&capabilities::vocabulary(registry())))
}
