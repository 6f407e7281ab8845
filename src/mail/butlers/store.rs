//! Every statement about butlers: a butler as its routes read it (`ButlerRow`,
//! with its versions and what its sponsor holds), the active ones a delivery
//! reads (`ActiveButler`) with what is around the delivery, and the writes of
//! a butler, its versions, its publishing and its runs; and the statements its
//! effects carry out on mail (a conversation's status and assignee, a copy
//! filed in another mailbox). `mod`'s routes, `delivery` and `surroundings`
//! decide and batch; this file spells the SQL.

use mailroom_contract::Relation;
use mailroom_contract::api::{ButlerRules, ThreadStatus, butler_limits};
use serde::Deserialize;

use crate::authz::tuples::{self, Holder};
use crate::core::mailbox_storage::spans_stores;
use crate::core::storage::{Insert, Statement, Value};
use crate::mail::threads::linking;

/// The columns a butler is read with: itself, its sponsor's name, every version
/// newest first, and what its sponsor holds on its mailbox now.
fn butler_columns() -> String {
    format!(
        "b.id, b.mailbox_id, b.name, b.sponsor_id, b.published_version, b.active, \
         (SELECT p.name FROM people p WHERE p.id = b.sponsor_id) AS sponsor_name, \
         (SELECT json_group_array(json_object('version', v.version, 'rules', json(v.rules_json), \
            'created_at', v.created_at, 'created_by', v.created_by, 'published_at', v.published_at, \
            'pinned_relations', json(v.pinned_relations_json))) \
          FROM (SELECT * FROM butler_versions v WHERE v.butler_id = b.id ORDER BY v.version DESC) AS v) AS versions_json, \
         {} AS held_now, {} AS held_elsewhere",
        tuples::relations_of_person_in("b.sponsor_id", "b.mailbox_id"),
        held_elsewhere("butler_versions w, json_each(w.rules_json, '$.effects') e", "w.butler_id = b.id")
    )
}

/// SQL for what the sponsor (`b.sponsor_id`) holds now on each other mailbox
/// the effects in `effects` (FROM items ending in `json_each(…) e`, filtered by
/// `filter`) reach, as a JSON object of comma-separated relations by mailbox
/// id; a mailbox the node does not have is left out.
fn held_elsewhere(effects: &str, filter: &str) -> String {
    format!(
        "(SELECT json_group_object(f.target, COALESCE({}, '')) FROM \
           (SELECT DISTINCT json_extract(e.value, '$.mailbox') AS target FROM {effects} \
            WHERE {filter} AND json_extract(e.value, '$.do') = 'forward') f \
         WHERE f.target IN (SELECT id FROM mailboxes))",
        tuples::relations_of_person_in("b.sponsor_id", "f.target")
    )
}

/// One version of a butler, as `butler_columns` reads it (`versions_json`).
#[derive(Clone, Debug, Deserialize)]
pub(super) struct VersionRow {
    pub(super) version: i64,
    pub(super) rules: ButlerRules,
    pub(super) created_at: i64,
    pub(super) created_by: String,
    pub(super) published_at: Option<i64>,
    pub(super) pinned_relations: Option<Vec<String>>,
}

/// A butler as `butler_columns` reads it.
#[derive(Clone, Debug, Deserialize)]
pub(super) struct ButlerRow {
    pub(super) id: String,
    pub(super) mailbox_id: String,
    pub(super) name: String,
    pub(super) sponsor_id: String,
    pub(super) sponsor_name: Option<String>,
    pub(super) published_version: Option<i64>,
    pub(super) active: i64,
    pub(super) versions_json: String,
    pub(super) held_now: Option<String>,
    pub(super) held_elsewhere: Option<String>,
}

/// Butler `butler_id` of mailbox `mailbox_id`: one `ButlerRow`.
pub(super) fn butler(butler_id: &str, mailbox_id: &str) -> Statement {
    Statement::new(format!("SELECT {} FROM butlers b WHERE b.id = ?1 AND b.mailbox_id = ?2", butler_columns()))
        .bind(butler_id)
        .bind(mailbox_id)
}

