//! eDiscovery exports: a reviewer's request for the mail of some mailboxes over
//! a date range, built in the background into the object store as the original
//! messages plus a manifest of their hashes, and readable by the requester alone.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Limits on exports, stated once because the contract publishes them.
pub mod export_limits {
    /// How many mailboxes one export may name.
    pub const MAILBOXES: usize = 20;
    /// How many messages one export may hold; a wider request is refused and
    /// can be split by date.
    pub const MESSAGES: usize = 5_000;
    /// How many messages one background run copies, across the exports
    /// building: a read and a write of the object store each, so a run stays
    /// inside the free plan's 50 subrequests per invocation.
    pub const COPIED_PER_RUN: usize = 20;
    /// How many exports a requester may have building at once.
    pub const BUILDING_PER_REQUESTER: usize = 3;
}

/// Where an export stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExportState {
    /// Its messages are being copied, a run of the per-minute schedule at a time.
    Building,
    /// Every message is copied and the manifest written; its hash is in the
    /// audit chain.
    Ready,
}

impl ExportState {
    /// Every state, in the order an export passes through them.
    pub const ALL: [ExportState; 2] = [ExportState::Building, ExportState::Ready];

    /// The state's name, as stored and as the JSON says it.
    pub fn name(self) -> &'static str {
        match self {
            ExportState::Building => "building",
            ExportState::Ready => "ready",
        }
    }
}

/// What to export.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestExport {
    /// The mailboxes (`mbx_…`) whose mail to export, at least one and at most
    /// `export_limits::MAILBOXES`.
    #[schemars(length(min = 1, max = export_limits::MAILBOXES))]
    pub mailbox_ids: Vec<String>,
    /// Only messages whose headers or body match these words (as search_messages
    /// reads them); leave it out for every message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Only messages received on or after this day (`YYYY-MM-DD`, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Only messages received on or before this day (`YYYY-MM-DD`, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
}

/// An export.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Export {
    /// The export's id (`exp_…`).
    pub id: String,
    /// Who requested it (`usr_…`): the only one who can read it.
    pub requester: String,
    /// The mailboxes it covers (`mbx_…`).
    pub mailbox_ids: Vec<String>,
    /// The words its messages match, if it was narrowed by any.
    pub query: Option<String>,
    /// The first day it covers (`YYYY-MM-DD`), if it was bounded.
    pub since: Option<String>,
    /// The last day it covers (`YYYY-MM-DD`), if it was bounded.
    pub until: Option<String>,
    /// Where it stands.
    pub state: ExportState,
    /// How many messages the request selected, fixed when it was made.
    pub messages_total: i64,
    /// How many of them have been copied (or found deleted since).
    pub messages_done: i64,
    /// How many were deleted before they could be copied; the manifest names them.
    pub messages_missing: i64,
    /// The bytes copied so far.
    pub bytes: i64,
    /// The manifest's SHA-256 (hex), once ready; the audit chain holds it too.
    pub manifest_sha256: Option<String>,
    /// When it was requested (RFC 3339).
    pub created_at: String,
    /// When it became ready (RFC 3339).
    pub completed_at: Option<String>,
}

/// The caller's exports.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ExportList {
    /// The caller's exports, newest first.
    pub exports: Vec<Export>,
    /// Where the next page starts; absent on the last page.
    pub next_cursor: Option<String>,
}

/// What an export's object is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExportObjectKind {
    /// The manifest: every message with its hash (`manifest.json`).
    Manifest,
    /// One original message (`.eml`).
    Message,
}

/// One object of an export.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ExportObject {
    /// The object's id: `manifest`, or the message's receipt id (`rcp_…`).
    pub id: String,
    /// What it is.
    pub kind: ExportObjectKind,
    /// A file name for it.
    pub name: String,
    /// The mailbox a message was received in (`mbx_…`).
    pub mailbox_id: Option<String>,
    /// A message's subject.
    pub subject: Option<String>,
    /// When a message was received (RFC 3339).
    pub received_at: Option<String>,
    /// Its size in bytes, once copied.
    pub size: Option<i64>,
    /// Its SHA-256 (hex), once copied.
    pub sha256: Option<String>,
    /// Whether it can be downloaded: copied, and not a message deleted before it
    /// could be.
    pub available: bool,
}

/// A page of an export's objects: the manifest first, then the messages in the
/// order the manifest lists them.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ExportObjectPage {
    /// The objects.
    pub objects: Vec<ExportObject>,
    /// Where the next page starts; absent on the last page.
    pub next_cursor: Option<String>,
}

/// One message as the manifest lists it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ManifestMessage {
    /// The receipt (`rcp_…`): the object id of its copy.
    pub receipt_id: String,
    /// The mailbox it was received in (`mbx_…`).
    pub mailbox_id: String,
    /// Its Message-ID, without angle brackets.
    pub message_id: String,
    /// Its subject.
    pub subject: String,
    /// When it was received (RFC 3339).
    pub received_at: String,
    /// Its size in bytes; absent if it was deleted before it could be copied.
    pub size: Option<i64>,
    /// The SHA-256 (hex) of the copy; absent if it was deleted before it could be copied.
    pub sha256: Option<String>,
}

/// An export's manifest: what was asked for and every message it holds, with
/// each copy's hash. Its own SHA-256 is in the audit chain.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ExportManifest {
    /// The export (`exp_…`).
    pub export_id: String,
    /// Who requested it (`usr_…`).
    pub requester: String,
    /// The mailboxes it covers (`mbx_…`).
    pub mailbox_ids: Vec<String>,
    /// The words its messages match, if any.
    pub query: Option<String>,
    /// The first day it covers (`YYYY-MM-DD`), if bounded.
    pub since: Option<String>,
    /// The last day it covers (`YYYY-MM-DD`), if bounded.
    pub until: Option<String>,
    /// When it was requested (RFC 3339).
    pub requested_at: String,
    /// Every message, oldest received first.
    pub messages: Vec<ManifestMessage>,
}
