//! What each kind of butler effect does on delivery: a webhook posted signed
//! once the delivery is stored (and recorded as failed when it fails), a drafted
//! reply that waits for a second person and never addresses the node's own
//! mailboxes, a forward or a copy filed only where the sponsor reads and the
//! message is not already, and a label within the limit.

use mailroom::mail::Delivery;
use serde_json::{Value, json};

use crate::butlers::{Butlers, SUPPORT, deliver, deliver_reply, effects_on, feed, office, office_in, publish};
use crate::support::*;

#[test]
fn a_webhook_effect_posts_the_deliverys_metadata_signed_once_it_is_stored() {
    let office = office();
    let (world, ben) = (&office.world, office.person("ben"));
    let rules = |url: &str| {
        json!({
            "conditions": [{ "on": "subject", "contains": "invoice" }],
            "effects": [{ "do": "notify_webhook", "url": url }]
        })
    };
    // Only https, or http to this machine, and the refusal names the field.
    let refused = world.admin(
        "POST",
        &office.butlers(),
        Some(json!({ "name": "Hook", "sponsor": ben.id, "rules": rules("http://hooks.example.org/in") })),
    );
    assert_refused(&refused, 400, "invalid_body");
    assert!(text(&refused).contains("rules.effects[0].url"), "{}", text(&refused));

    let butler = office.create(rules("https://hooks.example.org/in"));
    let shown = body(&world.admin("GET", &butler, None));
    let secret = shown["webhook_secret"].as_str().expect("a butler that posts shows its secret").to_string();
    assert!(secret.starts_with("whsec_"));
    assert!(
        !world.node.database.snapshot().iter().any(|(_, rows)| rows.iter().any(|row| row.contains(&secret))),
        "the database never holds it"
    );
    let published = world.admin("POST", &format!("{butler}/publish"), Some(json!({ "version": 1 })));
    assert_eq!(published.status, 200, "{}", text(&published));

    deliver(world, "Lunch on Friday", "w0@customer.example");
    assert!(world.node.webhooks.posted.borrow().is_empty(), "a condition did not hold");
    let receipt = deliver(world, "Invoice 4471", "w1@customer.example");
    let posted = world.node.webhooks.posted.borrow().clone();
    assert_eq!(posted.len(), 1);
    assert_eq!(posted[0].url, "https://hooks.example.org/in");
    assert!(crate::reminders::verify_signature(
        &secret,
        crate::reminders::header(&posted[0], "mailroom-signature"),
        &posted[0].body
    ));
    let sent: Value = serde_json::from_str(&posted[0].body).unwrap();
    assert_eq!(sent["receipt"], receipt.as_str());
    assert_eq!(sent["subject"], "Invoice 4471");
    assert!(!posted[0].body.contains("Hello."), "never the message's text");
    let effect = world.audit().into_iter().rev().find(|entry| entry["action"] == "butler_effect").unwrap();
    assert_eq!(effect["outcome"], "ok");
    assert_eq!(effect["delegator"], ben.id.as_str());

    // A receiver that fails does not lose the delivery.
    world.node.webhooks.unreachable.set(true);
    let stored = deliver(world, "Invoice 4472", "w2@customer.example");
    assert_eq!(world.node.mail_count(&format!("SELECT COUNT(*) FROM receipts WHERE id = '{stored}'")), 1);

    // The sponsor no longer reads the mailbox's metadata: skipped, and nothing posted.
    world.node.webhooks.unreachable.set(false);
    world.revoke(&ben.id, "mailbox.metadata.read", &office.mailbox);
    deliver(world, "Invoice 4473", "w3@customer.example");
    assert_eq!(world.node.webhooks.posted.borrow().len(), 1, "nothing more was posted");
}

