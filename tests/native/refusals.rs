//! Bad input gets a clear four-part refusal, never a 500 and never an internal
//! detail.

use mailroom::core::http::MAXIMUM_BODY_BYTES;
use mailroom::testing::{RequestExt, request};
use serde_json::json;

use crate::support::*;

#[test]
fn malformed_and_mistyped_bodies_are_refused_by_field() {
    let world = World::new();
    let send = |raw: &[u8]| world.node.send(request("POST", "/api/teams").bearer(&world.admin_token).raw_body(raw));
    assert_refused(&send(b"{\"name\": "), 400, "malformed_json");
    assert_refused(&send(b"not json at all"), 400, "malformed_json");
    let not_an_object = send(b"[1, 2]");
    assert_refused(&not_an_object, 400, "invalid_body");
    assert!(refusal(&not_an_object)["reason"].as_str().unwrap().contains("a JSON object, not an array"));
    assert_refused(&send(b""), 400, "missing_body");
}

/// The refusal's four parts, as a JSON object.
fn refusal(response: &mailroom::core::http::Response) -> serde_json::Value {
    body(response)["error"].clone()
}

/// Sends `payload` to a route that takes a body and answers what the
/// `invalid_body` refusal says: its message, reason and fix.
fn invalid_body(world: &World, path: &str, payload: serde_json::Value) -> (String, String, String) {
    let response = world.admin("POST", path, Some(payload));
    assert_refused(&response, 400, "invalid_body");
    let refusal = refusal(&response);
    let part = |name: &str| refusal[name].as_str().unwrap_or_default().to_string();
    (part("message"), part("reason"), part("fix"))
}

#[test]
fn a_body_of_the_wrong_shape_is_refused_naming_the_path_to_the_field() {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    world.grant(&world.admin_id, "send.propose", &mailbox);
    let sends = format!("/api/mailboxes/{mailbox}/sends");

    // A top-level field of the wrong type.
    let (message, reason, fix) = invalid_body(&world, "/api/teams", json!({ "name": 42 }));
    assert!(message.contains("`name`"), "{message}");
    assert!(reason.starts_with("`name`: invalid type: integer `42`, expected a string"), "{reason}");
    assert!(fix.contains("`name`"), "{fix}");

    // An element of an array.
    let (message, reason, _) =
        invalid_body(&world, &sends, json!({ "to": ["ana@example.org", 42], "subject": "s", "text": "t" }));
    assert!(message.contains("`to[1]`"), "{message}");
    assert!(reason.starts_with("`to[1]`: invalid type: integer"), "{reason}");

    // A field of an object inside an array, missing.
    let mint = |mailboxes: serde_json::Value| json!({ "name": "Bot", "sponsor": world.admin_id, "capabilities": ["mail.read"], "mailboxes": mailboxes });
    let (message, reason, fix) = invalid_body(
        &world,
        "/api/agents",
        mint(json!([{ "mailbox": mailbox, "relations": [] }, { "mailbox": mailbox }])),
    );
    assert!(message.contains("`mailboxes[1].relations`"), "{message}");
    assert!(reason.contains("`mailboxes[1].relations` is required"), "{reason}");
    assert!(fix.contains("Send `mailboxes[1].relations`"), "{fix}");

    // Nested deeper: an element of an array inside an object inside an array.
    let (_, reason, _) =
        invalid_body(&world, "/api/agents", mint(json!([{ "mailbox": mailbox, "relations": ["send.propose", 7] }])));
    assert!(reason.starts_with("`mailboxes[0].relations[1]`: invalid type: integer `7`"), "{reason}");

    // A field the route does not take, nested and at the top.
    let (message, reason, fix) =
        invalid_body(&world, "/api/agents", mint(json!([{ "mailbox": mailbox, "relations": [], "colour": "red" }])));
    assert!(message.contains("`mailboxes[0].colour`"), "{message}");
    assert!(reason.contains("expected `mailbox` or `relations`"), "{reason}");
    assert!(fix.starts_with("Remove `mailboxes[0].colour`"), "{fix}");
    let (message, _, _) = invalid_body(&world, "/api/teams", json!({ "name": "A", "colour": "red" }));
    assert!(message.contains("`colour`"), "{message}");

    // A missing field at the top, and a word outside its set.
    let (message, _, fix) = invalid_body(&world, "/api/teams", json!({}));
    assert!(message.contains("`name`"), "{message}");
    assert!(fix.contains("Send `name`"), "{fix}");
    let (message, reason, _) = invalid_body(
        &world,
        "/api/agents",
        json!({ "name": "Bot", "sponsor": world.admin_id, "capabilities": [], "delivery": "pigeon" }),
    );
    assert!(message.contains("`delivery`"), "{message}");
    assert!(reason.contains("unknown variant `pigeon`"), "{reason}");
}

