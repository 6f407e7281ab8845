//! The webhooks' SQL: the subscriptions (`webhooks`), the queue of deliveries
//! a commit fills in its own batch, a delivery run's claim and what it
//! records, and the latest deliveries shown beside each webhook.

use mailroom_contract::api::webhook_limits;
use mailroom_contract::relation::ORGANIZATION_OBJECT;

use crate::authz::{self, tuples};
use crate::core::events::{Event, Told};
use crate::core::storage::{Insert, Statement, Value};

/// The columns a webhook is read with.
const WEBHOOK_COLUMNS: &str = "id, topic, url, kinds, object, settings, created_by, created_at";

/// The flavour of a Standard Webhooks subscription.
pub(super) const STANDARD: &str = "standard";
/// The flavour of an A2A push notification config.
pub(super) const A2A: &str = "a2a";

/// A webhook as it is stored when subscribed.
pub(super) struct NewWebhook<'a> {
    pub id: &'a str,
    pub topic: &'a str,
    pub subject: &'a str,
    pub url: &'a str,
    /// The kinds, stored with a space around each (`' a b '`), or `''` for all.
    pub kinds: &'a str,
    pub secret: &'a str,
    pub created_by: &'a str,
    pub created_at: i64,
    /// Only events acting on this id (a push config's task).
    pub object: Option<&'a str>,
    /// `STANDARD` or `A2A`.
    pub flavour: &'static str,
    /// A push config's settings, as JSON.
    pub settings: Option<&'a str>,
}

pub(super) fn webhook_created(webhook: NewWebhook<'_>) -> Statement {
    Insert::into("webhooks")
        .value("id", webhook.id)
        .value("topic", webhook.topic)
        .value("subject", webhook.subject)
        .value("url", webhook.url)
        .value("kinds", webhook.kinds)
        .value("secret", webhook.secret)
        .value("created_by", webhook.created_by)
        .value("created_at", webhook.created_at)
        .value("object", webhook.object)
        .value("flavour", webhook.flavour)
        .value("settings", webhook.settings)
        .statement()
}

/// Which live subscriptions a route is about: a mailbox's or an agent's
/// webhooks, by their topic, or the push configs someone set on a task.
#[derive(Clone, Copy)]
pub(super) enum Subscriptions<'a> {
    Webhooks { topic: &'a str },
    PushConfigs { task_id: &'a str, owner: &'a str },
}

impl Subscriptions<'_> {
    /// The SQL condition on `webhooks w` that selects them (live ones only),
    /// with its parameters, each a plain `?`.
    fn condition(self) -> (&'static str, Vec<Value>) {
        match self {
            Subscriptions::Webhooks { topic } => {
                ("w.flavour = 'standard' AND w.topic = ? AND w.removed_at IS NULL", vec![topic.into()])
            }
            Subscriptions::PushConfigs { task_id, owner } => (
                "w.flavour = 'a2a' AND w.object = ? AND w.created_by = ? AND w.removed_at IS NULL",
                vec![task_id.into(), owner.into()],
            ),
        }
    }

    /// How many of them may be live at once.
    fn limit(self) -> usize {
        match self {
            Subscriptions::Webhooks { .. } => webhook_limits::PER_SUBJECT,
            Subscriptions::PushConfigs { .. } => webhook_limits::PER_TASK,
        }
    }
}

/// `subscriptions`, oldest first.
pub(super) fn live(subscriptions: Subscriptions<'_>) -> Statement {
    let (condition, parameters) = subscriptions.condition();
    Statement {
        sql: format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks w WHERE {condition} ORDER BY w.created_at, w.id").into(),
        parameters,
    }
}

/// The guard that no more of `subscriptions` are live than may be,
/// evaluated after the commit's writes.
pub(super) fn within_the_limit(subscriptions: Subscriptions<'_>) -> Statement {
    let (condition, mut parameters) = subscriptions.condition();
    parameters.push((subscriptions.limit() as i64).into());
    Statement { sql: format!("(SELECT COUNT(*) FROM webhooks w WHERE {condition}) <= ?").into(), parameters }
}