#[test]
fn a_drafted_reply_waits_for_a_second_person_and_its_sponsor_cannot_be_that_person() {
    let office = office();
    let (world, ben, cleo) = (&office.world, office.person("ben"), office.person("cleo"));
    world.grant_all(&ben.id, &["approval.decide"], &office.mailbox);
    world.grant_all(&cleo.id, &["approval.decide"], &office.mailbox);
    let butler = office.create(json!({
        "conditions": [{ "on": "subject", "contains": "invoice" }],
        "effects": [{ "do": "draft_reply", "text": "Dear {sender}, we have your message about {subject}." }]
    }));
    let published = world.admin("POST", &format!("{butler}/publish"), Some(json!({ "version": 1 })));
    assert_eq!(published.status, 200, "{}", text(&published));
    let receipt = deliver(world, "Invoice 4471", "r1@customer.example");

    // A send submitted in the sponsor's name, answering the delivery; nothing sent.
    let sends = format!("/api/mailboxes/{}/sends", office.mailbox);
    let listed = body(&world.call("GET", &sends, Some(&cleo.token), None));
    let send =
        listed["sends"].as_array().unwrap().iter().find(|send| send["reply_to"] == receipt.as_str()).unwrap().clone();
    assert_eq!(send["state"], "submitted", "{send}");
    assert_eq!(send["author"], ben.id.as_str());
    assert_eq!(send["to"], json!(["Ana <ana@customer.example>"]));
    assert_eq!(send["subject"], "Re: Invoice 4471");
    assert_eq!(send["text"], "Dear Ana <ana@customer.example>, we have your message about Invoice 4471.");
    assert!(world.node.mailer.sent.borrow().is_empty(), "nothing is sent without a second person");
    let effect = world.audit().into_iter().rev().find(|entry| entry["action"] == "butler_effect").unwrap();
    assert_eq!(effect["actor_kind"], "butler");
    assert_eq!(effect["delegator"], ben.id.as_str());

    // The sponsor is the submitter's side: he cannot approve it, and it waits in Cleo's feed, not his.
    let path = format!("{sends}/{}", send["id"].as_str().unwrap());
    let own = world.call("POST", &format!("{path}/approve"), Some(&ben.token), Some(world.decision(&ben.token, &path)));
    assert_refused(&own, 403, "own_submission");
    let waiting = |token: &str| {
        body(&world.call("GET", "/api/me/notifications", Some(token), None))["notifications"]
            .as_array()
            .unwrap()
            .iter()
            .any(|item| item["kind"] == "approval_waiting" && item["object_id"] == send["id"])
    };
    assert!(waiting(&cleo.token));
    assert!(!waiting(&ben.token));
    // And in Cleo's queue of approvals, not in his.
    let queued = |token: &str| body(&world.call("GET", "/api/approvals", Some(token), None))["sends"].clone();
    assert_eq!(queued(&cleo.token)[0]["id"], send["id"]);
    assert_eq!(queued(&ben.token), json!([]));
    let approved =
        world.call("POST", &format!("{path}/approve"), Some(&cleo.token), Some(world.decision(&cleo.token, &path)));
    assert_eq!(body(&approved)["state"], "dispatched", "{}", text(&approved));
    let sent = world.node.mailer.sent.borrow().clone();
    let parsed = mailroom::mail::inbound::parse(&sent[0].raw).unwrap();
    assert_eq!(parsed.in_reply_to, vec!["r1@customer.example"]);
    assert_eq!(world.verify()["intact"], true);
}

