//! The walk: every check of an entry in its place, in one pass over the chain in
//! `seq` order from an anchor (an entry already trusted, or the start). The
//! sealer walks the waiting entries and seals those that pass; verification
//! walks a page and reports; a checkpoint is written only after a walk from the
//! last checkpoint to the new head found nothing wrong (decision 0027).
//!
//! What each entry must show, in order: its `seq` follows the one before (no
//! gap); its key, MAC version and nonce fit a kind of entry that is not older
//! than the one before it; its key is one the node holds; its own MAC matches;
//! it is not a copy of an earlier entry (its MAC, which covers a nonce, is no
//! earlier entry's); and, once sealed, its seal follows from its predecessor's
//! and covers its own place. Pure: no storage, no clock.

use mailroom_contract::api::{AuditCheckpoint, ChainFault, ChainHead};
use serde_json::Value as Json;

use crate::audit::chain::{ChainOf, GENESIS_HASH, Scheme, StoredEntry, same};
use crate::core::node::Config;
use crate::core::storage::Statement;

use super::store;

/// The entry a walk starts after, trusted as stored: its hash and the kind of
/// entry it is, which no later entry may be older than.
#[derive(Clone, Debug)]
pub(crate) struct Anchor {
    pub seq: i64,
    pub hash: String,
    scheme: Scheme,
}

impl Anchor {
    /// Before the first entry.
    pub fn genesis() -> Anchor {
        Anchor { seq: 0, hash: GENESIS_HASH.to_string(), scheme: Scheme::Unkeyed }
    }

    /// Before the first entry of the chain `of`. A mailbox's segment began
    /// after entries were keyed and carried nonces, so none of its entries may
    /// claim an older kind.
    pub fn genesis_of(of: ChainOf<'_>) -> Anchor {
        match of {
            ChainOf::Organisation => Anchor::genesis(),
            ChainOf::Mailbox(_) => Anchor { scheme: Scheme::KeyedWithNonce, ..Anchor::genesis() },
        }
    }

    /// After `entry`, once it is shown to be what it says: its MAC and its seal
    /// (from its stored `prev_hash`) verify, so the kind it claims, which no
    /// later entry may be older than, is its own. Trusting a stored kind would
    /// let a rewriter relabel the anchor as older and the entries after it too.
    pub fn verified(config: &Config, entry: &StoredEntry) -> Result<Anchor, Failure> {
        Anchor::verified_in(config, entry, ChainOf::Organisation)
    }

    /// `verified`, for an entry of the chain `of`.
    pub fn verified_in(config: &Config, entry: &StoredEntry, of: ChainOf<'_>) -> Result<Anchor, Failure> {
        let oldest = Anchor::genesis_of(of).scheme;
        let before = Anchor { seq: entry.seq - 1, hash: entry.prev_hash.clone().unwrap_or_default(), scheme: oldest };
        let walked = walk(
            config,
            &before,
            std::slice::from_ref(entry),
            Walk { seal: false, reference: None, witness: None, of },
        );
        if let Some(failure) = walked.failure {
            return Err(failure);
        }
        match (&entry.hash, entry.scheme()) {
            (Some(hash), Some(scheme)) => Ok(Anchor { seq: entry.seq, hash: hash.clone(), scheme }),
            _ => Err(Failure::at_entry(entry.seq, ChainFault::Link, "it is not sealed, so nothing can follow from it")),
        }
    }
}

/// How to walk.
pub(crate) struct Walk<'a> {
    /// Seal the waiting entries that pass (the sealer, a checkpoint), or count
    /// them as awaiting their seal (verification).
    pub seal: bool,
    /// The checkpoint whose head the entry at its `seq` must be.
    pub reference: Option<&'a AuditCheckpoint>,
    /// The witness in force at the anchor, followed through the entries that
    /// change it.
    pub witness: Option<String>,
    /// The chain walked.
    pub of: ChainOf<'a>,
}

/// What verification found wrong: where, of what kind, in words, and what it
/// is about (stable while the fault stands, for raising its alarm once).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub seq: Option<i64>,
    pub fault: ChainFault,
    pub problem: String,
    pub about: String,
}

