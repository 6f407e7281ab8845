//! Every statement about conversations: which one a message joins (by its
//! Message-IDs, or by a reply's subject from someone it knows), the counts and
//! Message-IDs kept as mail arrives, is sealed, is sent and is deleted, the
//! labels, who has read what, and the rows the conversation routes read.
//! `linking`, `labels` and the routes decide; this file spells the SQL.

use mailroom_contract::api::label_limits::LABELS_PER_CONVERSATION;
use mailroom_contract::api::thread_limits::MESSAGES_SHOWN;
use mailroom_contract::api::{SendState, SenderAuthentication, ThreadStatus};
use serde::Deserialize;

use crate::core::ids::IdKind;
use crate::core::mailbox_storage::spans_stores;
use crate::core::storage::{Statement, Value};

/// SQL for the address in a stored recipient of a send (`Name <address>`, or
/// the address), lower-cased; `value` is the stored text. A stored name holds no
/// angle bracket, so the first `<` begins the address.
fn address_in_recipient(value: &str) -> String {
    format!(
        "lower(CASE WHEN instr({value}, '<') > 0 THEN substr({value}, instr({value}, '<') + 1, \
         length({value}) - instr({value}, '<') - 1) ELSE {value} END)"
    )
}

/// SQL for whether `sender` (an SQL expression: a lower-cased address, or
/// NULL) is known to conversation `thread` (an expression naming its id) of the
/// mailbox at `mailbox_address` (an expression): a message received in it came
/// from them; one received in it whose sender was authenticated went to or
/// copied them; or a send sealed in it did. Compared exactly, never as a pattern.
fn known_to(thread: &str, sender: &str, mailbox_address: &str) -> String {
    let sealed: Vec<String> =
        SendState::ALL.iter().filter(|state| state.is_sealed()).map(|state| format!("'{}'", state.name())).collect();
    let sealed = sealed.join(", ");
    let authenticated = SenderAuthentication::Authenticated.name();
    let sent_to = address_in_recipient("kv.value");
    format!(
        "({sender} IS NOT NULL AND {sender} <> lower({mailbox_address}) AND (\
           EXISTS (SELECT 1 FROM receipts kr WHERE kr.thread_id = {thread} AND (lower(kr.from_address) = {sender} \
             OR (kr.sender_authentication = '{authenticated}' AND EXISTS (\
               SELECT 1 FROM json_each(kr.to_json) kv WHERE lower(json_extract(kv.value, '$.address')) = {sender} \
               UNION ALL SELECT 1 FROM json_each(kr.cc_json) kv WHERE lower(json_extract(kv.value, '$.address')) = {sender})))) \
           OR EXISTS (SELECT 1 FROM sends ks WHERE ks.thread_id = {thread} AND ks.state IN ({sealed}) AND EXISTS (\
               SELECT 1 FROM json_each(ks.to_json) kv WHERE {sent_to} = {sender} \
               UNION ALL SELECT 1 FROM json_each(ks.cc_json) kv WHERE {sent_to} = {sender}))))"
    )
}

/// The mailbox a delivery is looked up in, as its statements name it.
#[derive(Clone, Copy, Debug)]
pub enum Recipient<'a> {
    /// By its address, in D1's first read, which finds the mailbox by it.
    Address(&'a str),
    /// In the mailbox's own database (decision 0040), which holds its mail
    /// alone: its id, and its address.
    Mailbox { id: &'a str, address: &'a str },
}

impl<'a> Recipient<'a> {
    /// The mailbox's address.
    pub fn address(&self) -> &'a str {
        match self {
            Recipient::Address(address) | Recipient::Mailbox { address, .. } => address,
        }
    }
}

