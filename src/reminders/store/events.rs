//! Events' SQL: the columns every reading of an event selects, its state and
//! checkpoint as SQL (held to `EventRow::state_at` by a test in `events`),
//! whose inbox a personal call reads, and every statement over
//! `reminder_events` a route makes, with the rows they read.

use mailroom_contract::api::{EventState, MAXIMUM_OPEN_EVENTS};
use serde::Deserialize;

use crate::core::caller::Caller;
use crate::core::storage::{Insert, Statement};

/// An event's columns as every read selects them, with its source's name.
pub(crate) const EVENT_COLUMNS: &str = "e.id, e.person_id, e.source_id, COALESCE(s.name, 'manual') AS source_name, \
     e.source_ref, e.topic, e.title, e.subtitle, e.due_at, e.fire_at, e.after_due, e.done_label, e.deep_link, \
     e.fire_moment, e.day_moment, e.due_moment, e.quiet_until, e.closed_as, e.closed_at, e.created_at, e.updated_at";
/// Where they are read from.
pub(crate) const EVENT_FROM: &str = "reminder_events e LEFT JOIN reminder_sources s ON s.id = e.source_id";

/// A person's zone as every read selects it, from `reminder_profiles r`: theirs,
/// or UTC for a person who never set one (the table's default too).
pub(crate) const ZONE_OR_DEFAULT: &str = "COALESCE(r.time_zone, 'UTC') AS time_zone";

/// An event's state at `now` (an SQL expression, such as a parameter), read
/// from the event `e`'s stored closure and checkpoints: what `EventRow::state_at`
/// says, as a query can filter on it. A test holds the two to each other.
pub(crate) fn state_sql(now: &str) -> String {
    format!(
        "(CASE WHEN e.closed_as IS NOT NULL THEN e.closed_as \
          WHEN {now} >= e.due_moment THEN (CASE e.after_due WHEN 'expire' THEN 'expired' ELSE 'overdue' END) \
          WHEN {now} >= e.day_moment THEN 'today' WHEN {now} >= e.fire_moment THEN 'preparing' \
          ELSE 'scheduled' END)"
    )
}

/// The moment the state of the open event `e` at `now` began (see `state_sql`;
/// `EventRow::checkpoint_at` for a state a person is told of).
pub(crate) fn checkpoint_sql(now: &str) -> String {
    format!(
        "(CASE WHEN {now} >= e.due_moment THEN e.due_moment WHEN {now} >= e.day_moment THEN e.day_moment \
          ELSE e.fire_moment END)"
    )
}

/// An event as stored.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct EventRow {
    pub id: String,
    pub person_id: String,
    pub source_id: String,
    pub source_name: String,
    pub source_ref: String,
    pub topic: String,
    pub title: String,
    pub subtitle: Option<String>,
    pub due_at: String,
    pub fire_at: String,
    pub after_due: String,
    pub done_label: String,
    pub deep_link: Option<String>,
    pub fire_moment: i64,
    pub day_moment: i64,
    pub due_moment: i64,
    pub quiet_until: Option<i64>,
    pub closed_as: Option<String>,
    pub closed_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A delivery as stored.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct DeliveryRow {
    pub event_id: String,
    pub checkpoint: i64,
    pub state_entered: String,
    pub channel: String,
    pub outcome: String,
    pub attempts: i64,
    pub last_error: Option<String>,
    pub updated_at: i64,
    pub next_attempt_at: Option<i64>,
}

/// The columns of `reminder_deliveries d` a `DeliveryRow` is read from.
const DELIVERY_COLUMNS: &str = "d.event_id, d.checkpoint, d.state_entered, d.channel, d.outcome, d.attempts, \
     d.last_error, d.updated_at, d.next_attempt_at";

/// Whose inbox a personal call works in, as SQL for the first read: a CTE
/// `owner(id)` that is the person, or the agent's sponsor. `?1` is bound to the
/// caller's id, so every statement using it binds that first.
#[derive(Clone, Debug)]
pub(crate) struct Owner {
    cte: &'static str,
    caller_id: String,
}

/// The owner of `caller`'s personal calls.
pub(crate) fn owner(caller: &Caller) -> Owner {
    let (cte, caller_id) = match caller {
        Caller::Agent { agent_id, .. } => {
            ("WITH owner(id) AS (SELECT sponsor_id FROM agents WHERE id = ?1) ", agent_id.clone())
        }
        Caller::Person { person_id, .. } => ("WITH owner(id) AS (SELECT ?1) ", person_id.clone()),
        // Admitted to no personal route: this owner matches nobody.
        Caller::Stranger | Caller::Source { .. } | Caller::Peer { .. } => {
            ("WITH owner(id) AS (SELECT NULL WHERE ?1 IS NULL) ", String::new())
        }
    };
    Owner { cte, caller_id }
}

