//! The checks a route's declared authority becomes for a caller (`checks_for`):
//! each a statement and the `Check` that settles its result, run in the
//! request's first round trip; and the holder a caller's authority is read
//! from, and an agent's pinned ceiling, for those who show what a caller may do.

use mailroom_contract::relation::ORGANIZATION_OBJECT;
use mailroom_contract::route::mailbox_relations_met;
use mailroom_contract::{Authority, PathParameter, Relation, Route, Tier, registry};

use crate::core::caller::{AgentProof, Caller};
use crate::core::context::ports::{Admission, Attribution, PendingCheck};
use crate::core::outbound::Host;
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Row, Statement};

use super::credentials::AuthenticationError;
use super::errors::AuthorityError;
use super::store::access::{self, AgentProofSql};
use super::tuples::{self, Holder};

/// A fact the dispatcher must confirm before a handler's answer is released.
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    /// The claimed session is live: not signed out, not revoked, person enabled.
    SessionLive,
    /// The claimed agent exists with this credential, is neither revoked, paused
    /// nor expired at `now_ms`, and its sponsor is enabled.
    AgentLive { now_ms: i64 },
    /// The caller holds a relation; if not, the route refuses with the error.
    Holds(AuthorityError),
    /// The caller holds, on the mailbox, every one of `all_of` and (when not empty)
    /// one of `any_of`. The statement lists what it holds there.
    Mailbox { mailbox_id: String, all_of: &'static [Relation], any_of: &'static [Relation] },
    /// The agent's pinned ceiling contains the route.
    Ceiling { error: AuthorityError },
    /// The claimed reminder source exists with this credential and is not revoked.
    SourceLive,
    /// The claimed peer exists with this credential and is not disconnected,
    /// and the agent it says sends (`sender`, a card URL) is on its domain.
    PeerLive { sender: Option<String> },
}

impl Admission for Check {
    /// For an agent's liveness check, what the presented credential proves:
    /// the agent acting for its sponsor when the credential is the agent's,
    /// whether or not the agent is live; nothing when it proved nothing (an
    /// unknown agent, a wrong secret). No other check speaks to attribution.
    fn attribution(&self, result: &QueryResult) -> Option<Attribution> {
        if let Check::SourceLive | Check::PeerLive { .. } = self {
            let matches = result.first().is_some_and(|row| row.flag("matches").unwrap_or(false));
            return Some(if matches { Attribution::OnItsOwn } else { Attribution::Unproven });
        }
        let Check::AgentLive { .. } = self else { return None };
        let sponsor = result
            .first()
            .filter(|row| row.flag("matches").unwrap_or(false))
            .and_then(|row| row.text("sponsor_id").ok());
        Some(sponsor.map_or(Attribution::Unproven, Attribution::ActingFor))
    }

    /// Whether the result of this check's statement lets the request through.
    fn settle(&self, result: &QueryResult) -> Result<(), Refusal> {
        let first = result.first();
        match self {
            Check::SessionLive if result.rows.is_empty() => Err(AuthenticationError::SessionEnded.into()),
            Check::SessionLive => Ok(()),
            Check::AgentLive { now_ms } => settle_agent(first, *now_ms),
            Check::SourceLive => match first {
                Some(row) if row.flag("matches").unwrap_or(false) => {
                    match row.optional_integer("revoked_at").ok().flatten() {
                        Some(_) => Err(AuthenticationError::SourceRevoked.into()),
                        None => Ok(()),
                    }
                }
                _ => Err(AuthenticationError::SourceCredentialInvalid.into()),
            },
            Check::PeerLive { sender } => match first {
                Some(row) if row.flag("matches").unwrap_or(false) => {
                    if row.optional_integer("revoked_at").ok().flatten().is_some() {
                        return Err(AuthenticationError::PeerDisconnected.into());
                    }
                    let domain = row.text("domain").unwrap_or_default();
                    match sender {
                        Some(card) if !Host::of_url(card).is_some_and(|host| host.is_within(&domain)) => {
                            Err(AuthenticationError::PeerSenderOutsideDomain { sender: card.clone(), domain }.into())
                        }
                        _ => Ok(()),
                    }
                }
                _ => Err(AuthenticationError::PeerCredentialInvalid.into()),
            },
            Check::Holds(error) => match result.first_flag("held") {
                Some(true) => Ok(()),
                _ => Err(error.clone().into()),
            },
            Check::Ceiling { error } => match result.first_flag("held") {
                Some(true) => Ok(()),
                _ => Err(error.clone().into()),
            },
            Check::Mailbox { mailbox_id, all_of, any_of } => {
                let held: Vec<Relation> = result
                    .rows
                    .iter()
                    .filter_map(|row| row.text("relation").ok())
                    .filter_map(|name| Relation::parse(&name))
                    .collect();
                if mailbox_relations_met(all_of, any_of, &held) {
                    return Ok(());
                }
                if held.is_empty() {
                    return Err(AuthorityError::NoSuchMailbox { mailbox_id: mailbox_id.clone() }.into());
                }
                // What is missing: some of `all_of`, or else none of `any_of` is held.
                let missing: Vec<Relation> =
                    all_of.iter().copied().filter(|relation| !held.contains(relation)).collect();
                let (missing, any) = if missing.is_empty() { (any_of.to_vec(), true) } else { (missing, false) };
                Err(AuthorityError::MissingMailboxRelations { mailbox_id: mailbox_id.clone(), missing, any }.into())
            }
        }
    }
}

