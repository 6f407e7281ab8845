//! The native test kit: a `Database` on SQLite built from the same `migrations/`
//! as D1, a deterministic `Platform` on a virtual clock (`clock`), receivers
//! that can be slow or silent, and a `TestNode` that drives the real dispatcher
//! the way the Worker does, one request at a time or several at once.
//!
//! Compiled only with the `testing` feature, never into the Worker. Nothing here
//! replaces the code under test: the dispatcher, handlers and SQL are the
//! production ones; only the storage engine and the clock differ.
//!
//! A file a part (`sqlite`, `stores`: which store a statement can run in,
//! `platform`, `bindings`, `node`, `requests`, `clock`, `configuration`: what
//! every test node is configured with), each
//! re-exported here, so a test names `mailroom::testing::X`.

// The kit fails the test that uses it by panicking, as the test's own asserts do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bindings;
mod clock;
mod configuration;
mod mail_everywhere;
mod node;
mod platform;
mod requests;
mod sqlite;
mod stores;

pub use bindings::{MemoryBlobs, PostedWebhook, RecordingMailer, RecordingWebhooks, SentMessage};
pub use clock::{Timer, VirtualClock, run};
pub use configuration::{
    TEST_AUDIT_KEY, TEST_ORIGIN, TEST_PASSWORD_ITERATIONS, TEST_REMINDER_SENDER, TEST_SETUP_TOKEN,
};
pub use node::TestNode;
pub use platform::FixedPlatform;
pub use requests::{RequestExt, request};
pub use sqlite::{SqliteDatabase, SqliteMailbox, SqliteMailboxes, StatementCost};
pub use stores::{mail_tables, mailbox_tables};
