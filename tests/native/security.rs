//! The attacks a security review tried, each now failing to do harm: a refresh
//! token stolen and rotated twice, a lockout aimed at a person from elsewhere,
//! rate-limit keys a caller chooses, one person on both sides of dual control
//! through an agent they minted, and the audit chain rewritten by whoever holds
//! its key, which the witness still proves (the chain's other attacks are in
//! audit_chain.rs and audit_witness.rs). (Limits under parallel attempts are
//! tested on workerd, in tests/e2e/security.test.mjs.)

use mailroom::authz::throttle::{ACCOUNT_CEILING, ACCOUNT_FAILURE_LIMIT, ACCOUNT_SPACING_MS, FAILURE_WINDOW_MS};
use mailroom::testing::{RequestExt, request};
use serde_json::json;

use crate::desk::{DRAFTS_FROM_THE_LISTING, Desk, WORKS_THE_MAILBOX};
use crate::support::*;

fn refresh(world: &World, token: &str) -> mailroom::core::http::Response {
    world.call("POST", "/api/sessions/refresh", None, Some(json!({ "refresh_token": token })))
}

#[test]
fn a_stolen_refresh_token_rotated_twice_still_ends_the_session_when_the_victim_refreshes() {
    let world = World::new();
    let (_, victims) = sign_in(&world.node, ADMIN_EMAIL, ADMIN_PASSWORD);
    // The thief rotates the stolen copy twice, far enough apart to be no race.
    world.node.platform.advance(2 * 60 * 1000);
    let first = body(&refresh(&world, &victims))["refresh_token"].as_str().unwrap().to_string();
    world.node.platform.advance(2 * 60 * 1000);
    let second = refresh(&world, &first);
    assert_eq!(second.status, 200);
    let thiefs = body(&second)["refresh_token"].as_str().unwrap().to_string();
    let thiefs_access = body(&second)["access_token"].as_str().unwrap().to_string();
    // The victim presents the token the family spent first: the whole session ends.
    world.node.platform.advance(2 * 60 * 1000);
    assert_refused(&refresh(&world, &victims), 401, "refresh_token_reused");
    assert_refused(&world.call("GET", "/api/me", Some(&thiefs_access), None), 401, "session_ended");
    assert_refused(&refresh(&world, &thiefs), 401, "refresh_token_invalid");
}

fn sign_in_from(world: &World, email: &str, password: &str, address: &str) -> mailroom::core::http::Response {
    let mut attempt = request("POST", "/api/sessions").json(json!({ "email": email, "password": password }));
    attempt.client_address = Some(address.to_string());
    world.node.send(attempt)
}

#[test]
fn guesses_from_elsewhere_never_lock_a_person_out_of_their_own_address() {
    let world = World::new();
    let (ben, _) = world.person("ben@example.com");
    // Ben signed in (from the test kit's address) when his account was made.
    let home = "192.0.2.1";
    for attempt in 0..(ACCOUNT_CEILING + 20) {
        let address = format!("203.0.113.{}", attempt % 200);
        let response = sign_in_from(&world, "ben@example.com", "a guess at his password", &address);
        assert!([401, 429].contains(&response.status), "{}", text(&response));
    }
    let from_home = sign_in_from(&world, "ben@example.com", PASSWORD, home);
    assert_eq!(from_home.status, 201, "his own address is not slowed: {}", text(&from_home));

    // A new address of his is slowed, never locked: beyond the ceiling, one
    // attempt is admitted per spacing.
    let from_new = sign_in_from(&world, "ben@example.com", PASSWORD, "198.51.100.99");
    assert_refused(&from_new, 429, "too_many_sign_in_attempts");
    let wait: i64 = from_new.header("retry-after").unwrap().parse().unwrap();
    assert!(wait * 1000 <= ACCOUNT_SPACING_MS, "only slowed: {wait} s");
    assert!(text(&from_new).contains("reset_password"), "the fix names the way an administrator helps");
    world.node.platform.advance(ACCOUNT_SPACING_MS);
    assert_eq!(sign_in_from(&world, "ben@example.com", PASSWORD, "198.51.100.99").status, 201);

    // Guessing from one address locks out only that address, for that account.
    for _ in 0..ACCOUNT_FAILURE_LIMIT {
        sign_in_from(&world, "ben@example.com", "another guess at it", "203.0.113.250");
    }
    assert_refused(
        &sign_in_from(&world, "ben@example.com", PASSWORD, "203.0.113.250"),
        429,
        "too_many_sign_in_attempts",
    );
    assert_eq!(sign_in_from(&world, "ben@example.com", PASSWORD, home).status, 201);
    let _ = ben;
}

