//! Checkpoints of the chain's head, and the two records of them that must agree
//! (decision 0027).
//!
//! A checkpoint names the head (its `seq` and hash), its `number` (one more than
//! the checkpoint before it), the witness in force, and when it was written,
//! signed with the audit key. Each is kept twice: a row of `audit_checkpoints`
//! in D1 and an object in R2 (`audit/checkpoints/latest.json`, and a copy under
//! its head's `seq`). Whoever can change only one store cannot roll the count
//! back: `reconcile` compares the two latest, and takes the newer as what the
//! chain must reach. One store may be one checkpoint behind the other for a
//! moment, since D1 is written first (its primary key settles which of two
//! racing writers owns a number) and R2 after; the upkeep completes it. Anything
//! else is a fault: a signature that does not verify, two checkpoints under one
//! number, or one store further behind.
//!
//! Checkpoints written before they were numbered carry no `number` and are
//! signed as they were (`CHECKPOINT_TAG_VERSION_1`); one such in R2 with no row
//! in D1 is where a node upgraded to numbering starts.

use mailroom_contract::api::{AuditCheckpoint, ChainFault, ChainHead};

use crate::audit::chain::{keyed, same};
use crate::audit::walk::Failure;
use crate::core::bindings::BlobError;
use crate::core::delivery::Undelivered;
use crate::core::node::{AuditKey, Config, Node};
use crate::core::storage::{QueryResult, Statement, StorageError};
use crate::core::time::rfc3339;

use super::store;

/// The tag of a checkpoint's signature before checkpoints were numbered.
const CHECKPOINT_TAG_VERSION_1: &[u8] = b"mailroom.audit-checkpoint.v1\n";
/// The tag of a numbered checkpoint's signature, which covers its witness too.
const CHECKPOINT_TAG_VERSION_2: &[u8] = b"mailroom.audit-checkpoint.v2\n";
/// Where the latest checkpoint is kept in the object store; each one is also
/// kept under its own `seq`.
pub const LATEST_CHECKPOINT_KEY: &str = "audit/checkpoints/latest.json";

/// Checkpoint `number` of `head`, with the witness in force, written at
/// `now_ms` and signed with the audit key.
pub fn checkpoint(
    config: &Config,
    number: i64,
    head: &ChainHead,
    witness: Option<String>,
    now_ms: i64,
) -> AuditCheckpoint {
    let mut checkpoint = AuditCheckpoint {
        number: Some(number),
        seq: head.seq,
        hash: head.hash.clone(),
        at: rfc3339(now_ms),
        key_id: config.audit_key.id.clone(),
        witness,
        signature: String::new(),
    };
    checkpoint.signature = signature(&config.audit_key, &checkpoint);
    checkpoint
}

fn signature(key: &AuditKey, checkpoint: &AuditCheckpoint) -> String {
    let AuditCheckpoint { number, seq, hash, at, witness, .. } = checkpoint;
    match number {
        None => {
            let canonical = serde_json::json!({ "at": at, "hash": hash, "key_id": key.id, "seq": seq }).to_string();
            keyed(key, &[CHECKPOINT_TAG_VERSION_1, canonical.as_bytes()])
        }
        Some(number) => {
            let canonical = serde_json::json!({
                "at": at, "hash": hash, "key_id": key.id, "number": number, "seq": seq, "witness": witness,
            })
            .to_string();
            keyed(key, &[CHECKPOINT_TAG_VERSION_2, canonical.as_bytes()])
        }
    }
}

/// Whether a checkpoint read back from either store was signed by a key this
/// node holds.
pub fn checkpoint_is_genuine(config: &Config, checkpoint: &AuditCheckpoint) -> bool {
    config
        .audit_key_named(&checkpoint.key_id)
        .is_some_and(|key| same(&checkpoint.signature, &signature(key, checkpoint)))
}

/// The object-store key a checkpoint of `seq` is kept under, beside the latest.
pub fn checkpoint_key(seq: i64) -> String {
    format!("audit/checkpoints/{seq:012}.json")
}

