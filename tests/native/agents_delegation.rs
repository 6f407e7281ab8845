//! Delegation: an agent's authority is its own tuples intersected with its
//! sponsor's, on every predicate (single objects, both search arms, listings,
//! drafting, sealing an approved send), and withdrawn exactly when the sponsor
//! loses a relation, directly or by team, or is disabled.

use mailroom::core::platform::Platform;
use serde_json::{Value, json};

use crate::agents::{SUPPORT, as_agent, grants, office, sign_in_as};
use crate::desk::{Desk, READS_THE_MAILBOX};
use crate::support::*;

/// The agent (and its sponsor) on two mailboxes, for the delegation tests:
/// (world, mailbox a, mailbox b, receipt in a, ben, agent credential).
fn delegated(agent_relations: &[&str]) -> (World, String, String, String, String, String) {
    let office = office();
    let (receipt, ben) = (office.receipt().to_string(), office.person("ben").id.clone());
    let Desk { world, mailbox: a, .. } = office;
    let b = world.mailbox("billing@mailroom.test");
    world.deliver("plain", "billing@mailroom.test");
    world.grant_all(&ben, READS_THE_MAILBOX, &b);
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
    let (world, a, _, receipt, ben, credential) = delegated(READS_THE_MAILBOX);
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
    let (world, a, b, receipt, ben, credential) = delegated(READS_THE_MAILBOX);
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
    let (world, a, _, receipt, _, credential) = delegated(READS_THE_MAILBOX);
    let agent = body(&world.admin("GET", "/api/agents", None))["agents"][0]["id"].as_str().unwrap().to_string();
    world.revoke(&agent, "mailbox.content.read", &a);
    let refused = as_agent(&world, &credential, "GET", &format!("/api/mailboxes/{a}/messages/{receipt}/body"), None);
    assert_refused(&refused, 403, "missing_relation");
}

#[test]
fn a_disabled_sponsor_leaves_the_agent_without_authority() {
    let (world, _, _, _, ben, credential) = delegated(READS_THE_MAILBOX);
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
