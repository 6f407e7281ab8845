//! Agents' store: every statement that reads or writes agents, their pinned
//! routes and their pairing codes, and the rows those reads yield. Each
//! function only builds a statement; the handlers decide what rides together.
//!
//! Two reads here name other domains' tables, because the domains that own them
//! import this one and could not be imported back without a circle: whether an
//! agent is a connected app (`oauth_connections`) and whether a sponsor exists
//! and is enabled (`people`).

use serde::Deserialize;

use crate::core::storage::{Insert, Statement, Value};

/// An agent as stored, with whether a person's OAuth consent minted it.
#[derive(Clone, Debug, Deserialize)]
pub(super) struct AgentRow {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) sponsor_id: String,
    pub(super) credential_hash: Option<String>,
    pub(super) created_at: i64,
    pub(super) created_by: String,
    pub(super) expires_at: Option<i64>,
    pub(super) paused_at: Option<i64>,
    pub(super) revoked_at: Option<i64>,
    pub(super) last_seen_at: Option<i64>,
    /// 1 when a person's OAuth consent minted it: it has tokens, not a credential.
    pub(super) connected: Option<i64>,
    /// Set while such an agent's code is not yet exchanged: when the code
    /// expires (and the upkeep may remove the agent).
    pub(super) connection_pending_until: Option<i64>,
}

/// The columns of an `AgentRow`, in every read of one.
const AGENT_COLUMNS: &str = "id, name, sponsor_id, credential_hash, created_at, created_by, expires_at, \
     paused_at, revoked_at, last_seen_at, connection_pending_until, \
     (SELECT 1 FROM oauth_connections c WHERE c.agent_id = agents.id) AS connected";

/// One pinned route of an agent.
#[derive(Deserialize)]
pub(super) struct RouteRow {
    pub(super) agent_id: String,
    pub(super) route: String,
}

/// The agents a consent minted whose code expired unexchanged by `?1`, the
/// time now: SQL selecting their ids, which the upkeep removes whole.
pub const UNEXCHANGED_CONNECTIONS: &str = "SELECT id FROM agents WHERE connection_pending_until <= ?1";

/// Every agent, as `AgentRow`s, newest first.
pub(super) fn every_agent() -> Statement {
    Statement::new(format!("SELECT {AGENT_COLUMNS} FROM agents ORDER BY created_at DESC, id DESC"))
}

/// The agent `agent_id`, as an `AgentRow`.
/// The name of the agent `agent_id` (one row, `name`, or none).
pub(crate) fn name_of_agent(agent_id: &str) -> Statement {
    Statement::new("SELECT name FROM agents WHERE id = ?1").bind(agent_id)
}

pub(super) fn agent_by_id(agent_id: &str) -> Statement {
    Statement::new(format!("SELECT {AGENT_COLUMNS} FROM agents WHERE id = ?1")).bind(agent_id)
}

/// The connected apps `sponsor`'s consents minted and whose code was
/// exchanged, as `AgentRow`s, newest first.
pub(super) fn connected_by(sponsor: &str) -> Statement {
    Statement::new(format!(
        "SELECT {AGENT_COLUMNS} FROM agents WHERE sponsor_id = ?1 AND connection_pending_until IS NULL \
         AND id IN (SELECT agent_id FROM oauth_connections) ORDER BY created_at DESC, id DESC"
    ))
    .bind(sponsor)
}

/// The pinned routes of one agent, or of every agent, as `RouteRow`s.
pub(super) fn routes_of(agent_id: Option<&str>) -> Statement {
    Statement::new(
        "SELECT agent_id, route FROM agent_routes WHERE (?1 IS NULL OR agent_id = ?1) ORDER BY agent_id, route",
    )
    .bind(agent_id)
}

/// The pinned routes of every agent `sponsor` sponsors, as `RouteRow`s.
pub(super) fn routes_sponsored_by(sponsor: &str) -> Statement {
    Statement::new(
        "SELECT r.agent_id, r.route FROM agent_routes r JOIN agents a ON a.id = r.agent_id \
         WHERE a.sponsor_id = ?1 ORDER BY r.agent_id, r.route",
    )
    .bind(sponsor)
}

