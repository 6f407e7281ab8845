//! Setting up the node, sessions, people, teams and relations.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Creates the node's first administrator. Works once, with the `SETUP_TOKEN` secret.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetUpNode {
    /// The `SETUP_TOKEN` secret configured on the Worker (`wrangler secret put SETUP_TOKEN`).
    pub setup_token: String,
    /// The first administrator's email address; it is also their sign-in name.
    pub email: String,
    /// The first administrator's display name.
    pub name: String,
    /// The first administrator's password: at least 12 characters.
    pub password: String,
}

/// How a sign-in's session is carried.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionTransport {
    /// Tokens are returned in the body, for `Authorization: Bearer` (CLIs, MCP clients).
    #[default]
    Bearer,
    /// Tokens are set as `__Host-` HttpOnly cookies and left out of the body (browsers).
    Cookie,
}

/// Signs a person in with their email and password.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignIn {
    /// The person's email address.
    pub email: String,
    /// The person's password.
    pub password: String,
    /// `bearer` (default) returns the tokens in the body; `cookie` sets them as cookies.
    #[serde(default)]
    pub transport: SessionTransport,
}

/// Exchanges a refresh token for a new access token and a new refresh token.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefreshSession {
    /// The refresh token from sign-in or the last refresh. Omit it when the browser's
    /// refresh cookie carries it.
    #[serde(default)]
    pub refresh_token: Option<String>,
}

/// A session's credentials. Absent from the body when they travel as cookies.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SessionTokens {
    /// The session's id (`ses_…`).
    pub session_id: String,
    /// The short-lived access token: send it as `Authorization: Bearer <token>`.
    /// Absent when the session travels as cookies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_token: Option<String>,
    /// When the access token stops working (RFC 3339).
    pub access_token_expires_at: String,
    /// The refresh token: exchange it at `POST /api/sessions/refresh` before the access
    /// token expires. Each refresh returns a new one and retires the old. Absent when
    /// the session travels as cookies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the session ends, however often it is refreshed (RFC 3339).
    pub session_expires_at: String,
}

/// A signed-in session and who it belongs to.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SignedIn {
    /// The person who signed in.
    pub person: Person,
    /// The session's credentials.
    pub session: SessionTokens,
}

/// The answer to setting up the node.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct NodeSetUp {
    /// The first administrator, who can now sign in.
    pub administrator: Person,
}

/// The answer to signing out.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SignedOut {
    /// The session that was revoked (`ses_…`).
    pub session_id: String,
}

/// Changes the signed-in person's own password.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangePassword {
    /// The password in use now.
    pub current_password: String,
    /// The new password: at least 12 characters.
    pub new_password: String,
}

/// Sets a new password for a person, as an administrator.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResetPassword {
    /// The person's new password: at least 12 characters.
    pub new_password: String,
}

/// The answer to setting a new password for a person.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PasswordReset {
    /// The person whose password was set.
    pub person: Person,
    /// How many of their sessions were ended.
    pub sessions_ended: u32,
}

/// The answer to changing a password.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PasswordChanged {
    /// How many of the person's other sessions were signed out.
    pub other_sessions_revoked: u32,
}

/// A person: someone who signs in with a password.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Person {
    /// The person's id (`usr_…`).
    pub id: String,
    /// The person's email address, which is also their sign-in name.
    pub email: String,
    /// The person's display name.
    pub name: String,
    /// When the person was created (RFC 3339).
    pub created_at: String,
    /// When the person was disabled (RFC 3339); absent while they may sign in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled_at: Option<String>,
}

/// Who the caller is.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Me {
    /// The caller's id (`usr_…` for a person).
    pub id: String,
    /// The kind of principal: `person` or `agent`.
    pub kind: String,
    /// The caller's display name.
    pub name: String,
    /// The caller's email address, for a person.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Whether the caller holds `org.admin`.
    pub is_admin: bool,
    /// Whether the caller holds `ediscovery.export` on the organisation, and so
    /// may request eDiscovery exports (never an agent).
    #[serde(default)]
    pub may_export: bool,
    /// The teams the caller belongs to.
    pub teams: Vec<TeamReference>,
    /// The session in use (`ses_…`), for a person signed in with a session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// For an agent: the person whose authority it acts under (`usr_…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sponsor: Option<String>,
}

/// A team named by id and name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TeamReference {
    /// The team's id (`tm_…`).
    pub id: String,
    /// The team's name.
    pub name: String,
}

/// Every person on the node.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PersonList {
    /// The people, oldest first.
    pub people: Vec<Person>,
}

/// Creates a person who can sign in.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatePerson {
    /// The person's email address; it is also their sign-in name and must be unused.
    pub email: String,
    /// The person's display name.
    pub name: String,
    /// The person's first password: at least 12 characters. They can change it at
    /// `POST /api/me/password`.
    pub password: String,
}

/// A team: a named set of people. A relation granted to `tm_…#member` is held by
/// every member.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Team {
    /// The team's id (`tm_…`).
    pub id: String,
    /// The team's name, unique on the node.
    pub name: String,
    /// When the team was created (RFC 3339).
    pub created_at: String,
    /// The ids (`usr_…`) of the team's members.
    pub members: Vec<String>,
}

/// Every team on the node.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct TeamList {
    /// The teams, oldest first.
    pub teams: Vec<Team>,
}

/// Creates a team.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTeam {
    /// The team's name: unique on the node, at most 100 characters.
    pub name: String,
}

/// A relationship tuple: `subject` holds `relation` on `object`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RelationTuple {
    /// Who holds it: a person (`usr_…`), an agent (`agt_…`) or every member of a team (`tm_…#member`).
    pub subject: String,
    /// The relation held, such as `org.admin` or `mailbox.content.read`.
    pub relation: String,
    /// What it is held on: `org` for the organisation, or a mailbox (`mbx_…`).
    pub object: String,
    /// When it was granted (RFC 3339).
    pub granted_at: String,
    /// Who granted it.
    pub granted_by: String,
}

/// Relationship tuples.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RelationList {
    /// The tuples, ordered by object, relation and subject.
    pub relations: Vec<RelationTuple>,
}

/// Names one relationship tuple, to grant or to revoke.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RelationChange {
    /// Who holds it: a person (`usr_…`), an agent (`agt_…`) or every member of a team (`tm_…#member`).
    pub subject: String,
    /// The relation: one of `org.admin`, `ediscovery.export`, `mailbox.metadata.read`,
    /// `mailbox.content.read`, `message.export`, `send.propose`, `approval.decide`.
    pub relation: String,
    /// What it is held on: `org` for an organisation relation, a mailbox id (`mbx_…`) for a mailbox relation.
    pub object: String,
}
