//! A person's events: their fields, their moments and state, and the routes a
//! person (or an agent of theirs) lists, reads, adds, changes, deletes, closes
//! and acknowledges them with.
//!
//! An event's three moments (the start of its `fire_at` day, the start of its
//! due day and its due moment) are computed in the person's zone when it is
//! written, and again when the zone changes, so its state at any instant is a
//! comparison and needs no zone: scheduled, preparing, today, then overdue or
//! expired. A checkpoint is the moment a state began; acknowledging silences an
//! event until the next one.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{
    AfterDue, Channel, CreateEvent, Delivery, DeliveryOutcome, Event, EventList, EventState, UpdateEvent,
};

use super::checks::{DONE_LABEL, SUBTITLE, TITLE, deep_link, line, optional_line};
use super::errors::ReminderError;
use super::schedule::{self, Checkpoints, Day, DueAt, Timing, Zone};
use super::store::{self, DeliveryRow, EventRow, EventsListed};
use super::whose::owner_after_read;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of, new_id};
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::storage::QueryResult;
use crate::core::time::rfc3339;

/// The source every event a person or their agent adds belongs to.
pub const MANUAL_SOURCE: &str = "manual";

/// The label of the closing button when none is given.
pub const DEFAULT_DONE_LABEL: &str = "Done";

impl EventRow {
    /// Its checkpoints, as stored when it or the person's zone was last written.
    fn checkpoints(&self) -> Checkpoints {
        Checkpoints { fire_day_start: self.fire_moment, due_day_start: self.day_moment, due_moment: self.due_moment }
    }

    fn after_due(&self) -> AfterDue {
        AfterDue::parse(&self.after_due).unwrap_or(AfterDue::Keep)
    }

    /// Its state at `now_ms`.
    pub fn state_at(&self, now_ms: i64) -> EventState {
        match self.closed_as.as_deref() {
            Some("done") => return EventState::Done,
            Some("withdrawn") => return EventState::Withdrawn,
            Some(_) => return EventState::Expired,
            None => {}
        }
        self.checkpoints().phase_at(now_ms, self.after_due())
    }

    /// Whether it is closed at `now_ms`, stored so or expired by itself.
    pub fn is_closed_at(&self, now_ms: i64) -> bool {
        self.state_at(now_ms).is_closed()
    }

    /// The checkpoint it is at (the moment its current state began) and that
    /// state, for a state a person is told of: preparing, today, overdue.
    pub fn checkpoint_at(&self, now_ms: i64) -> Option<i64> {
        if self.closed_as.is_some() {
            return None;
        }
        self.checkpoints().began(now_ms, self.after_due())
    }

    /// Whether it is acknowledged at `now_ms`.
    pub fn acknowledged_at(&self, now_ms: i64) -> bool {
        self.quiet_until.is_some_and(|until| until > now_ms)
    }

    /// Whether a person or their agent may change or delete it.
    pub fn editable(&self) -> bool {
        self.source_id == MANUAL_SOURCE
    }

    /// The event as answered at `now_ms`, with the deliveries of its current checkpoint.
    pub fn present(&self, now_ms: i64, deliveries: &[DeliveryRow]) -> Event {
        let state = self.state_at(now_ms);
        let checkpoint = self.checkpoint_at(now_ms);
        let closed_as = state.is_closed().then(|| match state {
            EventState::Done => self.done_label.clone(),
            EventState::Withdrawn => "Withdrawn".to_string(),
            _ => "Expired".to_string(),
        });
        let closed_at = match (self.closed_at, state) {
            (Some(at), _) => Some(rfc3339(at)),
            (None, EventState::Expired) => Some(rfc3339(self.due_moment)),
            _ => None,
        };
        let acknowledged = !state.is_closed() && self.acknowledged_at(now_ms);
        Event {
            id: self.id.clone(),
            source: self.source_name.clone(),
            source_ref: self.source_ref.clone(),
            topic: self.topic.clone(),
            title: self.title.clone(),
            subtitle: self.subtitle.clone(),
            due_at: self.due_at.clone(),
            fire_at: self.fire_at.clone(),
            after_due: self.after_due(),
            done_label: self.done_label.clone(),
            deep_link: self.deep_link.clone(),
            state,
            due_moment: rfc3339(self.due_moment),
            acknowledged,
            quiet_until: self
                .quiet_until
                .filter(|until| acknowledged && *until < SILENT_UNTIL_RESCHEDULED)
                .map(rfc3339),
            editable: self.editable(),
            closed_as,
            closed_at,
            deliveries: deliveries
                .iter()
                .filter(|delivery| delivery.event_id == self.id && Some(delivery.checkpoint) == checkpoint)
                .filter_map(DeliveryRow::present)
                .collect(),
            created_at: rfc3339(self.created_at),
            updated_at: rfc3339(self.updated_at),
        }
    }
}