impl Owner {
    /// `select`, reading `owner o`, after the CTE, with the caller bound as `?1`.
    pub(crate) fn reading(&self, select: &str) -> Statement {
        Statement::new(format!("{}{select}", self.cte)).bind(self.caller_id.as_str())
    }
}

/// The row that stores `row` as a new event, written by `created_by`, or,
/// when its source already has an event under the same key for the person,
/// updates that one: a new `due_at` reopens it and clears its
/// acknowledgement, the same one changes the fields alone. One statement, so
/// two pushes at once cannot interleave.
pub(crate) fn upsert(row: &EventRow, created_by: &str) -> Insert {
    Insert::into("reminder_events")
        .value("id", row.id.as_str())
        .value("person_id", row.person_id.as_str())
        .value("source_id", row.source_id.as_str())
        .value("source_ref", row.source_ref.as_str())
        .value("topic", row.topic.as_str())
        .value("title", row.title.as_str())
        .value("subtitle", row.subtitle.as_deref())
        .value("due_at", row.due_at.as_str())
        .value("fire_at", row.fire_at.as_str())
        .value("after_due", row.after_due.as_str())
        .value("done_label", row.done_label.as_str())
        .value("deep_link", row.deep_link.as_deref())
        .value("fire_moment", row.fire_moment)
        .value("day_moment", row.day_moment)
        .value("due_moment", row.due_moment)
        .value("quiet_until", row.quiet_until)
        .value("closed_as", row.closed_as.as_deref())
        .value("closed_at", row.closed_at)
        .value("created_by", created_by)
        // As it always was: a new row is created when it is written, and an
        // existing row keeps its `created_at`, which the update leaves alone.
        .value("created_at", row.updated_at)
        .value("updated_at", row.updated_at)
        .then(
            "ON CONFLICT (person_id, source_id, source_ref, topic) DO UPDATE SET \
           title = excluded.title, subtitle = excluded.subtitle, fire_at = excluded.fire_at, \
           after_due = excluded.after_due, done_label = excluded.done_label, deep_link = excluded.deep_link, \
           fire_moment = excluded.fire_moment, day_moment = excluded.day_moment, due_moment = excluded.due_moment, \
           quiet_until = CASE WHEN excluded.due_at = reminder_events.due_at THEN reminder_events.quiet_until END, \
           closed_as = CASE WHEN excluded.due_at = reminder_events.due_at THEN reminder_events.closed_as END, \
           closed_at = CASE WHEN excluded.due_at = reminder_events.due_at THEN reminder_events.closed_at END, \
           due_at = excluded.due_at, updated_at = excluded.updated_at",
        )
}

/// The condition a commit adding an open event keeps: the person's inbox
/// holds no more open events than the node keeps.
pub(crate) fn open_events_within_limit(person_id: &str) -> Statement {
    Statement::new(format!(
        "(SELECT COUNT(*) FROM reminder_events WHERE person_id = ?1 AND closed_as IS NULL) <= {MAXIMUM_OPEN_EVENTS}"
    ))
    .bind(person_id)
}

/// The caller's profile zone (a person's own, an agent's sponsor's).
pub(crate) fn owner_zone(owner: &Owner) -> Statement {
    owner.reading(&format!(
        "SELECT o.id AS person_id, {ZONE_OR_DEFAULT} FROM owner o \
         LEFT JOIN reminder_profiles r ON r.person_id = o.id"
    ))
}

/// One of the caller's events, and its deliveries.
pub(crate) fn owned_event(owner: &Owner, event_id: &str) -> [Statement; 2] {
    let event = owner
        .reading(&format!(
            "SELECT {EVENT_COLUMNS} FROM {EVENT_FROM} JOIN owner o ON e.person_id = o.id WHERE e.id = ?2"
        ))
        .bind(event_id);
    let deliveries = owner
        .reading(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM reminder_deliveries d JOIN reminder_events e ON e.id = d.event_id \
             JOIN owner o ON e.person_id = o.id WHERE d.event_id = ?2"
        ))
        .bind(event_id);
    [event, deliveries]
}

/// The caller's open events, read to move them to a new zone.
pub(crate) fn owner_open_events(owner: &Owner) -> Statement {
    owner.reading(&format!(
        "SELECT {EVENT_COLUMNS} FROM {EVENT_FROM} JOIN owner o ON e.person_id = o.id WHERE e.closed_as IS NULL"
    ))
}

/// Which of the caller's events a list shows.
pub(crate) enum EventsListed<'a> {
    /// The last closed (done, withdrawn or expired), latest first.
    Archive,
    /// Open events in `state` (any but expired when `None`), soonest due
    /// first, after (`after_due`, `after_id`).
    Open { state: Option<&'static str>, after_due: i64, after_id: &'a str },
}

