//! What can be wrong with a request about a conversation (`ThreadError`), and
//! the four-part refusal each case is answered with.

use mailroom_contract::api::label_limits::LABELS_PER_CONVERSATION;

use crate::core::refusal::Refusal;

/// What can be wrong with a request about a conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ThreadError {
    /// No conversation with this id in this mailbox.
    NoSuchThread { id: String },
    /// The assignee named is no person or agent who works this mailbox.
    NotAnAssignee { id: String },
    /// The change names nothing to change.
    NothingToChange,
    /// The labels added would take the conversation past the most it may carry.
    TooManyLabels { carried: usize, after: usize },
}

impl From<ThreadError> for Refusal {
    fn from(error: ThreadError) -> Refusal {
        match error {
            ThreadError::NoSuchThread { id } => Refusal::not_found("conversation", &id),
            ThreadError::NotAnAssignee { id } => Refusal::new(
                400,
                "invalid_assignee",
                format!("The conversation cannot be assigned to {id}."),
                "A conversation is assigned to a person or an agent who works its mailbox: one holding send.propose on it, as the person or, for an agent, as the agent and its sponsor both.",
                "Name in `assignee` someone who can answer mail from this mailbox, or pass \"\" to assign it to nobody.",
            ),
            ThreadError::NothingToChange => Refusal::new(
                400,
                "invalid_body",
                "The change names nothing to change.",
                "`status`, `assignee`, `add_labels` and `remove_labels` were all left out or empty.",
                "Give a `status` (open, waiting or closed), an `assignee`, labels to add or remove, or several.",
            ),
            ThreadError::TooManyLabels { carried, after } => Refusal::new(
                400,
                "too_many_labels",
                "The labels in `add_labels` were not added.",
                format!(
                    "A conversation carries at most {LABELS_PER_CONVERSATION} labels; this one carries {carried}, and the change would leave it with {after}."
                ),
                "Add fewer labels, or remove some in `remove_labels` in the same change.",
            ),
        }
    }
}
