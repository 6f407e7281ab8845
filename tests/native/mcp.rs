//! The MCP server: both protocol eras, the catalogue by caller, and tool calls
//! that are, in authority and audit, the REST calls they re-enter.

use std::collections::BTreeSet;

use mailroom::core::http::Response;
use mailroom::testing::{RequestExt, TEST_ORIGIN, request};
use mailroom_contract::capabilities::CAPABILITIES;
use mailroom_contract::registry;
use serde_json::{Value, json};

use crate::support::*;

const MODERN: &str = "2026-07-28";

fn rpc(world: &World, token: Option<&str>, message: Value) -> Response {
    let mut built = request("POST", "/mcp").json(message);
    if let Some(token) = token {
        built = built.bearer(token);
    }
    world.node.send(built)
}

fn call(world: &World, token: Option<&str>, method: &str, params: Value) -> Value {
    let response = rpc(world, token, json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params }));
    assert_eq!(response.status, 200, "{}", text(&response));
    let body = body(&response);
    assert_eq!(body["id"], 7);
    body
}

fn tool_names(world: &World, token: Option<&str>) -> Vec<String> {
    call(world, token, "tools/list", json!({}))["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect()
}

fn modern(world: &World, method: &str, params: Value, headers: &[(&str, &str)]) -> Response {
    let mut params = params;
    params["_meta"] =
        json!({ "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} });
    let mut built = request("POST", "/mcp")
        .bearer(&world.admin_token)
        .json(json!({ "jsonrpc": "2.0", "id": "m1", "method": method, "params": params }));
    for (name, value) in headers {
        built = built.header(name, value);
    }
    world.node.send(built)
}

#[test]
fn initialize_negotiates_a_legacy_revision_statelessly() {
    let world = World::new();
    for (asked, answered) in [("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"), ("2024-01-01", "2025-11-25")]
    {
        let result = &call(
            &world,
            Some(&world.admin_token),
            "initialize",
            json!({ "protocolVersion": asked, "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
        )["result"];
        assert_eq!(result["protocolVersion"], answered);
        assert_eq!(result["capabilities"]["tools"], json!({ "listChanged": false }));
        assert!(result["instructions"].as_str().unwrap().contains("Mailroom"));
        assert_eq!(result["serverInfo"]["name"], "mailroom");
    }
    let initialized =
        rpc(&world, Some(&world.admin_token), json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    assert_eq!(initialized.status, 202);
    assert!(initialized.body.is_empty());
    assert!(initialized.header("mcp-session-id").is_none(), "stateless: no session is minted");
    let reply = rpc(&world, Some(&world.admin_token), json!({ "jsonrpc": "2.0", "id": 3, "result": {} }));
    assert_eq!(reply.status, 202, "a response from the client is accepted and ignored");
    assert_eq!(call(&world, Some(&world.admin_token), "ping", json!({}))["result"], json!({}));
}

#[test]
fn the_instructions_name_every_capability_and_how_many_routes_are_withheld() {
    let world = World::new();
    let registry = registry();
    let withheld = registry.routes().iter().filter(|route| !registry.is_grantable(route.id)).count();
    let initialized = call(
        &world,
        Some(&world.admin_token),
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
    );
    let discovered = modern(
        &world,
        "server/discover",
        json!({}),
        &[("mcp-protocol-version", MODERN), ("mcp-method", "server/discover")],
    );
    for instructions in [&initialized["result"]["instructions"], &body(&discovered)["result"]["instructions"]] {
        let instructions = instructions.as_str().unwrap_or_default();
        for capability in CAPABILITIES {
            assert!(instructions.contains(capability.name), "the instructions do not name {}", capability.name);
        }
        assert!(
            instructions.contains(&format!(" {withheld} routes are withheld")),
            "the instructions do not give the registry's {withheld} withheld routes: {instructions}"
        );
    }
}

#[test]
fn the_transport_refuses_what_it_does_not_speak() {
    let world = World::new();
    for method in ["GET", "DELETE"] {
        let response = world.node.send(request(method, "/mcp"));
        assert_eq!(response.status, 405, "{method}");
        assert_eq!(response.header("allow"), Some("POST"));
    }
    let batch = rpc(&world, Some(&world.admin_token), json!([{ "jsonrpc": "2.0", "id": 1, "method": "ping" }]));
    assert_eq!(batch.status, 400);
    assert_eq!(body(&batch)["error"]["code"], -32600);
    let malformed = world.node.send(request("POST", "/mcp").bearer(&world.admin_token).raw_body(b"{\"jsonrpc\": "));
    assert_eq!(malformed.status, 400);
    assert_eq!(body(&malformed)["error"]["code"], -32700);
    assert_eq!(body(&malformed)["id"], Value::Null);
    let no_method = rpc(&world, Some(&world.admin_token), json!({ "jsonrpc": "2.0", "id": 1 }));
    assert_eq!(body(&no_method)["error"]["code"], -32600);
    let wrong_version = rpc(&world, Some(&world.admin_token), json!({ "jsonrpc": "1.0", "id": 1, "method": "ping" }));
    assert_eq!(body(&wrong_version)["error"]["code"], -32600);
    let unknown = call(&world, Some(&world.admin_token), "resources/list", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);
    let unsupported = world.node.send(
        request("POST", "/mcp")
            .bearer(&world.admin_token)
            .header("mcp-protocol-version", "1999-01-01")
            .json(json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" })),
    );
    assert_eq!(unsupported.status, 400);
    assert_eq!(body(&unsupported)["error"]["code"], -32022);
    assert!(body(&unsupported)["error"]["data"]["supported"].as_array().unwrap().contains(&json!("2025-11-25")));
    let foreign = world.node.send(
        request("POST", "/mcp")
            .bearer(&world.admin_token)
            .header("origin", "http://evil.example")
            .json(json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" })),
    );
    assert_refused(&foreign, 403, "cross_origin_refused");
    let own = world.node.send(
        request("POST", "/mcp")
            .bearer(&world.admin_token)
            .header("origin", TEST_ORIGIN)
            .json(json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" })),
    );
    assert_eq!(own.status, 200);
    let mut rebound = request("POST", "/mcp").json(json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }));
    rebound.origin = "http://evil.example".into();
    assert_refused(&world.node.send(rebound), 403, "wrong_host");
}

/// Sends a raw JSON-RPC message and requires the error it must answer: never a
/// 500, always a JSON-RPC error object with the code, echoing the id only when
/// it is one JSON-RPC allows.
#[track_caller]
fn check_probe(world: &World, what: &str, message: Value, status: u16, code: i64, id: Value) {
    let response = rpc(world, Some(&world.admin_token), message);
    assert_eq!(response.status, status, "{what}: {}", text(&response));
    let answer = body(&response);
    assert_eq!(answer["jsonrpc"], "2.0", "{what}: {answer}");
    assert_eq!(answer["error"]["code"], code, "{what}: {answer}");
    assert!(answer["error"]["message"].as_str().is_some_and(|message| !message.is_empty()), "{what}: {answer}");
    assert_eq!(answer["id"], id, "{what}: {answer}");
}

#[test]
fn malformed_messages_answer_the_right_json_rpc_error_and_never_a_500() {
    let world = World::new();
    let world = &world;
    let message = |id: Value, method: Value, params: Value| {
        let mut message = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        if !params.is_null() {
            message["params"] = params;
        }
        message
    };
    let tool = |params: Value| message(json!(1), json!("tools/call"), params);
    let meta = |version: Value| json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": version } });

    // `params` that are not a structured value make an invalid request; a
    // structured value by position is valid JSON-RPC that MCP cannot use.
    check_probe(world, "params a string", message(json!(1), json!("ping"), json!("x")), 400, -32600, json!(1));
    check_probe(world, "params a number", message(json!(1), json!("tools/list"), json!(3)), 400, -32600, json!(1));
    check_probe(world, "params a boolean", message(json!(1), json!("tools/list"), json!(true)), 400, -32600, json!(1));
    check_probe(
        world,
        "params by position",
        message(json!(1), json!("tools/call"), json!(["get_me"])),
        400,
        -32602,
        json!(1),
    );
    // An id is a string or an integer; any other is an invalid request, answered with a null id.
    check_probe(world, "id a float", message(json!(1.5), json!("ping"), Value::Null), 400, -32600, Value::Null);
    check_probe(world, "id a boolean", message(json!(true), json!("ping"), Value::Null), 400, -32600, Value::Null);
    check_probe(
        world,
        "id an object",
        message(json!({ "n": 1 }), json!("ping"), Value::Null),
        400,
        -32600,
        Value::Null,
    );
    check_probe(world, "id an array", message(json!([1]), json!("ping"), Value::Null), 400, -32600, Value::Null);
    check_probe(world, "id null", message(Value::Null, json!("ping"), Value::Null), 400, -32600, Value::Null);
    check_probe(
        world,
        "float id, bad params",
        message(json!(2.5), json!("ping"), json!("x")),
        400,
        -32600,
        Value::Null,
    );
    check_probe(world, "method a number", message(json!(1), json!(5), Value::Null), 400, -32600, json!(1));
    // A tool call's own parameters are the method's: invalid params.
    check_probe(
        world,
        "arguments a string",
        tool(json!({ "name": "get_me", "arguments": "{}" })),
        200,
        -32602,
        json!(1),
    );
    check_probe(world, "arguments an array", tool(json!({ "name": "get_me", "arguments": [] })), 200, -32602, json!(1));
    check_probe(world, "arguments a number", tool(json!({ "name": "get_me", "arguments": 0 })), 200, -32602, json!(1));
    check_probe(world, "name missing", tool(json!({ "arguments": {} })), 200, -32602, json!(1));
    check_probe(world, "name a number", tool(json!({ "name": 7, "arguments": {} })), 200, -32602, json!(1));
    check_probe(world, "name null", tool(json!({ "name": null })), 200, -32602, json!(1));
    check_probe(world, "no params at all", message(json!(1), json!("tools/call"), Value::Null), 200, -32602, json!(1));
    // A `_meta` version this server does not speak, with no header to compare.
    let probe = message(json!(1), json!("tools/list"), meta(json!("1999-01-01")));
    check_probe(world, "_meta version 1999-01-01", probe.clone(), 400, -32022, json!(1));
    let answer = body(&rpc(world, Some(&world.admin_token), probe));
    assert_eq!(answer["error"]["data"]["requested"], "1999-01-01");
    assert_eq!(answer["error"]["data"]["supported"], json!(["2026-07-28", "2025-11-25", "2025-06-18"]));
}

#[test]
fn the_stateless_revision_is_served_with_its_headers_checked_against_the_body() {
    let world = World::new();
    let discover = modern(
        &world,
        "server/discover",
        json!({}),
        &[("mcp-protocol-version", MODERN), ("mcp-method", "server/discover")],
    );
    assert_eq!(discover.status, 200, "{}", text(&discover));
    let result = &body(&discover)["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"], json!(["2026-07-28", "2025-11-25", "2025-06-18"]));
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mailroom");
    assert!(result["instructions"].is_string());

    let listed =
        modern(&world, "tools/list", json!({}), &[("mcp-protocol-version", MODERN), ("mcp-method", "tools/list")]);
    assert_eq!(body(&listed)["result"]["resultType"], "complete");

    let mismatch = |headers: &[(&str, &str)], method: &str, params: Value| {
        let response = modern(&world, method, params, headers);
        assert_eq!(response.status, 400, "{headers:?}: {}", text(&response));
        assert_eq!(body(&response)["error"]["code"], -32020, "{headers:?}");
    };
    mismatch(&[("mcp-method", "server/discover")], "server/discover", json!({}));
    mismatch(
        &[("mcp-protocol-version", "2025-11-25"), ("mcp-method", "server/discover")],
        "server/discover",
        json!({}),
    );
    mismatch(&[("mcp-protocol-version", MODERN)], "server/discover", json!({}));
    mismatch(&[("mcp-protocol-version", MODERN), ("mcp-method", "tools/list")], "server/discover", json!({}));
    let call_params = json!({ "name": "get_me", "arguments": {} });
    mismatch(&[("mcp-protocol-version", MODERN), ("mcp-method", "tools/call")], "tools/call", call_params.clone());
    mismatch(
        &[("mcp-protocol-version", MODERN), ("mcp-method", "tools/call"), ("mcp-name", "list_people")],
        "tools/call",
        call_params.clone(),
    );
    let encoded = modern(
        &world,
        "tools/call",
        call_params,
        &[("mcp-protocol-version", MODERN), ("mcp-method", "tools/call"), ("mcp-name", "=?base64?Z2V0X21l?=")],
    );
    assert_eq!(encoded.status, 200, "a base64 sentinel name is decoded before comparing: {}", text(&encoded));

    let unknown =
        modern(&world, "nothing/here", json!({}), &[("mcp-protocol-version", MODERN), ("mcp-method", "nothing/here")]);
    assert_eq!(unknown.status, 404);
    assert_eq!(body(&unknown)["error"]["code"], -32601);
    let header_without_meta = world.node.send(
        request("POST", "/mcp")
            .bearer(&world.admin_token)
            .header("mcp-protocol-version", MODERN)
            .json(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" })),
    );
    assert_eq!(body(&header_without_meta)["error"]["code"], -32020);
}

/// A modern request's answer, which must be a result: its `result`.
#[track_caller]
fn modern_result(world: &World, token: Option<&str>, method: &str, params: Value, name: Option<&str>) -> Value {
    let mut headers = vec![("mcp-protocol-version", MODERN), ("mcp-method", method)];
    if let Some(name) = name {
        headers.push(("mcp-name", name));
    }
    let mut params = params;
    params["_meta"] =
        json!({ "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} });
    let mut built = request("POST", "/mcp")
        .bearer(&world.admin_token)
        .json(json!({ "jsonrpc": "2.0", "id": "m1", "method": method, "params": params }));
    for (header, value) in headers {
        built = built.header(header, value);
    }
    if let Some(token) = token {
        built = built.bearer(token);
    }
    let answer = world.node.send(built);
    assert_eq!(answer.status, 200, "{method}: {}", text(&answer));
    let result = body(&answer)["result"].clone();
    assert_eq!(result["resultType"], "complete", "{method}: every result of the revision says its type");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mailroom", "{method}");
    result
}

#[test]
fn the_stateless_revisions_cacheable_results_say_for_how_long_and_for_whom() {
    let world = World::new();
    let listed = modern_result(&world, Some(&world.admin_token), "tools/list", json!({}), None);
    assert!(listed["tools"].as_array().is_some_and(|tools| !tools.is_empty()));
    assert_eq!(listed["cacheScope"], "private", "the catalogue depends on who asks");
    assert_eq!(listed["ttlMs"], 0, "a relation granted or revoked changes it at any moment");
    let discovered = modern_result(&world, Some(&world.admin_token), "server/discover", json!({}), None);
    assert_eq!(discovered["cacheScope"], "public", "the same for every caller");
    assert!(discovered["ttlMs"].as_u64().is_some_and(|ttl| ttl > 0), "{discovered}");
    let called =
        modern_result(&world, Some(&world.admin_token), "tools/call", json!({ "name": "get_me" }), Some("get_me"));
    assert!(called.get("ttlMs").is_none() && called.get("cacheScope").is_none(), "a tool call is not cacheable");
    assert!(called["content"].is_array());

    // The initialize era's answers stay as they were.
    let legacy_list = &call(&world, Some(&world.admin_token), "tools/list", json!({}))["result"];
    let legacy_discover = &call(&world, Some(&world.admin_token), "server/discover", json!({}))["result"];
    for legacy in [legacy_list, legacy_discover] {
        for field in ["ttlMs", "cacheScope", "resultType", "_meta"] {
            assert!(legacy.get(field).is_none(), "{field} in an initialize-era answer: {legacy}");
        }
    }
}

#[test]
fn the_stateless_revision_has_no_initialize_and_no_ping() {
    let world = World::new();
    for method in ["initialize", "ping"] {
        let params =
            json!({ "protocolVersion": MODERN, "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } });
        let answer = modern(&world, method, params, &[("mcp-protocol-version", MODERN), ("mcp-method", method)]);
        assert_eq!(answer.status, 404, "{method}: {}", text(&answer));
        assert_eq!(body(&answer)["error"]["code"], -32601, "{method}");
        assert_eq!(
            call(&world, Some(&world.admin_token), method, json!({}))["error"],
            Value::Null,
            "the initialize era keeps {method}"
        );
    }
}

#[test]
fn a_stranger_is_challenged_to_sign_in_whatever_it_asks() {
    // Clients start OAuth only on a 401 (decision 0026): every message without
    // a credential is answered with the challenge naming the resource metadata.
    let world = World::new();
    let initialize =
        json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } });
    for (method, params) in [
        ("initialize", initialize),
        ("tools/list", json!({})),
        ("tools/call", json!({ "name": "get_me" })),
        ("ping", json!({})),
        ("server/discover", json!({})),
    ] {
        let answer = rpc(&world, None, json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }));
        assert_eq!(answer.status, 401, "{method}: {}", text(&answer));
        assert_eq!(body(&answer)["error"]["code"], "not_signed_in", "{method}");
        assert_eq!(
            answer.header("www-authenticate"),
            Some(
                "Bearer realm=\"mailroom\", resource_metadata=\"https://mailroom.test/.well-known/oauth-protected-resource/mcp\""
            ),
            "{method}"
        );
        assert_eq!(answer.round_trips, 0, "{method}: answered before any I/O");
    }
    // The catalogue a stranger was once offered lives on where nobody needs a
    // credential to read it: the Skill and the OpenAPI document.
    let grantable: BTreeSet<&str> = registry().grantable_routes().map(|route| route.tool).collect();
    let skill = include_str!("../../skills/mailroom/SKILL.md");
    for tool in &grantable {
        assert!(skill.contains(&format!("`{tool}`")), "the Skill names {tool}");
    }
}

#[test]
fn a_person_is_offered_what_they_could_complete_and_an_administrator_also_their_reads() {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    let (ben_id, ben) = world.person("ben@example.com");
    world.grant_all(&ben_id, &["mailbox.metadata.read", "send.propose"], &mailbox);
    let person: Vec<String> = tool_names(&world, Some(&ben));
    let admin: Vec<String> = tool_names(&world, Some(&world.admin_token));
    for tool in ["get_me", "list_messages", "create_draft", "get_person", "search_messages"] {
        assert!(person.contains(&tool.to_string()), "{tool} is offered to a person");
    }
    for tool in ["list_people", "list_all_mailboxes", "list_teams", "list_relations"] {
        assert!(!person.contains(&tool.to_string()), "{tool} needs org.admin, which ben lacks");
        assert!(admin.contains(&tool.to_string()), "{tool} is offered to an administrator");
    }
    for tool in [
        "approve_send",
        "refuse_send",
        "create_person",
        "grant_relation",
        "list_audit_entries",
        "sign_in",
        "mcp_endpoint",
        "interface_shell",
    ] {
        assert!(!admin.contains(&tool.to_string()), "{tool} is never offered");
    }
    assert_eq!(admin, tool_names(&world, Some(&world.admin_token)), "the order is deterministic");
    let tools = call(&world, Some(&ben), "tools/list", json!({}))["result"]["tools"].clone();
    for tool in tools.as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        assert!(name.len() <= 40 && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'));
        assert!(!tool["description"].as_str().unwrap().is_empty());
        assert_eq!(tool["inputSchema"]["type"], "object");
        let read_only = tool["annotations"]["readOnlyHint"].as_bool().unwrap();
        assert_eq!(tool["annotations"]["destructiveHint"], false, "{name}");
        let route = registry().route_by_tool(name).unwrap();
        assert_eq!(read_only, route.method.is_safe(), "{name}");
    }
}

#[test]
fn a_persons_mailbox_tools_are_those_some_mailbox_lets_them_complete() {
    let world = World::new();
    let support = world.mailbox("support@mailroom.test");
    let sales = world.mailbox("sales@mailroom.test");
    let (ben, token) = world.person("ben@example.com");
    let check = |step: &str, expected: &[&str]| {
        let offered: BTreeSet<String> = tool_names(&world, Some(&token))
            .into_iter()
            .filter(|tool| {
                let route = registry().route_by_tool(tool).unwrap();
                matches!(route.authority, mailroom_contract::Authority::Mailbox { .. })
            })
            .collect();
        let expected: BTreeSet<String> = expected.iter().map(|tool| tool.to_string()).collect();
        assert_eq!(offered, expected, "{step}");
    };
    check("holding nothing on any mailbox, no mailbox tool is offered", &[]);
    world.grant_all(&ben, &["mailbox.metadata.read"], &support);
    // Conversations are read and marked read with metadata alone (their text
    // only where content is held too); setting one's status takes send.propose.
    const THREADS: [&str; 4] = ["list_threads", "get_thread", "mark_thread_read", "mark_thread_unread"];
    let with_threads = |tools: &[&'static str]| -> Vec<&'static str> { tools.iter().copied().chain(THREADS).collect() };
    check("metadata on support", &with_threads(&["list_messages", "get_message"]));
    world.grant_all(&ben, &["message.export"], &sales);
    world.grant_all(&ben, &["mailbox.content.read"], &support);
    check(
        "content on support and export on sales are not both held on one mailbox, so no original",
        &with_threads(&["list_messages", "get_message", "get_message_body", "get_attachment"]),
    );
    let team = world.team("Sales desk");
    world.admin("PUT", &format!("/api/teams/{team}/members/{ben}"), None);
    world.grant_all(&format!("{team}#member"), &["mailbox.content.read"], &sales);
    check(
        "content through a team and export of his own, together on sales",
        &with_threads(&["list_messages", "get_message", "get_message_body", "get_attachment", "get_message_original"]),
    );
    world.grant_all(&ben, &["approval.decide"], &support);
    let reads =
        with_threads(&["list_messages", "get_message", "get_message_body", "get_attachment", "get_message_original"]);
    let deciding: Vec<&str> = reads.iter().copied().chain(["list_sends", "get_send", "get_send_attachment"]).collect();
    check("approval.decide is one of what the sends' reads take, not what a draft takes", &deciding);
    world.grant_all(&ben, &["send.propose"], &sales);
    let proposing: Vec<&str> = deciding
        .iter()
        .copied()
        .chain([
            "create_draft",
            "update_draft",
            "delete_draft",
            "submit_send",
            "cancel_send",
            "retry_send",
            "redraft_send",
            "add_send_attachment",
            "remove_send_attachment",
        ])
        .collect();
    check("send.propose", &proposing);
    world.revoke(&format!("{team}#member"), "mailbox.content.read", &sales);
    let without_original: Vec<&str> =
        proposing.iter().copied().filter(|tool| *tool != "get_message_original").collect();
    check("the team's relation revoked", &without_original);
    let listed = rpc(&world, Some(&token), json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }));
    assert_eq!(listed.round_trips, 1, "what is held on mailboxes rides in the same round trip");
}

#[test]
fn listing_tools_costs_at_most_one_round_trip() {
    let world = World::new();
    let listed = rpc(&world, Some(&world.admin_token), json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }));
    assert_eq!(listed.round_trips, 1, "authentication and the caller's organisation relations in one batch");
    let stranger = rpc(&world, None, json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }));
    assert_eq!((stranger.status, stranger.round_trips), (401, 0), "a stranger is challenged before any I/O");
}

#[test]
fn a_tool_call_answers_exactly_what_the_route_answers() {
    let world = World::new();
    let rest = body(&world.admin("GET", "/api/me", None));
    let result =
        &call(&world, Some(&world.admin_token), "tools/call", json!({ "name": "get_me", "arguments": {} }))["result"];
    assert_eq!(result["isError"], false);
    assert_eq!(result["structuredContent"], rest);
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, rest);
}

