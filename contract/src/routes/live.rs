//! Listening: WebSocket streams that tell a listener, as it happens, that
//! something it may read has changed (ids and kinds, never content).

use crate::relation::Relation;
use crate::route::Method::Get;
use crate::route::{Authority, Feature, PathParameter, Produces, Refuses, Route, Tier};
use crate::route_id::RouteId;

use super::shared::{SPONSOR, on_mailbox};

/// Why a stream is not a tool: a tool call answers once, and a stream never
/// answers, it tells.
const A_STREAM_IS_NOT_A_CALL: &str =
    "a WebSocket stream that tells what changes as it happens: a tool call answers once, and this never answers";

pub(super) fn listen_to_mailbox() -> Route {
    Route::new(RouteId::ListenToMailbox, Get, "/api/mailboxes/:mailboxId/live", "listen_to_mailbox")
        .summary("Listen to a mailbox")
        .description("Opens a WebSocket on which the node tells, as each happens, that something in the mailbox changed: mail received, a conversation's status, assignee, labels or read state, a draft written, a send submitted, approved, refused or sent. Each frame is one JSON object of ids and kinds (`kind`, the change's audit action; `object`, the id it acted on; `topic`; `at`), never content: read what changed through the ordinary routes. The caller's authority is checked again whenever an administrator changes access; a listener that may no longer read the mailbox is closed with code 4403, one whose credential no longer holds with 4401. Opening is recorded in the audit chain.")
        .path_parameters(&[PathParameter::MailboxId])
        .produces(Produces::Live)
        .exception(Tier::Surface, A_STREAM_IS_NOT_A_CALL)
        .authority(on_mailbox(&[Relation::MailboxMetadataRead]))
}

pub(super) fn listen_to_own() -> Route {
    Route::new(RouteId::ListenToOwn, Get, "/api/me/live", "listen_to_own")
        .summary("Listen to my own changes")
        .description("Opens a WebSocket on which the node tells, as each happens, that something of the caller's own (an agent: its sponsor's) changed: notifications marked, reminders created, changed, done or acknowledged, the profile. Frames are as for listen_to_mailbox: ids and kinds, never content. Opening is recorded in the audit chain.")
        .produces(Produces::Live)
        .exception(Tier::Surface, A_STREAM_IS_NOT_A_CALL)
        .authority(Authority::Personal)
}

pub(super) fn listen_to_agent_inbox() -> Route {
    Route::new(RouteId::ListenToAgentInbox, Get, "/api/agent-inbox/live", "listen_to_agent_inbox")
        .summary("Listen to my inbox")
        .description("Opens a WebSocket on which the node tells the calling agent, as each happens, that a message is waiting in its inbox (`send_agent_message`) or that a message it sent was claimed, answered or rejected (`claim_agent_messages`, `reply_to_agent_message`, `reject_agent_message`). Frames are as for listen_to_mailbox: ids and kinds, never content; claim the messages with claim_agent_messages. A paused or revoked agent's stream is closed. Opening is recorded in the audit chain.")
        .produces(Produces::Live)
        .exception(Tier::Surface, A_STREAM_IS_NOT_A_CALL)
        .feature(Feature::AgentNetwork)
        .refuses(const { &[
            Refuses::Forbidden("The caller is a person: only an agent has an inbox."),
        ] })
        .authority(Authority::Member)
}

pub(super) fn listen_to_agent() -> Route {
    Route::new(RouteId::ListenToAgent, Get, "/api/agents/:agentId/live", "listen_to_agent")
        .summary("Listen to an agent's inbox as its owner")
        .description("Opens a WebSocket on which the node tells the agent's sponsor (or an administrator), as each happens, that its inbox changed: a message waiting for it, one it claimed, acknowledged, renewed, answered or rejected, and the answers to messages it sent. Frames are as for listen_to_mailbox: ids and kinds, never content; read the inbox with list_owned_inbox. One who no longer sponsors or administers is closed with 4403. Opening is recorded in the audit chain.")
        .path_parameters(&[PathParameter::AgentId])
        .produces(Produces::Live)
        .exception(Tier::Surface, A_STREAM_IS_NOT_A_CALL)
        .feature(Feature::AgentNetwork)
        .authority(SPONSOR)
}