/// Writes `checkpoint` to the object store, as the latest and under its own `seq`.
pub async fn keep_in_object_store(node: &Node<'_>, checkpoint: &AuditCheckpoint) -> Result<(), BlobError> {
    let bytes = serde_json::to_vec(checkpoint).map_err(|error| BlobError(error.to_string()))?;
    node.blobs.put(&checkpoint_key(checkpoint.seq), &bytes).await?;
    node.blobs.put(LATEST_CHECKPOINT_KEY, &bytes).await
}

/// The latest checkpoint in the object store. One that does not parse is
/// answered as it is, unsigned, so it fails as not genuine rather than passing
/// for none.
pub async fn latest_checkpoint(node: &Node<'_>) -> Result<Option<AuditCheckpoint>, BlobError> {
    let bytes = node.blobs.get(LATEST_CHECKPOINT_KEY).await?;
    Ok(bytes.map(|bytes| parsed_or_unsigned(&String::from_utf8_lossy(&bytes))))
}

fn parsed_or_unsigned(text: &str) -> AuditCheckpoint {
    serde_json::from_str(text).unwrap_or_else(|_| AuditCheckpoint {
        number: None,
        seq: 0,
        hash: String::new(),
        at: String::new(),
        key_id: String::new(),
        witness: None,
        signature: String::new(),
    })
}

/// The latest checkpoint D1 records, with whether its witness has it.
pub(crate) fn latest_recorded() -> Statement {
    store::latest_recorded_checkpoint()
}

/// A checkpoint's number and its JSON, as D1 records them.
fn checkpoint_row(checkpoint: &AuditCheckpoint) -> (i64, String) {
    (checkpoint.number.unwrap_or_default(), serde_json::to_string(checkpoint).unwrap_or_default())
}

/// The insert recording `checkpoint` in D1. A second writer of the same
/// number fails on the primary key (`audit_checkpoints.number`).
pub(crate) fn record(checkpoint: &AuditCheckpoint) -> Statement {
    let (number, json) = checkpoint_row(checkpoint);
    store::record_checkpoint(number, checkpoint.seq, json).statement()
}

/// `record`, unless D1 already holds that number: completing a checkpoint
/// whose D1 row a failure (or a deletion) left missing.
pub(crate) fn record_missing(checkpoint: &AuditCheckpoint) -> Statement {
    let (number, json) = checkpoint_row(checkpoint);
    store::record_missing_checkpoint(number, checkpoint.seq, json).statement()
}

/// The update recording how telling checkpoint `number`'s witness went.
pub(crate) fn witness_told(number: i64, outcome: &Result<(), Undelivered>, now_ms: i64) -> Statement {
    let failure = outcome.as_ref().err().map(Undelivered::to_string);
    store::witness_told(number, outcome.is_ok().then_some(now_ms), failure.as_deref())
}

/// The latest checkpoint D1 records, as `latest_recorded` read it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Recorded {
    pub checkpoint: Option<AuditCheckpoint>,
    /// When its witness took it.
    pub witnessed_at: Option<i64>,
    pub witness_error: Option<String>,
}

impl Recorded {
    pub fn read(result: &QueryResult) -> Result<Recorded, StorageError> {
        let Some(row) = result.first() else {
            return Ok(Recorded::default());
        };
        let mut checkpoint = parsed_or_unsigned(&row.text("checkpoint")?);
        // The row's own number is what orders it; a JSON that says another was
        // moved there, and is not what was signed under this number.
        if checkpoint.number != Some(row.integer("number")?) {
            checkpoint.signature.clear();
        }
        Ok(Recorded {
            checkpoint: Some(checkpoint),
            witnessed_at: row.optional_integer("witnessed_at")?,
            witness_error: row.optional_text("witness_error")?,
        })
    }
}

/// Which store holds the newer of the two latest checkpoints, one apart: a
/// checkpoint whose second record is still to be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lagging {
    Database,
    ObjectStore,
}

