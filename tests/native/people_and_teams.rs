//! People and teams: who exists, who is enabled, and who belongs together.

use std::cell::RefCell;

use mailroom::core::http::Surface;
use mailroom::core::storage::Statement;
use mailroom::dispatch::dispatch;
use mailroom::testing::{RequestExt, request};
use serde_json::json;

use crate::support::*;

#[test]
fn an_administrator_creates_and_lists_people() {
    let world = World::new();
    let (ben, _) = world.person("ben@example.com");
    let listed = world.admin("GET", "/api/people", None);
    let emails: Vec<String> = body(&listed)["people"]
        .as_array()
        .unwrap()
        .iter()
        .map(|person| person["email"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(emails, vec![ADMIN_EMAIL.to_string(), "ben@example.com".to_string()]);
    let shown = world.admin("GET", &format!("/api/people/{ben}"), None);
    assert_eq!(body(&shown)["id"], ben);

    let duplicate = world.admin(
        "POST",
        "/api/people",
        Some(json!({ "email": "BEN@example.com", "name": "Ben 2", "password": PASSWORD })),
    );
    assert_refused(&duplicate, 409, "email_taken");
}

#[test]
fn a_person_sees_their_own_record_and_nobody_else_s() {
    let world = World::new();
    let (ben, ben_token) = world.person("ben@example.com");
    assert_eq!(world.call("GET", &format!("/api/people/{ben}"), Some(&ben_token), None).status, 200);
    let other = world.call("GET", &format!("/api/people/{}", world.admin_id), Some(&ben_token), None);
    assert_refused(&other, 403, "not_self_or_administrator");
    assert_refused(&world.call("GET", "/api/people", Some(&ben_token), None), 403, "missing_relation");
    let me = body(&world.call("GET", "/api/me", Some(&ben_token), None));
    assert_eq!(me["is_admin"], false);
    assert_eq!(me["kind"], "person");
}

#[test]
fn unknown_and_malformed_person_ids_are_not_found() {
    let world = World::new();
    assert_refused(&world.admin("GET", "/api/people/usr_00000000000000000000000000", None), 404, "not_found");
    assert_refused(&world.admin("GET", "/api/people/robert'); DROP TABLE people;--", None), 404, "not_found");
    assert_refused(&world.admin("POST", "/api/people/usr_00000000000000000000000000/disable", None), 404, "not_found");
}

#[test]
fn disabling_a_person_stops_their_live_token_at_once_and_enabling_lets_them_back() {
    let world = World::new();
    let (ben, ben_token) = world.person("ben@example.com");
    assert_eq!(world.call("GET", "/api/me", Some(&ben_token), None).status, 200);
    let disabled = world.admin("POST", &format!("/api/people/{ben}/disable"), None);
    assert_eq!(disabled.status, 200, "{}", text(&disabled));
    assert!(body(&disabled)["disabled_at"].is_string());
    // Same access token, well inside its 15 minutes: refused on its next use.
    assert_refused(&world.call("GET", "/api/me", Some(&ben_token), None), 401, "session_ended");
    let signing_in =
        world.call("POST", "/api/sessions", None, Some(json!({ "email": "ben@example.com", "password": PASSWORD })));
    assert_refused(&signing_in, 401, "wrong_email_or_password");

    let enabled = world.admin("POST", &format!("/api/people/{ben}/enable"), None);
    assert_eq!(enabled.status, 200);
    assert!(body(&enabled).get("disabled_at").is_none());
    assert_refused(&world.call("GET", "/api/me", Some(&ben_token), None), 401, "session_ended");
    sign_in(&world.node, "ben@example.com", PASSWORD);
}

#[test]
fn the_node_keeps_an_administrator() {
    let world = World::new();
    let own = world.admin("POST", &format!("/api/people/{}/disable", world.admin_id), None);
    assert_refused(&own, 409, "cannot_disable_self");
    let last = world.revoke(&world.admin_id, "org.admin", "org");
    assert_refused(&last, 409, "last_administrator");
    assert_eq!(world.admin("GET", "/api/me", None).status, 200);

    // With a second administrator, the first may go.
    let (ben, ben_token) = world.person("ben@example.com");
    assert_eq!(world.grant(&ben, "org.admin", "org").status, 201);
    assert_eq!(world.revoke(&world.admin_id, "org.admin", "org").status, 200);
    let disabling_last = world.call("POST", &format!("/api/people/{}/disable", world.admin_id), Some(&ben_token), None);
    assert_eq!(disabling_last.status, 200, "ada no longer administers, so disabling her leaves ben");
    let own = world.call("POST", &format!("/api/people/{ben}/disable"), Some(&ben_token), None);
    assert_refused(&own, 409, "cannot_disable_self");
}

#[test]
fn two_administrators_disabling_each_other_at_once_leave_one() {
    // Each request's first read sees the other administrator still enabled; the
    // guard inside the commit is what keeps the node manageable.
    let world = World::new();
    let (ben, ben_token) = world.person("ben@example.com");
    world.grant(&ben, "org.admin", "org");
    let database = InterleavingDatabase {
        inner: &world.node.database,
        before_commit: RefCell::new(Some(
            Statement::new("UPDATE people SET disabled_at = 1 WHERE id = ?1").bind(world.admin_id.as_str()),
        )),
    };
    let node = world.node_over(&database);
    let disabling = request("POST", &format!("/api/people/{ben}/disable")).bearer(&world.admin_token);
    let refused = futures_executor::block_on(dispatch(&node, &disabling, Surface::Rest));
    assert_refused(&refused, 409, "last_administrator");
    assert_eq!(refused.round_trips, 3, "losing the race costs the refusal's own commit");
    assert_eq!(
        world.node.database.count(&format!("SELECT COUNT(*) FROM people WHERE id = '{ben}' AND disabled_at IS NULL")),
        1
    );
    let entries = world.call("GET", "/api/audit?limit=1", Some(&ben_token), None);
    let entry = &body(&entries)["entries"][0];
    assert_eq!((entry["action"].as_str(), entry["outcome"].as_str()), (Some("disable_person"), Some("refused")));
}

#[test]
fn a_team_membership_confers_the_team_s_relations_and_removal_withdraws_them() {
    let world = World::new();
    let (ben, ben_token) = world.person("ben@example.com");
    let admins = world.team("Administrators");
    assert_eq!(world.grant(&format!("{admins}#member"), "org.admin", "org").status, 201);
    assert_refused(&world.call("GET", "/api/people", Some(&ben_token), None), 403, "missing_relation");

    let added = world.admin("PUT", &format!("/api/teams/{admins}/members/{ben}"), None);
    assert_eq!(added.status, 200, "{}", text(&added));
    assert_eq!(body(&added)["members"], json!([ben]));
    assert_eq!(world.call("GET", "/api/people", Some(&ben_token), None).status, 200);
    assert_eq!(body(&world.call("GET", "/api/me", Some(&ben_token), None))["teams"][0]["name"], "Administrators");

    let again = world.admin("PUT", &format!("/api/teams/{admins}/members/{ben}"), None);
    assert_eq!(body(&again)["members"], json!([ben]), "adding twice changes nothing");

    let removed = world.admin("DELETE", &format!("/api/teams/{admins}/members/{ben}"), None);
    assert_eq!(removed.status, 200);
    assert_refused(&world.call("GET", "/api/people", Some(&ben_token), None), 403, "missing_relation");
}

#[test]
fn removing_the_last_administrator_from_a_team_is_refused() {
    let world = World::new();
    let admins = world.team("Administrators");
    world.grant(&format!("{admins}#member"), "org.admin", "org");
    world.admin("PUT", &format!("/api/teams/{admins}/members/{}", world.admin_id), None);
    assert_eq!(world.revoke(&world.admin_id, "org.admin", "org").status, 200, "still admin through the team");
    let removed = world.admin("DELETE", &format!("/api/teams/{admins}/members/{}", world.admin_id), None);
    assert_refused(&removed, 409, "last_administrator");
    assert_eq!(world.admin("GET", "/api/people", None).status, 200);
}

#[test]
fn teams_have_unique_names_and_known_members() {
    let world = World::new();
    let support = world.team("Support");
    assert_refused(&world.admin("POST", "/api/teams", Some(json!({ "name": " Support " }))), 409, "team_name_taken");
    assert_refused(&world.admin("POST", "/api/teams", Some(json!({ "name": "   " }))), 400, "invalid_team_name");
    let unknown_person =
        world.admin("PUT", &format!("/api/teams/{support}/members/usr_00000000000000000000000000"), None);
    assert_refused(&unknown_person, 404, "not_found");
    let unknown_team =
        world.admin("PUT", &format!("/api/teams/tm_00000000000000000000000000/members/{}", world.admin_id), None);
    assert_refused(&unknown_team, 404, "not_found");
    let listed = body(&world.admin("GET", "/api/teams", None));
    assert_eq!(listed["teams"][0]["name"], "Support");
}
