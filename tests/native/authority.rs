//! The dispatcher enforces exactly the authority each route declares: walked over
//! every route in the contract, with the budget's fixtures, so a route cannot
//! escape by being new.

use mailroom::testing::RequestExt;
use mailroom_contract::{Authority, Relation, registry};

use crate::budget::fixture;
use crate::support::*;

/// The fixture's request for `route`, without the credential it came with.
fn unsigned_fixture(world: &World, route: mailroom_contract::RouteId) -> mailroom::core::http::Request {
    let (mut request, _) = fixture(world, route);
    request.headers.retain(|(name, _)| name != "authorization");
    request
}

/// The mailbox a fixture's path names.
fn mailbox_in(path: &str) -> String {
    path.split(['/', '?']).find(|segment| segment.starts_with("mbx_")).expect("a mailbox route names one").to_string()
}

/// The holdings on one mailbox that decide an authority of `all_of` and
/// `any_of`, each with whether it meets it: exactly what is needed (meets), and
/// every mailbox relation but one of `all_of`, or but all of `any_of` (neither does).
fn holdings_that_decide(all_of: &[Relation], any_of: &[Relation]) -> Vec<(Vec<Relation>, bool)> {
    let every_but = |missing: &[Relation]| -> Vec<Relation> {
        Relation::ALL
            .iter()
            .copied()
            .filter(|relation| relation.object_kind() == mailroom_contract::ObjectKind::Mailbox)
            .filter(|relation| !missing.contains(relation))
            .collect()
    };
    let mut cases = vec![(all_of.iter().chain(any_of.first()).copied().collect(), true)];
    cases.extend(all_of.iter().map(|relation| (every_but(std::slice::from_ref(relation)), false)));
    if !any_of.is_empty() {
        cases.push((every_but(any_of), false));
    }
    cases
}

#[test]
fn every_route_refuses_a_person_who_holds_nothing_it_needs() {
    let world = World::new();
    let (_, nobody) = world.person("nobody@example.com");
    let mut walked = 0;
    for route in registry().routes() {
        let expected = match route.authority {
            Authority::Organization(_) | Authority::Requester(_) => (403, "missing_relation"),
            Authority::SelfOrAdmin { .. } => (403, "not_self_or_administrator"),
            // Holding nothing there, the mailbox answers as if it did not exist.
            Authority::Mailbox { .. } => (404, "not_found"),
            // A person's credential is not a source's.
            Authority::Source => (403, "sources_only"),
            Authority::Sponsor { .. } => (403, "not_sponsor_or_administrator"),
            Authority::Public
            | Authority::Open
            | Authority::Member
            | Authority::Filtered { .. }
            | Authority::Personal => {
                continue;
            }
        };
        let response = world.node.send(unsigned_fixture(&world, route.id).bearer(&nobody));
        assert_refused(&response, expected.0, expected.1);
        walked += 1;
    }
    assert!(walked > 20, "{walked} routes walked");
}

#[test]
fn every_mailbox_route_refuses_a_person_missing_any_relation_it_requires() {
    let world = World::new();
    let mut walked = 0;
    for route in registry().routes() {
        let Authority::Mailbox { all_of, any_of, .. } = route.authority else { continue };
        // Each relation of all_of withheld in turn, then all of any_of together.
        let mut withheld: Vec<Vec<Relation>> = all_of.iter().map(|relation| vec![*relation]).collect();
        if !any_of.is_empty() {
            withheld.push(any_of.to_vec());
        }
        let request = unsigned_fixture(&world, route.id);
        let mailbox = mailbox_in(&request.path);
        for missing in withheld {
            let (person, token) = world.person(&format!("partial-{walked}@example.com"));
            let held: Vec<&str> = Relation::ALL
                .iter()
                .filter(|relation| relation.object_kind() == mailroom_contract::ObjectKind::Mailbox)
                .filter(|relation| !missing.contains(relation))
                .map(|relation| relation.name())
                .collect();
            world.grant_all(&person, &held, &mailbox);
            let response = world.node.send(request.clone().bearer(&token));
            assert_refused(&response, 403, "missing_relation");
            let fix = body(&response)["error"]["fix"].as_str().unwrap_or_default().to_string();
            assert!(
                missing.iter().all(|relation| fix.contains(relation.name())),
                "{} without {missing:?}: {fix}",
                route.tool
            );
            walked += 1;
        }
    }
    assert!(walked > 10, "{walked} cases walked");
}

#[test]
fn every_filtered_route_shows_rows_exactly_where_its_declared_relations_are_held() {
    let world = World::new();
    let mut walked = 0;
    for route in registry().routes() {
        let Some((all_of, any_of)) = route.authority.rows_where() else { continue };
        let request = unsigned_fixture(&world, route.id);
        // The fixture's own mailbox, by the address the budget gives it.
        let address = format!("box-{:?}@mailroom.test", route.id).to_lowercase();
        let all = body(&world.admin("GET", "/api/mailboxes/all", None));
        let mailbox =
            all["mailboxes"].as_array().unwrap().iter().find(|mailbox| mailbox["address"] == address.as_str());
        let mailbox = mailbox.and_then(|mailbox| mailbox["id"].as_str()).unwrap().to_string();

        // Exactly what the declaration asks for shows the rows; everything but one
        // relation of all_of, or everything but any_of, shows none.
        for (held, visible) in holdings_that_decide(all_of, any_of) {
            let (person, token) = world.person(&format!("filtered-{walked}@example.com"));
            let names: Vec<&str> = held.iter().map(|relation| relation.name()).collect();
            world.grant_all(&person, &names, &mailbox);
            let response = world.node.send(request.clone().bearer(&token));
            assert_eq!(response.status, 200, "{}: {}", route.tool, text(&response));
            assert_eq!(
                text(&response).contains(&mailbox),
                visible,
                "{} for a caller holding {names:?}: {}",
                route.tool,
                text(&response)
            );
            walked += 1;
        }
    }
    assert!(walked >= 8, "{walked} cases walked");
}

#[test]
fn a_mailbox_s_tools_are_exactly_the_routes_the_dispatcher_lets_its_holder_call() {
    let world = World::new();
    let mut walked = 0;
    for route in registry().routes() {
        let Authority::Mailbox { all_of, any_of, .. } = route.authority else { continue };
        let request = unsigned_fixture(&world, route.id);
        let mailbox = mailbox_in(&request.path);
        for (held, meets) in holdings_that_decide(all_of, any_of) {
            let (person, token) = world.person(&format!("tools-{walked}@example.com"));
            let names: Vec<&str> = held.iter().map(|relation| relation.name()).collect();
            world.grant_all(&person, &names, &mailbox);
            let response = world.node.send(request.clone().bearer(&token));
            let code = body(&response)["error"]["code"].as_str().map(str::to_string);
            // Something is held in every case, so the check's only refusal is a
            // missing relation; anything else is the handler's own answer.
            let let_through = code.as_deref() != Some("missing_relation");
            let listed = body(&world.admin("GET", &format!("/api/people/{person}/mailboxes"), None));
            let tools = listed["mailboxes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|listed| listed["id"] == mailbox.as_str())
                .map(|listed| listed["tools"].clone())
                .unwrap_or_default();
            let offered = tools.as_array().is_some_and(|tools| tools.iter().any(|tool| tool == route.tool));
            assert_eq!(let_through, meets, "{} for a holder of {names:?}: {}", route.tool, text(&response));
            assert_eq!(offered, meets, "{} for a holder of {names:?}: tools {tools}", route.tool);
            walked += 1;
        }
    }
    assert!(walked > 20, "{walked} cases walked");
}
