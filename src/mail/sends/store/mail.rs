//! What a mailbox's mail holds of sends, in SQL that runs alike in D1 and in
//! a mailbox's own database: the columns a send is read with and the row
//! they make (`SendRow`), the reads of one send, a mailbox's sends, the
//! approval queue and a conversation's sends, and the writes of each step of
//! a send's life (drafted, edited, submitted, taken back, decided, sealed,
//! dispatched or failed), its versions and its files.

use mailroom_contract::api::{SendState, SenderAuthentication};
use serde::Deserialize;

use crate::core::mailbox_storage::spans_stores;
use crate::core::storage::{Insert, Statement, Value};

/// A send's files as one JSON array, in their order, for the send whose id is
/// `$send` (a column or a parameter): how every read of a send lists them
/// (`SendRow::attachments_json`), and what a submission compares with the list
/// it read (`still_as_read`).
macro_rules! files_of {
    ($send:literal) => {
        concat!(
            "(SELECT json_group_array(json_object('index', f.position, 'name', f.name, 'content_type', \
             f.content_type, 'size', f.size, 'sha256', f.sha256)) FROM (SELECT * FROM send_attachments f \
             WHERE f.send_id = ",
            $send,
            " ORDER BY f.position) AS f)"
        )
    };
}

/// The columns of a send its mailbox holds (ids, never names): every
/// `SendRow` field but the directory's (`SEND_COLUMNS` adds them) and a
/// decision's.
macro_rules! send_mail_columns {
    () => {
        concat!(
            "s.id, s.mailbox_id, s.author, s.state, s.to_json, s.cc_json, s.subject, s.text, s.reply_to, \
     s.in_reply_to, s.references_json, s.created_at, s.updated_at, s.submitted_at, s.submitted_by, s.decided_at, \
     s.decided_by, s.refusal_reason, s.message_id, s.manifest_hash, s.sealed_at, s.dispatched_at, s.dispatch_error, \
     s.sealed_from_address, s.sealed_from_name, s.delivered_json, s.submitted_version, s.thread_id, \
     s.sent_message_ids_json, ",
            files_of!("s.id"),
            " AS attachments_json"
        )
    };
}

/// A send's columns the mailbox holds, for a read its mailbox's own
/// database can answer; the names are read from D1 apart (`mail::names`).
const SEND_MAIL_COLUMNS: &str = send_mail_columns!();

/// A send's columns with what the directory says of it: its mailbox's
/// address, its author's name and its decider's.
const SEND_COLUMNS: &str = concat!(
    send_mail_columns!(),
    ", (SELECT m.address FROM mailboxes m WHERE m.id = s.mailbox_id) AS mailbox_address, \
     COALESCE((SELECT p.name FROM people p WHERE p.id = s.author), (SELECT a.name FROM agents a WHERE a.id = s.author)) \
       AS author_name, \
     (SELECT p.name FROM people p WHERE p.id = s.decided_by) AS decided_by_name"
);

