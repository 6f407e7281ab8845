//! Relations: the one door through which anything is held.

use serde_json::json;

use crate::support::*;

#[test]
fn a_grant_is_listed_and_a_revoke_takes_effect_on_the_next_request() {
    let world = World::new();
    let (ben, ben_token) = world.person("ben@example.com");
    let granted = world.grant(&ben, "org.admin", "org");
    assert_eq!(granted.status, 201, "{}", text(&granted));
    assert_eq!(body(&granted)["granted_by"], world.admin_id);
    assert_eq!(world.call("GET", "/api/people", Some(&ben_token), None).status, 200);

    let listed = body(&world.admin("GET", &format!("/api/relations?subject={ben}"), None));
    assert_eq!(listed["relations"].as_array().unwrap().len(), 1);
    assert_eq!(listed["relations"][0]["relation"], "org.admin");

    let again = world.grant(&ben, "org.admin", "org");
    assert_eq!(again.status, 201);
    assert_eq!(body(&again)["granted_at"], body(&granted)["granted_at"], "granting twice changes nothing");

    assert_eq!(world.revoke(&ben, "org.admin", "org").status, 200);
    assert_refused(&world.call("GET", "/api/people", Some(&ben_token), None), 403, "missing_relation");
    assert_refused(&world.revoke(&ben, "org.admin", "org"), 404, "not_found");
}

#[test]
fn malformed_tuples_are_refused_with_what_would_work() {
    let world = World::new();
    let check = |subject: &str, relation: &str, object: &str, status: u16, code: &str| {
        assert_refused(&world.grant(subject, relation, object), status, code);
    };
    let admin = world.admin_id.clone();
    check(&admin, "org.root", "org", 400, "unknown_relation");
    check(&admin, "org.admin", "mbx_00000000000000000000000000", 400, "wrong_object_for_relation");
    check(&admin, "mailbox.content.read", "org", 400, "wrong_object_for_relation");
    check(&admin, "mailbox.content.read", "mbx_00000000000000000000000000", 404, "not_found");
    check("everyone", "org.admin", "org", 400, "invalid_subject");
    check("tm_00000000000000000000000000", "org.admin", "org", 400, "invalid_subject");
    check("usr_00000000000000000000000000", "org.admin", "org", 404, "not_found");
    check("tm_00000000000000000000000000#member", "org.admin", "org", 404, "not_found");
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM relation_tuples"), 1);
}

#[test]
fn only_an_administrator_grants() {
    let world = World::new();
    let (ben, ben_token) = world.person("ben@example.com");
    let attempt = world.call(
        "POST",
        "/api/relations",
        Some(&ben_token),
        Some(json!({ "subject": ben, "relation": "org.admin", "object": "org" })),
    );
    assert_refused(&attempt, 403, "missing_relation");
    let entry = world.last_audit_entry();
    assert_eq!(entry["action"], "grant_relation");
    assert_eq!(entry["actor"], ben);
    assert_eq!(entry["outcome"], "refused");
    assert_eq!(entry["detail"]["code"], "missing_relation");
}
