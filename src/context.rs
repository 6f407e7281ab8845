//! The per-request context a handler works through, and the two round trips it
//! is held to.
//!
//! A handler never talks to the database directly. Its first `read` travels in
//! one batch with the checks the dispatcher queued (the session is live, the
//! caller holds what the route's authority needs) and, for a changing route, the
//! audit chain's head; the results come back only if every check passed. Its
//! writes are not run at all: they are collected, and the dispatcher commits them
//! in one batch with the audit row. So a route that reads and then changes costs
//! two round trips, and a refused one never touches what it was refused.

use mailroom_contract::{Method, Route};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::audit::{self, AuditRecord};
use crate::authz::{Check, PendingCheck};
use crate::credentials::{AuthenticationError, Caller};
use crate::dispatch::RequestError;
use crate::http::{Request, Response, Surface};
use crate::node::Node;
use crate::refusal::Refusal;
use crate::storage::{Counted, QueryResult, Statement, StorageError};

/// How many times a commit that lost the race for the chain's next `seq` is
/// retried before the caller is told to try again.
const COMMIT_ATTEMPTS: u32 = 16;

/// The constraint a failed write guard reports.
const WRITE_GUARD: &str = "write_guard_failed";

/// Everything a handler may use.
pub struct Context<'request> {
    pub route: &'static Route,
    pub request: &'request Request,
    pub node: &'request Node<'request>,
    /// The time this request is handled at, read once from the platform.
    pub now_ms: i64,
    /// Who the request claims to be; confirmed by the first read.
    pub caller: Caller,
    pub surface: Surface,
    database: Counted<'request>,
    path_parameters: Vec<(String, String)>,
    query_parameters: Vec<(String, String)>,
    pending_checks: Vec<PendingCheck>,
    failed_check: Option<Refusal>,
    audited: bool,
    chain_head: Option<(i64, String)>,
    writes: Vec<Statement>,
    attempt_writes: Vec<Statement>,
    guards: Vec<(Statement, Refusal)>,
    unique_refusals: Vec<(&'static str, Refusal)>,
    audit_object: Option<String>,
    audit_detail: Option<serde_json::Value>,
    response_headers: Vec<(String, String)>,
}

