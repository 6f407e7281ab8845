//! Butlers: versions, publishing that pins the sponsor's authority, effects on
//! the next delivery audited as the butler for its sponsor, an effect the
//! sponsor can no longer authorise skipped and recorded, and a dry run that
//! changes nothing at all. What each kind of effect does is in
//! `butlers_effects`, which shares the office set up here.

use mailroom::mail::Delivery;
use serde_json::{Value, json};

use crate::desk::{DRAFTS_FROM_THE_LISTING, Desk};
use crate::support::*;

pub(crate) const SUPPORT: &str = "support@mailroom.test";

pub(crate) fn deliver(world: &World, subject: &str, message_id: &str) -> String {
    let raw = format!(
        "From: Ana <ana@customer.example>\r\nTo: Support <{SUPPORT}>\r\nSubject: {subject}\r\n\
         Message-ID: <{message_id}>\r\nDate: Mon, 16 Nov 2026 09:00:00 +0000\r\n\r\nHello.\r\n"
    );
    match world.node.deliver("ana@customer.example", SUPPORT, raw.as_bytes()) {
        Ok(Delivery::Stored { receipt_id }) => receipt_id,
        other => panic!("{other:?} {:?}", world.node.platform.logs.borrow()),
    }
}

/// Ben and Cleo see the mailbox's listing and draft from it (neither reads a
/// message's content); Ben sponsors the butlers.
pub(crate) fn office() -> Desk {
    office_in(World::new())
}

/// The office, in `world`.
pub(crate) fn office_in(world: World) -> Desk {
    Desk::in_world(world, SUPPORT)
        .with("ben@example.com", DRAFTS_FROM_THE_LISTING)
        .with("cleo@example.com", DRAFTS_FROM_THE_LISTING)
}

/// The office's butlers, as these tests and `butlers_effects` make and read them.
pub(crate) trait Butlers {
    fn butlers(&self) -> String;
    fn create(&self, rules: Value) -> String;
    fn thread(&self, receipt: &str) -> Value;
}

impl Butlers for Desk {
    fn butlers(&self) -> String {
        format!("/api/mailboxes/{}/butlers", self.mailbox)
    }

    fn create(&self, rules: Value) -> String {
        let created = self.world.admin(
            "POST",
            &self.butlers(),
            Some(json!({ "name": "Invoices to Cleo", "sponsor": self.person("ben").id, "rules": rules })),
        );
        assert_eq!(created.status, 201, "{}", text(&created));
        format!("{}/{}", self.butlers(), body(&created)["id"].as_str().unwrap())
    }

    fn thread(&self, receipt: &str) -> Value {
        let shown = self.world.admin("GET", &self.world.thread_of(&self.mailbox, receipt), None);
        body(&shown)
    }
}

fn invoices_to_cleo(cleo: &str) -> Value {
    json!({
        "conditions": [{ "on": "subject", "contains": "invoice" }, { "on": "from", "contains": "customer.example" }],
        "effects": [{ "do": "assign", "assignee": cleo }, { "do": "set_status", "status": "waiting" }]
    })
}

