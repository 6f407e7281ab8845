//! The unit of work: a request's reads, its queued writes and guards, and the
//! commit that applies them with the audit row.
//!
//! The first read travels in one batch with the checks the dispatcher queued; its
//! results come back only if every check passed. Writes are never run as they are
//! queued: they are committed in one batch with the audit row the `Ledger` writes,
//! whose place in the chain the database assigns inside that same transaction, so
//! a commit never races another for it and never retries. A route costs at most
//! two round trips, and a refused call changes nothing but the chain.
//!
//! A call may instead read and change one mailbox's own database (decision
//! 0040): its first read there travels at the same time as the checks on D1,
//! and is answered only once they pass; its writes commit in one batch there
//! with its entry in the mailbox's segment of the chain. A call changes one
//! database: D1, or one mailbox's.

use std::rc::Rc;

use futures_util::future::{join, join_all};

use crate::core::context::note::AuditNote;
use crate::core::context::ports::{AuditRecord, Ledger, PendingCheck};
use crate::core::events::{Event, Published, Told, Topic};
use crate::core::http::{Deferred, Response};
use crate::core::mailbox_storage::{MAIL_MOVED, MailboxStorage, never_created};
use crate::core::node::Node;
use crate::core::platform::Platform;
use crate::core::refusal::Refusal;
use crate::core::storage::{Counted, Database, QueryResult, Statement, StorageError, WRITE_GUARD_PREFIX};
use crate::core::timing::{Phase, Timings};

/// The constraints a failed write guard reports: `write_guard_<slot>`, one slot
/// per guard a handler registers, so the refusal answered is that guard's own.
/// How many mailboxes' databases one read may ask at once: each is a
/// subrequest, and an invocation has few (50 on the free plan). As many as an
/// export may name (`export_limits::MAILBOXES`, held to it where exports read).
pub const MAILBOXES_PER_READ: usize = 20;
/// How many guards one call may register (the `write_guards` table's columns).
const WRITE_GUARD_SLOTS: usize = 8;