/// The butlers of mailbox `mailbox_id` by name: `ButlerRow`s.
pub(super) fn butlers_of(mailbox_id: &str) -> Statement {
    Statement::new(format!("SELECT {} FROM butlers b WHERE b.mailbox_id = ?1 ORDER BY b.name, b.id", butler_columns()))
        .bind(mailbox_id)
}

/// Mailbox `mailbox_id`, if there is one: its `id`.
pub(super) fn mailbox(mailbox_id: &str) -> Statement {
    Statement::new("SELECT id FROM mailboxes WHERE id = ?1").bind(mailbox_id)
}

/// Person `person_id`'s `name`, while enabled: who may sponsor a butler.
pub(super) fn enabled_person(person_id: &str) -> Statement {
    Statement::new("SELECT name FROM people WHERE id = ?1 AND disabled_at IS NULL").bind(person_id)
}

/// A butler as it is created: every column of `butlers` but its published
/// version (none yet) and `active` (on by default, acting once published).
pub(super) struct NewButler<'a> {
    pub(super) id: &'a str,
    pub(super) mailbox_id: &'a str,
    pub(super) name: &'a str,
    pub(super) sponsor_id: &'a str,
    pub(super) created_by: &'a str,
    pub(super) created_at: i64,
}

/// The row of a new butler.
pub(super) fn butler_created(butler: NewButler<'_>) -> Insert {
    Insert::into("butlers")
        .value("id", butler.id)
        .value("mailbox_id", butler.mailbox_id)
        .value("name", butler.name)
        .value("sponsor_id", butler.sponsor_id)
        .value("created_by", butler.created_by)
        .value("created_at", butler.created_at)
}

/// A version of a butler as an edit writes it: a draft, until published.
pub(super) struct NewVersion<'a> {
    pub(super) butler_id: &'a str,
    pub(super) version: i64,
    pub(super) rules_json: String,
    pub(super) created_at: i64,
    pub(super) created_by: &'a str,
}

/// The row of a butler's new version; publishing fills in the rest.
pub(super) fn version_written(version: NewVersion<'_>) -> Insert {
    Insert::into("butler_versions")
        .value("butler_id", version.butler_id)
        .value("version", version.version)
        .value("rules_json", version.rules_json)
        .value("created_at", version.created_at)
        .value("created_by", version.created_by)
}

/// Butler `butler_id` renamed `name`.
pub(super) fn renamed(butler_id: &str, name: &str) -> Statement {
    Statement::new("UPDATE butlers SET name = ?1 WHERE id = ?2").bind(name).bind(butler_id)
}

/// Butler `butler_id` switched on or off.
pub(super) fn switched(butler_id: &str, active: bool) -> Statement {
    Statement::new("UPDATE butlers SET active = ?1 WHERE id = ?2").bind(i64::from(active)).bind(butler_id)
}

/// Version `version` of butler `butler_id` published by `published_by` at
/// `published_at`, pinning `pinned_json`, only while it is not published yet.
pub(super) fn version_published(
    butler_id: &str,
    version: i64,
    (published_by, published_at): (&str, i64),
    pinned_json: String,
) -> Statement {
    Statement::new(
        "UPDATE butler_versions SET published_at = ?3, published_by = ?4, pinned_relations_json = ?5 \
         WHERE butler_id = ?1 AND version = ?2 AND published_at IS NULL",
    )
    .bind(butler_id)
    .bind(version)
    .bind(published_at)
    .bind(published_by)
    .bind(pinned_json)
}

/// Butler `butler_id` acting by version `version`, and switched on.
pub(super) fn acting_by(butler_id: &str, version: i64) -> Statement {
    Statement::new("UPDATE butlers SET published_version = ?1, active = 1 WHERE id = ?2").bind(version).bind(butler_id)
}

/// The columns of `receipts r` a butler judges.
pub(super) const FACT_COLUMNS: &str = "r.from_address, r.from_name, r.to_json, r.cc_json, r.subject, \
     r.sender_authentication, r.attachments_json, r.reply_to_json";

