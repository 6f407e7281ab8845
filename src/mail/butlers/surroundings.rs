//! What is around a delivery when butlers judge it, read beside the butlers
//! themselves (a delivery's first round trip, a dry run's only one; the SQL is
//! in `store`): the conversation it joins, which assignees still work the mailbox, which
//! other mailboxes already hold the message, and which of the addresses a
//! reply could go to are this node's own. `rules::judge` decides on these, so
//! an effect that could not apply is recorded as skipped with its reason, in
//! the dry run as in the delivery, never as done.

use std::collections::BTreeSet;

use super::rules::Surroundings;
use super::store;
use crate::core::storage::{Row, Statement};

/// `candidate`, a statement choosing the conversation a delivery joins (a
/// `thread_id` column), with what that conversation is now beside it: its
/// subject, assignee and labels. Its parameters are the candidate's own.
pub fn with_conversation(candidate: Statement) -> Statement {
    store::with_conversation(candidate)
}

/// The conversation a delivery joins, as it stands before the delivery.
#[derive(Clone, Debug, Default)]
pub struct Conversation {
    /// Its subject; a new conversation takes the delivery's.
    pub subject: Option<String>,
    pub assignee: Option<String>,
    pub labels: BTreeSet<String>,
}

impl Conversation {
    /// The conversation in a row read by `with_conversation`, or a new one's
    /// (nothing yet) without a row.
    pub fn of(row: Option<&Row>) -> Conversation {
        let Some(row) = row else { return Conversation::default() };
        Conversation {
            subject: row.optional_text("conversation_subject").ok().flatten(),
            assignee: row.optional_text("conversation_assignee").ok().flatten(),
            labels: listed(row.optional_text("conversation_labels").ok().flatten().as_deref()),
        }
    }
}

/// The strings of a JSON array read from SQL; none when absent or unreadable.
pub(super) fn listed(json: Option<&str>) -> BTreeSet<String> {
    json.and_then(|json| serde_json::from_str::<Vec<Option<String>>>(json).ok())
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

/// What is around a delivery, from the conversation it joins and the rows
/// that read `working`, `holding` and `own_addresses`.
pub(super) fn surroundings<'row>(
    conversation: &Conversation,
    rows: impl IntoIterator<Item = &'row Row>,
) -> Surroundings {
    let mut around = Surroundings {
        assignee: conversation.assignee.clone(),
        labels: conversation.labels.clone(),
        ..Surroundings::default()
    };
    for row in rows {
        let column = |name: &str| listed(row.optional_text(name).ok().flatten().as_deref());
        around.working.extend(column("working"));
        around.holding_the_message.extend(column("holding"));
        around.own_addresses.extend(column("own_addresses"));
    }
    around
}
