//! OAuth's store: every statement that reads or writes connections,
//! authorization codes and refresh tokens. Each function only builds a
//! statement; the handlers decide what rides together.
//!
//! A grant is an agent, so most reads join the `agents` domain's rows (its
//! sponsor, whether it was revoked, its pinned routes) in the same statement:
//! the agents domain owns those tables, and splitting the joins would cost the
//! token endpoint a round trip.

use crate::core::storage::{Insert, Statement};

/// The connections of the apps `sponsor`'s consents minted.
pub(super) fn connections_of(sponsor: &str) -> Statement {
    Statement::new(
        "SELECT c.agent_id, c.client_id, c.client_name, c.redirect_uri, c.connected_at, c.last_used_at \
         FROM oauth_connections c JOIN agents a ON a.id = c.agent_id WHERE a.sponsor_id = ?1",
    )
    .bind(sponsor)
}

/// What a consent connects: its agent, the client and where its code goes.
pub(super) struct NewConnection<'a> {
    pub(super) agent_id: &'a str,
    pub(super) client_id: &'a str,
    pub(super) client_name: &'a str,
    pub(super) redirect_uri: &'a str,
    pub(super) resource: &'a str,
    pub(super) connected_at: i64,
}

/// The connection a consent records; `last_used_at` is left to its default
/// until a token is first issued.
pub(super) fn insert_connection(connection: NewConnection<'_>) -> Insert {
    Insert::into("oauth_connections")
        .value("agent_id", connection.agent_id)
        .value("client_id", connection.client_id)
        .value("client_name", connection.client_name)
        .value("redirect_uri", connection.redirect_uri)
        .value("resource", connection.resource)
        .value("connected_at", connection.connected_at)
}

/// An authorization code a consent issues, stored as its hash.
pub(super) struct NewCode<'a> {
    pub(super) code_hash: String,
    pub(super) agent_id: &'a str,
    pub(super) client_id: &'a str,
    pub(super) redirect_uri: &'a str,
    pub(super) code_challenge: &'a str,
    pub(super) resource: &'a str,
    pub(super) expires_at: i64,
}

/// The code's row; `redeemed_at` is left to its default until it is exchanged.
pub(super) fn insert_code(code: NewCode<'_>) -> Insert {
    Insert::into("oauth_codes")
        .value("code_hash", code.code_hash)
        .value("agent_id", code.agent_id)
        .value("client_id", code.client_id)
        .value("redirect_uri", code.redirect_uri)
        .value("code_challenge", code.code_challenge)
        .value("resource", code.resource)
        .value("expires_at", code.expires_at)
}

/// `SELECT route`: the tools pinned to the agent of the grant whose hash
/// (`hash_column` of `grant_table`) is `hash`.
fn pinned_routes(grant_table: &str, hash_column: &str, hash: &str) -> Statement {
    Statement::new(format!(
        "SELECT route FROM agent_routes WHERE agent_id = (SELECT agent_id FROM {grant_table} WHERE {hash_column} = ?1)"
    ))
    .bind(hash)
}

/// The pinned routes of the grant an authorization code hashing to `code_hash` names.
pub(super) fn routes_of_code(code_hash: &str) -> Statement {
    pinned_routes("oauth_codes", "code_hash", code_hash)
}

/// The pinned routes of the grant a refresh token hashing to `token_hash` names.
pub(super) fn routes_of_refresh_token(token_hash: &str) -> Statement {
    pinned_routes("oauth_refresh_tokens", "token_hash", token_hash)
}

/// The authorization code hashing to `code_hash`, with its agent's sponsor and state.
pub(super) fn code(code_hash: &str) -> Statement {
    Statement::new(
        "SELECT c.agent_id, c.client_id, c.redirect_uri, c.code_challenge, c.resource, c.expires_at, \
                c.redeemed_at AS used_at, a.sponsor_id, a.revoked_at \
         FROM oauth_codes c JOIN agents a ON a.id = c.agent_id WHERE c.code_hash = ?1",
    )
    .bind(code_hash)
}

/// Spends the authorization code, if not yet spent.
pub(super) fn redeem_code(code_hash: &str, now_ms: i64) -> Statement {
    Statement::new("UPDATE oauth_codes SET redeemed_at = ?2 WHERE code_hash = ?1 AND redeemed_at IS NULL")
        .bind(code_hash)
        .bind(now_ms)
}

