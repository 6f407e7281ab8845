//! The SQL of what agents read of mail whose sender was not authenticated
//! (`mail::unverified_reads`): a note per agent and message at its latest
//! read, the count a submission takes of a day's notes, and forgetting the
//! notes no count looks back to.

use crate::core::storage::Statement;

/// Notes that agent `agent_id` read, at `read_at`, the received messages
/// `receipt_ids`: a note per message, moved to this read when there was one.
pub(crate) fn noted(agent_id: &str, receipt_ids: &[&str], read_at: i64) -> Statement {
    let ids = serde_json::to_string(receipt_ids).unwrap_or_else(|_| "[]".into());
    // `WHERE true` tells SQLite the ON CONFLICT is the upsert's, not the join's.
    Statement::new(
        "INSERT INTO agent_unverified_reads (agent_id, receipt_id, read_at) \
         SELECT ?1, value, ?2 FROM json_each(?3) WHERE true \
         ON CONFLICT (agent_id, receipt_id) DO UPDATE SET read_at = max(read_at, excluded.read_at)",
    )
    .bind(agent_id)
    .bind(read_at)
    .bind(ids)
}

/// How many messages agent `agent_id` read from `since` to `until`: one row,
/// `reads`.
pub(crate) fn count(agent_id: &str, (since, until): (i64, i64)) -> Statement {
    Statement::new(
        "SELECT count(*) AS reads FROM agent_unverified_reads WHERE agent_id = ?1 AND read_at >= ?2 AND read_at <= ?3",
    )
    .bind(agent_id)
    .bind(since)
    .bind(until)
}

/// Forgets the notes of reads before `before`.
pub(crate) fn forget_before(before: i64) -> Statement {
    Statement::new("DELETE FROM agent_unverified_reads WHERE read_at < ?1").bind(before)
}
