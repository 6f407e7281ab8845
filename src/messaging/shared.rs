//! What several of messaging's routes check alike: content within the size
//! the node keeps, a number in its range, who the caller reads and sends as
//! (an inbox is an agent's alone), and a send repeating an earlier one,
//! whether it went here or elsewhere.

use mailroom_contract::api::MESSAGE_CONTENT_MAXIMUM_BYTES;

use super::errors::MessagingError;
use crate::core::caller::Caller;
use serde_json::json;

use super::store::{self, MessageRow};
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, new_id};
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Row};
use crate::peers;

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

/// Who sends and reads as the caller: an agent, a person, or a connected
/// peer's agent, named by its card (which the admission found on the peer's
/// domain). The routes are `Member`'s and open to peers, so the caller is one
/// of these.
pub fn participant(caller: &Caller) -> Result<String, Refusal> {
    match caller {
        Caller::Agent { .. } | Caller::Person { .. } => {
            caller.actor_id().map(str::to_string).ok_or_else(Refusal::internal)
        }
        Caller::Peer { sender: Some(card_url), .. } => Ok(peers::remote_agent_id(card_url)),
        Caller::Peer { sender: None, .. } => Err(MessagingError::PeerNamesNoSender.into()),
        Caller::Stranger | Caller::Source { .. } => Err(Refusal::internal()),
    }
}

/// What a send chose, checked, before it is stored here or elsewhere.
pub(super) struct Sending<'a> {
    pub sender: String,
    pub key: &'a str,
    pub content: String,
    pub expires_in: i64,
    pub body_hash: String,
    pub now: i64,
}

/// The answer to a send repeating an earlier one under the same key: the
/// original for the same body, a conflict naming it for another.
pub(super) fn repeated(context: &mut Context<'_>, row: &Row, body_hash: &str, now: i64) -> Result<Response, Refusal> {
    let message: MessageRow = row.decode().map_err(|error| context.internal(error))?;
    if row.text("body_hash").ok().as_deref() != Some(body_hash) {
        return Err(MessagingError::IdempotencyConflict { original: message.id }.into());
    }
    context.audit_object(message.id.clone());
    context.audit_detail(json!({ "deduplicated": true }));
    let mut presented = message.present(now);
    presented.deduplicated = true;
    Ok(context.json(&presented))
}

/// The conversation a send goes in: a new one, started by `sender`, or the
/// one it names (`continued`, as `found` by `store::conversation_continued`),
/// which `sender` must take part in and which must not be canceled, then or
/// when the send commits.
pub(super) fn conversation_of_send(
    context: &mut Context<'_>,
    continued: Option<&String>,
    found: &QueryResult,
    sender: &str,
    now: i64,
) -> Result<String, Refusal> {
    let Some(id) = continued else {
        let id = new_id(IdKind::Conversation, context.platform());
        context.write(store::start_conversation(&id, sender, now));
        return Ok(id);
    };
    let Some(row) = found.first().filter(|row| row.flag("takes_part").unwrap_or(false)) else {
        return Err(MessagingError::NoSuchConversation { id: id.clone() }.into());
    };
    if row.optional_integer("canceled_at").ok().flatten().is_some() {
        return Err(MessagingError::ConversationCanceled { id: id.clone() }.into());
    }
    context.write(store::conversation_active(id, now));
    context.guard(store::conversation_not_canceled(id), MessagingError::ConversationCanceled { id: id.clone() });
    Ok(id.clone())
}
