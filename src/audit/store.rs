//! The audit store: every statement that reads or writes the chain's entries,
//! its checkpoints as D1 records them, the windows of refused attempts and the
//! raised alarms. Each function only builds a statement; the chain, the sealer,
//! the upkeep and the routes decide what rides together.

use crate::core::storage::{Insert, Statement, Value};

/// The columns of an entry as stored (the chain's `StoredEntry`).
const ENTRY_COLUMNS: &str = "seq, at, actor, actor_kind, delegator, surface, action, object, outcome, \
     detail, key_id, mac, mac_version, nonce, prev_hash, hash";

/// Selected beside `ENTRY_COLUMNS` wherever entries are verified in their
/// place: the first earlier entry with the same MAC, which makes this one a copy.
const COPY_OF: &str = "(SELECT MIN(original.seq) FROM audit_entries original \
     WHERE original.mac = audit_entries.mac AND original.seq < audit_entries.seq) AS copy_of";

/// The `seq` of the latest checkpoint D1 records, or 0: an SQL expression.
const RECORDED_SEQ: &str = "COALESCE((SELECT seq FROM audit_checkpoints ORDER BY number DESC LIMIT 1), 0)";

/// The entries that change the witness: the two routes' own, by tool name. The
/// partial index `audit_entries_witness_changes` (migration 0024) is on exactly
/// this condition, which a test holds to the routes' names.
pub(super) const WITNESS_CHANGES: &str = "action IN ('set_audit_witness', 'remove_audit_witness')";

/// An entry's own fields, MAC'd, before the database gives it its place.
pub(super) struct NewEntry {
    pub(super) at: i64,
    pub(super) actor: Option<String>,
    pub(super) actor_kind: String,
    pub(super) delegator: Option<String>,
    pub(super) surface: Option<String>,
    pub(super) action: String,
    pub(super) object: Option<String>,
    pub(super) outcome: String,
    pub(super) detail: Option<String>,
    pub(super) key_id: Option<String>,
    pub(super) mac: Option<String>,
    pub(super) nonce: Option<String>,
}

/// The insert that appends `entry` to the chain, its `seq` one more than the
/// last, assigned inside the batch it travels in; `mac_version` is written as
/// a literal. Unsealed: `prev_hash` and `hash` are left for the sealer.
pub(super) fn append_entry(entry: NewEntry, mac_version: i64) -> Statement {
    placed(entry, mac_version, "")
}

/// `append_entry`, unless the alarm `alarm_key` was already raised.
pub(super) fn append_entry_unless_raised(entry: NewEntry, mac_version: i64, alarm_key: &str) -> Statement {
    placed(entry, mac_version, " WHERE NOT EXISTS (SELECT 1 FROM audit_alarms WHERE key = ?13)").bind(alarm_key)
}

fn placed(entry: NewEntry, mac_version: i64, condition: &str) -> Statement {
    Statement::new(format!(
        "INSERT INTO audit_entries \
           (seq, at, actor, actor_kind, delegator, surface, action, object, outcome, detail, key_id, mac, mac_version, nonce) \
         SELECT * FROM (SELECT COALESCE(MAX(seq), 0) + 1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, {mac_version}, ?12 \
                        FROM audit_entries){condition}"
    ))
    .bind(entry.at)
    .bind(entry.actor)
    .bind(entry.actor_kind)
    .bind(entry.delegator)
    .bind(entry.surface)
    .bind(entry.action)
    .bind(entry.object)
    .bind(entry.outcome)
    .bind(entry.detail)
    .bind(entry.key_id)
    .bind(entry.mac)
    .bind(entry.nonce)
}

/// The upsert that counts a refused attempt (`action`, `code`, at `at`) in
/// the window starting at `window_start`.
pub(super) fn count_attempt(window_start: i64, action: &str, code: String, at: i64) -> Statement {
    Statement::new(
        "INSERT INTO audit_attempts (window_start, action, code, attempts, first_at, last_at) \
         VALUES (?1, ?2, ?3, 1, ?4, ?4) \
         ON CONFLICT (window_start, action, code) DO UPDATE SET attempts = attempts + 1, last_at = ?4",
    )
    .bind(window_start)
    .bind(action)
    .bind(code)
    .bind(at)
}

/// Up to 200 windows of refused attempts that closed by `closed_by`, oldest first.
pub(super) fn closed_attempt_windows(closed_by: i64) -> Statement {
    Statement::new(
        "SELECT window_start, action, code, attempts, first_at, last_at FROM audit_attempts \
         WHERE window_start <= ?1 ORDER BY window_start, action, code LIMIT 200",
    )
    .bind(closed_by)
}

/// Forgets one window of refused attempts, folded into an entry.
pub(super) fn delete_attempt_window(window_start: i64, action: &str, code: &str) -> Statement {
    Statement::new("DELETE FROM audit_attempts WHERE window_start = ?1 AND action = ?2 AND code = ?3")
        .bind(window_start)
        .bind(action)
        .bind(code)
}

