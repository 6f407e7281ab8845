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

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mailroom_contract::api::{AuditEntry, AuditPage, AuditVerification, ChainHead};
use serde::Deserialize;
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use crate::context::Context;
use crate::credentials::hex;
use crate::dispatch::RequestError;
use crate::http::Response;
use crate::ids::{IdKind, kind_of};
use crate::paging;
use crate::platform::{Platform, random_bytes};
use crate::refusal::Refusal;
use crate::storage::{Counted, QueryResult, Row, Statement, StorageError};
use crate::time::rfc3339;

/// The hash the first entry links to.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";
const DOMAIN_TAG: &[u8] = b"mailroom.audit-chain.v1\n";
/// How many entries one verify call recomputes: enough for a screenful of history
/// in one round trip, small enough to stay far inside a Worker's memory.
pub const VERIFY_PAGE: i64 = 5_000;

/// Why an audit route could not answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuditError {
    /// A query parameter was unusable.
    Request(RequestError),
}

/// What one audit row records, before it takes its place in the chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRecord {
    pub at: i64,
    pub actor: Option<String>,
    pub delegator: Option<String>,
    pub surface: Option<&'static str>,
    pub action: String,
    pub object: Option<String>,
    pub outcome: &'static str,
    /// Canonical JSON text of further facts.
    pub detail: Option<String>,
}

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
struct StoredEntry {
    seq: i64,
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

/// Why a commit with an audit row did not apply.
#[derive(Clone, Debug, PartialEq)]
pub enum CommitError {
    /// Every attempt lost the race for the next `seq`; nothing was applied.
    Busy,
    /// The batch failed for another reason (a guard, a constraint); nothing was
    /// applied, and the head the attempt used is still the head.
    Storage(StorageError),
}

/// Commits `statements` with `record` appended to the chain, in one batch: both
/// apply or neither does. When another writer took the next `seq` first, the head
/// is read again and the batch retried, after a short random wait. `head` is the
/// head already read, if any; on a `Storage` error it holds the head that attempt
/// used, which is still the head because the batch rolled back.
pub async fn commit(
    database: &Counted<'_>,
    platform: &dyn Platform,
    head: &mut Option<(i64, String)>,
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
pub fn head_from(row: Option<&Row>) -> Result<(i64, String), StorageError> {
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

const ENTRY_COLUMNS: &str =
    "seq, at, actor, actor_kind, delegator, surface, action, object, outcome, detail, prev_hash, hash";

fn present(entry: StoredEntry) -> AuditEntry {
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

fn encode_cursor(seq: i64) -> String {
    URL_SAFE_NO_PAD.encode(format!("audit-before:{seq}"))
}

fn decode_cursor(cursor: &str) -> Option<i64> {
    let text = String::from_utf8(URL_SAFE_NO_PAD.decode(cursor).ok()?).ok()?;
    text.strip_prefix("audit-before:")?.parse().ok().filter(|seq| *seq > 0)
}

/// `GET /api/audit`: entries newest first, a page at a time.
pub async fn list_entries(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let limit = paging::limit(context)?;
    let before = match context.query("cursor") {
        None => i64::MAX,
        Some(cursor) => decode_cursor(cursor).ok_or(AuditError::Request(RequestError::InvalidQueryParameter {
            name: "cursor".into(),
            expected: "the `next_cursor` of a previous page, unchanged".into(),
        }))?,
    };
    let statement =
        Statement::new(format!("SELECT {ENTRY_COLUMNS} FROM audit_entries WHERE seq < ?1 ORDER BY seq DESC LIMIT ?2"))
            .bind(before)
            .bind(limit + 1);
    let [page] = context.read_array([statement]).await?;
    let mut entries: Vec<StoredEntry> = page.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = if entries.len() as i64 > limit {
        entries.truncate(limit as usize);
        entries.last().map(|entry| encode_cursor(entry.seq))
    } else {
        None
    };
    let entries = entries.into_iter().map(present).collect();
    Ok(context.json(&AuditPage { entries, next_cursor }))
}

/// `GET /api/audit/verify`: recomputes up to `VERIFY_PAGE` entries after `after_seq`.
pub async fn verify_chain(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let after = match context.query("after_seq") {
        None => 0,
        Some(text) => text.parse::<i64>().ok().filter(|seq| *seq >= 0).ok_or(AuditError::Request(
            RequestError::InvalidQueryParameter {
                name: "after_seq".into(),
                expected: "a whole number, 0 or more".into(),
            },
        ))?,
    };
    let anchor = Statement::new("SELECT hash FROM audit_entries WHERE seq = ?1").bind(after);
    let page =
        Statement::new(format!("SELECT {ENTRY_COLUMNS} FROM audit_entries WHERE seq > ?1 ORDER BY seq LIMIT ?2"))
            .bind(after)
            .bind(VERIFY_PAGE);
    let [anchor, page, head_row] = context.read_array([anchor, page, head()]).await?;
    let anchor_hash = match (after, anchor.first()) {
        (0, _) => Some(GENESIS_HASH.to_string()),
        (_, Some(row)) => Some(row.text("hash").map_err(|error| context.internal(error))?),
        (_, None) => None,
    };
    let entries: Vec<StoredEntry> = page.decode_all().map_err(|error| context.internal(error))?;
    let (head_seq, head_hash) = head_from(head_row.first()).map_err(|error| context.internal(error))?;
    let head = (head_seq > 0).then(|| ChainHead { seq: head_seq, hash: head_hash });
    Ok(context.json(&verify(after, anchor_hash, &entries, head)))
}

/// Recomputes `entries`, which must be the rows after `after` in `seq` order.
fn verify(
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
    use crate::storage::Value;

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

    #[test]
    fn cursors_round_trip_and_refuse_tampering() {
        assert_eq!(decode_cursor(&encode_cursor(17)), Some(17));
        assert_eq!(decode_cursor("not a cursor"), None);
        assert_eq!(decode_cursor(&URL_SAFE_NO_PAD.encode("audit-before:-3")), None);
    }
}