/// How a delivery's lookups name its mailbox: in D1's first read by its
/// address (`?1`), which finds the mailbox there; in the mailbox's own
/// database by its id, bound after the statement's other parameters, with its
/// address (`?1`) for the sender it is not.
fn mailbox_named(recipient: &Recipient<'_>, after: usize) -> (&'static str, String) {
    match recipient {
        Recipient::Address(_) => ("JOIN mailboxes m ON m.address = ?1", "m.id".to_string()),
        Recipient::Mailbox { .. } => ("", format!("?{}", after + 1)),
    }
}

/// `statement` with the mailbox's id bound last when `recipient` names it.
fn bound_to(statement: Statement, recipient: &Recipient<'_>) -> Statement {
    match recipient {
        Recipient::Address(_) => spans_stores(statement),
        Recipient::Mailbox { id, .. } => statement.bind(*id),
    }
}

/// The conversation of the `recipient` mailbox that knows one of `wanted` (a
/// JSON array, most telling first) and admits a message from `sender`
/// (lower-cased) whose subject key is `key`: one its sender is known to, or
/// whose subject it carries.
pub(super) fn by_message_ids(
    recipient: &Recipient<'_>,
    wanted: &str,
    sender: Option<String>,
    key: String,
) -> Statement {
    let admitted = known_to("t.id", "?3", "?1");
    let (join, mailbox_id) = mailbox_named(recipient, 4);
    let statement = Statement::new(format!(
        "SELECT k.thread_id FROM json_each(?2) AS wanted {join} \
         JOIN mail_thread_message_ids k ON k.mailbox_id = {mailbox_id} AND k.message_id = wanted.value \
         JOIN mail_threads t ON t.id = k.thread_id \
         WHERE (?4 <> '' AND t.subject_key = ?4) OR {admitted} \
         ORDER BY wanted.key LIMIT 1"
    ))
    .bind(recipient.address())
    .bind(wanted)
    .bind(sender)
    .bind(key);
    bound_to(statement, recipient)
}

/// A conversation of the `recipient` mailbox with subject key `key`, active
/// since `since_ms`, that `sender` (lower-cased; none matches nothing) is known to.
pub(super) fn by_subject(recipient: &Recipient<'_>, key: String, sender: Option<String>, since_ms: i64) -> Statement {
    let known = known_to("t.id", "?3", "?1");
    let (join, mailbox_id) = mailbox_named(recipient, 4);
    let join = if join.is_empty() { String::new() } else { format!("{join} AND m.id = t.mailbox_id") };
    let statement = Statement::new(format!(
        "SELECT t.id AS thread_id FROM mail_threads t {join} \
         WHERE t.mailbox_id = {mailbox_id} AND ?3 IS NOT NULL AND t.subject_key = ?2 AND t.last_activity_at >= ?4 \
         AND {known} ORDER BY t.last_activity_at DESC LIMIT 1"
    ))
    .bind(recipient.address())
    .bind(key)
    .bind(sender)
    .bind(since_ms);
    bound_to(statement, recipient)
}

/// Receipt `receipt_id` begins conversation `thread_id`, whose subject key is `key`.
pub(super) fn begun_by_receipt(thread_id: &str, receipt_id: &str, key: String) -> Statement {
    Statement::new(
        "INSERT INTO mail_threads (id, mailbox_id, subject, subject_key, status, created_at, last_activity_at, \
         last_received_at, received_count, latest_receipt_id) \
         SELECT ?1, r.mailbox_id, r.subject, ?3, ?4, r.received_at, r.received_at, r.received_at, 1, r.id \
         FROM receipts r WHERE r.id = ?2",
    )
    .bind(thread_id)
    .bind(receipt_id)
    .bind(key)
    .bind(ThreadStatus::Open.name())
}

