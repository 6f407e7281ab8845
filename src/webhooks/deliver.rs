//! Posting what commits queued: a run claims the deliveries due (so a run
//! after an answer and the per-minute schedule never post the same one at
//! once), asks whether whoever subscribed each may still be told, posts them
//! signed in the Standard Webhooks format, and records each outcome: a 2xx
//! delivered, an address the outbound rule refuses failed for good, any other
//! failure tried again after `RETRY_AFTER_MINUTES`, until they run out.

use mailroom_contract::api::{WEBHOOK_URL_MAXIMUM, webhook_limits};

use super::store::{self, Settled};
use crate::core::background::{Background, BackgroundError};
use crate::core::crypto::hex;
use crate::core::delivery::{self, Post, Undelivered};
use crate::core::node::Node;
use crate::core::outbound::{self, OutboundPolicy};
use crate::core::platform::random_bytes;
use crate::core::storage::{Row, StorageError};
use crate::core::time::rfc3339;
use crate::core::webhooks::standard_signature;

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
    removed: bool,
    owner_may: bool,
}

impl Due {
    fn of(row: &Row) -> Result<Due, StorageError> {
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
            removed: row.integer("removed")? != 0,
            owner_may: row.integer("owner_may")? != 0,
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

/// Posts the deliveries due now, a run's claim at a time.
pub async fn deliver_due(work: &Background<'_>) -> Result<WebhookReport, BackgroundError> {
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
    let policy = node.config.outbound_policy();
    let outcomes = outbound::each_at_once(&due, |due| attempt(node, &policy, due)).await;
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

async fn attempt(node: &Node<'_>, policy: &OutboundPolicy, due: &Due) -> Attempted {
    if due.removed {
        return Attempted::Withheld("the webhook was removed");
    }
    if !due.owner_may {
        return Attempted::Withheld(
            "whoever subscribed it no longer administers the node, or no longer sponsors the agent",
        );
    }
    let body = due.body();
    let timestamp = node.platform.now_ms() / 1000;
    let Some(signature) = standard_signature(&due.secret, &due.id, timestamp, &body) else {
        return Attempted::Refused("its signing secret is unreadable".to_string());
    };
    let headers = [
        ("content-type".to_string(), "application/json".to_string()),
        ("webhook-id".to_string(), due.id.clone()),
        ("webhook-timestamp".to_string(), timestamp.to_string()),
        ("webhook-signature".to_string(), signature),
    ];
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
