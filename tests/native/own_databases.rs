//! A node set to keep each new mailbox's mail in the mailbox's own database
//! from the start (`NEW_MAILBOXES_IN_OWN_DATABASES`, decision 0040): the
//! mailbox is created with nothing to move, answers empty before its first
//! message (its database is made by the first write, never by a read), and
//! then serves the whole life of its mail there (delivery, reading, search,
//! a reply under dual control, deletion, an export), with nothing of it in
//! D1 but the directory, its entries in its own segment, walked intact; a
//! revoked relation stops the next call.

use serde_json::{Value, json};

use crate::desk::{Desk, EVERY_MAILBOX_RELATION};
use crate::support::*;

const SUPPORT: &str = "support@mailroom.test";

fn ok(response: mailroom::core::http::Response) -> Value {
    assert_eq!(response.status / 100, 2, "{}", text(&response));
    body(&response)
}

#[test]
fn a_mailbox_kept_in_its_own_database_from_the_start_serves_the_whole_life_of_its_mail() {
    let mut world = World::new();
    world.node.config.new_mailboxes_in_own_databases = true;
    let desk = Desk::in_world(world, SUPPORT)
        .with("ben@example.com", EVERY_MAILBOX_RELATION)
        .with("cleo@example.com", EVERY_MAILBOX_RELATION);
    let (world, support, ben, cleo) = (&desk.world, desk.mailbox.clone(), desk.person("ben"), desk.person("cleo"));
    let moved = world
        .node
        .database
        .count(&format!("SELECT count(*) FROM mailboxes WHERE id = '{support}' AND mail_moved_at IS NOT NULL"));
    assert_eq!(moved, 1, "created with its mail in its own database");
    let created = world.audit().into_iter().find(|entry| entry["action"] == "create_mailbox").unwrap();
    assert_eq!(created["detail"]["mail"], "own_database", "{created}");

    // Before any mail: empty answers, and no database made by reading.
    let messages = format!("/api/mailboxes/{support}/messages");
    assert_eq!(ok(world.call("GET", &messages, Some(&ben.token), None))["messages"], json!([]));
    assert_eq!(
        ok(world.call("GET", &format!("/api/mailboxes/{support}/threads"), Some(&ben.token), None))["threads"],
        json!([])
    );
    assert_eq!(
        ok(world.call("GET", &format!("/api/search?q=anything&mailbox={support}"), Some(&ben.token), None))["results"],
        json!([])
    );
    assert!(world.node.mailboxes.database(&support).is_none(), "a read makes no database");

    // Its first message makes it, and nothing of the mail is in D1.
    let receipt = world.deliver("plain", SUPPORT);
    let object = world.node.mailboxes.database(&support).expect("the delivery made its database");
    assert_eq!(object.database.count("SELECT count(*) FROM receipts"), 1);
    assert_eq!(world.node.database.count("SELECT count(*) FROM receipts"), 0);
    let listed = ok(world.call("GET", &messages, Some(&ben.token), None));
    assert_eq!(listed["messages"][0]["id"], receipt.as_str());
    let text = ok(world.call("GET", &format!("{messages}/{receipt}/body"), Some(&ben.token), None));
    let word = text["text"]
        .as_str()
        .unwrap()
        .split_whitespace()
        .find(|word| word.len() > 5 && word.chars().all(char::is_alphabetic))
        .unwrap()
        .to_string();
    let found = ok(world.call("GET", &format!("/api/search?q={word}"), Some(&ben.token), None));
    assert_eq!(found["results"][0]["id"], receipt.as_str(), "found across mailboxes by {word:?}");

    // A reply, submitted by Ben and approved by Cleo, sent from there.
    let sends = format!("/api/mailboxes/{support}/sends");
    let draft = ok(world.call(
        "POST",
        &sends,
        Some(&ben.token),
        Some(json!({ "reply_to": receipt, "text": "Thanks, received." })),
    ));
    let path = format!("{sends}/{}", draft["id"].as_str().unwrap());
    ok(world.call("POST", &format!("{path}/submit"), Some(&ben.token), None));
    let approved =
        ok(world.call("POST", &format!("{path}/approve"), Some(&cleo.token), Some(world.decision(&cleo.token, &path))));
    assert_eq!(approved["state"], "dispatched", "{approved}");
    assert_eq!(world.node.mailer.sent.borrow().len(), 1);
    assert_eq!(world.node.database.count("SELECT count(*) FROM sends"), 0);
    assert_eq!(object.database.count("SELECT count(*) FROM sends"), 1);

    // An export of it, then its deletion.
    world.grant(&world.admin_id, "ediscovery.export", "org");
    let export = ok(world.admin("POST", "/api/exports", Some(json!({ "mailbox_ids": [support] }))));
    assert_eq!(export["messages_total"], 1, "{export}");
    let deleted = ok(world.admin("DELETE", &format!("{messages}/{receipt}"), None));
    assert_eq!(deleted["original"], "deleted", "{deleted}");
    assert_eq!(object.database.count("SELECT count(*) FROM receipts"), 0);

    // Revoked, Ben's next call is refused; the segment walks intact.
    world.revoke(&ben.id, "mailbox.metadata.read", &support);
    assert_refused(&world.call("GET", &messages, Some(&ben.token), None), 403, "missing_relation");
    world.node.seal_segment(&support);
    let walked = ok(world.admin("GET", &format!("/api/audit/verify?mailbox_id={support}"), None));
    assert_eq!(walked["intact"], true, "{walked}");
}
