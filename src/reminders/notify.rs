//! What the scheduled run delivers: one notification per event, checkpoint and
//! channel, outside the person's quiet hours and never while acknowledged.
//!
//! A run reads the events whose current checkpoint (the moment preparing, the
//! due day or being overdue began) has not been delivered through a channel the
//! person has, claims each (event, checkpoint, channel) with one guarded upsert
//! that names the run and holds the delivery for `LEASE_MS`, delivers the
//! claimed ones, and records each outcome. The claim is the row's primary key,
//! so two runs at once never both claim; and a run starts a delivery only while
//! its claim outlasts the delivery's own deadline with time left to record it
//! (`STARTS_WITHIN_MS`), so no later run can claim a delivery again while the
//! run that holds it may still be posting it, however slow its receivers. What
//! a run did not start it gives back; it records and gives back only what it
//! still holds. Deliveries go `outbound::REQUESTS_AT_ONCE` at a time, each
//! within `outbound::POST_TIMEOUT_MS`: a receiver that hangs holds one place
//! for its deadline, never everyone else's reminders.
//!
//! A `failed` delivery is claimed again once its wait is over (`retry_wait_ms`:
//! a minute, then twice as long after each attempt), at most `ATTEMPTS_MAXIMUM`
//! times; a delivery still `sending` after its lease (a run that died mid-way)
//! is claimed again too. A webhook receiver that answered but whose answer was
//! not recorded (the run died between the two) may see a delivery twice: each
//! carries its id (`Mailroom-Delivery`) so it can tell.
//!
//! The same run shows each reminder due today or overdue in its person's
//! notifications feed, once per checkpoint, quiet hours or not.
//!
//! A webhook is signed like Stripe's: `Mailroom-Signature: t=<unix seconds>,
//! v1=<hex HMAC-SHA256 of "<t>.<body>" under the person's secret>`. The email
//! goes to the person's own address, from `REMINDER_SENDER`, marked
//! `Auto-Submitted: auto-generated` (RFC 3834) so that no auto-responder
//! answers it.

use mail_builder::MessageBuilder;
use mail_builder::headers::raw::Raw;
use mailroom_contract::api::{Channel, Event, EventState, NotificationKind, WEBHOOK_URL_MAXIMUM};
use serde::Serialize;

use super::schedule::{ClockTime, QuietHours, Zone};
use super::store::{self, Due, FeedDue, Outcome};
use crate::core::background::{Background, BackgroundError};
use crate::core::crypto::hex;
use crate::core::delivery::{self, Post, Undelivered};
use crate::core::events::Topic;
use crate::core::node::Node;
use crate::core::outbound;
use crate::core::platform::{Platform, random_bytes};
use crate::core::storage::Statement;
use crate::core::time::{MINUTE_MS, rfc3339};
use crate::core::webhooks;
use crate::notifications::{self, Notice};

/// How many deliveries one run attempts; the rest wait for the next run.
pub const DELIVERIES_PER_RUN: i64 = 100;
/// How long a claim holds a delivery for the run that claimed it.
pub const LEASE_MS: i64 = 2 * MINUTE_MS;
/// How long after it claimed a run still starts deliveries. One started at the
/// last moment ends by its deadline (`outbound::POST_TIMEOUT_MS`), and the run
/// then has `RECORDING_MS` to record it before the claim lapses; the rest are
/// given back for the next run. So a run's time is bounded too, under the
/// minute between two runs.
pub const STARTS_WITHIN_MS: i64 = 45_000;
/// What a run keeps, after its last delivery's deadline, to record outcomes
/// while its claims still hold.
const RECORDING_MS: i64 = 30_000;
const _: () = assert!(STARTS_WITHIN_MS + outbound::POST_TIMEOUT_MS as i64 + RECORDING_MS <= LEASE_MS);
/// How many times a delivery is tried before it is left failed.
pub const ATTEMPTS_MAXIMUM: i64 = 10;
/// How long a delivery waits after its first failed attempt.
pub const FIRST_RETRY_WAIT_MS: i64 = MINUTE_MS;
/// The longest a failed delivery waits before its next attempt.
pub const LONGEST_RETRY_WAIT_MS: i64 = 60 * MINUTE_MS;

