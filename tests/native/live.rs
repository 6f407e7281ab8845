//! Listening: what every committed change tells, and where (`core::events`);
//! the listening routes' answers; and asking a listener's standing again
//! (`live::Listener`, `live::Standing`) as a hub does, after each kind of
//! access change an attacker who lost access would hope a stream survives.

use mailroom::core::events::{Event, Listening, Topic};
use mailroom::core::http::Response;
use mailroom::live::{Listener, Standing};
use mailroom::testing::{RequestExt, request};
use mailroom_contract::{Authority, Tier, registry};
use serde_json::json;

use crate::desk::{Desk, READS_THE_MAILBOX};
use crate::support::{World, assert_refused, text};

/// The events committed since the last look.
fn told(world: &World) -> Vec<Event> {
    world.node.events.take()
}

/// Opens a stream on `path` as the holder of `token`: the route's answer.
fn open(world: &World, path: &str, token: &str) -> Response {
    world.node.send(request("GET", path).bearer(token).header("upgrade", "websocket"))
}

/// Where a listener that `token` opened on `path` stands now, asked as its
/// hub asks: the opening request replayed without the upgrade. (Who it is
/// recorded as does not take part in the asking.)
fn standing(world: &World, path: &str, token: &str) -> Standing {
    let opening = request("GET", path).bearer(token).header("upgrade", "websocket");
    let listening = Listening { topic: Topic::Access, actor: "usr_someone".into(), delegator: None, actor_name: None };
    Standing::of(&world.node.send(Listener::of(&opening, &listening).recheck_request()))
}

#[test]
fn mail_received_and_changes_in_a_mailbox_are_told_on_its_topic_as_ids_and_kinds() {
    let desk = Desk::new("support@example.com").with("ben@example.com", READS_THE_MAILBOX);
    told(&desk.world);
    let receipt = desk.world.deliver("plain", "support@example.com");
    let events = told(&desk.world);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].topic, Topic::Mailbox(desk.mailbox.clone()));
    assert_eq!((events[0].kind.as_str(), events[0].object.as_deref()), ("receive_mail", Some(receipt.as_str())));

    let thread = desk.world.thread_of(&desk.mailbox, &receipt);
    let ben = &desk.person("ben").token;
    assert_eq!(desk.world.call("PUT", &format!("{thread}/read"), Some(ben), None).status, 200);
    let events = told(&desk.world);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        (events[0].kind.as_str(), events[0].topic.clone()),
        ("mark_thread_read", Topic::Mailbox(desk.mailbox.clone()))
    );

    // A read tells nothing; a refused change tells nothing.
    assert_eq!(
        desk.world.call("GET", &format!("/api/mailboxes/{}/threads", desk.mailbox), Some(ben), None).status,
        200
    );
    let refused = desk.world.call("PATCH", &thread, Some(ben), Some(json!({ "status": "closed" })));
    assert_eq!(refused.status, 403, "{}", text(&refused));
    assert_eq!(told(&desk.world), Vec::new());
}

#[test]
fn a_change_of_ones_own_is_told_on_ones_own_topic_and_an_administrators_act_as_access_changing() {
    let world = World::new();
    let (ben_id, ben) = world.person("ben@example.com");
    told(&world);
    let created = world.call(
        "POST",
        "/api/me/events",
        Some(&ben),
        Some(json!({ "title": "Renew the passport", "due_at": "2027-06-30" })),
    );
    assert_eq!(created.status, 201, "{}", text(&created));
    let events = told(&world);
    assert_eq!(
        events.iter().map(|event| (event.topic.clone(), event.kind.as_str())).collect::<Vec<_>>(),
        [(Topic::Person(ben_id.clone()), "create_event")]
    );

    let mailbox = world.mailbox("support@example.com");
    told(&world);
    world.grant(&ben_id, "mailbox.metadata.read", &mailbox);
    world.revoke(&ben_id, "mailbox.metadata.read", &mailbox);
    let events = told(&world);
    assert_eq!(
        events.iter().map(|event| (event.topic.clone(), event.kind.as_str())).collect::<Vec<_>>(),
        [(Topic::Access, "grant_relation"), (Topic::Access, "revoke_relation")]
    );

    // Falling due in Ben's feed (the per-minute job) is told on his topic too.
    let due_today = world.call(
        "POST",
        "/api/me/events",
        Some(&ben),
        Some(json!({ "title": "Call the bank", "due_at": "1970-01-01" })),
    );
    assert_eq!(due_today.status, 201, "{}", text(&due_today));
    told(&world);
    world.node.run_every_minute();
    let due = told(&world);
    assert!(
        due.iter().any(|event| event.kind == "reminder_due" && event.topic == Topic::Person(ben_id.clone())),
        "{due:?}"
    );

    // Signing in adds access only to the one signing in: nothing to ask again.
    crate::support::sign_in(&world.node, "ben@example.com", crate::support::PASSWORD);
    assert_eq!(told(&world), Vec::new());
}

