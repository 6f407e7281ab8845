//! Mailroom: an agent-native mail node, one Cloudflare Worker per organisation.
//!
//! The crate is a core that does no I/O plus one thin adapter. The core (every
//! module but `adapter`) takes a request, a `Database`, a `Platform` and a
//! `Config`, and returns a response; it compiles and is tested natively against
//! SQLite built from `migrations/`. Only `adapter`, compiled for `wasm32`, names
//! the `worker` crate: it turns Worker events into core calls and implements the
//! two traits on D1 and WebCrypto.

pub mod addresses;
pub mod agents;
pub mod audit;
pub mod authz;
pub mod blobs;
pub mod context;
pub mod credentials;
pub mod dispatch;
pub mod http;
pub mod ids;
pub mod inbound;
pub mod interface;
pub mod mailboxes;
pub mod mcp;
pub mod messages;
pub mod node;
pub mod outbound;
pub mod paging;
pub mod password;
pub mod people;
pub mod platform;
pub mod refusal;
pub mod relations;
pub mod search;
pub mod sends;
pub mod sessions;
pub mod setup;
pub mod storage;
pub mod teams;
pub mod time;

#[cfg(target_arch = "wasm32")]
mod adapter;

#[cfg(all(feature = "testing", not(target_arch = "wasm32")))]
pub mod testing;
