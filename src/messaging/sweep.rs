//! What the scheduled run ends: messages past their expiry become `expired`,
//! and leases that lapsed on their last attempt become `failed`. Every reader
//! already presents both as they are (judging against the clock); the sweep
//! records them, so counts and lists by stored state stay true and a sender's
//! listing by `updated_at` shows the change.

use crate::core::node::Node;
use crate::core::storage::Statement;

use super::{PolicyNumber, policy_sql};

/// What one sweep ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Messages past their expiry, unfinished.
    pub expired: u64,
    /// Messages whose lease lapsed on their last attempt.
    pub failed: u64,
}

/// Ends what expired and what failed, as of now, in one batch.
pub async fn sweep(node: &Node<'_>) -> Result<SweepReport, String> {
    let now_ms = node.platform.now_ms();
    let expired = Statement::new(
        "UPDATE agent_messages SET state = 'expired', lease_expires_at = NULL, updated_at = ?1 \
         WHERE state IN ('queued', 'leased') AND expires_at <= ?1",
    )
    .bind(now_ms);
    let failed = Statement::new(format!(
        "UPDATE agent_messages SET state = 'failed', updated_at = ?1 \
         WHERE state = 'leased' AND lease_expires_at <= ?1 AND attempts >= {}",
        policy_sql(PolicyNumber::MaximumAttempts, "agent_messages.recipient_id")
    ))
    .bind(now_ms);
    let results = node.database.execute(vec![expired, failed]).await.map_err(|error| error.to_string())?;
    let changes = |index: usize| results.get(index).map_or(0, |result| result.changes);
    Ok(SweepReport { expired: changes(0), failed: changes(1) })
}
