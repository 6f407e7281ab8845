//! Butlers: a mailbox's rules for what arrives, drafted, simulated and published.

use crate::api::{Butler, ButlerList, ButlerSimulation, CreateButler, PublishButler, SimulateButler, UpdateButler};
use crate::route::Method::{Get, Patch, Post};
use crate::route::{PathParameter, Refuses, Route, Tier};
use crate::route_id::RouteId;

use super::shared::ADMIN;

pub(super) fn list_butlers() -> Route {
    Route::new(RouteId::ListButlers, Get, "/api/mailboxes/:mailboxId/butlers", "list_butlers")
        .summary("List a mailbox's butlers")
        .description("Lists the butlers working on a mailbox's inbound mail (an administrator's): each with its sponsor, whether a published version acts, and every version with what it does.")
        .path_parameters(&[PathParameter::MailboxId])
        .response::<ButlerList>()
        .authority(ADMIN)
}

pub(super) fn create_butler() -> Route {
    Route::new(RouteId::CreateButler, Post, "/api/mailboxes/:mailboxId/butlers", "create_butler")
        .summary("Create a butler")
        .description("Creates a butler for a mailbox's inbound mail: conditions every delivery is judged by, effects on the conversation it joins, and a sponsor (a person) whose authority the effects run under. Its first version is a draft; nothing acts until it is published.")
        .path_parameters(&[PathParameter::MailboxId])
        .request::<CreateButler>()
        .response::<Butler>()
        .created()
        .tier(Tier::Operator)
        .authority(ADMIN)
}

pub(super) fn get_butler() -> Route {
    Route::new(RouteId::GetButler, Get, "/api/mailboxes/:mailboxId/butlers/:butlerId", "get_butler")
        .summary("Show a butler")
        .description("Returns a butler with every version, the published one marked with the relations its sponsor held when it was published.")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::ButlerId])
        .response::<Butler>()
        .authority(ADMIN)
}

pub(super) fn update_butler() -> Route {
    Route::new(RouteId::UpdateButler, Patch, "/api/mailboxes/:mailboxId/butlers/:butlerId", "update_butler")
        .summary("Change a butler")
        .description("Renames a butler, writes new rules as a new draft version (the published one acts on, unchanged, until another is published), or stops and restarts its published version acting.")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::ButlerId])
        .request::<UpdateButler>()
        .response::<Butler>()
        .tier(Tier::Operator)
        .authority(ADMIN)
}

pub(super) fn publish_butler() -> Route {
    Route::new(RouteId::PublishButler, Post, "/api/mailboxes/:mailboxId/butlers/:butlerId/publish", "publish_butler")
        .summary("Publish a butler's version")
        .description("Makes a version the one that acts on deliveries, pinning the relations its sponsor holds on the mailbox now: its effects never run with more, and each runs only while the sponsor still holds what it needs.")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::ButlerId])
        .request::<PublishButler>()
        .response::<Butler>()
        .tier(Tier::Operator)
        .refuses(const { &[
            Refuses::Conflict("The version is already published, or its sponsor does not hold what its effects need on the mailbox."),
        ] })
        .authority(ADMIN)
}

pub(super) fn simulate_butler() -> Route {
    Route::new(RouteId::SimulateButler, Post, "/api/mailboxes/:mailboxId/butlers/:butlerId/simulate", "simulate_butler")
        .summary("Dry-run a butler over a past delivery")
        .description("Walks a version of a butler (by default its newest) over a message the mailbox already received: which conditions matched and what each effect would do, or why it would be skipped, with the sponsor's authority as it stands. Causes nothing and writes nothing, not even an audit entry.")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::ButlerId])
        .request::<SimulateButler>()
        .response::<ButlerSimulation>()
        .tier(Tier::Read)
        .authority(ADMIN)
}
