//! Agents: minting, pairing, pausing, revoking and expiry, the pinned ceiling on
//! REST calls, and an agent's acts recorded under it and its sponsor. The
//! fixtures here (`office`, `grants`, `as_agent`) serve the other agent files:
//! `agents_delegation` and `agents_capabilities`.

use mailroom_contract::{RouteId, registry};
use serde_json::{Value, json};

use crate::desk::{Desk, READS_THE_MAILBOX, WORKS_THE_MAILBOX};
use crate::support::*;

pub(crate) const SUPPORT: &str = "support@mailroom.test";

/// A node with a mailbox holding a message, and a sponsor (ben) who works it,
/// beside the administrator.
pub(crate) fn office() -> Desk {
    Desk::new(SUPPORT).receiving("plain").with("ben@example.com", WORKS_THE_MAILBOX)
}

pub(crate) fn grants(mailbox: &str, relations: &[&str]) -> Value {
    json!([{ "mailbox": mailbox, "relations": relations }])
}

pub(crate) fn as_agent(
    world: &World,
    credential: &str,
    method: &str,
    path: &str,
    payload: Option<Value>,
) -> mailroom::core::http::Response {
    world.call(method, path, Some(credential), payload)
}

#[test]
fn an_administrator_mints_an_agent_for_another_person_and_its_credential_works() {
    let office = office();
    let (world, mailbox, ben) = (&office.world, office.mailbox.as_str(), office.person("ben").id.as_str());
    let minted = world.admin(
        "POST",
        "/api/agents",
        Some(json!({ "name": "Triage", "sponsor": ben, "capabilities": ["identity.read", "mail.triage"], "mailboxes": grants(mailbox, &["mailbox.metadata.read"]) })),
    );
    assert_eq!(minted.status, 201, "{}", text(&minted));
    let minted = body(&minted);
    let credential = minted["credential"].as_str().unwrap();
    assert!(credential.starts_with("mr_agt_"));
    let agent = minted["agent"]["id"].as_str().unwrap();
    assert_eq!(minted["agent"]["sponsor"], ben);
    assert_eq!(minted["agent"]["state"], "active");
    assert_eq!(minted["agent"]["mailboxes"], json!([{ "mailbox": mailbox, "relations": ["mailbox.metadata.read"] }]));
    let me = body(&as_agent(world, credential, "GET", "/api/me", None));
    assert_eq!(me["id"], agent);
    assert_eq!(me["kind"], "agent");
    assert_eq!(me["sponsor"], ben);
    assert_eq!(me["is_admin"], false);
    assert_eq!(
        world.node.database.count(&format!("SELECT COUNT(*) FROM agents WHERE credential_hash = '{credential}'")),
        0,
        "only a hash is kept"
    );

    let shown = body(&world.admin("GET", &format!("/api/agents/{agent}"), None));
    let held: Vec<(String, i64, i64)> = shown["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|capability| {
            (
                capability["name"].as_str().unwrap().to_string(),
                capability["held"].as_i64().unwrap(),
                capability["total"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(held, vec![("identity.read".to_string(), 1, 1), ("mail.triage".to_string(), 3, 3)]);
    assert!(body(&world.admin("GET", "/api/agents", None))["agents"][0]["id"] == agent);
}

#[test]
fn a_later_grant_to_an_agent_follows_the_minting_rule() {
    let office = office();
    let (world, mailbox, ben) = (&office.world, office.mailbox.as_str(), office.person("ben").id.as_str());
    let other = world.mailbox("billing@mailroom.test");
    let (agent, _) = world.mint(ben, &["mail.triage"], grants(mailbox, &["mailbox.metadata.read"]));
    // Ben holds content on support@ but nothing on billing@, and no export anywhere.
    assert_eq!(world.grant(&agent, "mailbox.content.read", mailbox).status, 201);
    assert_refused(&world.grant(&agent, "mailbox.content.read", &other), 403, "sponsor_lacks_relation");
    assert_refused(&world.grant(&agent, "message.export", mailbox), 403, "sponsor_lacks_relation");
    // Held through a team counts, as it does for every other predicate.
    let team = world.team("Exporters");
    world.grant(&format!("{team}#member"), "message.export", mailbox);
    world.admin("PUT", &format!("/api/teams/{team}/members/{ben}"), None);
    assert_eq!(world.grant(&agent, "message.export", mailbox).status, 201);
    let unknown = world.grant(&agent, "mailbox.secrets", mailbox);
    assert!(text(&unknown).contains("mailbox.metadata.read"), "the fix lists the vocabulary: {}", text(&unknown));
}

#[test]
fn minting_refuses_what_the_sponsor_could_not_lend() {
    let office = office();
    let (world, mailbox, ben) = (&office.world, office.mailbox.as_str(), office.person("ben").id.as_str());
    let other = world.mailbox("billing@mailroom.test");
    let mint = |capabilities: Value, mailboxes: Value| {
        world.admin(
            "POST",
            "/api/agents",
            Some(json!({ "name": "A", "sponsor": ben, "capabilities": capabilities, "mailboxes": mailboxes })),
        )
    };
    assert_refused(
        &mint(json!(["mail.read"]), grants(&other, &["mailbox.content.read"])),
        403,
        "sponsor_lacks_relation",
    );
    assert_refused(
        &mint(json!(["mail.read"]), grants(mailbox, &["mailbox.metadata.read"])),
        400,
        "capability_unsatisfiable",
    );
    assert_refused(&mint(json!(["mail.teleport"]), json!([])), 400, "unknown_capability");
    assert_refused(&mint(json!([]), json!([])), 400, "no_capabilities");
    assert_refused(&mint(json!(["mail.triage"]), grants(mailbox, &["org.admin"])), 400, "not_a_mailbox_relation");
    // Requirements are evaluated per mailbox: content on one and export on
    // another does not make an export capability work anywhere.
    world.grant_all(ben, &["message.export"], &other);
    world.grant_all(ben, &["mailbox.content.read"], &other);
    world.revoke(ben, "mailbox.content.read", &other);
    let split = json!([
        { "mailbox": mailbox, "relations": ["mailbox.content.read"] },
        { "mailbox": other, "relations": ["message.export"] },
    ]);
    assert_refused(&mint(json!(["mail.export"]), split), 400, "capability_unsatisfiable");
    let late = world.admin(
        "POST",
        "/api/agents",
        Some(json!({ "name": "A", "sponsor": ben, "capabilities": ["identity.read"], "expires_at": "2001-01-01T00:00:00Z" })),
    );
    assert_refused(&late, 400, "invalid_expiry");
    let (ben_token, _) = sign_in_as(world, "ben@example.com");
    let by_ben = world.call(
        "POST",
        "/api/agents",
        Some(&ben_token),
        Some(json!({ "name": "A", "sponsor": ben, "capabilities": ["identity.read"] })),
    );
    assert_refused(&by_ben, 403, "missing_relation");
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM agents"), 0);
}

pub(crate) fn sign_in_as(world: &World, email: &str) -> (String, String) {
    sign_in(&world.node, email, PASSWORD)
}

#[test]
fn pausing_revoking_and_expiry_stop_the_credential_on_its_next_request() {
    let office = office();
    let (world, mailbox, ben) = (&office.world, office.mailbox.as_str(), office.person("ben").id.as_str());
    let (agent, credential) = world.mint(ben, &["identity.read"], grants(mailbox, &["mailbox.metadata.read"]));
    assert_eq!(as_agent(world, &credential, "GET", "/api/me", None).status, 200);
    let paused = body(&world.admin("POST", &format!("/api/agents/{agent}/pause"), None));
    assert_eq!(paused["state"], "paused");
    let paused_at = paused["paused_at"].as_str().expect("a paused agent says since when").to_string();
    assert_refused(&as_agent(world, &credential, "GET", "/api/me", None), 403, "agent_paused");
    world.node.platform.advance(60 * 1000);
    let paused_again = body(&world.admin("POST", &format!("/api/agents/{agent}/pause"), None));
    assert_eq!(paused_again["paused_at"], paused_at.as_str(), "pausing twice keeps when it stopped");
    let resumed = body(&world.admin("POST", &format!("/api/agents/{agent}/resume"), None));
    assert_eq!(resumed["state"], "active");
    assert!(resumed.get("paused_at").is_none(), "{resumed}");
    assert_eq!(
        body(&world.admin("GET", &format!("/api/agents/{agent}"), None)),
        resumed,
        "the answer is what a read shows"
    );
    assert_eq!(as_agent(world, &credential, "GET", "/api/me", None).status, 200);
    let revoked = body(&world.admin("POST", &format!("/api/agents/{agent}/revoke"), None));
    assert_eq!(revoked["state"], "revoked");
    assert!(revoked["revoked_at"].is_string(), "{revoked}");
    assert_refused(&as_agent(world, &credential, "GET", "/api/me", None), 401, "agent_revoked");
    assert_refused(&world.admin("POST", &format!("/api/agents/{agent}/resume"), None), 409, "agent_revoked");

    let expiring = world.admin(
        "POST",
        "/api/agents",
        Some(json!({ "name": "Brief", "sponsor": ben, "capabilities": ["identity.read"], "expires_at": "2026-11-18T12:00:00Z" })),
    );
    let credential = body(&expiring)["credential"].as_str().unwrap().to_string();
    assert_eq!(as_agent(world, &credential, "GET", "/api/me", None).status, 200);
    let brief = body(&expiring)["agent"]["id"].as_str().unwrap().to_string();
    world.admin("POST", &format!("/api/agents/{brief}/pause"), None);
    world.node.platform.advance(2 * 24 * 60 * 60 * 1000);
    assert_refused(&as_agent(world, &credential, "GET", "/api/me", None), 401, "agent_expired");
    // Two days on, the administrator's access token has long expired too.
    let (admin_token, _) = sign_in(&world.node, ADMIN_EMAIL, ADMIN_PASSWORD);
    let resumed = body(&world.call("POST", &format!("/api/agents/{brief}/resume"), Some(&admin_token), None));
    assert_eq!(resumed["state"], "expired", "resuming an expired agent does not make it usable, and says so");
    let position = credential.len() - 10;
    let replacement = if &credential[position..=position] == "A" { "B" } else { "A" };
    let forged = format!("{}{replacement}{}", &credential[..position], &credential[position + 1..]);
    assert_refused(&as_agent(world, &forged, "GET", "/api/me", None), 401, "agent_credential_invalid");
}

#[test]
fn a_pairing_code_is_redeemed_once_within_ten_minutes_for_the_credential() {
    let office = office();
    let (world, ben) = (&office.world, office.person("ben").id.as_str());
    let minted = world.admin(
        "POST",
        "/api/agents",
        Some(
            json!({ "name": "Paired", "sponsor": ben, "capabilities": ["identity.read"], "delivery": "pairing_code" }),
        ),
    );
    let minted = body(&minted);
    assert!(minted.get("credential").is_none());
    assert_eq!(minted["agent"]["state"], "awaiting_pairing");
    let code = minted["pairing"]["code"].as_str().unwrap().to_string();
    let redeem = |code: &str| world.call("POST", "/api/agents/pair", None, Some(json!({ "code": code })));
    let redeemed = redeem(&code);
    assert_eq!(redeemed.status, 200, "{}", text(&redeemed));
    let credential = body(&redeemed)["credential"].as_str().unwrap().to_string();
    assert_eq!(body(&as_agent(world, &credential, "GET", "/api/me", None))["kind"], "agent");
    assert_refused(&redeem(&code), 401, "pairing_code_invalid");

    let agent = minted["agent"]["id"].as_str().unwrap();
    let late = body(&world.admin("POST", &format!("/api/agents/{agent}/pairing-code"), None))["code"]
        .as_str()
        .unwrap()
        .to_string();
    world.node.platform.advance(10 * 60 * 1000);
    assert_refused(&redeem(&late), 401, "pairing_code_invalid");

    let again = body(&world.admin("POST", &format!("/api/agents/{agent}/pairing-code"), None))["code"]
        .as_str()
        .unwrap()
        .to_string();
    let replacement = body(&redeem(&again))["credential"].as_str().unwrap().to_string();
    assert_refused(&as_agent(world, &credential, "GET", "/api/me", None), 401, "agent_credential_invalid");
    assert_eq!(
        as_agent(world, &replacement, "GET", "/api/me", None).status,
        200,
        "pairing again replaces the credential"
    );

    // Two codes above failed (the reused one and the expired one); the address
    // pauses when the failures reach the limit.
    for _ in 2..mailroom::authz::throttle::PAIRING_FAILURE_LIMIT {
        assert_refused(&redeem("mr_pair_guess"), 401, "pairing_code_invalid");
    }
    assert_refused(&redeem("mr_pair_guess"), 429, "too_many_pairing_attempts");
}

#[test]
fn the_ceiling_binds_rest_calls_and_names_what_no_agent_is_given() {
    let office = office();
    let (world, mailbox, receipt, ben) =
        (&office.world, office.mailbox.as_str(), office.receipt(), office.person("ben").id.as_str());
    let (_, credential) = world.mint(ben, &["mail.triage"], grants(mailbox, READS_THE_MAILBOX));
    let message = format!("/api/mailboxes/{mailbox}/messages/{receipt}");
    assert_eq!(as_agent(world, &credential, "GET", &message, None).status, 200);
    let body_read = as_agent(world, &credential, "GET", &format!("{message}/body"), None);
    assert_refused(&body_read, 403, "outside_ceiling");
    assert!(text(&body_read).contains("get_message_body"));
    let people = as_agent(world, &credential, "GET", "/api/people", None);
    assert_refused(&people, 403, "not_for_agents");
    assert!(text(&people).contains("org.admin"));
    let approve = as_agent(
        world,
        &credential,
        "POST",
        &format!("/api/mailboxes/{mailbox}/sends/snd_00000000000000000000000000/approve"),
        None,
    );
    assert_refused(&approve, 403, "not_for_agents");
    assert!(
        text(&approve).contains("second person"),
        "the refusal says why an agent never approves: {}",
        text(&approve)
    );
}

#[test]
fn an_agent_s_acts_are_recorded_under_it_and_its_sponsor() {
    let office = office();
    let (world, mailbox, receipt, ben) =
        (&office.world, office.mailbox.as_str(), office.receipt(), office.person("ben").id.as_str());
    let (agent, credential) = world.mint(ben, &["mail.read", "mail.triage"], grants(mailbox, READS_THE_MAILBOX));
    as_agent(world, &credential, "GET", &format!("/api/mailboxes/{mailbox}/messages/{receipt}/body"), None);
    let entry = world.last_audit_entry();
    assert_eq!(entry["action"], "get_message_body");
    assert_eq!(entry["actor"], agent);
    assert_eq!(entry["actor_kind"], "agent");
    assert_eq!(entry["delegator"], ben);
    let minting = world.audit().into_iter().find(|entry| entry["action"] == "mint_agent").unwrap();
    assert!(minting["delegator"].is_null(), "a person's own act has no delegator");
    assert!(!minting.to_string().contains("mr_agt_"), "the credential never reaches the audit trail");
    assert_eq!(world.verify()["intact"], true);
    world.node.database.tamper(&format!("UPDATE audit_entries SET delegator = NULL WHERE actor = '{agent}'"));
    assert_eq!(world.verify()["intact"], false, "the delegator is inside the hash");
}

#[test]
fn a_refused_act_of_a_stopped_agent_is_recorded_under_it_and_its_sponsor_and_a_forged_one_not_at_all() {
    let office = office();
    let (world, mailbox, ben) = (&office.world, office.mailbox.as_str(), office.person("ben").id.as_str());
    world.grant_all(ben, &["send.propose"], mailbox);
    let (agent, credential) =
        world.mint(ben, &["mail.draft"], grants(mailbox, &["mailbox.metadata.read", "send.propose"]));
    let draft = json!({ "to": ["ana@x.example"], "subject": "S", "text": "T" });
    let sends = format!("/api/mailboxes/{mailbox}/sends");
    for (stop, status, code) in [("pause", 403, "agent_paused"), ("revoke", 401, "agent_revoked")] {
        world.admin("POST", &format!("/api/agents/{agent}/{stop}"), None);
        assert_refused(&as_agent(world, &credential, "POST", &sends, Some(draft.clone())), status, code);
        let entry = world.last_audit_entry();
        assert_eq!((entry["action"].as_str(), entry["outcome"].as_str()), (Some("create_draft"), Some("refused")));
        assert_eq!(entry["actor"], agent, "{stop}: the refusal names the agent");
        assert_eq!(entry["delegator"], ben, "{stop}: and the person it acts for");
        if stop == "pause" {
            world.admin("POST", &format!("/api/agents/{agent}/resume"), None);
        }
    }

    // The same agent id with a secret the node never issued proves nothing.
    let recorded = world.audit().len();
    // One character changed in the middle of the secret: the last one also holds
    // padding bits, and changing those can make it no credential at all.
    let middle = credential.len() - 10;
    let replacement = if &credential[middle..=middle] == "A" { "B" } else { "A" };
    let forged = format!("{}{replacement}{}", &credential[..middle], &credential[middle + 1..]);
    assert_refused(&as_agent(world, &forged, "POST", &sends, Some(draft)), 401, "agent_credential_invalid");
    assert_eq!(world.audit().len(), recorded, "a forged credential writes nothing that names a real agent");
}

#[test]
fn agents_hold_only_mailbox_relations() {
    let office = office();
    let (world, mailbox, ben) = (&office.world, office.mailbox.as_str(), office.person("ben").id.as_str());
    let (agent, credential) = world.mint(ben, &["identity.read"], grants(mailbox, &["mailbox.metadata.read"]));
    assert_refused(&world.grant(&agent, "org.admin", "org"), 400, "agents_hold_only_mailbox_relations");
    // Even a tuple that got in some other way (a restored backup, a hand-edited
    // row) confers nothing its sponsor does not hold: is_admin is intersected.
    world.node.database.tamper(&format!(
        "INSERT INTO relation_tuples (subject, relation, object, granted_at, granted_by) \
         VALUES ('{agent}', 'org.admin', 'org', 0, 'usr_00000000000000000000000000')"
    ));
    assert_eq!(body(&as_agent(world, &credential, "GET", "/api/me", None))["is_admin"], false);
    assert_refused(&as_agent(world, &credential, "GET", "/api/people", None), 403, "not_for_agents");
    // Even an administrator's agent is not an administrator.
    let (_, admin_agent) = world.mint(&world.admin_id, &["identity.read"], json!([]));
    assert_eq!(body(&as_agent(world, &admin_agent, "GET", "/api/me", None))["is_admin"], false);
}

#[test]
fn nothing_but_minting_writes_a_ceiling() {
    // There is no route that widens an agent's ceiling: the only statement that
    // inserts pinned routes is the mint's.
    let mut writers = Vec::new();
    for path in rust_sources(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src")) {
        let text = std::fs::read_to_string(&path).unwrap();
        for (line, content) in text.lines().enumerate() {
            if content.contains("INTO agent_routes") || content.contains("UPDATE agent_routes") {
                writers.push(format!("{}:{}", path.display(), line + 1));
            }
        }
    }
    assert_eq!(writers.len(), 1, "exactly one statement writes pinned routes: {writers:?}");
    assert!(writers[0].contains("agents/store.rs"), "{writers:?}");
    // It is built in the agents' store, and only the mint builds it.
    let mut callers = Vec::new();
    for path in rust_sources(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src")) {
        let text = std::fs::read_to_string(&path).unwrap();
        if text.contains("pin_routes(") && !path.ends_with("agents/store.rs") {
            callers.push(path.display().to_string());
        }
    }
    assert_eq!(callers.len(), 1, "exactly one file pins routes: {callers:?}");
    assert!(callers[0].ends_with("agents/mint.rs"), "{callers:?}");
    let mint = registry().route(RouteId::MintAgent);
    assert_eq!(mint.method, mailroom_contract::Method::Post);
}
