//! Why a feed call is refused, each with the refusal that says so.

use mailroom_contract::api::notification_limits;

use crate::core::refusal::Refusal;

/// Why a feed call was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotificationError {
    /// The notification does not exist, or is not in the caller's feed.
    NoSuchNotification { id: String },
    /// Neither ids nor `all`, or both.
    NothingNamed,
}

impl From<NotificationError> for Refusal {
    fn from(error: NotificationError) -> Refusal {
        match error {
            NotificationError::NoSuchNotification { id } => Refusal::new(
                404,
                "not_found",
                format!("There is no notification {id} in your feed."),
                "It does not exist, was removed after the node's retention, or is not addressed to you.".to_string(),
                "List your notifications with list_notifications and use an id from there.".to_string(),
            ),
            NotificationError::NothingNamed => Refusal::new(
                400,
                "invalid_body",
                "Nothing was named to mark read.".to_string(),
                "The body must give either `notification_ids` (one or more) or `all: true`, not both.".to_string(),
                format!(
                    "Send {{\"notification_ids\": [\"ntf_…\"]}} (at most {}) or {{\"all\": true}}.",
                    notification_limits::MARKED_AT_ONCE
                ),
            ),
        }
    }
}
