//! A2A push notifications (issue 29): a task's configs kept by the node's
//! push config routes and set in either version's shape, or inline with a
//! send; each move of the task (claimed, answered) posted to the config's
//! endpoint as the task then stands, with its token and authentication;
//! another's task, an address inside a network and a header that would split
//! are refused.

use mailroom::testing::{RequestExt, request};
use serde_json::{Value, json};

use crate::support::{World, a2a_caller_and_agent as gateway, body, text};

const RECEIVER: &str = "https://hooks.example.com/a2a";

fn call(world: &World, token: &str, agent: &str, version: &str, method: &str, params: Value) -> Value {
    let call = request("POST", &format!("/a2a/{agent}"))
        .bearer(token)
        .header("a2a-version", version)
        .json(json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }));
    let answer = world.node.send(call);
    assert_eq!(answer.status, 200, "{}", text(&answer));
    body(&answer)
}

fn send(world: &World, token: &str, agent: &str, configuration: Value) -> Value {
    let message = json!({ "messageId": format!("m-{}", configuration), "role": "ROLE_USER", "parts": [{ "text": "Sum 37 and 58" }] });
    let sent =
        call(world, token, agent, "1.0", "SendMessage", json!({ "message": message, "configuration": configuration }));
    assert!(sent.get("result").is_some(), "{sent}");
    sent["result"]["task"].clone()
}

fn header<'a>(posted: &'a mailroom::testing::PostedWebhook, name: &str) -> Option<&'a str> {
    posted.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
}

