//! Reminders: a person's events, their reminder profile and webhook, and the sources
//! that push events with a credential of their own.

use crate::api::{
    CreateEvent, CreateReminderSource, Event, EventList, EventState, PushEvent, ReminderProfile, ReminderSource,
    ReminderSourceCreated, ReminderSourceList, ReminderWebhookSet, SetReminderWebhook, UpdateEvent,
    UpdateReminderProfile,
};
use crate::route::Method::{Delete, Get, Patch, Post, Put};
use crate::route::{Authority, Parameter, PathParameter, Refuses, Route, Tier};
use crate::route_id::RouteId;

use super::shared::{ADMIN, CURSOR};

pub(super) fn list_events() -> Route {
    Route::new(RouteId::ListEvents, Get, "/api/me/events", "list_events")
        .summary("List my reminders")
        .description("Lists the caller's reminders (an agent's: its sponsor's), from every source. By default the open ones, soonest due first, a page at a time (follow `next_cursor`); `state` narrows them to one open state; `archive` lists the last 100 closed instead (done, expired, withdrawn), most recent first, with `closed_as`. States are computed now, in the person's zone.")
        .query_parameters(const { &[
            Parameter::one_of("state", "Only open events in this state.", EventState::OPEN),
            Parameter::flag("archive", "List the last 100 closed events instead of the open ones."),
            Parameter::page_size("events", 100, 100),
            CURSOR,
        ] })
        .response::<EventList>()
        .authority(Authority::Personal)
}

pub(super) fn create_event() -> Route {
    Route::new(RouteId::CreateEvent, Post, "/api/me/events", "create_event")
        .summary("Add a reminder")
        .description("Adds a reminder to the caller's inbox (an agent's: its sponsor's) as a manual event, which the person and their agents may edit. `due_at` is a day (`2026-12-14`), a time in the person's zone (`2026-12-14T09:00`), or, only for an event bound to a place, a time with its offset (`2026-12-14T09:00+09:00`). Preparing starts on `fire_at`, by default 30 days before the due day. Something that repeats is a separate event each time.")
        .request::<CreateEvent>()
        .response::<Event>()
        .created()
        .tier(Tier::Act)
        .refuses(const { &[
            Refuses::Conflict("The inbox already holds as many open events as the node keeps (`MAXIMUM_OPEN_EVENTS`)."),
        ] })
        .authority(Authority::Personal)
}

pub(super) fn get_event() -> Route {
    Route::new(RouteId::GetEvent, Get, "/api/me/events/:eventId", "get_event")
        .summary("Show a reminder")
        .description("Returns one of the caller's reminders with its state now, whether it is `editable`, and what was delivered for it.")
        .path_parameters(&[PathParameter::EventId])
        .response::<Event>()
        .authority(Authority::Personal)
}

pub(super) fn update_event() -> Route {
    Route::new(RouteId::UpdateEvent, Patch, "/api/me/events/:eventId", "update_event")
        .summary("Change a reminder")
        .description("Changes a manual reminder (`editable`). A new `due_at` reschedules it: the acknowledgement is cleared and its state recomputed, reopening it even if it was closed. The same `due_at` changes only the fields given. Another source's event cannot be changed here, because that source would overwrite the change on its next push: close it with mark_done or mark_ack.")
        .path_parameters(&[PathParameter::EventId])
        .request::<UpdateEvent>()
        .response::<Event>()
        .tier(Tier::Act)
        .refuses(const { &[
            Refuses::Forbidden("The event belongs to another source, which alone changes it."),
            Refuses::Conflict("Rescheduling would reopen it, and the inbox already holds as many open events as the node keeps."),
        ] })
        .authority(Authority::Personal)
}

