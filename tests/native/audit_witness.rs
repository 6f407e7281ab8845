//! The audit witness (decision 0027): each checkpoint also sent, signed, to an
//! auditor outside the account (a webhook or an email address) that an
//! administrator sets; told again until it takes it, and at least once a day;
//! recorded in the chain itself, so that a database writer can neither redirect
//! nor silence it.

use hmac::{Hmac, KeyInit, Mac};
use mailroom::audit::checkpoints;
use mailroom::testing::TEST_REMINDER_SENDER;
use mailroom_contract::RouteId;
use serde_json::{Value, json};
use sha2::Sha256;

use crate::support::*;

const HOOK: &str = "https://auditor.example/witness";

/// Whether `header` (`t=…,v1=…`) is the HMAC-SHA256 of `t.body` under `secret`,
/// computed here apart from the node's own code.
fn signed(secret: &str, header: &str, body: &str) -> bool {
    let (Some(t), Some(v1)) = (
        header.split(',').find_map(|part| part.strip_prefix("t=")),
        header.split(',').find_map(|part| part.strip_prefix("v1=")),
    ) else {
        return false;
    };
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.{body}").as_bytes());
    let expected: String = mac.finalize().into_bytes().iter().map(|byte| format!("{byte:02x}")).collect();
    expected == v1
}

fn set_webhook(world: &World, url: &str) -> Value {
    let set = world.admin("PUT", "/api/audit/witness", Some(json!({ "webhook_url": url })));
    assert_eq!(set.status, 200, "{}", text(&set));
    body(&set)
}

/// What the witness's webhook was posted, as (headers, body) pairs.
fn posted_to(world: &World, url: &str) -> Vec<(Vec<(String, String)>, Value)> {
    world
        .node
        .webhooks
        .posted
        .borrow()
        .iter()
        .filter(|post| post.url == url)
        .map(|post| (post.headers.clone(), serde_json::from_str(&post.body).unwrap()))
        .collect()
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> &'a str {
    headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str()).unwrap_or_default()
}

#[test]
fn each_checkpoint_is_posted_to_the_witness_signed() {
    let world = World::new();
    let set = set_webhook(&world, HOOK);
    assert_eq!(set["witness"], HOOK);
    let secret = set["signing_secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"));
    let entry = world.last_audit_entry();
    assert_eq!(
        (entry["action"].clone(), entry["detail"]["witness"].clone()),
        (json!("set_audit_witness"), json!(HOOK))
    );

    let made = world.admin("POST", "/api/audit/checkpoints", None);
    assert_eq!(made.status, 201, "{}", text(&made));
    let first = body(&made);
    assert_eq!(
        (first["number"].clone(), first["witness"].clone()),
        (json!(1), json!(HOOK)),
        "the witness is signed in"
    );
    let posts = posted_to(&world, HOOK);
    assert_eq!(posts.len(), 1);
    let (headers, message) = &posts[0];
    assert_eq!(message["kind"], "audit_checkpoint");
    assert_eq!(message["checkpoint"], first);
    let raw_body = world.node.webhooks.posted.borrow()[0].body.clone();
    assert!(signed(&secret, header(headers, "mailroom-signature"), &raw_body), "signed with the secret shown");
    assert!(!signed("whsec_another", header(headers, "mailroom-signature"), &raw_body));
    assert_eq!(header(headers, "mailroom-delivery"), "audit-checkpoint-1");

    let shown = body(&world.admin("GET", "/api/audit/witness", None));
    assert_eq!(shown["witness"], HOOK);
    assert_eq!(shown["signing_secret"], secret.as_str());
    assert_eq!(shown["changed_in_seq"], entry["seq"]);
    assert_eq!(shown["latest_checkpoint"], first);
    assert!(shown["delivered_at"].is_string(), "{shown}");

    // The scheduled checkpoints go there too.
    world.team("Later");
    let second = world.node.maintain().expect("a checkpoint");
    let posts = posted_to(&world, HOOK);
    assert_eq!(posts.len(), 2);
    assert_eq!(posts[1].1["checkpoint"]["number"], 2);
    assert_eq!(posts[1].1["checkpoint"]["seq"], second.seq);
}

