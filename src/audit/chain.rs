//! The audit chain: one row per changing call and per content read, written in
//! the same batch as the change it records, keyed with a secret the database
//! does not hold, sealed into a hash chain a moment later, and checkpointed
//! outside the database (decision 0015).
//!
//! Writing. An entry's `seq` is assigned by the database inside the change's own
//! transaction (one more than the last), so concurrent writers never race for it
//! and never retry. It carries `mac`, an HMAC of its own fields under the audit
//! key (`key_id` names which), so nobody without the key can add or alter one.
//!
//! Sealing. `seal` links the entries written since the last sealed one, in `seq`
//! order: `hash = HMAC(key, tag ‖ prev_hash ‖ canonical JSON of the entry)`, the
//! canonical JSON having sorted keys and only the fields that are present (so a
//! column added later leaves every earlier hash valid). Sealing is deterministic:
//! two sealers racing compute the same hashes, and an update only fills a hash
//! still empty. The adapter seals after every answer that appended, and the
//! scheduled maintenance seals whatever is left. An entry whose MAC does not
//! verify, or a gap in `seq`, stops the sealer there: it is never sealed in.
//!
//! Entries written before the chain was keyed have no `key_id` and no `mac`, and
//! keep their unkeyed SHA-256 hash; verification accepts them only before the
//! first keyed entry. A checkpoint of the head, signed with the key and kept in
//! the object store, is what finds a truncated tail or a history rewritten from
//! the start.

use std::collections::BTreeMap;

use hmac::{Hmac, KeyInit, Mac};
use mailroom_contract::api::{AuditCheckpoint, AuditEntry, AuditVerification, ChainHead};
use serde::Deserialize;
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use crate::core::context::ports::{AuditRecord, Ledger};
use crate::core::crypto::{constant_time_equal, hex};
use crate::core::ids::{IdKind, kind_of};
use crate::core::node::{AuditKey, Config, Node};
use crate::core::storage::{Database, QueryResult, Row, Statement, StorageError};
use crate::core::time::{MINUTE_MS, rfc3339};

/// The hash the first entry links to.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";
/// The tag of the unkeyed chain every entry was hashed with before the chain was keyed.
const LEGACY_CHAIN_TAG: &[u8] = b"mailroom.audit-chain.v1\n";
/// The tag of an entry's own MAC, written with it.
const ENTRY_TAG: &[u8] = b"mailroom.audit-entry.v2\n";
/// The tag of the keyed chain's links, made when an entry is sealed.
const CHAIN_TAG: &[u8] = b"mailroom.audit-chain.v2\n";
/// The tag of a checkpoint's signature.
const CHECKPOINT_TAG: &[u8] = b"mailroom.audit-checkpoint.v1\n";
/// How many entries one verify call recomputes: enough for a screenful of history
/// in one round trip, small enough to stay far inside a Worker's memory.
pub const VERIFY_PAGE: i64 = 5_000;
/// How many entries one pass of the sealer reads and seals.
pub const SEAL_BATCH: i64 = 256;
/// The window refused attempts without a proven credential are counted in
/// before they are folded into the chain as one entry.
pub const ATTEMPT_WINDOW_MS: i64 = 15 * MINUTE_MS;
/// Where the latest checkpoint is kept in the object store; each one is also
/// kept under its own `seq`.
pub const LATEST_CHECKPOINT_KEY: &str = "audit/checkpoints/latest.json";

/// The kind of an actor, derived from its id's prefix and never passed alongside.
pub fn actor_kind(actor: Option<&str>) -> &'static str {
    match actor.and_then(kind_of) {
        Some(IdKind::Person) => "person",
        Some(IdKind::Agent) => "agent",
        Some(IdKind::Source) => "source",
        Some(IdKind::Butler) => "butler",
        _ => "stranger",
    }
}

