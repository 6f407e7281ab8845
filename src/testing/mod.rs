//! The native test kit: a `Database` on SQLite built from the same `migrations/`
//! as D1, a deterministic `Platform` on a virtual clock (`clock`), receivers
//! that can be slow or silent, and a `TestNode` that drives the real dispatcher
//! the way the Worker does, one request at a time or several at once.
//!
//! Compiled only with the `testing` feature, never into the Worker. Nothing here
//! replaces the code under test: the dispatcher, handlers and SQL are the
//! production ones; only the storage engine and the clock differ.

// The kit fails the test that uses it by panicking, as the test's own asserts do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod clock;

use std::cell::{Cell, RefCell};
use std::path::Path;
use std::rc::Rc;

use mailroom_contract::api::AuditCheckpoint;
use rusqlite::types::ValueRef;
use serde_json::Value as Json;

use crate::audit;
use crate::core::bindings::{BlobError, BlobStore, Fetched, Mailer, MailerError, WebhookError, Webhooks};
use crate::core::http::{Request, Response, Surface};
use crate::core::node::{AuditKey, Config, Installation, Node};
use crate::core::outbound::Destination;
use crate::core::platform::{Platform, PlatformError};
use crate::core::storage::{Database, LocalBoxFuture, QueryResult, Row, Statement, StorageError, Value};
use crate::core::timing::Timings;
use crate::dispatch::{dispatch, route_for};
use crate::mail::{self, Delivery, Rejection};
pub use clock::{Timer, VirtualClock, run};

/// SQLite in memory, migrated from `migrations/`.
pub struct SqliteDatabase {
    connection: RefCell<rusqlite::Connection>,
    /// Batches executed so far: round trips, counted by the storage itself rather
    /// than reported by the code under test.
    batches: Cell<u32>,
    /// What each statement executed so far cost SQLite, in order.
    costs: RefCell<Vec<StatementCost>>,
}

/// What one statement cost SQLite, counted by SQLite itself: the work a query
/// does, whatever the machine's speed.
#[derive(Clone, Debug)]
pub struct StatementCost {
    pub sql: String,
    /// Steps of SQLite's virtual machine: grows with every row a query visits.
    pub steps: i32,
    /// Sorts the query needed (an ORDER BY no index serves).
    pub sorts: i32,
}

impl SqliteDatabase {
    /// A fresh database with every migration applied, in file-name order, as
    /// `wrangler d1 migrations apply` does.
    pub fn migrated() -> SqliteDatabase {
        // `~` sorts after every migration's name, which starts with its number.
        SqliteDatabase::migrated_before("~")
    }

    /// A fresh database with the migrations whose file names sort before
    /// `first_not_applied` applied, to store rows as they were before it: then
    /// `migrate_from` applies the rest, as a deployment would.
    pub fn migrated_before(first_not_applied: &str) -> SqliteDatabase {
        let connection = rusqlite::Connection::open_in_memory().expect("in-memory SQLite opens");
        // D1 enforces foreign keys; so must the native twin.
        connection.execute_batch("PRAGMA foreign_keys = ON;").expect("foreign keys on");
        let database =
            SqliteDatabase { connection: RefCell::new(connection), batches: Cell::new(0), costs: RefCell::default() };
        database.apply_migrations(|name| name < first_not_applied);
        database
    }

    /// Applies the migrations from `first` on, in file-name order.
    pub fn migrate_from(&self, first: &str) {
        self.apply_migrations(|name| name >= first);
    }