#[test]
fn oversized_bodies_are_refused_unparsed_and_recorded_when_the_caller_is_known() {
    let world = World::new();
    let huge = vec![b' '; MAXIMUM_BODY_BYTES + 1];
    let response = world.node.send(request("POST", "/api/teams").bearer(&world.admin_token).raw_body(&huge));
    assert_refused(&response, 413, "body_too_large");
    assert!(response.round_trips <= 2);
    let entry = world.last_audit_entry();
    assert_eq!((entry["action"].as_str(), entry["outcome"].as_str()), (Some("create_team"), Some("refused")));
    assert_eq!(entry["detail"]["code"], "body_too_large");

    // A route that takes no body refuses one as a body it does not take, however
    // large: only routes that take a body list 413.
    let bodyless = world.node.send(request("GET", "/api/me").bearer(&world.admin_token).raw_body(&huge));
    assert_refused(&bodyless, 400, "unexpected_body");

    let recorded = world.audit().len();
    let anonymous = world.node.send(request("POST", "/api/teams").raw_body(&huge));
    assert_refused(&anonymous, 401, "not_signed_in");
    assert_eq!(anonymous.round_trips, 0, "with no credential, refused before any I/O");
    assert_eq!(world.audit().len(), recorded, "and recorded nowhere");
}

#[test]
fn every_refusal_of_a_known_caller_s_changing_call_is_recorded_whatever_its_stage() {
    let world = World::new();
    let cross_site = request("POST", "/api/teams")
        .header("cookie", &format!("{}={}", mailroom::authz::credentials::ACCESS_COOKIE, world.admin_token))
        .header("origin", "https://elsewhere.example")
        .json(json!({ "name": "Forged" }));
    let as_admin = |method: &str, path: &str| request(method, path).bearer(&world.admin_token);
    let cases = [
        (cross_site, 403, "cross_origin_refused"),
        (as_admin("POST", "/api/teams?colour=red").json(json!({ "name": "A" })), 400, "unknown_query_parameter"),
        (as_admin("POST", "/api/agents/agt_00000000000000000000000000/pause").json(json!({})), 400, "unexpected_body"),
    ];
    for (request, status, code) in cases {
        assert_refused(&world.node.send(request), status, code);
        let entry = world.last_audit_entry();
        assert_eq!(entry["outcome"], "refused", "{code}");
        assert_eq!(entry["actor"], world.admin_id.as_str(), "{code}");
        assert_eq!(entry["detail"]["code"], code);
    }
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM teams"), 0);
}

#[test]
fn unknown_routes_methods_and_parameters_are_refused() {
    let world = World::new();
    assert_refused(&world.admin("GET", "/api/nothing-here", None), 404, "no_such_route");
    let wrong_method = world.admin("PATCH", "/api/people", None);
    assert_refused(&wrong_method, 405, "method_not_allowed");
    assert_eq!(wrong_method.header("allow"), Some("GET, POST"));
    assert_refused(&world.admin("GET", "/api/people?sort=name", None), 400, "unknown_query_parameter");
    let body_on_get = world.node.send(request("GET", "/api/me").bearer(&world.admin_token).json(json!({})));
    assert_refused(&body_on_get, 400, "unexpected_body");
}

