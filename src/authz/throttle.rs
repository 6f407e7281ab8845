//! Failure windows: how many wrong guesses at a secret (a password, a pairing
//! code) are allowed under one key before guessing there pauses or slows
//! (decision 0016).
//!
//! An attempt is counted *before* its secret is checked: `Window::reserve` is an
//! upsert that adds one and answers the new count, sent in the request's first
//! round trip, so of a hundred parallel attempts only the first ones within the
//! limit ever reach the check. The right secret gives its reservation back
//! (`release`, committed with the audit row); a wrong one keeps it as a failure.
//!
//! The windows for signing in cannot be aimed at a person from elsewhere: the
//! pause is per account *and* address, so guessing from one address locks out
//! only that address; an address the person has signed in from before is never
//! slowed by the rest; and the account's own ceiling, met by guesses from
//! everywhere else, only slows them to one at a time. Keys are a kind and a
//! SHA-256, so their length is bounded whatever a caller sends, and windows that
//! ended are deleted by the scheduled upkeep (`forget_ended`).

use crate::core::crypto::sha256_hex;
use crate::core::storage::{QueryResult, Statement};
use crate::core::time::{DAY_MS, MINUTE_MS};

use super::store::throttle::{self as store, Reservation};

/// How long failures are remembered.
pub const FAILURE_WINDOW_MS: i64 = 15 * MINUTE_MS;
/// Wrong passwords for one account from one address before that address pauses.
pub const ACCOUNT_FAILURE_LIMIT: i64 = 10;
/// Wrong passwords from one address, any account, before it pauses.
pub const ADDRESS_FAILURE_LIMIT: i64 = 50;
/// Wrong passwords for one account from addresses it never signed in from, after
/// which they are admitted only one at a time.
pub const ACCOUNT_CEILING: i64 = 100;
/// Beyond the ceiling, how long after one admitted attempt the next is admitted.
pub const ACCOUNT_SPACING_MS: i64 = 5_000;
/// Wrong current passwords through one session before password changes pause.
pub const SESSION_FAILURE_LIMIT: i64 = 10;
/// Failed pairing-code redemptions from one address before pairing pauses for it.
pub const PAIRING_FAILURE_LIMIT: i64 = 20;
/// Unknown OAuth codes and refresh tokens one address may present in a window.
pub const OAUTH_TOKEN_FAILURE_LIMIT: i64 = 20;
/// How long an address a person signed in from stays theirs.
pub const KNOWN_ADDRESS_MS: i64 = 90 * DAY_MS;

/// What a window does when its limit is met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Refuses every further attempt until the window ends.
    Pause(i64),
    /// Beyond `ceiling`, admits one attempt per `spacing_ms`.
    Slow { ceiling: i64, spacing_ms: i64 },
}

/// The attempts counted under one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    key: String,
    limit: Limit,
}

/// A key: the kind of window, then the SHA-256 of what it counts.
fn key(kind: &str, parts: &[&str]) -> String {
    format!("{kind}:{}", sha256_hex(parts.join("\n").as_bytes()))
}

impl Window {
    /// Wrong passwords for the account `email` from `address`.
    pub fn account_from(email: &str, address: Option<&str>) -> Window {
        Window {
            key: key("account-address", &[email, address.unwrap_or("")]),
            limit: Limit::Pause(ACCOUNT_FAILURE_LIMIT),
        }
    }

    /// Wrong passwords from the client `address`.
    pub fn address(address: &str) -> Window {
        Window { key: key("address", &[address]), limit: Limit::Pause(ADDRESS_FAILURE_LIMIT) }
    }

    /// Wrong passwords for the account `email` from anywhere it was not signed in from.
    pub fn account(email: &str) -> Window {
        Window {
            key: key("account", &[email]),
            limit: Limit::Slow { ceiling: ACCOUNT_CEILING, spacing_ms: ACCOUNT_SPACING_MS },
        }
    }

    /// Wrong current passwords through one session.
    pub fn session(session_id: &str) -> Window {
        Window { key: key("session", &[session_id]), limit: Limit::Pause(SESSION_FAILURE_LIMIT) }
    }

