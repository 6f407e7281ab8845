//! Writing a conversation's labels: the one statement that adds a label, used
//! by `update_thread` and by a butler's `label` effect alike, so the cap on how
//! many a conversation carries holds in SQL whoever adds one.

use mailroom_contract::api::label_limits::LABEL_CHARACTERS;

use super::store;
use crate::core::storage::Statement;

/// The statement adding `label` (normalised) to conversation `thread_id`,
/// unless it carries it already or carries as many as it may: the cap is kept
/// in SQL too, so neither two changes at once nor a butler can pass it.
pub fn add_label(thread_id: &str, label: &str) -> Statement {
    store::label_added(thread_id, label)
}

/// What a label must be, for a refusal to say: the routes and a butler's rules
/// refuse a label in the same words.
pub fn label_words() -> String {
    format!("a label of 1 to {LABEL_CHARACTERS} characters, without control characters, once trimmed")
}
