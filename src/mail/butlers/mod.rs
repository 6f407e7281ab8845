//! Butlers: an administrator's rules over a mailbox's inbound mail (decision
//! 0023). A butler has a sponsor, a person whose authority its effects run
//! under, and versions: editing writes a draft version; publishing one pins the
//! relations the sponsor holds on the mailbox then. A delivery is judged by the
//! published version (`rules`), and each effect runs only with what the pinned
//! relations and the sponsor's live ones both allow (`delivery`); the dry run
//! walks any version over a past delivery and writes nothing.

//!
//! `routes` holds the administrator's routes, `errors` why they refuse,
//! `rules` the judgement, `delivery` and `surroundings` a delivery's side, and
//! `store` every statement about butlers.

mod delivery;
mod errors;
mod routes;
mod rules;
mod store;
mod surroundings;

pub use delivery::{
    ButlerWork, CopyToFile, Delivered, ReplyBasis, StoredIn, WebhookPost, active_on_delivery, copy_already_held,
    copy_not_filed, on_delivery, post_webhooks,
};
pub use errors::ButlerError;
pub use routes::{create, get, list, publish, simulate, update};
pub use rules::DeliveryFacts;
pub use surroundings::{Conversation, with_conversation};
