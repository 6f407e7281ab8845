//! Identity's store: every statement that reads or writes people, sessions,
//! spent refresh tokens, teams, their members and the node's one setup row,
//! and the rows those reads yield. Each function only builds a statement; the
//! handlers decide what rides together in a round trip.

use serde::Deserialize;

use crate::core::storage::{Insert, Statement};

/// A person as stored.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct PersonRow {
    pub id: String,
    pub email: String,
    pub name: String,
    pub created_at: i64,
    pub disabled_at: Option<i64>,
}

/// The columns of a `PersonRow`, in every read of one.
const PERSON_COLUMNS: &str = "id, email, name, created_at, disabled_at";

/// A person to sign in: the columns of a `PersonRow` and what checks the password.
#[derive(Deserialize)]
pub(super) struct Credentials {
    pub id: String,
    pub password_hash: String,
    pub disabled_at: Option<i64>,
}

/// The session a presented refresh token names, current or already spent.
#[derive(Deserialize)]
pub(super) struct SessionRow {
    pub id: String,
    pub person_id: String,
    pub is_current: i64,
    /// When the presented token was spent, if it was.
    pub spent_at: Option<i64>,
    pub refreshed_at: i64,
    pub expires_at: i64,
    pub revoked_at: Option<i64>,
    pub person_disabled_at: Option<i64>,
}

/// A team as stored, without its members.
#[derive(Deserialize)]
pub(super) struct TeamRow {
    pub id: String,
    pub name: String,
    pub created_at: i64,
}

/// One membership of a team.
#[derive(Deserialize)]
pub(super) struct MemberRow {
    pub team_id: String,
    pub person_id: String,
}

/// The person `person_id`, as a `PersonRow`.
pub(super) fn person_by_id(person_id: &str) -> Statement {
    Statement::new(format!("SELECT {PERSON_COLUMNS} FROM people WHERE id = ?1")).bind(person_id)
}

/// The name of the person `person_id` (one row, `name`, or none): what
/// others see beside what that person does, such as presence.
pub(crate) fn name_of_person(person_id: &str) -> Statement {
    Statement::new("SELECT name FROM people WHERE id = ?1").bind(person_id)
}

/// The person signing in with `email`: a `PersonRow` that decodes as `Credentials` too.
pub(super) fn person_to_sign_in(email: &str) -> Statement {
    Statement::new(format!("SELECT {PERSON_COLUMNS}, password_hash FROM people WHERE email = ?1")).bind(email)
}

/// Every person, as `PersonRow`s, oldest first.
pub(super) fn every_person() -> Statement {
    Statement::new(format!("SELECT {PERSON_COLUMNS} FROM people ORDER BY created_at, id"))
}

/// `SELECT id` of the person with `email`, if any.
pub(super) fn person_with_email(email: &str) -> Statement {
    Statement::new("SELECT id FROM people WHERE email = ?1").bind(email)
}

/// `SELECT id` of the person `person_id`, if any.
pub(super) fn person_id_if_any(person_id: &str) -> Statement {
    Statement::new("SELECT id FROM people WHERE id = ?1").bind(person_id)
}

/// `SELECT password_hash` of the person `person_id`.
pub(super) fn password_hash_of(person_id: &str) -> Statement {
    Statement::new("SELECT password_hash FROM people WHERE id = ?1").bind(person_id)
}

/// A new person, enabled.
pub(super) fn insert_person(
    person_id: &str,
    email: &str,
    name: &str,
    password_hash: String,
    created_at: i64,
) -> Statement {
    Insert::into("people")
        .value("id", person_id)
        .value("email", email)
        .value("name", name)
        .value("password_hash", password_hash)
        .value("created_at", created_at)
        .statement()
}

pub(super) fn disable_person(person_id: &str, disabled_at: i64) -> Statement {
    Statement::new("UPDATE people SET disabled_at = ?2 WHERE id = ?1").bind(person_id).bind(disabled_at)
}

pub(super) fn enable_person(person_id: &str) -> Statement {
    Statement::new("UPDATE people SET disabled_at = NULL WHERE id = ?1").bind(person_id)
}

