//! OAuth 2.1 for MCP clients (decision 0026): discovery, registration, consent
//! minting a sponsored agent with the chosen ceiling, the code and refresh
//! grants with their replays, the token's audience, revocation and
//! disconnecting, each through the node's own routes.

use std::collections::BTreeSet;

use mailroom::core::http::Response;
use mailroom::testing::{RequestExt, request};
use mailroom_contract::capabilities::CAPABILITIES;
use mailroom_contract::registry;
use serde_json::{Value, json};

use crate::desk::{Desk, READS_THE_MAILBOX};
use crate::support::*;

const SUPPORT: &str = "support@mailroom.test";

/// Ben, who holds metadata and content on the support mailbox.
fn desk() -> Desk {
    Desk::new(SUPPORT).with("ben@example.com", READS_THE_MAILBOX)
}

fn metadata_on(mailbox: &str) -> Value {
    json!([{ "mailbox": mailbox, "relations": ["mailbox.metadata.read"] }])
}

fn mcp(world: &World, token: &str, method: &str, params: Value) -> Response {
    world.node.send(
        request("POST", "/mcp")
            .bearer(token)
            .json(json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params })),
    )
}

fn tools(world: &World, token: &str) -> BTreeSet<String> {
    let listed = mcp(world, token, "tools/list", json!({}));
    assert_eq!(listed.status, 200, "{}", text(&listed));
    body(&listed)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().into())
        .collect()
}

#[track_caller]
fn oauth_error(response: &Response, status: u16, error: &str) {
    assert_eq!(response.status, status, "{}", text(response));
    let answer = body(response);
    assert_eq!(answer["error"], error, "{answer}");
    assert!(answer["error_description"].as_str().is_some_and(|text| !text.is_empty()), "{answer}");
    assert!(answer["fix"].as_str().is_some_and(|text| !text.is_empty()), "{answer}");
    let cache_control: Vec<&str> =
        response.headers.iter().filter(|(name, _)| name == "cache-control").map(|(_, value)| value.as_str()).collect();
    assert_eq!(cache_control, ["no-store"], "said once");
}

fn consent_query(client_id: &str, redirect_uri: &str, extra: &[(&str, &str)]) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    query
        .append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("code_challenge", OAUTH_CHALLENGE)
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", "s-1");
    for (name, value) in extra {
        query.append_pair(name, value);
    }
    query.finish()
}

#[test]
fn discovery_names_the_mcp_endpoint_and_this_node_as_its_authorization_server() {
    let world = World::new();
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] {
        let metadata = body(&world.node.send(request("GET", path)));
        assert_eq!(metadata["resource"], "https://mailroom.test/mcp", "{path}");
        assert_eq!(metadata["authorization_servers"], json!(["https://mailroom.test"]), "{path}");
        // Clients ask for every scope a resource lists; the person chooses instead.
        assert!(metadata.get("scopes_supported").is_none(), "{path}");
    }
    let server = body(&world.node.send(request("GET", "/.well-known/oauth-authorization-server")));
    assert_eq!(server["issuer"], "https://mailroom.test");
    for (field, path) in [
        ("authorization_endpoint", "/oauth/authorize"),
        ("token_endpoint", "/oauth/token"),
        ("registration_endpoint", "/oauth/register"),
        ("revocation_endpoint", "/oauth/revoke"),
    ] {
        assert_eq!(server[field], format!("https://mailroom.test{path}"), "{field}");
        let method = if field == "authorization_endpoint" { "GET" } else { "POST" };
        assert!(mailroom::dispatch::route_for(method, path).is_some(), "{field} is a route of the contract");
    }
    assert_eq!(server["code_challenge_methods_supported"], json!(["S256"]));
    let scopes: Vec<&str> = CAPABILITIES.iter().map(|capability| capability.name).collect();
    assert_eq!(server["scopes_supported"], json!(scopes), "the scopes are the capability vocabulary");
}

#[test]
fn registration_writes_nothing_and_refuses_what_it_cannot_use() {
    let world = World::new();
    let client_id = world.oauth_client();
    assert!(client_id.starts_with("mrc_"));
    let recorded = world.audit().into_iter().filter(|entry| entry["action"] == "register_oauth_client").count();
    assert_eq!(recorded, 0, "registering writes nothing, not even an audit row");
    let refused = world
        .node
        .send(request("POST", "/oauth/register").json(json!({ "redirect_uris": ["http://app.example/callback"] })));
    oauth_error(&refused, 400, "invalid_redirect_uri");
    let confidential = world.node.send(request("POST", "/oauth/register").json(json!({
        "redirect_uris": [OAUTH_REDIRECT], "token_endpoint_auth_method": "client_secret_basic",
    })));
    oauth_error(&confidential, 400, "invalid_client_metadata");
    let not_json = world.node.send(request("POST", "/oauth/register").raw_body(b"redirect_uris=x"));
    oauth_error(&not_json, 400, "invalid_client_metadata");
}

