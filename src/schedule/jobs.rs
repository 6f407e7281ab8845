//! The jobs the schedule runs, and what each does: a call into the domain that owns the work,
//! with what it reports logged and what stops it answered as a `JobFailure`
//! naming the job.

use std::fmt;

use mailroom_contract::api::AuditCheckpoint;

use crate::audit;
use crate::authz::throttle;
use crate::core::node::Node;
use crate::identity::sessions;
use crate::{ediscovery, mail, messaging, notifications, oauth, reminders};

/// A piece of background work the schedule runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Job {
    /// Reminders that fell due delivered, by the minute they fall due.
    DeliverReminders,
    /// Agent messages past their expiry or their attempts ended (only on a
    /// node with the agent network on).
    SweepAgentMessages,
    /// eDiscovery exports copied a slice at a time.
    BuildExports,
    /// Forgetting what ended, deleting owed originals, and the audit chain
    /// sealed, verified and checkpointed.
    Upkeep,
}

/// A job that did not finish, and why (for the operator's log).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobFailure {
    pub job: Option<Job>,
    pub reason: String,
}

impl JobFailure {
    fn of(job: Job) -> impl Fn(String) -> JobFailure {
        move |reason| JobFailure { job: Some(job), reason }
    }

    pub(super) fn unknown_cron(cron: &str) -> JobFailure {
        JobFailure { job: None, reason: format!("no job runs on the cron `{cron}`: add it to schedule::CRONS") }
    }
}

impl fmt::Display for JobFailure {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.job {
            Some(job) => write!(formatter, "{job:?}: {}", self.reason),
            None => formatter.write_str(&self.reason),
        }
    }
}

/// Runs one job.
pub(super) async fn run(node: &Node<'_>, job: Job) -> Result<(), JobFailure> {
    let failed = JobFailure::of(job);
    match job {
        Job::DeliverReminders => {
            let report = reminders::notify_due(node).await.map_err(&failed)?;
            if report.failed > 0 {
                node.platform.log(&format!("reminders: {report:?}"));
            }
        }
        Job::SweepAgentMessages => {
            if node.config.agent_network {
                messaging::sweep(node).await.map_err(&failed)?;
            }
        }
        Job::BuildExports => {
            // Resumed by the next run: nothing is recorded as copied until it
            // is stored.
            let built = ediscovery::build_exports(node).await.map_err(&failed)?;
            if built != ediscovery::BuildReport::default() {
                node.platform.log(&format!("exports: {built:?}"));
            }
        }
        Job::Upkeep => {
            upkeep(node).await.map_err(&failed)?;
        }
    }
    Ok(())
}

/// The upkeep: failure windows that ended, the spent refresh tokens of ended
/// sessions, notifications past their keeping and ended OAuth grants
/// forgotten; the originals of deleted mail that the object store failed to
/// delete deleted; then the audit chain sealed, refused attempts folded into
/// it, verified from its latest checkpoint, and a checkpoint of its head kept
/// (or, when it does not verify, the alarm raised to administrators through
/// their notifications). Answers the latest checkpoint.
pub async fn upkeep(node: &Node<'_>) -> Result<Option<AuditCheckpoint>, String> {
    let now_ms = node.platform.now_ms();
    let mut forgetting = throttle::forget_ended(now_ms);
    forgetting.push(sessions::forget_spent(now_ms));
    forgetting.extend(notifications::remove_expired(now_ms));
    forgetting.extend(oauth::forget_ended(now_ms));
    node.database.execute(forgetting).await.map_err(|error| error.to_string())?;
    // Logged and left for the next run: the chain's upkeep does not wait on R2.
    if let Err(error) = mail::delete_originals_owed(node).await {
        node.platform.log(&format!("deleting the originals of deleted mail: {error}"));
    }
    audit::maintain(node, notifications::audit_alarm).await
}
