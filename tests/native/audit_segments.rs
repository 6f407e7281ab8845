//! Each mailbox's segment of the audit chain (decision 0040): entries written
//! in the mailbox's own database, sealed there by the upkeep and anchored in
//! the organisation's chain; and the attacker's next moves against them
//! (altering, deleting, rolling back, copying an entry into another segment
//! or into D1's chain), each found and told once.

use mailroom::audit::chain::append_to_mailbox;
use mailroom::audit::segments::ANCHOR_ACTION;
use mailroom::core::context::ports::AuditRecord;
use mailroom::core::mailbox_storage::MailboxStorage;
use mailroom::core::platform::Platform;
use serde_json::Value;

use crate::support::{World, assert_refused, body};

/// Records `action` in `mailbox`'s segment, as a change of its mail will.
fn write_in_segment(world: &World, mailbox: &str, action: &str) {
    let record = AuditRecord {
        at: world.node.platform.now_ms(),
        actor: Some(world.admin_id.clone()),
        delegator: None,
        surface: Some("rest"),
        action: action.into(),
        object: Some(mailbox.into()),
        outcome: "ok",
        detail: None,
        topic: None,
    };
    let statement = append_to_mailbox(&world.node.config.audit_key, mailbox, &record, &world.node.platform);
    world.node.run(world.node.mailboxes.of(mailbox).execute(vec![statement])).unwrap();
}

fn segment_sql(world: &World, mailbox: &str, sql: &str) {
    world.node.mailboxes.database(mailbox).unwrap().database.tamper(sql);
}

fn anchors(world: &World, mailbox: &str) -> Vec<Value> {
    world
        .audit_of(None)
        .into_iter()
        .filter(|entry| entry["action"] == ANCHOR_ACTION && entry["object"] == mailbox)
        .map(|entry| entry["detail"].clone())
        .collect()
}

/// The segment alarms raised so far: their entries' details.
fn alarms(world: &World) -> Vec<Value> {
    world
        .audit_of(None)
        .into_iter()
        .filter(|entry| entry["action"] == "write_audit_checkpoint" && entry["outcome"] == "refused")
        .map(|entry| entry["detail"].clone())
        .collect()
}

fn world_with_two_mailboxes() -> (World, String, String) {
    let world = World::new();
    let support = world.mailbox("support@example.com");
    let sales = world.mailbox("sales@example.com");
    (world, support, sales)
}

#[test]
fn a_segment_is_sealed_and_its_head_anchored_in_the_organisations_chain_only_when_it_moved() {
    let (world, support, sales) = world_with_two_mailboxes();
    world.node.maintain().expect("a checkpoint");
    assert!(anchors(&world, &support).is_empty(), "an empty segment is not anchored");

    write_in_segment(&world, &support, "update_conversation");
    write_in_segment(&world, &support, "label_conversation");
    world.node.maintain().expect("a checkpoint");
    let database = world.node.mailboxes.database(&support).unwrap();
    assert_eq!(database.database.count("SELECT COUNT(*) FROM audit_entries WHERE hash IS NULL"), 0, "sealed");
    let head = database.database.peek("SELECT hash FROM audit_entries WHERE seq = 2").unwrap();
    assert_eq!(anchors(&world, &support), [serde_json::json!({ "seq": 2, "hash": head })]);
    assert!(anchors(&world, &sales).is_empty());
    // The anchor is an entry like any other: keyed, sealed, checkpointed.
    let verification = world.verify();
    assert_eq!(verification["intact"], true, "{verification}");
    // Verification checks every segment from its anchored head.
    let segments = verification["segments"].as_array().unwrap();
    let of = |mailbox: &str| segments.iter().find(|segment| segment["mailbox_id"] == mailbox).unwrap().clone();
    assert_eq!(of(&support)["anchored"], serde_json::json!({ "seq": 2, "hash": head }));
    assert_eq!((of(&support)["intact"].clone(), of(&support)["checked"].clone()), (true.into(), 0.into()));
    assert_eq!((of(&sales)["anchored"].clone(), of(&sales)["intact"].clone()), (Value::Null, true.into()));

    world.node.maintain().expect("a checkpoint");
    assert_eq!(anchors(&world, &support).len(), 1, "the head did not move: no second anchor");
    write_in_segment(&world, &support, "assign_conversation");
    world.node.maintain().expect("a checkpoint");
    assert_eq!(anchors(&world, &support).last().unwrap()["seq"], 3);
    assert!(alarms(&world).is_empty());
}

