//! Setup, sign-in, sessions and their ends.

use mailroom::authz::credentials::{ACCESS_COOKIE, ACCESS_TOKEN_LIFETIME_MS, SESSION_LIFETIME_MS};
use mailroom::authz::throttle::{
    ACCOUNT_FAILURE_LIMIT, ADDRESS_FAILURE_LIMIT, FAILURE_WINDOW_MS, SESSION_FAILURE_LIMIT,
};
use mailroom::testing::{RequestExt, TEST_ORIGIN, TEST_SETUP_TOKEN, TestNode, request};
use serde_json::json;

use crate::support::*;

fn setup_body(token: &str, email: &str) -> serde_json::Value {
    json!({ "setup_token": token, "email": email, "name": "First", "password": ADMIN_PASSWORD })
}

#[test]
fn setup_creates_the_first_administrator_and_then_refuses_for_ever() {
    let node = TestNode::new();
    let wrong = node.send(request("POST", "/api/setup").json(setup_body("guess", "ada@example.com")));
    assert_refused(&wrong, 403, "wrong_setup_token");

    let first = node.send(request("POST", "/api/setup").json(setup_body(TEST_SETUP_TOKEN, "Ada@Example.com")));
    assert_eq!(first.status, 201, "{}", text(&first));
    assert_eq!(body(&first)["administrator"]["email"], "ada@example.com");

    let (token, _) = sign_in(&node, "ada@example.com", ADMIN_PASSWORD);
    let me = node.send(request("GET", "/api/me").bearer(&token));
    assert_eq!(body(&me)["is_admin"], true);

    let again = node.send(request("POST", "/api/setup").json(setup_body(TEST_SETUP_TOKEN, "eve@example.com")));
    assert_refused(&again, 409, "already_set_up");
    assert_eq!(node.database.count("SELECT COUNT(*) FROM people"), 1);
}

#[test]
fn setup_refuses_when_no_token_is_configured() {
    let mut node = TestNode::new();
    node.config.setup_token = None;
    let response = node.send(request("POST", "/api/setup").json(setup_body("", "ada@example.com")));
    assert_refused(&response, 403, "setup_not_configured");
}

#[test]
fn setup_validates_the_administrator() {
    let node = TestNode::new();
    let mut weak = setup_body(TEST_SETUP_TOKEN, "ada@example.com");
    weak["password"] = json!("short");
    assert_refused(&node.send(request("POST", "/api/setup").json(weak)), 400, "weak_password");
    let bad_email = setup_body(TEST_SETUP_TOKEN, "not an email");
    assert_refused(&node.send(request("POST", "/api/setup").json(bad_email)), 400, "invalid_email");
}

#[test]
fn wrong_password_and_unknown_email_get_the_same_answer() {
    let world = World::new();
    let wrong =
        world.call("POST", "/api/sessions", None, Some(json!({ "email": ADMIN_EMAIL, "password": "nope nope nope" })));
    let unknown = world.call(
        "POST",
        "/api/sessions",
        None,
        Some(json!({ "email": "nobody@example.com", "password": "nope nope nope" })),
    );
    assert_refused(&wrong, 401, "wrong_email_or_password");
    assert_eq!(wrong.body, unknown.body);
}

#[test]
fn repeated_failures_pause_sign_in_for_the_account_until_the_window_passes() {
    let world = World::new();
    let attempt = |password: &str| {
        world.call("POST", "/api/sessions", None, Some(json!({ "email": ADMIN_EMAIL, "password": password })))
    };
    for _ in 0..ACCOUNT_FAILURE_LIMIT {
        assert_refused(&attempt("wrong password!"), 401, "wrong_email_or_password");
    }
    let paused = attempt(ADMIN_PASSWORD);
    assert_refused(&paused, 429, "too_many_sign_in_attempts");
    assert!(paused.header("retry-after").is_some_and(|seconds| seconds.parse::<u32>().unwrap() > 0));
    world.node.platform.advance(FAILURE_WINDOW_MS);
    assert_eq!(attempt(ADMIN_PASSWORD).status, 201);
}

