//! `subscriptions/listen` (issue 29, decision 0037): the stream opens with the
//! acknowledgement of what the server agreed to send, tagged with the
//! request's id; it listens through each resource's listening route as the
//! caller; a change told on a resource's topic is a
//! `notifications/resources/updated` only when the resource's reading changed;
//! an access check that changes the catalogue or the resource list is a
//! `notifications/tools/list_changed` or `notifications/resources/list_changed`; what the caller may not read refuses
//! the whole request, naming it.

use mailroom::core::events::Topic;
use mailroom::core::http::{Following, Response, Surface, Told};
use mailroom::testing::{RequestExt, request};
use serde_json::{Value, json};

use crate::mcp::call;
use crate::support::*;

const MODERN: &str = "2026-07-28";

/// A modern `subscriptions/listen` as `token`, asking for `notifications`.
fn listen(world: &World, token: &str, notifications: Value) -> Response {
    let built = request("POST", "/mcp")
        .bearer(token)
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "subscriptions/listen")
        .json(json!({
            "jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen",
            "params": { "notifications": notifications, "_meta": { "io.modelcontextprotocol/protocolVersion": MODERN } },
        }));
    world.node.send(built)
}

/// What the follower sends after `told`, its readings dispatched as the adapter does.
fn after(world: &World, following: &Following, told: Option<&Told<'_>>) -> Vec<Value> {
    let (events, finished) = followed_after(world, following, told);
    assert!(!finished, "a subscription goes on until it is closed");
    events
}