#[test]
fn a_refusal_is_a_tool_result_with_its_four_parts_and_a_withheld_route_is_no_tool_at_all() {
    let world = World::new();
    let (_, ben) = world.person("ben@example.com");
    let refused = &call(
        &world,
        Some(&ben),
        "tools/call",
        json!({ "name": "list_messages", "arguments": { "mailbox_id": "mbx_00000000000000000000000000" } }),
    )["result"];
    assert_eq!(refused["isError"], true);
    for part in ["code", "message", "reason", "fix"] {
        assert!(refused["structuredContent"]["error"][part].is_string(), "{part}");
    }
    assert!(refused["content"][0]["text"].as_str().unwrap().contains("\"fix\""));
    for withheld in ["approve_send", "create_person", "list_audit_entries", "no_such_tool"] {
        let error = &call(&world, Some(&world.admin_token), "tools/call", json!({ "name": withheld, "arguments": {} }))
            ["error"];
        assert_eq!(error["code"], -32602, "{withheld}");
    }
    let admin_read_for_ben =
        &call(&world, Some(&ben), "tools/call", json!({ "name": "list_people", "arguments": {} }))["error"];
    assert_eq!(admin_read_for_ben["code"], -32602, "a tool not on ben's list is no tool for ben");
    let stranger =
        rpc(&world, None, json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "get_me" } }));
    assert_eq!(stranger.status, 401, "a stranger is challenged, not answered with a tool result");
}

