//! The unit of work: a request's reads, its queued writes and guards, and the
//! commit that applies them with the audit row.
//!
//! The first read travels in one batch with the checks the dispatcher queued; its
//! results come back only if every check passed. Writes are never run as they are
//! queued: they are committed in one batch with the audit row the `Ledger` writes,
//! whose place in the chain the database assigns inside that same transaction, so
//! a commit never races another for it and never retries. A route costs at most
//! two round trips, and a refused call changes nothing but the chain.

use crate::core::context::note::AuditNote;
use crate::core::context::ports::{AuditRecord, Ledger, PendingCheck};
use crate::core::events::{Event, Published, Told, Topic};
use crate::core::http::Response;
use crate::core::node::Node;
use crate::core::platform::Platform;
use crate::core::refusal::Refusal;
use crate::core::storage::{Counted, QueryResult, Statement, StorageError};
use crate::core::timing::{Phase, Timings};

/// The constraints a failed write guard reports: `write_guard_<slot>`, one slot
/// per guard a handler registers, so the refusal answered is that guard's own.
const WRITE_GUARD_PREFIX: &str = "write_guard_";
/// How many guards one call may register (the `write_guards` table's columns).
const WRITE_GUARD_SLOTS: usize = 8;

/// Why the unit of work could not go on.
pub(super) enum WorkError {
    /// A refusal to answer: a failed check, a guard, a constraint, a busy chain.
    Refused(Refusal),
    /// Storage failed; the text is for the operator's log, never the client.
    Internal(String),
}

/// Everything a request reads and writes, and how it is committed.
pub struct UnitOfWork<'request> {
    database: Counted<'request>,
    /// Where each round trip's time is charged (`Phase::Storage`), and the
    /// settling of the checks (`Phase::Authority`).
    timings: &'request Timings,
    platform: &'request dyn Platform,
    /// Where a committed change is told to listeners.
    events: &'request Published,
    /// Topics told of the change besides its entry's own (`tell_also`).
    also_told: Vec<Topic>,
    /// Events on topics only the committed rows name, queued for subscribed
    /// endpoints in the commit's batch (`queue_told_by`).
    told_by_rows: Vec<Told>,
    ledger: &'request dyn Ledger,
    pending_checks: Vec<PendingCheck>,
    failed_check: Option<Refusal>,
    writes: Vec<Statement>,
    attempt_writes: Vec<Statement>,
    /// Guards evaluated after every write, in the same transaction.
    final_guards: Vec<Statement>,
    /// The refusal of each guard, by slot (slot 1 is index 0).
    guard_refusals: Vec<Refusal>,
    /// Writes to run after the response, outside the transaction.
    deferred: Vec<Statement>,
    /// Whether the writes and audit row were already committed.
    committed: bool,
    /// Commit batches sent: one, or two when a guard or constraint turned a
    /// success into a refusal whose row is then committed on its own.
    commit_attempts: u32,
    /// Whether a commit appended an entry to the chain, which is then sealed
    /// after the answer.
    appended: bool,
    /// Round trips taken by calls this one re-entered the dispatcher with.
    inner_round_trips: u32,
    constraint_refusals: Vec<(&'static str, Refusal)>,
    /// UNIQUE constraints whose breaking means a concurrent call just stored
    /// what this one was about to: the call is handled again (`lost_race`).
    repeat_constraints: Vec<&'static str>,
    /// Whether the commit broke one of `repeat_constraints`, applying nothing.
    lost_race: bool,
    /// What the handler's own writes answered in the commit that applied them.
    write_results: Vec<QueryResult>,
}