#[test]
fn repeated_failures_from_one_address_pause_it_across_accounts() {
    let world = World::new();
    for index in 0..ADDRESS_FAILURE_LIMIT {
        let email = format!("probe{index}@example.com");
        let response =
            world.call("POST", "/api/sessions", None, Some(json!({ "email": email, "password": "guess guess guess" })));
        assert_refused(&response, 401, "wrong_email_or_password");
    }
    let paused =
        world.call("POST", "/api/sessions", None, Some(json!({ "email": ADMIN_EMAIL, "password": ADMIN_PASSWORD })));
    assert_refused(&paused, 429, "too_many_sign_in_attempts");
    let mut elsewhere =
        request("POST", "/api/sessions").json(json!({ "email": ADMIN_EMAIL, "password": ADMIN_PASSWORD }));
    elsewhere.client_address = Some("198.51.100.7".into());
    assert_eq!(world.node.send(elsewhere).status, 201);
}

#[test]
fn an_access_token_lasts_fifteen_minutes_and_a_refresh_rotates_it() {
    let world = World::new();
    let (access, refresh) = sign_in(&world.node, ADMIN_EMAIL, ADMIN_PASSWORD);
    world.node.platform.advance(ACCESS_TOKEN_LIFETIME_MS);
    assert_refused(&world.call("GET", "/api/me", Some(&access), None), 401, "access_token_expired");

    let refreshed = world.call("POST", "/api/sessions/refresh", None, Some(json!({ "refresh_token": refresh })));
    assert_eq!(refreshed.status, 200, "{}", text(&refreshed));
    let new_access = body(&refreshed)["access_token"].as_str().unwrap().to_string();
    let new_refresh = body(&refreshed)["refresh_token"].as_str().unwrap().to_string();
    assert_ne!(new_refresh, refresh);
    assert_eq!(world.call("GET", "/api/me", Some(&new_access), None).status, 200);

    // Presenting the retired token at once is a race between two tabs, not a theft.
    let raced = world.call("POST", "/api/sessions/refresh", None, Some(json!({ "refresh_token": refresh })));
    assert_refused(&raced, 409, "refresh_raced");
    assert_eq!(world.call("GET", "/api/me", Some(&new_access), None).status, 200);

    // Presenting it later means a copy leaked: the whole session ends.
    world.node.platform.advance(2 * 60 * 1000);
    let reused = world.call("POST", "/api/sessions/refresh", None, Some(json!({ "refresh_token": refresh })));
    assert_refused(&reused, 401, "refresh_token_reused");
    assert_refused(&world.call("GET", "/api/me", Some(&new_access), None), 401, "session_ended");
    let after = world.call("POST", "/api/sessions/refresh", None, Some(json!({ "refresh_token": new_refresh })));
    assert_refused(&after, 401, "refresh_token_invalid");
}

#[test]
fn signing_out_stops_the_access_token_on_its_next_use() {
    let world = World::new();
    let (access, refresh) = sign_in(&world.node, ADMIN_EMAIL, ADMIN_PASSWORD);
    let signed_out = world.call("DELETE", "/api/sessions/current", Some(&access), None);
    assert_eq!(signed_out.status, 200, "{}", text(&signed_out));
    assert_refused(&world.call("GET", "/api/me", Some(&access), None), 401, "session_ended");
    let refreshed = world.call("POST", "/api/sessions/refresh", None, Some(json!({ "refresh_token": refresh })));
    assert_refused(&refreshed, 401, "refresh_token_invalid");
    // The administrator's other session is untouched.
    assert_eq!(world.admin("GET", "/api/me", None).status, 200);
}

