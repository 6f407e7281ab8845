//! Deleting a received message (decision 0017): an administrator's, governed and
//! audited; nothing of the message remains, not its search entries nor its
//! original bytes, and nothing that referred to it breaks.

use std::cell::RefCell;

use mailroom::core::http::Surface;
use mailroom::core::storage::Statement;
use mailroom::dispatch::dispatch;
use mailroom::testing::{RequestExt, TestNode, request};
use serde_json::{Value, json};

use crate::desk::{Desk, EVERY_MAILBOX_RELATION};
use crate::support::*;

const SUPPORT: &str = "support@mailroom.test";
const BILLING: &str = "billing@mailroom.test";

/// A mailbox, a message received by it, and Ben, who reads, drafts and decides
/// there.
/// Support's desk, its mail in D1: these tests race deletions against D1's
/// own writes, and move mailboxes out of D1 (`own_databases.rs` and the
/// tests of moved mailboxes delete mail in a mailbox's own database).
fn desk() -> Desk {
    Desk::in_world(World::with_mail_in_d1(), SUPPORT).receiving("plain").with("ben@example.com", EVERY_MAILBOX_RELATION)
}

fn delete(world: &World, mailbox: &str, receipt: &str) -> mailroom::core::http::Response {
    world.admin("DELETE", &format!("/api/mailboxes/{mailbox}/messages/{receipt}"), None)
}

/// How many raw messages the object store holds (it keeps the audit chain's
/// checkpoints too).
fn originals(node: &TestNode) -> usize {
    node.blobs.objects.borrow().keys().filter(|key| key.starts_with("raw/")).count()
}