#[test]
fn an_administrator_sets_a_new_password_ending_every_session_and_forgetting_the_guesses() {
    let world = World::new();
    let (ben, ben_token) = world.person("ben@example.com");
    for attempt in 0..(ACCOUNT_CEILING + 5) {
        sign_in_from(&world, "ben@example.com", "guess", &format!("203.0.113.{}", attempt % 200));
    }
    let reset = world.admin(
        "POST",
        &format!("/api/people/{ben}/password"),
        Some(json!({ "new_password": "a new password from the administrator" })),
    );
    assert_eq!(reset.status, 200, "{}", text(&reset));
    assert_eq!(body(&reset)["sessions_ended"], 1);
    assert_refused(&world.call("GET", "/api/me", Some(&ben_token), None), 401, "session_ended");
    let entry = world.last_audit_entry();
    assert_eq!((entry["action"].as_str(), entry["object"].as_str()), (Some("reset_password"), Some(ben.as_str())));
    // The ceiling's count is forgotten: a new address is not slowed.
    let signed_in = sign_in_from(&world, "ben@example.com", "a new password from the administrator", "198.51.100.5");
    assert_eq!(signed_in.status, 201, "{}", text(&signed_in));
    let (_, ben_token) = world.person("carol@example.com");
    assert_refused(
        &world.call(
            "POST",
            &format!("/api/people/{ben}/password"),
            Some(&ben_token),
            Some(json!({ "new_password": "not for you to set" })),
        ),
        403,
        "missing_relation",
    );
}

#[test]
fn rate_limit_keys_are_bounded_and_expire() {
    let world = World::new();
    let huge = format!("{}@example.com", "x".repeat(900_000));
    let response = world.call("POST", "/api/sessions", None, Some(json!({ "email": huge, "password": "guess" })));
    assert!([400, 401, 413].contains(&response.status), "{}", text(&response));
    let longest = world.node.database.count("SELECT COALESCE(MAX(LENGTH(key)), 0) FROM sign_in_failures");
    assert!(longest < 100, "a key is a kind and a hash: {longest} characters");
    sign_in_from(&world, "nobody@example.com", "guess", "203.0.113.1");
    assert!(world.node.database.count("SELECT COUNT(*) FROM sign_in_failures") > 0);
    world.node.platform.advance(FAILURE_WINDOW_MS);
    world.node.maintain();
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM sign_in_failures"), 0, "ended windows are deleted");
}

#[test]
fn whoever_minted_or_paired_an_agent_is_never_the_second_person_on_what_it_submits() {
    let desk =
        Desk::new("support@mailroom.test").with("bob@example.com", &["send.propose"]).with_admin(&["approval.decide"]);
    let (world, mailbox, bob) = (&desk.world, desk.mailbox.as_str(), desk.person("bob").id.as_str());
    // Ada mints an agent sponsored by Bob and keeps its credential.
    let (agent, credential) =
        world.mint(bob, &["mail.draft"], json!([{ "mailbox": mailbox, "relations": ["send.propose"] }]));
    let sends = format!("/api/mailboxes/{mailbox}/sends");
    let created = world.call(
        "POST",
        &sends,
        Some(&credential),
        Some(json!({ "to": ["customer@example.org"], "subject": "Invoice", "text": "Pay here." })),
    );
    let send = body(&created)["id"].as_str().unwrap().to_string();
    assert_eq!(world.call("POST", &format!("{sends}/{send}/submit"), Some(&credential), None).status, 200);
    let queue = body(&world.admin("GET", "/api/approvals", None));
    assert!(queue["sends"].as_array().unwrap().is_empty(), "not in her queue: {queue}");
    assert_refused(
        &world.admin(
            "POST",
            &format!("{sends}/{send}/approve"),
            Some(world.decision(&world.admin_token, &format!("{sends}/{send}"))),
        ),
        403,
        "handed_the_agent",
    );

    // Paired by another administrator: they are the one who cannot approve.
    let (dora, dora_token) = world.person("dora@example.com");
    world.grant(&dora, "org.admin", "org");
    world.grant_all(&dora, &["approval.decide"], mailbox);
    let code = body(&world.call("POST", &format!("/api/agents/{agent}/pairing-code"), Some(&dora_token), None))["code"]
        .as_str()
        .unwrap()
        .to_string();
    let paired = world.call("POST", "/api/agents/pair", None, Some(json!({ "code": code })));
    let credential = body(&paired)["credential"].as_str().unwrap().to_string();
    let created = world.call(
        "POST",
        &sends,
        Some(&credential),
        Some(json!({ "to": ["customer@example.org"], "subject": "Again", "text": "Pay here." })),
    );
    let second = body(&created)["id"].as_str().unwrap().to_string();
    world.call("POST", &format!("{sends}/{second}/submit"), Some(&credential), None);
    assert_refused(
        &world.call(
            "POST",
            &format!("{sends}/{second}/approve"),
            Some(&dora_token),
            Some(world.decision(&dora_token, &format!("{sends}/{second}"))),
        ),
        403,
        "handed_the_agent",
    );
    // A person who neither minted nor paired it decides.
    let (carol, carol_token) = world.person("carol@example.com");
    world.grant_all(&carol, &["approval.decide"], mailbox);
    let approved = world.call(
        "POST",
        &format!("{sends}/{send}/approve"),
        Some(&carol_token),
        Some(world.decision(&carol_token, &format!("{sends}/{send}"))),
    );
    assert_eq!(approved.status, 200, "{}", text(&approved));
}