/// Calls `tool` as the holder of `token` and requires it to be no tool for them
/// (-32602) whose error says, in its message and in `data`, the four-part
/// refusal with `code`, a reason containing `why`, and a fix.
#[track_caller]
fn check_withheld(world: &World, token: Option<&str>, tool: &str, code: &str, why: &str) {
    let answer = call(world, token, "tools/call", json!({ "name": tool, "arguments": {} }));
    let error = &answer["error"];
    assert_eq!(error["code"], -32602, "{tool}: {answer}");
    let refusal = &error["data"]["error"];
    assert_eq!(refusal["code"], code, "{tool}: {answer}");
    for part in ["message", "reason", "fix"] {
        let text = refusal[part].as_str().unwrap_or_default();
        assert!(!text.trim().is_empty(), "{tool}: no {part}: {answer}");
        assert!(error["message"].as_str().unwrap_or_default().contains(text), "{tool}: the message omits the {part}");
    }
    assert!(refusal["reason"].as_str().unwrap_or_default().contains(why), "{tool}: the reason does not say {why:?}");
}

#[test]
fn a_withheld_tool_is_no_tool_and_says_why_and_what_would_change_it() {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    let (ben, ben_token) = world.person("ben@example.com");
    world.grant_all(&ben, &["mailbox.metadata.read", "approval.decide"], &mailbox);
    let metadata = json!([{ "mailbox": mailbox, "relations": ["mailbox.metadata.read"] }]);
    let (_, agent) = world.mint(&ben, &["mail.triage"], metadata);
    let (agent, ben, admin) = (Some(agent.as_str()), Some(ben_token.as_str()), Some(world.admin_token.as_str()));

    // An agent: what no agent is given, and what this one was not given.
    check_withheld(&world, agent, "approve_send", "not_for_agents", "can never be that second person");
    check_withheld(&world, agent, "list_people", "not_for_agents", "org.admin");
    check_withheld(&world, agent, "get_message_body", "outside_ceiling", "pinned to it");
    // A person: what no machine is offered, and what they do not hold.
    check_withheld(&world, ben, "approve_send", "never_offered", "second person");
    check_withheld(&world, ben, "list_people", "missing_relation", "org.admin");
    check_withheld(&world, admin, "create_person", "never_offered", "administers the node");
    check_withheld(&world, admin, "list_audit_entries", "never_offered", "The audit trail");
    check_withheld(&world, admin, "mcp_endpoint", "never_offered", "MCP endpoint itself");

    for caller in [agent, ben, admin] {
        let error = &call(&world, caller, "tools/call", json!({ "name": "no_such_tool", "arguments": {} }))["error"];
        assert_eq!(error["code"], -32602);
        assert_eq!(error["message"], "Unknown tool: no_such_tool", "a name no route has stays a plain unknown tool");
        assert!(error.get("data").is_none(), "{error}");
    }
}

