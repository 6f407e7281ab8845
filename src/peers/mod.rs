//! Agents across organisations (SPEC §14, decision 0050): the peers an
//! administrator connects, agents elsewhere as the node names them, and the
//! outbox's record of each message to one.
//!
//! `remote` names an agent elsewhere by its card (its id derived from the
//! URL, its domain, whether an outbound policy reaches it); `routes` holds the
//! administrator's peer routes and the owner's view of the outbox; `errors`
//! the refusals; `store` every statement about `peers`, `remote_agents`,
//! `remote_deliveries` and their attempts. Sending elsewhere is the messaging
//! domain's (a message is a message wherever it goes); speaking A2A to the
//! agent elsewhere is the A2A surface's outbox run.

mod errors;
mod remote;
pub mod routes;
mod store;

pub use errors::PeersError;
pub use remote::{RemoteAddress, reaches, remote_agent_id, valid_remote_recipients};
pub use store::{
    CardRead, Progress, attempt_recorded, card_cached, card_forgotten, claim_due, claimed, delivery_progressed,
    delivery_queued, due_now, outbound_policy, progress_noted, pushes_refused, remote_agent_seen, within_hourly_cap,
};
