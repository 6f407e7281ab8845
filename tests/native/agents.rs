//! Agents: minting, pairing, the pinned ceiling, and delegation that intersects
//! an agent's tuples with its sponsor's on every predicate.

use mailroom::core::platform::Platform;
use mailroom_contract::capabilities::CAPABILITIES;
use mailroom_contract::{RouteId, registry};
use serde_json::{Value, json};

use crate::support::*;

const SUPPORT: &str = "support@mailroom.test";
const READ_MAIL: &[&str] = &["mailbox.metadata.read", "mailbox.content.read"];

/// A node with a mailbox holding a message, a sponsor (ben) who reads it, and the
/// administrator: (world, mailbox, receipt, ben's id, ben's token).
fn office() -> (World, String, String, String, String) {
    let world = World::new();
    let mailbox = world.mailbox(SUPPORT);
    let receipt = world.deliver("plain", SUPPORT);
    let (ben, token) = world.person("ben@example.com");
    world.grant_all(&ben, &["mailbox.metadata.read", "mailbox.content.read", "send.propose"], &mailbox);
    (world, mailbox, receipt, ben, token)
}

fn grants(mailbox: &str, relations: &[&str]) -> Value {
    json!([{ "mailbox": mailbox, "relations": relations }])
}

fn as_agent(
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
    let (world, mailbox, _, ben, _) = office();
    let minted = world.admin(
        "POST",
        "/api/agents",
        Some(json!({ "name": "Triage", "sponsor": ben, "capabilities": ["identity.read", "mail.triage"], "mailboxes": grants(&mailbox, &["mailbox.metadata.read"]) })),
    );
    assert_eq!(minted.status, 201, "{}", text(&minted));
    let minted = body(&minted);
    let credential = minted["credential"].as_str().unwrap();
    assert!(credential.starts_with("mr_agt_"));
    let agent = minted["agent"]["id"].as_str().unwrap();
    assert_eq!(minted["agent"]["sponsor"], ben);
    assert_eq!(minted["agent"]["state"], "active");
    assert_eq!(minted["agent"]["mailboxes"], json!([{ "mailbox": mailbox, "relations": ["mailbox.metadata.read"] }]));
    let me = body(&as_agent(&world, credential, "GET", "/api/me", None));
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
    let (world, mailbox, _, ben, _) = office();
    let other = world.mailbox("billing@mailroom.test");
    let (agent, _) = world.mint(&ben, &["mail.triage"], grants(&mailbox, &["mailbox.metadata.read"]));
    // Ben holds content on support@ but nothing on billing@, and no export anywhere.
    assert_eq!(world.grant(&agent, "mailbox.content.read", &mailbox).status, 201);
    assert_refused(&world.grant(&agent, "mailbox.content.read", &other), 403, "sponsor_lacks_relation");
    assert_refused(&world.grant(&agent, "message.export", &mailbox), 403, "sponsor_lacks_relation");
    // Held through a team counts, as it does for every other predicate.
    let team = world.team("Exporters");
    world.grant(&format!("{team}#member"), "message.export", &mailbox);
    world.admin("PUT", &format!("/api/teams/{team}/members/{ben}"), None);
    assert_eq!(world.grant(&agent, "message.export", &mailbox).status, 201);
    let unknown = world.grant(&agent, "mailbox.secrets", &mailbox);
    assert!(text(&unknown).contains("mailbox.metadata.read"), "the fix lists the vocabulary: {}", text(&unknown));
}

#[test]
fn minting_refuses_what_the_sponsor_could_not_lend() {
    let (world, mailbox, _, ben, _) = office();
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
        &mint(json!(["mail.read"]), grants(&mailbox, &["mailbox.metadata.read"])),
        400,
        "capability_unsatisfiable",
    );
    assert_refused(&mint(json!(["mail.teleport"]), json!([])), 400, "unknown_capability");
    assert_refused(&mint(json!([]), json!([])), 400, "no_capabilities");
    assert_refused(&mint(json!(["mail.triage"]), grants(&mailbox, &["org.admin"])), 400, "not_a_mailbox_relation");
    // Requirements are evaluated per mailbox: content on one and export on
    // another does not make an export capability work anywhere.
    world.grant_all(&ben, &["message.export"], &other);
    world.grant_all(&ben, &["mailbox.content.read"], &other);
    world.revoke(&ben, "mailbox.content.read", &other);
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
    let (ben_token, _) = sign_in_as(&world, "ben@example.com");
    let by_ben = world.call(
        "POST",
        "/api/agents",
        Some(&ben_token),
        Some(json!({ "name": "A", "sponsor": ben, "capabilities": ["identity.read"] })),
    );
    assert_refused(&by_ben, 403, "missing_relation");
    assert_eq!(world.node.database.count("SELECT COUNT(*) FROM agents"), 0);
}

fn sign_in_as(world: &World, email: &str) -> (String, String) {
    sign_in(&world.node, email, PASSWORD)
}

