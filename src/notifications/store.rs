//! The notifications feed's SQL: every statement over `notifications` and
//! `notification_reads`, the conditions that place a notification in a
//! reader's feed, and the row the feed reads. Each function only builds a
//! statement: the handler or the writing domain decides what rides together.

use mailroom_contract::api::NotificationKind;
use mailroom_contract::relation::ORGANIZATION_OBJECT;
use mailroom_contract::{ObjectKind, Relation};
use serde::Deserialize;

use super::notice::Notice;
use crate::authz::dual_control;
use crate::authz::tuples::{self, Holder};
use crate::core::storage::{Insert, Statement, Value};

/// A notification for one person or an audience, as `notify` writes it.
pub(super) struct Addressed<'a> {
    pub id: String,
    pub at: i64,
    /// The actor whose person it is for (the actor, or the agent's sponsor);
    /// empty for an audience.
    pub person_of: &'a str,
    /// The relation an audience holds on the notice's mailbox.
    pub audience: Option<&'a str>,
}

/// The insert writing `notice` as `addressed` says. For a person who is also
/// the actor (a person's own act), nothing is written.
pub(super) fn notification(notice: &Notice<'_>, addressed: Addressed<'_>) -> Statement {
    Statement::new(
        "INSERT INTO notifications (id, at, kind, person_id, audience, mailbox_id, object_id, actor, title, detail) \
         SELECT ?1, ?2, ?3, whom.person_id, ?5, ?6, ?7, ?8, ?9, ?10 FROM (SELECT CASE WHEN ?5 IS NOT NULL THEN NULL \
           ELSE COALESCE((SELECT a.sponsor_id FROM agents a WHERE a.id = ?4), ?4) END AS person_id) whom \
         WHERE ?5 IS NOT NULL OR whom.person_id IS NOT ?8",
    )
    .bind(addressed.id)
    .bind(addressed.at)
    .bind(notice.kind.name())
    .bind(addressed.person_of)
    .bind(addressed.audience)
    .bind(notice.mailbox_id)
    .bind(notice.object_id)
    .bind(notice.actor)
    .bind(notice.title)
    .bind(notice.detail)
}

/// The row writing `notice` for the person `person_id` once for `key`: a
/// second notice with the same key writes nothing.
pub(super) fn notification_once(notice: &Notice<'_>, person_id: &str, key: &str, id: String, at: i64) -> Insert {
    Insert::into("notifications")
        .value("id", id)
        .value("at", at)
        .value("kind", notice.kind.name())
        .value("person_id", person_id)
        .value("mailbox_id", notice.mailbox_id)
        .value("object_id", notice.object_id)
        .value("actor", notice.actor)
        .value("title", notice.title)
        .value("detail", notice.detail)
        .value("dedupe_key", key)
        .then("ON CONFLICT (dedupe_key) DO NOTHING")
}

/// What an administrators' alarm says: its key (once per fault) and its words.
pub(super) struct Alarm<'a> {
    pub id: String,
    pub at: i64,
    pub kind: NotificationKind,
    /// What it is about (`object_id`).
    pub key: &'a str,
    /// At most one alarm is written per this key.
    pub dedupe_key: String,
    pub title: &'a str,
    pub detail: &'a str,
}

/// The row telling whoever holds org.admin of `alarm`, once per its key.
pub(super) fn administrators_alarm(alarm: Alarm<'_>) -> Insert {
    Insert::into("notifications")
        .value("id", alarm.id)
        .value("at", alarm.at)
        .value("kind", alarm.kind.name())
        .value("audience", Relation::OrgAdmin.name())
        // An audience is a relation on an object: here the organisation itself.
        .value("mailbox_id", ORGANIZATION_OBJECT)
        .value("object_id", alarm.key)
        .value("title", alarm.title)
        .value("detail", alarm.detail)
        .value("dedupe_key", alarm.dedupe_key)
        .then("ON CONFLICT (dedupe_key) DO NOTHING")
}

/// The SQL condition that no notification was written for the key `key` (an
/// SQL expression).
pub(super) fn not_yet_written(key: &str) -> String {
    format!("NOT EXISTS (SELECT 1 FROM notifications keyed WHERE keyed.dedupe_key = {key})")
}