/// The columns of `mail_threads t` a butler judges: the conversation's
/// subject, its assignee, and its labels as a JSON array.
const CONVERSATION_COLUMNS: &str = "t.subject AS conversation_subject, t.assignee AS conversation_assignee, \
     (SELECT json_group_array(l.label) FROM thread_labels l WHERE l.thread_id = t.id) AS conversation_labels";

/// `candidate`, a statement choosing the conversation a delivery joins (a
/// `thread_id` column), with what that conversation is now beside it
/// (`CONVERSATION_COLUMNS`). Its parameters are the candidate's own.
pub(super) fn with_conversation(candidate: Statement) -> Statement {
    Statement {
        sql: format!(
            "SELECT c.thread_id, {CONVERSATION_COLUMNS} FROM ({}) c LEFT JOIN mail_threads t ON t.id = c.thread_id",
            candidate.sql
        )
        .into(),
        parameters: candidate.parameters,
    }
}

/// The SQL expression "the assignees named by the assign effects in `effects`
/// (FROM items ending in `json_each(…) e`, filtered by `filter`) who work the
/// mailbox in column `mailbox` at `now_ms`", as a JSON array, with its
/// parameters: send.propose held there, an agent's intersected with its
/// sponsor's and only while live, as `update_thread` asks of an assignee.
fn assignees_working(effects: &str, filter: &str, mailbox: &str, now_ms: i64) -> (String, Vec<Value>) {
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

/// The SQL expression "the mailboxes whose mail is in D1 that the forward
/// effects in `effects` file copies in and that already hold a message whose
/// Message-ID is `message_id` (an SQL expression)", as a JSON array. A target
/// whose mail is in its own database is asked there (`holds_message`): what
/// D1 still holds of it is a copy.
fn targets_holding(effects: &str, filter: &str, message_id: &str) -> String {
    format!(
        "(SELECT json_group_array(f.target) FROM \
           (SELECT DISTINCT json_extract(e.value, '$.mailbox') AS target FROM {effects} \
            WHERE {filter} AND json_extract(e.value, '$.do') = 'forward') f \
         WHERE (SELECT mail_moved_at FROM mailboxes WHERE id = f.target) IS NULL \
           AND EXISTS (SELECT 1 FROM receipts h WHERE h.mailbox_id = f.target AND h.message_id = {message_id}))"
    )
}

/// Whether the mailbox's own database holds a message whose Message-ID is
/// `message_id`: `held`.
pub(super) fn holds_message(message_id: &str) -> Statement {
    Statement::new("SELECT EXISTS (SELECT 1 FROM receipts WHERE message_id = ?1) AS held").bind(message_id)
}

/// The SQL expression "which of the addresses in `candidates` (an SQL
/// expression: a JSON array of `{address, name}`) are mailboxes of this node",
/// as a JSON array of addresses.
fn own_addresses(candidates: &str) -> String {
    format!(
        "(SELECT json_group_array(m.address) FROM mailboxes m \
         WHERE m.address IN (SELECT lower(trim(json_extract(c.value, '$.address'))) FROM json_each({candidates}) c))"
    )
}

/// SQL for the mailboxes the forward effects in `effects` (FROM items ending
/// in `json_each(…) e`, filtered by `filter`) file copies in, as a JSON object
/// by mailbox id of `{address, moved}`: each one's address, and whether its
/// mail is in its own database (decision 0040), where a copy is then filed.
fn targets(effects: &str, filter: &str) -> String {
    format!(
        "(SELECT json_group_object(m.id, json_object('address', m.address, \
           'moved', json(CASE WHEN m.mail_moved_at IS NULL THEN 'false' ELSE 'true' END))) \
         FROM mailboxes m WHERE m.id IN (SELECT json_extract(e.value, '$.mailbox') FROM {effects} \
           WHERE {filter} AND json_extract(e.value, '$.do') = 'forward'))"
    )
}

/// The statement reading the active published butlers of the mailbox at
/// `address` (`ActiveButler`s), with what is around the delivery that their
/// effects meet: which assignees work the mailbox at `now_ms` (`working`),
/// which mailboxes a copy would go to already hold `message_id` (`holding`)
/// and where those are (`targets`), which of `reply_candidates` (a JSON array
/// of `{address, name}`) are the node's own (`own_addresses`).
pub(super) fn active_on_delivery(address: &str, message_id: &str, reply_candidates: String, now_ms: i64) -> Statement {
    let effects = "json_each(v.rules_json, '$.effects') e";
    let (working, working_parameters) = assignees_working(effects, "1", "b.mailbox_id", now_ms);
    let mut parameters = working_parameters;
    parameters.push(message_id.into());
    parameters.push(reply_candidates.into());
    parameters.push(address.into());
    spans_stores(Statement {
        sql: format!(
            "SELECT b.id, b.sponsor_id, v.version, v.rules_json, v.pinned_relations_json, {} AS held_now, \
               {} AS held_elsewhere, {working} AS working, {} AS holding, {} AS own_addresses, {} AS targets \
             FROM butlers b JOIN mailboxes m ON m.id = b.mailbox_id \
             JOIN butler_versions v ON v.butler_id = b.id AND v.version = b.published_version \
             WHERE m.address = ? AND b.active = 1 ORDER BY b.name, b.id LIMIT {}",
            tuples::relations_of_person_in("b.sponsor_id", "b.mailbox_id"),
            held_elsewhere(effects, "1"),
            targets_holding(effects, "1", "?"),
            own_addresses("?"),
            targets(effects, "1"),
            butler_limits::ACTIVE_PER_MAILBOX
        )
        .into(),
        parameters,
    })
}

/// A published butler a delivery is judged by, as `active_on_delivery` reads it.
#[derive(Deserialize)]
pub(super) struct ActiveButler {
    pub(super) id: String,
    pub(super) sponsor_id: String,
    pub(super) version: i64,
    pub(super) rules_json: String,
    pub(super) pinned_relations_json: Option<String>,
    pub(super) held_now: Option<String>,
    pub(super) held_elsewhere: Option<String>,
    /// `targets`: where each mailbox a copy is filed in is.
    pub(super) targets: Option<String>,
}

/// A mailbox a butler files copies in, as `targets` reads it.
#[derive(Clone, Debug, Deserialize)]
pub(super) struct Target {
    pub(super) address: String,
    /// Its mail is in its own database.
    pub(super) moved: bool,
}

/// Received message `receipt_id` of mailbox `mailbox_id` as a butler judges it
/// (`FACT_COLUMNS`), with its conversation (`CONVERSATION_COLUMNS`) and its
/// Message-ID as stored (`judged_message_id`): the message a dry run walks.
pub(super) fn receipt_judged(receipt_id: &str, mailbox_id: &str) -> Statement {
    Statement::new(format!(
        "SELECT {FACT_COLUMNS}, {CONVERSATION_COLUMNS}, r.message_id AS judged_message_id \
         FROM receipts r LEFT JOIN mail_threads t ON t.id = r.thread_id WHERE r.id = ?1 AND r.mailbox_id = ?2"
    ))
    .bind(receipt_id)
    .bind(mailbox_id)
}

/// What is around received message `receipt_id` for every version of butler
/// `butler_id` (the one walked is chosen from them), as a delivery of it now
/// would meet it: `working`, `holding` and `own_addresses`, as
/// `active_on_delivery` reads them.
pub(super) fn around_receipt(butler_id: &str, receipt_id: &str, now_ms: i64) -> Statement {
    let effects = "butler_versions w, json_each(w.rules_json, '$.effects') e";
    let (working, mut parameters) = assignees_working(effects, "w.butler_id = b.id", "b.mailbox_id", now_ms);
    parameters.extend([receipt_id.into(), receipt_id.into(), butler_id.into()]);
    spans_stores(Statement {
        sql: format!(
            "SELECT {working} AS working, {} AS holding, {} AS own_addresses \
             FROM butlers b, receipts r WHERE r.id = ? AND b.id = ?",
            targets_holding(effects, "w.butler_id = b.id", "r.message_id"),
            own_addresses(
                "(SELECT json_insert(o.reply_to_json, '$[#]', json_object('address', o.from_address)) FROM receipts o WHERE o.id = ?)"
            ),
        )
        .into(),
        parameters,
    })
}

/// `around_receipt` for a message whose receipt D1 does not hold (its
/// mailbox's mail is in its own database, decision 0040), given what the
/// receipt says: its `message_id`, and the addresses a reply could go to
/// (`reply_candidates`, a JSON array of `{address, name}`).
pub(super) fn around_message(butler_id: &str, message_id: &str, reply_candidates: String, now_ms: i64) -> Statement {
    let effects = "butler_versions w, json_each(w.rules_json, '$.effects') e";
    let (working, mut parameters) = assignees_working(effects, "w.butler_id = b.id", "b.mailbox_id", now_ms);
    parameters.extend([message_id.into(), reply_candidates.into(), butler_id.into()]);
    // Whether a target holds the message is still asked of D1's receipts
    // (for a target whose mail moved, of D1's copy): what is left to split.
    spans_stores(Statement {
        sql: format!(
            "SELECT {working} AS working, {} AS holding, {} AS own_addresses FROM butlers b WHERE b.id = ?",
            targets_holding(effects, "w.butler_id = b.id", "?"),
            own_addresses("?"),
        )
        .into(),
        parameters,
    })
}

/// Conversation `thread_id` given status `status`.
pub(super) fn thread_status_set(thread_id: &str, status: ThreadStatus) -> Statement {
    Statement::new("UPDATE mail_threads SET status = ?1 WHERE id = ?2").bind(status.name()).bind(thread_id)
}

/// Conversation `thread_id` assigned to `assignee`.
pub(super) fn thread_assigned(thread_id: &str, assignee: &str) -> Statement {
    Statement::new("UPDATE mail_threads SET assignee = ?1 WHERE id = ?2").bind(assignee).bind(thread_id)
}

/// The columns a filed copy takes from the original as they are (a unit test
/// holds them to the receipts table).
const COPIED_COLUMNS: [&str; 25] = [
    "message_id",
    "claimed_message_id",
    "content_digest",
    "envelope_from",
    "from_address",
    "from_name",
    "to_json",
    "cc_json",
    "recipients",
    "subject",
    "sent_at",
    "received_at",
    "in_reply_to_json",
    "references_json",
    "size",
    "text_body",
    "text_source",
    "text_truncated",
    "attachments_json",
    "reply_to_json",
    "to_not_kept",
    "cc_not_kept",
    "attachments_not_listed",
    "sender_authentication",
    "authentication_json",
];

/// A copy of a receipt a butler files in another mailbox.
pub(super) struct FiledCopy<'a> {
    pub(super) copy_id: &'a str,
    pub(super) original_id: &'a str,
    /// The mailbox it is filed in.
    pub(super) target: &'a str,
    /// The subject key of the conversation it may join there.
    pub(super) subject_key: String,
    /// The conversation it begins when its Message-IDs name none there.
    pub(super) new_thread_id: &'a str,
    pub(super) butler_id: &'a str,
    /// The butler's sponsor, who must read `target`.
    pub(super) sponsor_id: &'a str,
    /// The key of the target's copy of the original (`originals::raw_message_key`).
    pub(super) raw_key: &'a str,
}

