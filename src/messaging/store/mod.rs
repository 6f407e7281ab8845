//! Agent messaging's SQL: every statement over `agent_messages`,
//! `agent_conversations`, their participants and `agent_messaging_policies`,
//! and the rows they read. Each function only builds a statement: the handler
//! decides what rides in one round trip.
//!
//! Messaging also reads what it needs of an agent's own row (its sponsor,
//! whether it is paused or revoked) and writes when the agent last looked at
//! its inbox (`last_seen_at`): the delivery policy is judged against them inside
//! the same statements, so they are spelled here beside the policy they serve.

mod inbox;
mod owner;
mod reading;
mod sending;
mod shared;

pub(crate) use inbox::*;
pub use owner::ListedAgent;
pub(crate) use owner::*;
pub(crate) use reading::*;
pub(crate) use sending::*;
pub(crate) use shared::*;
