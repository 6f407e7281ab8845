//! Which conversation a message belongs to, and the statements that keep a
//! conversation's counts and Message-IDs as messages arrive, leave and go.
//!
//! A message joins the conversation of the first Message-ID it names that the
//! mailbox knows (its own, a copy of something the mailbox sent; then its
//! In-Reply-To; then its References from the most recent back), but only a
//! conversation its sender is already known to, or whose subject it carries
//! (decision 0029): Message-IDs travel with every copy of a message, so anyone
//! a participant forwarded one to, or Cc'd once, could otherwise quote them and
//! become a participant. Only when no id leads anywhere, and the subject reads
//! as a reply (`Re:`, `AW:`, …), does it join a recent conversation with the
//! same subject, and then only one its sender is known to, so a stranger cannot
//! slip mail into someone else's conversation by its subject either (decision
//! 0020).
//!
//! A sender is known to a conversation when a message received in it came from
//! them, when an authenticated one was sent or copied to them (a forged one
//! enrols nobody), or when a send sealed in it went to them: by exact address,
//! never by pattern. The mailbox's own address is known to no conversation, so
//! mail claiming to come from the mailbox itself joins by its subject or not at
//! all.

use mailroom_contract::api::thread_limits::SUBJECT_MATCH_DAYS;
use mailroom_contract::api::{SendState, SenderAuthentication, ThreadStatus};

use crate::core::storage::Statement;

/// Prefixes mail clients put before a subject when replying or forwarding, in
/// the languages they most often arrive in.
const REPLY_PREFIXES: &[&str] = &["re", "aw", "sv", "vs", "antw", "ref", "réf", "rif", "odp", "yn", "atb"];
const FORWARD_PREFIXES: &[&str] = &["fw", "fwd", "wg", "tr", "doorst", "rv", "enc"];

/// `subject` without one leading reply or forward prefix (`Re:`, `RE[2]:`,
/// `Fwd:`), and whether it was a reply prefix; `None` when it has none.
fn strip_prefix(subject: &str) -> Option<(&str, bool)> {
    let (head, rest) = subject.split_once(':')?;
    let word = head.trim();
    // `Re[2]` and `Re(2)` count replies.
    let word = word.split(['[', '(']).next().unwrap_or(word).trim().to_lowercase();
    if REPLY_PREFIXES.contains(&word.as_str()) {
        Some((rest, true))
    } else if FORWARD_PREFIXES.contains(&word.as_str()) {
        Some((rest, false))
    } else {
        None
    }
}

/// The subject as conversations are matched by it: without reply and forward
/// prefixes, whitespace collapsed, lower-cased; and whether it reads as a reply.
pub fn subject_key(subject: &str) -> (String, bool) {
    let mut rest = subject.trim();
    let mut replying = false;
    while let Some((after, reply)) = strip_prefix(rest) {
        replying |= reply;
        rest = after.trim();
    }
    (rest.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase(), replying)
}

/// The Message-IDs a received message is matched by, most telling first: its
/// own, its In-Reply-To, then its References from the most recent back.
pub fn wanted_ids(own: &str, in_reply_to: &[String], references: &[String]) -> String {
    let mut wanted: Vec<&str> = vec![own];
    wanted.extend(in_reply_to.iter().map(String::as_str));
    wanted.extend(references.iter().rev().map(String::as_str));
    serde_json::to_string(&wanted).unwrap_or_else(|_| "[]".into())
}

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

/// The conversation in the mailbox at `address` that knows one of `wanted`
/// (a JSON array, most telling first) and admits a message from `sender` about
/// `subject`: one its sender is known to, or whose subject it carries.
pub fn by_message_ids(address: &str, wanted: &str, sender: Option<&str>, subject: &str) -> Statement {
    let admitted = known_to("t.id", "?3", "?1");
    Statement::new(format!(
        "SELECT k.thread_id FROM json_each(?2) AS wanted \
         JOIN mailboxes m ON m.address = ?1 \
         JOIN mail_thread_message_ids k ON k.mailbox_id = m.id AND k.message_id = wanted.value \
         JOIN mail_threads t ON t.id = k.thread_id \
         WHERE (?4 <> '' AND t.subject_key = ?4) OR {admitted} \
         ORDER BY wanted.key LIMIT 1"
    ))
    .bind(address)
    .bind(wanted)
    .bind(sender.map(str::to_lowercase))
    .bind(subject_key(subject).0)
}