/// How long a delivery waits after its `attempts`-th attempt failed: a minute
/// after the first, twice as long after each later one, at most an hour.
pub fn retry_wait_ms(attempts: i64) -> i64 {
    let doublings = u32::try_from(attempts.saturating_sub(1)).unwrap_or(0).min(16);
    (FIRST_RETRY_WAIT_MS << doublings).min(LONGEST_RETRY_WAIT_MS)
}

/// When a delivery whose `attempts`-th attempt failed in the run that started
/// at `run_started_ms` is tried again: its wait after that run's start, down to
/// the minute. The cron fires once a minute, at or just after the minute
/// begins, so a wait of one minute is the very next run, wherever in its
/// minute either run fell.
fn next_attempt_at(run_started_ms: i64, attempts: i64) -> i64 {
    (run_started_ms + retry_wait_ms(attempts)) / MINUTE_MS * MINUTE_MS
}

/// What one run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NotifyReport {
    /// Deliveries the channel accepted.
    pub delivered: usize,
    /// Deliveries the channel refused or that did not answer.
    pub failed: usize,
    /// Deliveries claimed but not started in the run's time, given back for the next run.
    pub given_back: usize,
    /// Deliveries due but inside the person's quiet hours.
    pub waiting_for_quiet_hours: usize,
    /// Events closed as expired because their due moment passed.
    pub expired: u64,
    /// Reminders newly shown in their people's notification feeds.
    pub in_feeds: usize,
}

impl Due {
    fn in_quiet_hours(&self, now_ms: i64) -> bool {
        let (Some(start), Some(end)) = (self.quiet_start.as_deref(), self.quiet_end.as_deref()) else {
            return false;
        };
        let (Ok(start), Ok(end)) = (ClockTime::parse(start), ClockTime::parse(end)) else { return false };
        let zone = Zone::parse(&self.time_zone).unwrap_or_else(|_| Zone::utc());
        QuietHours { start, end }.contains(&zone, now_ms)
    }

    /// The delivery's id, the same on every attempt.
    fn delivery_id(&self) -> String {
        format!("{}.{}.{}", self.event.id, self.checkpoint, self.channel)
    }
}

/// What a webhook receives.
#[derive(Serialize)]
struct WebhookBody<'a> {
    /// `reminder.state`: an event entered a state the person is told of.
    #[serde(rename = "type")]
    kind: &'static str,
    /// The delivery's id: the same on a retry.
    delivery: &'a str,
    /// The state entered: preparing, today or overdue.
    state: &'a str,
    /// When it was entered (RFC 3339).
    checkpoint: String,
    /// The event as the person's inbox shows it now.
    event: Event,
}

/// How many reminders one run adds to their people's feeds; the rest wait for
/// the next run.
pub const FEED_NOTICES_PER_RUN: i64 = 100;

impl FeedDue {
    /// The key that makes a checkpoint's notice written once (`due_for_the_feed`
    /// builds the same in SQL).
    fn key(&self) -> String {
        format!("reminder:{}:{}", self.id, self.checkpoint)
    }
}

/// The insert showing `due` in its person's feed, once per checkpoint.
/// What a listener is told when a reminder comes due in its person's feed.
const FEED_NOTICE_KIND: &str = "reminder_due";

fn feed_notice(due: &FeedDue, platform: &dyn Platform) -> Statement {
    let detail = if due.state_entered == EventState::Overdue.name() {
        format!("Overdue: it was due {}.", due.due_at)
    } else {
        format!("Due today: {}.", due.due_at)
    };
    let notice = Notice {
        kind: NotificationKind::ReminderDue,
        object_id: &due.id,
        mailbox_id: None,
        actor: None,
        title: &due.title,
        detail: Some(&detail),
    };
    notifications::notify_once(&notice, &due.person_id, &due.key(), platform)
}

/// The run that records: its id and when it started.
struct Run<'a> {
    id: &'a str,
    started_ms: i64,
}