#[test]
fn a_forward_files_a_copy_where_its_sponsor_reads_and_never_where_they_do_not() {
    let office = office();
    let (world, ben) = (&office.world, office.person("ben"));
    let billing = world.mailbox("billing@mailroom.test");
    world.grant_all(&ben.id, &["mailbox.content.read"], &office.mailbox);
    world.grant_all(&world.admin_id, &["mailbox.metadata.read", "mailbox.content.read"], &billing);
    let butler = office.create(json!({
        "conditions": [{ "on": "subject", "contains": "invoice" }],
        "effects": [{ "do": "forward", "mailbox": billing }]
    }));
    let butler_id = butler.rsplit('/').next().unwrap().to_string();
    // Ben cannot read billing: the copy would put mail where its sponsor could not.
    let refused = world.admin("POST", &format!("{butler}/publish"), Some(json!({ "version": 1 })));
    assert_refused(&refused, 409, "sponsor_lacks");
    assert!(body(&refused)["error"]["message"].as_str().unwrap().contains(&billing), "{}", text(&refused));
    world.grant_all(&ben.id, &["mailbox.metadata.read", "mailbox.content.read", "send.propose"], &billing);
    let published = world.admin("POST", &format!("{butler}/publish"), Some(json!({ "version": 1 })));
    assert_eq!(published.status, 200, "{}", text(&published));
    // Billing's own butler closes everything delivered there; it must never act on a copy.
    let closer = world.admin(
        "POST",
        &format!("/api/mailboxes/{billing}/butlers"),
        Some(json!({ "name": "Close all", "sponsor": ben.id,
                     "rules": { "conditions": [], "effects": [{ "do": "set_status", "status": "closed" }] } })),
    );
    let closer = format!("/api/mailboxes/{billing}/butlers/{}", body(&closer)["id"].as_str().unwrap());
    assert_eq!(world.admin("POST", &format!("{closer}/publish"), Some(json!({ "version": 1 }))).status, 200);

    let original = deliver(world, "Invoice 77", "inv77@customer.example");
    deliver(world, "Lunch?", "lunch@customer.example");
    deliver_reply(world, "Re: Invoice 77", "inv77b@customer.example", "inv77@customer.example");
    let threads = body(&world.admin("GET", &format!("/api/mailboxes/{billing}/threads"), None));
    assert_eq!(
        threads["threads"].as_array().unwrap().len(),
        1,
        "the follow-up joins the copy's conversation: {threads}"
    );
    let thread = &threads["threads"][0];
    assert_eq!(thread["status"], "open", "billing's own butler did not act on a copy: {thread}");
    let shown = body(&world.admin(
        "GET",
        &format!("/api/mailboxes/{billing}/threads/{}", thread["id"].as_str().unwrap()),
        None,
    ));
    let copies: Vec<&Value> = shown["entries"].as_array().unwrap().iter().map(|entry| &entry["received"]).collect();
    assert_eq!(copies.len(), 2, "{shown}");
    assert_eq!(copies[0]["subject"], "Invoice 77");
    assert_eq!(copies[1]["text"].as_str().unwrap().trim(), "Following up on the quarterly figures.");
    for copy in &copies {
        assert_eq!(copy["filed_by"], butler_id.as_str());
        assert_ne!(copy["id"], original.as_str(), "a copy is a receipt of its own");
    }
    // The original in support is untouched and not marked as filed.
    let at_support = body(&world.admin("GET", &world.thread_of(&office.mailbox, &original), None));
    assert!(at_support["entries"][0]["received"].get("filed_by").is_none(), "{at_support}");
    // The copy is searchable in billing, by its text.
    let found = body(&world.admin("GET", &format!("/api/search?q=quarterly&mailbox={billing}"), None));
    assert_eq!(found["results"][0]["mailbox_id"], billing.as_str(), "{found}");

    // The copy has its own original: deleting the delivery keeps it.
    let deleted = world.admin("DELETE", &format!("/api/mailboxes/{}/messages/{original}", office.mailbox), None);
    assert_eq!(deleted.status, 200, "{}", text(&deleted));
    world.grant_all(&world.admin_id, &["message.export"], &billing);
    let copy_original = world.admin(
        "GET",
        &format!("/api/mailboxes/{billing}/messages/{}/original", copies[0]["id"].as_str().unwrap()),
        None,
    );
    assert_eq!(copy_original.status, 200, "{}", text(&copy_original));

    // Ben can no longer read billing: the next copy is skipped, recorded and told.
    world.revoke(&ben.id, "mailbox.content.read", &billing);
    deliver(world, "Invoice 78", "inv78@customer.example");
    let threads = body(&world.admin("GET", &format!("/api/mailboxes/{billing}/threads"), None));
    assert_eq!(threads["threads"].as_array().unwrap().len(), 1, "{threads}");
    let acts: Vec<Value> = world.audit().into_iter().filter(|entry| entry["action"] == "butler_effect").collect();
    let forwards: Vec<&Value> = acts.iter().filter(|act| act["actor"] == butler_id.as_str()).collect();
    assert_eq!(
        forwards.iter().map(|act| act["outcome"].as_str().unwrap()).collect::<Vec<_>>(),
        ["ok", "ok", "skipped"]
    );
    let feed = body(&world.call("GET", "/api/me/notifications", Some(&ben.token), None));
    assert!(feed["notifications"][0]["detail"].as_str().unwrap().contains(&billing), "{feed}");
    assert_eq!(world.verify()["intact"], true, "{}", world.verify());
}

