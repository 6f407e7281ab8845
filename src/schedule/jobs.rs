//! The jobs the schedule runs, and what each does: a call into the domain that owns the work,
//! with what it reports logged and what stops it answered as a `JobFailure`
//! naming the job.

use std::fmt;

use mailroom_contract::api::AuditCheckpoint;

use crate::audit::{self, AuditChain};
use crate::authz::throttle;
use crate::core::background::{Background, BackgroundError};
use crate::core::node::Node;
use crate::identity::sessions;
use crate::{a2a, ediscovery, mail, messaging, notifications, oauth, reminders, webhooks};

/// A piece of background work the schedule runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Job {
    /// Reminders that fell due delivered, by the minute they fall due.
    DeliverReminders,
    /// Snoozed conversations whose moment came opened again, their assignees
    /// told (decision 0048).
    WakeSnoozed,
    /// Agent messages past their expiry or their attempts ended (only on a
    /// node with the agent network on).
    SweepAgentMessages,
    /// Messages to agents elsewhere sent, retried, and their tasks asked
    /// after (only on a node with the agent network on; decision 0050).
    DeliverRemoteMessages,
    /// eDiscovery exports copied a slice at a time.
    BuildExports,
    /// Webhook deliveries due (first attempts a request's run missed, and
    /// retries) posted.
    DeliverWebhooks,
    /// Forgetting what ended, deleting owed originals, and the audit chain
    /// sealed, verified and checkpointed.
    Upkeep,
    /// A mailbox's mail moved a step further out of D1 into its own database
    /// (only on a node with `MOVE_MAIL_INTO_OWN_DATABASES` on).
    MoveMail,
}

/// A job that did not finish, or a cron that names none, and why (for the
/// operator's log).
#[derive(Clone, Debug, PartialEq)]
pub enum JobFailure {
    /// The cron expression is no row of `CRONS`: nothing ran.
    UnknownCron(String),
    /// The job stopped; the next run resumes it.
    Stopped { job: Job, error: BackgroundError },
}

impl JobFailure {
    /// The job that stopped, if one did.
    pub fn job(&self) -> Option<Job> {
        match self {
            JobFailure::UnknownCron(_) => None,
            JobFailure::Stopped { job, .. } => Some(*job),
        }
    }
}

impl fmt::Display for JobFailure {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobFailure::UnknownCron(cron) => {
                write!(formatter, "no job runs on the cron `{cron}`: add it to schedule::CRONS")
            }
            JobFailure::Stopped { job, error } => write!(formatter, "{job:?}: {error}"),
        }
    }
}

/// Runs one job in a unit of work of its own, recording in the node's audit
/// chain. Answers the round trips it took.
pub async fn run_job(node: &Node<'_>, job: Job) -> Result<u32, JobFailure> {
    let chain = AuditChain::new(node.config, node.platform);
    let work = Background::new(node, &chain);
    let stopped = |error| JobFailure::Stopped { job, error };
    match job {
        Job::DeliverReminders => {
            let report = reminders::notify_due(&work).await.map_err(stopped)?;
            if report.failed > 0 {
                node.platform.log(&format!("reminders: {report:?}"));
            }
        }
        Job::WakeSnoozed => {
            let report = mail::threads::wake_due(&work).await.map_err(stopped)?;
            if report.stale > 0 {
                node.platform.log(&format!("snoozed conversations: {report:?}"));
            }
        }
        Job::SweepAgentMessages => {
            if node.config.agent_network {
                messaging::sweep(&work).await.map_err(stopped)?;
            }
        }
        Job::DeliverRemoteMessages => {
            if node.config.agent_network {
                let report = a2a::deliver_remote(&work).await.map_err(stopped)?;
                if report != a2a::OutboxReport::default() {
                    node.platform.log(&format!("messages elsewhere: {report:?}"));
                }
            }
        }
        Job::BuildExports => {
            // Resumed by the next run: nothing is recorded as copied until it
            // is stored.
            let built = ediscovery::build_exports(&work).await.map_err(stopped)?;
            if built != ediscovery::BuildReport::default() {
                node.platform.log(&format!("exports: {built:?}"));
            }
        }
        Job::DeliverWebhooks => {
            let report = webhooks::deliver_due(&work, a2a::push_body).await.map_err(stopped)?;
            if report.failed + report.retrying > 0 {
                node.platform.log(&format!("webhooks: {report:?}"));
            }
        }
        Job::Upkeep => {
            upkeep_in(&work).await.map_err(stopped)?;
        }
        Job::MoveMail => {
            if node.config.move_mail_into_own_databases
                && let Some((mailbox_id, stage)) = mail::moving::move_next(&work).await.map_err(stopped)?
            {
                node.platform.log(&format!("moving {mailbox_id}'s mail: {stage:?}"));
            }
        }
    }
    Ok(work.round_trips())
}

/// The upkeep, in a unit of work of its own. Answers the latest checkpoint.
pub async fn upkeep(node: &Node<'_>) -> Result<Option<AuditCheckpoint>, BackgroundError> {
    let chain = AuditChain::new(node.config, node.platform);
    upkeep_in(&Background::new(node, &chain)).await
}

/// The upkeep: failure windows that ended, the spent refresh tokens of ended
/// sessions, notifications past their keeping, ended OAuth grants, settled
/// webhook deliveries past their keeping and agents' reads of unverified mail
/// no count looks back to forgotten; the originals of deleted mail that the object store failed to
/// delete deleted; then the audit chain sealed, refused attempts folded into
/// it, verified from its latest checkpoint, and a checkpoint of its head kept
/// (or, when it does not verify, the alarm raised to administrators through
/// their notifications). Answers the latest checkpoint.
async fn upkeep_in(work: &Background<'_>) -> Result<Option<AuditCheckpoint>, BackgroundError> {
    let node = work.node();
    let now_ms = work.now_ms();
    let mut forgetting = throttle::forget_ended(now_ms);
    forgetting.push(sessions::forget_spent(now_ms));
    forgetting.extend(notifications::remove_expired(now_ms));
    forgetting.extend(oauth::forget_ended(now_ms));
    forgetting.push(webhooks::forget_settled(now_ms));
    forgetting.push(mail::unverified_reads::forget_past(now_ms));
    work.run(forgetting).await?;
    // Logged and left for the next run: the chain's upkeep does not wait on R2.
    if let Err(error) = mail::delete_originals_owed(work).await {
        node.platform.log(&format!("deleting the originals of deleted mail: {error}"));
    }
    audit::maintain(work, notifications::audit_alarm).await
}