pub(super) fn set_password_hash(person_id: &str, password_hash: String) -> Statement {
    Statement::new("UPDATE people SET password_hash = ?2 WHERE id = ?1").bind(person_id).bind(password_hash)
}

/// `SELECT t.id, t.name`: the teams `person_id` belongs to, by name.
pub(super) fn teams_of_person(person_id: &str) -> Statement {
    Statement::new(
        "SELECT t.id, t.name FROM teams t JOIN team_members m ON m.team_id = t.id WHERE m.person_id = ?1 ORDER BY t.name",
    )
    .bind(person_id)
}

/// `SELECT live`: how many sessions of `person_id` are live at `now_ms`.
pub(super) fn live_sessions_of(person_id: &str, now_ms: i64) -> Statement {
    Statement::new(
        "SELECT COUNT(*) AS live FROM sessions WHERE person_id = ?1 AND revoked_at IS NULL AND expires_at > ?2",
    )
    .bind(person_id)
    .bind(now_ms)
}

/// `SELECT other_sessions`: how many sessions of `person_id` other than
/// `session_id` are live at `now_ms`.
pub(super) fn other_live_sessions_of(person_id: &str, session_id: &str, now_ms: i64) -> Statement {
    Statement::new(
        "SELECT COUNT(*) AS other_sessions FROM sessions \
         WHERE person_id = ?1 AND id != ?2 AND revoked_at IS NULL AND expires_at > ?3",
    )
    .bind(person_id)
    .bind(session_id)
    .bind(now_ms)
}

/// Ends every session of `person_id` still open.
pub(super) fn revoke_sessions_of(person_id: &str, revoked_at: i64) -> Statement {
    Statement::new("UPDATE sessions SET revoked_at = ?2 WHERE person_id = ?1 AND revoked_at IS NULL")
        .bind(person_id)
        .bind(revoked_at)
}

/// Ends every session of `person_id` still open but `session_id`.
pub(super) fn revoke_other_sessions_of(person_id: &str, session_id: &str, revoked_at: i64) -> Statement {
    Statement::new("UPDATE sessions SET revoked_at = ?3 WHERE person_id = ?1 AND id != ?2 AND revoked_at IS NULL")
        .bind(person_id)
        .bind(session_id)
        .bind(revoked_at)
}

/// Ends the session `session_id`, if still open.
pub(super) fn revoke_session(session_id: &str, revoked_at: i64) -> Statement {
    Statement::new("UPDATE sessions SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL")
        .bind(session_id)
        .bind(revoked_at)
}

/// A new session, refreshed as it is created.
pub(super) fn insert_session(
    session_id: &str,
    person_id: &str,
    refresh_hash: String,
    created_at: i64,
    expires_at: i64,
) -> Statement {
    Insert::into("sessions")
        .value("id", session_id)
        .value("person_id", person_id)
        .value("refresh_hash", refresh_hash)
        .value("created_at", created_at)
        .value("refreshed_at", created_at)
        .value("expires_at", expires_at)
        .statement()
}

/// The session whose current or spent refresh token hashes to `presented_hash`,
/// as a `SessionRow`.
pub(super) fn session_by_refresh_hash(presented_hash: &str) -> Statement {
    Statement::new(
        "SELECT s.id, s.person_id, (s.refresh_hash = ?1) AS is_current, spent.spent_at, s.refreshed_at, \
                s.expires_at, s.revoked_at, p.disabled_at AS person_disabled_at \
         FROM sessions s JOIN people p ON p.id = s.person_id \
         LEFT JOIN spent_refresh_tokens spent ON spent.token_hash = ?1 AND spent.session_id = s.id \
         WHERE s.refresh_hash = ?1 OR spent.token_hash IS NOT NULL",
    )
    .bind(presented_hash)
}

/// Rotates the session's refresh token, only while `presented_hash` is still
/// the current one (a racing rotation changes no row).
pub(super) fn rotate_refresh_hash(session_id: &str, presented_hash: &str, new_hash: &str, now_ms: i64) -> Statement {
    Statement::new("UPDATE sessions SET refresh_hash = ?3, refreshed_at = ?4 WHERE id = ?1 AND refresh_hash = ?2")
        .bind(session_id)
        .bind(presented_hash)
        .bind(new_hash)
        .bind(now_ms)
}

