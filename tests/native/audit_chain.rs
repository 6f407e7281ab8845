//! The audit chain: every change recorded with who and what, each entry keyed
//! with a secret the database does not hold and linked into a hash chain, so an
//! alteration, a deletion, a reordering, a truncated tail or a history rewritten
//! from the start is found, and appends that never contend (decision 0015).

use std::cell::Cell;

use mailroom::audit::chain::{self as audit, ATTEMPT_WINDOW_MS, SEAL_BATCH, VERIFY_PAGE};
use mailroom::audit::checkpoints;
use mailroom::core::context::ports::AuditRecord;
use mailroom::core::http::Surface;
use mailroom::core::node::AuditKey;
use mailroom::core::platform::Platform;
use mailroom::core::storage::{Database, LocalBoxFuture, QueryResult, Statement, StorageError};
use mailroom::dispatch::dispatch;
use mailroom::testing::{RequestExt, request};
use serde_json::json;

use crate::support::*;

/// A world with a few entries of every shape: successes, a refusal, a stranger.
fn busy_world() -> World {
    let world = World::new();
    let (ben, _) = world.person("ben@example.com");
    let team = world.team("Support");
    world.admin("PUT", &format!("/api/teams/{team}/members/{ben}"), None);
    world.grant(&format!("{team}#member"), "org.admin", "org");
    world.grant("usr_00000000000000000000000000", "org.admin", "org");
    world
}

fn record(at: i64, action: &str) -> AuditRecord {
    AuditRecord {
        at,
        actor: None,
        delegator: None,
        surface: Some("rest"),
        action: action.into(),
        object: None,
        outcome: "refused",
        detail: None,
        topic: None,
    }
}

fn problem(verification: &serde_json::Value) -> &str {
    verification["problem"].as_str().unwrap_or_default()
}

#[test]
fn every_changing_call_is_recorded_with_its_actor_and_outcome() {
    let world = busy_world();
    let entries = world.audit();
    let actions: Vec<&str> = entries.iter().map(|entry| entry["action"].as_str().unwrap()).collect();
    assert_eq!(
        actions,
        [
            "set_up_node",
            "sign_in",
            "create_person",
            "sign_in",
            "create_team",
            "add_team_member",
            "grant_relation",
            "grant_relation"
        ]
    );
    for (index, entry) in entries.iter().enumerate() {
        assert_eq!(entry["seq"], index as i64 + 1);
        assert_eq!(entry["surface"], "rest");
        assert_eq!(entry["key_id"], world.node.config.audit_key.id.as_str(), "written with the node's audit key");
    }
    assert_eq!(entries[0]["actor_kind"], "stranger", "setup is done by whoever holds the token");
    assert_eq!(entries[1]["actor"], world.admin_id, "a successful sign-in names who signed in");
    assert_eq!(entries[2]["actor"], world.admin_id);
    assert_eq!(entries[2]["actor_kind"], "person");
    assert_eq!(entries[7]["outcome"], "refused");
    assert_eq!(entries[7]["detail"]["code"], "not_found");
    assert_eq!(world.verify()["intact"], true);
    assert_eq!(world.verify()["checked"], 8);
    assert_eq!(world.verify()["awaiting_seal"], 0, "every answer that appended was sealed after it");
    for window in entries.windows(2) {
        assert_eq!(window[1]["prev_hash"], window[0]["hash"]);
    }
}

#[test]
fn reads_are_not_recorded() {
    let world = World::new();
    let before = world.audit().len();
    world.admin("GET", "/api/people", None);
    world.admin("GET", "/api/me", None);
    assert_eq!(world.audit().len(), before);
}

#[test]
fn an_entry_is_written_unsealed_with_its_change_and_sealed_after_the_answer() {
    let world = World::new();
    let response = world.node.send_without_sealing(
        request("POST", "/api/teams").bearer(&world.admin_token).json(json!({ "name": "Unsealed" })),
    );
    assert_eq!(response.status, 201);
    assert_eq!(response.commit_attempts, 1);
    assert!(response.seal_chain, "the answer asks to be sealed after");
    let waiting = world.node.database.count("SELECT COUNT(*) FROM audit_entries WHERE hash IS NULL");
    assert_eq!(waiting, 1, "written with the change, not yet linked");
    assert_eq!(world.verify()["awaiting_seal"], 1);
    assert_eq!(world.verify()["intact"], true, "an entry awaiting its seal is still checked against its MAC");
    assert_eq!(world.node.seal().sealed, 1);
    assert_eq!(world.verify()["awaiting_seal"], 0);
    assert_eq!(world.node.seal().sealed, 0, "sealing again changes nothing");
}

