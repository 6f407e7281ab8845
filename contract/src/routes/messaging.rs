//! Agent messaging: messages between agents, an agent's inbox and its leases,
//! conversations, and the owner plane a sponsor watches and sets.

use crate::api::{
    AckAgentMessage, AgentConversation, AgentConversationList, AgentMessage, AgentMessageList, AgentMessageState,
    AgentMessaging, ClaimAgentMessages, ClaimedAgentMessages, RejectAgentMessage, RenewAgentLease, ReplyToAgentMessage,
    SendAgentMessage, SendableKind, SentAgentMessageList, SponsoredAgentList, UpdateAgentMessaging,
};
use crate::route::Method::{Get, Patch, Post};
use crate::route::{Authority, Feature, Parameter, PathParameter, Refuses, Route, Tier};
use crate::route_id::RouteId;

use super::shared::{AGENTS_ARE_AN_ESCALATION_MAP, CURSOR, SPONSOR};

/// Why an agent's owner plane is not offered to machines.
const OWNER_PLANE: &str = "an agent's inbox, policy and connection are its owner's to watch and set: a person, signed in themselves, never a machine";

/// The refusals every route that acts on a lease shares.
const LEASE_REFUSALS: &[Refuses] = &[Refuses::Conflict(
    "The lease is stale: the fencing token is not the message's current one, the lease lapsed, or the message is no longer leased (acknowledged, answered, rejected, canceled, expired or failed).",
)];

pub(super) fn list_sponsored_agents() -> Route {
    Route::new(RouteId::ListSponsoredAgents, Get, "/api/me/agents", "list_sponsored_agents")
        .summary("List the agents I sponsor")
        .description("Lists the agents that act under the caller's authority, with whether each is paused and when it last looked at its inbox.")
        .response::<SponsoredAgentList>()
        .exception(Tier::Operator, AGENTS_ARE_AN_ESCALATION_MAP)
        .authority(Authority::Personal)
}

pub(super) fn send_agent_message() -> Route {
    Route::new(RouteId::SendAgentMessage, Post, "/api/agent-messages", "send_agent_message")
        .summary("Send a message to an agent")
        .description("Sends a request (which the recipient answers or rejects) or an event (which it acknowledges) to an agent on this node, in a new conversation or one the caller takes part in, or to an agent elsewhere named by its A2A card URL (within the sender's outbound policy; delivered by the node's outbox, its answer coming back as the reply). The message is stored before the 202 answers; it is delivered at least once, so give every message its own `idempotency_key`: repeating the call with the same key and body returns the original (`deduplicated: true`). The sender is always the caller. The recipient's policy applies when the message is delivered: follow it with get_agent_message (`state`, `held_because`, `reason`).")
        .request::<SendAgentMessage>()
        .response::<AgentMessage>()
        .accepted()
        .tier(Tier::Act)
        .feature(Feature::AgentNetwork)
        .refuses(const { &[
            Refuses::NotFound("No live agent is `recipient`, or the caller takes no part in `conversation_id`; for a connected organisation's node, no agent listed on the node's card is."),
            Refuses::Forbidden("For an agent elsewhere: the sender's outbound policy (`remote_recipients`) does not reach its card."),
            Refuses::Conflict("The idempotency key was used with another body, the conversation is canceled, the recipient's inbox holds as many waiting messages as the node keeps (`MAXIMUM_WAITING_MESSAGES`), or a message elsewhere names a conversation that agent takes no part in."),
            Refuses::TooManyAttempts("For an agent elsewhere: the sender sent as many messages elsewhere this hour as its `remote_per_hour`."),
        ] })
        .open_to_peers()
        .authority(Authority::Member)
}

pub(super) fn list_sent_agent_messages() -> Route {
    Route::new(RouteId::ListSentAgentMessages, Get, "/api/agent-messages", "list_sent_agent_messages")
        .summary("List messages I sent")
        .description("Lists the messages the caller sent, most recently changed first, with where each stands now and the reply to each answered request, and how many match in all (`total`).")
        .query_parameters(const { &[
            Parameter::text("recipient", "Only messages to this agent (`agt_…`)."),
            Parameter::one_of("kind", "Only messages of this kind.", SendableKind::NAMES),
            Parameter::text("conversation", "Only messages in this conversation (`cnv_…`)."),
            Parameter::some_of("state", "Only messages in one of these states now.", AgentMessageState::NAMES),
            Parameter::one_of("attempted", "Only messages delivered at least once (`true`) or never (`false`).", &["true", "false"]),
            Parameter::text("changed_since", "Only messages that changed at or after this moment (RFC 3339)."),
            Parameter::page_size("messages", 50, 100),
            CURSOR,
        ] })
        .response::<SentAgentMessageList>()
        .feature(Feature::AgentNetwork)
        .open_to_peers()
        .authority(Authority::Member)
}

