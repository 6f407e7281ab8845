//! Agent messaging (SPEC §10): sending once per key, fenced leases, policy at
//! delivery, conversations, the owner plane, the feature flag and the A2A
//! gateway, against the same SQLite the migrations build.

use mailroom::testing::{RequestExt, request};
use mailroom_contract::{Feature, registry};
use serde_json::{Value, json};

use crate::support::*;

/// A sponsor with two messaging agents: (world, sponsor id, sponsor token,
/// (sender id, sender credential), (receiver id, receiver credential)).
fn pair() -> (World, String, String, (String, String), (String, String)) {
    let world = World::new();
    let (ben, ben_token) = world.person("ben@example.com");
    let sender = world.messenger(&ben);
    let receiver = world.messenger(&ben);
    (world, ben, ben_token, sender, receiver)
}

fn call(
    world: &World,
    token: &str,
    method: &str,
    path: &str,
    payload: Option<Value>,
) -> mailroom::core::http::Response {
    world.call(method, path, Some(token), payload)
}

fn lease_call(world: &World, token: &str, id: &str, action: &str, payload: Value) -> mailroom::core::http::Response {
    call(world, token, "POST", &format!("/api/agent-inbox/{id}/{action}"), Some(payload))
}

fn message(world: &World, token: &str, id: &str) -> Value {
    let found = call(world, token, "GET", &format!("/api/agent-messages/{id}"), None);
    assert_eq!(found.status, 200, "{}", text(&found));
    body(&found)
}

