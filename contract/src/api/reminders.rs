//! Reminders (SPEC §9): a person's events, their profile and channels, the
//! sources that push events, and what was delivered.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::vocabulary::vocabulary;

/// How long an event's title and subtitle may be, in characters.
pub const EVENT_TITLE_MAXIMUM: usize = 200;
/// How long a done label may be, in characters.
pub const DONE_LABEL_MAXIMUM: usize = 40;
/// How long a deep link may be, in bytes.
pub const DEEP_LINK_MAXIMUM: usize = 2048;
/// How long a source's reference and topic may be, in characters.
pub const SOURCE_KEY_MAXIMUM: usize = 200;
/// How long a source's name may be, in characters.
pub const SOURCE_NAME_MAXIMUM: usize = 100;
/// How long a webhook address may be, in bytes.
pub const WEBHOOK_URL_MAXIMUM: usize = 2048;
/// How many open events one person's inbox keeps; adding more is refused.
pub const MAXIMUM_OPEN_EVENTS: usize = 1000;

vocabulary! {
    /// Where an event stands. The first four are open (shown by default); the
    /// last three are closed (the archive).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum EventState {
        Scheduled = "scheduled": "Before its fire_at day: nothing to do yet.";
        Preparing = "preparing": "From its fire_at day until the due day: time to prepare.";
        Today = "today": "The due day, before the due moment.";
        Overdue = "overdue": "Past due and still open (after_due is keep).";
        Expired = "expired": "Past due and closed by itself (after_due is expire).";
        Done = "done": "Closed as done.";
        Withdrawn = "withdrawn": "Withdrawn by its source, or deleted.";
    }
}

impl EventState {
    /// Whether the event is closed (in the archive).
    pub fn is_closed(self) -> bool {
        matches!(self, EventState::Expired | EventState::Done | EventState::Withdrawn)
    }

    /// The open states, which `list_events` filters by.
    pub const OPEN: &'static [&'static str] = &["scheduled", "preparing", "today", "overdue"];
}

vocabulary! {
    /// What happens when the due moment passes.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum AfterDue {
        Keep = "keep": "Stays open as overdue until done.";
        Expire = "expire": "Closes by itself as expired.";
    }
}

/// An event in a person's reminders inbox.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Event {
    /// The event's id (`evt_…`).
    pub id: String,
    /// Who pushed it: a source's name, or `manual` for one the person (or an agent of theirs) added.
    pub source: String,
    /// The source's own reference for it (`manual:…` for manual events).
    pub source_ref: String,
    /// The source's topic; with `source_ref`, the key a source upserts by.
    pub topic: String,
    /// What falls due.
    #[schemars(length(min = 1, max = EVENT_TITLE_MAXIMUM))]
    pub title: String,
    /// A second line, if any.
    #[schemars(length(max = EVENT_TITLE_MAXIMUM))]
    pub subtitle: Option<String>,
    /// When it is due, as given: `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM` in the person's zone, or with an offset when bound to a place.
    pub due_at: String,
    /// The day preparing starts (`YYYY-MM-DD`).
    pub fire_at: String,
    /// What happens when the due moment passes.
    pub after_due: AfterDue,
    /// The label of the button that closes it.
    #[schemars(length(min = 1, max = DONE_LABEL_MAXIMUM))]
    pub done_label: String,
    /// Where the event leads, if anywhere.
    pub deep_link: Option<String>,
    /// Where it stands now, in the person's zone.
    pub state: EventState,
    /// The due moment, in UTC (RFC 3339).
    pub due_moment: String,
    /// Whether it is acknowledged ("I remember"): no notification until its next checkpoint, or, once overdue, until it is rescheduled.
    pub acknowledged: bool,
    /// While acknowledged: the checkpoint the silence lasts until (RFC 3339); absent once overdue, when it lasts until a reschedule.
    pub quiet_until: Option<String>,
    /// Whether update_event and delete_event may change it: true for manual events; another source's event is closed only by mark_done or mark_ack.
    pub editable: bool,
    /// In the archive: how it closed (`Expired`, its done label, or `Withdrawn`).
    pub closed_as: Option<String>,
    /// When it closed (RFC 3339).
    pub closed_at: Option<String>,
    /// The notifications sent for its current state, per channel.
    pub deliveries: Vec<Delivery>,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
}

