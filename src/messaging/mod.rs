//! Agent messaging (SPEC §10, seed 003): every agent's durable inbox, the
//! conversations messages belong to, and the policy an agent's owner sets for
//! what is delivered to it.
//!
//! One file per concern: `send` (a message stored before the answer, once per
//! idempotency key), `inbox` (an agent's own: list, claim as fenced leases,
//! acknowledge, renew, reply, reject), `conversations` (what the participants
//! and the owners of participating agents read, and cancel), `owner` (an
//! agent's policy, connection and inbox as its sponsor or an administrator
//! sees them) and `sweep` (what the scheduled run ends). Beneath them:
//! `errors` (what can go wrong and its refusals), `presentation` (the one
//! reading of a stored message: the state it is presented in, judged against
//! the clock), `shared` (what several routes check alike) and `store` (every
//! statement, and the rows they read). This file only declares them and
//! re-exports what other modules use.
//!
//! State lives in the message's own row, with its lease and fencing token, so
//! every operation is one guarded statement: a write by a holder whose lease
//! lapsed or whose token is stale matches no row, and the commit is refused.
//! A lapsed lease is not rewritten when it lapses; every reader judges it
//! against the clock (`present`), and the next claim or sweep records it.

pub mod conversations;
mod errors;
pub mod inbox;
pub mod owner;
mod presentation;
pub mod remote;
pub mod send;
mod shared;
mod store;
pub mod sweep;

pub use conversations::{
    cancel_conversation, get_conversation, get_message, list_conversations, list_sent, message_sent_by, sent_message,
};
pub use errors::MessagingError;
pub use inbox::{acknowledge, claim, list_inbox, reject, renew, reply};
pub use owner::{get_messaging, list_owned_inbox, list_sponsored_agents, listed_on_node_card, update_messaging};
pub use remote::{EndedElsewhere, ended_elsewhere, progress_elsewhere};
pub use send::send;
pub use shared::participant as party_of;
pub use store::ListedAgent;
pub use sweep::{SweepReport, sweep};
