//! Minting: an administrator's choice of capabilities, expanded to routes and
//! pinned, and of mailboxes, granted only where the sponsor holds the same
//! relation; then the credential shown once, or a pairing code.

use std::collections::{BTreeMap, BTreeSet};

use chrono::DateTime;
use mailroom_contract::api::{Agent, CredentialDelivery, MailboxGrant, MintAgent, MintedAgent};
use mailroom_contract::capabilities::{CAPABILITIES, Capability};
use mailroom_contract::{ObjectKind, Relation, registry};

use super::errors::AgentError;
use super::pairing::issue_code;
use super::store::{self, AgentRow, NewAgent};
use crate::authz::credentials::NamingCredential;
use crate::authz::tuples::{self, Holder};
use crate::core::context::Context;
use crate::core::crypto::hash_secret;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of, new_id};
use crate::core::refusal::Refusal;
use crate::core::storage::Statement;

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

/// How a new agent's authority is handed over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Handover {
    /// The `mr_agt_` credential, shown once.
    Credential,
    /// A pairing code its software redeems.
    PairingCode,
    /// An OAuth client's tokens, after the sponsor's own consent: no credential
    /// exists, and the caller's `oauth` domain records the connection. Until its
    /// code is exchanged the agent is pending, up to `pending_until` (the code's
    /// expiry): it holds nothing and can do nothing.
    Connection { pending_until: i64 },
}

/// `POST /api/agents`.
pub async fn mint(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: MintAgent = context.body()?;
    crate::core::text::refuse_direction_controls("name", &request.name)?;
    let handover = match request.delivery {
        CredentialDelivery::Credential => Handover::Credential,
        CredentialDelivery::PairingCode => Handover::PairingCode,
    };
    let minted = mint_agent(context, &request, handover).await?;
    Ok(context.json(&minted))
}

/// Mints the agent a person's consent to an OAuth client gives: `sponsor`, the
/// person consenting, with the capabilities and mailboxes they chose, checked
/// exactly as an administrator's mint is. It has no credential: the `oauth`
/// domain records its connection and its code in the same commit. It is
/// pending until the code is exchanged ([`connection_established`]), at the
/// latest until `pending_until`, the code's expiry, after which the upkeep
/// removes it.
pub async fn mint_for_connection(
    context: &mut Context<'_>,
    name: &str,
    sponsor: &str,
    capabilities: &[String],
    mailboxes: &[MailboxGrant],
    pending_until: i64,
) -> Result<Agent, Refusal> {
    let request = MintAgent {
        name: name.to_string(),
        sponsor: sponsor.to_string(),
        capabilities: capabilities.to_vec(),
        mailboxes: mailboxes.to_vec(),
        expires_at: None,
        delivery: CredentialDelivery::Credential,
    };
    Ok(mint_agent(context, &request, Handover::Connection { pending_until }).await?.agent)
}

/// The statement that makes a connection's pending agent active: its code was
/// exchanged, in the commit this is queued in.
pub fn connection_established(agent_id: &str) -> Statement {
    store::establish_connection(agent_id)
}

/// Checks a mint against what the sponsor holds now, and queues the agent, its
/// pinned routes and its tuples.
async fn mint_agent(
    context: &mut Context<'_>,
    request: &MintAgent,
    handover: Handover,
) -> Result<MintedAgent, Refusal> {
    let mint = validate(request, context.now_ms())?;
    let sponsor = store::sponsor(&mint.sponsor);
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

    let agent_id = new_id(IdKind::Agent, context.platform());
    let caller = context.caller().actor_id().unwrap_or_default().to_string();
    let routes: BTreeSet<&'static str> = mint
        .capabilities
        .iter()
        .flat_map(|capability| capability.routes.iter().map(|id| registry().route(*id).tool))
        .collect();
    let (credential, credential_hash) = match handover {
        Handover::Credential => {
            let credential = NamingCredential::Agent.issue(&agent_id, context.platform());
            let hash = hash_secret(&credential);
            (Some(credential), Some(hash))
        }
        Handover::PairingCode | Handover::Connection { .. } => (None, None),
    };
    let connection_pending_until = match handover {
        Handover::Connection { pending_until } => Some(pending_until),
        Handover::Credential | Handover::PairingCode => None,
    };
    context.write(
        store::insert_agent(NewAgent {
            agent_id: &agent_id,
            name: &mint.name,
            sponsor_id: &mint.sponsor,
            credential_hash: credential_hash.clone(),
            created_at: context.now_ms(),
            created_by: &caller,
            expires_at: mint.expires_at,
            // Shown once to whoever minted it: they hold the credential now.
            credential_issued_by: credential_hash.as_ref().map(|_| caller.as_str()),
            connection_pending_until,
        })
        .statement(),
    );
    context.write(store::pin_routes(&agent_id, routes.iter().copied()));
    for (mailbox, relations) in &mint.grants {
        for relation in relations {
            context.write(tuples::grant(&agent_id, *relation, mailbox, context.now_ms(), &caller));
        }
    }
    let pairing = (handover == Handover::PairingCode).then(|| issue_code(context, &agent_id));
    context.audit_object(agent_id.clone());
    context.audit_detail(serde_json::json!({
        "name": mint.name,
        "sponsor": mint.sponsor,
        "capabilities": mint.capabilities.iter().map(|capability| capability.name).collect::<Vec<_>>(),
        "routes": routes.len(),
        "mailboxes": request.mailboxes.iter().map(|grant| &grant.mailbox).collect::<Vec<_>>(),
        "delivery": match handover {
            Handover::Credential => "credential",
            Handover::PairingCode => "pairing_code",
            Handover::Connection { .. } => "oauth_consent",
        },
    }));
    let row = AgentRow {
        id: agent_id,
        name: mint.name,
        sponsor_id: mint.sponsor,
        credential_hash: credential.as_ref().map(|credential| hash_secret(credential)),
        created_at: context.now_ms(),
        created_by: caller,
        expires_at: mint.expires_at,
        paused_at: None,
        revoked_at: None,
        last_seen_at: None,
        connected: connection_pending_until.map(|_| 1),
        connection_pending_until,
    };
    let held: Vec<(String, String)> = mint
        .grants
        .iter()
        .flat_map(|(mailbox, relations)| {
            relations.iter().map(|relation| (relation.name().to_string(), mailbox.clone()))
        })
        .collect();
    let routes: Vec<String> = routes.iter().map(|route| route.to_string()).collect();
    let agent = row.present(context.now_ms(), &routes, &held);
    Ok(MintedAgent { agent, credential, pairing })
}