/// The latest deliveries of each of `subscriptions`, newest first.
pub(super) fn latest_deliveries(subscriptions: Subscriptions<'_>) -> Statement {
    let (condition, mut parameters) = subscriptions.condition();
    parameters.push((webhook_limits::DELIVERIES_SHOWN as i64).into());
    Statement {
        sql: format!(
            "SELECT webhook_id, id, kind, object, committed_at, state, attempts, next_attempt_at, last_status, \
                    last_error, last_attempt_at FROM ( \
               SELECT d.*, ROW_NUMBER() OVER (PARTITION BY d.webhook_id ORDER BY d.committed_at DESC, d.id DESC) AS place \
               FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE {condition}) \
             WHERE place <= ? ORDER BY webhook_id, committed_at DESC, id DESC"
        )
        .into(),
        parameters,
    }
}

/// The live webhook `id` on `topic`.
pub(super) fn live_webhook(topic: &str, id: &str) -> Statement {
    Statement::new(format!(
        "SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE id = ?1 AND topic = ?2 AND flavour = 'standard' AND removed_at IS NULL"
    ))
    .bind(id)
    .bind(topic)
}

/// Removes webhook `id` (its secret forgotten), and withholds what it had not
/// yet delivered.
pub(super) fn webhook_removed(id: &str, now_ms: i64) -> [Statement; 2] {
    [
        Statement::new("UPDATE webhooks SET removed_at = ?2, secret = '' WHERE id = ?1 AND removed_at IS NULL")
            .bind(id)
            .bind(now_ms),
        Statement::new(
            "UPDATE webhook_deliveries SET state = 'withheld', last_error = 'the webhook was removed', \
             last_attempt_at = ?2, claimed_by = NULL, claimed_until = NULL WHERE webhook_id = ?1 AND state = 'pending'",
        )
        .bind(id)
        .bind(now_ms),
    ]
}

/// Queues `event` as message `message_id` for every live webhook on its topic
/// that asked for its kind: one row each, none when nobody subscribed.
pub(super) fn queue(event: &Event, message_id: &str) -> Statement {
    Statement::new(
        "INSERT INTO webhook_deliveries (webhook_id, id, kind, topic, object, committed_at, next_attempt_at) \
         SELECT w.id, ?1, ?2, ?3, ?4, ?5, ?5 FROM webhooks w \
         WHERE w.topic = ?3 AND w.removed_at IS NULL AND (w.kinds = '' OR instr(w.kinds, ' ' || ?2 || ' ') > 0) \
           AND (w.object IS NULL OR w.object = ?4)",
    )
    .bind(message_id)
    .bind(event.kind.as_str())
    .bind(event.topic.key())
    .bind(event.object.clone())
    .bind(event.at)
}

/// Queues an event of `kind` committed `at` for every live webhook subscribed
/// to it on the topics `selected` answers (`topic`, `object` per row), each as
/// the message `<message_prefix>.<object>`.
pub(super) fn queue_selected(kind: &str, at: i64, message_prefix: &str, selected: &Told) -> Statement {
    let (selected_sql, selected_parameters) = selected;
    let mut parameters: Vec<Value> = vec![message_prefix.into(), kind.into(), at.into(), at.into()];
    parameters.extend(selected_parameters.iter().cloned());
    parameters.push(kind.into());
    Statement {
        sql: format!(
            "INSERT INTO webhook_deliveries (webhook_id, id, kind, topic, object, committed_at, next_attempt_at) \
             SELECT w.id, ? || '.' || s.object, ?, s.topic, s.object, ?, ? FROM ({selected_sql}) s \
             JOIN webhooks w ON w.topic = s.topic AND w.removed_at IS NULL \
               AND (w.kinds = '' OR instr(w.kinds, ' ' || ? || ' ') > 0) AND (w.object IS NULL OR w.object = s.object)"
        )
        .into(),
        parameters,
    }
}