/// Ben's submission of an invoice to a customer, from a mailbox Ben proposes in
/// and Ada (the administrator) decides on: (world, sends path, send id, Ben's token).
fn an_invoice_awaiting_ada() -> (World, String, String, String) {
    let desk = Desk::new("support@mailroom.test")
        .with("ben@example.com", DRAFTS_FROM_THE_LISTING)
        .with_admin(&["mailbox.metadata.read", "approval.decide"]);
    let (sends, ben_token) = (desk.sends(), desk.person("ben").token.clone());
    let world = desk.world;
    let created = world.call(
        "POST",
        &sends,
        Some(&ben_token),
        Some(json!({ "to": ["customer@example.org"], "subject": "Invoice", "text": "Invoice, 100 EUR." })),
    );
    let send = body(&created)["id"].as_str().unwrap().to_string();
    assert_eq!(world.call("POST", &format!("{sends}/{send}/submit"), Some(&ben_token), None).status, 200);
    (world, sends, send, ben_token)
}

/// Takes the send back, points it at the attacker with new text, and submits
/// it again, as its submitter (over REST).
fn switch_to_the_attacker(world: &World, sends: &str, send: &str, token: &str) {
    assert_eq!(world.call("POST", &format!("{sends}/{send}/cancel"), Some(token), None).status, 200);
    let edited = world.call(
        "PATCH",
        &format!("{sends}/{send}"),
        Some(token),
        Some(json!({ "to": ["attacker@evil.example"], "text": "Pay to this account instead." })),
    );
    assert_eq!(edited.status, 200, "{}", text(&edited));
    assert_eq!(world.call("POST", &format!("{sends}/{send}/submit"), Some(token), None).status, 200);
}

