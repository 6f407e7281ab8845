//! A2A streaming (issue 29, decision 0036): a streamed send and a subscription
//! answer server-sent events, the task first; the stream listens on the
//! caller's own topic, admitted by its listening route, where a claim and the
//! answer are told; each reading of the task tells what changed since the last
//! (working, the reply as an artifact, then the state) and ends the stream once
//! the task is finished; a finished task
//! cannot be subscribed to, and another's cannot be at all.

use mailroom::core::events::Topic;
use mailroom::core::http::{Following, Response, Surface, Told};
use mailroom::testing::{RequestExt, request};
use serde_json::{Value, json};

use crate::support::{World, a2a_caller_and_agent as gateway, body, followed_after, sse_events, text};

fn message(text: &str, id: &str) -> Value {
    json!({ "messageId": id, "role": "ROLE_USER", "parts": [{ "text": text }] })
}

/// A call to `agent`'s endpoint as `token`, in `version`.
fn call(world: &World, token: &str, agent: &str, version: &str, method: &str, params: Value) -> Response {
    let asked = request("POST", &format!("/a2a/{agent}"))
        .json(json!({ "jsonrpc": "2.0", "id": 9, "method": method, "params": params }))
        .bearer(token)
        .header("a2a-version", version);
    world.node.send(asked)
}

/// Reads the followed task again, as the adapter does, and what the follower
/// makes of it: (events, finished).
fn read_again(world: &World, following: &Following) -> (Vec<Value>, bool) {
    followed_after(world, following, None)
}

/// The agent claims its one waiting request and answers it.
fn answer(world: &World, agent_token: &str, task_id: &str, content: &str) {
    let leased = world.claim(agent_token, 1);
    assert_eq!(leased[0]["id"], task_id);
    reply(world, agent_token, task_id, &leased[0]["fencing_token"], content);
}

fn reply(world: &World, agent_token: &str, task_id: &str, fencing_token: &Value, content: &str) {
    let replied = world.call(
        "POST",
        &format!("/api/agent-inbox/{task_id}/reply"),
        Some(agent_token),
        Some(json!({ "fencing_token": fencing_token, "content": content })),
    );
    assert_eq!(replied.status, 200, "{}", text(&replied));
}