#[derive(Clone, Debug, Deserialize)]
pub(crate) struct SendRow {
    pub(crate) id: String,
    pub(crate) mailbox_id: String,
    pub(crate) author: String,
    pub(crate) state: SendState,
    pub(crate) to_json: String,
    pub(crate) cc_json: String,
    pub(crate) subject: String,
    pub(crate) text: String,
    pub(crate) reply_to: Option<String>,
    pub(crate) in_reply_to: Option<String>,
    pub(crate) references_json: String,
    pub(crate) created_at: i64,
    pub(crate) updated_at: i64,
    pub(crate) submitted_at: Option<i64>,
    pub(crate) submitted_by: Option<String>,
    pub(crate) decided_at: Option<i64>,
    pub(crate) decided_by: Option<String>,
    pub(crate) refusal_reason: Option<String>,
    pub(crate) message_id: Option<String>,
    pub(crate) manifest_hash: Option<String>,
    pub(crate) sealed_at: Option<i64>,
    pub(crate) dispatched_at: Option<i64>,
    pub(crate) dispatch_error: Option<String>,
    #[serde(default)]
    pub(crate) sealed_from_address: Option<String>,
    #[serde(default)]
    pub(crate) sealed_from_name: Option<String>,
    /// The envelope recipients the binding has accepted it for.
    #[serde(default = "no_one")]
    pub(crate) delivered_json: String,
    /// The version submitted (`Submission::version`); absent on a draft, and on
    /// a send submitted before versions were recorded, whose version is then
    /// computed from the row (`version`).
    #[serde(default)]
    pub(crate) submitted_version: Option<String>,
    /// The conversation it belongs to.
    #[serde(default)]
    pub(crate) thread_id: Option<String>,
    /// The Message-IDs the mail service reported for it.
    #[serde(default = "no_one")]
    pub(crate) sent_message_ids_json: String,
    /// The files it carries, as `SEND_COLUMNS` reads them.
    #[serde(default)]
    pub(crate) attachments_json: Option<String>,
    /// The received message it answers, as `DECISION_COLUMNS` reads it.
    #[serde(default)]
    pub(crate) answers_json: Option<String>,
    /// For an agent's send, as `DECISION_COLUMNS` counts them.
    #[serde(default)]
    pub(crate) writer_unverified_reads: Option<i64>,
    #[serde(default)]
    pub(crate) mailbox_address: Option<String>,
    #[serde(default)]
    pub(crate) mailbox_display_name: Option<String>,
    #[serde(default)]
    pub(crate) author_name: Option<String>,
    #[serde(default)]
    pub(crate) decided_by_name: Option<String>,
    /// When an agent submitted it, the agent's sponsor.
    #[serde(default)]
    pub(crate) submitted_by_sponsor: Option<String>,
    /// When an agent submitted it, who minted the agent.
    #[serde(default)]
    pub(crate) submitted_by_minter: Option<String>,
    /// When an agent submitted it, who handed the agent its credential.
    #[serde(default)]
    pub(crate) submitted_by_credential_issuer: Option<String>,
    /// The name of the person asking, when read for a decision.
    #[serde(default)]
    pub(crate) caller_name: Option<String>,
}

/// The received message a send answers, as `DECISION_COLUMNS` reads it (`answers_json`).
#[derive(Deserialize)]
pub(crate) struct AnsweredRow {
    pub(crate) id: String,
    pub(crate) from_address: Option<String>,
    pub(crate) from_name: Option<String>,
    pub(crate) subject: String,
    pub(crate) received_at: i64,
    pub(crate) sender_authentication: SenderAuthentication,
}

/// What a decision is taken beside: the received message the send answers,
/// and for an agent's send how many unauthenticated messages the agent read
/// in the day before it submitted (counted then, `mail::unverified_reads`).
/// Both in the send's own mailbox.
const DECISION_COLUMNS: &str = "(SELECT json_object('id', r.id, 'from_address', r.from_address, \
       'from_name', r.from_name, 'subject', r.subject, 'received_at', r.received_at, \
       'sender_authentication', r.sender_authentication) FROM receipts r WHERE r.id = s.reply_to) AS answers_json, \
     s.writer_unverified_reads";

/// An empty JSON list: what a send delivered to nobody, or reported no
/// Message-ID for, holds.
pub(crate) fn no_one() -> String {
    "[]".into()
}

/// The send `send_id` of mailbox `mailbox_id`, with its mailbox's address and
/// display name, what a decision is taken beside, who handled the agent that
/// submitted it, and the name of `caller` (the person asking): one `SendRow`.
pub(crate) fn send_for_caller(send_id: &str, mailbox_id: &str, caller: &str) -> Statement {
    spans_stores(
        Statement::new(format!(
            "SELECT {SEND_COLUMNS}, {DECISION_COLUMNS}, m.display_name AS mailbox_display_name, \
                (SELECT a.sponsor_id FROM agents a WHERE a.id = s.submitted_by) AS submitted_by_sponsor, \
                (SELECT a.created_by FROM agents a WHERE a.id = s.submitted_by) AS submitted_by_minter, \
                (SELECT a.credential_issued_by FROM agents a WHERE a.id = s.submitted_by) \
                  AS submitted_by_credential_issuer, \
                (SELECT p.name FROM people p WHERE p.id = ?3) AS caller_name \
         FROM sends s JOIN mailboxes m ON m.id = s.mailbox_id WHERE s.id = ?1 AND s.mailbox_id = ?2"
        ))
        .bind(send_id)
        .bind(mailbox_id)
        .bind(caller),
    )
}