/// The receipt `copy`, taking the original's columns as they are, only while
/// the target mailbox exists and the sponsor reads it; a copy of the same
/// message delivered there in between keeps the one it has.
pub(super) fn copy_filed(copy: FiledCopy<'_>) -> Statement {
    let reads = tuples::holds(&Holder::Person(copy.sponsor_id.to_string()), Relation::MailboxContentRead, copy.target);
    let mut parameters: Vec<Value> = vec![
        copy.copy_id.into(),
        copy.target.into(),
        copy.target.into(),
        copy.subject_key.into(),
        copy.new_thread_id.into(),
        copy.butler_id.into(),
        copy.raw_key.into(),
        copy.original_id.into(),
        copy.target.into(),
    ];
    parameters.extend(reads.parameters);
    let copied = COPIED_COLUMNS.join(", ");
    let from_original = COPIED_COLUMNS.map(|column| format!("r.{column}")).join(", ");
    spans_stores(Statement {
        sql: format!(
            "INSERT INTO receipts (id, mailbox_id, thread_id, filed_by, raw_key, {copied}) \
             SELECT ?, ?, COALESCE(({}), ?), ?, ?, {from_original} FROM receipts r \
             WHERE r.id = ? AND EXISTS (SELECT 1 FROM mailboxes WHERE id = ?) AND ({}) = 1 \
             ON CONFLICT (mailbox_id, message_id) DO NOTHING",
            linking::thread_by_message_ids_of_r(),
            reads.sql
        )
        .into(),
        parameters,
    })
}

