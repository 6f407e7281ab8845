//! eDiscovery exports: the selection fixed at the request, the copies built a
//! run of the schedule at a time and resumed, each hashed, the manifest's hash
//! in the audit chain, and only the requester (while still holding
//! ediscovery.export) able to read any of it.

use mailroom::core::crypto::sha256_hex;
use mailroom::schedule::Job;
use mailroom_contract::api::export_limits;
use mailroom_contract::{Authority, registry};
use serde_json::{Value, json};

use crate::desk::Desk;
use crate::support::*;

const SUPPORT: &str = "support@mailroom.test";
const BILLING: &str = "billing@mailroom.test";

fn message(subject: &str, id: &str, body: &str) -> Vec<u8> {
    format!(
        "From: Ana <ana@customer.example>\r\nTo: <{SUPPORT}>\r\nSubject: {subject}\r\nMessage-ID: <{id}@customer.example>\r\n\
         Date: Mon, 16 Nov 2026 09:00:00 +0000\r\n\r\n{body}\r\n"
    )
    .into_bytes()
}

fn deliver(world: &World, to: &str, subject: &str, id: &str, body: &str) -> String {
    match world.node.deliver("ana@customer.example", to, &message(subject, id, body)) {
        Ok(mailroom::mail::Delivery::Stored { receipt_id }) => receipt_id,
        other => panic!("{other:?}"),
    }
}

/// The support and billing mailboxes, and Rita, a reviewer holding
/// ediscovery.export.
fn desk() -> Desk {
    let world = World::at(utc("2026-11-20T16:00"));
    Desk::in_world(world, SUPPORT).and_mailbox(BILLING).with_on("rita@example.com", &["ediscovery.export"], "org")
}

/// Rita's exports, as these tests ask for and read them.
trait Exports {
    fn request(&self, token: &str, request: Value) -> mailroom::core::http::Response;
    fn requested(&self, request: Value) -> Value;
    fn get(&self, path: &str) -> mailroom::core::http::Response;
    fn export(&self, id: &str) -> Value;
    fn objects(&self, id: &str, limit: usize) -> Vec<Value>;
}

impl Exports for Desk {
    fn request(&self, token: &str, request: Value) -> mailroom::core::http::Response {
        self.world.call("POST", "/api/exports", Some(token), Some(request))
    }

    fn requested(&self, request: Value) -> Value {
        let answered = self.request(&self.person("rita").token, request);
        assert_eq!(answered.status, 201, "{} {:?}", text(&answered), self.world.node.platform.logs.borrow());
        body(&answered)
    }

    fn get(&self, path: &str) -> mailroom::core::http::Response {
        self.world.call("GET", path, Some(&self.person("rita").token), None)
    }

    fn export(&self, id: &str) -> Value {
        let shown = self.get(&format!("/api/exports/{id}"));
        assert_eq!(shown.status, 200, "{}", text(&shown));
        body(&shown)
    }

    /// Every object of an export, following the pages.
    fn objects(&self, id: &str, limit: usize) -> Vec<Value> {
        let mut cursor: Option<String> = None;
        let mut objects = Vec::new();
        loop {
            let mut path = format!("/api/exports/{id}/objects?limit={limit}");
            if let Some(cursor) = &cursor {
                path.push_str(&format!("&cursor={cursor}"));
            }
            let page = body(&self.get(&path));
            objects.extend(page["objects"].as_array().unwrap().iter().cloned());
            match page["next_cursor"].as_str() {
                Some(next) => cursor = Some(next.to_string()),
                None => return objects,
            }
        }
    }
}