#[test]
fn a_witness_that_did_not_take_a_checkpoint_is_told_again_and_hears_at_least_daily() {
    let world = World::new();
    set_webhook(&world, HOOK);
    world.node.webhooks.status.set(500);
    let first = world.node.maintain().expect("a checkpoint");
    let shown = body(&world.admin("GET", "/api/audit/witness", None));
    assert!(shown["delivered_at"].is_null(), "{shown}");
    assert!(shown["delivery_error"].as_str().unwrap().contains("500"), "{shown}");

    world.node.webhooks.status.set(200);
    assert_eq!(world.node.maintain(), Some(first.clone()), "nothing new to sign");
    let posts = posted_to(&world, HOOK);
    assert_eq!(posts.len(), 2, "told again");
    assert_eq!(posts[1].1["checkpoint"]["number"], 1);
    assert_eq!(world.node.maintain(), Some(first.clone()));
    assert_eq!(posted_to(&world, HOOK).len(), 2, "once it has it, not again");

    // A day without a change: a checkpoint of the same head all the same.
    world.node.platform.advance(24 * 60 * 60 * 1000);
    let heartbeat = world.node.maintain().expect("a checkpoint");
    assert_eq!((heartbeat.number, heartbeat.seq), (Some(2), first.seq));
    assert_eq!(posted_to(&world, HOOK).len(), 3);
}

#[test]
fn an_email_witness_is_mailed_each_checkpoint_signed() {
    let world = World::new();
    let set = world.admin("PUT", "/api/audit/witness", Some(json!({ "email": "Auditor@Example.org" })));
    assert_eq!(set.status, 200, "{}", text(&set));
    let set = body(&set);
    assert_eq!(set["witness"], "mailto:auditor@example.org");
    let secret = set["signing_secret"].as_str().unwrap().to_string();
    let made = body(&world.admin("POST", "/api/audit/checkpoints", None));

    let sent = world.node.mailer.sent.borrow();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].envelope_from.as_str(), sent[0].envelope_to.as_str()),
        (TEST_REMINDER_SENDER, "auditor@example.org")
    );
    let message = mail_parser::MessageParser::default().parse(&sent[0].raw).unwrap();
    assert_eq!(message.header_raw("Auto-Submitted").map(str::trim), Some("auto-generated"));
    let signature = message.header_raw("Mailroom-Signature").unwrap().trim().to_string();
    let text = message.body_text(0).unwrap().to_string();
    let line = text.lines().find(|line| line.starts_with('{')).unwrap();
    assert!(signed(&secret, &signature, line), "the JSON line is signed");
    let mailed: Value = serde_json::from_str(line).unwrap();
    assert_eq!(mailed["checkpoint"], made);
    assert!(message.subject().unwrap().contains("checkpoint 1"));
}