/// The send `send_id` of mailbox `mailbox_id` as the mailbox's own database
/// holds it, with what a decision is taken beside: one `SendRow` still to be
/// given what the directory says of it (`send_for_caller` reads it whole
/// from D1).
pub(crate) fn send_in_mailbox(send_id: &str, mailbox_id: &str) -> Statement {
    Statement::new(format!(
        "SELECT {SEND_MAIL_COLUMNS}, {DECISION_COLUMNS} FROM sends s WHERE s.id = ?1 AND s.mailbox_id = ?2"
    ))
    .bind(send_id)
    .bind(mailbox_id)
}

/// The sends of mailbox `mailbox_id` that `caller` may see (everything but
/// other people's drafts), in `state` when one is named, newest first from the
/// cursor (`before_at`, `before_id`), at most `limit` of them: `SendRow`s,
/// named as D1 names them (`SEND_COLUMNS`) or, for a mailbox's own database,
/// only with what it holds (`SEND_MAIL_COLUMNS`, `with_names` false).
pub(crate) fn sends_of_mailbox(
    mailbox_id: &str,
    caller: &str,
    state: Option<String>,
    (before_at, before_id): (i64, &str),
    limit: i64,
    with_names: bool,
) -> Statement {
    let columns = if with_names { SEND_COLUMNS } else { SEND_MAIL_COLUMNS };
    let statement = Statement::new(format!(
        "SELECT {columns} FROM sends s WHERE s.mailbox_id = ?1 AND (s.state != ?7 OR s.author = ?2) \
         AND (?3 IS NULL OR s.state = ?3) \
         AND (s.created_at < ?4 OR (s.created_at = ?4 AND (?5 = '' OR s.id < ?5))) \
         ORDER BY s.created_at DESC, s.id DESC LIMIT ?6"
    ))
    .bind(mailbox_id)
    .bind(caller)
    .bind(state)
    .bind(before_at)
    .bind(before_id)
    .bind(limit)
    .bind(SendState::Draft.name());
    if with_names { spans_stores(statement) } else { statement }
}

/// A page of D1's notes of sends awaiting a decision (`page`, from
/// `directory::awaiting_page`), each with its send where D1 holds it: the
/// note's columns named `awaiting_…` (and its mailbox's `mail_moved_at`),
/// then, for a send of a mailbox whose mail is in D1 and still submitted,
/// the `SendRow` with what a decision is taken beside (`id` null
/// otherwise), in the page's order. Sends of mailboxes whose mail moved are
/// read there (`submitted_among`). One statement, so the page is found once.
pub(crate) fn awaiting_with_sends_in_d1(page: &Statement) -> Statement {
    let mut parameters = page.parameters.clone();
    parameters.push(SendState::Submitted.name().into());
    spans_stores(Statement {
        sql: format!(
            "WITH page AS ({}) SELECT page.send_id AS awaiting_send, page.mailbox_id AS awaiting_mailbox, \
               page.submitted_at AS awaiting_since, page.mail_moved_at, \
               page.mailbox_address AS awaiting_mailbox_address, page.author_name AS awaiting_author_name, \
               {SEND_COLUMNS}, {DECISION_COLUMNS} \
             FROM page LEFT JOIN sends s ON s.id = page.send_id AND page.mail_moved_at IS NULL AND s.state = ? \
             ORDER BY page.submitted_at, page.send_id",
            page.sql
        )
        .into(),
        parameters,
    })
}

