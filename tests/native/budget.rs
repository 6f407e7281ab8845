//! The round-trip budget: every route, driven with a real fixture, costs at most
//! two storage round trips (reads batched with the authentication lookup, writes
//! batched with the audit row).
//!
//! `fixture` matches on every `RouteId`, so a new route does not compile until it
//! has a fixture here, and so cannot escape the budget.

use mailroom::testing::{RequestExt, request};
use mailroom_contract::{RouteId, registry};
use serde_json::json;

use crate::support::*;

/// The most round trips any route may take.
const BUDGET: u32 = 2;

/// A request that exercises the route's full path (reads, writes, audit), and the
/// status it must answer with.
fn fixture(world: &World, route: RouteId) -> (mailroom::http::Request, u16) {
    let (ben, ben_token) = world.person(&format!("ben-{route:?}@example.com").to_lowercase());
    let team = world.team(&format!("Team {route:?}"));
    let admin = |method: &str, path: &str| request(method, path).bearer(&world.admin_token);
    match route {
        RouteId::InterfaceShell => (request("GET", "/"), 200),
        RouteId::SetUpNode => (
            request("POST", "/api/setup").json(json!({
                "setup_token": mailroom::testing::TEST_SETUP_TOKEN,
                "email": "late@example.com", "name": "Late", "password": PASSWORD
            })),
            409,
        ),
        RouteId::SignIn => {
            (request("POST", "/api/sessions").json(json!({ "email": ADMIN_EMAIL, "password": ADMIN_PASSWORD })), 201)
        }
        RouteId::RefreshSession => {
            let (_, refresh) = sign_in(&world.node, ADMIN_EMAIL, ADMIN_PASSWORD);
            (request("POST", "/api/sessions/refresh").json(json!({ "refresh_token": refresh })), 200)
        }
        RouteId::SignOut => {
            let (access, _) = sign_in(&world.node, ADMIN_EMAIL, ADMIN_PASSWORD);
            (request("DELETE", "/api/sessions/current").bearer(&access), 200)
        }
        RouteId::GetMe => (admin("GET", "/api/me"), 200),
        RouteId::ChangePassword => {
            let body = json!({ "current_password": PASSWORD, "new_password": "a new long password" });
            (request("POST", "/api/me/password").bearer(&ben_token).json(body), 200)
        }
        RouteId::ListPeople => (admin("GET", "/api/people"), 200),
        RouteId::CreatePerson => (
            admin("POST", "/api/people").json(json!({ "email": "cy@example.com", "name": "Cy", "password": PASSWORD })),
            201,
        ),
        RouteId::GetPerson => (admin("GET", &format!("/api/people/{ben}")), 200),
        RouteId::DisablePerson => (admin("POST", &format!("/api/people/{ben}/disable")), 200),
        RouteId::EnablePerson => (admin("POST", &format!("/api/people/{ben}/enable")), 200),
        RouteId::ListTeams => (admin("GET", "/api/teams"), 200),
        RouteId::CreateTeam => (admin("POST", "/api/teams").json(json!({ "name": "Brand new" })), 201),
        RouteId::AddTeamMember => (admin("PUT", &format!("/api/teams/{team}/members/{ben}")), 200),
        RouteId::RemoveTeamMember => {
            world.admin("PUT", &format!("/api/teams/{team}/members/{ben}"), None);
            (admin("DELETE", &format!("/api/teams/{team}/members/{ben}")), 200)
        }
        RouteId::ListRelations => (admin("GET", "/api/relations"), 200),
        RouteId::GrantRelation => (
            admin("POST", "/api/relations")
                .json(json!({ "subject": format!("{team}#member"), "relation": "org.admin", "object": "org" })),
            201,
        ),
        RouteId::RevokeRelation => {
            world.grant(&ben, "org.admin", "org");
            (
                admin("POST", "/api/relations/revoke")
                    .json(json!({ "subject": ben, "relation": "org.admin", "object": "org" })),
                200,
            )
        }
        RouteId::ListAuditEntries => (admin("GET", "/api/audit"), 200),
        RouteId::VerifyAuditChain => (admin("GET", "/api/audit/verify"), 200),
        RouteId::ListAgentCapabilities => (request("GET", "/api/agent-capabilities").bearer(&ben_token), 200),
    }
}

#[test]
fn every_route_stays_within_two_round_trips() {
    let world = World::new();
    let mut report = Vec::new();
    for route in registry().routes() {
        let (request, expected_status) = fixture(&world, route.id);
        let response = world.node.send(request);
        assert_eq!(response.status, expected_status, "{} {}: {}", route.method.as_str(), route.path, text(&response));
        report.push(format!("{:>2} {} {}", response.round_trips, route.method.as_str(), route.path));
        assert!(
            response.round_trips <= BUDGET,
            "{} {} took {} round trips; the budget is {BUDGET}",
            route.method.as_str(),
            route.path,
            response.round_trips
        );
    }
    println!("round trips per route:\n{}", report.join("\n"));
}

#[test]
fn a_refused_changing_call_costs_no_more_than_an_accepted_one() {
    let world = World::new();
    let (_, ben_token) = world.person("ben@example.com");
    let refused = world.call("POST", "/api/teams", Some(&ben_token), Some(json!({ "name": "Nope" })));
    assert_refused(&refused, 403, "missing_relation");
    assert!(refused.round_trips <= BUDGET);
    let unauthenticated = world.call("POST", "/api/teams", None, Some(json!({ "name": "Nope" })));
    assert_eq!(unauthenticated.round_trips, 0, "a request without credentials is refused before any I/O");
}