#[test]
fn every_route_off_an_agents_list_explains_itself_when_called() {
    let world = World::new();
    let (ben, _) = world.person("ben@example.com");
    let (_, agent) = world.mint(&ben, &["identity.read"], json!([]));
    let token = Some(agent.as_str());
    let offered = tool_names(&world, token);
    for route in registry().routes().iter().filter(|route| !offered.iter().any(|tool| tool == route.tool)) {
        let answer = call(&world, token, "tools/call", json!({ "name": route.tool, "arguments": {} }));
        assert_eq!(answer["error"]["code"], -32602, "{}: {answer}", route.tool);
        let code = answer["error"]["data"]["error"]["code"].as_str().unwrap_or_default();
        assert!(!code.is_empty(), "{} is withheld without a refusal: {answer}", route.tool);
    }
}

#[test]
fn argument_values_are_forwarded_as_given_and_the_route_judges_them() {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    world.grant(&world.admin_id, "mailbox.metadata.read", &mailbox);
    let absent = &call(
        &world,
        Some(&world.admin_token),
        "tools/call",
        json!({ "name": "list_messages", "arguments": { "mailbox_id": mailbox, "cursor": null } }),
    )["result"];
    assert_eq!(absent["isError"], false, "a null argument is left out: {absent}");
    let wrong = &call(
        &world,
        Some(&world.admin_token),
        "tools/call",
        json!({ "name": "list_messages", "arguments": { "mailbox_id": mailbox, "limit": 1000 } }),
    )["result"];
    assert_eq!(wrong["isError"], true);
    assert_eq!(wrong["structuredContent"]["error"]["code"], "invalid_query_parameter");
    let bad_body = &call(
        &world,
        Some(&world.admin_token),
        "tools/call",
        json!({ "name": "create_draft", "arguments": { "mailbox_id": mailbox, "to": "not a list" } }),
    )["result"];
    assert_eq!(bad_body["isError"], true);
}

