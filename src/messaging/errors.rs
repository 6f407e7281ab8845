//! What can go wrong in agent messaging, each with the refusal that says so:
//! whoever adds a variant sees the words it will carry.

use mailroom_contract::api::{
    IDEMPOTENCY_KEY_MAXIMUM, MAXIMUM_WAITING_MESSAGES, MESSAGE_CONTENT_MAXIMUM_BYTES, REJECTION_REASON_MAXIMUM,
};

use crate::core::refusal::Refusal;

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
    /// The sender's outbound policy does not reach the agent elsewhere.
    RemoteNotAllowed { card_url: String, domain: String },
    /// The sender sent as many messages elsewhere this hour as its cap.
    RemoteHourlyCap { cap: i64 },
    /// A conversation continued with an agent elsewhere that takes no part in it.
    RemoteInAnotherConversation,
    /// A peer's node called without naming its agent that sends.
    PeerNamesNoSender,
    /// An agent elsewhere messages only agents here, never people.
    PeersMessageAgents,
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
                "An allowlist names the agents (`agt_…`), people (`usr_…`) and agents elsewhere (`rag_…`) the agent receives from.",
                "Send ids from the agents and people lists.",
            ),
            MessagingError::OnlyParticipantsCancel => Refusal::new(
                403,
                "not_a_participant",
                "Only those taking part in a conversation cancel it.",
                "You read this conversation as the sponsor of an agent in it or as an administrator; canceling it is its participants' call.",
                "Ask a participant to cancel it, or pause the agent (pause_agent) to hold what is sent to it.",
            ),
            MessagingError::RemoteNotAllowed { card_url, domain } => Refusal::new(
                403,
                "remote_not_allowed",
                format!("`recipient` ({card_url}) is outside the sender's outbound policy."),
                format!(
                    "The rule `remote_recipients` names neither {domain}, a domain above it, nor this card: an agent reaches agents elsewhere only where its owner allowed (none by default)."
                ),
                "Ask the agent's owner to add the domain or the card to its `remote_recipients` (update_agent_messaging).",
            ),
            MessagingError::RemoteHourlyCap { cap } => Refusal::new(
                429,
                "remote_hourly_cap",
                "The sender has sent as many messages elsewhere this hour as its policy allows.",
                format!("The rule `remote_per_hour` lets it send {cap} messages to agents elsewhere an hour."),
                "Wait for the hour to pass, or ask its owner to raise `remote_per_hour`.",
            )
            .retry_after(60),
            MessagingError::RemoteInAnotherConversation => Refusal::new(
                409,
                "conflict",
                "`conversation_id` is a conversation without this agent elsewhere.",
                "A conversation with an agent elsewhere is continued with that agent alone: its next message carries the agent's own context.",
                "Leave out `conversation_id` to start a conversation with this agent, or name one it takes part in.",
            ),
            MessagingError::PeerNamesNoSender => Refusal::new(
                400,
                "peer_names_no_sender",
                "The call does not say which of your agents sends it.",
                "A connected organisation's node speaks for one of its agents at a time, named by the `Mailroom-Sender` header: that agent's card URL.",
                "Send the `Mailroom-Sender` header with the card URL of your agent that sends.",
            ),
            MessagingError::PeersMessageAgents => Refusal::new(
                404,
                "not_found",
                "`recipient` names no agent here that takes messages from elsewhere.",
                "A connected organisation's agents reach only the agents here whose owners listed them on the node's card.",
                "Message an agent the node's card (`/.well-known/agent-card.json`) lists.",
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
