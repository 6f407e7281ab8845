//! The MCP endpoint: the machine surface every offered route is a tool of.

use crate::api::{JsonRpcRequest, JsonRpcResponse};
use crate::route::Method::Post;
use crate::route::{Authority, Produces, Refuses, Route, Tier};
use crate::route_id::RouteId;

pub(super) fn mcp_endpoint() -> Route {
    Route::new(RouteId::McpEndpoint, Post, "/mcp", "mcp_endpoint")
        .summary("The MCP server")
        .description("The Model Context Protocol endpoint (Streamable HTTP, JSON responses): protocol revisions 2025-06-18 and 2025-11-25 through initialize, and 2026-07-28 statelessly. Its tools are the node's own routes, offered by who is asking, and every tool call re-enters the router as that caller. Its resources (a mailbox, a conversation, the caller's notifications, reminders and agent inbox) are read through their routes the same way; in 2026-07-28, subscriptions/listen answers server-sent events: the acknowledgement, then notifications/resources/updated and notifications/tools/list_changed as they happen.")
        .request::<JsonRpcRequest>()
        .response::<JsonRpcResponse>()
        .produces(Produces::JsonRpc)
        .streams()
        .tier(Tier::Surface)
        .refuses(const { &[
            Refuses::JsonRpc { status: 400, when: "A JSON-RPC error: the body is not JSON or not one JSON-RPC request, the protocol headers do not match the body, or the protocol version is one the server does not speak." },
            Refuses::JsonRpc { status: 404, when: "A JSON-RPC error: a method the server does not have, asked in the 2026-07-28 era (earlier eras answer it with 200)." },
        ] })
        .cross_origin()
        .authority(Authority::Member)
}