vocabulary! {
    /// What became of one notification.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum DeliveryOutcome {
        Sending = "sending": "Being sent now.";
        Delivered = "delivered": "The channel accepted it.";
        Failed = "failed": "The channel refused it or did not answer; a later run tries again at `next_attempt_at`, waiting twice as long after each attempt, until the attempts run out.";
    }
}

vocabulary! {
    /// A way a person is notified.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum Channel {
        Webhook = "webhook": "A signed POST to the person's webhook address.";
        Email = "email": "An email to the person's own address.";
    }
}

/// One notification of an event's state through one channel.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Delivery {
    /// The channel.
    pub channel: Channel,
    /// The state the event had entered.
    pub state: EventState,
    /// What became of it.
    pub outcome: DeliveryOutcome,
    /// How many times it was tried.
    pub attempts: i64,
    /// Why the last attempt failed, in the channel's words.
    pub last_error: Option<String>,
    /// When it was last tried (RFC 3339).
    pub updated_at: String,
    /// After a failure, when it is tried again (RFC 3339): the wait doubles
    /// with each attempt. None once delivered, while sending, and once its
    /// attempts ran out.
    pub next_attempt_at: Option<String>,
}

/// A page of events.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct EventList {
    /// Open events soonest due first, or, in the archive, the most recently closed first.
    pub events: Vec<Event>,
    /// Pass as `cursor` for the open events due after these; absent on the last page, and always in the archive (the last 100 closed).
    pub next_cursor: Option<String>,
}

/// A new manual event.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateEvent {
    /// What falls due: 1 to 200 characters.
    #[schemars(length(min = 1, max = EVENT_TITLE_MAXIMUM))]
    pub title: String,
    /// When it is due: `YYYY-MM-DD` (a day), `YYYY-MM-DDTHH:MM` (a time in your zone), or `YYYY-MM-DDTHH:MM+09:00` (with an offset, only when the event is bound to a place, such as a flight).
    pub due_at: String,
    /// A second line: up to 200 characters.
    #[serde(default)]
    #[schemars(length(max = EVENT_TITLE_MAXIMUM))]
    pub subtitle: Option<String>,
    /// The day preparing starts (`YYYY-MM-DD`), never after the due day. Default: 30 days before the due day.
    #[serde(default)]
    pub fire_at: Option<String>,
    /// What happens when the due moment passes. Default: keep.
    #[serde(default)]
    pub after_due: Option<AfterDue>,
    /// The label of the button that closes it: up to 40 characters. Default: Done.
    #[serde(default)]
    #[schemars(length(max = DONE_LABEL_MAXIMUM))]
    pub done_label: Option<String>,
    /// Where the event leads: an https address.
    #[serde(default)]
    #[schemars(length(max = DEEP_LINK_MAXIMUM))]
    pub deep_link: Option<String>,
}

/// Changes to a manual event: any of its fields. A new `due_at` reschedules it (clears the acknowledgement and reopens it, even when closed); the same `due_at` changes only the fields given.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateEvent {
    /// What falls due: 1 to 200 characters.
    #[serde(default)]
    #[schemars(length(min = 1, max = EVENT_TITLE_MAXIMUM))]
    pub title: Option<String>,
    /// When it is due, in one of the three forms.
    #[serde(default)]
    pub due_at: Option<String>,
    /// A second line: up to 200 characters; an empty string removes it.
    #[serde(default)]
    #[schemars(length(max = EVENT_TITLE_MAXIMUM))]
    pub subtitle: Option<String>,
    /// The day preparing starts (`YYYY-MM-DD`), never after the due day.
    #[serde(default)]
    pub fire_at: Option<String>,
    /// What happens when the due moment passes.
    #[serde(default)]
    pub after_due: Option<AfterDue>,
    /// The label of the button that closes it: up to 40 characters.
    #[serde(default)]
    #[schemars(length(max = DONE_LABEL_MAXIMUM))]
    pub done_label: Option<String>,
    /// Where the event leads: an https address; an empty string removes it.
    #[serde(default)]
    #[schemars(length(max = DEEP_LINK_MAXIMUM))]
    pub deep_link: Option<String>,
}

/// A person's reminder profile: zone, quiet hours and channels.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReminderProfile {
    /// The person (`usr_…`).
    pub person_id: String,
    /// Their sign-in address, where the email channel writes.
    pub email: String,
    /// Their IANA time zone, such as `Europe/Berlin`; states are computed in it.
    pub tz: String,
    /// When quiet hours start (`HH:MM`, local); absent when there are none.
    pub quiet_start: Option<String>,
    /// When quiet hours end (`HH:MM`, local).
    pub quiet_end: Option<String>,
    /// The channels notifications go through.
    pub channels: ReminderChannels,
}