fn pending(check: Check, statement: Statement) -> PendingCheck {
    PendingCheck { statement, admission: Box::new(check) }
}

fn settle_agent(row: Option<&Row>, now_ms: i64) -> Result<(), Refusal> {
    let invalid = || Refusal::from(AuthenticationError::AgentCredentialInvalid);
    let row = row.ok_or_else(invalid)?;
    if !row.flag("matches").unwrap_or(false) {
        return Err(invalid());
    }
    if row.optional_integer("revoked_at").ok().flatten().is_some() {
        return Err(AuthenticationError::AgentRevoked.into());
    }
    if row.optional_integer("expires_at").ok().flatten().is_some_and(|expires_at| expires_at <= now_ms) {
        return Err(AuthenticationError::AgentExpired.into());
    }
    if row.optional_integer("paused_at").ok().flatten().is_some() {
        return Err(AuthenticationError::AgentPaused.into());
    }
    if row.optional_integer("sponsor_disabled_at").ok().flatten().is_some() {
        return Err(AuthenticationError::SponsorDisabled.into());
    }
    Ok(())
}

/// The statement that reads an agent's ceiling: the tools pinned to it at mint.
/// For callers that show what an agent may do (its MCP catalogue, the tools on
/// each mailbox it lists); the dispatcher checks one route at a time instead.
pub fn ceiling_of(agent_id: &str) -> Statement {
    access::ceiling_of(agent_id)
}

/// The tools a `ceiling_of` statement's result names.
pub fn ceiling_tools(result: &QueryResult) -> Vec<String> {
    result.rows.iter().filter_map(|row| row.text("route").ok()).collect()
}

/// The holder a caller's authority is read from, judged at `now_ms`.
pub fn holder_of(caller: &Caller, now_ms: i64) -> Option<Holder> {
    match caller {
        // A source holds no relation: it is admitted to its own routes alone.
        Caller::Stranger | Caller::Source { .. } | Caller::Peer { .. } => None,
        Caller::Person { person_id, .. } => Some(Holder::Person(person_id.clone())),
        Caller::Agent { agent_id, .. } => Some(Holder::Agent { agent_id: agent_id.clone(), now_ms }),
    }
}

/// The statement confirming a claimed caller is live.
fn liveness(caller: &Caller, now_ms: i64) -> Option<PendingCheck> {
    match caller {
        Caller::Stranger => None,
        Caller::Person { person_id, session_id } => {
            Some(pending(Check::SessionLive, access::session_live(session_id, person_id)))
        }
        Caller::Agent { agent_id, proof } => {
            // A credential must be the one stored; an OAuth token, signed by the
            // node, needs the agent's connection to stand (revoking the agent or
            // the grant ends it). Neither works for an agent a consent minted
            // whose code was never exchanged: it can do nothing (decision 0026).
            let proof = match proof {
                AgentProof::Credential { hash } => AgentProofSql::Credential(hash),
                AgentProof::Connection => AgentProofSql::Connection,
            };
            Some(pending(Check::AgentLive { now_ms }, access::agent_live(agent_id, proof)))
        }
        Caller::Source { source_id, credential_hash } => {
            Some(pending(Check::SourceLive, access::source_live(source_id, credential_hash)))
        }
        Caller::Peer { peer_id, credential_hash, sender } => {
            Some(pending(Check::PeerLive { sender: sender.clone() }, access::peer_live(peer_id, credential_hash)))
        }
    }
}

