//! The A2A gateway (SPEC §10; decisions 0019 and 0031): a public card per
//! agent and the node's own card (`cards`), one JSON-RPC endpoint per agent
//! speaking A2A 1.0 (`SendMessage`, `GetTask`, `ListTasks`, `CancelTask`) and
//! 0.3 (`message/send`, `tasks/get`, `tasks/cancel`) as the request's
//! `A2A-Version` asks (`rpc`), and the node's endpoint, which takes no tasks.
//!
//! A task is a request to the agent: sending creates a durable request (a
//! retry of the same message is the same task), and the task's state is the
//! request's, its artifact the reply (`tasks`). Like the MCP server, every
//! call re-enters the node's own router as the caller (`Surface::A2a`), so the
//! credential, authority, policy, audit entry and refusal are the routes' own;
//! this module only translates. The caller is its bearer credential; a task is
//! only ever the caller's own request.
//!
//! `outbox` is the other direction: this node's messages to agents elsewhere,
//! sent over A2A as a client, their tasks asked after until they end; and
//! `pushed` takes an agent elsewhere's word that a task changed.
//!
//! `endpoints` holds the two JSON-RPC endpoints, which read a call and hand a
//! task's operation to `tasks`; `push` a task's push notification configs
//! (kept by the node's push config routes, posted by its webhook runs).

mod cards;
mod client;
mod endpoints;
mod outbox;
mod params;
mod push;
mod pushed;
mod rpc;
mod streams;
mod tasks;

pub use cards::{agent_card as card, node_card};
pub use client::push_token;
pub use endpoints::{handle, handle_node};
pub use outbox::{OutboxReport, deliver_remote};
pub use push::push_body;
pub use pushed::receive as receive_push;