#[test]
fn the_consent_screen_checks_the_request_and_shows_what_the_person_holds() {
    let desk = desk();
    let (world, ben, ben_token, mailbox) =
        (&desk.world, desk.person("ben").id.as_str(), desk.person("ben").token.as_str(), desk.mailbox.as_str());
    world.mailbox("sales@mailroom.test");
    let client_id = world.oauth_client();
    let query = consent_query(&client_id, OAUTH_REDIRECT, &[("scope", "mail.triage not.a.capability")]);
    let consent = world.call("GET", &format!("/api/oauth/consent?{query}"), Some(ben_token), None);
    assert_eq!(consent.status, 200, "{}", text(&consent));
    let consent = body(&consent);
    assert_eq!(consent["client"]["name"], "Test MCP client");
    assert_eq!(consent["client"]["redirect_host"], "127.0.0.1:4567");
    assert_eq!(consent["requested_capabilities"], json!(["mail.triage"]));
    assert_eq!(consent["resource"], "https://mailroom.test/mcp");
    let listed = consent["mailboxes"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "only where ben holds something: {listed:?}");
    let support = listed.iter().find(|entry| entry["id"] == mailbox).unwrap();
    let mut held: Vec<&str> =
        support["held"].as_array().unwrap().iter().map(|relation| relation.as_str().unwrap()).collect();
    held.sort_unstable();
    assert_eq!(held, ["mailbox.content.read", "mailbox.metadata.read"]);
    let deny_to = consent["deny_to"].as_str().unwrap();
    assert!(deny_to.starts_with("http://127.0.0.1:4567/callback?error=access_denied"), "{deny_to}");
    assert!(deny_to.contains("state=s-1") && deny_to.contains("iss=https%3A%2F%2Fmailroom.test"), "{deny_to}");

    // What cannot be checked is refused on the page, naming the field.
    for (query, field) in [
        (consent_query(&client_id, "http://127.0.0.1:4567/elsewhere", &[]), "redirect_uri"),
        (consent_query(&client_id, OAUTH_REDIRECT, &[("resource", "https://other.example/mcp")]), "resource"),
        (query.replace("S256", "plain"), "code_challenge_method"),
    ] {
        let refused = world.call("GET", &format!("/api/oauth/consent?{query}"), Some(ben_token), None);
        assert_eq!(refused.status, 400, "{}", text(&refused));
        assert!(body(&refused)["error"]["message"].as_str().unwrap().contains(&format!("`{field}`")), "{field}");
    }
    let forged = consent_query(&client_id.replace("mrc_", "mrc_x"), OAUTH_REDIRECT, &[]);
    let unknown = world.call("GET", &format!("/api/oauth/consent?{forged}"), Some(ben_token), None);
    assert_eq!(unknown.status, 404, "{}", text(&unknown));

    // Only a person consents: an agent, even one of theirs, is refused.
    let (_, agent) = world.mint(ben, &["identity.read"], json!([]));
    let by_agent = world.call("GET", &format!("/api/oauth/consent?{query}"), Some(&agent), None);
    assert_eq!(by_agent.status, 403, "{}", text(&by_agent));
}

#[test]
fn consent_mints_an_agent_sponsored_by_the_person_with_exactly_the_chosen_ceiling() {
    let desk = desk();
    let (world, ben, ben_token, mailbox) =
        (&desk.world, desk.person("ben").id.as_str(), desk.person("ben").token.as_str(), desk.mailbox.as_str());
    let (agent, access, _, _) = world.connected_app(ben_token, &["mail.triage"], metadata_on(mailbox));
    let shown = body(&world.admin("GET", &format!("/api/agents/{agent}"), None));
    assert_eq!(shown["sponsor"], ben);
    assert_eq!(shown["state"], "active", "a connected app is active, not awaiting pairing");
    let triage = CAPABILITIES.iter().find(|capability| capability.name == "mail.triage").unwrap();
    let expected: BTreeSet<String> = triage.routes.iter().map(|id| registry().route(*id).tool.to_string()).collect();
    assert_eq!(tools(world, &access), expected, "the client is offered exactly the chosen capability");
    let listed =
        mcp(world, &access, "tools/call", json!({ "name": "list_messages", "arguments": { "mailbox_id": mailbox } }));
    assert_eq!(body(&listed)["result"]["isError"], false, "{}", text(&listed));
    let outside = mcp(world, &access, "tools/call", json!({ "name": "get_me", "arguments": {} }));
    assert_eq!(body(&outside)["error"]["code"], -32602, "a tool of another capability is no tool");
    // Its acts are the agent's, for its sponsor: a content read is recorded so.
    let receipt = world.deliver("multipart-attachment", SUPPORT);
    let content = json!([{ "mailbox": mailbox, "relations": ["mailbox.metadata.read", "mailbox.content.read"] }]);
    let (reader, reader_access, _, _) = world.connected_app(ben_token, &["mail.read"], content);
    let read = mcp(
        world,
        &reader_access,
        "tools/call",
        json!({ "name": "get_message_body", "arguments": { "mailbox_id": mailbox, "receipt_id": receipt } }),
    );
    assert_eq!(body(&read)["result"]["isError"], false, "{}", text(&read));
    let entry = world.audit().into_iter().rev().find(|entry| entry["action"] == "get_message_body").unwrap();
    assert_eq!((entry["actor"].as_str(), entry["delegator"].as_str()), (Some(reader.as_str()), Some(ben)));
    // The consent itself is the person's act, naming the agent.
    let consented = world.audit().into_iter().find(|entry| entry["action"] == "approve_oauth_consent").unwrap();
    assert_eq!((consented["actor"].as_str(), consented["object"].as_str()), (Some(ben), Some(agent.as_str())));

    // The mint form's rules: nothing the person does not hold, no capability that cannot work.
    let client_id = world.oauth_client();
    let answer = |capabilities: Value, mailboxes: Value| {
        json!({ "client_id": client_id, "redirect_uri": OAUTH_REDIRECT, "code_challenge": OAUTH_CHALLENGE,
                "code_challenge_method": "S256", "capabilities": capabilities, "mailboxes": mailboxes })
    };
    let not_held = json!([{ "mailbox": mailbox, "relations": ["send.propose"] }]);
    let lacks =
        world.call("POST", "/api/oauth/consent", Some(ben_token), Some(answer(json!(["mail.triage"]), not_held)));
    assert_eq!(lacks.status, 403, "{}", text(&lacks));
    let unsatisfiable =
        world.call("POST", "/api/oauth/consent", Some(ben_token), Some(answer(json!(["mail.read"]), json!([]))));
    assert_eq!(body(&unsatisfiable)["error"]["code"], "capability_unsatisfiable");
}

