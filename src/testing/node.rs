//! `TestNode`: a whole node on the kit's bindings, driven through the real
//! dispatcher as the Worker drives it, one request at a time or several at once
//! (`send_together`, whose requests read before any of them writes), with the
//! scheduled jobs and the email handler a test runs by hand.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::rc::Rc;

use mailroom_contract::api::AuditCheckpoint;

use crate::audit;
use crate::core::events::Published;
use crate::core::http::{Request, Response, Surface};
use crate::core::mailbox_storage::MailboxStorage;
use crate::core::node::{AuditKey, Config, Installation, Node};
use crate::core::storage::{Database, LocalBoxFuture, QueryResult, Statement, StorageError};
use crate::core::timing::Timings;
use crate::dispatch::{dispatch, route_for};
use crate::mail::{self, Delivery, Rejection};

use super::bindings::{MemoryBlobs, RecordingMailer, RecordingWebhooks};
use super::clock::run;
use super::configuration::{
    TEST_AUDIT_KEY, TEST_ORIGIN, TEST_PASSWORD_ITERATIONS, TEST_REMINDER_SENDER, TEST_SETUP_TOKEN,
};
use super::platform::FixedPlatform;
use super::sqlite::{SqliteDatabase, SqliteMailboxes};

/// A whole node on SQLite, driven through the real dispatcher: an installation
/// like the Worker's, on SQLite, memory and a fixed clock.
pub type TestNode =
    Installation<SqliteDatabase, MemoryBlobs, RecordingMailer, RecordingWebhooks, FixedPlatform, SqliteMailboxes>;

impl Default for TestNode {
    fn default() -> Self {
        TestNode::new()
    }
}

impl TestNode {
    pub fn new() -> TestNode {
        let platform = FixedPlatform::at(1_795_000_000_000);
        Installation {
            database: SqliteDatabase::migrated(),
            mailboxes: SqliteMailboxes::default(),
            blobs: MemoryBlobs::default(),
            mailer: RecordingMailer::default(),
            webhooks: RecordingWebhooks::on(platform.clock()),
            platform,
            config: Config {
                session_key: b"native-test-session-key-0123456789".to_vec(),
                audit_key: AuditKey::new(TEST_AUDIT_KEY.to_vec()),
                previous_audit_keys: Vec::new(),
                setup_token: Some(TEST_SETUP_TOKEN.to_string()),
                // Real PBKDF2, fewer rounds: hundreds of sign-ins stay fast. The
                // production count is `Config::new`'s, checked by its own test.
                password_iterations: TEST_PASSWORD_ITERATIONS,
                maximum_message_bytes: 64 * 1024,
                database_limit_bytes: crate::core::node::DEFAULT_DATABASE_LIMIT_BYTES,
                mailbox_limit_bytes: crate::core::node::DEFAULT_MAILBOX_LIMIT_BYTES,
                new_mailboxes_in_own_databases: true,
                move_mail_into_own_databases: false,
                move_round_trips_per_run: crate::core::node::DEFAULT_MOVE_ROUND_TRIPS_PER_RUN,
                public_origin: Some(TEST_ORIGIN.to_string()),
                reminder_sender: Some(TEST_REMINDER_SENDER.to_string()),
                agent_network: true,
                server_timing: false,
            },
            timings: Timings::off(),
            events: Published::relaying(&crate::webhooks::RELAY),
        }
    }

    /// Sends a request through the dispatcher, as REST.
    pub fn send(&self, request: Request) -> Response {
        self.send_from(request, Surface::Rest)
    }

    /// Sends a request from `surface`. The clock moves on a millisecond first, as
    /// it would between two real requests, so creation order is observable.
    pub fn send_from(&self, request: Request, surface: Surface) -> Response {
        let response = self.send_without_sealing_from(request, surface);
        self.seal_after(&response);
        response
    }