#[test]
fn an_entry_altered_after_the_anchor_is_found_and_told_once_and_not_anchored() {
    let (world, support, _) = world_with_two_mailboxes();
    write_in_segment(&world, &support, "update_conversation");
    world.node.maintain();
    write_in_segment(&world, &support, "label_conversation");
    segment_sql(&world, &support, "UPDATE audit_entries SET action = 'nothing_happened' WHERE seq = 2");

    assert!(world.node.maintain().is_some(), "the organisation's chain is still checkpointed");
    let raised = alarms(&world);
    assert_eq!(raised.len(), 1, "{raised:?}");
    assert_eq!(raised[0]["fault"], "entry_mac");
    assert_eq!(raised[0]["first_bad_seq"], 2);
    assert!(raised[0]["problem"].as_str().unwrap().contains(&format!("mailbox {support}")), "{raised:?}");
    assert_eq!(anchors(&world, &support).len(), 1, "nothing after the fault is anchored");
    let feed = body(&world.admin("GET", "/api/me/notifications", None));
    let told = feed["notifications"].as_array().unwrap().iter().filter(|item| item["kind"] == "audit_chain_broken");
    assert_eq!(told.count(), 1, "{feed}");

    world.node.maintain();
    assert_eq!(alarms(&world).len(), 1, "the same fault is told once");
    let verification = world.verify();
    assert_eq!(verification["intact"], false, "the whole record is not intact: {verification}");
    assert_eq!(verification["fault"], "entry_mac");
    assert!(verification["problem"].as_str().unwrap().contains(&support), "{verification}");
    assert_eq!(verification["first_bad_seq"], Value::Null, "a segment's seq is not the organisation's");
}

#[test]
fn an_entry_altered_behind_the_anchor_is_found_by_walking_the_segment_itself() {
    let (world, support, _) = world_with_two_mailboxes();
    for action in ["update_conversation", "label_conversation", "assign_conversation"] {
        write_in_segment(&world, &support, action);
    }
    world.node.maintain();
    segment_sql(&world, &support, "UPDATE audit_entries SET actor = NULL WHERE seq = 1");
    // From its anchor (entry 3) the segment looks whole: what is behind it is
    // what a walk from the start is for, as for the organisation's chain.
    assert_eq!(world.verify()["intact"], true);
    let walked = body(&world.admin("GET", &format!("/api/audit/verify?mailbox_id={support}"), None));
    assert_eq!(walked["intact"], false, "{walked}");
    assert_eq!(walked["fault"], "entry_mac");
    assert_eq!(walked["first_bad_seq"], 1);
    assert!(walked["problem"].as_str().unwrap().contains(&support));

    let (world, support, sales) = world_with_two_mailboxes();
    write_in_segment(&world, &support, "update_conversation");
    world.node.maintain();
    let whole = body(&world.admin("GET", &format!("/api/audit/verify?mailbox_id={support}"), None));
    assert_eq!((whole["intact"].clone(), whole["checked"].clone()), (true.into(), 1.into()), "{whole}");
    assert_eq!(whole["segments"], serde_json::json!([]));
    let empty = body(&world.admin("GET", &format!("/api/audit/verify?mailbox_id={sales}"), None));
    assert_eq!((empty["intact"].clone(), empty["checked"].clone()), (true.into(), 0.into()));
    let unknown = world.admin("GET", "/api/audit/verify?mailbox_id=mbx_01M00000000000000000000000", None);
    assert_refused(&unknown, 400, "invalid_query_parameter");
    assert!(crate::support::text(&unknown).contains("mailbox_id"));
}

#[test]
fn a_segment_truncated_or_rewritten_below_its_anchored_head_is_found() {
    for (tampering, written_on, problem) in [
        ("DELETE FROM audit_entries WHERE seq = 2", false, "the segment's newest entries were deleted"),
        ("DELETE FROM audit_entries WHERE seq >= 1", false, "the segment's newest entries were deleted"),
        // An entry written on takes the deleted one's place: a different entry there.
        ("DELETE FROM audit_entries WHERE seq = 2", true, "the segment was rewritten"),
        ("UPDATE audit_entries SET hash = prev_hash WHERE seq = 2", true, "the segment was rewritten"),
    ] {
        let (world, support, _) = world_with_two_mailboxes();
        write_in_segment(&world, &support, "update_conversation");
        write_in_segment(&world, &support, "label_conversation");
        world.node.maintain();
        assert_eq!(anchors(&world, &support).len(), 1);
        segment_sql(&world, &support, tampering);
        if written_on {
            write_in_segment(&world, &support, "assign_conversation");
        }
        world.node.maintain();
        let raised = alarms(&world);
        assert_eq!(raised.len(), 1, "{tampering}: {raised:?}");
        assert_eq!(raised[0]["fault"], "segment_rewritten", "{tampering}");
        assert_eq!(raised[0]["first_bad_seq"], 2, "{tampering}");
        assert!(raised[0]["problem"].as_str().unwrap().contains(problem), "{tampering}: {raised:?}");
        assert_eq!(anchors(&world, &support).len(), 1, "{tampering}: no anchor past the fault");
    }
}

