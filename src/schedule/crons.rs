//! Which jobs each cron trigger runs, stated once. `wrangler.toml`'s
//! `[triggers] crons` is held to this table by a native test, and the scheduled
//! event runs exactly the row of the expression it was fired with.

use crate::core::node::Node;

use super::jobs::{self, Job, JobFailure};

/// Every cron expression the node answers to, with the jobs it runs in order.
pub const CRONS: &[(&str, &[Job])] = &[
    // Every minute, so a reminder arrives, and a snoozed conversation wakes, at
    // the minute it falls due; webhooks last, so what the jobs before them
    // told is posted in the same run.
    (
        "* * * * *",
        &[
            Job::DeliverReminders,
            Job::WakeSnoozed,
            Job::SweepAgentMessages,
            Job::DeliverRemoteMessages,
            Job::BuildExports,
            Job::DeliverWebhooks,
        ],
    ),
    // Every five minutes: the upkeep, including a checkpoint of the chain's
    // head; then a step of moving a mailbox's mail out of D1, in what is left
    // of the invocation's subrequests.
    ("*/5 * * * *", &[Job::Upkeep, Job::MoveMail]),
];

/// The jobs `cron` runs, or `None` for an expression the table does not name.
pub fn jobs_of(cron: &str) -> Option<&'static [Job]> {
    CRONS.iter().find(|(expression, _)| *expression == cron).map(|(_, jobs)| *jobs)
}

/// The first cron expression that runs `job`.
pub fn cron_of(job: Job) -> Option<&'static str> {
    CRONS.iter().find(|(_, jobs)| jobs.contains(&job)).map(|(expression, _)| *expression)
}

/// Runs every job of `cron`'s row, each whatever the one before it did: a
/// failing job is answered with the others' failures, never stops them.
pub async fn on_schedule(node: &Node<'_>, cron: &str) -> Result<(), Vec<JobFailure>> {
    let Some(row) = jobs_of(cron) else {
        return Err(vec![JobFailure::UnknownCron(cron.to_string())]);
    };
    let mut failures = Vec::new();
    for job in row {
        if let Err(failure) = jobs::run_job(node, *job).await {
            failures.push(failure);
        }
    }
    if failures.is_empty() { Ok(()) } else { Err(failures) }
}
