//! A tool withheld from its caller, called anyway: no tool (-32602, with the
//! four-part refusal), and in the audit chain exactly what the same call over
//! REST leaves there, with surface `mcp`, at no more round trips. One test per
//! kind of withholding.

use mailroom::core::http::Response;
use mailroom::testing::{RequestExt, request};
use serde_json::{Value, json};

use crate::desk::Desk;
use crate::support::*;

const SUPPORT: &str = "support@mailroom.test";

/// `built` as the holder of `token` (a stranger with `None`), with the batches
/// the storage itself executed for it (the chain is sealed after the count, as
/// the adapter seals it after the answer).
fn counted(world: &World, token: Option<&str>, mut built: mailroom::core::http::Request) -> (Response, u32) {
    if let Some(token) = token {
        built = built.bearer(token);
    }
    let before = world.node.database.batches();
    let response = world.node.send_without_sealing(built);
    let batches = world.node.database.batches() - before;
    world.node.seal();
    (response, batches)
}

/// A tool call, with the batches it cost.
fn tool_call(world: &World, token: Option<&str>, tool: &str, arguments: Value) -> (Response, u32) {
    let built = request("POST", "/mcp").json(json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments }
    }));
    let (response, batches) = counted(world, token, built);
    assert_eq!(batches, response.round_trips, "{tool}: the answer reports the round trips the storage saw");
    (response, batches)
}

/// The same call over REST, with the batches it cost.
fn rest_call(world: &World, token: Option<&str>, method: &str, path: &str) -> (Response, u32) {
    counted(world, token, request(method, path))
}

/// Requires a withheld tool's answer: -32602 whose `data` is the four-part
/// refusal with `code`.
#[track_caller]
fn assert_withheld(response: &Response, code: &str) {
    assert_eq!(response.status, 200, "{}", text(response));
    let error = &body(response)["error"];
    assert_eq!(error["code"], -32602, "{}", text(response));
    assert_eq!(error["data"]["error"]["code"], code, "{}", text(response));
    for part in ["message", "reason", "fix"] {
        assert!(error["data"]["error"][part].as_str().is_some_and(|text| !text.trim().is_empty()), "{part}");
    }
}

/// An entry without what differs between any two calls, and its surface.
fn comparable(entry: &Value) -> Value {
    let mut entry = entry.clone();
    for volatile in ["seq", "at", "prev_hash", "hash", "surface"] {
        entry.as_object_mut().unwrap().remove(volatile);
    }
    entry
}

/// Calls `tool` over MCP and its route over REST as the same caller, and
/// requires the MCP call withheld with `code` while the chain grows by exactly
/// what REST grew it by (one entry, alike but for the surface, or none) at no
/// more round trips. Answers whether REST's call was recorded.
#[track_caller]
fn check_parity(
    world: &World,
    token: Option<&str>,
    tool: &str,
    arguments: Value,
    rest: (&str, &str),
    code: &str,
) -> bool {
    let before = world.audit();
    let (rest_answer, rest_batches) = rest_call(world, token, rest.0, rest.1);
    assert!(rest_answer.status >= 400, "{tool} over REST is refused too: {}", text(&rest_answer));
    let after_rest = world.audit();
    let (mcp_answer, mcp_batches) = tool_call(world, token, tool, arguments);
    assert_withheld(&mcp_answer, code);
    let after_mcp = world.audit();
    let rest_rows = &after_rest[before.len()..];
    let mcp_rows = &after_mcp[after_rest.len()..];
    assert_eq!(mcp_rows.len(), rest_rows.len(), "{tool}: MCP leaves the rows REST leaves: {mcp_rows:?}");
    assert!(rest_rows.len() <= 1);
    if let (Some(rest_row), Some(mcp_row)) = (rest_rows.first(), mcp_rows.first()) {
        assert_eq!((rest_row["surface"].as_str(), mcp_row["surface"].as_str()), (Some("rest"), Some("mcp")));
        assert_eq!(mcp_row["outcome"], "refused");
        assert_eq!(comparable(mcp_row), comparable(rest_row), "{tool}: the same row but for the surface");
    }
    assert!(mcp_batches <= rest_batches.max(1), "{tool}: {mcp_batches} round trips over MCP, {rest_batches} over REST");
    assert!(mcp_batches <= 2, "{tool}: {mcp_batches} round trips");
    !rest_rows.is_empty()
}