/// The columns of an entry but its place and seal, for copying it elsewhere.
const COPIED: &str =
    "at, actor, actor_kind, delegator, surface, action, object, outcome, detail, key_id, mac, mac_version, nonce";

#[test]
fn an_entry_copied_into_another_mailboxs_segment_fails_there() {
    let (world, support, sales) = world_with_two_mailboxes();
    write_in_segment(&world, &support, "update_conversation");
    write_in_segment(&world, &sales, "label_conversation");
    world.node.maintain();
    let row: Vec<String> = (0..13)
        .map(|index| {
            let column = COPIED.split(", ").nth(index).unwrap();
            world
                .node
                .mailboxes
                .database(&support)
                .unwrap()
                .database
                .peek(&format!("SELECT quote({column}) FROM audit_entries WHERE seq = 1"))
                .unwrap()
        })
        .collect();
    // Replayed at the tail of the other segment, unsealed, for its sealer to link.
    segment_sql(&world, &sales, &format!("INSERT INTO audit_entries (seq, {COPIED}) VALUES (2, {})", row.join(", ")));
    world.node.maintain();
    let raised = alarms(&world);
    assert_eq!(raised.len(), 1, "{raised:?}");
    assert_eq!(raised[0]["fault"], "entry_mac", "its MAC covers the mailbox it was written in");
    assert!(raised[0]["problem"].as_str().unwrap().contains(&sales));
    let sealed = world
        .node
        .mailboxes
        .database(&sales)
        .unwrap()
        .database
        .count("SELECT COUNT(*) FROM audit_entries WHERE seq = 2 AND hash IS NOT NULL");
    assert_eq!(sealed, 0, "never sealed in");
}

#[test]
fn a_segment_entry_copied_into_the_organisations_chain_is_never_sealed_there() {
    let (world, support, _) = world_with_two_mailboxes();
    write_in_segment(&world, &support, "update_conversation");
    let seq: i64 = world.node.database.count("SELECT MAX(seq) FROM audit_entries") + 1;
    let values = world
        .node
        .mailboxes
        .database(&support)
        .unwrap()
        .database
        .peek(&format!(
            "SELECT {} FROM audit_entries WHERE seq = 1",
            COPIED.split(", ").map(|column| format!("quote({column})")).collect::<Vec<_>>().join(" || ', ' || ")
        ))
        .unwrap();
    world.node.database.tamper(&format!("INSERT INTO audit_entries (seq, {COPIED}) VALUES ({seq}, {values})"));
    let sealing = world.node.seal();
    assert_eq!(sealing.sealed, 0);
    assert!(sealing.stopped.unwrap().contains("do not match its MAC"), "the copy fails where it lands");
    assert_eq!(world.verify()["fault"], "entry_mac");
}

#[test]
fn a_segment_keeps_exactly_the_columns_of_the_organisations_entries() {
    // The chain's statements run on either table, so the two schemas, written
    // in two migration directories, are held to each other here.
    let sorted = |mut columns: Vec<String>| {
        columns.sort();
        columns
    };
    let organisation = sorted(mailroom::testing::SqliteDatabase::migrated().column_names("audit_entries"));
    let segment = sorted(mailroom::testing::SqliteDatabase::for_a_mailbox().column_names("audit_entries"));
    assert_eq!(segment, organisation);
}

#[test]
fn each_run_checks_the_segments_checked_longest_ago_so_every_one_has_its_turn() {
    use mailroom::audit::segments::SEGMENTS_PER_RUN;
    let world = World::new();
    let mailboxes: Vec<String> = (0..12).map(|index| world.mailbox(&format!("desk-{index:02}@example.com"))).collect();
    for mailbox in &mailboxes {
        write_in_segment(&world, mailbox, "update_conversation");
    }
    let anchored = |world: &World| mailboxes.iter().filter(|mailbox| !anchors(world, mailbox).is_empty()).count();
    world.node.maintain();
    assert_eq!(anchored(&world), usize::try_from(SEGMENTS_PER_RUN).unwrap(), "a run checks a few");
    world.node.maintain();
    assert_eq!(anchored(&world), mailboxes.len(), "the next run checks those not checked yet");

    // A segment tampered with is found on its turn, whichever mailbox it is.
    let last = mailboxes.last().unwrap();
    segment_sql(&world, last, "UPDATE audit_entries SET action = 'nothing' WHERE seq = 1");
    write_in_segment(&world, last, "label_conversation");
    world.node.maintain();
    world.node.maintain();
    let raised = alarms(&world);
    assert_eq!(raised.len(), 1, "{raised:?}");
    assert!(raised[0]["problem"].as_str().unwrap().contains(last.as_str()));
}

