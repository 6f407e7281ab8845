//! What a received message may make the node store and serve (decision 0017),
//! tested with hostile messages delivered through the same path as the email
//! handler: the ones beyond what the node reads are refused and stored nowhere;
//! the rest are cut to the limits, and a page of a list or a search has a size
//! computed from the limits alone, whatever arrived.

use mailroom::mail::limits::Exceeded;
use mailroom::mail::{Delivery, Rejection};
use mailroom_contract::api::limits::*;
use serde_json::Value;

use crate::desk::{Desk, READS_THE_MAILBOX};
use crate::support::*;

const SUPPORT: &str = "support@mailroom.test";

/// A node that takes messages as big as a real deployment's, a mailbox, and a
/// reader of its metadata and content.
fn desk_taking_big_mail() -> Desk {
    let mut world = World::new();
    world.node.config.maximum_message_bytes = 4 * 1024 * 1024;
    Desk::in_world(world, SUPPORT).with("reader@example.com", READS_THE_MAILBOX)
}

/// How a hostile message is made: how many of each thing it carries.
struct Hostile {
    message_id: String,
    to: usize,
    cc: usize,
    references: usize,
    attachments: usize,
}

impl Hostile {
    fn new(message_id: &str, to: usize) -> Hostile {
        Hostile { message_id: message_id.into(), to, cc: 2_000, references: 300, attachments: 200 }
    }

    /// The message: `to` To and `cc` Cc recipients with names, one name and one
    /// address far too long, a Reply-To as wide as the Cc, a subject of 3,000
    /// characters, `references` References and 50 In-Reply-To ids, a text with one
    /// word of 20,000 letters beside "needle", and `attachments` attachments with
    /// file names of 300 characters.
    fn raw(&self) -> Vec<u8> {
        let list = |prefix: &str, count: usize| {
            let mut addresses: Vec<String> =
                (0..count).map(|n| format!("\"{prefix} {n}\" <{prefix}{n}@wide.example>")).collect();
            addresses.push(format!("\"{}\" <long-name@wide.example>", "N".repeat(NAME_CHARACTERS * 2)));
            addresses.push(format!("<{}@wide.example>", "a".repeat(ADDRESS_CHARACTERS)));
            addresses.join(",\r\n ")
        };
        let ids = |prefix: &str, count: usize| {
            (0..count).map(|n| format!("<{prefix}{n}@thread.example>")).collect::<Vec<_>>().join("\r\n ")
        };
        let mut raw = format!(
            "From: \"{}\" <hostile@evil.example>\r\nTo: {}\r\nCc: {}\r\nReply-To: {}\r\nSubject: {}\r\n\
             Message-ID: <{}>\r\nIn-Reply-To: {}\r\nReferences: {}\r\nDate: Fri, 27 Nov 2026 09:15:00 +0000\r\n\
             MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"part\"\r\n\r\n",
            "F".repeat(NAME_CHARACTERS * 2),
            list("to", self.to),
            list("cc", self.cc),
            list("reply", self.cc),
            "Bloat ".repeat(500),
            self.message_id,
            ids("parent", 50),
            ids("ancestor", self.references),
        );
        raw.push_str(&format!(
            "--part\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nneedle {} needle\r\n",
            "a".repeat(20_000)
        ));
        for n in 0..self.attachments {
            raw.push_str(&format!(
                "--part\r\nContent-Type: application/octet-stream\r\n\
                 Content-Disposition: attachment; filename=\"{}{n}.bin\"\r\n\r\nx\r\n",
                "f".repeat(300)
            ));
        }
        raw.push_str("--part--\r\n");
        raw.into_bytes()
    }
}

/// The most bytes a string of `characters` characters takes in JSON: every
/// character escaped at worst (`\u0001`, six bytes), and its quotes.
fn json_text(characters: usize) -> usize {
    6 * characters + 2
}

/// The most bytes one message summary takes in JSON, from the limits alone.
fn summary_ceiling() -> usize {
    let address = json_text(ADDRESS_CHARACTERS) + json_text(NAME_CHARACTERS) + r#"{"address":,"name":}"#.len();
    let ids = 2 * json_text(40);
    let times = 2 * json_text(30);
    let numbers = 5 * 20;
    let names_and_punctuation = 200;
    ids + address * (1 + 2 * RECIPIENTS_SHOWN) + json_text(SUBJECT_CHARACTERS) + times + numbers + names_and_punctuation
}