/// A filed copy (`copy_id`), written from the delivery's values with a
/// conversation of its own, joins instead the one its Message-IDs name in its
/// mailbox (at `mailbox_address`), admitted as `copy_filed` admits one. For a
/// copy filed where the original is not (either mailbox's mail in its own
/// database, decision 0040).
pub(super) fn copy_threaded(copy_id: &str, subject_key: String, mailbox_address: &str) -> Statement {
    Statement::new(format!(
        "UPDATE receipts AS r SET thread_id = COALESCE(({}), r.thread_id) WHERE r.id = ?",
        linking::thread_by_message_ids_of_r_in("r.mailbox_id", "?", "?")
    ))
    .bind(subject_key)
    .bind(mailbox_address)
    .bind(copy_id)
}

/// What one butler did with one delivery.
pub(super) struct Run<'a> {
    pub(super) butler_id: &'a str,
    pub(super) receipt_id: &'a str,
    pub(super) version: i64,
    pub(super) at: i64,
    pub(super) matched: bool,
    /// The conditions judged and every effect as it went.
    pub(super) outcome_json: String,
}

/// The record of `run`; a delivery judged again keeps its first.
pub(super) fn run_recorded(run: Run<'_>) -> Insert {
    Insert::into("butler_runs")
        .value("butler_id", run.butler_id)
        .value("receipt_id", run.receipt_id)
        .value("version", run.version)
        .value("at", run.at)
        .value("matched", i64::from(run.matched))
        .value("outcome_json", run.outcome_json)
        .then("ON CONFLICT (butler_id, receipt_id) DO NOTHING")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::SqliteDatabase;

    fn sorted(mut columns: Vec<String>) -> Vec<String> {
        columns.sort_unstable();
        columns
    }

    /// The list of columns a filed copy takes restates the receipts table, so it is
    /// held to the table as the migrations build it: a column added to receipts
    /// later must be copied too, or named here as the copy's own.
    #[test]
    fn a_filed_copy_takes_every_column_of_the_original_but_its_own() {
        let its_own = ["id", "mailbox_id", "thread_id", "filed_by", "raw_key"];
        let copied = COPIED_COLUMNS.iter().chain(&its_own).map(|column| column.to_string()).collect();
        assert_eq!(sorted(copied), sorted(SqliteDatabase::migrated().column_names("receipts")));
    }

    /// A butler is written whole when it is created, but for what publishing sets.
    #[test]
    fn a_new_butler_takes_every_column_but_those_publishing_sets() {
        let butler = NewButler {
            id: "btl_1",
            mailbox_id: "mbx_1",
            name: "",
            sponsor_id: "usr_1",
            created_by: "usr_1",
            created_at: 0,
        };
        let not_named = SqliteDatabase::migrated().columns_not_named(&butler_created(butler));
        assert_eq!(not_named, ["active", "published_version"]);
    }

    /// A version is written whole by an edit, but for what publishing it sets.
    #[test]
    fn a_new_version_takes_every_column_but_those_publishing_sets() {
        let version =
            NewVersion { butler_id: "btl_1", version: 1, rules_json: "{}".into(), created_at: 0, created_by: "usr_1" };
        let not_named = SqliteDatabase::migrated().columns_not_named(&version_written(version));
        assert_eq!(not_named, ["pinned_relations_json", "published_at", "published_by"]);
    }

    /// A run is written whole, once.
    #[test]
    fn a_run_takes_every_column() {
        let run = Run {
            butler_id: "btl_1",
            receipt_id: "rcp_1",
            version: 1,
            at: 0,
            matched: false,
            outcome_json: "{}".into(),
        };
        assert_eq!(SqliteDatabase::migrated().columns_not_named(&run_recorded(run)), Vec::<String>::new());
    }
}