    fn apply_migrations(&self, which: impl Fn(&str) -> bool) {
        let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        let mut files: Vec<_> = std::fs::read_dir(&directory)
            .expect("migrations/ exists")
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|extension| extension == "sql"))
            .filter(|path| path.file_name().and_then(|name| name.to_str()).is_some_and(&which))
            .collect();
        files.sort();
        for file in files {
            let sql = std::fs::read_to_string(&file).expect("migration is readable");
            self.connection.borrow().execute_batch(&sql).unwrap_or_else(|error| panic!("{}: {error}", file.display()));
        }
    }

    /// Runs `sql` (one or more statements) outside any request, as a test that
    /// stores rows directly does.
    pub fn execute_sql(&self, sql: &str) {
        self.connection.borrow().execute_batch(sql).expect("the test's SQL runs");
    }

    /// How many batches (round trips) have been executed so far.
    pub fn batches(&self) -> u32 {
        self.batches.get()
    }

    /// What the statements executed since the last call cost, in order.
    pub fn take_costs(&self) -> Vec<StatementCost> {
        self.costs.take()
    }

    /// Runs raw SQL outside the core, for a test that must tamper with storage.
    pub fn tamper(&self, sql: &str) {
        self.connection.borrow().execute_batch(sql).expect("tampering SQL runs");
    }

    /// Every row of every table, as text, table by table: what a test compares
    /// before and after a call that must change nothing.
    pub fn snapshot(&self) -> Vec<(String, Vec<String>)> {
        let connection = self.connection.borrow();
        let mut tables: Vec<String> = connection
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .and_then(|mut statement| statement.query_map([], |row| row.get(0))?.collect())
            .expect("the schema reads");
        tables.retain(|name| !name.starts_with("sqlite_"));
        tables
            .into_iter()
            .map(|table| {
                let mut statement = connection.prepare(&format!("SELECT * FROM \"{table}\"")).expect("a table reads");
                let columns = statement.column_count();
                let rows = statement
                    .query_map([], |row| {
                        let values: Vec<String> = (0..columns)
                            .map(|index| format!("{:?}", row.get_ref(index).map(|value| value.to_owned())))
                            .collect();
                        Ok(values.join("|"))
                    })
                    .and_then(|rows| rows.collect::<Result<Vec<String>, _>>())
                    .expect("rows read");
                (table, rows)
            })
            .collect()
    }

    /// The first column of the first row `sql` answers, as text, read outside
    /// the core: what a test looks up without a route for it.
    pub fn peek(&self, sql: &str) -> Option<String> {
        self.connection.borrow().query_row(sql, [], |row| row.get::<_, Option<String>>(0)).ok().flatten()
    }

    /// The unkeyed SHA-256 link an entry had before the chain was keyed, computed
    /// from the stored row after `prev_hash`, as anyone who can read the database
    /// can: what a test rewriting history without the key writes. Written here
    /// apart from the chain's own code, so it also checks that format.
    pub fn legacy_hash(&self, seq: i64, prev_hash: &str) -> String {
        use sha2::Digest;
        let connection = self.connection.borrow();
        let entry: serde_json::Map<String, Json> = connection
            .query_row(
                "SELECT seq, at, actor, actor_kind, delegator, surface, action, object, outcome, detail                  FROM audit_entries WHERE seq = ?1",
                [seq],
                |row| {
                    let mut fields = serde_json::Map::new();
                    fields.insert("seq".into(), Json::from(row.get::<_, i64>(0)?));
                    fields.insert("at".into(), Json::from(row.get::<_, i64>(1)?));
                    fields.insert("actor_kind".into(), Json::from(row.get::<_, String>(3)?));
                    fields.insert("action".into(), Json::from(row.get::<_, String>(6)?));
                    fields.insert("outcome".into(), Json::from(row.get::<_, String>(8)?));
                    for (index, name) in [(2, "actor"), (4, "delegator"), (5, "surface"), (7, "object"), (9, "detail")] {
                        if let Some(value) = row.get::<_, Option<String>>(index)? {
                            fields.insert(name.into(), Json::from(value));
                        }
                    }
                    Ok(fields)
                },
            )
            .expect("the entry exists");
        // serde_json's map keeps keys sorted: the canonical form.
        let canonical = serde_json::to_string(&entry).expect("JSON serialises");
        let mut hasher = sha2::Sha256::new();
        hasher.update(b"mailroom.audit-chain.v1\n");
        hasher.update(prev_hash.as_bytes());
        hasher.update(canonical.as_bytes());
        hasher.finalize().iter().map(|byte| format!("{byte:02x}")).collect()
    }

    /// Rewrites every entry as a node wrote it before nonces (migration 0024):
    /// no nonce, no MAC version, its MAC over its own fields alone under `key`
    /// (`mailroom.audit-entry.v2`), and unsealed, for the sealer to link as it
    /// did then. Computed here apart from the chain's own code, so it also
    /// checks that format.
    pub fn as_written_before_nonces(&self, key: &AuditKey) {
        use hmac::{KeyInit, Mac};
        let entries: Vec<(i64, String)> = {
            let connection = self.connection.borrow();
            let mut statement = connection
                .prepare(
                    "SELECT seq, at, actor, actor_kind, delegator, surface, action, object, outcome, detail \
                     FROM audit_entries ORDER BY seq",
                )
                .expect("the entries read");
            statement
                .query_map([], |row| {
                    let mut fields = serde_json::Map::new();
                    fields.insert("at".into(), Json::from(row.get::<_, i64>(1)?));
                    fields.insert("actor_kind".into(), Json::from(row.get::<_, String>(3)?));
                    fields.insert("action".into(), Json::from(row.get::<_, String>(6)?));
                    fields.insert("outcome".into(), Json::from(row.get::<_, String>(8)?));
                    for (index, name) in [(2, "actor"), (4, "delegator"), (5, "surface"), (7, "object"), (9, "detail")]
                    {
                        if let Some(value) = row.get::<_, Option<String>>(index)? {
                            fields.insert(name.into(), Json::from(value));
                        }
                    }
                    fields.insert("key_id".into(), Json::from(key.id.clone()));
                    // serde_json's map keeps keys sorted: the canonical form.
                    Ok((row.get::<_, i64>(0)?, serde_json::to_string(&fields).expect("JSON serialises")))
                })
                .and_then(|rows| rows.collect::<Result<_, _>>())
                .expect("the entries read")
        };
        for (seq, canonical) in entries {
            let mut mac = <hmac::Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&key.secret).expect("any key length");
            mac.update(b"mailroom.audit-entry.v2\n");
            mac.update(canonical.as_bytes());
            let mac: String = mac.finalize().into_bytes().iter().map(|byte| format!("{byte:02x}")).collect();
            self.tamper(&format!(
                "UPDATE audit_entries SET key_id = '{}', mac = '{mac}', mac_version = NULL, nonce = NULL, \
                 prev_hash = NULL, hash = NULL WHERE seq = {seq}",
                key.id
            ));
        }
    }

    /// Runs raw SQL outside the core and answers what SQLite said, for a test
    /// that requires the schema itself to refuse a change.
    pub fn try_tamper(&self, sql: &str) -> Result<(), String> {
        self.connection.borrow().execute_batch(sql).map_err(|error| error.to_string())
    }

    /// The columns of `table`, in order.
    pub fn column_names(&self, table: &str) -> Vec<String> {
        let connection = self.connection.borrow();
        let mut statement = connection.prepare(&format!("PRAGMA table_info({table})")).expect("table_info runs");
        statement
            .query_map([], |row| row.get::<_, String>(1))
            .expect("table_info answers")
            .collect::<Result<_, _>>()
            .expect("column names read")
    }

    /// A single integer from raw SQL, for assertions about storage.
    pub fn count(&self, sql: &str) -> i64 {
        self.connection.borrow().query_row(sql, [], |row| row.get(0)).expect("count query runs")
    }

    fn run(&self, connection: &rusqlite::Connection, statement: &Statement) -> Result<QueryResult, StorageError> {
        let error = |error: rusqlite::Error| StorageError::from_message(&error.to_string());
        let mut prepared = connection.prepare(&statement.sql).map_err(error)?;
        let columns: Vec<String> = prepared.column_names().map(str::to_string).collect();
        let parameters: Vec<rusqlite::types::Value> = statement
            .parameters
            .iter()
            .map(|value| match value {
                Value::Null => rusqlite::types::Value::Null,
                Value::Integer(integer) => rusqlite::types::Value::Integer(*integer),
                Value::Real(real) => rusqlite::types::Value::Real(*real),
                Value::Text(text) => rusqlite::types::Value::Text(text.clone()),
            })
            .collect();
        let mut rows = prepared.query(rusqlite::params_from_iter(parameters)).map_err(error)?;
        let mut result = QueryResult::default();
        while let Some(row) = rows.next().map_err(error)? {
            let mut map = serde_json::Map::new();
            for (index, column) in columns.iter().enumerate() {
                let value = match row.get_ref(index).map_err(error)? {
                    ValueRef::Null => Json::Null,
                    ValueRef::Integer(integer) => Json::from(integer),
                    ValueRef::Real(real) => Json::from(real),
                    ValueRef::Text(text) => Json::from(String::from_utf8_lossy(text).into_owned()),
                    ValueRef::Blob(_) => {
                        return Err(StorageError::Decode("blobs are not used".into()));
                    }
                };
                map.insert(column.clone(), value);
            }
            result.rows.push(Row(map));
        }
        drop(rows);
        result.changes = connection.changes();
        self.costs.borrow_mut().push(StatementCost {
            sql: statement.sql.to_string(),
            steps: prepared.get_status(rusqlite::StatementStatus::VmStep),
            sorts: prepared.get_status(rusqlite::StatementStatus::Sort),
        });
        Ok(result)
    }
}