/// The checks a route's authority needs for this caller, or the refusal when no
/// database fact could help (a stranger on a member route).
pub fn checks_for(
    route: &Route,
    caller: &Caller,
    now_ms: i64,
    path_parameter: impl Fn(PathParameter) -> Option<String>,
) -> Result<Vec<PendingCheck>, AuthenticationError> {
    let authority = &route.authority;
    if *authority == Authority::Public {
        return Ok(Vec::new());
    }
    // A source's credential opens its own routes and nothing else, and those
    // routes open to nothing else: both known before any I/O.
    match (caller, authority) {
        (Caller::Source { .. }, Authority::Source) => return Ok(liveness(caller, now_ms).into_iter().collect()),
        (Caller::Source { .. }, _) => return Err(AuthenticationError::SourceOnlyPushes),
        // A peer's node reaches the routes declared open to it, as itself:
        // which agent it may message is the messaging domain's to judge.
        (Caller::Peer { .. }, _) if route.open_to_peers => {
            return Ok(liveness(caller, now_ms).into_iter().collect());
        }
        (Caller::Peer { .. }, _) => return Err(AuthenticationError::PeersOnlyMessage),
        (Caller::Stranger, Authority::Source) => return Err(AuthenticationError::MissingCredentials),
        (_, Authority::Source) => return Err(AuthenticationError::SourcesOnly),
        _ => {}
    }
    let Some(holder) = holder_of(caller, now_ms) else {
        return match authority {
            Authority::Open => Ok(Vec::new()),
            _ => Err(AuthenticationError::MissingCredentials),
        };
    };
    let mut checks: Vec<PendingCheck> = liveness(caller, now_ms).into_iter().collect();
    if let Caller::Agent { agent_id, proof } = caller {
        // The ceiling binds every route an agent calls, on every surface. The
        // machine surface itself is not a capability: the calls it re-enters are
        // checked against the ceiling one by one.
        let tier = registry().tier(route.id);
        if tier != Tier::Surface {
            let never_offered_because = registry().withheld_from_agents_because(route.id);
            checks.push(pending(
                Check::Ceiling {
                    error: AuthorityError::OutsideCeiling {
                        tool: route.tool,
                        never_offered_because,
                        connected_app: matches!(proof, AgentProof::Connection),
                    },
                },
                access::within_ceiling(agent_id, route.tool),
            ));
        }
    }
    let holds = |relation: Relation, error: AuthorityError| {
        pending(Check::Holds(error), tuples::holds(&holder, relation, ORGANIZATION_OBJECT))
    };
    match authority {
        // Admission only: a filtered route answers each member with the rows they
        // may see, and a personal route with their own (an agent's, its sponsor's).
        Authority::Public
        | Authority::Open
        | Authority::Member
        | Authority::Filtered { .. }
        | Authority::Personal
        | Authority::Source => {}
        // A requester's object is looked up by its requester too (the domain's
        // scope), so holding the relation reaches only the caller's own.
        Authority::Organization(relation) | Authority::Requester(relation) => {
            checks.push(holds(*relation, AuthorityError::MissingOrganizationRelation(*relation)));
        }
        Authority::SelfOrAdmin { person_parameter } => {
            let named = path_parameter(*person_parameter);
            if named.as_deref() != caller.actor_id() {
                checks.push(holds(Relation::OrgAdmin, AuthorityError::NotSelfOrAdministrator));
            }
        }
        Authority::Sponsor { agent_parameter } => {
            let agent_id = path_parameter(*agent_parameter).unwrap_or_default();
            checks.push(pending(
                Check::Holds(AuthorityError::NotSponsorOrAdministrator),
                tuples::sponsors_or_administers(&holder, &agent_id),
            ));
        }
        Authority::Mailbox { mailbox_parameter, all_of, any_of } => {
            let mailbox_id = path_parameter(*mailbox_parameter).unwrap_or_default();
            let statement = tuples::relations_on(&holder, &mailbox_id);
            checks.push(pending(Check::Mailbox { mailbox_id, all_of, any_of }, statement));
        }
    }
    Ok(checks)
}