#[test]
fn a_forward_names_another_mailbox_of_the_node() {
    let office = office();
    let (world, ben) = (&office.world, office.person("ben"));
    for (mailbox, field) in
        [(office.mailbox.as_str(), "rules.effects[0].mailbox"), ("support", "rules.effects[0].mailbox")]
    {
        let refused = world.admin(
            "POST",
            &office.butlers(),
            Some(json!({ "name": "Loop", "sponsor": ben.id,
                         "rules": { "conditions": [], "effects": [{ "do": "forward", "mailbox": mailbox }] } })),
        );
        assert_refused(&refused, 400, "invalid_body");
        assert!(text(&refused).contains(field), "{}", text(&refused));
    }
}

#[test]
fn a_label_effect_labels_the_conversation_on_delivery_within_the_limit_and_is_skipped_without_send_propose() {
    let office = office();
    let (world, ben) = (&office.world, office.person("ben"));
    world.grant_all(&world.admin_id, &["mailbox.metadata.read"], &office.mailbox);
    let label_rules = |label: &str| json!({ "conditions": [{ "on": "subject", "contains": "invoice" }], "effects": [{ "do": "label", "label": label }] });
    let refused = world.admin(
        "POST",
        &office.butlers(),
        Some(json!({ "name": "X", "sponsor": ben.id, "rules": label_rules(" ") })),
    );
    assert_refused(&refused, 400, "invalid_body");
    assert!(text(&refused).contains("rules.effects[0].label"), "{}", text(&refused));

    let butler = office.create(label_rules(" Billing  "));
    let earlier = deliver(world, "Invoice 1", "i1@customer.example");
    let simulated = body(&world.admin("POST", &format!("{butler}/simulate"), Some(json!({ "receipt_id": earlier }))));
    assert_eq!(simulated["effects"][0]["would_run"], true, "{simulated}");
    assert_eq!(simulated["effects"][0]["outcome"], "labels the conversation “billing”");
    assert_eq!(office.thread(&earlier)["labels"], json!([]), "a dry run labels nothing");

    world.admin("POST", &format!("{butler}/publish"), Some(json!({ "version": 1 })));
    let labelled = deliver(world, "Invoice 2", "i2@customer.example");
    assert_eq!(office.thread(&labelled)["labels"], json!(["billing"]));
    let act = world.audit().into_iter().rfind(|entry| entry["action"] == "butler_effect").unwrap();
    assert_eq!((act["outcome"].as_str(), act["detail"]["effect"]["label"].as_str()), (Some("ok"), Some(" Billing  ")));
    let listed = body(&world.admin("GET", &format!("/api/mailboxes/{}/threads?label=billing", office.mailbox), None));
    assert_eq!(listed["threads"].as_array().unwrap().len(), 1, "{listed}");

    // A conversation already carrying as many labels as it may gets no more.
    let full = deliver(world, "Lunch", "f1@customer.example");
    let many: Vec<String> = (0..20).map(|n| format!("l{n:02}")).collect();
    let thread = world.thread_of(&office.mailbox, &full);
    let filled = world.call("PATCH", &thread, Some(&ben.token), Some(json!({ "add_labels": many })));
    assert_eq!(filled.status, 200, "{}", text(&filled));
    let raw = "From: Ana <ana@customer.example>\r\nTo: Support <support@mailroom.test>\r\nSubject: Re: Lunch invoice\r\n\
               Message-ID: <f2@customer.example>\r\nIn-Reply-To: <f1@customer.example>\r\n\r\nAnd the invoice.\r\n";
    let reply = match world.node.deliver("ana@customer.example", SUPPORT, raw.as_bytes()) {
        Ok(Delivery::Stored { receipt_id }) => receipt_id,
        other => panic!("{other:?}"),
    };
    let labels = office.thread(&reply)["labels"].clone();
    assert_eq!(labels.as_array().unwrap().len(), 20, "{labels}");
    assert!(!labels.as_array().unwrap().contains(&json!("billing")));
    // Recorded as skipped, with why, never as done, and the sponsor told.
    let effects = effects_on(world, &reply);
    assert_eq!(effects[0].0, "skipped", "{effects:?}");
    assert!(effects[0].1.contains("already carries 20 labels, the most it may"), "{effects:?}");
    assert!(feed(world, &ben.token)[0]["detail"].as_str().unwrap().contains("the most it may"));
    let run = body(&world.admin("POST", &format!("{butler}/simulate"), Some(json!({ "receipt_id": reply }))));
    assert_eq!(run["effects"][0]["would_run"], false, "{run}");
    // A conversation that carries the label already: nothing to add, nobody to tell.
    let told_before = feed(world, &ben.token).len();
    let again = deliver_reply(world, "Re: Invoice 2", "i2b@customer.example", "i2@customer.example");
    assert_eq!(office.thread(&again)["labels"], json!(["billing"]));
    let effects = effects_on(world, &again);
    assert_eq!(effects[0].0, "skipped", "{effects:?}");
    assert!(effects[0].1.contains("already carries “billing”"), "{effects:?}");
    assert_eq!(feed(world, &ben.token).len(), told_before);

    // Without send.propose now, the label is skipped, recorded and its sponsor told.
    world.revoke(&ben.id, "send.propose", &office.mailbox);
    let skipped = deliver(world, "Invoice 3", "i3@customer.example");
    assert_eq!(office.thread(&skipped)["labels"], json!([]));
    let act = world.audit().into_iter().rfind(|entry| entry["action"] == "butler_effect").unwrap();
    assert_eq!(act["outcome"], "skipped", "{act}");
    let feed = body(&world.call("GET", "/api/me/notifications", Some(&ben.token), None));
    assert_eq!(feed["notifications"][0]["kind"], "butler_effect_skipped", "{feed}");
}