#[test]
fn off_by_default_every_route_of_the_feature_refuses_and_its_tools_are_in_no_catalogue() {
    let world = World::without_agent_network();
    let (ben, ben_token) = world.person("ben@example.com");
    let (agent, credential) = world.messenger(&ben);
    let mut walked = 0;
    for route in registry().routes().iter().filter(|route| route.feature == Some(Feature::AgentNetwork)) {
        let path = route
            .path
            .replace(":agentId", &agent)
            .replace(":agentMessageId", "amg_01M8MECXYJD8V8NXZMYC8H1337")
            .replace(":conversationId", "cnv_01M8MECXYJD8V8NXZMYC8H1337");
        let payload = route.request.map(|_| json!({}));
        for token in [Some(credential.as_str()), Some(ben_token.as_str()), None] {
            let response = world.call(route.method.as_str(), &path, token, payload.clone());
            assert_refused(&response, 404, "feature_disabled");
            assert!(text(&response).contains("FEATURE_AGENT_NETWORK"), "the fix names the switch: {}", text(&response));
        }
        walked += 1;
    }
    assert!(walked >= 17, "{walked} routes walked");
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM agent_messages"), 0, "nothing stored");

    for token in [&credential, &ben_token] {
        let listed =
            world.call("POST", "/mcp", Some(token), Some(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" })));
        let tools: Vec<String> = body(&listed)["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_string())
            .collect();
        assert!(token == &credential || !tools.is_empty(), "a person still has tools");
        assert!(!tools.iter().any(|tool| tool.contains("agent_message") || tool.contains("inbox")), "{tools:?}");
        let called = world.call(
            "POST",
            "/mcp",
            Some(token),
            Some(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": { "name": "list_agent_inbox", "arguments": {} } })),
        );
        assert_eq!(body(&called)["error"]["code"], -32602, "no tool by that name: {}", text(&called));
    }
}

#[test]
fn sends_with_one_key_at_once_all_answer_the_original_and_another_body_is_refused_naming_it() {
    let (world, _, _, (_, sender_token), (receiver, _)) = pair();
    let sending = |key: &str, content: Value| {
        request("POST", "/api/agent-messages")
            .bearer(&sender_token)
            .json(json!({ "recipient": receiver, "kind": "request", "content": content, "idempotency_key": key }))
    };
    // Four at once, each reading before any commits: all four see no message
    // under the key, and three lose the race to store one.
    let content = json!({ "text": "37 + 58?", "numbers": [37, 58] });
    let answers = world.node.send_together((0..4).map(|_| sending("order-4471", content.clone())).collect());
    for answer in &answers {
        assert_eq!(answer.status, 202, "{}", text(answer));
    }
    let ids: Vec<Value> = answers.iter().map(|answer| body(answer)["id"].clone()).collect();
    assert!(ids.iter().all(|id| id == &ids[0]), "every one answers the original: {ids:?}");
    let (repeats, stored): (Vec<_>, Vec<_>) = answers.iter().partition(|answer| body(answer)["deduplicated"] == true);
    assert_eq!((stored.len(), repeats.len()), (1, 3), "one stored it, three repeated it");
    let count = |sql: &str| world.node.database.count(sql);
    assert_eq!(count("SELECT COUNT(*) FROM agent_messages"), 1);
    assert_eq!(count("SELECT COUNT(*) FROM agent_conversations"), 1, "a loser's new conversation was never stored");
    // Each call is recorded once, as what it did.
    assert_eq!(count("SELECT COUNT(*) FROM audit_entries WHERE action = 'send_agent_message' AND outcome = 'ok'"), 4);
    assert_eq!(count("SELECT COUNT(*) FROM audit_entries WHERE detail LIKE '%\"deduplicated\":true%'"), 3);
    // Only a call that lost the race takes more than two round trips: its
    // failed commit, then the read and commit of its repeat.
    assert_eq!(stored[0].round_trips, 2);
    assert!(
        repeats.iter().all(|answer| answer.round_trips == 4),
        "{:?}",
        answers.iter().map(|a| a.round_trips).collect::<Vec<_>>()
    );

    // The same body in another spelling is the same body: keys in another
    // order, the default expiry written out.
    let mut spelled = json!({ "recipient": receiver, "kind": "request", "idempotency_key": "order-4471",
                              "content": { "numbers": [37, 58], "text": "37 + 58?" },
                              "expires_in_seconds": mailroom_contract::api::DEFAULT_MESSAGE_EXPIRY_SECONDS });
    let again = world.node.send(request("POST", "/api/agent-messages").bearer(&sender_token).json(spelled.clone()));
    assert_eq!((again.status, body(&again)["id"].clone()), (202, ids[0].clone()), "{}", text(&again));
    spelled["expires_in_seconds"] = json!(60);
    let shorter = world.node.send(request("POST", "/api/agent-messages").bearer(&sender_token).json(spelled));
    assert_refused(&shorter, 409, "idempotency_key_reused");

    // Another body racing under one key: one is stored, the other refused,
    // naming the message that won.
    let answers =
        world.node.send_together(vec![sending("order-4472", json!("first")), sending("order-4472", json!("second"))]);
    let (won, lost): (Vec<_>, Vec<_>) = answers.iter().partition(|answer| answer.status == 202);
    assert_eq!((won.len(), lost.len()), (1, 1), "{:?}", answers.iter().map(text).collect::<Vec<_>>());
    assert_refused(lost[0], 409, "idempotency_key_reused");
    let winner = body(won[0])["id"].as_str().unwrap().to_string();
    assert!(text(lost[0]).contains(&winner), "the refusal names the original: {}", text(lost[0]));
    assert_eq!(count("SELECT COUNT(*) FROM agent_messages"), 2);
}

#[test]
fn a_send_is_stored_once_per_key_and_the_sender_is_always_the_caller() {
    let (world, ben, ben_token, (sender, sender_token), (receiver, _)) = pair();
    let send = |token: &str, content: Value| {
        call(
            &world,
            token,
            "POST",
            "/api/agent-messages",
            Some(
                json!({ "recipient": receiver, "kind": "request", "content": content, "idempotency_key": "order-4471" }),
            ),
        )
    };
    let first = send(&sender_token, json!({ "text": "37 + 58?" }));
    assert_eq!(first.status, 202, "{}", text(&first));
    let first = body(&first);
    assert_eq!(first["sender"], sender.as_str());
    assert_eq!(first["state"], "queued");
    assert_eq!(first["deduplicated"], false);

    let again = send(&sender_token, json!({ "text": "37 + 58?" }));
    assert_eq!(again.status, 202);
    assert_eq!(body(&again)["id"], first["id"], "the same key and body answer the original");
    assert_eq!(body(&again)["deduplicated"], true);
    assert_refused(&send(&sender_token, json!({ "text": "38 + 58?" })), 409, "idempotency_key_reused");
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM agent_messages"), 1);

    // The same key is another sender's own: keys are per sender. A person sends as themselves.
    let theirs = send(&ben_token, json!("hello"));
    assert_eq!(theirs.status, 202, "{}", text(&theirs));
    assert_eq!(body(&theirs)["sender"], ben.as_str());

    // No field names a sender: one sent is refused, naming it.
    let spoofed = call(
        &world,
        &sender_token,
        "POST",
        "/api/agent-messages",
        Some(json!({ "recipient": receiver, "kind": "event", "content": 1, "idempotency_key": "x", "sender": ben })),
    );
    assert_refused(&spoofed, 400, "invalid_body");
    assert!(text(&spoofed).contains("sender"), "{}", text(&spoofed));

    // Limits: an unknown recipient, content over 256 KiB, an expiry past 14 days.
    let to = |recipient: &str, content: Value, extra: Value| {
        let mut payload = json!({ "recipient": recipient, "kind": "event", "content": content, "idempotency_key": format!("k{}", extra) });
        payload.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        call(&world, &sender_token, "POST", "/api/agent-messages", Some(payload))
    };
    assert_refused(&to("agt_01M8MECXYJD8V8NXZMYC8H1337", json!(1), json!({})), 404, "not_found");
    assert_refused(&to(&receiver, json!("x".repeat(256 * 1024)), json!({})), 400, "content_too_large");
    assert_refused(&to(&receiver, json!(1), json!({ "expires_in_seconds": 15 * 86400 })), 400, "out_of_range");
}

#[test]
fn a_lease_carries_a_growing_fencing_token_and_only_the_live_one_finishes_a_message() {
    let (world, _, _, (_, sender_token), (receiver, receiver_token)) = pair();
    let sent = world.send_message(&sender_token, &receiver, "request", json!("37 + 58?"));
    let id = sent["id"].as_str().unwrap();

    let first = world.claim(&receiver_token, 5);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0]["state"], "leased");
    assert_eq!(first[0]["fencing_token"], 1);
    assert_eq!(first[0]["attempts"], 1);
    assert!(world.claim(&receiver_token, 5).is_empty(), "a live lease is not granted twice");
    assert_eq!(message(&world, &sender_token, id)["state"], "leased", "the sender sees it leased");

    // The lease lapses: the message is waiting again, and the next grant's token is larger.
    world.node.platform.advance(31_000);
    assert_eq!(message(&world, &sender_token, id)["state"], "queued");
    let second = world.claim(&receiver_token, 1);
    assert_eq!(second[0]["fencing_token"], 2);
    assert_eq!(second[0]["attempts"], 2);

    // The first holder's token is stale for every way of finishing it.
    for (action, payload) in [
        ("ack", json!({ "fencing_token": 1 })),
        ("renew", json!({ "fencing_token": 1 })),
        ("reply", json!({ "fencing_token": 1, "content": 95 })),
        ("reject", json!({ "fencing_token": 1, "reason": "late" })),
    ] {
        assert_refused(&lease_call(&world, &receiver_token, id, action, payload), 409, "stale_lease");
    }
    // Renewing extends the lease, never past twelve hours after its grant.
    let renewed =
        lease_call(&world, &receiver_token, id, "renew", json!({ "fencing_token": 2, "lease_seconds": 43_200 }));
    assert_eq!(renewed.status, 200, "{}", text(&renewed));
    world.node.platform.advance(6 * 3600 * 1000);
    let renewed =
        lease_call(&world, &receiver_token, id, "renew", json!({ "fencing_token": 2, "lease_seconds": 43_200 }));
    let lapses = body(&renewed)["lease_expires_at"].as_str().unwrap().to_string();
    assert_eq!(
        message(&world, &sender_token, id)["lease_expires_at"].as_str().unwrap(),
        lapses,
        "the answer states what was stored"
    );
    world.node.platform.advance(6 * 3600 * 1000 - 1_000);
    assert_eq!(message(&world, &sender_token, id)["state"], "leased");
    world.node.platform.advance(32_000);
    assert_eq!(message(&world, &sender_token, id)["state"], "queued", "12 hours in all, renewals included");

    // Acknowledged with the live token, it is finished: never delivered again.
    let third = world.claim(&receiver_token, 1);
    let token = third[0]["fencing_token"].clone();
    let acked = lease_call(&world, &receiver_token, id, "ack", json!({ "fencing_token": token }));
    assert_eq!(body(&acked)["state"], "acknowledged", "{}", text(&acked));
    assert_refused(
        &lease_call(&world, &receiver_token, id, "ack", json!({ "fencing_token": token })),
        409,
        "stale_lease",
    );
    world.node.platform.advance(3_600_000);
    assert!(world.claim(&receiver_token, 5).is_empty(), "an acknowledged message is never delivered again");
    // Only the recipient works its inbox: the sender cannot acknowledge.
    assert_refused(&lease_call(&world, &sender_token, id, "ack", json!({ "fencing_token": token })), 404, "not_found");
}

#[test]
fn a_message_leased_as_many_times_as_the_policy_allows_ends_failed_visibly() {
    let (world, _, ben_token, (_, sender_token), (receiver, receiver_token)) = pair();
    let patched = call(
        &world,
        &ben_token,
        "PATCH",
        &format!("/api/agents/{receiver}/messaging"),
        Some(json!({ "maximum_attempts": 3 })),
    );
    assert_eq!(patched.status, 200, "{}", text(&patched));
    let id = world.send_message(&sender_token, &receiver, "event", json!({ "deployed": "v42" }))["id"]
        .as_str()
        .unwrap()
        .to_string();
    for attempt in 1..=3 {
        let leased = world.claim(&receiver_token, 1);
        assert_eq!(leased[0]["attempts"], attempt);
        world.node.platform.advance(31_000);
    }
    let failed = message(&world, &sender_token, &id);
    assert_eq!(failed["state"], "failed", "{failed}");
    let owner = body(&call(&world, &ben_token, "GET", &format!("/api/agents/{receiver}/messaging"), None));
    assert_eq!(owner["waiting"], 0, "a failed message is not counted as waiting: {owner}");
    assert!(failed["reason"].as_str().unwrap().contains("3 times"), "{failed}");
    assert!(world.claim(&receiver_token, 1).is_empty());
    world.node.run_every_minute();
    let stored = world
        .node
        .database
        .count(&format!("SELECT COUNT(*) FROM agent_messages WHERE id = '{id}' AND state = 'failed'"));
    assert_eq!(stored, 1, "the sweep records it");
}

#[test]
fn a_reply_answers_the_request_in_its_conversation_and_reaches_the_requesting_agent() {
    let (world, ben, ben_token, (sender, sender_token), (receiver, receiver_token)) = pair();
    let sent = world.send_message(&sender_token, &receiver, "request", json!({ "text": "37 + 58?" }));
    let (id, conversation) = (sent["id"].as_str().unwrap(), sent["conversation_id"].as_str().unwrap());
    let leased = world.claim(&receiver_token, 1);
    let token = leased[0]["fencing_token"].clone();
    let replied =
        lease_call(&world, &receiver_token, id, "reply", json!({ "fencing_token": token, "content": { "sum": 95 } }));
    assert_eq!(replied.status, 200, "{}", text(&replied));
    assert_eq!(body(&replied)["state"], "answered");

    let seen = message(&world, &sender_token, id);
    assert_eq!(seen["state"], "answered");
    assert_eq!(seen["reply"]["content"], json!({ "sum": 95 }));
    // The reply waits in the requester's inbox, in the same conversation.
    let reply = world.claim(&sender_token, 5);
    assert_eq!(reply.len(), 1);
    assert_eq!(reply[0]["kind"], "reply");
    assert_eq!(reply[0]["in_reply_to"], id);
    assert_eq!(reply[0]["conversation_id"], conversation);
    assert_eq!(reply[0]["sender"], receiver.as_str());

    let history = call(&world, &sender_token, "GET", &format!("/api/agent-conversations/{conversation}"), None);
    let history = body(&history);
    assert_eq!(history["messages"].as_array().unwrap().len(), 2);
    let mut participants = vec![sender.clone(), receiver.clone()];
    participants.sort();
    assert_eq!(history["participants"], json!(participants));
    // The sponsor of the participants reads it; someone else does not learn it exists.
    assert_eq!(call(&world, &ben_token, "GET", &format!("/api/agent-conversations/{conversation}"), None).status, 200);
    let cancel = format!("/api/agent-conversations/{conversation}/cancel");
    assert_refused(&call(&world, &ben_token, "POST", &cancel, None), 403, "not_a_participant");
    let listed = world.admin("GET", "/api/agents", None);
    assert!(
        body(&listed)["agents"].as_array().unwrap().iter().any(|agent| agent["last_seen_at"].is_string()),
        "{}",
        text(&listed)
    );
    let (_, stranger_token) = world.person("eve@example.com");
    assert_refused(
        &call(&world, &stranger_token, "GET", &format!("/api/agent-conversations/{conversation}"), None),
        404,
        "not_found",
    );
    assert_refused(&call(&world, &stranger_token, "GET", &format!("/api/agent-messages/{id}"), None), 404, "not_found");
    let listed = call(&world, &ben_token, "GET", &format!("/api/agent-conversations?agent={receiver}"), None);
    assert_eq!(body(&listed)["conversations"][0]["id"], conversation, "{}", text(&listed));
    let _ = ben;

    // An event is acknowledged, not answered; a rejection carries its reason.
    let event = world.send_message(&sender_token, &receiver, "event", json!("deployed"));
    let leased = world.claim(&receiver_token, 1);
    let token = leased[0]["fencing_token"].clone();
    let event_id = event["id"].as_str().unwrap();
    assert_refused(
        &lease_call(&world, &receiver_token, event_id, "reply", json!({ "fencing_token": token, "content": 1 })),
        409,
        "event_not_answerable",
    );
    let rejected = lease_call(
        &world,
        &receiver_token,
        event_id,
        "reject",
        json!({ "fencing_token": token, "reason": "Not for me." }),
    );
    assert_eq!(body(&rejected)["state"], "rejected");
    assert_eq!(message(&world, &sender_token, event_id)["reason"], "Not for me.");
}

#[test]
fn canceling_a_conversation_cancels_what_is_unfinished_and_makes_its_lease_stale() {
    let (world, _, _, (_, sender_token), (receiver, receiver_token)) = pair();
    let sent = world.send_message(&sender_token, &receiver, "request", json!("long job"));
    let (id, conversation) = (sent["id"].as_str().unwrap(), sent["conversation_id"].as_str().unwrap());
    let token = world.claim(&receiver_token, 1)[0]["fencing_token"].clone();
    let canceled =
        call(&world, &sender_token, "POST", &format!("/api/agent-conversations/{conversation}/cancel"), None);
    assert_eq!(canceled.status, 200, "{}", text(&canceled));
    assert_eq!(body(&canceled)["messages"][0]["state"], "canceled");
    assert_refused(
        &lease_call(&world, &receiver_token, id, "reply", json!({ "fencing_token": token, "content": 1 })),
        409,
        "stale_lease",
    );
    assert_eq!(message(&world, &sender_token, id)["state"], "canceled");
    assert_refused(
        &call(&world, &sender_token, "POST", &format!("/api/agent-conversations/{conversation}/cancel"), None),
        409,
        "conversation_canceled",
    );
    let more = call(
        &world,
        &sender_token,
        "POST",
        "/api/agent-messages",
        Some(
            json!({ "recipient": receiver, "kind": "event", "content": 1, "idempotency_key": "after", "conversation_id": conversation }),
        ),
    );
    assert_refused(&more, 409, "conversation_canceled");
}

#[test]
fn policy_applies_at_delivery_and_the_held_or_refused_state_is_visible_to_sender_and_owner() {
    let (world, ben, ben_token, (sender, sender_token), (receiver, receiver_token)) = pair();
    let policy = |payload: Value| {
        let patched = call(&world, &ben_token, "PATCH", &format!("/api/agents/{receiver}/messaging"), Some(payload));
        assert_eq!(patched.status, 200, "{}", text(&patched));
        body(&patched)
    };
    let id = |sent: Value| sent["id"].as_str().unwrap().to_string();

    // Paused: it receives nothing, and what waits for it is held because of it.
    assert_eq!(call(&world, &ben_token, "POST", &format!("/api/agents/{receiver}/pause"), None).status, 200);
    let held = id(world.send_message(&sender_token, &receiver, "event", json!(1)));
    let seen = message(&world, &sender_token, &held);
    assert_eq!((seen["state"].clone(), seen["held_because"].clone()), (json!("held"), json!("paused")));
    assert_eq!(lease_call(&world, &receiver_token, &held, "ack", json!({ "fencing_token": 0 })).status, 403, "paused");
    assert_eq!(call(&world, &ben_token, "POST", &format!("/api/agents/{receiver}/resume"), None).status, 200);
    assert_eq!(message(&world, &sender_token, &held)["state"], "queued");

    // Lease cap: at most 2 leases held at once; the rest wait, held by the cap.
    policy(json!({ "pending_cap": 2 }));
    for _ in 0..3 {
        world.send_message(&sender_token, &receiver, "event", json!(2));
    }
    let leased = world.claim(&receiver_token, 10);
    assert_eq!(leased.len(), 2, "the first message and one more");
    let inbox = body(&call(&world, &ben_token, "GET", &format!("/api/agents/{receiver}/inbox"), None));
    let held_by_cap =
        inbox["messages"].as_array().unwrap().iter().filter(|message| message["held_because"] == "pending_cap").count();
    assert_eq!(held_by_cap, 2, "the owner sees why: {inbox}");
    let acknowledge = |leased: Vec<Value>| {
        for message in &leased {
            let payload = json!({ "fencing_token": message["fencing_token"] });
            let acked = lease_call(&world, &receiver_token, message["id"].as_str().unwrap(), "ack", payload);
            assert_eq!(acked.status, 200, "{}", text(&acked));
        }
        leased.len()
    };
    acknowledge(leased);
    assert_eq!(acknowledge(world.claim(&receiver_token, 10)), 2, "acknowledged, the cap has room again");
    world.node.platform.advance(61_000);

    // Rate cap: 3 deliveries a minute.
    policy(json!({ "pending_cap": 100, "rate_per_minute": 3 }));
    for _ in 0..4 {
        world.send_message(&sender_token, &receiver, "event", json!(3));
    }
    assert_eq!(acknowledge(world.claim(&receiver_token, 10)), 3);
    let entries = world.audit().len();
    assert!(world.claim(&receiver_token, 10).is_empty(), "the minute's deliveries are spent");
    assert_eq!(world.audit().len(), entries, "a poll the caps leave no room for writes nothing");
    assert_eq!(world.send_message(&sender_token, &receiver, "event", json!(3))["state"], "queued");
    let inbox = body(&call(&world, &ben_token, "GET", &format!("/api/agents/{receiver}/inbox"), None));
    assert_eq!(inbox["messages"][0]["held_because"], "rate_cap", "{inbox}");
    world.node.platform.advance(61_000);
    assert_eq!(acknowledge(world.claim(&receiver_token, 10)), 2, "the rest, a minute later");

    // Allowlist: a sender it does not name is refused at delivery; a message
    // sent while the allowlist already excludes the sender is refused at once.
    let waiting = id(world.send_message(&sender_token, &receiver, "event", json!(3)));
    let policy_now = policy(json!({ "allowed_peers": [ben] }));
    assert_eq!(policy_now["allowed_peers"], json!([ben]));
    assert!(world.claim(&receiver_token, 10).is_empty());
    let refused = message(&world, &sender_token, &waiting);
    assert_eq!(refused["state"], "refused", "{refused}");
    assert!(refused["reason"].as_str().unwrap().contains("allowlist"));
    let at_once = world.send_message(&sender_token, &receiver, "event", json!(4));
    assert_eq!(at_once["state"], "refused");
    // The person on the allowlist is delivered.
    world.send_message(&ben_token, &receiver, "event", json!(5));
    assert_eq!(world.claim(&receiver_token, 10).len(), 1);
    policy(json!({ "allow_everyone": true }));
    world.send_message(&sender_token, &receiver, "event", json!(6));
    world.node.platform.advance(61_000);
    assert_eq!(world.claim(&receiver_token, 10).len(), 2, "the lapsed lease of the last, and the new one");
    let _ = sender;
}

#[test]
fn messages_expire_when_their_time_is_up_and_the_scheduled_run_records_it() {
    let (world, _, _, (_, sender_token), (receiver, receiver_token)) = pair();
    let short = call(
        &world,
        &sender_token,
        "POST",
        "/api/agent-messages",
        Some(
            json!({ "recipient": receiver, "kind": "event", "content": 1, "idempotency_key": "short", "expires_in_seconds": 60 }),
        ),
    );
    let short = body(&short)["id"].as_str().unwrap().to_string();
    let default = world.send_message(&sender_token, &receiver, "event", json!(2));
    let created = chrono_ms(&default["created_at"]);
    assert_eq!(chrono_ms(&default["expires_at"]) - created, 4 * 86_400_000, "four days by default");
    world.node.platform.advance(61_000);
    assert_eq!(message(&world, &sender_token, &short)["state"], "expired");
    world.node.run_every_minute();
    let stored = world
        .node
        .database
        .count(&format!("SELECT COUNT(*) FROM agent_messages WHERE id = '{short}' AND state = 'expired'"));
    assert_eq!(stored, 1);
    assert_eq!(world.claim(&receiver_token, 10).len(), 1, "only the unexpired one");
}

/// Milliseconds since the epoch of an RFC 3339 time the node wrote.
fn chrono_ms(value: &Value) -> i64 {
    value.as_str().unwrap().parse::<jiff::Timestamp>().unwrap().as_millisecond()
}

#[test]
fn the_owner_plane_is_the_sponsors_and_the_administrators_and_never_an_agents() {
    let (world, _, ben_token, (sender, sender_token), (receiver, _)) = pair();
    let (_, other_token) = world.person("other@example.com");
    let path = format!("/api/agents/{receiver}/messaging");
    assert_eq!(call(&world, &ben_token, "GET", &path, None).status, 200);
    assert_eq!(world.admin("GET", &path, None).status, 200);
    assert_refused(&call(&world, &other_token, "GET", &path, None), 403, "not_sponsor_or_administrator");
    assert_refused(
        &call(&world, &other_token, "POST", &format!("/api/agents/{receiver}/pause"), None),
        403,
        "not_sponsor_or_administrator",
    );
    assert_eq!(call(&world, &sender_token, "GET", &path, None).status, 403, "an agent is never its peer's owner");
    let mine = body(&call(&world, &ben_token, "GET", "/api/me/agents", None));
    assert_eq!(mine["agents"].as_array().unwrap().len(), 2);
    // An empty poll writes nothing; a poll records when the agent was last seen.
    let before = world.audit().len();
    world.claim(&sender_token, 1);
    assert_eq!(world.audit().len(), before, "an empty poll is not an entry");
    let seen = body(&call(&world, &ben_token, "GET", &format!("/api/agents/{sender}/messaging"), None));
    assert!(seen["last_seen_at"].is_string(), "{seen}");
}

fn a2a(world: &World, token: Option<&str>, agent: &str, version: Option<&str>, method: &str, params: Value) -> Value {
    let mut call = request("POST", &format!("/a2a/{agent}"))
        .json(json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params }));
    if let Some(token) = token {
        call = call.bearer(token);
    }
    if let Some(version) = version {
        call.headers.push(("a2a-version".into(), version.into()));
    }
    let response = world.node.send(call);
    assert!(response.status == 200 || response.status == 400 || response.status == 401, "{}", text(&response));
    body(&response)
}