/// The statement recording what became of a delivery `run` still holds, its
/// `attempts`-th, at `finished_ms`: delivered, or failed and when it is tried
/// again (never once its attempts are spent).
fn record(due: &Due, attempts: i64, outcome: &Result<(), Undelivered>, run: &Run<'_>, finished_ms: i64) -> Statement {
    let (name, error, next_attempt) = match outcome {
        Ok(()) => ("delivered", None, None),
        Err(error) => (
            "failed",
            Some(error.to_string().chars().take(500).collect::<String>()),
            (attempts < ATTEMPTS_MAXIMUM).then(|| next_attempt_at(run.started_ms, attempts)),
        ),
    };
    let outcome = Outcome { name, error, next_attempt_at: next_attempt };
    store::record(due, run.id, outcome, finished_ms)
}

async fn post_webhook(node: &Node<'_>, due: &Due, now_ms: i64) -> Result<(), Undelivered> {
    let (Some(url), Some(secret)) = (due.webhook_url.as_deref(), due.webhook_secret.as_deref()) else {
        return Err(Undelivered::Gone("the webhook was removed"));
    };
    let delivery = due.delivery_id();
    let body = WebhookBody {
        kind: "reminder.state",
        delivery: &delivery,
        state: &due.state_entered,
        checkpoint: rfc3339(due.checkpoint),
        event: due.event.present(now_ms, &[]),
    };
    let body = serde_json::to_string(&body).map_err(|error| Undelivered::Unwritable(error.to_string()))?;
    let headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("mailroom-delivery".to_string(), delivery.clone()),
        ("mailroom-signature".to_string(), webhooks::signature(secret, now_ms, &body)),
    ];
    // Checked again now: an address stored before the rule, or under a looser
    // one, is refused here, and never fetched.
    let post =
        Post { url, maximum_url_bytes: WEBHOOK_URL_MAXIMUM, receiver: "the webhook", headers: &headers, body: &body };
    delivery::post_within(node.webhooks, node.platform, &node.config.outbound_policy(), post).await
}

/// The subject line for a state entered.
fn subject(state: EventState, title: &str, due_at: &str) -> String {
    match state {
        EventState::Preparing => format!("Coming up: {title} (due {due_at})"),
        EventState::Today => format!("Today: {title}"),
        _ => format!("Overdue: {title} (was due {due_at})"),
    }
}

async fn send_email(node: &Node<'_>, due: &Due, now_ms: i64) -> Result<(), Undelivered> {
    let Some(sender) = node.config.reminder_sender.as_deref() else {
        return Err(Undelivered::Unconfigured(
            "the node has no REMINDER_SENDER address to send reminders from; tell its operator",
        ));
    };
    let state = EventState::parse(&due.state_entered).unwrap_or(EventState::Preparing);
    let event = &due.event;
    let mut text = format!("{}\n", event.title);
    if let Some(subtitle) = &event.subtitle {
        text.push_str(&format!("{subtitle}\n"));
    }
    text.push_str(&format!("\nDue: {} ({})\n", event.due_at, due.time_zone));
    if let Some(link) = &event.deep_link {
        text.push_str(&format!("Open: {link}\n"));
    }
    text.push_str(&format!(
        "\nIn Mailroom's Reminders, mark it \"{}\" when it is, or acknowledge it to hear nothing more until its next step.\n",
        event.done_label
    ));
    let domain = sender.rsplit_once('@').map_or("mailroom.invalid", |(_, domain)| domain);
    let message = MessageBuilder::new()
        .from(("Mailroom reminders", sender))
        .to(due.email.as_str())
        .subject(subject(state, &event.title, &event.due_at))
        .message_id(format!("{}@{domain}", due.delivery_id()))
        // Sent by a machine, not a person (RFC 3834 §5): auto-responders and
        // vacation replies leave it unanswered.
        .header("Auto-Submitted", Raw::new("auto-generated"))
        // Dated by the node's clock: left out, mail-builder would read the
        // system clock, which the Workers runtime does not have (it panics).
        .date(now_ms / 1000)
        .text_body(text)
        .write_to_vec()
        .map_err(|error| Undelivered::Unwritable(error.to_string()))?;
    node.mailer.send(sender, &due.email, &message).await.map(|_| ()).map_err(|error| Undelivered::MailRefused(error.0))
}