impl DeliveryRow {
    fn present(&self) -> Option<Delivery> {
        Some(Delivery {
            channel: Channel::parse(&self.channel)?,
            state: EventState::parse(&self.state_entered)?,
            outcome: DeliveryOutcome::parse(&self.outcome)?,
            attempts: self.attempts,
            last_error: self.last_error.clone(),
            updated_at: rfc3339(self.updated_at),
            next_attempt_at: self.next_attempt_at.map(rfc3339),
        })
    }
}

/// What `quiet_until` holds for an event acknowledged once overdue: it has no
/// next checkpoint, so it stays silent until rescheduled (year 9999).
pub(crate) const SILENT_UNTIL_RESCHEDULED: i64 = 253_402_300_799_999;

/// An event's fields, read and checked, as every writer stores them.
#[derive(Clone, Debug)]
pub(crate) struct Fields {
    pub title: String,
    pub subtitle: Option<String>,
    pub due: DueAt,
    pub fire_at: Day,
    pub after_due: AfterDue,
    pub done_label: String,
    pub deep_link: Option<String>,
}

/// Reads `due_at` (refusing it naming the field).
fn due_at(text: &str) -> Result<DueAt, ReminderError> {
    DueAt::parse(text).map_err(|error| ReminderError::Schedule { field: "due_at", error })
}

/// Reads `fire_at` for `due`, or its default, and checks it is not after the due day.
fn fire_at(text: Option<&str>, due: &DueAt) -> Result<Day, ReminderError> {
    let Some(text) = text else { return Ok(schedule::default_fire_at(due)) };
    let day = Day::parse(text).map_err(|error| ReminderError::Schedule { field: "fire_at", error })?;
    schedule::check_fire_at(day, due).map_err(|error| ReminderError::Schedule { field: "fire_at", error })?;
    Ok(day)
}

fn done_label(text: Option<&str>) -> Result<String, ReminderError> {
    match text.map(str::trim) {
        None | Some("") => Ok(DEFAULT_DONE_LABEL.to_string()),
        Some(label) => line(DONE_LABEL.0, label, DONE_LABEL.1, true),
    }
}

