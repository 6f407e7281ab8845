//! Posting what commits queued: a run claims the deliveries due (so a run
//! after an answer and the per-minute schedule never post the same one at
//! once), asks whether whoever subscribed each may still be told, posts them
//! signed in the Standard Webhooks format, and records each outcome: a 2xx
//! delivered, an address the outbound rule refuses failed for good, any other
//! failure tried again after `RETRY_AFTER_MINUTES`, until they run out.
//!
//! A push config's post is the task as its sender sees it when posted, in the
//! config's A2A version, written by the surface that speaks A2A (`TaskBody`);
//! it goes while its sender's credential could still act, with the config's
//! token and authentication as headers.

use mailroom_contract::api::{AgentMessage, PushVersion, WEBHOOK_URL_MAXIMUM, webhook_limits};

use super::push::PushSettings;
use super::store::{self, A2A, Settled};
use crate::core::background::{Background, BackgroundError};
use crate::core::crypto::hex;
use crate::core::delivery::{self, Post, Undelivered};
use crate::core::node::Node;
use crate::core::outbound::{self, OutboundPolicy};
use crate::core::platform::random_bytes;
use crate::core::storage::{Row, StorageError};
use crate::core::time::rfc3339;
use crate::core::webhooks::standard_signature;
use crate::messaging;

/// Writes a task as an A2A push notification posts it: the body and its media
/// type, for the task as its sender sees it, in the A2A version named.
pub type TaskBody = fn(&AgentMessage, PushVersion) -> (String, &'static str);

/// How many deliveries one run claims.
const CLAIMED_PER_RUN: usize = 25;
/// How long a run's claim holds: longer than it takes to post what it claimed
/// (`REQUESTS_AT_ONCE` at a time, each within `POST_TIMEOUT_MS`).
const CLAIM_MS: i64 = 120_000;
/// What a delivery's record calls its receiver.
const RECEIVER: &str = "the webhook";

/// What one run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WebhookReport {
    pub delivered: usize,
    /// Failed this time, to be tried again.
    pub retrying: usize,
    /// Failed for good.
    pub failed: usize,
    pub withheld: usize,
}

/// One claimed delivery, with where it goes and whether it may.
struct Due {
    webhook_id: String,
    id: String,
    kind: String,
    topic: String,
    object: Option<String>,
    committed_at: i64,
    attempts: i64,
    url: String,
    secret: String,
    created_by: String,
    /// A push config's settings; `None` for a Standard Webhooks subscription.
    push: Option<PushSettings>,
    removed: bool,
    owner_may: bool,
}

impl Due {
    fn of(row: &Row) -> Result<Due, StorageError> {
        let push = match row.text("flavour")?.as_str() {
            A2A => Some(
                serde_json::from_str(&row.optional_text("settings")?.unwrap_or_default())
                    .map_err(|error| StorageError::Decode(format!("a push config's settings: {error}")))?,
            ),
            _ => None,
        };
        // A push config goes while its sender could still act; a
        // subscription while whoever subscribed may still be told.
        let owner_may = if push.is_some() {
            row.integer("owner_live")? != 0
        } else {
            row.integer("standard_owner_may")? != 0 && row.integer("owner_live")? != 0
        };
        Ok(Due {
            webhook_id: row.text("webhook_id")?,
            id: row.text("id")?,
            kind: row.text("kind")?,
            topic: row.text("topic")?,
            object: row.optional_text("object")?,
            committed_at: row.integer("committed_at")?,
            attempts: row.integer("attempts")?,
            url: row.text("url")?,
            secret: row.text("secret")?,
            created_by: row.text("created_by")?,
            push,
            removed: row.integer("removed")? != 0,
            owner_may,
        })
    }

    /// The body posted: the event's ids and kind, never content.
    fn body(&self) -> String {
        serde_json::json!({
            "type": self.kind,
            "timestamp": rfc3339(self.committed_at),
            "data": { "topic": self.topic, "object": self.object, "webhook_id": self.webhook_id },
        })
        .to_string()
    }
}

