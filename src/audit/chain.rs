//! The audit chain's entries: one row per changing call and per content read,
//! written in the same batch as the change it records, keyed with a secret the
//! database does not hold, and sealed into a hash chain a moment later
//! (decisions 0015 and 0027). What checks an entry in its place is `walk`, what
//! links it in is `seal`, and what keeps the chain from being shortened or
//! rolled back is `checkpoints`; this file knows none of them.
//!
//! Writing. An entry's `seq` is assigned by the database inside the change's own
//! transaction (one more than the last), so concurrent writers never race for it
//! and never retry. It carries `mac`, an HMAC under the audit key (`key_id` names
//! which, `mac_version` how) of its own fields and of a random `nonce`: nobody
//! without the key can add or alter an entry, and no two entries share a MAC, so
//! a copy of one is known for what it is wherever it is put.
//!
//! Sealing. The writer cannot know the entry's place (the database gives it), so
//! the MAC that covers the place is the seal, made a moment later: `hash =
//! HMAC(key, tag ‖ prev_hash ‖ canonical JSON of the entry with its seq and MAC)`,
//! the canonical JSON having sorted keys and only the fields that are present (so
//! a column added later leaves every earlier hash valid). The sealer links the
//! entries written since the last sealed one, in `seq` order, after checking each
//! one's MAC and that it copies no earlier entry; it stops at the first that fails
//! or at a gap, and never seals it in. Sealing is deterministic: two sealers
//! racing compute the same hashes, and an update only fills a hash still empty.
//! The adapter seals after every answer that appended, and the scheduled upkeep
//! seals whatever is left.
//!
//! Entries written before the chain was keyed have no `key_id` and no `mac`, and
//! keep their unkeyed SHA-256 hash; entries written before nonces have neither
//! `nonce` nor `mac_version`. Each verifies as it was written, but only ahead of
//! the first entry of a later kind (`Scheme`).

use std::collections::BTreeMap;

use hmac::{Hmac, KeyInit, Mac};
use mailroom_contract::api::AuditEntry;
use serde::Deserialize;
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use crate::core::context::ports::{AuditRecord, Ledger};
use crate::core::crypto::{constant_time_equal, hex};
use crate::core::ids::{IdKind, kind_of};
use crate::core::node::{AuditKey, Config};
use crate::core::platform::{Platform, random_bytes};
use crate::core::storage::Statement;
use crate::core::time::{MINUTE_MS, rfc3339};

use super::store::{self, NewEntry};

/// The hash the first entry links to.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";
/// The tag of the unkeyed chain every entry was hashed with before the chain was keyed.
const LEGACY_CHAIN_TAG: &[u8] = b"mailroom.audit-chain.v1\n";
/// The tag of an entry's own MAC as it was written before nonces (`mac_version` absent).
const ENTRY_TAG_VERSION_2: &[u8] = b"mailroom.audit-entry.v2\n";
/// The tag of an entry's own MAC over its fields and its nonce (`mac_version` 3).
const ENTRY_TAG_VERSION_3: &[u8] = b"mailroom.audit-entry.v3\n";
/// The `mac_version` every entry is written with now.
pub(crate) const MAC_VERSION: i64 = 3;
/// The tag of the keyed chain's links (the seals), made when an entry is sealed.
const CHAIN_TAG: &[u8] = b"mailroom.audit-chain.v2\n";
/// The tag of a mailbox segment's entries' own MACs, followed by the mailbox's id.
const SEGMENT_ENTRY_TAG: &[u8] = b"mailroom.audit-segment-entry.v1\n";
/// The tag of a mailbox segment's links, followed by the mailbox's id.
const SEGMENT_CHAIN_TAG: &[u8] = b"mailroom.audit-segment-chain.v1\n";
/// How many entries one verify call recomputes: enough for a screenful of history
/// in one round trip, small enough to stay far inside a Worker's memory.
pub const VERIFY_PAGE: i64 = 5_000;
/// How many entries one pass of the sealer reads and seals.
pub const SEAL_BATCH: i64 = 256;
/// The window refused attempts without a proven credential are counted in
/// before they are folded into the chain as one entry.
pub const ATTEMPT_WINDOW_MS: i64 = 15 * MINUTE_MS;