#[test]
fn altering_any_field_of_any_entry_is_found_at_that_entry() {
    let columns = [
        ("at", "at + 1"),
        ("actor", "'usr_01J00000000000000000000000'"),
        ("actor_kind", "'agent'"),
        ("delegator", "'usr_01J00000000000000000000000'"),
        ("surface", "'mcp'"),
        ("action", "'revoke_relation'"),
        ("object", "'tampered'"),
        ("outcome", "'tampered'"),
        ("detail", "'{}'"),
        ("key_id", "'0000000000000000'"),
        ("mac", "'00'"),
        ("prev_hash", "'00'"),
        ("hash", "'00'"),
    ];
    for seq in [1, 5, 8] {
        for (column, value) in columns {
            let world = busy_world();
            world.node.database.tamper(&format!("UPDATE audit_entries SET {column} = {value} WHERE seq = {seq}"));
            let verification = world.verify();
            assert_eq!(verification["intact"], false, "{column} at {seq}");
            assert_eq!(verification["first_bad_seq"], seq, "{column} at {seq}: {verification}");
        }
    }
}

#[test]
fn deleting_an_entry_is_found_where_it_was() {
    let world = busy_world();
    world.node.database.tamper("DELETE FROM audit_entries WHERE seq = 4");
    let verification = world.verify();
    assert_eq!(verification["intact"], false);
    assert_eq!(verification["first_bad_seq"], 4);
    assert!(problem(&verification).contains("missing"));
}

#[test]
fn deleting_an_entry_and_renumbering_the_rest_is_found_where_it_was() {
    let world = busy_world();
    world
        .node
        .database
        .tamper("DELETE FROM audit_entries WHERE seq = 4; UPDATE audit_entries SET seq = seq - 1 WHERE seq > 4;");
    let verification = world.verify();
    assert_eq!(verification["first_bad_seq"], 4);
}

#[test]
fn reordering_entries_is_found_at_the_first_moved_one() {
    let world = busy_world();
    world.node.database.tamper(
        "UPDATE audit_entries SET seq = -3 WHERE seq = 3; \
         UPDATE audit_entries SET seq = 3 WHERE seq = 6; \
         UPDATE audit_entries SET seq = 6 WHERE seq = -3;",
    );
    let verification = world.verify();
    assert_eq!(verification["intact"], false);
    assert_eq!(verification["first_bad_seq"], 3);
}

#[test]
fn an_entry_forged_by_a_database_writer_is_never_sealed_into_the_chain() {
    let world = busy_world();
    // Without the key, a forger can write every column but a MAC that verifies.
    world.node.database.tamper(
        "INSERT INTO audit_entries (seq, at, actor_kind, action, outcome, key_id, mac) \
         SELECT MAX(seq) + 1, 0, 'stranger', 'grant_relation', 'ok', key_id, mac FROM audit_entries",
    );
    let sealing = world.node.seal();
    assert_eq!(sealing.sealed, 0);
    assert!(sealing.stopped.unwrap_or_default().contains("MAC"));
    let verification = world.verify();
    assert_eq!(verification["first_bad_seq"], 9);
    assert!(problem(&verification).contains("MAC"), "{verification}");
}

#[test]
fn each_of_five_tamperings_is_found_against_the_checkpoint_kept_outside_the_database() {
    // An edited entry, a deleted middle entry, two entries swapped, a truncated
    // tail, and a history rewritten from the start with hashes recomputed as an
    // attacker without the key can (the unkeyed scheme entries had before).
    let tamperings: [Tampering; 5] = [
        ("edited", "UPDATE audit_entries SET object = 'elsewhere' WHERE seq = 5", |v| v["first_bad_seq"] == 5),
        ("deleted", "DELETE FROM audit_entries WHERE seq = 4", |v| v["first_bad_seq"] == 4),
        (
            "swapped",
            "UPDATE audit_entries SET seq = -1 WHERE seq = 2; UPDATE audit_entries SET seq = 2 WHERE seq = 3; \
             UPDATE audit_entries SET seq = 3 WHERE seq = -1;",
            |v| v["first_bad_seq"] == 2,
        ),
        ("truncated", "DELETE FROM audit_entries WHERE seq > 6", |v| {
            v["first_bad_seq"] == 7 && problem(v).starts_with("truncated after checkpoint")
        }),
        ("rewritten", "", |v| problem(v).contains("checkpoint") || problem(v).contains("predate")),
    ];
    for (name, sql, found) in tamperings {
        let world = busy_world();
        let checkpoint = world.admin("POST", "/api/audit/checkpoints", None);
        assert_eq!(checkpoint.status, 201, "{}", text(&checkpoint));
        let kept = body(&checkpoint);
        assert_eq!(kept["seq"], 8, "the checkpoint is of the head before its own entry");
        assert_eq!(world.verify()["intact"], true, "{name}: intact before");
        assert_eq!(world.verify()["checkpoint"]["seq"], 8);
        if name == "rewritten" {
            rewrite_without_the_key(&world);
        } else {
            world.node.database.tamper(sql);
        }
        let verification = world.verify();
        assert_eq!(verification["intact"], false, "{name}: {verification}");
        assert!(found(&verification), "{name}: {verification}");
    }
}