#[test]
fn a_code_is_exchanged_once_with_its_verifier_at_its_redirect_for_its_client() {
    let desk = desk();
    let (world, ben_token, mailbox) = (&desk.world, desk.person("ben").token.as_str(), desk.mailbox.as_str());
    let client_id = world.oauth_client();
    let (agent, code) = world.oauth_consent(ben_token, &client_id, &["mail.triage"], metadata_on(mailbox));
    let exchange = |fields: &[(&str, &str)]| world.node.send(oauth_form(fields));
    let base = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", OAUTH_REDIRECT),
        ("client_id", client_id.as_str()),
    ];
    let without_verifier = exchange(&base);
    oauth_error(&without_verifier, 400, "invalid_request");
    let wrong_verifier = [&base[..], &[("code_verifier", "a-wrong-verifier-of-the-right-length-0123456789")]].concat();
    oauth_error(&exchange(&wrong_verifier), 400, "invalid_grant");
    let mut elsewhere = base.to_vec();
    elsewhere[2] = ("redirect_uri", "http://127.0.0.1:4567/elsewhere");
    elsewhere.push(("code_verifier", OAUTH_VERIFIER));
    oauth_error(&exchange(&elsewhere), 400, "invalid_grant");
    let other_resource =
        [&base[..], &[("code_verifier", OAUTH_VERIFIER), ("resource", "https://other.example/mcp")]].concat();
    oauth_error(&exchange(&other_resource), 400, "invalid_target");
    let mut stolen = base.to_vec();
    stolen[3] = ("client_id", "mrc_someone-else");
    stolen.push(("code_verifier", OAUTH_VERIFIER));
    oauth_error(&exchange(&stolen), 400, "invalid_grant");

    let good = [&base[..], &[("code_verifier", OAUTH_VERIFIER), ("resource", "https://mailroom.test/mcp")]].concat();
    let tokens = exchange(&good);
    assert_eq!(tokens.status, 200, "{}", text(&tokens));
    let cache_control = tokens.headers.iter().filter(|(name, _)| name == "cache-control").count();
    assert_eq!((tokens.header("cache-control"), cache_control), (Some("no-store"), 1));
    let tokens = body(&tokens);
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["scope"], "mail.triage");
    assert_eq!(tokens["expires_in"], 900);
    let access = tokens["access_token"].as_str().unwrap().to_string();
    assert_eq!(mcp(world, &access, "tools/list", json!({})).status, 200);
    let exchanged = world.audit().into_iter().rev().find(|entry| entry["action"] == "oauth_token").unwrap();
    assert_eq!(exchanged["actor"], agent, "the exchange is recorded as the agent's");

    // Replayed: refused, and the grant it began ends at once.
    oauth_error(&exchange(&good), 400, "invalid_grant");
    let after = mcp(world, &access, "tools/list", json!({}));
    assert_eq!(after.status, 401, "{}", text(&after));
    assert_eq!(body(&after)["error"]["code"], "agent_revoked");
    assert_eq!(body(&world.admin("GET", &format!("/api/agents/{agent}"), None))["state"], "revoked");
}

#[test]
fn a_code_expires_after_two_minutes() {
    let desk = desk();
    let (world, ben_token, mailbox) = (&desk.world, desk.person("ben").token.as_str(), desk.mailbox.as_str());
    let client_id = world.oauth_client();
    let (_, code) = world.oauth_consent(ben_token, &client_id, &["mail.triage"], metadata_on(mailbox));
    world.node.platform.advance(mailroom::oauth::CODE_LIFETIME_MS);
    oauth_error(&world.node.send(world.oauth_code_exchange(&client_id, &code, OAUTH_VERIFIER)), 400, "invalid_grant");
}

#[test]
fn refresh_tokens_rotate_and_one_presented_twice_ends_the_grant() {
    let desk = desk();
    let (world, ben_token, mailbox) = (&desk.world, desk.person("ben").token.as_str(), desk.mailbox.as_str());
    let (agent, _, first, client_id) = world.connected_app(ben_token, &["mail.triage"], metadata_on(mailbox));
    let refresh = |token: &str| {
        world.node.send(oauth_form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", token),
            ("client_id", &client_id),
        ]))
    };
    let rotated = refresh(&first);
    assert_eq!(rotated.status, 200, "{}", text(&rotated));
    let second = body(&rotated)["refresh_token"].as_str().unwrap().to_string();
    let access = body(&rotated)["access_token"].as_str().unwrap().to_string();
    assert_ne!(second, first, "every refresh answers a new refresh token");
    assert_eq!(mcp(world, &access, "tools/list", json!({})).status, 200);

    // The spent one again: refused, and everything of the grant stops.
    oauth_error(&refresh(&first), 400, "invalid_grant");
    oauth_error(&refresh(&second), 400, "invalid_grant");
    assert_eq!(mcp(world, &access, "tools/list", json!({})).status, 401);
    assert_eq!(body(&world.admin("GET", &format!("/api/agents/{agent}"), None))["state"], "revoked");
}

#[test]
fn unknown_codes_are_counted_and_paused_per_address() {
    let world = World::new();
    let guess = |index: usize| {
        let code = format!("mr_oac_guess{index}");
        world.node.send(oauth_form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", OAUTH_REDIRECT),
            ("client_id", "mrc_x"),
            ("code_verifier", OAUTH_VERIFIER),
        ]))
    };
    let limit = mailroom::authz::throttle::OAUTH_TOKEN_FAILURE_LIMIT as usize;
    for index in 0..limit {
        oauth_error(&guess(index), 400, "invalid_grant");
    }
    let paused = guess(limit);
    assert_eq!(paused.status, 429, "{}", text(&paused));
    assert!(paused.header("retry-after").is_some());
}