#[test]
fn the_a2a_gateway_turns_a_send_into_a_durable_request_whose_reply_is_the_tasks_artifact() {
    let (world, _, ben_token, (caller, caller_token), (agent, agent_token)) = pair();
    let card = world.node.send(request("GET", &format!("/a2a/{agent}/.well-known/agent-card.json")));
    assert_eq!(card.status, 200, "{}", text(&card));
    let card = body(&card);
    assert_eq!(card["supportedInterfaces"][0]["protocolVersion"], "1.0");
    assert!(card["supportedInterfaces"][0]["url"].as_str().unwrap().ends_with(&format!("/a2a/{agent}")));

    let message = json!({ "messageId": "m-1", "role": "ROLE_USER", "parts": [{ "text": "37 + 58?" }] });
    let sent = a2a(&world, Some(&caller_token), &agent, Some("1.0"), "SendMessage", json!({ "message": message }));
    let task = &sent["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_SUBMITTED", "{sent}");
    let task_id = task["id"].as_str().unwrap().to_string();
    // The same messageId is the same task.
    let again = a2a(&world, Some(&caller_token), &agent, Some("1.0"), "SendMessage", json!({ "message": message }));
    assert_eq!(again["result"]["task"]["id"], task_id.as_str());

    let leased = world.claim(&agent_token, 1);
    assert_eq!(leased[0]["content"], json!({ "parts": [{ "text": "37 + 58?" }] }));
    assert_eq!(leased[0]["sender"], caller.as_str(), "the sender is the bearer");
    let working = a2a(&world, Some(&caller_token), &agent, Some("1.0"), "GetTask", json!({ "id": task_id }));
    assert_eq!(working["result"]["status"]["state"], "TASK_STATE_WORKING");
    let token = leased[0]["fencing_token"].clone();
    lease_call(&world, &agent_token, &task_id, "reply", json!({ "fencing_token": token, "content": "95" }));
    let done = a2a(&world, Some(&caller_token), &agent, None, "tasks/get", json!({ "id": task_id }));
    assert_eq!(done["result"]["kind"], "task");
    assert_eq!(done["result"]["status"]["state"], "completed");
    assert_eq!(done["result"]["artifacts"][0]["parts"][0], json!({ "kind": "text", "text": "95" }));
    assert!(world.claim(&caller_token, 5).is_empty(), "a task's reply is read through the task, not claimed");

    // A2A's own errors.
    let missing = a2a(
        &world,
        Some(&caller_token),
        &agent,
        Some("1.0"),
        "GetTask",
        json!({ "id": "amg_01M8MECXYJD8V8NXZMYC8H1337" }),
    );
    assert_eq!(missing["error"]["code"], -32001);
    let terminal = a2a(&world, Some(&caller_token), &agent, Some("1.0"), "CancelTask", json!({ "id": task_id }));
    assert_eq!(terminal["error"]["code"], -32002);
    let file = json!({ "message": { "messageId": "m-2", "role": "ROLE_USER", "parts": [{ "url": "https://x.example/a.pdf" }] } });
    assert_eq!(a2a(&world, Some(&caller_token), &agent, Some("1.0"), "SendMessage", file)["error"]["code"], -32005);
    let continuing = json!({ "message": { "messageId": "m-3", "taskId": task_id, "role": "ROLE_USER", "parts": [{ "text": "and?" }] } });
    assert_eq!(
        a2a(&world, Some(&caller_token), &agent, Some("1.0"), "SendMessage", continuing)["error"]["code"],
        -32004
    );
    assert_eq!(
        a2a(&world, Some(&caller_token), &agent, Some("2.0"), "GetTask", json!({ "id": task_id }))["error"]["code"],
        -32009
    );
    // Only the caller's own tasks: another caller neither reads nor lists them.
    assert_eq!(
        a2a(&world, Some(&ben_token), &agent, Some("1.0"), "GetTask", json!({ "id": task_id }))["error"]["code"],
        -32001
    );
    let theirs = a2a(&world, Some(&ben_token), &agent, Some("1.0"), "ListTasks", json!({ "status": "UNRECOGNIZED" }));
    assert_eq!(theirs["result"]["tasks"], json!([]));
    let mine = a2a(&world, Some(&caller_token), &agent, Some("1.0"), "ListTasks", json!({ "pageSize": 10 }));
    assert_eq!(mine["result"]["tasks"][0]["id"], task_id.as_str());
    assert_eq!(mine["result"]["tasks"][0]["status"]["state"], "TASK_STATE_COMPLETED");
    // Cancel, in 0.3: a pending task ends canceled.
    let pending = json!({ "message": { "kind": "message", "messageId": "m-4", "role": "user", "parts": [{ "kind": "text", "text": "later" }] } });
    let pending = a2a(&world, Some(&caller_token), &agent, None, "message/send", pending);
    assert_eq!(pending["result"]["status"]["state"], "submitted");
    let canceled =
        a2a(&world, Some(&caller_token), &agent, None, "tasks/cancel", json!({ "id": pending["result"]["id"] }));
    assert_eq!(canceled["result"]["status"]["state"], "canceled", "{canceled}");
    // No credential, no task.
    let anonymous = world.node.send(
        request("POST", &format!("/a2a/{agent}"))
            .header("a2a-version", "1.0")
            .json(json!({ "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": { "id": task_id } })),
    );
    assert_eq!(anonymous.status, 401);
}