#[test]
fn a_published_butler_acts_on_the_next_delivery_as_itself_for_its_sponsor() {
    let office = office();
    let (world, ben, cleo) = (&office.world, office.person("ben"), office.person("cleo"));
    // The administrator reads the thread too.
    world.grant_all(&world.admin_id, &["mailbox.metadata.read"], &office.mailbox);
    let butler = office.create(invoices_to_cleo(&cleo.id));
    let before = deliver(world, "Invoice 4471", "i1@customer.example");
    assert!(office.thread(&before)["assignee"].is_null(), "a draft acts on nothing");

    let published = world.admin("POST", &format!("{butler}/publish"), Some(json!({ "version": 1 })));
    assert_eq!(published.status, 200, "{}", text(&published));
    assert_eq!(body(&published)["published_version"], 1);
    assert_eq!(body(&published)["versions"][0]["pinned_relations"], json!(["mailbox.metadata.read", "send.propose"]));

    let matching = deliver(world, "Re: invoice 4472", "i2@customer.example");
    let thread = office.thread(&matching);
    assert_eq!(thread["assignee"], cleo.id.as_str(), "{thread}");
    assert_eq!(thread["status"], "waiting");
    let other = deliver(world, "Lunch?", "l1@customer.example");
    assert!(office.thread(&other)["assignee"].is_null());

    let acts: Vec<Value> = world.audit().into_iter().filter(|entry| entry["action"] == "butler_effect").collect();
    assert_eq!(acts.len(), 2, "{acts:?}");
    let butler_id = butler.rsplit('/').next().unwrap();
    for act in &acts {
        assert_eq!(act["actor"], butler_id);
        assert_eq!(act["actor_kind"], "butler");
        assert_eq!(act["delegator"], ben.id.as_str());
        assert_eq!(act["outcome"], "ok");
    }
    assert_eq!(world.verify()["intact"], true, "{}", world.verify());

    // Editing makes a new draft; the published version acts on, unchanged.
    let edited = world.admin(
        "PATCH",
        &butler,
        Some(json!({ "rules": { "conditions": [], "effects": [{ "do": "set_status", "status": "closed" }] } })),
    );
    assert_eq!(body(&edited)["versions"][0]["version"], 2);
    assert_eq!(body(&edited)["published_version"], 1);
    let third = deliver(world, "Invoice 4473", "i3@customer.example");
    assert_eq!(office.thread(&third)["status"], "waiting");
    assert_refused(&world.admin("POST", &format!("{butler}/publish"), Some(json!({ "version": 1 }))), 409, "conflict");
}

#[test]
fn a_sponsor_without_what_its_effects_need_cannot_publish_and_a_lost_relation_skips_the_effect() {
    let office = office();
    let (world, ben, cleo) = (&office.world, office.person("ben"), office.person("cleo"));
    // Ben holds only metadata when it is published: publishing is refused, since
    // every effect would be skipped.
    world.revoke(&ben.id, "send.propose", &office.mailbox);
    let butler = office.create(invoices_to_cleo(&cleo.id));
    assert_refused(
        &world.admin("POST", &format!("{butler}/publish"), Some(json!({ "version": 1 }))),
        409,
        "sponsor_lacks",
    );
    world.grant_all(&ben.id, &["send.propose"], &office.mailbox);
    let published = world.admin("POST", &format!("{butler}/publish"), Some(json!({ "version": 1 })));
    assert_eq!(published.status, 200, "{}", text(&published));

    // Revoked after publishing: skipped, recorded, and its sponsor told.
    world.revoke(&ben.id, "send.propose", &office.mailbox);
    let receipt = deliver(world, "Invoice 9", "i9@customer.example");
    world.grant_all(&world.admin_id, &["mailbox.metadata.read"], &office.mailbox);
    assert!(office.thread(&receipt)["assignee"].is_null());
    let skipped: Vec<Value> = world.audit().into_iter().filter(|entry| entry["outcome"] == "skipped").collect();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    let feed = body(&world.call("GET", "/api/me/notifications", Some(&ben.token), None));
    assert_eq!(feed["notifications"][0]["kind"], "butler_effect_skipped", "{feed}");
    assert_eq!(feed["notifications"][0]["actor_name"], "Invoices to Cleo");
    assert!(feed["notifications"][0]["detail"].as_str().unwrap().contains("no longer holds send.propose"));
    // Ben's feed shows it although he no longer holds send.propose: he still holds metadata there.
    assert_eq!(feed["notifications"][0]["title"], "Invoice 9");
}