/// A way of tampering with the chain: its name, its SQL, and whether a
/// verification found it.
type Tampering = (&'static str, &'static str, fn(&serde_json::Value) -> bool);

/// Rewrites the whole chain as someone who can write the database but does not
/// hold the key would: every entry relabelled as written before the chain was
/// keyed, one altered, and every hash recomputed with the unkeyed scheme.
fn rewrite_without_the_key(world: &World) {
    world.node.database.tamper("UPDATE audit_entries SET key_id = NULL, mac = NULL, object = 'forged' WHERE seq = 3");
    world.node.database.tamper("UPDATE audit_entries SET key_id = NULL, mac = NULL");
    let rows = world.node.database.count("SELECT COUNT(*) FROM audit_entries");
    let mut previous = audit::GENESIS_HASH.to_string();
    for seq in 1..=rows {
        let hash = world.node.database.legacy_hash(seq, &previous);
        world
            .node
            .database
            .tamper(&format!("UPDATE audit_entries SET prev_hash = '{previous}', hash = '{hash}' WHERE seq = {seq}"));
        previous = hash;
    }
}

#[test]
fn a_checkpoint_not_signed_by_this_node_is_found() {
    let world = busy_world();
    assert_eq!(world.admin("POST", "/api/audit/checkpoints", None).status, 201);
    let mut kept: serde_json::Value =
        serde_json::from_slice(world.node.blobs.objects.borrow().get(checkpoints::LATEST_CHECKPOINT_KEY).unwrap())
            .unwrap();
    kept["seq"] = json!(2);
    world
        .node
        .blobs
        .objects
        .borrow_mut()
        .insert(checkpoints::LATEST_CHECKPOINT_KEY.into(), serde_json::to_vec(&kept).unwrap());
    let verification = world.verify();
    assert_eq!(verification["intact"], false);
    assert!(problem(&verification).contains("signature"), "{verification}");
}

#[test]
fn the_scheduled_upkeep_seals_and_keeps_a_checkpoint_when_the_head_moved() {
    let world = busy_world();
    let first = world.node.maintain().expect("a checkpoint");
    assert_eq!(first.seq, 8);
    assert!(world.node.blobs.objects.borrow().contains_key(&checkpoints::checkpoint_key(8)));
    assert_eq!(world.node.maintain(), Some(first.clone()), "the head did not move: the same checkpoint");
    world.team("Later");
    let second = world.node.maintain().expect("a checkpoint");
    assert_eq!(second.seq, 9);
    assert_eq!(world.verify()["checkpoint"]["seq"], 9);
}

#[test]
fn keys_rotate_and_every_entry_verifies_with_the_key_it_names() {
    let mut world = busy_world();
    let old = world.node.config.audit_key.clone();
    world.node.config.audit_key = AuditKey::new(b"the next audit key, after a rotation".to_vec());
    world.node.config.previous_audit_keys = vec![old.clone()];
    world.team("After the rotation");
    let entries = world.audit();
    assert_eq!(entries.first().unwrap()["key_id"], old.id.as_str());
    assert_eq!(entries.last().unwrap()["key_id"], world.node.config.audit_key.id.as_str());
    assert_eq!(world.verify()["intact"], true, "{}", world.verify());
    world.node.config.previous_audit_keys.clear();
    let forgotten = world.verify();
    assert_eq!(forgotten["first_bad_seq"], 1, "without the old key its entries cannot be verified: {forgotten}");
}

#[test]
fn entries_from_before_the_chain_was_keyed_still_verify_before_the_keyed_ones() {
    let world = World::new();
    // The chain as a node wrote it before it was keyed: no key, no MAC (and so no
    // nonce or MAC version), unkeyed hashes.
    world.node.database.tamper("UPDATE audit_entries SET key_id = NULL, mac = NULL, nonce = NULL, mac_version = NULL");
    let rows = world.node.database.count("SELECT COUNT(*) FROM audit_entries");
    let mut previous = audit::GENESIS_HASH.to_string();
    for seq in 1..=rows {
        let hash = world.node.database.legacy_hash(seq, &previous);
        world
            .node
            .database
            .tamper(&format!("UPDATE audit_entries SET prev_hash = '{previous}', hash = '{hash}' WHERE seq = {seq}"));
        previous = hash;
    }
    world.team("Keyed from here");
    let verification = world.verify();
    assert_eq!(verification["intact"], true, "{verification}");
    assert_eq!(verification["checked"], rows + 1);
}