#[test]
fn an_access_token_works_at_its_resource_only_and_ends_with_its_agent() {
    let desk = desk();
    let (world, ben_token, mailbox) = (&desk.world, desk.person("ben").token.as_str(), desk.mailbox.as_str());
    let (_, access, _, _) = world.connected_app(ben_token, &["mail.triage"], metadata_on(mailbox));
    let rest = world.call("GET", &format!("/api/mailboxes/{mailbox}/messages"), Some(&access), None);
    assert_eq!(rest.status, 401, "{}", text(&rest));
    assert_eq!(body(&rest)["error"]["code"], "token_for_another_resource");
    assert_eq!(rest.header("www-authenticate"), Some("Bearer realm=\"mailroom\", error=\"invalid_token\""));
    // A token the node did not sign is nobody's.
    let forged = format!("{}x", &access[..access.len() - 1]);
    assert_eq!(mcp(world, &forged, "tools/list", json!({})).status, 401);
    // An expired one says so.
    world.node.platform.advance(mailroom::authz::credentials::OAUTH_ACCESS_TOKEN_LIFETIME_MS);
    let expired = mcp(world, &access, "tools/list", json!({}));
    assert_eq!(body(&expired)["error"]["code"], "access_token_expired");
}

#[test]
fn revoking_the_agent_disconnecting_the_app_or_revoking_a_token_ends_access_at_once() {
    let desk = desk();
    let (world, ben, ben_token, mailbox) =
        (&desk.world, desk.person("ben").id.as_str(), desk.person("ben").token.as_str(), desk.mailbox.as_str());
    // The administrator revokes the agent in the interface.
    let (agent, access, _, _) = world.connected_app(ben_token, &["mail.triage"], metadata_on(mailbox));
    assert_eq!(world.admin("POST", &format!("/api/agents/{agent}/revoke"), None).status, 200);
    assert_eq!(mcp(world, &access, "tools/list", json!({})).status, 401);

    // The person disconnects it from their connected apps.
    let (agent, access, _, _) = world.connected_app(ben_token, &["mail.triage"], metadata_on(mailbox));
    let apps = body(&world.call("GET", "/api/me/connected-apps", Some(ben_token), None));
    let app = apps["apps"].as_array().unwrap().iter().find(|app| app["agent"]["id"] == agent).unwrap().clone();
    assert_eq!(app["client_name"], "Test MCP client");
    assert_eq!(app["redirect_host"], "127.0.0.1:4567");
    assert!(app["last_used_at"].is_string(), "the exchange is its last use");
    let (_, someone) = world.person("someone@example.com");
    let not_theirs = world.call("POST", &format!("/api/me/connected-apps/{agent}/disconnect"), Some(&someone), None);
    assert_eq!(not_theirs.status, 404, "another person's app is no app of theirs");
    let disconnected = world.call("POST", &format!("/api/me/connected-apps/{agent}/disconnect"), Some(ben_token), None);
    assert_eq!(disconnected.status, 200, "{}", text(&disconnected));
    assert_eq!(body(&disconnected)["agent"]["state"], "revoked");
    assert_eq!(mcp(world, &access, "tools/list", json!({})).status, 401);
    let again = world.call("POST", &format!("/api/me/connected-apps/{agent}/disconnect"), Some(ben_token), None);
    assert_eq!(again.status, 409);

    // The client revokes its own token (RFC 7009).
    let (agent, access, refresh, client_id) = world.connected_app(ben_token, &["mail.triage"], metadata_on(mailbox));
    assert_eq!(world.node.send(oauth_revocation(&refresh, &client_id)).status, 200);
    assert_eq!(mcp(world, &access, "tools/list", json!({})).status, 401);
    let revoked = world.audit().into_iter().rev().find(|entry| entry["action"] == "oauth_revoke").unwrap();
    assert_eq!((revoked["actor"].as_str(), revoked["delegator"].as_str()), (Some(agent.as_str()), Some(ben)));
    let unknown = world.node.send(oauth_revocation("mr_ort_unknown", &client_id));
    assert_eq!(unknown.status, 200, "an unknown token is answered the same");
}

#[test]
fn a_client_revokes_only_its_own_tokens() {
    let desk = desk();
    let (world, ben_token, mailbox) = (&desk.world, desk.person("ben").token.as_str(), desk.mailbox.as_str());
    let (agent, access, refresh, client_id) = world.connected_app(ben_token, &["mail.triage"], metadata_on(mailbox));
    let another = world.node.send(
        request("POST", "/oauth/register")
            .json(json!({ "client_name": "Another client", "redirect_uris": ["https://another.example/cb"] })),
    );
    let another_client = body(&another)["client_id"].as_str().unwrap().to_string();
    assert_ne!(another_client, client_id);
    // Another client presenting this grant's tokens is refused, and the grant
    // goes on working: RFC 7009 §2.1 lets only the client a token was issued to
    // revoke it.
    for token in [&refresh, &access] {
        let refused = world.node.send(oauth_revocation(token, &another_client));
        oauth_error(&refused, 400, "invalid_grant");
        assert!(body(&refused)["error_description"].as_str().unwrap().contains("another client"), "{}", text(&refused));
        assert_eq!(mcp(world, &access, "tools/list", json!({})).status, 200, "the grant still works");
    }
    assert_eq!(body(&world.admin("GET", &format!("/api/agents/{agent}"), None))["state"], "active");
    // A request that names no client is refused as missing it, naming it.
    let mut anonymous = oauth_form(&[("token", &refresh)]);
    anonymous.path = "/oauth/revoke".into();
    let anonymous = world.node.send(anonymous);
    oauth_error(&anonymous, 400, "invalid_request");
    assert!(body(&anonymous)["error_description"].as_str().unwrap().contains("`client_id`"));
    assert_eq!(mcp(world, &access, "tools/list", json!({})).status, 200, "the grant still works");
    // Its own client ends it.
    assert_eq!(world.node.send(oauth_revocation(&access, &client_id)).status, 200);
    assert_eq!(mcp(world, &access, "tools/list", json!({})).status, 401);
}