    /// What follows an answer the test dispatched itself (to watch storage
    /// while it was handled): everything `send` does after the dispatcher.
    pub fn finish_answer(&self, request: &Request, response: &Response) {
        self.answered(request, response);
        self.deliver_queued_webhooks();
        self.seal_after(response);
    }

    /// Seals what `response` appended: the chain, and a mailbox's segment.
    fn seal_after(&self, response: &Response) {
        if response.seal_chain {
            self.seal();
        }
        if let Some(mailbox_id) = &response.seal_segment {
            self.seal_segment(mailbox_id);
        }
    }

    /// Sends a request as REST and leaves the audit entries it appended waiting
    /// for their seal, as they are for a moment after a real answer.
    pub fn send_without_sealing(&self, request: Request) -> Response {
        self.send_without_sealing_from(request, Surface::Rest)
    }

    fn send_without_sealing_from(&self, request: Request, surface: Surface) -> Response {
        self.platform.advance(1);
        let node = self.node();
        let response = self.run(dispatch(&node, &request, surface));
        self.answered(&request, &response);
        self.deliver_queued_webhooks();
        response
    }

    /// Posts the webhook deliveries the commits since the last call queued,
    /// as the Worker does after an answer.
    pub fn deliver_queued_webhooks(&self) {
        if self.events.take_queued() > 0 {
            self.deliver_webhooks();
        }
    }

    /// Runs the webhook deliveries due now, as the per-minute schedule does.
    pub fn deliver_webhooks(&self) -> crate::webhooks::WebhookReport {
        let node = self.node();
        let chain = crate::audit::AuditChain::new(node.config, node.platform);
        let work = crate::core::background::Background::new(&node, &chain);
        self.run(crate::webhooks::deliver_due(&work, crate::a2a::push_body)).expect("the webhook deliveries run")
    }

    /// Sends `requests` together, as REST, the way requests that arrive at
    /// once meet a database: every one's first round trip (its reads, with
    /// its checks, on D1 and beside it in a mailbox's own database) runs
    /// before any one's second (its commit, on D1 or in a mailbox's
    /// database), so each decides on what it read before the others wrote.
    /// The answers, in order, with the audit chain sealed after.
    pub fn send_together(&self, requests: Vec<Request>) -> Vec<Response> {
        self.platform.advance(1);
        let gate = Rc::new(FirstReadsGate { waiting: Cell::new(requests.len()), wakers: RefCell::default() });
        let databases: Vec<GatedDatabase<'_>> = requests
            .iter()
            .map(|_| GatedDatabase { database: &self.database, gate: &gate, batches: Cell::new(0) })
            .collect();
        let mailboxes: Vec<GatedMailboxes<'_>> = requests
            .iter()
            .map(|_| GatedMailboxes { mailboxes: &self.mailboxes, gate: Rc::clone(&gate), asked: Rc::default() })
            .collect();
        let nodes: Vec<Node<'_>> = databases
            .iter()
            .zip(&mailboxes)
            .map(|(database, mailboxes)| Node {
                database,
                mailboxes,
                blobs: &self.blobs,
                mailer: &self.mailer,
                webhooks: &self.webhooks,
                platform: &self.platform,
                config: &self.config,
                timings: &self.timings,
                events: &self.events,
            })
            .collect();
        let answers = requests.iter().zip(&nodes).map(|(request, node)| dispatch(node, request, Surface::Rest));
        let responses = self.run(futures_util::future::join_all(answers));
        for (request, response) in requests.iter().zip(&responses) {
            self.answered(request, response);
        }
        self.deliver_queued_webhooks();
        if responses.iter().any(|response| response.seal_chain) {
            self.seal();
        }
        responses
    }

