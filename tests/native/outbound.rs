//! The node's own requests never aim inward (issue 27 §3): every address a
//! request could go to (a reminder webhook, a butler's webhook, an OAuth
//! client's metadata document) is refused in every spelling of an inward
//! address when it is set, naming its field, and again just before the request
//! for an address stored before the rule; loopback only on a loopback node.

use mailroom::mail::Delivery;
use mailroom::testing::{RequestExt, TestNode, request};
use serde_json::{Value, json};

use crate::desk::{DRAFTS_FROM_THE_LISTING, Desk};
use crate::support::*;

/// Every kind of inward address, in the spellings browsers and `fetch` accept.
const INWARD: &[&str] = &[
    "https://10.0.0.1/hook",
    "https://169.254.169.254/latest/meta-data/",
    "https://127.0.0.1/hook",
    "https://2130706433/hook",
    "https://0177.0.0.1/hook",
    "https://0x7f.1/hook",
    "https://127.1/hook",
    "https://0xa9fea9fe/hook",
    "https://100.64.0.1/hook",
    "https://192.168.1.1:8443/hook",
    "https://0.0.0.0/hook",
    "https://[::1]/hook",
    "https://[::ffff:10.0.0.1]/hook",
    "https://[::ffff:7f00:1]/hook",
    "https://[::127.0.0.1]/hook",
    "https://[64:ff9b::a9fe:a9fe]/hook",
    "https://[2002:c0a8:101::]/hook",
    "https://[fd12:3456::1]/hook",
    "https://[fe80::1]/hook",
    "https://localhost/hook",
    "https://localhost./hook",
    "https://api.localhost/hook",
    "https://printer.local/hook",
    "https://metadata.google.internal./computeMetadata/v1/",
    "https://router.home.arpa/hook",
    "https://intranet/hook",
    "https://hooks.example.org@10.0.0.1/hook",
    "https://hooks.example.org\\@10.0.0.1/hook",
    "https://%31%30.0.0.1/hook",
    "http://hooks.example.org/hook",
    "https://mailroom.test/api/setup",
];

#[test]
fn a_reminder_webhook_aiming_inward_is_refused_naming_url_and_why() {
    let world = World::new();
    let (_, token) = world.person("kei@example.com");
    for address in INWARD {
        let refused = world.call("PUT", "/api/me/profile/webhook", Some(&token), Some(json!({ "url": address })));
        assert_refused(&refused, 400, "invalid_webhook_url");
        let error = &body(&refused)["error"];
        assert_eq!(error["message"], "`url` cannot be used as a webhook.", "{address}");
        assert!(error["reason"].as_str().unwrap().starts_with("`url`: it"), "{address}: {error}");
    }
    let private = world.call(
        "PUT",
        "/api/me/profile/webhook",
        Some(&token),
        Some(json!({ "url": "https://0xa9fea9fe/latest/meta-data/" })),
    );
    assert!(
        body(&private)["error"]["reason"].as_str().unwrap().contains(
            "its host `0xa9fea9fe` (read as `169.254.169.254`) is a link-local address (169.254.0.0/16, where cloud metadata services answer)"
        ),
        "{}",
        text(&private)
    );
    let profile = body(&world.call("GET", "/api/me/profile", Some(&token), None));
    assert_eq!(profile["channels"]["webhook_url"], Value::Null, "nothing was set");
    let set = world.call(
        "PUT",
        "/api/me/profile/webhook",
        Some(&token),
        Some(json!({ "url": "https://hooks.example.org/kei" })),
    );
    assert_eq!(set.status, 200, "a public address is taken: {}", text(&set));
}

