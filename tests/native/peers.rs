//! Agents across organisations (issue 33, decision 0050) on the test kit's
//! virtual clock: the outbox sends a message elsewhere once, under its own id,
//! asks after its task and brings the answer back as the reply; a remote that
//! is down, slow, gone or moved is tried again as the backoff says and never
//! twice at once; the owner's number of attempts ends it; a paused sender is
//! held and a revoked one stopped; and a peer's node is admitted only for its
//! own domain, to agents listed on the node's card, under their allowlist.

use mailroom::core::bindings::Fetched;
use mailroom::schedule::{Job, run_job};
use mailroom::testing::{RequestExt, request};
use serde_json::{Value, json};

use crate::support::*;

const CARD: &str = "https://agents.partner.example/a2a/agt_1/.well-known/agent-card.json";
const ENDPOINT: &str = "https://agents.partner.example/a2a/agt_1";

/// A 1.0 card naming `endpoint`.
fn card(endpoint: &str) -> Vec<u8> {
    json!({ "name": "Partner's agent", "supportedInterfaces": [
        { "url": endpoint, "protocolBinding": "JSONRPC", "protocolVersion": "1.0" },
    ] })
    .to_string()
    .into_bytes()
}

/// A JSON-RPC answer holding `result`.
fn answer(result: Value) -> Fetched {
    Fetched::of(200, json!({ "jsonrpc": "2.0", "id": "x", "result": result }).to_string().into_bytes())
}

fn task(id: &str, state: &str) -> Value {
    json!({ "id": id, "contextId": "ctx", "status": { "state": state } })
}

fn completed(id: &str, text: &str) -> Value {
    json!({ "id": id, "contextId": "ctx", "status": { "state": "TASK_STATE_COMPLETED" },
            "artifacts": [{ "artifactId": "a1", "parts": [{ "text": text }] }] })
}

/// A world with the card served, Ben, and an agent of his allowed to reach
/// the partner's domain: (world, ben's token, the agent's id and credential).
fn sender(maximum_attempts: i64) -> (World, String, String, String) {
    let world = World::new();
    world.node.webhooks.documents.borrow_mut().push((CARD.into(), 200, card(ENDPOINT)));
    let (ben, ben_token) = world.person("ben@example.com");
    let (agent, credential) = world.messenger(&ben);
    let policy = json!({ "remote_recipients": ["partner.example"], "maximum_attempts": maximum_attempts });
    let set = world.call("PATCH", &format!("/api/agents/{agent}/messaging"), Some(&ben_token), Some(policy));
    assert_eq!(set.status, 200, "{}", text(&set));
    (world, ben_token, agent, credential)
}

/// Runs the outbox once.
fn run_outbox(world: &World) {
    world.node.run(run_job(&world.node.node(), Job::DeliverRemoteMessages)).expect("the outbox runs");
}

fn message(world: &World, token: &str, id: &str) -> Value {
    body(&world.call("GET", &format!("/api/agent-messages/{id}"), Some(token), None))
}

fn delivery(world: &World, ben_token: &str, agent: &str) -> Value {
    let listed = world.call("GET", &format!("/api/agents/{agent}/remote-deliveries"), Some(ben_token), None);
    assert_eq!(listed.status, 200, "{}", text(&listed));
    body(&listed)["deliveries"][0].clone()
}

/// The outbox's record of message `id`.
fn delivery_of(world: &World, ben_token: &str, agent: &str, id: &str) -> Value {
    let listed = body(&world.call("GET", &format!("/api/agents/{agent}/remote-deliveries"), Some(ben_token), None));
    listed["deliveries"].as_array().unwrap().iter().find(|delivery| delivery["message_id"] == id).unwrap().clone()
}

fn posted_bodies(world: &World, url: &str) -> Vec<Value> {
    world.node.webhooks.posted_to(url).iter().map(|posted| serde_json::from_str(&posted.body).unwrap()).collect()
}