/// The columns of an entry as stored.
pub(crate) const ENTRY_COLUMNS: &str =
    "seq, at, actor, actor_kind, delegator, surface, action, object, outcome, detail, key_id, mac, prev_hash, hash";

/// An entry as stored: exactly what is hashed, and its links once sealed.
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
    key_id: Option<String>,
    mac: Option<String>,
    prev_hash: Option<String>,
    hash: Option<String>,
}

impl StoredEntry {
    /// The entry's canonical JSON: sorted keys, absent fields left out. Its own
    /// fields only (for its MAC), or with its place and MAC too (for its link).
    fn canonical_json(&self, with_place: bool) -> String {
        let mut fields: BTreeMap<&str, Json> = BTreeMap::new();
        fields.insert("at", self.at.into());
        fields.insert("actor_kind", self.actor_kind.clone().into());
        fields.insert("action", self.action.clone().into());
        fields.insert("outcome", self.outcome.clone().into());
        let mut optional = vec![
            ("actor", &self.actor),
            ("delegator", &self.delegator),
            ("surface", &self.surface),
            ("object", &self.object),
            ("detail", &self.detail),
            ("key_id", &self.key_id),
        ];
        if with_place {
            fields.insert("seq", self.seq.into());
            optional.push(("mac", &self.mac));
        }
        for (name, value) in optional {
            if let Some(value) = value {
                fields.insert(name, value.clone().into());
            }
        }
        serde_json::to_string(&fields).unwrap_or_default()
    }

    /// The entry's own MAC under `key`: what it is written with.
    fn own_mac(&self, key: &AuditKey) -> String {
        keyed(key, &[ENTRY_TAG, self.canonical_json(false).as_bytes()])
    }

    /// The link this entry makes after `prev_hash`: keyed under its own key, or
    /// the unkeyed hash an entry from before the chain was keyed was written with.
    fn link(&self, prev_hash: &str, key: Option<&AuditKey>) -> String {
        let canonical = self.canonical_json(true);
        match key {
            Some(key) => keyed(key, &[CHAIN_TAG, prev_hash.as_bytes(), canonical.as_bytes()]),
            None => {
                let mut hasher = Sha256::new();
                hasher.update(LEGACY_CHAIN_TAG);
                hasher.update(prev_hash.as_bytes());
                hasher.update(canonical.as_bytes());
                hex(&hasher.finalize())
            }
        }
    }

    /// The entry as the API shows it.
    pub(crate) fn present(self) -> AuditEntry {
        AuditEntry {
            seq: self.seq,
            at: rfc3339(self.at),
            actor: self.actor,
            actor_kind: self.actor_kind,
            delegator: self.delegator,
            surface: self.surface,
            action: self.action,
            object: self.object,
            outcome: self.outcome,
            detail: self.detail.and_then(|text| serde_json::from_str(&text).ok()),
            key_id: self.key_id,
            prev_hash: self.prev_hash,
            hash: self.hash,
        }
    }
}

/// HMAC-SHA256 of `parts` under `key`, as hex.
fn keyed(key: &AuditKey, parts: &[&[u8]]) -> String {
    // HMAC takes a key of any length, so this cannot fail.
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&key.secret)
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    for part in parts {
        mac.update(part);
    }
    hex(&mac.finalize().into_bytes())
}

fn same(left: &str, right: &str) -> bool {
    constant_time_equal(left.as_bytes(), right.as_bytes())
}

/// The chain, as the core's unit of work writes to it: entries under the
/// configured key.
pub struct AuditChain<'config> {
    key: &'config AuditKey,
}

impl<'config> AuditChain<'config> {
    pub fn new(config: &'config Config) -> AuditChain<'config> {
        AuditChain { key: &config.audit_key }
    }
}

impl Ledger for AuditChain<'_> {
    fn append(&self, record: &AuditRecord) -> Statement {
        append(self.key, record)
    }

    fn count_attempt(&self, record: &AuditRecord) -> Statement {
        count_attempt(record)
    }
}

