//! The failure windows' statements: counting an attempt against a window
//! before its secret is checked, giving it back, and the addresses an account
//! signed in from.

use crate::core::storage::Statement;

/// How a window admits attempts past its limit, as `reserve` writes it.
pub(crate) struct Reservation<'a> {
    pub key: &'a str,
    pub now_ms: i64,
    pub window_ms: i64,
    /// Failures past which attempts are spaced (`i64::MAX`: never).
    pub ceiling: i64,
    /// How far apart attempts past the ceiling are admitted.
    pub spacing_ms: i64,
    /// Names this attempt, so a slowed window can say whether it took the slot.
    pub attempt: &'a str,
}

/// Counts one attempt in its window, opening a new window when the last ended,
/// and answers the window as it now stands.
pub(crate) fn reserve(reservation: Reservation<'_>) -> Statement {
    Statement::new(
        "INSERT INTO sign_in_failures (key, failures, window_started_at) VALUES (?1, 1, ?2) \
         ON CONFLICT (key) DO UPDATE SET \
           failures = CASE WHEN window_started_at <= ?2 - ?3 THEN 1 ELSE failures + 1 END, \
           window_started_at = CASE WHEN window_started_at <= ?2 - ?3 THEN ?2 ELSE window_started_at END, \
           last_admitted_by = CASE \
             WHEN window_started_at > ?2 - ?3 AND failures + 1 > ?4 \
                  AND (last_admitted_at IS NULL OR last_admitted_at <= ?2 - ?5) THEN ?6 \
             ELSE last_admitted_by END, \
           last_admitted_at = CASE \
             WHEN window_started_at > ?2 - ?3 AND failures + 1 > ?4 \
                  AND (last_admitted_at IS NULL OR last_admitted_at <= ?2 - ?5) THEN ?2 \
             ELSE last_admitted_at END \
         RETURNING failures, window_started_at, last_admitted_at, last_admitted_by",
    )
    .bind(reservation.key)
    .bind(reservation.now_ms)
    .bind(reservation.window_ms)
    .bind(reservation.ceiling)
    .bind(reservation.spacing_ms)
    .bind(reservation.attempt)
}

/// Gives back one counted attempt.
pub(crate) fn release(key: &str) -> Statement {
    Statement::new("UPDATE sign_in_failures SET failures = MAX(failures - 1, 0) WHERE key = ?1").bind(key)
}

/// Forgets every failure in the window `key`.
pub(crate) fn clear(key: &str) -> Statement {
    Statement::new("DELETE FROM sign_in_failures WHERE key = ?1").bind(key)
}

/// `SELECT known`: whether `known_key` signed in after `since`.
pub(crate) fn is_known(known_key: Option<String>, since: i64) -> Statement {
    Statement::new("SELECT EXISTS (SELECT 1 FROM sign_in_known WHERE key = ?1 AND last_success_at > ?2) AS known")
        .bind(known_key)
        .bind(since)
}

/// Records that `known_key` signed in at `now_ms`.
pub(crate) fn remember(known_key: String, now_ms: i64) -> Statement {
    Statement::new(
        "INSERT INTO sign_in_known (key, last_success_at) VALUES (?1, ?2) \
         ON CONFLICT (key) DO UPDATE SET last_success_at = ?2",
    )
    .bind(known_key)
    .bind(now_ms)
}

/// Forgets the failure windows that started by `windows_started_by`, and the
/// addresses last signed in from by `known_until`.
pub(crate) fn forget_ended(windows_started_by: i64, known_until: i64) -> Vec<Statement> {
    vec![
        Statement::new("DELETE FROM sign_in_failures WHERE window_started_at <= ?1").bind(windows_started_by),
        Statement::new("DELETE FROM sign_in_known WHERE last_success_at <= ?1").bind(known_until),
    ]
}
