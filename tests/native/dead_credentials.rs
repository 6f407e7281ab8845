//! A credential that no longer works says so on every surface: REST and each
//! MCP method, in both protocol eras, answer the HTTP refusal itself (401 with
//! a Bearer challenge, `error="invalid_token"` for a dead credential; 403 for a
//! stopped agent), never a tool result.

use mailroom::core::http::Response;
use mailroom::core::platform::Platform;
use mailroom::testing::{RequestExt, request};
use serde_json::{Value, json};

use crate::support::*;

const INVALID_TOKEN: &str = "Bearer realm=\"mailroom\", error=\"invalid_token\"";
const NO_CREDENTIAL: &str = "Bearer realm=\"mailroom\"";
const MODERN: &str = "2026-07-28";
/// What every 401 from the MCP endpoint adds to its challenge (RFC 9728 §5.1).
const RESOURCE_METADATA: &str =
    ", resource_metadata=\"https://mailroom.test/.well-known/oauth-protected-resource/mcp\"";

/// A node and a credential in one state, and how every surface must refuse it:
/// (world, credential, status, code, challenge).
fn credential_in(state: &str) -> (World, String, u16, &'static str, Option<&'static str>) {
    let world = World::new();
    let (ben, ben_token) = world.person("ben@example.com");
    let (agent, credential) = world.mint(&ben, &["identity.read"], json!([]));
    let stop_agent = |action: &str| {
        assert_eq!(world.admin("POST", &format!("/api/agents/{agent}/{action}"), None).status, 200, "{action}");
    };
    let (token, status, code, challenge) = match state {
        "revoked agent" => {
            stop_agent("revoke");
            (credential, 401, "agent_revoked", Some(INVALID_TOKEN))
        }
        "expired agent" => {
            let now = world.node.platform.now_ms();
            world.node.database.tamper(&format!("UPDATE agents SET expires_at = {now} WHERE id = '{agent}'"));
            (credential, 401, "agent_expired", Some(INVALID_TOKEN))
        }
        "unknown agent credential" => {
            let last = if credential.ends_with('A') { 'B' } else { 'A' };
            let forged = format!("{}{last}", &credential[..credential.len() - 1]);
            (forged, 401, "agent_credential_invalid", Some(INVALID_TOKEN))
        }
        "malformed token" => ("mr_ses_not-a-token.at-all".to_string(), 401, "invalid_credential", Some(INVALID_TOKEN)),
        "expired access token" => {
            world.node.platform.advance(16 * 60 * 1000);
            (ben_token, 401, "access_token_expired", Some(INVALID_TOKEN))
        }
        "signed-out session" => {
            assert_eq!(world.call("DELETE", "/api/sessions/current", Some(&ben_token), None).status, 200);
            (ben_token, 401, "session_ended", Some(INVALID_TOKEN))
        }
        "paused agent" => {
            stop_agent("pause");
            (credential, 403, "agent_paused", None)
        }
        "disabled sponsor" => {
            assert_eq!(world.admin("POST", &format!("/api/people/{ben}/disable"), None).status, 200);
            (credential, 403, "sponsor_disabled", None)
        }
        other => panic!("no such state: {other}"),
    };
    (world, token, status, code, challenge)
}

const STATES: [&str; 8] = [
    "revoked agent",
    "expired agent",
    "unknown agent credential",
    "malformed token",
    "expired access token",
    "signed-out session",
    "paused agent",
    "disabled sponsor",
];

/// Requires the HTTP refusal itself: the status, the four-part body with
/// `code`, and exactly `challenge` as `WWW-Authenticate`.
#[track_caller]
fn check_refused(what: &str, response: &Response, status: u16, code: &str, challenge: Option<&str>) {
    assert_eq!(response.status, status, "{what}: {}", text(response));
    let error = &body(response)["error"];
    assert_eq!(error["code"], code, "{what}: {}", text(response));
    for part in ["message", "reason", "fix"] {
        assert!(error[part].as_str().is_some_and(|text| !text.trim().is_empty()), "{what}: no {part}");
    }
    assert!(body(response).get("jsonrpc").is_none(), "{what}: answered as HTTP, not as JSON-RPC");
    assert_eq!(response.header("www-authenticate"), challenge, "{what}");
}