impl<'request> UnitOfWork<'request> {
    pub(super) fn new(
        node: &'request Node<'request>,
        ledger: &'request dyn Ledger,
        pending_checks: Vec<PendingCheck>,
    ) -> UnitOfWork<'request> {
        UnitOfWork {
            database: Counted::new(node.database),
            timings: node.timings,
            platform: node.platform,
            events: node.events,
            also_told: Vec::new(),
            told_by_rows: Vec::new(),
            ledger,
            pending_checks,
            failed_check: None,
            writes: Vec::new(),
            attempt_writes: Vec::new(),
            final_guards: Vec::new(),
            guard_refusals: Vec::new(),
            deferred: Vec::new(),
            committed: false,
            commit_attempts: 0,
            appended: false,
            inner_round_trips: 0,
            constraint_refusals: Vec::new(),
            repeat_constraints: Vec::new(),
            lost_race: false,
            write_results: Vec::new(),
        }
    }

    /// Whether a read is still owed before an answer can be released: checks
    /// not yet run.
    pub(super) fn owes_a_read(&self) -> bool {
        !self.pending_checks.is_empty()
    }

    pub(super) fn committed(&self) -> bool {
        self.committed
    }

    pub(super) fn failed_check(&self) -> Option<&Refusal> {
        self.failed_check.as_ref()
    }

    /// Whether anything is queued to be written.
    pub(super) fn has_writes(&self, outcome_ok: bool) -> bool {
        (!self.writes.is_empty() && outcome_ok) || !self.attempt_writes.is_empty()
    }

    /// Runs `statements` in the same round trip as every pending check; answers
    /// their results if every check passed. What a credential check proves goes
    /// to `note`.
    pub(super) async fn read(
        &mut self,
        statements: Vec<Statement>,
        note: &mut AuditNote,
    ) -> Result<Vec<QueryResult>, WorkError> {
        let checks = std::mem::take(&mut self.pending_checks);
        let mut batch: Vec<Statement> = checks.iter().map(|check| check.statement.clone()).collect();
        let handler_statements = statements.len();
        batch.extend(statements);
        if batch.is_empty() {
            return match &self.failed_check {
                Some(refusal) => Err(WorkError::Refused(refusal.clone())),
                None => Ok(Vec::new()),
            };
        }
        let mut results = self.execute(batch).await.map_err(|error| WorkError::Internal(error.to_string()))?;
        let handler_results = results.split_off(results.len() - handler_statements);
        let _settling = self.timings.during(self.platform, Phase::Authority);
        for (pending, result) in checks.into_iter().zip(results) {
            if let Some(attribution) = pending.admission.attribution(&result) {
                note.prove(attribution);
            }
            if self.failed_check.is_some() {
                continue;
            }
            if let Err(refusal) = pending.admission.settle(&result) {
                self.failed_check = Some(refusal);
            }
        }
        match &self.failed_check {
            Some(refusal) => Err(WorkError::Refused(refusal.clone())),
            None => Ok(handler_results),
        }
    }

    /// One round trip, its time charged to storage.
    async fn execute(&self, batch: Vec<Statement>) -> Result<Vec<QueryResult>, StorageError> {
        let _storage = self.timings.during(self.platform, Phase::Storage);
        self.database.execute(batch).await
    }

    pub(super) fn write(&mut self, statement: Statement) {
        self.writes.push(statement);
    }

    pub(super) fn write_whatever_the_outcome(&mut self, statement: Statement) {
        self.attempt_writes.push(statement);
    }

    /// A statement that fails its slot's CHECK when `condition` is false.
    fn guard_statement(&mut self, condition: Statement, refusal: Refusal) -> Statement {
        self.guard_refusals.push(refusal);
        let slot = self.guard_refusals.len().min(WRITE_GUARD_SLOTS);
        debug_assert!(
            self.guard_refusals.len() <= WRITE_GUARD_SLOTS,
            "a call registered more guards than there are slots"
        );
        Statement::write_guard(slot, condition)
    }

    pub(super) fn guard(&mut self, condition: Statement, refusal: Refusal) {
        let statement = self.guard_statement(condition, refusal);
        self.final_guards.push(statement);
    }

    pub(super) fn write_changing_one_row(&mut self, statement: Statement, refusal: Refusal) {
        self.writes.push(statement);
        let guard = self.guard_statement(Statement::new("changes() = 1"), refusal);
        self.writes.push(guard);
    }

    pub(super) fn queue_told_by(&mut self, selected: Told) {
        self.told_by_rows.push(selected);
    }

    pub(super) fn tell_also(&mut self, topic: Topic) {
        if !self.also_told.contains(&topic) {
            self.also_told.push(topic);
        }
    }

    pub(super) fn defer_write(&mut self, statement: Statement) {
        self.deferred.push(statement);
    }

    pub(super) fn on_constraint_violation(&mut self, constraint: &'static str, refusal: Refusal) {
        self.constraint_refusals.push((constraint, refusal));
    }

    pub(super) fn on_constraint_violation_handle_again(&mut self, constraint: &'static str) {
        self.repeat_constraints.push(constraint);
    }

    /// Whether the commit lost a race for a unique name and applied nothing:
    /// the call is to be handled again, and will read what the winner stored.
    pub(super) fn lost_race(&self) -> bool {
        self.lost_race
    }

    /// Drops the checks still pending: a call re-entering the dispatcher hands
    /// them to the inner call, which reads the same credential and makes them in
    /// its own first round trip.
    pub(super) fn hand_over_checks(&mut self) {
        self.pending_checks.clear();
    }

    /// Counts a re-entered call's round trips, commits and deferred writes as
    /// this one's.
    pub(super) fn absorb(&mut self, inner: &Response) {
        self.inner_round_trips += inner.round_trips;
        self.commit_attempts += inner.commit_attempts;
        self.appended |= inner.seal_chain;
        self.deferred.extend(inner.deferred.iter().cloned());
    }

    /// Counts `round_trips` this call made to another database (a mailbox's).
    pub(super) fn count_elsewhere(&mut self, round_trips: u32) {
        self.inner_round_trips += round_trips;
    }

    /// Round trips this call took, its re-entered calls' included.
    pub(super) fn round_trips(&self) -> u32 {
        self.database.round_trips() + self.inner_round_trips
    }

    /// Commit batches this call sent.
    pub(super) fn commit_attempts(&self) -> u32 {
        self.commit_attempts
    }

    /// Whether this call appended an entry to the chain.
    pub(super) fn appended(&self) -> bool {
        self.appended
    }

    pub(super) fn take_write_results(&mut self) -> Vec<QueryResult> {
        std::mem::take(&mut self.write_results)
    }

    pub(super) fn take_deferred(&mut self) -> Vec<Statement> {
        std::mem::take(&mut self.deferred)
    }

    /// Commits the queued writes (the attempt's own, and the rest only on
    /// success) with the audit row `record` gives for the outcome, in one batch.
    /// A guard or constraint turns a success into a refusal, whose row is then
    /// committed on its own: at most one such turn, so at most two batches.
    /// Handlers ask the same question in their first read, so the second batch
    /// is sent only when a concurrent request changed the answer in between.
    pub(super) async fn commit(
        &mut self,
        outcome: Result<Response, Refusal>,
        record: impl Fn(&Result<Response, Refusal>) -> AuditRecord,
    ) -> Result<Response, WorkError> {
        self.committed = true;
        let mut outcome = outcome;
        for _ in 0..2 {
            let mut batch = self.attempt_writes.clone();
            let own_writes = self.attempt_writes.len()..self.attempt_writes.len() + self.writes.len();
            if outcome.is_ok() {
                batch.extend(self.writes.iter().cloned());
                batch.extend(self.final_guards.iter().cloned());
            }
            let entry = record(&outcome);
            batch.push(self.ledger.append(&entry));
            // What a success tells, queued for subscribed endpoints in the
            // same batch: the change and its deliveries land together.
            let told = if outcome.is_ok() { self.told_of(&entry) } else { Vec::new() };
            let queued_from = batch.len();
            batch.extend(self.events.queue(&told, self.platform));
            if outcome.is_ok() {
                for selected in &self.told_by_rows {
                    batch.extend(self.events.queue_selected(&entry.action, entry.at, selected, self.platform));
                }
            }
            self.commit_attempts += 1;
            match self.execute(batch).await {
                Ok(mut results) => {
                    self.events.count_queued(results.get(queued_from..).unwrap_or_default());
                    if outcome.is_ok() && results.len() >= own_writes.end {
                        self.write_results = results.drain(own_writes).collect();
                    }
                    self.appended = true;
                    self.also_told.clear();
                    for event in told {
                        self.events.push(event);
                    }
                    return outcome.map_err(WorkError::Refused);
                }
                Err(StorageError::Check(constraint))
                    if constraint.starts_with(WRITE_GUARD_PREFIX) && outcome.is_ok() =>
                {
                    let slot: usize = constraint[WRITE_GUARD_PREFIX.len()..].parse().unwrap_or(1);
                    let refusal = self.guard_refusals.get(slot.saturating_sub(1)).cloned();
                    outcome = Err(refusal.unwrap_or_else(Refusal::internal));
                }
                // Nothing applied and nothing recorded: the call is handled
                // again from its first read, as the repeat it has become.
                Err(StorageError::Unique(name))
                    if outcome.is_ok() && self.repeat_constraints.iter().any(|constraint| *constraint == name) =>
                {
                    self.lost_race = true;
                    return Err(WorkError::Refused(Refusal::internal()));
                }
                Err(error) if outcome.is_ok() && self.refusal_for(&error).is_some() => {
                    outcome = Err(self.refusal_for(&error).unwrap_or_else(Refusal::internal));
                }
                Err(error) => return Err(WorkError::Internal(error.to_string())),
            }
        }
        Err(WorkError::Refused(Refusal::internal()))
    }

    /// Commits a refused attempt made without a proven credential: the writes
    /// that stand whatever the outcome (counting the failure) and the attempt
    /// counted in its window, in one batch, with no entry of its own in the chain.
    pub(super) async fn commit_attempt(
        &mut self,
        refusal: Refusal,
        record: &AuditRecord,
    ) -> Result<Response, WorkError> {
        self.committed = true;
        let mut batch = std::mem::take(&mut self.attempt_writes);
        batch.push(self.ledger.count_attempt(record));
        self.commit_attempts += 1;
        self.execute(batch).await.map_err(|error| WorkError::Internal(error.to_string()))?;
        Err(WorkError::Refused(refusal))
    }

    /// The events a successful commit of `entry` tells: on each topic
    /// `tell_also` named, then on the entry's own.
    fn told_of(&self, entry: &AuditRecord) -> Vec<Event> {
        let also = self.also_told.iter().map(|topic| Event {
            topic: topic.clone(),
            kind: entry.action.clone(),
            object: entry.object.clone(),
            at: entry.at,
        });
        also.chain(told(entry)).collect()
    }

    /// The refusal a handler registered for this constraint failure, if any.
    fn refusal_for(&self, error: &StorageError) -> Option<Refusal> {
        let name = match error {
            StorageError::Unique(name) | StorageError::Aborted(name) => name,
            _ => return None,
        };
        self.constraint_refusals.iter().find(|(constraint, _)| constraint == name).map(|(_, refusal)| refusal.clone())
    }
}

/// The event an entry tells once committed: only a change that succeeded, and
/// only where its record says it is told.
pub(crate) fn told(entry: &AuditRecord) -> Option<Event> {
    let topic = entry.topic.clone().filter(|_| entry.outcome == "ok")?;
    Some(Event { topic, kind: entry.action.clone(), object: entry.object.clone(), at: entry.at })
}