/// What the two records agree on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Agreed {
    /// The checkpoint the chain must reach: the newer of the two.
    pub reference: Option<AuditCheckpoint>,
    /// The number the next checkpoint takes.
    pub next_number: i64,
    /// The store one checkpoint behind, to complete.
    pub lagging: Option<Lagging>,
}

/// Compares the latest checkpoint D1 records with the object store's.
pub(crate) fn reconcile(
    config: &Config,
    database: Option<&AuditCheckpoint>,
    object_store: Option<&AuditCheckpoint>,
) -> Result<Agreed, Failure> {
    for (checkpoint, place) in [(database, "D1"), (object_store, "the object store")] {
        if let Some(checkpoint) = checkpoint.filter(|checkpoint| !checkpoint_is_genuine(config, checkpoint)) {
            return Err(Failure {
                seq: Some(checkpoint.seq),
                fault: ChainFault::CheckpointSignature,
                problem: format!(
                    "the latest checkpoint's signature in {place} does not verify: it was not written by this node"
                ),
                about: format!("{place}-{}", checkpoint.signature),
            });
        }
    }
    let agreed = |reference: Option<&AuditCheckpoint>, lagging| Agreed {
        next_number: reference.and_then(|reference| reference.number).unwrap_or(0) + 1,
        reference: reference.cloned(),
        lagging,
    };
    let database_number = database.and_then(|checkpoint| checkpoint.number);
    let object_store_number = object_store.and_then(|checkpoint| checkpoint.number);
    let fault = |fault: ChainFault, problem: String, seq: Option<i64>| {
        Err(Failure {
            seq,
            fault,
            problem,
            about: format!("d1-{}:r2-{}", database_number.unwrap_or(0), object_store_number.unwrap_or(0)),
        })
    };
    match (database, object_store) {
        (None, None) => Ok(agreed(None, None)),
        // From before checkpoints were numbered and recorded in D1.
        (None, Some(unnumbered)) if unnumbered.number.is_none() => Ok(agreed(Some(unnumbered), None)),
        (None, Some(first)) if first.number == Some(1) => Ok(agreed(Some(first), Some(Lagging::Database))),
        (None, Some(kept)) => fault(
            ChainFault::RolledBackAgainstR2,
            format!(
                "D1 records no checkpoint, but the object store holds checkpoint {} (entry {}): D1's record was \
                 rolled back",
                kept.number.unwrap_or_default(),
                kept.seq
            ),
            Some(kept.seq),
        ),
        (Some(recorded), None) => fault(
            ChainFault::RolledBackAgainstD1,
            format!(
                "the object store holds no checkpoint, but D1 records checkpoint {} (entry {}): the object store's \
                 checkpoints were deleted",
                database_number.unwrap_or_default(),
                recorded.seq
            ),
            Some(recorded.seq),
        ),
        (Some(recorded), Some(kept)) => {
            let (Some(in_database), Some(in_object_store)) = (database_number, object_store_number) else {
                return fault(
                    ChainFault::RolledBackAgainstD1,
                    format!(
                        "the object store holds a checkpoint from before they were numbered, but D1 records \
                         checkpoint {}: the object store's was rolled back",
                        database_number.unwrap_or_default()
                    ),
                    Some(recorded.seq),
                );
            };
            let (newer, older, lagging) = if in_database >= in_object_store {
                (recorded, kept, Lagging::ObjectStore)
            } else {
                (kept, recorded, Lagging::Database)
            };
            if newer.seq < older.seq {
                return fault(
                    ChainFault::CheckpointDisagreement,
                    format!(
                        "checkpoint {} records entry {}, before entry {} that checkpoint {} recorded",
                        newer.number.unwrap_or_default(),
                        newer.seq,
                        older.seq,
                        older.number.unwrap_or_default()
                    ),
                    Some(newer.seq),
                );
            }
            match in_database - in_object_store {
                0 if recorded == kept => Ok(agreed(Some(recorded), None)),
                0 => fault(
                    ChainFault::CheckpointDisagreement,
                    format!("D1 and the object store hold different checkpoints numbered {in_database}"),
                    Some(recorded.seq.min(kept.seq)),
                ),
                1 | -1 => Ok(agreed(Some(newer), Some(lagging))),
                behind if behind < 0 => fault(
                    ChainFault::RolledBackAgainstR2,
                    format!(
                        "D1's latest checkpoint is {in_database}, {} behind the object store's {in_object_store} \
                         (entry {}): D1's record was rolled back",
                        -behind, kept.seq
                    ),
                    Some(kept.seq),
                ),
                behind => fault(
                    ChainFault::RolledBackAgainstD1,
                    format!(
                        "the object store's latest checkpoint is {in_object_store}, {behind} behind D1's \
                         {in_database} (entry {}): the object store's checkpoints were rolled back",
                        recorded.seq
                    ),
                    Some(recorded.seq),
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        Config::new(b"session".to_vec(), b"an audit key for tests only".to_vec(), None)
    }

    fn numbered(config: &Config, number: i64, seq: i64) -> AuditCheckpoint {
        checkpoint(config, number, &ChainHead { seq, hash: format!("{seq:064}") }, None, 1_000)
    }

    #[test]
    fn a_checkpoint_verifies_under_its_key_and_no_other() {
        let config = config();
        let head = ChainHead { seq: 7, hash: "ab".repeat(32) };
        let mut kept = checkpoint(&config, 1, &head, None, 1_000);
        assert!(checkpoint_is_genuine(&config, &kept));
        kept.seq = 6;
        assert!(!checkpoint_is_genuine(&config, &kept), "an altered checkpoint");
        let another_node = Config::new(b"s".to_vec(), b"not this node's key".to_vec(), None);
        let forged = checkpoint(&another_node, 1, &head, None, 1_000);
        assert!(!checkpoint_is_genuine(&config, &forged), "another node's checkpoint");
        let mut renumbered = checkpoint(&config, 4, &head, None, 1_000);
        renumbered.number = Some(9);
        assert!(!checkpoint_is_genuine(&config, &renumbered), "the number is signed");
        let mut unnumbered = checkpoint(&config, 4, &head, None, 1_000);
        unnumbered.number = None;
        assert!(!checkpoint_is_genuine(&config, &unnumbered), "a numbered checkpoint cannot pass for an older one");
        let mut redirected = checkpoint(&config, 4, &head, Some("https://auditor.example/hook".into()), 1_000);
        redirected.witness = Some("https://elsewhere.example/hook".into());
        assert!(!checkpoint_is_genuine(&config, &redirected), "the witness is signed");
    }

    #[test]
    fn the_two_records_agree_or_say_which_was_rolled_back() {
        let config = config();
        let check =
            |database: Option<(i64, i64)>, object_store: Option<(i64, i64)>, expected: Result<i64, ChainFault>| {
                let database = database.map(|(number, seq)| numbered(&config, number, seq));
                let object_store = object_store.map(|(number, seq)| numbered(&config, number, seq));
                let found = reconcile(&config, database.as_ref(), object_store.as_ref())
                    .map(|agreed| agreed.reference.and_then(|reference| reference.number).unwrap_or(0))
                    .map_err(|failure| failure.fault);
                assert_eq!(found, expected, "D1 {database:?}, R2 {object_store:?}");
            };
        check(None, None, Ok(0));
        check(Some((3, 30)), Some((3, 30)), Ok(3));
        check(Some((4, 40)), Some((3, 30)), Ok(4));
        check(Some((3, 30)), Some((4, 40)), Ok(4));
        check(None, Some((1, 10)), Ok(1));
        check(Some((5, 50)), Some((3, 30)), Err(ChainFault::RolledBackAgainstD1));
        check(Some((5, 50)), None, Err(ChainFault::RolledBackAgainstD1));
        check(Some((2, 20)), Some((5, 50)), Err(ChainFault::RolledBackAgainstR2));
        check(None, Some((2, 20)), Err(ChainFault::RolledBackAgainstR2));
        check(Some((3, 30)), Some((3, 31)), Err(ChainFault::CheckpointDisagreement));
        check(Some((4, 20)), Some((3, 30)), Err(ChainFault::CheckpointDisagreement));
    }
}