pub(super) fn delete_event() -> Route {
    Route::new(RouteId::DeleteEvent, Delete, "/api/me/events/:eventId", "delete_event")
        .summary("Delete a reminder")
        .description("Withdraws a manual reminder (`editable`): it closes as withdrawn and leaves the open list. One already closed stays as it closed. Another source's event is withdrawn only by that source.")
        .path_parameters(&[PathParameter::EventId])
        .response::<Event>()
        .tier(Tier::Act)
        .refuses(const { &[
            Refuses::Forbidden("The event belongs to another source, which alone withdraws it."),
        ] })
        .authority(Authority::Personal)
}

pub(super) fn mark_done() -> Route {
    Route::new(RouteId::MarkDone, Post, "/api/me/events/:eventId/done", "mark_done")
        .summary("Mark a reminder done")
        .description("Closes a reminder from any source as done (its button reads its `done_label`). A closed event is returned as it is. A new `due_at` (update_event, or the source's next push) reopens it, and reopen_event takes the closing back.")
        .path_parameters(&[PathParameter::EventId])
        .response::<Event>()
        .tier(Tier::Act)
        .authority(Authority::Personal)
}

pub(super) fn reopen_event() -> Route {
    Route::new(RouteId::ReopenEvent, Post, "/api/me/events/:eventId/reopen", "reopen_event")
        .summary("Reopen a reminder")
        .description("Takes back closing a reminder by hand: one marked done (from any source), or a manual one deleted, opens again with its moments unchanged, so its state is what it would be had it never closed (overdue at once if its due moment has passed). What was already sent about its current state is not sent again. An open event is returned as it is. One that expired by itself reopens only with a new `due_at` (update_event).")
        .path_parameters(&[PathParameter::EventId])
        .response::<Event>()
        .tier(Tier::Act)
        .refuses(const { &[
            Refuses::Forbidden("Another source withdrew it, and that source alone brings it back."),
            Refuses::Conflict("It expired by itself, or reopening it would hold more open events than the node keeps."),
        ] })
        .authority(Authority::Personal)
}

pub(super) fn mark_ack() -> Route {
    Route::new(RouteId::MarkAck, Post, "/api/me/events/:eventId/ack", "mark_ack")
        .summary("Acknowledge a reminder")
        .description("\"I remember\": silences a reminder from any source until its next checkpoint (the start of its due day, or its due moment), without closing it. Acknowledging is not done. A closed event is returned as it is.")
        .path_parameters(&[PathParameter::EventId])
        .response::<Event>()
        .tier(Tier::Act)
        .authority(Authority::Personal)
}

pub(super) fn get_profile() -> Route {
    Route::new(RouteId::GetProfile, Get, "/api/me/profile", "get_profile")
        .summary("Show my reminder profile")
        .description("Returns the caller's reminder profile (an agent's: its sponsor's): time zone, quiet hours, and the channels notifications go through.")
        .response::<ReminderProfile>()
        .authority(Authority::Personal)
}

pub(super) fn update_profile() -> Route {
    Route::new(RouteId::UpdateProfile, Patch, "/api/me/profile", "update_profile")
        .summary("Change my reminder profile")
        .description("Changes the time zone (an IANA name; open reminders' states are recomputed in it), the quiet hours (`HH:MM` to `HH:MM`, local; notifications wait until they end) and whether notifications are emailed to the person's own address.")
        .request::<UpdateReminderProfile>()
        .response::<ReminderProfile>()
        .tier(Tier::Act)
        .authority(Authority::Personal)
}

pub(super) fn set_reminder_webhook() -> Route {
    Route::new(RouteId::SetReminderWebhook, Put, "/api/me/profile/webhook", "set_reminder_webhook")
        .summary("Set my reminder webhook")
        .description("Sends notifications as signed POSTs to this address, and returns the signing secret, once. Setting it again replaces the address and the secret.")
        .request::<SetReminderWebhook>()
        .response::<ReminderWebhookSet>()
        .tier(Tier::Operator)
        .withheld_because("a webhook receives every reminder and its secret signs them: where a person's notifications go is theirs to choose, signed in themselves")
        .authority(Authority::Personal)
}

