//! MCP resources (issue 29): what a caller may read, listed by URI in both
//! eras; a read is its route's answer as the caller (so a mailbox the caller
//! may not read is not found, and says why); templates name the kinds with
//! ids; a modern `resources/read` mirrors its URI in `Mcp-Name`.

use mailroom::testing::{RequestExt, request};
use serde_json::{Value, json};

use crate::mcp::call;
use crate::support::*;

const MODERN: &str = "2026-07-28";

/// The URIs `resources/list` gives `token`.
fn listed(world: &World, token: &str) -> Vec<String> {
    let answer = call(world, Some(token), "resources/list", json!({}));
    answer["result"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .map(|resource| resource["uri"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_caller_is_listed_the_mailboxes_it_may_read_and_its_own_resources() {
    let world = World::new();
    let support = world.mailbox("support@mailroom.test");
    let private = world.mailbox("private@mailroom.test");
    let (dee, dee_token) = world.person("dee@example.com");
    world.grant_all(&dee, &["mailbox.metadata.read", "mailbox.content.read"], &support);
    let uris = listed(&world, &dee_token);
    assert!(uris.contains(&format!("mailroom://mailboxes/{support}")), "{uris:?}");
    assert!(!uris.iter().any(|uri| uri.contains(&private)), "a mailbox Dee may not read is not listed: {uris:?}");
    assert!(uris.contains(&"mailroom://me/notifications".to_string()));
    assert!(uris.contains(&"mailroom://me/reminders".to_string()));
    assert!(!uris.contains(&"mailroom://agent-inbox".to_string()), "a person has no agent inbox");
    // An agent: its mailboxes, and its own inbox.
    let (_, agent_token) = world.mint(
        &dee,
        &["mail.triage", "mail.read", "agent.messaging"],
        json!([{ "mailbox": support, "relations": ["mailbox.metadata.read", "mailbox.content.read"] }]),
    );
    let uris = listed(&world, &agent_token);
    assert!(uris.contains(&format!("mailroom://mailboxes/{support}")), "{uris:?}");
    assert!(uris.contains(&"mailroom://agent-inbox".to_string()), "{uris:?}");
    // The listing changes nothing and records nothing.
    let before = world.audit().len();
    listed(&world, &dee_token);
    assert_eq!(world.audit().len(), before);
}

#[test]
fn a_read_is_the_routes_answer_and_what_the_caller_may_not_read_is_not_found() {
    let world = World::new();
    let support = world.mailbox("support@mailroom.test");
    let (dee, dee_token) = world.person("dee@example.com");
    world.grant_all(&dee, &["mailbox.metadata.read", "mailbox.content.read"], &support);
    let receipt = world.deliver("plain", "support@mailroom.test");
    let thread_path = world.thread_of(&support, &receipt);
    let thread = thread_path.rsplit('/').next().unwrap().to_string();
    let uri = format!("mailroom://mailboxes/{support}/conversations/{thread}");
    let read = call(&world, Some(&dee_token), "resources/read", json!({ "uri": uri }));
    let content = &read["result"]["contents"][0];
    assert_eq!(content["uri"], uri.as_str());
    assert_eq!(content["mimeType"], "application/json");
    let as_rest = body(&world.call("GET", &thread_path, Some(&dee_token), None));
    let as_resource: Value = serde_json::from_str(content["text"].as_str().unwrap()).unwrap();
    assert_eq!((&as_resource["id"], &as_resource["subject"]), (&as_rest["id"], &as_rest["subject"]));
    // Read by a machine, as a tool call reads it: the mail's text fenced as
    // untrusted content.
    let text = as_resource["entries"][0]["received"]["text"].as_str().unwrap();
    assert!(text.starts_with("[untrusted_content_begin "), "{text}");
    assert!(as_resource["content_notice"].is_string());
    let mailbox =
        call(&world, Some(&dee_token), "resources/read", json!({ "uri": format!("mailroom://mailboxes/{support}") }));
    let threads: Value = serde_json::from_str(mailbox["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert!(threads.to_string().contains(&thread), "{threads}");
    // Someone without the mailbox: not found, saying why, and nothing shown.
    let (_, eve_token) = world.person("eve@example.com");
    let refused = call(&world, Some(&eve_token), "resources/read", json!({ "uri": uri }));
    assert_eq!(refused["error"]["code"], -32002, "{refused}");
    assert_eq!(refused["error"]["data"]["uri"], uri.as_str());
    assert!(!refused.to_string().contains("subject"), "{refused}");
    // A URI naming nothing here, and none at all.
    for (params, code) in [
        (json!({ "uri": "mailroom://mailboxes/../api/people" }), -32002),
        (json!({ "uri": "https://example.com/" }), -32002),
        (json!({}), -32602),
    ] {
        let answer = call(&world, Some(&dee_token), "resources/read", params.clone());
        assert_eq!(answer["error"]["code"], code, "{params}: {answer}");
    }
    // Templates name both kinds with ids.
    let templates = call(&world, Some(&dee_token), "resources/templates/list", json!({}));
    let named: Vec<&str> = templates["result"]["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|template| template["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(
        named,
        ["mailroom://mailboxes/{mailboxId}", "mailroom://mailboxes/{mailboxId}/conversations/{threadId}"]
    );
}

#[test]
fn a_modern_read_mirrors_its_uri_in_mcp_name_and_says_it_is_private_and_never_fresh() {
    let world = World::new();
    let modern = |name: Option<&str>| {
        let mut built = request("POST", "/mcp").bearer(&world.admin_token).json(json!({
            "jsonrpc": "2.0", "id": "r1", "method": "resources/read",
            "params": { "uri": "mailroom://me/notifications", "_meta": { "io.modelcontextprotocol/protocolVersion": MODERN } },
        }));
        built = built.header("mcp-protocol-version", MODERN).header("mcp-method", "resources/read");
        if let Some(name) = name {
            built = built.header("mcp-name", name);
        }
        world.node.send(built)
    };
    let read = body(&modern(Some("mailroom://me/notifications")));
    assert_eq!(read["result"]["ttlMs"], 0, "{read}");
    assert_eq!(read["result"]["cacheScope"], "private");
    assert!(read["result"]["contents"][0]["text"].is_string());
    for (name, expected) in [(None, "required"), (Some("mailroom://me/reminders"), "does not match")] {
        let refused = modern(name);
        assert_eq!(refused.status, 400);
        let refused = body(&refused);
        assert_eq!(refused["error"]["code"], -32020, "{refused}");
        assert!(refused["error"]["message"].as_str().unwrap().contains(expected), "{refused}");
    }
}