#[test]
fn an_approval_of_the_version_shown_never_seals_one_switched_since() {
    let (world, sends, send, ben_token) = an_invoice_awaiting_ada();
    // Ada opens her queue: the version she is shown.
    let queue = body(&world.admin("GET", "/api/approvals", None));
    let shown = queue["sends"][0]["version"].as_str().unwrap().to_string();
    assert_eq!(queue["sends"][0]["to"], json!(["customer@example.org"]));
    switch_to_the_attacker(&world, &sends, &send, &ben_token);

    let approve = format!("{sends}/{send}/approve");
    let refused = world.admin("POST", &approve, Some(json!({ "version": shown })));
    assert_refused(&refused, 409, "send_changed");
    let message = body(&refused)["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains("the recipients") && message.contains("the text"), "{message}");
    assert!(!message.contains("subject"), "only what changed is named: {message}");
    // Refusing with a reason about the text she read is refused alike.
    let refusal =
        world.admin("POST", &format!("{sends}/{send}/refuse"), Some(json!({ "version": shown, "reason": "No." })));
    assert_refused(&refusal, 409, "send_changed");
    assert!(world.node.mailer.sent.borrow().is_empty(), "nothing was sent");
    assert_eq!(body(&world.admin("GET", &format!("{sends}/{send}"), None))["state"], "submitted");
    assert_eq!(world.last_audit_entry()["detail"]["code"], "send_changed", "the attempt is in the chain");

    // A version this send never had: refused, without claiming to know what changed.
    let made_up = world.admin("POST", &approve, Some(json!({ "version": "0".repeat(64) })));
    assert_refused(&made_up, 409, "send_changed");
    assert!(text(&made_up).contains("not the version you named"), "{}", text(&made_up));
    assert_refused(&world.admin("POST", &approve, None), 400, "missing_body");

    // Taken back and submitted again unchanged is still a new version.
    let current = world.decision(&world.admin_token, &format!("{sends}/{send}"));
    assert_ne!(current["version"], json!(shown));
    world.node.platform.advance(1);
    assert_eq!(world.call("POST", &format!("{sends}/{send}/cancel"), Some(&ben_token), None).status, 200);
    assert_eq!(world.call("POST", &format!("{sends}/{send}/submit"), Some(&ben_token), None).status, 200);
    let resubmitted = world.admin("POST", &approve, Some(current));
    assert_refused(&resubmitted, 409, "send_changed");
    assert!(text(&resubmitted).contains("taken back and submitted again"), "{}", text(&resubmitted));

    // The version she is shown now is the one she seals, and the seal records it.
    let now = world.decision(&world.admin_token, &format!("{sends}/{send}"));
    let approved = world.admin("POST", &approve, Some(now.clone()));
    assert_eq!(approved.status, 200, "{}", text(&approved));
    assert_eq!(body(&approved)["version"], now["version"]);
    assert_eq!(body(&approved)["manifest_intact"], true);
    assert_eq!(world.last_audit_entry()["detail"]["version"], now["version"]);
    assert_eq!(world.node.mailer.sent.borrow().len(), 1);
}

/// A tool call over MCP as the holder of `token`: the JSON-RPC result.
fn tool(world: &World, token: &str, name: &str, arguments: serde_json::Value) -> serde_json::Value {
    let call = request("POST", "/mcp").bearer(token).json(json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": arguments }
    }));
    let response = world.node.send(call);
    assert_eq!(response.status, 200, "{}", text(&response));
    let answer = body(&response);
    assert!(answer["result"].is_object(), "{name}: {answer}");
    answer["result"].clone()
}

#[test]
fn an_agent_switching_a_submission_over_mcp_cannot_have_it_approved_as_shown() {
    let desk = Desk::new("support@mailroom.test")
        .with("ben@example.com", &["send.propose"])
        .with("carol@example.com", &["approval.decide"]);
    let (world, mailbox, ben, carol_token) =
        (&desk.world, desk.mailbox.as_str(), desk.person("ben").id.as_str(), desk.person("carol").token.as_str());
    let (_, agent) = world.mint(ben, &["mail.draft"], json!([{ "mailbox": mailbox, "relations": ["send.propose"] }]));
    let created = tool(
        world,
        &agent,
        "create_draft",
        json!({ "mailbox_id": mailbox, "to": ["customer@example.org"], "subject": "Invoice", "text": "100 EUR" }),
    );
    assert_ne!(created["isError"], true, "{created}");
    let send = created["structuredContent"]["id"].as_str().unwrap().to_string();
    let ids = json!({ "mailbox_id": mailbox, "send_id": send });
    assert_ne!(tool(world, &agent, "submit_send", ids.clone())["isError"], true);

    // Carol is shown the submission (over MCP, as a client of hers would read
    // it); the agent switches it.
    let shown = tool(world, carol_token, "get_send", ids.clone())["structuredContent"]["version"].clone();
    assert!(shown.is_string());
    for (name, extra) in [
        ("cancel_send", json!({})),
        ("update_draft", json!({ "to": ["attacker@evil.example"], "text": "Pay here instead." })),
        ("submit_send", json!({})),
    ] {
        let mut arguments = ids.clone();
        arguments.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let result = tool(world, &agent, name, arguments);
        assert_ne!(result["isError"], true, "{name}: {result}");
    }
    // Approval is never a machine's (approve_send is offered to no one over
    // MCP): Carol approves where people do, naming the version she was shown.
    let approve = format!("/api/mailboxes/{mailbox}/sends/{send}/approve");
    let refused = world.call("POST", &approve, Some(carol_token), Some(json!({ "version": shown })));
    assert_refused(&refused, 409, "send_changed");
    assert!(text(&refused).contains("the recipients, the text"), "{}", text(&refused));
    assert!(world.node.mailer.sent.borrow().is_empty());
}

#[test]
fn a_send_submitted_before_versions_were_recorded_is_decided_on_the_version_it_reads_as() {
    let (world, sends, send, _) = an_invoice_awaiting_ada();
    world.node.mail_tamper(&format!(
        "UPDATE sends SET submitted_version = NULL WHERE id = '{send}'; DELETE FROM send_versions;"
    ));
    let shown = world.decision(&world.admin_token, &format!("{sends}/{send}"));
    assert_eq!(shown["version"].as_str().map(str::len), Some(64), "computed from the row: {shown}");
    let approved = world.admin("POST", &format!("{sends}/{send}/approve"), Some(shown.clone()));
    assert_eq!(approved.status, 200, "{}", text(&approved));
    assert_eq!(body(&approved)["version"], shown["version"], "sealed with the version it read as");
    assert_eq!(body(&approved)["manifest_intact"], true);
}