/// Marks every open notification of `kind` about `object_id` as needing
/// nobody any more, at `now_ms`.
pub(super) fn resolve(kind: NotificationKind, object_id: &str, now_ms: i64) -> Statement {
    Statement::new(
        "UPDATE notifications SET resolved_at = ?3 WHERE object_id = ?1 AND kind = ?2 AND resolved_at IS NULL",
    )
    .bind(object_id)
    .bind(kind.name())
    .bind(now_ms)
}

/// Removes the notifications written before `before`, and their read marks.
pub(super) fn remove_written_before(before: i64) -> Vec<Statement> {
    vec![
        Statement::new(
            "DELETE FROM notification_reads WHERE notification_id IN (SELECT id FROM notifications WHERE at < ?1)",
        )
        .bind(before),
        Statement::new("DELETE FROM notifications WHERE at < ?1").bind(before),
    ]
}

/// Whose feed a call reads, and as whom: the person (an agent's sponsor), and
/// the holder whose relations decide which mail notifications show. The
/// person is an SQL expression, so the feed is read in the call's first round
/// trip, beside the checks that admit it.
pub(super) struct Reader {
    pub holder: Holder,
    /// The caller's id: the person's own, or the agent's.
    pub caller_id: String,
    /// Whether the caller is an agent, reading its sponsor's feed.
    pub is_agent: bool,
}

impl Reader {
    /// The person whose feed it is, as SQL, its parameter pushed onto `parameters`.
    fn person(&self, parameters: &mut Vec<Value>) -> &'static str {
        parameters.push(self.caller_id.as_str().into());
        if self.is_agent { "(SELECT a.sponsor_id FROM agents a WHERE a.id = ?)" } else { "?" }
    }
}

/// The SQL condition that notification `n` is in `reader`'s feed, with its
/// parameters in order (positional).
fn in_feed(reader: &Reader, parameters: &mut Vec<Value>) -> String {
    let mailbox_relations: Vec<Relation> =
        Relation::ALL.iter().copied().filter(|relation| relation.object_kind() == ObjectKind::Mailbox).collect();
    let person = reader.person(parameters);
    let (related, related_parameters) = tuples::mailbox_ids_where(&reader.holder, &[], &mailbox_relations);
    parameters.extend(related_parameters);
    parameters.push(Relation::ApprovalDecide.name().into());
    let (deciding, deciding_parameters) = tuples::mailbox_ids_where(&reader.holder, &[Relation::ApprovalDecide], &[]);
    parameters.extend(deciding_parameters);
    let mut sides = Vec::new();
    for _ in 0..4 {
        sides.push(reader.person(parameters));
    }
    // Every use of the person expression is the same text; the side condition
    // repeats it four times, each with its own bound value.
    let not_the_actors_side = dual_control::not_on_the_side_of("n.actor", sides[0]);
    // The administrators' audience: the organisation's, which an agent never
    // holds (agents hold mailbox relations only), so it reaches people alone.
    parameters.push(Relation::OrgAdmin.name().into());
    parameters.push(ORGANIZATION_OBJECT.into());
    let administers = tuples::is_administrator(&reader.holder);
    parameters.extend(administers.parameters);
    format!(
        "((n.person_id = {person} AND (n.mailbox_id IS NULL OR n.mailbox_id IN ({related}))) \
          OR (n.audience = ? AND n.mailbox_id IN ({deciding}) AND {not_the_actors_side}) \
          OR (n.audience = ? AND n.mailbox_id = ? AND ({}) = 1))",
        administers.sql
    )
}

/// The SQL condition that `n` is unread by `reader`, its parameter pushed.
fn unread(reader: &Reader, parameters: &mut Vec<Value>) -> String {
    let person = reader.person(parameters);
    format!("NOT EXISTS (SELECT 1 FROM notification_reads r WHERE r.notification_id = n.id AND r.person_id = {person})")
}

/// Counts `reader`'s unread notifications that still need someone (`unread`).
pub(super) fn unread_count(reader: &Reader) -> Statement {
    let mut parameters = Vec::new();
    let feed = in_feed(reader, &mut parameters);
    let unread = unread(reader, &mut parameters);
    Statement {
        sql: format!(
            "SELECT COUNT(*) AS unread FROM notifications n WHERE {feed} AND n.resolved_at IS NULL AND {unread}"
        )
        .into(),
        parameters,
    }
}