#[test]
fn verification_walks_a_long_chain_a_page_at_a_time() {
    let world = World::new();
    let existing = world.audit().len() as i64;
    let total = VERIFY_PAGE + 700;
    let statements: Vec<Statement> = (existing..total)
        .map(|index| audit::append(&world.node.config.audit_key, &record(index, "sign_in"), &world.node.platform))
        .collect();
    futures_executor::block_on(world.node.database.execute(statements)).unwrap();
    for _ in 0..(total / SEAL_BATCH + 1) {
        world.node.seal();
    }

    let first = world.verify();
    assert_eq!(first["intact"], true);
    assert_eq!(first["checked"], VERIFY_PAGE);
    assert_eq!(first["next_after_seq"], VERIFY_PAGE);
    let second = body(&world.admin("GET", &format!("/api/audit/verify?after_seq={VERIFY_PAGE}"), None));
    assert_eq!(second["intact"], true);
    assert!(second["next_after_seq"].is_null());
    assert_eq!(second["verified_through"], second["head"]["seq"]);

    world.node.database.tamper(&format!("UPDATE audit_entries SET at = 0 WHERE seq = {}", VERIFY_PAGE + 10));
    let tampered = body(&world.admin("GET", &format!("/api/audit/verify?after_seq={VERIFY_PAGE}"), None));
    assert_eq!(tampered["first_bad_seq"], VERIFY_PAGE + 10);
}

#[test]
fn verification_takes_after_seq_as_the_whole_number_its_declaration_says() {
    let world = busy_world();
    assert_eq!(body(&world.admin("GET", "/api/audit/verify?after_seq=0", None))["intact"], true);
    let from_three = body(&world.admin("GET", "/api/audit/verify?after_seq=3", None));
    assert_eq!(from_three["intact"], true, "{from_three}");
    assert_eq!(from_three["verified_through"], from_three["head"]["seq"], "{from_three}");
    // The schema's maximum is accepted: a client generated from it is never refused.
    let declared =
        mailroom_contract::registry().route(mailroom_contract::RouteId::VerifyAuditChain).query_parameters[0];
    let maximum = declared.schema()["maximum"].as_i64().unwrap();
    assert_eq!(world.admin("GET", &format!("/api/audit/verify?after_seq={maximum}"), None).status, 200);
    // Refused by the dispatcher from the declaration: the handler no longer checks,
    // so a declaration that took any text would answer these with a 500.
    for value in ["-1", "x", "1.5", "99999999999999999999"] {
        let refused = world.admin("GET", &format!("/api/audit/verify?after_seq={value}"), None);
        assert_refused(&refused, 400, "invalid_query_parameter");
        assert!(text(&refused).contains("a whole number, 0 or more"), "{value}: {}", text(&refused));
    }
}

#[test]
fn the_audit_list_pages_newest_first_with_an_opaque_cursor() {
    let world = busy_world();
    let first = body(&world.admin("GET", "/api/audit?limit=4", None));
    let seqs: Vec<i64> =
        first["entries"].as_array().unwrap().iter().map(|entry| entry["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, [8, 7, 6, 5]);
    let cursor = first["next_cursor"].as_str().unwrap();
    let second = body(&world.admin("GET", &format!("/api/audit?limit=4&cursor={cursor}"), None));
    assert_eq!(second["entries"][0]["seq"], 4);
    let rest = body(&world.admin("GET", &format!("/api/audit?limit=200&cursor={cursor}"), None));
    assert!(rest["next_cursor"].is_null());
    assert_refused(&world.admin("GET", "/api/audit?cursor=bogus", None), 400, "invalid_query_parameter");
    assert_refused(&world.admin("GET", "/api/audit?limit=0", None), 400, "invalid_query_parameter");
    assert_refused(&world.admin("GET", "/api/audit?limit=201", None), 400, "invalid_query_parameter");
}

/// A database that lets another writer append to the chain just before the
/// request under test commits, the first `races` times.
struct RacingDatabase<'a> {
    inner: &'a dyn Database,
    key: AuditKey,
    platform: &'a dyn Platform,
    races: Cell<u32>,
}

impl Database for RacingDatabase<'_> {
    fn execute(&self, statements: Vec<Statement>) -> LocalBoxFuture<'_, Result<Vec<QueryResult>, StorageError>> {
        Box::pin(async move {
            let commits = statements.iter().any(|statement| statement.sql.starts_with("INSERT INTO audit_entries"));
            if commits && self.races.get() > 0 {
                self.races.set(self.races.get() - 1);
                self.inner.execute(vec![audit::append(&self.key, &record(0, "sign_in"), self.platform)]).await?;
            }
            self.inner.execute(statements).await
        })
    }
}

