//! Agent messaging (SPEC §10, seed 003): every agent's durable inbox, the
//! conversations messages belong to, and the policy an agent's owner sets for
//! what is delivered to it.
//!
//! One file per concern: `send` (a message stored before the answer, once per
//! idempotency key), `inbox` (an agent's own: list, claim as fenced leases,
//! acknowledge, renew, reply, reject), `conversations` (what the participants
//! and the owners of participating agents read, and cancel), `owner` (an
//! agent's policy, connection and inbox as its sponsor or an administrator
//! sees them) and `sweep` (what the scheduled run ends). This file holds what
//! can go wrong and its refusals, and the one reading of a stored message: its
//! columns, and the state it is presented in, judged against the clock.
//!
//! State lives in the message's own row, with its lease and fencing token, so
//! every operation is one guarded statement: a write by a holder whose lease
//! lapsed or whose token is stale matches no row, and the commit is refused.
//! A lapsed lease is not rewritten when it lapses; every reader judges it
//! against the clock (`present`), and the next claim or sweep records it.

pub mod conversations;
pub mod inbox;
pub mod owner;
pub mod send;
pub mod sweep;

use mailroom_contract::api::{
    AgentMessage, AgentMessageKind, AgentMessageState, AgentReply, DEFAULT_MAXIMUM_ATTEMPTS, DEFAULT_PENDING_CAP,
    DEFAULT_RATE_PER_MINUTE, HeldBecause, IDEMPOTENCY_KEY_MAXIMUM, MAXIMUM_WAITING_MESSAGES,
    MESSAGE_CONTENT_MAXIMUM_BYTES, REJECTION_REASON_MAXIMUM,
};
use serde::Deserialize;

use crate::core::caller::Caller;
use crate::core::refusal::Refusal;
use crate::core::time::rfc3339;

pub use conversations::{cancel_conversation, get_conversation, get_message, list_conversations, list_sent};
pub use inbox::{acknowledge, claim, list_inbox, reject, renew, reply};
pub use owner::{
    ListedAgent, get_messaging, list_owned_inbox, list_sponsored_agents, listed_on_node_card, update_messaging,
};
pub use send::send;
pub use sweep::{SweepReport, sweep};