    /// What follows every answer: its status held to the contract, and its
    /// deferred writes run.
    fn answered(&self, request: &Request, response: &Response) {
        // As the end-to-end harness holds every answer to the OpenAPI document,
        // every answer a native test receives must be a status the contract lists
        // for its route: a refusal the declaration misses fails the test that met it.
        if let Some(route) = route_for(&request.method, &request.path) {
            let answers = mailroom_contract::registry().answers(route);
            let listed: Vec<u16> = answers.iter().map(|answer| answer.status).collect();
            assert!(
                listed.contains(&response.status),
                "{} {} answered {}, which the contract does not list for {:?} (it lists {listed:?}): {}",
                request.method,
                request.path,
                response.status,
                route,
                String::from_utf8_lossy(&response.body),
            );
        }
        // No refusal, and nothing the MCP server answers, shows a route's path
        // template (`:mailboxId`): it names a parameter, or the value it was
        // given, never the placeholder a client would copy back (decision
        // 0030). The capability vocabulary lists REST paths as documents do.
        let judged = response.status >= 400 || request.path == "/mcp";
        if judged
            && response.header("content-type").is_some_and(|content_type| content_type.starts_with("application/json"))
        {
            let answer = String::from_utf8_lossy(&response.body);
            for template in mailroom_contract::PathParameter::NAMES.iter().map(|name| format!(":{name}")) {
                let shown = answer.match_indices(&template).any(|(at, _)| {
                    !answer[at + template.len()..].starts_with(|next: char| next.is_ascii_alphanumeric() || next == '_')
                });
                assert!(!shown, "{} {} answered with the template {template}: {answer}", request.method, request.path);
            }
        }
        // What the adapter hands to `waitUntil` runs here, after the response.
        let errors = self.run(self.node().write_deferred(response.deferred.clone()));
        assert!(errors.is_empty(), "deferred writes apply: {errors:?}");
    }

    /// Runs `future` to its end on the node's virtual clock.
    pub fn run<F: std::future::Future>(&self, future: F) -> F::Output {
        run(&self.platform.clock(), future)
    }

    /// Seals the audit chain's waiting entries, as the adapter does after an
    /// answer that appended to it.
    /// Seals mailbox `mailbox_id`'s segment of the chain, as the Worker does
    /// after an answer that appended to it.
    pub fn seal_segment(&self, mailbox_id: &str) -> audit::seal::Sealing {
        let database = crate::core::mailbox_storage::MailboxStorage::of(&self.mailboxes, mailbox_id);
        self.run(audit::seal::seal_chain(&*database, &self.config, audit::chain::ChainOf::Mailbox(mailbox_id)))
            .expect("the segment seals")
    }

    pub fn seal(&self) -> audit::seal::Sealing {
        self.run(audit::seal(&self.database, &self.config)).expect("the chain seals")
    }

    /// Runs the scheduled upkeep, as the cron trigger does.
    pub fn maintain(&self) -> Option<AuditCheckpoint> {
        self.platform.advance(1);
        self.run(crate::schedule::upkeep(&self.node())).expect("the upkeep runs")
    }

    /// Runs the reminders' cron trigger, as wrangler's scheduled event does.
    pub fn run_reminders(&self) -> crate::reminders::NotifyReport {
        let node = self.node();
        let chain = crate::audit::AuditChain::new(node.config, node.platform);
        let work = crate::core::background::Background::new(&node, &chain);
        self.run(crate::reminders::notify_due(&work)).expect("the reminders run")
    }

    /// Runs the per-minute cron trigger as wrangler's scheduled event does:
    /// reminders delivered, agent messages that expired or failed ended, a
    /// slice of the exports copied; every job must finish.
    pub fn run_every_minute(&self) {
        let failures = self.run_every_minute_answering_failures();
        assert!(failures.is_empty(), "the per-minute run failed: {failures:?}");
    }

    /// Runs the per-minute cron trigger and answers the jobs that failed (which
    /// the adapter logs, and the next run resumes).
    pub fn run_every_minute_answering_failures(&self) -> Vec<crate::schedule::JobFailure> {
        let every_minute =
            crate::schedule::cron_of(crate::schedule::Job::DeliverReminders).expect("a cron runs reminders");
        self.run(crate::schedule::on_schedule(&self.node(), every_minute)).err().unwrap_or_default()
    }

