//! eDiscovery (decision 0024): a reviewer holding ediscovery.export asks for the
//! mail some mailboxes received, between two days and matching some words, and
//! downloads copies of it with a manifest whose hash is in the audit chain.
//! `exports` holds the requester's routes, `build` the per-minute run that
//! copies, `objects` where the copies are kept, `errors` the refusals, and
//! `store` every statement about `exports` and `export_items`.
//!
//! It reads received mail only through what `mail` re-exports: the selection
//! of receipts an export copies, and the one writer of objects owed deletion.

mod build;
mod errors;
pub mod exports;
mod objects;
mod store;

pub use build::{BuildReport, build_exports};
pub use errors::ExportError;
