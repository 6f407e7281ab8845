//! The notifications feed: per person, what needs them or what they are waiting
//! to hear, each read or unread for them alone.
//!
//! Other domains write a notification in the same batch as the change it tells
//! of (`notify`, `resolve`), so a notification exists exactly when its cause
//! does. One is addressed either to a person (a send's writer, a conversation's
//! new assignee, a reminder's owner) or to an audience read when the feed is:
//! the holders of a relation on a mailbox (approval.decide, for an approval
//! waiting), or on the organisation (org.admin, for an audit chain that failed
//! verification: `audit_alarm`). Reading the feed asks the relation table
//! through `authz::tuples`, so an agent reading its sponsor's feed sees mail
//! notifications only where it and its sponsor both hold a relation (the
//! intersection every predicate carries), and never an administrators' alarm;
//! what concerns the person alone (a reminder due) it sees with the feed itself.

use mailroom_contract::api::{
    MarkNotificationsRead, Notification, NotificationKind, NotificationPage, NotificationsMarked, notification_limits,
};
use mailroom_contract::relation::ORGANIZATION_OBJECT;
use mailroom_contract::{ObjectKind, PathParameter, Relation};
use serde::Deserialize;

use crate::audit::Failure;
use crate::authz::tuples::{self, Holder};
use crate::authz::{dual_control, holder_of};
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of, new_id};
use crate::core::paging;
use crate::core::platform::Platform;
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;
use crate::core::storage::{QueryResult, Statement, Value};
use crate::core::time::{DAY_MS, rfc3339};

/// Why a feed call was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotificationError {
    /// The notification does not exist, or is not in the caller's feed.
    NoSuchNotification { id: String },
    /// Neither ids nor `all`, or both.
    NothingNamed,
}

impl From<NotificationError> for Refusal {
    fn from(error: NotificationError) -> Refusal {
        match error {
            NotificationError::NoSuchNotification { id } => Refusal::new(
                404,
                "not_found",
                format!("There is no notification {id} in your feed."),
                "It does not exist, was removed after the node's retention, or is not addressed to you.".to_string(),
                "List your notifications with list_notifications and use an id from there.".to_string(),
            ),
            NotificationError::NothingNamed => Refusal::new(
                400,
                "invalid_body",
                "Nothing was named to mark read.".to_string(),
                "The body must give either `notification_ids` (one or more) or `all: true`, not both.".to_string(),
                format!(
                    "Send {{\"notification_ids\": [\"ntf_…\"]}} (at most {}) or {{\"all\": true}}.",
                    notification_limits::MARKED_AT_ONCE
                ),
            ),
        }
    }
}

/// Who a notification is for.
#[derive(Clone, Copy, Debug)]
pub enum Addressee<'a> {
    /// The person an actor works for: the actor if it is a person, the agent's
    /// sponsor if it is an agent (read from the agent's row as it is written).
    PersonOf(&'a str),
    /// Whoever holds approval.decide on the notice's mailbox when the feed is
    /// read, except those on `actor`'s side of dual control.
    Deciders,
}

/// What a notification says.
#[derive(Clone, Copy, Debug)]
pub struct Notice<'a> {
    pub kind: NotificationKind,
    /// What it is about: a send, a conversation or a reminder.
    pub object_id: &'a str,
    /// The mailbox it happened in, for mail.
    pub mailbox_id: Option<&'a str>,
    /// Who caused it, where someone did.
    pub actor: Option<&'a str>,
    pub title: &'a str,
    pub detail: Option<&'a str>,
}

/// The insert writing `notice` for `to`, at `platform`'s now. For a person who
/// is also the actor (a person's own act), nothing is written.
pub fn notify(notice: &Notice<'_>, to: Addressee<'_>, platform: &dyn Platform) -> Statement {
    let id = new_id(IdKind::Notification, platform);
    let (person, audience): (&str, Option<&str>) = match to {
        Addressee::PersonOf(actor) => (actor, None),
        Addressee::Deciders => ("", Some(Relation::ApprovalDecide.name())),
    };
    Statement::new(
        "INSERT INTO notifications (id, at, kind, person_id, audience, mailbox_id, object_id, actor, title, detail) \
         SELECT ?1, ?2, ?3, whom.person_id, ?5, ?6, ?7, ?8, ?9, ?10 FROM (SELECT CASE WHEN ?5 IS NOT NULL THEN NULL \
           ELSE COALESCE((SELECT a.sponsor_id FROM agents a WHERE a.id = ?4), ?4) END AS person_id) whom \
         WHERE ?5 IS NOT NULL OR whom.person_id IS NOT ?8",
    )
    .bind(id)
    .bind(platform.now_ms())
    .bind(notice.kind.name())
    .bind(person)
    .bind(audience)
    .bind(notice.mailbox_id)
    .bind(notice.object_id)
    .bind(notice.actor)
    .bind(notice.title)
    .bind(notice.detail)
}

