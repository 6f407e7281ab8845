//! The statements that confirm a claimed caller is live, read and check an
//! agent's ceiling, and state who stands on an actor's side of dual control.

use crate::core::storage::{Statement, Value};

/// `SELECT live`: a row when the person's session is open and the person enabled.
pub(crate) fn session_live(session_id: &str, person_id: &str) -> Statement {
    Statement::new(
        "SELECT 1 AS live FROM sessions s JOIN people p ON p.id = s.person_id \
         WHERE s.id = ?1 AND s.person_id = ?2 AND s.revoked_at IS NULL AND p.disabled_at IS NULL",
    )
    .bind(session_id)
    .bind(person_id)
}

/// How an agent proves who it is, for `agent_live`.
pub(crate) enum AgentProofSql<'a> {
    /// The hash of the credential it presented, which must be the one stored.
    Credential(&'a str),
    /// A node-signed OAuth token, which needs the agent's connection to stand.
    Connection,
}

/// The agent's sponsor, whether its proof `matches`, its state and whether its
/// sponsor is disabled. Neither proof works for an agent a consent minted whose
/// code was never exchanged.
pub(crate) fn agent_live(agent_id: &str, proof: AgentProofSql<'_>) -> Statement {
    let (matches, hash) = match proof {
        AgentProofSql::Credential(hash) => (
            "(a.credential_hash IS NOT NULL AND a.credential_hash = ?2 \
              AND a.connection_pending_until IS NULL)",
            Some(hash),
        ),
        AgentProofSql::Connection => (
            "(EXISTS (SELECT 1 FROM oauth_connections c WHERE c.agent_id = a.id AND ?2 IS NULL) \
              AND a.connection_pending_until IS NULL)",
            None,
        ),
    };
    Statement::new(format!(
        "SELECT a.sponsor_id, {matches} AS matches, \
                a.revoked_at, a.paused_at, a.expires_at, p.disabled_at AS sponsor_disabled_at \
         FROM agents a JOIN people p ON p.id = a.sponsor_id WHERE a.id = ?1"
    ))
    .bind(agent_id)
    .bind(hash)
}

/// `SELECT matches, revoked_at` of a reminder source, for the credential it presented.
pub(crate) fn source_live(source_id: &str, credential_hash: &str) -> Statement {
    Statement::new("SELECT (credential_hash = ?2) AS matches, revoked_at FROM reminder_sources WHERE id = ?1")
        .bind(source_id)
        .bind(credential_hash)
}

/// `SELECT matches, revoked_at`: whether the peer exists with this credential,
/// whether it was disconnected, and the domain its agents are on.
pub(crate) fn peer_live(peer_id: &str, credential_hash: &str) -> Statement {
    Statement::new("SELECT (credential_hash = ?2) AS matches, revoked_at, domain FROM peers WHERE id = ?1")
        .bind(peer_id)
        .bind(credential_hash)
}

/// `SELECT route`: the tools pinned to the agent at mint.
pub(crate) fn ceiling_of(agent_id: &str) -> Statement {
    Statement::new("SELECT route FROM agent_routes WHERE agent_id = ?1").bind(agent_id)
}

/// `SELECT held`: whether the tool `route` is within the agent's ceiling.
pub(crate) fn within_ceiling(agent_id: &str, route: &str) -> Statement {
    Statement::new("SELECT EXISTS (SELECT 1 FROM agent_routes WHERE agent_id = ?1 AND route = ?2) AS held")
        .bind(agent_id)
        .bind(route)
}

/// The SQL condition that the person `person` (an SQL expression, used four
/// times: a positional `?` is bound four times) is not on the side of the actor
/// in column `actor`: so the person may be the second person for what the actor
/// did. An absent actor has no side.
pub(crate) fn not_on_the_side_of(actor: &str, person: &str) -> String {
    format!(
        "({actor} IS NULL OR ({actor} != {person} AND NOT EXISTS (SELECT 1 FROM agents side \
           WHERE side.id = {actor} AND ({person} = side.sponsor_id OR {person} = side.created_by \
             OR {person} = COALESCE(side.credential_issued_by, '')))))"
    )
}

/// The SQL expression "1 when the person or agent whose id is in the SQL
/// column `actor` may still act at `now_ms`", with its parameters: a person
/// enabled; an agent neither revoked, paused nor expired, nor a connection
/// whose code was never exchanged, with its sponsor enabled; an agent
/// elsewhere whose organisation is still connected. What a credential's check
/// asks of its holder, asked per row of something the
/// holder set up to run without them (a push notification config).
pub fn actor_live_in_sql(actor: &'static str, now_ms: i64) -> (String, Vec<Value>) {
    (
        format!(
            "(EXISTS (SELECT 1 FROM people p WHERE p.id = {actor} AND p.disabled_at IS NULL) \
              OR EXISTS (SELECT 1 FROM agents a JOIN people p ON p.id = a.sponsor_id \
                WHERE a.id = {actor} AND a.revoked_at IS NULL AND a.paused_at IS NULL \
                  AND a.connection_pending_until IS NULL AND p.disabled_at IS NULL \
                  AND (a.expires_at IS NULL OR a.expires_at > ?)) \
              OR EXISTS (SELECT 1 FROM remote_agents r JOIN peers q ON q.id = r.peer_id \
                WHERE r.id = {actor} AND q.revoked_at IS NULL))"
        ),
        vec![now_ms.into()],
    )
}
