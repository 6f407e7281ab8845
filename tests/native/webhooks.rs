//! Webhooks (decision 0038): endpoints subscribed to a mailbox's or an agent's
//! events, told in the Standard Webhooks format by deliveries the commits
//! queue in their own batch; retried, withheld when whoever subscribed may no
//! longer be told, and refused for addresses inside a network.

use mailroom::core::webhooks::standard_signature;
use serde_json::{Value, json};

use crate::support::*;

const RECEIVER: &str = "https://hooks.example.com/mailroom";

fn header<'a>(posted: &'a mailroom::testing::PostedWebhook, name: &str) -> &'a str {
    posted.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str()).unwrap_or_default()
}

/// A world with a mailbox and a webhook an administrator subscribed to it:
/// (world, mailbox, webhook path, secret).
fn subscribed(kinds: Value) -> (World, String, String, String) {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    let webhooks = format!("/api/mailboxes/{mailbox}/webhooks");
    let created = world.admin("POST", &webhooks, Some(json!({ "url": RECEIVER, "kinds": kinds })));
    assert_eq!(created.status, 201, "{}", text(&created));
    let created = body(&created);
    let path = format!("{webhooks}/{}", created["webhook"]["id"].as_str().unwrap());
    (world, mailbox, path, created["secret"].as_str().unwrap().to_string())
}

fn deliveries(world: &World, webhooks: &str) -> Vec<Value> {
    let listed = world.admin("GET", webhooks, None);
    assert_eq!(listed.status, 200, "{}", text(&listed));
    body(&listed)["webhooks"][0]["deliveries"].as_array().cloned().unwrap_or_default()
}

#[test]
fn mail_received_is_posted_signed_as_standard_webhooks_say_with_ids_and_never_content() {
    let (world, mailbox, webhook, secret) = subscribed(json!([]));
    assert!(secret.starts_with("whsec_"));
    let receipt = world.deliver("plain", "support@mailroom.test");
    let posted = world.node.webhooks.posted_to(RECEIVER);
    assert_eq!(posted.len(), 1, "one delivery, after the answer");
    let delivery = &posted[0];
    let sent: Value = serde_json::from_str(&delivery.body).unwrap();
    assert_eq!(sent["type"], "receive_mail");
    assert_eq!(sent["data"]["topic"], format!("mailbox:{mailbox}"));
    assert_eq!(sent["data"]["object"], receipt.as_str());
    assert!(!delivery.body.contains("Subject") && !delivery.body.to_lowercase().contains("hello"), "{}", delivery.body);
    let id = header(delivery, "webhook-id");
    let timestamp: i64 = header(delivery, "webhook-timestamp").parse().unwrap();
    assert!(id.starts_with("msg_"));
    assert_eq!(timestamp, delivery.at_ms / 1000);
    assert_eq!(
        Some(header(delivery, "webhook-signature").to_string()),
        standard_signature(&secret, id, timestamp, &delivery.body)
    );
    // Shown with its outcome; the secret is never shown again.
    let shown = deliveries(&world, webhook.rsplit_once('/').unwrap().0);
    assert_eq!(shown[0]["state"], "delivered");
    assert_eq!(shown[0]["id"], id);
    assert!(!text(&world.admin("GET", webhook.rsplit_once('/').unwrap().0, None)).contains(&secret));
}

#[test]
fn only_the_kinds_asked_for_are_posted_and_another_mailbox_s_events_never_are() {
    let (world, mailbox, _, _) = subscribed(json!(["update_thread"]));
    world.mailbox("sales@mailroom.test");
    let receipt = world.deliver("plain", "support@mailroom.test");
    world.deliver("latin1", "sales@mailroom.test");
    assert!(world.node.webhooks.posted_to(RECEIVER).is_empty(), "receive_mail was not asked for");
    world.grant_all(&world.admin_id, &["mailbox.metadata.read", "send.propose"], &mailbox);
    let thread = world.thread_of(&mailbox, &receipt);
    let closed = world.admin("PATCH", &thread, Some(json!({ "status": "closed" })));
    assert_eq!(closed.status, 200, "{}", text(&closed));
    let posted = world.node.webhooks.posted_to(RECEIVER);
    assert_eq!(posted.len(), 1);
    let sent: Value = serde_json::from_str(&posted[0].body).unwrap();
    assert_eq!(sent["type"], "update_thread");
    // A refused change tells nothing, and so queues nothing.
    let refused = world.admin("PATCH", &thread, Some(json!({ "status": "no such status" })));
    assert_eq!(refused.status, 400);
    assert_eq!(world.node.webhooks.posted_to(RECEIVER).len(), 1);
}