#[test]
fn a_writer_that_another_overtakes_still_commits_at_once_and_nothing_is_lost() {
    let world = World::new();
    let racing = RacingDatabase {
        inner: &world.node.database,
        key: world.node.config.audit_key.clone(),
        platform: &world.node.platform,
        races: Cell::new(3),
    };
    let node = world.node_over(&racing);
    let created = futures_executor::block_on(dispatch(
        &node,
        &request("POST", "/api/teams").bearer(&world.admin_token).json(json!({ "name": "Contended" })),
        Surface::Rest,
    ));
    assert_eq!(created.status, 201, "{}", text(&created));
    assert_eq!(created.commit_attempts, 1, "no race for a place in the chain, so no retry");
    assert_eq!(created.round_trips, 2);
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM teams WHERE name = 'Contended'"), 1, "applied once");
    world.node.seal();
    let entries = world.audit();
    assert_eq!(entries.iter().filter(|entry| entry["action"] == "create_team").count(), 1);
    assert_eq!(entries.iter().filter(|entry| entry["at"] == "1970-01-01T00:00:00.000Z").count(), 1, "the rival's");
    assert_eq!(world.verify()["intact"], true);
}

#[test]
fn every_content_read_and_every_stream_opened_is_recorded_and_no_other_read_is() {
    let world = World::new();
    let mut content_reads = 0;
    for route in mailroom_contract::registry().routes() {
        if route.method != mailroom_contract::Method::Get {
            continue;
        }
        let (request, expected_status) = crate::budget::fixture(&world, route.id);
        let before = world.node.database.count("SELECT COUNT(*) FROM audit_entries");
        let response = world.node.send(request);
        assert_eq!(response.status, expected_status, "{}: {}", route.tool, text(&response));
        let after = world.node.database.count("SELECT COUNT(*) FROM audit_entries");
        if route.reaches_content {
            assert_eq!(after, before + 1, "{} reaches content, so it is recorded", route.tool);
            let entry = world.last_audit_entry();
            assert_eq!(entry["action"], route.tool);
            assert_eq!(entry["outcome"], "ok");
            content_reads += 1;
        } else if route.produces == mailroom_contract::route::Produces::Live {
            assert_eq!(after, before + 1, "{} opens a stream, so it is recorded", route.tool);
            assert_eq!(world.last_audit_entry()["action"], route.tool);
        } else {
            assert_eq!(after, before, "{} reads no content, so it is not recorded", route.tool);
        }
    }
    assert!(content_reads >= 4, "body, original, attachment and search at least: {content_reads}");
}

#[test]
fn refused_attempts_without_a_credential_are_counted_not_written_and_folded_in_a_window_at_a_time() {
    let mut world = World::new();
    let (ben, _) = world.person("ben@example.com");
    let entries = world.node.database.count("SELECT COUNT(*) FROM audit_entries");
    // A flood from many addresses: wrong pairing codes and wrong passwords, some
    // of them rate limited.
    for attempt in 0..300 {
        let address = format!("198.51.100.{}", attempt % 40);
        let mut pair = request("POST", "/api/agents/pair").json(json!({ "code": format!("mr_pair_{attempt}") }));
        pair.client_address = Some(address.clone());
        assert!([401, 429].contains(&world.node.send(pair).status));
        let mut sign_in = request("POST", "/api/sessions")
            .json(json!({ "email": "ben@example.com", "password": format!("guess number {attempt}") }));
        sign_in.client_address = Some(address);
        assert!([401, 429].contains(&world.node.send(sign_in).status));
        // Meanwhile the administrator's writes go through at once.
        if attempt % 50 == 0 {
            let created = world.admin("POST", "/api/teams", Some(json!({ "name": format!("Team {attempt}") })));
            assert_eq!(created.status, 201, "{}", text(&created));
            assert_eq!(created.commit_attempts, 1);
        }
    }
    let written = world.node.database.count("SELECT COUNT(*) FROM audit_entries") - entries;
    assert_eq!(written, 6, "only the administrator's six writes: the flood wrote no entry");
    let summaries = world.node.database.count("SELECT COUNT(*) FROM audit_attempts");
    assert!(summaries <= 4, "counted per window, action and code: {summaries}");
    assert_eq!(world.node.database.count("SELECT SUM(attempts) FROM audit_attempts"), 600);
    assert_eq!(world.node.maintain().map(|checkpoint| checkpoint.seq), Some(entries + 6), "the window is still open");
    world.node.platform.advance(ATTEMPT_WINDOW_MS);
    world.node.maintain();
    // The administrator's access token has aged out meanwhile.
    world.admin_token = sign_in(&world.node, ADMIN_EMAIL, ADMIN_PASSWORD).0;
    let folded: Vec<serde_json::Value> =
        world.audit().into_iter().filter(|entry| entry["detail"]["attempts"].is_i64()).collect();
    assert_eq!(folded.len() as i64, summaries, "one entry per window, action and code");
    let total: i64 = folded.iter().map(|entry| entry["detail"]["attempts"].as_i64().unwrap()).sum();
    assert_eq!(total, 600, "every attempt is accounted for");
    assert!(folded.iter().all(|entry| entry["outcome"] == "refused" && entry["actor_kind"] == "stranger"));
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM audit_attempts"), 0);
    assert_eq!(world.verify()["intact"], true);
    let _ = ben;
}