fn search(world: &World, token: &str, q: &str) -> Vec<String> {
    let found = world.call("GET", &format!("/api/search?q={q}"), Some(token), None);
    assert_eq!(found.status, 200, "{}", text(&found));
    body(&found)["results"].as_array().unwrap().iter().map(|hit| hit["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn an_administrator_deletes_a_received_message_and_nothing_of_it_remains() {
    let desk = desk();
    let (world, mailbox, receipt, ben) = (&desk.world, &desk.mailbox, desk.receipt(), &desk.person("ben").token);
    let message = format!("/api/mailboxes/{mailbox}/messages/{receipt}");
    let sends = format!("/api/mailboxes/{mailbox}/sends");
    // "invoice" is in the subject (the headers index), "4471" only in the text.
    assert_eq!(search(world, ben, "invoice"), [receipt]);
    assert_eq!(search(world, ben, "4471"), [receipt]);
    // A reply sealed and sent, and a reply still a draft, both answer it.
    let reply = |subject: &str| {
        let created = world.call(
            "POST",
            &sends,
            Some(ben),
            Some(json!({ "to": ["ana@customer.example"], "subject": subject, "text": "Hello.", "reply_to": receipt })),
        );
        body(&created)["id"].as_str().unwrap().to_string()
    };
    let sent = reply("Re: sent");
    world.call("POST", &format!("{sends}/{sent}/submit"), Some(ben), None);
    world.grant_all(&world.admin_id, &["approval.decide"], mailbox);
    let decision = world.decision(&world.admin_token, &format!("{sends}/{sent}"));
    let approved = world.admin("POST", &format!("{sends}/{sent}/approve"), Some(decision));
    assert_eq!(body(&approved)["state"], "dispatched", "{}", text(&approved));
    let drafted = reply("Re: draft");
    assert_eq!(originals(&world.node), 1);

    let deleted = delete(world, mailbox, receipt);
    assert_eq!(deleted.status, 200, "{}", text(&deleted));
    assert_eq!(body(&deleted), json!({ "id": receipt, "mailbox_id": mailbox, "original": "deleted" }));

    for suffix in ["", "/body", "/original"] {
        assert_refused(&world.call("GET", &format!("{message}{suffix}"), Some(ben), None), 404, "not_found");
    }
    let listed = body(&world.call("GET", &format!("/api/mailboxes/{mailbox}/messages"), Some(ben), None));
    assert_eq!(listed["messages"], json!([]));
    assert!(search(world, ben, "invoice").is_empty(), "the headers index forgot it");
    assert!(search(world, ben, "4471").is_empty(), "the bodies index forgot it");
    assert_eq!(originals(&world.node), 0, "the original bytes are gone from the object store");
    for index in ["receipt_headers_index", "receipt_bodies_index"] {
        world.node.database.execute_sql(&format!("INSERT INTO {index} ({index}) VALUES ('integrity-check');"));
    }
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM originals_to_delete"), 0);

    // The sends that answered it keep their threading headers and lose the link.
    for send in [&sent, &drafted] {
        let shown = body(&world.call("GET", &format!("{sends}/{send}"), Some(ben), None));
        assert!(shown.get("reply_to").is_none(), "{shown}");
        assert_eq!(shown["in_reply_to"], "invoice-question-1@customer.example");
    }
    let sealed = body(&world.call("GET", &format!("{sends}/{sent}"), Some(ben), None));
    assert_eq!(sealed["manifest_intact"], true, "what was sealed is unchanged");

    let audit = world.audit();
    let entry = audit.iter().find(|entry| entry["action"] == "delete_message").expect("the deletion is recorded");
    assert_eq!(entry["object"], receipt);
    assert_eq!(entry["actor"], world.admin_id.as_str());
    assert_eq!(entry["outcome"], "ok");
    assert_eq!(world.verify()["intact"], true);
    // Deleting it again: nothing by that id.
    assert_refused(&delete(world, mailbox, receipt), 404, "not_found");
}

#[test]
fn only_an_administrator_deletes_and_no_agent_is_ever_given_it() {
    let desk = desk();
    let (world, mailbox, receipt, ben) = (&desk.world, &desk.mailbox, desk.receipt(), &desk.person("ben").token);
    let path = format!("/api/mailboxes/{mailbox}/messages/{receipt}");
    let refused = world.call("DELETE", &path, Some(ben), None);
    assert_eq!(refused.status, 403, "every mailbox relation is not administration: {}", text(&refused));
    let ben_id = body(&world.call("GET", "/api/me", Some(ben), None))["id"].as_str().unwrap().to_string();
    let (_, credential) =
        world.mint(&ben_id, &["mail.triage"], json!([{ "mailbox": mailbox, "relations": ["mailbox.metadata.read"] }]));
    let refused = world.call("DELETE", &path, Some(&credential), None);
    assert_eq!(refused.status, 403, "{}", text(&refused));
    assert_eq!(world.node.mail_count("SELECT COUNT(*) FROM receipts"), 1);
    let registry = mailroom_contract::registry();
    let why = registry.withheld_from_agents_because(mailroom_contract::RouteId::DeleteMessage).unwrap_or_default();
    assert!(why.contains("cannot be undone"), "{why}");
    assert!(!registry.is_grantable(mailroom_contract::RouteId::DeleteMessage));
}

/// Gives `receipts` one original under a key shared across mailboxes, as
/// deliveries stored them before keys named their mailbox: the bytes moved
/// under `raw/<sha256>` and every receipt pointed there.
fn shared_as_stored_before(node: &TestNode, receipts: &[&str]) -> String {
    let mut objects = node.blobs.objects.borrow_mut();
    let mut shared = None;
    for receipt in receipts {
        let key = node.mail_rows(&format!("SELECT raw_key FROM receipts WHERE id = '{receipt}'"))[0][0].clone();
        let bytes = objects.remove(&key).expect("its original is stored");
        let legacy = format!("raw/{}", mailroom::core::crypto::sha256_hex(&bytes));
        objects.insert(legacy.clone(), bytes);
        node.mail_tamper(&format!("UPDATE receipts SET raw_key = '{legacy}' WHERE id = '{receipt}'"));
        shared = Some(legacy);
    }
    shared.expect("at least one receipt")
}

#[test]
fn the_same_message_in_two_mailboxes_has_an_original_in_each_deleted_with_its_own_copy() {
    let desk = desk();
    let (world, support, first, ben) = (&desk.world, &desk.mailbox, desk.receipt(), &desk.person("ben").token);
    let billing = world.mailbox(BILLING);
    let second = world.deliver("plain", BILLING);
    world.grant_all(&world.admin_id, &["mailbox.content.read", "message.export"], &billing);
    assert_eq!(originals(&world.node), 2, "one message, stored once for each mailbox");

    let deleted = body(&delete(world, support, first));
    assert_eq!(deleted["original"], "deleted", "this mailbox's own copy of the bytes");
    assert_eq!(originals(&world.node), 1);
    let other = world.admin("GET", &format!("/api/mailboxes/{billing}/messages/{second}/original"), None);
    assert_eq!(other.status, 200, "the other mailbox still has its original");
    assert_eq!(other.body, fixture("plain"));
    assert_refused(
        &world.call("GET", &format!("/api/mailboxes/{support}/messages/{first}"), Some(ben), None),
        404,
        "not_found",
    );
    let deleted = body(&delete(world, &billing, &second));
    assert_eq!(deleted["original"], "deleted");
    assert_eq!(originals(&world.node), 0);
}

#[test]
fn an_original_shared_across_mailboxes_as_stored_before_is_kept_until_the_last_copy_goes() {
    let desk = desk();
    let (world, support, first) = (&desk.world, &desk.mailbox, desk.receipt());
    let billing = world.mailbox(BILLING);
    let second = world.deliver("plain", BILLING);
    world.grant_all(&world.admin_id, &["mailbox.content.read", "message.export"], &billing);
    shared_as_stored_before(&world.node, &[first, &second]);
    assert_eq!(originals(&world.node), 1, "one message, stored once");

    let deleted = body(&delete(world, support, first));
    assert_eq!(deleted["original"], "kept_for_other_copies");
    assert_eq!(originals(&world.node), 1);
    let other = world.admin("GET", &format!("/api/mailboxes/{billing}/messages/{second}/original"), None);
    assert_eq!(other.status, 200, "the other copy still has its original");
    assert_eq!(other.body, fixture("plain"));

    let deleted = body(&delete(world, &billing, &second));
    assert_eq!(deleted["original"], "deleted");
    assert_eq!(originals(&world.node), 0, "the last copy takes the original with it");
}

#[test]
fn an_original_the_object_store_failed_to_delete_is_deleted_by_the_upkeep() {
    let desk = desk();
    let (world, mailbox, receipt) = (&desk.world, &desk.mailbox, desk.receipt());
    world.node.blobs.unavailable.set(true);
    let deleted = delete(world, mailbox, receipt);
    assert_eq!(deleted.status, 200, "{}", text(&deleted));
    assert_eq!(body(&deleted)["original"], "deleted_later");
    assert_eq!(world.node.mail_count("SELECT COUNT(*) FROM receipts"), 0, "the receipt is gone regardless");
    assert_eq!(originals(&world.node), 1);
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM originals_to_delete"), 1, "and its bytes owed");

    world.node.maintain();
    assert_eq!(originals(&world.node), 1, "still unavailable: still owed");
    world.node.blobs.unavailable.set(false);
    world.node.maintain();
    assert_eq!(originals(&world.node), 0);
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM originals_to_delete"), 0);
}

#[test]
fn an_original_owed_deletion_that_arrives_again_is_kept() {
    let desk = desk();
    let (world, mailbox, receipt) = (&desk.world, &desk.mailbox, desk.receipt());
    world.node.blobs.unavailable.set(true);
    assert_eq!(body(&delete(world, mailbox, receipt))["original"], "deleted_later");
    world.node.blobs.unavailable.set(false);
    // The same message, delivered anew before the upkeep ran, refers to the bytes again.
    let again = world.deliver("plain", SUPPORT);
    world.node.maintain();
    assert_eq!(originals(&world.node), 1);
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM originals_to_delete"), 0);
    assert_eq!(world.node.mail_count("SELECT COUNT(*) FROM receipts"), 1, "{again}");
    let stored = world
        .node
        .blobs
        .objects
        .borrow()
        .iter()
        .find(|(key, _)| key.starts_with("raw/"))
        .map(|(_, bytes)| bytes.clone());
    assert_eq!(stored, Some(fixture("plain")));
}

/// The ids on each page of `path`, `limit` at a time, following `next_cursor`.
fn pages(world: &World, token: &str, path: &str, key: &str, limit: usize) -> Vec<Vec<String>> {
    let separator = if path.contains('?') { '&' } else { '?' };
    let mut cursor: Option<String> = None;
    let mut pages = Vec::new();
    loop {
        let mut url = format!("{path}{separator}limit={limit}");
        if let Some(cursor) = &cursor {
            url.push_str(&format!("&cursor={cursor}"));
        }
        let page = body(&world.call("GET", &url, Some(token), None));
        pages.push(page[key].as_array().unwrap().iter().map(|item| item["id"].as_str().unwrap().to_string()).collect());
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => return pages,
        }
    }
}

#[test]
fn a_page_that_ended_at_a_deleted_message_goes_on_from_where_it_was() {
    let desk = desk();
    let (world, mailbox, ben) = (&desk.world, &desk.mailbox, &desk.person("ben").token);
    let notes: Vec<String> = (0..6)
        .map(|number| {
            let raw = format!(
                "From: ana@customer.example\r\nTo: {SUPPORT}\r\nSubject: Note {number}\r\n\
                 Message-ID: <note-{number}@customer.example>\r\n\r\nA note about refunds.\r\n"
            );
            match world.node.deliver("ana@customer.example", SUPPORT, raw.as_bytes()) {
                Ok(mailroom::mail::Delivery::Stored { receipt_id }) => receipt_id,
                other => panic!("{other:?}"),
            }
        })
        .collect();
    let ids = |page: &Value, key: &str| -> Vec<String> {
        page[key].as_array().unwrap().iter().map(|item| item["id"].as_str().unwrap().to_string()).collect()
    };
    let get = |path: &str| body(&world.call("GET", path, Some(ben), None));

    let list = format!("/api/mailboxes/{mailbox}/messages?limit=2");
    let first = get(&list);
    assert_eq!(ids(&first, "messages"), [notes[5].clone(), notes[4].clone()]);
    // The message the page ended at is deleted before the next page is asked for.
    assert_eq!(delete(world, mailbox, &notes[4]).status, 200);
    let next = get(&format!("{list}&cursor={}", first["next_cursor"].as_str().unwrap()));
    assert_eq!(ids(&next, "messages"), [notes[3].clone(), notes[2].clone()], "the list goes on from where it was");

    let search = "/api/search?q=refunds&limit=2";
    let first = get(search);
    assert_eq!(ids(&first, "results"), [notes[5].clone(), notes[3].clone()]);
    assert_eq!(delete(world, mailbox, &notes[3]).status, 200);
    let next = get(&format!("{search}&cursor={}", first["next_cursor"].as_str().unwrap()));
    assert_eq!(ids(&next, "results"), [notes[2].clone(), notes[1].clone()], "the search goes on from where it was");

    let all: Vec<String> = pages(world, ben, &format!("/api/mailboxes/{mailbox}/messages"), "messages", 2).concat();
    assert_eq!(all.len(), 5, "four notes and the plain message: {all:?}");
}

#[test]
fn a_copy_delivered_while_the_last_one_is_deleted_keeps_its_original() {
    // The deletion's read finds no other copy; between it and the commit the same
    // message arrives for another mailbox. Deleting the bytes would leave that
    // copy without them, so the commit refuses, and nothing changes.
    let desk = desk();
    let (world, mailbox, receipt) = (&desk.world, &desk.mailbox, desk.receipt());
    let billing = world.mailbox(BILLING);
    let rival = Statement::new(
        "INSERT INTO receipts (id, mailbox_id, message_id, envelope_from, to_json, cc_json, recipients, subject, \
         received_at, in_reply_to_json, references_json, size, raw_key, text_body, text_source, text_truncated, \
         attachments_json) SELECT 'rcp_rival', ?1, message_id, envelope_from, to_json, cc_json, recipients, subject, \
         received_at, in_reply_to_json, references_json, size, raw_key, text_body, text_source, text_truncated, \
         attachments_json FROM receipts WHERE id = ?2",
    )
    .bind(billing.as_str())
    .bind(receipt);
    let database = InterleavingDatabase { inner: &world.node.database, before_commit: RefCell::new(Some(rival)) };
    let node = world.node_over(&database);
    let deleting =
        request("DELETE", &format!("/api/mailboxes/{mailbox}/messages/{receipt}")).bearer(&world.admin_token);
    let refused = futures_executor::block_on(dispatch(&node, &deleting, Surface::Rest));
    assert_refused(&refused, 409, "delivered_again");
    assert_eq!(world.node.mail_count("SELECT COUNT(*) FROM receipts"), 2, "nothing was deleted");
    assert_eq!(originals(&world.node), 1);

    // Asked again, this copy goes and the original stays for the other.
    assert_eq!(body(&delete(world, mailbox, receipt))["original"], "kept_for_other_copies");
    assert_eq!(originals(&world.node), 1);
}

#[test]
fn a_reply_drafted_while_its_message_is_deleted_is_refused_as_replying_to_nothing() {
    let desk = desk();
    let (world, mailbox, receipt, ben) = (&desk.world, &desk.mailbox, desk.receipt(), &desk.person("ben").token);
    let rival = Statement::new("DELETE FROM receipts WHERE id = ?1").bind(receipt);
    let database = InterleavingDatabase { inner: &world.node.database, before_commit: RefCell::new(Some(rival)) };
    let node = world.node_over(&database);
    let drafting = request("POST", &format!("/api/mailboxes/{mailbox}/sends")).bearer(ben).json(json!({
        "to": ["ana@customer.example"], "subject": "Re: invoice", "text": "Hello.", "reply_to": receipt,
    }));
    let refused = futures_executor::block_on(dispatch(&node, &drafting, Surface::Rest));
    assert_refused(&refused, 404, "not_found");
    assert_eq!(world.node.mail_count("SELECT COUNT(*) FROM sends"), 0);
}

#[test]
fn an_original_no_longer_in_the_object_store_is_refused_as_gone_never_a_failure() {
    let world = World::new();
    let mailbox = world.mailbox(SUPPORT);
    let receipt = world.deliver("multipart-attachment", SUPPORT);
    world.grant_all(&world.admin_id, &["mailbox.metadata.read", "mailbox.content.read", "message.export"], &mailbox);
    // The window decision 0017 leaves: the bytes went as the same message arrived again.
    world.node.blobs.objects.borrow_mut().retain(|key, _| !key.starts_with("raw/"));
    let message = format!("/api/mailboxes/{mailbox}/messages/{receipt}");
    for suffix in ["/original", "/attachments/0"] {
        let gone = world.admin("GET", &format!("{message}{suffix}"), None);
        assert_refused(&gone, 404, "original_gone");
    }
    let text = world.admin("GET", &format!("{message}/body"), None);
    assert_eq!(text.status, 200, "its text is still read");
}

#[test]
fn a_message_deleted_from_a_moved_mailbox_goes_from_its_own_database_from_d1_s_copy_and_its_original_with_the_last() {
    let desk = desk();
    let (world, support, shared, ben) = (&desk.world, desk.mailbox.clone(), desk.receipt(), &desk.person("ben").token);
    let billing = world.mailbox(BILLING);
    let other_copy = world.deliver("plain", BILLING);
    let only_here = world.deliver("multipart-attachment", SUPPORT);
    // The plain message's original stored once for both mailboxes, as before
    // keys named their mailbox.
    shared_as_stored_before(&world.node, &[shared, &other_copy]);
    let conversation = world.thread_of(&support, &only_here);
    crate::moving_mail::moved(world, &support);
    assert_eq!(originals(&world.node), 2);
    let message = |receipt: &str| format!("/api/mailboxes/{support}/messages/{receipt}");
    let object = world.node.mailboxes.database(&support).expect("the mailbox has its own database");
    let d1_has =
        |receipt: &str| world.node.mail_count(&format!("SELECT count(*) FROM receipts WHERE id = '{receipt}'"));

    // Its only copy, under the mailbox's own key: gone from the mailbox's
    // database, then from D1's copy, which a search across mailboxes reads;
    // its original with it, the mailbox's own database having said nothing
    // else needs it.
    let before = search(world, ben, "attached");
    assert!(before.contains(&only_here), "{before:?}");
    let deleted = body(&delete(world, &support, &only_here));
    assert_eq!(deleted["original"], "deleted", "{deleted}");
    assert_refused(&world.call("GET", &message(&only_here), Some(ben), None), 404, "not_found");
    assert_eq!(object.database.count(&format!("SELECT count(*) FROM receipts WHERE id = '{only_here}'")), 0);
    assert_eq!(d1_has(&only_here), 0, "D1's copy went after it");
    assert!(!search(world, ben, "attached").contains(&only_here));
    let thread = body(&world.call("GET", &conversation, Some(ben), None));
    assert_eq!((thread["message_count"].as_i64(), thread["entries"].clone()), (Some(0), json!([])), "{thread}");
    assert_eq!(originals(&world.node), 1);

    // A copy whose original another mailbox shares under the key stored
    // before: its original stays, owed to the upkeep, which finds it still
    // needed; it goes with that last copy.
    let deleted = body(&delete(world, &support, shared));
    assert_eq!(deleted["original"], "kept_for_other_copies", "{deleted}");
    assert_eq!(d1_has(shared), 0);
    world.node.maintain();
    assert_eq!(originals(&world.node), 1);
    let last = body(&delete(world, &billing, &other_copy));
    assert_eq!(last["original"], "deleted");
    assert_eq!(originals(&world.node), 0);

    // Each deletion recorded in the mailbox's segment, which walks intact.
    world.node.seal();
    let walked = body(&world.admin("GET", &format!("/api/audit/verify?mailbox_id={support}"), None));
    assert_eq!(walked["intact"], true, "{walked}");
}

#[test]
fn an_original_owed_under_a_moved_mailbox_s_key_is_kept_while_its_own_database_refers_to_it() {
    let desk = desk();
    let (world, support, receipt) = (&desk.world, desk.mailbox.clone(), desk.receipt().to_string());
    let other = world.deliver("multipart-attachment", SUPPORT);
    crate::moving_mail::moved(world, &support);
    let object = world.node.mailboxes.database(&support).expect("the mailbox has its own database");
    let owed = || world.node.database.count("SELECT COUNT(*) FROM originals_to_delete");
    // The object store fails as each is deleted: both owed.
    world.node.blobs.unavailable.set(true);
    object.database.execute_sql(&format!("CREATE TABLE kept AS SELECT * FROM receipts WHERE id = '{receipt}'"));
    for deleted in [&receipt, &other] {
        assert_eq!(body(&delete(world, &support, deleted))["original"], "deleted_later");
    }
    assert_eq!((originals(&world.node), owed()), (2, 2));
    // The first message arrives in the mailbox again before the upkeep runs: D1
    // holds nothing of it, the mailbox's own database does.
    object.database.execute_sql("UPDATE kept SET id = 'rcp_again'");
    object.database.execute_sql("INSERT INTO receipts SELECT * FROM kept");
    world.node.blobs.unavailable.set(false);
    world.node.maintain();
    let left: Vec<String> =
        world.node.blobs.objects.borrow().keys().filter(|key| key.starts_with("raw/")).cloned().collect();
    assert_eq!(left.len(), 1, "the other's original is deleted: {left:?}");
    assert!(left[0].starts_with(&format!("raw/{support}/")), "{left:?}");
    assert_eq!(
        object.database.rows("SELECT raw_key FROM receipts WHERE id = 'rcp_again'"),
        vec![vec![left[0].clone()]]
    );
    assert_eq!(owed(), 0, "neither is owed any more");
}

#[test]
fn a_message_deleted_and_delivered_again_has_an_original_of_its_own_that_the_deletion_never_takes() {
    let desk = desk();
    let (world, mailbox, first) = (&desk.world, desk.mailbox.clone(), desk.receipt().to_string());
    let key_of = |receipt: &str| {
        world.node.mail_rows(&format!("SELECT raw_key FROM receipts WHERE id = '{receipt}'"))[0][0].clone()
    };
    let first_key = key_of(&first);
    assert_eq!(first_key, format!("raw/{mailbox}/{first}"), "a key names its mailbox and its receipt");
    // The deletion commits, and its bytes are still to be deleted (the object
    // store fails) when the same message arrives again.
    world.node.blobs.unavailable.set(true);
    assert_eq!(body(&delete(world, &mailbox, &first))["original"], "deleted_later");
    world.node.blobs.unavailable.set(false);
    let again = world.deliver("plain", SUPPORT);
    let again_key = key_of(&again);
    assert_ne!(again_key, first_key, "stored under a key of its own");
    world.node.maintain();
    let objects = world.node.blobs.objects.borrow().keys().cloned().collect::<Vec<_>>();
    assert!(!objects.contains(&first_key), "the deleted one's bytes went: {objects:?}");
    world.grant_all(&world.admin_id, &["mailbox.content.read", "message.export"], &mailbox);
    let original = world.admin("GET", &format!("/api/mailboxes/{mailbox}/messages/{again}/original"), None);
    assert_eq!(original.status, 200, "{}", text(&original));
    assert_eq!(original.body, fixture("plain"));
}
