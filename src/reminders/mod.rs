//! Reminders (SPEC §9, seed 001): each person's inbox of things that fall due,
//! filled by the person, by their agents and by sources.
//!
//! One file per concern: `schedule` (the time logic: the three forms of
//! `due_at`, days and zones, with no clock and no storage), `events` (an event's
//! fields, its moments and state, and the person's routes), `profile` (zone,
//! quiet hours and channels), `sources` (the administrator's routes for sources,
//! and a source's push and withdraw) and `notify` (what the scheduled run
//! delivers). Beneath them: `errors` (what can go wrong and the refusals that
//! say so), `checks` (an event's text checked), `whose` (whose inbox a call
//! works in) and `store` (every statement, and the rows they read). This file
//! only declares them and re-exports what other modules use.
//!
//! Whose inbox: a person's own, an agent's sponsor's (the route's authority is
//! `Personal`). The sponsor is derived in SQL from the agent's id for the first
//! read, and known as the call's delegator after it, so a caller never names an
//! inbox and no agent reaches anyone else's.

mod checks;
mod errors;
pub mod events;
pub mod notify;
pub mod profile;
pub mod schedule;
pub mod sources;
mod store;
mod whose;

pub use errors::ReminderError;
pub use events::{
    MANUAL_SOURCE, create_event, delete_event, get_event, list_events, mark_acknowledged, mark_done, reopen_event,
    update_event,
};
pub use notify::{NotifyReport, notify_due, retry_wait_ms};
pub use profile::{get_profile, remove_webhook, set_webhook, update_profile};
pub use sources::{create_source, list_sources, push_event, revoke_source, withdraw_event};