#[test]
fn a_subscription_is_acknowledged_then_told_only_what_changed_in_what_it_follows() {
    let world = World::new();
    let support = world.mailbox("support@mailroom.test");
    let (dee, dee_token) = world.person("dee@example.com");
    world.grant_all(&dee, &["mailbox.metadata.read", "mailbox.content.read"], &support);
    let mailbox_uri = format!("mailroom://mailboxes/{support}");
    let answer = listen(
        &world,
        &dee_token,
        json!({ "resourceSubscriptions": [mailbox_uri, "mailroom://me/notifications"], "toolsListChanged": true, "resourcesListChanged": true, "promptsListChanged": true }),
    );
    assert_eq!(answer.status, 200, "{}", text(&answer));
    let opening = sse_events(&answer);
    assert_eq!(opening.len(), 1);
    assert_eq!(opening[0]["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(opening[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "sub-1");
    // What the server agreed to: never prompts, which it has none of.
    assert_eq!(
        opening[0]["params"]["notifications"],
        json!({ "toolsListChanged": true, "resourcesListChanged": true, "resourceSubscriptions": [mailbox_uri, "mailroom://me/notifications"] })
    );
    let following = answer.follow.clone().expect("a stream");
    assert_eq!(following.surface, Surface::Mcp);
    assert!(following.access_checks);
    let mut topics: Vec<Topic> = following.listeners.iter().map(|(listening, _)| listening.topic.clone()).collect();
    topics.sort();
    assert_eq!(topics, [Topic::Mailbox(support.clone()), Topic::Person(dee.clone())]);
    // Nothing changed yet: nothing told.
    assert_eq!(after(&world, &following, None), Vec::<Value>::new());
    // Mail arrives: the mailbox's topic is told, its reading changed.
    world.deliver("plain", "support@mailroom.test");
    let mailbox_topic = Topic::Mailbox(support.clone()).key();
    let told = Told { topic: &mailbox_topic, kind: "receive_mail", object: None };
    assert_eq!(following.follower.readings(Some(&told)).len(), 1, "only what is on that topic is read");
    let updated = after(&world, &following, Some(&told));
    assert_eq!(updated.len(), 1, "{updated:?}");
    assert_eq!(updated[0]["method"], "notifications/resources/updated");
    assert_eq!(updated[0]["params"]["uri"], mailbox_uri.as_str());
    assert_eq!(updated[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "sub-1");
    // Told again with nothing new: nothing sent.
    assert_eq!(after(&world, &following, Some(&told)), Vec::<Value>::new());
    // Access checked with the catalogue unchanged: nothing; once an
    // administrator changes what Dee may do, the catalogue changed.
    let checked = Told { topic: &mailbox_topic, kind: Told::ACCESS_CHECKED, object: None };
    assert_eq!(after(&world, &following, Some(&checked)), Vec::<Value>::new());
    let sends = world.mailbox("sales@mailroom.test");
    world.grant_all(&dee, &["mailbox.metadata.read", "mailbox.content.read", "send.propose"], &sends);
    let changed: Vec<Value> = after(&world, &following, Some(&checked))
        .into_iter()
        .map(|notification| notification["method"].clone())
        .collect();
    assert_eq!(changed, ["notifications/tools/list_changed", "notifications/resources/list_changed"]);
}

#[test]
fn a_conversation_followed_is_told_of_its_own_changes_and_not_of_its_neighbours() {
    let world = World::new();
    let support = world.mailbox("support@mailroom.test");
    let (dee, dee_token) = world.person("dee@example.com");
    world.grant_all(&dee, &["mailbox.metadata.read", "mailbox.content.read", "send.propose"], &support);
    let followed = world.thread_of(&support, &world.deliver("plain", "support@mailroom.test"));
    let neighbour = world.thread_of(&support, &world.deliver("html-only", "support@mailroom.test"));
    let thread_id = followed.rsplit('/').next().unwrap();
    let uri = format!("mailroom://mailboxes/{support}/conversations/{thread_id}");
    let answer = listen(&world, &dee_token, json!({ "resourceSubscriptions": [uri] }));
    let following = answer.follow.clone().expect("a stream");
    let topic = Topic::Mailbox(support.clone()).key();
    let told = Told { topic: &topic, kind: "update_thread", object: None };
    // The neighbour closed: the mailbox's topic is told, the followed
    // conversation read again, and nothing sent, since it did not change.
    let closed = world.call("PATCH", &neighbour, Some(&dee_token), Some(json!({ "status": "closed" })));
    assert_eq!(closed.status, 200, "{}", text(&closed));
    assert_eq!(after(&world, &following, Some(&told)), Vec::<Value>::new());
    // The followed one closed: told.
    let closed = world.call("PATCH", &followed, Some(&dee_token), Some(json!({ "status": "closed" })));
    assert_eq!(closed.status, 200, "{}", text(&closed));
    let updated = after(&world, &following, Some(&told));
    assert_eq!(updated.len(), 1, "{updated:?}");
    assert_eq!(updated[0]["params"]["uri"], uri.as_str());
}

#[test]
fn what_the_caller_may_not_read_refuses_the_subscription_naming_it() {
    let world = World::new();
    let private = world.mailbox("private@mailroom.test");
    let (_, eve_token) = world.person("eve@example.com");
    let uri = format!("mailroom://mailboxes/{private}");
    let refused = listen(&world, &eve_token, json!({ "resourceSubscriptions": [uri] }));
    assert!(refused.follow.is_none());
    let refused = body(&refused);
    assert_eq!(refused["error"]["code"], -32002, "{refused}");
    assert_eq!(refused["error"]["data"]["uri"], uri.as_str());
    // An unknown URI, a list that is not one, and a flood.
    for notifications in [
        json!({ "resourceSubscriptions": ["mailroom://people"] }),
        json!({ "resourceSubscriptions": "mailroom://me/notifications" }),
        json!({ "resourceSubscriptions": (0..17).map(|index| format!("mailroom://mailboxes/mbx_{index}")).collect::<Vec<_>>() }),
    ] {
        let answer = body(&listen(&world, &eve_token, notifications.clone()));
        assert!(answer["error"]["code"] == -32002 || answer["error"]["code"] == -32602, "{notifications}: {answer}");
    }
    let unnamed = body(&listen(&world, &eve_token, Value::Null));
    assert_eq!(unnamed["error"]["code"], -32602, "{unnamed}");
    // Only the stateless revision listens.
    let legacy = call(&world, Some(&eve_token), "subscriptions/listen", json!({ "notifications": {} }));
    assert_eq!(legacy["error"]["code"], -32601, "{legacy}");
}

#[test]
fn a_modern_notification_needs_no_method_header_but_one_it_carries_must_match() {
    let world = World::new();
    let cancelled = |method_header: Option<&str>| {
        let mut built =
            request("POST", "/mcp").bearer(&world.admin_token).header("mcp-protocol-version", MODERN).json(json!({
                "jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": { "requestId": "listen:0", "_meta": { "io.modelcontextprotocol/protocolVersion": MODERN } },
            }));
        if let Some(method) = method_header {
            built = built.header("mcp-method", method);
        }
        world.node.send(built)
    };
    // As the official client closes a subscription.
    assert_eq!(cancelled(None).status, 202);
    assert_eq!(cancelled(Some("notifications/cancelled")).status, 202);
    assert_eq!(cancelled(Some("tools/call")).status, 400);
}
