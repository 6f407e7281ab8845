//! Conversations (threads): a mailbox's received and sent mail grouped by its
//! threading headers (`linking` decides which conversation a message joins), the
//! working state a shared inbox keeps on each (status, assignee, labels, who
//! has read it), and the routes that list, show and change them. A
//! conversation can be snoozed until a moment, and the minute's job opens it
//! again then (`snooze`, its SQL in `snooze::store`; decision 0048).
//!
//! Listing and showing answer holders of `mailbox.metadata.read`; the snippet
//! and the messages' text only where the caller also reads content, which is why
//! both routes are marked `reaches_content` and audited. Text handed to an agent
//! (or to anyone over MCP) is fenced as untrusted external content (`trust`).
//!
//! The routes are in `routes`, what they refuse in `errors`, their SQL in
//! `store` (and snoozing's in `snooze::store`); a conversation's internal
//! notes, with their mentions, in `notes`.

mod errors;
pub mod labels;
pub mod linking;
pub mod notes;
mod routes;
mod snooze;
mod store;

pub use errors::ThreadError;
pub use routes::{get, list, mark_read, mark_unread, update};
pub use snooze::wake::{MAILBOXES_PER_RUN, WAKES_PER_RUN, WakeReport, wake_due};