/// Which of sends `send_ids` are still submitted, as a mailbox's own
/// database holds them, with what a decision is taken beside: `SendRow`s
/// still to be named.
pub(crate) fn submitted_among(send_ids: &[&str]) -> Statement {
    Statement::new(format!(
        "SELECT {SEND_MAIL_COLUMNS}, {DECISION_COLUMNS} FROM sends s \
         WHERE s.id IN (SELECT value FROM json_each(?1)) AND s.state = ?2"
    ))
    .bind(serde_json::json!(send_ids).to_string())
    .bind(SendState::Submitted.name())
}

/// The sends of conversation `thread_id` that `caller` may see: everything but
/// other people's drafts, in the order they happened (`SendRow`s).
/// Only what the mailbox holds of them: the names are read apart.
pub(crate) fn sends_in_thread(thread_id: &str, caller: &str) -> Statement {
    Statement::new(format!(
        "SELECT {SEND_MAIL_COLUMNS} FROM sends s WHERE s.thread_id = ?1 AND (s.state != ?3 OR s.author = ?2) \
         ORDER BY COALESCE(s.sealed_at, s.submitted_at, s.created_at), s.id"
    ))
    .bind(thread_id)
    .bind(caller)
    .bind(SendState::Draft.name())
}

/// What a reply to a received message is filled from.
#[derive(Deserialize)]
pub(crate) struct ReplyTarget {
    /// The Message-ID it carried: the one it claimed, when it is kept under a
    /// key of its own because it reused another's.
    pub(crate) message_id: Option<String>,
    pub(crate) references_json: Option<String>,
    pub(crate) in_reply_to_json: Option<String>,
    pub(crate) thread_id: Option<String>,
    pub(crate) subject: Option<String>,
    pub(crate) from_address: Option<String>,
    pub(crate) from_name: Option<String>,
    pub(crate) reply_to_json: Option<String>,
    pub(crate) to_json: Option<String>,
    pub(crate) cc_json: Option<String>,
}

/// Received message `receipt_id` of mailbox `mailbox_id`, as a `ReplyTarget`.
pub(crate) fn reply_target(receipt_id: &str, mailbox_id: &str) -> Statement {
    Statement::new(
        "SELECT COALESCE(claimed_message_id, message_id) AS message_id, references_json, in_reply_to_json, \
         thread_id, subject, from_address, from_name, reply_to_json, to_json, cc_json \
         FROM receipts WHERE id = ?1 AND mailbox_id = ?2",
    )
    .bind(receipt_id)
    .bind(mailbox_id)
}

/// `author`'s draft in mailbox `mailbox_id` last edited in the conversation
/// of received message `receipt_id`, if any: one `SendRow`, named as D1
/// names it (`SEND_COLUMNS`) or, for a mailbox's own database, with only
/// what it holds (`with_names` false).
pub(crate) fn open_draft_in_conversation_of(
    author: &str,
    mailbox_id: &str,
    receipt_id: &str,
    with_names: bool,
) -> Statement {
    let columns = if with_names { SEND_COLUMNS } else { SEND_MAIL_COLUMNS };
    let statement = Statement::new(format!(
        "SELECT {columns} FROM sends s WHERE s.author = ?1 AND s.state = ?2 AND s.mailbox_id = ?3 \
         AND s.thread_id = (SELECT thread_id FROM receipts WHERE id = ?4 AND mailbox_id = ?3) \
         ORDER BY s.updated_at DESC LIMIT 1"
    ))
    .bind(author)
    .bind(SendState::Draft.name())
    .bind(mailbox_id)
    .bind(receipt_id);
    if with_names { spans_stores(statement) } else { statement }
}

/// A send as it is first written: a draft, or a butler's reply submitted at
/// once. Every column of `sends` but those a decision, a seal or a dispatch
/// fills in later.
pub(crate) struct NewSend<'a> {
    pub(crate) id: &'a str,
    pub(crate) mailbox_id: &'a str,
    pub(crate) author: &'a str,
    pub(crate) state: SendState,
    pub(crate) to_json: String,
    pub(crate) cc_json: String,
    pub(crate) subject: &'a str,
    pub(crate) text: &'a str,
    /// The received message it answers (`rcp_…`).
    pub(crate) reply_to: Option<&'a str>,
    /// That message's Message-ID.
    pub(crate) in_reply_to: Option<&'a str>,
    pub(crate) references_json: String,
    /// When it was written: its creation and last change.
    pub(crate) now_ms: i64,
    pub(crate) thread_id: Option<&'a str>,
}