/// The entry `record` describes, before the database gives it its place.
fn unplaced(key: &AuditKey, record: &AuditRecord) -> StoredEntry {
    let mut entry = StoredEntry {
        seq: 0,
        at: record.at,
        actor: record.actor.clone(),
        actor_kind: actor_kind(record.actor.as_deref()).to_string(),
        delegator: record.delegator.clone(),
        surface: record.surface.map(str::to_string),
        action: record.action.clone(),
        object: record.object.clone(),
        outcome: record.outcome.to_string(),
        detail: record.detail.clone(),
        key_id: Some(key.id.clone()),
        mac: None,
        prev_hash: None,
        hash: None,
    };
    entry.mac = Some(entry.own_mac(key));
    entry
}

/// The insert that appends `record` to the chain, its `seq` one more than the
/// last, assigned inside the batch it travels in. It is sealed later.
pub fn append(key: &AuditKey, record: &AuditRecord) -> Statement {
    let entry = unplaced(key, record);
    Statement::new(
        "INSERT INTO audit_entries (seq, at, actor, actor_kind, delegator, surface, action, object, outcome, detail, key_id, mac) \
         SELECT COALESCE(MAX(seq), 0) + 1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11 FROM audit_entries",
    )
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
}

/// The upsert that counts a refused attempt in its window.
pub fn count_attempt(record: &AuditRecord) -> Statement {
    let code = record
        .detail
        .as_deref()
        .and_then(|detail| serde_json::from_str::<Json>(detail).ok())
        .and_then(|detail| detail.get("code").and_then(Json::as_str).map(str::to_string))
        .unwrap_or_default();
    let window_start = record.at - record.at.rem_euclid(ATTEMPT_WINDOW_MS);
    Statement::new(
        "INSERT INTO audit_attempts (window_start, action, code, attempts, first_at, last_at) \
         VALUES (?1, ?2, ?3, 1, ?4, ?4) \
         ON CONFLICT (window_start, action, code) DO UPDATE SET attempts = attempts + 1, last_at = ?4",
    )
    .bind(window_start)
    .bind(record.action.as_str())
    .bind(code)
    .bind(record.at)
}

/// The statements reading what the sealer needs: the last sealed entry, and the
/// entries after it still waiting for their seal.
fn seal_work() -> [Statement; 2] {
    [
        Statement::new("SELECT seq, hash FROM audit_entries WHERE hash IS NOT NULL ORDER BY seq DESC LIMIT 1"),
        Statement::new(format!(
            "SELECT {ENTRY_COLUMNS} FROM audit_entries WHERE hash IS NULL ORDER BY seq LIMIT {SEAL_BATCH}"
        )),
    ]
}

/// What a pass of the sealer did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sealing {
    /// The last sealed entry after the pass, if any.
    pub head: Option<ChainHead>,
    /// How many entries the pass sealed.
    pub sealed: usize,
    /// Why the pass stopped before the end of the waiting entries, if it did.
    pub stopped: Option<String>,
    /// Whether more entries may be waiting after the pass's batch.
    pub more: bool,
}