#[test]
fn a_loopback_redirect_uri_matches_on_any_port_and_nothing_else_does() {
    let desk = desk();
    let (world, ben_token, mailbox) = (&desk.world, desk.person("ben").token.as_str(), desk.mailbox.as_str());
    let register = |redirect_uris: Value| {
        let registered = world.node.send(
            request("POST", "/oauth/register")
                .json(json!({ "client_name": "Native app", "redirect_uris": redirect_uris })),
        );
        assert_eq!(registered.status, 201, "{}", text(&registered));
        body(&registered)["client_id"].as_str().unwrap().to_string()
    };
    let consent = |client_id: &str, redirect_uri: &str| {
        let query = consent_query(client_id, redirect_uri, &[]);
        world.call("GET", &format!("/api/oauth/consent?{query}"), Some(ben_token), None)
    };
    // Registered with one port (or none), asked from another: RFC 8252 §7.3.
    let ipv4 = register(json!(["http://127.0.0.1:4567/callback"]));
    let ipv6 = register(json!(["http://[::1]/callback"]));
    for (client_id, asked) in [
        (&ipv4, "http://127.0.0.1:51234/callback"),
        (&ipv4, "http://127.0.0.1/callback"),
        (&ipv6, "http://[::1]:61000/callback"),
    ] {
        let answered = consent(client_id, asked);
        assert_eq!(answered.status, 200, "{asked}: {}", text(&answered));
        assert!(body(&answered)["deny_to"].as_str().unwrap().starts_with(asked), "sent back where it listens");
    }
    // Nothing but the port moves, and only for the two loopback literals.
    let localhost = register(json!(["http://localhost:4567/callback"]));
    for (client_id, asked) in [
        (&ipv4, "http://127.0.0.1:51234/elsewhere"),
        (&ipv4, "http://[::1]:4567/callback"),
        (&ipv4, "http://127.0.0.1:51234@evil.example/callback"),
        (&ipv6, "http://[::1]:0/callback"),
        (&localhost, "http://localhost:51234/callback"),
    ] {
        let refused = consent(client_id, asked);
        assert_eq!(refused.status, 400, "{asked}: {}", text(&refused));
        assert!(body(&refused)["error"]["message"].as_str().unwrap().contains("`redirect_uri`"), "{asked}");
    }
    assert_eq!(consent(&localhost, "http://localhost:4567/callback").status, 200, "localhost, exactly");

    // The code goes to the port asked for, and is exchanged for that URI alone.
    let asked = "http://127.0.0.1:51234/callback";
    let given = world.call(
        "POST",
        "/api/oauth/consent",
        Some(ben_token),
        Some(json!({ "client_id": ipv4, "redirect_uri": asked, "code_challenge": OAUTH_CHALLENGE,
                     "code_challenge_method": "S256", "capabilities": ["mail.triage"], "mailboxes": metadata_on(mailbox) })),
    );
    assert_eq!(given.status, 200, "{}", text(&given));
    let redirect_to = body(&given)["redirect_to"].as_str().unwrap().to_string();
    assert!(redirect_to.starts_with(&format!("{asked}?code=")), "{redirect_to}");
    let code = redirect_to.split(['?', '&']).find_map(|pair| pair.strip_prefix("code=")).unwrap().to_string();
    let exchange = |redirect_uri: &str| {
        world.node.send(oauth_form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", redirect_uri),
            ("client_id", &ipv4),
            ("code_verifier", OAUTH_VERIFIER),
        ]))
    };
    oauth_error(&exchange(OAUTH_REDIRECT), 400, "invalid_grant");
    assert_eq!(exchange(asked).status, 200);
}

#[test]
fn every_token_endpoint_error_is_in_oauths_form_the_throttles_included() {
    let world = World::new();
    let guess = |index: usize| {
        let code = format!("mr_oac_guess{index}");
        world.node.send(world.oauth_code_exchange("mrc_x", &code, OAUTH_VERIFIER))
    };
    let limit = mailroom::authz::throttle::OAUTH_TOKEN_FAILURE_LIMIT as usize;
    for index in 0..limit {
        oauth_error(&guess(index), 400, "invalid_grant");
    }
    let paused = guess(limit);
    oauth_error(&paused, 429, "too_many_token_attempts");
    assert!(paused.header("retry-after").is_some());
    // Refused before the endpoint's own code runs: a query it does not take,
    // a body too large, a request for another host.
    let mut with_query = world.oauth_code_exchange("mrc_x", "mr_oac_x", OAUTH_VERIFIER);
    with_query.query = "debug=1".into();
    oauth_error(&world.node.send(with_query), 400, "unknown_query_parameter");
    let too_large = request("POST", "/oauth/token")
        .raw_body(&vec![b'a'; mailroom::core::http::MAXIMUM_BODY_BYTES + 1])
        .header("content-type", "application/x-www-form-urlencoded");
    oauth_error(&world.node.send(too_large), 413, "body_too_large");
    let mut elsewhere = world.oauth_code_exchange("mrc_x", "mr_oac_x", OAUTH_VERIFIER);
    elsewhere.origin = "http://evil.example".into();
    oauth_error(&world.node.send(elsewhere), 403, "wrong_host");
    // The revocation and registration endpoints alike.
    let mut revoke_with_query = oauth_revocation("mr_ort_x", "mrc_x");
    revoke_with_query.query = "debug=1".into();
    oauth_error(&world.node.send(revoke_with_query), 400, "unknown_query_parameter");
    let register_with_query =
        request("POST", "/oauth/register?debug=1").json(json!({ "redirect_uris": [OAUTH_REDIRECT] }));
    oauth_error(&world.node.send(register_with_query), 400, "unknown_query_parameter");
}