#[test]
fn a_stream_opens_only_for_a_reader_only_as_an_upgrade_and_its_opening_is_recorded() {
    let desk = Desk::new("support@example.com").with("ben@example.com", READS_THE_MAILBOX).with("dee@example.com", &[]);
    let path = format!("/api/mailboxes/{}/live", desk.mailbox);
    let opened = open(&desk.world, &path, &desk.person("ben").token);
    assert_eq!(opened.status, 101, "{}", text(&opened));
    let listening = opened.listen.expect("a stream opened");
    assert_eq!(listening.topic, Topic::Mailbox(desk.mailbox.clone()));
    assert_eq!((listening.actor.as_str(), listening.delegator), (desk.person("ben").id.as_str(), None));
    assert!(listening.actor_name.is_some_and(|name| !name.is_empty()), "its name, told beside its presence");
    let entry = desk.world.last_audit_entry();
    assert_eq!((entry["action"].as_str(), entry["outcome"].as_str()), (Some("listen_to_mailbox"), Some("ok")));
    assert_eq!(entry["object"], json!(desk.mailbox), "its object is the mailbox, as every mailbox route's is");

    let outsider = open(&desk.world, &path, &desk.person("dee").token);
    assert!(matches!(outsider.status, 403 | 404), "{}", text(&outsider));
    assert_eq!(outsider.listen, None);
    assert_eq!(desk.world.last_audit_entry()["outcome"], json!("refused"), "a refused opening is recorded");

    let entries = desk.world.audit().len();
    let asked = desk.world.call("GET", &path, Some(&desk.person("ben").token), None);
    assert_refused(&asked, 426, "upgrade_required");
    assert_eq!(desk.world.audit().len(), entries, "asking without an upgrade, as a hub's recheck does, writes nothing");
}

#[test]
fn an_agents_own_stream_is_its_sponsors() {
    let world = World::new();
    let (ben_id, _) = world.person("ben@example.com");
    let (agent, credential) = world.mint(&ben_id, &["reminders.manage"], json!([]));
    let opened = open(&world, "/api/me/live", &credential);
    assert_eq!(opened.status, 101, "{}", text(&opened));
    let listening = opened.listen.expect("a stream opened");
    assert_eq!(listening.topic, Topic::Person(ben_id.clone()));
    assert_eq!((listening.actor, listening.delegator), (agent, Some(ben_id)), "opened by the agent, for its sponsor");
}

