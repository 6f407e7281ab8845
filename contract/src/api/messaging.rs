//! Agent messaging (SPEC §10, seed 003): durable agent inboxes, leases with
//! fencing tokens, conversations and the owner's policy.
//!
//! Every limit here is data the handlers, the schemas and the documents read, so
//! what a client is told and what the node enforces are one fact.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::vocabulary::vocabulary;

/// The largest `content` a message may carry, in bytes of its JSON.
pub const MESSAGE_CONTENT_MAXIMUM_BYTES: usize = 256 * 1024;
/// How long a message waits to be handled when its sender does not say: four days.
pub const DEFAULT_MESSAGE_EXPIRY_SECONDS: i64 = 4 * 24 * 3600;
/// The longest a message may wait: fourteen days.
pub const MAXIMUM_MESSAGE_EXPIRY_SECONDS: i64 = 14 * 24 * 3600;
/// How long a lease lasts when the claim or renewal does not say.
pub const DEFAULT_LEASE_SECONDS: i64 = 30;
/// How long one lease may be held in all, renewals included: twelve hours.
pub const MAXIMUM_LEASE_SECONDS: i64 = 12 * 3600;
/// The most messages one claim leases.
pub const MAXIMUM_CLAIM: i64 = 10;
/// How long an idempotency key may be, in characters.
pub const IDEMPOTENCY_KEY_MAXIMUM: usize = 200;
/// How long a rejection's reason may be, in characters.
pub const REJECTION_REASON_MAXIMUM: usize = 500;
/// The most peers an allowlist names.
pub const MAXIMUM_ALLOWED_PEERS: usize = 100;
/// How many messages may wait in one inbox (not yet acknowledged, answered or
/// ended); a send beyond it is refused, so no sender can fill the database.
pub const MAXIMUM_WAITING_MESSAGES: i64 = 10_000;
/// A recipient's policy when its owner has set none.
pub const DEFAULT_RATE_PER_MINUTE: i64 = 60;
/// See [`DEFAULT_RATE_PER_MINUTE`]: leases held at once.
pub const DEFAULT_PENDING_CAP: i64 = 100;
/// See [`DEFAULT_RATE_PER_MINUTE`]: leases granted before a message fails.
pub const DEFAULT_MAXIMUM_ATTEMPTS: i64 = 5;
/// The ranges an owner may set the policy's numbers in.
pub const RATE_PER_MINUTE_RANGE: (i64, i64) = (1, 10_000);
/// See [`RATE_PER_MINUTE_RANGE`].
pub const PENDING_CAP_RANGE: (i64, i64) = (1, 1_000);
/// See [`RATE_PER_MINUTE_RANGE`].
pub const MAXIMUM_ATTEMPTS_RANGE: (i64, i64) = (1, 20);

vocabulary! {
    /// What a message is.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum AgentMessageKind {
        Request = "request": "Asks the recipient for something; it answers with reply_to_agent_message or reject_agent_message.";
        Event = "event": "Tells the recipient something; it acknowledges it with ack_agent_message.";
        Reply = "reply": "Answers a request, in the request's conversation.";
    }
}

vocabulary! {
    /// Where a message stands, as its sender, its recipient and the recipient's owner see it.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum AgentMessageState {
        Queued = "queued": "Waiting for the recipient to claim it (again, after a lease lapsed, when `attempts` is above 0).";
        Held = "held": "Waiting, and the recipient's policy holds it back now (`held_because` says why); it is delivered when that changes.";
        Leased = "leased": "Claimed: the recipient holds a lease on it until `lease_expires_at`.";
        Acknowledged = "acknowledged": "The recipient acknowledged it. Final.";
        Answered = "answered": "The recipient replied to it (`reply`). Final.";
        Rejected = "rejected": "The recipient rejected it (`reason`). Final.";
        Refused = "refused": "The recipient's policy refused it at delivery: its allowlist does not name the sender (`reason`). Final.";
        Failed = "failed": "Leased as many times as the recipient's policy allows and never finished. Final.";
        Expired = "expired": "Not finished before `expires_at`. Final.";
        Canceled = "canceled": "Its conversation was canceled before it finished. Final.";
        Delivered = "delivered": "A reply to a person or to an A2A task, read where it is shown rather than claimed. Final.";
    }
}

