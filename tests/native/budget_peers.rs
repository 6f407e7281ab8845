//! The budget's fixtures for agents across organisations (decision 0050): the
//! peers an administrator connects, the outbox an owner watches, and the push
//! an agent elsewhere makes. Kept beside `budget.rs`, which calls it for these
//! routes, so neither file runs long.

use mailroom::core::http::Request;
use mailroom::testing::{RequestExt, request};
use mailroom_contract::RouteId;
use serde_json::json;

use crate::support::*;

/// A request of `route` that succeeds, with its status, for Ben (`ben`, with
/// `ben_token`) and the administrator.
pub(crate) fn fixture(world: &World, route: RouteId, ben: &str, ben_token: &str) -> (Request, u16) {
    let admin = |method: &str, path: &str| request(method, path).bearer(&world.admin_token);
    // A peer connected, by a domain of its own for every route: its path.
    let new_peer = || json!({ "domain": format!("peer-{route:?}.example").to_lowercase(), "name": "Partner" });
    let peer = || {
        let created = world.call("POST", "/api/peers", Some(&world.admin_token), Some(new_peer()));
        format!("/api/peers/{}", body(&created)["peer"]["id"].as_str().unwrap())
    };
    match route {
        RouteId::ListRemoteDeliveries => {
            let (sender, token) = world.messenger(ben);
            let card = "https://agents.partner.example/a2a/agt_1/.well-known/agent-card.json";
            let policy = json!({ "remote_recipients": ["partner.example"] });
            world.call("PATCH", &format!("/api/agents/{sender}/messaging"), Some(ben_token), Some(policy));
            world.send_message(&token, card, "request", json!("hello"));
            (request("GET", &format!("/api/agents/{sender}/remote-deliveries")).bearer(ben_token), 200)
        }
        RouteId::ReceiveTaskPush => {
            // A person sends elsewhere as themselves, without an outbound policy.
            let card = "https://agents.partner.example/a2a/agt_2/.well-known/agent-card.json";
            let id = world.send_message(ben_token, card, "event", json!(1))["id"].as_str().unwrap().to_string();
            let secret = mailroom::a2a::push_token(&world.node.config.session_key, &id);
            let push = request("POST", &format!("/a2a/outbox/{id}")).header("x-a2a-notification-token", &secret);
            (push.json(json!({})), 202)
        }
        RouteId::ListPeers => {
            world.call("POST", "/api/peers", Some(&world.admin_token), Some(new_peer()));
            (admin("GET", "/api/peers"), 200)
        }
        RouteId::CreatePeer => (admin("POST", "/api/peers").json(new_peer()), 201),
        RouteId::UpdatePeer => {
            (admin("PATCH", &peer()).json(json!({ "outbound_credential": "mr_per_theirs.secret" })), 200)
        }
        RouteId::DisconnectPeer => (admin("DELETE", &peer()), 200),
        other => panic!("{other:?} is not a route of agents across organisations"),
    }
}