/// Which chain an entry is in: the organisation's, in D1, or a mailbox's
/// segment, in the mailbox's own database (decision 0040). A segment's MACs and
/// seals also cover its mailbox's id, so an entry copied out of its segment,
/// into D1's chain or another mailbox's, fails where it lands: the copy check
/// compares MACs within one table and cannot see across databases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChainOf<'a> {
    Organisation,
    Mailbox(&'a str),
}

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

/// How an entry was written, oldest kind first. Each verifies as it was
/// written, and only ahead of the first entry of a later kind: a rewriter
/// cannot relabel an entry as an older kind to escape what it now must prove.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Scheme {
    /// Before the chain was keyed: no key, no MAC, an unkeyed SHA-256 link.
    Unkeyed,
    /// Keyed, its MAC over its own fields alone (`mac_version` absent: 2).
    KeyedWithoutNonce,
    /// Keyed, its MAC over its own fields and a nonce (`mac_version` 3).
    KeyedWithNonce,
}

/// An entry as stored: exactly what is hashed, and its links once sealed (the
/// columns the store reads as `ENTRY_COLUMNS`).
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct StoredEntry {
    pub(crate) seq: i64,
    at: i64,
    actor: Option<String>,
    actor_kind: String,
    delegator: Option<String>,
    surface: Option<String>,
    pub(crate) action: String,
    object: Option<String>,
    pub(crate) outcome: String,
    pub(crate) detail: Option<String>,
    pub(crate) key_id: Option<String>,
    pub(crate) mac: Option<String>,
    mac_version: Option<i64>,
    nonce: Option<String>,
    pub(crate) prev_hash: Option<String>,
    pub(crate) hash: Option<String>,
    /// The first earlier entry with the same MAC, where it was read (the store's `COPY_OF`).
    #[serde(default)]
    pub(crate) copy_of: Option<i64>,
}

impl StoredEntry {
    /// How the entry says it was written, or `None` when its key, MAC, version
    /// and nonce do not fit any way an entry was ever written.
    pub(crate) fn scheme(&self) -> Option<Scheme> {
        match (&self.key_id, &self.mac, self.mac_version, &self.nonce) {
            (None, None, None, None) => Some(Scheme::Unkeyed),
            (Some(_), Some(_), None, None) => Some(Scheme::KeyedWithoutNonce),
            (Some(_), Some(_), Some(MAC_VERSION), Some(_)) => Some(Scheme::KeyedWithNonce),
            _ => None,
        }
    }