#[test]
fn a_reviewer_exports_a_date_range_and_downloads_what_the_manifest_hashes() {
    let desk = desk();
    let (world, rita) = (&desk.world, desk.person("rita"));
    let early = deliver(world, SUPPORT, "Invoice 1", "a1", "Please pay the invoice.");
    let inside = deliver(world, SUPPORT, "Invoice 2", "a2", "The second invoice.");
    let other_words = deliver(world, SUPPORT, "Lunch", "a3", "Nothing about money.");
    let elsewhere = deliver(world, BILLING, "Invoice 3", "a4", "Billing's invoice.");
    let late = deliver(world, SUPPORT, "Invoice 4", "a5", "Too late.");
    // Received on different days: two before the range, two in it, one after.
    for (receipt, day) in [(&early, "2026-11-20T16:00"), (&late, "2026-11-23T08:00")] {
        world.node.mail_tamper(&format!("UPDATE receipts SET received_at = {} WHERE id = '{receipt}'", utc(day)));
    }
    for receipt in [&inside, &other_words, &elsewhere] {
        world.node.mail_tamper(&format!(
            "UPDATE receipts SET received_at = {} WHERE id = '{receipt}'",
            utc("2026-11-22T23:59")
        ));
    }
    let export = desk.requested(json!({
        "mailbox_ids": [desk.mailbox],
        "query": "invoice",
        "since": "2026-11-21",
        "until": "2026-11-22",
    }));
    let id = export["id"].as_str().unwrap().to_string();
    assert_eq!(export["state"], "building");
    assert_eq!(export["messages_total"], 1, "one message in support, in range, matching: {export}");
    assert_eq!(world.last_audit_entry()["action"], "request_export");

    world.node.run_every_minute();
    let ready = desk.export(&id);
    assert_eq!(ready["state"], "ready", "{ready}");
    assert_eq!(ready["messages_done"], 1);
    let manifest_sha256 = ready["manifest_sha256"].as_str().unwrap().to_string();
    // The requester's feed says so.
    let feed = body(&desk.get("/api/me/notifications"));
    assert_eq!(feed["notifications"][0]["kind"], "export_ready", "{feed}");
    assert_eq!(feed["notifications"][0]["object_id"], id.as_str());
    assert_eq!(feed["notifications"][0]["title"], "1 message");

    let objects = desk.objects(&id, 50);
    let ids: Vec<&str> = objects.iter().map(|object| object["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["manifest", inside.as_str()], "not {early}, {other_words}, {elsewhere} or {late}");

    let manifest = desk.get(&format!("/api/exports/{id}/objects/manifest"));
    assert_eq!(manifest.status, 200, "{}", text(&manifest));
    assert_eq!(manifest.header("content-type"), Some("application/json"));
    assert_eq!(sha256_hex(&manifest.body), manifest_sha256, "the manifest is what its hash says");
    let manifest: Value = serde_json::from_slice(&manifest.body).unwrap();
    assert_eq!(manifest["messages"][0]["receipt_id"], inside.as_str());

    let original = desk.get(&format!("/api/exports/{id}/objects/{inside}"));
    assert_eq!(original.status, 200, "{}", text(&original));
    assert_eq!(original.header("content-type"), Some("message/rfc822"));
    assert_eq!(original.body, message("Invoice 2", "a2", "The second invoice."), "byte for byte");
    assert_eq!(manifest["messages"][0]["sha256"], sha256_hex(&original.body));

    // The manifest's hash is in the chain, and each download is a content read.
    let audit = world.audit();
    let built = audit.iter().find(|entry| entry["action"] == "build_export").expect("the build is recorded");
    assert_eq!(built["detail"]["manifest_sha256"], manifest_sha256.as_str(), "{built}");
    let download = world.last_audit_entry();
    assert_eq!(download["action"], "get_export_object");
    assert_eq!(download["object"], format!("{id}/{inside}"));
    assert_eq!(download["actor"], rita.id.as_str());
    assert_eq!(world.verify()["intact"], true, "{}", world.verify());
}

#[test]
fn the_copying_resumes_run_after_run_and_a_message_deleted_before_it_is_copied_is_named_missing() {
    let desk = desk();
    let world = &desk.world;
    let count = export_limits::COPIED_PER_RUN + 3;
    let receipts: Vec<String> = (0..count)
        .map(|index| deliver(world, SUPPORT, &format!("Note {index}"), &format!("n{index}"), "Hi."))
        .collect();
    let id = desk.requested(json!({ "mailbox_ids": [desk.mailbox, desk.mailbox_at(BILLING)] }))["id"]
        .as_str()
        .unwrap()
        .to_string();

    // The object store is down for the first run: nothing is recorded, nothing lost.
    world.node.blobs.refusing_puts.set(true);
    let failures = world.node.run_every_minute_answering_failures();
    assert_eq!(
        failures.iter().map(|failure| failure.job()).collect::<Vec<_>>(),
        [Some(Job::BuildExports)],
        "{failures:?}"
    );
    assert_eq!(desk.export(&id)["messages_done"], 0);
    world.node.blobs.refusing_puts.set(false);

    world.node.run_every_minute();
    let halfway = desk.export(&id);
    assert_eq!(halfway["state"], "building");
    assert_eq!(halfway["messages_done"], export_limits::COPIED_PER_RUN as i64);
    let pending = receipts.last().unwrap();
    let not_yet = desk.get(&format!("/api/exports/{id}/objects/{pending}"));
    assert_refused(&not_yet, 404, "not_found");
    assert_refused(&desk.get(&format!("/api/exports/{id}/objects/manifest")), 404, "not_found");

    // Deleted after it was selected and before it was copied.
    let deleted = world.admin("DELETE", &format!("/api/mailboxes/{}/messages/{pending}", desk.mailbox), None);
    assert_eq!(deleted.status, 200, "{}", text(&deleted));

    world.node.run_every_minute();
    let ready = desk.export(&id);
    assert_eq!(ready["state"], "ready", "{ready}");
    assert_eq!(ready["messages_done"], count as i64);
    assert_eq!(ready["messages_missing"], 1);
    let objects = desk.objects(&id, 7);
    assert_eq!(objects.len(), count + 1, "the manifest and every message, across pages");
    let missing = objects.iter().find(|object| object["id"] == pending.as_str()).unwrap();
    assert_eq!(missing["available"], false);
    assert_refused(&desk.get(&format!("/api/exports/{id}/objects/{pending}")), 404, "not_found");
    let manifest: Value =
        serde_json::from_slice(&desk.get(&format!("/api/exports/{id}/objects/manifest")).body).unwrap();
    let listed = manifest["messages"].as_array().unwrap();
    assert_eq!(listed.len(), count);
    assert!(listed.iter().any(|entry| entry["receipt_id"] == pending.as_str() && entry["sha256"].is_null()));
}

#[test]
fn only_the_requester_reads_an_export_and_only_while_they_hold_ediscovery_export() {
    let desk = desk();
    let (world, rita) = (&desk.world, desk.person("rita"));
    let receipt = deliver(world, SUPPORT, "Hello", "h1", "Hi.");
    let id = desk.requested(json!({ "mailbox_ids": [desk.mailbox] }))["id"].as_str().unwrap().to_string();
    world.node.run_every_minute();

    // Another reviewer, holding the same relation, finds nothing on any route of it.
    let (victor, victor_token) = world.person("victor@example.com");
    world.grant_all(&victor, &["ediscovery.export"], "org");
    let mut walked = 0;
    for route in registry().routes() {
        if !matches!(route.authority, Authority::Requester(_)) {
            continue;
        }
        let path = route.path.replace(":exportId", &id).replace(":objectId", &receipt);
        let answered = world.call(route.method.as_str(), &path, Some(&victor_token), None);
        if route.path_parameters.is_empty() {
            assert_eq!(answered.status, 200, "{path}: {}", text(&answered));
            assert_eq!(body(&answered)["exports"], json!([]), "{path}: only their own");
        } else {
            assert_refused(&answered, 404, "not_found");
        }
        walked += 1;
    }
    assert!(walked >= 5, "{walked} requester routes walked");
    assert_eq!(desk.export(&id)["state"], "ready", "the delete above was refused");

    // The administrator is no exception.
    assert_refused(&world.admin("GET", &format!("/api/exports/{id}"), None), 403, "missing_relation");

    // Revoked, the requester reads nothing more, and is told so by GET /api/me.
    assert_eq!(body(&desk.get("/api/me"))["may_export"], true);
    let revoked = world.revoke(&rita.id, "ediscovery.export", "org");
    assert_eq!(revoked.status, 200, "{}", text(&revoked));
    assert_refused(&desk.get(&format!("/api/exports/{id}/objects/{receipt}")), 403, "missing_relation");
    assert_eq!(body(&desk.get("/api/me"))["may_export"], false);
}

#[test]
fn a_request_names_what_it_got_wrong() {
    let desk = desk();
    let rita = desk.person("rita");
    let support = desk.mailbox.clone();
    let cases = [
        (json!({ "mailbox_ids": [] }), "mailbox_ids"),
        (json!({ "mailbox_ids": ["inbox"] }), "mailbox_ids[0]"),
        (json!({ "mailbox_ids": [support, "mbx_01M8MECXYJD8V8NXZMYC8H1337"] }), "mailbox_ids[1]"),
        (json!({ "mailbox_ids": [support], "since": "17/11/2026" }), "since"),
        (json!({ "mailbox_ids": [support], "since": "2026-11-18", "until": "2026-11-17" }), "until"),
        (json!({ "mailbox_ids": [support], "query": "\"unclosed" }), "query"),
    ];
    for (request, field) in cases {
        let refused = desk.request(&rita.token, request.clone());
        assert_refused(&refused, 400, "invalid_body");
        assert!(text(&refused).contains(field), "{request}: {}", text(&refused));
    }
    // Without the relation, nobody requests one.
    let (_, nobody) = desk.world.person("nobody@example.com");
    assert_refused(&desk.request(&nobody, json!({ "mailbox_ids": [desk.mailbox] })), 403, "missing_relation");
    // A person has a few building at once, not many.
    for _ in 0..export_limits::BUILDING_PER_REQUESTER {
        desk.requested(json!({ "mailbox_ids": [desk.mailbox] }));
    }
    assert_refused(&desk.request(&rita.token, json!({ "mailbox_ids": [desk.mailbox] })), 409, "conflict");
}

#[test]
fn deleting_an_export_takes_its_copies_and_leaves_the_mail_and_the_chain() {
    let desk = desk();
    let (world, rita) = (&desk.world, desk.person("rita"));
    deliver(world, SUPPORT, "Hello", "d1", "Hi.");
    let id = desk.requested(json!({ "mailbox_ids": [desk.mailbox] }))["id"].as_str().unwrap().to_string();
    world.node.run_every_minute();
    let copies = || world.node.blobs.objects.borrow().keys().filter(|key| key.starts_with("exports/")).count();
    assert_eq!(copies(), 2, "the message and the manifest");

    let deleted = world.call("DELETE", &format!("/api/exports/{id}"), Some(&rita.token), None);
    assert_eq!(deleted.status, 200, "{}", text(&deleted));
    assert_refused(&desk.get(&format!("/api/exports/{id}")), 404, "not_found");
    world.node.maintain();
    assert_eq!(copies(), 0, "the upkeep deleted the copies");
    assert_eq!(world.node.mail_count("SELECT COUNT(*) FROM receipts"), 1, "the mail is untouched");
    assert!(world.audit().iter().any(|entry| entry["action"] == "build_export"), "the chain keeps the build");
    assert_eq!(world.verify()["intact"], true);
}

#[test]
fn one_run_finishes_several_small_exports_oldest_first() {
    let desk = desk();
    deliver(&desk.world, SUPPORT, "Hello", "s1", "Hi.");
    let ids: Vec<String> = (0..export_limits::BUILDING_PER_REQUESTER)
        .map(|_| desk.requested(json!({ "mailbox_ids": [desk.mailbox] }))["id"].as_str().unwrap().to_string())
        .collect();
    desk.world.node.run_every_minute();
    for id in &ids {
        assert_eq!(desk.export(id)["state"], "ready", "{id}");
    }
}

#[test]
fn an_export_selects_each_mailbox_s_mail_where_it_is_once_in_the_order_received() {
    let desk = desk();
    let world = &desk.world;
    let billing = world.node.database.peek(&format!("SELECT id FROM mailboxes WHERE address = '{BILLING}'")).unwrap();
    let mut delivered = vec![
        deliver(world, SUPPORT, "Invoice 1", "m1", "An invoice."),
        deliver(world, BILLING, "Invoice 2", "m2", "An invoice."),
        deliver(world, BILLING, "Lunch", "m3", "Nothing about money."),
    ];
    crate::moving_mail::moved(world, &billing);
    // Mail to billing from now on is in its own database; D1 keeps a copy of
    // what moved, which must not be selected twice.
    delivered.push(deliver(world, BILLING, "Invoice 3", "m4", "Another invoice."));
    delivered.push(deliver(world, SUPPORT, "Invoice 4", "m5", "A fourth invoice."));
    let export = desk.requested(json!({ "mailbox_ids": [desk.mailbox, billing], "query": "invoice" }));
    let id = export["id"].as_str().unwrap().to_string();
    assert_eq!(export["messages_total"], 4, "{export}");

    world.node.run_every_minute();
    assert_eq!(desk.export(&id)["state"], "ready");
    let manifest: Value =
        serde_json::from_slice(&desk.get(&format!("/api/exports/{id}/objects/manifest")).body).unwrap();
    let listed: Vec<&str> =
        manifest["messages"].as_array().unwrap().iter().map(|item| item["receipt_id"].as_str().unwrap()).collect();
    let invoices = [&delivered[0], &delivered[1], &delivered[3], &delivered[4]].map(String::as_str);
    assert_eq!(listed, invoices, "in the order received, each once, not the lunch");
    let copied = desk.get(&format!("/api/exports/{id}/objects/{}", delivered[3]));
    assert_eq!(copied.status, 200, "{}", text(&copied));
    assert_eq!(copied.body, message("Invoice 3", "m4", "Another invoice."), "delivered after the move, byte for byte");
}

#[test]
fn an_export_naming_as_many_mailboxes_as_it_may_asks_each_one_read() {
    let desk = desk();
    let world = &desk.world;
    let mut mailboxes = vec![desk.mailbox.clone()];
    for number in 1..export_limits::MAILBOXES {
        let mailbox = world.mailbox(&format!("box{number}@mailroom.test"));
        if number % 2 == 0 {
            crate::moving_mail::moved(world, &mailbox);
        }
        mailboxes.push(mailbox);
    }
    deliver(world, SUPPORT, "Invoice 1", "n1", "An invoice.");
    deliver(world, "box2@mailroom.test", "Invoice 2", "n2", "An invoice.");
    let answered = desk.request(&desk.person("rita").token, json!({ "mailbox_ids": mailboxes, "query": "invoice" }));
    assert_eq!(answered.status, 201, "{}", text(&answered));
    assert_eq!(body(&answered)["messages_total"], 2);
    assert!(answered.round_trips <= 2, "{}", answered.round_trips);
}
