//! The search's SQL: both arms over the FTS5 indexes, the statements that
//! index a receipt, and the selection an eDiscovery export copies, matched as
//! the search matches.

use serde::Deserialize;

use super::messages::{SUMMARY_COLUMNS, SummaryRow, stored_before};
use crate::core::ids::IdKind;
use crate::core::mailbox_storage::spans_stores;
use crate::core::storage::{Statement, Value};

/// One arm of the search: an FTS5 index over the receipts (migrations 0002 and
/// 0010), the columns the caller's words are matched in (never its `mailbox_id`),
/// and what a hit shows of them.
#[derive(Clone, Copy)]
pub(crate) enum Arm {
    Headers,
    Bodies,
}

impl Arm {
    fn index(self) -> &'static str {
        match self {
            Arm::Headers => "receipt_headers_index",
            Arm::Bodies => "receipt_bodies_index",
        }
    }

    fn columns(self) -> &'static str {
        match self {
            Arm::Headers => "from_address from_name recipients subject",
            Arm::Bodies => "text_body",
        }
    }

    fn snippet(self) -> &'static str {
        match self {
            Arm::Headers => "NULL",
            Arm::Bodies => "snippet(receipt_bodies_index, 0, '[', ']', '…', 12)",
        }
    }
}

#[derive(Deserialize)]
pub(crate) struct HitRow {
    #[serde(flatten)]
    pub(crate) summary: SummaryRow,
    /// Where the receipt was stored (its rowid): the order both arms walk in.
    pub(crate) stored: i64,
    pub(crate) snippet: Option<String>,
}

/// Where one store's walk continues a search's page (the position of the
/// last hit shown is a time, the store it came from and its receipt, decision
/// 0040): from the newest; in the store that holds the receipt, after it in
/// storage order; in a store that comes after it among hits of the same time,
/// from that time; in one that comes before, from before that time.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Continuing<'a> {
    FromTheNewest,
    AfterReceipt(&'a str),
    AtOrBefore(i64),
    Before(i64),
}

/// The D1 mailboxes among `visible` (a query answering ids, with its
/// parameters, from `authz::tuples`): those whose mail is in D1. The rest
/// are searched in their own databases.
pub(crate) fn kept_in_d1(visible: (String, Vec<Value>)) -> (String, Vec<Value>) {
    let (visible, parameters) = visible;
    (
        format!("SELECT k.id FROM ({visible}) k JOIN mailboxes km ON km.id = k.id WHERE km.mail_moved_at IS NULL"),
        parameters,
    )
}

/// The mailboxes whose mail is in their own databases among those searched
/// by their headers (`by_headers`, a query answering ids, with its
/// parameters), in the order of their ids, after `group_after` (from the
/// first where `None`), at most `group` and one more, which tells whether
/// another group follows: `id`; `bodies`, 1 where it is among `by_bodies`
/// too (which needs more, so holds no other); `in_all`, how many there are in
/// all; `place`, where it stands among them, from 1.
pub(crate) fn moved_among(
    by_headers: (String, Vec<Value>),
    by_bodies: (String, Vec<Value>),
    group_after: Option<&str>,
    group: usize,
) -> Statement {
    let ((headers, headers_parameters), (bodies, mut parameters)) = (by_headers, by_bodies);
    parameters.extend(headers_parameters);
    parameters.push(group_after.unwrap_or_default().into());
    parameters.push(i64::try_from(group).unwrap_or(i64::MAX).saturating_add(1).into());
    Statement {
        sql: format!(
            "SELECT id, bodies, in_all, place FROM (SELECT k.id, k.id IN ({bodies}) AS bodies, \
             count(*) OVER () AS in_all, row_number() OVER (ORDER BY k.id) AS place \
             FROM ({headers}) k JOIN mailboxes km ON km.id = k.id WHERE km.mail_moved_at IS NOT NULL) \
             WHERE id > ? ORDER BY id LIMIT ?"
        )
        .into(),
        parameters,
    }
}

/// One arm's walk (`HitRow`s): `query` (an FTS5 query) in the arm's columns
/// AND one of the `visible` mailboxes (a query answering their ids, with its
/// parameters), or only `mailbox_id` among them, newest first in storage
/// order from where `continuing` says, one more than `limit`.
pub(crate) fn arm(
    arm: Arm,
    query: &str,
    visible: (String, Vec<Value>),
    mailbox_id: Option<&str>,
    continuing: Continuing<'_>,
    limit: i64,
) -> Statement {
    let index = arm.index();
    let (visible, visible_parameters) = visible;
    let ulid_starts_at = IdKind::Mailbox.prefix().len() + 1;
    let only_this_mailbox = if mailbox_id.is_some() { " WHERE v.id = ?" } else { "" };
    let matching = format!(
        "{index} MATCH (SELECT ? || ' AND mailbox_id : (' \
         || COALESCE(group_concat('\"' || substr(v.id, {ulid_starts_at}) || '\"', ' OR '), '\"none\"') || ')' \
         FROM ({visible}) v{only_this_mailbox})"
    );
    let mut conditions = vec![matching, format!("r.mailbox_id IN ({visible})")];
    let mut parameters: Vec<Value> = vec![format!("{{{}}} : ({query})", arm.columns()).into()];
    parameters.extend(visible_parameters.iter().cloned());
    parameters.extend(mailbox_id.iter().map(|id| Value::from(*id)));
    parameters.extend(visible_parameters);
    if let Some(mailbox_id) = mailbox_id {
        conditions.push("r.mailbox_id = ?".into());
        parameters.push(mailbox_id.into());
    }
    spans_stores(walk(arm, (conditions, parameters), continuing, limit))
}

