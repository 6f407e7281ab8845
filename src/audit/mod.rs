//! The audit chain (`chain`): one hashed row per changing call and per content
//! read, appended in the same batch as the change it records, and verified from
//! any point; and its two routes (`routes`), reading and verifying it.
//!
//! The chain is the core's `Ledger`: the unit of work appends through
//! `AuditChain`, and inbound mail, which has no request context, through
//! `chain::append`. The adapter seals after every answer that appended
//! (`seal`) and runs `maintain` on its schedule.

pub mod chain;
pub mod routes;

pub use chain::{AuditChain, VERIFY_PAGE, actor_kind, maintain, seal};
