//! MCP tool calls are the REST calls they re-enter: the same answer, a refusal
//! as a tool result with its four parts, arguments forwarded as given and judged
//! by the route (undeclared or missing ones refused in words, numbers taken as
//! numbers), the same audit entry but for the surface, and no more round trips.

use mailroom::core::http::Response;
use mailroom::testing::{RequestExt, request};
use serde_json::{Value, json};

use crate::desk::Desk;
use crate::mcp::{call, rpc};
use crate::support::*;

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
    let desk = Desk::new("support@mailroom.test").with("ben@example.com", &["send.propose"]);
    let (world, mailbox, ben_token) = (&desk.world, desk.mailbox.as_str(), desk.person("ben").token.as_str());
    let before = world.audit().len();
    let answer = call(
        world,
        Some(ben_token),
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
        world,
        Some(&carol),
        "tools/call",
        json!({ "name": "list_messages", "arguments": { "mailbox_id": mailbox, "colour": "red" } }),
    );
    assert_eq!(hidden["result"]["structuredContent"]["error"]["code"], "not_found", "{hidden}");
    // A dead credential is still the caller's own refusal, as HTTP.
    assert_eq!(world.call("DELETE", "/api/sessions/current", Some(ben_token), None).status, 200);
    let dead = rpc(
        world,
        Some(ben_token),
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
    let desk = Desk::new("support@mailroom.test").with("ben@example.com", &["send.propose"]);
    let (world, mailbox, token) = (&desk.world, desk.mailbox.as_str(), desk.person("ben").token.as_str());
    let created = world.call(
        "POST",
        &format!("/api/mailboxes/{mailbox}/sends"),
        Some(token),
        Some(json!({ "to": ["ana@example.org"], "subject": "Hello", "text": "Hi." })),
    );
    let send = body(&created)["id"].as_str().unwrap().to_string();
    let path = format!("/api/mailboxes/{mailbox}/sends/{send}");
    world.call("POST", &format!("{path}/submit"), Some(token), None);
    world.call("POST", &format!("{path}/cancel"), Some(token), None);
    let rest_entry = world.last_audit_entry();
    world.call("POST", &format!("{path}/submit"), Some(token), None);
    let result = &call(
        world,
        Some(token),
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
        world,
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
    let desk = Desk::new("support@mailroom.test").with("ben@example.com", &["send.propose"]);
    let (world, mailbox, ben, token) =
        (&desk.world, desk.mailbox.as_str(), desk.person("ben").id.as_str(), desk.person("ben").token.as_str());
    let draft = json!({ "to": ["ana@example.org"], "subject": "Hello", "text": "Hi." });
    let tool_call = |mailbox: &str| {
        let mut arguments = draft.clone();
        arguments["mailbox_id"] = json!(mailbox);
        request("POST", "/mcp").bearer(token).json(json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": { "name": "create_draft", "arguments": arguments }
        }))
    };
    let rest_call =
        |mailbox: &str| request("POST", &format!("/api/mailboxes/{mailbox}/sends")).bearer(token).json(draft.clone());

    let (rest, rest_batches) = measured(world, rest_call(mailbox));
    assert_eq!(rest.status, 201, "{}", text(&rest));
    let rest_entry = world.last_audit_entry();
    let (mcp, mcp_batches) = measured(world, tool_call(mailbox));
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
    world.grant_all(ben, &["mailbox.metadata.read"], &elsewhere);
    let (rest, rest_batches) = measured(world, rest_call(&elsewhere));
    assert_refused(&rest, 403, "missing_relation");
    let (mcp, mcp_batches) = measured(world, tool_call(&elsewhere));
    assert_eq!(body(&mcp)["result"]["structuredContent"]["error"]["code"], "missing_relation", "{}", text(&mcp));
    assert_eq!(world.last_audit_entry()["outcome"], "refused");
    assert_eq!(mcp_batches, mcp.round_trips);
    assert!(
        mcp_batches <= rest_batches,
        "refused create_draft: {mcp_batches} through MCP, {rest_batches} through REST"
    );
}