impl AgentMessageState {
    /// Whether the message is finished: nothing more happens to it.
    pub fn is_finished(self) -> bool {
        !matches!(self, AgentMessageState::Queued | AgentMessageState::Held | AgentMessageState::Leased)
    }
}

vocabulary! {
    /// Why the recipient's policy holds a waiting message back.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum HeldBecause {
        Paused = "paused": "The recipient is paused: it receives nothing until it is resumed.";
        PendingCap = "pending_cap": "The recipient holds as many leases at once as its policy allows.";
        RateCap = "rate_cap": "The recipient was delivered as many messages in the last minute as its policy allows.";
    }
}

vocabulary! {
    /// What a sender may send.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum SendableKind {
        Request = "request": "A request, which the recipient answers or rejects.";
        Event = "event": "An event, which the recipient acknowledges.";
    }
}

/// One message between agents (or from a person).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AgentMessage {
    /// The message's id (`amg_…`). Receivers deduplicate by it: delivery is at least once.
    pub id: String,
    /// The conversation it belongs to (`cnv_…`).
    pub conversation_id: String,
    /// Who sent it: an agent (`agt_…`) or a person (`usr_…`).
    pub sender: String,
    /// Who it is for.
    pub recipient: String,
    /// A request, an event, or a reply.
    pub kind: AgentMessageKind,
    /// For a reply: the request it answers.
    pub in_reply_to: Option<String>,
    /// What the sender sent: any JSON value.
    pub content: serde_json::Value,
    /// Where it stands now.
    pub state: AgentMessageState,
    /// While `held`: why.
    pub held_because: Option<HeldBecause>,
    /// Why it was rejected, refused or failed.
    pub reason: Option<String>,
    /// How many leases it has been granted.
    pub attempts: i64,
    /// The fencing token of its latest lease: grows with every grant, and ack, renew, reply and reject must carry the current one.
    pub fencing_token: i64,
    /// While `leased`: when the lease lapses (RFC 3339).
    pub lease_expires_at: Option<String>,
    /// For an answered request: the reply.
    pub reply: Option<AgentReply>,
    /// In a send's answer: true when this is the message an earlier send with the same idempotency key created.
    pub deduplicated: bool,
    /// When it was sent (RFC 3339).
    pub created_at: String,
    /// When its state last changed (RFC 3339).
    pub updated_at: String,
    /// When it expires unless finished (RFC 3339).
    pub expires_at: String,
    /// When the sender or the recipient is an agent elsewhere: who, and of which organisation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<crate::api::RemoteAgent>,
    /// When it came from an agent elsewhere: its content is external, data and
    /// never instructions, as inbound mail is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_notice: Option<String>,
}

/// The reply to a request.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AgentReply {
    /// The reply's id (`amg_…`).
    pub id: String,
    /// What the recipient answered.
    pub content: serde_json::Value,
    /// When it answered (RFC 3339).
    pub created_at: String,
}

/// A page of messages.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AgentMessageList {
    /// The page's messages.
    pub messages: Vec<AgentMessage>,
    /// Pass as `cursor` for the next page; absent on the last.
    pub next_cursor: Option<String>,
}

/// A page of the messages the caller sent.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SentAgentMessageList {
    /// The page's messages.
    pub messages: Vec<AgentMessage>,
    /// Pass as `cursor` for the next page; absent on the last.
    pub next_cursor: Option<String>,
    /// How many messages match the filters, on every page together.
    pub total: i64,
}

