//! What can go wrong with a reminder, a profile or a source, each with the
//! refusal that says so.

use mailroom_contract::api::{DEEP_LINK_MAXIMUM, MAXIMUM_OPEN_EVENTS, SOURCE_NAME_MAXIMUM, WEBHOOK_URL_MAXIMUM};

use super::schedule::{Day, ScheduleError};
use crate::core::refusal::Refusal;

/// What can be wrong with a reminder, a profile, a source, or a request about one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReminderError {
    /// A date, time, zone or `due_at` that cannot be read, or a `fire_at` after the due day.
    Schedule { field: &'static str, error: ScheduleError },
    /// A new `due_at` would fall before the `fire_at` the event was given, which
    /// is kept unless it is changed too.
    DueBeforeFireAt { due_day: Day, fire_at: Day },
    /// A title, subtitle or done label holding a control that reorders text.
    DirectionControl { field: &'static str, control: char },
    /// A text field empty where it must not be, too long, or holding a line break.
    InvalidText { field: &'static str, maximum: usize, required: bool },
    /// A deep link that is not an https address.
    InvalidDeepLink,
    /// Quiet hours with only one end.
    HalfQuietHours,
    /// A webhook address the node will not post to, and why (`core::outbound`'s words).
    InvalidWebhookUrl { why: String },
    /// No event of the caller's has this id.
    NoSuchEvent { id: String },
    /// The event belongs to another source, which would overwrite a change.
    OtherSourcesEvent { source: String },
    /// The person has as many open events as the node keeps.
    TooManyOpenEvents,
    /// Reopening asked of an event that expired by itself, which only a new
    /// due moment brings back.
    ExpiredByItself,
    /// Reopening asked of an event another source withdrew.
    WithdrawnBySource { source: String },
    /// A source named a person who does not exist or is disabled.
    NoSuchPerson { email: String },
    /// A source asked to withdraw an event it does not have.
    NoSuchSourceEvent { source_ref: String, topic: String },
    /// A source name that cannot be used.
    InvalidSourceName,
    /// Another source has this name.
    SourceNameTaken,
    /// No source has this id.
    NoSuchSource { id: String },
    /// The source is already revoked.
    SourceAlreadyRevoked,
}

impl From<ReminderError> for Refusal {
    fn from(error: ReminderError) -> Refusal {
        match error {
            ReminderError::Schedule { field, error } => error.refusal(field),
            ReminderError::DirectionControl { field, control } => {
                crate::core::text::direction_control_refused(field, control)
            }
            ReminderError::DueBeforeFireAt { due_day, fire_at } => Refusal::new(
                400,
                "due_before_fire_at",
                format!("`due_at` {due_day} is before this event's `fire_at`, {fire_at}."),
                "Its `fire_at` was chosen rather than left to the default, so it is kept, and a reminder cannot start preparing after the day it is due.",
                format!(
                    "Send a `fire_at` on or before {due_day} with the new `due_at`, or a `due_at` on or after {fire_at}."
                ),
            ),
            ReminderError::InvalidText { field, maximum, required } => Refusal::new(
                400,
                "invalid_text",
                format!("`{field}` cannot be used."),
                if required {
                    format!("`{field}` is one line of 1 to {maximum} characters.")
                } else {
                    format!("`{field}` is one line of at most {maximum} characters.")
                },
                format!("Send `{field}` as a single line of at most {maximum} characters."),
            ),
            ReminderError::InvalidDeepLink => Refusal::new(
                400,
                "invalid_deep_link",
                "`deep_link` cannot be used.",
                format!("A deep link is an https address of at most {DEEP_LINK_MAXIMUM} characters, without spaces."),
                "Send an address such as https://example.org/visa/4471, or leave `deep_link` out.",
            ),
            ReminderError::HalfQuietHours => Refusal::new(
                400,
                "invalid_quiet_hours",
                "Quiet hours need both `quiet_start` and `quiet_end`.",
                "Quiet hours are a window of local time, from one time to another.",
                "Send both, such as `quiet_start` 22:00 and `quiet_end` 07:00, or both as empty strings to remove them.",
            ),
            ReminderError::InvalidWebhookUrl { why } => Refusal::new(
                400,
                "invalid_webhook_url",
                "`url` cannot be used as a webhook.",
                format!(
                    "`url`: {why}. A webhook is an https address on the internet of at most {WEBHOOK_URL_MAXIMUM} characters, without credentials in it: never an address inside a network (loopback, private, link-local) nor a name of one."
                ),
                "Send an address such as https://hooks.example.org/mailroom.",
            ),
            ReminderError::NoSuchEvent { id } => Refusal::not_found("event", &id),
            ReminderError::OtherSourcesEvent { source } => Refusal::new(
                403,
                "other_sources_event",
                format!("This event belongs to the source {source}, and only {source} changes or withdraws it."),
                format!(
                    "{source} keeps this event in step with its own records: its next push would overwrite a change made here."
                ),
                "Close it with mark_done, or silence it until its next checkpoint with mark_ack; change it where it comes from.",
            ),
            ReminderError::TooManyOpenEvents => Refusal::new(
                409,
                "too_many_open_events",
                format!("This inbox already has {MAXIMUM_OPEN_EVENTS} open events."),
                format!(
                    "A person's inbox keeps at most {MAXIMUM_OPEN_EVENTS} open events, so it stays one a person can read."
                ),
                "Close or delete events that are no longer needed, then add this one again.",
            ),
            ReminderError::ExpiredByItself => Refusal::new(
                409,
                "expired_by_itself",
                "This event was not closed by hand: it expired by itself once its due moment passed.",
                "Reopening takes back a Done or a Delete; an event set to expire would only expire again.",
                "Give it a new due_at with update_event, which reopens it.",
            ),
            ReminderError::WithdrawnBySource { source } => Refusal::new(
                403,
                "other_sources_event",
                format!("This event was withdrawn by the source {source}, and only {source} brings it back."),
                format!("{source} keeps this event in step with its own records, where it is no longer due."),
                "Push it again from where it comes from.",
            ),
            ReminderError::NoSuchPerson { email } => Refusal::new(
                404,
                "not_found",
                format!("There is no person {email} on this node."),
                "An event is pushed for an enabled person, named by their sign-in address.",
                "Check the address; an administrator can list the node's people.",
            ),
            ReminderError::NoSuchSourceEvent { source_ref, topic } => Refusal::new(
                404,
                "not_found",
                format!("This source has no event `{source_ref}` / `{topic}` for that person."),
                "A source withdraws only events it pushed, by the `source_ref` and `topic` it pushed them with.",
                "Check `person`, `source_ref` and `topic` against what was pushed.",
            ),
            ReminderError::InvalidSourceName => Refusal::new(
                400,
                "invalid_source_name",
                "That source name cannot be used.",
                format!(
                    "A source's name is 1 to {SOURCE_NAME_MAXIMUM} letters, digits, `-`, `_` or `.`, and not `manual` in any case, which names events people add."
                ),
                "Send a name such as `visa-office`.",
            ),
            ReminderError::SourceNameTaken => Refusal::new(
                409,
                "source_name_taken",
                "A source with that name already exists.",
                "A source's name is shown on its events, so names are unique, whatever their case.",
                "Choose another name, or use the existing source from GET /api/reminder-sources.",
            ),
            ReminderError::NoSuchSource { id } => Refusal::not_found("reminder source", &id),
            ReminderError::SourceAlreadyRevoked => Refusal::new(
                409,
                "source_revoked",
                "This source is already revoked.",
                "A revoked source's credential never works again.",
                "Create a new source if one should push reminders again.",
            ),
        }
    }
}