/// `SELECT name, sponsor_id` of the agent `agent_id`.
pub(super) fn name_and_sponsor(agent_id: &str) -> Statement {
    Statement::new("SELECT name, sponsor_id FROM agents WHERE id = ?1").bind(agent_id)
}

/// `SELECT name` of the agent `agent_id` while it is not revoked.
pub(super) fn unrevoked_agent_name(agent_id: &str) -> Statement {
    Statement::new("SELECT name FROM agents WHERE id = ?1 AND revoked_at IS NULL").bind(agent_id)
}

/// `SELECT found`: whether an agent `agent_id` exists and is not revoked.
pub(super) fn unrevoked_agent_exists(agent_id: &str) -> Statement {
    Statement::new("SELECT EXISTS (SELECT 1 FROM agents WHERE id = ?1 AND revoked_at IS NULL) AS found").bind(agent_id)
}

/// `SELECT id` of the person `person_id`, if any.
pub(super) fn person_id_if_any(person_id: &str) -> Statement {
    Statement::new("SELECT id FROM people WHERE id = ?1").bind(person_id)
}

/// `SELECT id, disabled_at` of the would-be sponsor `person_id`, if any.
pub(super) fn sponsor(person_id: &str) -> Statement {
    Statement::new("SELECT id, disabled_at FROM people WHERE id = ?1").bind(person_id)
}

/// Revokes an agent, if it is not revoked already.
pub(super) fn revoke_agent(agent_id: &str, now_ms: i64) -> Statement {
    Statement::new("UPDATE agents SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL").bind(agent_id).bind(now_ms)
}

/// Pauses an agent not revoked; pausing twice keeps the first pause's time.
pub(super) fn pause_agent(agent_id: &str, now_ms: i64) -> Statement {
    Statement::new("UPDATE agents SET paused_at = COALESCE(paused_at, ?2) WHERE id = ?1 AND revoked_at IS NULL")
        .bind(agent_id)
        .bind(now_ms)
}

/// Resumes an agent not revoked.
pub(super) fn resume_agent(agent_id: &str) -> Statement {
    Statement::new("UPDATE agents SET paused_at = NULL WHERE id = ?1 AND revoked_at IS NULL").bind(agent_id)
}

/// Makes a connection's pending agent active: its code was exchanged.
pub(super) fn establish_connection(agent_id: &str) -> Statement {
    Statement::new("UPDATE agents SET connection_pending_until = NULL WHERE id = ?1").bind(agent_id)
}

/// The statements that remove, whole, the agents `UNEXCHANGED_CONNECTIONS`
/// selects at `now_ms`, after `forget_tuples` (authz's, which owns the tuples):
/// their pinned routes, pairing codes and messaging policy, then their rows.
pub(super) fn remove_unexchanged(now_ms: i64) -> Vec<Statement> {
    let which = UNEXCHANGED_CONNECTIONS;
    let mut removing = Vec::new();
    for table in ["agent_routes", "pairing_codes", "agent_messaging_policies"] {
        removing.push(Statement::new(format!("DELETE FROM {table} WHERE agent_id IN ({which})")).bind(now_ms));
    }
    removing.push(Statement::new(format!("DELETE FROM agents WHERE id IN ({which})")).bind(now_ms));
    removing
}

/// A newly minted agent, as its one writer states it.
pub(super) struct NewAgent<'a> {
    pub(super) agent_id: &'a str,
    pub(super) name: &'a str,
    pub(super) sponsor_id: &'a str,
    pub(super) credential_hash: Option<String>,
    pub(super) created_at: i64,
    pub(super) created_by: &'a str,
    pub(super) expires_at: Option<i64>,
    pub(super) credential_issued_by: Option<&'a str>,
    pub(super) connection_pending_until: Option<i64>,
}

