//! Capabilities and the ceiling as a machine meets them: every capability keeps
//! its promise route by route, an agent is offered over MCP exactly the grantable
//! routes within its ceiling, a pinned route stays shown when no capability holds
//! it any more, and its mailbox tools stop at the ceiling.

use mailroom_contract::capabilities::CAPABILITIES;
use mailroom_contract::{RouteId, registry};
use serde_json::{Value, json};

use crate::agents::{SUPPORT, as_agent, grants, office};
use crate::desk::READS_THE_MAILBOX;
use crate::support::*;

/// The capability promise: an agent minted with exactly what a capability
/// declares drives every route in it without an authority refusal, and with 200
/// (or 201) wherever the fixture exists.
#[test]
fn every_capability_keeps_its_promise() {
    for capability in CAPABILITIES {
        let office = office();
        let (world, mailbox, receipt, ben, ben_token) = (
            &office.world,
            office.mailbox.as_str(),
            office.receipt(),
            office.person("ben").id.as_str(),
            office.person("ben").token.as_str(),
        );
        let with_attachment = world.deliver("multipart-attachment", SUPPORT);
        world.grant_all(ben, &["message.export", "approval.decide"], mailbox);
        let requirements: Vec<&str> =
            capability.requirements(registry()).iter().map(|relation| relation.name()).collect();
        let (agent_id, credential) = world.mint(ben, &[capability.name], grants(mailbox, &requirements));
        let sends = format!("/api/mailboxes/{mailbox}/sends");
        // Agent messaging: a peer on the node, and a message each way.
        let peer = || world.messenger(ben);
        let sent_by_agent = || world.send_message(&credential, &peer().0, "request", json!("37 + 58?"));
        let leased_by_agent = || {
            world.send_message(&peer().1, &agent_id, "request", json!("37 + 58?"));
            let leased = world.claim(&credential, 1).remove(0);
            (leased["id"].as_str().unwrap().to_string(), leased["fencing_token"].clone())
        };
        let draft = || {
            let created = world.call(
                "POST",
                &sends,
                Some(&credential),
                Some(json!({ "to": ["ana@customer.example"], "subject": "Hello", "text": "Hi." })),
            );
            body(&created)["id"].as_str().unwrap_or("snd_00000000000000000000000000").to_string()
        };
        for id in capability.routes {
            let route = registry().route(*id);
            let (method, path, payload): (&str, String, Option<Value>) = match id {
                RouteId::GetMe => ("GET", "/api/me".into(), None),
                RouteId::ListReadableMailboxes => ("GET", "/api/mailboxes/readable".into(), None),
                RouteId::ListMessages => ("GET", format!("/api/mailboxes/{mailbox}/messages"), None),
                RouteId::GetMessage => ("GET", format!("/api/mailboxes/{mailbox}/messages/{receipt}"), None),
                RouteId::GetMessageBody => ("GET", format!("/api/mailboxes/{mailbox}/messages/{receipt}/body"), None),
                RouteId::GetAttachment => {
                    ("GET", format!("/api/mailboxes/{mailbox}/messages/{with_attachment}/attachments/0"), None)
                }
                RouteId::SearchMessages => ("GET", "/api/search?q=invoice".into(), None),
                RouteId::ListThreads => ("GET", format!("/api/mailboxes/{mailbox}/threads"), None),
                RouteId::GetThread => ("GET", world.thread_of(mailbox, receipt), None),
                RouteId::UpdateThread => {
                    ("PATCH", world.thread_of(mailbox, receipt), Some(json!({ "status": "closed", "assignee": "" })))
                }
                RouteId::MarkThreadRead => ("PUT", format!("{}/read", world.thread_of(mailbox, receipt)), None),
                RouteId::MarkThreadUnread => ("DELETE", format!("{}/read", world.thread_of(mailbox, receipt)), None),
                RouteId::GetMessageOriginal => {
                    ("GET", format!("/api/mailboxes/{mailbox}/messages/{receipt}/original"), None)
                }
                RouteId::ListMailboxes => ("GET", "/api/mailboxes".into(), None),
                RouteId::ListSends => {
                    draft();
                    ("GET", sends.clone(), None)
                }
                RouteId::GetSend => ("GET", format!("{sends}/{}", draft()), None),
                RouteId::CreateDraft => (
                    "POST",
                    sends.clone(),
                    Some(json!({ "to": ["ana@customer.example"], "subject": "S", "text": "T" })),
                ),
                RouteId::UpdateDraft => ("PATCH", format!("{sends}/{}", draft()), Some(json!({ "text": "Edited" }))),
                RouteId::DeleteDraft => ("DELETE", format!("{sends}/{}", draft()), None),
                RouteId::SubmitSend => ("POST", format!("{sends}/{}/submit", draft()), None),
                RouteId::CancelSend => {
                    let send = draft();
                    world.call("POST", &format!("{sends}/{send}/submit"), Some(&credential), None);
                    ("POST", format!("{sends}/{send}/cancel"), None)
                }
                RouteId::AddSendAttachment => (
                    "POST",
                    format!("{sends}/{}/attachments", draft()),
                    Some(json!({ "name": "a.txt", "content_type": "text/plain", "content_base64": "aGVsbG8=" })),
                ),
                RouteId::RemoveSendAttachment | RouteId::GetSendAttachment => {
                    let send = draft();
                    let file = json!({ "name": "a.txt", "content_type": "text/plain", "content_base64": "aGVsbG8=" });
                    world.call("POST", &format!("{sends}/{send}/attachments"), Some(&credential), Some(file));
                    let method = if *id == RouteId::GetSendAttachment { "GET" } else { "DELETE" };
                    (method, format!("{sends}/{send}/attachments/0"), None)
                }
                RouteId::RedraftSend => {
                    let send = draft();
                    world.call("POST", &format!("{sends}/{send}/submit"), Some(&credential), None);
                    // Refused by a third person: neither its sponsor nor whoever minted it.
                    let (dora, dora_token) = world.person("dora@example.com");
                    world.grant_all(&dora, &["approval.decide"], mailbox);
                    let path = format!("{sends}/{send}");
                    let refusal = world.refusal_of(&dora_token, &path, "Say it more kindly.");
                    world.call("POST", &format!("{path}/refuse"), Some(&dora_token), Some(refusal));
                    ("POST", format!("{sends}/{send}/redraft"), None)
                }
                RouteId::ListSavedReplies => {
                    // One the team saved, so the list the agent reads is not empty.
                    let replies = format!("/api/mailboxes/{mailbox}/saved-replies");
                    let reply = json!({ "name": "Thanks", "body": "Thank you, {{customer.name}}." });
                    let saved = world.call("POST", &replies, Some(ben_token), Some(reply));
                    assert_eq!(saved.status, 201, "{}", text(&saved));
                    ("GET", replies, None)
                }
                RouteId::GetMailboxSignature => {
                    let signature = format!("/api/mailboxes/{mailbox}/signature");
                    let set = world.call("PUT", &signature, Some(ben_token), Some(json!({ "text": "Support" })));
                    assert_eq!(set.status, 200, "{}", text(&set));
                    ("GET", signature, None)
                }
                RouteId::ListNotes => {
                    // One a person wrote, so the list the agent reads is not empty.
                    let notes = format!("{}/notes", world.thread_of(mailbox, receipt));
                    let written = world.call("POST", &notes, Some(ben_token), Some(json!({ "text": "Seen." })));
                    assert_eq!(written.status, 201, "{}", text(&written));
                    ("GET", notes, None)
                }
                RouteId::AddNote => (
                    "POST",
                    format!("{}/notes", world.thread_of(mailbox, receipt)),
                    Some(json!({ "text": "@ben looked at this." })),
                ),
                RouteId::DeleteNote => {
                    // The agent's own note.
                    let notes = format!("{}/notes", world.thread_of(mailbox, receipt));
                    let written = world.call("POST", &notes, Some(&credential), Some(json!({ "text": "Mine." })));
                    assert_eq!(written.status, 201, "{}", text(&written));
                    ("DELETE", format!("{notes}/{}", body(&written)["note"]["id"].as_str().unwrap()), None)
                }
                RouteId::RetrySend => {
                    // Its own submission, approved by a person, failed by the binding once.
                    let send = draft();
                    world.call("POST", &format!("{sends}/{send}/submit"), Some(&credential), None);
                    // Neither its sponsor nor the administrator who minted it: a third person.
                    let (carol, carol_token) = world.person("carol@example.com");
                    world.grant_all(&carol, &["approval.decide"], mailbox);
                    let path = format!("{sends}/{send}");
                    world.approve_while_refusing(&carol_token, &path, "ana@customer.example");
                    ("POST", format!("{sends}/{send}/retry"), None)
                }
                RouteId::ListNotifications => {
                    world.reminder_in_feed(ben_token);
                    ("GET", "/api/me/notifications".into(), None)
                }
                RouteId::MarkNotificationsRead => {
                    world.reminder_in_feed(ben_token);
                    ("POST", "/api/me/notifications/read".into(), Some(json!({ "all": true })))
                }
                RouteId::MarkNotificationUnread => {
                    world.reminder_in_feed(ben_token);
                    let feed = world.call("GET", "/api/me/notifications", Some(ben_token), None);
                    let id = body(&feed)["notifications"][0]["id"].as_str().unwrap_or_default().to_string();
                    ("DELETE", format!("/api/me/notifications/{id}/read"), None)
                }
                RouteId::ListEvents => ("GET", "/api/me/events".into(), None),
                RouteId::GetEvent => {
                    ("GET", format!("/api/me/events/{}", world.reminder(ben_token, "2026-12-14")), None)
                }
                RouteId::GetProfile => ("GET", "/api/me/profile".into(), None),
                RouteId::CreateEvent => {
                    ("POST", "/api/me/events".into(), Some(json!({ "title": "Call", "due_at": "2026-12-14T09:00" })))
                }
                RouteId::UpdateEvent => (
                    "PATCH",
                    format!("/api/me/events/{}", world.reminder(ben_token, "2026-12-14")),
                    Some(json!({ "due_at": "2026-12-15" })),
                ),
                RouteId::DeleteEvent => {
                    ("DELETE", format!("/api/me/events/{}", world.reminder(ben_token, "2026-12-14")), None)
                }
                RouteId::MarkDone => {
                    ("POST", format!("/api/me/events/{}/done", world.reminder(ben_token, "2026-12-14")), None)
                }
                RouteId::ReopenEvent => {
                    ("POST", format!("/api/me/events/{}/reopen", world.reminder(ben_token, "2026-12-14")), None)
                }
                RouteId::MarkAck => {
                    ("POST", format!("/api/me/events/{}/ack", world.reminder(ben_token, "2026-12-14")), None)
                }
                RouteId::UpdateProfile => ("PATCH", "/api/me/profile".into(), Some(json!({ "tz": "Europe/Berlin" }))),
                RouteId::SendAgentMessage => (
                    "POST",
                    "/api/agent-messages".into(),
                    Some(json!({ "recipient": peer().0, "kind": "event", "content": {}, "idempotency_key": "k" })),
                ),
                RouteId::ListSentAgentMessages => {
                    sent_by_agent();
                    ("GET", "/api/agent-messages".into(), None)
                }
                RouteId::GetAgentMessage => {
                    ("GET", format!("/api/agent-messages/{}", sent_by_agent()["id"].as_str().unwrap()), None)
                }
                RouteId::ListAgentInbox | RouteId::ClaimAgentMessages => {
                    world.send_message(&peer().1, &agent_id, "event", json!({ "deployed": true }));
                    if *id == RouteId::ListAgentInbox {
                        ("GET", "/api/agent-inbox".into(), None)
                    } else {
                        ("POST", "/api/agent-inbox/leases".into(), Some(json!({ "max": 2 })))
                    }
                }
                RouteId::AckAgentMessage => {
                    let (message, token) = leased_by_agent();
                    ("POST", format!("/api/agent-inbox/{message}/ack"), Some(json!({ "fencing_token": token })))
                }
                RouteId::RenewAgentLease => {
                    let (message, token) = leased_by_agent();
                    ("POST", format!("/api/agent-inbox/{message}/renew"), Some(json!({ "fencing_token": token })))
                }
                RouteId::ReplyToAgentMessage => {
                    let (message, token) = leased_by_agent();
                    let reply = json!({ "fencing_token": token, "content": 95 });
                    ("POST", format!("/api/agent-inbox/{message}/reply"), Some(reply))
                }
                RouteId::RejectAgentMessage => {
                    let (message, token) = leased_by_agent();
                    let reject = json!({ "fencing_token": token, "reason": "Not mine." });
                    ("POST", format!("/api/agent-inbox/{message}/reject"), Some(reject))
                }
                RouteId::ListAgentConversations => {
                    sent_by_agent();
                    ("GET", "/api/agent-conversations".into(), None)
                }
                RouteId::GetAgentConversation => {
                    let conversation = sent_by_agent()["conversation_id"].as_str().unwrap().to_string();
                    ("GET", format!("/api/agent-conversations/{conversation}"), None)
                }
                RouteId::CancelAgentConversation => {
                    let conversation = sent_by_agent()["conversation_id"].as_str().unwrap().to_string();
                    ("POST", format!("/api/agent-conversations/{conversation}/cancel"), None)
                }
                RouteId::CreatePushConfig | RouteId::ListPushConfigs | RouteId::RemovePushConfig => {
                    let message = sent_by_agent()["id"].as_str().unwrap().to_string();
                    let configs = format!("/api/agent-messages/{message}/push-configs");
                    let config = json!({ "id": "cfg-1", "url": "https://hooks.example.com/task" });
                    match id {
                        RouteId::CreatePushConfig => ("POST", configs, Some(config)),
                        RouteId::ListPushConfigs => ("GET", configs, None),
                        _ => {
                            let created = world.call("POST", &configs, Some(&credential), Some(config));
                            assert_eq!(created.status, 201, "{}", text(&created));
                            ("DELETE", format!("{configs}/cfg-1"), None)
                        }
                    }
                }
                other => {
                    panic!("{other:?} is in capability {} but has no promise fixture here: add one", capability.name)
                }
            };
            let response = world.call(method, &path, Some(&credential), payload);
            assert!(
                response.status == 200 || response.status == 201 || response.status == 202,
                "{} promises {} {}, which answered {}: {}",
                capability.name,
                route.method.as_str(),
                route.path,
                response.status,
                text(&response)
            );
            // A filtered route answers 200 even to a caller who sees nothing, so a
            // listing must also show the fixture's rows.
            if let Some(listing) = body(&response).as_object().and_then(|object| {
                ["results", "mailboxes", "messages", "sends", "conversations", "notifications"]
                    .iter()
                    .find_map(|key| object.get(*key))
            }) {
                assert!(
                    listing.as_array().is_some_and(|rows| !rows.is_empty()),
                    "{} promises {}, which listed nothing: {}",
                    capability.name,
                    route.tool,
                    text(&response)
                );
            }
        }
    }
}