/// Draft `send` (its state `draft`), only while the message it answers, if
/// any, is still in its mailbox (decision 0017): deleted between the read and
/// the commit, nothing is written.
pub(crate) fn draft_while_its_message_is_there(send: NewSend<'_>) -> Statement {
    Statement::new(
        "INSERT INTO sends (id, mailbox_id, author, state, to_json, cc_json, subject, text, reply_to, in_reply_to, \
         references_json, created_at, updated_at, thread_id) SELECT ?1, ?2, ?3, ?12, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?13 \
         WHERE ?8 IS NULL OR EXISTS (SELECT 1 FROM receipts WHERE id = ?8 AND mailbox_id = ?2)",
    )
    .bind(send.id)
    .bind(send.mailbox_id)
    .bind(send.author)
    .bind(send.to_json)
    .bind(send.cc_json)
    .bind(send.subject)
    .bind(send.text)
    .bind(send.reply_to)
    .bind(send.in_reply_to)
    .bind(send.references_json)
    .bind(send.now_ms)
    .bind(send.state.name())
    .bind(send.thread_id)
}

/// `send`, submitted at its writing by `submitted_by` as version `version`:
/// the row of a butler's reply, which no draft came before.
pub(crate) fn submitted_send(send: NewSend<'_>, submitted_by: &str, version: &str) -> Insert {
    Insert::into("sends")
        .value("id", send.id)
        .value("mailbox_id", send.mailbox_id)
        .value("author", send.author)
        .value("state", send.state.name())
        .value("to_json", send.to_json)
        .value("cc_json", send.cc_json)
        .value("subject", send.subject)
        .value("text", send.text)
        .value("reply_to", send.reply_to)
        .value("in_reply_to", send.in_reply_to)
        .value("references_json", send.references_json)
        .value("created_at", send.now_ms)
        .value("updated_at", send.now_ms)
        .value("thread_id", send.thread_id)
        .value("submitted_at", send.now_ms)
        .value("submitted_by", submitted_by)
        .value("submitted_version", version)
}

/// Version `version` of send `send_id`, submitted at `submitted_at`, kept
/// whole (`submission_json`) so a decision on an older one can be told what
/// changed.
pub(crate) fn version_recorded(send_id: &str, version: &str, submission_json: String, submitted_at: i64) -> Insert {
    Insert::into("send_versions")
        .value("send_id", send_id)
        .value("version", version)
        .value("submission_json", submission_json)
        .value("submitted_at", submitted_at)
}

/// The submission kept as version `version` of send `send_id`: one column,
/// `submission_json`.
pub(crate) fn named_version(send_id: &str, version: &str) -> Statement {
    Statement::new("SELECT submission_json FROM send_versions WHERE send_id = ?1 AND version = ?2")
        .bind(send_id)
        .bind(version)
}

/// A new draft `draft_id` copied from refused send `refused_id` at `now_ms`:
/// its words, recipients and conversation, and none of its decision.
pub(crate) fn draft_copied_from(draft_id: &str, refused_id: &str, now_ms: i64) -> Statement {
    Statement::new(
        "INSERT INTO sends (id, mailbox_id, author, state, to_json, cc_json, subject, text, reply_to, in_reply_to, \
         references_json, created_at, updated_at, thread_id) \
         SELECT ?1, mailbox_id, author, ?2, to_json, cc_json, subject, text, reply_to, in_reply_to, references_json, \
         ?3, ?3, thread_id FROM sends WHERE id = ?4",
    )
    .bind(draft_id)
    .bind(SendState::Draft.name())
    .bind(now_ms)
    .bind(refused_id)
}

/// The files of send `from_id`, carried over to send `to_id` in their order.
pub(crate) fn files_copied(to_id: &str, from_id: &str) -> Statement {
    Statement::new(
        "INSERT INTO send_attachments (send_id, position, name, content_type, size, sha256) \
         SELECT ?1, position, name, content_type, size, sha256 FROM send_attachments WHERE send_id = ?2",
    )
    .bind(to_id)
    .bind(from_id)
}

