//! The token endpoint (RFC 6749 §4.1.3, §6) and token revocation (RFC 7009).
//!
//! An authorization code is exchanged once, by the client it was issued to, at
//! the redirect URI it was issued for, with the PKCE verifier of its challenge.
//! A refresh token works once too: each refresh answers a new one. A code or
//! refresh token presented a second time ends the whole grant (the agent is
//! revoked, so every token of it stops at once): only a replay or a thief
//! presents one twice. Unknown codes and refresh tokens are counted against
//! the caller's address before they are looked up, as wrong pairing codes are.
//!
//! Access tokens are signed, not stored (`authz::credentials`): each request
//! still confirms the agent is live, so revoking ends access on the next call.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mailroom_contract::api::OAuthTokens;
use mailroom_contract::capabilities::CAPABILITIES;
use mailroom_contract::registry;

use super::consent::{challenge_of, is_pkce_value};
use super::discovery::mcp_resource;
use super::errors::OAuthError;
use super::shared::REFRESH_TOKEN_LIFETIME_MS;
use super::store;
use crate::agents;
use crate::authz::credentials::{
    OAUTH_ACCESS_TOKEN_LIFETIME_MS, OAuthAccessClaims, sign_oauth_access_token, verify_oauth_access_token,
};
use crate::authz::throttle::Window;
use crate::core::caller::AgentProof;
use crate::core::context::Context;
use crate::core::crypto::{hash_secret, hex};
use crate::core::http::Response;
use crate::core::platform::random_bytes;
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Statement};

/// The prefix of a refresh token.
const REFRESH_TOKEN_PREFIX: &str = "mr_ort_";

/// A form body's fields; a field sent twice is refused (RFC 6749 §3.2).
fn form_fields(body: &[u8]) -> Result<BTreeMap<String, String>, OAuthError> {
    let mut fields = BTreeMap::new();
    for (name, value) in form_urlencoded::parse(body) {
        if fields.insert(name.to_string(), value.into_owned()).is_some() {
            // The names a request may carry are few and known; anything else
            // sent twice is named as sent, within reason.
            let field = [
                "grant_type",
                "code",
                "code_verifier",
                "redirect_uri",
                "client_id",
                "refresh_token",
                "resource",
                "token",
            ]
            .into_iter()
            .find(|known| *known == name)
            .unwrap_or("a field");
            return Err(OAuthError::InvalidRequest { field, why: "is sent more than once".into() });
        }
    }
    Ok(fields)
}

fn required<'a>(fields: &'a BTreeMap<String, String>, field: &'static str) -> Result<&'a str, OAuthError> {
    fields
        .get(field)
        .map(String::as_str)
        .filter(|value| !value.is_empty())
        .ok_or(OAuthError::InvalidRequest { field, why: "is missing".into() })
}

/// Refuses a `resource` other than this node's MCP endpoint (RFC 8707).
fn check_resource(fields: &BTreeMap<String, String>, expected: &str) -> Result<(), OAuthError> {
    match fields.get("resource") {
        Some(resource) if resource != expected => {
            Err(OAuthError::InvalidTarget { resource: resource.clone(), expected: expected.to_string() })
        }
        _ => Ok(()),
    }
}

/// `POST /oauth/token`.
pub async fn token(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let fields = form_fields(&context.request().body)?;
    let origin = context.config().origin_of(context.request()).to_string();
    let expected = mcp_resource(&origin);
    match required(&fields, "grant_type")? {
        "authorization_code" => exchange_code(context, &fields, &expected).await,
        "refresh_token" => refresh(context, &fields, &expected).await,
        other => Err(OAuthError::UnsupportedGrantType { grant_type: other.chars().take(60).collect() }.into()),
    }
}

/// The capabilities an agent holds any pinned route of, space-separated.
fn scope_of(routes: &QueryResult) -> String {
    let pinned: Vec<String> = routes.rows.iter().filter_map(|row| row.text("route").ok()).collect();
    let held: Vec<&str> = CAPABILITIES
        .iter()
        .filter(|capability| {
            capability.routes.iter().any(|id| pinned.iter().any(|tool| tool == registry().route(*id).tool))
        })
        .map(|capability| capability.name)
        .collect();
    held.join(" ")
}

/// The grant a code or refresh token names, as read with the attempt counted.
struct Grant {
    agent_id: String,
    sponsor: String,
    client_id: String,
    resource: String,
    expires_at: i64,
    used_at: Option<i64>,
    agent_revoked: bool,
    /// For a code: the redirect URI and PKCE challenge it was issued with.
    redirect_uri: Option<String>,
    code_challenge: Option<String>,
}