#[test]
fn nothing_a_sealed_send_was_approved_as_can_change_but_its_dispatch_outcome() {
    let (world, sends, send, _) = an_invoice_awaiting_ada();
    let shown = world.decision(&world.admin_token, &format!("{sends}/{send}"));
    assert_eq!(world.admin("POST", &format!("{sends}/{send}/approve"), Some(shown)).status, 200);
    // What dispatch records after sealing (the outcome, and the Message-IDs the
    // mail service reported), the link to a received message that deleting the
    // message clears, and the conversation it is filed in: every other column is
    // what was approved.
    const RECORDED_AFTER_SEALING: [&str; 8] = [
        "state",
        "updated_at",
        "dispatched_at",
        "dispatch_error",
        "delivered_json",
        "reply_to",
        "thread_id",
        "sent_message_ids_json",
    ];
    let columns = world.node.database.column_names("sends");
    assert!(columns.len() > RECORDED_AFTER_SEALING.len() + 10, "{columns:?}");
    for column in columns {
        let changed = world.node.mail_try_tamper(&format!(
            "UPDATE sends SET {column} = CASE WHEN {column} IS NULL THEN 'x' ELSE {column} || 'x' END WHERE id = '{send}'"
        ));
        if RECORDED_AFTER_SEALING.contains(&column.as_str()) {
            continue;
        }
        let refused = changed.expect_err(&format!("{column} changed after sealing"));
        assert!(refused.contains("sealed_send_is_immutable"), "{column}: {refused}");
    }
}

/// A message whose Message-ID and References each carry a CR that a lenient
/// reader takes for the end of the header, and a Bcc after it.
const HOSTILE_IDS: &str = "From: Mallory <mallory@evil.example>\r\n\
To: support@mailroom.test\r\n\
Subject: Invoice\rBcc: subject@evil.example\r\n\
Message-ID: <m@evil.example\rBcc: hidden@evil.example>\r\n\
References: <ok@evil.example> <r@evil.example\rBcc: also@evil.example>\r\n\
\r\n\
Please reply.\r\n";

#[test]
fn a_message_id_that_would_inject_a_header_is_never_kept_nor_written_into_a_reply() {
    let world = World::new();
    let mailbox = world.mailbox("support@mailroom.test");
    let receipt = match world.node.deliver("mallory@evil.example", "support@mailroom.test", HOSTILE_IDS.as_bytes()) {
        Ok(mailroom::mail::Delivery::Stored { receipt_id }) => receipt_id,
        other => panic!("{other:?}"),
    };
    world.grant_all(&world.admin_id, &["mailbox.metadata.read", "mailbox.content.read", "send.propose"], &mailbox);
    let message = body(&world.admin("GET", &format!("/api/mailboxes/{mailbox}/messages/{receipt}"), None));
    let stored = message.to_string();
    assert!(!stored.contains("hidden@evil.example") && !stored.contains("also@evil.example"), "{stored}");
    assert!(!stored.contains("\\r"), "no CR kept in any header value: {stored}");
    assert!(message["message_id"].as_str().unwrap().ends_with("@derived.mailroom.invalid"), "{message}");

    // A reply threads on what is left (never on the id the node made up, which
    // names nothing outside it), and the message written has no Bcc.
    let sends = format!("/api/mailboxes/{mailbox}/sends");
    let draft = world.admin(
        "POST",
        &sends,
        Some(json!({ "to": ["mallory@evil.example"], "subject": "Re: Invoice", "text": "No.", "reply_to": receipt })),
    );
    assert_eq!(draft.status, 201, "{}", text(&draft));
    let draft = body(&draft);
    assert_eq!(draft["references"], json!(["ok@evil.example"]), "{draft}");
    assert!(draft["in_reply_to"].is_null(), "{draft}");

    // A receipt stored before ids were checked (tampered here to hold one) is
    // checked again when replied to.
    world.node.mail_tamper(&format!(
        "UPDATE receipts SET message_id = 'm@evil.example' || char(13) || 'Bcc: hidden@evil.example', \
         references_json = '[\"r@evil.example\\nBcc: also@evil.example\", \"ok@evil.example\"]' \
         WHERE id = '{receipt}'"
    ));
    let legacy = world.admin(
        "POST",
        &sends,
        Some(json!({ "to": ["mallory@evil.example"], "subject": "Re: Invoice", "text": "No.", "reply_to": receipt })),
    );
    let legacy = body(&legacy);
    assert_eq!(legacy["references"], json!(["ok@evil.example"]), "{legacy}");
    assert!(legacy["in_reply_to"].is_null(), "{legacy}");
}