/// The most bytes a page of `limit` summaries (or search hits, which add a
/// passage and where it matched) takes in JSON.
fn page_ceiling(limit: usize, hits: bool) -> usize {
    let row = summary_ceiling() + if hits { json_text(SNIPPET_CHARACTERS) + 40 } else { 0 };
    limit * (row + 1) + 100
}

fn deliver(world: &World, raw: &[u8]) -> Result<Delivery, Rejection> {
    world.node.deliver("hostile@evil.example", SUPPORT, raw)
}

fn stored(world: &World, raw: &[u8]) -> String {
    match deliver(world, raw) {
        Ok(Delivery::Stored { receipt_id }) => receipt_id,
        other => panic!("the message was not stored: {other:?}"),
    }
}

#[test]
fn a_header_block_bigger_than_the_limit_is_refused_and_stored_nowhere() {
    let desk = desk_taking_big_mail();
    let world = &desk.world;
    // The attack of issue 11: 30,000 To addresses, some 540 KB of header.
    let raw = Hostile::new("wide@evil.example", 30_000).raw();
    let refused = deliver(world, &raw);
    assert_eq!(refused, Err(Rejection::Exceeds(Exceeded::HeaderBlock { limit: HEADER_BYTES })));
    assert!(refused.unwrap_err().smtp_reason().starts_with("552 5.3.4 "));
    assert_eq!(world.node.mail_count("SELECT COUNT(*) FROM receipts"), 0);
    assert!(world.node.blobs.objects.borrow().is_empty(), "a refused message's bytes are stored nowhere");
}

#[test]
fn a_hostile_message_within_the_header_limit_is_kept_within_every_other_limit() {
    let desk = desk_taking_big_mail();
    let (world, mailbox, token) = (&desk.world, desk.mailbox.as_str(), desk.person("reader").token.as_str());
    let receipt = stored(world, &Hostile::new("kept@evil.example", 5_000).raw());
    let message = body(&world.call("GET", &format!("/api/mailboxes/{mailbox}/messages/{receipt}"), Some(token), None));

    let to = message["to"].as_array().unwrap();
    assert_eq!(to.len(), RECIPIENTS_KEPT);
    assert_eq!(to[0]["address"], "to0@wide.example", "the first recipients, in the header's order");
    // The address too long to be one is not an address at all (`addresses`), so not counted.
    assert_eq!(message["to_count"], 5_001, "every To recipient is counted, kept or not");
    assert_eq!(message["cc"].as_array().unwrap().len(), RECIPIENTS_KEPT);
    assert_eq!(message["cc_count"], 2_001);
    assert_eq!(message["reply_to"].as_array().unwrap().len(), RECIPIENTS_KEPT);
    assert_eq!(message["subject"].as_str().unwrap().chars().count(), SUBJECT_CHARACTERS);
    assert_eq!(message["from"]["name"].as_str().unwrap().chars().count(), NAME_CHARACTERS);
    let references = message["references"].as_array().unwrap();
    assert_eq!(references.len(), REFERENCES_KEPT);
    assert_eq!(references.last().unwrap(), "ancestor299@thread.example", "the most recent are kept");
    assert_eq!(message["in_reply_to"].as_array().unwrap().len(), REFERENCES_KEPT);
    let attachments = message["attachments"].as_array().unwrap();
    assert_eq!(attachments.len(), ATTACHMENTS_LISTED);
    assert_eq!(message["attachment_count"], 200);
    assert_eq!(attachments[0]["name"].as_str().unwrap().chars().count(), FILE_NAME_CHARACTERS);

    // The search index holds what the receipt keeps: the first recipients, not the rest.
    let found = |q: &str| {
        body(&world.call("GET", &format!("/api/search?q={q}"), Some(token), None))["results"].as_array().unwrap().len()
    };
    assert_eq!(found("to99"), 1);
    assert_eq!(found("to100"), 0);
}