/// Records a spent refresh token in its session's family.
pub(super) fn insert_spent_refresh_token(token_hash: String, session_id: &str, spent_at: i64) -> Statement {
    Insert::into("spent_refresh_tokens")
        .value("token_hash", token_hash)
        .value("session_id", session_id)
        .value("spent_at", spent_at)
        .statement()
}

/// Forgets the spent refresh tokens of sessions that ended by `now_ms`.
pub(super) fn forget_spent_refresh_tokens(now_ms: i64) -> Statement {
    Statement::new(
        "DELETE FROM spent_refresh_tokens WHERE session_id IN \
         (SELECT id FROM sessions WHERE expires_at <= ?1 OR revoked_at IS NOT NULL)",
    )
    .bind(now_ms)
}

/// The one row that marks the node set up; a second collides on its key.
pub(super) fn insert_node_setup(completed_at: i64, first_administrator: &str) -> Statement {
    Statement::new("INSERT INTO node_setup (id, completed_at, first_administrator) VALUES (1, ?1, ?2)")
        .bind(completed_at)
        .bind(first_administrator)
}

/// Every team, as `TeamRow`s, oldest first.
pub(super) fn every_team() -> Statement {
    Statement::new("SELECT id, name, created_at FROM teams ORDER BY created_at, id")
}

/// The team `team_id`, as a `TeamRow`.
pub(super) fn team_by_id(team_id: &str) -> Statement {
    Statement::new("SELECT id, name, created_at FROM teams WHERE id = ?1").bind(team_id)
}

/// `SELECT id` of the team named `name`, if any.
pub(super) fn team_named(name: &str) -> Statement {
    Statement::new("SELECT id FROM teams WHERE name = ?1").bind(name)
}

pub(super) fn insert_team(team_id: &str, name: &str, created_at: i64) -> Statement {
    Insert::into("teams").value("id", team_id).value("name", name).value("created_at", created_at).statement()
}

/// The memberships of one team, or of every team, as `MemberRow`s.
pub(super) fn members_of(team_id: Option<&str>) -> Statement {
    Statement::new(
        "SELECT team_id, person_id FROM team_members WHERE (?1 IS NULL OR team_id = ?1) ORDER BY added_at, person_id",
    )
    .bind(team_id)
}

/// Adds a member; adding one already there changes nothing.
pub(super) fn insert_member(team_id: &str, person_id: &str, added_at: i64) -> Statement {
    Insert::into("team_members")
        .value("team_id", team_id)
        .value("person_id", person_id)
        .value("added_at", added_at)
        .then("ON CONFLICT (team_id, person_id) DO NOTHING")
        .statement()
}

pub(super) fn delete_member(team_id: &str, person_id: &str) -> Statement {
    Statement::new("DELETE FROM team_members WHERE team_id = ?1 AND person_id = ?2").bind(team_id).bind(person_id)
}

/// `SELECT found`: whether a person `person_id` exists.
pub(super) fn person_exists(person_id: &str) -> Statement {
    Statement::new("SELECT EXISTS (SELECT 1 FROM people WHERE id = ?1) AS found").bind(person_id)
}

/// `SELECT found`: whether a team `team_id` exists.
pub(super) fn team_exists(team_id: &str) -> Statement {
    Statement::new("SELECT EXISTS (SELECT 1 FROM teams WHERE id = ?1) AS found").bind(team_id)
}

/// `SELECT found`: whether a relation's object exists (the organisation always
/// does). It names mail's `mailboxes` table, the one read identity makes of
/// another domain's table; a mailbox-existence statement from mail would
/// replace it once mail offers one.
pub(super) fn object_exists(object: &str) -> Statement {
    Statement::new("SELECT (?1 = 'org' OR EXISTS (SELECT 1 FROM mailboxes WHERE id = ?1)) AS found").bind(object)
}

/// `SELECT held` answering yes: stands in for a check a subject does not need.
pub(super) fn always_held() -> Statement {
    Statement::new("SELECT 1 AS held")
}