/// The last resort: a recent conversation in the mailbox at `address` with the
/// same subject key, that `sender` is known to. Matches nothing when the
/// subject does not read as a reply or there is no sender.
pub fn by_subject(address: &str, subject: &str, sender: Option<&str>, now_ms: i64) -> Statement {
    let (key, replying) = subject_key(subject);
    let sender = sender.filter(|_| replying && !key.is_empty()).map(str::to_lowercase);
    let known = known_to("t.id", "?3", "?1");
    Statement::new(format!(
        "SELECT t.id AS thread_id FROM mail_threads t JOIN mailboxes m ON m.id = t.mailbox_id AND m.address = ?1 \
         WHERE ?3 IS NOT NULL AND t.subject_key = ?2 AND t.last_activity_at >= ?4 AND {known} \
         ORDER BY t.last_activity_at DESC LIMIT 1"
    ))
    .bind(address)
    .bind(key)
    .bind(sender)
    .bind(now_ms - SUBJECT_MATCH_DAYS * 24 * 60 * 60 * 1000)
}

/// A received message stored as `receipt_id` joins conversation `thread_id`,
/// existing or (`new`) begun by it: its counts, latest message and activity
/// move, and a waiting or closed conversation opens again. Runs after the
/// receipt's insert, in the same batch.
pub fn receive_into(thread_id: &str, new: bool, receipt_id: &str, subject: &str) -> Vec<Statement> {
    let thread = if new {
        Statement::new(
            "INSERT INTO mail_threads (id, mailbox_id, subject, subject_key, status, created_at, last_activity_at, \
             last_received_at, received_count, latest_receipt_id) \
             SELECT ?1, r.mailbox_id, r.subject, ?3, ?4, r.received_at, r.received_at, r.received_at, 1, r.id \
             FROM receipts r WHERE r.id = ?2",
        )
        .bind(thread_id)
        .bind(receipt_id)
        .bind(subject_key(subject).0)
        .bind(ThreadStatus::Open.name())
    } else {
        Statement::new(
            "UPDATE mail_threads SET \
               last_activity_at = max(last_activity_at, (SELECT received_at FROM receipts WHERE id = ?2)), \
               last_received_at = (SELECT received_at FROM receipts WHERE id = ?2), \
               received_count = received_count + 1, latest_receipt_id = ?2, status = ?3 \
             WHERE id = ?1",
        )
        .bind(thread_id)
        .bind(receipt_id)
        .bind(ThreadStatus::Open.name())
    };
    let known = known_by_its_message_id(receipt_id);
    vec![thread, known]
}

/// A received message's Message-ID becomes one its conversation is known by
/// in its mailbox.
fn known_by_its_message_id(receipt_id: &str) -> Statement {
    Statement::new(
        "INSERT OR IGNORE INTO mail_thread_message_ids (mailbox_id, message_id, thread_id) \
         SELECT mailbox_id, message_id, thread_id FROM receipts WHERE id = ?1",
    )
    .bind(receipt_id)
}

/// A copy a butler filed in another mailbox (`receipt_id`, decision 0023)
/// joins the conversation its insert found by Message-ID there, or begins
/// `new_thread_id`; when the insert kept nothing (that mailbox already held the
/// message, or the sponsor no longer reads it) neither statement touches a row.
/// Runs after the copy's insert, in the same batch.
pub fn file_into(receipt_id: &str, new_thread_id: &str, subject: &str) -> Vec<Statement> {
    let begun = Statement::new(
        "INSERT INTO mail_threads (id, mailbox_id, subject, subject_key, status, created_at, last_activity_at, \
         last_received_at, received_count, latest_receipt_id) \
         SELECT ?1, r.mailbox_id, r.subject, ?3, ?4, r.received_at, r.received_at, r.received_at, 1, r.id \
         FROM receipts r WHERE r.id = ?2 AND r.thread_id = ?1",
    )
    .bind(new_thread_id)
    .bind(receipt_id)
    .bind(subject_key(subject).0)
    .bind(ThreadStatus::Open.name());
    let joined = Statement::new(
        "UPDATE mail_threads SET \
           last_activity_at = max(last_activity_at, (SELECT received_at FROM receipts WHERE id = ?2)), \
           last_received_at = (SELECT received_at FROM receipts WHERE id = ?2), \
           received_count = received_count + 1, latest_receipt_id = ?2, status = ?3 \
         WHERE id = (SELECT thread_id FROM receipts WHERE id = ?2) AND id <> ?1",
    )
    .bind(new_thread_id)
    .bind(receipt_id)
    .bind(ThreadStatus::Open.name());
    let known = known_by_its_message_id(receipt_id);
    vec![begun, joined, known]
}

