//! Agents across organisations (SPEC §14, decision 0050): the peers an
//! administrator connects, the agents elsewhere a message names by their A2A
//! card, and the outbox's deliveries to them as their owner watches them.
//!
//! Every limit is data the handlers, the schemas and the documents read.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::vocabulary::vocabulary;

/// The largest agent card the node reads, in bytes.
pub const REMOTE_CARD_MAXIMUM_BYTES: usize = 64 * 1024;
/// The largest answer the node reads from an agent elsewhere, in bytes.
pub const REMOTE_ANSWER_MAXIMUM_BYTES: usize = 512 * 1024;
/// The longest a card URL may be, in bytes.
pub const REMOTE_URL_MAXIMUM: usize = 2048;
/// How long a card is kept when its answer says nothing of caching, in seconds.
pub const REMOTE_CARD_DEFAULT_SECONDS: i64 = 300;
/// The longest a card is kept whatever its answer says, in seconds: a day.
pub const REMOTE_CARD_LONGEST_SECONDS: i64 = 24 * 3600;
/// How long the outbox waits after each failed attempt, in seconds; the last
/// repeats until the owner's `maximum_attempts` are spent.
pub const REMOTE_RETRY_AFTER_SECONDS: &[i64] = &[60, 300, 1800, 7200];
/// How often an accepted task is asked how it stands, in seconds, after it is
/// first asked at the outbox's next run.
pub const REMOTE_POLL_SECONDS: i64 = 60;
/// The most domains and cards an agent's outbound policy names.
pub const MAXIMUM_REMOTE_RECIPIENTS: usize = 100;
/// Messages an agent may send elsewhere in an hour when its owner set no cap.
pub const DEFAULT_REMOTE_PER_HOUR: i64 = 60;
/// The range an owner may set the hourly cap in.
pub const REMOTE_PER_HOUR_RANGE: (i64, i64) = (1, 10_000);
/// How long a peer's name may be, in characters.
pub const PEER_NAME_MAXIMUM: usize = 100;
/// How long the credential a peer issued may be, in characters.
pub const PEER_CREDENTIAL_MAXIMUM: usize = 500;

vocabulary! {
    /// Where a message to an agent elsewhere stands in the outbox.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum RemoteDeliveryState {
        Pending = "pending": "Not yet accepted by the agent elsewhere: waiting for its first attempt, or for the next after a failure (`next_attempt_at`).";
        Sent = "sent": "Accepted: the node asks how its task stands until it ends.";
        Done = "done": "Its task ended: its answer, or why it ended, is in the conversation.";
        Dead = "dead": "Given up after the owner's number of attempts, or refused for good (an address the node may not reach): the message failed.";
    }
}

vocabulary! {
    /// What one attempt of the outbox did.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum RemoteAttemptStep {
        Card = "card": "Read the agent's card for where to send.";
        Send = "send": "Sent the message to the endpoint the card names.";
        Poll = "poll": "Asked how the message's task stands.";
    }
}

vocabulary! {
    /// How one attempt ended.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum RemoteAttemptOutcome {
        Ok = "ok": "It did what it set out to.";
        Retrying = "retrying": "It failed and will be tried again.";
        Failed = "failed": "It failed for good: the message failed.";
    }
}

/// Another organisation this node converses with.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Peer {
    /// The peer's id (`per_…`).
    pub id: String,
    /// The domain its node answers on: the host of its agents' cards.
    pub domain: String,
    /// What the administrator calls it.
    pub name: String,
    /// Whether the credential it issued to this node is set, so that messages
    /// to its agents carry it.
    pub has_outbound_credential: bool,
    /// When it was connected (RFC 3339).
    pub created_at: String,
    /// Who connected it.
    pub created_by: String,
    /// When it was disconnected (RFC 3339); its credential then opens nothing.
    pub revoked_at: Option<String>,
}

/// Every peer, connected ones first.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PeerList {
    /// The peers.
    pub peers: Vec<Peer>,
}

/// A peer to connect.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatePeer {
    /// The domain the other organisation's node answers on, such as `mail.example.org`.
    pub domain: String,
    /// What to call it, at most 100 characters.
    #[schemars(length(min = 1, max = PEER_NAME_MAXIMUM))]
    pub name: String,
    /// The credential the other organisation's administrator issued to this
    /// node, when it is already known; `update_peer` sets it later.
    #[serde(default)]
    #[schemars(length(min = 1, max = PEER_CREDENTIAL_MAXIMUM))]
    pub outbound_credential: Option<String>,
}

/// A peer connected, with the credential issued for it: shown once.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PeerCreated {
    /// The peer.
    pub peer: Peer,
    /// The credential (`mr_per_…`) the other organisation's node presents as
    /// `Authorization: Bearer` when its agents message agents here. Shown
    /// once: give it to the other organisation's administrator.
    pub credential: String,
}

/// Changes to a peer; fields left out stay as they are.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdatePeer {
    /// The credential the other organisation's administrator issued to this node.
    #[serde(default)]
    #[schemars(length(min = 1, max = PEER_CREDENTIAL_MAXIMUM))]
    pub outbound_credential: Option<String>,
    /// What to call it.
    #[serde(default)]
    #[schemars(length(min = 1, max = PEER_NAME_MAXIMUM))]
    pub name: Option<String>,
}

/// An agent elsewhere, as the node knows it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RemoteAgent {
    /// Its id here (`rag_…`), derived from its card's URL.
    pub id: String,
    /// Its A2A agent card.
    pub card_url: String,
    /// The domain of its organisation: its card's host.
    pub domain: String,
    /// Its name, as its card or its node gave it.
    pub name: Option<String>,
}

/// One attempt the outbox made.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RemoteAttempt {
    /// Its number, from 1.
    pub attempt: i64,
    /// When it was made (RFC 3339).
    pub at: String,
    /// What it did.
    pub step: RemoteAttemptStep,
    /// How it ended.
    pub outcome: RemoteAttemptOutcome,
    /// What happened, in words.
    pub detail: String,
}

/// A message to an agent elsewhere, and what the outbox did with it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RemoteDelivery {
    /// The message (`amg_…`).
    pub message_id: String,
    /// Who sent it.
    pub sender: String,
    /// Who it is for.
    pub remote_agent: RemoteAgent,
    /// Where it stands in the outbox.
    pub state: RemoteDeliveryState,
    /// The task the agent elsewhere made of it, once accepted.
    pub remote_task_id: Option<String>,
    /// When the outbox tries next, while pending or sent (RFC 3339).
    pub next_attempt_at: Option<String>,
    /// Why the latest attempt failed.
    pub last_error: Option<String>,
    /// Every attempt, oldest first.
    pub attempts: Vec<RemoteAttempt>,
    /// When it was sent (RFC 3339).
    pub created_at: String,
}

/// An agent's messages to agents elsewhere, newest first.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RemoteDeliveryList {
    /// The page's deliveries.
    pub deliveries: Vec<RemoteDelivery>,
    /// Pass as `cursor` for the next page; absent on the last.
    pub next_cursor: Option<String>,
}

/// What an agent elsewhere pushes when a task changes: the task or its update,
/// in its A2A version's shape. The node does not read it (it asks the agent
/// itself); only the `X-A2A-Notification-Token` header counts.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct TaskPush {
    /// Whatever the push carries.
    #[serde(flatten)]
    pub pushed: serde_json::Map<String, serde_json::Value>,
}
