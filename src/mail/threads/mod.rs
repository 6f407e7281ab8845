//! Conversations (threads): a mailbox's received and sent mail grouped by its
//! threading headers (`linking` decides which conversation a message joins), the
//! working state a shared inbox keeps on each (status, assignee, labels, who
//! has read it), and the routes that list, show and change them.
//!
//! Listing and showing answer holders of `mailbox.metadata.read`; the snippet
//! and the messages' text only where the caller also reads content, which is why
//! both routes are marked `reaches_content` and audited. Text handed to an agent
//! (or to anyone over MCP) is fenced as untrusted external content (`trust`).
//!
//! The routes are in `routes`, what they refuse in `errors`, their SQL in `store`;
//! a conversation's internal notes, with their mentions, in `notes`.

mod errors;
pub mod labels;
pub mod linking;
pub mod notes;
mod routes;
mod store;

pub use errors::ThreadError;
pub use routes::{get, list, mark_read, mark_unread, update};