/// The rows of every file of send `send_id`.
pub(crate) fn files_deleted(send_id: &str) -> Statement {
    Statement::new("DELETE FROM send_attachments WHERE send_id = ?1").bind(send_id)
}

/// Draft `send_id`, while still a draft.
pub(crate) fn draft_deleted(send_id: &str) -> Statement {
    Statement::new("DELETE FROM sends WHERE id = ?1 AND state = ?2").bind(send_id).bind(SendState::Draft.name())
}

/// Send `send_id` moved from state `from` to `to` with `assignments` (and
/// their `parameters`) alongside, only while its state has not moved since it
/// was read.
fn transition(
    send_id: &str,
    (from, to): (SendState, SendState),
    assignments: &str,
    parameters: Vec<Value>,
) -> Statement {
    let mut statement = Statement::new(format!("UPDATE sends SET state = ?, {assignments} WHERE id = ? AND state = ?"));
    statement.parameters.push(to.name().into());
    statement.parameters.extend(parameters);
    statement.parameters.push(send_id.into());
    statement.parameters.push(from.name().into());
    statement
}

/// Draft `send_id`'s recipients, subject and text as edited at `now_ms`.
pub(crate) fn draft_edited(send_id: &str, row: &SendRow, now_ms: i64) -> Statement {
    transition(
        send_id,
        (SendState::Draft, SendState::Draft),
        "to_json = ?, cc_json = ?, subject = ?, text = ?, updated_at = ?",
        vec![
            row.to_json.as_str().into(),
            row.cc_json.as_str().into(),
            row.subject.as_str().into(),
            row.text.as_str().into(),
            now_ms.into(),
        ],
    )
}

/// Draft `send_id` submitted by `submitted_by` at `now_ms` as version `version`.
pub(crate) fn submitted(
    send_id: &str,
    submitted_by: &str,
    now_ms: i64,
    version: &str,
    writer_unverified_reads: Option<i64>,
) -> Statement {
    transition(
        send_id,
        (SendState::Draft, SendState::Submitted),
        "submitted_at = ?, submitted_by = ?, updated_at = ?, submitted_version = ?, writer_unverified_reads = ?",
        vec![now_ms.into(), submitted_by.into(), now_ms.into(), version.into(), writer_unverified_reads.into()],
    )
}

/// Holds while draft `send_id` still has exactly the recipients, subject,
/// text and files `row` read, which its submission hashed: an edit or a file
/// added or removed that committed after the submitter read the draft makes
/// it false, so a version never names other words or files than the send
/// keeps (a guard, evaluated in the submission's own transaction). The files
/// are compared as the read listed them (`files_of!`).
pub(crate) fn still_as_read(send_id: &str, row: &SendRow) -> Statement {
    Statement::new(concat!(
        "EXISTS (SELECT 1 FROM sends WHERE id = ?1 AND to_json = ?2 AND cc_json = ?3 AND subject = ?4 AND text = ?5) \
         AND ",
        files_of!("?1"),
        " = ?6"
    ))
    .bind(send_id)
    .bind(row.to_json.as_str())
    .bind(row.cc_json.as_str())
    .bind(row.subject.as_str())
    .bind(row.text.as_str())
    .bind(row.attachments_json.as_deref().unwrap_or("[]"))
}

/// Submission `send_id` taken back to a draft at `now_ms`.
pub(crate) fn cancelled(send_id: &str, now_ms: i64) -> Statement {
    transition(
        send_id,
        (SendState::Submitted, SendState::Draft),
        "submitted_at = NULL, submitted_by = NULL, submitted_version = NULL, writer_unverified_reads = NULL, \
         updated_at = ?",
        vec![now_ms.into()],
    )
}

/// Failed send `send_id` back to sealed at `now_ms`, to be sent again.
pub(crate) fn sealed_again(send_id: &str, now_ms: i64) -> Statement {
    transition(send_id, (SendState::Failed, SendState::Sealed), "updated_at = ?", vec![now_ms.into()])
}