/// Receipt `receipt_id` joins conversation `thread_id`, which opens again
/// and wakes if snoozed (D1's index of wake-ups then names a moment its row no
/// longer holds, which wakes nothing).
pub(super) fn joined_by_receipt(thread_id: &str, receipt_id: &str) -> Statement {
    Statement::new(
        "UPDATE mail_threads SET \
           last_activity_at = max(last_activity_at, (SELECT received_at FROM receipts WHERE id = ?2)), \
           last_received_at = (SELECT received_at FROM receipts WHERE id = ?2), \
           received_count = received_count + 1, latest_receipt_id = ?2, status = ?3, snoozed_until = NULL \
         WHERE id = ?1",
    )
    .bind(thread_id)
    .bind(receipt_id)
    .bind(ThreadStatus::Open.name())
}

/// A received message's Message-ID becomes one its conversation is known by
/// in its mailbox.
pub(super) fn known_by_its_message_id(receipt_id: &str) -> Statement {
    Statement::new(
        "INSERT OR IGNORE INTO mail_thread_message_ids (mailbox_id, message_id, thread_id) \
         SELECT mailbox_id, message_id, thread_id FROM receipts WHERE id = ?1",
    )
    .bind(receipt_id)
}

/// A filed copy (`receipt_id`) whose insert gave it `new_thread_id` begins that
/// conversation, whose subject key is `key`.
pub(super) fn begun_by_filed_copy(receipt_id: &str, new_thread_id: &str, key: String) -> Statement {
    Statement::new(
        "INSERT INTO mail_threads (id, mailbox_id, subject, subject_key, status, created_at, last_activity_at, \
         last_received_at, received_count, latest_receipt_id) \
         SELECT ?1, r.mailbox_id, r.subject, ?3, ?4, r.received_at, r.received_at, r.received_at, 1, r.id \
         FROM receipts r WHERE r.id = ?2 AND r.thread_id = ?1",
    )
    .bind(new_thread_id)
    .bind(receipt_id)
    .bind(key)
    .bind(ThreadStatus::Open.name())
}

/// A filed copy (`receipt_id`) whose insert found an existing conversation
/// (not `new_thread_id`) joins it, which opens again and wakes if snoozed.
pub(super) fn joined_by_filed_copy(receipt_id: &str, new_thread_id: &str) -> Statement {
    Statement::new(
        "UPDATE mail_threads SET \
           last_activity_at = max(last_activity_at, (SELECT received_at FROM receipts WHERE id = ?2)), \
           last_received_at = (SELECT received_at FROM receipts WHERE id = ?2), \
           received_count = received_count + 1, latest_receipt_id = ?2, status = ?3, snoozed_until = NULL \
         WHERE id = (SELECT thread_id FROM receipts WHERE id = ?2) AND id <> ?1",
    )
    .bind(new_thread_id)
    .bind(receipt_id)
    .bind(ThreadStatus::Open.name())
}

/// `thread_by_message_ids_of_r` where D1 holds the mailbox's mail: its id
/// and the subject key are its two parameters, its address read from the
/// directory.
pub(super) fn thread_by_message_ids_of_r_in_d1() -> String {
    thread_by_message_ids_of_r("?", "?", "(SELECT address FROM mailboxes WHERE id = k.mailbox_id)")
}

/// SQL for a subquery finding the conversation of a mailbox (`mailbox_id`, an
/// SQL expression) a message (`receipts r`) belongs to by its ids, admitted
/// by subject key (`subject_key`, an expression) or by its sender being known
/// (not being the mailbox's own `mailbox_address`, an expression).
pub(super) fn thread_by_message_ids_of_r(mailbox_id: &str, subject_key: &str, mailbox_address: &str) -> String {
    let admitted = known_to("t.id", "lower(r.from_address)", mailbox_address);
    format!(
        "SELECT k.thread_id FROM mail_thread_message_ids k JOIN mail_threads t ON t.id = k.thread_id \
         WHERE k.mailbox_id = {mailbox_id} AND k.message_id IN (SELECT r.message_id UNION ALL SELECT r.claimed_message_id \
           UNION ALL SELECT value FROM json_each(r.in_reply_to_json) UNION ALL SELECT value FROM json_each(r.references_json)) \
         AND ((t.subject_key = {subject_key} AND t.subject_key <> '') OR {admitted}) \
         LIMIT 1"
    )
}

