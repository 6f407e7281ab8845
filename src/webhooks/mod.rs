//! Webhooks (decision 0038): endpoints outside the node told, in the Standard
//! Webhooks format, of what changes on a mailbox (an administrator subscribes
//! one) or an agent (its sponsor, or an administrator). `routes` holds the
//! subscriptions' routes, `deliver` the runs that post what was queued,
//! `errors` the refusals, and `store` every statement about `webhooks` and
//! `webhook_deliveries`.
//!
//! Deliveries are queued by the commits themselves: `RELAY` is the
//! `core::events::Relay` the installation names, whose statement rides in the
//! batch of every commit that tells an event, so a change and its deliveries
//! land together and a call with nobody subscribed pays no round trip.

mod deliver;
mod errors;
pub mod push;
mod relay;
pub mod routes;
mod store;

pub use deliver::{TaskBody, WebhookReport, deliver_due, forget_settled};
pub use errors::WebhookError;
pub use relay::{RELAY, WebhookRelay};