    /// The entry's canonical JSON: sorted keys, absent fields left out. Its own
    /// fields only (for its MAC), or with its place and MAC too (for its seal).
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
            ("nonce", &self.nonce),
        ];
        if let Some(version) = self.mac_version {
            fields.insert("mac_version", version.into());
        }
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

    /// The entry's own MAC under `key`, as `scheme` writes it, in the chain `of`.
    pub(crate) fn own_mac(&self, key: &AuditKey, scheme: Scheme, of: ChainOf<'_>) -> String {
        let canonical = self.canonical_json(false);
        match of {
            ChainOf::Mailbox(mailbox) => {
                keyed(key, &[SEGMENT_ENTRY_TAG, mailbox.as_bytes(), b"\n", canonical.as_bytes()])
            }
            ChainOf::Organisation => {
                let tag = match scheme {
                    Scheme::KeyedWithNonce => ENTRY_TAG_VERSION_3,
                    Scheme::KeyedWithoutNonce | Scheme::Unkeyed => ENTRY_TAG_VERSION_2,
                };
                keyed(key, &[tag, canonical.as_bytes()])
            }
        }
    }

    /// The seal this entry makes after `prev_hash` in the chain `of`, covering
    /// its place and its MAC: keyed under its own key, or the unkeyed hash an
    /// entry from before the chain was keyed was written with.
    pub(crate) fn link(&self, prev_hash: &str, key: Option<&AuditKey>, of: ChainOf<'_>) -> String {
        let canonical = self.canonical_json(true);
        match (key, of) {
            (Some(key), ChainOf::Mailbox(mailbox)) => {
                keyed(key, &[SEGMENT_CHAIN_TAG, mailbox.as_bytes(), b"\n", prev_hash.as_bytes(), canonical.as_bytes()])
            }
            (Some(key), ChainOf::Organisation) => keyed(key, &[CHAIN_TAG, prev_hash.as_bytes(), canonical.as_bytes()]),
            (None, _) => {
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
            // Worded from the contract when it is read, so an entry's words
            // follow the route's declaration and never enter the chain.
            summary: mailroom_contract::registry().route_by_tool(&self.action).map(|route| route.summary.to_string()),
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
pub(crate) fn keyed(key: &AuditKey, parts: &[&[u8]]) -> String {
    // HMAC takes a key of any length, so this cannot fail.
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&key.secret)
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    for part in parts {
        mac.update(part);
    }
    hex(&mac.finalize().into_bytes())
}

pub(crate) fn same(left: &str, right: &str) -> bool {
    constant_time_equal(left.as_bytes(), right.as_bytes())
}

/// The chain, as the core's unit of work writes to it: entries under the
/// configured key, each with a nonce from the platform.
pub struct AuditChain<'node> {
    key: &'node AuditKey,
    platform: &'node dyn Platform,
}

impl<'node> AuditChain<'node> {
    pub fn new(config: &'node Config, platform: &'node dyn Platform) -> AuditChain<'node> {
        AuditChain { key: &config.audit_key, platform }
    }
}

impl Ledger for AuditChain<'_> {
    fn append(&self, record: &AuditRecord) -> Statement {
        append(self.key, record, self.platform)
    }

    fn append_to_mailbox(&self, mailbox_id: &str, record: &AuditRecord) -> Statement {
        append_to_mailbox(self.key, mailbox_id, record, self.platform)
    }

    fn count_attempt(&self, record: &AuditRecord) -> Statement {
        count_attempt(record)
    }
}

/// The entry `record` describes, with `nonce`, in the chain `of`, before the
/// database gives it its place.
fn unplaced(key: &AuditKey, record: &AuditRecord, nonce: String, of: ChainOf<'_>) -> StoredEntry {
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
        mac_version: Some(MAC_VERSION),
        nonce: Some(nonce),
        prev_hash: None,
        hash: None,
        copy_of: None,
    };
    entry.mac = Some(entry.own_mac(key, Scheme::KeyedWithNonce, of));
    entry
}

/// The insert that appends `record` to the chain, its `seq` one more than the
/// last, assigned inside the batch it travels in. It is sealed later.
pub fn append(key: &AuditKey, record: &AuditRecord, platform: &dyn Platform) -> Statement {
    store::append_entry(placed(key, record, platform, ChainOf::Organisation), MAC_VERSION)
}

/// The insert that appends `record` to the segment of `mailbox_id`, in that
/// mailbox's own database, in the batch of the change it records.
pub fn append_to_mailbox(key: &AuditKey, mailbox_id: &str, record: &AuditRecord, platform: &dyn Platform) -> Statement {
    store::append_entry(placed(key, record, platform, ChainOf::Mailbox(mailbox_id)), MAC_VERSION)
}

/// `append`, unless the alarm `alarm_key` was already raised (`audit_alarms`):
/// an alarm's entry is written once, however often the upkeep finds the same fault.
pub(crate) fn append_unless_raised(
    key: &AuditKey,
    record: &AuditRecord,
    platform: &dyn Platform,
    alarm_key: &str,
) -> Statement {
    store::append_entry_unless_raised(placed(key, record, platform, ChainOf::Organisation), MAC_VERSION, alarm_key)
}