/// Send `send_id`, just sealed, begins conversation `thread_id` (subject key `key`).
pub(super) fn begun_by_send(thread_id: &str, send_id: &str, key: String) -> Statement {
    Statement::new(
        "INSERT INTO mail_threads (id, mailbox_id, subject, subject_key, status, created_at, last_activity_at, \
         sent_count) SELECT ?1, s.mailbox_id, s.subject, ?3, ?4, s.sealed_at, s.sealed_at, 1 \
         FROM sends s WHERE s.id = ?2",
    )
    .bind(thread_id)
    .bind(send_id)
    .bind(key)
    .bind(ThreadStatus::Waiting.name())
}

/// Send `send_id`, just sealed, joins conversation `thread_id`.
pub(super) fn joined_by_send(thread_id: &str, send_id: &str) -> Statement {
    Statement::new(
        "UPDATE mail_threads SET sent_count = sent_count + 1, \
           last_activity_at = max(last_activity_at, (SELECT sealed_at FROM sends WHERE id = ?2)) WHERE id = ?1",
    )
    .bind(thread_id)
    .bind(send_id)
}

/// Send `send_id` is linked to conversation `thread_id`, which is known by its
/// sealed Message-ID.
pub(super) fn send_linked(thread_id: &str, send_id: &str) -> [Statement; 2] {
    let link = Statement::new("UPDATE sends SET thread_id = ?1 WHERE id = ?2").bind(thread_id).bind(send_id);
    let known = Statement::new(
        "INSERT OR IGNORE INTO mail_thread_message_ids (mailbox_id, message_id, thread_id) \
         SELECT mailbox_id, message_id, ?1 FROM sends WHERE id = ?2 AND message_id IS NOT NULL",
    )
    .bind(thread_id)
    .bind(send_id);
    [link, known]
}

/// The Message-ID the mail service reported for send `send_id`, recorded once.
pub(super) fn sent_message_id_recorded(send_id: &str, message_id: &str) -> Statement {
    Statement::new(
        "UPDATE sends SET sent_message_ids_json = json_insert(sent_message_ids_json, '$[#]', ?2) \
         WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM json_each(sent_message_ids_json) WHERE value = ?2)",
    )
    .bind(send_id)
    .bind(message_id)
}

/// Conversation `thread_id` of `mailbox_id` is known by `message_id` too.
pub(super) fn known_by(mailbox_id: &str, message_id: &str, thread_id: &str) -> Statement {
    Statement::new(
        "INSERT OR IGNORE INTO mail_thread_message_ids (mailbox_id, message_id, thread_id) VALUES (?1, ?2, ?3)",
    )
    .bind(mailbox_id)
    .bind(message_id)
    .bind(thread_id)
}

/// Receipt `receipt_id`, about to be deleted, leaves its conversation.
pub(super) fn left_by_receipt(receipt_id: &str) -> Statement {
    Statement::new(
        "UPDATE mail_threads SET received_count = max(received_count - 1, 0), \
           latest_receipt_id = (SELECT r.id FROM receipts r WHERE r.thread_id = mail_threads.id AND r.id != ?1 \
                                ORDER BY r.rowid DESC LIMIT 1) \
         WHERE id = (SELECT thread_id FROM receipts WHERE id = ?1)",
    )
    .bind(receipt_id)
}

/// `label` (normalised) added to conversation `thread_id`, unless it carries
/// it already or as many as it may: the cap held in SQL.
pub(super) fn label_added(thread_id: &str, label: &str) -> Statement {
    Statement::new(format!(
        "INSERT OR IGNORE INTO thread_labels (thread_id, label) SELECT ?1, ?2 \
         WHERE (SELECT count(*) FROM thread_labels WHERE thread_id = ?1) < {LABELS_PER_CONVERSATION}"
    ))
    .bind(thread_id)
    .bind(label)
}