/// A mailbox where ben may draft, and a send of the administrator's waiting for
/// a decision there: (world, mailbox, the send's path, ben's id, ben's token).
fn awaiting_a_decision() -> (World, String, String, String, String) {
    let desk = Desk::new(SUPPORT)
        .with_admin(&["send.propose"])
        .with("ben@example.com", &["mailbox.metadata.read", "send.propose", "approval.decide"]);
    let (ben, token) = (desk.person("ben").id.clone(), desk.person("ben").token.clone());
    let Desk { world, mailbox, .. } = desk;
    let drafted = world.admin(
        "POST",
        &format!("/api/mailboxes/{mailbox}/sends"),
        Some(json!({ "to": ["ana@example.org"], "subject": "Hello", "text": "Hi." })),
    );
    let send = body(&drafted)["id"].as_str().unwrap().to_string();
    let path = format!("/api/mailboxes/{mailbox}/sends/{send}");
    assert_eq!(world.admin("POST", &format!("{path}/submit"), None).status, 200);
    (world, mailbox, path, ben, token)
}

#[test]
fn a_tool_no_agent_is_given_is_recorded_as_the_rest_call_outside_the_ceiling() {
    let (world, mailbox, path, ben, _) = awaiting_a_decision();
    let grants = json!([{ "mailbox": mailbox, "relations": ["mailbox.metadata.read", "send.propose"] }]);
    let (_, agent) = world.mint(&ben, &["mail.triage"], grants);
    let send = path.rsplit('/').next().unwrap().to_string();
    let approve = format!("{path}/approve");
    let arguments = json!({ "mailbox_id": mailbox, "send_id": send });
    let recorded = check_parity(&world, Some(&agent), "approve_send", arguments, ("POST", &approve), "not_for_agents");
    assert!(recorded, "a changing route's refusal is recorded");
    assert_eq!(world.last_audit_entry()["detail"]["code"], "not_for_agents");
    assert_eq!(body(&world.admin("GET", &path, None))["state"], "submitted", "nothing was approved");
    // Within the ceiling's tools but outside this agent's: the route's own check, recorded alike.
    let drafts = format!("/api/mailboxes/{mailbox}/sends");
    let arguments = json!({ "mailbox_id": mailbox });
    assert!(check_parity(&world, Some(&agent), "create_draft", arguments, ("POST", &drafts), "outside_ceiling"));
    // A read that is not recorded over REST is not recorded over MCP either.
    assert!(!check_parity(&world, Some(&agent), "list_people", json!({}), ("GET", "/api/people"), "not_for_agents"));
}

#[test]
fn a_tool_never_offered_does_not_run_and_is_recorded_as_the_routes_refused_call() {
    let (world, mailbox, path, ben, ben_token) = awaiting_a_decision();
    let send = path.rsplit('/').next().unwrap().to_string();
    let before = world.audit().len();
    let (answer, batches) =
        tool_call(&world, Some(&ben_token), "approve_send", json!({ "mailbox_id": mailbox, "send_id": send }));
    assert_withheld(&answer, "never_offered");
    assert_eq!(body(&world.admin("GET", &path, None))["state"], "submitted", "the route did not run");
    assert!(world.node.mailer.sent.borrow().is_empty(), "nothing left");
    let entries = world.audit();
    assert_eq!(entries.len(), before + 1, "one row: the route's refused call");
    let row = entries.last().unwrap();
    assert_eq!(row["action"], "approve_send");
    assert_eq!(row["actor"], ben.as_str());
    assert_eq!(row["surface"], "mcp");
    assert_eq!(row["outcome"], "refused");
    assert_eq!(row["object"], mailbox.as_str(), "named as REST names it");
    assert_eq!(row["detail"], json!({ "code": "never_offered", "status": 403 }));
    assert_eq!(batches, 2, "the route's first read (checks and the chain's head) and the commit");

    // The same holds for an administrator's operator route: no one is created.
    let people = world.node.database.count("SELECT COUNT(*) FROM people");
    let new_person = json!({ "email": "eve@example.com", "name": "Eve", "password": PASSWORD });
    let (answer, batches) = tool_call(&world, Some(&world.admin_token), "create_person", new_person);
    assert_withheld(&answer, "never_offered");
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM people"), people);
    let row = world.last_audit_entry();
    assert_eq!((row["action"].as_str(), row["actor"].as_str()), (Some("create_person"), Some(world.admin_id.as_str())));
    assert_eq!(row["detail"]["code"], "never_offered");
    assert!(batches <= 2);

    // Over REST the same call would have been refused by its authority first,
    // and that is what the row says, as REST's would.
    let (_, carol_token) = world.person("carol@example.com");
    let (answer, _) =
        tool_call(&world, Some(&carol_token), "approve_send", json!({ "mailbox_id": mailbox, "send_id": send }));
    assert_withheld(&answer, "never_offered");
    assert_eq!(world.last_audit_entry()["detail"]["code"], "not_found");

    // A read that is not recorded over REST is not recorded over MCP either.
    let before = world.audit().len();
    let (answer, batches) = tool_call(&world, Some(&world.admin_token), "list_audit_entries", json!({}));
    assert_withheld(&answer, "never_offered");
    assert_eq!(world.audit().len(), before);
    assert_eq!(batches, 1, "the caller's checks, nothing else");
}