impl Fields {
    /// A new event's fields, defaults filled in: as a person, an agent or a source gives them.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        title: &str,
        due_at_text: &str,
        subtitle: Option<&str>,
        fire_at_text: Option<&str>,
        after_due: Option<AfterDue>,
        done_label_text: Option<&str>,
        deep_link_text: Option<&str>,
    ) -> Result<Fields, ReminderError> {
        let title = line(TITLE.0, title, TITLE.1, true)?;
        let due = due_at(due_at_text)?;
        Ok(Fields {
            title,
            subtitle: optional_line(SUBTITLE.0, subtitle, SUBTITLE.1)?,
            fire_at: fire_at(fire_at_text, &due)?,
            due,
            after_due: after_due.unwrap_or(AfterDue::Keep),
            done_label: done_label(done_label_text)?,
            deep_link: deep_link(deep_link_text)?,
        })
    }

    /// `existing` with `changes` applied, and whether that reschedules it (a
    /// new `due_at`). A `fire_at` left out follows the due day when it was the
    /// old due day's default, and otherwise stays: one chosen is never moved
    /// silently, so a new due day before it is refused, naming both.
    pub fn merged(existing: &EventRow, changes: &UpdateEvent) -> Result<(Fields, bool), ReminderError> {
        let old_due = due_at(&existing.due_at)?;
        let due = match changes.due_at.as_deref() {
            Some(text) => due_at(text)?,
            None => old_due.clone(),
        };
        let rescheduled = due.to_string() != old_due.to_string();
        let fire_at = match changes.fire_at.as_deref() {
            Some(text) => fire_at(Some(text), &due)?,
            None => {
                let old = Day::parse(&existing.fire_at).unwrap_or_else(|_| schedule::default_fire_at(&old_due));
                if old == schedule::default_fire_at(&old_due) {
                    schedule::default_fire_at(&due)
                } else if schedule::check_fire_at(old, &due).is_err() {
                    return Err(ReminderError::DueBeforeFireAt { due_day: due.day(), fire_at: old });
                } else {
                    old
                }
            }
        };
        let fields = Fields {
            title: match changes.title.as_deref() {
                Some(title) => line(TITLE.0, title, TITLE.1, true)?,
                None => existing.title.clone(),
            },
            subtitle: match changes.subtitle.as_deref() {
                Some(subtitle) => optional_line(SUBTITLE.0, Some(subtitle), SUBTITLE.1)?,
                None => existing.subtitle.clone(),
            },
            due,
            fire_at,
            after_due: changes.after_due.unwrap_or(existing.after_due()),
            done_label: match changes.done_label.as_deref() {
                Some(label) => done_label(Some(label))?,
                None => existing.done_label.clone(),
            },
            deep_link: match changes.deep_link.as_deref() {
                Some(link) => deep_link(Some(link))?,
                None => existing.deep_link.clone(),
            },
        };
        Ok((fields, rescheduled))
    }

    /// The instants its phase turns on, in `zone`.
    pub fn checkpoints(&self, zone: &Zone) -> Checkpoints {
        let timing = Timing { due: self.due.clone(), fire_at: self.fire_at, after_due: self.after_due };
        Checkpoints::of(&timing, zone)
    }

    /// The row these fields make for a new event.
    #[allow(clippy::too_many_arguments)]
    pub fn new_row(
        &self,
        id: String,
        person_id: String,
        source_id: String,
        source_name: String,
        source_ref: String,
        topic: String,
        zone: &Zone,
        now_ms: i64,
    ) -> EventRow {
        let checkpoints = self.checkpoints(zone);
        EventRow {
            id,
            person_id,
            source_id,
            source_name,
            source_ref,
            topic,
            title: self.title.clone(),
            subtitle: self.subtitle.clone(),
            due_at: self.due.to_string(),
            fire_at: self.fire_at.to_string(),
            after_due: self.after_due.name().to_string(),
            done_label: self.done_label.clone(),
            deep_link: self.deep_link.clone(),
            fire_moment: checkpoints.fire_day_start,
            day_moment: checkpoints.due_day_start,
            due_moment: checkpoints.due_moment,
            quiet_until: None,
            closed_as: None,
            closed_at: None,
            created_at: now_ms,
            updated_at: now_ms,
        }
    }

    /// `existing` with these fields: a reschedule clears the acknowledgement
    /// and reopens it; otherwise what it was stays.
    pub fn applied_to(&self, existing: &EventRow, rescheduled: bool, zone: &Zone, now_ms: i64) -> EventRow {
        let mut row = self.new_row(
            existing.id.clone(),
            existing.person_id.clone(),
            existing.source_id.clone(),
            existing.source_name.clone(),
            existing.source_ref.clone(),
            existing.topic.clone(),
            zone,
            now_ms,
        );
        row.created_at = existing.created_at;
        if !rescheduled {
            row.quiet_until = existing.quiet_until;
            row.closed_as = existing.closed_as.clone();
            row.closed_at = existing.closed_at;
        }
        row
    }
}

