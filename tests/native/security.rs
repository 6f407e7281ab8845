//! The attacks a security review tried, each now failing to do harm: a refresh
//! token stolen and rotated twice, a lockout aimed at a person from elsewhere,
//! rate-limit keys a caller chooses, and one person on both sides of dual
//! control through an agent they minted. (Limits under parallel attempts are
//! tested on workerd, in tests/e2e/security.test.mjs.)

use mailroom::authz::throttle::{ACCOUNT_CEILING, ACCOUNT_FAILURE_LIMIT, ACCOUNT_SPACING_MS, FAILURE_WINDOW_MS};
use mailroom::testing::{RequestExt, request};
use serde_json::json;

use crate::support::*;

fn refresh(world: &World, token: &str) -> mailroom::core::http::Response {
    world.call("POST", "/api/sessions/refresh", None, Some(json!({ "refresh_token": token })))
}

#[test]
fn a_stolen_refresh_token_rotated_twice_still_ends_the_session_when_the_victim_refreshes() {
    let world = World::new();
    let (_, victims) = sign_in(&world.node, ADMIN_EMAIL, ADMIN_PASSWORD);
    // The thief rotates the stolen copy twice, far enough apart to be no race.
    world.node.platform.advance(2 * 60 * 1000);
    let first = body(&refresh(&world, &victims))["refresh_token"].as_str().unwrap().to_string();
    world.node.platform.advance(2 * 60 * 1000);
    let second = refresh(&world, &first);
    assert_eq!(second.status, 200);
    let thiefs = body(&second)["refresh_token"].as_str().unwrap().to_string();
    let thiefs_access = body(&second)["access_token"].as_str().unwrap().to_string();
    // The victim presents the token the family spent first: the whole session ends.
    world.node.platform.advance(2 * 60 * 1000);
    assert_refused(&refresh(&world, &victims), 401, "refresh_token_reused");
    assert_refused(&world.call("GET", "/api/me", Some(&thiefs_access), None), 401, "session_ended");
    assert_refused(&refresh(&world, &thiefs), 401, "refresh_token_invalid");
}

fn sign_in_from(world: &World, email: &str, password: &str, address: &str) -> mailroom::core::http::Response {
    let mut attempt = request("POST", "/api/sessions").json(json!({ "email": email, "password": password }));
    attempt.client_address = Some(address.to_string());
    world.node.send(attempt)
}

#[test]
fn guesses_from_elsewhere_never_lock_a_person_out_of_their_own_address() {
    let world = World::new();
    let (ben, _) = world.person("ben@example.com");
    // Ben signed in (from the test kit's address) when his account was made.
    let home = "192.0.2.1";
    for attempt in 0..(ACCOUNT_CEILING + 20) {
        let address = format!("203.0.113.{}", attempt % 200);
        let response = sign_in_from(&world, "ben@example.com", "a guess at his password", &address);
        assert!([401, 429].contains(&response.status), "{}", text(&response));
    }
    let from_home = sign_in_from(&world, "ben@example.com", PASSWORD, home);
    assert_eq!(from_home.status, 201, "his own address is not slowed: {}", text(&from_home));

    // A new address of his is slowed, never locked: beyond the ceiling, one
    // attempt is admitted per spacing.
    let from_new = sign_in_from(&world, "ben@example.com", PASSWORD, "198.51.100.99");
    assert_refused(&from_new, 429, "too_many_sign_in_attempts");
    let wait: i64 = from_new.header("retry-after").unwrap().parse().unwrap();
    assert!(wait * 1000 <= ACCOUNT_SPACING_MS, "only slowed: {wait} s");
    assert!(text(&from_new).contains("reset_password"), "the fix names the way an administrator helps");
    world.node.platform.advance(ACCOUNT_SPACING_MS);
    assert_eq!(sign_in_from(&world, "ben@example.com", PASSWORD, "198.51.100.99").status, 201);

    // Guessing from one address locks out only that address, for that account.
    for _ in 0..ACCOUNT_FAILURE_LIMIT {
        sign_in_from(&world, "ben@example.com", "another guess at it", "203.0.113.250");
    }
    assert_refused(
        &sign_in_from(&world, "ben@example.com", PASSWORD, "203.0.113.250"),
        429,
        "too_many_sign_in_attempts",
    );
    assert_eq!(sign_in_from(&world, "ben@example.com", PASSWORD, home).status, 201);
    let _ = ben;
}