#[test]
fn an_address_or_id_that_is_not_one_is_refused_at_the_draft_and_never_leaves() {
    let (world, sends, send, ben_token) = an_invoice_awaiting_ada();
    for hostile in ["ana@example.org\r\nBcc: hidden@evil.example", "ana(x)@example.org", "\"a b\"@example.org"] {
        let created = world.call(
            "POST",
            &sends,
            Some(&ben_token),
            Some(json!({ "to": [hostile], "subject": "Hi", "text": "Hello" })),
        );
        assert_refused(&created, 400, "invalid_recipient");
    }
    // Past the API, a stored recipient that is not an address (written into the
    // row directly before sealing): the seal succeeds, the message is never
    // written, and the send fails saying why.
    world.node.mail_tamper(&format!(
        "UPDATE sends SET to_json = '[\"customer@example.org\\r\\nBcc: hidden@evil.example\"]' WHERE id = '{send}'"
    ));
    let shown = world.decision(&world.admin_token, &format!("{sends}/{send}"));
    let approved = world.admin("POST", &format!("{sends}/{send}/approve"), Some(shown));
    assert_eq!(body(&approved)["state"], "failed", "{}", text(&approved));
    assert!(body(&approved)["dispatch_error"].as_str().unwrap().contains("To address"), "{}", text(&approved));
    assert!(world.node.mailer.sent.borrow().is_empty(), "nothing left");
}