pub(super) fn get_agent_message() -> Route {
    Route::new(RouteId::GetAgentMessage, Get, "/api/agent-messages/:agentMessageId", "get_agent_message")
        .summary("Show an agent message")
        .description("Returns a message the caller sent or received (or one to or from an agent the caller sponsors), with where it stands now and, for an answered request, its reply.")
        .path_parameters(&[PathParameter::AgentMessageId])
        .response::<AgentMessage>()
        .feature(Feature::AgentNetwork)
        .open_to_peers()
        .authority(Authority::Member)
}

pub(super) fn list_agent_inbox() -> Route {
    Route::new(RouteId::ListAgentInbox, Get, "/api/agent-inbox", "list_agent_inbox")
        .summary("List my inbox")
        .description("Lists the messages waiting for the calling agent or leased by it, oldest first, without claiming them. To work on messages, claim them with claim_agent_messages.")
        .query_parameters(const { &[
            Parameter::page_size("messages", 50, 100),
            CURSOR,
        ] })
        .response::<AgentMessageList>()
        .feature(Feature::AgentNetwork)
        .refuses(const { &[
            Refuses::Forbidden("The caller is a person: only an agent has an inbox."),
        ] })
        .authority(Authority::Member)
}

pub(super) fn claim_agent_messages() -> Route {
    Route::new(RouteId::ClaimAgentMessages, Post, "/api/agent-inbox/leases", "claim_agent_messages")
        .summary("Claim messages from my inbox")
        .description("Leases up to `max` of the calling agent's waiting messages, oldest first, for `lease_seconds` (30 by default). Each carries a `fencing_token` that grows with every grant: ack, renew, reply and reject must carry it, and a lapsed lease makes the message claimable again (by this agent, with a new token). After the recipient policy's number of attempts the message fails. Its policy may deliver fewer than asked (rate and lease caps); an empty list means nothing is deliverable now.")
        .request::<ClaimAgentMessages>()
        .response::<ClaimedAgentMessages>()
        .tier(Tier::Act)
        .feature(Feature::AgentNetwork)
        .refuses(const { &[
            Refuses::Forbidden("The caller is a person: only an agent has an inbox."),
        ] })
        .authority(Authority::Member)
}

pub(super) fn ack_agent_message() -> Route {
    Route::new(RouteId::AckAgentMessage, Post, "/api/agent-inbox/:agentMessageId/ack", "ack_agent_message")
        .summary("Acknowledge a claimed message")
        .description("Finishes a leased message: it is acknowledged and never delivered again. Needs the live lease's `fencing_token`; a stale one is refused, so a receiver whose lease lapsed learns that another may be working on it.")
        .path_parameters(&[PathParameter::AgentMessageId])
        .request::<AckAgentMessage>()
        .response::<AgentMessage>()
        .tier(Tier::Act)
        .feature(Feature::AgentNetwork)
        .refuses(LEASE_REFUSALS)
        .authority(Authority::Member)
}

pub(super) fn renew_agent_lease() -> Route {
    Route::new(RouteId::RenewAgentLease, Post, "/api/agent-inbox/:agentMessageId/renew", "renew_agent_lease")
        .summary("Extend a lease")
        .description("Extends the live lease on a message to `lease_seconds` from now (30 by default), never past 12 hours after it was granted. Needs the lease's `fencing_token`.")
        .path_parameters(&[PathParameter::AgentMessageId])
        .request::<RenewAgentLease>()
        .response::<AgentMessage>()
        .tier(Tier::Act)
        .feature(Feature::AgentNetwork)
        .refuses(LEASE_REFUSALS)
        .authority(Authority::Member)
}

pub(super) fn reply_to_agent_message() -> Route {
    Route::new(RouteId::ReplyToAgentMessage, Post, "/api/agent-inbox/:agentMessageId/reply", "reply_to_agent_message")
        .summary("Reply to a claimed request")
        .description("Answers a leased request with `content`: the request is answered, and the reply goes to its sender in the same conversation. Needs the live lease's `fencing_token`. Events are acknowledged, not answered.")
        .path_parameters(&[PathParameter::AgentMessageId])
        .request::<ReplyToAgentMessage>()
        .response::<AgentMessage>()
        .tier(Tier::Act)
        .feature(Feature::AgentNetwork)
        .refuses(const { &[
            Refuses::Conflict("The lease is stale (the fencing token is not the current one, the lease lapsed, or the message is no longer leased), or the message is an event, which is acknowledged rather than answered."),
        ] })
        .authority(Authority::Member)
}

