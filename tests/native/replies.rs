//! Saved replies and signatures: kept per mailbox for those who draft from
//! it, and per person for themselves; texts checked for placeholders the node
//! does not fill, naming the field; names unique per mailbox whatever their
//! case; held to their limits; every change in the audit chain; read by an
//! agent drafting (mail.draft) and never written by one.

use mailroom_contract::api::reply_limits::{BODY_CHARACTERS, NAME_CHARACTERS, PER_MAILBOX, SIGNATURE_CHARACTERS};
use serde_json::{Value, json};

use crate::agents::grants;
use crate::support::*;

/// A mailbox with ben drafting from it: (world, ben's id, ben's token, mailbox id).
fn desk() -> (World, String, String, String) {
    let world = World::new();
    let (ben, ben_token) = world.person("ben@example.com");
    let mailbox = world.mailbox("support@mailroom.test");
    world.grant_all(&ben, &["mailbox.metadata.read", "send.propose"], &mailbox);
    (world, ben, ben_token, mailbox)
}

fn replies_of(mailbox: &str) -> String {
    format!("/api/mailboxes/{mailbox}/saved-replies")
}

fn save(world: &World, token: &str, mailbox: &str, name: &str, reply: &str) -> mailroom::core::http::Response {
    world.call("POST", &replies_of(mailbox), Some(token), Some(json!({ "name": name, "body": reply })))
}

