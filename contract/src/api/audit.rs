//! The audit chain as the API shows it: its entries, their verification, the
//! checkpoints kept of its head, and the witness outside the account that each
//! checkpoint is also sent to.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::vocabulary::vocabulary;

/// Limits on the audit witness, stated once because the contract publishes them.
pub mod audit_limits {
    /// The longest witness address (an email address or a webhook URL), in bytes.
    pub const WITNESS_ADDRESS_BYTES: usize = 500;
}

/// One row of the audit chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AuditEntry {
    /// The entry's position in the chain: contiguous from 1.
    pub seq: i64,
    /// When it happened (RFC 3339).
    pub at: String,
    /// Who acted: `usr_…`, `agt_…`, `src_…`, or absent for a caller who did not sign in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    /// The kind of actor, derived from the id: `person`, `agent`, `source` or `stranger`.
    pub actor_kind: String,
    /// For an agent: the person whose authority it acted under (`usr_…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delegator: Option<String>,
    /// The surface the call came through: `rest` or `mcp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub surface: Option<String>,
    /// The route acted through, by tool name, such as `grant_relation`.
    pub action: String,
    /// The action in words: the summary of the route it names, such as "Grant
    /// a relation"; absent for what the node does of itself (`receive_mail`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The object acted on, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// `ok`, or `refused` with the refusal's code in `detail`.
    pub outcome: String,
    /// Further facts about the act, as a JSON object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<serde_json::Value>,
    /// The key the entry was written and sealed with (its id, never the key);
    /// absent for entries written before the chain was keyed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_id: Option<String>,
    /// The previous entry's hash (64 zeros for the first). Absent, with `hash`,
    /// for the moment between an entry's writing and its sealing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prev_hash: Option<String>,
    /// HMAC-SHA256, under the node's audit key, of a domain tag, `prev_hash` and the
    /// entry's canonical JSON (plain SHA-256 for entries from before the chain was
    /// keyed). Absent until the entry is sealed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
}

/// A page of the audit chain, newest first.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AuditPage {
    /// The entries, newest first.
    pub entries: Vec<AuditEntry>,
    /// Pass as `cursor` to get the next (older) page; null on the last page.
    pub next_cursor: Option<String>,
}

/// The chain's last sealed entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChainHead {
    /// The last sealed entry's `seq`.
    pub seq: i64,
    /// The last sealed entry's hash.
    pub hash: String,
}

/// A record of the chain's head, signed with the audit key and kept twice: in
/// the node's object store (R2) and in the database (D1), which must agree. An
/// edit, a rewrite or a truncated tail after it is found by comparing the chain
/// with it, and a rollback of either record by comparing them (decision 0027).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AuditCheckpoint {
    /// How many checkpoints the node had written, this one included: one more
    /// than the checkpoint before it. Absent on checkpoints written before they
    /// were numbered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<i64>,
    /// The last sealed entry when the checkpoint was written.
    pub seq: i64,
    /// That entry's hash.
    pub hash: String,
    /// When the checkpoint was written (RFC 3339).
    pub at: String,
    /// The id of the audit key that signed it.
    pub key_id: String,
    /// The witness in force at `seq` (`mailto:` and an address, or a webhook's
    /// URL), which this checkpoint is sent to: set and removed only by the keyed
    /// entries of `set_audit_witness` and `remove_audit_witness`. Absent when
    /// there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness: Option<String>,
    /// HMAC-SHA256 of the checkpoint's other fields under that key.
    pub signature: String,
}

vocabulary! {
    /// What verification found wrong, by kind: `problem` says it in words.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum ChainFault {
        SeqGap = "seq_gap": "An entry is missing: the chain jumps over `first_bad_seq`. It was deleted, or the entries after it renumbered.";
        EntryMac = "entry_mac": "An entry's contents do not match the MAC it was written with: it was altered or forged, or relabelled as an older kind of entry than the one before it.";
        UnknownKey = "unknown_key": "An entry names an audit key the node does not hold: a key was dropped from AUDIT_PREVIOUS_KEYS while entries it wrote are kept, or the entry was forged.";
        CopiedEntry = "copied_entry": "An entry is a copy of an earlier one: its MAC, which covers a nonce no two entries share, is an earlier entry's. A real entry was replayed at another place.";
        Link = "link": "An entry's seal, which covers its place (`seq`) and its predecessor's hash, does not match: it was moved or reordered, or its seal was altered.";
        Truncated = "truncated": "The chain ends before the head the latest checkpoint recorded: its newest entries were deleted.";
        Rewritten = "rewritten": "The entry at the latest checkpoint's head is not the one the checkpoint recorded: the history up to it was rewritten.";
        CheckpointSignature = "checkpoint_signature": "A checkpoint, in D1 or in the object store, was not signed by an audit key this node holds.";
        CheckpointDisagreement = "checkpoint_disagreement": "D1 and the object store hold different checkpoints under the same number, or a newer one records an older head.";
        RolledBackAgainstD1 = "rolled_back_against_d1": "The object store's latest checkpoint is missing or older than the checkpoint D1 records: the object store's checkpoints were deleted or rolled back.";
        SegmentRewritten = "segment_rewritten": "A mailbox's segment of the chain, kept in the mailbox's own database, no longer holds the head the organisation's chain anchored for it: its newest entries were deleted, or its history up to that head was rewritten.";
        RolledBackAgainstR2 = "rolled_back_against_r2": "D1's checkpoint record is missing or older than the object store's latest checkpoint (by more than the one a checkpoint being written explains): D1's record was rolled back.";
    }
}

