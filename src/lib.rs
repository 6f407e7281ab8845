//! Mailroom: an agent-native mail node, one Cloudflare Worker per organisation.
//!
//! The crate is layered, and a layer imports only those beneath it:
//!
//! 1. `core`: the request and response, storage, the platform and bindings as
//!    traits, ids, time, crypto, paging, the refusal type and the context a
//!    handler works through. It names no runtime and no domain.
//! 2. `authz` (credentials, checks, the tuple table, the failure window) and
//!    `audit` (the chain and its routes).
//! 3. The domains: `identity`, `mail`, `ediscovery`, `agents`, `reminders`,
//!    `messaging`, `notifications`, `oauth`, `peers`, `webhooks`. A domain reaches another only
//!    through the items that domain's module re-exports.
//! 4. The surfaces: `dispatch` (the one path every request takes), `mcp` (which
//!    re-enters `dispatch`: the one import that runs back up), `interface` and
//!    `live` (the listening routes, and what a listener's hub asks again).
//! 5. `adapter`, compiled for `wasm32` only, the one module that names the
//!    `worker` crate; and `testing`, the native test kit.
//!
//! Everything but the adapter compiles natively and is tested against SQLite
//! built from `migrations/`. `tests/native/layers.rs` reads the source and fails
//! on an import that climbs a layer or closes a new circle.

// A refusal is the one error every request path returns: four sentences and a
// status, built once per refused request and moved up a few frames, never
// copied in a loop. Boxing it to satisfy the size heuristic would cost an
// allocation on every refusal to save a copy.
#![allow(clippy::result_large_err, reason = "Refusal is large by design; see the comment above")]

pub mod core;

pub mod audit;
pub mod authz;

pub mod a2a;
pub mod agents;
pub mod ediscovery;
pub mod identity;
pub mod mail;
pub mod messaging;
pub mod notifications;
pub mod oauth;
pub mod peers;
pub mod reminders;
pub mod webhooks;

pub mod dispatch;
pub mod interface;
pub mod live;
pub mod mcp;
pub mod schedule;

#[cfg(target_arch = "wasm32")]
mod adapter;

#[cfg(all(feature = "testing", not(target_arch = "wasm32")))]
pub mod testing;