/// Calls `tool` with `arguments` as the administrator and requires -32602
/// whose message and four-part `data` (`invalid_arguments`) say `says`.
#[track_caller]
fn check_invalid_arguments(world: &World, tool: &str, arguments: Value, says: &str) -> Value {
    let answer = call(world, Some(&world.admin_token), "tools/call", json!({ "name": tool, "arguments": arguments }));
    let error = &answer["error"];
    assert_eq!(error["code"], -32602, "{tool}: {answer}");
    assert_eq!(error["data"]["error"]["code"], "invalid_arguments", "{answer}");
    assert!(error["data"]["error"]["message"].as_str().unwrap().contains(says), "{answer}");
    assert!(error["message"].as_str().unwrap().contains(says), "the message a model reads says it too: {answer}");
    error["data"]["error"].clone()
}

#[test]
fn an_argument_the_tools_schema_does_not_declare_is_refused_naming_it() {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    world.grant_all(&world.admin_id, &["mailbox.metadata.read", "send.propose"], &mailbox);
    check_invalid_arguments(&world, "get_me", json!({ "colour": "red" }), "get_me takes no argument `colour`.");
    let refusal = check_invalid_arguments(
        &world,
        "list_messages",
        json!({ "mailbox_id": mailbox, "colour": "red", "sort": "name" }),
        "takes no argument `colour` and `sort`",
    );
    assert!(refusal["reason"].as_str().unwrap().contains("mailbox_id (required)"), "{refusal}");
    // A body field the route does not take is the same: the schema is what was offered.
    check_invalid_arguments(
        &world,
        "create_draft",
        json!({ "mailbox_id": mailbox, "to": ["ana@example.org"], "priority": "high" }),
        "`priority`",
    );
    // Nothing was drafted.
    let sends = body(&world.admin("GET", &format!("/api/mailboxes/{mailbox}/sends"), None));
    assert_eq!(sends["sends"], json!([]), "{sends}");
    // The old camelCase names are no arguments any more, and the refusal says
    // what each is called now.
    let refusal = check_invalid_arguments(&world, "list_messages", json!({ "mailboxId": mailbox }), "`mailbox_id`");
    assert!(refusal["message"].as_str().unwrap().contains("takes no argument `mailboxId`"), "{refusal}");
    assert!(refusal["fix"].as_str().unwrap().contains("`mailboxId` is `mailbox_id`"), "{refusal}");
}

