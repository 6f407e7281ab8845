//! Setting up a node: the first administrator, created once from the
//! `SETUP_TOKEN` secret.
//!
//! The door closes for good the moment an administrator exists: the check reads
//! the tuple table, and a one-row `node_setup` table makes two concurrent set-ups
//! collide on its primary key, so only one can ever commit.

use mailroom_contract::Relation;
use mailroom_contract::api::{NodeSetUp, SetUpNode};
use mailroom_contract::relation::ORGANIZATION_OBJECT;

use super::store;
use crate::authz::tuples;
use crate::core::context::Context;
use crate::core::crypto::constant_time_equal;
use crate::core::http::Response;
use crate::core::ids::{IdKind, new_id};
use crate::core::refusal::Refusal;
use crate::identity::people::{self, NewPerson};

/// Why the node could not be set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetupError {
    /// No `SETUP_TOKEN` is configured.
    NotConfigured,
    /// The token sent is not the configured one.
    WrongToken,
    /// An administrator already exists.
    AlreadySetUp,
}

impl From<SetupError> for Refusal {
    fn from(error: SetupError) -> Refusal {
        match error {
            SetupError::NotConfigured => Refusal::new(
                403,
                "setup_not_configured",
                "The node cannot be set up yet.",
                "No SETUP_TOKEN secret is configured on the Worker.",
                "Run `wrangler secret put SETUP_TOKEN`, then call POST /api/setup with that token.",
            ),
            SetupError::WrongToken => Refusal::new(
                403,
                "wrong_setup_token",
                "The setup token is not the one configured on the Worker.",
                "POST /api/setup needs the SETUP_TOKEN secret exactly.",
                "Send the value you set with `wrangler secret put SETUP_TOKEN`.",
            ),
            SetupError::AlreadySetUp => Refusal::new(
                409,
                "already_set_up",
                "The node is already set up.",
                "An administrator exists, so the setup token no longer works.",
                "Sign in as an administrator at POST /api/sessions; an administrator can create other people.",
            ),
        }
    }
}

/// `POST /api/setup`.
pub async fn set_up_node(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: SetUpNode = context.body()?;
    let expected = context.config().setup_token.as_deref().filter(|token| !token.is_empty());
    let Some(expected) = expected else {
        return Err(SetupError::NotConfigured.into());
    };
    let [administrator_exists] = context.read_array([tuples::any_administrator_ever()]).await?;
    if administrator_exists.first_flag("held").unwrap_or(true) {
        return Err(SetupError::AlreadySetUp.into());
    }
    if !constant_time_equal(request.setup_token.as_bytes(), expected.as_bytes()) {
        return Err(SetupError::WrongToken.into());
    }
    crate::core::text::refuse_direction_controls("name", &request.name)?;
    let new_person = NewPerson::validate(&request.email, &request.name, &request.password)?;
    let person_id = new_id(IdKind::Person, context.platform());
    let person = people::insert(context, &person_id, new_person).await?;
    context.write(tuples::grant(&person_id, Relation::OrgAdmin, ORGANIZATION_OBJECT, context.now_ms(), &person_id));
    context.write(store::insert_node_setup(context.now_ms(), &person_id));
    context.on_constraint_violation("node_setup.id", SetupError::AlreadySetUp);
    context.audit_object(person_id);
    Ok(context.json(&NodeSetUp { administrator: person }))
}