/// The refresh token hashing to `token_hash`, with its connection and its
/// agent's sponsor and state.
pub(super) fn refresh_token(token_hash: &str) -> Statement {
    Statement::new(
        "SELECT r.agent_id, r.expires_at, r.spent_at AS used_at, c.client_id, c.resource, a.sponsor_id, a.revoked_at \
         FROM oauth_refresh_tokens r JOIN agents a ON a.id = r.agent_id \
         JOIN oauth_connections c ON c.agent_id = r.agent_id WHERE r.token_hash = ?1",
    )
    .bind(token_hash)
}

/// Spends the refresh token, if not yet spent.
pub(super) fn spend_refresh_token(token_hash: &str, now_ms: i64) -> Statement {
    Statement::new("UPDATE oauth_refresh_tokens SET spent_at = ?2 WHERE token_hash = ?1 AND spent_at IS NULL")
        .bind(token_hash)
        .bind(now_ms)
}

/// A new refresh token for the agent, stored as its hash.
pub(super) fn insert_refresh_token(token_hash: String, agent_id: &str, issued_at: i64, expires_at: i64) -> Statement {
    Insert::into("oauth_refresh_tokens")
        .value("token_hash", token_hash)
        .value("agent_id", agent_id)
        .value("issued_at", issued_at)
        .value("expires_at", expires_at)
        .statement()
}

/// Notes when the agent's connection last had tokens issued.
pub(super) fn connection_used(agent_id: &str, now_ms: i64) -> Statement {
    Statement::new("UPDATE oauth_connections SET last_used_at = ?2 WHERE agent_id = ?1").bind(agent_id).bind(now_ms)
}

/// The connected agent `agent_id` an access token names, with its sponsor,
/// state and client.
pub(super) fn grant_of_agent(agent_id: String) -> Statement {
    Statement::new(
        "SELECT a.id AS agent_id, a.sponsor_id, a.revoked_at, c.client_id FROM agents a \
         JOIN oauth_connections c ON c.agent_id = a.id WHERE a.id = ?1",
    )
    .bind(agent_id)
}

/// The connected agent a refresh token hashing to `token_hash` names, with
/// its sponsor, state and client.
pub(super) fn grant_of_refresh_token(token_hash: String) -> Statement {
    Statement::new(
        "SELECT a.id AS agent_id, a.sponsor_id, a.revoked_at, c.client_id FROM oauth_refresh_tokens r \
         JOIN agents a ON a.id = r.agent_id JOIN oauth_connections c ON c.agent_id = r.agent_id \
         WHERE r.token_hash = ?1",
    )
    .bind(token_hash)
}

/// Forgets the codes, refresh tokens and connections of the agents
/// `unexchanged` (SQL selecting agent ids, with `?1` the time now) selects.
pub(super) fn forget_grants_of(unexchanged: &str, now_ms: i64) -> Vec<Statement> {
    ["oauth_codes", "oauth_refresh_tokens", "oauth_connections"]
        .into_iter()
        .map(|table| Statement::new(format!("DELETE FROM {table} WHERE agent_id IN ({unexchanged})")).bind(now_ms))
        .collect()
}

/// Forgets the codes past their expiry.
pub(super) fn forget_expired_codes(now_ms: i64) -> Statement {
    Statement::new("DELETE FROM oauth_codes WHERE expires_at <= ?1").bind(now_ms)
}

/// Forgets the refresh tokens past their expiry or of an agent revoked.
pub(super) fn forget_ended_refresh_tokens(now_ms: i64) -> Statement {
    Statement::new(
        "DELETE FROM oauth_refresh_tokens WHERE expires_at <= ?1 \
         OR agent_id IN (SELECT id FROM agents WHERE revoked_at IS NOT NULL)",
    )
    .bind(now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::SqliteDatabase;

    #[test]
    fn a_connection_and_its_code_name_every_column_but_those_left_to_their_defaults() {
        let database = SqliteDatabase::migrated();
        let connection = insert_connection(NewConnection {
            agent_id: "agt_1",
            client_id: "client",
            client_name: "An app",
            redirect_uri: "https://app.example/callback",
            resource: "https://node.example/mcp",
            connected_at: 0,
        });
        assert_eq!(database.columns_not_named(&connection), ["last_used_at"]);
        let code = insert_code(NewCode {
            code_hash: "hash".into(),
            agent_id: "agt_1",
            client_id: "client",
            redirect_uri: "https://app.example/callback",
            code_challenge: "challenge",
            resource: "https://node.example/mcp",
            expires_at: 0,
        });
        assert_eq!(database.columns_not_named(&code), ["redeemed_at"]);
    }
}