#[test]
fn a_listener_that_lost_its_relation_its_session_or_its_agent_is_closed_and_one_that_did_not_stays() {
    let desk = Desk::new("support@example.com")
        .with("ben@example.com", READS_THE_MAILBOX)
        .with("cleo@example.com", READS_THE_MAILBOX);
    let world = &desk.world;
    let path = format!("/api/mailboxes/{}/live", desk.mailbox);
    let (ben, cleo) = (desk.person("ben"), desk.person("cleo"));
    let grants = json!([{ "mailbox": desk.mailbox, "relations": READS_THE_MAILBOX }]);
    let (agent, credential) = world.mint(&cleo.id, &["mail.read"], grants);
    for token in [&ben.token, &cleo.token, &credential] {
        assert_eq!(standing(world, &path, token), Standing::Admitted);
    }

    // Ben's relation revoked: withdrawn (4403); Cleo and her agent stay.
    world.revoke(&ben.id, "mailbox.metadata.read", &desk.mailbox);
    assert_eq!(standing(world, &path, &ben.token), Standing::Withdrawn);
    assert_eq!(standing(world, &path, &cleo.token), Standing::Admitted);
    assert_eq!(standing(world, &path, &credential), Standing::Admitted);

    // The agent paused: withdrawn while paused, admitted again once resumed.
    assert_eq!(world.admin("POST", &format!("/api/agents/{agent}/pause"), None).status, 200);
    assert_eq!(standing(world, &path, &credential), Standing::Withdrawn);
    assert_eq!(world.admin("POST", &format!("/api/agents/{agent}/resume"), None).status, 200);
    assert_eq!(standing(world, &path, &credential), Standing::Admitted);

    // Its sponsor's relation revoked: the agent's authority is sponsor ∩ agent.
    world.revoke(&cleo.id, "mailbox.metadata.read", &desk.mailbox);
    assert_eq!(standing(world, &path, &credential), Standing::Withdrawn);
    world.grant(&cleo.id, "mailbox.metadata.read", &desk.mailbox);
    assert_eq!(standing(world, &path, &credential), Standing::Admitted);

    // The agent revoked: its credential is gone (4401).
    assert_eq!(world.admin("POST", &format!("/api/agents/{agent}/revoke"), None).status, 200);
    assert_eq!(standing(world, &path, &credential), Standing::CredentialGone);

    // Cleo signs out: her session's streams go (4401).
    assert_eq!(world.call("DELETE", "/api/sessions/current", Some(&cleo.token), None).status, 200);
    assert_eq!(standing(world, &path, &cleo.token), Standing::CredentialGone);
    assert_eq!(standing(world, "/api/me/live", &cleo.token), Standing::CredentialGone);
}