impl<'request> Context<'request> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        node: &'request Node<'request>,
        route: &'static Route,
        request: &'request Request,
        now_ms: i64,
        caller: Caller,
        surface: Surface,
        path_parameters: Vec<(String, String)>,
        query_parameters: Vec<(String, String)>,
        pending_checks: Vec<PendingCheck>,
        audited: bool,
    ) -> Context<'request> {
        Context {
            route,
            request,
            node,
            now_ms,
            caller,
            surface,
            database: Counted::new(node.database),
            path_parameters,
            query_parameters,
            pending_checks,
            failed_check: None,
            audited,
            chain_head: None,
            writes: Vec::new(),
            attempt_writes: Vec::new(),
            guards: Vec::new(),
            unique_refusals: Vec::new(),
            audit_object: None,
            audit_detail: None,
            response_headers: Vec::new(),
        }
    }

    /// A path parameter the route declares.
    pub fn path(&self, name: &str) -> &str {
        self.path_parameters.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str()).unwrap_or_default()
    }

    /// A query parameter, if the request sent it.
    pub fn query(&self, name: &str) -> Option<&str> {
        self.query_parameters.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    /// Decodes the JSON body into the route's request type, naming the field at fault.
    pub fn body<T: DeserializeOwned>(&self) -> Result<T, Refusal> {
        if self.request.body.iter().all(u8::is_ascii_whitespace) {
            return Err(RequestError::MissingBody.into());
        }
        let value: serde_json::Value = serde_json::from_slice(&self.request.body)
            .map_err(|error| RequestError::MalformedJson { detail: describe_json_error(&error) })?;
        serde_json::from_value(value).map_err(|error| RequestError::InvalidBody { detail: error.to_string() }.into())
    }

    /// Decodes an optional JSON body: an empty body is the type's default.
    pub fn optional_body<T: DeserializeOwned + Default>(&self) -> Result<T, Refusal> {
        if self.request.body.iter().all(u8::is_ascii_whitespace) {
            return Ok(T::default());
        }
        self.body()
    }

    /// Runs `statements` and returns their results, in the same round trip as every
    /// check still pending. Fails with the check's refusal if one fails.
    pub async fn read(&mut self, statements: Vec<Statement>) -> Result<Vec<QueryResult>, Refusal> {
        let checks = std::mem::take(&mut self.pending_checks);
        let wants_head = self.audited && self.chain_head.is_none();
        let mut batch: Vec<Statement> = checks.iter().map(|check| check.statement.clone()).collect();
        if wants_head {
            batch.push(audit::head());
        }
        let handler_statements = statements.len();
        batch.extend(statements);
        if batch.is_empty() {
            return match &self.failed_check {
                Some(refusal) => Err(refusal.clone()),
                None => Ok(Vec::new()),
            };
        }
        let mut results = self.database.execute(batch).await.map_err(|error| self.internal(error))?;
        let handler_results = results.split_off(results.len() - handler_statements);
        if wants_head {
            let head_row = results.pop().unwrap_or_default();
            self.chain_head = Some(audit::head_from(head_row.first()).map_err(|error| self.internal(error))?);
        }
        for (pending, result) in checks.into_iter().zip(results) {
            if self.failed_check.is_none() {
                self.failed_check = settle(&pending.check, &result).err();
            }
        }
        match &self.failed_check {
            Some(refusal) => Err(refusal.clone()),
            None => Ok(handler_results),
        }
    }

    /// `read` for a fixed number of statements, destructured by the caller.
    pub async fn read_array<const N: usize>(
        &mut self,
        statements: [Statement; N],
    ) -> Result<[QueryResult; N], Refusal> {
        let results = self.read(statements.into()).await?;
        results.try_into().map_err(|_| Refusal::internal())
    }

    /// Queues a change, to be committed with the audit row if the handler succeeds.
    pub fn write(&mut self, statement: Statement) {
        self.writes.push(statement);
    }

    /// Queues a change that stands whatever the outcome, such as counting a failed
    /// sign-in: it is committed with the audit row of a refusal as well as a success.
    pub fn write_whatever_the_outcome(&mut self, statement: Statement) {
        self.attempt_writes.push(statement);
    }

    /// Makes the commit conditional: `condition` (an SQL boolean expression, with
    /// its parameters) is evaluated after the queued writes, inside the same
    /// transaction, and if it is false nothing applies and `refusal` is answered.
    /// This is how an invariant such as "an administrator remains" holds under
    /// concurrent requests, without a read-then-write race.
    pub fn guard(&mut self, condition: Statement, refusal: impl Into<Refusal>) {
        let statement = Statement {
            sql: format!("INSERT INTO write_guards (name) SELECT 'failed' WHERE NOT ({})", condition.sql).into(),
            parameters: condition.parameters,
        };
        self.guards.push((statement, refusal.into()));
    }

    /// Answers `refusal` instead of an internal error if the commit breaks the
    /// UNIQUE constraint on `table.column` (a concurrent request got there first).
    pub fn on_unique_violation(&mut self, constraint: &'static str, refusal: impl Into<Refusal>) {
        self.unique_refusals.push((constraint, refusal.into()));
    }

    /// Names the object this call acts on, for its audit entry.
    pub fn audit_object(&mut self, object: impl Into<String>) {
        self.audit_object = Some(object.into());
    }

    /// Records further facts about this call in its audit entry. Never a secret.
    pub fn audit_detail(&mut self, detail: serde_json::Value) {
        self.audit_detail = Some(detail);
    }

    /// Adds a header (such as `Set-Cookie`) to the response, whatever its body.
    pub fn response_header(&mut self, name: &str, value: String) {
        self.response_headers.push((name.to_string(), value));
    }

    /// The route's success answer with `body`.
    pub fn json<T: Serialize>(&self, body: &T) -> Response {
        Response::json(self.route.success_status, body)
    }

    /// Logs an internal failure for the operator and returns the detail-free refusal.
    pub fn internal(&self, error: impl std::fmt::Display) -> Refusal {
        self.node.platform.log(&format!("{} {}: {error}", self.route.method.as_str(), self.route.path));
        Refusal::internal()
    }

    /// Turns the handler's result into the response: confirms any checks the
    /// handler did not need a read for, then commits its writes and the audit row.
    pub(crate) async fn finish(mut self, outcome: Result<Response, Refusal>) -> Response {
        let mut outcome = outcome;
        if !self.pending_checks.is_empty() || (self.audited && self.chain_head.is_none()) {
            if let Err(refusal) = self.read(Vec::new()).await {
                outcome = Err(refusal);
            }
        }
        if let Some(refusal) = &self.failed_check {
            outcome = Err(refusal.clone());
        }
        let outcome = if self.audited && self.identified() {
            self.commit(outcome).await
        } else if (!self.writes.is_empty() && outcome.is_ok()) || !self.attempt_writes.is_empty() {
            // Every changing route is audited, so this is unreachable by the
            // contract; committing without a record would be worse than refusing.
            Err(self.internal("a route with writes was not audited"))
        } else {
            outcome
        };
        let round_trips = self.database.round_trips();
        let mut response = match outcome {
            Ok(response) => response,
            Err(refusal) => Response::refusal(&refusal),
        };
        response.headers.extend(self.response_headers);
        response.round_trips = round_trips;
        response
    }

    /// Whether the call can be attributed: a public route, or a caller who named
    /// themself with a credential the node issued.
    fn identified(&self) -> bool {
        self.route.authority == mailroom_contract::Authority::Public || self.caller.actor_id().is_some()
    }

    async fn commit(&mut self, outcome: Result<Response, Refusal>) -> Result<Response, Refusal> {
        let mut outcome = outcome;
        for attempt in 0..COMMIT_ATTEMPTS {
            let (head_seq, head_hash) = match self.chain_head.clone() {
                Some(head) => head,
                None => {
                    let [head] = self
                        .database
                        .execute(vec![audit::head()])
                        .await
                        .map_err(|error| self.internal(error))?
                        .try_into()
                        .map_err(|_| Refusal::internal())?;
                    audit::head_from(head.first()).map_err(|error| self.internal(error))?
                }
            };
            let record = self.record(&outcome);
            let mut batch = self.attempt_writes.clone();
            if outcome.is_ok() {
                batch.extend(self.writes.iter().cloned());
                batch.extend(self.guards.iter().map(|(statement, _)| statement.clone()));
            }
            batch.push(audit::append(head_seq, &head_hash, &record));
            match self.database.execute(batch).await {
                Ok(_) => return outcome,
                Err(StorageError::Unique(constraint)) if constraint == "audit_entries.seq" => {
                    // Another request took this `seq`; the whole batch rolled back.
                    self.chain_head = None;
                    let ceiling = 5u32.saturating_mul(1 << attempt.min(8));
                    let jitter: [u8; 2] = crate::platform::random_bytes(self.node.platform);
                    let delay = u32::from(u16::from_le_bytes(jitter)) % ceiling.max(1);
                    self.node.platform.sleep(delay).await;
                }
                Err(StorageError::Check(constraint)) if constraint == WRITE_GUARD && outcome.is_ok() => {
                    // The batch rolled back, so the head read is still the head.
                    self.chain_head = Some((head_seq, head_hash));
                    let refusal = self.guards.first().map(|(_, refusal)| refusal.clone());
                    outcome = Err(refusal.unwrap_or_else(Refusal::internal));
                }
                Err(StorageError::Unique(constraint))
                    if outcome.is_ok() && self.unique_refusals.iter().any(|(name, _)| *name == constraint) =>
                {
                    self.chain_head = Some((head_seq, head_hash));
                    let refusal = self.unique_refusals.iter().find(|(name, _)| *name == constraint);
                    outcome = Err(refusal.map(|(_, refusal)| refusal.clone()).unwrap_or_else(Refusal::internal));
                }
                Err(error) => return Err(self.internal(error)),
            }
        }
        Err(Refusal::busy())
    }

    fn record(&self, outcome: &Result<Response, Refusal>) -> AuditRecord {
        let (outcome_name, detail) = match outcome {
            Ok(_) => ("ok", self.audit_detail.clone()),
            Err(refusal) => {
                let mut detail = serde_json::json!({ "code": refusal.code, "status": refusal.status });
                if let (Some(extra), Some(map)) = (&self.audit_detail, detail.as_object_mut()) {
                    map.insert("attempted".into(), extra.clone());
                }
                ("refused", Some(detail))
            }
        };
        let object = self.audit_object.clone().or_else(|| self.path_parameters.first().map(|(_, value)| value.clone()));
        AuditRecord {
            at: self.now_ms,
            actor: self.caller.actor_id().map(str::to_string),
            delegator: None,
            surface: Some(self.surface.as_str()),
            action: self.route.tool.to_string(),
            object,
            outcome: outcome_name,
            detail: detail.map(|detail| detail.to_string()),
        }
    }
}

/// Whether a check's result lets the request through.
fn settle(check: &Check, result: &QueryResult) -> Result<(), Refusal> {
    let passed = match check {
        Check::SessionLive => !result.rows.is_empty(),
        Check::Holds(_) => result.first().and_then(|row| row.flag("held").ok()).unwrap_or(false),
    };
    match (passed, check) {
        (true, _) => Ok(()),
        (false, Check::SessionLive) => Err(AuthenticationError::SessionEnded.into()),
        (false, Check::Holds(error)) => Err(error.clone().into()),
    }
}

fn describe_json_error(error: &serde_json::Error) -> String {
    format!("{error} (line {}, column {})", error.line(), error.column())
        .replace(&format!(" at line {} column {}", error.line(), error.column()), "")
}

/// Whether a route's calls are recorded in the audit chain: every changing call
/// except the machine surface (whose tool calls are recorded as the routes they
/// re-enter), and every read that reaches message content.
pub fn is_audited(route: &Route, tier: mailroom_contract::Tier) -> bool {
    (route.method != Method::Get && tier != mailroom_contract::Tier::Surface) || route.reaches_content
}