#[test]
fn a_path_segment_left_empty_or_as_its_template_is_refused_as_missing_naming_it() {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    world.grant(&world.admin_id, "mailbox.metadata.read", &mailbox);
    let receipt = world.deliver("plain", "support@mailroom.test");
    for (path, named) in [
        ("/api/mailboxes/:mailboxId/messages".to_string(), "mailboxId"),
        ("/api/mailboxes//messages".to_string(), "mailboxId"),
        ("/api/mailboxes/{mailboxId}/messages".to_string(), "mailboxId"),
        ("/api/mailboxes/%7BmailboxId%7D/messages".to_string(), "mailboxId"),
        ("/api/mailboxes/%3AmailboxId/messages".to_string(), "mailboxId"),
        (format!("/api/mailboxes/{mailbox}/messages/:receiptId"), "receiptId"),
        (format!("/api/mailboxes/:mailboxId/messages/{receipt}"), "mailboxId"),
    ] {
        for token in [Some(world.admin_token.as_str()), None] {
            let response = world.call("GET", &path, token, None);
            assert_refused(&response, 400, "missing_path_parameter");
            let answer = refusal(&response);
            assert!(answer["message"].as_str().unwrap().contains(&format!("`{named}`")), "{path}: {answer}");
            assert!(!text(&response).contains(&format!(":{named}")), "{path}: the template is never shown: {answer}");
            assert_eq!(response.round_trips, 0, "{path}: nothing is looked up");
        }
    }
    // Every route with a path parameter, every parameter left empty in turn.
    let mut checked = 0;
    for route in mailroom_contract::registry().routes().iter().filter(|route| !route.path_parameters.is_empty()) {
        for left_out in route.path_parameter_names() {
            let path: String = route
                .path
                .split('/')
                .map(|segment| match segment.strip_prefix(':') {
                    Some(name) if name == left_out => String::new(),
                    Some(_) => "x".to_string(),
                    None => segment.to_string(),
                })
                .collect::<Vec<_>>()
                .join("/");
            let response = world.call(route.method.as_str(), &path, Some(&world.admin_token), None);
            if mailroom::dispatch::route_for(route.method.as_str(), &path) == Some(route.id) {
                assert_refused(&response, 400, "missing_path_parameter");
                assert!(text(&response).contains(&format!("`{left_out}`")), "{path}: {}", text(&response));
                checked += 1;
            }
        }
    }
    assert!(checked > 50, "only {checked} paths reached their route");
}

#[test]
fn a_required_query_parameter_left_out_is_refused_as_missing_naming_it() {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    world.grant(&world.admin_id, "mailbox.metadata.read", &mailbox);
    let search = world.admin("GET", "/api/search", None);
    assert_refused(&search, 400, "missing_query_parameter");
    assert!(refusal(&search)["message"].as_str().unwrap().contains("`q`"));
    // A source withdrawing an event without saying whose: refused as missing,
    // never looked up as an empty address and answered as no such event.
    let (_, credential) = world.source("Calendar");
    for (query, missing) in [("source_ref=visa&topic=", "person"), ("person=ada@example.com&topic=", "source_ref")] {
        let withdrawn = world.node.send(request("DELETE", &format!("/api/source/events?{query}")).bearer(&credential));
        assert_refused(&withdrawn, 400, "missing_query_parameter");
        assert!(refusal(&withdrawn)["message"].as_str().unwrap().contains(&format!("`{missing}`")), "{query}");
    }
    // The contract says so wherever a client reads it: OpenAPI and the tool's schema.
    let openapi: serde_json::Value = serde_json::from_str(include_str!("../../contract/openapi.json")).unwrap();
    let q = openapi["paths"]["/api/search"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|parameter| parameter["name"] == "q")
        .unwrap()
        .clone();
    assert_eq!(q["required"], true);
}

#[test]
fn no_refusal_leaks_an_internal_detail() {
    let world = World::new();
    let probes = [
        world.admin("GET", "/api/people/usr_%27%3B--", None),
        world.node.send(request("POST", "/api/people").bearer(&world.admin_token).raw_body(b"\xff\xfe")),
        world.admin(
            "POST",
            "/api/relations",
            Some(json!({ "subject": "'; DROP TABLE people; --", "relation": "org.admin", "object": "org" })),
        ),
        world.admin("GET", "/api/audit?limit=9999999999999999999999", None),
        world.admin("GET", "/api/relations?subject=%00", None),
    ];
    for response in probes {
        assert!(response.status < 500, "{}", text(&response));
        let lowered = text(&response).to_lowercase();
        for leak in ["sqlite", "constraint", "panicked", "select ", "d1_error"] {
            assert!(!lowered.contains(leak), "{leak} leaked: {}", text(&response));
        }
    }
    assert!(world.node.platform.logs.borrow().is_empty(), "{:?}", world.node.platform.logs.borrow());
}

/// Values a careless or hostile client sends: encodings, quotes, NULs, huge
/// numbers, traversal, wrong shapes.
const HOSTILE_VALUES: &[&str] = &[
    "%00",
    "a%00b",
    "%27%3B--",
    "%22",
    "..%2F..%2Fetc",
    "99999999999999999999999",
    "-1",
    "%E2%80%AE",
    "mbx_00000000000000000000000000",
    "agt_%00",
];

const HOSTILE_BODIES: &[&[u8]] = &[
    b"{}",
    b"[]",
    b"null",
    b"\"text\"",
    b"{\"to\": [\"\\u0000\"], \"subject\": \"\\u0000\", \"text\": 1e400}",
    b"{\"name\": \"\\u0000\", \"email\": \"a@\\u0000\", \"code\": \"\\u0000\", \"relations\": [\"x\"]}",
];

