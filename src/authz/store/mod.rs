//! Authz's store: every statement authority asks of the database, by concern.
//! `tuples` (the relation table, where delegation lives), `access` (whether a
//! claimed caller is live, an agent's ceiling, who stands on an actor's side)
//! and `throttle` (the failure windows). Authority sits beneath the domains, so
//! `access` reads their tables (sessions, people, agents, connections, sources)
//! itself: it cannot call up to them.

pub(super) mod access;
pub(super) mod throttle;
pub(super) mod tuples;
