//! Background work's unit: what a scheduled job runs in, as a request runs in
//! its `Context`. It counts the job's round trips (held to a budget by
//! `tests/native/budget.rs`, as routes are), commits a change in one batch with
//! the audit entries that record it (appended through the same `Ledger` a
//! request's commit uses), and answers a typed `BackgroundError` rather than
//! text, so the schedule can say which part failed.

use std::cell::{Cell, RefCell};
use std::fmt;

use super::bindings::BlobError;
use super::context::ports::{AuditRecord, Ledger};
use super::context::told;
use super::delivery::Undelivered;
use super::events::{Event, Topic};
use super::node::Node;
use super::storage::{Counted, Database, QueryResult, Statement, StorageError};

/// Why a piece of background work stopped. The text is for the operator's log.
#[derive(Clone, Debug, PartialEq)]
pub enum BackgroundError {
    /// A round trip to the database failed.
    Storage(StorageError),
    /// A row or a stored document did not read as the job expected.
    Unreadable(String),
    /// The object store (R2) refused or failed.
    ObjectStore(String),
    /// A delivery the node makes (a webhook, a witness, an email) did not arrive.
    Outbound(Undelivered),
}

impl From<StorageError> for BackgroundError {
    fn from(error: StorageError) -> BackgroundError {
        match error {
            StorageError::Decode(what) => BackgroundError::Unreadable(what),
            other => BackgroundError::Storage(other),
        }
    }
}

impl From<BlobError> for BackgroundError {
    fn from(error: BlobError) -> BackgroundError {
        BackgroundError::ObjectStore(error.0)
    }
}

impl From<Undelivered> for BackgroundError {
    fn from(error: Undelivered) -> BackgroundError {
        BackgroundError::Outbound(error)
    }
}

impl fmt::Display for BackgroundError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackgroundError::Storage(error) => write!(formatter, "{error}"),
            BackgroundError::Unreadable(what) => write!(formatter, "could not read what was stored: {what}"),
            BackgroundError::ObjectStore(what) => write!(formatter, "the object store failed: {what}"),
            BackgroundError::Outbound(what) => write!(formatter, "an outbound request failed: {what}"),
        }
    }
}

/// One job's run: the node it works on, the chain it records in, and its
/// round trips so far.
pub struct Background<'node> {
    node: &'node Node<'node>,
    ledger: &'node dyn Ledger,
    database: Counted<'node>,
    /// Entries appended into a batch the job runs itself, told to listeners
    /// once that batch commits (`run`), forgotten if it fails.
    appended: RefCell<Vec<AuditRecord>>,
    /// Changes no entry records (a reminder falling due in a feed), told to
    /// listeners once the next batch commits, as `appended`.
    told: RefCell<Vec<Event>>,
    /// Round trips to databases other than D1 (`count_elsewhere`).
    elsewhere: Cell<u32>,
}

