//! Agents across organisations: the peers an administrator connects (each
//! with the credential its node presents here), and the owner plane's view of
//! an agent's messages to agents elsewhere.

use crate::api::{CreatePeer, Peer, PeerCreated, PeerList, RemoteDeliveryList, UpdatePeer};
use crate::route::Method::{Delete, Get, Patch, Post};
use crate::route::{Feature, PathParameter, Refuses, Route, Tier};
use crate::route_id::RouteId;

use super::shared::{ADMIN, CURSOR, SPONSOR};

/// Why connecting organisations is not offered to machines.
const A_PERSON_CONNECTS: &str =
    "which organisations may reach this node's agents, and with which credential, is an administrator's to choose";

pub(super) fn list_peers() -> Route {
    Route::new(RouteId::ListPeers, Get, "/api/peers", "list_peers")
        .summary("List connected organisations")
        .description("Lists the other organisations this node converses with (peers), connected ones first: each one's domain, and whether the credential it issued to this node is set.")
        .response::<PeerList>()
        .feature(Feature::AgentNetwork)
        .exception(Tier::Operator, A_PERSON_CONNECTS)
        .authority(ADMIN)
}

pub(super) fn create_peer() -> Route {
    Route::new(RouteId::CreatePeer, Post, "/api/peers", "create_peer")
        .summary("Connect another organisation")
        .description("Connects another organisation's node by its domain and returns the credential (`mr_per_…`) its node presents when its agents message agents here, once: give it to that organisation's administrator. Its agents then reach the agents here listed on the node's card, under each one's own delivery policy; they are shown as remote senders with their domain, and what they send is marked untrusted. Set the credential that organisation issued to this node (`outbound_credential`, here or with update_peer) so that messages to its agents carry it. One live peer per domain.")
        .request::<CreatePeer>()
        .response::<PeerCreated>()
        .created()
        .refuses(const { &[Refuses::Conflict("A live peer already has this domain: disconnect it first, or set its credential with update_peer.")] })
        .tier(Tier::Operator)
        .feature(Feature::AgentNetwork)
        .withheld_because(A_PERSON_CONNECTS)
        .authority(ADMIN)
}

pub(super) fn update_peer() -> Route {
    Route::new(RouteId::UpdatePeer, Patch, "/api/peers/:peerId", "update_peer")
        .summary("Change a connected organisation")
        .description(
            "Sets the credential the other organisation issued to this node (kept, never shown again), or its name.",
        )
        .path_parameters(&[PathParameter::PeerId])
        .request::<UpdatePeer>()
        .response::<Peer>()
        .refuses(const { &[Refuses::Conflict("The peer is disconnected.")] })
        .tier(Tier::Operator)
        .feature(Feature::AgentNetwork)
        .withheld_because(A_PERSON_CONNECTS)
        .authority(ADMIN)
}

pub(super) fn disconnect_peer() -> Route {
    Route::new(RouteId::DisconnectPeer, Delete, "/api/peers/:peerId", "disconnect_peer")
        .summary("Disconnect an organisation")
        .description("Disconnects a peer: the credential issued to it opens nothing from now on, and the credential it issued to this node is forgotten. Messages its agents sent stay as they are.")
        .path_parameters(&[PathParameter::PeerId])
        .response::<Peer>()
        .refuses(const { &[Refuses::Conflict("The peer is already disconnected.")] })
        .tier(Tier::Operator)
        .feature(Feature::AgentNetwork)
        .withheld_because(A_PERSON_CONNECTS)
        .authority(ADMIN)
}

pub(super) fn list_remote_deliveries() -> Route {
    Route::new(RouteId::ListRemoteDeliveries, Get, "/api/agents/:agentId/remote-deliveries", "list_remote_deliveries")
        .summary("List an agent's messages to agents elsewhere")
        .description("Lists the messages an agent sent to agents elsewhere, newest first, each with where it stands in the outbox (pending, sent, done, dead), the task the agent elsewhere made of it, and every attempt the outbox made, with what happened.")
        .path_parameters(&[PathParameter::AgentId])
        .query_parameters(const { &[
            crate::route::Parameter::page_size("deliveries", 50, 100),
            CURSOR,
        ] })
        .response::<RemoteDeliveryList>()
        .feature(Feature::AgentNetwork)
        .authority(SPONSOR)
}
