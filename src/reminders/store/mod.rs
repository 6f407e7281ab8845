//! Reminders' SQL, one file per table a route or the run writes: `events`
//! (with the columns, state and owner every reading shares), `profiles`,
//! `sources` and `deliveries` (the scheduled run's). This file only declares
//! them and re-exports what the domain's files use.

mod deliveries;
mod events;
mod profiles;
mod sources;

pub(crate) use deliveries::{
    Due, FeedDue, Outcome, claim, due_deliveries, due_for_the_feed, expire_events, give_back, record,
};
#[cfg(test)]
pub(crate) use events::state_sql;
pub(crate) use events::{
    DeliveryRow, EventRow, EventsListed, acknowledge, closing, events_page, move_moments, open_events_within_limit,
    owned_event, owner, owner_open_events, owner_zone, reopening, upsert,
};
pub(crate) use profiles::{ProfileRow, Secret, owner_profile, store_profile};
pub(crate) use sources::{SourceRow, about, all_sources, new_source, revoke_source, source, source_named};
