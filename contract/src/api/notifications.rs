//! The notifications feed: per person, what needs them or what they are waiting
//! to hear (an approval waiting, a send of theirs refused, sent or failed, a
//! conversation assigned to them or back from snooze, a mention in a note, a
//! butler's effect skipped, a reminder due, and for administrators an audit
//! chain that failed verification), each read or unread for them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::vocabulary::vocabulary;

/// Limits on the feed, stated once because the contract publishes them.
pub mod notification_limits {
    /// How many notifications one call may mark read by id.
    pub const MARKED_AT_ONCE: usize = 100;
    /// How long a notification is kept, in days; older ones are removed by the
    /// scheduled run.
    pub const KEPT_DAYS: i64 = 90;
}

vocabulary! {
    /// What a notification is about.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum NotificationKind {
        ApprovalWaiting = "approval_waiting": "A send was submitted in a mailbox where the reader decides on sends, by someone else; it waits for a second person. `resolved` once someone decided or it was taken back.";
        SendRefused = "send_refused": "A send the reader wrote (or an agent acting for them wrote) was refused; `detail` is the reason. It can be written again (redraft_send).";
        SendSent = "send_sent": "A send the reader (or their agent) wrote was approved and the mail service accepted it for every recipient.";
        SendFailed = "send_failed": "A send the reader (or their agent) wrote was approved, but the mail service did not take it for some recipients; `detail` says which. It can be sent again (retry_send).";
        ConversationAssigned = "conversation_assigned": "Someone else assigned the reader a conversation.";
        NoteMention = "note_mention": "Someone else mentioned the reader in an internal note in a conversation; `title` is the conversation's subject and `object_id` the conversation. The note itself is read with list_notes.";
        SnoozeEnded = "snooze_ended": "A conversation assigned to the reader was snoozed until now: it is open again.";
        ButlerEffectSkipped = "butler_effect_skipped": "A butler the reader sponsors could not carry out an effect on a delivery: they no longer hold what it needs (or did not when it was published), its assignee no longer works the mailbox, the conversation carries as many labels as it may, a reply would have gone only to the node's own mailboxes, or its webhook failed; `detail` says which.";
        ReminderDue = "reminder_due": "One of the reader's reminders is due today or overdue; `detail` says which.";
        ExportReady = "export_ready": "An eDiscovery export the reader requested is ready to download; `title` says what it holds and `object_id` names it.";
        AuditChainBroken = "audit_chain_broken": "For administrators: the audit chain did not verify where a checkpoint was to be written (or the checkpoint's records in D1 and the object store disagree), so nothing was signed; `detail` says what failed and where, and `object_id` names the fault. Sent once per fault, to whoever administers the node.";
        DatabaseNearlyFull = "database_nearly_full": "For administrators: the node's one database holds 80% or more of its size limit (`DATABASE_LIMIT_BYTES`), or all of it, when inbound mail is refused with a temporary failure until room is made; or a mailbox's own database does, of `MAILBOX_LIMIT_BYTES` (its id as `object_id`), when mail to that mailbox is refused. `detail` says how full. Sent at most once a day per level (and mailbox), to whoever administers the node.";
    }
}

/// One notification, as its reader sees it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Notification {
    /// The notification's id (`ntf_…`).
    pub id: String,
    /// What it is about.
    pub kind: NotificationKind,
    /// When it happened (RFC 3339).
    pub at: String,
    /// The send's or conversation's subject, or the reminder's title.
    pub title: String,
    /// More, where the kind has it: a refusal's reason, who a failed send did
    /// not reach, or when a reminder is due.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// What it is about: a send (`snd_…`), a conversation (`thr_…`), a
    /// reminder (`evt_…`), an export (`exp_…`), or for an audit alarm the
    /// fault and where it is (`entry_mac:entry-12`).
    pub object_id: String,
    /// The mailbox it happened in (`mbx_…`), for mail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mailbox_id: Option<String>,
    /// That mailbox's address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mailbox_address: Option<String>,
    /// Who caused it (`usr_…` or `agt_…`), where someone did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    /// Their name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_name: Option<String>,
    /// Whether the reader has marked it read.
    pub read: bool,
    /// Whether what it asked for no longer needs anyone (an approval decided or
    /// taken back).
    pub resolved: bool,
}

/// A page of the feed, newest first.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct NotificationPage {
    /// The notifications on this page.
    pub notifications: Vec<Notification>,
    /// How many notifications are unread and not resolved, across the whole feed.
    pub unread_count: i64,
    /// Pass as `cursor`, with the same filter, to get the next (older) page; null
    /// on the last page.
    pub next_cursor: Option<String>,
}

/// Which notifications to mark read: some by id, or all of them.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkNotificationsRead {
    /// The notifications to mark read (`ntf_…`), at most
    /// `notification_limits::MARKED_AT_ONCE`. Ids the caller cannot see are
    /// passed over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = notification_limits::MARKED_AT_ONCE))]
    pub notification_ids: Option<Vec<String>>,
    /// `true` marks every notification in the caller's feed read. Give this or
    /// `notification_ids`, not both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all: Option<bool>,
}

/// What marking did.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct NotificationsMarked {
    /// How many notifications changed: unread and now read, or (marking one
    /// unread) read and now unread.
    pub marked: i64,
    /// How many notifications are still unread and not resolved.
    pub unread_count: i64,
}