impl Database for SqliteDatabase {
    fn execute(&self, statements: Vec<Statement>) -> LocalBoxFuture<'_, Result<Vec<QueryResult>, StorageError>> {
        Box::pin(async move {
            self.batches.set(self.batches.get() + 1);
            let mut connection = self.connection.borrow_mut();
            let transaction = connection.transaction().map_err(|error| StorageError::Backend(error.to_string()))?;
            let mut results = Vec::with_capacity(statements.len());
            for statement in &statements {
                // Dropping the transaction on error rolls it back, as D1 does a batch.
                results.push(self.run(&transaction, statement)?);
            }
            transaction.commit().map_err(|error| StorageError::Backend(error.to_string()))?;
            Ok(results)
        })
    }
}

/// A platform on a virtual clock that moves only when told to or when the node
/// waits on a timer (`VirtualClock`), and a seeded, deterministic random
/// stream. PBKDF2 is the real algorithm.
pub struct FixedPlatform {
    clock: Rc<VirtualClock>,
    random_state: Cell<u64>,
    pub logs: RefCell<Vec<String>>,
}

impl FixedPlatform {
    pub fn at(now_ms: i64) -> FixedPlatform {
        FixedPlatform {
            clock: VirtualClock::at(now_ms),
            random_state: Cell::new(0x9E37_79B9_7F4A_7C15),
            logs: RefCell::default(),
        }
    }