#[test]
fn a_hub_keeps_the_credential_that_opened_a_stream_and_never_a_refresh_token() {
    let opening = request("GET", "/api/me/live")
        .header("cookie", "__Host-mailroom-refresh=secret-refresh; __Host-mailroom-access=mr_ses_access")
        .header("upgrade", "websocket");
    let listening =
        Listening { topic: Topic::Person("usr_1".into()), actor: "usr_1".into(), delegator: None, actor_name: None };
    let listener = Listener::of(&opening, &listening);
    assert_eq!(listener.credential, Some(("cookie".to_string(), "__Host-mailroom-access=mr_ses_access".to_string())));
    let replay = listener.recheck_request();
    assert_eq!((replay.method.as_str(), replay.path.as_str()), ("GET", "/api/me/live"));
    assert!(!replay.headers.iter().any(|(name, _)| name == "upgrade"), "asking again never opens a second stream");
    assert!(!format!("{replay:?}").contains("secret-refresh"));

    // Its close is recorded as its opening was: who, on what, and how it ended.
    let closing = listener.closing_record(4403, 7);
    assert_eq!(
        (closing.action.as_str(), closing.actor.as_deref(), closing.object.as_deref()),
        ("stop_listening", Some("usr_1"), Some("usr_1"))
    );
    assert_eq!(closing.detail.as_deref(), Some(r#"{"code":4403}"#), "the object's id says which stream");
    assert_eq!(closing.topic, None, "a close tells no listener");
}

#[test]
fn a_standing_closes_with_the_code_a_client_acts_on() {
    assert_eq!(Standing::Admitted.close(), None);
    let codes: Vec<u16> =
        [Standing::CredentialGone, Standing::Withdrawn, Standing::Unanswered, Standing::TooManyStreams]
            .into_iter()
            .filter_map(|standing| standing.close().map(|(code, _)| code))
            .collect();
    assert_eq!(codes, [4401, 4403, 1011, 4429]);
    assert_eq!(Standing::Admitted.farewell(), None);
    let farewell: serde_json::Value = serde_json::from_str(&Standing::Withdrawn.farewell().unwrap()).unwrap();
    assert_eq!((farewell["kind"].as_str(), farewell["code"].as_u64()), (Some("stream_closed"), Some(4403)));
    for (status, expected) in [
        (426, Standing::Admitted),
        (401, Standing::CredentialGone),
        (403, Standing::Withdrawn),
        (404, Standing::Withdrawn),
        (500, Standing::Unanswered),
        (101, Standing::Unanswered),
    ] {
        let mut answer = Response::empty(status);
        answer.listen = None;
        assert_eq!(Standing::of(&answer), expected, "{status}");
    }
}

#[test]
fn a_message_to_an_agent_is_told_in_its_inbox_and_the_answer_to_whoever_asked() {
    let world = World::new();
    let (ben_id, ben) = world.person("ben@example.com");
    let ((asker, asker_credential), (answerer, answerer_credential)) =
        (world.messenger(&ben_id), world.messenger(&ben_id));
    let opened = open(&world, "/api/agent-inbox/live", &answerer_credential);
    assert_eq!(opened.listen.map(|listening| listening.topic), Some(Topic::Agent(answerer.clone())));
    assert_refused(&open(&world, "/api/agent-inbox/live", &ben), 403, "people_have_no_inbox");

    told(&world);
    let sent = world.send_message(&asker_credential, &answerer, "request", json!("37 + 58?"));
    let events = told(&world);
    assert_eq!(
        events.iter().map(|event| (event.topic.clone(), event.kind.as_str())).collect::<Vec<_>>(),
        [(Topic::Agent(answerer.clone()), "send_agent_message")]
    );
    assert_eq!(events[0].object.as_deref(), sent["id"].as_str());

    let claimed = world.claim(&answerer_credential, 1);
    told(&world);
    let reply = format!("/api/agent-inbox/{}/reply", claimed[0]["id"].as_str().unwrap());
    let token = claimed[0]["fencing_token"].clone();
    let answered = world.call(
        "POST",
        &reply,
        Some(&answerer_credential),
        Some(json!({ "fencing_token": token, "content": "95" })),
    );
    assert_eq!(answered.status, 200, "{}", text(&answered));
    let events = told(&world);
    // Told to whoever asked, and on the answerer's own inbox (its owner's page).
    assert_eq!(
        events.iter().map(|event| (event.topic.clone(), event.kind.as_str())).collect::<Vec<_>>(),
        [(Topic::Agent(answerer), "reply_to_agent_message"), (Topic::Agent(asker), "reply_to_agent_message")]
    );
}

#[test]
fn an_agent_s_owner_listens_to_its_inbox_and_is_told_what_its_agent_does_there() {
    let world = World::new();
    let (ben_id, ben) = world.person("ben@example.com");
    let (_, cleo) = world.person("cleo@example.com");
    let ((_, asker_credential), (answerer, answerer_credential)) = (world.messenger(&ben_id), world.messenger(&ben_id));
    let path = format!("/api/agents/{answerer}/live");
    let opened = open(&world, &path, &ben);
    assert_eq!(opened.listen.map(|listening| listening.topic), Some(Topic::Agent(answerer.clone())));
    // Another person, and the agent itself (its owner's plane is for people), are refused.
    assert_refused(&open(&world, &path, &cleo), 403, "not_sponsor_or_administrator");
    assert_eq!(open(&world, &path, &answerer_credential).status, 403);
    assert_refused(
        &open(&world, "/api/agents/agt_01M8MECXYJD8V8NXZMYC8H1337/live", &world.admin_token),
        404,
        "not_found",
    );
    told(&world);
    world.send_message(&asker_credential, &answerer, "request", json!("37 + 58?"));
    world.claim(&answerer_credential, 1);
    let kinds: Vec<String> = told(&world)
        .into_iter()
        .filter(|event| event.topic == Topic::Agent(answerer.clone()))
        .map(|event| event.kind)
        .collect();
    assert_eq!(kinds, ["send_agent_message", "claim_agent_messages"]);
}

/// The mailbox a request's path names, on a route whose path has one.
fn mailbox_in(route_path: &str, path: &str) -> Option<String> {
    let position = route_path.split('/').position(|segment| segment == ":mailboxId")?;
    path.split('/').nth(position).map(str::to_string)
}

#[test]
fn every_route_tells_what_its_declaration_says_when_it_succeeds_and_reads_tell_nothing() {
    let world = World::new();
    let mut problems = Vec::new();
    for route in registry().routes() {
        let (request, expected_status) = crate::budget::fixture(&world, route.id);
        let mailbox = mailbox_in(route.path, &request.path);
        told(&world);
        let response = world.node.send(request);
        assert_eq!(response.status, expected_status, "{}: {}", route.tool, text(&response));
        let events = told(&world);
        let tier = registry().tier(route.id);
        let name = format!("{} {} ({})", route.method.as_str(), route.path, route.tool);
        let kinds: Vec<(Topic, String)> =
            events.iter().map(|event| (event.topic.clone(), event.kind.clone())).collect();
        // A read changes nothing (a dry run is a POST of the read tier).
        if route.method.is_safe() || tier == Tier::Read {
            if !events.is_empty() {
                problems.push(format!("{name}, a read, told {kinds:?}"));
            }
            continue;
        }
        match (tier, mailbox) {
            (Tier::Read, _) => {}
            // The machine surfaces tell what the calls they re-enter tell.
            (Tier::Surface, _) => {}
            // Once on its mailbox; and on the own topic of whoever it adds a
            // notice for (`Context::tell_also`), under the same name.
            (Tier::Act | Tier::Governed, Some(mailbox)) => {
                let on_mailbox = kinds.iter().filter(|(topic, _)| *topic == Topic::Mailbox(mailbox.clone())).count();
                let elsewhere_own = kinds.iter().all(|(topic, kind)| {
                    kind == route.tool && matches!(topic, Topic::Mailbox(_) | Topic::Person(_) | Topic::Agent(_))
                });
                let other_mailboxes =
                    kinds.iter().any(|(topic, _)| matches!(topic, Topic::Mailbox(id) if *id != mailbox));
                if on_mailbox != 1 || !elsewhere_own || other_mailboxes {
                    problems.push(format!("{name} told {kinds:?}, not once on its mailbox"));
                }
            }
            (Tier::Operator, _) if route.authority == Authority::Public => {
                if !events.is_empty() {
                    problems.push(format!("{name}, anyone's to call, told {kinds:?}"));
                }
            }
            (Tier::Operator, _) => {
                if kinds != [(Topic::Access, route.tool.to_string())] {
                    problems.push(format!("{name}, an administrator's act, told {kinds:?}, not access changing"));
                }
            }
            (_, None) if route.authority == Authority::Personal => {
                if !matches!(kinds.as_slice(), [(Topic::Person(_), kind)] if kind == route.tool) {
                    problems.push(format!("{name}, the caller's own, told {kinds:?}"));
                }
            }
            (_, None) => {
                if events.iter().any(|event| event.kind != route.tool) {
                    problems.push(format!("{name} told {kinds:?}, under another name than its own"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "routes that do not tell as declared:\n{}", problems.join("\n"));
}

#[test]
fn a_conversation_assigned_to_someone_and_a_send_refused_are_told_in_their_own_feed_too() {
    let desk = Desk::new("support@example.com")
        .receiving("plain")
        .with("ben@example.com", crate::desk::WORKS_AND_DECIDES)
        .with("cleo@example.com", crate::desk::WORKS_AND_DECIDES);
    let (ben, cleo) = (desk.person("ben"), desk.person("cleo"));
    let thread = desk.world.thread_of(&desk.mailbox, desk.receipt());
    told(&desk.world);
    let assigned = desk.world.call("PATCH", &thread, Some(&ben.token), Some(json!({ "assignee": cleo.id })));
    assert_eq!(assigned.status, 200, "{}", text(&assigned));
    let events = told(&desk.world);
    let topics: Vec<Topic> = events.iter().map(|event| event.topic.clone()).collect();
    assert_eq!(
        topics,
        [Topic::Person(cleo.id.clone()), Topic::Mailbox(desk.mailbox.clone())],
        "Cleo's feed and the mailbox"
    );
    assert!(events.iter().all(|event| event.kind == "update_thread"));
}