/// A drafted reply never goes to the node's own mailboxes: a Reply-To naming
/// the mailbox itself falls back to the From; mail from another of the node's
/// mailboxes with nowhere else to reply is skipped, with why, in the dry run too.
#[test]
fn a_drafted_reply_never_addresses_the_nodes_own_mailboxes() {
    let office = office();
    let (world, ben, cleo) = (&office.world, office.person("ben"), office.person("cleo"));
    world.mailbox("billing@mailroom.test");
    let butler = office.create(json!({
        "conditions": [],
        "effects": [{ "do": "draft_reply", "text": "Thank you for writing about {subject}." }]
    }));
    publish(world, &butler);
    let sends =
        || body(&world.call("GET", &format!("/api/mailboxes/{}/sends", office.mailbox), Some(&cleo.token), None));
    let raw = |from: &str, reply_to: &str, message_id: &str| {
        format!(
            "From: {from}\r\nReply-To: {reply_to}\r\nTo: Support <{SUPPORT}>\r\nSubject: Question\r\n\
             Message-ID: <{message_id}>\r\nDate: Mon, 16 Nov 2026 09:00:00 +0000\r\n\r\nHello.\r\n"
        )
    };
    let stored = |raw: String| match world.node.deliver("x@example", SUPPORT, raw.as_bytes()) {
        Ok(Delivery::Stored { receipt_id }) => receipt_id,
        other => panic!("{other:?}"),
    };

    // Reply-To names the mailbox itself (in another case) and billing: the reply goes to the From.
    let looping = stored(raw("Ana <ana@customer.example>", "SUPPORT@mailroom.test, billing@mailroom.test", "q1@x"));
    let listed = sends();
    let send = listed["sends"].as_array().unwrap().iter().find(|send| send["reply_to"] == looping.as_str()).unwrap();
    assert_eq!(send["to"], json!(["Ana <ana@customer.example>"]), "{send}");

    // From billing, Reply-To support: no address outside the node.
    let inside = stored(raw("Billing <billing@mailroom.test>", SUPPORT, "q2@x"));
    assert!(!sends()["sends"].as_array().unwrap().iter().any(|send| send["reply_to"] == inside.as_str()));
    let effects = effects_on(world, &inside);
    assert_eq!(effects[0].0, "skipped", "{effects:?}");
    assert!(effects[0].1.contains("this node's own"), "{effects:?}");
    assert!(effects[0].1.contains("billing@mailroom.test") && effects[0].1.contains(SUPPORT), "{effects:?}");
    assert_eq!(feed(world, &ben.token)[0]["kind"], "butler_effect_skipped");
    let run = body(&world.admin("POST", &format!("{butler}/simulate"), Some(json!({ "receipt_id": inside }))));
    assert_eq!(run["effects"][0]["would_run"], false, "{run}");
    assert!(run["effects"][0]["outcome"].as_str().unwrap().contains("this node's own"), "{run}");
}

