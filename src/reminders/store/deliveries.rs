//! The scheduled run's SQL: events that expire, what is due to be delivered
//! and to be shown in people's feeds, and the claim, record and give-back of
//! each delivery over `reminder_deliveries`. The run's numbers (how many, how
//! long a claim holds, how many attempts) are `notify`'s, passed in.

use serde::Deserialize;

use super::events::{EVENT_COLUMNS, EventRow, checkpoint_sql, state_sql};
use crate::core::storage::Statement;
use crate::notifications;

/// Closes as expired every open event whose due moment passed with
/// `after_due` expire.
pub(crate) fn expire_events(now_ms: i64) -> Statement {
    Statement::new(format!(
        "UPDATE reminder_events AS e SET closed_as = 'expired', closed_at = e.due_moment, updated_at = ?1 \
         WHERE e.closed_as IS NULL AND {} = 'expired'",
        state_sql("?1")
    ))
    .bind(now_ms)
}

/// A delivery to make: the event at its checkpoint, the channel and where it goes.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct Due {
    #[serde(flatten)]
    pub event: EventRow,
    pub checkpoint: i64,
    pub state_entered: String,
    pub channel: String,
    pub email: String,
    pub time_zone: String,
    pub quiet_start: Option<String>,
    pub quiet_end: Option<String>,
    pub webhook_url: Option<String>,
    pub webhook_secret: Option<String>,
}

/// What is due, at most `deliveries_per_run`: each open event past its
/// `fire_at` day, not acknowledged, of an enabled person, with each channel
/// they have that has not delivered its current checkpoint (nor is delivering
/// it under a live claim, nor waits after a failure, nor gave up after
/// `attempts_maximum`).
pub(crate) fn due_deliveries(now_ms: i64, attempts_maximum: i64, deliveries_per_run: i64) -> Statement {
    let (state, checkpoint) = (state_sql("?1"), checkpoint_sql("?1"));
    Statement::new(format!(
        "WITH current AS ( \
           SELECT {EVENT_COLUMNS}, {checkpoint} AS checkpoint, {state} AS state_entered, \
             p.email, r.time_zone, r.quiet_start, r.quiet_end, r.email_channel, r.webhook_url, r.webhook_secret \
           FROM reminder_events e LEFT JOIN reminder_sources s ON s.id = e.source_id \
           JOIN people p ON p.id = e.person_id JOIN reminder_profiles r ON r.person_id = e.person_id \
           WHERE e.closed_as IS NULL AND {state} IN ('preparing', 'today', 'overdue') \
             AND (e.quiet_until IS NULL OR e.quiet_until <= ?1) AND p.disabled_at IS NULL \
             AND (r.email_channel = 1 OR r.webhook_url IS NOT NULL)) \
         SELECT c.*, ch.channel FROM current c \
         JOIN (SELECT 'webhook' AS channel UNION ALL SELECT 'email') ch \
           ON (ch.channel = 'webhook' AND c.webhook_url IS NOT NULL) OR (ch.channel = 'email' AND c.email_channel = 1) \
         WHERE NOT EXISTS (SELECT 1 FROM reminder_deliveries d \
           WHERE d.event_id = c.id AND d.checkpoint = c.checkpoint AND d.channel = ch.channel \
             AND (d.outcome = 'delivered' OR d.attempts >= {attempts_maximum} \
                  OR (d.outcome = 'sending' AND d.lease_expires_at > ?1) \
                  OR (d.outcome = 'failed' AND d.next_attempt_at > ?1))) \
         ORDER BY c.checkpoint, c.id, ch.channel LIMIT ?2"
    ))
    .bind(now_ms)
    .bind(deliveries_per_run)
}

/// A reminder due today or overdue that its person's feed has not shown at
/// this checkpoint.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct FeedDue {
    pub id: String,
    pub person_id: String,
    pub title: String,
    pub due_at: String,
    pub checkpoint: i64,
    pub state_entered: String,
}

/// What the feed has still to show, at most `notices_per_run`: each open event
/// of an enabled person due today or overdue, not acknowledged, whose current
/// checkpoint has no notice yet under its key (`reminder:<event>:<checkpoint>`,
/// as `FeedDue::key` builds it). Quiet hours do not apply: the feed waits to
/// be read, it does not interrupt.
pub(crate) fn due_for_the_feed(now_ms: i64, notices_per_run: i64) -> Statement {
    let (state, checkpoint) = (state_sql("?1"), checkpoint_sql("?1"));
    let key = format!("'reminder:' || e.id || ':' || {checkpoint}");
    Statement::new(format!(
        "SELECT e.id, e.person_id, e.title, e.due_at, {checkpoint} AS checkpoint, {state} AS state_entered \
         FROM reminder_events e JOIN people p ON p.id = e.person_id \
         WHERE e.closed_as IS NULL AND {state} IN ('today', 'overdue') \
           AND (e.quiet_until IS NULL OR e.quiet_until <= ?1) AND p.disabled_at IS NULL \
           AND {} \
         ORDER BY checkpoint, e.id LIMIT ?2",
        notifications::not_yet_written(&key)
    ))
    .bind(now_ms)
    .bind(notices_per_run)
}

