//! Reading the audit trail narrowed: by who acted, what they did, and a
//! window of time, each walked by its own index, and paged with the same
//! narrowing asked again.

use mailroom::core::platform::Platform;
use mailroom::core::time::rfc3339;
use serde_json::json;

use crate::support::*;

#[test]
fn the_audit_list_narrows_to_who_acted_what_they_did_and_when() {
    let world = World::new();
    let (ben, ben_token) = world.person("ben@example.com");
    world.node.platform.advance(60_000);
    let window_opens = Platform::now_ms(&world.node.platform);
    world.team("Support");
    // Ben tries what only an administrator may: refused, and recorded as his.
    let refused = world.call("POST", "/api/teams", Some(&ben_token), Some(json!({ "name": "Ben's" })));
    assert_eq!(refused.status, 403, "{}", text(&refused));
    world.team("Billing");
    let window_closes = Platform::now_ms(&world.node.platform);
    world.node.platform.advance(60_000);
    world.team("Sales");

    let listed = |query: &str| -> Vec<serde_json::Value> {
        let answer = world.admin("GET", &format!("/api/audit?limit=200&{query}"), None);
        assert_eq!(answer.status, 200, "{query}: {}", text(&answer));
        body(&answer)["entries"].as_array().unwrap().clone()
    };
    let field = |entries: &[serde_json::Value], name: &str| -> Vec<String> {
        entries.iter().map(|entry| entry[name].as_str().unwrap_or_default().to_string()).collect()
    };

    let bens = listed(&format!("actor={ben}"));
    assert_eq!(field(&bens, "action"), ["create_team", "sign_in"], "only what Ben did, newest first");
    assert_eq!(field(&bens, "outcome"), ["refused", "ok"]);
    let teams = listed("action=create_team");
    assert_eq!(teams.len(), 4, "every attempt to create a team, whoever made it");
    assert!(field(&teams, "action").iter().all(|action| action == "create_team"));
    let by_the_administrator = listed(&format!("action=create_team&actor={}", world.admin_id));
    assert_eq!(by_the_administrator.len(), 3);

    let since = rfc3339(window_opens);
    let until = rfc3339(window_closes);
    let window = listed(&format!("since={since}&until={until}"));
    assert_eq!(
        field(&window, "action"),
        ["create_team", "create_team", "create_team"],
        "Support, Ben's attempt and Billing"
    );
    assert_eq!(listed(&format!("since={since}")).len(), 4, "and Sales after it");
    assert_eq!(listed(&format!("until={until}")).iter().filter(|entry| entry["action"] == "create_team").count(), 3);
    assert!(listed("actor=usr_nobody").is_empty());

    // A page of a narrowed list continues the same narrowing when it is asked again.
    let first = body(&world.admin("GET", "/api/audit?limit=2&action=create_team", None));
    let cursor = first["next_cursor"].as_str().unwrap();
    let rest = body(&world.admin("GET", &format!("/api/audit?limit=200&action=create_team&cursor={cursor}"), None));
    assert_eq!(first["entries"].as_array().unwrap().len() + rest["entries"].as_array().unwrap().len(), 4);
    assert!(rest["next_cursor"].is_null());

    for query in ["since=yesterday", "until=2026-13-01T00:00:00Z"] {
        let refused = world.admin("GET", &format!("/api/audit?{query}"), None);
        assert_refused(&refused, 400, "invalid_query_parameter");
        assert!(text(&refused).contains("RFC 3339"), "{query}: {}", text(&refused));
    }
    let backwards = world.admin("GET", &format!("/api/audit?since={until}&until={since}"), None);
    assert_refused(&backwards, 400, "invalid_query_parameter");
    assert!(text(&backwards).contains("`until`"), "{}", text(&backwards));
}