#[test]
fn a_reminder_webhook_stored_before_the_rule_is_refused_when_it_would_be_posted() {
    let world = World::at(utc("2026-12-05T09:00"));
    let (id, token) = world.person("old@example.com");
    let set = world.call(
        "PUT",
        "/api/me/profile/webhook",
        Some(&token),
        Some(json!({ "url": "https://hooks.example.org/old" })),
    );
    assert_eq!(set.status, 200, "{}", text(&set));
    // As an address stored under the looser rule would be.
    world
        .node
        .database
        .tamper(&format!("UPDATE reminder_profiles SET webhook_url = 'https://0x7f.1/admin' WHERE person_id = '{id}'"));
    let event = world.reminder(&token, "2026-12-05");
    let run = world.node.run_reminders();
    assert_eq!((run.delivered, run.failed), (0, 1), "{run:?}");
    assert!(world.node.webhooks.posted.borrow().is_empty(), "nothing was posted inward");
    let shown = body(&world.call("GET", &format!("/api/me/events/{event}"), Some(&token), None));
    let delivery = &shown["deliveries"][0];
    assert_eq!(delivery["outcome"], "failed");
    assert_eq!(
        delivery["last_error"],
        "the webhook may not be posted to: its host `0x7f.1` (read as `127.0.0.1`) is a loopback address (127.0.0.0/8), inside a network rather than on the internet"
    );
}

/// A mailbox, with ben holding what a notifying butler needs.
fn butler_office() -> Desk {
    Desk::new("support@mailroom.test").with("ben@example.com", DRAFTS_FROM_THE_LISTING)
}

fn notifying(url: &str) -> Value {
    json!({ "conditions": [{ "on": "subject", "contains": "invoice" }], "effects": [{ "do": "notify_webhook", "url": url }] })
}

fn deliver_invoice(world: &World, message_id: &str) {
    let raw = format!(
        "From: Ana <ana@customer.example>\r\nTo: Support <support@mailroom.test>\r\nSubject: Invoice\r\n\
         Message-ID: <{message_id}>\r\nDate: Mon, 16 Nov 2026 09:00:00 +0000\r\n\r\nHello.\r\n"
    );
    let delivered = world.node.deliver("ana@customer.example", "support@mailroom.test", raw.as_bytes());
    assert!(matches!(delivered, Ok(Delivery::Stored { .. })), "{delivered:?}");
}

#[test]
fn a_butler_webhook_aiming_inward_is_refused_when_set_and_when_it_would_be_posted() {
    let office = butler_office();
    let (world, mailbox, ben) = (&office.world, &office.mailbox, &office.person("ben").id);
    let butlers = format!("/api/mailboxes/{mailbox}/butlers");
    for address in INWARD {
        let refused =
            world.admin("POST", &butlers, Some(json!({ "name": "Hook", "sponsor": ben, "rules": notifying(address) })));
        assert_refused(&refused, 400, "invalid_body");
        assert!(text(&refused).contains("`rules.effects[0].url`: "), "{address}: {}", text(&refused));
    }
    let refused = world.admin(
        "POST",
        &butlers,
        Some(json!({ "name": "Hook", "sponsor": ben, "rules": notifying("https://[::ffff:10.0.0.1]/hook") })),
    );
    assert!(text(&refused).contains("is the IPv4-mapped form of a private address (10.0.0.0/8)"), "{}", text(&refused));

    // A version stored before the rule: refused just before the post, nothing sent.
    let created = world.admin(
        "POST",
        &butlers,
        Some(json!({ "name": "Hook", "sponsor": ben, "rules": notifying("https://hooks.example.org/in") })),
    );
    assert_eq!(created.status, 201, "{}", text(&created));
    let butler = format!("{butlers}/{}", body(&created)["id"].as_str().unwrap());
    world.node.database.tamper(
        "UPDATE butler_versions SET rules_json = replace(rules_json, 'https://hooks.example.org/in', 'https://169.254.169.254/latest')",
    );
    assert_eq!(world.admin("POST", &format!("{butler}/publish"), Some(json!({ "version": 1 }))).status, 200);
    deliver_invoice(world, "old-rule@customer.example");
    assert!(world.node.webhooks.posted.borrow().is_empty(), "nothing was posted inward");
    let logs = world.node.platform.logs.borrow().join("\n");
    assert!(logs.contains("may not be posted to: its host `169.254.169.254` is a link-local address"), "{logs}");
}

