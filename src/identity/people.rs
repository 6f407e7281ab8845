//! People: the accounts that sign in with a password, and the routes that create,
//! show, list, disable and enable them.
//!
//! A person holds nothing by being created; authority comes only from relations.
//! Disabling a person revokes every session of theirs in the same batch, and the
//! liveness check every request makes means even a live access token stops
//! working on its next use.

use mailroom_contract::api::{CreatePerson, Me, PasswordReset, Person, PersonList, ResetPassword, TeamReference};
use mailroom_contract::relation::ORGANIZATION_OBJECT;
use mailroom_contract::{PathParameter, Relation};

use super::errors::last_administrator;
use super::store::{self, PersonRow};
use crate::agents;
use crate::authz::throttle::Window;
use crate::authz::tuples::{self, Holder, Losing};
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of, new_id};
use crate::core::refusal::Refusal;
use crate::core::storage::Statement;
use crate::core::time::rfc3339;
use crate::identity::password;

/// What can be wrong with a person or a request about one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PersonError {
    /// Not a usable email address.
    InvalidEmail,
    /// Another person has this email.
    EmailTaken,
    /// Empty or over-long display name.
    InvalidName,
    /// Password shorter than the minimum (or absurdly long).
    WeakPassword { minimum: usize },
    /// No person has this id.
    NoSuchPerson { id: String },
    /// An administrator tried to disable themself.
    CannotDisableSelf,
    /// The change would leave no enabled administrator.
    LastAdministrator,
}

impl From<PersonError> for Refusal {
    fn from(error: PersonError) -> Refusal {
        match error {
            PersonError::InvalidEmail => Refusal::new(
                400,
                "invalid_email",
                "That is not an email address the node can use.",
                "An email address is a local part, an @ and a domain with a dot, written plainly (RFC 5322: no spaces, quotes, comments or brackets), at most 254 characters.",
                "Send an address such as ana@example.com.",
            ),
            PersonError::EmailTaken => Refusal::new(
                409,
                "email_taken",
                "Someone on the node already uses that email address.",
                "An email address signs in exactly one person.",
                "Use another address, or find the existing person in GET /api/people.",
            ),
            PersonError::InvalidName => Refusal::new(
                400,
                "invalid_name",
                "That name cannot be used.",
                "A name must have 1 to 200 characters and not be only spaces.",
                "Send a display name such as \"Ana Lima\".",
            ),
            PersonError::WeakPassword { minimum } => Refusal::new(
                400,
                "weak_password",
                "That password is too short.",
                format!("Passwords need at least {minimum} characters (and at most 1024)."),
                format!("Choose a password of at least {minimum} characters; a few unrelated words work well."),
            ),
            PersonError::NoSuchPerson { id } => Refusal::not_found("person", &id),
            PersonError::CannotDisableSelf => Refusal::new(
                409,
                "cannot_disable_self",
                "You cannot disable your own account.",
                "Disabling yourself would end your own session and could leave the node without an administrator.",
                "Ask another administrator to do it.",
            ),
            PersonError::LastAdministrator => last_administrator(),
        }
    }
}

/// A person's fields, validated, before they have an id.
#[derive(Clone, Debug)]
pub struct NewPerson {
    pub email: String,
    pub name: String,
    password: String,
}

impl NewPerson {
    pub fn validate(email: &str, name: &str, password: &str) -> Result<NewPerson, PersonError> {
        let email = normalize_email(email)?;
        let name = name.trim();
        if name.is_empty() || name.chars().count() > 200 {
            return Err(PersonError::InvalidName);
        }
        if !password::is_acceptable(password) {
            return Err(PersonError::WeakPassword { minimum: password::MINIMUM_LENGTH });
        }
        Ok(NewPerson { email, name: name.to_string(), password: password.to_string() })
    }
}

/// Lower-cases and checks an email address used as a sign-in name.
pub fn normalize_email(email: &str) -> Result<String, PersonError> {
    crate::core::addresses::normalize(email).ok_or(PersonError::InvalidEmail)
}