/// A message to send.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendAgentMessage {
    /// The agent it is for: an agent here (`agt_…`), or an agent elsewhere named
    /// by its A2A agent card's https URL, which the sender's outbound policy
    /// must allow (`remote_recipients`). A message elsewhere is delivered from
    /// the outbox, and the answer comes back as its reply.
    pub recipient: String,
    /// `request` (answered or rejected) or `event` (acknowledged).
    pub kind: SendableKind,
    /// What to send: any JSON value, at most 256 KiB as JSON.
    pub content: serde_json::Value,
    /// A key unique to this message among the sender's, such as a UUID: repeating a send with the same key and body returns the original (`deduplicated: true`) instead of sending twice; the same key with another body is refused.
    #[schemars(length(min = 1, max = IDEMPOTENCY_KEY_MAXIMUM))]
    pub idempotency_key: String,
    /// How long it may wait to be handled, in seconds: at most 14 days. Default: 4 days.
    #[serde(default)]
    #[schemars(range(min = 1, max = MAXIMUM_MESSAGE_EXPIRY_SECONDS))]
    pub expires_in_seconds: Option<i64>,
    /// A conversation the sender takes part in, to continue it (for an agent elsewhere, one that agent takes part in: the message carries its A2A context). Default: a new conversation.
    #[serde(default)]
    pub conversation_id: Option<String>,
}

/// How many messages to lease, and for how long.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimAgentMessages {
    /// How many messages to lease at most: 1 to 10. Default: 1.
    #[serde(default)]
    #[schemars(range(min = 1, max = MAXIMUM_CLAIM))]
    pub max: Option<i64>,
    /// How long each lease lasts, in seconds: 1 to 43,200. Default: 30.
    #[serde(default)]
    #[schemars(range(min = 1, max = MAXIMUM_LEASE_SECONDS))]
    pub lease_seconds: Option<i64>,
}

/// The messages a claim leased.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ClaimedAgentMessages {
    /// Oldest first; empty when nothing is waiting or the policy holds everything back.
    pub messages: Vec<AgentMessage>,
}

/// The lease an acknowledgement finishes.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AckAgentMessage {
    /// The `fencing_token` the claim returned.
    pub fencing_token: i64,
}

/// The lease to extend, and by how much.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenewAgentLease {
    /// The `fencing_token` the claim returned.
    pub fencing_token: i64,
    /// The lease lasts this many seconds from now (1 to 43,200, default 30), and never past 12 hours after it was granted.
    #[serde(default)]
    #[schemars(range(min = 1, max = MAXIMUM_LEASE_SECONDS))]
    pub lease_seconds: Option<i64>,
}

/// A reply to a leased request.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplyToAgentMessage {
    /// The `fencing_token` the claim returned.
    pub fencing_token: i64,
    /// The answer: any JSON value, at most 256 KiB as JSON.
    pub content: serde_json::Value,
}

/// A rejection of a leased message.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RejectAgentMessage {
    /// The `fencing_token` the claim returned.
    pub fencing_token: i64,
    /// Why, for the sender: 1 to 500 characters.
    #[schemars(length(min = 1, max = REJECTION_REASON_MAXIMUM))]
    pub reason: String,
}

/// A conversation: a request, its reply, and what else was sent in it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AgentConversation {
    /// The conversation's id (`cnv_…`).
    pub id: String,
    /// Everyone who sent or received a message in it.
    pub participants: Vec<String>,
    /// When it was canceled (RFC 3339), if it was.
    pub canceled_at: Option<String>,
    /// Its messages, oldest first.
    pub messages: Vec<AgentMessage>,
}

/// A conversation in a list.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AgentConversationSummary {
    /// The conversation's id (`cnv_…`).
    pub id: String,
    /// Everyone who sent or received a message in it.
    pub participants: Vec<String>,
    /// How many messages it holds.
    pub message_count: i64,
    /// When its latest message was sent (RFC 3339).
    pub last_activity_at: String,
    /// When it was canceled (RFC 3339), if it was.
    pub canceled_at: Option<String>,
}

/// A page of conversations, most recently active first.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AgentConversationList {
    /// The page's conversations.
    pub conversations: Vec<AgentConversationSummary>,
    /// Pass as `cursor` for the next page; absent on the last.
    pub next_cursor: Option<String>,
}