/// Claims one delivery for run `run_id` for `lease_ms`: it changes a row only
/// if no other run holds it (new, failed and done waiting, or a claim that ran
/// out) and it has had fewer than `attempts_maximum` attempts, and answers the
/// attempt it now makes. Its conflict clause is why this is not an `Insert`.
pub(crate) fn claim(due: &Due, run_id: &str, now_ms: i64, lease_ms: i64, attempts_maximum: i64) -> Statement {
    Statement::new(format!(
        "INSERT INTO reminder_deliveries (event_id, checkpoint, state_entered, channel, outcome, attempts, updated_at, \
           claimed_by, lease_expires_at) \
         VALUES (?1, ?2, ?3, ?4, 'sending', 1, ?5, ?6, ?5 + {lease_ms}) \
         ON CONFLICT (event_id, checkpoint, channel) DO UPDATE SET outcome = 'sending', \
           attempts = reminder_deliveries.attempts + 1, updated_at = excluded.updated_at, \
           claimed_by = excluded.claimed_by, lease_expires_at = excluded.lease_expires_at, next_attempt_at = NULL \
         WHERE reminder_deliveries.attempts < {attempts_maximum} AND ( \
           (reminder_deliveries.outcome = 'failed' \
             AND COALESCE(reminder_deliveries.next_attempt_at, 0) <= excluded.updated_at) \
           OR (reminder_deliveries.outcome = 'sending' \
             AND COALESCE(reminder_deliveries.lease_expires_at, 0) <= excluded.updated_at)) \
         RETURNING attempts"
    ))
    .bind(due.event.id.as_str())
    .bind(due.checkpoint)
    .bind(due.state_entered.as_str())
    .bind(due.channel.as_str())
    .bind(now_ms)
    .bind(run_id)
}

/// The condition naming one delivery still held by run `run_id` (?1 to ?4).
const HELD_BY_THE_RUN: &str = "event_id = ?1 AND checkpoint = ?2 AND channel = ?3 AND claimed_by = ?4";

/// `statement` with the delivery `due` held by `run_id` bound, as
/// [`HELD_BY_THE_RUN`] reads it.
fn held(statement: Statement, due: &Due, run_id: &str) -> Statement {
    statement.bind(due.event.id.as_str()).bind(due.checkpoint).bind(due.channel.as_str()).bind(run_id)
}

/// What became of an attempt: its outcome's name, the error, and when the
/// delivery is tried again.
pub(crate) struct Outcome {
    pub name: &'static str,
    pub error: Option<String>,
    pub next_attempt_at: Option<i64>,
}

/// Records `outcome` of a delivery run `run_id` still holds, at `finished_ms`,
/// and gives up its claim.
pub(crate) fn record(due: &Due, run_id: &str, outcome: Outcome, finished_ms: i64) -> Statement {
    held(
        Statement::new(format!(
            "UPDATE reminder_deliveries SET outcome = ?5, last_error = ?6, updated_at = ?7, next_attempt_at = ?8, \
               claimed_by = NULL, lease_expires_at = NULL \
             WHERE {HELD_BY_THE_RUN}"
        )),
        due,
        run_id,
    )
    .bind(outcome.name)
    .bind(outcome.error)
    .bind(finished_ms)
    .bind(outcome.next_attempt_at)
}

/// The statements giving back a delivery run `run_id` claimed and did not
/// start: its claim's attempt uncounted, a first attempt forgotten, an earlier
/// failure failed again and due at once.
pub(crate) fn give_back(due: &Due, run_id: &str, now_ms: i64) -> [Statement; 2] {
    [
        held(
            Statement::new(format!("DELETE FROM reminder_deliveries WHERE {HELD_BY_THE_RUN} AND attempts = 1")),
            due,
            run_id,
        ),
        held(
            Statement::new(format!(
                "UPDATE reminder_deliveries SET outcome = 'failed', attempts = attempts - 1, next_attempt_at = ?5, \
                   last_error = COALESCE(last_error, 'a run stopped before it recorded what became of it'), \
                   claimed_by = NULL, lease_expires_at = NULL \
                 WHERE {HELD_BY_THE_RUN}"
            )),
            due,
            run_id,
        )
        .bind(now_ms),
    ]
}