    /// Wrong pairing codes from the client `address` (one shared window when the
    /// address is unknown).
    pub fn pairing(address: Option<&str>) -> Window {
        Window { key: key("pairing", &[address.unwrap_or("unknown")]), limit: Limit::Pause(PAIRING_FAILURE_LIMIT) }
    }

    /// Unknown OAuth codes and refresh tokens from the client `address`.
    pub fn oauth_token(address: Option<&str>) -> Window {
        Window {
            key: key("oauth-token", &[address.unwrap_or("unknown")]),
            limit: Limit::Pause(OAUTH_TOKEN_FAILURE_LIMIT),
        }
    }

    /// The upsert that counts this attempt before its secret is checked, answering
    /// the window as it now stands: one more failure, or the first of a new window.
    /// `attempt` names this attempt, so a slowed window can say whether it took
    /// the one free slot.
    pub fn reserve(&self, now_ms: i64, attempt: &str) -> Statement {
        let (ceiling, spacing_ms) = match self.limit {
            Limit::Pause(_) => (i64::MAX, 0),
            Limit::Slow { ceiling, spacing_ms } => (ceiling, spacing_ms),
        };
        store::reserve(Reservation {
            key: &self.key,
            now_ms,
            window_ms: FAILURE_WINDOW_MS,
            ceiling,
            spacing_ms,
            attempt,
        })
    }

    /// Whether the attempt `reserve` counted may check its secret: `Err` with the
    /// seconds until it would be admitted.
    pub fn admits(&self, reserved: &QueryResult, now_ms: i64, attempt: &str) -> Result<(), u32> {
        let Some(row) = reserved.first() else { return Ok(()) };
        let failures = row.integer("failures").unwrap_or(0);
        let window_ends = row.integer("window_started_at").unwrap_or(now_ms) + FAILURE_WINDOW_MS;
        let seconds = |until: i64| ((until - now_ms) / 1000).max(1) as u32;
        match self.limit {
            Limit::Pause(limit) if failures > limit => Err(seconds(window_ends)),
            Limit::Pause(_) => Ok(()),
            Limit::Slow { ceiling, .. } if failures <= ceiling => Ok(()),
            Limit::Slow { spacing_ms, .. } => {
                let took_the_slot = row.optional_text("last_admitted_by").ok().flatten().as_deref() == Some(attempt);
                if took_the_slot {
                    Ok(())
                } else {
                    let last = row.optional_integer("last_admitted_at").ok().flatten().unwrap_or(now_ms);
                    Err(seconds(last + spacing_ms))
                }
            }
        }
    }

    /// Gives back an attempt `reserve` counted, once its secret proved right: it
    /// was not a failure.
    pub fn release(&self) -> Statement {
        store::release(&self.key)
    }

    /// Forgets every failure in this window (a person's own address, after the
    /// right password; an account whose password an administrator reset).
    pub fn clear(&self) -> Statement {
        store::clear(&self.key)
    }
}

/// The key recording that the account `email` signed in from `address`.
fn known_key(email: &str, address: &str) -> String {
    key("known", &[email, address])
}

/// `SELECT known`: whether the account `email` signed in from `address` within
/// `KNOWN_ADDRESS_MS` of `now_ms`.
pub fn is_known(email: &str, address: Option<&str>, now_ms: i64) -> Statement {
    store::is_known(address.map(|address| known_key(email, address)), now_ms - KNOWN_ADDRESS_MS)
}

/// Records that the account `email` signed in from `address` at `now_ms`.
pub fn remember(email: &str, address: &str, now_ms: i64) -> Statement {
    store::remember(known_key(email, address), now_ms)
}

/// The statements that delete what has expired: windows that ended, and
/// addresses not signed in from for `KNOWN_ADDRESS_MS`.
pub fn forget_ended(now_ms: i64) -> Vec<Statement> {
    store::forget_ended(now_ms - FAILURE_WINDOW_MS, now_ms - KNOWN_ADDRESS_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_bounded_whatever_they_count() {
        let huge = "x".repeat(900_000);
        let window = Window::account_from(&huge, Some("192.0.2.1"));
        assert!(window.key.len() < 100, "{}", window.key.len());
        assert_ne!(Window::account_from("a@b.c", Some("1")).key, Window::account_from("a@b.c", Some("2")).key);
        assert_ne!(Window::account("a@b.c").key, Window::account_from("a@b.c", None).key);
    }
}
