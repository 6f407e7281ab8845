//! Authority: turning a route's declared authority into the checks the dispatcher
//! runs, and the errors when they fail.
//!
//! The contract says what a route needs; this module says how that is asked of
//! the database. It decides nothing per route: a route's authority is data in the
//! contract, and the dispatcher enforces exactly that data, plus, for an agent,
//! its pinned ceiling, on every surface alike.

pub mod tuples;

use mailroom_contract::relation::ORGANIZATION_OBJECT;
use mailroom_contract::route::mailbox_relations_met;
use mailroom_contract::{Authority, Relation, Route, Tier, registry};

use crate::credentials::{AuthenticationError, Caller};
use crate::refusal::Refusal;
use crate::storage::{QueryResult, Row, Statement};
use tuples::Holder;

/// Why a signed-in caller may not use a route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthorityError {
    /// The caller holds nothing on the mailbox, which answers as if it did not exist.
    NoSuchMailbox { mailbox_id: String },
    /// The caller holds something on the mailbox, but not these relations.
    MissingMailboxRelations { mailbox_id: String, missing: Vec<Relation>, any: bool },
    /// The route needs this relation on the organisation.
    MissingOrganizationRelation(Relation),
    /// The route is the named person's own, or an administrator's.
    NotSelfOrAdministrator,
    /// The route acts on a person's own account and the caller is not a person.
    PeopleOnly,
    /// The route is not in the agent's pinned ceiling; for a route no agent is ever
    /// given, why.
    OutsideCeiling { tool: &'static str, never_offered_because: Option<String> },
}

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
}

/// A check with the statement that answers it.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingCheck {
    pub check: Check,
    pub statement: Statement,
}

impl Check {
    /// For an agent's liveness check, its sponsor when the presented credential
    /// is the agent's, whether or not the agent is live: the call is then
    /// attributable to the agent, acting for that sponsor. `None` for every other
    /// check, and when the credential proved nothing (an unknown agent, a wrong
    /// secret): such a call names nobody.
    pub fn proven_sponsor(&self, result: &QueryResult) -> Option<String> {
        let Check::AgentLive { .. } = self else { return None };
        let row = result.first()?;
        if !row.flag("matches").unwrap_or(false) {
            return None;
        }
        row.text("sponsor_id").ok()
    }

    /// Whether the result of this check's statement lets the request through.
    pub fn settle(&self, result: &QueryResult) -> Result<(), Refusal> {
        let first = result.first();
        match self {
            Check::SessionLive if result.rows.is_empty() => Err(AuthenticationError::SessionEnded.into()),
            Check::SessionLive => Ok(()),
            Check::AgentLive { now_ms } => settle_agent(first, *now_ms),
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
    Statement::new("SELECT route FROM agent_routes WHERE agent_id = ?1").bind(agent_id)
}

/// The tools a `ceiling_of` statement's result names.
pub fn ceiling_tools(result: &QueryResult) -> Vec<String> {
    result.rows.iter().filter_map(|row| row.text("route").ok()).collect()
}

/// The holder a caller's authority is read from, judged at `now_ms`.
pub fn holder_of(caller: &Caller, now_ms: i64) -> Option<Holder> {
    match caller {
        Caller::Stranger => None,
        Caller::Person { person_id, .. } => Some(Holder::Person(person_id.clone())),
        Caller::Agent { agent_id, .. } => Some(Holder::Agent { agent_id: agent_id.clone(), now_ms }),
    }
}

/// The statement confirming a claimed caller is live.
fn liveness(caller: &Caller, now_ms: i64) -> Option<PendingCheck> {
    match caller {
        Caller::Stranger => None,
        Caller::Person { person_id, session_id } => Some(PendingCheck {
            check: Check::SessionLive,
            statement: Statement::new(
                "SELECT 1 AS live FROM sessions s JOIN people p ON p.id = s.person_id \
                 WHERE s.id = ?1 AND s.person_id = ?2 AND s.revoked_at IS NULL AND p.disabled_at IS NULL",
            )
            .bind(session_id)
            .bind(person_id),
        }),
        Caller::Agent { agent_id, credential_hash } => Some(PendingCheck {
            check: Check::AgentLive { now_ms },
            statement: Statement::new(
                "SELECT a.sponsor_id, (a.credential_hash IS NOT NULL AND a.credential_hash = ?2) AS matches, \
                        a.revoked_at, a.paused_at, a.expires_at, p.disabled_at AS sponsor_disabled_at \
                 FROM agents a JOIN people p ON p.id = a.sponsor_id WHERE a.id = ?1",
            )
            .bind(agent_id)
            .bind(credential_hash),
        }),
    }
}

/// The checks a route's authority needs for this caller, or the refusal when no
/// database fact could help (a stranger on a member route).
pub fn checks_for(
    route: &Route,
    caller: &Caller,
    now_ms: i64,
    path_parameter: impl Fn(&str) -> Option<String>,
) -> Result<Vec<PendingCheck>, AuthenticationError> {
    let authority = &route.authority;
    if *authority == Authority::Public {
        return Ok(Vec::new());
    }
    let Some(holder) = holder_of(caller, now_ms) else {
        return match authority {
            Authority::Open => Ok(Vec::new()),
            _ => Err(AuthenticationError::MissingCredentials),
        };
    };
    let mut checks: Vec<PendingCheck> = liveness(caller, now_ms).into_iter().collect();
    if let Caller::Agent { agent_id, .. } = caller {
        // The ceiling binds every route an agent calls, on every surface. The
        // machine surface itself is not a capability: the calls it re-enters are
        // checked against the ceiling one by one.
        let tier = registry().tier(route.id);
        if tier != Tier::Surface {
            let never_offered_because = registry().withheld_from_agents_because(route.id);
            checks.push(PendingCheck {
                check: Check::Ceiling {
                    error: AuthorityError::OutsideCeiling { tool: route.tool, never_offered_because },
                },
                statement: Statement::new(
                    "SELECT EXISTS (SELECT 1 FROM agent_routes WHERE agent_id = ?1 AND route = ?2) AS held",
                )
                .bind(agent_id)
                .bind(route.tool),
            });
        }
    }
    let holds = |relation: Relation, error: AuthorityError| PendingCheck {
        check: Check::Holds(error),
        statement: tuples::holds(&holder, relation, ORGANIZATION_OBJECT),
    };
    match authority {
        // Admission only: a filtered route answers each member with the rows they
        // may see, and a personal route with their own (an agent's, its sponsor's).
        Authority::Public | Authority::Open | Authority::Member | Authority::Filtered { .. } | Authority::Personal => {}
        Authority::Organization(relation) => {
            checks.push(holds(*relation, AuthorityError::MissingOrganizationRelation(*relation)));
        }
        Authority::SelfOrAdmin { person_parameter } => {
            let named = path_parameter(person_parameter.name());
            if named.as_deref() != caller.actor_id() {
                checks.push(holds(Relation::OrgAdmin, AuthorityError::NotSelfOrAdministrator));
            }
        }
        Authority::Mailbox { mailbox_parameter, all_of, any_of } => {
            let mailbox_id = path_parameter(mailbox_parameter.name()).unwrap_or_default();
            checks.push(PendingCheck {
                statement: tuples::relations_on(&holder, &mailbox_id),
                check: Check::Mailbox { mailbox_id, all_of, any_of },
            });
        }
    }
    Ok(checks)
}