/// A copy is filed only where the message is not already; a mailbox that holds
/// it keeps its own, and the effect says so rather than claiming a copy.
#[test]
fn a_copy_to_a_mailbox_that_already_holds_the_message_is_skipped_as_already_there() {
    // Where the mail is in D1, and where each mailbox keeps it in its own
    // database: the delivery skips the copy, and the dry run says it would.
    for in_d1 in [true, false] {
        let office = office_in(if in_d1 { World::with_mail_in_d1() } else { World::new() });
        let (world, ben) = (&office.world, office.person("ben"));
        let billing = world.mailbox("billing@mailroom.test");
        world.grant_all(&ben.id, &["mailbox.content.read"], &office.mailbox);
        world.grant_all(&ben.id, &["mailbox.metadata.read", "mailbox.content.read"], &billing);
        let butler = office.create(json!({ "conditions": [], "effects": [{ "do": "forward", "mailbox": billing }] }));
        publish(world, &butler);
        let raw = "From: Ana <ana@customer.example>\r\nTo: support@mailroom.test, billing@mailroom.test\r\n\
                   Subject: Invoice\r\nMessage-ID: <both@customer.example>\r\n\r\nHello.\r\n";
        assert!(matches!(
            world.node.deliver("ana@customer.example", "billing@mailroom.test", raw.as_bytes()),
            Ok(Delivery::Stored { .. })
        ));
        let Ok(Delivery::Stored { receipt_id }) = world.node.deliver("ana@customer.example", SUPPORT, raw.as_bytes())
        else {
            panic!()
        };
        let effects = effects_on(world, &receipt_id);
        assert_eq!(effects[0].0, "skipped", "{effects:?}");
        assert!(effects[0].1.contains("already holds this message"), "{effects:?}");
        let held = world.node.mail_count(&format!("SELECT COUNT(*) FROM receipts WHERE mailbox_id = '{billing}'"));
        assert_eq!(held, 1);
        let run = body(&world.admin("POST", &format!("{butler}/simulate"), Some(json!({ "receipt_id": receipt_id }))));
        assert_eq!(run["effects"][0]["would_run"], false, "in D1: {in_d1}: {run}");
    }
}

/// A webhook is posted after the delivery is stored, so its effect is
/// recorded then as posting; a post that fails is recorded once it has, as
/// failed with why, and told to the sponsor. Only then does a delivery cost a
/// third round trip.
#[test]
fn a_webhook_that_fails_is_recorded_as_failed_and_told() {
    // Its mail in D1: the round trips counted are D1's.
    let office = office_in(World::with_mail_in_d1());
    let (world, ben) = (&office.world, office.person("ben"));
    let butler = office.create(json!({
        "conditions": [],
        "effects": [{ "do": "notify_webhook", "url": "https://hooks.example.org/in" }, { "do": "label", "label": "hooked" }]
    }));
    publish(world, &butler);
    let trips = |subject: &str, id: &str| {
        let before = world.node.database.batches();
        let receipt = deliver(world, subject, id);
        (receipt, world.node.database.batches() - before)
    };
    // Two for the delivery and two for the sealer after it (a read, the seal).
    let (posted, round_trips) = trips("Invoice 1", "h1@customer.example");
    assert_eq!(round_trips, 2 + 2, "{round_trips}");
    assert_eq!(
        effects_on(world, &posted).iter().map(|(outcome, _)| outcome.as_str()).collect::<Vec<_>>(),
        ["ok", "ok"]
    );

    world.node.webhooks.unreachable.set(true);
    let (failed, round_trips) = trips("Invoice 2", "h2@customer.example");
    assert_eq!(round_trips, 2 + 1 + 2, "one more, to record the failure: {round_trips}");
    let effects = effects_on(world, &failed);
    assert_eq!(
        effects.iter().map(|(outcome, _)| outcome.as_str()).collect::<Vec<_>>(),
        ["ok", "ok", "failed"],
        "{effects:?}"
    );
    assert!(effects[2].1.contains("https://hooks.example.org/in could not be reached"), "{effects:?}");
    let told = &feed(world, &ben.token)[0];
    assert_eq!(told["kind"], "butler_effect_skipped", "{told}");
    assert!(told["detail"].as_str().unwrap().contains("could not be reached"), "{told}");
    assert_eq!(world.verify()["intact"], true, "{}", world.verify());
}