/// One arm's walk in a mailbox's own database (`HitRow`s), as `arm` walks
/// D1: `query` in the arm's columns, newest first in storage order from
/// where `continuing` says, one more than `limit`. Every receipt there is
/// the mailbox's; whether the caller may search it was decided on D1
/// (`searchable`).
pub(crate) fn arm_in_mailbox(arm: Arm, query: &str, continuing: Continuing<'_>, limit: i64) -> Statement {
    let parameters: Vec<Value> = vec![format!("{{{}}} : ({query})", arm.columns()).into()];
    walk(arm, (vec![format!("{} MATCH ?", arm.index())], parameters), continuing, limit)
}

/// An arm's walk of its index newest first in storage order, on `conditions`
/// (with their parameters, each `?` in order), from where `continuing` says,
/// one more than `limit`: what `arm` and `arm_in_mailbox` share. A time is
/// found in storage order by the receipts' index of times, since a receipt's
/// time never falls behind the one stored before it (decision 0014): the
/// walk starts at the last receipt of that time (or before it), without
/// visiting the newer ones.
fn walk(
    arm: Arm,
    (mut conditions, mut parameters): (Vec<String>, Vec<Value>),
    continuing: Continuing<'_>,
    limit: i64,
) -> Statement {
    let index = arm.index();
    let from_time = |comparison: &str| {
        format!(
            "{index}.rowid <= (SELECT latest.rowid FROM receipts latest WHERE latest.received_at {comparison} ? \
             ORDER BY latest.received_at DESC, latest.rowid DESC LIMIT 1)"
        )
    };
    match continuing {
        Continuing::FromTheNewest => {}
        Continuing::AfterReceipt(receipt_id) => {
            conditions.push(stored_before(&format!("{index}.rowid"), "?"));
            parameters.push(receipt_id.into());
        }
        Continuing::AtOrBefore(at) => {
            conditions.push(from_time("<="));
            parameters.push(at.into());
        }
        Continuing::Before(at) => {
            conditions.push(from_time("<"));
            parameters.push(at.into());
        }
    }
    parameters.push((limit + 1).into());
    Statement {
        sql: format!(
            "SELECT {SUMMARY_COLUMNS}, r.rowid AS stored, {} AS snippet \
             FROM {index} JOIN receipts r ON r.rowid = {index}.rowid \
             WHERE {} ORDER BY {index}.rowid DESC LIMIT ?",
            arm.snippet(),
            conditions.join(" AND ")
        )
        .into(),
        parameters,
    }
}

/// Whether mailbox `mailbox_id` is among the `visible` mailboxes (a query
/// answering their ids, with its parameters, from `authz::tuples`): one
/// column, `searchable`, 1 or 0.
pub(crate) fn searchable(visible: (String, Vec<Value>), mailbox_id: &str) -> Statement {
    let (visible, mut parameters) = visible;
    parameters.push(mailbox_id.into());
    Statement {
        sql: format!("SELECT EXISTS (SELECT 1 FROM ({visible}) v WHERE v.id = ?) AS searchable").into(),
        parameters,
    }
}

/// What each search index holds of a receipt: its name and the receipt's
/// columns it indexes, in order.
const INDEXED: [(&str, &str); 2] = [
    ("receipt_headers_index", "from_address, from_name, recipients, subject, mailbox_id"),
    ("receipt_bodies_index", "text_body, mailbox_id"),
];

/// The search indexes over the receipts: external content, written beside
/// each receipt and never copied as rows.
pub(crate) const INDEXES: [&str; 2] = [INDEXED[0].0, INDEXED[1].0];

/// The statements that make the receipts whose rowids `rowids` (a query, its
/// parameters bound by the caller) answers searchable, by their headers and
/// by their text: after their insert, in the same batch.
fn indexed_in(rowids: &str) -> [Statement; 2] {
    INDEXED.map(|(index, columns)| {
        Statement::new(format!(
            "INSERT INTO {index} (rowid, {columns}) SELECT rowid, {columns} FROM receipts WHERE rowid IN ({rowids})"
        ))
    })
}

/// The statements that take the receipts whose rowids `rowids` (a query,
/// its parameters bound by the caller) answers out of both search indexes,
/// with the values they are indexed with (an external-content index is told
/// what to forget): before their row is changed or removed.
pub(crate) fn unindexed_in(rowids: &str) -> [Statement; 2] {
    INDEXED.map(|(index, columns)| {
        Statement::new(format!(
            "INSERT INTO {index} ({index}, rowid, {columns}) SELECT 'delete', rowid, {columns} FROM receipts \
             WHERE rowid IN ({rowids})"
        ))
    })
}