#[test]
fn a_consented_app_is_pending_until_its_code_is_exchanged_and_removed_if_it_never_is() {
    let desk = desk();
    let (world, ben, ben_token, mailbox) =
        (&desk.world, desk.person("ben").id.as_str(), desk.person("ben").token.as_str(), desk.mailbox.as_str());
    let client_id = world.oauth_client();
    let grants = json!([{ "mailbox": mailbox, "relations": ["mailbox.metadata.read", "mailbox.content.read"] }]);
    let (agent, code) = world.oauth_consent(ben_token, &client_id, &["mail.read"], grants.clone());
    let shown = |agent: &str| world.admin("GET", &format!("/api/agents/{agent}"), None);
    assert_eq!(body(&shown(&agent))["state"], "awaiting_exchange");
    let apps = |token: &str| body(&world.call("GET", "/api/me/connected-apps", Some(token), None))["apps"].clone();
    assert_eq!(apps(ben_token), json!([]), "not a working connection until its code is exchanged");

    // Meanwhile it holds nothing and can do nothing: an administrator handing
    // it a credential gets it nowhere, no conversation is assigned to it, and
    // no agent message is addressed to it.
    let pairing = world.admin("POST", &format!("/api/agents/{agent}/pairing-code"), None);
    assert_eq!(pairing.status, 201, "{}", text(&pairing));
    let paired = world
        .node
        .send(request("POST", "/api/agents/pair").json(json!({ "code": body(&pairing)["code"].as_str().unwrap() })));
    let credential = body(&paired)["credential"].as_str().unwrap().to_string();
    let refused = world.call("GET", &format!("/api/mailboxes/{mailbox}/messages"), Some(&credential), None);
    assert_eq!(refused.status, 401, "{}", text(&refused));
    let holds =
        world.node.database.count(&format!("SELECT COUNT(*) FROM relation_tuples t WHERE t.subject = '{agent}'"));
    assert_eq!(holds, 2, "its grants exist, to be removed or to start holding once it is exchanged");
    world.grant(&world.admin_id, "send.propose", mailbox);
    world.grant(&agent, "send.propose", mailbox);
    let thread = {
        world.deliver("plain", SUPPORT);
        world.grant(&world.admin_id, "mailbox.metadata.read", mailbox);
        let threads = body(&world.admin("GET", &format!("/api/mailboxes/{mailbox}/threads"), None));
        threads["threads"][0]["id"].as_str().unwrap().to_string()
    };
    let assigned =
        world.admin("PATCH", &format!("/api/mailboxes/{mailbox}/threads/{thread}"), Some(json!({ "assignee": agent })));
    assert_eq!(assigned.status, 400, "it works no mailbox while pending: {}", text(&assigned));
    let (_, sender) = world.messenger(ben);
    let message = world.call(
        "POST",
        "/api/agent-messages",
        Some(&sender),
        Some(json!({ "recipient": agent, "kind": "request", "content": "hello", "idempotency_key": "k-1" })),
    );
    assert_eq!(message.status, 404, "{}", text(&message));
    world.node.maintain();
    assert_eq!(body(&shown(&agent))["state"], "awaiting_exchange", "its code is still good");

    // Exchanged: active, listed, and its credential works now too.
    let tokens = world.node.send(world.oauth_code_exchange(&client_id, &code, OAUTH_VERIFIER));
    assert_eq!(tokens.status, 200, "{}", text(&tokens));
    assert_eq!(body(&shown(&agent))["state"], "active");
    assert_eq!(apps(ben_token)[0]["agent"]["id"], agent);

    // Another consent whose code expires unexchanged: removed by the upkeep,
    // whole, its messaging policy and pairing code with it.
    let (abandoned, _) = world.oauth_consent(ben_token, &client_id, &["mail.read"], grants);
    let policy = world.call(
        "PATCH",
        &format!("/api/agents/{abandoned}/messaging"),
        Some(ben_token),
        Some(json!({ "allowed_peers": [ben] })),
    );
    assert_eq!(policy.status, 200, "{}", text(&policy));
    assert_eq!(world.admin("POST", &format!("/api/agents/{abandoned}/pairing-code"), None).status, 201);
    world.node.platform.advance(mailroom::oauth::CODE_LIFETIME_MS);
    world.node.maintain();
    assert_eq!(shown(&abandoned).status, 404, "{}", text(&shown(&abandoned)));
    for table in ["agent_routes", "pairing_codes", "agent_messaging_policies", "oauth_codes", "oauth_connections"] {
        let left = world.node.database.count(&format!("SELECT COUNT(*) FROM {table} WHERE agent_id = '{abandoned}'"));
        assert_eq!(left, 0, "{table}");
    }
    let held =
        world.node.database.count(&format!("SELECT COUNT(*) FROM relation_tuples WHERE subject = '{abandoned}'"));
    assert_eq!(held, 0);
    assert_eq!(body(&shown(&agent))["state"], "active", "the exchanged one stays");
    assert_eq!(world.verify()["intact"], true, "the consent that minted it stays in a chain that verifies");
}