    /// Delivers a raw message to `to` through the same path as the email handler.
    pub fn deliver(&self, from: &str, to: &str, raw: &[u8]) -> Result<Delivery, Rejection> {
        self.platform.advance(1);
        let node = self.node();
        let received = self.run(mail::receive(&node, from, to, raw));
        // A stored message and a re-delivery each leave an audit entry to seal,
        // in the chain and in the segments of mailboxes whose mail moved.
        if let Ok(received) = &received {
            self.seal();
            for mailbox_id in &received.segments {
                self.seal_segment(mailbox_id);
            }
        }
        self.deliver_queued_webhooks();
        received.map(|received| received.delivery)
    }
}

/// Holds every request of `TestNode::send_together` after its first round
/// trip until all of them have made theirs.
struct FirstReadsGate {
    /// Requests whose first round trip has still to run.
    waiting: Cell<usize>,
    wakers: RefCell<Vec<std::task::Waker>>,
}

/// One request's view of the shared database: its first batch runs at once,
/// every later one waits at the gate.
struct GatedDatabase<'a> {
    database: &'a SqliteDatabase,
    gate: &'a FirstReadsGate,
    batches: Cell<u32>,
}

impl Database for GatedDatabase<'_> {
    fn execute(&self, statements: Vec<Statement>) -> LocalBoxFuture<'_, Result<Vec<QueryResult>, StorageError>> {
        Box::pin(async move {
            let first = self.batches.get() == 0;
            self.batches.set(self.batches.get() + 1);
            if first {
                let results = self.database.execute(statements).await;
                self.gate.waiting.set(self.gate.waiting.get() - 1);
                if self.gate.waiting.get() == 0 {
                    self.gate.wakers.take().into_iter().for_each(std::task::Waker::wake);
                }
                return results;
            }
            self.gate.opened().await;
            self.database.execute(statements).await
        })
    }
}

impl FirstReadsGate {
    /// Ready once every request's first round trip has run.
    async fn opened(&self) {
        std::future::poll_fn(|context| {
            if self.waiting.get() == 0 {
                return std::task::Poll::Ready(());
            }
            self.wakers.borrow_mut().push(context.waker().clone());
            std::task::Poll::Pending
        })
        .await;
    }
}

/// One request's view of the mailboxes' own databases: its first batch in
/// each (the read beside its first on D1) runs at once, every later one (a
/// commit) waits at the gate, as its later batches on D1 do.
struct GatedMailboxes<'a> {
    mailboxes: &'a SqliteMailboxes,
    gate: Rc<FirstReadsGate>,
    /// The mailboxes this request has sent a batch to.
    asked: Rc<RefCell<BTreeSet<String>>>,
}

impl GatedMailboxes<'_> {
    fn gated(&self, mailbox_id: &str, database: Rc<dyn Database>) -> Rc<dyn Database> {
        let gate = Rc::clone(&self.gate);
        Rc::new(GatedMailbox { database, mailbox_id: mailbox_id.to_string(), gate, asked: Rc::clone(&self.asked) })
    }
}

impl MailboxStorage for GatedMailboxes<'_> {
    fn of(&self, mailbox_id: &str) -> Rc<dyn Database> {
        self.gated(mailbox_id, self.mailboxes.of(mailbox_id))
    }

    fn if_created(&self, mailbox_id: &str) -> Rc<dyn Database> {
        self.gated(mailbox_id, self.mailboxes.if_created(mailbox_id))
    }
}

struct GatedMailbox {
    database: Rc<dyn Database>,
    mailbox_id: String,
    gate: Rc<FirstReadsGate>,
    asked: Rc<RefCell<BTreeSet<String>>>,
}

impl Database for GatedMailbox {
    fn execute(&self, statements: Vec<Statement>) -> LocalBoxFuture<'_, Result<Vec<QueryResult>, StorageError>> {
        Box::pin(async move {
            let first = self.asked.borrow_mut().insert(self.mailbox_id.clone());
            if !first {
                self.gate.opened().await;
            }
            self.database.execute(statements).await
        })
    }
}