/// The seals for `waiting`, linked after `last_sealed`: the updates to queue,
/// and what the pass did. Pure: a route can queue the updates with its own
/// commit, and `seal` sends them on their own.
pub(crate) fn seals(
    config: &Config,
    last_sealed: &QueryResult,
    waiting: &QueryResult,
) -> Result<(Vec<Statement>, Sealing), StorageError> {
    let mut head = match last_sealed.first() {
        Some(row) => Some(ChainHead { seq: row.integer("seq")?, hash: row.text("hash")? }),
        None => None,
    };
    let entries: Vec<StoredEntry> = waiting.decode_all()?;
    let mut updates = Vec::new();
    let mut stopped = None;
    for entry in &entries {
        let (previous_seq, previous_hash) =
            head.as_ref().map_or((0, GENESIS_HASH.to_string()), |head| (head.seq, head.hash.clone()));
        if entry.seq != previous_seq + 1 {
            stopped = Some(format!("entry {} is missing: the chain jumps to {}", previous_seq + 1, entry.seq));
            break;
        }
        let key = match entry.key_id.as_deref() {
            Some(id) => config.audit_key_named(id),
            None => None,
        };
        let Some(key) = key else {
            stopped = Some(format!("entry {} was not written with a key this node holds", entry.seq));
            break;
        };
        if !entry.mac.as_deref().is_some_and(|mac| same(mac, &entry.own_mac(key))) {
            stopped = Some(format!("entry {} does not match its MAC: it was altered or forged", entry.seq));
            break;
        }
        let hash = entry.link(&previous_hash, Some(key));
        updates.push(
            Statement::new("UPDATE audit_entries SET prev_hash = ?2, hash = ?3 WHERE seq = ?1 AND hash IS NULL")
                .bind(entry.seq)
                .bind(previous_hash)
                .bind(hash.as_str()),
        );
        head = Some(ChainHead { seq: entry.seq, hash });
    }
    let more = stopped.is_none() && entries.len() as i64 == SEAL_BATCH;
    let sealed = updates.len();
    Ok((updates, Sealing { head, sealed, stopped, more }))
}

/// One pass of the sealer over `database`: reads the waiting entries (one round
/// trip) and seals those that verify (one more, when there are any).
pub async fn seal(database: &dyn Database, config: &Config) -> Result<Sealing, StorageError> {
    let [last_sealed, waiting]: [QueryResult; 2] = database
        .execute(seal_work().into())
        .await?
        .try_into()
        .map_err(|_| StorageError::Backend("the sealer's read answered the wrong number of results".into()))?;
    let (updates, sealing) = seals(config, &last_sealed, &waiting)?;
    if !updates.is_empty() {
        database.execute(updates).await?;
    }
    Ok(sealing)
}

/// The statements a route reads to seal the chain within its own commit.
pub(crate) fn seal_reads() -> [Statement; 2] {
    seal_work()
}

/// A checkpoint of `head`, written at `now_ms` and signed with the audit key.
pub fn checkpoint(config: &Config, head: &ChainHead, now_ms: i64) -> AuditCheckpoint {
    let at = rfc3339(now_ms);
    let signature = checkpoint_signature(&config.audit_key, head.seq, &head.hash, &at);
    AuditCheckpoint { seq: head.seq, hash: head.hash.clone(), at, key_id: config.audit_key.id.clone(), signature }
}

fn checkpoint_signature(key: &AuditKey, seq: i64, hash: &str, at: &str) -> String {
    let canonical = serde_json::json!({ "at": at, "hash": hash, "key_id": key.id, "seq": seq }).to_string();
    keyed(key, &[CHECKPOINT_TAG, canonical.as_bytes()])
}

/// Whether a checkpoint read back from the object store was signed by a key
/// this node holds.
pub fn checkpoint_is_genuine(config: &Config, checkpoint: &AuditCheckpoint) -> bool {
    config.audit_key_named(&checkpoint.key_id).is_some_and(|key| {
        same(&checkpoint.signature, &checkpoint_signature(key, checkpoint.seq, &checkpoint.hash, &checkpoint.at))
    })
}

/// The object-store key a checkpoint of `seq` is kept under, beside the latest.
pub fn checkpoint_key(seq: i64) -> String {
    format!("audit/checkpoints/{seq:012}.json")
}

/// Writes `checkpoint` to the object store, as the latest and under its own `seq`.
pub async fn keep_checkpoint(node: &Node<'_>, checkpoint: &AuditCheckpoint) -> Result<(), String> {
    let bytes = serde_json::to_vec(checkpoint).map_err(|error| error.to_string())?;
    node.blobs.put(&checkpoint_key(checkpoint.seq), &bytes).await.map_err(|error| error.0)?;
    node.blobs.put(LATEST_CHECKPOINT_KEY, &bytes).await.map_err(|error| error.0)
}