pub(super) fn remove_reminder_webhook() -> Route {
    Route::new(RouteId::RemoveReminderWebhook, Delete, "/api/me/profile/webhook", "remove_reminder_webhook")
        .summary("Remove my reminder webhook")
        .description("Stops sending notifications to the webhook and forgets its secret.")
        .response::<ReminderProfile>()
        .tier(Tier::Operator)
        .withheld_because("where a person's notifications go is theirs to choose, signed in themselves")
        .authority(Authority::Personal)
}

pub(super) fn list_reminder_sources() -> Route {
    Route::new(RouteId::ListReminderSources, Get, "/api/reminder-sources", "list_reminder_sources")
        .summary("List reminder sources")
        .description("Lists every source that can push reminders, revoked ones included.")
        .response::<ReminderSourceList>()
        .authority(ADMIN)
}

pub(super) fn create_reminder_source() -> Route {
    Route::new(RouteId::CreateReminderSource, Post, "/api/reminder-sources", "create_reminder_source")
        .summary("Create a reminder source")
        .description(
            "Creates a source (a service that pushes reminders for people) and returns its credential, shown once.",
        )
        .request::<CreateReminderSource>()
        .response::<ReminderSourceCreated>()
        .created()
        .tier(Tier::Operator)
        .refuses(const { &[Refuses::Conflict("A source with that name exists.")] })
        .authority(ADMIN)
}

pub(super) fn revoke_reminder_source() -> Route {
    Route::new(RouteId::RevokeReminderSource, Post, "/api/reminder-sources/:sourceId/revoke", "revoke_reminder_source")
        .summary("Revoke a reminder source")
        .description("Ends a source's credential for good. Its events stay in people's inboxes; nothing can change them but the people themselves (done, acknowledge).")
        .path_parameters(&[PathParameter::SourceId])
        .response::<ReminderSource>()
        .tier(Tier::Operator)
        .refuses(const { &[
            Refuses::Conflict("The source is already revoked."),
        ] })
        .authority(ADMIN)
}

pub(super) fn push_event() -> Route {
    Route::new(RouteId::PushEvent, Put, "/api/source/events", "push_event")
        .summary("Push a reminder (source)")
        .description("A source creates or updates its event for the person named by `person`, keyed by `source_ref` and `topic`. A new `due_at` reschedules it (reopening it if it was closed); the same `due_at` changes only the other fields.")
        .request::<PushEvent>()
        .response::<Event>()
        .tier(Tier::Act)
        .withheld_because("it is a reminder source's own route, called over REST with the source's mr_src_ credential; an agent adds reminders with create_event")
        .refuses(const { &[
            Refuses::NotFound("No enabled person has the address `person`."),
            Refuses::Conflict("The inbox already holds as many open events as the node keeps (`MAXIMUM_OPEN_EVENTS`)."),
        ] })
        .authority(Authority::Source)
}

pub(super) fn withdraw_event() -> Route {
    Route::new(RouteId::WithdrawEvent, Delete, "/api/source/events", "withdraw_event")
        .summary("Withdraw a reminder (source)")
        .description("A source withdraws its event for the person named by `person`, keyed by `source_ref` and `topic`: it closes as withdrawn.")
        .query_parameters(const { &[
            Parameter::text("person", "The person's sign-in address.").required(),
            Parameter::text("source_ref", "The source's reference for the event.").required(),
            Parameter::text("topic", "The topic within the reference; empty when left out."),
        ] })
        .response::<Event>()
        .tier(Tier::Act)
        .withheld_because("it is a reminder source's own route, called over REST with the source's mr_src_ credential; an agent deletes manual reminders with delete_event")
        .refuses(const { &[
            Refuses::NotFound("The source has no such event for that person."),
        ] })
        .authority(Authority::Source)
}