fn names(world: &World, token: &str, mailbox: &str) -> Vec<String> {
    let listed = world.call("GET", &replies_of(mailbox), Some(token), None);
    assert_eq!(listed.status, 200, "{}", text(&listed));
    let listed = body(&listed);
    assert_eq!(listed["limit"], PER_MAILBOX);
    assert!(listed["placeholders"].as_array().unwrap().iter().any(|p| p["written"] == "{{customer.name}}"));
    listed["saved_replies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|reply| reply["name"].as_str().unwrap().to_string())
        .collect()
}

fn message_of(refused: &mailroom::core::http::Response) -> String {
    body(refused)["error"]["message"].as_str().unwrap().to_string()
}

#[test]
fn a_drafter_saves_changes_and_deletes_a_mailbox_s_replies_each_recorded() {
    let (world, ben, ben_token, mailbox) = desk();
    assert_eq!(names(&world, &ben_token, &mailbox), Vec::<String>::new());

    let saved = save(&world, &ben_token, &mailbox, "  Refund issued ", "Hi {{customer.first_name}},\n\nDone.\n\n");
    assert_eq!(saved.status, 201, "{}", text(&saved));
    let saved: Value = body(&saved);
    let id = saved["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("svr_"), "{id}");
    assert_eq!(
        (saved["name"].as_str(), saved["body"].as_str()),
        (Some("Refund issued"), Some("Hi {{customer.first_name}},\n\nDone."))
    );
    assert_eq!(saved["updated_by"], ben.as_str());
    let entry = world.last_audit_entry();
    assert_eq!((entry["action"].as_str(), entry["outcome"].as_str()), (Some("create_saved_reply"), Some("ok")));
    assert_eq!(entry["object"], id.as_str());

    save(&world, &ben_token, &mailbox, "Address change", "Thanks, {{ customer.name }}.");
    assert_eq!(names(&world, &ben_token, &mailbox), ["Address change", "Refund issued"]);

    let path = format!("{}/{id}", replies_of(&mailbox));
    let changed = world.call("PATCH", &path, Some(&ben_token), Some(json!({ "name": "Refunded" })));
    assert_eq!(changed.status, 200, "{}", text(&changed));
    assert_eq!(body(&changed)["body"], "Hi {{customer.first_name}},\n\nDone.", "what was not given is kept");
    assert_eq!(world.last_audit_entry()["action"], "update_saved_reply");

    let deleted = world.call("DELETE", &path, Some(&ben_token), None);
    assert_eq!(deleted.status, 200, "{}", text(&deleted));
    assert_eq!(body(&deleted)["id"], id.as_str());
    assert_eq!(world.last_audit_entry()["action"], "delete_saved_reply");
    assert_eq!(names(&world, &ben_token, &mailbox), ["Address change"]);
    assert_refused(&world.call("DELETE", &path, Some(&ben_token), None), 404, "not_found");
    assert_refused(&world.call("PATCH", &path, Some(&ben_token), Some(json!({ "body": "x" }))), 404, "not_found");
}

#[test]
fn a_placeholder_the_node_does_not_fill_is_refused_naming_the_field_and_the_placeholder() {
    let (world, _, ben_token, mailbox) = desk();
    let refused = save(&world, &ben_token, &mailbox, "Call us", "Hi {{customer.name}}, we rang {{customer.phone}}.");
    assert_refused(&refused, 400, "unknown_placeholder");
    let message = message_of(&refused);
    assert!(message.contains("`body`") && message.contains("{{customer.phone}}"), "{message}");
    assert!(body(&refused)["error"]["reason"].as_str().unwrap().contains("{{mailbox.address}}"));
    assert_eq!(world.last_audit_entry()["outcome"], "refused");

    let unclosed = save(&world, &ben_token, &mailbox, "Call us", "Hi {{customer.name");
    assert_refused(&unclosed, 400, "unknown_placeholder");
    assert!(message_of(&unclosed).contains("`body`"));

    let saved = save(&world, &ben_token, &mailbox, "Fine", "Hello {{customer.name}}");
    let path = format!("{}/{}", replies_of(&mailbox), body(&saved)["id"].as_str().unwrap());
    let changed = world.call("PATCH", &path, Some(&ben_token), Some(json!({ "body": "{{me.title}}" })));
    assert_refused(&changed, 400, "unknown_placeholder");
    assert_eq!(names(&world, &ben_token, &mailbox), ["Fine"]);

    let signature = world.call("PUT", "/api/me/signature", Some(&ben_token), Some(json!({ "text": "{{me.phone}}" })));
    assert_refused(&signature, 400, "unknown_placeholder");
    assert!(message_of(&signature).contains("`text`"));
}

#[test]
fn names_and_texts_are_held_to_their_limits_naming_the_field() {
    let (world, _, ben_token, mailbox) = desk();
    for (name, reply, field) in [
        ("", "Hello", "name"),
        ("   ", "Hello", "name"),
        (&"n".repeat(NAME_CHARACTERS + 1) as &str, "Hello", "name"),
        ("Hello", "", "body"),
        ("Hello", " \n ", "body"),
        ("Hello", &"b".repeat(BODY_CHARACTERS + 1), "body"),
    ] {
        let refused = save(&world, &ben_token, &mailbox, name, reply);
        assert_refused(&refused, 400, "invalid_body");
        assert!(message_of(&refused).contains(&format!("`{field}`")), "{field}: {}", text(&refused));
    }
    assert_eq!(
        save(&world, &ben_token, &mailbox, &"n".repeat(NAME_CHARACTERS), &"b".repeat(BODY_CHARACTERS)).status,
        201
    );
    let long = "s".repeat(SIGNATURE_CHARACTERS + 1);
    let refused = world.call("PUT", "/api/me/signature", Some(&ben_token), Some(json!({ "text": long })));
    assert_refused(&refused, 400, "invalid_body");
    assert!(message_of(&refused).contains("`text`"));
}

#[test]
fn a_name_is_unique_in_its_mailbox_whatever_its_case_and_a_mailbox_keeps_a_limited_number() {
    let (world, ben, ben_token, mailbox) = desk();
    assert_eq!(save(&world, &ben_token, &mailbox, "Refund", "a").status, 201);
    let taken = save(&world, &ben_token, &mailbox, "REFUND", "b");
    assert_refused(&taken, 409, "saved_reply_name_taken");
    assert!(message_of(&taken).contains("`name`"));
    let other = save(&world, &ben_token, &mailbox, "Other", "c");
    let path = format!("{}/{}", replies_of(&mailbox), body(&other)["id"].as_str().unwrap());
    let renamed = world.call("PATCH", &path, Some(&ben_token), Some(json!({ "name": "refund" })));
    assert_refused(&renamed, 409, "saved_reply_name_taken");
    // Renaming a reply to its own name in another case is no clash with itself.
    let recased = world.call("PATCH", &path, Some(&ben_token), Some(json!({ "name": "OTHER" })));
    assert_eq!(recased.status, 200, "{}", text(&recased));

    // Another mailbox may use the same name.
    let sales = world.mailbox("sales@mailroom.test");
    world.grant_all(&ben, &["send.propose"], &sales);
    assert_eq!(save(&world, &ben_token, &sales, "Refund", "d").status, 201);

    for index in 2..PER_MAILBOX {
        assert_eq!(save(&world, &ben_token, &mailbox, &format!("Reply {index}"), "e").status, 201);
    }
    let full = save(&world, &ben_token, &mailbox, "One too many", "f");
    assert_refused(&full, 409, "too_many_saved_replies");
    assert_eq!(world.last_audit_entry()["outcome"], "refused");
    assert_eq!(names(&world, &ben_token, &mailbox).len(), PER_MAILBOX);
}

#[test]
fn only_those_who_draft_from_the_mailbox_see_or_keep_its_replies_and_signature() {
    let (world, _, ben_token, mailbox) = desk();
    save(&world, &ben_token, &mailbox, "Refund", "a");
    let signature = format!("/api/mailboxes/{mailbox}/signature");
    world.call("PUT", &signature, Some(&ben_token), Some(json!({ "text": "Support, {{mailbox.name}}" })));

    // Cleo holds nothing on the mailbox: it answers as if it did not exist.
    let (cleo, cleo_token) = world.person("cleo@example.com");
    for (method, path, payload) in [
        ("GET", replies_of(&mailbox), None),
        ("POST", replies_of(&mailbox), Some(json!({ "name": "Mine", "body": "x" }))),
        ("GET", signature.clone(), None),
        ("PUT", signature.clone(), Some(json!({ "text": "x" }))),
        ("DELETE", signature.clone(), None),
    ] {
        assert_eq!(world.call(method, &path, Some(&cleo_token), payload).status, 404, "{method} {path}");
    }
    // Reading the mailbox's mail is not drafting from it.
    world.grant_all(&cleo, &["mailbox.metadata.read", "mailbox.content.read"], &mailbox);
    assert_eq!(world.call("GET", &replies_of(&mailbox), Some(&cleo_token), None).status, 403);
    assert_eq!(world.call("PUT", &signature, Some(&cleo_token), Some(json!({ "text": "x" }))).status, 403);

    let kept = world.call("GET", &signature, Some(&ben_token), None);
    assert_eq!(body(&kept)["text"], "Support, {{mailbox.name}}");
    let removed = world.call("DELETE", &signature, Some(&ben_token), None);
    assert_eq!((removed.status, body(&removed)["text"].as_str()), (200, Some("")));
    let entry = world.last_audit_entry();
    assert_eq!(
        (entry["action"].as_str(), entry["object"].as_str()),
        (Some("remove_mailbox_signature"), Some(mailbox.as_str()))
    );
    assert_eq!(body(&world.call("GET", &signature, Some(&ben_token), None))["updated_at"], Value::Null);
}

#[test]
fn a_person_s_signature_is_theirs_alone() {
    let (world, ben, ben_token, _) = desk();
    let (_, cleo_token) = world.person("cleo@example.com");
    let set = world.call("PUT", "/api/me/signature", Some(&ben_token), Some(json!({ "text": "Ben\n{{me.email}}\n" })));
    assert_eq!(set.status, 200, "{}", text(&set));
    assert_eq!(
        (body(&set)["text"].as_str(), body(&set)["owner"].as_str()),
        (Some("Ben\n{{me.email}}"), Some(ben.as_str()))
    );
    let entry = world.last_audit_entry();
    assert_eq!((entry["action"].as_str(), entry["object"].as_str()), (Some("set_my_signature"), Some(ben.as_str())));

    assert_eq!(body(&world.call("GET", "/api/me/signature", Some(&cleo_token), None))["text"], "");
    world.call("DELETE", "/api/me/signature", Some(&cleo_token), None);
    assert_eq!(body(&world.call("GET", "/api/me/signature", Some(&ben_token), None))["text"], "Ben\n{{me.email}}");
    world.call("DELETE", "/api/me/signature", Some(&ben_token), None);
    assert_eq!(world.last_audit_entry()["action"], "remove_my_signature");
    assert_eq!(body(&world.call("GET", "/api/me/signature", Some(&ben_token), None))["text"], "");
}

#[test]
fn an_agent_drafting_reads_the_replies_and_signature_and_writes_neither() {
    let (world, ben, ben_token, mailbox) = desk();
    save(&world, &ben_token, &mailbox, "Refund", "Hi {{customer.name}}");
    let signature = format!("/api/mailboxes/{mailbox}/signature");
    world.call("PUT", &signature, Some(&ben_token), Some(json!({ "text": "Support" })));

    let (_, drafter) = world.mint(&ben, &["mail.draft"], grants(&mailbox, &["mailbox.metadata.read", "send.propose"]));
    let listed = world.call("GET", &replies_of(&mailbox), Some(&drafter), None);
    assert_eq!(listed.status, 200, "{}", text(&listed));
    assert_eq!(body(&listed)["saved_replies"][0]["body"], "Hi {{customer.name}}");
    assert_eq!(body(&world.call("GET", &signature, Some(&drafter), None))["text"], "Support");
    for (method, path, payload) in [
        ("POST", replies_of(&mailbox), Some(json!({ "name": "Mine", "body": "x" }))),
        ("PUT", signature.clone(), Some(json!({ "text": "x" }))),
        ("GET", "/api/me/signature".to_string(), None),
        ("PUT", "/api/me/signature".to_string(), Some(json!({ "text": "x" }))),
    ] {
        assert_eq!(world.call(method, &path, Some(&drafter), payload).status, 403, "{method} {path}");
    }

    // Without mail.draft, the same agent's grant reads neither.
    let (_, triager) = world.mint(&ben, &["mail.triage"], grants(&mailbox, &["mailbox.metadata.read"]));
    assert_eq!(world.call("GET", &replies_of(&mailbox), Some(&triager), None).status, 403);
    assert_eq!(world.call("GET", &signature, Some(&triager), None).status, 403);
    assert_eq!(names(&world, &ben_token, &mailbox), ["Refund"]);
}