impl Failure {
    /// A fault of the entry at `seq`.
    pub(crate) fn at_entry(seq: i64, fault: ChainFault, problem: impl Into<String>) -> Failure {
        Failure { seq: Some(seq), fault, problem: problem.into(), about: format!("entry-{seq}") }
    }

    /// The failure in one sentence: one said of an entry ("it…", "its…") names it.
    pub fn sentence(&self) -> String {
        match self.seq {
            Some(seq) if self.problem.starts_with("it") => format!("entry {seq}: {}", self.problem),
            _ => self.problem.clone(),
        }
    }

    /// What raises this failure's alarm once: its kind and what it is about.
    pub fn alarm_key(&self) -> String {
        format!("{}:{}", self.fault.name(), self.about)
    }
}

/// What a walk found.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    /// Entries checked, sealed or waiting.
    pub checked: i64,
    /// The last entry checked.
    pub verified_through: Option<i64>,
    /// The last sealed entry the walk verified (or sealed), or the anchor.
    pub head: Option<ChainHead>,
    /// Entries left waiting for their seal.
    pub awaiting_seal: i64,
    /// The seals made, when sealing.
    pub seals: Vec<Statement>,
    /// The first thing wrong, where the walk stopped.
    pub failure: Option<Failure>,
    /// The witness in force at `head`.
    pub witness: Option<String>,
}

/// Walks `entries`, which must be the rows after `anchor` in `seq` order (read
/// with `COPY_OF`), stopping at the first that fails.
pub(crate) fn walk(config: &Config, anchor: &Anchor, entries: &[StoredEntry], how: Walk<'_>) -> Walked {
    let mut walked = Walked {
        head: (anchor.seq > 0).then(|| ChainHead { seq: anchor.seq, hash: anchor.hash.clone() }),
        witness: how.witness.clone(),
        ..Walked::default()
    };
    let mut previous_hash = anchor.hash.clone();
    let mut oldest_allowed = anchor.scheme;
    let mut waiting_seen = false;
    // Each entry is expected one after the last: the first that is not names a gap.
    for (expected_seq, entry) in (anchor.seq + 1..).zip(entries) {
        let checked = check(config, entry, expected_seq, oldest_allowed, how.of);
        let (scheme, key) = match checked {
            Ok(checked) => checked,
            Err(failure) => {
                walked.failure = Some(failure);
                return walked;
            }
        };
        let sealed = match (&entry.prev_hash, &entry.hash) {
            // An entry from before the chain was keyed was sealed when written.
            (None, None) if scheme == Scheme::Unkeyed => Err(Failure::at_entry(
                entry.seq,
                ChainFault::EntryMac,
                "it claims to predate the keyed chain, which it follows: it was rewritten",
            )),
            (None, None) if how.seal && !waiting_seen => {
                let hash = entry.link(&previous_hash, key, how.of);
                walked.seals.push(store::seal_entry(entry.seq, &previous_hash, &hash));
                Ok(Some(hash))
            }
            (None, None) => {
                waiting_seen = true;
                Ok(None)
            }
            _ if waiting_seen => Err(Failure::at_entry(
                entry.seq,
                ChainFault::Link,
                "it is sealed after an entry still waiting for its seal",
            )),
            (Some(prev_hash), Some(hash)) => {
                if !same(prev_hash, &previous_hash) {
                    Err(Failure::at_entry(entry.seq, ChainFault::Link, "it does not link to the entry before it"))
                } else if !same(hash, &entry.link(prev_hash, key, how.of)) {
                    Err(Failure::at_entry(
                        entry.seq,
                        ChainFault::Link,
                        "its contents do not match its hash: it was altered, or moved from another place",
                    ))
                } else {
                    Ok(Some(hash.clone()))
                }
            }
            _ => Err(Failure::at_entry(entry.seq, ChainFault::Link, "it is half sealed: its link is damaged")),
        };
        let sealed = match sealed {
            Ok(sealed) => sealed,
            Err(failure) => {
                walked.failure = Some(failure);
                return walked;
            }
        };
        if let Some(reference) = how.reference.filter(|reference| reference.seq == entry.seq)
            && !sealed.as_deref().is_some_and(|hash| same(hash, &reference.hash))
        {
            walked.failure = Some(Failure {
                seq: Some(entry.seq),
                fault: ChainFault::Rewritten,
                problem: format!(
                    "it is not the entry checkpoint {} recorded: the history was rewritten",
                    reference.seq
                ),
                about: format!("checkpoint-{}", reference.seq),
            });
            return walked;
        }
        match sealed {
            Some(hash) => {
                walked.head = Some(ChainHead { seq: entry.seq, hash: hash.clone() });
                previous_hash = hash;
                if let Some(change) = witness_change_in(entry) {
                    walked.witness = change;
                }
            }
            None => walked.awaiting_seal += 1,
        }
        oldest_allowed = scheme;
        walked.checked += 1;
        walked.verified_through = Some(entry.seq);
    }
    walked
}