/// The row of a newly minted agent; the columns it leaves out keep their
/// defaults (not paused, not revoked, never seen).
pub(super) fn insert_agent(agent: NewAgent<'_>) -> Insert {
    Insert::into("agents")
        .value("id", agent.agent_id)
        .value("name", agent.name)
        .value("sponsor_id", agent.sponsor_id)
        .value("credential_hash", agent.credential_hash)
        .value("created_at", agent.created_at)
        .value("created_by", agent.created_by)
        .value("expires_at", agent.expires_at)
        .value("credential_issued_by", agent.credential_issued_by)
        .value("connection_pending_until", agent.connection_pending_until)
}

/// Pins `routes` to the agent, in one statement.
pub(super) fn pin_routes<'a>(agent_id: &str, routes: impl ExactSizeIterator<Item = &'a str>) -> Statement {
    let mut pin = Statement::new(format!(
        "INSERT INTO agent_routes (agent_id, route) VALUES {}",
        vec!["(?, ?)"; routes.len()].join(", ")
    ));
    for route in routes {
        pin.parameters.push(Value::from(agent_id));
        pin.parameters.push(Value::from(route));
    }
    pin
}

/// A new pairing code for an agent, stored as its hash.
pub(super) fn insert_pairing_code(
    code_hash: String,
    agent_id: &str,
    created_at: i64,
    expires_at: i64,
    issued_by: Option<String>,
) -> Statement {
    Insert::into("pairing_codes")
        .value("code_hash", code_hash)
        .value("agent_id", agent_id)
        .value("created_at", created_at)
        .value("expires_at", expires_at)
        .value("issued_by", issued_by)
        .statement()
}

/// The pairing code hashing to `code_hash`, with its agent's state and sponsor.
pub(super) fn pairing_code(code_hash: &str) -> Statement {
    Statement::new(
        "SELECT c.agent_id, c.expires_at, c.redeemed_at, c.issued_by, a.revoked_at, a.sponsor_id \
         FROM pairing_codes c JOIN agents a ON a.id = c.agent_id WHERE c.code_hash = ?1",
    )
    .bind(code_hash)
}

/// Spends the pairing code hashing to `code_hash`, if not yet spent.
pub(super) fn redeem_pairing_code(code_hash: &str, now_ms: i64) -> Statement {
    Statement::new("UPDATE pairing_codes SET redeemed_at = ?2 WHERE code_hash = ?1 AND redeemed_at IS NULL")
        .bind(code_hash)
        .bind(now_ms)
}

/// Spends every pairing code of the agent still unspent: nothing can pair it again.
pub(super) fn redeem_pairing_codes_of(agent_id: &str, now_ms: i64) -> Statement {
    Statement::new("UPDATE pairing_codes SET redeemed_at = ?2 WHERE agent_id = ?1 AND redeemed_at IS NULL")
        .bind(agent_id)
        .bind(now_ms)
}

/// Gives the agent its credential, and who handed it over.
pub(super) fn set_credential(agent_id: &str, credential_hash: String, issued_by: Option<String>) -> Statement {
    Statement::new("UPDATE agents SET credential_hash = ?2, credential_issued_by = ?3 WHERE id = ?1")
        .bind(agent_id)
        .bind(credential_hash)
        .bind(issued_by)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::SqliteDatabase;

    #[test]
    fn a_minted_agent_names_every_column_but_those_left_to_their_defaults() {
        let insert = insert_agent(NewAgent {
            agent_id: "agt_1",
            name: "Invoice triage",
            sponsor_id: "psn_1",
            credential_hash: None,
            created_at: 0,
            created_by: "psn_1",
            expires_at: None,
            credential_issued_by: None,
            connection_pending_until: None,
        });
        assert_eq!(insert.table(), "agents");
        assert_eq!(SqliteDatabase::migrated().columns_not_named(&insert), ["last_seen_at", "paused_at", "revoked_at"]);
    }
}