/// One page of the caller's events at `now_ms`, and the deliveries of its open
/// events at their current checkpoints (what `EventRow::present` shows, and
/// nothing more). An open page holds one more than `limit` to tell a next one.
pub(crate) fn events_page(owner: &Owner, listed: &EventsListed<'_>, now_ms: i64, limit: i64) -> [Statement; 2] {
    let state_now = state_sql("?2");
    let (condition, order) = match listed {
        EventsListed::Archive => (
            format!("{state_now} IN ('done', 'withdrawn', 'expired')"),
            "COALESCE(e.closed_at, e.due_moment) DESC, e.id DESC",
        ),
        EventsListed::Open { state, .. } => {
            // `closed_as IS NULL` first, for the index of open events.
            let within = match state {
                Some(state) => format!("{state_now} = '{state}'"),
                None => format!("{state_now} != 'expired'"),
            };
            let after = "(e.due_moment > ?4 OR (e.due_moment = ?4 AND (?5 = '' OR e.id > ?5)))";
            (format!("e.closed_as IS NULL AND {within} AND {after}"), "e.due_moment, e.id")
        }
    };
    let page =
        format!("FROM {EVENT_FROM} JOIN owner o ON e.person_id = o.id WHERE {condition} ORDER BY {order} LIMIT ?3");
    let bound = |statement: Statement| {
        let statement = statement.bind(now_ms);
        match listed {
            EventsListed::Archive => statement.bind(limit),
            EventsListed::Open { after_due, after_id, .. } => {
                statement.bind(limit + 1).bind(*after_due).bind(*after_id)
            }
        }
    };
    let events = bound(owner.reading(&format!("SELECT {EVENT_COLUMNS} {page}")));
    let deliveries = bound(owner.reading(&format!(
        "SELECT {DELIVERY_COLUMNS} FROM reminder_deliveries d JOIN reminder_events e ON e.id = d.event_id \
         WHERE d.event_id IN (SELECT e.id {page}) AND e.closed_as IS NULL AND d.checkpoint = {}",
        checkpoint_sql("?2")
    )));
    [events, deliveries]
}

/// Closes an open event as `how` (done, withdrawn); one already closed stays
/// as it closed.
pub(crate) fn closing(event_id: &str, how: &'static str, now_ms: i64) -> Statement {
    Statement::new(
        "UPDATE reminder_events SET closed_as = ?2, closed_at = ?3, updated_at = ?3 WHERE id = ?1 AND closed_as IS NULL",
    )
    .bind(event_id)
    .bind(how)
    .bind(now_ms)
}

/// Opens again an event closed by hand (done or withdrawn); one closed
/// otherwise, or opened since it was read, is left as it is.
pub(crate) fn reopening(event_id: &str, now_ms: i64) -> Statement {
    let by_hand = [EventState::Done, EventState::Withdrawn].map(|state| format!("'{}'", state.name())).join(", ");
    Statement::new(format!(
        "UPDATE reminder_events SET closed_as = NULL, closed_at = NULL, updated_at = ?2 \
         WHERE id = ?1 AND closed_as IN ({by_hand})"
    ))
    .bind(event_id)
    .bind(now_ms)
}

/// Silences an event until `until`.
pub(crate) fn acknowledge(event_id: &str, until: i64, now_ms: i64) -> Statement {
    Statement::new("UPDATE reminder_events SET quiet_until = ?2, updated_at = ?3 WHERE id = ?1")
        .bind(event_id)
        .bind(until)
        .bind(now_ms)
}

/// Moves every open event of `person_id` named in `moments_by_event` (a JSON
/// object: event id → its three moments) to those moments.
pub(crate) fn move_moments(person_id: &str, moments_by_event: String, now_ms: i64) -> Statement {
    Statement::new(
        "UPDATE reminder_events SET fire_moment = json_extract(?1, '$.' || id || '[0]'), \
         day_moment = json_extract(?1, '$.' || id || '[1]'), due_moment = json_extract(?1, '$.' || id || '[2]'), \
         updated_at = ?3 \
         WHERE person_id = ?2 AND closed_as IS NULL AND json_extract(?1, '$.' || id) IS NOT NULL",
    )
    .bind(moments_by_event)
    .bind(person_id)
    .bind(now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An event is written whole from one place, this upsert: every column of
    /// the table is in its row.
    #[test]
    fn an_event_names_every_column_of_its_table() {
        let row = EventRow {
            id: String::new(),
            person_id: String::new(),
            source_id: String::new(),
            source_name: String::new(),
            source_ref: String::new(),
            topic: String::new(),
            title: String::new(),
            subtitle: None,
            due_at: String::new(),
            fire_at: String::new(),
            after_due: String::new(),
            done_label: String::new(),
            deep_link: None,
            fire_moment: 0,
            day_moment: 0,
            due_moment: 0,
            quiet_until: None,
            closed_as: None,
            closed_at: None,
            created_at: 0,
            updated_at: 0,
        };
        let upsert = upsert(&row, "");
        assert_eq!(upsert.table(), "reminder_events");
        assert_eq!(crate::testing::SqliteDatabase::migrated().columns_not_named(&upsert), Vec::<String>::new());
    }
}
