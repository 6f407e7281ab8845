//! What the scheduled run ends: messages past their expiry become `expired`,
//! and leases that lapsed on their last attempt become `failed`. Every reader
//! already presents both as they are (judging against the clock); the sweep
//! records them, so counts and lists by stored state stay true and a sender's
//! listing by `updated_at` shows the change.

use super::store;
use crate::core::background::{Background, BackgroundError};

/// What one sweep ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Messages past their expiry, unfinished.
    pub expired: u64,
    /// Messages whose lease lapsed on their last attempt.
    pub failed: u64,
}

/// Ends what expired and what failed, as of now, in one batch.
pub async fn sweep(work: &Background<'_>) -> Result<SweepReport, BackgroundError> {
    let now_ms = work.now_ms();
    let statements = vec![store::expire_unfinished(now_ms), store::fail_every_spent_lease(now_ms)];
    let results = work.run(statements).await?;
    let changes = |index: usize| results.get(index).map_or(0, |result| result.changes);
    Ok(SweepReport { expired: changes(0), failed: changes(1) })
}
