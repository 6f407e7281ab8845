//! Every statement about sends: what a mailbox's mail holds of them (`mail`)
//! and what D1, the directory, says of them beside it (`directory`).
//! `record`, `drafts`, `decisions` and `files` decide and batch; these files
//! spell the SQL.

mod directory;
mod mail;

pub(super) use directory::*;
pub(super) use mail::*;
