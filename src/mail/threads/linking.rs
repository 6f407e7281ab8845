//! Which conversation a message belongs to, and the statements that keep a
//! conversation's counts and Message-IDs as messages arrive, leave and go.
//!
//! A message joins the conversation of the first Message-ID it names that the
//! mailbox knows: its own (a copy of something the mailbox sent), then its
//! In-Reply-To, then its References from the most recent back. Only when none is
//! known, and the subject reads as a reply (`Re:`, `AW:`, …), does it join a
//! recent conversation with the same subject, and then only one its sender is
//! already part of, so a stranger cannot slip mail into someone else's
//! conversation by its subject (decision 0020).

use mailroom_contract::api::ThreadStatus;
use mailroom_contract::api::thread_limits::SUBJECT_MATCH_DAYS;

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

/// The conversation in the mailbox at `address` that knows one of `wanted`
/// (a JSON array, most telling first).
pub fn by_message_ids(address: &str, wanted: &str) -> Statement {
    Statement::new(
        "SELECT k.thread_id FROM json_each(?2) AS wanted \
         JOIN mailboxes m ON m.address = ?1 \
         JOIN mail_thread_message_ids k ON k.mailbox_id = m.id AND k.message_id = wanted.value \
         ORDER BY wanted.key LIMIT 1",
    )
    .bind(address)
    .bind(wanted)
}

/// The last resort: a recent conversation in the mailbox at `address` with the
/// same subject key, that `sender` already wrote in or was written to. Matches
/// nothing when the subject does not read as a reply or there is no sender.
pub fn by_subject(address: &str, subject: &str, sender: Option<&str>, now_ms: i64) -> Statement {
    let (key, replying) = subject_key(subject);
    let sender = sender.filter(|_| replying && !key.is_empty()).map(str::to_lowercase);
    Statement::new(
        "SELECT t.id AS thread_id FROM mail_threads t JOIN mailboxes m ON m.id = t.mailbox_id AND m.address = ?1 \
         WHERE ?3 IS NOT NULL AND t.subject_key = ?2 AND t.last_activity_at >= ?4 \
         AND (EXISTS (SELECT 1 FROM receipts r WHERE r.thread_id = t.id AND lower(r.from_address) = ?3) \
              OR EXISTS (SELECT 1 FROM sends s, json_each(s.to_json) AS j WHERE s.thread_id = t.id \
                         AND (lower(j.value) = ?3 OR lower(j.value) LIKE '%<' || ?3 || '>'))) \
         ORDER BY t.last_activity_at DESC LIMIT 1",
    )
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

/// The conversation of mailbox `?` that a message (`receipts r`) belongs to
/// by its Message-ID, In-Reply-To or References, for a copy filed there: SQL
/// for a subquery with one parameter, the mailbox.
pub const THREAD_BY_MESSAGE_IDS_OF_R: &str = "SELECT k.thread_id FROM mail_thread_message_ids k \
     WHERE k.mailbox_id = ? AND k.message_id IN (SELECT r.message_id UNION ALL \
       SELECT value FROM json_each(r.in_reply_to_json) UNION ALL SELECT value FROM json_each(r.references_json)) \
     LIMIT 1";

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
