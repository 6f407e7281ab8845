//! The native test kit: a `Database` on SQLite built from the same `migrations/`
//! as D1, a deterministic `Platform` on a virtual clock (`clock`), receivers
//! that can be slow or silent, and a `TestNode` that drives the real dispatcher
//! the way the Worker does, one request at a time or several at once.
//!
//! Compiled only with the `testing` feature, never into the Worker. Nothing here
//! replaces the code under test: the dispatcher, handlers and SQL are the
//! production ones; only the storage engine and the clock differ.
//!
//! A file a part (`sqlite`, `platform`, `bindings`, `node`, `requests`,
//! `clock`), each re-exported here, so a test names `mailroom::testing::X`;
//! this file states what every test node is configured with (`TEST_…`).

// The kit fails the test that uses it by panicking, as the test's own asserts do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bindings;
mod clock;
mod node;
mod platform;
mod requests;
mod sqlite;

pub use bindings::{MemoryBlobs, PostedWebhook, RecordingMailer, RecordingWebhooks, SentMessage};
pub use clock::{Timer, VirtualClock, run};
pub use node::TestNode;
pub use platform::FixedPlatform;
pub use requests::{RequestExt, request};
pub use sqlite::{SqliteDatabase, StatementCost};

/// The origin test requests are addressed to.
pub const TEST_ORIGIN: &str = "https://mailroom.test";
/// The address a `TestNode` sends reminder emails from.
pub const TEST_REMINDER_SENDER: &str = "reminders@mailroom.test";
/// The setup token a `TestNode` is configured with.
pub const TEST_SETUP_TOKEN: &str = "test-setup-token";

/// The audit key a `TestNode` writes and seals its chain with.
pub const TEST_AUDIT_KEY: &[u8] = b"native-test-audit-key-0123456789ab";

/// PBKDF2 iterations in native tests.
pub const TEST_PASSWORD_ITERATIONS: u32 = 1_000;