#[test]
fn setting_the_witness_is_an_administrators_audited_act_held_to_the_webhook_rules() {
    let world = World::new();
    for (body, field) in [
        (json!({}), "email"),
        (json!({ "email": "auditor@example.org", "webhook_url": HOOK }), "email"),
        (json!({ "email": "not an address" }), "email"),
        (json!({ "webhook_url": "http://auditor.example/witness" }), "webhook_url"),
        (json!({ "webhook_url": "https://user:secret@auditor.example/witness" }), "webhook_url"),
        (json!({ "webhook_url": "https://169.254.169.254/latest/meta-data" }), "webhook_url"),
        (json!({ "webhook_url": "https://[::ffff:10.0.0.1]/witness" }), "webhook_url"),
        (json!({ "webhook_url": "https://0x7f.1/witness" }), "webhook_url"),
        (json!({ "webhook_url": format!("https://auditor.example/{}", "x".repeat(500)) }), "webhook_url"),
    ] {
        let refused = world.admin("PUT", "/api/audit/witness", Some(body.clone()));
        assert_refused(&refused, 400, "invalid_body");
        assert!(text(&refused).contains(field), "{body}: {}", text(&refused));
        let entry = world.last_audit_entry();
        assert_eq!((entry["action"].clone(), entry["outcome"].clone()), (json!("set_audit_witness"), json!("refused")));
    }
    let (_, token) = world.person("ben@example.com");
    let put = world.call("PUT", "/api/audit/witness", Some(&token), Some(json!({ "webhook_url": HOOK })));
    assert_refused(&put, 403, "missing_relation");
    assert_refused(&world.call("DELETE", "/api/audit/witness", Some(&token), None), 403, "missing_relation");
    assert_refused(&world.call("GET", "/api/audit/witness", Some(&token), None), 403, "missing_relation");
    assert!(body(&world.admin("GET", "/api/audit/witness", None))["witness"].is_null(), "nothing set by a refusal");
    let registry = mailroom_contract::registry();
    for route in [RouteId::ShowAuditWitness, RouteId::SetAuditWitness, RouteId::RemoveAuditWitness] {
        assert!(!registry.is_offered_to_machines(route), "{route:?} is never offered to machines");
    }

    let mut world = World::new();
    world.node.config.reminder_sender = None;
    let refused = world.admin("PUT", "/api/audit/witness", Some(json!({ "email": "auditor@example.org" })));
    assert_refused(&refused, 503, "node_not_configured");
    assert!(text(&refused).contains("REMINDER_SENDER"));
}

#[test]
fn removing_the_witness_tells_it_once_and_then_nothing() {
    let world = World::new();
    set_webhook(&world, HOOK);
    world.node.maintain().expect("a checkpoint");
    let removed = world.admin("DELETE", "/api/audit/witness", None);
    assert_eq!(removed.status, 200, "{}", text(&removed));
    assert!(body(&removed)["witness"].is_null());
    let last = world.node.maintain().expect("a checkpoint");
    assert_eq!(last.witness, None);
    let posts = posted_to(&world, HOOK);
    assert_eq!(posts.len(), 2, "the witness removed hears of it");
    assert!(posts[1].1["checkpoint"]["witness"].is_null());
    world.team("Later");
    world.node.maintain().expect("a checkpoint");
    assert_eq!(posted_to(&world, HOOK).len(), 2);
}

#[test]
fn replacing_the_witness_tells_both_and_signs_for_the_new_one_with_its_own_secret() {
    let world = World::new();
    let first = set_webhook(&world, HOOK);
    world.node.maintain().expect("a checkpoint");
    let other = "https://second-auditor.example/witness";
    let second = set_webhook(&world, other);
    assert_ne!(first["signing_secret"], second["signing_secret"], "a witness replaced cannot sign as the next one");
    let checkpoint = world.node.maintain().expect("a checkpoint");
    assert_eq!(checkpoint.witness.as_deref(), Some(other));
    assert_eq!(posted_to(&world, HOOK).len(), 2, "the old witness learns it was replaced");
    let posts = posted_to(&world, other);
    assert_eq!(posts.len(), 1);
    let raw_body =
        world.node.webhooks.posted.borrow().iter().rev().find(|post| post.url == other).unwrap().body.clone();
    assert!(signed(second["signing_secret"].as_str().unwrap(), header(&posts[0].0, "mailroom-signature"), &raw_body));
}