#[test]
fn an_agent_sees_the_grantable_routes_within_its_ceiling_over_mcp_and_calls_them_as_itself() {
    let office = office();
    let (world, mailbox, receipt, ben) =
        (&office.world, office.mailbox.as_str(), office.receipt(), office.person("ben").id.as_str());
    let (agent, credential) = world.mint(ben, &["mail.triage"], grants(mailbox, &["mailbox.metadata.read"]));
    let listed = world.call(
        "POST",
        "/mcp",
        Some(&credential),
        Some(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" })),
    );
    assert!(listed.round_trips <= 1);
    let mut names: Vec<String> = body(&listed)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(names, vec!["get_message", "list_messages", "list_readable_mailboxes"]);
    let called = world.call(
        "POST",
        "/mcp",
        Some(&credential),
        Some(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "get_message", "arguments": { "mailbox_id": mailbox, "receipt_id": receipt } } })),
    );
    assert_eq!(body(&called)["result"]["structuredContent"]["subject"], "Where is my invoice?");
    let outside = world.call(
        "POST",
        "/mcp",
        Some(&credential),
        Some(json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "get_message_body", "arguments": { "mailbox_id": mailbox, "receipt_id": receipt } } })),
    );
    assert_eq!(body(&outside)["error"]["code"], -32602, "a route outside the ceiling is no tool for this agent");
    world.call(
        "POST",
        "/mcp",
        Some(&credential),
        Some(json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": { "name": "search_messages", "arguments": { "q": "x" } } })),
    );
    world.admin("POST", &format!("/api/agents/{agent}/pause"), None);
    let paused = world.call(
        "POST",
        "/mcp",
        Some(&credential),
        Some(json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/list" })),
    );
    assert_refused(&paused, 403, "agent_paused");
}

#[test]
fn a_pinned_route_no_capability_contains_any_more_is_shown_never_dropped() {
    let office = office();
    let (world, mailbox, ben) = (&office.world, office.mailbox.as_str(), office.person("ben").id.as_str());
    let (agent, _) = world.mint(ben, &["mail.triage"], grants(mailbox, &["mailbox.metadata.read"]));
    // As if a route had been renamed or a capability shrunk after this agent was minted.
    world
        .node
        .database
        .tamper(&format!("INSERT INTO agent_routes (agent_id, route) VALUES ('{agent}', 'list_labels')"));
    let shown = body(&world.admin("GET", &format!("/api/agents/{agent}"), None));
    assert_eq!(shown["other_routes"], json!(["list_labels"]));
    assert!(shown["routes"].as_array().unwrap().contains(&json!("list_labels")));
    assert_eq!(shown["capabilities"], json!([{ "name": "mail.triage", "held": 3, "total": 3 }]));
}

#[test]
fn an_agent_s_mailbox_tools_stop_at_its_ceiling_though_it_holds_more() {
    let office = office();
    let (world, a, receipt, ben, ben_token) = (
        &office.world,
        office.mailbox.as_str(),
        office.receipt(),
        office.person("ben").id.as_str(),
        office.person("ben").token.as_str(),
    );
    let (agent, credential) = world.mint(ben, &["mail.read", "mail.triage"], grants(a, READS_THE_MAILBOX));
    // Granted later, and backed by the sponsor: held, but outside the ceiling.
    assert_eq!(world.grant(&agent, "send.propose", a).status, 201);
    let tools_on_a = |token: &str| {
        let listed = body(&world.call("GET", "/api/mailboxes/readable", Some(token), None));
        let mailbox = listed["mailboxes"].as_array().unwrap().iter().find(|mailbox| mailbox["id"] == a).cloned();
        mailbox.map(|mailbox| (mailbox["held"].clone(), mailbox["tools"].clone())).unwrap()
    };
    let (held, tools) = tools_on_a(&credential);
    assert!(held.as_array().unwrap().iter().any(|relation| relation == "send.propose"), "{held}");
    assert!(tools.as_array().unwrap().iter().any(|tool| tool == "get_message_body"), "{tools}");
    assert!(!tools.as_array().unwrap().iter().any(|tool| tool == "create_draft"), "{tools}");
    let drafted = as_agent(
        world,
        &credential,
        "POST",
        &format!("/api/mailboxes/{a}/sends"),
        Some(json!({ "to": [], "subject": "x", "text": "y", "reply_to": receipt })),
    );
    assert_refused(&drafted, 403, "outside_ceiling");
    // The sponsor, who has no ceiling, is offered it on the same relations.
    let (_, tools) = tools_on_a(ben_token);
    assert!(tools.as_array().unwrap().iter().any(|tool| tool == "create_draft"), "{tools}");
}
