//! The audit chain as the API shows it: its entries and their verification.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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

/// A record of the chain's head kept outside the database (in the node's object
/// store), signed with the audit key: an edit, a rewrite or a truncated tail
/// after it is found by comparing the chain with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AuditCheckpoint {
    /// The last sealed entry when the checkpoint was written.
    pub seq: i64,
    /// That entry's hash.
    pub hash: String,
    /// When the checkpoint was written (RFC 3339).
    pub at: String,
    /// The id of the audit key that signed it.
    pub key_id: String,
    /// HMAC-SHA256 of the checkpoint's other fields under that key.
    pub signature: String,
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
}
