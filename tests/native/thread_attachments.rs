//! The attachment mark of a mailbox's conversations: a conversation says it
//! carries files when a message received in it has attachments, or a message
//! sent from it was sealed with some; a draft's files do not count until then.
//! Held the same where the mailbox's mail is in D1 and in its own database.

use serde_json::{Value, json};

use crate::desk::{Desk, WORKS_THE_MAILBOX};
use crate::support::*;

const SUPPORT: &str = "support@mailroom.test";

/// Whether each listed conversation carries attachments, by subject, as `token` lists them.
fn marks(desk: &Desk, token: &str) -> Vec<(String, bool)> {
    let listed = desk.world.call("GET", &format!("/api/mailboxes/{}/threads", desk.mailbox), Some(token), None);
    assert_eq!(listed.status, 200, "{}", text(&listed));
    let mut marks: Vec<(String, bool)> = body(&listed)["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|thread| (thread["subject"].as_str().unwrap().to_string(), thread["has_attachments"].as_bool().unwrap()))
        .collect();
    marks.sort();
    marks
}

fn marked(subjects: &[(&str, bool)]) -> Vec<(String, bool)> {
    subjects.iter().map(|(subject, has)| (subject.to_string(), *has)).collect()
}

fn check(world: World) {
    let desk = Desk::in_world(world, SUPPORT)
        .with("ben@example.com", WORKS_THE_MAILBOX)
        .with_admin(&["approval.decide", "mailbox.metadata.read"]);
    let (world, ben) = (&desk.world, desk.person("ben"));
    world.deliver("multipart-attachment", SUPPORT);
    let question = world.deliver("plain", SUPPORT);
    let expected = marked(&[("Signed contract attached", true), ("Where is my invoice?", false)]);
    assert_eq!(marks(&desk, &ben.token), expected);

    // A reply drafted with a file, then submitted: still the writer's, not the conversation's.
    let draft = body(&world.call(
        "POST",
        &desk.sends(),
        Some(&ben.token),
        Some(json!({ "reply_to": question, "text": "The invoice is attached." })),
    ));
    let send = format!("{}/{}", desk.sends(), draft["id"].as_str().unwrap());
    let file = json!({ "name": "invoice.txt", "content_type": "text/plain", "content_base64": "NDQ3MQ==" });
    let attached = world.call("POST", &format!("{send}/attachments"), Some(&ben.token), Some(file));
    assert_eq!(attached.status, 201, "{}", text(&attached));
    let submitted = world.call("POST", &format!("{send}/submit"), Some(&ben.token), None);
    assert_eq!(submitted.status, 200, "{}", text(&submitted));
    assert_eq!(marks(&desk, &ben.token), expected, "a submission's files are not yet the conversation's");

    // Approved and sealed, its file is the conversation's, for whoever lists it.
    let approved = world.admin("POST", &format!("{send}/approve"), Some(world.decision(&world.admin_token, &send)));
    let approved: Value = body(&approved);
    assert_eq!(approved["state"], "dispatched", "{approved}");
    let listed = marks(&desk, &ben.token);
    assert_eq!(listed, marked(&[("Signed contract attached", true), ("Where is my invoice?", true)]));
    assert_eq!(marks(&desk, &world.admin_token), listed, "the same for every reader");
}

#[test]
fn a_conversation_with_files_is_marked_where_the_mail_is_in_its_own_database() {
    check(World::new());
}

#[test]
fn a_conversation_with_files_is_marked_where_the_mail_is_in_d1() {
    check(World::with_mail_in_d1());
}