/// Every route, walked with every hostile value in each of its path and query
/// parameters and every hostile body: no answer is a 500, and every answer is a
/// status the contract lists for that route.
#[test]
fn no_route_answers_hostile_input_with_a_500_or_a_status_it_does_not_list() {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    world.deliver("plain", "support@mailroom.test");
    let mut probes = 0;
    let mut authorised = 0;
    let mut statuses = std::collections::BTreeSet::new();
    for route in mailroom_contract::registry().routes() {
        // A fresh session per route: a probe of sign-out must not sign the rest out.
        let (token, _) = sign_in(&world.node, ADMIN_EMAIL, ADMIN_PASSWORD);
        let listed: Vec<u16> =
            mailroom_contract::registry().answers(route.id).iter().map(|answer| answer.status).collect();
        for value in HOSTILE_VALUES {
            let path = route
                .path
                .split('/')
                .map(|segment| {
                    // One mailbox that exists, so routes inside it reach their own parameters.
                    if segment == ":mailboxId" && value.starts_with('%') {
                        mailbox.clone()
                    } else if segment.starts_with(':') {
                        value.to_string()
                    } else {
                        segment.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("/");
            // The hostile value in one query parameter at a time, so that no other
            // parameter's refusal hides what that one does.
            let mut targets = vec![path.clone()];
            targets.extend(route.query_parameters.iter().map(|parameter| format!("{path}?{}={value}", parameter.name)));
            let bodies: &[&[u8]] = if route.request.is_some() { HOSTILE_BODIES } else { &[b""] };
            for (path_and_query, body) in
                targets.iter().flat_map(|target| bodies.iter().map(move |body| (target, body)))
            {
                let probe = request(route.method.as_str(), path_and_query).bearer(&token).raw_body(body);
                let response = world.node.send(probe);
                probes += 1;
                authorised += usize::from(response.status != 401);
                assert!(
                    response.status < 500,
                    "{} {path_and_query} with {}: {}",
                    route.method.as_str(),
                    String::from_utf8_lossy(body),
                    text(&response)
                );
                // A segment that matches no route (a traversal) is answered by
                // no operation; every other answer is one the route lists.
                if mailroom::dispatch::route_for(route.method.as_str(), path_and_query.split('?').next().unwrap_or(""))
                    == Some(route.id)
                {
                    assert!(
                        listed.contains(&response.status),
                        "{} {path_and_query} answered {}, which {} does not list ({listed:?}): {}",
                        route.method.as_str(),
                        response.status,
                        route.tool,
                        text(&response)
                    );
                    statuses.insert(response.status);
                }
            }
        }
    }
    assert!(probes > 500, "{probes} probes");
    assert!(statuses.contains(&400) && statuses.contains(&404), "the probes met only {statuses:?}");
    assert!(authorised * 10 > probes * 9, "most probes must get past authentication: {authorised} of {probes}");
    assert!(world.node.platform.logs.borrow().is_empty(), "{:?}", world.node.platform.logs.borrow());
}

#[test]
fn every_paged_route_enforces_the_limit_its_declaration_documents() {
    let world = World::new();
    let mut walked = 0;
    for route in mailroom_contract::registry().routes() {
        let Some(limit) = route.query_parameter("limit") else { continue };
        let mailroom_contract::Accepts::PageSize { maximum, .. } = limit.accepts else {
            panic!("{}: `limit` is not declared as a page size", route.tool)
        };
        assert!(limit.describe().contains(&format!("1 to {maximum}")), "{}: {}", route.tool, limit.describe());
        let (request, _) = crate::budget::fixture(&world, route.id);
        let with_limit = |value: u32| {
            let mut asked = request.clone();
            let others = request.query.split('&').filter(|pair| !pair.is_empty() && !pair.starts_with("limit="));
            asked.query = others.chain([format!("limit={value}").as_str()]).collect::<Vec<_>>().join("&");
            world.node.send(asked)
        };
        assert_eq!(with_limit(maximum).status, 200, "{}: limit={maximum} is documented", route.tool);
        let refused = with_limit(maximum + 1);
        assert_refused(&refused, 400, "invalid_query_parameter");
        assert!(text(&refused).contains(&format!("1 to {maximum}")), "{}: {}", route.tool, text(&refused));
        walked += 1;
    }
    assert!(walked >= 4, "{walked} paged routes walked");
}
