//! What is around a delivery when butlers judge it, read as SQL beside the
//! butlers themselves (a delivery's first round trip, a dry run's only one):
//! the conversation it joins, which assignees still work the mailbox, which
//! other mailboxes already hold the message, and which of the addresses a
//! reply could go to are this node's own. `rules::judge` decides on these, so
//! an effect that could not apply is recorded as skipped with its reason, in
//! the dry run as in the delivery, never as done.

use std::collections::BTreeSet;

use mailroom_contract::Relation;

use super::rules::Surroundings;
use crate::authz::tuples::{self, Holder};
use crate::core::storage::{Row, Statement, Value};

/// The SQL expression "the assignees named by the assign effects in `effects`
/// (FROM items ending in `json_each(…) e`, filtered by `filter`) who work the
/// mailbox in column `mailbox` at `now_ms`", as a JSON array, with its
/// parameters: send.propose held there, an agent's intersected with its
/// sponsor's and only while live, as `update_thread` asks of an assignee.
pub(super) fn assignees_working(effects: &str, filter: &str, mailbox: &str, now_ms: i64) -> (String, Vec<Value>) {
    let (works, parameters) =
        tuples::holds_in_sql(&Holder::ActorIn { column: "x.assignee", now_ms }, Relation::SendPropose, mailbox);
    (
        format!(
            "(SELECT json_group_array(x.assignee) FROM \
               (SELECT DISTINCT json_extract(e.value, '$.assignee') AS assignee FROM {effects} \
                WHERE {filter} AND json_extract(e.value, '$.do') = 'assign') x \
             WHERE {works})"
        ),
        parameters,
    )
}

/// The SQL expression "the mailboxes the forward effects in `effects` file
/// copies in that already hold a message whose Message-ID is `message_id` (an
/// SQL expression)", as a JSON array.
pub(super) fn targets_holding(effects: &str, filter: &str, message_id: &str) -> String {
    format!(
        "(SELECT json_group_array(f.target) FROM \
           (SELECT DISTINCT json_extract(e.value, '$.mailbox') AS target FROM {effects} \
            WHERE {filter} AND json_extract(e.value, '$.do') = 'forward') f \
         WHERE EXISTS (SELECT 1 FROM receipts h WHERE h.mailbox_id = f.target AND h.message_id = {message_id}))"
    )
}

/// The SQL expression "which of the addresses in `candidates` (an SQL
/// expression: a JSON array of `{address, name}`) are mailboxes of this node",
/// as a JSON array of addresses.
pub(super) fn own_addresses(candidates: &str) -> String {
    format!(
        "(SELECT json_group_array(m.address) FROM mailboxes m \
         WHERE m.address IN (SELECT lower(trim(json_extract(c.value, '$.address'))) FROM json_each({candidates}) c))"
    )
}

/// `candidate`, a statement choosing the conversation a delivery joins (a
/// `thread_id` column), with what that conversation is now beside it: its
/// subject, assignee and labels. Its parameters are the candidate's own.
pub fn with_conversation(candidate: Statement) -> Statement {
    Statement {
        sql: format!(
            "SELECT c.thread_id, {CONVERSATION_COLUMNS} FROM ({}) c LEFT JOIN mail_threads t ON t.id = c.thread_id",
            candidate.sql
        )
        .into(),
        parameters: candidate.parameters,
    }
}

/// The columns of `mail_threads t` a butler judges: the conversation's
/// subject, its assignee, and its labels as a JSON array.
pub(super) const CONVERSATION_COLUMNS: &str = "t.subject AS conversation_subject, t.assignee AS conversation_assignee, \
     (SELECT json_group_array(l.label) FROM thread_labels l WHERE l.thread_id = t.id) AS conversation_labels";

/// The conversation a delivery joins, as it stands before the delivery.
#[derive(Clone, Debug, Default)]
pub struct Conversation {
    /// Its subject; a new conversation takes the delivery's.
    pub subject: Option<String>,
    pub assignee: Option<String>,
    pub labels: BTreeSet<String>,
}

impl Conversation {
    /// The conversation in a row with `CONVERSATION_COLUMNS`, or a new one's
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
