//! Sending: a message is stored, in its conversation, before the 202 answers,
//! once per idempotency key.
//!
//! The first round trip reads (beside the caller's credential) the recipient,
//! the sender's earlier message under the same key and the conversation being
//! continued; the commit inserts the message under the table's UNIQUE
//! (sender, key), with guards that the recipient's inbox has room and the
//! conversation was not canceled in between. The sender is the caller, always.
//!
//! A repeat is the same key with the same body, compared by what the body
//! means (`body_hash`: JSON's keys in one order, the expiry as it applies), and
//! answers the original. Sends with one key at once: the first to commit
//! stores its message; each other one breaks the UNIQUE (sender, key), applies
//! nothing, and is handled again (`on_constraint_violation_handle_again`), when
//! its first read finds the winner's message and answers as any repeat does:
//! the original for the same body, 409 naming it for another.
//!
//! The recipient's allowlist is policy at delivery: a sender it does not name
//! is refused when the message is delivered, and when the allowlist already
//! excludes the sender at sending, the message is stored refused at once, so
//! the sender learns it from the 202 rather than later.

use mailroom_contract::api::{
    DEFAULT_MESSAGE_EXPIRY_SECONDS, IDEMPOTENCY_KEY_MAXIMUM, MAXIMUM_MESSAGE_EXPIRY_SECONDS, SendAgentMessage,
};
use serde_json::json;

use super::errors::MessagingError;
use super::shared::{Sending, content_text, conversation_of_send, in_range, participant, repeated};
use super::store::{self, MessageRow, NewMessage};
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::crypto::sha256_hex;
use crate::core::events::Topic;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of, new_id};
use crate::core::refusal::Refusal;
use crate::peers::{self, RemoteAddress};

/// Why the recipient's allowlist refuses a sender, as the message records it.
pub(crate) const NOT_ALLOWED: &str = "the recipient's allowlist does not name the sender";

/// `POST /api/agent-messages`.
pub async fn send(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let body: SendAgentMessage = context.body()?;
    let sender = participant(context.caller())?;
    let key = body.idempotency_key.trim();
    if key.is_empty() || key.chars().count() > IDEMPOTENCY_KEY_MAXIMUM || key.chars().any(char::is_control) {
        return Err(MessagingError::InvalidIdempotencyKey.into());
    }
    let content = content_text(&body.content)?;
    let expires_in = in_range(
        "expires_in_seconds",
        body.expires_in_seconds,
        DEFAULT_MESSAGE_EXPIRY_SECONDS,
        (1, MAXIMUM_MESSAGE_EXPIRY_SECONDS),
    )?;
    // What a repeat must match: everything the sender chose but the key, as it
    // applies. The content is canonical JSON (keys sorted); an expiry sent as
    // the default is the default left out, as it always hashed.
    let expiry_chosen = (expires_in != DEFAULT_MESSAGE_EXPIRY_SECONDS).then_some(expires_in);
    let body_hash = sha256_hex(
        json!([body.recipient, body.kind.name(), content, expiry_chosen, body.conversation_id]).to_string().as_bytes(),
    );
    let now = context.now_ms();

    if body.recipient.starts_with("https://") || body.recipient.starts_with("http://") {
        let sending = Sending { sender, key, content, expires_in, body_hash, now };
        return super::remote::send_elsewhere(context, &body, sending).await;
    }

    let recipient = store::recipient(&body.recipient, now);
    let earlier = store::sent_under_key(&sender, key, now);
    let conversation =
        store::conversation_continued(body.conversation_id.as_deref().unwrap_or_default(), &sender, &body.recipient);
    let [recipient, earlier, conversation] = context.read_array([recipient, earlier, conversation]).await?;

    if let Some(row) = earlier.first() {
        return repeated(context, row, &body_hash, now);
    }

    let live = recipient.first().is_some_and(|row| row.flag("live").unwrap_or(false));
    if !is_id_of(&body.recipient, IdKind::Agent) || !live {
        return Err(MessagingError::NoSuchRecipient { id: body.recipient }.into());
    }
    // Another organisation's agents reach only the agents here their owners
    // listed on the node's card; the rest answer as if there were none.
    let from_a_peer = match context.caller() {
        Caller::Peer { peer_id, sender: Some(card_url), .. } => Some((peer_id.clone(), card_url.clone())),
        _ => None,
    };
    if from_a_peer.is_some() && !recipient.first().is_some_and(|row| row.flag("listed").unwrap_or(false)) {
        return Err(MessagingError::PeersMessageAgents.into());
    }
    let allowed_peers = recipient.first().and_then(|row| row.optional_text("allowed_peers").ok().flatten());
    let allowed = match allowed_peers {
        None => true,
        Some(peers) => serde_json::from_str::<Vec<String>>(&peers).is_ok_and(|peers| peers.contains(&sender)),
    };

    let conversation_id = conversation_of_send(context, body.conversation_id.as_ref(), &conversation, &sender, now)?;

    let id = new_id(IdKind::AgentMessage, context.platform());
    let (state, reason) = if allowed { ("queued", None) } else { ("refused", Some(NOT_ALLOWED)) };
    let expires_at = now + expires_in * 1000;
    let message = store::new_message(&NewMessage {
        id: &id,
        conversation_id: &conversation_id,
        sender_id: &sender,
        recipient_id: &body.recipient,
        kind: body.kind.name(),
        content: &content,
        body_hash: &body_hash,
        idempotency_key: key,
        surface: context.surface().as_str(),
        state,
        reason,
        now_ms: now,
        expires_at,
    });
    context.write(message.statement());
    context.write(store::participants(&conversation_id, &[&sender, &body.recipient]));
    if let Some((peer_id, card_url)) = &from_a_peer {
        let address = RemoteAddress::of(card_url, "Mailroom-Sender", &context.config().outbound_policy())?;
        context.write(peers::remote_agent_seen(&address, Some(peer_id), now));
    }
    context.guard(store::inbox_has_room(&body.recipient), MessagingError::InboxFull);
    // Two sends with one key racing: the loser applies nothing and is handled
    // again, and its first read then finds the winner's message.
    context.on_constraint_violation_handle_again("agent_messages.sender_id");
    context.audit_object(id.clone());
    let mut detail = json!({ "recipient": body.recipient, "kind": body.kind.name(), "conversation": conversation_id });
    // The remote party is named in the audit; what it said stays in the conversation.
    if let Some((peer_id, card_url)) = &from_a_peer {
        detail["remote_sender"] = json!({ "id": sender, "card_url": card_url, "peer": peer_id });
    }
    context.audit_detail(detail);
    // Waiting in the recipient's inbox: it is told there. One its policy
    // refuses never reaches it, and wakes nobody.
    if allowed {
        context.tell_on(Topic::Agent(body.recipient.clone()));
    }

    let row = MessageRow {
        remote_id: from_a_peer.as_ref().map(|_| sender.clone()),
        remote_card_url: from_a_peer.as_ref().map(|(_, card_url)| card_url.clone()),
        remote_domain: from_a_peer
            .as_ref()
            .and_then(|(_, card_url)| crate::core::outbound::Host::of_url(card_url))
            .map(|host| host.text()),
        id,
        conversation_id,
        sender_id: sender,
        recipient_id: body.recipient,
        kind: body.kind.name().to_string(),
        content,
        state: state.to_string(),
        reason: reason.map(str::to_string),
        created_at: now,
        updated_at: now,
        expires_at,
        ..MessageRow::default()
    };
    Ok(context.json(&row.present(now)))
}