#[test]
fn a_dry_run_names_what_matched_and_what_would_happen_and_changes_nothing() {
    let office = office();
    let (world, ben, cleo) = (&office.world, office.person("ben"), office.person("cleo"));
    let receipt = deliver(world, "Invoice 4471", "i1@customer.example");
    let butler = office.create(invoices_to_cleo(&cleo.id));
    let tables = || world.node.database.snapshot();
    let blobs = || world.node.blobs.objects.borrow().len();
    let (before, blobs_before) = (tables(), blobs());

    let simulated = world.admin("POST", &format!("{butler}/simulate"), Some(json!({ "receipt_id": receipt })));
    assert_eq!(simulated.status, 200, "{}", text(&simulated));
    let run = body(&simulated);
    assert_eq!(run["matched"], true, "{run}");
    assert_eq!(run["version"], 1);
    assert_eq!(run["conditions"][0]["found"], "Invoice 4471");
    assert_eq!(run["conditions"][1]["found"], "Ana <ana@customer.example>");
    assert_eq!(run["effects"][0]["would_run"], true);
    assert!(run["effects"][0]["outcome"].as_str().unwrap().contains(&cleo.id));
    assert_eq!(tables(), before, "a dry run writes nothing, not even an audit entry");
    assert_eq!(blobs(), blobs_before);

    // Over MCP: offered to the administrator's own session, never to an agent.
    let listed = world.admin("POST", "/mcp", Some(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" })));
    let names: Vec<String> = body(&listed)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.contains(&"simulate_butler".to_string()), "{names:?}");
    assert!(!names.contains(&"publish_butler".to_string()), "publishing is an operator's act, not a tool");
    let called = world.admin(
        "POST",
        "/mcp",
        Some(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "simulate_butler",
            "arguments": { "mailbox_id": office.mailbox, "butler_id": butler.rsplit('/').next().unwrap(), "receipt_id": receipt }
        } })),
    );
    assert_eq!(body(&called)["result"]["structuredContent"]["matched"], true, "{}", text(&called));
    assert_eq!(tables(), before, "nor over MCP");
    let (_, agent) = world.mint(
        &ben.id,
        &["mail.triage"],
        json!([{ "mailbox": office.mailbox, "relations": ["mailbox.metadata.read"] }]),
    );
    let agents_list =
        world.call("POST", "/mcp", Some(&agent), Some(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" })));
    assert!(!text(&agents_list).contains("simulate_butler"));

    // A condition that fails says what it found; a stranger's receipt is not found.
    let other = deliver(world, "Lunch?", "l1@customer.example");
    let run = body(&world.admin("POST", &format!("{butler}/simulate"), Some(json!({ "receipt_id": other }))));
    assert_eq!(run["matched"], false);
    assert_eq!(run["conditions"][0]["matched"], false);
    assert_eq!(run["effects"][0]["would_run"], false);
    let elsewhere = world.mailbox("billing@mailroom.test");
    let foreign = world.deliver("plain", "billing@mailroom.test");
    let _ = elsewhere;
    assert_refused(
        &world.admin("POST", &format!("{butler}/simulate"), Some(json!({ "receipt_id": foreign }))),
        404,
        "not_found",
    );
}

#[test]
fn a_butler_is_refused_in_words_when_its_rules_or_sponsor_are_wrong() {
    let office = office();
    let (world, ben, cleo) = (&office.world, office.person("ben"), office.person("cleo"));
    let post = |payload: Value| world.admin("POST", &office.butlers(), Some(payload));
    let (agent, _) = world.mint(&ben.id, &["identity.read"], json!([]));
    for (payload, field) in [
        (json!({ "name": "", "sponsor": ben.id, "rules": invoices_to_cleo(&cleo.id) }), "name"),
        (json!({ "name": "X", "sponsor": ben.id, "rules": { "conditions": [], "effects": [] } }), "rules.effects"),
        (
            json!({ "name": "X", "sponsor": ben.id, "rules": { "conditions": [{ "on": "subject", "contains": " " }], "effects": [{ "do": "set_status", "status": "closed" }] } }),
            "rules.conditions[0].contains",
        ),
        (
            json!({ "name": "X", "sponsor": ben.id, "rules": { "conditions": [], "effects": [{ "do": "assign", "assignee": "cleo" }] } }),
            "rules.effects[0].assignee",
        ),
    ] {
        let refused = post(payload);
        assert_refused(&refused, 400, "invalid_body");
        assert!(text(&refused).contains(field), "{field}: {}", text(&refused));
    }
    assert_refused(
        &post(json!({ "name": "X", "sponsor": agent, "rules": invoices_to_cleo(&cleo.id) })),
        400,
        "invalid_body",
    );
    assert_refused(
        &world.call(
            "POST",
            &office.butlers(),
            Some(&ben.token),
            Some(json!({ "name": "X", "sponsor": ben.id, "rules": invoices_to_cleo(&cleo.id) })),
        ),
        403,
        "missing_relation",
    );
}

/// A published version is what acted on deliveries: the schema itself refuses
/// changing any of it (its rules, its pins, when and by whom it was published)
/// and deleting it, whoever writes the database; a draft stays editable.
#[test]
fn the_database_keeps_a_published_version_as_published_and_never_deletes_it() {
    let office = office();
    let (world, cleo) = (&office.world, office.person("cleo"));
    let butler = office.create(invoices_to_cleo(&cleo.id));
    let butler_id = butler.rsplit('/').next().unwrap().to_string();
    let published = world.admin("POST", &format!("{butler}/publish"), Some(json!({ "version": 1 })));
    assert_eq!(published.status, 200, "{}", text(&published));
    let edited = world.admin(
        "PATCH",
        &butler,
        Some(json!({ "rules": { "conditions": [], "effects": [{ "do": "set_status", "status": "closed" }] } })),
    );
    assert_eq!(edited.status, 200, "{}", text(&edited));
    let version = |number: i64| format!("butler_id = '{butler_id}' AND version = {number}");
    for change in [
        format!("UPDATE butler_versions SET rules_json = '{{}}' WHERE {}", version(1)),
        format!("UPDATE butler_versions SET pinned_relations_json = '[]' WHERE {}", version(1)),
        format!("UPDATE butler_versions SET published_at = published_at + 86400000 WHERE {}", version(1)),
        format!("UPDATE butler_versions SET published_at = NULL WHERE {}", version(1)),
        format!("UPDATE butler_versions SET published_by = 'usr_someone_else' WHERE {}", version(1)),
        format!("UPDATE butler_versions SET created_by = 'usr_someone_else' WHERE {}", version(1)),
        format!("UPDATE butler_versions SET version = 7 WHERE {}", version(1)),
        format!("DELETE FROM butler_versions WHERE {}", version(1)),
        format!("DELETE FROM butler_versions WHERE butler_id = '{butler_id}'"),
    ] {
        let refused = world.node.database.try_tamper(&change);
        assert!(
            refused.as_ref().is_err_and(|error| error.contains("refused:butler_version_published")),
            "{change}: {refused:?}"
        );
    }
    assert_eq!(
        world.node.database.count(&format!("SELECT COUNT(*) FROM butler_versions WHERE butler_id = '{butler_id}'")),
        2
    );
    // And the chain holds what was published, to check the rules against.
    let stored =
        world.node.database.peek(&format!("SELECT rules_json FROM butler_versions WHERE {}", version(1))).unwrap();
    let publishing = world.audit().into_iter().find(|entry| entry["action"] == "publish_butler").unwrap();
    assert_eq!(publishing["detail"]["rules_sha256"], mailroom::core::crypto::sha256_hex(stored.as_bytes()));
    // The draft is still the administrator's to change, and to publish.
    assert!(
        world
            .node
            .database
            .try_tamper(&format!("UPDATE butler_versions SET created_at = 1 WHERE {}", version(2)))
            .is_ok()
    );
    let again = world.admin("POST", &format!("{butler}/publish"), Some(json!({ "version": 2 })));
    assert_eq!(again.status, 200, "{}", text(&again));
}

/// The butler effects audited for receipt `receipt`, in order: (outcome, what it said).
pub(crate) fn effects_on(world: &World, receipt: &str) -> Vec<(String, String)> {
    world
        .audit()
        .into_iter()
        .filter(|entry| entry["action"] == "butler_effect" && entry["detail"]["receipt"] == receipt)
        .map(|entry| {
            (entry["outcome"].as_str().unwrap().to_string(), entry["detail"]["outcome"].as_str().unwrap().to_string())
        })
        .collect()
}

/// The kinds of the notifications in the feed of `token`, newest first.
pub(crate) fn feed(world: &World, token: &str) -> Vec<Value> {
    body(&world.call("GET", "/api/me/notifications", Some(token), None))["notifications"].as_array().unwrap().clone()
}

pub(crate) fn publish(world: &World, butler: &str) {
    let published = world.admin("POST", &format!("{butler}/publish"), Some(json!({ "version": 1 })));
    assert_eq!(published.status, 200, "{}", text(&published));
}

/// A delivery to support that answers `in_reply_to`.
pub(crate) fn deliver_reply(world: &World, subject: &str, message_id: &str, in_reply_to: &str) -> String {
    let raw = format!(
        "From: Ana <ana@customer.example>\r\nTo: Support <{SUPPORT}>\r\nSubject: {subject}\r\n\
         Message-ID: <{message_id}>\r\nIn-Reply-To: <{in_reply_to}>\r\nDate: Mon, 16 Nov 2026 10:00:00 +0000\r\n\r\n\
         Following up on the quarterly figures.\r\n"
    );
    match world.node.deliver("ana@customer.example", SUPPORT, raw.as_bytes()) {
        Ok(Delivery::Stored { receipt_id }) => receipt_id,
        other => panic!("{other:?}"),
    }
}

/// The attacker's next move after "revoke the sponsor" is to make the effect's
/// other party unable: an assignee who no longer works the mailbox (a person
/// whose relation was revoked, a person disabled, an agent whose sponsor lost
/// the relation). Each is skipped with its reason, in the audit entry, the
/// run's record and the dry run, and the sponsor is told; never recorded as done.
#[test]
fn an_assignee_who_no_longer_works_the_mailbox_is_skipped_with_its_reason_never_recorded_as_done() {
    let office = office();
    let (world, ben, cleo) = (&office.world, office.person("ben"), office.person("cleo"));
    world.grant_all(&world.admin_id, &["mailbox.metadata.read"], &office.mailbox);
    let butler = office.create(invoices_to_cleo(&cleo.id));
    publish(world, &butler);
    let simulate = |receipt: &str| {
        let run = body(&world.admin("POST", &format!("{butler}/simulate"), Some(json!({ "receipt_id": receipt }))));
        (run["effects"][0]["would_run"].as_bool().unwrap(), run["effects"][0]["outcome"].as_str().unwrap().to_string())
    };

    world.revoke(&cleo.id, "send.propose", &office.mailbox);
    let receipt = deliver(world, "Invoice 1", "a1@customer.example");
    assert!(office.thread(&receipt)["assignee"].is_null());
    let effects = effects_on(world, &receipt);
    assert_eq!(effects[0].0, "skipped", "{effects:?}");
    assert!(effects[0].1.contains(&format!("{} does not work the mailbox", cleo.id)), "{effects:?}");
    assert_eq!(effects[1].0, "ok", "the status is still set: {effects:?}");
    let run = world.node.mail_peek(&format!("SELECT outcome_json FROM butler_runs WHERE receipt_id = '{receipt}'"));
    let run: Value = serde_json::from_str(&run.unwrap()).unwrap();
    assert_eq!(run["effects"][0]["would_run"], false, "{run}");
    let told = &feed(world, &ben.token)[0];
    assert_eq!(told["kind"], "butler_effect_skipped", "{told}");
    assert!(told["detail"].as_str().unwrap().contains("does not work the mailbox"), "{told}");
    assert!(!feed(world, &cleo.token).iter().any(|item| item["kind"] == "conversation_assigned"));
    let (would_run, outcome) = simulate(&receipt);
    assert!(!would_run && outcome.contains("does not work the mailbox"), "{outcome}");

    // Working it again, then disabled: the same.
    world.grant_all(&cleo.id, &["send.propose"], &office.mailbox);
    assert!(simulate(&receipt).0, "the dry run follows what is held now");
    assert_eq!(world.admin("POST", &format!("/api/people/{}/disable", cleo.id), None).status, 200);
    let disabled = deliver(world, "Invoice 2", "a2@customer.example");
    assert!(office.thread(&disabled)["assignee"].is_null());
    assert_eq!(effects_on(world, &disabled)[0].0, "skipped");
    assert!(!simulate(&disabled).0);

    // An agent assignee works the mailbox only while its sponsor does too.
    assert_eq!(world.admin("POST", &format!("/api/people/{}/enable", cleo.id), None).status, 200);
    let (agent, _) = world.mint(
        &cleo.id,
        &["mail.triage"],
        json!([{ "mailbox": office.mailbox, "relations": ["mailbox.metadata.read", "send.propose"] }]),
    );
    let to_agent = world.admin(
        "PATCH",
        &butler,
        Some(json!({ "rules": { "conditions": [], "effects": [{ "do": "assign", "assignee": agent }] } })),
    );
    assert_eq!(to_agent.status, 200, "{}", text(&to_agent));
    assert_eq!(world.admin("POST", &format!("{butler}/publish"), Some(json!({ "version": 2 }))).status, 200);
    let assigned = deliver(world, "Invoice 3", "a3@customer.example");
    assert_eq!(office.thread(&assigned)["assignee"], agent.as_str());
    assert_eq!(effects_on(world, &assigned)[0].0, "ok");
    world.revoke(&cleo.id, "send.propose", &office.mailbox);
    let orphaned = deliver(world, "Invoice 4", "a4@customer.example");
    assert!(office.thread(&orphaned)["assignee"].is_null());
    let effects = effects_on(world, &orphaned);
    assert_eq!(effects[0].0, "skipped", "the agent holds send.propose, its sponsor no longer does: {effects:?}");
    assert_eq!(world.verify()["intact"], true, "{}", world.verify());
}

/// A butler's assignment is told to the assignee as a person's is: the same
/// kind, mailbox, conversation and title, in the batch that assigns it, the
/// butler named as who did it; and, as for a person's, not again when the
/// conversation is already theirs.
#[test]
fn a_butlers_assignment_tells_the_assignee_as_a_persons_does() {
    let office = office();
    let (world, ben, cleo) = (&office.world, office.person("ben"), office.person("cleo"));
    // Ben assigns a conversation to Cleo by hand.
    let by_hand = deliver(world, "Lunch", "h1@customer.example");
    let assigned = world.call(
        "PATCH",
        &world.thread_of(&office.mailbox, &by_hand),
        Some(&ben.token),
        Some(json!({ "assignee": cleo.id })),
    );
    assert_eq!(assigned.status, 200, "{}", text(&assigned));
    let persons = feed(world, &cleo.token)[0].clone();
    assert_eq!(persons["kind"], "conversation_assigned", "{persons}");

    let butler = office.create(invoices_to_cleo(&cleo.id));
    publish(world, &butler);
    let butler_id = butler.rsplit('/').next().unwrap();
    let receipt = deliver(world, "Invoice 4471", "b1@customer.example");
    let items = feed(world, &cleo.token);
    assert_eq!(items.len(), 2, "{items:?}");
    let butlers = &items[0];
    for field in ["kind", "mailbox_id", "mailbox_address", "detail"] {
        assert_eq!(butlers[field], persons[field], "{field}: {butlers} and {persons}");
    }
    let keys = |item: &Value| item.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(butlers), keys(&persons));
    assert_eq!(butlers["title"], "Invoice 4471");
    assert_eq!(butlers["actor"], butler_id);
    assert_eq!(butlers["actor_name"], "Invoices to Cleo");
    assert_eq!(
        format!("/api/mailboxes/{}/threads/{}", office.mailbox, butlers["object_id"].as_str().unwrap()),
        world.thread_of(&office.mailbox, &receipt)
    );

    // The conversation is already Cleo's when the follow-up arrives: nothing to
    // assign, nothing to tell.
    let follow_up = deliver_reply(world, "Re: Invoice 4471", "b2@customer.example", "b1@customer.example");
    assert_eq!(feed(world, &cleo.token).len(), 2, "told once");
    let effects = effects_on(world, &follow_up);
    assert_eq!(effects[0].0, "skipped", "{effects:?}");
    assert!(effects[0].1.contains("already assigned"), "{effects:?}");
    assert!(
        !feed(world, &ben.token).iter().any(|item| item["kind"] == "butler_effect_skipped"),
        "what is already so is not the sponsor's to fix"
    );
}
