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

use super::store;
pub use super::store::Recipient;
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

/// The conversation of the `recipient` mailbox that knows one of `wanted` (a
/// JSON array, most telling first) and admits a message from `sender` about
/// `subject`: one its sender is known to, or whose subject it carries.
pub fn by_message_ids(recipient: &Recipient<'_>, wanted: &str, sender: Option<&str>, subject: &str) -> Statement {
    store::by_message_ids(recipient, wanted, sender.map(str::to_lowercase), subject_key(subject).0)
}

/// The last resort: a recent conversation of the `recipient` mailbox with the
/// same subject key, that `sender` is known to. Matches nothing when the
/// subject does not read as a reply or there is no sender.
pub fn by_subject(recipient: &Recipient<'_>, subject: &str, sender: Option<&str>, now_ms: i64) -> Statement {
    let (key, replying) = subject_key(subject);
    let sender = sender.filter(|_| replying && !key.is_empty()).map(str::to_lowercase);
    store::by_subject(recipient, key, sender, now_ms - SUBJECT_MATCH_DAYS * 24 * 60 * 60 * 1000)
}

/// A received message stored as `receipt_id` joins conversation `thread_id`,
/// existing or (`new`) begun by it: its counts, latest message and activity
/// move, and a waiting or closed conversation opens again. Runs after the
/// receipt's insert, in the same batch.
pub fn receive_into(thread_id: &str, new: bool, receipt_id: &str, subject: &str) -> Vec<Statement> {
    let thread = if new {
        store::begun_by_receipt(thread_id, receipt_id, subject_key(subject).0)
    } else {
        store::joined_by_receipt(thread_id, receipt_id)
    };
    vec![thread, store::known_by_its_message_id(receipt_id)]
}

/// A copy a butler filed in another mailbox (`receipt_id`, decision 0023)
/// joins the conversation its insert found by Message-ID there, or begins
/// `new_thread_id`; when the insert kept nothing (that mailbox already held the
/// message, or the sponsor no longer reads it) neither statement touches a row.
/// Runs after the copy's insert, in the same batch.
pub fn file_into(receipt_id: &str, new_thread_id: &str, subject: &str) -> Vec<Statement> {
    vec![
        store::begun_by_filed_copy(receipt_id, new_thread_id, subject_key(subject).0),
        store::joined_by_filed_copy(receipt_id, new_thread_id),
        store::known_by_its_message_id(receipt_id),
    ]
}

/// The conversation of a mailbox that a message (`receipts r`) belongs to by
/// its Message-ID (or the one it reused), In-Reply-To or References, for a copy
/// filed there, admitted as `by_message_ids` admits one: SQL for a subquery
/// with two parameters, the mailbox and the message's subject key
/// (`subject_key`).
pub fn thread_by_message_ids_of_r() -> String {
    store::thread_by_message_ids_of_r_in_d1()
}

/// `thread_by_message_ids_of_r` with each of its inputs an SQL expression:
/// the mailbox's id, the message's subject key and the mailbox's address,
/// which a mailbox's own database, holding no directory, is given.
pub fn thread_by_message_ids_of_r_in(mailbox_id: &str, subject_key: &str, mailbox_address: &str) -> String {
    store::thread_by_message_ids_of_r(mailbox_id, subject_key, mailbox_address)
}

/// A send just sealed joins its conversation, or begins one (`thread_id`, new
/// when the send answers nothing): counts and activity move, and its sealed
/// Message-ID becomes one the conversation is known by. Runs after the seal.
pub fn seal_into(send_id: &str, thread_id: &str, new: bool, subject: &str) -> Vec<Statement> {
    let thread = if new {
        store::begun_by_send(thread_id, send_id, subject_key(subject).0)
    } else {
        store::joined_by_send(thread_id, send_id)
    };
    let [link, known] = store::send_linked(thread_id, send_id);
    vec![thread, link, known]
}

/// The Message-ID the mail service reported for a send (it sets its own on what
/// leaves): recorded on the send and known to its conversation, so a reply to
/// it threads.
pub fn sent_as(send_id: &str, mailbox_id: &str, thread_id: Option<&str>, message_id: &str) -> Vec<Statement> {
    let mut statements = vec![store::sent_message_id_recorded(send_id, message_id)];
    if let Some(thread_id) = thread_id {
        statements.push(store::known_by(mailbox_id, message_id, thread_id));
    }
    statements
}

/// A received message about to be deleted leaves its conversation: its counts
/// and latest message move back. Runs before the receipt's deletion. The
/// conversation keeps knowing its Message-ID, so a late reply still threads.
pub fn leave(receipt_id: &str) -> Statement {
    store::left_by_receipt(receipt_id)
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