/// Where notifications go.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReminderChannels {
    /// Whether an email goes to the person's own address.
    pub email: bool,
    /// The webhook's address, if one is set (set it with set_reminder_webhook).
    pub webhook_url: Option<String>,
}

/// Changes to a reminder profile: any of its fields.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateReminderProfile {
    /// An IANA time zone, such as `Europe/Berlin` or `America/New_York`. Open events' states are recomputed in it.
    #[serde(default)]
    pub tz: Option<String>,
    /// When quiet hours start (`HH:MM`); give `quiet_end` too. An empty string for both removes quiet hours.
    #[serde(default)]
    pub quiet_start: Option<String>,
    /// When quiet hours end (`HH:MM`).
    #[serde(default)]
    pub quiet_end: Option<String>,
    /// Whether notifications are emailed to the person's own address.
    #[serde(default)]
    pub email: Option<bool>,
}

/// Where to send signed notifications.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetReminderWebhook {
    /// An https address on the internet that accepts a POST of JSON: never
    /// inside a network (loopback, private, link-local, unique-local, shared
    /// addresses in any spelling, `localhost`, `.local`, `.internal`), except
    /// loopback for a node that itself runs on a loopback origin.
    #[schemars(length(max = WEBHOOK_URL_MAXIMUM))]
    pub url: String,
}

/// The webhook set, with the secret its deliveries are signed with, shown once.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReminderWebhookSet {
    /// The profile as it now stands.
    pub profile: ReminderProfile,
    /// The signing secret (`whsec_…`), shown only now. Each delivery carries `Mailroom-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" under this secret>`.
    pub secret: String,
}

/// A source of events.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReminderSource {
    /// The source's id (`src_…`).
    pub id: String,
    /// Its name, shown on its events.
    pub name: String,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// Who created it.
    pub created_by: String,
    /// When it was revoked (RFC 3339); its credential no longer works.
    pub revoked_at: Option<String>,
}

/// Every source.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReminderSourceList {
    /// The sources, oldest first.
    pub sources: Vec<ReminderSource>,
}

/// A new source.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateReminderSource {
    /// Its name, shown on its events: 1 to 100 characters of letters, digits, `-`, `_` and `.`; not `manual`.
    #[schemars(length(min = 1, max = SOURCE_NAME_MAXIMUM))]
    pub name: String,
}

/// A source created, with its credential, shown once.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReminderSourceCreated {
    /// The source.
    pub source: ReminderSource,
    /// Its credential (`mr_src_…`), shown only now: send it as `Authorization: Bearer <credential>`.
    pub credential: String,
}

/// An event a source pushes: created, or updated when its key exists.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PushEvent {
    /// The person's sign-in address.
    pub person: String,
    /// The source's reference for the event; with `topic`, the key.
    #[schemars(length(min = 1, max = SOURCE_KEY_MAXIMUM))]
    pub source_ref: String,
    /// The topic within the reference, such as `renewal`; with `source_ref`, the key. Default: empty.
    #[serde(default)]
    #[schemars(length(max = SOURCE_KEY_MAXIMUM))]
    pub topic: String,
    /// What falls due: 1 to 200 characters.
    #[schemars(length(min = 1, max = EVENT_TITLE_MAXIMUM))]
    pub title: String,
    /// When it is due, in one of the three forms.
    pub due_at: String,
    /// A second line: up to 200 characters.
    #[serde(default)]
    #[schemars(length(max = EVENT_TITLE_MAXIMUM))]
    pub subtitle: Option<String>,
    /// The day preparing starts; default 30 days before the due day.
    #[serde(default)]
    pub fire_at: Option<String>,
    /// What happens when the due moment passes. Default: keep.
    #[serde(default)]
    pub after_due: Option<AfterDue>,
    /// The closing button's label: up to 40 characters. Default: Done.
    #[serde(default)]
    #[schemars(length(max = DONE_LABEL_MAXIMUM))]
    pub done_label: Option<String>,
    /// Where the event leads: an https address.
    #[serde(default)]
    #[schemars(length(max = DEEP_LINK_MAXIMUM))]
    pub deep_link: Option<String>,
}