/// What can be wrong with a message, a lease, a conversation or a policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MessagingError {
    /// Only an agent has an inbox.
    PeopleHaveNoInbox,
    /// No live agent is the recipient.
    NoSuchRecipient { id: String },
    /// No message the caller may see has this id.
    NoSuchMessage { id: String },
    /// No conversation the caller may see has this id.
    NoSuchConversation { id: String },
    /// `agent` names an agent the caller neither is nor sponsors.
    NoSuchAgent { id: String },
    /// The content is not within the size the node keeps.
    ContentTooLarge { bytes: usize },
    /// An idempotency key that is empty, too long or not one line.
    InvalidIdempotencyKey,
    /// The key was used before with another body.
    IdempotencyConflict { original: String },
    /// A number outside its range.
    OutOfRange { field: &'static str, minimum: i64, maximum: i64 },
    /// A reason that is empty, too long or not one line.
    InvalidReason,
    /// The lease the call names is not the live one.
    StaleLease { id: String, why: &'static str },
    /// An event is acknowledged, not answered.
    EventsAreAcknowledged,
    /// The conversation is canceled.
    ConversationCanceled { id: String },
    /// The recipient's inbox is full.
    InboxFull,
    /// An allowlist entry that names no agent or person.
    InvalidPeer { peer: String },
    /// The agent is revoked.
    AgentRevoked,
    /// An owner who reads a conversation is not one of its participants.
    OnlyParticipantsCancel,
}

impl From<MessagingError> for Refusal {
    fn from(error: MessagingError) -> Refusal {
        match error {
            MessagingError::PeopleHaveNoInbox => Refusal::new(
                403,
                "people_have_no_inbox",
                "Only an agent has an inbox to list or claim from.",
                "People send messages and read their conversations; agents receive them.",
                "Read your conversations with GET /api/agent-conversations, or call this with an agent's credential.",
            ),
            MessagingError::NoSuchRecipient { id } => Refusal::new(
                404,
                "not_found",
                format!("There is no live agent {id} on this node."),
                "Messages are sent to agents on this node that are not revoked.",
                "Check `recipient` against the agent's id (`agt_…`); agents elsewhere are reached through their own A2A endpoints.",
            ),
            MessagingError::NoSuchMessage { id } => Refusal::not_found("agent message", &id),
            MessagingError::NoSuchConversation { id } => Refusal::not_found("conversation", &id),
            MessagingError::NoSuchAgent { id } => Refusal::not_found("agent", &id),
            MessagingError::ContentTooLarge { bytes } => Refusal::new(
                400,
                "content_too_large",
                format!("`content` is {bytes} bytes as JSON."),
                format!("A message carries at most {MESSAGE_CONTENT_MAXIMUM_BYTES} bytes of content."),
                "Send less, or send a reference (an address, an id) to where the rest is.",
            ),
            MessagingError::InvalidIdempotencyKey => Refusal::new(
                400,
                "invalid_idempotency_key",
                "`idempotency_key` cannot be used.",
                format!("An idempotency key is one line of 1 to {IDEMPOTENCY_KEY_MAXIMUM} characters."),
                "Send a fresh key for every message, such as a UUID, and the same key when repeating a send.",
            ),
            MessagingError::IdempotencyConflict { original } => Refusal::new(
                409,
                "idempotency_key_reused",
                format!("This idempotency key already sent {original}, with another body."),
                "A key names one message: repeating it with the same body returns that message, and another body would be a second message under the same name.",
                "Send this message with a new key, or repeat the original body to read back the original.",
            ),
            MessagingError::OutOfRange { field, minimum, maximum } => Refusal::new(
                400,
                "out_of_range",
                format!("`{field}` is out of range."),
                format!("`{field}` is a whole number from {minimum} to {maximum}."),
                format!("Send `{field}` between {minimum} and {maximum}, or leave it out for the default."),
            ),
            MessagingError::InvalidReason => Refusal::new(
                400,
                "invalid_reason",
                "`reason` cannot be used.",
                format!("A reason is one line of 1 to {REJECTION_REASON_MAXIMUM} characters, for the sender to read."),
                "Say in a line why the message is rejected.",
            ),
            MessagingError::StaleLease { id, why } => Refusal::new(
                409,
                "stale_lease",
                format!("The lease on {id} is not live: {why}."),
                "Only the holder of a message's live lease, with its current fencing token, finishes it; a lapsed lease may have been granted to another claim.",
                "Claim messages again with claim_agent_messages and work on what the claim returns, with its fencing token.",
            ),
            MessagingError::EventsAreAcknowledged => Refusal::new(
                409,
                "event_not_answerable",
                "This message is an event, which is acknowledged rather than answered.",
                "Only a request has a reply.",
                "Acknowledge it with ack_agent_message, or send a new message to its sender.",
            ),
            MessagingError::ConversationCanceled { id } => Refusal::new(
                409,
                "conversation_canceled",
                format!("The conversation {id} is canceled."),
                "Nothing more is sent in a canceled conversation.",
                "Leave out `conversation_id` to start a new one.",
            ),
            MessagingError::InboxFull => Refusal::new(
                409,
                "inbox_full",
                format!("The recipient already has {MAXIMUM_WAITING_MESSAGES} messages waiting."),
                format!(
                    "An inbox holds at most {MAXIMUM_WAITING_MESSAGES} unfinished messages, so no sender can fill the node."
                ),
                "Try again once the recipient has worked through its inbox; its owner can see it.",
            ),
            MessagingError::InvalidPeer { peer } => Refusal::new(
                400,
                "invalid_peer",
                format!("`allowed_peers` names {peer}, which is not an agent's or a person's id."),
                "An allowlist names the agents (`agt_…`) and people (`usr_…`) the agent receives from.",
                "Send ids from the agents and people lists.",
            ),
            MessagingError::OnlyParticipantsCancel => Refusal::new(
                403,
                "not_a_participant",
                "Only those taking part in a conversation cancel it.",
                "You read this conversation as the sponsor of an agent in it or as an administrator; canceling it is its participants' call.",
                "Ask a participant to cancel it, or pause the agent (pause_agent) to hold what is sent to it.",
            ),
            MessagingError::AgentRevoked => Refusal::new(
                409,
                "agent_revoked",
                "This agent is revoked.",
                "A revoked agent receives nothing, for good.",
                "Mint a new agent if one should receive messages.",
            ),
        }
    }
}

/// The columns every reading of a message selects, from `agent_messages m`
/// joined as [`MESSAGE_FROM`] has it. `?1` is the time now: the recipient's
/// caps are judged at it for a waiting message's `held_because`.
pub(crate) const MESSAGE_COLUMNS: &str = "m.id, m.conversation_id, m.sender_id, m.recipient_id, m.kind, \
    m.in_reply_to, m.content, m.state, m.reason, m.attempts, m.fencing_token, m.lease_granted_at, m.lease_expires_at, \
    m.created_at, m.updated_at, m.expires_at, r.id AS reply_id, r.content AS reply_content, \
    r.created_at AS reply_created_at";

/// The tables [`MESSAGE_COLUMNS`] reads from.
pub(crate) const MESSAGE_FROM: &str = "FROM agent_messages m LEFT JOIN agent_messages r ON r.id = m.reply_id";

/// Why a waiting message is held back now, as SQL over `m` (`?1` the time):
/// the recipient is paused, holds as many live leases as its cap, or was
/// delivered its rate in the last minute. NULL for a message not waiting.
pub(crate) fn held_because_sql() -> String {
    format!(
        "{} AS held_because, {} AS maximum_attempts",
        held_because_expression(),
        policy_sql(PolicyNumber::MaximumAttempts, "m.recipient_id"),
    )
}

/// [`held_because_sql`]'s reason, as one expression.
fn held_because_expression() -> String {
    format!(
        "CASE WHEN m.state = 'queued' OR (m.state = 'leased' AND m.lease_expires_at <= ?1) THEN \
           CASE WHEN (SELECT paused_at FROM agents WHERE id = m.recipient_id) IS NOT NULL THEN 'paused' \
                WHEN (SELECT COUNT(*) FROM agent_messages f WHERE f.recipient_id = m.recipient_id \
                        AND f.state = 'leased' AND f.lease_expires_at > ?1) >= {pending} THEN 'pending_cap' \
                WHEN (SELECT COUNT(*) FROM agent_messages f WHERE f.recipient_id = m.recipient_id \
                        AND f.lease_granted_at > ?1 - 60000) >= {rate} THEN 'rate_cap' END END",
        pending = policy_sql(PolicyNumber::PendingCap, "m.recipient_id"),
        rate = policy_sql(PolicyNumber::RatePerMinute, "m.recipient_id"),
    )
}

/// The state a message of `m` is presented in at `?1`, as one SQL expression,
/// for filtering by it: [`MessageRow::state_at`] in SQL, decided in the same
/// order (expired, leased, failed, held or queued, as stored), and held to it
/// by a test that reads every state both ways.
pub(crate) fn state_now_sql() -> String {
    format!(
        "CASE WHEN m.state IN ('queued', 'leased') AND m.expires_at <= ?1 THEN 'expired' \
              WHEN m.state = 'leased' AND m.lease_expires_at > ?1 THEN 'leased' \
              WHEN m.state = 'leased' AND m.attempts >= {attempts} THEN 'failed' \
              WHEN m.state IN ('queued', 'leased') THEN CASE WHEN ({held}) IS NULL THEN 'queued' ELSE 'held' END \
              ELSE m.state END",
        attempts = policy_sql(PolicyNumber::MaximumAttempts, "m.recipient_id"),
        held = held_because_expression(),
    )
}

/// The numbers of an agent's delivery policy: each its column and its default,
/// stated once for every statement that reads one.
#[derive(Clone, Copy, Debug)]
pub(crate) enum PolicyNumber {
    RatePerMinute,
    PendingCap,
    MaximumAttempts,
}

impl PolicyNumber {
    fn column_and_default(self) -> (&'static str, i64) {
        match self {
            PolicyNumber::RatePerMinute => ("rate_per_minute", DEFAULT_RATE_PER_MINUTE),
            PolicyNumber::PendingCap => ("pending_cap", DEFAULT_PENDING_CAP),
            PolicyNumber::MaximumAttempts => ("maximum_attempts", DEFAULT_MAXIMUM_ATTEMPTS),
        }
    }
}

/// One number of the policy of the agent `agent` (an SQL expression) as SQL:
/// its owner's choice, or the default.
pub(crate) fn policy_sql(number: PolicyNumber, agent: &str) -> String {
    let (column, default) = number.column_and_default();
    format!("COALESCE((SELECT {column} FROM agent_messaging_policies WHERE agent_id = {agent}), {default})")
}

/// A message as stored, with its reply and what its recipient's policy says now.
#[derive(Clone, Debug, Default, Deserialize)]
pub(crate) struct MessageRow {
    pub id: String,
    pub conversation_id: String,
    pub sender_id: String,
    pub recipient_id: String,
    pub kind: String,
    pub in_reply_to: Option<String>,
    pub content: String,
    pub state: String,
    pub reason: Option<String>,
    pub attempts: i64,
    pub fencing_token: i64,
    #[serde(default)]
    pub lease_granted_at: Option<i64>,
    pub lease_expires_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    pub expires_at: i64,
    #[serde(default)]
    pub reply_id: Option<String>,
    #[serde(default)]
    pub reply_content: Option<String>,
    #[serde(default)]
    pub reply_created_at: Option<i64>,
    #[serde(default)]
    pub held_because: Option<String>,
    #[serde(default)]
    pub maximum_attempts: Option<i64>,
}

impl MessageRow {
    /// Where the message stands at `now_ms`: a lapsed lease is waiting again,
    /// or failed once it had its attempts; an unfinished message past its
    /// expiry has expired, whether or not the sweep has recorded it yet.
    pub fn state_at(&self, now_ms: i64) -> (AgentMessageState, Option<HeldBecause>) {
        let stored = AgentMessageState::parse(&self.state).unwrap_or(AgentMessageState::Failed);
        let unfinished = matches!(stored, AgentMessageState::Queued | AgentMessageState::Leased);
        if unfinished && self.expires_at <= now_ms {
            return (AgentMessageState::Expired, None);
        }
        let lease_live = self.lease_expires_at.is_some_and(|lapses| lapses > now_ms);
        if stored == AgentMessageState::Leased && lease_live {
            return (AgentMessageState::Leased, None);
        }
        let attempts_left = self.attempts < self.maximum_attempts.unwrap_or(DEFAULT_MAXIMUM_ATTEMPTS);
        if stored == AgentMessageState::Leased && !attempts_left {
            return (AgentMessageState::Failed, None);
        }
        if unfinished {
            let held = self.held_because.as_deref().and_then(HeldBecause::parse);
            return (if held.is_some() { AgentMessageState::Held } else { AgentMessageState::Queued }, held);
        }
        (stored, None)
    }

    /// The message as the contract presents it, at `now_ms`.
    pub fn present(&self, now_ms: i64) -> AgentMessage {
        let (state, held_because) = self.state_at(now_ms);
        let reason = match (state, &self.reason) {
            (_, Some(reason)) => Some(reason.clone()),
            (AgentMessageState::Failed, None) => Some(format!("leased {} times and never finished", self.attempts)),
            _ => None,
        };
        AgentMessage {
            id: self.id.clone(),
            conversation_id: self.conversation_id.clone(),
            sender: self.sender_id.clone(),
            recipient: self.recipient_id.clone(),
            kind: AgentMessageKind::parse(&self.kind).unwrap_or(AgentMessageKind::Event),
            in_reply_to: self.in_reply_to.clone(),
            content: json_of(&self.content),
            state,
            held_because,
            reason,
            attempts: self.attempts,
            fencing_token: self.fencing_token,
            lease_expires_at: (state == AgentMessageState::Leased)
                .then_some(self.lease_expires_at)
                .flatten()
                .map(rfc3339),
            reply: match (&self.reply_id, &self.reply_content, self.reply_created_at) {
                (Some(id), Some(content), Some(at)) => {
                    Some(AgentReply { id: id.clone(), content: json_of(content), created_at: rfc3339(at) })
                }
                _ => None,
            },
            deduplicated: false,
            created_at: rfc3339(self.created_at),
            updated_at: rfc3339(self.updated_at),
            expires_at: rfc3339(self.expires_at),
        }
    }
}

/// Stored content is JSON the node wrote itself; anything else reads as null
/// rather than failing the listing it is in.
fn json_of(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or(serde_json::Value::Null)
}

/// Content as stored: its JSON text, refused when larger than the node keeps.
pub(crate) fn content_text(content: &serde_json::Value) -> Result<String, MessagingError> {
    let text = content.to_string();
    if text.len() > MESSAGE_CONTENT_MAXIMUM_BYTES {
        return Err(MessagingError::ContentTooLarge { bytes: text.len() });
    }
    Ok(text)
}

/// A number the caller may leave out: the default, or the value when in range.
pub(crate) fn in_range(
    field: &'static str,
    value: Option<i64>,
    default: i64,
    (minimum, maximum): (i64, i64),
) -> Result<i64, MessagingError> {
    match value {
        None => Ok(default),
        Some(value) if (minimum..=maximum).contains(&value) => Ok(value),
        Some(_) => Err(MessagingError::OutOfRange { field, minimum, maximum }),
    }
}

/// The agent whose inbox an inbox call works on: the calling agent. A person
/// has none.
pub(crate) fn inbox_owner(caller: &Caller) -> Result<String, MessagingError> {
    match caller {
        Caller::Agent { agent_id, .. } => Ok(agent_id.clone()),
        _ => Err(MessagingError::PeopleHaveNoInbox),
    }
}

/// Who sends and reads as the caller: an agent or a person.
/// The routes are `Member`'s, so the caller is an agent or a person.
pub(crate) fn participant(caller: &Caller) -> Result<String, Refusal> {
    match caller {
        Caller::Agent { .. } | Caller::Person { .. } => {
            caller.actor_id().map(str::to_string).ok_or_else(Refusal::internal)
        }
        Caller::Stranger | Caller::Source { .. } => Err(Refusal::internal()),
    }
}