#[test]
fn a_streamed_send_opens_with_the_task_and_follows_it_to_the_reply_then_ends() {
    let (world, (caller, caller_token), (agent, agent_token)) = gateway();
    let sent =
        call(&world, &caller_token, &agent, "1.0", "SendStreamingMessage", json!({ "message": message("hi", "m-1") }));
    assert_eq!(sent.status, 200, "{}", text(&sent));
    let opening = sse_events(&sent);
    assert_eq!(opening.len(), 1);
    assert_eq!(opening[0]["id"], 9, "every event answers the call");
    let task = &opening[0]["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_SUBMITTED");
    let task_id = task["id"].as_str().unwrap().to_string();
    // It listens where the answer is told: the calling agent's own inbox,
    // admitted by its listening route, as the caller.
    let following = sent.follow.clone().expect("a stream that follows the task");
    let [(listening, listener)] = following.listeners.as_slice() else { panic!("one listener: {following:?}") };
    assert_eq!(listening.topic, Topic::Agent(caller.clone()));
    assert_eq!(listening.actor, caller);
    assert_eq!(listener.path, "/api/agent-inbox/live");
    assert_eq!(following.surface, Surface::A2a);
    // Only what tells of the task wakes it.
    let told = |object| Told { topic: "agent:x", kind: "reply_to_agent_message", object: Some(object) };
    assert_eq!(following.follower.readings(Some(&told(&task_id))).len(), 1);
    assert!(following.follower.readings(Some(&told("amg_other"))).is_empty());
    // Nothing changed yet: a reading tells nothing and the stream goes on.
    assert_eq!(read_again(&world, &following), (Vec::new(), false));
    // Claimed: the requester's topic is told of its request, and the stream
    // says the task is being worked on.
    world.node.events.take();
    let leased = world.claim(&agent_token, 1);
    let told_requester: Vec<_> = world
        .node
        .events
        .take()
        .into_iter()
        .filter(|event| event.topic == Topic::Agent(caller.clone()))
        .map(|event| event.object)
        .collect();
    assert_eq!(told_requester, vec![Some(task_id.clone())]);
    let (told, finished) = read_again(&world, &following);
    assert!(!finished);
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0]["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_WORKING");
    reply(&world, &agent_token, &task_id, &leased[0]["fencing_token"], "done");
    let (told, finished) = read_again(&world, &following);
    assert!(finished, "a completed task ends the stream");
    assert_eq!(told.len(), 2, "{told:?}");
    let artifact = &told[0]["result"]["artifactUpdate"];
    assert_eq!(artifact["taskId"], task_id.as_str());
    assert_eq!(artifact["artifact"]["parts"], json!([{ "text": "done" }]));
    assert_eq!(artifact["lastChunk"], true);
    assert_eq!(told[1]["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED");
    // Read again, nothing more is told.
    assert_eq!(read_again(&world, &following).0, Vec::<Value>::new());
    // A retry of the answered send is the same task, finished: the stream is
    // the task alone.
    let retried =
        call(&world, &caller_token, &agent, "1.0", "SendStreamingMessage", json!({ "message": message("hi", "m-1") }));
    let retried_events = sse_events(&retried);
    assert_eq!(retried_events[0]["result"]["task"]["id"], task_id.as_str());
    assert_eq!(retried_events[0]["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(retried.follow.is_none());
}

#[test]
fn a_0_3_stream_speaks_0_3_and_marks_its_last_update_final() {
    let (world, (_, caller_token), (agent, agent_token)) = gateway();
    let legacy = json!({ "message": { "kind": "message", "messageId": "m-1", "role": "user", "parts": [{ "kind": "text", "text": "hi" }] } });
    let sent = call(&world, &caller_token, &agent, "0.3", "message/stream", legacy);
    let opening = sse_events(&sent);
    assert_eq!(opening[0]["result"]["kind"], "task");
    assert_eq!(opening[0]["result"]["status"]["state"], "submitted");
    let task_id = opening[0]["result"]["id"].as_str().unwrap().to_string();
    let following = sent.follow.clone().expect("a stream");
    // Resubscribing opens another stream on the same task, the task first.
    let resubscribed = call(&world, &caller_token, &agent, "0.3", "tasks/resubscribe", json!({ "id": task_id }));
    assert_eq!(sse_events(&resubscribed)[0]["result"]["id"], task_id.as_str());
    assert!(resubscribed.follow.is_some());
    answer(&world, &agent_token, &task_id, "done");
    let (told, finished) = read_again(&world, &following);
    assert!(finished);
    assert_eq!(told[0]["result"]["kind"], "artifact-update");
    assert_eq!(told[0]["result"]["artifact"]["parts"], json!([{ "kind": "text", "text": "done" }]));
    assert_eq!(told[1]["result"]["kind"], "status-update");
    assert_eq!(told[1]["result"]["status"]["state"], "completed");
    assert_eq!(told[1]["result"]["final"], true);
}

#[test]
fn a_subscription_starts_with_the_task_and_a_finished_or_foreign_task_is_refused() {
    let (world, (_, caller_token), (agent, agent_token)) = gateway();
    let sent = call(&world, &caller_token, &agent, "1.0", "SendMessage", json!({ "message": message("hi", "m-1") }));
    let task_id = body(&sent)["result"]["task"]["id"].as_str().unwrap().to_string();
    let subscribed = call(&world, &caller_token, &agent, "1.0", "SubscribeToTask", json!({ "id": task_id }));
    let opening = sse_events(&subscribed);
    assert_eq!(opening[0]["result"]["task"]["id"], task_id.as_str(), "the task is the first event (1.0 §3.1.6)");
    // Another caller's task is not found, as GetTask has it.
    let (ben, _) = world.person("carol@example.com");
    let (_, stranger_token) = world.messenger(&ben);
    let foreign = body(&call(&world, &stranger_token, &agent, "1.0", "SubscribeToTask", json!({ "id": task_id })));
    assert_eq!(foreign["error"]["code"], -32001, "{foreign}");
    // A finished task: an immediate error, not a stream.
    answer(&world, &agent_token, &task_id, "done");
    let finished = call(&world, &caller_token, &agent, "1.0", "SubscribeToTask", json!({ "id": task_id }));
    assert_eq!(finished.header("content-type").map(|media| media.starts_with("application/json")), Some(true));
    let refused = body(&finished);
    assert_eq!(refused["error"]["code"], -32004, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("TASK_STATE_COMPLETED"), "{refused}");
    // A parameter missing is named.
    let unnamed = body(&call(&world, &caller_token, &agent, "1.0", "SubscribeToTask", json!({})));
    assert_eq!(unnamed["error"]["code"], -32602, "{unnamed}");
}

#[test]
fn a_stream_whose_caller_can_no_longer_read_the_task_says_so_and_ends() {
    let (world, (caller, caller_token), (agent, _)) = gateway();
    let sent =
        call(&world, &caller_token, &agent, "1.0", "SendStreamingMessage", json!({ "message": message("hi", "m-1") }));
    let following = sent.follow.clone().expect("a stream");
    assert_eq!(world.admin("POST", &format!("/api/agents/{caller}/revoke"), None).status, 200);
    let (told, finished) = read_again(&world, &following);
    assert!(finished);
    assert_eq!(told[0]["error"]["code"], -32600, "{told:?}");
    assert!(told[0].get("result").is_none());
    // A listener the hub closes while the task goes on (too many streams)
    // ends the stream with the hub's reason, as an error answering the call.
    let closed: Value = serde_json::from_str(&following.follower.closed("too many of your streams")).unwrap();
    assert_eq!(closed["id"], 9);
    assert_eq!(closed["error"]["code"], -32600);
    assert!(closed["error"]["message"].as_str().unwrap().contains("too many of your streams"), "{closed}");
}

#[test]
fn the_node_endpoint_streams_nothing_it_takes_no_tasks() {
    let (world, (_, caller_token), (agent, _)) = gateway();
    for (method, params) in [
        ("SendStreamingMessage", json!({ "message": message("hi", "m-1") })),
        ("SubscribeToTask", json!({ "id": "amg_01M8MECXYJD8V8NXZMYC8H1337" })),
    ] {
        let asked = request("POST", "/a2a")
            .json(json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }))
            .bearer(&caller_token)
            .header("a2a-version", "1.0");
        let answered = body(&world.node.send(asked));
        assert_eq!(answered["error"]["code"], -32004, "{answered}");
        assert!(answered["error"]["message"].as_str().unwrap().contains("/a2a/{agentId}"), "{answered}");
    }
    // An agent's card says it streams; the node's does not.
    let card = body(&world.node.send(request("GET", &format!("/a2a/{agent}/.well-known/agent-card.json"))));
    assert_eq!(card["capabilities"]["streaming"], true);
    let node_card = body(&world.node.send(request("GET", "/.well-known/agent-card.json")));
    assert_eq!(node_card["capabilities"]["streaming"], false);
}
