//! OAuth 2.1 for MCP clients (decision 0026): how a client that speaks only
//! OAuth connects, and what a person's consent makes of it.
//!
//! The grant *is* an agent. A person signs in, sees the client and chooses
//! capabilities and mailboxes by the mint form's own rules; approving mints an
//! agent they sponsor with that ceiling pinned (`agents::mint_for_connection`).
//! The client's tokens are that agent's: every call is checked against its
//! ceiling, intersected with what it and its sponsor hold, and recorded as the
//! agent's act for its sponsor, like any agent's.
//!
//! One file per concern: `discovery` (the metadata documents), `clients`
//! (registration, carried in a signed client id), `redirects` (which redirect
//! URI a request may name: the registered one, a loopback literal's on any
//! port), `consent` (the authorization request, checked, and the person's
//! answer), `tokens` (the token and revocation endpoints) and `apps` (a
//! person's connected apps). `errors` holds what can go wrong and the refusals
//! that say so, `shared` the lifetimes and the check the files share, and
//! `store` every statement on OAuth's tables.

mod apps;
mod clients;
mod consent;
mod discovery;
mod errors;
mod redirects;
mod shared;
mod store;
mod tokens;

pub use apps::{disconnect, list_connected_apps};
pub use clients::register;
pub use consent::{approve_consent, get_consent};
pub use discovery::{authorization_server, mcp_resource, protected_resource, resource_metadata_url};
pub use errors::OAuthError;
pub use shared::{CODE_LIFETIME_MS, REFRESH_TOKEN_LIFETIME_MS};
pub use tokens::{forget_ended, revoke, token};