/// One delivery of a run, started only by `start_by` (`STARTS_WITHIN_MS`)
/// and given its deadline: what became of it and when it ended, or `None` when
/// it was too late to start.
async fn attempt(node: &Node<'_>, due: &Due, start_by: i64) -> Option<(Result<(), Undelivered>, i64)> {
    let started = node.platform.now_ms();
    if started > start_by {
        return None;
    }
    let delivery = async {
        match Channel::parse(&due.channel) {
            Some(Channel::Webhook) => post_webhook(node, due, started).await,
            Some(Channel::Email) => send_email(node, due, started).await,
            None => Err(Undelivered::Gone("the delivery names a channel the node no longer has")),
        }
    };
    let outcome = outbound::within(node.platform, outbound::POST_TIMEOUT_MS, delivery).await.unwrap_or_else(|| {
        Err(Undelivered::TimedOut {
            receiver: format!("the {}", due.channel),
            seconds: outbound::POST_TIMEOUT_MS / 1000,
        })
    });
    Some((outcome, node.platform.now_ms()))
}

/// One scheduled run: events past due with `after_due` expire closed, and every
/// notification due is delivered once.
pub async fn notify_due(work: &Background<'_>) -> Result<NotifyReport, BackgroundError> {
    let node = work.node();
    let now_ms = node.platform.now_ms();
    let mut report = NotifyReport::default();
    let expire = store::expire_events(now_ms);
    let due_deliveries = store::due_deliveries(now_ms, ATTEMPTS_MAXIMUM, DELIVERIES_PER_RUN);
    let due_for_the_feed = store::due_for_the_feed(now_ms, FEED_NOTICES_PER_RUN);
    let mut results = work.run(vec![expire, due_deliveries, due_for_the_feed]).await?;
    let for_the_feed: Vec<FeedDue> = results.pop().unwrap_or_default().decode_all()?;
    if !for_the_feed.is_empty() {
        let notices = for_the_feed.iter().map(|due| feed_notice(due, node.platform)).collect();
        for due in &for_the_feed {
            work.tell(Topic::Person(due.person_id.clone()), FEED_NOTICE_KIND, &due.id);
        }
        work.run(notices).await?;
        report.in_feeds = for_the_feed.len();
    }
    let due = results.pop().unwrap_or_default();
    report.expired = results.pop().map_or(0, |result| result.changes);
    let due: Vec<Due> = due.decode_all()?;
    let (quiet, ready): (Vec<Due>, Vec<Due>) = due.into_iter().partition(|due| due.in_quiet_hours(now_ms));
    report.waiting_for_quiet_hours = quiet.len();
    if ready.is_empty() {
        return Ok(report);
    }
    let run_id = hex(&random_bytes::<16>(node.platform));
    let claims = work
        .run(ready.iter().map(|due| store::claim(due, &run_id, now_ms, LEASE_MS, ATTEMPTS_MAXIMUM)).collect())
        .await?;
    // Each claimed delivery with the attempt its claim makes.
    let claimed: Vec<(&Due, i64)> = ready
        .iter()
        .zip(claims)
        .filter_map(|(due, claimed)| {
            claimed.first().and_then(|row| row.integer("attempts").ok()).map(|attempts| (due, attempts))
        })
        .collect();
    let start_by = now_ms + STARTS_WITHIN_MS;
    let outcomes = outbound::each_at_once(&claimed, |(due, _)| attempt(node, due, start_by)).await;
    let mut records = Vec::new();
    for ((due, attempts), outcome) in claimed.iter().zip(outcomes) {
        let Some((outcome, finished_ms)) = outcome else {
            report.given_back += 1;
            records.extend(store::give_back(due, &run_id, node.platform.now_ms()));
            continue;
        };
        match &outcome {
            Ok(()) => report.delivered += 1,
            Err(error) => {
                report.failed += 1;
                node.platform.log(&format!("reminder {} by {}: {error}", due.event.id, due.channel));
            }
        }
        records.push(record(due, *attempts, &outcome, &Run { id: &run_id, started_ms: now_ms }, finished_ms));
    }
    if !records.is_empty() {
        work.run(records).await?;
    }
    Ok(report)
}