/// What a failed commit batch leaves the call to do (`after_failure`).
enum AfterFailure {
    /// Record this refusal instead, on another attempt.
    TryAgainAs(Refusal),
    /// Answer this, recording nothing more.
    Stop(WorkError),
}

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
    /// Deliveries to queue on D1 after the answer, of what a change in a
    /// mailbox's own database told.
    deferred_webhooks: Vec<Statement>,
    /// Writes to run after those, each in the named mailbox's own database.
    deferred_in_mailboxes: Vec<(String, Statement)>,
    /// Writes on D1 to run after the answer only if the call's change in a
    /// mailbox's database committed (`defer_write_on_success`).
    deferred_on_success: Vec<Statement>,
    /// Whether the writes and audit row were already committed.
    committed: bool,
    /// Whether a change was queued after the call committed, which nothing
    /// would ever write: the handler's mistake, answered as one.
    queued_after_commit: bool,
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
    /// Each mailbox's own database.
    mailboxes: &'request dyn MailboxStorage,
    /// The mailbox whose database this call writes to, if it writes to one,
    /// with that database and the writes queued for it.
    mailbox_writes: Option<(String, Rc<dyn Database>, Vec<Statement>)>,
    /// Round trips to mailboxes' databases that did not travel beside one to D1.
    mailbox_round_trips: u32,
    /// Reads on D1 to run beside a commit in a mailbox's database, and what
    /// they answered (`read_beside_commit`).
    beside_commit: Vec<Statement>,
    /// Reads in mailboxes' own databases sent at the same time as the commit
    /// on D1, and what they answered (`read_in_mailboxes_beside_commit`).
    in_mailboxes_beside_commit: Vec<(Rc<dyn Database>, Vec<Statement>)>,
    in_mailboxes_beside_results: Vec<Result<Vec<QueryResult>, StorageError>>,
    beside_results: Vec<QueryResult>,
    /// The mailbox whose segment a commit appended an entry to.
    appended_segment: Option<String>,
    /// Whether a change queued a message for an agent elsewhere.
    remote_deliveries_queued: bool,
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
            deferred_webhooks: Vec::new(),
            deferred_in_mailboxes: Vec::new(),
            deferred_on_success: Vec::new(),
            committed: false,
            queued_after_commit: false,
            commit_attempts: 0,
            appended: false,
            inner_round_trips: 0,
            constraint_refusals: Vec::new(),
            repeat_constraints: Vec::new(),
            lost_race: false,
            write_results: Vec::new(),
            mailboxes: node.mailboxes,
            mailbox_writes: None,
            mailbox_round_trips: 0,
            beside_commit: Vec::new(),
            in_mailboxes_beside_commit: Vec::new(),
            in_mailboxes_beside_results: Vec::new(),
            beside_results: Vec::new(),
            appended_segment: None,
            remote_deliveries_queued: false,
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

    /// Whether a change was queued once the call had committed (and so lost).
    pub(super) fn queued_after_commit(&self) -> bool {
        self.queued_after_commit
    }

    /// Notes a change being queued: after the commit, it would be lost.
    fn queuing(&mut self) {
        self.queued_after_commit |= self.committed;
    }

    pub(super) fn failed_check(&self) -> Option<&Refusal> {
        self.failed_check.as_ref()
    }

    /// Whether anything is queued to be written.
    pub(super) fn has_writes(&self, outcome_ok: bool) -> bool {
        ((!self.writes.is_empty() || self.mailbox_writes.is_some()) && outcome_ok) || !self.attempt_writes.is_empty()
    }

    /// Runs `statements` in the same round trip as every pending check; answers
    /// their results if every check passed. What a credential check proves goes
    /// to `note`.
    pub(super) async fn read(
        &mut self,
        statements: Vec<Statement>,
        note: &mut AuditNote,
    ) -> Result<Vec<QueryResult>, WorkError> {
        if statements.is_empty() && self.pending_checks.is_empty() {
            return match &self.failed_check {
                Some(refusal) => Err(WorkError::Refused(refusal.clone())),
                None => Ok(Vec::new()),
            };
        }
        let (results, _) = self.read_with_checks(statements, Vec::new(), note).await?;
        Ok(results)
    }

    /// The one way a read meets the pending checks: `on_d1` in the same round
    /// trip as every pending check and, at the same time, each of
    /// `in_mailboxes` in its database; answers D1's results for `on_d1` and
    /// each mailbox's (or why it has none) only once every check passed.
    async fn read_with_checks(
        &mut self,
        on_d1: Vec<Statement>,
        in_mailboxes: Vec<(Rc<dyn Database>, Vec<Statement>)>,
        note: &mut AuditNote,
    ) -> Result<(Vec<QueryResult>, Vec<Result<Vec<QueryResult>, StorageError>>), WorkError> {
        let checks = std::mem::take(&mut self.pending_checks);
        let mut batch: Vec<Statement> = checks.iter().map(|check| check.statement.clone()).collect();
        batch.extend(on_d1);
        let asked = batch.len();
        let (on_d1, in_mailboxes) = self.execute_beside(batch, in_mailboxes).await;
        let mut results = on_d1.map_err(|error| WorkError::Internal(error.to_string()))?;
        if results.len() != asked {
            return Err(WorkError::Internal(format!("D1 answered {} statements of {asked}", results.len())));
        }
        let handler_results = results.split_off(checks.len());
        self.settle(checks, results, note)?;
        Ok((handler_results, in_mailboxes))
    }

    /// Runs each read's statements in its mailbox's own database, all at once
    /// and at the same time as every pending check on D1; answers each
    /// mailbox's results, in the order asked, only if every check passed. One
    /// round trip's time, however many mailboxes; at most
    /// `MAILBOXES_PER_READ`, each being a subrequest.
    pub(super) async fn read_in_mailboxes(
        &mut self,
        reads: Vec<(String, Vec<Statement>)>,
        note: &mut AuditNote,
    ) -> Result<Vec<Vec<QueryResult>>, WorkError> {
        if reads.len() > MAILBOXES_PER_READ {
            return Err(WorkError::Internal(format!(
                "a read asked {} mailboxes at once; at most {MAILBOXES_PER_READ}: page them",
                reads.len()
            )));
        }
        let reads =
            reads.into_iter().map(|(mailbox_id, statements)| (self.mailboxes.of(&mailbox_id), statements)).collect();
        let (_, read) = self.read_with_checks(Vec::new(), reads, note).await?;
        read.into_iter().map(|results| results.map_err(|error| WorkError::Internal(error.to_string()))).collect()
    }

    /// Runs `on_d1` in the same round trip as every pending check and, at the
    /// same time, each of `reads` in its mailbox's own database if that
    /// database was ever created (never creating one, since the checks have
    /// not passed yet); answers both only if every check passed: D1's
    /// results, and each mailbox's or why it has none. A database never
    /// created holds nothing: each of its statements answers no row. One
    /// round trip's time; at most `MAILBOXES_PER_READ` mailboxes.
    pub(super) async fn read_beside_mailboxes(
        &mut self,
        on_d1: Vec<Statement>,
        reads: Vec<(String, Vec<Statement>)>,
        note: &mut AuditNote,
    ) -> Result<(Vec<QueryResult>, Vec<Result<Vec<QueryResult>, StorageError>>), WorkError> {
        if reads.len() > MAILBOXES_PER_READ {
            return Err(WorkError::Internal(format!(
                "a read asked {} mailboxes at once; at most {MAILBOXES_PER_READ}",
                reads.len()
            )));
        }
        let asked: Vec<usize> = reads.iter().map(|(_, statements)| statements.len()).collect();
        let in_mailboxes =
            reads.into_iter().map(|(mailbox_id, statements)| (self.mailboxes.if_created(&mailbox_id), statements));
        let (on_d1, in_mailboxes) = self.read_with_checks(on_d1, in_mailboxes.collect(), note).await?;
        let in_mailboxes = in_mailboxes
            .into_iter()
            .zip(asked)
            .map(|(answer, asked)| match answer {
                Err(error) if never_created(&error) => Ok(vec![QueryResult::default(); asked]),
                answer => answer,
            })
            .collect();
        Ok((on_d1, in_mailboxes))
    }

    /// Settles `checks` on their `results`, what a credential check proves
    /// going to `note`: the first that fails is this call's refusal.
    fn settle(
        &mut self,
        checks: Vec<PendingCheck>,
        results: Vec<QueryResult>,
        note: &mut AuditNote,
    ) -> Result<(), WorkError> {
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
            None => Ok(()),
        }
    }

    /// `on_d1` on D1 (when there are any) and each of `in_mailboxes` in its
    /// mailbox's database, all at the same time: one round trip's time,
    /// counted once.
    async fn execute_beside(
        &mut self,
        on_d1: Vec<Statement>,
        in_mailboxes: Vec<(Rc<dyn Database>, Vec<Statement>)>,
    ) -> (Result<Vec<QueryResult>, StorageError>, Vec<Result<Vec<QueryResult>, StorageError>>) {
        if on_d1.is_empty() && !in_mailboxes.is_empty() {
            self.mailbox_round_trips += 1;
        }
        let _storage = self.timings.during(self.platform, Phase::Storage);
        let d1 = async { if on_d1.is_empty() { Ok(Vec::new()) } else { self.database.execute(on_d1).await } };
        // `Counted` holds each answer to the statements asked; the round trips
        // are this call's count above, one for all the mailboxes at once.
        let in_mailboxes = in_mailboxes
            .into_iter()
            .map(|(database, statements)| async move { Counted::new(&*database).execute(statements).await });
        join(d1, join_all(in_mailboxes)).await
    }

    /// One round trip, its time charged to storage.
    async fn execute(&self, batch: Vec<Statement>) -> Result<Vec<QueryResult>, StorageError> {
        let _storage = self.timings.during(self.platform, Phase::Storage);
        self.database.execute(batch).await
    }

    pub(super) fn write(&mut self, statement: Statement) {
        self.queuing();
        self.writes.push(statement);
    }

    /// Queues `statement` for mailbox `mailbox_id`'s own database; refused
    /// (as the handler's mistake) when the call already writes to another.
    pub(super) fn write_in_mailbox(&mut self, mailbox_id: &str, statement: Statement) -> Result<(), WorkError> {
        self.queuing();
        match &mut self.mailbox_writes {
            Some((target, _, writes)) if target == mailbox_id => writes.push(statement),
            Some((target, _, _)) => {
                return Err(WorkError::Internal(format!(
                    "a call changes one database: it writes to {target} and asked to write to {mailbox_id}"
                )));
            }
            None => {
                self.mailbox_writes = Some((mailbox_id.to_string(), self.mailboxes.of(mailbox_id), vec![statement]))
            }
        }
        Ok(())
    }

    /// `write_in_mailbox` for a change that must change exactly one row, or
    /// the whole commit is refused with `refusal`.
    pub(super) fn write_in_mailbox_changing_one_row(
        &mut self,
        mailbox_id: &str,
        statement: Statement,
        refusal: Refusal,
    ) -> Result<(), WorkError> {
        self.write_in_mailbox(mailbox_id, statement)?;
        let guard = self.guard_statement(Statement::new("changes() = 1"), refusal);
        self.write_in_mailbox(mailbox_id, guard)
    }

    pub(super) fn write_whatever_the_outcome(&mut self, statement: Statement) {
        self.queuing();
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
        self.queuing();
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

    pub(super) fn defer_write_in_mailbox(&mut self, mailbox_id: &str, statement: Statement) {
        self.deferred_in_mailboxes.push((mailbox_id.to_string(), statement));
    }

    pub(super) fn defer_write_on_success(&mut self, statement: Statement) {
        self.queuing();
        self.deferred_on_success.push(statement);
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
        self.remote_deliveries_queued |= inner.remote_deliveries_queued;
        if inner.seal_segment.is_some() {
            self.appended_segment.clone_from(&inner.seal_segment);
        }
        self.deferred.extend(inner.deferred.on_d1.iter().cloned());
        self.deferred_in_mailboxes.extend(inner.deferred.in_mailboxes.iter().cloned());
        self.deferred_webhooks.extend(inner.deferred.webhooks_on_d1.iter().cloned());
    }

    /// Round trips this call took, its re-entered calls' included.
    pub(super) fn round_trips(&self) -> u32 {
        self.database.round_trips() + self.mailbox_round_trips + self.inner_round_trips
    }

    /// Notes that the change queues a message for an agent elsewhere.
    pub(super) fn queue_remote_delivery(&mut self) {
        self.remote_deliveries_queued = true;
    }

    /// Whether a change queued a message for an agent elsewhere.
    pub(super) fn remote_deliveries_queued(&self) -> bool {
        self.remote_deliveries_queued
    }

    /// The mailbox whose segment of the chain a commit appended to, sealed
    /// after the answer.
    pub(super) fn appended_segment(&self) -> Option<String> {
        self.appended_segment.clone()
    }

    /// Commit batches this call sent.
    pub(super) fn commit_attempts(&self) -> u32 {
        self.commit_attempts
    }

    /// Whether this call appended an entry to the chain.
    pub(super) fn appended(&self) -> bool {
        self.appended
    }

    /// Whether the call's writes go to a mailbox's database.
    pub(super) fn writes_in_a_mailbox(&self) -> bool {
        self.mailbox_writes.is_some()
    }

    /// Queues `statements` to read on D1 at the same time as the commit in the
    /// mailbox's database: one round trip's time for both.
    pub(super) fn read_beside_commit(&mut self, statements: Vec<Statement>) {
        self.beside_commit.extend(statements);
    }

    /// Queues `reads` (each a mailbox and its statements, at most
    /// `MAILBOXES_PER_READ`) to run in those mailboxes' own databases at the
    /// same time as the commit on D1: one round trip's time for both.
    pub(super) fn read_in_mailboxes_beside_commit(
        &mut self,
        reads: Vec<(String, Vec<Statement>)>,
    ) -> Result<(), WorkError> {
        if reads.len() > MAILBOXES_PER_READ {
            return Err(WorkError::Internal(format!(
                "a read beside the commit asked {} mailboxes at once; at most {MAILBOXES_PER_READ}",
                reads.len()
            )));
        }
        let reads = reads.into_iter().map(|(mailbox_id, statements)| (self.mailboxes.of(&mailbox_id), statements));
        self.in_mailboxes_beside_commit.extend(reads);
        Ok(())
    }

    /// What the reads in mailboxes beside the commit answered, in the order asked.
    pub(super) fn take_in_mailboxes_beside_results(&mut self) -> Vec<Result<Vec<QueryResult>, StorageError>> {
        std::mem::take(&mut self.in_mailboxes_beside_results)
    }

    /// What the reads beside the commit answered.
    pub(super) fn take_beside_results(&mut self) -> Vec<QueryResult> {
        std::mem::take(&mut self.beside_results)
    }

    pub(super) fn take_write_results(&mut self) -> Vec<QueryResult> {
        std::mem::take(&mut self.write_results)
    }

    pub(super) fn take_deferred(&mut self) -> Deferred {
        Deferred {
            on_d1: std::mem::take(&mut self.deferred),
            in_mailboxes: std::mem::take(&mut self.deferred_in_mailboxes),
            webhooks_on_d1: std::mem::take(&mut self.deferred_webhooks),
        }
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
        if let Some((mailbox_id, database, writes)) = self.mailbox_writes.take() {
            if !self.writes.is_empty() {
                return Err(WorkError::Internal(format!(
                    "a call changes one database: it writes to D1 and to mailbox {mailbox_id}"
                )));
            }
            return self.commit_in_mailbox(outcome, record, &mailbox_id, database, writes).await;
        }
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
            // Reads in mailboxes beside travel with the first attempt only, as
            // reads beside a mailbox's commit do.
            let beside = std::mem::take(&mut self.in_mailboxes_beside_commit);
            let committed = if beside.is_empty() {
                self.execute(batch).await
            } else {
                let (committed, read) = self.execute_beside(batch, beside).await;
                self.in_mailboxes_beside_results = read;
                committed
            };
            match committed {
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
                Err(error) => match self.after_failure(error, outcome.is_ok()) {
                    AfterFailure::TryAgainAs(refusal) => outcome = Err(refusal),
                    AfterFailure::Stop(error) => return Err(error),
                },
            }
        }
        Err(WorkError::Refused(Refusal::internal()))
    }

    /// `commit`, for a call that changes mailbox `mailbox_id`: its writes,
    /// guards and entry (in the mailbox's segment of the chain) in one batch in
    /// the mailbox's database; then the writes that stand whatever the outcome,
    /// on D1, when there are any (unless the call is to be handled again, as on
    /// D1, where nothing of a lost race applies). Subscribed endpoints are
    /// queued on D1 after the answer (deferred): a change in a mailbox cannot
    /// share D1's transaction.
    async fn commit_in_mailbox(
        &mut self,
        outcome: Result<Response, Refusal>,
        record: impl Fn(&Result<Response, Refusal>) -> AuditRecord,
        mailbox_id: &str,
        database: Rc<dyn Database>,
        writes: Vec<Statement>,
    ) -> Result<Response, WorkError> {
        let mut outcome = outcome;
        let mut decided = Err(WorkError::Refused(Refusal::internal()));
        for _ in 0..2 {
            let mut batch = Vec::new();
            if outcome.is_ok() {
                batch.extend(writes.iter().cloned());
                batch.extend(self.final_guards.iter().cloned());
            }
            let entry = record(&outcome);
            batch.push(self.ledger.append_to_mailbox(mailbox_id, &entry));
            self.commit_attempts += 1;
            // Reads beside travel with the first attempt only: a refusal's
            // entry, committed on its own, answers nothing of them.
            let beside = std::mem::take(&mut self.beside_commit);
            let (read, mut committed) = self.execute_beside(beside, vec![(Rc::clone(&database), batch)]).await;
            let committed = committed.pop().unwrap_or_else(|| Err(StorageError::Backend("no answer".into())));
            match committed {
                Ok(mut results) => {
                    // The change committed whatever the read beside it did: a
                    // failed read answers nothing, and the call still reports
                    // the change (without what the read would have added).
                    match read {
                        Ok(read) => self.beside_results = read,
                        Err(error) => self.platform.log(&format!("a read beside the commit in {mailbox_id}: {error}")),
                    }
                    if outcome.is_ok() {
                        self.write_results = results.drain(..writes.len().min(results.len())).collect();
                        let told = self.told_of(&entry);
                        let followed = std::mem::take(&mut self.deferred_on_success);
                        self.deferred.extend(followed);
                        self.deferred_webhooks.extend(self.events.queue(&told, self.platform));
                        for selected in &self.told_by_rows {
                            let queued = self.events.queue_selected(&entry.action, entry.at, selected, self.platform);
                            self.deferred_webhooks.extend(queued);
                        }
                        for event in told {
                            self.events.push(event);
                        }
                    }
                    self.appended_segment = Some(mailbox_id.to_string());
                    self.also_told.clear();
                    decided = outcome.map_err(WorkError::Refused);
                    break;
                }
                Err(error) => match self.after_failure(error, outcome.is_ok()) {
                    AfterFailure::TryAgainAs(refusal) => outcome = Err(refusal),
                    AfterFailure::Stop(error) => {
                        decided = Err(error);
                        break;
                    }
                },
            }
        }
        if !self.lost_race && !self.attempt_writes.is_empty() {
            let standing = std::mem::take(&mut self.attempt_writes);
            self.execute(standing).await.map_err(|error| WorkError::Internal(error.to_string()))?;
        }
        decided
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

    /// What a commit batch that failed with `error` means for the call: a
    /// guard or a registered constraint turns a success into its refusal, to
    /// be recorded on another attempt; a lost race for a unique name is
    /// handled again (nothing applied, nothing recorded); anything else stops.
    fn after_failure(&mut self, error: StorageError, outcome_ok: bool) -> AfterFailure {
        match error {
            StorageError::Check(constraint) if constraint.starts_with(WRITE_GUARD_PREFIX) && outcome_ok => {
                let slot: usize = constraint[WRITE_GUARD_PREFIX.len()..].parse().unwrap_or(1);
                let refusal = self.guard_refusals.get(slot.saturating_sub(1)).cloned();
                AfterFailure::TryAgainAs(refusal.unwrap_or_else(Refusal::internal))
            }
            StorageError::Unique(name)
                if outcome_ok && self.repeat_constraints.iter().any(|constraint| *constraint == name) =>
            {
                self.lost_race = true;
                AfterFailure::Stop(WorkError::Refused(Refusal::internal()))
            }
            // Decided where the mail was a moment before it moved: nothing
            // applied, and the call, handled again, follows the mail.
            StorageError::Aborted(name) if outcome_ok && name == MAIL_MOVED => {
                self.lost_race = true;
                AfterFailure::Stop(WorkError::Refused(Refusal::internal()))
            }
            error if outcome_ok && self.refusal_for(&error).is_some() => {
                AfterFailure::TryAgainAs(self.refusal_for(&error).unwrap_or_else(Refusal::internal))
            }
            error => AfterFailure::Stop(WorkError::Internal(error.to_string())),
        }
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