impl<'node> Background<'node> {
    pub fn new(node: &'node Node<'node>, ledger: &'node dyn Ledger) -> Background<'node> {
        Background {
            node,
            ledger,
            database: Counted::new(node.database),
            appended: RefCell::default(),
            told: RefCell::default(),
            elsewhere: Cell::new(0),
        }
    }

    pub fn node(&self) -> &'node Node<'node> {
        self.node
    }

    pub fn now_ms(&self) -> i64 {
        self.node.platform.now_ms()
    }

    /// Runs `statements` as one round trip, atomically. The entries `append`
    /// made for them are told to listeners once it commits.
    pub async fn run(&self, statements: Vec<Statement>) -> Result<Vec<QueryResult>, BackgroundError> {
        let appended = std::mem::take(&mut *self.appended.borrow_mut());
        let mut events: Vec<Event> = appended.iter().filter_map(told).collect();
        events.extend(std::mem::take(&mut *self.told.borrow_mut()));
        self.execute_telling(statements, events).await
    }

    /// Runs `statements` with the statements that queue `events` for
    /// subscribed endpoints, as one round trip; once it commits, tells
    /// listeners. Answers the results of `statements` alone.
    async fn execute_telling(
        &self,
        mut statements: Vec<Statement>,
        events: Vec<Event>,
    ) -> Result<Vec<QueryResult>, BackgroundError> {
        let changes = statements.len();
        statements.extend(self.node.events.queue(&events, self.node.platform));
        let mut results = self.database.execute(statements).await?;
        self.node.events.count_queued(results.get(changes..).unwrap_or_default());
        results.truncate(changes);
        for event in events {
            self.node.events.push(event);
        }
        Ok(results)
    }

    /// Tells listeners, once the next batch this job runs commits, of a change
    /// in it that no audit entry records.
    pub fn tell(&self, topic: Topic, kind: &str, object: &str) {
        let event = Event { topic, kind: kind.to_string(), object: Some(object.to_string()), at: self.now_ms() };
        self.told.borrow_mut().push(event);
    }

    /// Commits `statements` with one audit entry for each of `records`, in one
    /// round trip: the change and what records it land together or not at all.
    /// Answers the results of `statements` alone.
    pub async fn commit(
        &self,
        mut statements: Vec<Statement>,
        records: &[AuditRecord],
    ) -> Result<Vec<QueryResult>, BackgroundError> {
        let changes = statements.len();
        statements.extend(records.iter().map(|record| self.ledger.append(record)));
        let mut results = self.execute_telling(statements, records.iter().filter_map(told).collect()).await?;
        results.truncate(changes);
        Ok(results)
    }

    /// The statement that appends `record` to the chain, for a batch the job
    /// builds itself and sends with `run`.
    pub fn append(&self, record: &AuditRecord) -> Statement {
        self.appended.borrow_mut().push(record.clone());
        self.ledger.append(record)
    }

    /// The statement that appends `record` to the segment of the chain kept in
    /// mailbox `mailbox_id`'s own database, for a batch the job sends there
    /// with `run_in_mailbox`.
    pub fn append_to_mailbox(&self, mailbox_id: &str, record: &AuditRecord) -> Statement {
        self.appended.borrow_mut().push(record.clone());
        self.ledger.append_to_mailbox(mailbox_id, record)
    }

    /// Reads with `statements` in mailbox `mailbox_id`'s own database, one
    /// round trip.
    pub async fn read_in_mailbox(
        &self,
        mailbox_id: &str,
        statements: Vec<Statement>,
    ) -> Result<Vec<QueryResult>, BackgroundError> {
        self.count_elsewhere(1);
        Ok(self.node.mailboxes.of(mailbox_id).execute(statements).await?)
    }

    /// Reads with `on_d1` on D1 and, at the same time, with `in_mailbox` in
    /// mailbox `mailbox_id`'s own database if it was ever created: one round
    /// trip's time. Answers both; the mailbox's answer is its results or why
    /// it has none, for the caller to weigh against what D1 says.
    pub async fn read_beside_mailbox(
        &self,
        on_d1: Vec<Statement>,
        mailbox_id: &str,
        in_mailbox: Vec<Statement>,
    ) -> (Result<Vec<QueryResult>, BackgroundError>, Result<Vec<QueryResult>, StorageError>) {
        self.count_elsewhere(1);
        let database = self.node.mailboxes.if_created(mailbox_id);
        let (on_d1, in_mailbox) = futures_util::future::join(self.run(on_d1), database.execute(in_mailbox)).await;
        (on_d1, in_mailbox)
    }

    /// Runs `statements` as one round trip, atomically, in mailbox
    /// `mailbox_id`'s own database; once it commits, runs `then_on_d1` on D1
    /// with the statements queueing the events of the entries `append_to_mailbox`
    /// made for them (a change in a mailbox cannot share D1's transaction),
    /// and tells listeners. What follows on D1 is the change's consequence, not
    /// the change: should it fail, the change stands and the failure is
    /// logged. Answers the results of `statements`.
    pub async fn run_in_mailbox(
        &self,
        mailbox_id: &str,
        statements: Vec<Statement>,
        then_on_d1: Vec<Statement>,
    ) -> Result<Vec<QueryResult>, BackgroundError> {
        let appended = std::mem::take(&mut *self.appended.borrow_mut());
        let mut events: Vec<Event> = appended.iter().filter_map(told).collect();
        events.extend(std::mem::take(&mut *self.told.borrow_mut()));
        self.count_elsewhere(1);
        let results = self.node.mailboxes.of(mailbox_id).execute(statements).await?;
        let mut following = then_on_d1;
        let changes = following.len();
        following.extend(self.node.events.queue(&events, self.node.platform));
        if !following.is_empty() {
            match self.database.execute(following).await {
                Ok(results) => self.node.events.count_queued(results.get(changes..).unwrap_or_default()),
                Err(error) => self.node.platform.log(&format!("what follows a change in {mailbox_id} on D1: {error}")),
            }
        }
        for event in events {
            self.node.events.push(event);
        }
        Ok(results)
    }

    /// `commit`, in mailbox `mailbox_id`'s own database, its entries in the
    /// mailbox's segment of the chain, and `then_on_d1` after it
    /// (`run_in_mailbox`).
    pub async fn commit_in_mailbox(
        &self,
        mailbox_id: &str,
        mut statements: Vec<Statement>,
        records: &[AuditRecord],
        then_on_d1: Vec<Statement>,
    ) -> Result<Vec<QueryResult>, BackgroundError> {
        let changes = statements.len();
        statements.extend(records.iter().map(|record| self.append_to_mailbox(mailbox_id, record)));
        let mut results = self.run_in_mailbox(mailbox_id, statements, then_on_d1).await?;
        results.truncate(changes);
        Ok(results)
    }

    /// The job's database, counting round trips, for a part of the work that
    /// takes a `Database` (the sealer).
    pub fn database(&self) -> &dyn Database {
        &self.database
    }

    /// Counts `round_trips` the job made to another database (a mailbox's).
    pub fn count_elsewhere(&self, round_trips: u32) {
        self.elsewhere.set(self.elsewhere.get() + round_trips);
    }

    /// Round trips so far, to D1 and to any other database.
    pub fn round_trips(&self) -> u32 {
        self.database.round_trips() + self.elsewhere.get()
    }
}
