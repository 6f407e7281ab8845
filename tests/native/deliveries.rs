//! Reminder deliveries exactly once under slowness and concurrency (issue 27
//! §4), on the test kit's virtual clock: receivers that take their time or
//! never answer, and the per-minute cron firing again while a run is still
//! posting. Each delivery reaches its receiver once; a hanging receiver holds
//! its own place and no one else's; a run's time is bounded and what it could
//! not start goes to the next run; a failure waits longer before each attempt.

use mailroom::audit::AuditChain;
use mailroom::core::background::Background;
use std::collections::BTreeMap;

use mailroom::core::platform::Platform;
use mailroom::reminders::{NotifyReport, notify_due};
use serde_json::{Value, json};

use crate::reminders::header;
use crate::support::*;

const HOOK: &str = "https://hooks.example.org/slow";

/// A person with a webhook at `url` and `events` reminders due today: their token.
fn person_with_reminders(world: &World, email: &str, url: &str, events: usize) -> String {
    let (_, token) = world.person(email);
    let set = world.call("PUT", "/api/me/profile/webhook", Some(&token), Some(json!({ "url": url })));
    assert_eq!(set.status, 200, "{}", text(&set));
    for _ in 0..events {
        world.reminder(&token, "2026-12-05");
    }
    token
}

/// How many POSTs each delivery id reached its receiver with.
fn posts_per_delivery(world: &World) -> BTreeMap<String, usize> {
    let mut counted = BTreeMap::new();
    for posted in world.node.webhooks.posted.borrow().iter() {
        *counted.entry(header(posted, "mailroom-delivery").to_string()).or_insert(0) += 1;
    }
    counted
}

/// Runs the reminders now and, as the cron would, again every minute for
/// `later_runs` minutes, all at once on the virtual clock: the reports in order.
fn runs_every_minute(world: &World, later_runs: u32) -> Vec<NotifyReport> {
    let node = world.node.node();
    let chain = AuditChain::new(node.config, node.platform);
    let clock = world.node.platform.clock();
    let runs = (0..=later_runs).map(|minute| {
        let clock = clock.clone();
        let (node, chain) = (&node, &chain);
        async move {
            clock.sleep(i64::from(minute) * 60_000).await;
            notify_due(&Background::new(node, chain)).await.expect("the run runs")
        }
    });
    world.node.run(futures_util::future::join_all(runs))
}

#[test]
fn a_run_longer_than_its_claim_never_posts_a_delivery_twice() {
    let world = World::at(utc("2026-12-05T09:00"));
    person_with_reminders(&world, "slow@example.com", HOOK, 13);
    // Each receiver answers just inside its deadline: thirteen one after the
    // other would take longer than the two minutes a claim holds.
    world.node.webhooks.answer_after(HOOK, 10_000);
    let start = world.node.platform.now_ms();
    let reports = runs_every_minute(&world, 3);
    let counted = posts_per_delivery(&world);
    assert_eq!(counted.len(), 13, "{counted:?}");
    assert!(counted.values().all(|posts| *posts == 1), "each delivery posted once: {counted:?}");
    let delivered: usize = reports.iter().map(|report| report.delivered).sum();
    assert_eq!(delivered, 13, "{reports:?}");
    // Six at once: three turns of ten seconds, not thirteen.
    let last = world.node.webhooks.posted.borrow().iter().map(|posted| posted.at_ms).max().unwrap();
    assert_eq!(last - start, 20_000);
    assert_eq!(reports[0].delivered, 13, "the first run delivered them all: {reports:?}");
}

#[test]
fn a_receiver_that_never_answers_holds_its_own_place_and_no_one_elses() {
    let world = World::at(utc("2026-12-05T09:00"));
    // First in the run's order: the hanging receiver's delivery.
    let silent = person_with_reminders(&world, "silent@example.com", "https://hooks.example.org/silent", 1);
    person_with_reminders(&world, "prompt@example.com", "https://hooks.example.org/prompt", 12);
    world.node.webhooks.answer_after("https://hooks.example.org/silent", i64::MAX);
    let start = world.node.platform.now_ms();
    let report = world.node.run_reminders();
    assert_eq!((report.delivered, report.failed), (12, 1), "{report:?}");
    let prompt = world.node.webhooks.posted_to("https://hooks.example.org/prompt");
    assert_eq!(prompt.len(), 12);
    assert!(prompt.iter().all(|posted| posted.at_ms == start), "no one waited for the silent receiver");
    // The run ended at the silent receiver's deadline, not later.
    assert_eq!(world.node.platform.now_ms() - start, 10_000);
    let events = body(&world.call("GET", "/api/me/events", Some(&silent), None));
    let delivery = &events["events"][0]["deliveries"][0];
    assert_eq!(delivery["outcome"], "failed");
    assert_eq!(delivery["last_error"], "the webhook did not answer within 10 seconds");
    assert_eq!(delivery["next_attempt_at"], "2026-12-05T09:01:00.000Z", "the next minute's run");
}