#[test]
fn a_missing_required_argument_is_refused_as_missing_and_never_as_a_missing_object() {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    world.grant_all(&world.admin_id, &["mailbox.metadata.read", "mailbox.content.read"], &mailbox);
    // A path argument left out, null, empty or a placeholder: no path can be
    // built, so nothing is looked up, and nothing says `:mailboxId`.
    for arguments in [
        json!({}),
        json!({ "mailbox_id": null }),
        json!({ "mailbox_id": "" }),
        json!({ "mailbox_id": ":mailboxId" }),
        json!({ "mailbox_id": "{mailboxId}" }),
    ] {
        let response = rpc(
            &world,
            Some(&world.admin_token),
            json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": { "name": "list_messages", "arguments": arguments } }),
        );
        let answer = body(&response);
        assert_eq!(answer["error"]["data"]["error"]["code"], "invalid_arguments", "{arguments}: {answer}");
        let message = answer["error"]["data"]["error"]["message"].as_str().unwrap();
        assert_eq!(message, "list_messages needs `mailbox_id`, which the call leaves out.", "{arguments}");
        assert!(!text(&response).contains(":mailboxId"), "{arguments}: {answer}");
        assert!(response.round_trips <= 1, "the caller's own check at most: {}", response.round_trips);
    }
    let receipt = world.deliver("multipart-attachment", "support@mailroom.test");
    check_invalid_arguments(
        &world,
        "get_attachment",
        json!({ "mailbox_id": mailbox, "receipt_id": receipt }),
        "get_attachment needs `attachment_index`, which the call leaves out.",
    );
    // A required query parameter and a required body field alike.
    check_invalid_arguments(&world, "search_messages", json!({}), "search_messages needs `q`");
    check_invalid_arguments(
        &world,
        "create_event",
        json!({ "title": "Visa" }),
        "create_event needs `due_at`, which the call leaves out.",
    );
    check_invalid_arguments(
        &world,
        "list_messages",
        json!({ "limit": 5, "colour": "red" }),
        "list_messages needs `mailbox_id`, which the call leaves out, and takes no argument `colour`.",
    );
}