#[test]
fn a_message_elsewhere_is_sent_once_under_its_own_id_asked_after_and_answered_as_its_reply() {
    let (world, ben_token, agent, credential) = sender(5);
    world.node.webhooks.answer_exchanges(
        ENDPOINT,
        vec![answer(json!({ "task": task("t-1", "TASK_STATE_WORKING") })), answer(completed("t-1", "95"))],
    );
    let sent = world.send_message(&credential, CARD, "request", json!("37 + 58?"));
    let id = sent["id"].as_str().unwrap();
    assert_eq!(sent["remote"]["domain"], "agents.partner.example");

    run_outbox(&world);
    let first = delivery(&world, &ben_token, &agent);
    assert_eq!(first["state"], "sent");
    assert_eq!(first["remote_task_id"], "t-1");
    assert_eq!(message(&world, &credential, id)["state"], "queued", "accepted, not yet answered");

    run_outbox(&world);
    let posted = posted_bodies(&world, ENDPOINT);
    assert_eq!(posted.len(), 2, "one send and one question, nothing more");
    assert_eq!(posted[0]["method"], "SendMessage");
    assert_eq!(posted[0]["params"]["message"]["messageId"], id, "the message's own id, so a retry is the same message");
    assert_eq!(posted[0]["params"]["message"]["parts"], json!([{ "text": "37 + 58?" }]));
    assert_eq!(posted[1]["method"], "GetTask");
    assert_eq!(posted[1]["params"]["id"], "t-1");
    let version = world.node.webhooks.posted_to(ENDPOINT)[0]
        .headers
        .iter()
        .find(|(name, _)| name == "a2a-version")
        .map(|(_, value)| value.clone());
    assert_eq!(version.as_deref(), Some("1.0"));

    let answered = message(&world, &credential, id);
    assert_eq!(answered["state"], "answered");
    assert_eq!(answered["reply"]["content"], json!({ "parts": [{ "text": "95" }] }));
    assert!(answered["content_notice"].as_str().unwrap().contains("agents.partner.example"));
    let inbox = body(&world.call("GET", "/api/agent-inbox", Some(&credential), None));
    assert_eq!(inbox["messages"][0]["in_reply_to"], id);
    let done = delivery(&world, &ben_token, &agent);
    assert_eq!(done["state"], "done");
    let steps: Vec<(&str, &str)> = done["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|attempt| (attempt["step"].as_str().unwrap(), attempt["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(steps, [("send", "ok"), ("poll", "ok")]);

    // Recorded with the agent elsewhere named, and nothing of what was said.
    let entry = world.audit().into_iter().find(|entry| entry["action"] == "deliver_remote_message").unwrap();
    assert_eq!(entry["object"], id);
    assert_eq!(entry["detail"]["remote"]["card_url"], CARD);
    let recorded = entry.to_string();
    assert!(!recorded.contains("37 + 58?") && !recorded.contains("\"text\""), "no content: {recorded}");
    // A run after the end asks nothing more.
    run_outbox(&world);
    assert_eq!(posted_bodies(&world, ENDPOINT).len(), 2);
}

#[test]
fn a_remote_that_is_down_is_tried_again_after_its_wait_and_the_message_goes_once_it_answers() {
    let (world, ben_token, agent, credential) = sender(5);
    let sent = world.send_message(&credential, CARD, "request", json!("ping"));
    let id = sent["id"].as_str().unwrap();
    world.node.webhooks.unreachable.set(true);
    run_outbox(&world);
    let waiting = delivery(&world, &ben_token, &agent);
    assert_eq!(waiting["state"], "pending");
    assert!(waiting["last_error"].as_str().unwrap().contains("could not be reached"));
    // Not due yet: a run now tries nothing.
    world.node.webhooks.unreachable.set(false);
    world.node.webhooks.answer_exchanges(ENDPOINT, vec![answer(completed("t-2", "pong"))]);
    run_outbox(&world);
    assert_eq!(posted_bodies(&world, ENDPOINT).len(), 0, "nothing before the wait is over");
    world.node.platform.advance(60_000);
    run_outbox(&world);
    assert_eq!(posted_bodies(&world, ENDPOINT).len(), 1, "sent once it answers, once");
    assert_eq!(message(&world, &credential, id)["state"], "answered");
    let attempts = delivery(&world, &ben_token, &agent)["attempts"].clone();
    assert_eq!(attempts.as_array().unwrap().len(), 2);
    assert_eq!(attempts[0]["outcome"], "retrying");
}

#[test]
fn a_remote_that_never_gets_it_ends_the_message_failed_after_the_owner_s_attempts() {
    let (world, ben_token, agent, credential) = sender(2);
    world.node.webhooks.answer_exchanges(ENDPOINT, vec![Fetched::of(503, Vec::new())]);
    let sent = world.send_message(&credential, CARD, "request", json!("ping"));
    let id = sent["id"].as_str().unwrap();
    run_outbox(&world);
    world.node.platform.advance(60_000);
    run_outbox(&world);
    let dead = delivery(&world, &ben_token, &agent);
    assert_eq!(dead["state"], "dead");
    assert_eq!(dead["next_attempt_at"], Value::Null);
    let failed = message(&world, &credential, id);
    assert_eq!(failed["state"], "failed");
    assert!(failed["reason"].as_str().unwrap().starts_with("gave up after 2 attempts"), "{failed}");
    world.node.platform.advance(3_600_000);
    run_outbox(&world);
    assert_eq!(posted_bodies(&world, ENDPOINT).len(), 2, "a dead letter is never tried again");
}

#[test]
fn a_slow_remote_is_given_up_on_at_the_timeout_and_tried_again() {
    let (world, ben_token, agent, credential) = sender(5);
    world.node.webhooks.answer_after(ENDPOINT, 60_000);
    world.node.webhooks.answer_exchanges(ENDPOINT, vec![answer(completed("t-3", "late"))]);
    world.send_message(&credential, CARD, "request", json!("ping"));
    run_outbox(&world);
    let waiting = delivery(&world, &ben_token, &agent);
    assert_eq!(waiting["state"], "pending");
    assert!(waiting["last_error"].as_str().unwrap().contains("did not answer within 10 seconds"), "{waiting}");
}

#[test]
fn a_card_that_moves_its_endpoint_is_read_again_once_the_old_endpoint_is_gone() {
    let (world, ben_token, agent, credential) = sender(5);
    let moved = "https://agents.partner.example/a2a/v2/agt_1";
    world.node.webhooks.answer_exchanges(ENDPOINT, vec![Fetched::of(404, Vec::new())]);
    world.node.webhooks.answer_exchanges(moved, vec![answer(completed("t-4", "here now"))]);
    let sent = world.send_message(&credential, CARD, "request", json!("where are you?"));
    run_outbox(&world);
    assert!(delivery(&world, &ben_token, &agent)["last_error"].as_str().unwrap().contains("answered 404"));
    {
        let mut documents = world.node.webhooks.documents.borrow_mut();
        documents.retain(|(url, _, _)| url != CARD);
        documents.push((CARD.into(), 200, card(moved)));
    }
    world.node.platform.advance(60_000);
    run_outbox(&world);
    assert_eq!(message(&world, &credential, sent["id"].as_str().unwrap())["state"], "answered");
    let card_reads = world.node.webhooks.fetched.borrow().iter().filter(|url| *url == CARD).count();
    assert_eq!(card_reads, 2, "read again, though its caching headers would have kept it");
    assert_eq!((posted_bodies(&world, ENDPOINT).len(), posted_bodies(&world, moved).len()), (1, 1));
}

#[test]
fn a_card_or_an_endpoint_inside_a_network_fails_the_message_at_once() {
    let (world, ben_token, agent, credential) = sender(5);
    {
        let mut documents = world.node.webhooks.documents.borrow_mut();
        documents.retain(|(url, _, _)| url != CARD);
        documents.push((CARD.into(), 200, card("https://10.0.0.1/a2a")));
    }
    let sent = world.send_message(&credential, CARD, "request", json!("ping"));
    run_outbox(&world);
    let dead = delivery(&world, &ben_token, &agent);
    assert_eq!(dead["state"], "dead");
    assert!(dead["last_error"].as_str().unwrap().contains("may not be reached"), "{dead}");
    assert_eq!(message(&world, &credential, sent["id"].as_str().unwrap())["state"], "failed");
    assert!(world.node.webhooks.posted.borrow().is_empty(), "nothing went inward");
}

#[test]
fn a_paused_sender_is_held_and_a_revoked_one_stopped_for_good() {
    let (world, ben_token, agent, credential) = sender(5);
    world
        .node
        .webhooks
        .answer_exchanges(ENDPOINT, vec![answer(json!({ "task": task("t-5", "TASK_STATE_SUBMITTED") }))]);
    let first = world.send_message(&credential, CARD, "request", json!("one"));
    let second = world.send_message(&credential, CARD, "request", json!("two"));
    assert_eq!(world.call("POST", &format!("/api/agents/{agent}/pause"), Some(&ben_token), None).status, 200);
    run_outbox(&world);
    assert!(world.node.webhooks.posted.borrow().is_empty(), "a paused sender sends nothing");
    assert_eq!(world.call("POST", &format!("/api/agents/{agent}/resume"), Some(&ben_token), None).status, 200);
    world.node.platform.advance(60_000);
    run_outbox(&world);
    assert_eq!(posted_bodies(&world, ENDPOINT).len(), 2, "both sent once resumed");
    assert_eq!(world.call("POST", &format!("/api/agents/{agent}/revoke"), Some(&world.admin_token), None).status, 200);
    run_outbox(&world);
    for sent in [first, second] {
        let stopped = message(&world, &ben_token, sent["id"].as_str().unwrap());
        assert_eq!(stopped["state"], "failed");
        assert!(stopped["reason"].as_str().unwrap().contains("revoked"), "{stopped}");
    }
    assert_eq!(posted_bodies(&world, ENDPOINT).len(), 2, "nothing is asked for a revoked sender");
}

#[test]
fn the_outbound_policy_is_judged_at_sending_and_again_before_every_attempt() {
    let (world, ben_token, agent, credential) = sender(5);
    let elsewhere = world.call(
        "POST",
        "/api/agent-messages",
        Some(&credential),
        Some(json!({ "recipient": "https://other.example/card.json", "kind": "event", "content": 1, "idempotency_key": "k1" })),
    );
    assert_refused(&elsewhere, 403, "remote_not_allowed");
    let capped = world.call(
        "PATCH",
        &format!("/api/agents/{agent}/messaging"),
        Some(&ben_token),
        Some(json!({ "remote_per_hour": 1 })),
    );
    assert_eq!(capped.status, 200);
    let sent = world.send_message(&credential, CARD, "request", json!("only one"));
    let second = world.call(
        "POST",
        "/api/agent-messages",
        Some(&credential),
        Some(json!({ "recipient": CARD, "kind": "event", "content": 2, "idempotency_key": "k2" })),
    );
    assert_refused(&second, 429, "remote_hourly_cap");
    // The owner takes the domain back before the first attempt: it is not sent.
    let closed = world.call(
        "PATCH",
        &format!("/api/agents/{agent}/messaging"),
        Some(&ben_token),
        Some(json!({ "remote_recipients": [] })),
    );
    assert_eq!(closed.status, 200);
    run_outbox(&world);
    assert!(world.node.webhooks.posted.borrow().is_empty());
    let stopped = message(&world, &credential, sent["id"].as_str().unwrap());
    assert_eq!(stopped["state"], "failed");
    assert!(stopped["reason"].as_str().unwrap().contains("outbound policy"), "{stopped}");
}

/// A peer connected for `domain`: (its id, the credential issued to it).
fn peer(world: &World, domain: &str) -> (String, String) {
    let created = world.call(
        "POST",
        "/api/peers",
        Some(&world.admin_token),
        Some(json!({ "domain": domain, "name": "Partner" })),
    );
    assert_eq!(created.status, 201, "{}", text(&created));
    let created = body(&created);
    (created["peer"]["id"].as_str().unwrap().to_string(), created["credential"].as_str().unwrap().to_string())
}

fn as_peer(
    world: &World,
    credential: &str,
    sender: &str,
    path: &str,
    payload: Option<Value>,
) -> mailroom::core::http::Response {
    let method = if payload.is_some() { "POST" } else { "GET" };
    let mut call = request(method, path).bearer(credential).header("mailroom-sender", sender);
    if let Some(payload) = payload {
        call = call.json(payload);
    }
    world.node.send(call)
}

#[test]
fn a_peer_s_node_reaches_only_listed_agents_for_its_own_agents_and_under_their_allowlist() {
    let world = World::new();
    let (peer_id, credential) = peer(&world, "partner.example");
    let (ben, ben_token) = world.person("ben@example.com");
    let (listed, listed_credential) = world.messenger(&ben);
    let (unlisted, _) = world.messenger(&ben);
    let listing = json!({ "listed_on_node_card": true });
    world.call("PATCH", &format!("/api/agents/{listed}/messaging"), Some(&ben_token), Some(listing));
    let ours = "https://agents.partner.example/a2a/agt_9/.well-known/agent-card.json";
    let send = |recipient: &str, key: &str| json!({ "recipient": recipient, "kind": "request", "content": "hi", "idempotency_key": key });

    let hidden = as_peer(&world, &credential, ours, "/api/agent-messages", Some(send(&unlisted, "k1")));
    assert_refused(&hidden, 404, "not_found");
    let sent = as_peer(&world, &credential, ours, "/api/agent-messages", Some(send(&listed, "k2")));
    assert_eq!(sent.status, 202, "{}", text(&sent));
    let sent = body(&sent);
    assert!(sent["sender"].as_str().unwrap().starts_with("rag_"));
    assert_eq!(sent["remote"]["card_url"], ours);
    let waiting = body(&world.call("GET", "/api/agent-inbox", Some(&listed_credential), None));
    assert!(waiting["messages"][0]["content_notice"].as_str().unwrap().contains("agents.partner.example"));
    let entry = world.last_audit_entry();
    assert_eq!(entry["actor"], peer_id.as_str());
    assert_eq!(entry["detail"]["remote_sender"]["card_url"], ours);

    // Its own tasks only: it reads what it sent.
    let read =
        as_peer(&world, &credential, ours, &format!("/api/agent-messages/{}", sent["id"].as_str().unwrap()), None);
    assert_eq!(read.status, 200, "{}", text(&read));

    // The recipient's allowlist applies to it as to anyone.
    world.call(
        "PATCH",
        &format!("/api/agents/{listed}/messaging"),
        Some(&ben_token),
        Some(json!({ "allowed_peers": [ben] })),
    );
    let refused = body(&as_peer(&world, &credential, ours, "/api/agent-messages", Some(send(&listed, "k3"))));
    assert_eq!(refused["state"], "refused");

    // Never relayed on: a peer's agent cannot make this node send elsewhere.
    let relay =
        as_peer(&world, &credential, ours, "/api/agent-messages", Some(send("https://third.example/card.json", "k9")));
    assert_refused(&relay, 404, "not_found");
    assert!(world.node.webhooks.fetched.borrow().is_empty() && world.node.webhooks.posted.borrow().is_empty());

    let theirs = "https://evil.example/a2a/agt_9/.well-known/agent-card.json";
    assert_refused(
        &as_peer(&world, &credential, theirs, "/api/agent-messages", Some(send(&listed, "k4"))),
        403,
        "peer_sender_outside_domain",
    );
    let lookalike = "https://notpartner.example/card.json";
    assert_refused(
        &as_peer(&world, &credential, lookalike, "/api/agent-messages", Some(send(&listed, "k5"))),
        403,
        "peer_sender_outside_domain",
    );
    assert_refused(&as_peer(&world, &credential, ours, "/api/mailboxes", None), 403, "peers_only_message");
    let unnamed = world.node.send(request("POST", "/api/agent-messages").bearer(&credential).json(send(&listed, "k6")));
    assert_refused(&unnamed, 400, "peer_names_no_sender");

    let disconnected = world.call("DELETE", &format!("/api/peers/{peer_id}"), Some(&world.admin_token), None);
    assert_eq!(disconnected.status, 200);
    assert_refused(
        &as_peer(&world, &credential, ours, "/api/agent-messages", Some(send(&listed, "k7"))),
        401,
        "peer_disconnected",
    );
    let forged = format!("{}.{}", credential.split_once('.').unwrap().0, "A".repeat(43));
    assert_refused(
        &as_peer(&world, &forged, ours, "/api/agent-messages", Some(send(&listed, "k8"))),
        401,
        "peer_credential_invalid",
    );
}

#[test]
fn one_live_peer_per_domain_and_the_credential_it_gave_is_never_shown() {
    let world = World::new();
    let (peer_id, _) = peer(&world, "partner.example");
    let again = world.call(
        "POST",
        "/api/peers",
        Some(&world.admin_token),
        Some(json!({ "domain": "Partner.Example.", "name": "Again" })),
    );
    assert_refused(&again, 409, "conflict");
    let bad = world.call(
        "POST",
        "/api/peers",
        Some(&world.admin_token),
        Some(json!({ "domain": "https://x.example/", "name": "X" })),
    );
    assert_refused(&bad, 400, "invalid_body");
    let set = world.call(
        "PATCH",
        &format!("/api/peers/{peer_id}"),
        Some(&world.admin_token),
        Some(json!({ "outbound_credential": "their-secret-credential" })),
    );
    assert_eq!(body(&set)["has_outbound_credential"], true);
    let listed = world.call("GET", "/api/peers", Some(&world.admin_token), None);
    assert!(!text(&listed).contains("their-secret-credential"));
    assert!(!world.audit().iter().any(|entry| entry.to_string().contains("their-secret-credential")));
    let (_, ben_token) = world.person("ben@example.com");
    assert_eq!(world.call("GET", "/api/peers", Some(&ben_token), None).status, 403, "an administrator's");
}

#[test]
fn an_agent_that_pushes_is_given_a_token_and_its_push_makes_the_node_ask_at_once() {
    let (world, ben_token, agent, credential) = sender(5);
    {
        let mut documents = world.node.webhooks.documents.borrow_mut();
        documents.retain(|(url, _, _)| url != CARD);
        let card = json!({ "name": "Pusher", "capabilities": { "pushNotifications": true }, "supportedInterfaces": [
            { "url": ENDPOINT, "protocolBinding": "JSONRPC", "protocolVersion": "1.0" },
        ] });
        documents.push((CARD.into(), 200, card.to_string().into_bytes()));
    }
    world.node.webhooks.answer_exchanges(
        ENDPOINT,
        vec![
            answer(json!({ "task": task("t-6", "TASK_STATE_WORKING") })),
            answer(task("t-6", "TASK_STATE_WORKING")),
            answer(completed("t-6", "pushed")),
        ],
    );
    let sent = world.send_message(&credential, CARD, "request", json!("tell me when"));
    let id = sent["id"].as_str().unwrap();
    run_outbox(&world);
    let config = posted_bodies(&world, ENDPOINT)[0]["params"]["configuration"]["taskPushNotificationConfig"].clone();
    assert_eq!(config["url"], format!("{}/a2a/outbox/{id}", mailroom::testing::TEST_ORIGIN));
    let token = config["token"].as_str().unwrap().to_string();

    // Asked after at the next run, still working: then not again for a
    // minute. A push with another token is refused and changes nothing.
    run_outbox(&world);
    assert_eq!(posted_bodies(&world, ENDPOINT)[1]["method"], "GetTask");
    world.node.platform.advance(1_000);
    run_outbox(&world);
    assert_eq!(posted_bodies(&world, ENDPOINT).len(), 2, "not due for a minute");
    let forged = world.node.send(
        request("POST", &format!("/a2a/outbox/{id}"))
            .header("x-a2a-notification-token", "0".repeat(64).as_str())
            .json(json!({ "task": { "id": "t-6" } })),
    );
    assert_refused(&forged, 401, "push_token_invalid");
    let other = world.send_message(&credential, CARD, "event", json!("another"));
    let borrowed = world.node.send(
        request("POST", &format!("/a2a/outbox/{}", other["id"].as_str().unwrap()))
            .header("x-a2a-notification-token", token.as_str())
            .json(json!({})),
    );
    assert_refused(&borrowed, 401, "push_token_invalid");
    let polls_before = posted_bodies(&world, ENDPOINT).len();

    let pushed = world.node.send(
        request("POST", &format!("/a2a/outbox/{id}"))
            .header("x-a2a-notification-token", token.as_str())
            .json(json!({ "task": { "id": "t-6", "status": { "state": "TASK_STATE_COMPLETED" } } })),
    );
    assert_eq!(pushed.status, 202, "{} {:?}", text(&pushed), world.node.platform.logs.borrow());
    run_outbox(&world);
    assert!(posted_bodies(&world, ENDPOINT)[polls_before..].iter().any(|body| body["method"] == "GetTask"));
    assert_eq!(message(&world, &credential, id)["state"], "answered");
    let attempts = delivery_of(&world, &ben_token, &agent, id)["attempts"].clone();
    assert_eq!(attempts.as_array().unwrap().len(), 3, "send, poll, and the poll the push asked for");
}

#[test]
fn a_peer_s_node_is_pushed_its_task_as_it_moves_while_the_peer_stays_connected() {
    let world = World::new();
    let (peer_id, credential) = peer(&world, "partner.example");
    let (ben, ben_token) = world.person("ben@example.com");
    let (bob, bob_credential) = world.messenger(&ben);
    world.call(
        "PATCH",
        &format!("/api/agents/{bob}/messaging"),
        Some(&ben_token),
        Some(json!({ "listed_on_node_card": true })),
    );
    let ours = "https://agents.partner.example/a2a/agt_9/.well-known/agent-card.json";
    let pushes = "https://agents.partner.example/a2a/outbox/amg_1";
    let send = json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": { "messageId": "amg_1", "role": "ROLE_USER", "parts": [{ "text": "37 + 58?" }] },
        "configuration": { "returnImmediately": true, "taskPushNotificationConfig": { "url": pushes, "token": "their-token" } },
    } });
    let sent = world.node.send(
        request("POST", &format!("/a2a/{bob}"))
            .bearer(&credential)
            .header("mailroom-sender", ours)
            .header("a2a-version", "1.0")
            .json(send),
    );
    let sent = body(&sent);
    assert!(sent["result"]["task"]["id"].is_string(), "{sent}");
    let claimed = world.claim(&bob_credential, 1);
    let fencing = claimed[0]["fencing_token"].as_i64().unwrap();
    let task_id = claimed[0]["id"].as_str().unwrap();
    let replied = world.call(
        "POST",
        &format!("/api/agent-inbox/{task_id}/reply"),
        Some(&bob_credential),
        Some(json!({ "fencing_token": fencing, "content": "95" })),
    );
    assert_eq!(replied.status, 200, "{}", text(&replied));
    let posted = world.node.webhooks.posted_to(pushes);
    let last: Value = serde_json::from_str(&posted.last().unwrap().body).unwrap();
    assert_eq!(last["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let token = posted
        .last()
        .unwrap()
        .headers
        .iter()
        .find(|(name, _)| name == "x-a2a-notification-token")
        .map(|(_, value)| value.clone());
    assert_eq!(token.as_deref(), Some("their-token"));

    // A second task, then the peer disconnected: its moves are told nobody.
    let second = json!({ "jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {
        "message": { "messageId": "amg_2", "role": "ROLE_USER", "parts": [{ "text": "and 1 + 1?" }] },
        "configuration": { "taskPushNotificationConfig": { "url": pushes, "token": "their-token" } },
    } });
    let sent = world.node.send(
        request("POST", &format!("/a2a/{bob}"))
            .bearer(&credential)
            .header("mailroom-sender", ours)
            .header("a2a-version", "1.0")
            .json(second),
    );
    assert!(body(&sent)["result"]["task"]["id"].is_string());
    let before = world.node.webhooks.posted_to(pushes).len();
    world.call("DELETE", &format!("/api/peers/{peer_id}"), Some(&world.admin_token), None);
    assert_eq!(world.claim(&bob_credential, 1).len(), 1);
    assert_eq!(world.node.webhooks.posted_to(pushes).len(), before, "a disconnected peer is pushed nothing");
}

