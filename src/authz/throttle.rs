//! The failure window: how many wrong guesses at a secret (a password, a pairing
//! code) are allowed under one key (an account, an address) before guessing
//! pauses there for a while.
//!
//! One table (`sign_in_failures`), one window, one rule, for every place a
//! secret is checked: signing in, changing a password, redeeming a pairing code.
//! A failure is counted with `write_whatever_the_outcome`, so it is committed with
//! the refusal's own audit row.

use crate::core::storage::{QueryResult, Statement};
use crate::core::time::MINUTE_MS;

/// How long failures are remembered.
pub const FAILURE_WINDOW_MS: i64 = 15 * MINUTE_MS;
/// Failures per account within the window before its password checks pause.
pub const ACCOUNT_FAILURE_LIMIT: i64 = 10;
/// Failures from one address within the window before sign-in pauses for it.
pub const ADDRESS_FAILURE_LIMIT: i64 = 50;
/// Failed pairing-code redemptions from one address before pairing pauses for it.
pub const PAIRING_FAILURE_LIMIT: i64 = 20;

/// Failures against an account are counted under this prefix and its email.
const ACCOUNT_KEY_PREFIX: &str = "account:";

/// The failures counted under one key, and how many pause it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    key: String,
    limit: i64,
}

impl Window {
    /// Wrong passwords for the account signed in as `email`.
    pub fn account(email: &str) -> Window {
        Window { key: format!("{ACCOUNT_KEY_PREFIX}{email}"), limit: ACCOUNT_FAILURE_LIMIT }
    }

    /// Wrong passwords from the client `address`.
    pub fn address(address: &str) -> Window {
        Window { key: format!("address:{address}"), limit: ADDRESS_FAILURE_LIMIT }
    }

    /// Wrong pairing codes from the client `address` (one shared window when the
    /// address is unknown).
    pub fn pairing(address: Option<&str>) -> Window {
        Window { key: format!("pairing:{}", address.unwrap_or("unknown")), limit: PAIRING_FAILURE_LIMIT }
    }

    /// The statement reading this window's count.
    pub fn read(&self) -> Statement {
        Statement::new("SELECT failures, window_started_at FROM sign_in_failures WHERE key = ?1")
            .bind(self.key.as_str())
    }

    /// Counts one failure, opening a new window when the last has passed.
    pub fn count_failure(&self, now_ms: i64) -> Statement {
        Statement::new(
            "INSERT INTO sign_in_failures (key, failures, window_started_at) VALUES (?1, 1, ?2) \
             ON CONFLICT (key) DO UPDATE SET \
               failures = CASE WHEN window_started_at <= ?2 - ?3 THEN 1 ELSE failures + 1 END, \
               window_started_at = CASE WHEN window_started_at <= ?2 - ?3 THEN ?2 ELSE window_started_at END",
        )
        .bind(self.key.as_str())
        .bind(now_ms)
        .bind(FAILURE_WINDOW_MS)
    }

    /// Forgets this window's failures (after the right secret).
    pub fn clear(&self) -> Statement {
        Statement::new("DELETE FROM sign_in_failures WHERE key = ?1").bind(self.key.as_str())
    }

    /// Seconds until this window reopens, if `result` (of `read`) shows it paused.
    pub fn paused_for(&self, result: &QueryResult, now_ms: i64) -> Option<u32> {
        paused_for(result, self.limit, now_ms)
    }
}

/// `Window::account(…).read()` for a person named by id, with no dependent read
/// for their email; answered by `account_paused_for`.
pub fn read_account_of(person_id: &str) -> Statement {
    Statement::new(
        "SELECT failures, window_started_at FROM sign_in_failures \
         WHERE key = ?1 || (SELECT email FROM people WHERE id = ?2)",
    )
    .bind(ACCOUNT_KEY_PREFIX)
    .bind(person_id)
}

/// Seconds until the account window read by `read_account_of` reopens, if paused.
pub fn account_paused_for(result: &QueryResult, now_ms: i64) -> Option<u32> {
    paused_for(result, ACCOUNT_FAILURE_LIMIT, now_ms)
}

fn paused_for(result: &QueryResult, limit: i64, now_ms: i64) -> Option<u32> {
    let row = result.first()?;
    let failures = row.integer("failures").ok()?;
    let window_ends = row.integer("window_started_at").ok()? + FAILURE_WINDOW_MS;
    (failures >= limit && window_ends > now_ms).then(|| ((window_ends - now_ms) / 1000).max(1) as u32)
}
