//! A2A: the agent cards and JSON-RPC endpoints of the gateway, for one agent and for
//! the node.

use crate::api::{A2aCard, JsonRpcRequest, JsonRpcResponse, TaskPush};
use crate::route::Method::{Get, Post};
use crate::route::{Authority, Feature, Parameter, PathParameter, Produces, Refuses, Route, Tier};
use crate::route_id::RouteId;

/// The A2A version a request asks for, where a client cannot send the header
/// (A2A 1.0 §3.6.1 lets it be a request parameter instead).
const A2A_VERSION: Parameter = Parameter::text(
    "A2A-Version",
    "The A2A version asked for, as the `A2A-Version` header says it (which wins when both are sent): `1.0` or `0.3`.",
);

pub(super) fn get_a2a_agent_card() -> Route {
    Route::new(RouteId::GetA2aAgentCard, Get, "/a2a/:agentId/.well-known/agent-card.json", "get_a2a_agent_card")
        .summary("An agent's A2A card")
        .description("The A2A agent card of an agent on this node: its JSON-RPC endpoint and the bearer credential it takes, in the A2A version asked for (the `A2A-Version` header, or the query parameter): 1.0 (`supportedInterfaces`, listing the endpoint in 1.0 and 0.3) unless 0.3 is asked for (`url`, `preferredTransport`). Each carries only its own version's fields.")
        .path_parameters(&[PathParameter::AgentId])
        .query_parameters(const { &[A2A_VERSION] })
        .response::<A2aCard>()
        .exception(Tier::Operator, "an agent card is how agents elsewhere find an agent's A2A endpoint, read before any credential is used")
        .feature(Feature::AgentNetwork)
        .authority(Authority::Public)
}

pub(super) fn a2a_endpoint() -> Route {
    Route::new(RouteId::A2aEndpoint, Post, "/a2a/:agentId", "a2a_endpoint")
        .summary("An agent's A2A endpoint")
        .description("A2A JSON-RPC for sending the agent requests as tasks: A2A 1.0 (`SendMessage`, `SendStreamingMessage`, `GetTask`, `ListTasks`, `CancelTask`, `SubscribeToTask`, with `A2A-Version: 1.0`) and 0.3 (`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`, `tasks/resubscribe`; no header, or `A2A-Version: 0.3`). The version asked for decides which methods there are. A send is a durable request to the agent; its reply becomes the task's artifact. A streamed send or a subscription answers server-sent events, each one JSON-RPC response: the task, then its updates as they happen, until it is finished. Push notifications are not supported and answer A2A's error for them. The caller is its bearer credential (an agent's `mr_agt_`, a person's session, or a connected organisation's node with the `mr_per_` credential issued for it, which names its agent that sends by that agent's card URL in the `Mailroom-Sender` header); every call re-enters the node's own routes as that caller. Also answered with a trailing slash.")
        .path_parameters(&[PathParameter::AgentId])
        .query_parameters(const { &[A2A_VERSION] })
        .request::<JsonRpcRequest>()
        .response::<JsonRpcResponse>()
        .produces(Produces::JsonRpc)
        .streams()
        .trailing_slash()
        .tier(Tier::Surface)
        .feature(Feature::AgentNetwork)
        .refuses(const { &[
            Refuses::JsonRpc { status: 400, when: "A JSON-RPC error: the body is not JSON, not one JSON-RPC request object (an array, a number, null), or the `A2A-Version` is one the gateway does not speak." },
            Refuses::JsonRpc { status: 415, when: "A JSON-RPC error (-32005): the body is not sent as `application/json`." },
        ] })
        .open_to_peers()
        .authority(Authority::Open)
}

pub(super) fn get_a2a_node_card() -> Route {
    Route::new(RouteId::GetA2aNodeCard, Get, "/.well-known/agent-card.json", "get_a2a_node_card")
        .summary("The node's A2A card")
        .description("The node's own A2A card, at its origin where A2A clients look first: what the node is, where each agent's card is (`/a2a/{agentId}/.well-known/agent-card.json`), and, as its skills, the agents whose owners chose to list them here. No other agent is named: an agent's id and name are its owner's to give. In the A2A version asked for, as an agent's card is.")
        .query_parameters(const { &[A2A_VERSION] })
        .response::<A2aCard>()
        .exception(Tier::Operator, "the node's card is how agents elsewhere find its listed agents, read before any credential is used")
        .feature(Feature::AgentNetwork)
        .authority(Authority::Public)
}

pub(super) fn a2a_node_endpoint() -> Route {
    Route::new(RouteId::A2aNodeEndpoint, Post, "/a2a", "a2a_node_endpoint")
        .summary("The node's A2A endpoint")
        .description("The JSON-RPC endpoint the node's card names. The node itself takes no tasks: every task method answers A2A's UnsupportedOperationError (-32004) naming where an agent's endpoint is, and the framing, versions and errors are an agent endpoint's. Also answered with a trailing slash.")
        .query_parameters(const { &[A2A_VERSION] })
        .request::<JsonRpcRequest>()
        .response::<JsonRpcResponse>()
        .produces(Produces::JsonRpc)
        .trailing_slash()
        .tier(Tier::Surface)
        .feature(Feature::AgentNetwork)
        .refuses(const { &[
            Refuses::JsonRpc { status: 400, when: "A JSON-RPC error: the body is not JSON, not one JSON-RPC request object, or the `A2A-Version` is one the node does not speak." },
            Refuses::JsonRpc { status: 415, when: "A JSON-RPC error (-32005): the body is not sent as `application/json`." },
        ] })
        .authority(Authority::Public)
}

pub(super) fn receive_task_push() -> Route {
    Route::new(RouteId::ReceiveTaskPush, Post, "/a2a/outbox/:agentMessageId", "receive_task_push")
        .summary("Word from an agent elsewhere that a task changed")
        .description("Where an agent elsewhere that pushes (its card says `pushNotifications`) tells this node that the task it made of one of this node's messages changed: the push config the outbox sent with the message names this address and a token, which the push carries as `X-A2A-Notification-Token`. The push's body is not read: the node then asks the agent elsewhere how the task stands, as it would at its next run. Answers 202.")
        .path_parameters(&[PathParameter::AgentMessageId])
        .request::<TaskPush>()
        .accepted()
        .tier(Tier::Operator)
        .withheld_because("only the agent elsewhere a message went to pushes here, with the token the node gave it for that message")
        .feature(Feature::AgentNetwork)
        .refuses(const { &[
            Refuses::WrongSecret("The push does not carry the token the send's push config named."),
        ] })
        .authority(Authority::Public)
}
