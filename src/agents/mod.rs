//! Agents: principals that act in their own right under a named person's
//! authority, and the routes an administrator mints, shows, pauses, resumes,
//! revokes and pairs them with.
//!
//! At mint the chosen capabilities are expanded to routes and the routes are
//! pinned (`agent_routes`); nothing widens them later. The agent's mailbox
//! relations are tuples like anyone's, granted through the same table and only
//! where the sponsor holds them; `authz::tuples` intersects them with the
//! sponsor's on every read. The credential is shown once and stored as a hash;
//! a pairing code can stand in for it, redeemed once within ten minutes.
//!
//! One file per concern: `present` (an agent as answered, its ceiling held of
//! total), `lifecycle` (listing, showing, pausing, resuming, revoking), `mint`
//! and `pairing`; `errors` holds what can go wrong and the refusals that say
//! so, and `store` every statement on agents' tables.

mod errors;
mod lifecycle;
mod mint;
mod pairing;
mod present;
mod store;

pub use errors::AgentError;
pub use lifecycle::{
    UNEXCHANGED_CONNECTIONS, connected_by, disconnect, ending, get, list, list_capabilities, name_and_sponsor, pause,
    person_mailboxes, removing_unexchanged, resume, revoke, unrevoked_agent_exists, unrevoked_agent_name,
};
pub use mint::{connection_established, mint, mint_for_connection};
pub use pairing::{PAIRING_CODE_LIFETIME_MS, issue_pairing_code, redeem_pairing_code};
pub(crate) use store::name_of_agent;