/// A decision's move of submitted send `send_id` to `to`, with `assignments`
/// (and their `parameters`), only while it still holds `version` (the one the
/// decider named; `row_version` is what the row read as, for a send submitted
/// before versions were recorded).
fn decide(
    send_id: &str,
    (row_version, version): (&str, &str),
    to: SendState,
    assignments: &str,
    parameters: Vec<Value>,
) -> Statement {
    let mut statement = Statement::new(format!(
        "UPDATE sends SET state = ?, {assignments} WHERE id = ? AND state = ? AND COALESCE(submitted_version, ?) = ?"
    ));
    statement.parameters.push(to.name().into());
    statement.parameters.extend(parameters);
    statement.parameters.push(send_id.into());
    statement.parameters.push(SendState::Submitted.name().into());
    statement.parameters.push(row_version.into());
    statement.parameters.push(version.into());
    statement
}

/// What sealing a send writes beside its state.
pub(crate) struct Seal<'a> {
    pub(crate) approver: &'a str,
    pub(crate) message_id: &'a str,
    pub(crate) manifest_hash: &'a str,
    pub(crate) sealed_at: i64,
    pub(crate) from_address: &'a str,
    pub(crate) from_name: &'a str,
}

/// Submitted send `send_id`, still at version `version` (`row_version` as its
/// row read), approved and sealed as `seal` says.
pub(crate) fn sealed(send_id: &str, (row_version, version): (&str, &str), seal: Seal<'_>) -> Statement {
    decide(
        send_id,
        (row_version, version),
        SendState::Sealed,
        "decided_at = ?, decided_by = ?, message_id = ?, manifest_hash = ?, sealed_at = ?, \
         updated_at = ?, sealed_from_address = ?, sealed_from_name = ?, submitted_version = ?",
        vec![
            seal.sealed_at.into(),
            seal.approver.into(),
            seal.message_id.into(),
            seal.manifest_hash.into(),
            seal.sealed_at.into(),
            seal.sealed_at.into(),
            seal.from_address.into(),
            seal.from_name.into(),
            version.into(),
        ],
    )
}

/// Submitted send `send_id`, still at version `version` (`row_version` as its
/// row read), refused by `decider` at `now_ms` for `reason`.
pub(crate) fn refused(
    send_id: &str,
    (row_version, version): (&str, &str),
    decider: &str,
    reason: &str,
    now_ms: i64,
) -> Statement {
    decide(
        send_id,
        (row_version, version),
        SendState::Refused,
        "decided_at = ?, decided_by = ?, refusal_reason = ?, updated_at = ?",
        vec![now_ms.into(), decider.into(), reason.into(), now_ms.into()],
    )
}

/// Sealed send `send_id` dispatched at `now_ms`, every recipient in
/// `delivered_json` having it.
pub(crate) fn dispatched(send_id: &str, now_ms: i64, delivered_json: String) -> Statement {
    Statement::new(
        "UPDATE sends SET state = ?4, dispatched_at = ?2, updated_at = ?2, dispatch_error = NULL, \
         delivered_json = ?3 WHERE id = ?1 AND state = ?5",
    )
    .bind(send_id)
    .bind(now_ms)
    .bind(delivered_json)
    .bind(SendState::Dispatched.name())
    .bind(SendState::Sealed.name())
}

/// Sealed send `send_id` failed at `now_ms` with `error`, only those in
/// `delivered_json` having it.
pub(crate) fn failed(send_id: &str, error: String, now_ms: i64, delivered_json: String) -> Statement {
    Statement::new(
        "UPDATE sends SET state = ?5, dispatch_error = ?2, updated_at = ?3, delivered_json = ?4 \
         WHERE id = ?1 AND state = ?6",
    )
    .bind(send_id)
    .bind(error)
    .bind(now_ms)
    .bind(delivered_json)
    .bind(SendState::Failed.name())
    .bind(SendState::Sealed.name())
}