/// Raises the alarm `key` once: raising it again changes nothing.
pub(super) fn raise_alarm(key: String, raised_at: i64) -> Statement {
    Insert::into("audit_alarms")
        .value("key", key)
        .value("raised_at", raised_at)
        .then("ON CONFLICT (key) DO NOTHING")
        .statement()
}

/// Seals one waiting entry, if nothing sealed it first.
pub(super) fn seal_entry(seq: i64, prev_hash: &str, hash: &str) -> Statement {
    Statement::new("UPDATE audit_entries SET prev_hash = ?2, hash = ?3 WHERE seq = ?1 AND hash IS NULL")
        .bind(seq)
        .bind(prev_hash)
        .bind(hash)
}

/// `SELECT last_seq`: the last entry's `seq`, whatever its state, or 0.
pub(super) fn last_seq() -> Statement {
    Statement::new("SELECT COALESCE(MAX(seq), 0) AS last_seq FROM audit_entries")
}

/// The entry at `seq`, if any.
pub(super) fn entry_at(seq: i64) -> Statement {
    Statement::new(format!("SELECT {ENTRY_COLUMNS} FROM audit_entries WHERE seq = ?1")).bind(seq)
}

/// Up to `limit` entries before `before`, newest first.
pub(super) fn entries_before(before: i64, limit: i64, filter: &AuditFilter) -> Statement {
    let mut conditions = String::new();
    let mut values: Vec<Value> = Vec::new();
    let mut placeholder = |value: Value| {
        values.push(value);
        format!("?{}", values.len() + 2)
    };
    if let Some(actor) = &filter.actor {
        conditions += &format!(" AND actor = {}", placeholder(actor.clone().into()));
    }
    if let Some(action) = &filter.action {
        conditions += &format!(" AND action = {}", placeholder(action.clone().into()));
    }
    // A moment is found by the index on `at`, and bounds `seq` too, so the walk
    // down `seq` stops where the window does instead of reading to the first
    // entry. The chain records entries in the order of their moments, as one
    // clock stamps them when they are written.
    if let Some(since) = filter.since {
        let at = placeholder(since.into());
        conditions += &format!(
            " AND at >= {at} AND seq > COALESCE((SELECT seq FROM audit_entries WHERE at < {at} \
             ORDER BY at DESC, seq DESC LIMIT 1), 0)"
        );
    }
    if let Some(until) = filter.until {
        let at = placeholder(until.into());
        conditions += &format!(
            " AND at <= {at} AND seq <= COALESCE((SELECT seq FROM audit_entries WHERE at <= {at} \
             ORDER BY at DESC, seq DESC LIMIT 1), 0)"
        );
    }
    let statement = Statement::new(format!(
        "SELECT {ENTRY_COLUMNS} FROM audit_entries WHERE seq < ?1{conditions} ORDER BY seq DESC LIMIT ?2"
    ))
    .bind(before)
    .bind(limit);
    values.into_iter().fold(statement, Statement::bind)
}

/// What a reading of the trail is narrowed to: who acted, what they did, and
/// from when until when (milliseconds), each left out to take every entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditFilter {
    pub actor: Option<String>,
    pub action: Option<String>,
    pub since: Option<i64>,
    pub until: Option<i64>,
}

/// Up to `limit` entries after `after`, oldest first, copies marked.
pub(super) fn entries_after(after: i64, limit: i64) -> Statement {
    Statement::new(format!("SELECT {ENTRY_COLUMNS}, {COPY_OF} FROM audit_entries WHERE seq > ?1 ORDER BY seq LIMIT ?2"))
        .bind(after)
        .bind(limit)
}

/// Up to `limit` entries from `seq` on, oldest first, copies marked.
pub(super) fn entries_from(seq: i64, limit: i64) -> Statement {
    Statement::new(format!(
        "SELECT {ENTRY_COLUMNS}, {COPY_OF} FROM audit_entries WHERE seq >= ?1 ORDER BY seq LIMIT ?2"
    ))
    .bind(seq)
    .bind(limit)
}

/// Up to `limit` entries from the latest checkpoint D1 records (from the
/// first entry without one), oldest first, copies marked.
pub(super) fn entries_from_recorded_checkpoint(limit: i64) -> Statement {
    Statement::new(format!(
        "SELECT {ENTRY_COLUMNS}, {COPY_OF} FROM audit_entries WHERE seq >= MAX(1, {RECORDED_SEQ}) \
         ORDER BY seq LIMIT ?1"
    ))
    .bind(limit)
}

/// `SELECT last_seq, head_seq, head_hash`: the last entry's `seq` and the last
/// sealed entry, if any.
pub(super) fn chain_ends() -> Statement {
    Statement::new(
        "SELECT (SELECT COALESCE(MAX(seq), 0) FROM audit_entries) AS last_seq, sealed.seq AS head_seq, \
                sealed.hash AS head_hash \
         FROM (SELECT 1) LEFT JOIN (SELECT seq, hash FROM audit_entries WHERE hash IS NOT NULL \
                                    ORDER BY seq DESC LIMIT 1) AS sealed",
    )
}