// ---- Replays, truncations and rollbacks (decision 0027) ----

/// The columns a copy of an entry carries: all but its place and its seal.
fn entry_columns_but_place_and_seal(world: &World) -> String {
    let columns = world.node.database.column_names("audit_entries");
    columns
        .into_iter()
        .filter(|column| !["seq", "prev_hash", "hash"].contains(&column.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Writes a copy of entry `seq`, as a database writer can, at the end of the
/// chain and waiting for its seal, as if it had just been written.
fn copy_to_the_tail(world: &World, seq: i64) {
    let columns = entry_columns_but_place_and_seal(world);
    world.node.database.tamper(&format!(
        "INSERT INTO audit_entries (seq, {columns}) \
         SELECT (SELECT MAX(seq) + 1 FROM audit_entries), {columns} FROM audit_entries WHERE seq = {seq}"
    ));
}

#[test]
fn a_copy_of_a_real_entry_replayed_at_the_tail_is_never_sealed_and_is_named() {
    let world = busy_world();
    // Entry 7 grants a relation; a database writer replays it as if it had
    // happened again, waiting for the sealer as a new entry would.
    assert_eq!(world.audit()[6]["action"], "grant_relation");
    copy_to_the_tail(&world, 7);
    let sealing = world.node.seal();
    assert_eq!(sealing.sealed, 0, "the sealer does not seal a copy in: {sealing:?}");
    assert!(sealing.stopped.unwrap_or_default().contains("copy of entry 7"));
    let verification = world.verify();
    assert_eq!(verification["intact"], false, "{verification}");
    assert_eq!(verification["first_bad_seq"], 9);
    assert_eq!(verification["fault"], "copied_entry");
    assert!(problem(&verification).contains("copy of entry 7"), "{verification}");
}

#[test]
fn a_real_entry_moved_or_copied_to_another_place_fails_there() {
    // Copied with its seal over another entry's place: its seal covers its own place.
    let world = busy_world();
    let columns = entry_columns_but_place_and_seal(&world);
    world.node.database.tamper(&format!(
        "DELETE FROM audit_entries WHERE seq = 6; \
         INSERT INTO audit_entries (seq, prev_hash, hash, {columns}) \
         SELECT 6, prev_hash, hash, {columns} FROM audit_entries WHERE seq = 3;"
    ));
    let verification = world.verify();
    assert_eq!(verification["first_bad_seq"], 6, "{verification}");
    assert_eq!(verification["fault"], "copied_entry", "{verification}");

    // Moved from its place to the end, waiting as if new: a gap where it was.
    let world = busy_world();
    copy_to_the_tail(&world, 3);
    world.node.database.tamper("DELETE FROM audit_entries WHERE seq = 3");
    let verification = world.verify();
    assert_eq!((verification["first_bad_seq"].clone(), verification["fault"].clone()), (json!(3), json!("seq_gap")));

    // Moved to the end with its seal kept: its seal names another place.
    let world = busy_world();
    world.node.database.tamper("UPDATE audit_entries SET seq = 9 WHERE seq = 8");
    world.team("After the move");
    let verification = world.verify();
    assert_eq!(verification["first_bad_seq"], 8, "{verification}");
}

#[test]
fn truncating_the_tail_is_found_even_when_the_checkpoints_in_r2_are_deleted_too() {
    let world = busy_world();
    assert_eq!(world.node.maintain().and_then(|checkpoint| checkpoint.number), Some(1));
    world.team("Nine");
    world.team("Ten");
    let second = world.node.maintain().expect("a second checkpoint");
    assert_eq!((second.number, second.seq), (Some(2), 10));
    // The newest keyed entries go, and every checkpoint object in R2 with them.
    world.node.database.tamper("DELETE FROM audit_entries WHERE seq > 8");
    world.node.blobs.objects.borrow_mut().retain(|key, _| !key.starts_with("audit/checkpoints/"));
    let verification = world.verify();
    assert_eq!(verification["intact"], false, "{verification}");
    assert_eq!(verification["fault"], "rolled_back_against_d1", "{verification}");
    assert_eq!(verification["database_checkpoint"]["number"], 2);
}

#[test]
fn truncating_the_tail_is_found_even_when_r2_is_rolled_back_to_an_older_checkpoint() {
    let world = busy_world();
    world.node.maintain().expect("a first checkpoint");
    let first = world.node.blobs.objects.borrow().get(checkpoints::LATEST_CHECKPOINT_KEY).cloned().unwrap();
    world.team("Nine");
    world.node.maintain().expect("a second checkpoint");
    world.team("Ten");
    assert_eq!(world.node.maintain().and_then(|checkpoint| checkpoint.number), Some(3));
    // Back to checkpoint 1 in R2, and the chain cut to match it.
    world.node.database.tamper("DELETE FROM audit_entries WHERE seq > 8");
    world.node.blobs.objects.borrow_mut().insert(checkpoints::LATEST_CHECKPOINT_KEY.into(), first);
    for seq in [9, 10] {
        world.node.blobs.objects.borrow_mut().remove(&checkpoints::checkpoint_key(seq));
    }
    let verification = world.verify();
    assert_eq!(verification["intact"], false, "{verification}");
    assert_eq!(verification["fault"], "rolled_back_against_d1", "{verification}");
    assert!(problem(&verification).contains("2 behind D1's 3"), "{verification}");
}

#[test]
fn tampering_with_d1s_record_of_the_checkpoints_is_found() {
    let checkpointed_twice = || {
        let world = busy_world();
        world.node.maintain().expect("a first checkpoint");
        world.team("Nine");
        world.node.maintain().expect("a second checkpoint");
        world
    };
    let fault = |world: &World| world.verify()["fault"].as_str().unwrap_or("intact").to_string();

    // Every row gone: the object store still holds checkpoint 2.
    let world = checkpointed_twice();
    world.node.database.tamper("DELETE FROM audit_checkpoints");
    assert_eq!(fault(&world), "rolled_back_against_r2");

    // Rolled back by one, as a write in progress would leave it, and the tail
    // cut: the newer record, R2's, is what the chain must still reach.
    let world = checkpointed_twice();
    world
        .node
        .database
        .tamper("DELETE FROM audit_checkpoints WHERE number = 2; DELETE FROM audit_entries WHERE seq > 8");
    assert_eq!(fault(&world), "truncated");

    // The record altered: its signature no longer verifies.
    let world = checkpointed_twice();
    world
        .node
        .database
        .tamper("UPDATE audit_checkpoints SET checkpoint = replace(checkpoint, '\"seq\":9', '\"seq\":8')");
    assert_eq!(fault(&world), "checkpoint_signature");

    // An older genuine checkpoint moved up to pass for the latest.
    let world = checkpointed_twice();
    world.node.database.tamper("INSERT INTO audit_checkpoints (number, seq, checkpoint) SELECT 3, seq, checkpoint FROM audit_checkpoints WHERE number = 1");
    assert_eq!(fault(&world), "checkpoint_signature");

    // Left alone, the two records agree.
    let world = checkpointed_twice();
    assert_eq!(fault(&world), "intact");
    assert_eq!(world.verify()["database_checkpoint"], world.verify()["checkpoint"]);
}

#[test]
fn a_checkpoint_is_never_signed_over_a_chain_that_does_not_verify_and_administrators_hear_of_it() {
    let world = busy_world();
    let first = world.node.maintain().expect("a first checkpoint");
    world.team("Nine");
    world.team("Ten");
    // An entry after the latest checkpoint is altered in D1.
    world.node.database.tamper("UPDATE audit_entries SET object = 'elsewhere' WHERE seq = 9");
    let objects_before = world.node.blobs.objects.borrow().clone();

    assert_eq!(world.node.maintain(), None, "the upkeep signs nothing");
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM audit_checkpoints"), 1);
    assert_eq!(*world.node.blobs.objects.borrow(), objects_before, "nothing new in R2");
    let alarms: Vec<serde_json::Value> = world
        .audit()
        .into_iter()
        .filter(|entry| entry["action"] == "write_audit_checkpoint" && entry["outcome"] == "refused")
        .collect();
    assert_eq!(alarms.len(), 1, "the alarm is in the chain");
    assert_eq!(alarms[0]["detail"]["code"], "audit_chain_broken");
    assert_eq!(alarms[0]["detail"]["fault"], "entry_mac");
    assert_eq!(alarms[0]["detail"]["first_bad_seq"], 9);

    let feed = body(&world.admin("GET", "/api/me/notifications", None));
    let notified: Vec<&serde_json::Value> =
        feed["notifications"].as_array().unwrap().iter().filter(|item| item["kind"] == "audit_chain_broken").collect();
    assert_eq!(notified.len(), 1, "{feed}");
    assert!(notified[0]["detail"].as_str().unwrap().contains("entry 9"), "{feed}");
    assert!(notified[0].get("mailbox_id").is_none(), "it is the organisation's, not a mailbox's");
    // An agent reading its administrator sponsor's feed is not told: it holds no org.admin.
    let (_, agents_token) = world.mint(&world.admin_id, &["notifications.read"], json!([]));
    let agents = body(&world.call("GET", "/api/me/notifications", Some(&agents_token), None));
    assert!(
        agents["notifications"].as_array().unwrap().iter().all(|item| item["kind"] != "audit_chain_broken"),
        "{agents}"
    );
    // Someone who administers nothing is not told.
    let (_, cleos_token) = world.person("cleo@example.com");
    let cleos = body(&world.call("GET", "/api/me/notifications", Some(&cleos_token), None));
    assert!(
        cleos["notifications"].as_array().unwrap().iter().all(|item| item["kind"] != "audit_chain_broken"),
        "{cleos}"
    );

    // The next run finds the same fault: no second alarm.
    assert_eq!(world.node.maintain(), None);
    let alarms = world.audit().into_iter().filter(|entry| entry["detail"]["code"] == "audit_chain_broken").count();
    assert_eq!(alarms, 1);
    let feed = body(&world.admin("GET", "/api/me/notifications", None));
    assert_eq!(
        feed["notifications"].as_array().unwrap().iter().filter(|item| item["kind"] == "audit_chain_broken").count(),
        1
    );

    // On demand, the same: refused, nothing signed, and the refusal says what failed.
    let refused = world.admin("POST", "/api/audit/checkpoints", None);
    assert_refused(&refused, 409, "audit_chain_broken");
    assert!(text(&refused).contains("Entry 9: its contents do not match its MAC"), "{}", text(&refused));
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM audit_checkpoints"), 1);
    let entry = world.last_audit_entry();
    assert_eq!(entry["action"], "write_audit_checkpoint");
    assert_eq!(entry["detail"]["code"], "audit_chain_broken");
    assert_eq!(entry["detail"]["attempted"]["fault"], "entry_mac");
    assert_eq!(world.verify()["checkpoint"]["number"], first.number.unwrap());
}

#[test]
fn a_checkpoint_is_not_signed_while_d1_and_r2_disagree() {
    let world = busy_world();
    world.node.maintain().expect("a first checkpoint");
    world.team("Nine");
    world.node.maintain().expect("a second checkpoint");
    world.team("Ten");
    world.node.blobs.objects.borrow_mut().retain(|key, _| !key.starts_with("audit/checkpoints/"));
    assert_refused(&world.admin("POST", "/api/audit/checkpoints", None), 409, "audit_chain_broken");
    assert_eq!(world.node.maintain(), None);
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM audit_checkpoints"), 2, "nothing signed");
    assert!(!world.node.blobs.objects.borrow().contains_key(checkpoints::LATEST_CHECKPOINT_KEY));
}

#[test]
fn a_checkpoint_half_written_is_completed_and_the_count_goes_on() {
    // D1 took checkpoint 2, and R2 failed before it did: the two are one apart,
    // which is what a write in progress looks like, and the upkeep completes it.
    let world = busy_world();
    world.node.maintain().expect("a first checkpoint");
    world.team("Nine");
    world.node.blobs.refusing_puts.set(true);
    assert_eq!(world.admin("POST", "/api/audit/checkpoints", None).status, 500);
    world.node.blobs.refusing_puts.set(false);
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM audit_checkpoints"), 2);
    assert_eq!(world.verify()["intact"], true, "one apart is a write in progress: {}", world.verify());
    let completed = world.node.maintain().expect("a checkpoint");
    assert_eq!(completed.number, Some(3), "the count goes on past the one completed");
    let verification = world.verify();
    assert_eq!(verification["checkpoint"]["number"], 3);
    assert_eq!(verification["database_checkpoint"], verification["checkpoint"]);
}

#[test]
fn the_upkeep_walks_from_the_latest_checkpoint_and_full_verification_still_finds_what_is_behind_it() {
    let world = busy_world();
    world.node.maintain().expect("a first checkpoint");
    // Altered behind checkpoint 1: the next checkpoint still only vouches for
    // what checkpoint 1 did (its seal chains back to checkpoint 1's head), and
    // verification from the start names the alteration against either.
    world.node.database.tamper("UPDATE audit_entries SET object = 'elsewhere' WHERE seq = 4");
    world.team("Nine");
    let second = world.node.maintain().expect("a second checkpoint: the walk starts at checkpoint 1");
    assert_eq!(second.seq, 9);
    let verification = world.verify();
    assert_eq!((verification["first_bad_seq"].clone(), verification["fault"].clone()), (json!(4), json!("entry_mac")));
}

#[test]
fn entries_written_before_nonces_still_verify_and_a_copy_of_one_is_refused_after_the_first_with_one() {
    let world = busy_world();
    // The chain as a node wrote it before entries carried nonces, sealed as it sealed them then.
    world.node.database.as_written_before_nonces(&world.node.config.audit_key);
    assert_eq!(world.node.seal().sealed, 8);
    assert_eq!(world.verify()["intact"], true, "{}", world.verify());
    world.team("After the upgrade");
    let verification = world.verify();
    assert_eq!(
        (verification["intact"].clone(), verification["checked"].clone()),
        (json!(true), json!(9)),
        "{verification}"
    );
    // A copy of an older entry cannot pass for one written before nonces once
    // an entry with one was.
    copy_to_the_tail(&world, 7);
    assert!(world.node.seal().stopped.unwrap_or_default().contains("predate the nonces"));
    let verification = world.verify();
    assert_eq!((verification["first_bad_seq"].clone(), verification["fault"].clone()), (json!(10), json!("entry_mac")));
}
