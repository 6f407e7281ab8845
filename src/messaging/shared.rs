//! What several of messaging's routes check alike: content within the size
//! the node keeps, a number in its range, and who the caller reads and sends
//! as (an inbox is an agent's alone).

use mailroom_contract::api::MESSAGE_CONTENT_MAXIMUM_BYTES;

use super::errors::MessagingError;
use crate::core::caller::Caller;
use crate::core::refusal::Refusal;

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
