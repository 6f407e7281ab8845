//! The A2A gateway's exact answers (issue 27 §7, decision 0031): what is not one
//! request object, A2A's own error codes and their `data`, the version asked
//! for, `ListTasks` checked, filtered, paged and counted on the node, the card
//! of each version, a trailing slash, and the node's own card and endpoint.

use mailroom::core::http::Response;
use mailroom::testing::{RequestExt, request};
use serde_json::{Value, json};

use crate::support::{World, body, text};

const AGENT_CARD_FIELDS_1_0: &[&str] = &[
    "name",
    "description",
    "supportedInterfaces",
    "provider",
    "version",
    "documentationUrl",
    "capabilities",
    "securitySchemes",
    "securityRequirements",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
    "signatures",
    "iconUrl",
];

/// A caller, an agent it calls, and the agent's sponsor: (world, ben's token,
/// (caller, its credential), (agent, its credential)).
fn gateway() -> (World, String, (String, String), (String, String)) {
    let world = World::new();
    let (ben, ben_token) = world.person("ben@example.com");
    let caller = world.messenger(&ben);
    let agent = world.messenger(&ben);
    (world, ben_token, caller, agent)
}

/// A JSON-RPC call to `path` as `token`, asking for `version`: (status, body).
fn rpc(
    world: &World,
    token: Option<&str>,
    path: &str,
    version: Option<&str>,
    method: &str,
    params: Value,
) -> (u16, Value) {
    let mut call = request("POST", path).json(json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params }));
    if let Some(token) = token {
        call = call.bearer(token);
    }
    if let Some(version) = version {
        call = call.header("a2a-version", version);
    }
    let response = world.node.send(call);
    (response.status, body(&response))
}

/// A 1.0 call to agent `agent` as `token`.
fn v1(world: &World, token: &str, agent: &str, method: &str, params: Value) -> Value {
    let (status, answer) = rpc(world, Some(token), &format!("/a2a/{agent}"), Some("1.0"), method, params);
    assert_eq!(status, 200, "{answer}");
    answer
}

/// A body sent as it is, with `content_type`.
fn raw(world: &World, token: &str, path: &str, content_type: Option<&str>, sent: &[u8]) -> Response {
    let mut call = request("POST", path).bearer(token).header("a2a-version", "1.0").raw_body(sent);
    if let Some(content_type) = content_type {
        call = call.header("content-type", content_type);
    }
    world.node.send(call)
}

/// The `google.rpc.ErrorInfo` of an error answer.
fn error_info(answer: &Value) -> Value {
    let data = answer["error"]["data"].as_array().unwrap_or_else(|| panic!("no data array: {answer}"));
    data.iter()
        .find(|detail| detail["@type"] == "type.googleapis.com/google.rpc.ErrorInfo")
        .cloned()
        .unwrap_or_else(|| panic!("no ErrorInfo: {answer}"))
}

/// Asserts an A2A error: its code, and an `ErrorInfo` of A2A's domain with its reason.
fn assert_a2a_error(answer: &Value, code: i64, reason: &str) {
    assert_eq!(answer["error"]["code"], code, "{answer}");
    let info = error_info(answer);
    assert_eq!(info["domain"], "a2a-protocol.org", "{answer}");
    assert_eq!(info["reason"], reason, "{answer}");
}