    pub fn advance(&self, milliseconds: i64) {
        self.clock.advance(milliseconds);
    }

    /// The clock, which the node's other test bindings (a slow receiver) wait on too.
    pub fn clock(&self) -> Rc<VirtualClock> {
        Rc::clone(&self.clock)
    }
}

impl Platform for FixedPlatform {
    fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    fn fill_random(&self, bytes: &mut [u8]) {
        // SplitMix64: deterministic, well distributed, and plainly not for production.
        for byte in bytes.iter_mut() {
            let mut state = self.random_state.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
            self.random_state.set(state);
            state = (state ^ (state >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            state = (state ^ (state >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            *byte = (state ^ (state >> 31)) as u8;
        }
    }

    fn pbkdf2_sha256<'a>(
        &'a self,
        password: &'a [u8],
        salt: &'a [u8],
        iterations: u32,
    ) -> LocalBoxFuture<'a, Result<[u8; 32], PlatformError>> {
        Box::pin(async move {
            let mut output = [0u8; 32];
            pbkdf2::pbkdf2_hmac::<sha2::Sha256>(password, salt, iterations, &mut output);
            Ok(output)
        })
    }

    fn sleep(&self, milliseconds: u32) -> LocalBoxFuture<'_, ()> {
        Box::pin(self.clock.sleep(i64::from(milliseconds)))
    }

    fn log(&self, message: &str) {
        self.logs.borrow_mut().push(message.to_string());
    }
}

/// An object store in memory.
#[derive(Default)]
pub struct MemoryBlobs {
    pub objects: RefCell<std::collections::BTreeMap<String, Vec<u8>>>,
    /// Set by a test to make deleting fail, as an object store that does not
    /// answer would.
    pub unavailable: Cell<bool>,
    /// Set by a test to make storing fail.
    pub refusing_puts: Cell<bool>,
}

impl BlobStore for MemoryBlobs {
    fn put<'a>(&'a self, key: &'a str, bytes: &'a [u8]) -> LocalBoxFuture<'a, Result<(), BlobError>> {
        Box::pin(async move {
            if self.refusing_puts.get() {
                return Err(BlobError("the object store refuses to store".into()));
            }
            self.objects.borrow_mut().insert(key.to_string(), bytes.to_vec());
            Ok(())
        })
    }

    fn get<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<Option<Vec<u8>>, BlobError>> {
        Box::pin(async move { Ok(self.objects.borrow().get(key).cloned()) })
    }

    fn delete<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<(), BlobError>> {
        Box::pin(async move {
            if self.unavailable.get() {
                return Err(BlobError("the object store is unavailable".into()));
            }
            self.objects.borrow_mut().remove(key);
            Ok(())
        })
    }
}