/// The last sealed entry, and up to `batch` entries waiting to be sealed
/// (copies marked): what a pass of the sealer reads.
pub(super) fn seal_work(batch: i64) -> [Statement; 2] {
    [
        Statement::new(format!(
            "SELECT {ENTRY_COLUMNS} FROM audit_entries WHERE hash IS NOT NULL ORDER BY seq DESC LIMIT 1"
        )),
        Statement::new(format!(
            "SELECT {ENTRY_COLUMNS}, {COPY_OF} FROM audit_entries WHERE hash IS NULL ORDER BY seq LIMIT {batch}"
        )),
    ]
}

/// The last accepted change of the witness.
pub(super) fn latest_witness_change() -> Statement {
    Statement::new(format!(
        "SELECT {ENTRY_COLUMNS} FROM audit_entries WHERE {WITNESS_CHANGES} AND outcome = 'ok' \
         ORDER BY seq DESC LIMIT 1"
    ))
}

/// The latest checkpoint D1 records, with whether its witness has it.
pub(super) fn latest_recorded_checkpoint() -> Statement {
    Statement::new(
        "SELECT number, seq, checkpoint, witnessed_at, witness_error FROM audit_checkpoints \
         ORDER BY number DESC LIMIT 1",
    )
}

/// The insert recording checkpoint `number` (at `seq`, `checkpoint` its JSON)
/// in D1. A second writer of the same number fails on the primary key.
pub(super) fn record_checkpoint(number: i64, seq: i64, checkpoint: String) -> Insert {
    Insert::into("audit_checkpoints").value("number", number).value("seq", seq).value("checkpoint", checkpoint)
}

/// `record_checkpoint`, unless D1 already holds that number.
pub(super) fn record_missing_checkpoint(number: i64, seq: i64, checkpoint: String) -> Insert {
    record_checkpoint(number, seq, checkpoint).then("ON CONFLICT (number) DO NOTHING")
}

/// Records how telling checkpoint `number`'s witness went.
pub(super) fn witness_told(number: i64, witnessed_at: Option<i64>, witness_error: Option<&str>) -> Statement {
    Statement::new("UPDATE audit_checkpoints SET witnessed_at = ?2, witness_error = ?3 WHERE number = ?1")
        .bind(number)
        .bind(witnessed_at)
        .bind(witness_error)
}

/// Which mailboxes' segments a read of anchors covers.
pub(super) enum SegmentsWanted<'a> {
    /// The `limit` checked longest ago (never checked first): the upkeep's turn.
    LongestUnchecked { limit: i64 },
    /// The `limit` after `after` in id order: a page of verification.
    After { after: &'a str, limit: i64 },
    /// The one mailbox `mailbox_id`: no row when there is no such mailbox.
    Only(&'a str),
}

/// Mailboxes, as `wanted`, each with the head the organisation's chain last
/// anchored for its segment (the detail of its latest `action` entry, or
/// NULL): what the upkeep anchors from and verification holds segments to.
/// The partial index `audit_entries_segment_anchors` (migration 0030) is on
/// exactly this condition, written as a literal so the planner can use it.
pub(super) fn segment_anchors(action: &'static str, wanted: SegmentsWanted<'_>) -> Statement {
    let (from, condition, order) = match wanted {
        SegmentsWanted::LongestUnchecked { .. } => (
            "mailboxes m LEFT JOIN audit_segment_checks c ON c.mailbox_id = m.id",
            "",
            "c.checked_at IS NOT NULL, c.checked_at, m.id LIMIT ?1",
        ),
        SegmentsWanted::After { .. } => ("mailboxes m", "WHERE m.id > ?1", "m.id LIMIT ?2"),
        SegmentsWanted::Only(_) => ("mailboxes m", "WHERE m.id = ?1", "m.id"),
    };
    let statement = Statement::new(format!(
        "SELECT m.id AS mailbox_id, \
                (SELECT a.detail FROM audit_entries a WHERE a.action = '{action}' AND a.object = m.id \
                 ORDER BY a.seq DESC LIMIT 1) AS anchored \
         FROM {from} {condition} ORDER BY {order}"
    ));
    match wanted {
        SegmentsWanted::LongestUnchecked { limit } => statement.bind(limit),
        SegmentsWanted::After { after, limit } => statement.bind(after).bind(limit),
        SegmentsWanted::Only(mailbox_id) => statement.bind(mailbox_id),
    }
}

/// Records that the upkeep checked `mailbox_id`'s segment at `at`.
pub(super) fn segment_checked(mailbox_id: &str, at: i64) -> Statement {
    Insert::into("audit_segment_checks")
        .value("mailbox_id", mailbox_id)
        .value("checked_at", at)
        .then("ON CONFLICT (mailbox_id) DO UPDATE SET checked_at = excluded.checked_at")
        .statement()
}
