//! The audit chain: one hashed row per changing call and per content read,
//! appended in the same batch as the change it records, and the routes that read
//! and verify it.
//!
//! `hash = SHA-256(domain tag ‖ prev_hash ‖ canonical JSON of the entry)`. The
//! canonical JSON has sorted keys and only the fields that are present, so a
//! column added later leaves every earlier hash valid. `seq` is contiguous and
//! UNIQUE: two writers that read the same head race, one batch fails on `seq`,
//! rolls back whole, and is retried by the dispatcher against the new head.

use std::collections::BTreeMap;

use mailroom_contract::api::{AuditEntry, AuditVerification, ChainHead};
use serde::Deserialize;
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use crate::core::context::ports::{self, AuditRecord, CommitError, Ledger};
use crate::core::crypto::hex;
use crate::core::ids::{IdKind, kind_of};
use crate::core::platform::{Platform, random_bytes};
use crate::core::storage::{Counted, LocalBoxFuture, QueryResult, Row, Statement, StorageError};
use crate::core::time::rfc3339;

/// The hash the first entry links to.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";
const DOMAIN_TAG: &[u8] = b"mailroom.audit-chain.v1\n";
/// How many entries one verify call recomputes: enough for a screenful of history
/// in one round trip, small enough to stay far inside a Worker's memory.
pub const VERIFY_PAGE: i64 = 5_000;

/// The kind of an actor, derived from its id's prefix and never passed alongside.
pub fn actor_kind(actor: Option<&str>) -> &'static str {
    match actor.and_then(kind_of) {
        Some(IdKind::Person) => "person",
        Some(IdKind::Agent) => "agent",
        Some(IdKind::Source) => "source",
        _ => "stranger",
    }
}

/// The fields of an entry as stored, which is exactly what is hashed.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct StoredEntry {
    pub(crate) seq: i64,
    at: i64,
    actor: Option<String>,
    actor_kind: String,
    delegator: Option<String>,
    surface: Option<String>,
    action: String,
    object: Option<String>,
    outcome: String,
    detail: Option<String>,
    prev_hash: String,
    hash: String,
}

/// The canonical JSON of an entry: sorted keys, absent fields left out.
fn canonical_json(entry: &StoredEntry) -> String {
    let mut fields: BTreeMap<&str, Json> = BTreeMap::new();
    fields.insert("seq", entry.seq.into());
    fields.insert("at", entry.at.into());
    fields.insert("actor_kind", entry.actor_kind.clone().into());
    fields.insert("action", entry.action.clone().into());
    fields.insert("outcome", entry.outcome.clone().into());
    let optional = [
        ("actor", &entry.actor),
        ("delegator", &entry.delegator),
        ("surface", &entry.surface),
        ("object", &entry.object),
        ("detail", &entry.detail),
    ];
    for (name, value) in optional {
        if let Some(value) = value {
            fields.insert(name, value.clone().into());
        }
    }
    serde_json::to_string(&fields).unwrap_or_default()
}

fn chain_hash(prev_hash: &str, canonical: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(DOMAIN_TAG);
    hasher.update(prev_hash.as_bytes());
    hasher.update(canonical.as_bytes());
    hex(&hasher.finalize())
}

/// How many times a commit that lost the race for the chain's next `seq` is
/// retried before the caller is told to try again.
const COMMIT_ATTEMPTS: u32 = 16;

