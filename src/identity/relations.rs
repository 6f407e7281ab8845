//! Relations: granting, revoking and listing relationship tuples, the one door
//! through which anyone comes to hold anything.
//!
//! This module validates a requested tuple (a known relation, on the kind of
//! object it is held on, by a subject that exists); the tuple table itself is only
//! touched through `authz::tuples`.

use mailroom_contract::api::{RelationChange, RelationList, RelationTuple};
use mailroom_contract::relation::ORGANIZATION_OBJECT;
use mailroom_contract::{ObjectKind, Relation};
use serde::Deserialize;

use super::errors::last_administrator;
use super::store;
use crate::agents;
use crate::authz::AuthorityError;
use crate::authz::tuples::{self, Holder, Losing};
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::refusal::Refusal;
use crate::core::storage::Statement;
use crate::core::time::rfc3339;

/// What can be wrong with a requested tuple.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RelationError {
    /// Not a relation in the vocabulary.
    UnknownRelation { name: String },
    /// Not a person, agent or team userset.
    InvalidSubject { subject: String },
    /// The object is not the kind this relation is held on.
    WrongObject { relation: String, expected: &'static str },
    /// The subject names nothing that exists.
    NoSuchSubject { subject: String },
    /// The object names nothing that exists.
    NoSuchObject { object: String },
    /// The tuple to revoke is not held.
    NotHeld,
    /// Revoking this would leave no enabled administrator.
    LastAdministrator,
    /// Organisation relations are never granted to agents.
    AgentsHoldOnlyMailboxRelations { relation: String },
    /// An agent can hold only what its sponsor holds, on the same object.
    SponsorLacks { relation: String, object: String },
}

impl From<RelationError> for Refusal {
    fn from(error: RelationError) -> Refusal {
        match error {
            RelationError::UnknownRelation { name } => Refusal::new(
                400,
                "unknown_relation",
                format!("`{name}` is not a relation."),
                "Relations are a fixed vocabulary.",
                format!("Use one of {}.", Relation::names_held_on(|_| true)),
            ),
            RelationError::InvalidSubject { subject } => Refusal::new(
                400,
                "invalid_subject",
                format!("`{subject}` cannot hold a relation."),
                "A subject is a person (`usr_…`), an agent (`agt_…`) or every member of a team (`tm_…#member`).",
                "Send the id of a person or an agent, or a team id followed by #member.",
            ),
            RelationError::WrongObject { relation, expected } => Refusal::new(
                400,
                "wrong_object_for_relation",
                format!("{relation} is not held on that object."),
                format!("{relation} is held on {expected}."),
                format!("Send {expected} as the object."),
            ),
            RelationError::NoSuchSubject { subject } => Refusal::new(
                404,
                "not_found",
                format!("There is no {subject}."),
                "The subject names a person, agent or team that does not exist.",
                "Check the id in GET /api/people or GET /api/teams.",
            ),
            RelationError::NoSuchObject { object } => Refusal::new(
                404,
                "not_found",
                format!("There is no {object}."),
                "The object names a mailbox that does not exist.",
                "Check the mailbox id.",
            ),
            RelationError::NotHeld => Refusal::new(
                404,
                "not_found",
                "That subject does not hold that relation on that object.",
                "There is no such tuple to revoke.",
                "List the subject's relations with GET /api/relations?subject=… to see what it holds.",
            ),
            RelationError::LastAdministrator => last_administrator(),
            RelationError::AgentsHoldOnlyMailboxRelations { relation } => Refusal::new(
                400,
                "agents_hold_only_mailbox_relations",
                format!("An agent cannot hold {relation}."),
                "Agents hold mailbox relations only; organisation relations (administration, exports) stay with people.",
                "Grant the agent a mailbox relation, or ask a person who holds the organisation relation to act.",
            ),
            RelationError::SponsorLacks { relation, object } => {
                AuthorityError::SponsorLacks { relation, object }.into()
            }
        }
    }
}

/// A subject that can hold a relation.
enum Subject {
    Person(String),
    TeamMembers(String),
    Agent(String),
}

/// A requested tuple, checked for shape (not yet for existence).
struct ValidTuple {
    subject: String,
    parsed_subject: Subject,
    relation: Relation,
    object: String,
}

fn validate(change: &RelationChange) -> Result<ValidTuple, RelationError> {
    let relation = Relation::parse(&change.relation)
        .ok_or_else(|| RelationError::UnknownRelation { name: change.relation.clone() })?;
    let subject = change.subject.trim().to_string();
    let parsed_subject = if is_id_of(&subject, IdKind::Person) {
        Subject::Person(subject.clone())
    } else if let Some(team_id) = subject.strip_suffix("#member").filter(|team| is_id_of(team, IdKind::Team)) {
        Subject::TeamMembers(team_id.to_string())
    } else if is_id_of(&subject, IdKind::Agent) {
        if relation.object_kind() != ObjectKind::Mailbox {
            return Err(RelationError::AgentsHoldOnlyMailboxRelations { relation: relation.name().into() });
        }
        Subject::Agent(subject.clone())
    } else {
        return Err(RelationError::InvalidSubject { subject });
    };
    let object = change.object.trim().to_string();
    match relation.object_kind() {
        ObjectKind::Organization if object != ORGANIZATION_OBJECT => {
            return Err(RelationError::WrongObject { relation: relation.name().into(), expected: "`org`" });
        }
        ObjectKind::Mailbox if !is_id_of(&object, IdKind::Mailbox) => {
            return Err(RelationError::WrongObject {
                relation: relation.name().into(),
                expected: "a mailbox id (`mbx_…`)",
            });
        }
        ObjectKind::Mailbox | ObjectKind::Organization => {}
    }
    Ok(ValidTuple { subject, parsed_subject, relation, object })
}