/// The zone a zone-reading statement found (UTC for a name no longer known).
pub(crate) fn zone_of(result: &QueryResult) -> Zone {
    result
        .first()
        .and_then(|row| row.text("time_zone").ok())
        .and_then(|name| Zone::parse(&name).ok())
        .unwrap_or_else(Zone::utc)
}

/// Reads the path's event of the caller's, with its deliveries and the zone,
/// refusing one that is not theirs as if it did not exist.
async fn the_event(context: &mut Context<'_>) -> Result<(EventRow, Vec<DeliveryRow>, Zone), Refusal> {
    let event_id = context.path(PathParameter::EventId)?.to_string();
    if !is_id_of(&event_id, IdKind::Event) {
        return Err(ReminderError::NoSuchEvent { id: event_id }.into());
    }
    let owner = store::owner(context.caller());
    let [event, deliveries] = store::owned_event(&owner, &event_id);
    let [event, deliveries, zone] = context.read_array([event, deliveries, store::owner_zone(&owner)]).await?;
    let Some(row) = event.first() else {
        return Err(ReminderError::NoSuchEvent { id: event_id }.into());
    };
    let row: EventRow = row.decode().map_err(|error| context.internal(error))?;
    let deliveries: Vec<DeliveryRow> = deliveries.decode_all().map_err(|error| context.internal(error))?;
    context.audit_object(row.id.clone());
    Ok((row, deliveries, zone_of(&zone)))
}

/// `GET /api/me/events`.
pub async fn list_events(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let now_ms = context.now_ms();
    let archive = context.query("archive") == Some("true");
    let state = context.query("state").and_then(EventState::parse);
    let limit = paging::limit(context)?;
    // Open events page on their due moment (soonest first); the archive is the
    // last 100 closed, one page.
    let (after_due, after_id) =
        if archive { (i64::MIN, String::new()) } else { paging::cursor(context, IdKind::Event, i64::MIN)? };
    let listed = if archive {
        EventsListed::Archive
    } else {
        EventsListed::Open { state: state.map(|state| state.name()), after_due, after_id: &after_id }
    };
    let [events, deliveries] = store::events_page(&store::owner(context.caller()), &listed, now_ms, limit);
    let [events, deliveries] = context.read_array([events, deliveries]).await?;
    let mut rows: Vec<EventRow> = events.decode_all().map_err(|error| context.internal(error))?;
    let deliveries: Vec<DeliveryRow> = deliveries.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = if archive { None } else { paging::cut(&mut rows, limit, |row| (row.due_moment, &row.id)) };
    let events = rows.iter().map(|row| row.present(now_ms, &deliveries)).collect();
    Ok(context.json(&EventList { events, next_cursor }))
}

/// `GET /api/me/events/:eventId`.
pub async fn get_event(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (row, deliveries, _) = the_event(context).await?;
    Ok(context.json(&row.present(context.now_ms(), &deliveries)))
}

/// `POST /api/me/events`: a manual event.
pub async fn create_event(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: CreateEvent = context.body()?;
    let fields = Fields::new(
        &request.title,
        &request.due_at,
        request.subtitle.as_deref(),
        request.fire_at.as_deref(),
        request.after_due,
        request.done_label.as_deref(),
        request.deep_link.as_deref(),
    )?;
    let [zone] = context.read_array([store::owner_zone(&store::owner(context.caller()))]).await?;
    let person_id = owner_after_read(context)?;
    let zone = zone_of(&zone);
    let now_ms = context.now_ms();
    let id = new_id(IdKind::Event, context.platform());
    let row = fields.new_row(
        id.clone(),
        person_id.clone(),
        MANUAL_SOURCE.to_string(),
        MANUAL_SOURCE.to_string(),
        format!("manual:{}", id.trim_start_matches("evt_")),
        String::new(),
        &zone,
        now_ms,
    );
    let actor = context.caller().actor_id().unwrap_or_default().to_string();
    context.write(store::upsert(&row, &actor).statement());
    context.guard(store::open_events_within_limit(&person_id), ReminderError::TooManyOpenEvents);
    context.audit_object(id);
    context.audit_detail(serde_json::json!({ "source": MANUAL_SOURCE, "due_at": row.due_at }));
    Ok(context.json(&row.present(now_ms, &[])))
}