/// What became of one attempt.
enum Attempted {
    Delivered,
    /// Failed; tried again while attempts remain.
    Failed {
        status: Option<u16>,
        error: String,
    },
    /// Failed in a way another attempt cannot mend.
    Refused(String),
    Withheld(&'static str),
}

/// Posts the deliveries due now, a run's claim at a time; a push config's task
/// written by `task_body`.
pub async fn deliver_due(work: &Background<'_>, task_body: TaskBody) -> Result<WebhookReport, BackgroundError> {
    let node = work.node();
    let now_ms = work.now_ms();
    let run = hex(&random_bytes::<16>(node.platform));
    let claimed = work
        .run(vec![store::claim(&run, now_ms, now_ms + CLAIM_MS, CLAIMED_PER_RUN), store::claimed(&run, now_ms)])
        .await?;
    let due = claimed.get(1).map(|result| result.rows.iter().map(Due::of).collect()).unwrap_or(Ok(Vec::new()))?;
    let mut report = WebhookReport::default();
    if due.is_empty() {
        return Ok(report);
    }
    let tasks = tasks_of(work, &due, task_body).await?;
    let policy = node.config.outbound_policy();
    let outcomes =
        outbound::each_at_once(&due, |due| attempt(node, &policy, due, tasks.iter().find(|(id, _)| *id == due.id)))
            .await;
    let at = work.now_ms();
    let mut statements = Vec::with_capacity(due.len());
    for (due, outcome) in due.iter().zip(&outcomes) {
        let attempts = due.attempts + 1;
        let retry_after = usize::try_from(due.attempts)
            .ok()
            .and_then(|made| webhook_limits::RETRY_AFTER_MINUTES.get(made))
            .map(|minutes| minutes * 60_000);
        let (state, last_status, last_error, next_attempt_at) = match outcome {
            Attempted::Delivered => {
                report.delivered += 1;
                ("delivered", None, None, at)
            }
            Attempted::Failed { status, error } => match retry_after {
                Some(wait) => {
                    report.retrying += 1;
                    ("pending", *status, Some(error.as_str()), at + wait)
                }
                None => {
                    report.failed += 1;
                    ("failed", *status, Some(error.as_str()), at)
                }
            },
            Attempted::Refused(error) => {
                report.failed += 1;
                ("failed", None, Some(error.as_str()), at)
            }
            Attempted::Withheld(why) => {
                report.withheld += 1;
                ("withheld", None, Some(*why), at)
            }
        };
        let attempts = if matches!(outcome, Attempted::Withheld(_)) { due.attempts } else { attempts };
        statements.push(store::delivery_settled(Settled {
            webhook_id: &due.webhook_id,
            id: &due.id,
            state,
            attempts,
            next_attempt_at,
            last_status: last_status.map(i64::from),
            last_error,
            at,
        }));
    }
    work.run(statements).await?;
    Ok(report)
}

/// The statement that forgets deliveries settled more than `KEPT_DAYS`
/// before `now_ms`, for the upkeep's batch.
pub fn forget_settled(now_ms: i64) -> crate::core::storage::Statement {
    store::forget_settled(now_ms - webhook_limits::KEPT_DAYS * 24 * 60 * 60 * 1000)
}

/// The body of each push config's delivery among `due`, by its message id:
/// the task as its sender sees it now, read in one round trip. A task its
/// sender can no longer read has none.
async fn tasks_of(
    work: &Background<'_>,
    due: &[Due],
    task_body: TaskBody,
) -> Result<Vec<(String, (String, &'static str))>, BackgroundError> {
    let now_ms = work.now_ms();
    let pushes: Vec<(&Due, &PushSettings, &str)> =
        due.iter().filter_map(|due| Some((due, due.push.as_ref()?, due.object.as_deref()?))).collect();
    if pushes.is_empty() {
        return Ok(Vec::new());
    }
    let reads = pushes.iter().map(|(due, _, task)| messaging::message_sent_by(task, &due.created_by, now_ms)).collect();
    let found = work.run(reads).await?;
    Ok(pushes
        .iter()
        .zip(&found)
        .filter_map(|((due, settings, _), result)| {
            let task = messaging::sent_message(result, &due.created_by, now_ms)?;
            Some((due.id.clone(), task_body(&task, settings.version)))
        })
        .collect())
}

async fn attempt(
    node: &Node<'_>,
    policy: &OutboundPolicy,
    due: &Due,
    task: Option<&(String, (String, &'static str))>,
) -> Attempted {
    if due.removed {
        return Attempted::Withheld("the webhook was removed");
    }
    if !due.owner_may {
        return Attempted::Withheld(if due.push.is_some() {
            "whoever asked for it can no longer act"
        } else {
            "whoever subscribed it no longer administers the node, or no longer sponsors the agent"
        });
    }
    let (body, headers) = match &due.push {
        None => match standard(node, due) {
            Some(standard) => standard,
            None => return Attempted::Refused("its signing secret is unreadable".to_string()),
        },
        Some(settings) => match task {
            Some((_, (body, media_type))) => (body.clone(), push_headers(settings, media_type)),
            None => return Attempted::Withheld("whoever asked for it can no longer read the task"),
        },
    };
    let post = Post {
        url: &due.url,
        maximum_url_bytes: WEBHOOK_URL_MAXIMUM,
        receiver: RECEIVER,
        headers: &headers,
        body: &body,
    };
    match delivery::post_within(node.webhooks, node.platform, policy, post).await {
        Ok(()) => Attempted::Delivered,
        Err(refused @ Undelivered::Refused { .. }) => Attempted::Refused(refused.to_string()),
        Err(answered @ Undelivered::Answered { status, .. }) => {
            Attempted::Failed { status: Some(status), error: answered.to_string() }
        }
        Err(other) => Attempted::Failed { status: None, error: other.to_string() },
    }
}

/// A Standard Webhooks delivery's body and headers, signed now; `None` when
/// its secret cannot be read.
fn standard(node: &Node<'_>, due: &Due) -> Option<(String, Vec<(String, String)>)> {
    let body = due.body();
    let timestamp = node.platform.now_ms() / 1000;
    let signature = standard_signature(&due.secret, &due.id, timestamp, &body)?;
    let headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("webhook-id".to_string(), due.id.clone()),
        ("webhook-timestamp".to_string(), timestamp.to_string()),
        ("webhook-signature".to_string(), signature),
    ];
    Some((body, headers))
}

/// An A2A push notification's headers: its media type, the config's token as
/// `X-A2A-Notification-Token` and its authentication as `Authorization`.
fn push_headers(settings: &PushSettings, media_type: &str) -> Vec<(String, String)> {
    let mut headers = vec![("content-type".to_string(), media_type.to_string())];
    if let Some(token) = &settings.token {
        headers.push(("x-a2a-notification-token".to_string(), token.clone()));
    }
    if let Some(authentication) = &settings.authentication {
        headers
            .push(("authorization".to_string(), format!("{} {}", authentication.scheme, authentication.credentials)));
    }
    headers
}