#[test]
fn pausing_revoking_and_expiry_stop_the_credential_on_its_next_request() {
    let (world, mailbox, _, ben, _) = office();
    let (agent, credential) = world.mint(&ben, &["identity.read"], grants(&mailbox, &["mailbox.metadata.read"]));
    assert_eq!(as_agent(&world, &credential, "GET", "/api/me", None).status, 200);
    let paused = body(&world.admin("POST", &format!("/api/agents/{agent}/pause"), None));
    assert_eq!(paused["state"], "paused");
    let paused_at = paused["paused_at"].as_str().expect("a paused agent says since when").to_string();
    assert_refused(&as_agent(&world, &credential, "GET", "/api/me", None), 403, "agent_paused");
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
    assert_eq!(as_agent(&world, &credential, "GET", "/api/me", None).status, 200);
    let revoked = body(&world.admin("POST", &format!("/api/agents/{agent}/revoke"), None));
    assert_eq!(revoked["state"], "revoked");
    assert!(revoked["revoked_at"].is_string(), "{revoked}");
    assert_refused(&as_agent(&world, &credential, "GET", "/api/me", None), 401, "agent_revoked");
    assert_refused(&world.admin("POST", &format!("/api/agents/{agent}/resume"), None), 409, "agent_revoked");

    let expiring = world.admin(
        "POST",
        "/api/agents",
        Some(json!({ "name": "Brief", "sponsor": ben, "capabilities": ["identity.read"], "expires_at": "2026-11-18T12:00:00Z" })),
    );
    let credential = body(&expiring)["credential"].as_str().unwrap().to_string();
    assert_eq!(as_agent(&world, &credential, "GET", "/api/me", None).status, 200);
    let brief = body(&expiring)["agent"]["id"].as_str().unwrap().to_string();
    world.admin("POST", &format!("/api/agents/{brief}/pause"), None);
    world.node.platform.advance(2 * 24 * 60 * 60 * 1000);
    assert_refused(&as_agent(&world, &credential, "GET", "/api/me", None), 401, "agent_expired");
    // Two days on, the administrator's access token has long expired too.
    let (admin_token, _) = sign_in(&world.node, ADMIN_EMAIL, ADMIN_PASSWORD);
    let resumed = body(&world.call("POST", &format!("/api/agents/{brief}/resume"), Some(&admin_token), None));
    assert_eq!(resumed["state"], "expired", "resuming an expired agent does not make it usable, and says so");
    let position = credential.len() - 10;
    let replacement = if &credential[position..=position] == "A" { "B" } else { "A" };
    let forged = format!("{}{replacement}{}", &credential[..position], &credential[position + 1..]);
    assert_refused(&as_agent(&world, &forged, "GET", "/api/me", None), 401, "agent_credential_invalid");
}