/// Refuses a change to another source's event, naming the source.
fn only_manual(row: &EventRow) -> Result<(), ReminderError> {
    if row.editable() { Ok(()) } else { Err(ReminderError::OtherSourcesEvent { source: row.source_name.clone() }) }
}

/// `PATCH /api/me/events/:eventId`.
pub async fn update_event(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let changes: UpdateEvent = context.body()?;
    let (existing, deliveries, zone) = the_event(context).await?;
    only_manual(&existing)?;
    let now_ms = context.now_ms();
    let (fields, rescheduled) = Fields::merged(&existing, &changes)?;
    let row = fields.applied_to(&existing, rescheduled, &zone, now_ms);
    // The same upsert every writer uses: the event's key finds the stored row.
    let actor = context.caller().actor_id().unwrap_or_default().to_string();
    context.write(store::upsert(&row, &actor).statement());
    if rescheduled && existing.is_closed_at(now_ms) {
        context.guard(store::open_events_within_limit(&existing.person_id), ReminderError::TooManyOpenEvents);
    }
    context.audit_detail(serde_json::json!({ "rescheduled": rescheduled, "due_at": row.due_at }));
    Ok(context.json(&row.present(now_ms, if rescheduled { &[] } else { &deliveries })))
}

/// `DELETE /api/me/events/:eventId`: a manual event withdrawn.
pub async fn delete_event(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (existing, deliveries, _) = the_event(context).await?;
    only_manual(&existing)?;
    let now_ms = context.now_ms();
    let closed = close(context, existing, "withdrawn", now_ms);
    Ok(context.json(&closed.present(now_ms, &deliveries)))
}

/// Closes `row` as `how` unless it is closed already, which stays as it is.
fn close(context: &mut Context<'_>, mut row: EventRow, how: &'static str, now_ms: i64) -> EventRow {
    if row.is_closed_at(now_ms) {
        return row;
    }
    context.write(store::closing(&row.id, how, now_ms));
    row.closed_as = Some(how.to_string());
    row.closed_at = Some(now_ms);
    row.updated_at = now_ms;
    row
}

/// `POST /api/me/events/:eventId/done`.
pub async fn mark_done(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (existing, deliveries, _) = the_event(context).await?;
    let now_ms = context.now_ms();
    let closed = close(context, existing, "done", now_ms);
    Ok(context.json(&closed.present(now_ms, &deliveries)))
}

/// `POST /api/me/events/:eventId/reopen`: a Done or a Delete taken back.
pub async fn reopen_event(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (mut row, deliveries, _) = the_event(context).await?;
    let now_ms = context.now_ms();
    match row.closed_as.as_deref().and_then(EventState::parse) {
        // Open, or past its due moment and expiring but not yet swept: as it is.
        None => return Ok(context.json(&row.present(now_ms, &deliveries))),
        Some(EventState::Done) => {}
        Some(EventState::Withdrawn) => {
            only_manual(&row).map_err(|_| ReminderError::WithdrawnBySource { source: row.source_name.clone() })?
        }
        Some(_) => return Err(ReminderError::ExpiredByItself.into()),
    }
    // Its moments were kept when it closed, so its state is recomputed from
    // them; the deliveries already claimed for the checkpoint it is at keep it
    // from being told of twice.
    context.write(store::reopening(&row.id, now_ms));
    context.guard(store::open_events_within_limit(&row.person_id), ReminderError::TooManyOpenEvents);
    context.audit_detail(serde_json::json!({ "closed_as": row.closed_as }));
    row.closed_as = None;
    row.closed_at = None;
    row.updated_at = now_ms;
    Ok(context.json(&row.present(now_ms, &deliveries)))
}

