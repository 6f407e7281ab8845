//! What the context asks of the layers above it: the checks that admit a request
//! (built by `authz` from the route's declared authority), the chain that
//! records it (`audit`), and the dispatcher a machine surface re-enters
//! (`Reentry`). Traits and plain data here, so the core runs all three without
//! importing any, and no surface imports the dispatcher that names it.

use std::fmt;

use crate::core::events::Topic;
use crate::core::http::{Request, Response, Surface};
use crate::core::node::Node;
use crate::core::refusal::Refusal;
use crate::core::storage::{LocalBoxFuture, QueryResult, Statement};

/// The dispatcher, handed to every `Context`: a surface (MCP, A2A) re-enters it
/// with a route's own request, so the call meets that route's credential check,
/// authority, audit entry and refusal. `decided` is a refusal the surface made
/// before the handler (a tool it withholds): the handler then never runs, and
/// everything else is the route's.
pub type Reentry =
    for<'call> fn(&'call Node<'call>, &'call Request, Surface, Option<Refusal>) -> LocalBoxFuture<'call, Response>;

/// A fact a request's first read must confirm before its handler's answer is
/// released: a live session, a live agent, a relation held.
pub trait Admission: fmt::Debug {
    /// Whether the result of the check's statement lets the request through.
    fn settle(&self, result: &QueryResult) -> Result<(), Refusal>;

    /// What the result proves about who is calling, for a check that proves it
    /// (an agent's credential); `None` for every other check.
    fn attribution(&self, _result: &QueryResult) -> Option<Attribution> {
        None
    }
}

/// What a credential check proved about whom a call is recorded under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attribution {
    /// The credential is the agent's, live or not: the call is the agent's,
    /// acting for this sponsor.
    ActingFor(String),
    /// The credential is this caller's own and acts for nobody (a reminder
    /// source's): the call is recorded under it, with no delegator.
    OnItsOwn,
    /// The credential proved nothing (an unknown agent, a wrong secret), so the
    /// call is attributed to nobody and not recorded: a forged credential cannot
    /// write an entry naming a real agent.
    Unproven,
}

/// A check with the statement that answers it.
#[derive(Debug)]
pub struct PendingCheck {
    pub statement: Statement,
    pub admission: Box<dyn Admission>,
}

/// What one audit row records, before it takes its place in the chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRecord {
    pub at: i64,
    pub actor: Option<String>,
    pub delegator: Option<String>,
    pub surface: Option<&'static str>,
    pub action: String,
    pub object: Option<String>,
    pub outcome: &'static str,
    /// Canonical JSON text of further facts.
    pub detail: Option<String>,
    /// Where the change is told to listeners once committed (`core::events`):
    /// not part of the entry the chain keeps.
    pub topic: Option<Topic>,
}

/// The audit chain, as a unit of work commits through it.
pub trait Ledger {
    /// The statement that appends `record` to the chain, in the same batch as the
    /// change it records: its place in the chain is assigned by the database
    /// inside that transaction, so concurrent writers never race for it.
    fn append(&self, record: &AuditRecord) -> Statement;

    /// The statement that appends `record` to the segment of the chain kept in
    /// mailbox `mailbox_id`'s own database, in the same batch as the change of
    /// that mailbox it records (decision 0040).
    fn append_to_mailbox(&self, mailbox_id: &str, record: &AuditRecord) -> Statement;

    /// The statement that counts `record`, a refused attempt made without a
    /// proven credential, in its window instead of appending it: such attempts
    /// are folded into the chain a window at a time, so nobody can make the node
    /// write an entry at will.
    fn count_attempt(&self, record: &AuditRecord) -> Statement;
}