/// `label` taken off conversation `thread_id`.
pub(super) fn label_removed(thread_id: &str, label: &str) -> Statement {
    Statement::new("DELETE FROM thread_labels WHERE thread_id = ?1 AND label = ?2").bind(thread_id).bind(label)
}

/// What every conversation query selects, for the caller bound at `?1`: its
/// row, its assignee's name, how far the caller has read it, its latest senders,
/// whether any of its senders was unauthenticated and whether any of its
/// messages carries attachments (received, or sent once sealed: a draft's files
/// are its writer's until then). Each is asked of the conversation's own rows
/// by the indexes on `thread_id`, so a page costs no scan and no round trip
/// more, the same SQL in D1 and in a mailbox's own database. Never content.
const SUMMARY_COLUMNS: &str = "t.id, t.mailbox_id, t.subject, t.status, t.assignee, t.snoozed_until, t.last_activity_at, \
     t.last_received_at, t.received_count, t.sent_count, \
     (SELECT rd.read_up_to FROM mail_thread_reads rd WHERE rd.thread_id = t.id AND rd.reader = ?1) AS read_up_to, \
     (SELECT json_group_array(json_object('address', x.address, 'name', x.name)) FROM \
        (SELECT max(r.from_address) AS address, max(r.from_name) AS name FROM receipts r \
         WHERE r.thread_id = t.id AND r.from_address IS NOT NULL \
         GROUP BY lower(r.from_address) ORDER BY max(r.rowid) DESC) AS x) AS participants_json, \
     EXISTS (SELECT 1 FROM receipts r WHERE r.thread_id = t.id AND r.sender_authentication != 'authenticated') \
       AS has_unauthenticated, \
     (EXISTS (SELECT 1 FROM receipts r WHERE r.thread_id = t.id \
        AND (json_array_length(r.attachments_json) > 0 OR r.attachments_not_listed > 0)) \
      OR EXISTS (SELECT 1 FROM sends s WHERE s.thread_id = t.id AND s.sealed_at IS NOT NULL \
        AND EXISTS (SELECT 1 FROM send_attachments a WHERE a.send_id = s.id))) AS has_attachments, \
     (SELECT json_group_array(l.label) FROM thread_labels l WHERE l.thread_id = t.id) AS labels_json";

/// The text a snippet is cut from: the start of the latest received message,
/// with that message's id and its sender's verdict (an agent shown it is
/// noted, `unverified_reads`).
const SNIPPET_COLUMN: &str = "(SELECT substr(r.text_body, 1, 600) FROM receipts r WHERE r.id = t.latest_receipt_id) AS snippet_source, \
     t.latest_receipt_id AS snippet_receipt_id, \
     (SELECT r.sender_authentication FROM receipts r WHERE r.id = t.latest_receipt_id) AS snippet_verdict";

#[derive(Clone, Debug, Deserialize)]
pub(super) struct SummaryRow {
    pub(super) id: String,
    pub(super) mailbox_id: String,
    pub(super) subject: String,
    pub(super) status: ThreadStatus,
    pub(super) assignee: Option<String>,
    /// The assignee's name, from the directory (`names_of`), not the mailbox.
    #[serde(default)]
    pub(super) assignee_name: Option<String>,
    pub(super) snoozed_until: Option<i64>,
    pub(super) last_activity_at: i64,
    pub(super) last_received_at: Option<i64>,
    pub(super) received_count: i64,
    pub(super) sent_count: i64,
    pub(super) read_up_to: Option<i64>,
    pub(super) participants_json: Option<String>,
    pub(super) has_unauthenticated: i64,
    pub(super) has_attachments: i64,
    pub(super) labels_json: Option<String>,
    #[serde(default)]
    pub(super) snippet_source: Option<String>,
    #[serde(default)]
    pub(super) snippet_receipt_id: Option<String>,
    #[serde(default)]
    pub(super) snippet_verdict: Option<SenderAuthentication>,
}

