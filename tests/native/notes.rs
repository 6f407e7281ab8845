//! Internal notes in a conversation (decision 0047): written, listed and
//! deleted by those who read and work the mailbox, in both stores and across
//! a move; each @mention of a teammate who may read them tells that teammate
//! once, never the author, never an outsider; held to their limits, naming
//! the field; audited by ids, never by what they say; and never offered to an
//! agent without `mail.notes`.

use mailroom_contract::api::note_limits::{MENTIONS_PER_NOTE, NOTE_CHARACTERS, NOTES_PER_CONVERSATION};
use serde_json::{Value, json};

use crate::agents::grants;
use crate::desk::{Desk, READS_THE_MAILBOX, WORKS_THE_MAILBOX};
use crate::mcp::call as mcp;
use mailroom::mail::moving::MoveStage;

use crate::moving_mail::{advance, desk_with_mail, holds_what_d1_holds, ok};
use crate::support::*;

const SUPPORT: &str = "support@mailroom.test";

/// Support with a conversation: ana and ben work it, cleo reads it, dora
/// only sees that mail exists, in `world` (mail in D1, or in its own
/// database).
fn desk_in(world: World) -> (Desk, String) {
    let desk = Desk::in_world(world, SUPPORT)
        .receiving("multipart-attachment")
        .with("ana@example.com", WORKS_THE_MAILBOX)
        .with("ben@example.com", WORKS_THE_MAILBOX)
        .with("cleo@example.com", READS_THE_MAILBOX)
        .with("dora@example.com", &["mailbox.metadata.read"]);
    let notes = format!("{}/notes", desk.world.thread_of(&desk.mailbox, desk.receipt()));
    (desk, notes)
}

fn write(desk: &Desk, who: &str, notes: &str, text: &str) -> mailroom::core::http::Response {
    desk.world.call("POST", notes, Some(&desk.person(who).token), Some(json!({ "text": text })))
}

fn listed(desk: &Desk, who: &str, notes: &str) -> Value {
    let listed = desk.world.call("GET", notes, Some(&desk.person(who).token), None);
    assert_eq!(listed.status, 200, "{}", text(&listed));
    body(&listed)
}