/// Commits `statements` with `record` appended to the chain, in one batch: both
/// apply or neither does. When another writer took the next `seq` first, the head
/// is read again and the batch retried, after a short random wait. `head` is the
/// head already read, if any; on a `Storage` error it holds the head that attempt
/// used, which is still the head because the batch rolled back.
pub async fn commit(
    database: &Counted<'_>,
    platform: &dyn Platform,
    head: &mut Option<ports::ChainHead>,
    statements: Vec<Statement>,
    record: &AuditRecord,
) -> Result<(), CommitError> {
    for attempt in 0..COMMIT_ATTEMPTS {
        let (head_seq, head_hash) = match head.take() {
            Some(known) => known,
            None => {
                let results = database.execute(vec![self::head()]).await.map_err(CommitError::Storage)?;
                head_from(results.first().and_then(QueryResult::first)).map_err(CommitError::Storage)?
            }
        };
        let mut batch = statements.clone();
        batch.push(append(head_seq, &head_hash, record));
        match database.execute(batch).await {
            Ok(_) => return Ok(()),
            Err(StorageError::Unique(constraint)) if constraint == "audit_entries.seq" => {
                // Another writer took this `seq`; the whole batch rolled back.
                let ceiling = 5u32.saturating_mul(1 << attempt.min(8));
                let jitter: [u8; 2] = random_bytes(platform);
                platform.sleep(u32::from(u16::from_le_bytes(jitter)) % ceiling).await;
            }
            Err(error) => {
                *head = Some((head_seq, head_hash));
                return Err(CommitError::Storage(error));
            }
        }
    }
    Err(CommitError::Busy)
}

/// The statement reading the chain's head: its last `seq` and hash.
pub fn head() -> Statement {
    Statement::new("SELECT seq, hash FROM audit_entries ORDER BY seq DESC LIMIT 1")
}

/// The head from the result of `head()`: `(0, GENESIS_HASH)` for an empty chain.
pub fn head_from(row: Option<&Row>) -> Result<ports::ChainHead, StorageError> {
    match row {
        None => Ok((0, GENESIS_HASH.to_string())),
        Some(row) => Ok((row.integer("seq")?, row.text("hash")?)),
    }
}

/// The insert that appends `record` after `(head_seq, head_hash)`.
pub fn append(head_seq: i64, head_hash: &str, record: &AuditRecord) -> Statement {
    let entry = StoredEntry {
        seq: head_seq + 1,
        at: record.at,
        actor: record.actor.clone(),
        actor_kind: actor_kind(record.actor.as_deref()).to_string(),
        delegator: record.delegator.clone(),
        surface: record.surface.map(str::to_string),
        action: record.action.clone(),
        object: record.object.clone(),
        outcome: record.outcome.to_string(),
        detail: record.detail.clone(),
        prev_hash: head_hash.to_string(),
        hash: String::new(),
    };
    let hash = chain_hash(&entry.prev_hash, &canonical_json(&entry));
    Statement::new(
        "INSERT INTO audit_entries (seq, at, actor, actor_kind, delegator, surface, action, object, outcome, detail, prev_hash, hash) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )
    .bind(entry.seq)
    .bind(entry.at)
    .bind(entry.actor)
    .bind(entry.actor_kind)
    .bind(entry.delegator)
    .bind(entry.surface)
    .bind(entry.action)
    .bind(entry.object)
    .bind(entry.outcome)
    .bind(entry.detail)
    .bind(entry.prev_hash)
    .bind(hash)
}

pub(crate) const ENTRY_COLUMNS: &str =
    "seq, at, actor, actor_kind, delegator, surface, action, object, outcome, detail, prev_hash, hash";

/// An entry as the API shows it.
pub(crate) fn present(entry: StoredEntry) -> AuditEntry {
    AuditEntry {
        seq: entry.seq,
        at: rfc3339(entry.at),
        actor: entry.actor,
        actor_kind: entry.actor_kind,
        delegator: entry.delegator,
        surface: entry.surface,
        action: entry.action,
        object: entry.object,
        outcome: entry.outcome,
        detail: entry.detail.and_then(|text| serde_json::from_str(&text).ok()),
        prev_hash: entry.prev_hash,
        hash: entry.hash,
    }
}

/// The chain, as the core's unit of work commits through it.
pub struct AuditChain;

impl Ledger for AuditChain {
    fn head(&self) -> Statement {
        head()
    }

    fn head_from(&self, row: Option<&Row>) -> Result<ports::ChainHead, StorageError> {
        head_from(row)
    }

    fn commit<'a>(
        &'a self,
        database: &'a Counted<'a>,
        platform: &'a dyn Platform,
        head: &'a mut Option<ports::ChainHead>,
        statements: Vec<Statement>,
        record: &'a AuditRecord,
    ) -> LocalBoxFuture<'a, Result<(), CommitError>> {
        Box::pin(commit(database, platform, head, statements, record))
    }
}

