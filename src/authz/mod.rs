//! Authority: turning a route's declared authority into the checks the dispatcher
//! runs, and the errors when they fail.
//!
//! The contract says what a route needs; this module says how that is asked of
//! the database. It decides nothing per route: a route's authority is data in the
//! contract, and the dispatcher enforces exactly that data.

pub mod tuples;

use mailroom_contract::relation::ORGANIZATION_OBJECT;
use mailroom_contract::{Authority, Relation};

use crate::credentials::{AuthenticationError, Caller};
use crate::storage::Statement;
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
}

/// A fact the dispatcher must confirm before a handler's answer is released.
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    /// The claimed session is live: not signed out, not revoked, person enabled.
    SessionLive,
    /// The caller holds a relation; if not, the route refuses with the error.
    Holds(AuthorityError),
    /// The caller holds, on the mailbox, every one of `all_of` and (when not empty)
    /// one of `any_of`. The statement lists what it holds there.
    Mailbox { mailbox_id: String, all_of: &'static [Relation], any_of: &'static [Relation] },
}

impl Check {
    /// Whether the result of this check's statement lets the request through.
    pub fn settle(&self, rows: &[crate::storage::Row]) -> Result<(), AuthorityError> {
        match self {
            Check::SessionLive | Check::Holds(_) => Ok(()),
            Check::Mailbox { mailbox_id, all_of, any_of } => {
                let held: Vec<Relation> = rows
                    .iter()
                    .filter_map(|row| row.text("relation").ok())
                    .filter_map(|name| Relation::parse(&name))
                    .collect();
                if held.is_empty() {
                    return Err(AuthorityError::NoSuchMailbox { mailbox_id: mailbox_id.clone() });
                }
                let missing: Vec<Relation> =
                    all_of.iter().copied().filter(|relation| !held.contains(relation)).collect();
                if !missing.is_empty() {
                    return Err(AuthorityError::MissingMailboxRelations {
                        mailbox_id: mailbox_id.clone(),
                        missing,
                        any: false,
                    });
                }
                if !any_of.is_empty() && !any_of.iter().any(|relation| held.contains(relation)) {
                    return Err(AuthorityError::MissingMailboxRelations {
                        mailbox_id: mailbox_id.clone(),
                        missing: any_of.to_vec(),
                        any: true,
                    });
                }
                Ok(())
            }
        }
    }
}

/// A check with the statement that answers it.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingCheck {
    pub check: Check,
    pub statement: Statement,
}

/// The holder a caller's authority is read from.
pub fn holder_of(caller: &Caller) -> Option<Holder> {
    match caller {
        Caller::Stranger => None,
        Caller::Person { person_id, .. } => Some(Holder::Person(person_id.clone())),
    }
}

/// The statement confirming a claimed caller is live.
fn liveness(caller: &Caller) -> Option<PendingCheck> {
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
    }
}

/// The checks a route's authority needs for this caller, or the refusal when no
/// database fact could help (a stranger on a member route).
pub fn checks_for(
    authority: &Authority,
    caller: &Caller,
    path_parameter: impl Fn(&str) -> Option<String>,
) -> Result<Vec<PendingCheck>, AuthenticationError> {
    if *authority == Authority::Public {
        return Ok(Vec::new());
    }
    let Some(holder) = holder_of(caller) else {
        return match authority {
            Authority::Open => Ok(Vec::new()),
            _ => Err(AuthenticationError::MissingCredentials),
        };
    };
    let mut checks: Vec<PendingCheck> = liveness(caller).into_iter().collect();
    let holds = |relation: Relation, error: AuthorityError| PendingCheck {
        check: Check::Holds(error),
        statement: tuples::holds(&holder, relation, ORGANIZATION_OBJECT),
    };
    match authority {
        Authority::Public
        | Authority::Open
        | Authority::Member
        | Authority::Filtered { .. }
        | Authority::Requester
        | Authority::Personal => {}
        Authority::Organization(relation) => {
            checks.push(holds(*relation, AuthorityError::MissingOrganizationRelation(*relation)));
        }
        Authority::SelfOrAdmin { person_parameter } => {
            let named = path_parameter(person_parameter);
            if named.as_deref() != caller.actor_id() {
                checks.push(holds(Relation::OrgAdmin, AuthorityError::NotSelfOrAdministrator));
            }
        }
        Authority::Mailbox { mailbox_parameter, all_of, any_of } => {
            let mailbox_id = path_parameter(mailbox_parameter).unwrap_or_default();
            checks.push(PendingCheck {
                statement: tuples::relations_on(&holder, &mailbox_id),
                check: Check::Mailbox { mailbox_id, all_of, any_of },
            });
        }
    }
    Ok(checks)
}
