//! Listening: the surface where people and agents are told, as it happens,
//! that something they may read changed.
//!
//! The listening routes (`listen_to_mailbox`, `listen_to_own`, an agent's own
//! `listen_to_agent_inbox` and its owner's `listen_to_agent`) are ordinary
//! routes: their authority is checked and their opening recorded as any call's,
//! and a success answers 101 naming the topic (`listen`). The adapter hands the
//! request to that topic's hub (a Durable Object) that holds the WebSocket. The
//! hub keeps what it needs to ask again and to record the close (`Listener`)
//! and asks whenever access changes; what the answer means for the stream is
//! `Standing` (`listener`). On a mailbox's stream, listeners also tell each
//! other who is reading or writing a reply where (`presence`).

mod errors;
mod listen;
mod listener;
mod presence;

pub use errors::LiveError;
pub use listen::{listen_to_agent, listen_to_agent_inbox, listen_to_mailbox, listen_to_own};
pub use listener::{Listener, MAXIMUM_STREAMS_PER_CALLER, RECHECK_EVERY_MS, Standing};
pub use presence::{Activity, Presence, activity_of};