/// Conversation `thread_id` of `mailbox_id` as `caller` sees it (a
/// `SummaryRow`), with the text its snippet is cut from when asked.
pub(super) fn thread(caller: &str, thread_id: &str, mailbox_id: &str, with_snippet: bool) -> Statement {
    let snippet = if with_snippet { format!(", {SNIPPET_COLUMN}") } else { String::new() };
    Statement::new(format!(
        "SELECT {SUMMARY_COLUMNS}{snippet} FROM mail_threads t WHERE t.id = ?2 AND t.mailbox_id = ?3"
    ))
    .bind(caller)
    .bind(thread_id)
    .bind(mailbox_id)
}

/// What a list of a mailbox's conversations is narrowed by.
pub(super) struct ThreadFilter {
    pub(super) status: Option<String>,
    /// A person's or agent's id, or "" for nobody.
    pub(super) assignee: Option<String>,
    pub(super) label: Option<String>,
    pub(super) unread: bool,
    /// Only snoozed conversations when true; none when false.
    pub(super) snoozed: bool,
    /// An FTS5 query (`fts_query`) matched in the headers of its received mail.
    pub(super) words: Option<String>,
}

/// Binds `value` as the next numbered parameter, and answers its placeholder.
fn placeholder(parameters: &mut Vec<Value>, value: Value) -> String {
    parameters.push(value);
    format!("?{}", parameters.len())
}

/// A page of `mailbox_id`'s conversations as `caller` sees them (`SummaryRow`s
/// with their snippet source), latest activity first, from before
/// (`before_at`, `before_id`), one more than `limit`.
pub(super) fn page(
    caller: &str,
    mailbox_id: &str,
    filter: ThreadFilter,
    before_at: i64,
    before_id: &str,
    limit: i64,
) -> Statement {
    // A conversation whose every message was deleted is not listed (its row stays,
    // so a late reply to one of them still finds it).
    let mut conditions = vec!["t.mailbox_id = ?2".to_string(), "t.received_count + t.sent_count > 0".to_string()];
    let mut parameters: Vec<Value> = vec![caller.into(), mailbox_id.into()];
    if let Some(status) = filter.status {
        conditions.push(format!("t.status = {}", placeholder(&mut parameters, status.into())));
    }
    match filter.assignee.as_deref() {
        Some("") => conditions.push("t.assignee IS NULL".into()),
        Some(id) => conditions.push(format!("t.assignee = {}", placeholder(&mut parameters, id.into()))),
        None => {}
    }
    if let Some(label) = filter.label {
        conditions.push(format!(
            "EXISTS (SELECT 1 FROM thread_labels l WHERE l.thread_id = t.id AND l.label = {})",
            placeholder(&mut parameters, label.into())
        ));
    }
    if filter.unread {
        conditions.push(
            "t.last_received_at IS NOT NULL AND COALESCE((SELECT rd.read_up_to FROM mail_thread_reads rd \
             WHERE rd.thread_id = t.id AND rd.reader = ?1), -1) < t.last_received_at"
                .into(),
        );
    }
    conditions.push(super::snooze::store::list_condition(filter.snoozed).to_string());
    if let Some(query) = filter.words {
        // The header index also indexes the mailbox, as `mbx` and its ULID, so the
        // match walks only this mailbox's rows (decision 0014).
        let ulid = mailbox_id.get(IdKind::Mailbox.prefix().len()..).unwrap_or_default();
        let matching = format!("{{from_address from_name recipients subject}} : ({query}) AND mailbox_id : \"{ulid}\"");
        conditions.push(format!(
            "t.id IN (SELECT r.thread_id FROM receipt_headers_index f JOIN receipts r ON r.rowid = f.rowid \
             WHERE receipt_headers_index MATCH {} AND r.mailbox_id = ?2)",
            placeholder(&mut parameters, matching.into())
        ));
    }
    let at = placeholder(&mut parameters, before_at.into());
    let id = placeholder(&mut parameters, before_id.into());
    conditions
        .push(format!("(t.last_activity_at < {at} OR (t.last_activity_at = {at} AND ({id} = '' OR t.id < {id})))"));
    let page = placeholder(&mut parameters, (limit + 1).into());
    Statement {
        sql: format!(
            "SELECT {SUMMARY_COLUMNS}, {SNIPPET_COLUMN} FROM mail_threads t WHERE {} \
             ORDER BY t.last_activity_at DESC, t.id DESC LIMIT {page}",
            conditions.join(" AND "),
        )
        .into(),
        parameters,
    }
}