/// The insert writing `notice` for the person `person_id` once for `key`: a
/// second notice with the same key (a later scheduled run) writes nothing.
pub fn notify_once(notice: &Notice<'_>, person_id: &str, key: &str, platform: &dyn Platform) -> Statement {
    Statement::new(
        "INSERT INTO notifications (id, at, kind, person_id, mailbox_id, object_id, actor, title, detail, dedupe_key) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT (dedupe_key) DO NOTHING",
    )
    .bind(new_id(IdKind::Notification, platform))
    .bind(platform.now_ms())
    .bind(notice.kind.name())
    .bind(person_id)
    .bind(notice.mailbox_id)
    .bind(notice.object_id)
    .bind(notice.actor)
    .bind(notice.title)
    .bind(notice.detail)
    .bind(key)
}

/// The notification telling administrators that the audit chain failed where
/// a checkpoint was to be written (`audit::TellAdministrators`): addressed to
/// whoever holds org.admin when the feed is read, once per fault.
pub fn audit_alarm(failure: &Failure, platform: &dyn Platform) -> Statement {
    Statement::new(
        "INSERT INTO notifications (id, at, kind, audience, mailbox_id, object_id, title, detail, dedupe_key) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (dedupe_key) DO NOTHING",
    )
    .bind(new_id(IdKind::Notification, platform))
    .bind(platform.now_ms())
    .bind(NotificationKind::AuditChainBroken.name())
    .bind(Relation::OrgAdmin.name())
    // An audience is a relation on an object: here the organisation itself.
    .bind(ORGANIZATION_OBJECT)
    .bind(failure.alarm_key())
    .bind("The audit chain does not verify: no checkpoint was signed")
    .bind(failure.sentence())
    .bind(format!("audit_alarm:{}", failure.alarm_key()))
}

/// The SQL condition that no notification was written for the key `key` (an SQL
/// expression): for a writer choosing what `notify_once` has still to write.
pub fn not_yet_written(key: &str) -> String {
    format!("NOT EXISTS (SELECT 1 FROM notifications keyed WHERE keyed.dedupe_key = {key})")
}

/// The update marking every open notification of `kind` about `object_id` as
/// needing nobody any more (an approval decided or taken back), at `now_ms`.
pub fn resolve(kind: NotificationKind, object_id: &str, now_ms: i64) -> Statement {
    Statement::new(
        "UPDATE notifications SET resolved_at = ?3 WHERE object_id = ?1 AND kind = ?2 AND resolved_at IS NULL",
    )
    .bind(object_id)
    .bind(kind.name())
    .bind(now_ms)
}

/// The delete removing notifications older than the node keeps, and their read
/// marks, as of `now_ms`: the scheduled run's.
pub fn remove_expired(now_ms: i64) -> Vec<Statement> {
    let before = now_ms - notification_limits::KEPT_DAYS * DAY_MS;
    vec![
        Statement::new(
            "DELETE FROM notification_reads WHERE notification_id IN (SELECT id FROM notifications WHERE at < ?1)",
        )
        .bind(before),
        Statement::new("DELETE FROM notifications WHERE at < ?1").bind(before),
    ]
}

/// Whose feed a call reads, and as whom: the person (an agent's sponsor), and the
/// holder whose relations decide which mail notifications show. The person is
/// an SQL expression, so the feed is read in the call's first round trip,
/// beside the checks that admit it.
struct Reader {
    holder: Holder,
    /// The caller's id: the person's own, or the agent's.
    caller_id: String,
    /// Whether the caller is an agent, reading its sponsor's feed.
    is_agent: bool,
}

