//! The audit chain (decisions 0015 and 0027): one keyed row per changing call
//! and per content read, appended in the same batch as the change it records
//! (`chain`), every check of an entry in its place (`walk`), linking the waiting
//! ones into the chain (`seal`), checkpoints of its head kept in D1 and R2 that
//! must agree (`checkpoints`), the witness outside the account each checkpoint
//! is sent to (`witness`), each mailbox's segment of the chain in its own
//! database and its anchoring in D1's (`segments`), the scheduled upkeep
//! (`upkeep`), the alarm a fault raises (`alarm`), and the administrators'
//! routes (`routes`); every statement on the audit tables is built in `store`.
//!
//! The chain is the core's `Ledger`: the unit of work appends through
//! `AuditChain`, and inbound mail, which has no request context, through
//! `chain::append`. The adapter seals after every answer that appended
//! (`seal`) and runs `maintain` on its schedule. Administrators are told of a
//! chain that fails through `TellAdministrators`, which the notifications
//! domain (a floor above) supplies and the dispatcher hands in.

pub mod alarm;
pub mod chain;
pub mod checkpoints;
pub mod routes;
pub mod seal;
pub mod segments;
mod store;
pub mod upkeep;
pub mod walk;
pub mod witness;

pub use alarm::TellAdministrators;
pub use chain::{AuditChain, VERIFY_PAGE, actor_kind};
pub use routes::AuditError;
pub use seal::seal;
pub use upkeep::maintain;
pub use walk::Failure;