#[test]
fn a_failed_delivery_is_tried_again_later_with_the_same_id_until_it_lands() {
    let (world, _, webhook, _) = subscribed(json!([]));
    let webhooks = webhook.rsplit_once('/').unwrap().0.to_string();
    world.node.webhooks.status.set(503);
    world.deliver("plain", "support@mailroom.test");
    let first = deliveries(&world, &webhooks);
    assert_eq!((first[0]["state"].clone(), first[0]["attempts"].clone()), (json!("pending"), json!(1)));
    assert_eq!(first[0]["last_status"], 503);
    assert_eq!(first[0]["last_error"], "the webhook answered 503");
    // Not before its wait.
    assert_eq!(world.node.deliver_webhooks(), mailroom::webhooks::WebhookReport::default());
    world.node.webhooks.status.set(200);
    world.node.platform.advance(60_000);
    world.node.run_every_minute();
    let second = deliveries(&world, &webhooks);
    assert_eq!((second[0]["state"].clone(), second[0]["attempts"].clone()), (json!("delivered"), json!(2)));
    let posted = world.node.webhooks.posted_to(RECEIVER);
    assert_eq!(posted.len(), 2);
    assert_eq!(header(&posted[0], "webhook-id"), header(&posted[1], "webhook-id"), "a repeat keeps its id");
}

#[test]
fn a_delivery_that_keeps_failing_is_given_up_after_its_last_wait() {
    let (world, _, webhook, _) = subscribed(json!([]));
    let webhooks = webhook.rsplit_once('/').unwrap().0.to_string();
    world.node.webhooks.unreachable.set(true);
    world.deliver("plain", "support@mailroom.test");
    for minutes in mailroom_contract::api::webhook_limits::RETRY_AFTER_MINUTES {
        world.node.platform.advance(minutes * 60_000);
        world.node.deliver_webhooks();
    }
    // Hours later the administrator's access token has long expired: the
    // outcome is read where the list reads it.
    let attempts = mailroom_contract::api::webhook_limits::RETRY_AFTER_MINUTES.len() + 1;
    let settled = world.node.database.peek("SELECT state || ' ' || attempts FROM webhook_deliveries");
    assert_eq!(settled, Some(format!("failed {attempts}")));
    assert_eq!(world.node.webhooks.posted_to(RECEIVER).len(), 0, "unreachable every time");
    let _ = webhooks;
}

#[test]
fn deliveries_stop_once_whoever_subscribed_no_longer_administers() {
    let world = World::new();
    let (cleo, cleo_token) = world.person("cleo@example.com");
    world.grant(&cleo, "org.admin", "org");
    let mailbox = world.mailbox("support@mailroom.test");
    let webhooks = format!("/api/mailboxes/{mailbox}/webhooks");
    let created = world.call("POST", &webhooks, Some(&cleo_token), Some(json!({ "url": RECEIVER })));
    assert_eq!(created.status, 201, "{}", text(&created));
    world.deliver("plain", "support@mailroom.test");
    assert_eq!(world.node.webhooks.posted_to(RECEIVER).len(), 1);
    world.revoke(&cleo, "org.admin", "org");
    world.deliver("latin1", "support@mailroom.test");
    assert_eq!(
        world.node.webhooks.posted_to(RECEIVER).len(),
        1,
        "nothing goes once cleo is no longer an administrator"
    );
    let shown = deliveries(&world, &webhooks);
    assert_eq!(shown[0]["state"], "withheld");
    assert!(shown[0]["last_error"].as_str().unwrap().contains("no longer administers"));
}

#[test]
fn a_sponsor_s_webhook_wakes_for_its_agent_s_inbox_and_stops_when_the_agent_is_revoked() {
    let world = World::new();
    let (ben, ben_token) = world.person("ben@example.com");
    let (cleo, cleo_token) = world.person("cleo@example.com");
    let (agent, _) = world.messenger(&ben);
    let (sender, sender_token) = world.messenger(&ben);
    let webhooks = format!("/api/agents/{agent}/webhooks");
    // Only its sponsor (or an administrator) subscribes; nobody else, and no
    // agent, even the one it is about.
    let refused = world.call("POST", &webhooks, Some(&cleo_token), Some(json!({ "url": RECEIVER })));
    assert_refused(&refused, 403, "not_sponsor_or_administrator");
    let _ = cleo;
    let created = world.call("POST", &webhooks, Some(&ben_token), Some(json!({ "url": RECEIVER })));
    assert_eq!(created.status, 201, "{}", text(&created));
    let sent = world.send_message(&sender_token, &agent, "request", json!({ "text": "Ping" }));
    let posted = world.node.webhooks.posted_to(RECEIVER);
    assert_eq!(posted.len(), 1);
    let told: Value = serde_json::from_str(&posted[0].body).unwrap();
    assert_eq!(told["type"], "send_agent_message");
    assert_eq!(told["data"]["topic"], format!("agent:{agent}"));
    assert_eq!(told["data"]["object"], sent["id"]);
    let _ = sender;
    let revoked = world.admin("POST", &format!("/api/agents/{agent}/revoke"), None);
    assert!(revoked.status < 300, "{}", text(&revoked));
    let payload =
        json!({ "recipient": agent, "kind": "request", "content": { "text": "Again" }, "idempotency_key": "again" });
    world.call("POST", "/api/agent-messages", Some(&sender_token), Some(payload));
    world.node.platform.advance(60_000);
    world.node.run_every_minute();
    assert_eq!(world.node.webhooks.posted_to(RECEIVER).len(), 1, "nothing more once the agent is revoked");
}