/// One message handed to the mail binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentMessage {
    pub envelope_from: String,
    pub envelope_to: String,
    pub raw: Vec<u8>,
}

/// A mail binding that records what it is handed, and refuses the recipients a
/// test names.
#[derive(Default)]
pub struct RecordingMailer {
    pub sent: RefCell<Vec<SentMessage>>,
    pub refuse: RefCell<Vec<String>>,
}

impl Mailer for RecordingMailer {
    fn send<'a>(
        &'a self,
        envelope_from: &'a str,
        envelope_to: &'a str,
        raw: &'a [u8],
    ) -> LocalBoxFuture<'a, Result<Option<String>, MailerError>> {
        Box::pin(async move {
            if self.refuse.borrow().iter().any(|refused| refused == envelope_to) {
                return Err(MailerError(format!("destination {envelope_to} is not allowed")));
            }
            self.sent.borrow_mut().push(SentMessage {
                envelope_from: envelope_from.to_string(),
                envelope_to: envelope_to.to_string(),
                raw: raw.to_vec(),
            });
            // As Cloudflare's service does: its own Message-ID on what left.
            Ok(Some(format!("<sent-{}@mail-service.test>", self.sent.borrow().len())))
        })
    }
}

/// A webhook POST a `RecordingWebhooks` was handed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostedWebhook {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// When it arrived, by the virtual clock.
    pub at_ms: i64,
}

/// Outbound HTTP that records what it is handed and answers `status` (200
/// unless a test sets another), or fails to connect while `unreachable`; a
/// receiver listed in `slow` answers only after its delay, on the node's clock.
pub struct RecordingWebhooks {
    pub posted: RefCell<Vec<PostedWebhook>>,
    pub status: Cell<u16>,
    pub unreachable: Cell<bool>,
    /// Receivers that take their time: a POST to the URL answers this many
    /// milliseconds after it arrived (`i64::MAX`: never).
    pub slow: RefCell<Vec<(String, i64)>>,
    /// What a GET of each URL answers (status, body); any other URL does not answer.
    pub documents: RefCell<Vec<(String, u16, Vec<u8>)>>,
    /// Every URL a GET was asked for, in order.
    pub fetched: RefCell<Vec<String>>,
    clock: Rc<VirtualClock>,
}

impl RecordingWebhooks {
    /// Receivers whose time is `clock`'s: the node's platform's.
    pub fn on(clock: Rc<VirtualClock>) -> RecordingWebhooks {
        RecordingWebhooks {
            posted: RefCell::default(),
            status: Cell::new(200),
            unreachable: Cell::new(false),
            slow: RefCell::default(),
            documents: RefCell::default(),
            fetched: RefCell::default(),
            clock,
        }
    }

    /// Makes the receiver at `url` answer `milliseconds` after a POST arrives.
    pub fn answer_after(&self, url: &str, milliseconds: i64) {
        self.slow.borrow_mut().push((url.to_string(), milliseconds));
    }