impl Reader {
    /// The reader of a personal call.
    fn of(context: &Context<'_>) -> Result<Reader, Refusal> {
        let holder = holder_of(context.caller(), context.now_ms()).ok_or_else(Refusal::internal)?;
        match context.caller() {
            Caller::Person { person_id, .. } => Ok(Reader { holder, caller_id: person_id.clone(), is_agent: false }),
            Caller::Agent { agent_id, .. } => Ok(Reader { holder, caller_id: agent_id.clone(), is_agent: true }),
            Caller::Stranger | Caller::Source { .. } => Err(Refusal::internal()),
        }
    }

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

/// The statement counting `reader`'s unread notifications that still need someone.
fn unread_count(reader: &Reader) -> Statement {
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

/// The unread count a write batch's last statement (`unread_count`) answered.
fn counted(results: &[QueryResult]) -> i64 {
    results.last().and_then(QueryResult::first).and_then(|row| row.integer("unread").ok()).unwrap_or(0)
}

#[derive(Deserialize)]
struct NotificationRow {
    id: String,
    at: i64,
    kind: NotificationKind,
    title: String,
    detail: Option<String>,
    object_id: String,
    mailbox_id: Option<String>,
    mailbox_address: Option<String>,
    actor: Option<String>,
    actor_name: Option<String>,
    read: i64,
    resolved: i64,
}

impl NotificationRow {
    fn present(&self) -> Notification {
        Notification {
            id: self.id.clone(),
            kind: self.kind,
            at: rfc3339(self.at),
            title: self.title.clone(),
            detail: self.detail.clone(),
            object_id: self.object_id.clone(),
            mailbox_id: self.mailbox_id.clone(),
            mailbox_address: self.mailbox_address.clone(),
            actor: self.actor.clone(),
            actor_name: self.actor_name.clone(),
            read: self.read != 0,
            resolved: self.resolved != 0,
        }
    }
}

/// `GET /api/me/notifications`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let only_unread = context.query("unread") == Some("true");
    let limit = paging::limit(context)?;
    let after = paging::cursor_id(context, IdKind::Notification)?;
    let reader = Reader::of(context)?;
    let mut parameters = Vec::new();
    let person = reader.person(&mut parameters);
    let mut conditions = vec![in_feed(&reader, &mut parameters)];
    // What the count counts: unread, and still needing someone.
    if only_unread {
        conditions.push(format!("n.resolved_at IS NULL AND {}", unread(&reader, &mut parameters)));
    }
    if let Some(after) = after {
        conditions.push("n.id < ?".to_string());
        parameters.push(after.into());
    }
    parameters.push((limit + 1).into());
    let page = Statement {
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
    };
    let [rows, count] = context.read_array([page, unread_count(&reader)]).await?;
    let mut rows: Vec<NotificationRow> = rows.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = paging::cut_at_id(&mut rows, limit, |row| &row.id);
    Ok(context.json(&NotificationPage {
        notifications: rows.iter().map(NotificationRow::present).collect(),
        unread_count: counted(std::slice::from_ref(&count)),
        next_cursor,
    }))
}

/// The ids `request` names, checked, or `None` for all of them.
fn named(request: MarkNotificationsRead) -> Result<Option<Vec<String>>, Refusal> {
    let ids = match (request.notification_ids, request.all) {
        (Some(ids), None | Some(false)) if !ids.is_empty() => ids,
        (None, Some(true)) => return Ok(None),
        _ => return Err(NotificationError::NothingNamed.into()),
    };
    if ids.len() > notification_limits::MARKED_AT_ONCE {
        return Err(RequestError::wrong_field(
            "notification_ids",
            format!(
                "at most {} ids; mark more in several calls, or all with `all`",
                notification_limits::MARKED_AT_ONCE
            ),
        ));
    }
    if let Some(position) = ids.iter().position(|id| !is_id_of(id, IdKind::Notification)) {
        return Err(RequestError::wrong_field(
            &format!("notification_ids[{position}]"),
            "a notification's id (`ntf_…`), from list_notifications".to_string(),
        ));
    }
    Ok(Some(ids))
}

/// Commits a marking (the handler's first write) with the reader's new unread
/// count read after it in the same batch, and answers both.
async fn marked_and_counted(context: &mut Context<'_>, reader: &Reader) -> Result<Response, Refusal> {
    context.write(unread_count(reader));
    let results = context.commit_returning().await?;
    let marked = results.first().map_or(0, |result| result.changes as i64);
    Ok(context.json(&NotificationsMarked { marked, unread_count: counted(&results) }))
}

/// `POST /api/me/notifications/read`.
pub async fn mark_read(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let ids = named(context.body()?)?;
    let reader = Reader::of(context)?;
    let mut parameters = Vec::new();
    let person = reader.person(&mut parameters);
    parameters.push(context.now_ms().into());
    let feed = in_feed(&reader, &mut parameters);
    let unread = unread(&reader, &mut parameters);
    let only = match &ids {
        None => String::new(),
        Some(ids) => {
            parameters.extend(ids.iter().map(|id| Value::from(id.as_str())));
            format!(" AND n.id IN ({})", vec!["?"; ids.len()].join(", "))
        }
    };
    context.write(Statement {
        sql: format!(
            "INSERT INTO notification_reads (notification_id, person_id, read_at) \
             SELECT n.id, {person}, ? FROM notifications n WHERE {feed} AND {unread}{only}"
        )
        .into(),
        parameters,
    });
    context.audit_detail(serde_json::json!({ "named": ids.as_ref().map(Vec::len), "all": ids.is_none() }));
    marked_and_counted(context, &reader).await
}

/// `DELETE /api/me/notifications/:notificationId/read`.
pub async fn mark_unread(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let id = context.path(PathParameter::NotificationId)?.to_string();
    let reader = Reader::of(context)?;
    let mut parameters: Vec<Value> = vec![id.as_str().into()];
    let feed = in_feed(&reader, &mut parameters);
    let [found] = context
        .read_array([Statement {
            sql: format!("SELECT n.id FROM notifications n WHERE n.id = ? AND {feed}").into(),
            parameters,
        }])
        .await?;
    if found.rows.is_empty() {
        return Err(NotificationError::NoSuchNotification { id }.into());
    }
    context.audit_object(id.clone());
    let mut parameters: Vec<Value> = vec![id.as_str().into()];
    let person = reader.person(&mut parameters);
    context.write(Statement {
        sql: format!("DELETE FROM notification_reads WHERE notification_id = ? AND person_id = {person}").into(),
        parameters,
    });
    marked_and_counted(context, &reader).await
}