/// Every MCP method a client sends, in both eras, as the holder of `token`.
fn mcp_requests(token: &str) -> Vec<(String, mailroom::core::http::Request)> {
    let legacy = |method: &str, params: Value| {
        let message = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
        (format!("{method} (2025-11-25)"), request("POST", "/mcp").bearer(token).json(message))
    };
    let modern = |method: &str, mut params: Value, name: Option<&str>| {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let message = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
        let mut built = request("POST", "/mcp")
            .bearer(token)
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", method)
            .json(message);
        if let Some(name) = name {
            built = built.header("mcp-name", name);
        }
        (format!("{method} ({MODERN})"), built)
    };
    let get_me = json!({ "name": "get_me", "arguments": {} });
    vec![
        legacy(
            "initialize",
            json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
        ),
        legacy("ping", json!({})),
        legacy("tools/list", json!({})),
        legacy("tools/call", get_me.clone()),
        modern("server/discover", json!({}), None),
        modern("tools/list", json!({}), None),
        modern("tools/call", get_me, Some("get_me")),
    ]
}

#[test]
fn a_dead_or_stopped_credential_is_refused_as_http_on_rest_and_every_mcp_method() {
    for state in STATES {
        let (world, token, status, code, challenge) = credential_in(state);
        let rest = world.call("GET", "/api/me", Some(&token), None);
        check_refused(&format!("{state}: GET /api/me"), &rest, status, code, challenge);
        let mcp_challenge = challenge.map(|challenge| format!("{challenge}{RESOURCE_METADATA}"));
        for (method, built) in mcp_requests(&token) {
            let answer = world.node.send(built);
            check_refused(&format!("{state}: {method}"), &answer, status, code, mcp_challenge.as_deref());
        }
    }
}

#[test]
fn the_same_calls_with_a_live_credential_are_answered_as_json_rpc() {
    // The other side of the test above: these very requests are not refused
    // while the credential works, so the refusals there are the credential's.
    let world = World::new();
    let (ben, ben_token) = world.person("ben@example.com");
    let (_, credential) = world.mint(&ben, &["identity.read"], json!([]));
    for token in [ben_token, credential] {
        for (method, built) in mcp_requests(&token) {
            let answer = world.node.send(built);
            assert_eq!(answer.status, 200, "{method}: {}", text(&answer));
            assert!(body(&answer)["result"].is_object(), "{method}: {}", text(&answer));
            assert_eq!(answer.header("www-authenticate"), None, "{method}");
        }
    }
}

#[test]
fn every_401_carries_a_bearer_challenge_and_only_a_dead_credential_an_error() {
    let world = World::new();
    let no_credential = world.call("GET", "/api/me", None, None);
    check_refused("no credential", &no_credential, 401, "not_signed_in", Some(NO_CREDENTIAL));
    let wrong_password =
        world.call("POST", "/api/sessions", None, Some(json!({ "email": ADMIN_EMAIL, "password": "not it" })));
    check_refused("a wrong password", &wrong_password, 401, "wrong_email_or_password", Some(NO_CREDENTIAL));
    let unknown_refresh =
        world.call("POST", "/api/sessions/refresh", None, Some(json!({ "refresh_token": "mr_ref_unknown" })));
    check_refused("an unknown refresh token", &unknown_refresh, 401, "refresh_token_invalid", Some(NO_CREDENTIAL));
    // A stranger at the MCP endpoint is challenged, the challenge naming where
    // to learn how to sign in (decision 0026).
    let stranger = world.node.send(request("POST", "/mcp").json(json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "get_me", "arguments": {} }
    })));
    let challenge = format!("{NO_CREDENTIAL}{RESOURCE_METADATA}");
    check_refused("a stranger at /mcp", &stranger, 401, "not_signed_in", Some(&challenge));
}
