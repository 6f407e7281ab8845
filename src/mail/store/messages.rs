//! Reading received mail: the summary every list and search shows, where a
//! page in storage order continues, a mailbox's page, and one receipt in full.

use mailroom_contract::api::SenderAuthentication;
use serde::Deserialize;

use crate::core::storage::Statement;

/// The columns every message query selects: a receipt's summary, and how many
/// attachments it has (those listed and those not).
pub(crate) const SUMMARY_COLUMNS: &str = "r.id, r.mailbox_id, r.from_address, r.from_name, r.to_json, r.to_not_kept, \
     r.cc_json, r.cc_not_kept, r.subject, r.sent_at, r.received_at, r.size, \
     json_array_length(r.attachments_json) + r.attachments_not_listed AS attachment_count, r.sender_authentication";

/// A receipt's summary as stored.
#[derive(Clone, Debug, Deserialize)]
pub struct SummaryRow {
    pub id: String,
    pub mailbox_id: String,
    pub from_address: Option<String>,
    pub from_name: Option<String>,
    pub to_json: String,
    pub to_not_kept: i64,
    pub cc_json: String,
    pub cc_not_kept: i64,
    pub subject: String,
    pub sent_at: Option<i64>,
    pub received_at: i64,
    pub size: i64,
    pub attachment_count: i64,
    pub sender_authentication: SenderAuthentication,
}

/// The condition "stored before the receipt whose id is bound at `placeholder`"
/// on `column` (a receipt's rowid, or a search index's, which is the same), for a
/// list in storage order that continues after that receipt: the position is
/// looked up by id, so a cursor never carries it, and a receipt deleted since
/// is looked up where it was (`deleted_receipts`), so the list goes on from
/// there. A receipt's rowid grows with every one stored and its `received_at`
/// never falls behind the one stored before it (`inbound`), so this order is
/// newest first by both (decision 0014).
pub(crate) fn stored_before(column: &str, placeholder: &str) -> String {
    format!(
        "{column} < (SELECT coalesce(kept.rowid, gone.stored) FROM (SELECT {placeholder} AS id) AS continuing \
         LEFT JOIN receipts kept ON kept.id = continuing.id LEFT JOIN deleted_receipts gone ON gone.id = continuing.id)"
    )
}

/// A page of `mailbox_id`'s receipts (`SummaryRow`s), newest first in the
/// order they were stored, after receipt `after` when given: walked backwards
/// along the mailbox's index, so a page costs the same however much it holds.
pub(crate) fn page(mailbox_id: &str, limit: i64, after: Option<&str>) -> Statement {
    let continuing = if after.is_some() { format!("AND {}", stored_before("r.rowid", "?3")) } else { String::new() };
    let mut page = Statement::new(format!(
        "SELECT {SUMMARY_COLUMNS} FROM receipts r WHERE r.mailbox_id = ?1 {continuing} ORDER BY r.rowid DESC LIMIT ?2"
    ))
    .bind(mailbox_id)
    .bind(limit + 1);
    if let Some(after) = after {
        page = page.bind(after);
    }
    page
}

#[derive(Deserialize)]
pub(crate) struct DetailRow {
    #[serde(flatten)]
    pub(crate) summary: SummaryRow,
    pub(crate) message_id: String,
    /// The Message-ID it carried, when it reused one another message in the
    /// mailbox holds and is kept under a key of its own.
    pub(crate) claimed_message_id: Option<String>,
    pub(crate) authentication_json: String,
    pub(crate) reply_to_json: String,
    pub(crate) in_reply_to_json: String,
    pub(crate) references_json: String,
    pub(crate) attachments_json: String,
    pub(crate) raw_key: String,
    #[serde(default)]
    pub(crate) text_body: String,
    #[serde(default)]
    pub(crate) text_source: String,
    #[serde(default)]
    pub(crate) text_truncated: i64,
}

/// Receipt `receipt_id` of `mailbox_id` in full (`DetailRow`), its text only
/// `with_text` (for a route that declares it reads content).
pub(crate) fn detail(receipt_id: &str, mailbox_id: &str, with_text: bool) -> Statement {
    let text = if with_text { ", r.text_body, r.text_source, r.text_truncated" } else { "" };
    Statement::new(format!(
        "SELECT {SUMMARY_COLUMNS}, r.message_id, r.claimed_message_id, r.authentication_json, r.reply_to_json, \
         r.in_reply_to_json, r.references_json, r.attachments_json, r.raw_key{text} \
         FROM receipts r WHERE r.id = ?1 AND r.mailbox_id = ?2"
    ))
    .bind(receipt_id)
    .bind(mailbox_id)
}