#[test]
fn the_node_still_checks_what_the_sponsor_holds_on_every_call() {
    let desk = desk();
    let (world, ben, ben_token, mailbox) =
        (&desk.world, desk.person("ben").id.as_str(), desk.person("ben").token.as_str(), desk.mailbox.as_str());
    let (_, access, _, _) = world.connected_app(ben_token, &["mail.triage"], metadata_on(mailbox));
    let list = json!({ "name": "list_messages", "arguments": { "mailbox_id": mailbox } });
    assert_eq!(body(&mcp(world, &access, "tools/call", list.clone()))["result"]["isError"], false);
    let revoked = world.admin(
        "POST",
        "/api/relations/revoke",
        Some(json!({ "subject": ben, "relation": "mailbox.metadata.read", "object": mailbox })),
    );
    assert_eq!(revoked.status, 200, "{}", text(&revoked));
    let after = body(&mcp(world, &access, "tools/call", list));
    assert_eq!(after["result"]["isError"], true, "the sponsor lost it, so the app did: {after}");
}

#[test]
fn a_client_named_by_its_metadata_document_is_fetched_for_the_person_and_connects() {
    let desk = desk();
    let (world, ben_token, mailbox) = (&desk.world, desk.person("ben").token.as_str(), desk.mailbox.as_str());
    let url = "https://app.example/oauth/client.json";
    let document = json!({ "client_id": url, "client_name": "Document client", "redirect_uris": [OAUTH_REDIRECT] });
    world.node.webhooks.documents.borrow_mut().push((url.into(), 200, document.to_string().into_bytes()));
    let query = consent_query(url, OAUTH_REDIRECT, &[]);
    let consent = world.call("GET", &format!("/api/oauth/consent?{query}"), Some(ben_token), None);
    assert_eq!(consent.status, 200, "{}", text(&consent));
    assert_eq!(body(&consent)["client"]["registered_by"], "metadata_document");
    assert_eq!(body(&consent)["client"]["name"], "Document client");
    let (agent, code) = world.oauth_consent(ben_token, url, &["mail.triage"], metadata_on(mailbox));
    let tokens = world.node.send(world.oauth_code_exchange(url, &code, OAUTH_VERIFIER));
    assert_eq!(tokens.status, 200, "{}", text(&tokens));
    let access = body(&tokens)["access_token"].as_str().unwrap().to_string();
    assert_eq!(mcp(world, &access, "tools/list", json!({})).status, 200);
    let apps = body(&world.call("GET", "/api/me/connected-apps", Some(ben_token), None));
    assert_eq!(apps["apps"][0]["agent"]["id"], agent);
    assert_eq!(apps["apps"][0]["client_id"], url);

    // Nothing is fetched from an address that could point inward, and a
    // document that is not there is refused on the page, naming the address.
    let fetched_before = world.node.webhooks.fetched.borrow().len();
    for inward in ["https://127.0.0.1/client.json", "https://localhost/client.json", "https://mailroom.test/c.json"] {
        let query = consent_query(inward, OAUTH_REDIRECT, &[]);
        let refused = world.call("GET", &format!("/api/oauth/consent?{query}"), Some(ben_token), None);
        assert_eq!(body(&refused)["error"]["code"], "client_metadata_unusable", "{inward}");
    }
    assert_eq!(world.node.webhooks.fetched.borrow().len(), fetched_before, "nothing inward was fetched");
    let missing = consent_query("https://app.example/missing.json", OAUTH_REDIRECT, &[]);
    let refused = world.call("GET", &format!("/api/oauth/consent?{missing}"), Some(ben_token), None);
    assert_eq!(refused.status, 404, "{}", text(&refused));
    // A stranger cannot make the node fetch anything.
    let stranger = world.call("GET", &format!("/api/oauth/consent?{query}"), None, None);
    assert_eq!(stranger.status, 401);
    assert_eq!(world.node.webhooks.fetched.borrow().len(), fetched_before + 1);
}

#[test]
fn the_upkeep_forgets_codes_and_refresh_tokens_that_can_prove_nothing_any_more() {
    let desk = desk();
    let (world, ben_token, mailbox) = (&desk.world, desk.person("ben").token.as_str(), desk.mailbox.as_str());
    let (agent, _, _, _) = world.connected_app(ben_token, &["mail.triage"], metadata_on(mailbox));
    let (_, _, refresh, client_id) = world.connected_app(ben_token, &["mail.triage"], metadata_on(mailbox));
    let count = |table: &str| world.node.database.count(&format!("SELECT COUNT(*) FROM {table}"));
    assert_eq!((count("oauth_codes"), count("oauth_refresh_tokens")), (2, 2));
    assert_eq!(world.admin("POST", &format!("/api/agents/{agent}/revoke"), None).status, 200);
    world.node.platform.advance(mailroom::oauth::CODE_LIFETIME_MS);
    world.node.maintain();
    assert_eq!(count("oauth_codes"), 0, "codes past their two minutes");
    assert_eq!(count("oauth_refresh_tokens"), 1, "the revoked agent's refresh token, not the live one");
    let refreshed = world.node.send(oauth_form(&[
        ("grant_type", "refresh_token"),
        ("refresh_token", &refresh),
        ("client_id", &client_id),
    ]));
    assert_eq!(refreshed.status, 200, "{}", text(&refreshed));
    world.node.platform.advance(mailroom::oauth::REFRESH_TOKEN_LIFETIME_MS);
    world.node.maintain();
    assert_eq!(count("oauth_refresh_tokens"), 0, "past their 30 days, spent or not");
}