#[test]
fn an_administrator_sets_a_new_password_ending_every_session_and_forgetting_the_guesses() {
    let world = World::new();
    let (ben, ben_token) = world.person("ben@example.com");
    for attempt in 0..(ACCOUNT_CEILING + 5) {
        sign_in_from(&world, "ben@example.com", "guess", &format!("203.0.113.{}", attempt % 200));
    }
    let reset = world.admin(
        "POST",
        &format!("/api/people/{ben}/password"),
        Some(json!({ "new_password": "a new password from the administrator" })),
    );
    assert_eq!(reset.status, 200, "{}", text(&reset));
    assert_eq!(body(&reset)["sessions_ended"], 1);
    assert_refused(&world.call("GET", "/api/me", Some(&ben_token), None), 401, "session_ended");
    let entry = world.last_audit_entry();
    assert_eq!((entry["action"].as_str(), entry["object"].as_str()), (Some("reset_password"), Some(ben.as_str())));
    // The ceiling's count is forgotten: a new address is not slowed.
    let signed_in = sign_in_from(&world, "ben@example.com", "a new password from the administrator", "198.51.100.5");
    assert_eq!(signed_in.status, 201, "{}", text(&signed_in));
    let (_, ben_token) = world.person("carol@example.com");
    assert_refused(
        &world.call(
            "POST",
            &format!("/api/people/{ben}/password"),
            Some(&ben_token),
            Some(json!({ "new_password": "not for you to set" })),
        ),
        403,
        "missing_relation",
    );
}

#[test]
fn rate_limit_keys_are_bounded_and_expire() {
    let world = World::new();
    let huge = format!("{}@example.com", "x".repeat(900_000));
    let response = world.call("POST", "/api/sessions", None, Some(json!({ "email": huge, "password": "guess" })));
    assert!([400, 401, 413].contains(&response.status), "{}", text(&response));
    let longest = world.node.database.count("SELECT COALESCE(MAX(LENGTH(key)), 0) FROM sign_in_failures");
    assert!(longest < 100, "a key is a kind and a hash: {longest} characters");
    sign_in_from(&world, "nobody@example.com", "guess", "203.0.113.1");
    assert!(world.node.database.count("SELECT COUNT(*) FROM sign_in_failures") > 0);
    world.node.platform.advance(FAILURE_WINDOW_MS);
    world.node.maintain();
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM sign_in_failures"), 0, "ended windows are deleted");
}

#[test]
fn whoever_minted_or_paired_an_agent_is_never_the_second_person_on_what_it_submits() {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    let (bob, _) = world.person("bob@example.com");
    world.grant_all(&bob, &["send.propose"], &mailbox);
    world.grant_all(&world.admin_id, &["approval.decide"], &mailbox);
    // Ada mints an agent sponsored by Bob and keeps its credential.
    let (agent, credential) =
        world.mint(&bob, &["mail.draft"], json!([{ "mailbox": mailbox, "relations": ["send.propose"] }]));
    let sends = format!("/api/mailboxes/{mailbox}/sends");
    let created = world.call(
        "POST",
        &sends,
        Some(&credential),
        Some(json!({ "to": ["customer@example.org"], "subject": "Invoice", "text": "Pay here." })),
    );
    let send = body(&created)["id"].as_str().unwrap().to_string();
    assert_eq!(world.call("POST", &format!("{sends}/{send}/submit"), Some(&credential), None).status, 200);
    let queue = body(&world.admin("GET", "/api/approvals", None));
    assert!(queue["sends"].as_array().unwrap().is_empty(), "not in her queue: {queue}");
    assert_refused(&world.admin("POST", &format!("{sends}/{send}/approve"), None), 403, "handed_the_agent");

    // Paired by another administrator: they are the one who cannot approve.
    let (dora, dora_token) = world.person("dora@example.com");
    world.grant(&dora, "org.admin", "org");
    world.grant_all(&dora, &["approval.decide"], &mailbox);
    let code = body(&world.call("POST", &format!("/api/agents/{agent}/pairing-code"), Some(&dora_token), None))["code"]
        .as_str()
        .unwrap()
        .to_string();
    let paired = world.call("POST", "/api/agents/pair", None, Some(json!({ "code": code })));
    let credential = body(&paired)["credential"].as_str().unwrap().to_string();
    let created = world.call(
        "POST",
        &sends,
        Some(&credential),
        Some(json!({ "to": ["customer@example.org"], "subject": "Again", "text": "Pay here." })),
    );
    let second = body(&created)["id"].as_str().unwrap().to_string();
    world.call("POST", &format!("{sends}/{second}/submit"), Some(&credential), None);
    assert_refused(
        &world.call("POST", &format!("{sends}/{second}/approve"), Some(&dora_token), None),
        403,
        "handed_the_agent",
    );
    // A person who neither minted nor paired it decides.
    let (carol, carol_token) = world.person("carol@example.com");
    world.grant_all(&carol, &["approval.decide"], &mailbox);
    let approved = world.call("POST", &format!("{sends}/{send}/approve"), Some(&carol_token), None);
    assert_eq!(approved.status, 200, "{}", text(&approved));
}