impl Grant {
    fn read(context: &Context<'_>, result: &QueryResult) -> Result<Option<Grant>, Refusal> {
        let Some(row) = result.first() else { return Ok(None) };
        let text = |column: &str| row.text(column).map_err(|error| context.internal(error));
        let integer = |column: &str| row.optional_integer(column).map_err(|error| context.internal(error));
        // Present only in a code's row.
        let optional_text = |column: &str| row.optional_text(column).ok().flatten();
        Ok(Some(Grant {
            agent_id: text("agent_id")?,
            sponsor: text("sponsor_id")?,
            client_id: text("client_id")?,
            resource: text("resource")?,
            expires_at: integer("expires_at")?.unwrap_or(0),
            used_at: integer("used_at")?,
            agent_revoked: integer("revoked_at")?.is_some(),
            redirect_uri: optional_text("redirect_uri"),
            code_challenge: optional_text("code_challenge"),
        }))
    }
}

/// Counts the attempt, reads what the hash names, and refuses an unknown,
/// expired or replayed grant. A replay ends the grant it belonged to.
async fn known_grant(
    context: &mut Context<'_>,
    lookup: Statement,
    routes: Statement,
    replayed: &'static str,
) -> Result<(Grant, QueryResult), Refusal> {
    let window = Window::oauth_token(context.request().client_address.as_deref());
    let attempt = hex(&random_bytes::<16>(context.platform()));
    let [grant, routes, reserved] =
        context.read_array([lookup, routes, window.reserve(context.now_ms(), &attempt)]).await?;
    if let Err(retry_after_seconds) = window.admits(&reserved, context.now_ms(), &attempt) {
        return Err(OAuthError::TooManyAttempts { retry_after_seconds }.into());
    }
    // An unknown one keeps its reservation: it is its failure.
    let Some(grant) = Grant::read(context, &grant)? else {
        return Err(OAuthError::InvalidGrant { why: "It is not one this node issued.".into() }.into());
    };
    context.write(window.release());
    if grant.used_at.is_some() {
        // Presented twice: recorded as the grant's agent, for its sponsor, and
        // the grant ends whatever this request is answered.
        context.attribute_to_agent(grant.agent_id.clone(), AgentProof::Connection, grant.sponsor.clone());
        context.audit_object(grant.agent_id.clone());
        context.write_whatever_the_outcome(agents::ending(&grant.agent_id, context.now_ms()));
        return Err(OAuthError::GrantEnded { why: replayed }.into());
    }
    if grant.expires_at <= context.now_ms() {
        return Err(OAuthError::InvalidGrant { why: "It has expired.".into() }.into());
    }
    if grant.agent_revoked {
        return Err(OAuthError::InvalidGrant { why: "The app was disconnected: its agent is revoked.".into() }.into());
    }
    Ok((grant, routes))
}

/// `grant_type=authorization_code`.
async fn exchange_code(
    context: &mut Context<'_>,
    fields: &BTreeMap<String, String>,
    expected: &str,
) -> Result<Response, Refusal> {
    let code = required(fields, "code")?;
    let verifier = required(fields, "code_verifier")?;
    let redirect_uri = required(fields, "redirect_uri")?;
    let client_id = required(fields, "client_id")?;
    check_resource(fields, expected)?;
    let code_hash = hash_secret(code);
    let lookup = store::code(&code_hash);
    let routes = store::routes_of_code(&code_hash);
    let (grant, routes) = known_grant(context, lookup, routes, "The code was presented a second time").await?;
    if grant.client_id != client_id {
        // RFC 6749 §5.2: a grant issued to another client is `invalid_grant`.
        return Err(OAuthError::InvalidGrant { why: "The code was issued to another client.".into() }.into());
    }
    if grant.redirect_uri.as_deref() != Some(redirect_uri) {
        return Err(
            OAuthError::InvalidGrant { why: "`redirect_uri` is not the one the code was issued for.".into() }.into()
        );
    }
    let verified = is_pkce_value(verifier) && grant.code_challenge.as_deref() == Some(challenge_of(verifier).as_str());
    if !verified {
        return Err(
            OAuthError::InvalidGrant { why: "The PKCE verifier does not match the code's challenge.".into() }.into()
        );
    }
    context.write_changing_one_row(
        store::redeem_code(&code_hash, context.now_ms()),
        OAuthError::InvalidGrant { why: "The code was used by another request a moment ago.".into() },
    );
    // Only now does the consent's agent become active: until this commit it
    // held nothing, could do nothing and was no connected app.
    context.write(agents::connection_established(&grant.agent_id));
    issue_tokens(context, grant, &routes)
}

/// `grant_type=refresh_token`.
async fn refresh(
    context: &mut Context<'_>,
    fields: &BTreeMap<String, String>,
    expected: &str,
) -> Result<Response, Refusal> {
    let refresh_token = required(fields, "refresh_token")?;
    let client_id = required(fields, "client_id")?;
    check_resource(fields, expected)?;
    let token_hash = hash_secret(refresh_token);
    let lookup = store::refresh_token(&token_hash);
    let routes = store::routes_of_refresh_token(&token_hash);
    let (grant, routes) = known_grant(context, lookup, routes, "The refresh token was presented a second time").await?;
    if grant.client_id != client_id {
        return Err(OAuthError::InvalidGrant { why: "The refresh token was issued to another client.".into() }.into());
    }
    context.write_changing_one_row(
        store::spend_refresh_token(&token_hash, context.now_ms()),
        OAuthError::InvalidGrant { why: "The refresh token was used by another request a moment ago.".into() },
    );
    issue_tokens(context, grant, &routes)
}