/// Recomputes `entries`, which must be the rows after `after` in `seq` order.
pub(crate) fn verify(
    after: i64,
    anchor_hash: Option<String>,
    entries: &[StoredEntry],
    head: Option<ChainHead>,
) -> AuditVerification {
    let mut verification = AuditVerification {
        intact: true,
        checked: 0,
        first_bad_seq: None,
        problem: None,
        verified_through: None,
        next_after_seq: None,
        head,
    };
    let Some(mut previous_hash) = anchor_hash else {
        verification.intact = false;
        verification.first_bad_seq = Some(after);
        verification.problem = Some(format!("there is no entry {after} to continue from"));
        return verification;
    };
    let mut expected_seq = after + 1;
    for entry in entries {
        let problem = if entry.seq != expected_seq {
            Some((expected_seq, format!("entry {expected_seq} is missing: the chain jumps to {}", entry.seq)))
        } else if entry.prev_hash != previous_hash {
            Some((entry.seq, "it does not link to the entry before it".to_string()))
        } else if chain_hash(&entry.prev_hash, &canonical_json(entry)) != entry.hash {
            Some((entry.seq, "its contents do not match its hash: it was altered".to_string()))
        } else {
            None
        };
        if let Some((seq, problem)) = problem {
            verification.intact = false;
            verification.first_bad_seq = Some(seq);
            verification.problem = Some(problem);
            return verification;
        }
        verification.checked += 1;
        verification.verified_through = Some(entry.seq);
        previous_hash = entry.hash.clone();
        expected_seq += 1;
    }
    let head_seq = verification.head.as_ref().map_or(0, |head| head.seq);
    if verification.checked == VERIFY_PAGE && head_seq > expected_seq - 1 {
        verification.next_after_seq = Some(expected_seq - 1);
    }
    verification
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::storage::Value;

    fn record(action: &str) -> AuditRecord {
        AuditRecord {
            at: 1_000,
            actor: Some("usr_01J00000000000000000000000".into()),
            delegator: None,
            surface: Some("rest"),
            action: action.into(),
            object: None,
            outcome: "ok",
            detail: None,
        }
    }

    #[test]
    fn an_absent_field_is_left_out_of_the_hash() {
        let mut entry: StoredEntry = StoredEntry {
            seq: 1,
            at: 5,
            actor: None,
            actor_kind: "stranger".into(),
            delegator: None,
            surface: None,
            action: "sign_in".into(),
            object: None,
            outcome: "ok".into(),
            detail: None,
            prev_hash: GENESIS_HASH.into(),
            hash: String::new(),
        };
        assert_eq!(
            canonical_json(&entry),
            r#"{"action":"sign_in","actor_kind":"stranger","at":5,"outcome":"ok","seq":1}"#
        );
        entry.object = Some("usr_X".into());
        assert!(canonical_json(&entry).contains(r#""object":"usr_X""#));
    }

    #[test]
    fn the_actor_kind_comes_from_the_prefix() {
        assert_eq!(actor_kind(Some("usr_01J00000000000000000000000")), "person");
        assert_eq!(actor_kind(Some("agt_01J00000000000000000000000")), "agent");
        assert_eq!(actor_kind(Some("usr_nonsense")), "stranger");
        assert_eq!(actor_kind(None), "stranger");
    }

    #[test]
    fn appended_statements_link_to_the_head() {
        let statement = append(41, "abc", &record("grant_relation"));
        assert_eq!(statement.parameters[0], Value::Integer(42));
        assert_eq!(statement.parameters[10], "abc".into());
    }
}