/// The checks of `entry` on its own, expected at `expected_seq` and no older a
/// kind than `oldest_allowed`: its kind, and the key it was written with.
fn check<'config>(
    config: &'config Config,
    entry: &StoredEntry,
    expected_seq: i64,
    oldest_allowed: Scheme,
    of: ChainOf<'_>,
) -> Result<(Scheme, Option<&'config crate::core::node::AuditKey>), Failure> {
    if entry.seq != expected_seq {
        return Err(Failure::at_entry(
            expected_seq,
            ChainFault::SeqGap,
            format!("entry {expected_seq} is missing: the chain jumps to {}", entry.seq),
        ));
    }
    let fail = |fault: ChainFault, problem: &str| Err(Failure::at_entry(entry.seq, fault, problem));
    let Some(scheme) = entry.scheme() else {
        return if entry.key_id.is_none() {
            fail(ChainFault::EntryMac, "it claims to predate the keyed chain but carries a nonce: it was rewritten")
        } else {
            fail(ChainFault::EntryMac, "its key, MAC version and nonce do not fit together: it was altered")
        };
    };
    if scheme < oldest_allowed {
        return match scheme {
            Scheme::Unkeyed => {
                fail(ChainFault::EntryMac, "it claims to predate the keyed chain, which it follows: it was rewritten")
            }
            _ => fail(
                ChainFault::EntryMac,
                "it claims to predate the nonces in entries' MACs, which it follows: it was rewritten, or copied \
                 from older history",
            ),
        };
    }
    let key = match &entry.key_id {
        None => None,
        Some(id) => match config.audit_key_named(id) {
            Some(key) => Some(key),
            None => return fail(ChainFault::UnknownKey, "it was written with a key this node does not hold"),
        },
    };
    if let Some(key) = key
        && !entry.mac.as_deref().is_some_and(|mac| same(mac, &entry.own_mac(key, scheme, of)))
    {
        return fail(ChainFault::EntryMac, "its contents do not match its MAC: it was altered or forged");
    }
    if scheme == Scheme::KeyedWithNonce
        && let Some(original) = entry.copy_of
    {
        return Err(Failure::at_entry(
            entry.seq,
            ChainFault::CopiedEntry,
            format!(
                "it is a copy of entry {original}: it has that entry's MAC, which covers a nonce no two entries share"
            ),
        ));
    }
    Ok((scheme, key))
}

/// The action of the route that sets the audit witness: its tool name.
pub(crate) const SET_WITNESS: &str = "set_audit_witness";
/// The action of the route that removes it.
pub(crate) const REMOVE_WITNESS: &str = "remove_audit_witness";

/// The witness `entry` puts in force, if it is an accepted change of it:
/// `Some(None)` for a removal. The walk follows the witness from one
/// checkpoint to the next through these (see `witness`).
pub(crate) fn witness_change_in(entry: &StoredEntry) -> Option<Option<String>> {
    if entry.outcome != "ok" {
        return None;
    }
    match entry.action.as_str() {
        SET_WITNESS => {
            let detail: Option<Json> = entry.detail.as_deref().and_then(|detail| serde_json::from_str(detail).ok());
            Some(detail.and_then(|detail| detail.get("witness").and_then(Json::as_str).map(str::to_string)))
        }
        REMOVE_WITNESS => Some(None),
        _ => None,
    }
}
