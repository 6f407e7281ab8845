//! Every statement about snoozing (decision 0048): a conversation's own
//! `snoozed_until`, the same SQL in D1 and in a mailbox's own database, and
//! D1's index of wake-ups (`thread_wakeups`) that the minute's job reads by
//! time. `change` and `wake` decide; this file spells the SQL.

use mailroom_contract::api::ThreadStatus;
use serde::Deserialize;

use crate::core::mailbox_storage::spans_stores;
use crate::core::storage::Statement;

/// Conversation `thread_id` of `mailbox_id` snoozed until `until`, or awake
/// (`None`).
pub(crate) fn snoozed_until_set(thread_id: &str, mailbox_id: &str, until: Option<i64>) -> Statement {
    Statement::new("UPDATE mail_threads SET snoozed_until = ?1 WHERE id = ?2 AND mailbox_id = ?3")
        .bind(until)
        .bind(thread_id)
        .bind(mailbox_id)
}

/// D1's index says conversation `thread_id` of `mailbox_id` wakes at
/// `wake_at`, in place of any moment it said before.
pub(crate) fn wakeup_kept(thread_id: &str, mailbox_id: &str, wake_at: i64) -> Statement {
    Statement::new(
        "INSERT INTO thread_wakeups (thread_id, mailbox_id, wake_at) VALUES (?1, ?2, ?3) \
         ON CONFLICT (thread_id) DO UPDATE SET mailbox_id = excluded.mailbox_id, wake_at = excluded.wake_at",
    )
    .bind(thread_id)
    .bind(mailbox_id)
    .bind(wake_at)
}

/// D1's index forgets conversation `thread_id`'s wake-up at `wake_at`, and
/// only that one: a snooze set again since keeps its own.
pub(crate) fn wakeup_forgotten(thread_id: &str, wake_at: i64) -> Statement {
    Statement::new("DELETE FROM thread_wakeups WHERE thread_id = ?1 AND wake_at = ?2").bind(thread_id).bind(wake_at)
}

/// D1's index forgets conversation `thread_id`'s wake-up, whatever its moment
/// (woken by hand).
pub(crate) fn wakeups_forgotten(thread_id: &str) -> Statement {
    Statement::new("DELETE FROM thread_wakeups WHERE thread_id = ?1").bind(thread_id)
}

/// A wake-up due, as D1 reads it: where its mailbox's mail is, and, for mail
/// still in D1, the conversation if it is still snoozed until exactly then.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct DueRow {
    pub(crate) thread_id: String,
    pub(crate) mailbox_id: String,
    pub(crate) wake_at: i64,
    pub(crate) moved: i64,
    pub(crate) subject: Option<String>,
    pub(crate) assignee: Option<String>,
    pub(crate) still_snoozed: i64,
}

/// At most `limit` wake-ups due by `now_ms` (`DueRow`s), earliest first. A
/// mailbox that no longer exists reads as D1's, where nothing is snoozed.
/// Marked as reading D1's mail beside the directory: the conversation is
/// joined only while its mailbox's mail is in D1, so a wake there costs no
/// read of its own.
pub(crate) fn due(now_ms: i64, limit: i64) -> Statement {
    spans_stores(Statement::new(
        "SELECT w.thread_id, w.mailbox_id, w.wake_at, m.mail_moved_at IS NOT NULL AS moved, t.subject, t.assignee, \
           t.id IS NOT NULL AS still_snoozed \
         FROM thread_wakeups w LEFT JOIN mailboxes m ON m.id = w.mailbox_id \
         LEFT JOIN mail_threads t ON m.mail_moved_at IS NULL AND t.id = w.thread_id AND t.mailbox_id = w.mailbox_id \
           AND t.snoozed_until = w.wake_at \
         WHERE w.wake_at <= ?1 ORDER BY w.wake_at, w.thread_id LIMIT ?2",
    ))
    .bind(now_ms)
    .bind(limit)
}

/// A conversation still snoozed until the moment its wake-up says, as a
/// mailbox's own database reads it.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct StillSnoozedRow {
    pub(crate) subject: String,
    pub(crate) assignee: Option<String>,
}

/// Conversation `thread_id` (`StillSnoozedRow`, or no row) if it is still
/// snoozed until exactly `wake_at`.
pub(crate) fn still_snoozed(thread_id: &str, wake_at: i64) -> Statement {
    Statement::new("SELECT subject, assignee FROM mail_threads WHERE id = ?1 AND snoozed_until = ?2")
        .bind(thread_id)
        .bind(wake_at)
}

/// Conversation `thread_id`, snoozed until `wake_at`, woken: open again and no
/// longer snoozed. Changes nothing if it was woken or snoozed again since.
pub(crate) fn woken(thread_id: &str, wake_at: i64) -> Statement {
    Statement::new("UPDATE mail_threads SET status = ?3, snoozed_until = NULL WHERE id = ?1 AND snoozed_until = ?2")
        .bind(thread_id)
        .bind(wake_at)
        .bind(ThreadStatus::Open.name())
}

/// The guard that the statement before it changed exactly one row, in slot 1
/// (a job's batch carries no other guard).
pub(crate) fn changed_one_row() -> Statement {
    Statement::write_guard(1, Statement::new("changes() = 1"))
}

/// The list's condition on snoozing: only snoozed conversations, or none.
pub(crate) fn list_condition(snoozed: bool) -> &'static str {
    if snoozed { "t.snoozed_until IS NOT NULL" } else { "t.snoozed_until IS NULL" }
}
