//! Messages to agents elsewhere (SPEC §14): a send whose recipient is an A2A
//! card URL, judged by the sender's outbound policy and stored with its
//! delivery queued in the outbox, in the same commit; and what the outbox run
//! records when the agent elsewhere answers or the message ends.
//!
//! The message is an ordinary message of the sender's, in a conversation of
//! its own or one it continues with the same agent elsewhere (whose A2A
//! context the outbox then carries), so the sender follows it as any other (`get_agent_message`), and
//! the answer arrives as its reply: claimed from the inbox by an agent, shown
//! to a person. Speaking A2A to the agent elsewhere is the A2A surface's.

use mailroom_contract::api::SendAgentMessage;
use serde_json::json;

use super::errors::MessagingError;
use super::shared::{Sending, conversation_of_send, repeated};
use super::store::{self, MessageRow, NewMessage, WordFromElsewhere};
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, new_id};
use crate::core::refusal::Refusal;
use crate::core::storage::Statement;
use crate::peers::{self, RemoteAddress};

/// `POST /api/agent-messages` to an agent elsewhere.
pub(super) async fn send_elsewhere(
    context: &mut Context<'_>,
    body: &SendAgentMessage,
    sending: Sending<'_>,
) -> Result<Response, Refusal> {
    let Sending { sender, key, content, expires_in, body_hash, now } = sending;
    // Only this node's own agents and people send elsewhere: a peer's agent
    // is never relayed on to a third party.
    if !sender.starts_with(IdKind::Agent.prefix()) && !sender.starts_with(IdKind::Person.prefix()) {
        return Err(MessagingError::PeersMessageAgents.into());
    }
    // Checked now against the outbound rule, and again before every attempt.
    let address = RemoteAddress::of(&body.recipient, "recipient", &context.config().outbound_policy())?;
    let earlier = store::sent_under_key(&sender, key, now);
    let policy = peers::outbound_policy(&sender, now);
    let continued = body.conversation_id.as_deref().unwrap_or_default();
    let conversation = store::conversation_continued(continued, &sender, &address.id);
    let [earlier, policy, conversation] = context.read_array([earlier, policy, conversation]).await?;
    if let Some(row) = earlier.first() {
        return repeated(context, row, &body_hash, now);
    }
    let policy = policy.first().ok_or_else(|| context.internal("the outbound policy read no row"))?;
    // A person sends as themselves; an agent where its owner allowed (none by
    // default).
    if sender.starts_with(IdKind::Agent.prefix()) {
        let entries: Vec<String> = policy
            .optional_text("remote_recipients")
            .ok()
            .flatten()
            .and_then(|entries| serde_json::from_str(&entries).ok())
            .unwrap_or_default();
        if !peers::reaches(&entries, &address) {
            return Err(MessagingError::RemoteNotAllowed { card_url: address.card_url, domain: address.domain }.into());
        }
    }
    let cap = policy.integer("remote_per_hour").map_err(|error| context.internal(error))?;
    let sent = policy.integer("sent_in_hour").map_err(|error| context.internal(error))?;
    if sent >= cap {
        return Err(MessagingError::RemoteHourlyCap { cap }.into());
    }

    // A conversation with the agent elsewhere is continued (its next message
    // carries the agent's context); one without it is refused.
    let sender_in_it = conversation.first().is_some_and(|row| row.flag("takes_part").unwrap_or(false));
    let agent_in_it = conversation.first().is_some_and(|row| row.flag("with_takes_part").unwrap_or(false));
    if body.conversation_id.is_some() && sender_in_it && !agent_in_it {
        return Err(MessagingError::RemoteInAnotherConversation.into());
    }
    let conversation_id = conversation_of_send(context, body.conversation_id.as_ref(), &conversation, &sender, now)?;
    let id = new_id(IdKind::AgentMessage, context.platform());
    let expires_at = now + expires_in * 1000;
    let message = store::new_message(&NewMessage {
        id: &id,
        conversation_id: &conversation_id,
        sender_id: &sender,
        recipient_id: &address.id,
        kind: body.kind.name(),
        content: &content,
        body_hash: &body_hash,
        idempotency_key: key,
        surface: context.surface().as_str(),
        state: "queued",
        reason: None,
        now_ms: now,
        expires_at,
    });
    context.write(message.statement());
    context.write(store::participants(&conversation_id, &[&sender, &address.id]));
    context.write(peers::remote_agent_seen(&address, None, now));
    context.write(peers::delivery_queued(&id, &address.id, &sender, now));
    context.guard(peers::within_hourly_cap(&sender, now), MessagingError::RemoteHourlyCap { cap });
    context.on_constraint_violation_handle_again("agent_messages.sender_id");
    context.queue_remote_delivery();
    context.audit_object(id.clone());
    // The remote party is named; the content stays in the conversation.
    context.audit_detail(json!({
        "recipient": address.id,
        "remote": { "card_url": address.card_url, "domain": address.domain },
        "kind": body.kind.name(),
        "conversation": conversation_id,
    }));

    let row = MessageRow {
        id,
        conversation_id,
        sender_id: sender,
        recipient_id: address.id.clone(),
        kind: body.kind.name().to_string(),
        content,
        state: "queued".into(),
        created_at: now,
        updated_at: now,
        expires_at,
        remote_id: Some(address.id),
        remote_card_url: Some(address.card_url),
        remote_domain: Some(address.domain),
        ..MessageRow::default()
    };
    Ok(context.json(&row.present(now)))
}

/// A word of progress (`content`, JSON; named by `key`) from the agent
/// elsewhere working on request `request_id`, stored as event `progress_id`
/// in its conversation: claimed by an agent that asked, shown to a person.
pub fn progress_elsewhere(progress_id: &str, request_id: &str, key: &str, content: &str, now_ms: i64) -> Statement {
    store::from_elsewhere(progress_id, request_id, &WordFromElsewhere::Progress { key }, content, now_ms)
}

/// How a message to an agent elsewhere ended, as the outbox learned it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndedElsewhere {
    /// A request answered: `content` (JSON) is the answer, stored as its
    /// reply `reply_id`.
    Answered { reply_id: String, content: String },
    /// An event taken.
    Acknowledged,
    /// The agent elsewhere rejected it, or its task failed or was canceled there.
    Rejected { reason: String },
    /// The outbox gave up on it.
    Failed { reason: String },
}

/// The statements recording how message `message_id` ended elsewhere, in
/// order, each doing nothing once it is no longer waiting.
pub fn ended_elsewhere(message_id: &str, ended: &EndedElsewhere, now_ms: i64) -> Vec<Statement> {
    match ended {
        EndedElsewhere::Answered { reply_id, content } => vec![
            store::from_elsewhere(reply_id, message_id, &WordFromElsewhere::Answer, content, now_ms),
            store::finished_elsewhere(message_id, "answered", Some(reply_id), None, now_ms),
        ],
        EndedElsewhere::Acknowledged => {
            vec![store::finished_elsewhere(message_id, "acknowledged", None, None, now_ms)]
        }
        EndedElsewhere::Rejected { reason } => {
            vec![store::finished_elsewhere(message_id, "rejected", None, Some(reason), now_ms)]
        }
        EndedElsewhere::Failed { reason } => {
            vec![store::finished_elsewhere(message_id, "failed", None, Some(reason), now_ms)]
        }
    }
}
