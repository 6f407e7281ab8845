//! The per-request context a handler works through, and the two round trips it
//! is held to.
//!
//! A handler never talks to the database directly. Its first `read` travels in
//! one batch with the checks the dispatcher queued (the session is live, the
//! caller holds what the route's authority needs); the results come back only if
//! every check passed. Its writes are not run at all: they are collected, and the
//! dispatcher commits them in one batch with the audit row. So a route that reads
//! and then changes costs two round trips, and a refused one never touches what
//! it was refused.
//!
//! Three parts, one file each: the request as read (`request`), the unit of work
//! (`work`: reads, writes, guards, the commit) and the audit note (`note`: whom
//! the entry names and what it says). `ports` names what the layers above
//! provide: the checks (`Admission`, from `authz`) and the chain (`Ledger`, from
//! `audit`). `Context` (`handler_context`) puts them together and is all a
//! handler sees.

mod handler_context;
mod note;
pub mod ports;
mod request;
mod work;

pub use handler_context::{Admitted, Context};
pub use work::MAILBOXES_PER_READ;
pub(crate) use work::told;