/// The rowid of receipt `?1`, as `indexed_in` and `unindexed_in` take it.
const THE_RECEIPT: &str = "SELECT rowid FROM receipts WHERE id = ?1";
/// The rowids of a JSON array `?1`, as `indexed_in` and `unindexed_in` take them.
const THE_ROWIDS: &str = "SELECT value FROM json_each(?1)";

/// The statements that make receipt `receipt_id` searchable: after its
/// insert, in the same batch.
pub(crate) fn indexed(receipt_id: &str) -> [Statement; 2] {
    indexed_in(THE_RECEIPT).map(|statement| statement.bind(receipt_id))
}

/// The statements that make the receipts stored at `rowids` (a JSON array)
/// searchable, as `indexed` makes one.
pub(crate) fn indexed_at(rowids: &str) -> [Statement; 2] {
    indexed_in(THE_ROWIDS).map(|statement| statement.bind(rowids))
}

/// The statements that take receipt `receipt_id` out of the search indexes,
/// before it is deleted.
pub(crate) fn unindexed(receipt_id: &str) -> [Statement; 2] {
    unindexed_in(THE_RECEIPT).map(|statement| statement.bind(receipt_id))
}

/// The statements that take the receipts at `rowids` (a JSON array) out of
/// the search indexes, before their rows are replaced or removed.
pub(crate) fn unindexed_at(rowids: &str) -> [Statement; 2] {
    unindexed_in(THE_ROWIDS).map(|statement| statement.bind(rowids))
}

/// The condition on `receipts r` selecting the receipts of `mailbox_ids`
/// received from `from_ms` and before `before_ms` whose headers or body match
/// `words`, with its parameters (each `?`, in order).
pub(crate) fn selection(
    mailbox_ids: &[String],
    from_ms: Option<i64>,
    before_ms: Option<i64>,
    words: Option<&str>,
) -> (String, Vec<Value>) {
    let mut condition = "r.mailbox_id IN (SELECT value FROM json_each(?))".to_string();
    let mut parameters: Vec<Value> = vec![serde_json::json!(mailbox_ids).to_string().into()];
    if let Some(since) = from_ms {
        condition.push_str(" AND r.received_at >= ?");
        parameters.push(since.into());
    }
    if let Some(until) = before_ms {
        condition.push_str(" AND r.received_at < ?");
        parameters.push(until.into());
    }
    if let Some(words) = words {
        // Both arms of search: a match in the headers or in the body.
        condition.push_str(
            " AND (r.rowid IN (SELECT rowid FROM receipt_headers_index WHERE receipt_headers_index MATCH ?) \
             OR r.rowid IN (SELECT rowid FROM receipt_bodies_index WHERE receipt_bodies_index MATCH ?))",
        );
        parameters.push(format!("{{from_address from_name recipients subject}} : ({words})").into());
        parameters.push(format!("{{text_body}} : ({words})").into());
    }
    (condition, parameters)
}

/// Where a selection is asked: D1, of the mailboxes whose mail is there, or
/// a mailbox's own database, of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectedIn {
    D1,
    OwnDatabase,
}

/// `selection`'s condition where it is asked: on D1, kept to the mailboxes
/// whose mail is there (what D1 holds of a moved one is a copy).
fn selected_in((condition, parameters): &(String, Vec<Value>), place: SelectedIn) -> (String, Vec<Value>) {
    match place {
        SelectedIn::D1 => (
            format!("{condition} AND r.mailbox_id IN (SELECT id FROM mailboxes WHERE mail_moved_at IS NULL)"),
            parameters.clone(),
        ),
        SelectedIn::OwnDatabase => (condition.clone(), parameters.clone()),
    }
}

/// How many receipts `selection` selects where it is asked (`n`).
pub(crate) fn selection_counted(selection: &(String, Vec<Value>), place: SelectedIn) -> Statement {
    let (condition, parameters) = selected_in(selection, place);
    let statement =
        Statement { sql: format!("SELECT count(*) AS n FROM receipts r WHERE {condition}").into(), parameters };
    match place {
        SelectedIn::D1 => spans_stores(statement),
        SelectedIn::OwnDatabase => statement,
    }
}

/// The first `limit` receipts `selection` selects where it is asked, in the
/// order they were received (time, then id): `receipt_id`, `mailbox_id`,
/// `message_id`, `subject`, `received_at`, `raw_key`.
pub(crate) fn selection_in_order(selection: &(String, Vec<Value>), place: SelectedIn, limit: i64) -> Statement {
    let (condition, mut parameters) = selected_in(selection, place);
    parameters.push(limit.into());
    let statement = Statement {
        sql: format!(
            "SELECT r.id AS receipt_id, r.mailbox_id, r.message_id, r.subject, r.received_at, r.raw_key \
             FROM receipts r WHERE {condition} ORDER BY r.received_at, r.id LIMIT ?"
        )
        .into(),
        parameters,
    };
    match place {
        SelectedIn::D1 => spans_stores(statement),
        SelectedIn::OwnDatabase => statement,
    }
}