#[test]
fn a_malformed_call_is_recorded_as_the_rest_call_would_be_after_the_callers_authority() {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    let (ben, ben_token) = world.person("ben@example.com");
    world.grant_all(&ben, &["send.propose"], &mailbox);
    let before = world.audit().len();
    let answer = call(
        &world,
        Some(&ben_token),
        "tools/call",
        json!({ "name": "create_draft", "arguments": { "mailbox_id": mailbox, "priority": "high" } }),
    );
    assert_eq!(answer["error"]["data"]["error"]["code"], "invalid_arguments", "{answer}");
    let entries = world.audit();
    assert_eq!(entries.len(), before + 1, "a changing route's refused call is recorded");
    let row = entries.last().unwrap();
    assert_eq!((row["action"].as_str(), row["surface"].as_str()), (Some("create_draft"), Some("mcp")));
    assert_eq!(row["outcome"], "refused");
    assert_eq!(row["detail"]["code"], "invalid_arguments");
    // Whose authority fails first is answered first, as the dispatcher orders
    // it: a mailbox the caller holds nothing on is a mailbox they cannot see.
    let (_, carol) = world.person("carol@example.com");
    let hidden = call(
        &world,
        Some(&carol),
        "tools/call",
        json!({ "name": "list_messages", "arguments": { "mailbox_id": mailbox, "colour": "red" } }),
    );
    assert_eq!(hidden["result"]["structuredContent"]["error"]["code"], "not_found", "{hidden}");
    // A dead credential is still the caller's own refusal, as HTTP.
    assert_eq!(world.call("DELETE", "/api/sessions/current", Some(&ben_token), None).status, 200);
    let dead = rpc(
        &world,
        Some(&ben_token),
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": { "name": "create_draft", "arguments": { "mailbox_id": mailbox, "priority": "high" } } }),
    );
    assert_eq!(dead.status, 401, "{}", text(&dead));
}

#[test]
fn numbers_are_integers_in_the_tool_schemas_and_are_taken_as_numbers() {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    let receipt = world.deliver("multipart-attachment", "support@mailroom.test");
    world.grant_all(&world.admin_id, &["mailbox.metadata.read", "mailbox.content.read"], &mailbox);
    let tools = call(&world, Some(&world.admin_token), "tools/list", json!({}))["result"]["tools"].clone();
    let input = |tool: &str, name: &str| {
        let tool = tools.as_array().unwrap().iter().find(|candidate| candidate["name"] == tool).unwrap();
        tool["inputSchema"]["properties"][name].clone()
    };
    assert_eq!(input("get_attachment", "attachment_index")["type"], "integer");
    assert_eq!(input("get_attachment", "attachment_index")["minimum"], 0);
    assert_eq!(input("list_messages", "limit")["type"], "integer");
    let arguments = json!({ "mailbox_id": mailbox, "receipt_id": receipt, "attachment_index": 0 });
    let attachment = &call(
        &world,
        Some(&world.admin_token),
        "tools/call",
        json!({ "name": "get_attachment", "arguments": arguments }),
    )["result"];
    assert_eq!(attachment["isError"], false, "{attachment}");
    assert_eq!(attachment["content"][0]["resource"]["mimeType"], "application/pdf");
    // Named by the path it was read from, never by the route's template.
    let uri = format!("mailroom:/api/mailboxes/{mailbox}/messages/{receipt}/attachments/0");
    assert_eq!(attachment["content"][0]["resource"]["uri"], uri);
}