/// The kinds of the notifications in `who`'s feed, newest first.
fn feed(desk: &Desk, who: &str) -> Vec<(String, String)> {
    let page = desk.world.call("GET", "/api/me/notifications", Some(&desk.person(who).token), None);
    assert_eq!(page.status, 200, "{}", text(&page));
    body(&page)["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| (item["kind"].as_str().unwrap().to_string(), item["object_id"].as_str().unwrap().to_string()))
        .collect()
}

fn written_lists_and_deletes(world: World) {
    let (desk, notes) = desk_in(world);
    let thread = notes.trim_end_matches("/notes").rsplit('/').next().unwrap().to_string();
    let first = listed(&desk, "ben", &notes);
    assert_eq!(first["notes"], json!([]));
    assert_eq!(first["limit"], NOTES_PER_CONVERSATION);
    let handles: Vec<&str> =
        first["teammates"].as_array().unwrap().iter().map(|t| t["handle"].as_str().unwrap()).collect();
    assert_eq!(handles, ["ana", "ben", "cleo"], "those who read the mailbox's content, by name; not dora");

    let added = write(&desk, "ana", &notes, "The customer called: @ben, the refund went out.\n");
    assert_eq!(added.status, 201, "{}", text(&added));
    let added = body(&added);
    let note = &added["note"];
    let id = note["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("nte_"), "{id}");
    assert_eq!(note["text"], "The customer called: @ben, the refund went out.");
    assert_eq!(
        (note["author"].as_str(), note["author_name"].as_str()),
        (Some(desk.person("ana").id.as_str()), Some("ana"))
    );
    assert_eq!(note["mentions"], json!([desk.person("ben").id]));
    assert_eq!(added["not_mentioned"], json!([]));
    let entry = desk.world.last_audit_entry();
    assert_eq!((entry["action"].as_str(), entry["outcome"].as_str()), (Some("add_note"), Some("ok")));
    assert_eq!(entry["object"], thread.as_str(), "the conversation, so those following it hear of the note");
    assert_eq!(entry["detail"]["note"], id.as_str());
    assert!(!entry.to_string().contains("refund"), "what a note says is never in the audit chain: {entry}");

    write(&desk, "ben", &notes, "Thanks, closing it.");
    let seen = listed(&desk, "cleo", &notes);
    let texts: Vec<&str> = seen["notes"].as_array().unwrap().iter().map(|n| n["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["The customer called: @ben, the refund went out.", "Thanks, closing it."], "oldest first");
    assert_eq!(desk.world.last_audit_entry()["action"], "list_notes", "reading notes is recorded");

    // The conversation itself never carries them.
    let thread_read = desk.world.call("GET", &notes.replace("/notes", ""), Some(&desk.person("ben").token), None);
    assert!(!text(&thread_read).contains("refund went out"), "{}", text(&thread_read));

    let path = format!("{notes}/{id}");
    assert_refused(&desk.world.call("DELETE", &path, Some(&desk.person("ben").token), None), 403, "not_the_author");
    let deleted = desk.world.call("DELETE", &path, Some(&desk.person("ana").token), None);
    assert_eq!(deleted.status, 200, "{}", text(&deleted));
    assert_eq!(body(&deleted)["id"], id.as_str());
    assert_eq!(desk.world.last_audit_entry()["action"], "delete_note");
    assert_eq!(listed(&desk, "ana", &notes)["notes"].as_array().unwrap().len(), 1);
    assert_refused(&desk.world.call("DELETE", &path, Some(&desk.person("ana").token), None), 404, "not_found");
    assert_eq!(desk.world.verify()["intact"], true);
}

#[test]
fn a_mailbox_s_people_write_list_and_delete_notes_in_its_own_database_each_audited_by_ids() {
    written_lists_and_deletes(World::new());
}

#[test]
fn notes_of_a_mailbox_whose_mail_is_in_d1_answer_the_same() {
    written_lists_and_deletes(World::with_mail_in_d1());
}

#[test]
fn a_mention_tells_each_teammate_once_never_the_author_nor_someone_who_cannot_read_the_notes() {
    for world in [World::new(), World::with_mail_in_d1()] {
        let (desk, notes) = desk_in(world);
        let thread = notes.trim_end_matches("/notes").rsplit('/').next().unwrap().to_string();
        let added =
            write(&desk, "ana", &notes, "@ben and @BEN, @cleo.\n@ana (me), @dora, @nobody, ana@customer.example");
        assert_eq!(added.status, 201, "{}", text(&added));
        let added = body(&added);
        let (ben, cleo) = (desk.person("ben").id.clone(), desk.person("cleo").id.clone());
        assert_eq!(added["note"]["mentions"], json!([ben, cleo]));
        assert_eq!(added["not_mentioned"], json!(["@dora", "@nobody"]), "dora sees only that mail exists");
        let mentioned = ("note_mention".to_string(), thread.clone());
        assert_eq!(feed(&desk, "ben"), std::slice::from_ref(&mentioned));
        assert_eq!(feed(&desk, "cleo"), [mentioned]);
        assert!(feed(&desk, "ana").is_empty(), "the author is not told of their own note");
        assert!(feed(&desk, "dora").is_empty());
        // A whole address mentions too, where the first part would.
        let again = write(&desk, "ben", &notes, "@ana@example.com done.");
        assert_eq!(body(&again)["note"]["mentions"], json!([desk.person("ana").id]));
        assert_eq!(feed(&desk, "ana").len(), 1);
    }
}

#[test]
fn notes_answer_only_those_who_read_the_mailbox_s_content_and_stop_when_it_is_revoked() {
    let (desk, notes) = desk_in(World::new());
    let world = &desk.world;
    assert_eq!(world.call("GET", &notes, Some(&desk.person("dora").token), None).status, 403);
    assert_eq!(write(&desk, "dora", &notes, "Hello").status, 403);
    assert_eq!(write(&desk, "cleo", &notes, "A reader does not write notes.").status, 403);
    let (_, stranger) = world.person("eve@example.com");
    assert_eq!(world.call("GET", &notes, Some(&stranger), None).status, 404);

    assert_eq!(write(&desk, "ben", &notes, "Seen.").status, 201);
    world.revoke(&desk.person("ben").id, "mailbox.content.read", &desk.mailbox);
    assert_eq!(world.call("GET", &notes, Some(&desk.person("ben").token), None).status, 403);
    assert_eq!(write(&desk, "ben", &notes, "Again.").status, 403);
    let handles = listed(&desk, "ana", &notes)["teammates"].to_string();
    assert!(!handles.contains("\"ben\""), "no longer mentionable: {handles}");
}

#[test]
fn an_agent_without_mail_notes_is_neither_offered_notes_nor_answered_and_one_with_it_is() {
    let (desk, notes) = desk_in(World::new());
    let world = &desk.world;
    let ben = &desk.person("ben").id;
    write(&desk, "ana", &notes, "Internal: refund approved.");
    let reads = ["mailbox.metadata.read", "mailbox.content.read", "send.propose"];
    let (_, reader) = world.mint(ben, &["mail.read", "mail.manage", "mail.draft"], grants(&desk.mailbox, &reads));
    let tools = mcp(world, Some(&reader), "tools/list", json!({}))["result"]["tools"].to_string();
    assert!(!tools.contains("\"list_notes\"") && !tools.contains("\"add_note\""), "{tools}");
    assert_eq!(world.call("GET", &notes, Some(&reader), None).status, 403);
    let thread = world.call("GET", &notes.replace("/notes", ""), Some(&reader), None);
    assert_eq!(thread.status, 200);
    assert!(!text(&thread).contains("refund approved"), "a conversation never carries its notes");

    let (_, noter) = world.mint(ben, &["mail.notes"], grants(&desk.mailbox, &reads));
    let tools = mcp(world, Some(&noter), "tools/list", json!({}))["result"]["tools"].to_string();
    assert!(tools.contains("\"list_notes\"") && tools.contains("\"add_note\""), "{tools}");
    assert_eq!(listed_with(world, &noter, &notes)["notes"][0]["text"], "Internal: refund approved.");
    let added = world.call("POST", &notes, Some(&noter), Some(json!({ "text": "@ana noted." })));
    assert_eq!(added.status, 201, "{}", text(&added));
    assert_eq!(feed(&desk, "ana").len(), 1, "told, as from ben's agent");
    // Its sponsor losing the mailbox's content stops it at the next call.
    world.revoke(ben, "mailbox.content.read", &desk.mailbox);
    assert_eq!(world.call("GET", &notes, Some(&noter), None).status, 403);
}

fn listed_with(world: &World, token: &str, notes: &str) -> Value {
    let listed = world.call("GET", notes, Some(token), None);
    assert_eq!(listed.status, 200, "{}", text(&listed));
    body(&listed)
}

#[test]
fn a_note_beyond_its_limits_is_refused_naming_the_field() {
    let (desk, notes) = desk_in(World::new());
    let refused = |text: &str| {
        let answer = write(&desk, "ana", &notes, text);
        assert_refused(&answer, 400, "invalid_body");
        assert!(crate::support::text(&answer).contains("`text`"), "{}", crate::support::text(&answer));
    };
    refused(" \n ");
    refused(&"a".repeat(NOTE_CHARACTERS + 1));
    let many: Vec<String> = (0..=MENTIONS_PER_NOTE).map(|n| format!("@person{n}")).collect();
    refused(&many.join(" "));
    assert_eq!(write(&desk, "ana", &notes, &"a".repeat(NOTE_CHARACTERS)).status, 201);
    for n in 1..NOTES_PER_CONVERSATION {
        assert_eq!(write(&desk, "ana", &notes, &format!("Note {n}")).status, 201, "{n}");
    }
    assert_refused(&write(&desk, "ana", &notes, "One too many"), 409, "too_many_notes");
}

#[test]
fn a_mailbox_s_notes_move_with_its_mail_and_are_read_and_written_where_it_went() {
    let desk = desk_with_mail();
    let (world, support) = (&desk.world, desk.mailbox.as_str());
    let ben = desk.person("ben");
    let question = world.node.database.peek("SELECT id FROM receipts WHERE subject = 'Invoice 4471'").unwrap();
    let notes = format!("{}/notes", world.thread_of(support, &question));
    for text in ["Checked with billing.", "@ben the invoice is attached."] {
        ok(world.call("POST", &notes, Some(&ben.token), Some(json!({ "text": text }))));
    }
    let before = listed_with(world, &ben.token, &notes)["notes"].clone();
    // The move begins (D1 notes every write from then on), and a note is
    // written while it copies: replayed into the mailbox's database.
    assert!(matches!(advance(world, support, 8), MoveStage::Copying(_)));
    ok(world.call("POST", &notes, Some(&ben.token), Some(json!({ "text": "During the move." }))));
    let mut steps = 0;
    loop {
        match advance(world, support, 50) {
            MoveStage::Switched { .. } => break,
            MoveStage::Differs { tables } => panic!("a write went unnoticed in {tables:?}"),
            _ => steps += 1,
        }
        assert!(steps < 100, "the move never switched");
    }
    holds_what_d1_holds(world, support);
    let after = listed_with(world, &ben.token, &notes)["notes"].clone();
    let kept = before.as_array().unwrap().len();
    assert_eq!(kept, 3, "the desk's own note and these two");
    assert_eq!(after.as_array().unwrap()[..kept], before.as_array().unwrap()[..], "the same, from its database");
    assert_eq!(after[kept]["text"], "During the move.");
    let moved = world.node.mailboxes.database(support).expect("its own database");
    assert_eq!(moved.database.peek("SELECT CAST(count(*) AS TEXT) FROM thread_notes").as_deref(), Some("4"));
    let added = ok(world.call("POST", &notes, Some(&ben.token), Some(json!({ "text": "After." }))));
    assert_eq!(moved.database.peek("SELECT CAST(count(*) AS TEXT) FROM thread_notes").as_deref(), Some("5"));
    let path = format!("{notes}/{}", added["note"]["id"].as_str().unwrap());
    ok(world.call("DELETE", &path, Some(&ben.token), None));
    assert_eq!(moved.database.peek("SELECT CAST(count(*) AS TEXT) FROM thread_notes").as_deref(), Some("4"));
}