#[test]
fn a_token_signed_with_another_key_is_refused() {
    let world = World::new();
    let mut other = TestNode::new();
    other.config.session_key = b"someone else's key".to_vec();
    let forged = mailroom::authz::credentials::sign_access_token(
        &mailroom::authz::credentials::AccessClaims {
            person_id: world.admin_id.clone(),
            session_id: "ses_00000000000000000000000000".into(),
            expires_at_ms: i64::MAX,
        },
        &other.config.session_key,
    );
    assert_refused(&world.call("GET", "/api/me", Some(&forged), None), 401, "invalid_credential");
    assert_refused(&world.call("GET", "/api/me", Some("not-a-token"), None), 401, "invalid_credential");
    assert_refused(&world.call("GET", "/api/me", None, None), 401, "not_signed_in");
}

#[test]
fn cookie_sessions_are_host_only_and_need_the_node_origin_to_change_anything() {
    let world = World::new();
    let signed_in = world.node.send(
        request("POST", "/api/sessions")
            .header("origin", TEST_ORIGIN)
            .json(json!({ "email": ADMIN_EMAIL, "password": ADMIN_PASSWORD, "transport": "cookie" })),
    );
    assert_eq!(signed_in.status, 201, "{}", text(&signed_in));
    assert!(body(&signed_in)["session"].get("access_token").is_none(), "cookie sessions keep tokens out of the body");
    let cookies: Vec<&str> =
        signed_in.headers.iter().filter(|(name, _)| name == "set-cookie").map(|(_, value)| value.as_str()).collect();
    assert_eq!(cookies.len(), 2);
    for cookie in &cookies {
        assert!(cookie.starts_with("__Host-mailroom-"), "{cookie}");
        for attribute in ["Path=/", "Secure", "HttpOnly", "SameSite=Strict"] {
            assert!(cookie.contains(attribute), "{cookie} lacks {attribute}");
        }
    }
    let jar: String = cookies.iter().map(|cookie| cookie.split(';').next().unwrap()).collect::<Vec<_>>().join("; ");

    let read = world.node.send(request("GET", "/api/me").header("cookie", &jar));
    assert_eq!(read.status, 200, "a safe request needs no Origin");
    let access = cookies.iter().find(|cookie| cookie.starts_with(ACCESS_COOKIE)).unwrap();
    assert!(
        access.contains(&format!("Max-Age={}", SESSION_LIFETIME_MS / 1000)),
        "the access cookie outlives its token, so an expired token is presented and named: {access}"
    );

    let create = |origin: Option<&str>| {
        let mut built =
            request("POST", "/api/teams").header("cookie", &jar).json(json!({ "name": format!("T{origin:?}") }));
        if let Some(origin) = origin {
            built = built.header("origin", origin);
        }
        world.node.send(built)
    };
    assert_refused(&create(None), 403, "cross_origin_refused");
    assert_refused(&create(Some("https://evil.example")), 403, "cross_origin_refused");
    assert_eq!(create(Some(TEST_ORIGIN)).status, 201);

    let refreshed =
        world.node.send(request("POST", "/api/sessions/refresh").header("cookie", &jar).header("origin", TEST_ORIGIN));
    assert_eq!(refreshed.status, 200, "{}", text(&refreshed));
    assert_eq!(refreshed.headers.iter().filter(|(name, _)| name == "set-cookie").count(), 2);

    let signed_out = world
        .node
        .send(request("DELETE", "/api/sessions/current").header("cookie", &jar).header("origin", TEST_ORIGIN));
    assert_eq!(signed_out.status, 200, "{}", text(&signed_out));
    let cleared = signed_out.headers.iter().filter(|(name, value)| name == "set-cookie" && value.contains("Max-Age=0"));
    assert_eq!(cleared.count(), 2, "signing out clears both cookies");
    assert_refused(&world.node.send(request("GET", "/api/me").header("cookie", &jar)), 401, "session_ended");
}