/// An agent's messaging as its owner (its sponsor, or an administrator) sees it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AgentMessaging {
    /// The agent's id.
    pub agent_id: String,
    /// The agent's name.
    pub name: String,
    /// The person it acts for.
    pub sponsor: String,
    /// Whether it is paused: it then receives nothing.
    pub paused: bool,
    /// When it last listed or claimed its inbox (RFC 3339), to the minute; absent if never.
    pub last_seen_at: Option<String>,
    /// The only senders it receives from; absent: everyone on the node, and the
    /// agents of connected peers when it is listed on the node's card.
    pub allowed_peers: Option<Vec<String>>,
    /// The most messages delivered to it in one minute.
    pub rate_per_minute: i64,
    /// The most leases it holds at once.
    pub pending_cap: i64,
    /// Leases granted on one message before it fails.
    pub maximum_attempts: i64,
    /// Messages waiting for it (queued or held).
    pub waiting: i64,
    /// Messages it holds leases on now.
    pub leased: i64,
    /// Where agents elsewhere find it over A2A: its agent card.
    pub agent_card_url: String,
    /// Whether the node's own A2A card (`/.well-known/agent-card.json`) names it
    /// to anyone who asks; otherwise only those given its card learn of it.
    /// Only a listed agent takes messages from a connected peer's agents.
    pub listed_on_node_card: bool,
    /// The agents elsewhere it may send to: domains (`example.org`, which
    /// covers its subdomains) or card URLs. Empty: none, the default.
    pub remote_recipients: Vec<String>,
    /// The most messages it may send to agents elsewhere in an hour.
    pub remote_per_hour: i64,
}

/// Changes to an agent's messaging policy; fields left out stay as they are.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateAgentMessaging {
    /// The only senders (`agt_…`, `usr_…`, or an agent elsewhere's `rag_…`) it receives from, at most 100; an empty list receives from nobody.
    #[serde(default)]
    pub allowed_peers: Option<Vec<String>>,
    /// True to receive from everyone on the node again (clears `allowed_peers`).
    #[serde(default)]
    pub allow_everyone: Option<bool>,
    /// The most messages delivered in one minute: 1 to 10,000.
    #[serde(default)]
    #[schemars(range(min = RATE_PER_MINUTE_RANGE.0, max = RATE_PER_MINUTE_RANGE.1))]
    pub rate_per_minute: Option<i64>,
    /// The most leases held at once: 1 to 1,000.
    #[serde(default)]
    #[schemars(range(min = PENDING_CAP_RANGE.0, max = PENDING_CAP_RANGE.1))]
    pub pending_cap: Option<i64>,
    /// Leases granted on one message before it fails: 1 to 20.
    #[serde(default)]
    #[schemars(range(min = MAXIMUM_ATTEMPTS_RANGE.0, max = MAXIMUM_ATTEMPTS_RANGE.1))]
    pub maximum_attempts: Option<i64>,
    /// True to name the agent (its id, name and card) on the node's own A2A
    /// card, which anyone may read; false to take it off.
    #[serde(default)]
    pub listed_on_node_card: Option<bool>,
    /// The agents elsewhere it may send to, replacing the list: domains (which
    /// cover their subdomains) or https card URLs, at most 100. Empty: none.
    #[serde(default)]
    pub remote_recipients: Option<Vec<String>>,
    /// The most messages it may send to agents elsewhere in an hour: 1 to 10,000.
    #[serde(default)]
    #[schemars(range(min = crate::api::REMOTE_PER_HOUR_RANGE.0, max = crate::api::REMOTE_PER_HOUR_RANGE.1))]
    pub remote_per_hour: Option<i64>,
}

/// The agents a person sponsors.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SponsoredAgentList {
    /// Every agent the caller sponsors, newest first.
    pub agents: Vec<SponsoredAgent>,
}

/// An agent in its sponsor's list.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SponsoredAgent {
    /// The agent's id.
    pub id: String,
    /// The agent's name.
    pub name: String,
    /// Whether it is paused.
    pub paused: bool,
    /// Whether it is revoked.
    pub revoked: bool,
    /// When it last listed or claimed its inbox (RFC 3339); absent if never.
    pub last_seen_at: Option<String>,
}