/// Every name and title a person or an agent types, the attacker's next field
/// included: a direction control (here U+202E RIGHT-TO-LEFT OVERRIDE, which
/// makes `Ana`, U+202E, `lanif` read `Anafinal`) is refused in each, with the four parts
/// naming the field, and nothing is stored. The marks right-to-left writing
/// needs are accepted.
#[test]
fn no_name_or_title_anyone_types_can_hold_a_control_that_reorders_it() {
    const RLO: &str = "\u{202E}";
    let desk = Desk::new("support@mailroom.test").with("ben@example.com", WORKS_THE_MAILBOX);
    let (world, mailbox, ben, ben_token) =
        (&desk.world, desk.mailbox.as_str(), desk.person("ben").id.as_str(), desk.person("ben").token.as_str());
    let receipt = world.deliver("plain", "support@mailroom.test");
    let thread = world.thread_of(mailbox, &receipt);
    let butlers = format!("/api/mailboxes/{mailbox}/butlers");
    let created = world.admin(
        "POST",
        &butlers,
        Some(json!({ "name": "Triage", "sponsor": ben, "rules": { "conditions": [], "effects": [{ "do": "set_status", "status": "waiting" }] } })),
    );
    let butler = format!("{butlers}/{}", body(&created)["id"].as_str().unwrap());
    let event = body(&world.call(
        "POST",
        "/api/me/events",
        Some(ben_token),
        Some(json!({ "title": "Visa", "due_at": "2027-03-01" })),
    ));
    let event = format!("/api/me/events/{}", event["id"].as_str().unwrap());
    let draft = body(&world.call(
        "POST",
        &format!("/api/mailboxes/{mailbox}/sends"),
        Some(ben_token),
        Some(json!({ "to": ["ana@customer.example"], "subject": "Hello", "text": "Hi" })),
    ));
    let attachments = format!("/api/mailboxes/{mailbox}/sends/{}/attachments", draft["id"].as_str().unwrap());
    let (_, source) = world.source("visa-office");
    let named = |name: &str| format!("Ana{RLO}lanif{name}");

    // (who, method, path, body, the field the refusal must name)
    let admin = world.admin_token.clone();
    let cases: Vec<(&str, &str, String, serde_json::Value, &str)> = vec![
        (
            &admin,
            "POST",
            "/api/people".into(),
            json!({ "email": "cy@example.com", "name": named(""), "password": "correct horse battery" }),
            "name",
        ),
        (&admin, "POST", "/api/teams".into(), json!({ "name": named(" team") }), "name"),
        (
            &admin,
            "POST",
            "/api/mailboxes".into(),
            json!({ "address": "billing@mailroom.test", "display_name": named("") }),
            "display_name",
        ),
        (&admin, "PATCH", format!("/api/mailboxes/{mailbox}"), json!({ "display_name": named("") }), "display_name"),
        (
            &admin,
            "POST",
            "/api/agents".into(),
            json!({ "name": named(" bot"), "sponsor": ben, "capabilities": ["reminders.read"], "mailboxes": [] }),
            "name",
        ),
        (
            &admin,
            "POST",
            butlers.clone(),
            json!({ "name": named(""), "sponsor": ben, "rules": { "conditions": [], "effects": [{ "do": "set_status", "status": "open" }] } }),
            "name",
        ),
        (&admin, "PATCH", butler.clone(), json!({ "name": named("") }), "name"),
        (
            &admin,
            "PATCH",
            butler.clone(),
            json!({ "rules": { "conditions": [], "effects": [{ "do": "set_status", "status": "open" }, { "do": "label", "label": named("") }] } }),
            "rules.effects[1].label",
        ),
        (ben_token, "PATCH", thread.clone(), json!({ "add_labels": ["billing", named("")] }), "add_labels[1]"),
        (ben_token, "POST", "/api/me/events".into(), json!({ "title": named(""), "due_at": "2027-03-01" }), "title"),
        (
            ben_token,
            "POST",
            "/api/me/events".into(),
            json!({ "title": "Visa", "subtitle": named(""), "due_at": "2027-03-01" }),
            "subtitle",
        ),
        (
            ben_token,
            "POST",
            "/api/me/events".into(),
            json!({ "title": "Visa", "done_label": named(""), "due_at": "2027-03-01" }),
            "done_label",
        ),
        (ben_token, "PATCH", event.clone(), json!({ "title": named("") }), "title"),
        (
            &source,
            "PUT",
            "/api/source/events".into(),
            json!({ "person": "ben@example.com", "source_ref": "v-1", "title": named(""), "due_at": "2027-03-01" }),
            "title",
        ),
        (
            ben_token,
            "POST",
            attachments.clone(),
            json!({ "name": format!("invoice{RLO}fdp.exe"), "content_type": "application/pdf", "content_base64": "aGVsbG8=" }),
            "name",
        ),
    ];
    let before = world.node.database.snapshot();
    for (token, method, path, payload, field) in cases {
        let refused = world.call(method, &path, Some(token), Some(payload));
        assert_refused(&refused, 400, "direction_control");
        let error = &body(&refused)["error"];
        assert!(
            error["message"].as_str().unwrap().contains(&format!("`{field}` holds U+202E")),
            "{method} {path}: {error}"
        );
        for part in ["reason", "fix"] {
            assert!(!error[part].as_str().unwrap().is_empty(), "{method} {path}: {error}");
        }
    }
    let changed: Vec<String> = world
        .node
        .database
        .snapshot()
        .into_iter()
        .filter(|(table, _)| table != "audit_entries" && table != "audit_attempts")
        .filter(|(table, rows)| before.iter().find(|(was, _)| was == table).map(|(_, was)| was) != Some(rows))
        .map(|(table, _)| table)
        .collect();
    assert!(changed.is_empty(), "a refused name stores nothing: {changed:?}");

    // The setup of a node's first administrator, and an OAuth client's name, which becomes its agent's.
    let fresh = mailroom::testing::TestNode::new();
    let setup = fresh.send(request("POST", "/api/setup").json(json!({
        "setup_token": mailroom::testing::TEST_SETUP_TOKEN, "email": "first@example.com",
        "name": named(""), "password": "correct horse battery",
    })));
    assert_eq!(
        (setup.status, body(&setup)["error"]["code"].as_str()),
        (400, Some("direction_control")),
        "{}",
        text(&setup)
    );
    let client = world.node.send(request("POST", "/oauth/register").json(json!({
        "redirect_uris": ["http://127.0.0.1:5000/callback"], "client_name": format!("Claude{RLO}")
    })));
    assert_eq!(
        (client.status, body(&client)["error"].as_str()),
        (400, Some("invalid_client_metadata")),
        "{}",
        text(&client)
    );

    // Right-to-left names are written with letters and, where needed, the marks.
    let hebrew = world.admin(
        "POST",
        "/api/people",
        Some(
            json!({ "email": "dana@example.com", "name": "דנה כהן\u{200F} (2)", "password": "correct horse battery" }),
        ),
    );
    assert_eq!(hebrew.status, 201, "{}", text(&hebrew));
}

