//! What the context asks of the layers above it: the checks that admit a request
//! (built by `authz` from the route's declared authority) and the chain that
//! records it (`audit`). Traits and plain data here, so the core runs both
//! without importing either.

use std::fmt;

use crate::core::platform::Platform;
use crate::core::refusal::Refusal;
use crate::core::storage::{Counted, LocalBoxFuture, QueryResult, Row, Statement, StorageError};

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
}

/// The chain's last entry, as a writer needs it: its `seq` and its hash.
pub type ChainHead = (i64, String);

/// Why a commit with an audit row did not apply.
#[derive(Clone, Debug, PartialEq)]
pub enum CommitError {
    /// Every attempt lost the race for the next `seq`; nothing was applied.
    Busy,
    /// The batch failed for another reason (a guard, a constraint); nothing was
    /// applied, and the head the attempt used is still the head.
    Storage(StorageError),
}

/// The audit chain, as a unit of work commits through it.
pub trait Ledger {
    /// The statement reading the chain's head, sent with a request's first read.
    fn head(&self) -> Statement;

    /// The head from the result of `head()`.
    fn head_from(&self, row: Option<&Row>) -> Result<ChainHead, StorageError>;

    /// Commits `statements` with `record` appended to the chain, in one batch:
    /// both apply or neither does. `head` is the head already read, if any; on a
    /// `Storage` error it holds the head the attempt used.
    fn commit<'a>(
        &'a self,
        database: &'a Counted<'a>,
        platform: &'a dyn Platform,
        head: &'a mut Option<ChainHead>,
        statements: Vec<Statement>,
        record: &'a AuditRecord,
    ) -> LocalBoxFuture<'a, Result<(), CommitError>>;
}
