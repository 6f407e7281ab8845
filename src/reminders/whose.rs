//! Whose inbox a personal call works in: a person's own, an agent's
//! sponsor's. The first read derives it in SQL from the caller (`store`'s
//! `owner`); after it, it is known as the call's delegator.

use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::refusal::Refusal;

/// Whose inbox a personal call works in, once its first read has confirmed the
/// caller: the person, or the agent's sponsor (its delegator).
pub(crate) fn owner_after_read(context: &Context<'_>) -> Result<String, Refusal> {
    match context.caller() {
        Caller::Person { person_id, .. } => Ok(person_id.clone()),
        Caller::Agent { .. } => {
            context.delegator().map(str::to_string).ok_or_else(|| context.internal("an agent without a sponsor"))
        }
        Caller::Stranger | Caller::Source { .. } | Caller::Peer { .. } => {
            Err(context.internal("a personal route without a person"))
        }
    }
}