/// The conversation of a mailbox that a message (`receipts r`) belongs to by
/// its Message-ID (or the one it reused), In-Reply-To or References, for a copy
/// filed there, admitted as `by_message_ids` admits one: SQL for a subquery
/// with two parameters, the mailbox and the message's subject key
/// (`subject_key`).
pub fn thread_by_message_ids_of_r() -> String {
    let admitted = known_to("t.id", "lower(r.from_address)", "(SELECT address FROM mailboxes WHERE id = k.mailbox_id)");
    format!(
        "SELECT k.thread_id FROM mail_thread_message_ids k JOIN mail_threads t ON t.id = k.thread_id \
         WHERE k.mailbox_id = ? AND k.message_id IN (SELECT r.message_id UNION ALL SELECT r.claimed_message_id \
           UNION ALL SELECT value FROM json_each(r.in_reply_to_json) UNION ALL SELECT value FROM json_each(r.references_json)) \
         AND ((t.subject_key = ? AND t.subject_key <> '') OR {admitted}) \
         LIMIT 1"
    )
}

/// A send just sealed joins its conversation, or begins one (`thread_id`, new
/// when the send answers nothing): counts and activity move, and its sealed
/// Message-ID becomes one the conversation is known by. Runs after the seal.
pub fn seal_into(send_id: &str, thread_id: &str, new: bool, subject: &str) -> Vec<Statement> {
    let thread = if new {
        Statement::new(
            "INSERT INTO mail_threads (id, mailbox_id, subject, subject_key, status, created_at, last_activity_at, \
             sent_count) SELECT ?1, s.mailbox_id, s.subject, ?3, ?4, s.sealed_at, s.sealed_at, 1 \
             FROM sends s WHERE s.id = ?2",
        )
        .bind(thread_id)
        .bind(send_id)
        .bind(subject_key(subject).0)
        .bind(ThreadStatus::Waiting.name())
    } else {
        Statement::new(
            "UPDATE mail_threads SET sent_count = sent_count + 1, \
               last_activity_at = max(last_activity_at, (SELECT sealed_at FROM sends WHERE id = ?2)) WHERE id = ?1",
        )
        .bind(thread_id)
        .bind(send_id)
    };
    let link = Statement::new("UPDATE sends SET thread_id = ?1 WHERE id = ?2").bind(thread_id).bind(send_id);
    let known = Statement::new(
        "INSERT OR IGNORE INTO mail_thread_message_ids (mailbox_id, message_id, thread_id) \
         SELECT mailbox_id, message_id, ?1 FROM sends WHERE id = ?2 AND message_id IS NOT NULL",
    )
    .bind(thread_id)
    .bind(send_id);
    vec![thread, link, known]
}

/// The Message-ID the mail service reported for a send (it sets its own on what
/// leaves): recorded on the send and known to its conversation, so a reply to
/// it threads.
pub fn sent_as(send_id: &str, mailbox_id: &str, thread_id: Option<&str>, message_id: &str) -> Vec<Statement> {
    let mut statements = vec![
        Statement::new(
            "UPDATE sends SET sent_message_ids_json = json_insert(sent_message_ids_json, '$[#]', ?2) \
             WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM json_each(sent_message_ids_json) WHERE value = ?2)",
        )
        .bind(send_id)
        .bind(message_id),
    ];
    if let Some(thread_id) = thread_id {
        statements.push(
            Statement::new(
                "INSERT OR IGNORE INTO mail_thread_message_ids (mailbox_id, message_id, thread_id) VALUES (?1, ?2, ?3)",
            )
            .bind(mailbox_id)
            .bind(message_id)
            .bind(thread_id),
        );
    }
    statements
}

/// A received message about to be deleted leaves its conversation: its counts
/// and latest message move back. Runs before the receipt's deletion. The
/// conversation keeps knowing its Message-ID, so a late reply still threads.
pub fn leave(receipt_id: &str) -> Statement {
    Statement::new(
        "UPDATE mail_threads SET received_count = max(received_count - 1, 0), \
           latest_receipt_id = (SELECT r.id FROM receipts r WHERE r.thread_id = mail_threads.id AND r.id != ?1 \
                                ORDER BY r.rowid DESC LIMIT 1) \
         WHERE id = (SELECT thread_id FROM receipts WHERE id = ?1)",
    )
    .bind(receipt_id)
}

#[cfg(test)]
mod tests {
    use super::subject_key;

    #[test]
    fn reply_and_forward_prefixes_are_not_the_subject() {
        assert_eq!(subject_key("Re: RE[2]: Fwd:  Invoice  4471"), ("invoice 4471".to_string(), true));
        assert_eq!(subject_key("AW: Angebot"), ("angebot".to_string(), true));
        assert_eq!(subject_key("Fwd: Angebot"), ("angebot".to_string(), false));
        assert_eq!(subject_key("Invoice: March"), ("invoice: march".to_string(), false));
        assert_eq!(subject_key(""), (String::new(), false));
    }
}