/// The latest checkpoint in the object store, if there is one that parses.
pub async fn latest_checkpoint(node: &Node<'_>) -> Result<Option<AuditCheckpoint>, String> {
    let bytes = node.blobs.get(LATEST_CHECKPOINT_KEY).await.map_err(|error| error.0)?;
    Ok(bytes.and_then(|bytes| serde_json::from_slice(&bytes).ok()))
}

/// The scheduled upkeep of the chain: seal everything waiting, fold the closed
/// windows of refused attempts into it as one entry each, seal those, and keep
/// a checkpoint of the head when it moved since the last one.
pub async fn maintain(node: &Node<'_>) -> Result<Option<AuditCheckpoint>, String> {
    let database = node.database;
    let now_ms = node.platform.now_ms();
    seal_all(node).await?;
    let closed = Statement::new(
        "SELECT window_start, action, code, attempts, first_at, last_at FROM audit_attempts \
         WHERE window_start <= ?1 ORDER BY window_start, action, code LIMIT 200",
    )
    .bind(now_ms - ATTEMPT_WINDOW_MS);
    let windows = database.execute(vec![closed]).await.map_err(|error| error.to_string())?;
    let mut folding = Vec::new();
    for row in windows.first().map(|result| result.rows.as_slice()).unwrap_or_default() {
        let window = Window::read(row).map_err(|error| error.to_string())?;
        folding.push(append(&node.config.audit_key, &window.record()));
        folding.push(
            Statement::new("DELETE FROM audit_attempts WHERE window_start = ?1 AND action = ?2 AND code = ?3")
                .bind(window.window_start)
                .bind(window.action.as_str())
                .bind(window.code.as_str()),
        );
    }
    if !folding.is_empty() {
        database.execute(folding).await.map_err(|error| error.to_string())?;
        seal_all(node).await?;
    }
    let Some(head) = seal(database, node.config).await.map_err(|error| error.to_string())?.head else {
        return Ok(None);
    };
    let latest = latest_checkpoint(node).await?;
    if latest.as_ref().is_some_and(|latest| latest.seq == head.seq && latest.hash == head.hash) {
        return Ok(latest);
    }
    let checkpoint = checkpoint(node.config, &head, now_ms);
    keep_checkpoint(node, &checkpoint).await?;
    Ok(Some(checkpoint))
}

/// Seals until nothing more is waiting or the sealer stops at an entry it will
/// not seal (which it logs).
async fn seal_all(node: &Node<'_>) -> Result<(), String> {
    // Bounded: a backlog past this many batches waits for the next run.
    for _ in 0..64 {
        let sealing = seal(node.database, node.config).await.map_err(|error| error.to_string())?;
        if let Some(stopped) = &sealing.stopped {
            node.platform.log(&format!("the audit chain was not sealed past its head: {stopped}"));
        }
        if !sealing.more {
            break;
        }
    }
    Ok(())
}

/// A closed window of refused attempts.
struct Window {
    window_start: i64,
    action: String,
    code: String,
    attempts: i64,
    first_at: i64,
    last_at: i64,
}

impl Window {
    fn read(row: &Row) -> Result<Window, StorageError> {
        Ok(Window {
            window_start: row.integer("window_start")?,
            action: row.text("action")?,
            code: row.text("code")?,
            attempts: row.integer("attempts")?,
            first_at: row.integer("first_at")?,
            last_at: row.integer("last_at")?,
        })
    }

    /// The one entry the window becomes: who cannot be named, what was tried and
    /// refused, how often, and over what time.
    fn record(&self) -> AuditRecord {
        AuditRecord {
            at: self.last_at,
            actor: None,
            delegator: None,
            surface: None,
            action: self.action.clone(),
            object: None,
            outcome: "refused",
            detail: Some(
                serde_json::json!({
                    "code": self.code,
                    "attempts": self.attempts,
                    "from": rfc3339(self.first_at),
                    "to": rfc3339(self.last_at),
                })
                .to_string(),
            ),
        }
    }
}