#[test]
fn a_run_starts_nothing_it_could_not_finish_within_its_claim_and_the_next_run_takes_the_rest() {
    let world = World::at(utc("2026-12-05T09:00"));
    person_with_reminders(&world, "many@example.com", "https://hooks.example.org/silent", 40);
    world.node.webhooks.answer_after("https://hooks.example.org/silent", i64::MAX);
    let start = world.node.platform.now_ms();
    let first = world.node.run_reminders();
    // Six at a time, ten seconds each: starts at 0, 10, 20, 30 and 40 seconds;
    // at 50 it is past the 45 seconds a run starts deliveries within.
    assert_eq!((first.failed, first.given_back), (30, 10), "{first:?}");
    assert_eq!(world.node.platform.now_ms() - start, 50_000, "the run's time is bounded");
    let given_back = world.node.database.count("SELECT COUNT(*) FROM reminder_deliveries");
    assert_eq!(given_back, 30, "what was not started was given back, never counted as an attempt");
    let second = world.node.run_reminders();
    assert_eq!(second.failed, 10, "the next run takes the rest: {second:?}");
    let counted = posts_per_delivery(&world);
    assert_eq!(counted.len(), 40);
    assert!(counted.values().all(|posts| *posts == 1), "{counted:?}");
}

#[test]
fn a_failed_delivery_waits_twice_as_long_before_each_attempt_and_says_when() {
    let world = World::at(utc("2026-12-05T09:00"));
    person_with_reminders(&world, "flaky@example.com", "https://hooks.example.org/flaky", 1);
    world.node.webhooks.status.set(503);
    let shown = || {
        let (token, _) = sign_in(&world.node, "flaky@example.com", PASSWORD);
        body(&world.call("GET", "/api/me/events", Some(&token), None))["events"][0]["deliveries"][0].clone()
    };
    let start = world.node.platform.now_ms();
    let at = |minutes: i64| {
        let now = world.node.platform.now_ms();
        world.node.platform.advance(start + minutes * 60_000 - now);
    };
    let mut attempts_at = Vec::new();
    // A run every minute for 20 minutes.
    for minute in 0..20 {
        at(minute);
        if world.node.run_reminders().failed == 1 {
            attempts_at.push(minute);
        }
    }
    // Waits of 1, 2, 4 and 8 minutes after the first four attempts.
    assert_eq!(attempts_at, [0, 1, 3, 7, 15], "{:?}", shown());
    let delivery: Value = shown();
    assert_eq!(delivery["attempts"], 5);
    assert_eq!(delivery["next_attempt_at"], "2026-12-05T09:31:00.000Z", "sixteen minutes after the fifth");
    world.node.webhooks.status.set(200);
    at(31);
    assert_eq!(world.node.run_reminders().delivered, 1);
    assert_eq!(shown()["next_attempt_at"], Value::Null, "delivered: nothing more to try");
    assert_eq!(mailroom::reminders::retry_wait_ms(9), 60 * 60_000, "never more than an hour");
}

#[test]
fn reminder_emails_are_marked_as_sent_by_a_machine() {
    let world = World::at(utc("2026-12-05T09:00"));
    let (_, token) = world.person("mail@example.com");
    world.call("PATCH", "/api/me/profile", Some(&token), Some(json!({ "email": true })));
    world.reminder(&token, "2026-12-05");
    assert_eq!(world.node.run_reminders().delivered, 1);
    let sent = world.node.mailer.sent.borrow();
    let written = String::from_utf8_lossy(&sent[0].raw);
    assert!(written.contains("\r\nAuto-Submitted: auto-generated\r\n"), "{written}");
}