impl PersonRow {
    pub fn present(&self) -> Person {
        Person {
            id: self.id.clone(),
            email: self.email.clone(),
            name: self.name.clone(),
            created_at: rfc3339(self.created_at),
            disabled_at: self.disabled_at.map(rfc3339),
        }
    }
}

/// The person `person_id`, as a `PersonRow`.
pub fn by_id(person_id: &str) -> Statement {
    store::person_by_id(person_id)
}

/// Hashes the password and queues the insert; answers the person as they will be.
pub async fn insert(context: &mut Context<'_>, person_id: &str, person: NewPerson) -> Result<Person, Refusal> {
    let password_hash = password::hash(context.platform(), &person.password, context.config().password_iterations)
        .await
        .map_err(|error| context.internal(error.0))?;
    context.write(store::insert_person(person_id, &person.email, &person.name, password_hash, context.now_ms()));
    context.on_constraint_violation("people.email", PersonError::EmailTaken);
    context.audit_detail(serde_json::json!({ "email": person.email }));
    Ok(PersonRow {
        id: person_id.to_string(),
        email: person.email,
        name: person.name,
        created_at: context.now_ms(),
        disabled_at: None,
    }
    .present())
}

/// `GET /api/me`.
pub async fn get_me(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (person_id, session_id) = match context.caller().clone() {
        Caller::Person { person_id, session_id } => (person_id, session_id),
        Caller::Agent { agent_id, .. } => return agent_me(context, agent_id).await,
        // Neither reaches a member route: the dispatcher refuses both first.
        Caller::Stranger | Caller::Source { .. } | Caller::Peer { .. } => return Err(Refusal::internal()),
    };
    let holder = Holder::Person(person_id.clone());
    let teams = store::teams_of_person(&person_id);
    let exporter = tuples::holds(&holder, Relation::EdiscoveryExport, ORGANIZATION_OBJECT);
    let [person, administrator, exporter, teams] =
        context.read_array([by_id(&person_id), tuples::is_administrator(&holder), exporter, teams]).await?;
    let person: PersonRow = person
        .first()
        .ok_or_else(|| context.internal("a live session's person is missing"))?
        .decode()
        .map_err(|error| context.internal(error))?;
    let is_admin = administrator.first_flag("held").unwrap_or(false);
    let teams = teams.decode_all::<TeamReference>().map_err(|error| context.internal(error))?;
    Ok(context.json(&Me {
        id: person.id,
        kind: "person".into(),
        name: person.name,
        email: Some(person.email),
        is_admin,
        may_export: exporter.first_flag("held").unwrap_or(false),
        teams,
        session_id: Some(session_id),
        sponsor: None,
    }))
}

/// `GET /api/me` for an agent: who it is and whose authority it acts under.
async fn agent_me(context: &mut Context<'_>, agent_id: String) -> Result<Response, Refusal> {
    let agent = agents::name_and_sponsor(&agent_id);
    let [agent, administrator] = context
        .read_array([
            agent,
            tuples::is_administrator(&Holder::Agent { agent_id: agent_id.clone(), now_ms: context.now_ms() }),
        ])
        .await?;
    let row = agent.first().ok_or_else(|| context.internal("a live agent's row is missing"))?;
    Ok(context.json(&Me {
        id: agent_id,
        kind: "agent".into(),
        name: row.text("name").map_err(|error| context.internal(error))?,
        email: None,
        is_admin: administrator.first_flag("held").unwrap_or(false),
        may_export: false,
        teams: Vec::new(),
        session_id: None,
        sponsor: Some(row.text("sponsor_id").map_err(|error| context.internal(error))?),
    }))
}

/// `GET /api/people`.
pub async fn list_people(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let [people] = context.read_array([store::every_person()]).await?;
    let people: Vec<PersonRow> = people.decode_all().map_err(|error| context.internal(error))?;
    Ok(context.json(&PersonList { people: people.iter().map(PersonRow::present).collect() }))
}

