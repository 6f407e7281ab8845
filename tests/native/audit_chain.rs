//! The audit chain: every change recorded with who and what, linked by hashes
//! that reveal any alteration, deletion or reordering at the entry where it
//! happened, and contiguous under contention.

use std::cell::Cell;

use mailroom::audit::chain::{self as audit, VERIFY_PAGE};
use mailroom::core::context::ports::AuditRecord;
use mailroom::core::http::Surface;
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
    world.call(
        "POST",
        "/api/sessions",
        None,
        Some(json!({ "email": "x@example.com", "password": "wrong wrong wrong" })),
    );
    world
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
            "grant_relation",
            "sign_in"
        ]
    );
    for (index, entry) in entries.iter().enumerate() {
        assert_eq!(entry["seq"], index as i64 + 1);
        assert_eq!(entry["surface"], "rest");
    }
    assert_eq!(entries[0]["actor_kind"], "stranger", "setup is done by whoever holds the token");
    assert_eq!(entries[1]["actor"], world.admin_id, "a successful sign-in names who signed in");
    assert_eq!(entries[2]["actor"], world.admin_id);
    assert_eq!(entries[2]["actor_kind"], "person");
    assert_eq!(entries[7]["outcome"], "refused");
    assert_eq!(entries[7]["detail"]["code"], "not_found");
    assert_eq!(entries[8]["outcome"], "refused");
    assert!(entries[8].get("actor").is_none());
    assert_eq!(world.verify()["intact"], true);
    assert_eq!(world.verify()["checked"], 9);
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
        ("prev_hash", "'00'"),
        ("hash", "'00'"),
    ];
    for seq in [1, 5, 9] {
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
    assert!(verification["problem"].as_str().unwrap().contains("missing"));
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
fn verification_walks_a_long_chain_a_page_at_a_time() {
    let world = World::new();
    let existing = world.audit().len() as i64;
    let mut head = (existing, world.last_audit_entry()["hash"].as_str().unwrap().to_string());
    let total = VERIFY_PAGE + 700;
    let mut statements = Vec::new();
    for index in existing..total {
        let record = AuditRecord {
            at: index,
            actor: None,
            delegator: None,
            surface: Some("rest"),
            action: "sign_in".into(),
            object: None,
            outcome: "refused",
            detail: None,
        };
        let statement = audit::append(head.0, &head.1, &record);
        let hash = match statement.parameters.last() {
            Some(mailroom::core::storage::Value::Text(hash)) => hash.clone(),
            other => panic!("{other:?}"),
        };
        statements.push(statement);
        head = (head.0 + 1, hash);
    }
    futures_executor::block_on(world.node.database.execute(statements)).unwrap();

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
    assert_eq!(body(&world.admin("GET", "/api/audit/verify?after_seq=3", None))["verified_through"], 9);
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
    assert_eq!(seqs, [9, 8, 7, 6]);
    let cursor = first["next_cursor"].as_str().unwrap();
    let second = body(&world.admin("GET", &format!("/api/audit?limit=4&cursor={cursor}"), None));
    assert_eq!(second["entries"][0]["seq"], 5);
    let rest = body(&world.admin("GET", &format!("/api/audit?limit=200&cursor={cursor}"), None));
    assert!(rest["next_cursor"].is_null());
    assert_refused(&world.admin("GET", "/api/audit?cursor=bogus", None), 400, "invalid_query_parameter");
    assert_refused(&world.admin("GET", "/api/audit?limit=0", None), 400, "invalid_query_parameter");
    assert_refused(&world.admin("GET", "/api/audit?limit=201", None), 400, "invalid_query_parameter");
}

/// A database that lets another writer take the chain's next `seq` just before
/// the request under test commits, the first `races` times.
struct RacingDatabase<'a> {
    inner: &'a dyn Database,
    races: Cell<u32>,
}

impl Database for RacingDatabase<'_> {
    fn execute(&self, statements: Vec<Statement>) -> LocalBoxFuture<'_, Result<Vec<QueryResult>, StorageError>> {
        Box::pin(async move {
            let commits = statements.iter().any(|statement| statement.sql.starts_with("INSERT INTO audit_entries"));
            if commits && self.races.get() > 0 {
                self.races.set(self.races.get() - 1);
                let [head] = self.inner.execute(vec![audit::head()]).await?.try_into().unwrap();
                let (seq, hash) = audit::head_from(head.first())?;
                let rival = AuditRecord {
                    at: 0,
                    actor: None,
                    delegator: None,
                    surface: Some("rest"),
                    action: "sign_in".into(),
                    object: None,
                    outcome: "refused",
                    detail: None,
                };
                self.inner.execute(vec![audit::append(seq, &hash, &rival)]).await?;
            }
            self.inner.execute(statements).await
        })
    }
}

#[test]
fn a_commit_that_loses_the_race_for_its_seq_is_retried_and_nothing_is_lost() {
    let world = World::new();
    let racing = RacingDatabase { inner: &world.node.database, races: Cell::new(3) };
    let node = world.node_over(&racing);
    let created = futures_executor::block_on(dispatch(
        &node,
        &request("POST", "/api/teams").bearer(&world.admin_token).json(json!({ "name": "Contended" })),
        Surface::Rest,
    ));
    assert_eq!(created.status, 201, "{}", text(&created));
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM teams WHERE name = 'Contended'"), 1, "applied once");
    let entries = world.audit();
    assert_eq!(entries.iter().filter(|entry| entry["action"] == "create_team").count(), 1);
    assert_eq!(entries.iter().filter(|entry| entry["at"] == "1970-01-01T00:00:00.000Z").count(), 3, "three rivals");
    assert_eq!(world.verify()["intact"], true);
}

#[test]
fn every_content_read_is_recorded_and_no_other_read_is() {
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
        } else {
            assert_eq!(after, before, "{} reads no content, so it is not recorded", route.tool);
        }
    }
    assert!(content_reads >= 4, "body, original, attachment and search at least: {content_reads}");
}
