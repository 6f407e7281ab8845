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
        return Err(AuthenticationError::MissingCredentials);
    };
    let mut checks: Vec<PendingCheck> = liveness(caller).into_iter().collect();
    let holds = |relation: Relation, error: AuthorityError| PendingCheck {
        check: Check::Holds(error),
        statement: tuples::holds(&holder, relation, ORGANIZATION_OBJECT),
    };
    match authority {
        Authority::Public | Authority::Member | Authority::Filtered | Authority::Requester | Authority::Personal => {}
        Authority::Organization(relation) => {
            checks.push(holds(*relation, AuthorityError::MissingOrganizationRelation(*relation)));
        }
        Authority::SelfOrAdmin { person_parameter } => {
            let named = path_parameter(person_parameter);
            if named.as_deref() != caller.actor_id() {
                checks.push(holds(Relation::OrgAdmin, AuthorityError::NotSelfOrAdministrator));
            }
        }
        Authority::Mailbox { .. } => {
            // No mailbox routes are declared yet; a mailbox route must not be
            // answered until its relations are checked, so refuse outright.
            checks.push(holds(Relation::OrgAdmin, AuthorityError::NotSelfOrAdministrator));
        }
    }
    Ok(checks)
}