/// What verification compares the chain with, besides itself.
pub(crate) struct Reference {
    /// The hash of the entry verification starts after.
    pub anchor_hash: Option<String>,
    /// The chain's last entry, sealed or not.
    pub last_seq: i64,
    /// The chain's last sealed entry.
    pub head: Option<ChainHead>,
    /// The latest checkpoint, if one was found.
    pub checkpoint: Option<AuditCheckpoint>,
}

/// Recomputes `entries`, which must be the rows after `after` in `seq` order, and
/// compares them with the latest checkpoint.
pub(crate) fn verify(config: &Config, after: i64, entries: &[StoredEntry], reference: Reference) -> AuditVerification {
    let Reference { anchor_hash, last_seq, head, checkpoint } = reference;
    let mut verification = AuditVerification {
        intact: true,
        checked: 0,
        first_bad_seq: None,
        problem: None,
        verified_through: None,
        next_after_seq: None,
        head,
        awaiting_seal: 0,
        checkpoint: checkpoint.clone(),
    };
    let fail = |verification: &mut AuditVerification, seq: i64, problem: String| {
        verification.intact = false;
        verification.first_bad_seq = Some(seq);
        verification.problem = Some(problem);
    };
    if let Some(checkpoint) = &checkpoint {
        if !checkpoint_is_genuine(config, checkpoint) {
            fail(
                &mut verification,
                checkpoint.seq,
                "the latest checkpoint's signature does not verify: it was not written by this node".into(),
            );
            return verification;
        }
        if last_seq < checkpoint.seq {
            fail(
                &mut verification,
                last_seq + 1,
                format!("truncated after checkpoint {}: the chain ends at entry {last_seq}", checkpoint.seq),
            );
            return verification;
        }
    }
    let Some(mut previous_hash) = anchor_hash else {
        fail(&mut verification, after, format!("there is no entry {after} to continue from"));
        return verification;
    };
    let mut expected_seq = after + 1;
    let mut keyed_seen = false;
    let mut waiting_seen = false;
    for entry in entries {
        let key = entry.key_id.as_deref().and_then(|id| config.audit_key_named(id));
        let problem = if entry.seq != expected_seq {
            Some((expected_seq, format!("entry {expected_seq} is missing: the chain jumps to {}", entry.seq)))
        } else if entry.key_id.is_some() && key.is_none() {
            Some((entry.seq, "it was written with a key this node does not hold".to_string()))
        } else if entry.key_id.is_none() && (keyed_seen || entry.hash.is_none()) {
            Some((entry.seq, "it claims to predate the keyed chain, which it follows: it was rewritten".to_string()))
        } else if key.is_some_and(|key| !entry.mac.as_deref().is_some_and(|mac| same(mac, &entry.own_mac(key)))) {
            Some((entry.seq, "its contents do not match its MAC: it was altered or forged".to_string()))
        } else {
            match (&entry.prev_hash, &entry.hash) {
                (None, None) => {
                    waiting_seen = true;
                    None
                }
                _ if waiting_seen => Some((entry.seq, "it is sealed after an entry still waiting for its seal".into())),
                (Some(prev_hash), Some(hash)) => {
                    if !same(prev_hash, &previous_hash) {
                        Some((entry.seq, "it does not link to the entry before it".to_string()))
                    } else if !same(hash, &entry.link(prev_hash, key)) {
                        Some((entry.seq, "its contents do not match its hash: it was altered".to_string()))
                    } else {
                        None
                    }
                }
                _ => Some((entry.seq, "it is half sealed: its link is damaged".to_string())),
            }
        };
        if let Some((seq, problem)) = problem {
            fail(&mut verification, seq, problem);
            return verification;
        }
        if let Some(checkpoint) = checkpoint.as_ref().filter(|checkpoint| checkpoint.seq == entry.seq)
            && !entry.hash.as_deref().is_some_and(|hash| same(hash, &checkpoint.hash))
        {
            fail(
                &mut verification,
                entry.seq,
                format!("it is not the entry checkpoint {} recorded: the history was rewritten", checkpoint.seq),
            );
            return verification;
        }
        keyed_seen |= entry.key_id.is_some();
        if entry.hash.is_none() {
            verification.awaiting_seal += 1;
        } else {
            previous_hash = entry.hash.clone().unwrap_or_default();
        }
        verification.checked += 1;
        verification.verified_through = Some(entry.seq);
        expected_seq += 1;
    }
    if verification.checked == VERIFY_PAGE && last_seq > expected_seq - 1 {
        verification.next_after_seq = Some(expected_seq - 1);
    }
    verification
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        Config::new(b"session".to_vec(), b"an audit key for tests only".to_vec(), None)
    }

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
    fn an_absent_field_is_left_out_of_what_is_hashed() {
        let mut entry = unplaced(&config().audit_key, &record("sign_in"));
        entry.actor = None;
        entry.key_id = None;
        entry.mac = None;
        entry.seq = 1;
        assert_eq!(
            entry.canonical_json(true),
            r#"{"action":"sign_in","actor_kind":"person","at":1000,"outcome":"ok","seq":1,"surface":"rest"}"#,
            "an entry from before the chain was keyed hashes exactly as it always did"
        );
        entry.object = Some("usr_X".into());
        assert!(entry.canonical_json(true).contains(r#""object":"usr_X""#));
        assert!(!entry.canonical_json(false).contains("seq"), "an entry's own MAC does not cover its place");
    }

    #[test]
    fn the_actor_kind_comes_from_the_prefix() {
        assert_eq!(actor_kind(Some("usr_01J00000000000000000000000")), "person");
        assert_eq!(actor_kind(Some("agt_01J00000000000000000000000")), "agent");
        assert_eq!(actor_kind(Some("usr_nonsense")), "stranger");
        assert_eq!(actor_kind(None), "stranger");
    }

    #[test]
    fn an_entry_is_written_with_its_mac_and_without_a_place() {
        let config = config();
        let statement = append(&config.audit_key, &record("grant_relation"));
        assert!(statement.sql.contains("COALESCE(MAX(seq), 0) + 1"), "the database gives it its place");
        let entry = unplaced(&config.audit_key, &record("grant_relation"));
        assert_eq!(entry.mac, Some(entry.own_mac(&config.audit_key)));
        let other = Config::new(b"session".to_vec(), b"another key".to_vec(), None);
        assert_ne!(entry.mac, Some(entry.own_mac(&other.audit_key)), "another key makes another MAC");
    }

    #[test]
    fn a_checkpoint_verifies_under_its_key_and_no_other() {
        let config = config();
        let head = ChainHead { seq: 7, hash: "ab".repeat(32) };
        let mut kept = checkpoint(&config, &head, 1_000);
        assert!(checkpoint_is_genuine(&config, &kept));
        kept.seq = 6;
        assert!(!checkpoint_is_genuine(&config, &kept), "an altered checkpoint");
        let forged = checkpoint(&Config::new(b"s".to_vec(), b"not this node's key".to_vec(), None), &head, 1_000);
        assert!(!checkpoint_is_genuine(&config, &forged), "another node's checkpoint");
    }

    #[test]
    fn attempts_are_counted_in_the_window_they_fall_in() {
        let mut refused = record("sign_in");
        refused.at = ATTEMPT_WINDOW_MS * 3 + 5;
        refused.detail = Some(r#"{"code":"wrong_email_or_password","status":401}"#.into());
        let statement = count_attempt(&refused);
        assert_eq!(statement.parameters[0], (ATTEMPT_WINDOW_MS * 3).into());
        assert_eq!(statement.parameters[2], "wrong_email_or_password".into());
    }
}