#[test]
fn removing_an_unexchanged_agent_clears_every_table_that_refers_to_agents() {
    // The upkeep's one batch deletes an agent row only after every row naming it:
    // a table added later that refers to agents, and is missed here, would fail
    // the whole upkeep on the foreign key. So the migrations are read for them.
    let mut referring = Vec::new();
    for migration in crate::support::d1_migrations() {
        let sql = std::fs::read_to_string(migration).unwrap();
        for table in sql.split("CREATE TABLE ").skip(1) {
            let name = table.split([' ', '(']).next().unwrap().trim().to_string();
            let body = table.split(");").next().unwrap_or_default();
            if body.contains("REFERENCES agents") {
                referring.push(name);
            }
        }
    }
    assert!(referring.len() >= 6, "{referring:?}");
    let removing: Vec<String> =
        mailroom::oauth::forget_ended(0).into_iter().map(|statement| statement.sql.into_owned()).collect();
    for table in referring {
        let cleared = removing.iter().any(|sql| {
            sql.starts_with(&format!("DELETE FROM {table} WHERE agent_id IN "))
                && sql.contains("connection_pending_until")
        });
        assert!(
            cleared,
            "{table} refers to agents, and removing an unexchanged agent does not clear it: {removing:#?}"
        );
    }
}

#[test]
fn a_native_app_registers_its_own_scheme_among_several_addresses_and_is_sent_back_through_it() {
    let desk = desk();
    let (world, ben_token, mailbox) = (&desk.world, desk.person("ben").token.as_str(), desk.mailbox.as_str());
    // As Cursor registers (RFC 8252 §7.1): its own scheme, beside a loopback
    // listener and a web address, in one request, taken whole.
    let cursor = "cursor://anysphere.cursor-retrieval/oauth/user-mailroom/callback";
    let registered = world.node.send(request("POST", "/oauth/register").json(json!({
        "client_name": "Cursor",
        "redirect_uris": [cursor, "http://127.0.0.1:33418/callback", "https://cursor.example/oauth/callback"],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    })));
    assert_eq!(registered.status, 201, "{}", text(&registered));
    let client_id = body(&registered)["client_id"].as_str().unwrap().to_string();

    // The consent names the app's link, never a site's host.
    let query = consent_query(&client_id, cursor, &[]);
    let shown = world.call("GET", &format!("/api/oauth/consent?{query}"), Some(ben_token), None);
    assert_eq!(shown.status, 200, "{}", text(&shown));
    assert_eq!(body(&shown)["client"]["redirect_host"], "cursor://anysphere.cursor-retrieval");
    assert_eq!(body(&shown)["client"]["on_this_computer"], true, "an app on this computer, not a site");
    let on_a_site = world.call(
        "GET",
        &format!("/api/oauth/consent?{}", consent_query(&client_id, "https://cursor.example/oauth/callback", &[])),
        Some(ben_token),
        None,
    );
    assert_eq!(body(&on_a_site)["client"]["on_this_computer"], false);

    // Allowed, the code goes to the app's link, and is exchanged for that URI alone.
    let given = world.call(
        "POST",
        "/api/oauth/consent",
        Some(ben_token),
        Some(json!({ "client_id": client_id, "redirect_uri": cursor, "code_challenge": OAUTH_CHALLENGE,
                     "code_challenge_method": "S256", "capabilities": ["mail.triage"], "mailboxes": metadata_on(mailbox) })),
    );
    assert_eq!(given.status, 200, "{}", text(&given));
    let redirect_to = body(&given)["redirect_to"].as_str().unwrap().to_string();
    assert!(redirect_to.starts_with(&format!("{cursor}?code=")), "{redirect_to}");
    let code = redirect_to.split(['?', '&']).find_map(|pair| pair.strip_prefix("code=")).unwrap().to_string();
    let exchanged = world.node.send(oauth_form(&[
        ("grant_type", "authorization_code"),
        ("code", &code),
        ("redirect_uri", cursor),
        ("client_id", &client_id),
        ("code_verifier", OAUTH_VERIFIER),
    ]));
    assert_eq!(exchanged.status, 200, "{}", text(&exchanged));

    // A scheme the browser would act on itself is refused, naming it, and nothing is registered.
    for refused in ["javascript:alert(document.cookie)", "data:text/html,hi", "file:///etc/passwd"] {
        let answered = world.node.send(
            request("POST", "/oauth/register")
                .json(json!({ "client_name": "Evil", "redirect_uris": [cursor, refused] })),
        );
        oauth_error(&answered, 400, "invalid_redirect_uri");
        assert!(text(&answered).contains(refused), "{}", text(&answered));
    }
}

/// An app connected with OAuth holds what its person allowed at the consent:
/// a tool outside that is refused with the way to more that exists for it
/// (connecting it again), not an administrator's minting, which an app's
/// person cannot ask for; on every surface the ceiling is met.
#[test]
fn a_connected_app_refused_a_tool_outside_its_grant_is_told_to_connect_again() {
    let desk = desk();
    let (world, ben_token, mailbox) = (&desk.world, desk.person("ben").token.as_str(), desk.mailbox.as_str());
    let (_, access, _, _) = world.connected_app(ben_token, &["mail.triage"], metadata_on(mailbox));
    let call = json!({ "name": "get_message_body", "arguments": { "mailbox_id": mailbox, "receipt_id": "rcp_0" } });
    let answer = body(&mcp(world, &access, "tools/call", call));
    let refusal = answer.to_string();
    assert!(refusal.contains("outside_ceiling"), "{answer}");
    assert!(refusal.contains("This app was not given get_message_body"), "{answer}");
    assert!(refusal.contains("Connect the app again"), "{answer}");
    assert!(!refusal.contains("mint an agent"), "an app's person cannot mint: {answer}");
}