#[test]
fn a_working_task_s_words_of_progress_come_back_once_each_before_its_answer() {
    let (world, _, _, credential) = sender(5);
    let working = |id: &str, words: &str| {
        json!({ "id": "t-7", "contextId": "ctx", "status": { "state": "TASK_STATE_WORKING",
                "message": { "messageId": id, "role": "ROLE_AGENT", "parts": [{ "text": words }] } } })
    };
    world.node.webhooks.answer_exchanges(
        ENDPOINT,
        vec![
            answer(json!({ "task": working("p-1", "reading the contract") })),
            answer(working("p-1", "reading the contract")),
            answer(working("p-2", "drafting")),
            answer(completed("t-7", "signed")),
        ],
    );
    let sent = world.send_message(&credential, CARD, "request", json!("review this"));
    let id = sent["id"].as_str().unwrap();
    for _ in 0..4 {
        run_outbox(&world);
        world.node.platform.advance(60_000);
    }
    let inbox = body(&world.call("GET", "/api/agent-inbox", Some(&credential), None));
    let words: Vec<(&str, &str)> = inbox["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| (message["kind"].as_str().unwrap(), message["content"]["parts"][0]["text"].as_str().unwrap()))
        .collect();
    assert_eq!(words, [("event", "reading the contract"), ("event", "drafting"), ("reply", "signed")]);
    for message in inbox["messages"].as_array().unwrap() {
        assert_eq!(message["in_reply_to"], id);
        assert!(message["content_notice"].is_string(), "each is marked as from elsewhere: {message}");
    }
    let recorded: Vec<Value> =
        world.audit().into_iter().filter(|entry| entry["action"] == "receive_remote_progress").collect();
    assert_eq!(recorded.len(), 2, "each word once");
    assert!(
        recorded.iter().all(|entry| !entry.to_string().contains("drafting") && !entry.to_string().contains("contract"))
    );
}

#[test]
fn the_peer_s_credential_goes_only_to_endpoints_on_the_peer_s_own_domain() {
    let (world, _, agent, credential) = sender(5);
    let created = world.call(
        "POST",
        "/api/peers",
        Some(&world.admin_token),
        Some(json!({ "domain": "partner.example", "name": "Partner", "outbound_credential": "their-secret" })),
    );
    assert_eq!(created.status, 201, "{}", text(&created));
    let elsewhere_card = "https://agents.partner.example/other-card.json";
    let elsewhere_endpoint = "https://collector.example/a2a";
    world.node.webhooks.documents.borrow_mut().push((elsewhere_card.into(), 200, card(elsewhere_endpoint)));
    world.node.webhooks.answer_exchanges(ENDPOINT, vec![answer(completed("t-8", "ok"))]);
    world.node.webhooks.answer_exchanges(elsewhere_endpoint, vec![answer(completed("t-9", "ok"))]);
    world.send_message(&credential, CARD, "request", json!("to the peer"));
    world.send_message(&credential, elsewhere_card, "request", json!("to a card that points away"));
    run_outbox(&world);
    let header_of = |url: &str, name: &str| {
        world.node.webhooks.posted_to(url)[0]
            .headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
    };
    assert_eq!(header_of(ENDPOINT, "authorization").as_deref(), Some("Bearer their-secret"));
    let sender_card = format!("{}/a2a/{agent}/.well-known/agent-card.json", mailroom::testing::TEST_ORIGIN);
    assert_eq!(header_of(ENDPOINT, "mailroom-sender"), Some(sender_card));
    assert_eq!(header_of(elsewhere_endpoint, "authorization"), None, "never to another domain, whatever the card says");
    assert_eq!(header_of(elsewhere_endpoint, "mailroom-sender"), None);
}

#[test]
fn a_conversation_with_an_agent_elsewhere_goes_on_in_its_context() {
    let (world, _, _, credential) = sender(5);
    let answered = |id: &str| {
        answer(json!({ "task": { "id": id, "contextId": "their-ctx", "status": { "state": "TASK_STATE_COMPLETED" },
                       "artifacts": [{ "artifactId": "a", "parts": [{ "text": "noted" }] }] } }))
    };
    world.node.webhooks.answer_exchanges(ENDPOINT, vec![answered("t-10"), answered("t-11")]);
    let first = world.send_message(&credential, CARD, "request", json!("first"));
    run_outbox(&world);
    let conversation = first["conversation_id"].as_str().unwrap();
    let next = world.call(
        "POST",
        "/api/agent-messages",
        Some(&credential),
        Some(json!({ "recipient": CARD, "kind": "request", "content": "second", "idempotency_key": "k-next",
                     "conversation_id": conversation })),
    );
    assert_eq!(next.status, 202, "{}", text(&next));
    assert_eq!(body(&next)["conversation_id"], conversation);
    run_outbox(&world);
    let posted = posted_bodies(&world, ENDPOINT);
    assert_eq!(posted[0]["params"]["message"].get("contextId"), None, "a new conversation names no context");
    assert_eq!(posted[1]["params"]["message"]["contextId"], "their-ctx", "the next message goes on in the agent's");

    // Another agent elsewhere is not asked into this conversation.
    let other = "https://agents.partner.example/a2a/agt_2/.well-known/agent-card.json";
    let refused = world.call(
        "POST",
        "/api/agent-messages",
        Some(&credential),
        Some(json!({ "recipient": other, "kind": "request", "content": "join", "idempotency_key": "k-other",
                     "conversation_id": conversation })),
    );
    assert_refused(&refused, 409, "conflict");
}