#[test]
fn a_pairing_code_is_redeemed_once_within_ten_minutes_for_the_credential() {
    let (world, _, _, ben, _) = office();
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
    assert_eq!(body(&as_agent(&world, &credential, "GET", "/api/me", None))["kind"], "agent");
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
    assert_refused(&as_agent(&world, &credential, "GET", "/api/me", None), 401, "agent_credential_invalid");
    assert_eq!(
        as_agent(&world, &replacement, "GET", "/api/me", None).status,
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
    let (world, mailbox, receipt, ben, _) = office();
    let (_, credential) = world.mint(&ben, &["mail.triage"], grants(&mailbox, READ_MAIL));
    let message = format!("/api/mailboxes/{mailbox}/messages/{receipt}");
    assert_eq!(as_agent(&world, &credential, "GET", &message, None).status, 200);
    let body_read = as_agent(&world, &credential, "GET", &format!("{message}/body"), None);
    assert_refused(&body_read, 403, "outside_ceiling");
    assert!(text(&body_read).contains("get_message_body"));
    let people = as_agent(&world, &credential, "GET", "/api/people", None);
    assert_refused(&people, 403, "not_for_agents");
    assert!(text(&people).contains("org.admin"));
    let approve = as_agent(
        &world,
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
    let (world, mailbox, receipt, ben, _) = office();
    let (agent, credential) = world.mint(&ben, &["mail.read", "mail.triage"], grants(&mailbox, READ_MAIL));
    as_agent(&world, &credential, "GET", &format!("/api/mailboxes/{mailbox}/messages/{receipt}/body"), None);
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
    let (world, mailbox, _, ben, _) = office();
    world.grant_all(&ben, &["send.propose"], &mailbox);
    let (agent, credential) =
        world.mint(&ben, &["mail.draft"], grants(&mailbox, &["mailbox.metadata.read", "send.propose"]));
    let draft = json!({ "to": ["ana@x.example"], "subject": "S", "text": "T" });
    let sends = format!("/api/mailboxes/{mailbox}/sends");
    for (stop, status, code) in [("pause", 403, "agent_paused"), ("revoke", 401, "agent_revoked")] {
        world.admin("POST", &format!("/api/agents/{agent}/{stop}"), None);
        assert_refused(&as_agent(&world, &credential, "POST", &sends, Some(draft.clone())), status, code);
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
    assert_refused(&as_agent(&world, &forged, "POST", &sends, Some(draft)), 401, "agent_credential_invalid");
    assert_eq!(world.audit().len(), recorded, "a forged credential writes nothing that names a real agent");
}

/// The agent (and its sponsor) on two mailboxes, for the delegation tests:
/// (world, mailbox a, mailbox b, receipt in a, ben, agent credential).
fn delegated(agent_relations: &[&str]) -> (World, String, String, String, String, String) {
    let (world, a, receipt, ben, _) = office();
    let b = world.mailbox("billing@mailroom.test");
    world.deliver("plain", "billing@mailroom.test");
    world.grant_all(&ben, READ_MAIL, &b);
    let mut capabilities = vec!["mail.read", "mail.triage"];
    if agent_relations.contains(&"send.propose") {
        capabilities.push("mail.draft");
    }
    let (_, credential) = world.mint(&ben, &capabilities, grants(&a, agent_relations));
    (world, a, b, receipt, ben, credential)
}

/// Everything an agent's authority on mailbox `a` decides, as the agent sees it:
/// single-object checks, both search arms, the listings, drafting, and whether a
/// send it submitted earlier is sealed when approved.
fn what_the_agent_sees(world: &World, credential: &str, a: &str, receipt: &str, submitted: &str) -> Value {
    let status =
        |method: &str, path: &str, payload: Option<Value>| as_agent(world, credential, method, path, payload).status;
    let hits = |q: &str| {
        let found = body(&as_agent(world, credential, "GET", &format!("/api/search?q={q}"), None));
        found["results"].as_array().map_or(0, Vec::len)
    };
    let listed = |path: &str| {
        let mailboxes = body(&as_agent(world, credential, "GET", path, None))["mailboxes"].clone();
        mailboxes
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|mailbox| mailbox["held"].clone())
            .collect::<Vec<_>>()
    };
    json!({
        "list_messages": status("GET", &format!("/api/mailboxes/{a}/messages"), None),
        "get_message": status("GET", &format!("/api/mailboxes/{a}/messages/{receipt}"), None),
        "get_message_body": status("GET", &format!("/api/mailboxes/{a}/messages/{receipt}/body"), None),
        "search headers": hits("invoice"),
        "search bodies": hits("4471"),
        "readable": listed("/api/mailboxes/readable"),
        "work queue": listed("/api/mailboxes"),
        "create_draft": status(
            "POST",
            &format!("/api/mailboxes/{a}/sends"),
            Some(json!({ "to": ["ana@customer.example"], "subject": "S", "text": "T" })),
        ),
        "submitted": submitted,
    })
}

#[test]
fn a_sponsor_losing_a_relation_directly_or_by_team_withdraws_exactly_it_from_the_agent_on_every_predicate() {
    const ALL: &[&str] = &["mailbox.metadata.read", "mailbox.content.read", "send.propose"];
    for lost in ALL {
        for through_team in [false, true] {
            let world = World::new();
            let a = world.mailbox(SUPPORT);
            let receipt = world.deliver("plain", SUPPORT);
            let (ben, _) = world.person("ben@example.com");
            let desk = world.team("Desk");
            // Ben holds `lost` directly or only through Desk, and the rest directly.
            for relation in ALL {
                let subject = if relation == lost && through_team { format!("{desk}#member") } else { ben.clone() };
                world.grant(&subject, relation, &a);
            }
            world.admin("PUT", &format!("/api/teams/{desk}/members/{ben}"), None);
            let (_, credential) = world.mint(&ben, &["mail.read", "mail.triage", "mail.draft"], grants(&a, ALL));
            let (carol, carol_token) = world.person("carol@example.com");
            world.grant_all(&carol, &["mailbox.metadata.read", "approval.decide"], &a);
            let sends = format!("/api/mailboxes/{a}/sends");
            let draft = json!({ "to": ["ana@customer.example"], "subject": "Earlier", "text": "T" });
            let send =
                body(&as_agent(&world, &credential, "POST", &sends, Some(draft)))["id"].as_str().unwrap().to_string();
            as_agent(&world, &credential, "POST", &format!("{sends}/{send}/submit"), None);

            let before = what_the_agent_sees(&world, &credential, &a, &receipt, "submitted");
            if through_team {
                world.admin("DELETE", &format!("/api/teams/{desk}/members/{ben}"), None);
            } else {
                world.revoke(&ben, lost, &a);
            }
            let approval = world.call(
                "POST",
                &format!("{sends}/{send}/approve"),
                Some(&carol_token),
                Some(world.decision(&carol_token, &format!("{sends}/{send}"))),
            );
            let sealed = match approval.status {
                200 => "sealed".to_string(),
                _ => body(&approval)["error"]["code"].as_str().unwrap_or_default().to_string(),
            };
            let after = what_the_agent_sees(&world, &credential, &a, &receipt, &sealed);

            let mut held_after: Vec<&str> = ALL.iter().copied().filter(|relation| relation != lost).collect();
            held_after.sort_unstable();
            let mut expected = before.clone();
            expected["readable"] = json!([held_after]);
            match *lost {
                "mailbox.metadata.read" => {
                    expected["list_messages"] = json!(403);
                    expected["get_message"] = json!(403);
                    expected["search headers"] = json!(0);
                    // The body arm shows who sent what, so it needs metadata too.
                    expected["search bodies"] = json!(0);
                    expected["work queue"] = json!([held_after]);
                    expected["submitted"] = json!("sealed");
                }
                "mailbox.content.read" => {
                    expected["get_message_body"] = json!(403);
                    expected["search bodies"] = json!(0);
                    expected["work queue"] = json!([held_after]);
                    expected["submitted"] = json!("sealed");
                }
                _ => {
                    expected["create_draft"] = json!(403);
                    expected["work queue"] = json!([]);
                    expected["submitted"] = json!("author_lost_authority");
                }
            }
            let how = if through_team { "leaving the team that granted it" } else { "its revocation" };
            assert_eq!(after, expected, "the sponsor losing {lost} by {how}: before {before}");
        }
    }
}

#[test]
fn a_sponsor_with_only_metadata_lends_no_content_even_when_the_agent_holds_it() {
    let (world, a, _, receipt, ben, credential) = delegated(READ_MAIL);
    world.revoke(&ben, "mailbox.content.read", &a);
    // The agent's own tuple for content on a is still there; the sponsor's
    // metadata on a must not carry it.
    assert!(body(&world.admin("GET", &format!("/api/relations?object={a}"), None)).to_string().contains("agt_"));
    let refused = as_agent(&world, &credential, "GET", &format!("/api/mailboxes/{a}/messages/{receipt}/body"), None);
    assert_refused(&refused, 403, "missing_relation");
    assert_eq!(
        as_agent(&world, &credential, "GET", &format!("/api/mailboxes/{a}/messages/{receipt}"), None).status,
        200
    );
}

#[test]
fn a_sponsor_s_relation_on_another_mailbox_lends_nothing_here() {
    let (world, a, b, receipt, ben, credential) = delegated(READ_MAIL);
    world.revoke(&ben, "mailbox.content.read", &a);
    world.revoke(&ben, "mailbox.metadata.read", &a);
    // Ben still reads b in full; that must not license the agent on a.
    let refused = as_agent(&world, &credential, "GET", &format!("/api/mailboxes/{a}/messages/{receipt}"), None);
    assert_refused(&refused, 404, "not_found");
    let readable = body(&as_agent(&world, &credential, "GET", "/api/mailboxes/readable", None));
    assert_eq!(readable["mailboxes"], json!([]), "the agent holds nothing on b, and ben's a is gone");
    let _ = b;
}

#[test]
fn an_agent_whose_own_tuple_is_revoked_loses_it_whatever_the_sponsor_holds() {
    let (world, a, _, receipt, _, credential) = delegated(READ_MAIL);
    let agent = body(&world.admin("GET", "/api/agents", None))["agents"][0]["id"].as_str().unwrap().to_string();
    world.revoke(&agent, "mailbox.content.read", &a);
    let refused = as_agent(&world, &credential, "GET", &format!("/api/mailboxes/{a}/messages/{receipt}/body"), None);
    assert_refused(&refused, 403, "missing_relation");
}

#[test]
fn a_disabled_sponsor_leaves_the_agent_without_authority() {
    let (world, _, _, _, ben, credential) = delegated(READ_MAIL);
    world.admin("POST", &format!("/api/people/{ben}/disable"), None);
    assert_refused(&as_agent(&world, &credential, "GET", "/api/me", None), 403, "sponsor_disabled");
}

#[test]
fn an_agent_drafts_and_submits_but_its_sponsor_is_never_its_second_person() {
    let (world, a, _, receipt, ben, credential) =
        delegated(&["mailbox.metadata.read", "mailbox.content.read", "send.propose"]);
    let sends = format!("/api/mailboxes/{a}/sends");
    let draft = as_agent(
        &world,
        &credential,
        "POST",
        &sends,
        Some(
            json!({ "to": ["ana@customer.example"], "subject": "Re: invoice", "text": "Resent.", "reply_to": receipt }),
        ),
    );
    assert_eq!(draft.status, 201, "{}", text(&draft));
    let send = body(&draft)["id"].as_str().unwrap().to_string();
    assert_eq!(as_agent(&world, &credential, "POST", &format!("{sends}/{send}/submit"), None).status, 200);
    world.grant_all(&ben, &["approval.decide"], &a);
    let (ben_token, _) = sign_in_as(&world, "ben@example.com");
    assert_eq!(
        body(&world.call("GET", "/api/approvals", Some(&ben_token), None))["sends"],
        json!([]),
        "not offered to the sponsor"
    );
    assert_refused(
        &world.call(
            "POST",
            &format!("{sends}/{send}/approve"),
            Some(&ben_token),
            Some(world.decision(&ben_token, &format!("{sends}/{send}"))),
        ),
        403,
        "own_submission",
    );

    // A second person decides, and the seal-time check reads the agent through its sponsor.
    let (carol, carol_token) = world.person("carol@example.com");
    world.grant_all(&carol, &["mailbox.metadata.read", "approval.decide"], &a);
    world.revoke(&ben, "send.propose", &a);
    assert_refused(
        &world.call(
            "POST",
            &format!("{sends}/{send}/approve"),
            Some(&carol_token),
            Some(world.decision(&carol_token, &format!("{sends}/{send}"))),
        ),
        409,
        "author_lost_authority",
    );
    world.grant_all(&ben, &["send.propose"], &a);
    let approved = world.call(
        "POST",
        &format!("{sends}/{send}/approve"),
        Some(&carol_token),
        Some(world.decision(&carol_token, &format!("{sends}/{send}"))),
    );
    assert_eq!(body(&approved)["state"], "dispatched", "{}", text(&approved));
}

#[test]
fn agents_hold_only_mailbox_relations() {
    let (world, mailbox, _, ben, _) = office();
    let (agent, credential) = world.mint(&ben, &["identity.read"], grants(&mailbox, &["mailbox.metadata.read"]));
    assert_refused(&world.grant(&agent, "org.admin", "org"), 400, "agents_hold_only_mailbox_relations");
    // Even a tuple that got in some other way (a restored backup, a hand-edited
    // row) confers nothing its sponsor does not hold: is_admin is intersected.
    world.node.database.tamper(&format!(
        "INSERT INTO relation_tuples (subject, relation, object, granted_at, granted_by) \
         VALUES ('{agent}', 'org.admin', 'org', 0, 'usr_00000000000000000000000000')"
    ));
    assert_eq!(body(&as_agent(&world, &credential, "GET", "/api/me", None))["is_admin"], false);
    assert_refused(&as_agent(&world, &credential, "GET", "/api/people", None), 403, "not_for_agents");
    // Even an administrator's agent is not an administrator.
    let (_, admin_agent) = world.mint(&world.admin_id, &["identity.read"], json!([]));
    assert_eq!(body(&as_agent(&world, &admin_agent, "GET", "/api/me", None))["is_admin"], false);
}

/// The capability promise: an agent minted with exactly what a capability
/// declares drives every route in it without an authority refusal, and with 200
/// (or 201) wherever the fixture exists.
#[test]
fn every_capability_keeps_its_promise() {
    for capability in CAPABILITIES {
        let (world, mailbox, receipt, ben, ben_token) = office();
        let with_attachment = world.deliver("multipart-attachment", SUPPORT);
        world.grant_all(&ben, &["message.export", "approval.decide"], &mailbox);
        let requirements: Vec<&str> =
            capability.requirements(registry()).iter().map(|relation| relation.name()).collect();
        let (agent_id, credential) = world.mint(&ben, &[capability.name], grants(&mailbox, &requirements));
        let sends = format!("/api/mailboxes/{mailbox}/sends");
        // Agent messaging: a peer on the node, and a message each way.
        let peer = || world.messenger(&ben);
        let sent_by_agent = || world.send_message(&credential, &peer().0, "request", json!("37 + 58?"));
        let leased_by_agent = || {
            world.send_message(&peer().1, &agent_id, "request", json!("37 + 58?"));
            let leased = world.claim(&credential, 1).remove(0);
            (leased["id"].as_str().unwrap().to_string(), leased["fencing_token"].clone())
        };
        let draft = || {
            let created = world.call(
                "POST",
                &sends,
                Some(&credential),
                Some(json!({ "to": ["ana@customer.example"], "subject": "Hello", "text": "Hi." })),
            );
            body(&created)["id"].as_str().unwrap_or("snd_00000000000000000000000000").to_string()
        };
        for id in capability.routes {
            let route = registry().route(*id);
            let (method, path, payload): (&str, String, Option<Value>) = match id {
                RouteId::GetMe => ("GET", "/api/me".into(), None),
                RouteId::ListReadableMailboxes => ("GET", "/api/mailboxes/readable".into(), None),
                RouteId::ListMessages => ("GET", format!("/api/mailboxes/{mailbox}/messages"), None),
                RouteId::GetMessage => ("GET", format!("/api/mailboxes/{mailbox}/messages/{receipt}"), None),
                RouteId::GetMessageBody => ("GET", format!("/api/mailboxes/{mailbox}/messages/{receipt}/body"), None),
                RouteId::GetAttachment => {
                    ("GET", format!("/api/mailboxes/{mailbox}/messages/{with_attachment}/attachments/0"), None)
                }
                RouteId::SearchMessages => ("GET", "/api/search?q=invoice".into(), None),
                RouteId::ListThreads => ("GET", format!("/api/mailboxes/{mailbox}/threads"), None),
                RouteId::GetThread => ("GET", world.thread_of(&mailbox, &receipt), None),
                RouteId::UpdateThread => {
                    ("PATCH", world.thread_of(&mailbox, &receipt), Some(json!({ "status": "closed", "assignee": "" })))
                }
                RouteId::MarkThreadRead => ("PUT", format!("{}/read", world.thread_of(&mailbox, &receipt)), None),
                RouteId::MarkThreadUnread => ("DELETE", format!("{}/read", world.thread_of(&mailbox, &receipt)), None),
                RouteId::GetMessageOriginal => {
                    ("GET", format!("/api/mailboxes/{mailbox}/messages/{receipt}/original"), None)
                }
                RouteId::ListMailboxes => ("GET", "/api/mailboxes".into(), None),
                RouteId::ListSends => {
                    draft();
                    ("GET", sends.clone(), None)
                }
                RouteId::GetSend => ("GET", format!("{sends}/{}", draft()), None),
                RouteId::CreateDraft => (
                    "POST",
                    sends.clone(),
                    Some(json!({ "to": ["ana@customer.example"], "subject": "S", "text": "T" })),
                ),
                RouteId::UpdateDraft => ("PATCH", format!("{sends}/{}", draft()), Some(json!({ "text": "Edited" }))),
                RouteId::DeleteDraft => ("DELETE", format!("{sends}/{}", draft()), None),
                RouteId::SubmitSend => ("POST", format!("{sends}/{}/submit", draft()), None),
                RouteId::CancelSend => {
                    let send = draft();
                    world.call("POST", &format!("{sends}/{send}/submit"), Some(&credential), None);
                    ("POST", format!("{sends}/{send}/cancel"), None)
                }
                RouteId::AddSendAttachment => (
                    "POST",
                    format!("{sends}/{}/attachments", draft()),
                    Some(json!({ "name": "a.txt", "content_type": "text/plain", "content_base64": "aGVsbG8=" })),
                ),
                RouteId::RemoveSendAttachment | RouteId::GetSendAttachment => {
                    let send = draft();
                    let file = json!({ "name": "a.txt", "content_type": "text/plain", "content_base64": "aGVsbG8=" });
                    world.call("POST", &format!("{sends}/{send}/attachments"), Some(&credential), Some(file));
                    let method = if *id == RouteId::GetSendAttachment { "GET" } else { "DELETE" };
                    (method, format!("{sends}/{send}/attachments/0"), None)
                }
                RouteId::RedraftSend => {
                    let send = draft();
                    world.call("POST", &format!("{sends}/{send}/submit"), Some(&credential), None);
                    // Refused by a third person: neither its sponsor nor whoever minted it.
                    let (dora, dora_token) = world.person("dora@example.com");
                    world.grant_all(&dora, &["approval.decide"], &mailbox);
                    let path = format!("{sends}/{send}");
                    let refusal = world.refusal_of(&dora_token, &path, "Say it more kindly.");
                    world.call("POST", &format!("{path}/refuse"), Some(&dora_token), Some(refusal));
                    ("POST", format!("{sends}/{send}/redraft"), None)
                }
                RouteId::RetrySend => {
                    // Its own submission, approved by a person, failed by the binding once.
                    let send = draft();
                    world.call("POST", &format!("{sends}/{send}/submit"), Some(&credential), None);
                    // Neither its sponsor nor the administrator who minted it: a third person.
                    let (carol, carol_token) = world.person("carol@example.com");
                    world.grant_all(&carol, &["approval.decide"], &mailbox);
                    let path = format!("{sends}/{send}");
                    world.approve_while_refusing(&carol_token, &path, "ana@customer.example");
                    ("POST", format!("{sends}/{send}/retry"), None)
                }
                RouteId::ListNotifications => {
                    world.reminder_in_feed(&ben_token);
                    ("GET", "/api/me/notifications".into(), None)
                }
                RouteId::MarkNotificationsRead => {
                    world.reminder_in_feed(&ben_token);
                    ("POST", "/api/me/notifications/read".into(), Some(json!({ "all": true })))
                }
                RouteId::MarkNotificationUnread => {
                    world.reminder_in_feed(&ben_token);
                    let feed = world.call("GET", "/api/me/notifications", Some(&ben_token), None);
                    let id = body(&feed)["notifications"][0]["id"].as_str().unwrap_or_default().to_string();
                    ("DELETE", format!("/api/me/notifications/{id}/read"), None)
                }
                RouteId::ListEvents => ("GET", "/api/me/events".into(), None),
                RouteId::GetEvent => {
                    ("GET", format!("/api/me/events/{}", world.reminder(&ben_token, "2026-12-14")), None)
                }
                RouteId::GetProfile => ("GET", "/api/me/profile".into(), None),
                RouteId::CreateEvent => {
                    ("POST", "/api/me/events".into(), Some(json!({ "title": "Call", "due_at": "2026-12-14T09:00" })))
                }
                RouteId::UpdateEvent => (
                    "PATCH",
                    format!("/api/me/events/{}", world.reminder(&ben_token, "2026-12-14")),
                    Some(json!({ "due_at": "2026-12-15" })),
                ),
                RouteId::DeleteEvent => {
                    ("DELETE", format!("/api/me/events/{}", world.reminder(&ben_token, "2026-12-14")), None)
                }
                RouteId::MarkDone => {
                    ("POST", format!("/api/me/events/{}/done", world.reminder(&ben_token, "2026-12-14")), None)
                }
                RouteId::MarkAck => {
                    ("POST", format!("/api/me/events/{}/ack", world.reminder(&ben_token, "2026-12-14")), None)
                }
                RouteId::UpdateProfile => ("PATCH", "/api/me/profile".into(), Some(json!({ "tz": "Europe/Berlin" }))),
                RouteId::SendAgentMessage => (
                    "POST",
                    "/api/agent-messages".into(),
                    Some(json!({ "recipient": peer().0, "kind": "event", "content": {}, "idempotency_key": "k" })),
                ),
                RouteId::ListSentAgentMessages => {
                    sent_by_agent();
                    ("GET", "/api/agent-messages".into(), None)
                }
                RouteId::GetAgentMessage => {
                    ("GET", format!("/api/agent-messages/{}", sent_by_agent()["id"].as_str().unwrap()), None)
                }
                RouteId::ListAgentInbox | RouteId::ClaimAgentMessages => {
                    world.send_message(&peer().1, &agent_id, "event", json!({ "deployed": true }));
                    if *id == RouteId::ListAgentInbox {
                        ("GET", "/api/agent-inbox".into(), None)
                    } else {
                        ("POST", "/api/agent-inbox/leases".into(), Some(json!({ "max": 2 })))
                    }
                }
                RouteId::AckAgentMessage => {
                    let (message, token) = leased_by_agent();
                    ("POST", format!("/api/agent-inbox/{message}/ack"), Some(json!({ "fencing_token": token })))
                }
                RouteId::RenewAgentLease => {
                    let (message, token) = leased_by_agent();
                    ("POST", format!("/api/agent-inbox/{message}/renew"), Some(json!({ "fencing_token": token })))
                }
                RouteId::ReplyToAgentMessage => {
                    let (message, token) = leased_by_agent();
                    let reply = json!({ "fencing_token": token, "content": 95 });
                    ("POST", format!("/api/agent-inbox/{message}/reply"), Some(reply))
                }
                RouteId::RejectAgentMessage => {
                    let (message, token) = leased_by_agent();
                    let reject = json!({ "fencing_token": token, "reason": "Not mine." });
                    ("POST", format!("/api/agent-inbox/{message}/reject"), Some(reject))
                }
                RouteId::ListAgentConversations => {
                    sent_by_agent();
                    ("GET", "/api/agent-conversations".into(), None)
                }
                RouteId::GetAgentConversation => {
                    let conversation = sent_by_agent()["conversation_id"].as_str().unwrap().to_string();
                    ("GET", format!("/api/agent-conversations/{conversation}"), None)
                }
                RouteId::CancelAgentConversation => {
                    let conversation = sent_by_agent()["conversation_id"].as_str().unwrap().to_string();
                    ("POST", format!("/api/agent-conversations/{conversation}/cancel"), None)
                }
                other => {
                    panic!("{other:?} is in capability {} but has no promise fixture here: add one", capability.name)
                }
            };
            let response = world.call(method, &path, Some(&credential), payload);
            assert!(
                response.status == 200 || response.status == 201 || response.status == 202,
                "{} promises {} {}, which answered {}: {}",
                capability.name,
                route.method.as_str(),
                route.path,
                response.status,
                text(&response)
            );
            // A filtered route answers 200 even to a caller who sees nothing, so a
            // listing must also show the fixture's rows.
            if let Some(listing) = body(&response).as_object().and_then(|object| {
                ["results", "mailboxes", "messages", "sends", "conversations", "notifications"]
                    .iter()
                    .find_map(|key| object.get(*key))
            }) {
                assert!(
                    listing.as_array().is_some_and(|rows| !rows.is_empty()),
                    "{} promises {}, which listed nothing: {}",
                    capability.name,
                    route.tool,
                    text(&response)
                );
            }
        }
    }
}

#[test]
fn an_agent_sees_the_grantable_routes_within_its_ceiling_over_mcp_and_calls_them_as_itself() {
    let (world, mailbox, receipt, ben, _) = office();
    let (agent, credential) = world.mint(&ben, &["mail.triage"], grants(&mailbox, &["mailbox.metadata.read"]));
    let listed = world.call(
        "POST",
        "/mcp",
        Some(&credential),
        Some(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" })),
    );
    assert!(listed.round_trips <= 1);
    let mut names: Vec<String> = body(&listed)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(names, vec!["get_message", "list_messages", "list_readable_mailboxes"]);
    let called = world.call(
        "POST",
        "/mcp",
        Some(&credential),
        Some(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "get_message", "arguments": { "mailbox_id": mailbox, "receipt_id": receipt } } })),
    );
    assert_eq!(body(&called)["result"]["structuredContent"]["subject"], "Where is my invoice?");
    let outside = world.call(
        "POST",
        "/mcp",
        Some(&credential),
        Some(json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "get_message_body", "arguments": { "mailbox_id": mailbox, "receipt_id": receipt } } })),
    );
    assert_eq!(body(&outside)["error"]["code"], -32602, "a route outside the ceiling is no tool for this agent");
    world.call(
        "POST",
        "/mcp",
        Some(&credential),
        Some(json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": { "name": "search_messages", "arguments": { "q": "x" } } })),
    );
    world.admin("POST", &format!("/api/agents/{agent}/pause"), None);
    let paused = world.call(
        "POST",
        "/mcp",
        Some(&credential),
        Some(json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/list" })),
    );
    assert_refused(&paused, 403, "agent_paused");
}

#[test]
fn an_agent_s_submission_is_not_sealed_once_the_agent_or_its_sponsor_has_lost_authority() {
    for ending in ["revoke the agent", "the agent expires", "disable the sponsor"] {
        let (world, a, _, _, ben, credential) =
            delegated(&["mailbox.metadata.read", "mailbox.content.read", "send.propose"]);
        let sends = format!("/api/mailboxes/{a}/sends");
        let draft = as_agent(
            &world,
            &credential,
            "POST",
            &sends,
            Some(json!({ "to": ["ana@x.example"], "subject": "S", "text": "T" })),
        );
        let send = body(&draft)["id"].as_str().unwrap().to_string();
        as_agent(&world, &credential, "POST", &format!("{sends}/{send}/submit"), None);
        let (carol, carol_token) = world.person("carol@example.com");
        world.grant_all(&carol, &["mailbox.metadata.read", "approval.decide"], &a);
        let agent = body(&world.admin("GET", "/api/agents", None))["agents"][0]["id"].as_str().unwrap().to_string();
        match ending {
            "revoke the agent" => {
                world.admin("POST", &format!("/api/agents/{agent}/revoke"), None);
            }
            // Its expiry arrives while the submission waits (set directly: moving
            // the clock two days would expire the approver's session too).
            "the agent expires" => world.node.database.tamper(&format!(
                "UPDATE agents SET expires_at = {} WHERE id = '{agent}'",
                world.node.platform.now_ms()
            )),
            _ => {
                world.admin("POST", &format!("/api/people/{ben}/disable"), None);
            }
        }
        let approval = world.call(
            "POST",
            &format!("{sends}/{send}/approve"),
            Some(&carol_token),
            Some(world.decision(&carol_token, &format!("{sends}/{send}"))),
        );
        assert_refused(&approval, 409, "author_lost_authority");
        assert!(world.node.mailer.sent.borrow().is_empty(), "{ending}: nothing leaves");
    }
}

#[test]
fn a_pinned_route_no_capability_contains_any_more_is_shown_never_dropped() {
    let (world, mailbox, _, ben, _) = office();
    let (agent, _) = world.mint(&ben, &["mail.triage"], grants(&mailbox, &["mailbox.metadata.read"]));
    // As if a route had been renamed or a capability shrunk after this agent was minted.
    world
        .node
        .database
        .tamper(&format!("INSERT INTO agent_routes (agent_id, route) VALUES ('{agent}', 'list_labels')"));
    let shown = body(&world.admin("GET", &format!("/api/agents/{agent}"), None));
    assert_eq!(shown["other_routes"], json!(["list_labels"]));
    assert!(shown["routes"].as_array().unwrap().contains(&json!("list_labels")));
    assert_eq!(shown["capabilities"], json!([{ "name": "mail.triage", "held": 3, "total": 3 }]));
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

#[test]
fn an_agent_s_mailbox_tools_stop_at_its_ceiling_though_it_holds_more() {
    let (world, a, receipt, ben, ben_token) = office();
    let (agent, credential) = world.mint(&ben, &["mail.read", "mail.triage"], grants(&a, READ_MAIL));
    // Granted later, and backed by the sponsor: held, but outside the ceiling.
    assert_eq!(world.grant(&agent, "send.propose", &a).status, 201);
    let tools_on_a = |token: &str| {
        let listed = body(&world.call("GET", "/api/mailboxes/readable", Some(token), None));
        let mailbox =
            listed["mailboxes"].as_array().unwrap().iter().find(|mailbox| mailbox["id"] == a.as_str()).cloned();
        mailbox.map(|mailbox| (mailbox["held"].clone(), mailbox["tools"].clone())).unwrap()
    };
    let (held, tools) = tools_on_a(&credential);
    assert!(held.as_array().unwrap().iter().any(|relation| relation == "send.propose"), "{held}");
    assert!(tools.as_array().unwrap().iter().any(|tool| tool == "get_message_body"), "{tools}");
    assert!(!tools.as_array().unwrap().iter().any(|tool| tool == "create_draft"), "{tools}");
    let drafted = as_agent(
        &world,
        &credential,
        "POST",
        &format!("/api/mailboxes/{a}/sends"),
        Some(json!({ "to": [], "subject": "x", "text": "y", "reply_to": receipt })),
    );
    assert_refused(&drafted, 403, "outside_ceiling");
    // The sponsor, who has no ceiling, is offered it on the same relations.
    let (_, tools) = tools_on_a(&ben_token);
    assert!(tools.as_array().unwrap().iter().any(|tool| tool == "create_draft"), "{tools}");
}