/// The entry `record` describes, MAC'd with a fresh nonce for the chain `of`,
/// as the store writes it.
fn placed(key: &AuditKey, record: &AuditRecord, platform: &dyn Platform, of: ChainOf<'_>) -> NewEntry {
    let entry = unplaced(key, record, hex(&random_bytes::<16>(platform)), of);
    NewEntry {
        at: entry.at,
        actor: entry.actor,
        actor_kind: entry.actor_kind,
        delegator: entry.delegator,
        surface: entry.surface,
        action: entry.action,
        object: entry.object,
        outcome: entry.outcome,
        detail: entry.detail,
        key_id: entry.key_id,
        mac: entry.mac,
        nonce: entry.nonce,
    }
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
    store::count_attempt(window_start, &record.action, code, record.at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::FixedPlatform;

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
            topic: None,
        }
    }

    #[test]
    fn an_absent_field_is_left_out_of_what_is_hashed() {
        let mut entry = unplaced(&config().audit_key, &record("sign_in"), "00".into(), ChainOf::Organisation);
        entry.actor = None;
        entry.key_id = None;
        entry.mac = None;
        // An entry from before the chain was keyed had no nonce either.
        entry.nonce = None;
        entry.mac_version = None;
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
        let platform = FixedPlatform::at(0);
        let statement = append(&config.audit_key, &record("grant_relation"), &platform);
        assert!(statement.sql.contains("COALESCE(MAX(seq), 0) + 1"), "the database gives it its place");
        let entry = unplaced(&config.audit_key, &record("grant_relation"), "00".into(), ChainOf::Organisation);
        assert_eq!(entry.mac, Some(entry.own_mac(&config.audit_key, Scheme::KeyedWithNonce, ChainOf::Organisation)));
        let other = Config::new(b"session".to_vec(), b"another key".to_vec(), None);
        assert_ne!(
            entry.mac,
            Some(entry.own_mac(&other.audit_key, Scheme::KeyedWithNonce, ChainOf::Organisation)),
            "another key makes another MAC"
        );
    }

    #[test]
    fn two_entries_of_the_same_act_at_the_same_moment_never_share_a_mac() {
        // What makes a copy known: a MAC an earlier entry already has. Two real
        // entries alike in every field (the same read twice in one millisecond)
        // differ in their nonces, so neither is taken for a copy of the other.
        let config = config();
        let platform = FixedPlatform::at(0);
        let first = append(&config.audit_key, &record("read_message_text"), &platform);
        let second = append(&config.audit_key, &record("read_message_text"), &platform);
        assert_ne!(first.parameters[10], second.parameters[10], "the MACs");
        assert_ne!(first.parameters[11], second.parameters[11], "the nonces");
        let version_2 = unplaced(&config.audit_key, &record("read_message_text"), "00".into(), ChainOf::Organisation);
        assert_ne!(
            version_2.own_mac(&config.audit_key, Scheme::KeyedWithoutNonce, ChainOf::Organisation),
            version_2.own_mac(&config.audit_key, Scheme::KeyedWithNonce, ChainOf::Organisation),
            "the version is in the MAC's tag: an entry cannot be relabelled as written before nonces"
        );
    }

    #[test]
    fn a_segment_entry_is_bound_to_its_mailbox() {
        let key = &config().audit_key;
        let entry = unplaced(key, &record("update_conversation"), "00".into(), ChainOf::Mailbox("mbx_1"));
        let mac = entry.mac.clone().unwrap();
        assert_eq!(mac, entry.own_mac(key, Scheme::KeyedWithNonce, ChainOf::Mailbox("mbx_1")));
        for elsewhere in [ChainOf::Mailbox("mbx_2"), ChainOf::Organisation] {
            assert_ne!(mac, entry.own_mac(key, Scheme::KeyedWithNonce, elsewhere), "its MAC fails in {elsewhere:?}");
            assert_ne!(
                entry.link(GENESIS_HASH, Some(key), ChainOf::Mailbox("mbx_1")),
                entry.link(GENESIS_HASH, Some(key), elsewhere),
                "and so does its seal"
            );
        }
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
