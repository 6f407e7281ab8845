//! The relay the installation names (`core::events::Relay`): each event a
//! commit tells is queued, in that commit's own batch, for every live webhook
//! subscribed to its topic and kind.

use super::store;
use crate::core::events::{Event, Relay, Told};
use crate::core::storage::Statement;

/// Queues each committed event for the webhooks subscribed to its topic.
pub struct WebhookRelay;

impl Relay for WebhookRelay {
    fn queue(&self, event: &Event, message_id: &str) -> Statement {
        store::queue(event, message_id)
    }

    fn queue_selected(&self, kind: &str, at: i64, message_prefix: &str, selected: &Told) -> Statement {
        store::queue_selected(kind, at, message_prefix, selected)
    }
}

/// The relay an installation names.
pub static RELAY: WebhookRelay = WebhookRelay;