#[derive(Deserialize)]
pub(super) struct ReceivedRow {
    pub(super) id: String,
    pub(super) from_address: Option<String>,
    pub(super) from_name: Option<String>,
    pub(super) to_json: String,
    pub(super) cc_json: String,
    pub(super) reply_to_json: String,
    pub(super) subject: String,
    pub(super) received_at: i64,
    pub(super) sender_authentication: SenderAuthentication,
    pub(super) authentication_json: String,
    pub(super) attachments_json: String,
    pub(super) text_body: String,
    pub(super) text_truncated: i64,
    pub(super) filed_by: Option<String>,
    pub(super) claimed_message_id: Option<String>,
}

/// The latest received messages of conversation `thread_id` (`ReceivedRow`s),
/// at most as many as are shown, in the order they were stored.
pub(super) fn received_in(thread_id: &str) -> Statement {
    Statement::new(format!(
        "SELECT * FROM (SELECT r.id, r.from_address, r.from_name, r.to_json, r.cc_json, r.reply_to_json, r.subject, \
           r.received_at, r.sender_authentication, r.authentication_json, r.attachments_json, r.text_body, \
           r.text_truncated, r.filed_by, r.claimed_message_id, r.rowid AS stored FROM receipts r WHERE r.thread_id = ?1 ORDER BY r.rowid DESC LIMIT {MESSAGES_SHOWN}) \
         ORDER BY stored"
    ))
    .bind(thread_id)
}

/// The name of the live person or agent `id` (`name`, NULL when neither).
pub(super) fn live_name_of(id: &str) -> Statement {
    Statement::new(
        "SELECT COALESCE((SELECT name FROM people WHERE id = ?1 AND disabled_at IS NULL), \
         (SELECT name FROM agents WHERE id = ?1 AND revoked_at IS NULL)) AS name",
    )
    .bind(id)
}

/// Conversation `thread_id` of `mailbox_id` given `status` and `assignee`.
pub(super) fn status_and_assignee_set(
    thread_id: &str,
    mailbox_id: &str,
    status: ThreadStatus,
    assignee: Option<String>,
) -> Statement {
    Statement::new("UPDATE mail_threads SET status = ?1, assignee = ?2 WHERE id = ?3 AND mailbox_id = ?4")
        .bind(status.name())
        .bind(assignee)
        .bind(thread_id)
        .bind(mailbox_id)
}

/// `reader` has read conversation `thread_id` up to `read_up_to` (never back).
pub(super) fn read_up_to(thread_id: &str, reader: &str, read_up_to: i64) -> Statement {
    Statement::new(
        "INSERT INTO mail_thread_reads (thread_id, reader, read_up_to) VALUES (?1, ?2, ?3) \
         ON CONFLICT (thread_id, reader) DO UPDATE SET read_up_to = max(read_up_to, excluded.read_up_to)",
    )
    .bind(thread_id)
    .bind(reader)
    .bind(read_up_to)
}

/// `reader` has read nothing of conversation `thread_id`.
pub(super) fn unread(thread_id: &str, reader: &str) -> Statement {
    Statement::new("DELETE FROM mail_thread_reads WHERE thread_id = ?1 AND reader = ?2").bind(thread_id).bind(reader)
}