#[test]
fn a_page_of_the_list_or_of_a_search_is_bounded_whatever_arrived() {
    let desk = desk_taking_big_mail();
    let (world, mailbox, token) = (&desk.world, desk.mailbox.as_str(), desk.person("reader").token.as_str());
    for n in 0..6 {
        stored(world, &Hostile::new(&format!("bloat-{n}@evil.example"), 5_000).raw());
    }
    let list = world.call("GET", &format!("/api/mailboxes/{mailbox}/messages?limit=100"), Some(token), None);
    let page = body(&list);
    let messages = page["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 6);
    for summary in messages {
        assert_eq!(summary["subject"].as_str().unwrap().chars().count(), SUBJECT_CHARACTERS);
        assert_eq!(summary["from"]["name"].as_str().unwrap().chars().count(), NAME_CHARACTERS);
        assert_eq!(summary["to"].as_array().unwrap().len(), RECIPIENTS_SHOWN);
        assert_eq!(summary["to_count"], 5_001);
        assert_eq!(summary["cc"].as_array().unwrap().len(), RECIPIENTS_SHOWN);
        assert_eq!(summary["attachment_count"], 200);
    }
    assert!(list.body.len() <= page_ceiling(100, false), "{} bytes for a page of 100", list.body.len());
    assert!(list.body.len() <= page_ceiling(6, false), "{} bytes for six summaries", list.body.len());

    for (q, matched_in) in [("bloat", "headers"), ("needle", "body"), ("a*", "body")] {
        let search = world.call("GET", &format!("/api/search?q={q}&limit=100"), Some(token), None);
        let results = body(&search)["results"].as_array().unwrap_or_else(|| panic!("{q}: {}", text(&search))).clone();
        assert_eq!(results.len(), 6, "{q}");
        assert!(results.iter().all(|hit| hit["matched_in"] == matched_in), "{q}");
        for hit in &results {
            let passage = hit["snippet"].as_str().unwrap_or_default();
            assert!(passage.chars().count() <= SNIPPET_CHARACTERS, "{q}: a passage of {}", passage.len());
        }
        assert!(search.body.len() <= page_ceiling(6, true), "{q}: {} bytes for six hits", search.body.len());
    }
}

#[test]
fn mime_parts_nested_deeper_than_the_limit_are_refused() {
    let desk = desk_taking_big_mail();
    let world = &desk.world;
    let nested = |levels: usize| {
        let mut raw = format!("From: a@b.example\r\nTo: {SUPPORT}\r\nSubject: deep {levels}\r\n");
        for _ in 0..levels {
            raw.push_str("Content-Type: message/rfc822\r\n\r\nSubject: inner\r\n");
        }
        raw.push_str("Content-Type: text/plain\r\n\r\nhello\r\n");
        raw.into_bytes()
    };
    assert!(matches!(deliver(world, &nested(MIME_DEPTH - 1)), Ok(Delivery::Stored { .. })));
    let refused = deliver(world, &nested(MIME_DEPTH));
    assert_eq!(refused, Err(Rejection::Exceeds(Exceeded::Nesting { limit: MIME_DEPTH })));
    assert!(refused.unwrap_err().smtp_reason().starts_with("554 5.6.0 "));
    // Far deeper: refused, not a crash of the isolate.
    assert!(matches!(deliver(world, &nested(50_000)), Err(Rejection::Exceeds(Exceeded::Nesting { .. }))));
    assert_eq!(world.node.mail_count("SELECT COUNT(*) FROM receipts"), 1);
}

#[test]
fn a_message_id_longer_than_any_real_one_is_replaced_by_one_derived_from_the_bytes() {
    let desk = desk_taking_big_mail();
    let (world, mailbox, token) = (&desk.world, desk.mailbox.as_str(), desk.person("reader").token.as_str());
    let long = format!("{}@evil.example", "i".repeat(MESSAGE_ID_BYTES));
    let raw = format!("From: a@b.example\r\nTo: {SUPPORT}\r\nSubject: long id\r\nMessage-ID: <{long}>\r\n\r\nhi\r\n");
    let receipt = stored(world, raw.as_bytes());
    let message = body(&world.call("GET", &format!("/api/mailboxes/{mailbox}/messages/{receipt}"), Some(token), None));
    let id = message["message_id"].as_str().unwrap();
    assert!(id.ends_with("@derived.mailroom.invalid"), "{id}");
    assert!(matches!(deliver(world, raw.as_bytes()), Ok(Delivery::Duplicate { .. })), "still recognised again");
}

#[test]
fn receipts_stored_before_the_limits_are_cut_to_them_and_stay_searchable() {
    let database = mailroom::testing::SqliteDatabase::migrated_before("0012");
    let addresses = |prefix: &str, count: usize| {
        let list: Vec<Value> = (0..count)
            .map(|n| serde_json::json!({ "address": format!("{prefix}{n}@wide.example"), "name": format!("{prefix} {n}") }))
            .collect();
        Value::Array(list).to_string()
    };
    let ids = |count: usize| Value::Array((0..count).map(|n| format!("m{n}@x.example").into()).collect()).to_string();
    let attachments = Value::Array(
        (0..130)
            .map(
                |n| serde_json::json!({ "index": n, "name": "f".repeat(300), "content_type": "text/plain", "size": 1 }),
            )
            .collect(),
    )
    .to_string();
    let recipients = "wide words recipient to150";
    database.execute_sql(&format!(
        "INSERT INTO mailboxes (id, address, display_name, created_at) VALUES ('mbx_01', 'a@x.example', 'A', 0);
         INSERT INTO receipts (id, mailbox_id, message_id, envelope_from, from_address, from_name, to_json, cc_json,
             recipients, subject, sent_at, received_at, in_reply_to_json, references_json, size, raw_key, text_body,
             text_source, text_truncated, attachments_json, reply_to_json)
         VALUES ('rcp_old', 'mbx_01', 'old@x.example', 'e@x.example', 'f@x.example', '{name}', '{to}', '{cc}',
             '{recipients}', '{subject}', NULL, 1, '{in_reply_to}', '{references}', 10, 'raw/old', 'text', 'text', 0,
             '{attachments}', '{reply_to}');
         INSERT INTO receipt_headers_index (rowid, from_address, from_name, recipients, subject, mailbox_id)
             SELECT rowid, from_address, from_name, recipients, subject, mailbox_id FROM receipts;",
        name = "F".repeat(300),
        to = addresses("to", 250),
        cc = addresses("cc", 3),
        subject = "s".repeat(2_000),
        in_reply_to = ids(30),
        references = ids(40),
        reply_to = addresses("reply", 150),
    ));
    database.migrate_from("0012");

    let count = |sql: &str| database.count(sql);
    assert_eq!(count("SELECT json_array_length(to_json) FROM receipts"), RECIPIENTS_KEPT as i64);
    assert_eq!(count("SELECT to_not_kept FROM receipts"), 150);
    assert_eq!(count("SELECT json_array_length(cc_json) + cc_not_kept FROM receipts"), 3);
    assert_eq!(count("SELECT json_array_length(reply_to_json) FROM receipts"), RECIPIENTS_KEPT as i64);
    assert_eq!(count("SELECT json_array_length(in_reply_to_json) FROM receipts"), REFERENCES_KEPT as i64);
    assert_eq!(count("SELECT json_array_length(references_json) FROM receipts"), REFERENCES_KEPT as i64);
    assert_eq!(count("SELECT json_extract(references_json, '$[19]') = 'm39@x.example' FROM receipts"), 1);
    assert_eq!(count("SELECT json_extract(to_json, '$[0].address') = 'to0@wide.example' FROM receipts"), 1);
    assert_eq!(count("SELECT json_array_length(attachments_json) FROM receipts"), ATTACHMENTS_LISTED as i64);
    assert_eq!(count("SELECT attachments_not_listed FROM receipts"), 5);
    assert_eq!(count("SELECT length(json_extract(attachments_json, '$[0].name')) FROM receipts"), 255);
    assert_eq!(count("SELECT json_extract(attachments_json, '$[3].index') FROM receipts"), 3);
    assert_eq!(count("SELECT length(subject) FROM receipts"), SUBJECT_CHARACTERS as i64);
    assert_eq!(count("SELECT length(from_name) FROM receipts"), NAME_CHARACTERS as i64);
    // The header index was given back what the receipt now holds, and agrees with it.
    database.execute_sql("INSERT INTO receipt_headers_index (receipt_headers_index) VALUES ('integrity-check');");
    let matches = |words: &str| {
        database
            .count(&format!("SELECT COUNT(*) FROM receipt_headers_index WHERE receipt_headers_index MATCH '{words}'"))
    };
    assert_eq!(matches("to99"), 1);
    assert_eq!(matches("to150"), 0, "a recipient no longer kept is no longer found");
    assert_eq!(matches("cc2"), 1);
}

#[test]
fn the_limits_ceiling_is_what_the_contract_publishes() {
    // The ceiling above is computed from constants the OpenAPI document states:
    // a client can compute it too.
    let document = mailroom_contract::openapi::document(mailroom_contract::registry());
    let schemas = &document["components"]["schemas"];
    assert_eq!(schemas["MessageSummary"]["properties"]["to"]["maxItems"], RECIPIENTS_SHOWN);
    assert_eq!(schemas["MessageSummary"]["properties"]["subject"]["maxLength"], SUBJECT_CHARACTERS);
    assert_eq!(schemas["EmailAddress"]["properties"]["address"]["maxLength"], ADDRESS_CHARACTERS);
    assert_eq!(schemas["Message"]["properties"]["references"]["maxItems"], REFERENCES_KEPT);
}

/// The administrator's unresolved notifications of `kind`, as their feed shows them.
fn storage_alarms(world: &World) -> Vec<Value> {
    let feed = body(&world.admin("GET", "/api/me/notifications", None));
    feed["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|notification| notification["kind"] == "database_nearly_full")
        .cloned()
        .collect()
}

#[test]
fn a_nearly_full_database_tells_administrators_once_a_day_and_a_full_one_refuses_mail_storing_nothing() {
    let world = World::new();
    world.mailbox(SUPPORT);
    let limit = mailroom::core::node::DEFAULT_DATABASE_LIMIT_BYTES;
    // Below 80%: nothing said.
    world.node.database.pretend_size(Some(limit / 2));
    world.deliver("plain", SUPPORT);
    assert!(storage_alarms(&world).is_empty());
    // Past 80%: the message is stored, and administrators told in the same batch, once.
    world.node.database.pretend_size(Some(limit / 100 * 85));
    world.deliver("latin1", SUPPORT);
    world.deliver("reply-to", SUPPORT);
    let alarms = storage_alarms(&world);
    assert_eq!(alarms.len(), 1, "{alarms:?}");
    assert_eq!(alarms[0]["title"], "The node's database is nearly full");
    assert!(alarms[0]["detail"].as_str().unwrap().contains("(85%)"), "{}", alarms[0]["detail"]);
    // At the limit: refused with a temporary failure, nothing stored, and told.
    world.node.database.pretend_size(Some(limit));
    let stored = world.node.mail_count("SELECT COUNT(*) FROM receipts");
    let refused = world.node.deliver("sender@outside.example", SUPPORT, &fixture("html-only"));
    assert_eq!(refused, Err(Rejection::DatabaseFull));
    assert!(Rejection::DatabaseFull.is_temporary());
    assert!(Rejection::DatabaseFull.smtp_reason().starts_with("452 4.3.1 "));
    assert_eq!(world.node.mail_count("SELECT COUNT(*) FROM receipts"), stored, "nothing stored half");
    world.node.database.pretend_size(None);
    let alarms = storage_alarms(&world);
    assert_eq!(alarms.len(), 2);
    assert!(alarms.iter().any(|alarm| alarm["title"] == "The node's database is full: inbound mail is refused"));
    // A day later, still nearly full: told again.
    world.node.platform.advance(24 * 60 * 60 * 1000);
    let before = world.node.database.count("SELECT COUNT(*) FROM notifications WHERE kind = 'database_nearly_full'");
    world.node.database.pretend_size(Some(limit / 100 * 90));
    world.node.deliver("sender@outside.example", SUPPORT, &fixture("html-only")).expect("stored");
    world.node.database.pretend_size(None);
    let after = world.node.database.count("SELECT COUNT(*) FROM notifications WHERE kind = 'database_nearly_full'");
    assert_eq!(after, before + 1);
}
