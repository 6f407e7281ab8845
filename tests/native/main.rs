//! Native tests: the whole node (dispatcher, handlers, SQL) on SQLite built from
//! `migrations/`, with a fixed clock. Fast and deep; the end-to-end tests in
//! `tests/e2e/` drive the same code on workerd and D1.

// A test's unwrap is its assertion: it fails the test, naming the line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod desk;
mod support;

mod a2a;
mod a2a_push;
mod a2a_streams;
mod agents;
mod agents_capabilities;
mod agents_delegation;
mod audit_chain;
mod audit_reading;
mod audit_segments;
mod audit_witness;
mod authority;
mod budget;
mod budget_jobs;
mod budget_peers;
mod butlers;
mod butlers_effects;
mod code_map;
mod dead_credentials;
mod decisions;
mod deleting_mail;
mod deliveries;
mod exports;
mod identity;
mod image_senders;
mod inbound_limits;
mod invariants;
mod layers;
mod live;
mod mail;
mod mailbox_storage;
mod mailbox_work;
mod mcp;
mod mcp_calls;
mod mcp_catalogue;
mod mcp_listen;
mod mcp_resources;
mod mcp_withheld;
mod messaging;
mod moving_changes;
mod moving_delivery;
mod moving_mail;
mod moving_search;
mod moving_sends;
mod notes;
mod notifications;
mod oauth;
mod outbound;
mod own_databases;
mod peers;
mod people_and_teams;
mod refusals;
mod relations;
mod reminders;
mod reminders_reopen;
mod replies;
mod rooms;
mod security;
mod send_sizes;
mod sends;
mod snooze;
mod stores;
mod submission_races;
mod thread_attachments;
mod threads;
mod unverified_reads;
mod webhooks;
