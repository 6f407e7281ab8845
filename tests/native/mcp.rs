//! The MCP server's protocol: both eras (a legacy revision negotiated
//! statelessly, the stateless revision with its headers held to the body),
//! the transport and the JSON-RPC errors it answers, and the challenge a
//! stranger meets. Who is offered which tools is in `mcp_catalogue`; tool calls
//! as the REST calls they re-enter, in `mcp_calls`.

use std::collections::BTreeSet;

use mailroom::core::http::Response;
use mailroom::testing::{RequestExt, TEST_ORIGIN, request};
use mailroom_contract::capabilities::CAPABILITIES;
use mailroom_contract::registry;
use serde_json::{Value, json};

use crate::support::*;

const MODERN: &str = "2026-07-28";

pub(crate) fn rpc(world: &World, token: Option<&str>, message: Value) -> Response {
    let mut built = request("POST", "/mcp").json(message);
    if let Some(token) = token {
        built = built.bearer(token);
    }
    world.node.send(built)
}

pub(crate) fn call(world: &World, token: Option<&str>, method: &str, params: Value) -> Value {
    let response = rpc(world, token, json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params }));
    assert_eq!(response.status, 200, "{}", text(&response));
    let body = body(&response);
    assert_eq!(body["id"], 7);
    body
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
    let unknown = call(&world, Some(&world.admin_token), "prompts/list", json!({}));
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