#[test]
fn changing_a_password_needs_the_current_one_and_ends_other_sessions() {
    let world = World::new();
    let (other_session, _) = sign_in(&world.node, ADMIN_EMAIL, ADMIN_PASSWORD);
    let wrong = world.admin(
        "POST",
        "/api/me/password",
        Some(json!({ "current_password": "not the password", "new_password": "another long password" })),
    );
    assert_refused(&wrong, 403, "wrong_current_password");
    let changed = world.admin(
        "POST",
        "/api/me/password",
        Some(json!({ "current_password": ADMIN_PASSWORD, "new_password": "another long password" })),
    );
    assert_eq!(changed.status, 200, "{}", text(&changed));
    assert_eq!(body(&changed)["other_sessions_revoked"], 1);
    assert_refused(&world.call("GET", "/api/me", Some(&other_session), None), 401, "session_ended");
    assert_eq!(world.admin("GET", "/api/me", None).status, 200, "the session that changed it stays");
    sign_in(&world.node, ADMIN_EMAIL, "another long password");
}

#[test]
fn a_stolen_access_token_cannot_guess_the_password_without_pause() {
    let world = World::new();
    let change = |token: &str, current: &str| {
        world.call(
            "POST",
            "/api/me/password",
            Some(token),
            Some(json!({ "current_password": current, "new_password": "another long password" })),
        )
    };
    for _ in 0..SESSION_FAILURE_LIMIT {
        assert_refused(&change(&world.admin_token, "a guess at it"), 403, "wrong_current_password");
    }
    let paused = change(&world.admin_token, ADMIN_PASSWORD);
    assert_refused(&paused, 429, "too_many_sign_in_attempts");
    assert!(paused.header("retry-after").is_some());
    assert!(paused.round_trips <= 2);
    // The guesses were made through that session: its owner is not locked out.
    let (token, _) = sign_in(&world.node, ADMIN_EMAIL, ADMIN_PASSWORD);
    let changed = change(&token, ADMIN_PASSWORD);
    assert_eq!(changed.status, 200, "{}", text(&changed));
    world.node.platform.advance(FAILURE_WINDOW_MS);
}

#[test]
fn a_deployment_hashes_with_the_production_iteration_count() {
    let config = mailroom::core::node::Config::new(b"key".to_vec(), b"audit key".to_vec(), None);
    assert_eq!(config.password_iterations, 100_000);
}

#[test]
fn raising_the_iteration_count_keeps_existing_passwords_working() {
    let mut world = World::new();
    let (ben, _) = world.person("ben@example.com");
    world.node.config.password_iterations = 2_000;
    sign_in(&world.node, "ben@example.com", PASSWORD);
    let (token, _) = sign_in(&world.node, "ben@example.com", PASSWORD);
    let changed = world.call(
        "POST",
        "/api/me/password",
        Some(&token),
        Some(json!({ "current_password": PASSWORD, "new_password": "a newer long password" })),
    );
    assert_eq!(changed.status, 200, "{}", text(&changed));
    let stored = world
        .node
        .database
        .count(&format!("SELECT CAST(substr(password_hash, 15, 4) AS INTEGER) FROM people WHERE id = '{ben}'"));
    assert_eq!(stored, 2000, "a new hash takes the new count");
}

#[test]
fn an_expired_cookie_session_is_named_expired_so_the_browser_refreshes() {
    let world = World::new();
    let signed_in = world.node.send(
        request("POST", "/api/sessions")
            .header("origin", TEST_ORIGIN)
            .json(json!({ "email": ADMIN_EMAIL, "password": ADMIN_PASSWORD, "transport": "cookie" })),
    );
    let jar: String = signed_in
        .headers
        .iter()
        .filter(|(name, _)| name == "set-cookie")
        .map(|(_, value)| value.split(';').next().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("; ");
    world.node.platform.advance(ACCESS_TOKEN_LIFETIME_MS);
    let expired = world.node.send(request("GET", "/api/me").header("cookie", &jar));
    assert_refused(&expired, 401, "access_token_expired");
    let refreshed =
        world.node.send(request("POST", "/api/sessions/refresh").header("cookie", &jar).header("origin", TEST_ORIGIN));
    assert_eq!(refreshed.status, 200, "{}", text(&refreshed));
}