    /// The POSTs made to `url`, in order.
    pub fn posted_to(&self, url: &str) -> Vec<PostedWebhook> {
        self.posted.borrow().iter().filter(|posted| posted.url == url).cloned().collect()
    }
}

impl Default for RecordingWebhooks {
    fn default() -> Self {
        RecordingWebhooks::on(VirtualClock::at(0))
    }
}

impl Webhooks for RecordingWebhooks {
    fn get<'a>(
        &'a self,
        destination: &'a Destination,
        limit: usize,
    ) -> LocalBoxFuture<'a, Result<Fetched, WebhookError>> {
        let url = destination.url();
        Box::pin(async move {
            self.fetched.borrow_mut().push(url.to_string());
            let documents = self.documents.borrow();
            let (_, status, body) = documents
                .iter()
                .find(|(known, _, _)| known == url)
                .ok_or_else(|| WebhookError("nothing answered".into()))?;
            if body.len() > limit {
                return Err(WebhookError(format!("the body is longer than {limit} bytes")));
            }
            Ok(Fetched { status: *status, body: body.clone() })
        })
    }

    fn post<'a>(
        &'a self,
        destination: &'a Destination,
        headers: &'a [(String, String)],
        body: &'a str,
    ) -> LocalBoxFuture<'a, Result<u16, WebhookError>> {
        let url = destination.url();
        Box::pin(async move {
            if self.unreachable.get() {
                return Err(WebhookError("the receiver did not answer".into()));
            }
            self.posted.borrow_mut().push(PostedWebhook {
                url: url.to_string(),
                headers: headers.to_vec(),
                body: body.to_string(),
                at_ms: self.clock.now_ms(),
            });
            let delay = self.slow.borrow().iter().find(|(slow, _)| slow == url).map(|(_, delay)| *delay);
            if let Some(delay) = delay {
                self.clock.sleep(delay).await;
            }
            Ok(self.status.get())
        })
    }
}

/// The origin test requests are addressed to.
pub const TEST_ORIGIN: &str = "https://mailroom.test";
/// The address a `TestNode` sends reminder emails from.
pub const TEST_REMINDER_SENDER: &str = "reminders@mailroom.test";
/// The setup token a `TestNode` is configured with.
pub const TEST_SETUP_TOKEN: &str = "test-setup-token";

/// The audit key a `TestNode` writes and seals its chain with.
pub const TEST_AUDIT_KEY: &[u8] = b"native-test-audit-key-0123456789ab";

/// PBKDF2 iterations in native tests.
pub const TEST_PASSWORD_ITERATIONS: u32 = 1_000;

