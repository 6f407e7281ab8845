//! Pushes from agents elsewhere (decision 0050): an A2A server told, when this
//! node's outbox sent it a message, to push word of the task's changes to
//! `POST /a2a/outbox/:agentMessageId` with a token only this node can make.
//!
//! What a push says is not believed: it only makes the message's delivery due
//! now, so the outbox (run after this answer) asks the agent elsewhere how the
//! task stands, over its own authenticated call. A forged or replayed push can
//! at most make the node ask sooner; a push without the token is refused and
//! counted, never written.

use mailroom_contract::PathParameter;

use super::client::push_token;
use crate::core::context::Context;
use crate::core::crypto::constant_time_equal;
use crate::core::http::Response;
use crate::core::refusal::Refusal;
use crate::peers;

/// The header an A2A push carries its config's token in.
const TOKEN_HEADER: &str = "x-a2a-notification-token";

/// `POST /a2a/outbox/:agentMessageId`.
pub async fn receive(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let message_id = context.path(PathParameter::AgentMessageId)?.to_string();
    let expected = push_token(&context.config().session_key, &message_id);
    let presented = context.request().header(TOKEN_HEADER).unwrap_or_default().trim().to_string();
    if !constant_time_equal(presented.as_bytes(), expected.as_bytes()) {
        return Err(Refusal::new(
            401,
            "push_token_invalid",
            "This push does not carry the token this node gave for the task.",
            "Only the agent this node sent the message to was given the token, in the push config of its send.",
            "Push with the `X-A2A-Notification-Token` the send's push config named.",
        ));
    }
    context.write(peers::due_now(&message_id, context.now_ms()));
    context.queue_remote_delivery();
    context.audit_object(message_id);
    Ok(Response::empty(202))
}
