//! What every test node is configured with: its origin, its senders, its
//! setup token, its audit key and how hard it hashes passwords.

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