#[test]
fn a_database_writer_can_neither_redirect_nor_silence_the_witness() {
    let elsewhere = "https://attacker.example/witness";
    let set_entry = |world: &World| {
        world.audit().into_iter().find(|entry| entry["action"] == "set_audit_witness").unwrap()["seq"].as_i64().unwrap()
    };
    // Behind the latest checkpoint: the witness in force is the one it signed.
    for tampering in [
        format!(
            "UPDATE audit_entries SET detail = '{{\"witness\":\"{elsewhere}\"}}' WHERE action = 'set_audit_witness'"
        ),
        "UPDATE audit_entries SET action = 'remove_audit_witness' WHERE action = 'set_audit_witness'".to_string(),
        "DELETE FROM audit_entries WHERE action = 'set_audit_witness'".to_string(),
    ] {
        let world = World::new();
        set_webhook(&world, HOOK);
        world.team("Before the checkpoint");
        world.node.maintain().expect("a checkpoint");
        let seq = set_entry(&world);
        world.node.database.tamper(&tampering);
        world.team("Later");
        let next = world.node.maintain().expect("a checkpoint: the walk starts after the one that names the witness");
        assert_eq!(next.witness.as_deref(), Some(HOOK), "{tampering}");
        assert_eq!(posted_to(&world, HOOK).len(), 2, "{tampering}");
        assert!(posted_to(&world, elsewhere).is_empty(), "{tampering}");
        assert_eq!(world.verify()["first_bad_seq"], seq, "{tampering}: verification names it");
    }
    // After it: an entry a writer without the key makes does not verify, so
    // nothing is signed, nothing goes elsewhere, and administrators are told.
    let world = World::new();
    set_webhook(&world, HOOK);
    world.node.maintain().expect("a checkpoint");
    world.node.database.tamper(&format!(
        "INSERT INTO audit_entries (seq, at, actor_kind, action, outcome, detail, key_id, mac, mac_version, nonce) \
         SELECT MAX(seq) + 1, MAX(at), 'person', 'set_audit_witness', 'ok', '{{\"witness\":\"{elsewhere}\"}}', key_id, mac, 3, 'ff' \
         FROM audit_entries"
    ));
    assert_eq!(world.node.maintain(), None);
    assert!(posted_to(&world, elsewhere).is_empty());
    assert_eq!(posted_to(&world, HOOK).len(), 1);
    assert_eq!(world.verify()["fault"], "entry_mac");
    let feed = body(&world.admin("GET", "/api/me/notifications", None));
    assert!(
        feed["notifications"].as_array().unwrap().iter().any(|item| item["kind"] == "audit_chain_broken"),
        "{feed}"
    );
}

#[test]
fn what_the_witness_holds_proves_a_rollback_of_d1_and_r2_together() {
    // Whoever can change both D1 and R2 (but holds no key) rolls the chain and
    // both records of its checkpoints back together: the node cannot tell,
    // but the witness holds a later checkpoint, signed, that the node's history
    // no longer reaches.
    let world = World::new();
    set_webhook(&world, HOOK);
    world.node.maintain().expect("checkpoint 1");
    let kept_first = world.node.blobs.objects.borrow().get(checkpoints::LATEST_CHECKPOINT_KEY).cloned().unwrap();
    let first_seq: i64 = serde_json::from_slice::<Value>(&kept_first).unwrap()["seq"].as_i64().unwrap();
    world.team("To be hidden");
    let second = world.node.maintain().expect("checkpoint 2");
    world.node.database.tamper(&format!(
        "DELETE FROM audit_entries WHERE seq > {first_seq}; DELETE FROM audit_checkpoints WHERE number > 1"
    ));
    world.node.blobs.objects.borrow_mut().insert(checkpoints::LATEST_CHECKPOINT_KEY.into(), kept_first);
    world.node.blobs.objects.borrow_mut().remove(&checkpoints::checkpoint_key(second.seq));
    let verification = world.verify();
    assert_eq!(verification["intact"], true, "the node alone cannot see it: {verification}");
    assert_eq!(verification["checkpoint"]["number"], 1);

    let held = &posted_to(&world, HOOK)[1].1["checkpoint"];
    assert_eq!(held["number"], 2, "the witness holds checkpoint 2");
    let held: mailroom_contract::api::AuditCheckpoint = serde_json::from_value(held.clone()).unwrap();
    assert!(checkpoints::checkpoint_is_genuine(&world.node.config, &held), "signed by the node's key");
    assert!(held.number > verification["checkpoint"]["number"].as_i64(), "later than anything the node now shows");
    // And the next checkpoint the node writes reuses number 2 for another head:
    // two signed checkpoints under one number, which no honest node writes.
    world.team("After the rollback");
    world.team("And another");
    let reused = world.node.maintain().expect("a checkpoint");
    assert_eq!(reused.number, Some(2));
    assert_ne!((reused.seq, reused.hash.clone()), (held.seq, held.hash.clone()));
    assert_eq!(posted_to(&world, HOOK)[2].1["checkpoint"]["number"], 2);
}