#[test]
fn verification_checks_the_segments_a_page_at_a_time() {
    use mailroom::audit::segments::SEGMENTS_PER_VERIFY;
    let world = World::new();
    let mut mailboxes: Vec<String> =
        (0..SEGMENTS_PER_VERIFY + 4).map(|index| world.mailbox(&format!("desk-{index:02}@example.com"))).collect();
    mailboxes.sort();
    let first = world.verify();
    let ids = |page: &Value| -> Vec<String> {
        page["segments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|segment| segment["mailbox_id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(&first), mailboxes[..SEGMENTS_PER_VERIFY]);
    let after = first["next_segments_after"].as_str().unwrap();
    assert_eq!(after, mailboxes[SEGMENTS_PER_VERIFY - 1]);
    let second = body(&world.admin("GET", &format!("/api/audit/verify?segments_after={after}"), None));
    assert_eq!(ids(&second), mailboxes[SEGMENTS_PER_VERIFY..]);
    assert!(second.get("next_segments_after").is_none(), "{second}");
}

#[test]
fn a_segment_that_cannot_be_read_does_not_hold_the_others_turns() {
    use mailroom::audit::segments::SEGMENTS_PER_RUN;
    let world = World::new();
    let count = usize::try_from(SEGMENTS_PER_RUN).unwrap() + 1;
    let mut mailboxes: Vec<String> =
        (0..count).map(|index| world.mailbox(&format!("desk-{index:02}@example.com"))).collect();
    mailboxes.sort();
    for mailbox in &mailboxes {
        write_in_segment(&world, mailbox, "update_conversation");
    }
    // A whole run's worth, first in line, cannot be read at all (their
    // segments' table is gone): they must not be first in line for ever.
    let (broken, last) = mailboxes.split_at(count - 1);
    for mailbox in broken {
        segment_sql(&world, mailbox, "DROP TABLE audit_entries");
    }
    world.node.maintain();
    assert!(anchors(&world, &last[0]).is_empty(), "not its turn yet");
    world.node.maintain();
    assert_eq!(anchors(&world, &last[0]).len(), 1, "its turn came");
}

/// An administrator reads what was done to a mailbox's mail in its segment,
/// a page at a time: a mailbox whose database no write has made answers an
/// empty page (and makes none), an id that is no mailbox is refused naming
/// `mailbox_id`, and nobody else may read it.
#[test]
fn a_mailbox_s_segment_is_listed_newest_first_a_page_at_a_time() {
    let world = World::new();
    let support = world.mailbox("support@mailroom.test");
    let empty = body(&world.admin("GET", &format!("/api/audit?mailbox_id={support}"), None));
    assert_eq!(empty["entries"], serde_json::json!([]), "{empty}");
    assert!(world.node.mailboxes.database(&support).is_none(), "a read made no database");
    for fixture in ["plain", "latin1", "reply"] {
        world.deliver(fixture, "support@mailroom.test");
    }
    let first = body(&world.admin("GET", &format!("/api/audit?limit=2&mailbox_id={support}"), None));
    let entries = first["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{first}");
    assert!(entries.iter().all(|entry| entry["action"] == "receive_mail"), "{first}");
    assert!(entries[0]["seq"].as_i64() > entries[1]["seq"].as_i64(), "newest first");
    let cursor = first["next_cursor"].as_str().unwrap();
    let rest = body(&world.admin("GET", &format!("/api/audit?limit=2&mailbox_id={support}&cursor={cursor}"), None));
    assert_eq!(rest["entries"].as_array().map(Vec::len), Some(1), "{rest}");
    assert!(world.audit_of(None).iter().all(|entry| entry["action"] != "receive_mail"), "none in the organisation's");
    assert_refused(&world.admin("GET", "/api/audit?mailbox_id=mbx_nothing", None), 400, "invalid_query_parameter");
    let (_, someone) = world.person("someone@example.com");
    assert_refused(
        &world.call("GET", &format!("/api/audit?mailbox_id={support}"), Some(&someone), None),
        403,
        "missing_relation",
    );
}
