//! The MCP catalogue by caller: a person is offered what they could complete
//! (an administrator also their reads), mailbox tools where some mailbox lets
//! them complete, a listing costs one round trip, and a withheld tool is no tool
//! and says why and what would change it.

use std::collections::BTreeSet;

use mailroom_contract::registry;
use serde_json::json;

use crate::desk::{DRAFTS_FROM_THE_LISTING, Desk};
use crate::mcp::{call, rpc};
use crate::support::*;

fn tool_names(world: &World, token: Option<&str>) -> Vec<String> {
    call(world, token, "tools/list", json!({}))["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_person_is_offered_what_they_could_complete_and_an_administrator_also_their_reads() {
    let desk = Desk::new("support@mailroom.test").with("ben@example.com", DRAFTS_FROM_THE_LISTING);
    let (world, ben) = (&desk.world, desk.person("ben").token.as_str());
    let person: Vec<String> = tool_names(world, Some(ben));
    let admin: Vec<String> = tool_names(world, Some(&world.admin_token));
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
    assert_eq!(admin, tool_names(world, Some(&world.admin_token)), "the order is deterministic");
    let tools = call(world, Some(ben), "tools/list", json!({}))["result"]["tools"].clone();
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
        &with_threads(&["list_messages", "get_message", "get_message_body", "get_attachment", "list_notes"]),
    );
    let team = world.team("Sales desk");
    world.admin("PUT", &format!("/api/teams/{team}/members/{ben}"), None);
    world.grant_all(&format!("{team}#member"), &["mailbox.content.read"], &sales);
    check(
        "content through a team and export of his own, together on sales",
        &with_threads(&[
            "list_messages",
            "get_message",
            "get_message_body",
            "get_attachment",
            "get_message_original",
            "list_notes",
        ]),
    );
    world.grant_all(&ben, &["approval.decide"], &support);
    let reads = with_threads(&[
        "list_messages",
        "get_message",
        "get_message_body",
        "get_attachment",
        "get_message_original",
        "list_notes",
    ]);
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
            "list_saved_replies",
            "get_mailbox_signature",
            // Notes are written where content is read and drafts are written: both on sales.
            "add_note",
            "delete_note",
        ])
        .collect();
    check("send.propose", &proposing);
    world.revoke(&format!("{team}#member"), "mailbox.content.read", &sales);
    // Content on sales went with the team's relation: so did writing notes there.
    let without_original: Vec<&str> = proposing
        .iter()
        .copied()
        .filter(|tool| !["get_message_original", "add_note", "delete_note"].contains(tool))
        .collect();
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
    let desk =
        Desk::new("support@mailroom.test").with("ben@example.com", &["mailbox.metadata.read", "approval.decide"]);
    let (world, mailbox, ben, ben_token) =
        (&desk.world, desk.mailbox.as_str(), desk.person("ben").id.as_str(), desk.person("ben").token.as_str());
    let metadata = json!([{ "mailbox": mailbox, "relations": ["mailbox.metadata.read"] }]);
    let (_, agent) = world.mint(ben, &["mail.triage"], metadata);
    let (agent, ben, admin) = (Some(agent.as_str()), Some(ben_token), Some(world.admin_token.as_str()));

    // An agent: what no agent is given, and what this one was not given.
    check_withheld(world, agent, "approve_send", "not_for_agents", "can never be that second person");
    check_withheld(world, agent, "list_people", "not_for_agents", "org.admin");
    check_withheld(world, agent, "get_message_body", "outside_ceiling", "pinned to it");
    // A person: what no machine is offered, and what they do not hold.
    check_withheld(world, ben, "approve_send", "never_offered", "second person");
    check_withheld(world, ben, "list_people", "missing_relation", "org.admin");
    check_withheld(world, admin, "create_person", "never_offered", "administers the node");
    check_withheld(world, admin, "list_audit_entries", "never_offered", "The audit trail");
    check_withheld(world, admin, "mcp_endpoint", "never_offered", "MCP endpoint itself");

    for caller in [agent, ben, admin] {
        let error = &call(world, caller, "tools/call", json!({ "name": "no_such_tool", "arguments": {} }))["error"];
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