/// `POST /api/me/events/:eventId/ack`: silent until the next checkpoint.
pub async fn mark_acknowledged(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (mut row, deliveries, _) = the_event(context).await?;
    let now_ms = context.now_ms();
    if !row.is_closed_at(now_ms) {
        let until = row.checkpoints().next_after(now_ms, row.after_due()).unwrap_or(SILENT_UNTIL_RESCHEDULED);
        context.write(store::acknowledge(&row.id, until, now_ms));
        row.quiet_until = Some(until);
        row.updated_at = now_ms;
    }
    Ok(context.json(&row.present(now_ms, &deliveries)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::storage::Statement;
    use crate::reminders::store::state_sql;

    /// 2026-12-14T01:00+09:00.
    const MOMENT_2026_12_13_1600_UTC: i64 = 1_797_177_600_000;

    #[test]
    fn the_state_a_query_reads_is_the_state_an_event_answers() {
        use crate::core::storage::Database;
        let database = crate::testing::SqliteDatabase::migrated();
        database.execute_sql(
            "INSERT INTO people (id, email, name, password_hash, created_at) VALUES ('usr_1', 'a@example.com', 'A', 'x', 0)",
        );
        let zone = Zone::utc();
        let fields = Fields::new("Tax", "2026-12-10", None, Some("2026-12-01"), None, None, None).unwrap();
        let mut rows = Vec::new();
        for (index, (after_due, closed_as)) in
            [("keep", None), ("expire", None), ("keep", Some("done")), ("expire", Some("withdrawn"))]
                .into_iter()
                .enumerate()
        {
            let mut row = fields.new_row(
                format!("evt_{index}"),
                "usr_1".into(),
                "manual".into(),
                "manual".into(),
                format!("manual:{index}"),
                String::new(),
                &zone,
                0,
            );
            row.after_due = after_due.to_string();
            row.closed_as = closed_as.map(str::to_string);
            row.closed_at = closed_as.map(|_| 0);
            futures_executor::block_on(database.execute(vec![store::upsert(&row, "usr_1").statement()])).unwrap();
            rows.push(row);
        }
        let checkpoints = rows[0].checkpoints();
        let moments = [checkpoints.fire_day_start, checkpoints.due_day_start, checkpoints.due_moment];
        for now in moments.iter().flat_map(|moment| [moment - 1, *moment, moment + 1]) {
            let read = Statement::new(format!(
                "SELECT e.id, {} AS state FROM reminder_events e ORDER BY e.id",
                state_sql("?1")
            ))
            .bind(now);
            let result = futures_executor::block_on(database.execute(vec![read])).unwrap().remove(0);
            for (row, stored) in rows.iter().zip(&result.rows) {
                assert_eq!(stored.text("state").unwrap(), row.state_at(now).name(), "{} at {now}", row.id);
            }
        }
    }

    #[test]
    fn a_place_bound_due_before_the_local_due_day_keeps_the_order_of_states() {
        // A flight at 01:00 in Tokyo on the 14th is 08:00 on the 13th in Los
        // Angeles: its day there is the 13th, and a fire_at on the 14th as
        // written starts no later than that.
        let zone = Zone::parse("America/Los_Angeles").unwrap();
        let fields =
            Fields::new("Flight", "2026-12-14T01:00+09:00", None, Some("2026-12-14"), None, None, None).unwrap();
        let checkpoints = fields.checkpoints(&zone);
        assert_eq!(checkpoints.due_moment, MOMENT_2026_12_13_1600_UTC);
        assert!(checkpoints.fire_day_start <= checkpoints.due_day_start);
        assert!(checkpoints.due_day_start <= checkpoints.due_moment);
        let row = fields.new_row(
            "evt_1".into(),
            "usr_1".into(),
            "manual".into(),
            "manual".into(),
            "m".into(),
            String::new(),
            &zone,
            0,
        );
        assert_eq!(row.state_at(MOMENT_2026_12_13_1600_UTC - 1), EventState::Today);
        assert_eq!(row.state_at(MOMENT_2026_12_13_1600_UTC), EventState::Overdue);
    }
}
