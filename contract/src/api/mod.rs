//! The request and response bodies of every route, as Rust types, one module per
//! noun as `src/` has them.
//!
//! Handlers decode requests into these types and answer with them, and the JSON
//! Schemas in the OpenAPI document and the MCP catalogue are derived from them, so
//! a field's name, type and description are written once. Every field carries a
//! doc comment because it becomes the description a model reads. Every type is
//! re-exported here, so a body is named `api::Send` wherever it is used.

mod a2a;
mod agents;
mod audit;
mod butlers;
mod exports;
mod identity;
mod mail;
mod mcp;
mod messaging;
mod notes;
mod notifications;
mod oauth;
mod peers;
mod refusal;
mod reminders;
mod replies;
mod threads;
mod webhooks;

pub use a2a::*;
pub use agents::*;
pub use audit::*;
pub use butlers::*;
pub use exports::*;
pub use identity::*;
pub use mail::*;
pub use mcp::*;
pub use messaging::*;
pub use notes::*;
pub use notifications::*;
pub use oauth::*;
pub use peers::*;
pub use refusal::*;
pub use reminders::*;
pub use replies::*;
pub use threads::*;
pub use webhooks::*;