#[test]
fn an_oauth_metadata_document_aiming_inward_is_never_fetched_and_the_refusal_names_client_id() {
    let world = World::new();
    let (_, token) = world.person("ben@example.com");
    for address in INWARD.iter().filter(|address| address.starts_with("https://")) {
        let client_id = address.replace("/hook", "/client.json");
        let query = format!(
            "response_type=code&client_id={}&redirect_uri={}&code_challenge={OAUTH_CHALLENGE}&code_challenge_method=S256",
            urlencode(&client_id),
            urlencode(OAUTH_REDIRECT)
        );
        let refused = world.call("GET", &format!("/api/oauth/consent?{query}"), Some(&token), None);
        assert_refused(&refused, 404, "client_metadata_unusable");
        assert!(text(&refused).contains("`client_id`"), "{client_id}: {}", text(&refused));
    }
    assert!(world.node.webhooks.fetched.borrow().is_empty(), "nothing was fetched");
}

fn urlencode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

#[test]
fn loopback_is_reached_only_by_a_node_that_itself_runs_on_a_loopback_origin() {
    // A node on a developer's machine, as the end-to-end tests run it.
    let mut node = TestNode::new();
    node.config.public_origin = Some("http://127.0.0.1:8787".into());
    let local = |built: mailroom::core::http::Request| {
        let mut built = built;
        built.origin = "http://127.0.0.1:8787".into();
        node.send(built)
    };
    let setup = local(request("POST", "/api/setup").json(json!({
        "setup_token": mailroom::testing::TEST_SETUP_TOKEN, "email": ADMIN_EMAIL, "name": "Ada", "password": ADMIN_PASSWORD,
    })));
    assert_eq!(setup.status, 201, "{}", text(&setup));
    let session =
        local(request("POST", "/api/sessions").json(json!({ "email": ADMIN_EMAIL, "password": ADMIN_PASSWORD })));
    let token = body(&session)["session"]["access_token"].as_str().unwrap().to_string();
    let set =
        |url: &str| local(request("PUT", "/api/me/profile/webhook").bearer(&token).json(json!({ "url": url }))).status;
    for allowed in ["http://127.0.0.1:9999/hook", "http://localhost:9999/hook", "https://[::1]:9999/hook"] {
        assert_eq!(set(allowed), 200, "{allowed}");
    }
    // Everything inward but loopback stays refused.
    for refused in ["https://10.0.0.1/hook", "https://169.254.169.254/", "http://hooks.example.org/"] {
        assert_eq!(set(refused), 400, "{refused}");
    }
    // A node anywhere else reaches no loopback address (the kit's node is at https://mailroom.test).
    let world = World::new();
    let (_, theirs) = world.person("kei@example.com");
    let refused = world.call(
        "PUT",
        "/api/me/profile/webhook",
        Some(&theirs),
        Some(json!({ "url": "http://127.0.0.1:9999/hook" })),
    );
    assert_refused(&refused, 400, "invalid_webhook_url");
}

#[test]
fn the_runtimes_own_guard_is_on_and_no_fetch_follows_a_redirect() {
    let root = env!("CARGO_MANIFEST_DIR");
    let wrangler = std::fs::read_to_string(format!("{root}/wrangler.toml")).unwrap();
    let flags = wrangler.lines().find(|line| line.starts_with("compatibility_flags")).unwrap_or_default();
    assert!(flags.contains("\"global_fetch_strictly_public\""), "wrangler.toml: {flags}");
    // A redirect could lead where the rule was never asked: the adapter's
    // fetches take the receiver's answer as it is.
    let adapter = std::fs::read_to_string(format!("{root}/src/adapter/bindings.rs")).unwrap();
    assert_eq!(adapter.matches(".with_redirect(RequestRedirect::Manual)").count(), 2, "a GET and a POST");
    assert!(!adapter.contains("RequestRedirect::Follow"));
}