/// A whole node on SQLite, driven through the real dispatcher: an installation
/// like the Worker's, on SQLite, memory and a fixed clock.
pub type TestNode = Installation<SqliteDatabase, MemoryBlobs, RecordingMailer, RecordingWebhooks, FixedPlatform>;

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
                public_origin: Some(TEST_ORIGIN.to_string()),
                reminder_sender: Some(TEST_REMINDER_SENDER.to_string()),
                agent_network: true,
                server_timing: false,
            },
            timings: Timings::off(),
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
        if response.seal_chain {
            self.seal();
        }
        response
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
        response
    }

    /// Sends `requests` together, as REST, the way requests that arrive at
    /// once meet a database: every one's first round trip (its reads, with
    /// its checks) runs before any one's second (its commit), so each decides
    /// on what it read before the others wrote. The answers, in order, with the
    /// audit chain sealed after.
    pub fn send_together(&self, requests: Vec<Request>) -> Vec<Response> {
        self.platform.advance(1);
        let gate = FirstReadsGate { waiting: Cell::new(requests.len()), wakers: RefCell::default() };
        let databases: Vec<GatedDatabase<'_>> = requests
            .iter()
            .map(|_| GatedDatabase { database: &self.database, gate: &gate, batches: Cell::new(0) })
            .collect();
        let nodes: Vec<Node<'_>> = databases
            .iter()
            .map(|database| Node {
                database,
                blobs: &self.blobs,
                mailer: &self.mailer,
                webhooks: &self.webhooks,
                platform: &self.platform,
                config: &self.config,
                timings: &self.timings,
            })
            .collect();
        let answers = requests.iter().zip(&nodes).map(|(request, node)| dispatch(node, request, Surface::Rest));
        let responses = self.run(futures_util::future::join_all(answers));
        for (request, response) in requests.iter().zip(&responses) {
            self.answered(request, response);
        }
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
        if !response.deferred.is_empty() {
            self.run(self.database.execute(response.deferred.clone())).expect("deferred writes apply");
        }
    }

    /// Runs `future` to its end on the node's virtual clock.
    pub fn run<F: std::future::Future>(&self, future: F) -> F::Output {
        run(&self.platform.clock(), future)
    }

    /// Seals the audit chain's waiting entries, as the adapter does after an
    /// answer that appended to it.
    pub fn seal(&self) -> audit::seal::Sealing {
        self.run(audit::seal(&self.database, &self.config)).expect("the chain seals")
    }

    /// Runs the scheduled upkeep, as the cron trigger does.
    pub fn maintain(&self) -> Option<AuditCheckpoint> {
        self.platform.advance(1);
        self.run(crate::dispatch::upkeep(&self.node())).expect("the upkeep runs")
    }

    /// Runs the reminders' cron trigger, as wrangler's scheduled event does.
    pub fn run_reminders(&self) -> crate::reminders::NotifyReport {
        self.run(crate::reminders::notify_due(&self.node())).expect("the reminders run")
    }

    /// Runs the per-minute cron trigger as wrangler's scheduled event does:
    /// reminders delivered, and agent messages that expired or failed ended.
    pub fn run_every_minute(&self) {
        self.run(crate::dispatch::on_schedule(&self.node(), crate::dispatch::REMINDERS_CRON))
            .expect("the per-minute run runs")
    }

    /// Delivers a raw message to `to` through the same path as the email handler.
    pub fn deliver(&self, from: &str, to: &str, raw: &[u8]) -> Result<Delivery, Rejection> {
        self.platform.advance(1);
        let node = self.node();
        let delivery = self.run(mail::receive(&node, from, to, raw));
        // A stored message and a re-delivery each leave an audit entry to seal.
        if matches!(delivery, Ok(Delivery::Stored { .. } | Delivery::Duplicate { .. })) {
            self.seal();
        }
        delivery
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
            std::future::poll_fn(|context| {
                if self.gate.waiting.get() == 0 {
                    return std::task::Poll::Ready(());
                }
                self.gate.wakers.borrow_mut().push(context.waker().clone());
                std::task::Poll::Pending
            })
            .await;
            self.database.execute(statements).await
        })
    }
}

/// Builds a request to the test origin.
pub fn request(method: &str, path_and_query: &str) -> Request {
    let (path, query) = path_and_query.split_once('?').unwrap_or((path_and_query, ""));
    Request {
        method: method.to_string(),
        path: path.to_string(),
        query: query.to_string(),
        headers: Vec::new(),
        body: Vec::new(),
        origin: TEST_ORIGIN.to_string(),
        client_address: Some("192.0.2.1".to_string()),
    }
}

/// Builder conveniences for test requests.
pub trait RequestExt {
    fn json(self, body: Json) -> Request;
    fn raw_body(self, body: &[u8]) -> Request;
    fn bearer(self, token: &str) -> Request;
    fn header(self, name: &str, value: &str) -> Request;
}

impl RequestExt for Request {
    fn json(mut self, body: Json) -> Request {
        self.body = serde_json::to_vec(&body).expect("JSON serialises");
        self.headers.push(("content-type".into(), "application/json".into()));
        self
    }

    fn raw_body(mut self, body: &[u8]) -> Request {
        self.body = body.to_vec();
        self
    }

    fn bearer(mut self, token: &str) -> Request {
        self.headers.push(("authorization".into(), format!("Bearer {token}")));
        self
    }

    fn header(mut self, name: &str, value: &str) -> Request {
        self.headers.push((name.to_lowercase(), value.to_string()));
        self
    }
}