/// Claims, for the run `run`, up to `limit` deliveries due at `now_ms` that no
/// other run holds, until `claimed_until`.
pub(super) fn claim(run: &str, now_ms: i64, claimed_until: i64, limit: usize) -> Statement {
    Statement::new(
        "UPDATE webhook_deliveries SET claimed_by = ?1, claimed_until = ?3 WHERE rowid IN ( \
           SELECT rowid FROM webhook_deliveries \
           WHERE state = 'pending' AND next_attempt_at <= ?2 AND (claimed_until IS NULL OR claimed_until <= ?2) \
           ORDER BY next_attempt_at LIMIT ?4)",
    )
    .bind(run)
    .bind(now_ms)
    .bind(claimed_until)
    .bind(limit as i64)
}

/// What the run `run` claimed, with where each goes, how it is signed, and
/// whether whoever subscribed it may still be told (`owner_may`): an
/// administrator for a mailbox's, the agent's sponsor or an administrator for
/// an agent's, each still enabled.
pub(super) fn claimed(run: &str, now_ms: i64) -> Statement {
    let (administers, mut parameters) = tuples::holds_in_sql(
        &tuples::Holder::ActorIn { column: "w.created_by", now_ms },
        mailroom_contract::Relation::OrgAdmin,
        &format!("'{ORGANIZATION_OBJECT}'"),
    );
    let (sponsors, sponsor_parameters) = tuples::sponsors_or_administers_in_sql("w.created_by", "w.subject", now_ms);
    parameters.extend(sponsor_parameters);
    let (live, live_parameters) = authz::actor_live_in_sql("w.created_by", now_ms);
    parameters.extend(live_parameters);
    parameters.push(Value::from(run));
    Statement {
        sql: format!(
            "SELECT d.webhook_id, d.id, d.kind, d.topic, d.object, d.committed_at, d.attempts, w.url, w.secret, \
               w.flavour, w.settings, w.created_by, (w.removed_at IS NOT NULL) AS removed, \
               (CASE WHEN w.flavour = 'a2a' THEN -1 WHEN w.topic LIKE 'mailbox:%' THEN {administers} \
                     WHEN w.topic LIKE 'agent:%' THEN {sponsors} ELSE 0 END) AS standard_owner_may, \
               {live} AS owner_live \
             FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id \
             WHERE d.claimed_by = ? AND d.state = 'pending' ORDER BY d.committed_at, d.id"
        )
        .into(),
        parameters,
    }
}

/// What became of one claimed delivery.
pub(super) struct Settled<'a> {
    pub webhook_id: &'a str,
    pub id: &'a str,
    pub state: &'static str,
    pub attempts: i64,
    pub next_attempt_at: i64,
    pub last_status: Option<i64>,
    pub last_error: Option<&'a str>,
    pub at: i64,
}

/// Records `settled`, releasing the claim.
pub(super) fn delivery_settled(settled: Settled<'_>) -> Statement {
    Statement::new(
        "UPDATE webhook_deliveries SET state = ?3, attempts = ?4, next_attempt_at = ?5, last_status = ?6, \
           last_error = ?7, last_attempt_at = ?8, claimed_by = NULL, claimed_until = NULL \
         WHERE webhook_id = ?1 AND id = ?2",
    )
    .bind(settled.webhook_id)
    .bind(settled.id)
    .bind(settled.state)
    .bind(settled.attempts)
    .bind(settled.next_attempt_at)
    .bind(settled.last_status)
    .bind(settled.last_error.map(str::to_string))
    .bind(settled.at)
}

/// Forgets deliveries settled before `before`.
pub(super) fn forget_settled(before: i64) -> Statement {
    Statement::new("DELETE FROM webhook_deliveries WHERE state != 'pending' AND last_attempt_at < ?1").bind(before)
}