pub(super) fn reject_agent_message() -> Route {
    Route::new(RouteId::RejectAgentMessage, Post, "/api/agent-inbox/:agentMessageId/reject", "reject_agent_message")
        .summary("Reject a claimed message")
        .description("Refuses a leased message with a `reason` its sender sees: it is rejected and never delivered again. Needs the live lease's `fencing_token`.")
        .path_parameters(&[PathParameter::AgentMessageId])
        .request::<RejectAgentMessage>()
        .response::<AgentMessage>()
        .tier(Tier::Act)
        .feature(Feature::AgentNetwork)
        .refuses(LEASE_REFUSALS)
        .authority(Authority::Member)
}

pub(super) fn list_agent_conversations() -> Route {
    Route::new(RouteId::ListAgentConversations, Get, "/api/agent-conversations", "list_agent_conversations")
        .summary("List my conversations")
        .description("Lists the conversations the caller takes part in (or, with `agent`, those of an agent the caller sponsors), most recently active first.")
        .query_parameters(const { &[
            Parameter::text("agent", "List this agent's conversations instead (`agt_…`): the caller's own id, or an agent it sponsors."),
            Parameter::page_size("conversations", 50, 100),
            CURSOR,
        ] })
        .response::<AgentConversationList>()
        .feature(Feature::AgentNetwork)
        .refuses(const { &[
            Refuses::NotFound("`agent` is not the caller nor an agent it sponsors."),
        ] })
        .authority(Authority::Member)
}

pub(super) fn get_agent_conversation() -> Route {
    Route::new(RouteId::GetAgentConversation, Get, "/api/agent-conversations/:conversationId", "get_agent_conversation")
        .summary("Show a conversation")
        .description("Returns a conversation the caller takes part in (or one of an agent the caller sponsors): every message in it, oldest first, with where each stands.")
        .path_parameters(&[PathParameter::ConversationId])
        .response::<AgentConversation>()
        .feature(Feature::AgentNetwork)
        .authority(Authority::Member)
}

pub(super) fn cancel_agent_conversation() -> Route {
    Route::new(RouteId::CancelAgentConversation, Post, "/api/agent-conversations/:conversationId/cancel", "cancel_agent_conversation")
        .summary("Cancel a conversation")
        .description("Cancels a conversation the caller takes part in: every message in it that is not finished becomes canceled (a lease on one is then stale), and nothing more can be sent in it. Finished messages stay as they ended.")
        .path_parameters(&[PathParameter::ConversationId])
        .response::<AgentConversation>()
        .tier(Tier::Act)
        .feature(Feature::AgentNetwork)
        .refuses(const { &[
            Refuses::Forbidden("The caller reads the conversation as an owner (the sponsor of an agent in it, or an administrator) but takes no part in it."),
            Refuses::Conflict("The conversation is already canceled."),
        ] })
        .open_to_peers()
        .authority(Authority::Member)
}

pub(super) fn get_agent_messaging() -> Route {
    Route::new(RouteId::GetAgentMessaging, Get, "/api/agents/:agentId/messaging", "get_agent_messaging")
        .summary("Show an agent's messaging")
        .description("An agent's connection (when it last looked at its inbox), its delivery policy (allowlist, rate and lease caps, attempts) and how many messages wait for it.")
        .path_parameters(&[PathParameter::AgentId])
        .response::<AgentMessaging>()
        .exception(Tier::Operator, OWNER_PLANE)
        .feature(Feature::AgentNetwork)
        .authority(SPONSOR)
}

pub(super) fn update_agent_messaging() -> Route {
    Route::new(RouteId::UpdateAgentMessaging, Patch, "/api/agents/:agentId/messaging", "update_agent_messaging")
        .summary("Set an agent's delivery policy")
        .description("Sets who an agent receives from (an allowlist of agents and people, or everyone), how many messages it is delivered per minute, how many leases it holds at once, and how many leases a message gets before it fails. The policy applies at delivery, to messages already waiting too.")
        .path_parameters(&[PathParameter::AgentId])
        .request::<UpdateAgentMessaging>()
        .response::<AgentMessaging>()
        .tier(Tier::Operator)
        .feature(Feature::AgentNetwork)
        .refuses(const { &[
            Refuses::Conflict("The agent is revoked."),
        ] })
        .authority(SPONSOR)
}

pub(super) fn list_owned_agent_inbox() -> Route {
    Route::new(RouteId::ListOwnedAgentInbox, Get, "/api/agents/:agentId/inbox", "list_owned_agent_inbox")
        .summary("An agent's inbox, as its owner sees it")
        .description("Every message to the agent, newest first, in every state (waiting, held and why, leased, finished), without claiming anything.")
        .path_parameters(&[PathParameter::AgentId])
        .query_parameters(const { &[
            Parameter::page_size("messages", 50, 100),
            CURSOR,
        ] })
        .response::<AgentMessageList>()
        .exception(Tier::Operator, OWNER_PLANE)
        .feature(Feature::AgentNetwork)
        .authority(SPONSOR)
}