#[test]
fn an_organisation_relation_not_held_leaves_what_rest_leaves() {
    let world = World::new();
    let (_, ben) = world.person("ben@example.com");
    for (tool, path) in [("list_people", "/api/people"), ("list_all_mailboxes", "/api/mailboxes/all")] {
        let recorded = check_parity(&world, Some(&ben), tool, json!({}), ("GET", path), "missing_relation");
        assert!(!recorded, "{tool} is not a recorded read over REST, so not over MCP either");
    }
}

#[test]
fn a_strangers_tool_call_is_refused_before_any_io() {
    // A stranger is challenged at the endpoint (decision 0026), whatever the
    // tool: nothing is read, nothing is written, no one writes to the chain at will.
    let world = World::new();
    let before = world.audit().len();
    for tool in ["list_people", "approve_send", "sign_in", "redeem_pairing_code", "set_up_node"] {
        let (answer, batches) = tool_call(&world, None, tool, json!({ "email": ADMIN_EMAIL, "password": "x" }));
        assert_eq!(answer.status, 401, "{tool}: {}", text(&answer));
        assert_eq!(batches, 0, "{tool}");
    }
    assert_eq!(world.audit().len(), before);
}

#[test]
fn a_withheld_tool_is_withheld_whatever_its_arguments() {
    let (world, mailbox, path, ben, ben_token) = awaiting_a_decision();
    let send = path.rsplit('/').next().unwrap().to_string();
    // Arguments its schema would refuse, or none at all: the answer is still
    // why the tool is withheld, never a complaint about the arguments.
    for arguments in [json!({}), json!({ "mailbox_id": mailbox, "send_id": send, "colour": "red" })] {
        let (answer, _) = tool_call(&world, Some(&ben_token), "approve_send", arguments.clone());
        assert_withheld(&answer, "never_offered");
    }
    // An agent's tool outside its ceiling, its path left out: outside its
    // ceiling first, read with the agent's own checks in one round trip.
    let grants = json!([{ "mailbox": mailbox, "relations": ["mailbox.metadata.read"] }]);
    let (_, agent) = world.mint(&ben, &["mail.triage"], grants);
    let (answer, batches) = tool_call(&world, Some(&agent), "create_draft", json!({ "to": ["ana@example.org"] }));
    assert_withheld(&answer, "outside_ceiling");
    assert_eq!(batches, 1);
    // Within its ceiling, the same call is told what it left out.
    let (answer, batches) = tool_call(&world, Some(&agent), "list_messages", json!({ "limit": 5 }));
    assert_eq!(body(&answer)["error"]["data"]["error"]["code"], "invalid_arguments", "{}", text(&answer));
    assert_eq!(batches, 1);
    assert_eq!(body(&world.admin("GET", &path, None))["state"], "submitted", "nothing ran");
}