#[test]
fn whoever_holds_the_audit_key_too_cannot_rewrite_what_the_witness_already_holds() {
    // The third attacker of decision 0027: D1, R2 and AUDIT_KEY. The node cannot
    // tell a history they rewrote and re-signed from the real one; the witness can.
    let world = World::new();
    let hook = "https://auditor.example/witness";
    let set = world.admin("PUT", "/api/audit/witness", Some(json!({ "webhook_url": hook })));
    assert_eq!(set.status, 200, "{}", text(&set));
    world.team("Audited");
    let witnessed = world.node.maintain().expect("a checkpoint the witness takes");
    let held: serde_json::Value =
        serde_json::from_str(&world.node.webhooks.posted.borrow().last().unwrap().body).unwrap();
    assert_eq!(held["checkpoint"]["hash"], witnessed.hash.as_str());

    // Rewritten with the key: an entry changed, every MAC and seal made again,
    // and both records of the checkpoints replaced by ones signed over the rewrite.
    world.node.database.tamper("UPDATE audit_entries SET object = 'rewritten' WHERE seq = 3");
    world.node.database.as_written_before_nonces(&world.node.config.audit_key);
    world.node.seal();
    world.node.database.tamper("DELETE FROM audit_checkpoints");
    world.node.blobs.objects.borrow_mut().retain(|key, _| !key.starts_with("audit/checkpoints/"));
    world.node.maintain().expect("a checkpoint over the rewritten history");
    assert_eq!(world.verify()["intact"], true, "the node alone cannot tell");

    // The witness's checkpoint, signed with the node's key, names another hash
    // for that entry than the one the node now shows.
    let shown = world.audit().into_iter().find(|entry| entry["seq"] == witnessed.seq).unwrap();
    assert_ne!(shown["hash"], held["checkpoint"]["hash"], "the rewrite shows at the entry the witness holds");
    let held: mailroom_contract::api::AuditCheckpoint = serde_json::from_value(held["checkpoint"].clone()).unwrap();
    assert!(mailroom::audit::checkpoints::checkpoint_is_genuine(&world.node.config, &held));
}

#[test]
fn browser_clients_of_other_origins_may_call_the_oauth_and_mcp_endpoints_and_nothing_a_cookie_reaches() {
    let world = World::new();
    let preflight = |path: &str| {
        world.node.send(
            request("OPTIONS", path)
                .header("origin", "http://localhost:6274")
                .header("access-control-request-method", "POST")
                .header("access-control-request-headers", "authorization, content-type, mcp-protocol-version"),
        )
    };
    for (path, methods) in [
        ("/mcp", "POST, OPTIONS"),
        ("/oauth/token", "POST, OPTIONS"),
        ("/oauth/register", "POST, OPTIONS"),
        ("/oauth/revoke", "POST, OPTIONS"),
        ("/.well-known/oauth-authorization-server", "GET, OPTIONS"),
        ("/.well-known/oauth-protected-resource/mcp", "GET, OPTIONS"),
    ] {
        let answered = preflight(path);
        assert_eq!(answered.status, 204, "{path}: {}", text(&answered));
        assert_eq!(answered.header("access-control-allow-origin"), Some("*"), "{path}");
        assert_eq!(answered.header("access-control-allow-methods"), Some(methods), "{path}");
        let headers = answered.header("access-control-allow-headers").unwrap();
        for header in ["authorization", "content-type", "mcp-protocol-version", "mcp-session-id"] {
            assert!(headers.contains(header), "{path} lets {header} through: {headers}");
        }
        assert!(answered.header("access-control-allow-credentials").is_none(), "never with a cookie");
    }
    // The answers themselves may be read by such a client: the challenge that
    // starts its sign-in included.
    let challenged = world.node.send(
        request("POST", "/mcp")
            .header("origin", "http://localhost:6274")
            .json(json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" })),
    );
    assert_eq!(challenged.status, 401, "{}", text(&challenged));
    assert_eq!(challenged.header("access-control-allow-origin"), Some("*"));
    assert!(challenged.header("access-control-expose-headers").unwrap().contains("www-authenticate"));
    let discovered = world.node.send(request("GET", "/.well-known/oauth-authorization-server"));
    assert_eq!(discovered.header("access-control-allow-origin"), Some("*"));

    // A route a session cookie reaches answers no preflight and allows no other origin.
    let refused = preflight("/api/teams");
    assert_eq!(refused.status, 405, "{}", text(&refused));
    assert!(refused.header("access-control-allow-origin").is_none());
    let mine = world.admin("GET", "/api/me", None);
    assert!(mine.header("access-control-allow-origin").is_none());
}