/// Asserts an invalid-parameters error naming `field`.
fn assert_invalid(answer: &Value, field: &str) {
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(error_info(answer)["metadata"]["field"], field, "{answer}");
    let violation = answer["error"]["data"]
        .as_array()
        .and_then(|data| data.iter().find(|detail| detail["@type"] == "type.googleapis.com/google.rpc.BadRequest"));
    assert_eq!(violation.map(|violation| &violation["fieldViolations"][0]["field"]), Some(&json!(field)), "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains(field), "{answer}");
}

fn message(text: &str, id: &str) -> Value {
    json!({ "messageId": id, "role": "ROLE_USER", "parts": [{ "text": text }] })
}

/// Sends a task with `message_id`: its id and context.
fn task(world: &World, token: &str, agent: &str, message_id: &str) -> (String, String) {
    let sent = v1(world, token, agent, "SendMessage", json!({ "message": message("hello", message_id) }));
    let task = &sent["result"]["task"];
    (task["id"].as_str().unwrap().to_string(), task["contextId"].as_str().unwrap().to_string())
}

fn stored_requests(world: &World, token: &str) -> usize {
    body(&world.call("GET", "/api/agent-messages", Some(token), None))["messages"].as_array().unwrap().len()
}

#[test]
fn a_body_that_is_not_one_request_object_is_an_invalid_request_never_an_empty_202() {
    let (world, _, (_, caller_token), (agent, _)) = gateway();
    let request_object =
        json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": { "message": message("hi", "m-1") } });
    for path in [format!("/a2a/{agent}"), format!("/a2a/{agent}/"), "/a2a".to_string()] {
        for sent in [
            "[]".to_string(),
            "5".into(),
            "null".into(),
            "\"SendMessage\"".into(),
            "true".into(),
            format!("[{request_object}]"),
        ] {
            let answered = raw(&world, &caller_token, &path, Some("application/json"), sent.as_bytes());
            assert_eq!(answered.status, 400, "{path} {sent}: {}", text(&answered));
            let answer = body(&answered);
            assert_eq!(answer["error"]["code"], -32600, "{path} {sent}: {answer}");
            assert_eq!(answer["id"], Value::Null);
            assert_eq!(error_info(&answer)["reason"], "INVALID_REQUEST");
        }
        // An object that is not a request: no `jsonrpc`, no `method`, an id JSON-RPC does not allow.
        for sent in [
            json!({}),
            json!({ "jsonrpc": "2.0", "id": 2 }),
            json!({ "jsonrpc": "2.0", "id": [1], "method": "GetTask" }),
        ] {
            let answered = raw(&world, &caller_token, &path, Some("application/json"), sent.to_string().as_bytes());
            assert_eq!(body(&answered)["error"]["code"], -32600, "{path} {sent}: {}", text(&answered));
        }
        let unparsed = raw(&world, &caller_token, &path, Some("application/json"), b"{\"jsonrpc\":");
        assert_eq!(body(&unparsed)["error"]["code"], -32700, "{}", text(&unparsed));
    }
    assert_eq!(stored_requests(&world, &caller_token), 0, "a batch sends nothing");
    // A notification is a request object: answered with nothing, as JSON-RPC says.
    let notification = json!({ "jsonrpc": "2.0", "method": "GetTask", "params": { "id": "amg_1" } });
    let answered = raw(
        &world,
        &caller_token,
        &format!("/a2a/{agent}"),
        Some("application/json"),
        notification.to_string().as_bytes(),
    );
    assert_eq!(answered.status, 202, "{}", text(&answered));
}

#[test]
fn a_body_not_sent_as_json_is_content_type_not_supported() {
    let (world, _, (_, caller_token), (agent, _)) = gateway();
    let call =
        json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": { "message": message("hi", "m-1") } });
    for content_type in [Some("text/plain"), Some("application/x-www-form-urlencoded"), None] {
        let answered = raw(&world, &caller_token, &format!("/a2a/{agent}"), content_type, call.to_string().as_bytes());
        assert_eq!(answered.status, 415, "{content_type:?}: {}", text(&answered));
        assert_a2a_error(&body(&answered), -32005, "CONTENT_TYPE_NOT_SUPPORTED");
    }
    assert_eq!(stored_requests(&world, &caller_token), 0);
    // A2A's own media type, and parameters after the type, are JSON.
    for content_type in ["application/a2a+json", "application/json; charset=utf-8"] {
        let answered =
            raw(&world, &caller_token, &format!("/a2a/{agent}"), Some(content_type), call.to_string().as_bytes());
        assert_eq!(body(&answered)["result"]["task"]["status"]["state"], "TASK_STATE_SUBMITTED", "{}", text(&answered));
    }
}

#[test]
fn the_extended_card_and_the_node_s_push_configs_answer_a2a_codes() {
    let (world, _, (_, caller_token), (agent, _)) = gateway();
    let (task_id, _) = task(&world, &caller_token, &agent, "m-1");
    let push = json!({ "taskId": task_id, "id": "cfg-1", "url": "https://receiver.example/hook" });
    let extended = [
        ("1.0", "GetExtendedAgentCard", json!({}), -32004, "UNSUPPORTED_OPERATION"),
        ("0.3", "agent/getAuthenticatedExtendedCard", json!({}), -32004, "UNSUPPORTED_OPERATION"),
    ];
    for (version, method, params, code, reason) in extended {
        for path in [format!("/a2a/{agent}"), "/a2a".to_string()] {
            let (status, answer) = rpc(&world, Some(&caller_token), &path, Some(version), method, params.clone());
            assert_eq!(status, 200, "{path} {method}: {answer}");
            assert_a2a_error(&answer, code, reason);
            assert_eq!(error_info(&answer)["metadata"]["method"], method);
        }
    }
    // The node takes no tasks, so it keeps no push configs: its card says so.
    for (version, method) in [("1.0", "CreateTaskPushNotificationConfig"), ("0.3", "tasks/pushNotificationConfig/set")]
    {
        let (status, answer) = rpc(&world, Some(&caller_token), "/a2a", Some(version), method, push.clone());
        assert_eq!(status, 200, "{method}: {answer}");
        assert_a2a_error(&answer, -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED");
    }
}

#[test]
fn every_error_carries_data_naming_what_went_wrong() {
    let (world, _, (_, caller_token), (agent, agent_token)) = gateway();
    let path = format!("/a2a/{agent}");
    let missing = v1(&world, &caller_token, &agent, "GetTask", json!({ "id": "amg_01M8MECXYJD8V8NXZMYC8H1337" }));
    assert_a2a_error(&missing, -32001, "TASK_NOT_FOUND");
    assert_eq!(error_info(&missing)["metadata"]["taskId"], "amg_01M8MECXYJD8V8NXZMYC8H1337");
    let (task_id, _) = task(&world, &caller_token, &agent, "m-1");
    let leased = world.claim(&agent_token, 1);
    let replied = world.call(
        "POST",
        &format!("/api/agent-inbox/{task_id}/reply"),
        Some(&agent_token),
        Some(json!({ "fencing_token": leased[0]["fencing_token"], "content": "done" })),
    );
    assert_eq!(replied.status, 200, "{}", text(&replied));
    assert_a2a_error(
        &v1(&world, &caller_token, &agent, "CancelTask", json!({ "id": task_id })),
        -32002,
        "TASK_NOT_CANCELABLE",
    );
    let file = json!({ "message": { "messageId": "m-2", "role": "ROLE_USER", "parts": [{ "raw": "dGNr", "mediaType": "application/x-unsupported" }] } });
    assert_a2a_error(&v1(&world, &caller_token, &agent, "SendMessage", file), -32005, "CONTENT_TYPE_NOT_SUPPORTED");
    let (_, version) = rpc(&world, Some(&caller_token), &path, Some("2.0"), "GetTask", json!({ "id": task_id }));
    assert_a2a_error(&version, -32009, "VERSION_NOT_SUPPORTED");
    assert_eq!(error_info(&version)["metadata"]["requestedVersion"], "2.0");
    // JSON-RPC's own errors carry the node's ErrorInfo.
    let unknown = v1(&world, &caller_token, &agent, "ListAgents", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);
    assert_eq!(error_info(&unknown)["domain"], "mailroom");
    assert_eq!(error_info(&unknown)["reason"], "METHOD_NOT_FOUND");
    // A route's refusal passed on keeps its code, reason and fix.
    let (pending, context) = task(&world, &caller_token, &agent, "m-3");
    assert_eq!(
        v1(&world, &caller_token, &agent, "CancelTask", json!({ "id": pending }))["result"]["status"]["state"],
        "TASK_STATE_CANCELED"
    );
    let into_canceled = json!({ "message": { "messageId": "m-4", "role": "ROLE_USER", "parts": [{ "text": "more" }], "contextId": context } });
    let refused = v1(&world, &caller_token, &agent, "SendMessage", into_canceled);
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let info = error_info(&refused);
    assert_eq!(info["reason"], "CONVERSATION_CANCELED", "{refused}");
    assert!(info["metadata"]["fix"].as_str().is_some_and(|fix| !fix.is_empty()), "{refused}");
}

#[test]
fn the_version_asked_for_decides_which_methods_there_are() {
    let (world, _, (_, caller_token), (agent, _)) = gateway();
    let path = format!("/a2a/{agent}");
    let send = json!({ "message": message("hi", "m-1") });
    // 1.0's method without asking for 1.0 is 0.3's request, which has no such method.
    let (_, unasked) = rpc(&world, Some(&caller_token), &path, None, "SendMessage", send.clone());
    assert_eq!(unasked["error"]["code"], -32601, "{unasked}");
    assert!(unasked["error"]["message"].as_str().unwrap().contains("message/send"), "{unasked}");
    let (_, empty) = rpc(&world, Some(&caller_token), &path, Some(""), "SendMessage", send.clone());
    assert_eq!(empty["error"]["code"], -32601, "an empty A2A-Version is 0.3: {empty}");
    let (_, crossed) = rpc(&world, Some(&caller_token), &path, Some("1.0"), "message/send", send.clone());
    assert_eq!(crossed["error"]["code"], -32601, "{crossed}");
    assert!(crossed["error"]["message"].as_str().unwrap().contains("SendMessage"), "{crossed}");
    assert_eq!(stored_requests(&world, &caller_token), 0);
    // Major.Minor decides; a patch number does not; the query parameter asks too.
    for version in ["1", "1.0", "1.0.7"] {
        let (_, answer) = rpc(&world, Some(&caller_token), &path, Some(version), "ListTasks", json!({}));
        assert!(answer["result"]["tasks"].is_array(), "{version}: {answer}");
    }
    let (_, by_parameter) =
        rpc(&world, Some(&caller_token), &format!("{path}?A2A-Version=1.0"), None, "ListTasks", json!({}));
    assert!(by_parameter["result"]["tasks"].is_array(), "{by_parameter}");
    for version in ["0.2", "1.1", "2.0"] {
        let (status, answer) = rpc(&world, Some(&caller_token), &path, Some(version), "ListTasks", json!({}));
        assert_eq!(status, 400);
        assert_a2a_error(&answer, -32009, "VERSION_NOT_SUPPORTED");
    }
}

#[test]
fn a_retry_is_the_same_task_and_a_reused_message_id_with_other_content_a_new_one() {
    let (world, _, (_, caller_token), (agent, _)) = gateway();
    let (dee, _) = world.person("dee@example.com");
    let (other, _) = world.messenger(&dee);
    let (first, _) = task(&world, &caller_token, &agent, "m-1");
    let (again, _) = task(&world, &caller_token, &agent, "m-1");
    assert_eq!(again, first, "a retry is the same task");
    let other_body =
        v1(&world, &caller_token, &agent, "SendMessage", json!({ "message": message("something else", "m-1") }));
    let other_body = other_body["result"]["task"]["id"].as_str().unwrap_or_else(|| panic!("{other_body}")).to_string();
    assert_ne!(other_body, first);
    let (elsewhere, _) = task(&world, &caller_token, &other, "m-1");
    assert_ne!(elsewhere, first, "the same message to another agent is that agent's task");
    assert_eq!(stored_requests(&world, &caller_token), 3);
}

#[test]
fn a_send_checks_its_message_and_refuses_a_context_the_node_never_made() {
    let (world, _, (_, caller_token), (agent, _)) = gateway();
    let cases = [
        (
            json!({ "message": { "messageId": "m-1", "role": "ROLE_AGENT", "parts": [{ "text": "x" }] } }),
            "params.message.role",
        ),
        (json!({ "message": { "role": "ROLE_USER", "parts": [{ "text": "x" }] } }), "params.message.messageId"),
        (json!({ "message": { "messageId": "m-1", "role": "ROLE_USER", "parts": [] } }), "params.message.parts"),
        (json!({ "message": { "messageId": "m-1", "role": "ROLE_USER", "parts": [{}] } }), "params.message.parts[0]"),
        (json!({ "message": message("x", "m-1"), "tenant": "acme" }), "params.tenant"),
        (
            json!({ "message": message("x", "m-1"), "configuration": { "historyLength": -1 } }),
            "params.configuration.historyLength",
        ),
        (json!({}), "params.message"),
        // A context the node never made is refused, not replaced by a new one (A2A 1.0 §3.4.1).
        (
            json!({ "message": { "messageId": "m-1", "role": "ROLE_USER", "parts": [{ "text": "x" }], "contextId": "ctx-from-the-client" } }),
            "params.message.contextId",
        ),
    ];
    for (params, field) in cases {
        assert_invalid(&v1(&world, &caller_token, &agent, "SendMessage", params), field);
    }
    assert_eq!(stored_requests(&world, &caller_token), 0, "nothing refused was stored");
    // A field the message does not have is ignored (A2A 1.0 §5.7); fields by
    // their proto names are the same fields.
    let newer = json!({ "message": { "messageId": "m-8", "role": "ROLE_USER", "parts": [{ "text": "x" }], "colour": "red" }, "priority": 1 });
    let newer = v1(&world, &caller_token, &agent, "SendMessage", newer);
    assert_eq!(newer["result"]["task"]["status"]["state"], "TASK_STATE_SUBMITTED", "{newer}");
    let snake = json!({ "message": { "message_id": "m-9", "role": "ROLE_USER", "parts": [{ "text": "x" }] }, "configuration": { "history_length": 0 } });
    let sent = v1(&world, &caller_token, &agent, "SendMessage", snake);
    assert_eq!(sent["result"]["task"]["status"]["state"], "TASK_STATE_SUBMITTED", "{sent}");
    assert!(sent["result"]["task"].get("history").is_none(), "historyLength 0 leaves history out: {sent}");
}

#[test]
fn get_task_leaves_history_out_for_zero_and_refuses_what_is_not_a_length() {
    let (world, _, (_, caller_token), (agent, _)) = gateway();
    let (task_id, _) = task(&world, &caller_token, &agent, "m-1");
    let none = v1(&world, &caller_token, &agent, "GetTask", json!({ "id": task_id, "historyLength": 0 }));
    assert!(none["result"].get("history").is_none(), "{none}");
    let one = v1(&world, &caller_token, &agent, "GetTask", json!({ "id": task_id, "history_length": 1 }));
    assert_eq!(one["result"]["history"].as_array().map(Vec::len), Some(1), "{one}");
    for (params, field) in [
        (json!({ "id": task_id, "historyLength": -1 }), "params.historyLength"),
        (json!({ "id": task_id, "historyLength": "many" }), "params.historyLength"),
        (json!({}), "params.id"),
    ] {
        assert_invalid(&v1(&world, &caller_token, &agent, "GetTask", params), field);
    }
}

#[test]
fn list_tasks_refuses_each_parameter_it_cannot_use_by_name() {
    let (world, _, (_, caller_token), (agent, _)) = gateway();
    task(&world, &caller_token, &agent, "m-1");
    let newer = v1(&world, &caller_token, &agent, "ListTasks", json!({ "sortBy": "name" }));
    assert_eq!(newer["result"]["totalSize"], 1, "a field the request does not have is ignored: {newer}");
    let cases = [
        (json!({ "pageSize": 0 }), "params.pageSize"),
        (json!({ "pageSize": 101 }), "params.pageSize"),
        (json!({ "pageSize": -5 }), "params.pageSize"),
        (json!({ "pageSize": 2.5 }), "params.pageSize"),
        (json!({ "page_size": "ten" }), "params.page_size"),
        (json!({ "pageToken": "not-a-token" }), "params.pageToken"),
        (json!({ "status": "TASK_STATE_DONE" }), "params.status"),
        (json!({ "status": 42 }), "params.status"),
        (json!({ "historyLength": -1 }), "params.historyLength"),
        (json!({ "statusTimestampAfter": "yesterday" }), "params.statusTimestampAfter"),
        (json!({ "includeArtifacts": "yes" }), "params.includeArtifacts"),
        (json!({ "contextId": 5 }), "params.contextId"),
        (json!({ "tenant": "acme" }), "params.tenant"),
    ];
    for (params, field) in cases {
        let answer = v1(&world, &caller_token, &agent, "ListTasks", params.clone());
        // `page_size` is named as it was sent.
        let field = if field == "params.page_size" { "params.pageSize" } else { field };
        assert_invalid(&answer, field);
    }
}

#[test]
fn list_tasks_filters_pages_and_counts_on_the_node() {
    let (world, _, (_, caller_token), (agent, agent_token)) = gateway();
    let tick = || world.node.platform.advance(1_000);
    let (first, context) = task(&world, &caller_token, &agent, "m-1");
    let continued = v1(
        &world,
        &caller_token,
        &agent,
        "SendMessage",
        json!({ "message": {
        "messageId": "m-2", "role": "ROLE_USER", "parts": [{ "text": "more" }], "contextId": context } }),
    );
    let second = continued["result"]["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(continued["result"]["task"]["contextId"], context.as_str());
    let (third, _) = task(&world, &caller_token, &agent, "m-3");
    let (fourth, _) = task(&world, &caller_token, &agent, "m-4");
    let (fifth, _) = task(&world, &caller_token, &agent, "m-5");
    // The oldest is worked on, then answered; the next is worked on; the last canceled.
    tick();
    let leased = world.claim(&agent_token, 2);
    tick();
    assert_eq!(leased[0]["id"], first.as_str());
    let replied = world.call(
        "POST",
        &format!("/api/agent-inbox/{first}/reply"),
        Some(&agent_token),
        Some(json!({ "fencing_token": leased[0]["fencing_token"], "content": "done" })),
    );
    assert_eq!(replied.status, 200, "{}", text(&replied));
    tick();
    assert_eq!(
        v1(&world, &caller_token, &agent, "CancelTask", json!({ "id": fifth }))["result"]["status"]["state"],
        "TASK_STATE_CANCELED"
    );
    // Another caller's task to the same agent is not the caller's to list.
    let (_, other_token) = world.person("cy@example.com");
    task(&world, &other_token, &agent, "m-theirs");

    let list = |params: Value| v1(&world, &caller_token, &agent, "ListTasks", params)["result"].clone();
    let ids = |page: &Value| -> Vec<String> {
        page["tasks"].as_array().unwrap().iter().map(|task| task["id"].as_str().unwrap().to_string()).collect()
    };
    // Three pages of two, most recently changed first, each counting all five.
    let mut seen = Vec::new();
    let mut token = Value::Null;
    for (expected, last) in [(2, false), (2, false), (1, true)] {
        let page = list(json!({ "pageSize": 2, "pageToken": token }));
        assert_eq!(page["totalSize"], 5, "{page}");
        assert_eq!(page["pageSize"], 2);
        assert_eq!(ids(&page).len(), expected, "{page}");
        assert_eq!(page["nextPageToken"] == "", last, "{page}");
        seen.extend(ids(&page));
        token = page["nextPageToken"].clone();
    }
    assert_eq!(seen[0], fifth, "the last changed first");
    assert_eq!(seen[1], first);
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 5, "{seen:?}");
    // Filters apply before paging: a page of one still counts every match.
    let submitted = list(json!({ "status": "TASK_STATE_SUBMITTED", "pageSize": 1 }));
    assert_eq!(submitted["totalSize"], 2, "{submitted}");
    assert_eq!(ids(&submitted).len(), 1);
    let rest =
        list(json!({ "status": "TASK_STATE_SUBMITTED", "pageSize": 1, "pageToken": submitted["nextPageToken"] }));
    let mut both = [ids(&submitted), ids(&rest)].concat();
    both.sort();
    let mut expected = vec![third.clone(), fourth.clone()];
    expected.sort();
    assert_eq!(both, expected);
    assert_eq!(rest["nextPageToken"], "");
    assert_eq!(ids(&list(json!({ "status": "TASK_STATE_WORKING" }))), vec![second.clone()]);
    assert_eq!(ids(&list(json!({ "status": 5 }))), vec![fifth.clone()], "a state by its number");
    assert_eq!(list(json!({ "status": "TASK_STATE_INPUT_REQUIRED" }))["totalSize"], 0);
    // A lapsed lease waits again, and is still worked on.
    world.node.platform.advance(31_000);
    assert_eq!(ids(&list(json!({ "status": "TASK_STATE_WORKING" }))), vec![second.clone()]);
    // The context, by either name of the field.
    let in_context = list(json!({ "context_id": context }));
    assert_eq!(in_context["totalSize"], 2, "{in_context}");
    assert_eq!(list(json!({ "contextId": "not-a-context" }))["totalSize"], 0);
    // Artifacts only when asked; history as long as asked.
    let completed = list(json!({ "status": "TASK_STATE_COMPLETED" }));
    assert_eq!(ids(&completed), vec![first.clone()]);
    assert!(completed["tasks"][0].get("artifacts").is_none(), "{completed}");
    let with_artifacts =
        list(json!({ "status": "TASK_STATE_COMPLETED", "includeArtifacts": true, "historyLength": 0 }));
    assert_eq!(with_artifacts["tasks"][0]["artifacts"][0]["parts"][0]["text"], "done", "{with_artifacts}");
    assert!(with_artifacts["tasks"][0].get("history").is_none(), "{with_artifacts}");
    // Changed at or after a moment.
    let updated = completed["tasks"][0]["status"]["timestamp"].as_str().unwrap().to_string();
    assert!(list(json!({ "statusTimestampAfter": updated }))["totalSize"].as_i64().unwrap() >= 2);
    assert_eq!(list(json!({ "statusTimestampAfter": "2999-01-01T00:00:00Z" }))["totalSize"], 0);
}

#[test]
fn the_sent_list_filters_by_the_state_each_message_is_shown_in() {
    let world = World::new();
    let (ben, ben_token) = world.person("ben@example.com");
    let (_, sender) = world.messenger(&ben);
    let agents: Vec<(String, String)> = (0..7).map(|_| world.messenger(&ben)).collect();
    let [
        (queued, _),
        (held, _),
        (lapsed, lapsed_token),
        (failing, failing_token),
        (expiring, _),
        (finished, finished_token),
        (leased, leased_token),
    ] = <[(String, String); 7]>::try_from(agents).unwrap();
    let claim = |token: &str, seconds: i64| {
        let claimed = world.call(
            "POST",
            "/api/agent-inbox/leases",
            Some(token),
            Some(json!({ "max": 1, "lease_seconds": seconds })),
        );
        body(&claimed)["messages"][0].clone()
    };
    world.send_message(&sender, &queued, "request", json!("waits"));
    world.send_message(&sender, &held, "request", json!("held"));
    assert_eq!(world.admin("POST", &format!("/api/agents/{held}/pause"), None).status, 200);
    world.send_message(&sender, &lapsed, "request", json!("lapses"));
    claim(&lapsed_token, 1);
    let policy = world.call(
        "PATCH",
        &format!("/api/agents/{failing}/messaging"),
        Some(&ben_token),
        Some(json!({ "maximum_attempts": 1 })),
    );
    assert_eq!(policy.status, 200, "{}", text(&policy));
    world.send_message(&sender, &failing, "request", json!("fails"));
    claim(&failing_token, 1);
    let expires = world.call("POST", "/api/agent-messages", Some(&sender), Some(json!({
        "recipient": expiring, "kind": "request", "content": "expires", "idempotency_key": "expires", "expires_in_seconds": 1 })));
    assert_eq!(expires.status, 202, "{}", text(&expires));
    for (content, action) in [("answered", "reply"), ("rejected", "reject"), ("acknowledged", "ack")] {
        let kind = if action == "ack" { "event" } else { "request" };
        world.send_message(&sender, &finished, kind, json!(content));
        let lease = claim(&finished_token, 30);
        let finishing = match action {
            "reply" => json!({ "fencing_token": lease["fencing_token"], "content": "ok" }),
            "reject" => json!({ "fencing_token": lease["fencing_token"], "reason": "Not mine." }),
            _ => json!({ "fencing_token": lease["fencing_token"] }),
        };
        let done = world.call(
            "POST",
            &format!("/api/agent-inbox/{}/{action}", lease["id"].as_str().unwrap()),
            Some(&finished_token),
            Some(finishing),
        );
        assert_eq!(done.status, 200, "{}", text(&done));
    }
    let canceled = world.send_message(&sender, &queued, "event", json!("canceled"));
    let cancel = format!("/api/agent-conversations/{}/cancel", canceled["conversation_id"].as_str().unwrap());
    assert_eq!(world.call("POST", &cancel, Some(&sender), None).status, 200);
    world.node.platform.advance(2_000);
    world.send_message(&sender, &leased, "request", json!("leased"));
    claim(&leased_token, 60);

    let listed = |query: &str| {
        let answered = world.call("GET", &format!("/api/agent-messages{query}"), Some(&sender), None);
        assert_eq!(answered.status, 200, "{query}: {}", text(&answered));
        body(&answered)
    };
    let everything = listed("?limit=100");
    let shown: Vec<(String, String, i64)> = everything["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| {
            (
                message["id"].as_str().unwrap().into(),
                message["state"].as_str().unwrap().into(),
                message["attempts"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(everything["total"], shown.len());
    let states: Vec<&str> = shown.iter().map(|(_, state, _)| state.as_str()).collect();
    for state in ["queued", "held", "failed", "expired", "answered", "rejected", "acknowledged", "canceled", "leased"] {
        assert!(states.contains(&state), "no message is {state}: {states:?}");
    }
    for state in [
        "queued",
        "held",
        "leased",
        "acknowledged",
        "answered",
        "rejected",
        "refused",
        "failed",
        "expired",
        "canceled",
        "delivered",
    ] {
        let filtered = listed(&format!("?state={state}"));
        let mut found: Vec<&str> =
            filtered["messages"].as_array().unwrap().iter().map(|message| message["id"].as_str().unwrap()).collect();
        let mut expected: Vec<&str> =
            shown.iter().filter(|(_, shown, _)| shown == state).map(|(id, _, _)| id.as_str()).collect();
        found.sort();
        expected.sort();
        assert_eq!(found, expected, "state={state}");
        assert_eq!(filtered["total"], expected.len());
    }
    let waiting = listed("?state=queued,held&attempted=true");
    let lapsed_again: Vec<&(String, String, i64)> =
        shown.iter().filter(|(_, state, attempts)| state == "queued" && *attempts > 0).collect();
    assert_eq!(waiting["total"], lapsed_again.len());
    assert_eq!(lapsed_again.len(), 1, "{shown:?}");
    let refused = world.call("GET", "/api/agent-messages?state=queued,done", Some(&sender), None);
    assert_eq!(refused.status, 400, "{}", text(&refused));
    let refused = world.call("GET", "/api/agent-messages?changed_since=yesterday", Some(&sender), None);
    assert_eq!(refused.status, 400, "{}", text(&refused));
    assert!(text(&refused).contains("changed_since"));
}

#[test]
fn the_card_asked_for_in_1_0_is_valid_1_0_and_carries_0_3_fields_only_for_0_3() {
    let (world, _, _, (agent, _)) = gateway();
    let path = format!("/a2a/{agent}/.well-known/agent-card.json");
    for asked in [request("GET", &path), request("GET", &path).header("a2a-version", "1.0")] {
        let answered = world.node.send(asked);
        assert_eq!(answered.status, 200, "{}", text(&answered));
        let card = body(&answered);
        for field in card.as_object().unwrap().keys() {
            assert!(AGENT_CARD_FIELDS_1_0.contains(&field.as_str()), "{field} is not a field of a 1.0 card: {card}");
        }
        assert_eq!(card["supportedInterfaces"][0]["protocolVersion"], "1.0");
        assert_eq!(card["supportedInterfaces"][1]["protocolVersion"], "0.3");
        assert!(card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"].is_string(), "{card}");
        assert_eq!(card["securityRequirements"][0]["schemes"]["bearer"]["list"], json!([]));
        assert_eq!(
            card["capabilities"],
            json!({ "streaming": true, "pushNotifications": true, "extendedAgentCard": false })
        );
        assert_eq!(answered.header("vary"), Some("A2A-Version"));
        assert!(answered.header("cache-control").is_some_and(|control| control.contains("max-age=")));
        assert!(answered.header("etag").is_some());
    }
    for asked in
        [request("GET", &path).header("a2a-version", "0.3"), request("GET", &format!("{path}?A2A-Version=0.3"))]
    {
        let card = body(&world.node.send(asked));
        assert!(card["url"].as_str().unwrap().ends_with(&format!("/a2a/{agent}")), "{card}");
        assert_eq!(card["preferredTransport"], "JSONRPC");
        assert_eq!(card["protocolVersion"], "0.3.0");
        assert_eq!(card["securitySchemes"]["bearer"]["type"], "http");
        assert_eq!(card["security"], json!([{ "bearer": [] }]));
        assert!(card.get("supportedInterfaces").is_none() && card.get("securityRequirements").is_none(), "{card}");
    }
}

#[test]
fn the_endpoint_answers_with_a_trailing_slash() {
    let (world, _, (_, caller_token), (agent, _)) = gateway();
    let (status, sent) = rpc(
        &world,
        Some(&caller_token),
        &format!("/a2a/{agent}/"),
        Some("1.0"),
        "SendMessage",
        json!({ "message": message("hi", "m-1") }),
    );
    assert_eq!(status, 200, "{sent}");
    let task_id = sent["result"]["task"]["id"].as_str().unwrap();
    let (_, got) =
        rpc(&world, Some(&caller_token), &format!("/a2a/{agent}/"), Some("1.0"), "GetTask", json!({ "id": task_id }));
    assert_eq!(got["result"]["id"], task_id);
    let (status, node) = rpc(&world, None, "/a2a/", Some("1.0"), "GetTask", json!({ "id": task_id }));
    assert_eq!(status, 200);
    assert_a2a_error(&node, -32004, "UNSUPPORTED_OPERATION");
    // Only one slash, and only on the endpoints.
    assert_eq!(world.node.send(request("POST", &format!("/a2a/{agent}//")).json(json!({}))).status, 404);
    assert_eq!(world.node.send(request("GET", "/api/me/").bearer(&caller_token)).status, 404);
}

#[test]
fn the_node_card_names_only_the_agents_their_owners_listed_there() {
    let world = World::new();
    let (ben, ben_token) = world.person("ben@example.com");
    let (cy, cy_token) = world.person("cy@example.com");
    let named = |name: &str, sponsor: &str| {
        let created = world.admin(
            "POST",
            "/api/agents",
            Some(json!({ "name": name, "sponsor": sponsor, "capabilities": ["agent.messaging"], "mailboxes": [] })),
        );
        assert_eq!(created.status, 201, "{}", text(&created));
        body(&created)["agent"]["id"].as_str().unwrap().to_string()
    };
    let payroll = named("Payroll assistant", &ben);
    let helpdesk = named("Helpdesk", &ben);
    let private = named("Private errands", &cy);
    let node_card = || {
        let answered = world.node.send(request("GET", "/.well-known/agent-card.json"));
        assert_eq!(answered.status, 200, "{}", text(&answered));
        assert_eq!(answered.header("vary"), Some("A2A-Version"));
        body(&answered)
    };
    let card = node_card();
    for field in card.as_object().unwrap().keys() {
        assert!(AGENT_CARD_FIELDS_1_0.contains(&field.as_str()), "{field}: {card}");
    }
    assert!(card["supportedInterfaces"][0]["url"].as_str().unwrap().ends_with("/a2a"), "{card}");
    let shown = card.to_string();
    for secret in [payroll.as_str(), helpdesk.as_str(), private.as_str(), "Payroll", "Helpdesk", "Private errands"] {
        assert!(!shown.contains(secret), "{secret} is the owner's to give: {card}");
    }
    assert_eq!(card["skills"].as_array().map(Vec::len), Some(1), "only where agents' cards are: {card}");
    // The owner lists one; another person cannot list someone else's.
    let messaging = format!("/api/agents/{helpdesk}/messaging");
    assert_eq!(body(&world.call("GET", &messaging, Some(&ben_token), None))["listed_on_node_card"], false);
    let listed = world.call("PATCH", &messaging, Some(&ben_token), Some(json!({ "listed_on_node_card": true })));
    assert_eq!(listed.status, 200, "{}", text(&listed));
    assert_eq!(body(&listed)["listed_on_node_card"], true);
    assert_eq!(world.last_audit_entry()["detail"]["listed_on_node_card"], true, "{}", world.last_audit_entry());
    let theirs = world.call("PATCH", &messaging, Some(&cy_token), Some(json!({ "listed_on_node_card": false })));
    assert!(theirs.status == 403 || theirs.status == 404, "{}", text(&theirs));
    let _ = cy;
    let card = node_card();
    let skills = card["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 2, "{card}");
    assert_eq!(skills[1]["id"], helpdesk.as_str());
    assert_eq!(skills[1]["name"], "Helpdesk");
    assert!(
        skills[1]["description"].as_str().unwrap().contains(&format!("/a2a/{helpdesk}/.well-known/agent-card.json"))
    );
    assert!(!card.to_string().contains(&payroll) && !card.to_string().contains(&private), "{card}");
    // Changing another part of the policy keeps the listing; revoking the agent ends it.
    world.call("PATCH", &messaging, Some(&ben_token), Some(json!({ "rate_per_minute": 5 })));
    assert_eq!(node_card()["skills"].as_array().map(Vec::len), Some(2));
    assert_eq!(world.admin("POST", &format!("/api/agents/{helpdesk}/revoke"), None).status, 200);
    assert_eq!(node_card()["skills"].as_array().map(Vec::len), Some(1));
    // In 0.3 when asked, with the node's endpoint as its url.
    let legacy = body(&world.node.send(request("GET", "/.well-known/agent-card.json").header("a2a-version", "0.3")));
    assert!(legacy["url"].as_str().unwrap().ends_with("/a2a"), "{legacy}");
    // The node's endpoint reads requests as an agent's does, and takes no tasks.
    let (status, sent) =
        rpc(&world, None, "/a2a", Some("1.0"), "SendMessage", json!({ "message": message("hi", "m-1") }));
    assert_eq!(status, 200);
    assert_a2a_error(&sent, -32004, "UNSUPPORTED_OPERATION");
    assert!(sent["error"]["message"].as_str().unwrap().contains("/a2a/{agentId}"), "{sent}");
}