fn subject_exists(subject: &Subject) -> Statement {
    match subject {
        Subject::Person(id) => store::person_exists(id),
        Subject::TeamMembers(id) => store::team_exists(id),
        Subject::Agent(id) => agents::unrevoked_agent_exists(id),
    }
}

#[derive(Deserialize)]
struct TupleRow {
    subject: String,
    relation: String,
    object: String,
    granted_at: i64,
    granted_by: String,
}

impl TupleRow {
    fn present(self) -> RelationTuple {
        RelationTuple {
            subject: self.subject,
            relation: self.relation,
            object: self.object,
            granted_at: rfc3339(self.granted_at),
            granted_by: self.granted_by,
        }
    }
}

/// `GET /api/relations`.
pub async fn list_relations(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let subject = context.query("subject").map(str::to_string);
    let object = context.query("object").map(str::to_string);
    let [tuples] = context.read_array([tuples::list(subject.as_deref(), object.as_deref())]).await?;
    let relations: Vec<TupleRow> = tuples.decode_all().map_err(|error| context.internal(error))?;
    Ok(context.json(&RelationList { relations: relations.into_iter().map(TupleRow::present).collect() }))
}

/// `POST /api/relations`.
pub async fn grant(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let change: RelationChange = context.body()?;
    let tuple = validate(&change)?;
    context.audit_object(tuple.object.clone());
    context.audit_detail(serde_json::json!({ "subject": tuple.subject, "relation": tuple.relation.name() }));
    // For an agent, whether its sponsor holds the same relation on the same
    // object: the rule minting applies, applied to every later grant too.
    let sponsor_holds = match &tuple.parsed_subject {
        Subject::Agent(agent_id) => tuples::holds(&Holder::SponsorOf(agent_id.clone()), tuple.relation, &tuple.object),
        _ => store::always_held(),
    };
    let [subject_found, object_found, held, sponsor_holds] = context
        .read_array([
            subject_exists(&tuple.parsed_subject),
            store::object_exists(&tuple.object),
            tuples::find(&tuple.subject, tuple.relation, &tuple.object),
            sponsor_holds,
        ])
        .await?;
    let found = |result: &crate::core::storage::QueryResult| {
        result.first().and_then(|row| row.flag("found").ok()).unwrap_or(false)
    };
    if !found(&subject_found) {
        return Err(RelationError::NoSuchSubject { subject: tuple.subject }.into());
    }
    if !found(&object_found) {
        return Err(RelationError::NoSuchObject { object: tuple.object }.into());
    }
    if let Some(row) = held.first() {
        let existing: TupleRow = row.decode().map_err(|error| context.internal(error))?;
        return Ok(context.json(&existing.present()));
    }
    if sponsor_holds.first_flag("held") != Some(true) {
        return Err(RelationError::SponsorLacks { relation: tuple.relation.name().into(), object: tuple.object }.into());
    }
    let granted_by = context.caller().actor_id().unwrap_or_default().to_string();
    context.write(tuples::grant(&tuple.subject, tuple.relation, &tuple.object, context.now_ms(), &granted_by));
    Ok(context.json(&RelationTuple {
        subject: tuple.subject,
        relation: tuple.relation.name().to_string(),
        object: tuple.object,
        granted_at: rfc3339(context.now_ms()),
        granted_by,
    }))
}

/// `POST /api/relations/revoke`.
pub async fn revoke(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let change: RelationChange = context.body()?;
    let tuple = validate(&change)?;
    context.audit_object(tuple.object.clone());
    context.audit_detail(serde_json::json!({ "subject": tuple.subject, "relation": tuple.relation.name() }));
    let losing = Losing { tuple_subject: Some(&tuple.subject), ..Losing::default() };
    let [held, remains] = context
        .read_array([
            tuples::find(&tuple.subject, tuple.relation, &tuple.object),
            tuples::an_administrator_would_remain(losing),
        ])
        .await?;
    let Some(row) = held.first() else {
        return Err(RelationError::NotHeld.into());
    };
    if tuple.relation == Relation::OrgAdmin && remains.first_flag("held") != Some(true) {
        return Err(RelationError::LastAdministrator.into());
    }
    let existing: TupleRow = row.decode().map_err(|error| context.internal(error))?;
    context.write(tuples::revoke(&tuple.subject, tuple.relation, &tuple.object));
    if tuple.relation == Relation::OrgAdmin {
        context.guard(tuples::a_live_administrator_remains(), RelationError::LastAdministrator);
    }
    Ok(context.json(&existing.present()))
}
