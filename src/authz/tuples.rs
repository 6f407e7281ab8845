//! The relationship tuple table's public face: every question about who holds
//! what, as a statement any domain batches.
//!
//! The statements are built in authz's store (`store::tuples`), the only file
//! that names the table, and re-exported here: single-object checks, listings
//! and the guards that keep the node administrable. Keeping them in one place
//! is what makes delegation enforceable: the sponsor's half of the
//! intersection is stated once, in `holder_condition`, and every predicate gets
//! it. A test fails if any other file names the table.

pub use super::holder::{Holder, Losing};
pub use super::store::tuples::{
    a_live_administrator_remains, administrators, an_administrator_would_remain, any_administrator_ever,
    every_mailbox_with_held, find, forget_held_by, grant, granted_to_agents, holds, holds_in_sql, is_administrator,
    list, mailbox_ids_where, mailbox_relation_sets, mailboxes_where, relations_of_person_in, relations_on, revoke,
    sponsors_or_administers, sponsors_or_administers_in_sql,
};

/// How a function of the tuple store relates to delegation: whether it asks
/// what a principal holds (and so must intersect an agent's tuples with its
/// sponsor's) or is exempt, with the reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Predicate {
    /// Asks what a principal holds; built on `holder_condition`, where delegation lives.
    Intersected,
    /// Does not ask what a principal holds, for the stated reason.
    Exempt(&'static str),
}

/// Every function of the tuple store (`store/tuples.rs`), classified. A test fails when one is missing
/// here, or is marked intersected without being built on `holder_condition`.
pub const PREDICATES: &[(&str, Predicate)] = &[
    ("holds", Predicate::Intersected),
    ("holds_in_sql", Predicate::Intersected),
    ("relations_on", Predicate::Intersected),
    ("mailboxes_where", Predicate::Intersected),
    ("mailbox_ids_where", Predicate::Intersected),
    ("every_mailbox_with_held", Predicate::Intersected),
    ("mailbox_relation_sets", Predicate::Intersected),
    (
        "granted_to_agents",
        Predicate::Exempt(
            "an administrator's view of what was granted to agents, not a question of what an agent may do",
        ),
    ),
    ("is_administrator", Predicate::Intersected),
    ("sponsors_or_administers", Predicate::Intersected),
    ("sponsors_or_administers_in_sql", Predicate::Intersected),
    (
        "administrators",
        Predicate::Exempt(
            "lists the people who administer the node; only people hold org.admin, so there is no sponsor to intersect",
        ),
    ),
    (
        "a_live_administrator_remains",
        Predicate::Exempt(
            "asks whether any enabled person still administers, for the guard that keeps the node manageable",
        ),
    ),
    (
        "an_administrator_would_remain",
        Predicate::Exempt(
            "asks, before a change, whether any enabled person would still administer without what it takes away",
        ),
    ),
    (
        "agent_condition",
        Predicate::Exempt("the agent half of holder_condition, which every intersected predicate goes through"),
    ),
    (
        "person_condition",
        Predicate::Exempt("the person half of holder_condition, which every intersected predicate goes through"),
    ),
    (
        "administrator_remains",
        Predicate::Exempt("the SQL both administrator questions share; it asks about the organisation, not a caller"),
    ),
    (
        "any_administrator_ever",
        Predicate::Exempt("closes setup for ever: asks whether any org.admin tuple exists, not what a caller holds"),
    ),
    (
        "list",
        Predicate::Exempt("an administrator's view of the table itself, not a question of the caller's authority"),
    ),
    (
        "find",
        Predicate::Exempt(
            "locates one tuple for an administrator to grant or revoke; the caller's authority is checked by the route",
        ),
    ),
    (
        "relations_of_person_in",
        Predicate::Exempt(
            "asks what a butler's sponsor holds, and a sponsor is a person (checked when the butler is created): a person's tuples are theirs, with no sponsor above them to intersect",
        ),
    ),
    ("grant", Predicate::Exempt("writes a tuple; it answers no question")),
    ("revoke", Predicate::Exempt("removes a tuple; it answers no question")),
    ("forget_held_by", Predicate::Exempt("removes the tuples of subjects being removed; it answers no question")),
];