/// `POST /api/people`.
pub async fn create_person(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: CreatePerson = context.body()?;
    crate::core::text::refuse_direction_controls("name", &request.name)?;
    let new_person = NewPerson::validate(&request.email, &request.name, &request.password)?;
    let existing = store::person_with_email(&new_person.email);
    let [existing] = context.read_array([existing]).await?;
    if !existing.rows.is_empty() {
        return Err(PersonError::EmailTaken.into());
    }
    let person_id = new_id(IdKind::Person, context.platform());
    context.audit_object(person_id.clone());
    let person = insert(context, &person_id, new_person).await?;
    Ok(context.json(&person))
}

/// The path's person id, or the 404 an unknown id gets.
fn person_parameter(context: &Context<'_>) -> Result<String, Refusal> {
    let id = context.path(PathParameter::PersonId)?;
    if is_id_of(id, IdKind::Person) {
        Ok(id.to_string())
    } else {
        Err(PersonError::NoSuchPerson { id: id.to_string() }.into())
    }
}

/// `GET /api/people/:personId`.
pub async fn get_person(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let person_id = person_parameter(context)?;
    let [person] = context.read_array([by_id(&person_id)]).await?;
    let person: PersonRow = person
        .first()
        .ok_or(PersonError::NoSuchPerson { id: person_id })?
        .decode()
        .map_err(|error| context.internal(error))?;
    Ok(context.json(&person.present()))
}

/// `POST /api/people/:personId/disable` and `/enable`.
pub async fn set_disabled(context: &mut Context<'_>, disabled: bool) -> Result<Response, Refusal> {
    let person_id = person_parameter(context)?;
    let losing = Losing { person: Some(&person_id), ..Losing::default() };
    let [person, remains] =
        context.read_array([by_id(&person_id), tuples::an_administrator_would_remain(losing)]).await?;
    let mut person: PersonRow = person
        .first()
        .ok_or(PersonError::NoSuchPerson { id: person_id.clone() })?
        .decode()
        .map_err(|error| context.internal(error))?;
    if disabled && context.caller().actor_id() == Some(person_id.as_str()) {
        return Err(PersonError::CannotDisableSelf.into());
    }
    if disabled && remains.first_flag("held") != Some(true) {
        return Err(PersonError::LastAdministrator.into());
    }
    if disabled {
        let disabled_at = person.disabled_at.unwrap_or(context.now_ms());
        person.disabled_at = Some(disabled_at);
        context.write(store::disable_person(&person_id, disabled_at));
        context.write(store::revoke_sessions_of(&person_id, context.now_ms()));
        context.guard(tuples::a_live_administrator_remains(), PersonError::LastAdministrator);
    } else {
        person.disabled_at = None;
        context.write(store::enable_person(&person_id));
    }
    context.audit_object(person_id);
    Ok(context.json(&person.present()))
}

/// `POST /api/people/:personId/password`: an administrator sets a new password
/// for a person; every session of theirs ends, and the guesses counted against
/// their account from elsewhere are forgotten.
pub async fn reset_password(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: ResetPassword = context.body()?;
    let person_id = person_parameter(context)?;
    context.audit_object(person_id.clone());
    if !password::is_acceptable(&request.new_password) {
        return Err(PersonError::WeakPassword { minimum: password::MINIMUM_LENGTH }.into());
    }
    let sessions = store::live_sessions_of(&person_id, context.now_ms());
    let [person, sessions] = context.read_array([by_id(&person_id), sessions]).await?;
    let person: PersonRow = person
        .first()
        .ok_or(PersonError::NoSuchPerson { id: person_id.clone() })?
        .decode()
        .map_err(|error| context.internal(error))?;
    let new_hash = password::hash(context.platform(), &request.new_password, context.config().password_iterations)
        .await
        .map_err(|error| context.internal(error.0))?;
    context.write(store::set_password_hash(&person_id, new_hash));
    context.write(store::revoke_sessions_of(&person_id, context.now_ms()));
    context.write(Window::account(&person.email).clear());
    let sessions_ended = sessions.first().and_then(|row| row.integer("live").ok()).unwrap_or(0) as u32;
    context.audit_detail(serde_json::json!({ "sessions_ended": sessions_ended }));
    Ok(context.json(&PasswordReset { person: person.present(), sessions_ended }))
}