#[test]
fn bad_subscriptions_are_refused_naming_what_is_wrong() {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    let webhooks = format!("/api/mailboxes/{mailbox}/webhooks");
    for url in ["http://hooks.example.com/x", "https://10.0.0.1/x", "https://localhost/x", "https://[::1]/x"] {
        let refused = world.admin("POST", &webhooks, Some(json!({ "url": url })));
        assert_refused(&refused, 400, "invalid_body");
        assert!(body(&refused)["error"]["message"].as_str().unwrap().contains("`url`"), "{url}: {}", text(&refused));
    }
    let refused =
        world.admin("POST", &webhooks, Some(json!({ "url": RECEIVER, "kinds": ["receive_mail", "Receive Mail"] })));
    assert_refused(&refused, 400, "invalid_body");
    assert!(body(&refused)["error"]["message"].as_str().unwrap().contains("`kinds[1]`"), "{}", text(&refused));
    let (_, ben_token) = world.person("ben@example.com");
    let refused = world.call("POST", &webhooks, Some(&ben_token), Some(json!({ "url": RECEIVER })));
    assert_refused(&refused, 403, "missing_relation");
    assert_refused(
        &world.admin("POST", "/api/mailboxes/mbx_nothere/webhooks", Some(json!({ "url": RECEIVER }))),
        404,
        "not_found",
    );
    for _ in 0..mailroom_contract::api::webhook_limits::PER_SUBJECT {
        assert_eq!(world.admin("POST", &webhooks, Some(json!({ "url": RECEIVER }))).status, 201);
    }
    assert_refused(&world.admin("POST", &webhooks, Some(json!({ "url": RECEIVER }))), 409, "conflict");
}

#[test]
fn a_removed_webhook_is_told_nothing_more_and_what_it_had_waiting_is_withheld() {
    let (world, _, webhook, _) = subscribed(json!([]));
    let webhooks = webhook.rsplit_once('/').unwrap().0.to_string();
    world.node.webhooks.status.set(500);
    world.deliver("plain", "support@mailroom.test");
    let removed = world.admin("DELETE", &webhook, None);
    assert_eq!(removed.status, 200, "{}", text(&removed));
    assert_refused(&world.admin("DELETE", &webhook, None), 404, "not_found");
    world.node.webhooks.status.set(200);
    assert!(deliveries(&world, &webhooks).is_empty(), "a removed webhook is not listed");
    world.node.platform.advance(60 * 60_000);
    world.deliver("latin1", "support@mailroom.test");
    world.node.run_every_minute();
    assert_eq!(world.node.webhooks.posted_to(RECEIVER).len(), 1, "only the first, failed, attempt");
    let withheld = world.node.database.count("SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'withheld'");
    assert_eq!(withheld, 1);
}

#[test]
fn the_retry_waits_the_routes_describe_are_the_ones_kept() {
    let waits = mailroom_contract::api::webhook_limits::RETRY_AFTER_MINUTES;
    let listed = |values: Vec<i64>| match values.split_last() {
        Some((last, rest)) if !rest.is_empty() => {
            format!("{} and {last}", rest.iter().map(i64::to_string).collect::<Vec<_>>().join(", "))
        }
        Some((last, _)) => last.to_string(),
        None => String::new(),
    };
    let minutes = listed(waits.iter().copied().filter(|wait| *wait < 60).collect());
    let hours = listed(waits.iter().copied().filter(|wait| *wait >= 60).map(|wait| wait / 60).collect());
    let words = format!("after {minutes} minutes, then {hours} hours");
    for route in [mailroom_contract::RouteId::CreateMailboxWebhook, mailroom_contract::RouteId::CreateAgentWebhook] {
        let description = mailroom_contract::registry().route(route).description;
        assert!(description.contains(&words), "{route:?} should say `{words}`: {description}");
    }
}