/// Attributes the exchange to the grant's agent and answers its new tokens: a
/// signed access token for the resource, and a refresh token stored as a hash.
fn issue_tokens(context: &mut Context<'_>, grant: Grant, routes: &QueryResult) -> Result<Response, Refusal> {
    let now_ms = context.now_ms();
    context.attribute_to_agent(grant.agent_id.clone(), AgentProof::Connection, grant.sponsor.clone());
    context.audit_object(grant.agent_id.clone());
    let claims = OAuthAccessClaims {
        agent_id: grant.agent_id.clone(),
        resource: grant.resource,
        expires_at_ms: now_ms + OAUTH_ACCESS_TOKEN_LIFETIME_MS,
    };
    let access_token = sign_oauth_access_token(&claims, &context.config().session_key);
    let refresh_token =
        format!("{REFRESH_TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(random_bytes::<32>(context.platform())));
    context.write(store::insert_refresh_token(
        hash_secret(&refresh_token),
        &grant.agent_id,
        now_ms,
        now_ms + REFRESH_TOKEN_LIFETIME_MS,
    ));
    context.write(store::connection_used(&grant.agent_id, now_ms));
    let tokens = OAuthTokens {
        access_token,
        token_type: "Bearer".into(),
        expires_in: OAUTH_ACCESS_TOKEN_LIFETIME_MS / 1000,
        refresh_token,
        scope: scope_of(routes),
    };
    // RFC 6749 §5.1: never cached (every JSON answer says `no-store` already).
    Ok(context.json(&tokens).with_header("pragma", "no-cache"))
}

/// `POST /oauth/revoke`: ends the grant an access or refresh token belongs to,
/// for the client it was issued to and no other (RFC 7009 §2.1): a public
/// client names itself with `client_id`, and a token of another client's grant
/// is refused and left working. A token the node does not know is answered the
/// same as one it revoked (RFC 7009 §2.2).
pub async fn revoke(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let fields = form_fields(&context.request().body)?;
    let token = required(&fields, "token")?;
    let client_id = required(&fields, "client_id")?;
    // An access token names its agent under the node's signature, expired or
    // not; a refresh token is looked up by its hash. Either way the grant's
    // connection says which client it was issued to.
    let lookup = if let Ok(claims) = verify_oauth_access_token(token, &context.config().session_key, i64::MIN) {
        store::grant_of_agent(claims.agent_id)
    } else if token.starts_with(REFRESH_TOKEN_PREFIX) {
        store::grant_of_refresh_token(hash_secret(token))
    } else {
        return Ok(Response::empty(200).with_header("cache-control", "no-store"));
    };
    let [found] = context.read_array([lookup]).await?;
    let live = found.first().filter(|row| row.optional_integer("revoked_at").ok().flatten().is_none());
    if let Some(row) = live {
        if row.text("client_id").ok().as_deref() != Some(client_id) {
            return Err(OAuthError::InvalidGrant {
                why: "The token was issued to another client, and only the client a token was issued to may revoke it (RFC 7009 §2.1).".into(),
            }
            .into());
        }
        let agent_id = row.text("agent_id").map_err(|error| context.internal(error))?;
        let sponsor = row.text("sponsor_id").map_err(|error| context.internal(error))?;
        // The token proves the grant: its end is recorded as the agent's act.
        context.attribute_to_agent(agent_id.clone(), AgentProof::Connection, sponsor);
        context.audit_object(agent_id.clone());
        context.write(agents::ending(&agent_id, context.now_ms()));
    }
    Ok(Response::empty(200).with_header("cache-control", "no-store"))
}

/// The statements the upkeep runs to forget what can prove nothing any more:
/// the agent of a consent whose code expired unexchanged, removed whole (its
/// connection and code, then everything of the agent); codes past their two
/// minutes; and refresh tokens past their 30 days or of an agent that was
/// revoked. A spent refresh token is kept until then, so its reuse is still
/// caught.
pub fn forget_ended(now_ms: i64) -> Vec<Statement> {
    let mut forgetting = store::forget_grants_of(agents::UNEXCHANGED_CONNECTIONS, now_ms);
    forgetting.extend(agents::removing_unexchanged(now_ms));
    forgetting.extend([store::forget_expired_codes(now_ms), store::forget_ended_refresh_tokens(now_ms)]);
    forgetting
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_sent_twice_is_refused_and_one_missing_is_named() {
        let twice = form_fields(b"grant_type=refresh_token&grant_type=authorization_code");
        assert!(matches!(twice, Err(OAuthError::InvalidRequest { field: "grant_type", .. })));
        let fields = form_fields(b"grant_type=authorization_code&code=").unwrap();
        assert!(matches!(required(&fields, "code"), Err(OAuthError::InvalidRequest { field: "code", .. })));
        assert_eq!(required(&fields, "grant_type").unwrap(), "authorization_code");
    }
}