/// A file a draft gains.
pub(crate) struct NewFile<'a> {
    pub(crate) position: i64,
    pub(crate) name: &'a str,
    pub(crate) content_type: &'a str,
    pub(crate) size: i64,
    pub(crate) sha256: &'a str,
}

/// `file` added to send `send_id` only while it is still a draft of `author`
/// and within `most_files` files and `most_bytes` bytes of them when it commits.
pub(crate) fn file_added_within(
    send_id: &str,
    author: &str,
    file: NewFile<'_>,
    (most_files, most_bytes): (i64, i64),
) -> Statement {
    Statement::new(
        "INSERT INTO send_attachments (send_id, position, name, content_type, size, sha256) \
         SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (SELECT 1 FROM sends WHERE id = ?1 AND state = ?7 AND author = ?8) \
         AND (SELECT count(*) FROM send_attachments WHERE send_id = ?1) < ?9 \
         AND (SELECT COALESCE(sum(size), 0) FROM send_attachments WHERE send_id = ?1) + ?5 <= ?10",
    )
    .bind(send_id)
    .bind(file.position)
    .bind(file.name)
    .bind(file.content_type)
    .bind(file.size)
    .bind(file.sha256)
    .bind(SendState::Draft.name())
    .bind(author)
    .bind(most_files)
    .bind(most_bytes)
}

/// The file at `position` of send `send_id`, while the send is still
/// `author`'s draft: a submission that committed after this call read the
/// draft leaves the file where its version names it, and the removal changes
/// no row (so the call is refused as raced and its batch rolled back).
pub(crate) fn file_removed(send_id: &str, position: i64, author: &str) -> Statement {
    Statement::new(
        "DELETE FROM send_attachments WHERE send_id = ?1 AND position = ?2 \
         AND EXISTS (SELECT 1 FROM sends WHERE id = ?1 AND state = ?3 AND author = ?4)",
    )
    .bind(send_id)
    .bind(position)
    .bind(SendState::Draft.name())
    .bind(author)
}

/// The files of send `send_id` after `position` moved up one place, so
/// positions stay 0, 1, 2, …: through negative positions, so no two rows ever
/// hold the same one on the way. Two statements, in this order.
pub(crate) fn files_closed_up_after(send_id: &str, position: i64) -> [Statement; 2] {
    [
        Statement::new("UPDATE send_attachments SET position = -position WHERE send_id = ?1 AND position > ?2")
            .bind(send_id)
            .bind(position),
        Statement::new("UPDATE send_attachments SET position = -position - 1 WHERE send_id = ?1 AND position < 0")
            .bind(send_id),
    ]
}

/// Send `send_id` last changed at `now_ms`.
pub(crate) fn touched(send_id: &str, now_ms: i64) -> Statement {
    Statement::new("UPDATE sends SET updated_at = ?2 WHERE id = ?1").bind(send_id).bind(now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::SqliteDatabase;

    /// A send first written whole (a butler's reply, submitted at once) names
    /// every column of `sends` but those its later steps fill in: a column
    /// added to sends must be written here too, or named as one left to them.
    #[test]
    fn a_submitted_send_takes_every_column_but_those_its_later_steps_fill() {
        let left_to_later_steps = [
            "decided_at",
            "decided_by",
            "delivered_json",
            "dispatch_error",
            "dispatched_at",
            "manifest_hash",
            "message_id",
            "refusal_reason",
            "sealed_at",
            "sealed_from_address",
            "sealed_from_name",
            "sent_message_ids_json",
            // Counted only when an agent submits; a butler's reply is its sponsor's.
            "writer_unverified_reads",
        ];
        let send = NewSend {
            id: "snd_1",
            mailbox_id: "mbx_1",
            author: "usr_1",
            state: SendState::Submitted,
            to_json: "[]".into(),
            cc_json: "[]".into(),
            subject: "",
            text: "",
            reply_to: None,
            in_reply_to: None,
            references_json: "[]".into(),
            now_ms: 0,
            thread_id: None,
        };
        let insert = submitted_send(send, "usr_1", "0");
        assert_eq!(SqliteDatabase::migrated().columns_not_named(&insert), left_to_later_steps);
    }
}