#[test]
fn a_call_through_mcp_and_through_rest_leave_the_same_audit_entry_apart_from_the_surface() {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    let (ben, token) = world.person("ben@example.com");
    world.grant_all(&ben, &["send.propose"], &mailbox);
    let created = world.call(
        "POST",
        &format!("/api/mailboxes/{mailbox}/sends"),
        Some(&token),
        Some(json!({ "to": ["ana@example.org"], "subject": "Hello", "text": "Hi." })),
    );
    let send = body(&created)["id"].as_str().unwrap().to_string();
    let path = format!("/api/mailboxes/{mailbox}/sends/{send}");
    world.call("POST", &format!("{path}/submit"), Some(&token), None);
    world.call("POST", &format!("{path}/cancel"), Some(&token), None);
    let rest_entry = world.last_audit_entry();
    world.call("POST", &format!("{path}/submit"), Some(&token), None);
    let result = &call(
        &world,
        Some(&token),
        "tools/call",
        json!({ "name": "cancel_send", "arguments": { "mailbox_id": mailbox, "send_id": send } }),
    )["result"];
    assert_eq!(result["isError"], false, "{result}");
    let mcp_entry = world.last_audit_entry();
    let comparable = |entry: &Value| {
        let mut entry = entry.clone();
        for volatile in ["seq", "at", "prev_hash", "hash", "surface"] {
            entry.as_object_mut().unwrap().remove(volatile);
        }
        entry
    };
    assert_eq!(rest_entry["surface"], "rest");
    assert_eq!(mcp_entry["surface"], "mcp");
    assert_eq!(comparable(&rest_entry), comparable(&mcp_entry));

    let refused_rest = world.call("POST", &format!("{path}/cancel"), Some(&world.admin_token), None);
    assert_eq!(refused_rest.status, 404, "the administrator holds nothing on the mailbox");
    let rest_refusal = world.last_audit_entry();
    assert_eq!(rest_refusal["surface"], "rest");
    assert_eq!(rest_refusal["action"], "cancel_send");
    assert_eq!(rest_refusal["actor"], world.admin_id.as_str());
    assert_eq!(rest_refusal["outcome"], "refused");
    let refused_mcp = &call(
        &world,
        Some(&world.admin_token),
        "tools/call",
        json!({ "name": "cancel_send", "arguments": { "mailbox_id": mailbox, "send_id": send } }),
    )["result"];
    assert_eq!(refused_mcp["isError"], true, "{refused_mcp}");
    assert_eq!(refused_mcp["structuredContent"]["error"]["code"], "not_found");
    let mcp_refusal = world.last_audit_entry();
    assert_eq!(
        mcp_refusal["seq"].as_i64(),
        rest_refusal["seq"].as_i64().map(|seq| seq + 1),
        "the refusal through MCP appends an entry of its own: {mcp_refusal}"
    );
    assert_eq!(mcp_refusal["surface"], "mcp");
    assert_eq!(comparable(&rest_refusal), comparable(&mcp_refusal), "refusals are recorded alike too");
}

#[test]
fn a_tool_call_costs_no_more_round_trips_than_its_route() {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    world.grant(&world.admin_id, "mailbox.content.read", &mailbox);
    world.deliver("plain", "support@mailroom.test");
    let rest = world.admin("GET", &format!("/api/mailboxes/{mailbox}/messages"), None);
    let mcp = rpc(
        &world,
        Some(&world.admin_token),
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "list_messages", "arguments": { "mailbox_id": mailbox } } }),
    );
    assert_eq!(mcp.round_trips, rest.round_trips);
    let search_rest = world.admin("GET", "/api/search?q=invoice", None);
    let search_mcp = rpc(
        &world,
        Some(&world.admin_token),
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "search_messages", "arguments": { "q": "invoice" } } }),
    );
    assert_eq!(search_mcp.round_trips, search_rest.round_trips);
}

/// Sends `request` and counts the batches the storage itself executed for it.
/// A request's answer and the round trips the storage saw it take, before the
/// chain is sealed after the answer (which is not the request's to wait for).
fn measured(world: &World, request: mailroom::core::http::Request) -> (Response, u32) {
    let before = world.node.database.batches();
    let response = world.node.send_without_sealing(request);
    let taken = world.node.database.batches() - before;
    world.node.seal();
    (response, taken)
}

#[test]
fn an_audited_act_through_mcp_costs_no_more_round_trips_than_through_rest() {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    let (ben, token) = world.person("ben@example.com");
    world.grant_all(&ben, &["send.propose"], &mailbox);
    let draft = json!({ "to": ["ana@example.org"], "subject": "Hello", "text": "Hi." });
    let tool_call = |mailbox: &str| {
        let mut arguments = draft.clone();
        arguments["mailbox_id"] = json!(mailbox);
        request("POST", "/mcp").bearer(&token).json(json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": { "name": "create_draft", "arguments": arguments }
        }))
    };
    let rest_call =
        |mailbox: &str| request("POST", &format!("/api/mailboxes/{mailbox}/sends")).bearer(&token).json(draft.clone());

    let (rest, rest_batches) = measured(&world, rest_call(&mailbox));
    assert_eq!(rest.status, 201, "{}", text(&rest));
    let rest_entry = world.last_audit_entry();
    let (mcp, mcp_batches) = measured(&world, tool_call(&mailbox));
    assert_eq!(body(&mcp)["result"]["isError"], false, "{}", text(&mcp));
    let mcp_entry = world.last_audit_entry();
    assert_eq!(
        (rest_entry["action"].as_str(), mcp_entry["action"].as_str()),
        (Some("create_draft"), Some("create_draft"))
    );
    assert_eq!(mcp_entry["surface"], "mcp", "the act was done and recorded through MCP");
    assert_eq!(rest_batches, rest.round_trips, "REST reports the round trips the storage saw");
    assert_eq!(mcp_batches, mcp.round_trips, "MCP reports the round trips the storage saw");
    assert!(
        mcp_batches <= rest_batches,
        "create_draft: {mcp_batches} round trips through MCP, {rest_batches} through REST"
    );

    // A refused act is recorded too, and costs no more through MCP either.
    let elsewhere = world.mailbox("sales@mailroom.test");
    world.grant_all(&ben, &["mailbox.metadata.read"], &elsewhere);
    let (rest, rest_batches) = measured(&world, rest_call(&elsewhere));
    assert_refused(&rest, 403, "missing_relation");
    let (mcp, mcp_batches) = measured(&world, tool_call(&elsewhere));
    assert_eq!(body(&mcp)["result"]["structuredContent"]["error"]["code"], "missing_relation", "{}", text(&mcp));
    assert_eq!(world.last_audit_entry()["outcome"], "refused");
    assert_eq!(mcp_batches, mcp.round_trips);
    assert!(
        mcp_batches <= rest_batches,
        "refused create_draft: {mcp_batches} through MCP, {rest_batches} through REST"
    );
}