/// The result of recomputing part of the audit chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AuditVerification {
    /// Whether every entry checked links to its predecessor and hashes to its stored hash.
    pub intact: bool,
    /// How many entries were checked.
    pub checked: i64,
    /// The first entry that does not verify, or the first missing `seq`.
    pub first_bad_seq: Option<i64>,
    /// What kind of failure `problem` describes; absent when intact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<ChainFault>,
    /// What is wrong at `first_bad_seq`.
    pub problem: Option<String>,
    /// The last entry checked.
    pub verified_through: Option<i64>,
    /// Pass as `after_seq` to continue verifying; absent when the whole chain was checked.
    pub next_after_seq: Option<i64>,
    /// The chain's last sealed entry at the time of the check.
    pub head: Option<ChainHead>,
    /// Entries written but not yet sealed: normally none, or the few written in
    /// the last moment. Their own MACs are checked; their links are not yet made.
    pub awaiting_seal: i64,
    /// The latest checkpoint kept outside the database, when there is one; the
    /// chain is compared with it, so a truncated tail or a rewritten history is found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<AuditCheckpoint>,
    /// The latest checkpoint D1 records, which must be the object store's
    /// (`checkpoint`) or one apart while a checkpoint is being written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_checkpoint: Option<AuditCheckpoint>,
    /// Mailboxes' segments of the chain, in mailbox order, a page of them
    /// (those after `segments_after`), each checked from the head the
    /// organisation's chain last anchored for it: whether it still holds that
    /// head and every entry written since verifies. One that fails makes
    /// `intact` false with its `fault` and `problem`, which name the mailbox.
    /// Empty when the answer is a segment's own (`mailbox_id`).
    #[serde(default)]
    pub segments: Vec<SegmentVerification>,
    /// Pass as `segments_after` for the next page of segments; absent when
    /// this page reached the last mailbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_segments_after: Option<String>,
}

/// One mailbox's segment of the audit chain, checked from its anchored head.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SegmentVerification {
    /// The mailbox whose segment this is.
    pub mailbox_id: String,
    /// Whether the segment holds its anchored head and every entry after it verifies.
    pub intact: bool,
    /// The head the organisation's chain last anchored for the segment, if any.
    pub anchored: Option<ChainHead>,
    /// The segment's last sealed entry, as far as the check went.
    pub head: Option<ChainHead>,
    /// Entries checked after the anchored head.
    pub checked: i64,
    /// Entries written but not yet sealed.
    pub awaiting_seal: i64,
    /// What kind of failure `problem` describes; absent when intact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<ChainFault>,
    /// What is wrong, naming the entry of the segment; absent when intact.
    pub problem: Option<String>,
}

/// Who witnesses the chain from outside the account: set by an administrator.
/// Exactly one of the two.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetAuditWitness {
    /// An auditor's email address: each checkpoint is mailed there from the
    /// node's `REMINDER_SENDER` address, signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// An auditor's webhook: each checkpoint is posted there, signed
    /// (`mailroom-signature`, as every webhook the node posts). `https://`, at
    /// most `audit_limits::WITNESS_ADDRESS_BYTES` bytes, without credentials in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_url: Option<String>,
}

/// The audit witness: the party outside the account each checkpoint is sent to,
/// so that a rollback of the chain and of both checkpoint records together can
/// still be proved (decision 0027).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AuditWitness {
    /// The witness as the chain records it (`mailto:` and an address, or a
    /// webhook's URL); absent when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness: Option<String>,
    /// The secret each message to the witness is signed with: the
    /// `mailroom-signature` header, `t=<unix seconds>,v1=<hex HMAC-SHA256 of
    /// "<t>.<body>">`. Give it to the auditor. It changes with the witness and
    /// when the audit key is rotated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_secret: Option<String>,
    /// The entry that set or removed the witness, when one did (absent in the
    /// answer of the call that sets or removes it: its entry is that call's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_in_seq: Option<i64>,
    /// The latest checkpoint, when there is one: whether its witness has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_checkpoint: Option<AuditCheckpoint>,
    /// When the witness took the latest checkpoint (RFC 3339); absent while it
    /// has not, and the scheduled upkeep tries again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered_at: Option<String>,
    /// Why the last attempt to tell the witness did not land.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_error: Option<String>,
}