#[test]
fn a_task_is_posted_as_it_moves_with_the_config_s_token_and_authentication() {
    let (world, (_, caller_token), (agent, agent_token)) = gateway();
    let task = send(&world, &caller_token, &agent, json!({}));
    let task_id = task["id"].as_str().unwrap();
    let config = json!({ "taskId": task_id, "id": "cfg-1", "url": RECEIVER, "token": "tok-123",
                         "authentication": { "scheme": "Bearer", "credentials": "receiver-secret" } });
    let created = call(&world, &caller_token, &agent, "1.0", "CreateTaskPushNotificationConfig", config.clone());
    assert_eq!(created["result"], config, "answered as stored: {created}");
    // Claimed: working; answered: completed with the reply as its artifact.
    let claimed = world.claim(&agent_token, 1);
    let posted = world.node.webhooks.posted_to(RECEIVER);
    assert_eq!(posted.len(), 1, "the claim is posted");
    let pushed: Value = serde_json::from_str(&posted[0].body).unwrap();
    assert_eq!(pushed["task"]["id"], task_id);
    assert_eq!(pushed["task"]["status"]["state"], "TASK_STATE_WORKING");
    assert_eq!(header(&posted[0], "content-type"), Some("application/a2a+json"));
    assert_eq!(header(&posted[0], "x-a2a-notification-token"), Some("tok-123"));
    assert_eq!(header(&posted[0], "authorization"), Some("Bearer receiver-secret"));
    let fencing = claimed[0]["fencing_token"].as_i64().unwrap();
    let replied = world.call(
        "POST",
        &format!("/api/agent-inbox/{task_id}/reply"),
        Some(&agent_token),
        Some(json!({ "fencing_token": fencing, "content": { "sum": 95 } })),
    );
    assert_eq!(replied.status, 200, "{}", text(&replied));
    let posted = world.node.webhooks.posted_to(RECEIVER);
    assert_eq!(posted.len(), 2);
    let pushed: Value = serde_json::from_str(&posted[1].body).unwrap();
    assert_eq!(pushed["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(posted[1].body.contains("95"), "the reply is the task's artifact: {}", posted[1].body);
}

#[test]
fn configs_are_created_read_listed_and_deleted_in_either_version_s_shape() {
    let (world, (_, caller_token), (agent, _)) = gateway();
    let task_id = send(&world, &caller_token, &agent, json!({}))["id"].as_str().unwrap().to_string();
    let v1 = |method: &str, params: Value| call(&world, &caller_token, &agent, "1.0", method, params);
    let v03 = |method: &str, params: Value| call(&world, &caller_token, &agent, "0.3", method, params);
    v1("CreateTaskPushNotificationConfig", json!({ "taskId": task_id, "id": "a", "url": RECEIVER }));
    let set = v03(
        "tasks/pushNotificationConfig/set",
        json!({ "taskId": task_id, "pushNotificationConfig": { "url": RECEIVER, "authentication": { "schemes": ["Basic"], "credentials": "dTpw" } } }),
    );
    // 0.3 names a config given without an id by its task.
    assert_eq!(set["result"]["pushNotificationConfig"]["id"], task_id, "{set}");
    assert_eq!(set["result"]["pushNotificationConfig"]["authentication"]["schemes"], json!(["Basic"]));
    let listed = v1("ListTaskPushNotificationConfigs", json!({ "taskId": task_id }));
    let ids: Vec<&str> =
        listed["result"]["configs"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a", task_id.as_str()]);
    let legacy = v03("tasks/pushNotificationConfig/list", json!({ "id": task_id }));
    assert_eq!(legacy["result"].as_array().unwrap().len(), 2, "{legacy}");
    let got = v1("GetTaskPushNotificationConfig", json!({ "taskId": task_id, "id": "a" }));
    assert_eq!(got["result"]["url"], RECEIVER);
    let got = v03("tasks/pushNotificationConfig/get", json!({ "id": task_id }));
    assert_eq!(got["result"]["pushNotificationConfig"]["id"], task_id, "0.3 without an id: the task's own");
    let deleted = v1("DeleteTaskPushNotificationConfig", json!({ "taskId": task_id, "id": "a" }));
    assert_eq!(deleted["result"], Value::Null, "{deleted}");
    let gone = v1("GetTaskPushNotificationConfig", json!({ "taskId": task_id, "id": "a" }));
    assert_eq!(gone["error"]["code"], -32001, "{gone}");
    let deleted =
        v03("tasks/pushNotificationConfig/delete", json!({ "id": task_id, "pushNotificationConfigId": task_id }));
    assert_eq!(deleted["result"], Value::Null, "{deleted}");
    assert_eq!(v1("ListTaskPushNotificationConfigs", json!({ "taskId": task_id }))["result"]["configs"], json!([]));
}

#[test]
fn a_config_given_with_a_send_is_kept_and_a_0_3_task_is_posted_as_the_task_itself() {
    let (world, (_, caller_token), (agent, agent_token)) = gateway();
    let message = json!({ "messageId": "m-legacy", "role": "user", "parts": [{ "kind": "text", "text": "Hello" }], "kind": "message" });
    let configuration = json!({ "pushNotificationConfig": { "url": RECEIVER, "token": "legacy-token" } });
    let sent = call(
        &world,
        &caller_token,
        &agent,
        "0.3",
        "message/send",
        json!({ "message": message, "configuration": configuration }),
    );
    let task_id = sent["result"]["id"].as_str().unwrap_or_else(|| panic!("{sent}")).to_string();
    world.claim(&agent_token, 1);
    let posted = world.node.webhooks.posted_to(RECEIVER);
    assert_eq!(posted.len(), 1);
    let pushed: Value = serde_json::from_str(&posted[0].body).unwrap();
    assert_eq!((pushed["kind"].as_str(), pushed["id"].as_str()), (Some("task"), Some(task_id.as_str())), "{pushed}");
    assert_eq!(pushed["status"]["state"], "working");
    assert_eq!(header(&posted[0], "content-type"), Some("application/json"));
    assert_eq!(header(&posted[0], "x-a2a-notification-token"), Some("legacy-token"));
}

#[test]
fn another_s_task_an_inward_address_and_a_header_that_would_split_are_refused() {
    let (world, (_, caller_token), (agent, _)) = gateway();
    let (ben, _) = world.person("cleo@example.com");
    let (_, stranger_token) = world.messenger(&ben);
    let task_id = send(&world, &caller_token, &agent, json!({}))["id"].as_str().unwrap().to_string();
    // Another caller's task is not found, over A2A and over REST.
    let theirs = call(
        &world,
        &stranger_token,
        &agent,
        "1.0",
        "CreateTaskPushNotificationConfig",
        json!({ "taskId": task_id, "url": RECEIVER }),
    );
    assert_eq!(theirs["error"]["code"], -32001, "{theirs}");
    let over_rest =
        world.call("GET", &format!("/api/agent-messages/{task_id}/push-configs"), Some(&stranger_token), None);
    assert_eq!(over_rest.status, 404, "{}", text(&over_rest));
    for url in ["https://10.0.0.8/hook", "http://hooks.example.com/hook", "https://localhost/hook"] {
        let refused = call(
            &world,
            &caller_token,
            &agent,
            "1.0",
            "CreateTaskPushNotificationConfig",
            json!({ "taskId": task_id, "url": url }),
        );
        assert_eq!(refused["error"]["code"], -32602, "{url}: {refused}");
    }
    let split = call(
        &world,
        &caller_token,
        &agent,
        "1.0",
        "CreateTaskPushNotificationConfig",
        json!({ "taskId": task_id, "url": RECEIVER, "token": "ok\r\nx-injected: yes" }),
    );
    assert_eq!(split["error"]["code"], -32602, "{split}");
    // An inward address given with a send refuses the send before it is sent.
    let before = body(&world.call("GET", "/api/agent-messages", Some(&caller_token), None))["messages"]
        .as_array()
        .unwrap()
        .len();
    let message = json!({ "messageId": "m-inward", "role": "ROLE_USER", "parts": [{ "text": "Hi" }] });
    let refused = call(
        &world,
        &caller_token,
        &agent,
        "1.0",
        "SendMessage",
        json!({ "message": message, "configuration": { "taskPushNotificationConfig": { "url": "https://192.168.0.1/x" } } }),
    );
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let after = body(&world.call("GET", "/api/agent-messages", Some(&caller_token), None))["messages"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(before, after, "nothing was sent");
    assert!(world.node.webhooks.posted_to("https://10.0.0.8/hook").is_empty());
}

#[test]
fn a_revoked_caller_s_task_is_no_longer_posted() {
    let (world, (caller, caller_token), (agent, agent_token)) = gateway();
    let task_id = send(&world, &caller_token, &agent, json!({}))["id"].as_str().unwrap().to_string();
    call(
        &world,
        &caller_token,
        &agent,
        "1.0",
        "CreateTaskPushNotificationConfig",
        json!({ "taskId": task_id, "url": RECEIVER }),
    );
    let revoked = world.admin("POST", &format!("/api/agents/{caller}/revoke"), None);
    assert!(revoked.status < 300, "{}", text(&revoked));
    world.claim(&agent_token, 1);
    assert!(world.node.webhooks.posted_to(RECEIVER).is_empty(), "withheld: whoever asked can no longer act");
    let withheld = world.node.database.count("SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'withheld'");
    assert_eq!(withheld, 1);
}