/// A notification as its reader's feed shows it.
#[derive(Deserialize)]
pub(super) struct NotificationRow {
    pub id: String,
    pub at: i64,
    pub kind: NotificationKind,
    pub title: String,
    pub detail: Option<String>,
    pub object_id: String,
    pub mailbox_id: Option<String>,
    pub mailbox_address: Option<String>,
    pub actor: Option<String>,
    pub actor_name: Option<String>,
    pub read: i64,
    pub resolved: i64,
}

/// One page of `reader`'s feed, newest first, after the notification `after`
/// when given, only what still needs someone and is unread when
/// `only_unread`; one more than `limit` tells a next page.
pub(super) fn feed_page(reader: &Reader, only_unread: bool, after: Option<String>, limit: i64) -> Statement {
    let mut parameters = Vec::new();
    let person = reader.person(&mut parameters);
    let mut conditions = vec![in_feed(reader, &mut parameters)];
    // What the count counts: unread, and still needing someone.
    if only_unread {
        conditions.push(format!("n.resolved_at IS NULL AND {}", unread(reader, &mut parameters)));
    }
    if let Some(after) = after {
        conditions.push("n.id < ?".to_string());
        parameters.push(after.into());
    }
    parameters.push((limit + 1).into());
    Statement {
        sql: format!(
            "SELECT n.id, n.at, n.kind, n.title, n.detail, n.object_id, \
               CASE WHEN n.audience = 'org.admin' THEN NULL ELSE n.mailbox_id END AS mailbox_id, \
               (SELECT m.address FROM mailboxes m WHERE m.id = n.mailbox_id) AS mailbox_address, n.actor, \
               COALESCE((SELECT p.name FROM people p WHERE p.id = n.actor), \
                        (SELECT a.name FROM agents a WHERE a.id = n.actor), \
                        (SELECT b.name FROM butlers b WHERE b.id = n.actor)) AS actor_name, \
               EXISTS (SELECT 1 FROM notification_reads r WHERE r.notification_id = n.id AND r.person_id = {person}) \
                 AS read, \
               n.resolved_at IS NOT NULL AS resolved \
             FROM notifications n WHERE {} ORDER BY n.id DESC LIMIT ?",
            conditions.join(" AND ")
        )
        .into(),
        parameters,
    }
}

/// Marks read, for `reader` at `now_ms`, what is unread in their feed: the
/// notifications `ids`, or all of them for `None`.
pub(super) fn mark_read(reader: &Reader, ids: Option<&[String]>, now_ms: i64) -> Statement {
    let mut parameters = Vec::new();
    let person = reader.person(&mut parameters);
    parameters.push(now_ms.into());
    let feed = in_feed(reader, &mut parameters);
    let unread = unread(reader, &mut parameters);
    let only = match ids {
        None => String::new(),
        Some(ids) => {
            parameters.extend(ids.iter().map(|id| Value::from(id.as_str())));
            format!(" AND n.id IN ({})", vec!["?"; ids.len()].join(", "))
        }
    };
    Statement {
        sql: format!(
            "INSERT INTO notification_reads (notification_id, person_id, read_at) \
             SELECT n.id, {person}, ? FROM notifications n WHERE {feed} AND {unread}{only}"
        )
        .into(),
        parameters,
    }
}

/// The notification `id` if it is in `reader`'s feed (a row, or none).
pub(super) fn in_the_feed(reader: &Reader, id: &str) -> Statement {
    let mut parameters: Vec<Value> = vec![id.into()];
    let feed = in_feed(reader, &mut parameters);
    Statement { sql: format!("SELECT n.id FROM notifications n WHERE n.id = ? AND {feed}").into(), parameters }
}

/// Forgets that `reader` read the notification `id`.
pub(super) fn mark_unread(reader: &Reader, id: &str) -> Statement {
    let mut parameters: Vec<Value> = vec![id.into()];
    let person = reader.person(&mut parameters);
    Statement {
        sql: format!("DELETE FROM notification_reads WHERE notification_id = ? AND person_id = {person}").into(),
        parameters,
    }
}
