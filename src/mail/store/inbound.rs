//! The statements of the email handler: what its first round trip reads (the
//! mailbox at the recipient address, the receipts claiming the Message-ID) and
//! the receipt a delivered message is stored as.

use mailroom_contract::api::SenderAuthentication;
use serde::Deserialize;

use crate::core::mailbox_storage::spans_stores;
use crate::core::storage::{Insert, Statement};
use crate::mail::threads::linking::Recipient;

/// The mailbox delivered to at `address`: its `id`, and `mail_moved_at`, set
/// when its mail is in its own database (decision 0040).
pub(crate) fn mailbox_at(address: &str) -> Statement {
    Statement::new("SELECT id, mail_moved_at FROM mailboxes WHERE address = ?1").bind(address)
}

/// A receipt of the mailbox at the recipient address that holds a
/// Message-ID, as its own or as one it reused.
#[derive(Deserialize)]
pub(crate) struct Claimant {
    pub(crate) id: String,
    pub(crate) content_digest: Option<String>,
    pub(crate) raw_key: String,
    pub(crate) sender_authentication: SenderAuthentication,
}

/// The receipts of the `recipient` mailbox that hold `message_id`
/// (`Claimant`s), first stored first: in D1's first read, the mailbox found by
/// its address; in the mailbox's own database, which holds its receipts alone,
/// by its id.
pub(crate) fn claimants(recipient: &Recipient<'_>, message_id: &str) -> Statement {
    let columns = "r.id, r.content_digest, r.raw_key, r.sender_authentication";
    let holding = "(r.message_id = ?2 OR r.claimed_message_id = ?2) ORDER BY r.rowid";
    match recipient {
        Recipient::Address(address) => spans_stores(
            Statement::new(format!(
                "SELECT {columns} FROM receipts r JOIN mailboxes m ON m.id = r.mailbox_id \
                 WHERE m.address = ?1 AND {holding}"
            ))
            .bind(*address)
            .bind(message_id),
        ),
        Recipient::Mailbox { id, .. } => {
            Statement::new(format!("SELECT {columns} FROM receipts r WHERE r.mailbox_id = ?1 AND {holding}"))
                .bind(*id)
                .bind(message_id)
        }
    }
}

/// A received message as its receipt stores it: each column of `receipts`
/// but `filed_by` (a delivery is filed by no butler), named once.
pub(crate) struct NewReceipt<'a> {
    pub(crate) id: &'a str,
    pub(crate) mailbox_id: &'a str,
    /// Its own Message-ID, or the key it is kept under when it reused another's.
    pub(crate) message_id: &'a str,
    pub(crate) envelope_from: &'a str,
    pub(crate) from_address: Option<String>,
    pub(crate) from_name: Option<String>,
    pub(crate) to_json: String,
    pub(crate) cc_json: String,
    /// Every recipient's name and address, for the header index.
    pub(crate) recipients: String,
    pub(crate) subject: &'a str,
    pub(crate) sent_at: Option<i64>,
    /// This Worker's clock; stored no earlier than the last receipt's time.
    pub(crate) received_at: i64,
    pub(crate) in_reply_to_json: String,
    pub(crate) references_json: String,
    pub(crate) size: i64,
    pub(crate) raw_key: &'a str,
    pub(crate) text_body: &'a str,
    pub(crate) text_source: &'static str,
    pub(crate) text_truncated: bool,
    pub(crate) attachments_json: String,
    pub(crate) reply_to_json: String,
    pub(crate) to_not_kept: i64,
    pub(crate) cc_not_kept: i64,
    pub(crate) attachments_not_listed: i64,
    pub(crate) thread_id: &'a str,
    pub(crate) sender_authentication: &'static str,
    pub(crate) authentication_json: String,
    pub(crate) content_digest: &'a str,
    /// The Message-ID it claimed, when it reused one the mailbox held.
    pub(crate) claimed_message_id: Option<&'a str>,
}

/// The receipt of a received message. Mail is listed and searched newest
/// first in the order it was stored (the receipts' rowid, decision 0014): a
/// delivery that commits after another can hold an earlier clock, so it takes
/// the time of the one stored before it instead, and newest first by time and
/// by storage never disagree.
pub(crate) fn receipt(row: NewReceipt<'_>) -> Insert {
    Insert::into("receipts")
        .value("id", row.id)
        .value("mailbox_id", row.mailbox_id)
        .value("message_id", row.message_id)
        .value("envelope_from", row.envelope_from)
        .value("from_address", row.from_address)
        .value("from_name", row.from_name)
        .value("to_json", row.to_json)
        .value("cc_json", row.cc_json)
        .value("recipients", row.recipients)
        .value("subject", row.subject)
        .value("sent_at", row.sent_at)
        .computed(
            "received_at",
            "MAX({}, COALESCE((SELECT latest.received_at FROM receipts latest ORDER BY latest.rowid DESC LIMIT 1), {}))",
            row.received_at,
        )
        .value("in_reply_to_json", row.in_reply_to_json)
        .value("references_json", row.references_json)
        .value("size", row.size)
        .value("raw_key", row.raw_key)
        .value("text_body", row.text_body)
        .value("text_source", row.text_source)
        .value("text_truncated", i64::from(row.text_truncated))
        .value("attachments_json", row.attachments_json)
        .value("reply_to_json", row.reply_to_json)
        .value("to_not_kept", row.to_not_kept)
        .value("cc_not_kept", row.cc_not_kept)
        .value("attachments_not_listed", row.attachments_not_listed)
        .value("thread_id", row.thread_id)
        .value("sender_authentication", row.sender_authentication)
        .value("authentication_json", row.authentication_json)
        .value("content_digest", row.content_digest)
        .value("claimed_message_id", row.claimed_message_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::SqliteDatabase;

    /// A received message's receipt is written whole from here: it names every
    /// column of `receipts` but the one a delivery leaves to its default
    /// (`filed_by`: only a butler's filed copy is filed by someone).
    #[test]
    fn a_receipt_takes_every_column_but_the_one_left_to_its_default() {
        let row = NewReceipt {
            id: "rcp_1",
            mailbox_id: "mbx_1",
            message_id: "<1@example.com>",
            envelope_from: "a@example.com",
            from_address: None,
            from_name: None,
            to_json: "[]".into(),
            cc_json: "[]".into(),
            recipients: String::new(),
            subject: "",
            sent_at: None,
            received_at: 0,
            in_reply_to_json: "[]".into(),
            references_json: "[]".into(),
            size: 0,
            raw_key: "raw/0",
            text_body: "",
            text_source: "plain",
            text_truncated: false,
            attachments_json: "[]".into(),
            reply_to_json: "[]".into(),
            to_not_kept: 0,
            cc_not_kept: 0,
            attachments_not_listed: 0,
            thread_id: "thr_1",
            sender_authentication: "unauthenticated",
            authentication_json: "{}".into(),
            content_digest: "",
            claimed_message_id: None,
        };
        let insert = receipt(row);
        assert_eq!(SqliteDatabase::migrated().columns_not_named(&insert), ["filed_by"]);
    }
}
