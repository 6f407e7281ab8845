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

use crate::audit::{self, AuditRecord, CommitError};
use crate::authz::{Check, PendingCheck};
use crate::credentials::Caller;
use crate::dispatch::RequestError;
use crate::http::{Request, Response, Surface};
use crate::node::Node;
use crate::refusal::Refusal;
use crate::storage::{Counted, QueryResult, Statement, StorageError};

/// The constraints a failed write guard reports: `write_guard_<slot>`, one slot
/// per guard a handler registers, so the refusal answered is that guard's own.
const WRITE_GUARD_PREFIX: &str = "write_guard_";
/// How many guards one call may register (the `write_guards` table's columns).
const WRITE_GUARD_SLOTS: usize = 8;

/// Everything a handler may use.
pub struct Context<'request> {
    pub route: &'static Route,
    pub request: &'request Request,
    pub node: &'request Node<'request>,
    /// The time this request is handled at, read once from the platform.
    pub now_ms: i64,
    /// Who the request claims to be; confirmed by the first read.
    pub caller: Caller,
    /// For an agent, its sponsor, as its liveness check found it: the delegator
    /// its acts are recorded under, refused ones included.
    pub delegator: Option<String>,
    /// An agent credential whose secret did not match (or whose agent does not
    /// exist) proves nothing: the call is attributed to nobody and not recorded,
    /// so a forged credential cannot write an entry naming a real agent.
    credential_unproven: bool,
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
    /// Guards evaluated after every write, in the same transaction.
    final_guards: Vec<Statement>,
    /// The refusal of each guard, by slot (slot 1 is index 0).
    guard_refusals: Vec<Refusal>,
    /// Writes to run after the response, outside the transaction.
    deferred: Vec<Statement>,
    /// Whether the handler already committed its writes and audit row.
    committed: bool,
    /// Round trips taken by calls this one re-entered the dispatcher with.
    inner_round_trips: u32,
    constraint_refusals: Vec<(&'static str, Refusal)>,
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
            delegator: None,
            credential_unproven: false,
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
            final_guards: Vec::new(),
            guard_refusals: Vec::new(),
            deferred: Vec::new(),
            committed: false,
            inner_round_trips: 0,
            constraint_refusals: Vec::new(),
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
    /// check still pending. Fails with the check's refusal if one fails, and with
    /// an internal error if a route not marked `reaches_content` asks for content.
    pub async fn read(&mut self, statements: Vec<Statement>) -> Result<Vec<QueryResult>, Refusal> {
        if !self.route.reaches_content
            && let Some(statement) = statements.iter().find(|statement| names_content(&statement.sql))
        {
            return Err(self.internal(format!(
                "{} reads message content ({}) but its route is not marked reaches_content",
                self.route.tool, statement.sql
            )));
        }
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
            if let Check::AgentLive { .. } = pending.check {
                self.delegator = pending.check.proven_sponsor(&result);
                self.credential_unproven = self.delegator.is_none();
            }
            if self.failed_check.is_some() {
                continue;
            }
            if let Err(refusal) = pending.check.settle(&result) {
                self.failed_check = Some(refusal);
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

    /// A received message's raw bytes from the object store. Only a route marked
    /// `reaches_content` may ask, so a content read is always audited.
    pub async fn content_blob(&self, key: &str) -> Result<Option<Vec<u8>>, Refusal> {
        if !self.route.reaches_content {
            return Err(self.internal(format!(
                "{} reads a raw message but its route is not marked reaches_content",
                self.route.tool
            )));
        }
        self.node.blobs.get(key).await.map_err(|error| self.internal(error.0))
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

    /// A statement that fails its slot's CHECK when `condition` is false.
    fn guard_statement(
        &mut self,
        condition: &str,
        parameters: Vec<crate::storage::Value>,
        refusal: Refusal,
    ) -> Statement {
        self.guard_refusals.push(refusal);
        let slot = self.guard_refusals.len().min(WRITE_GUARD_SLOTS);
        debug_assert!(
            self.guard_refusals.len() <= WRITE_GUARD_SLOTS,
            "a call registered more guards than there are slots"
        );
        Statement {
            sql: format!("INSERT INTO write_guards (slot_{slot}) SELECT 1 WHERE NOT ({condition})").into(),
            parameters,
        }
    }

    /// Makes the commit conditional: `condition` (an SQL boolean expression, with
    /// its parameters) is evaluated after the queued writes, inside the same
    /// transaction, and if it is false nothing applies and `refusal` is answered.
    /// This is how an invariant such as "an administrator remains" holds under
    /// concurrent requests, without a read-then-write race.
    pub fn guard(&mut self, condition: Statement, refusal: impl Into<Refusal>) {
        let statement = self.guard_statement(&condition.sql, condition.parameters, refusal.into());
        self.final_guards.push(statement);
    }

    /// Queues a change that must change exactly one row, or the whole commit is
    /// refused with `refusal`. An `UPDATE … WHERE state = 'submitted'` that finds
    /// the state already moved (another request decided first) changes nothing, and
    /// this turns that into a refusal instead of a success that did nothing.
    pub fn write_changing_one_row(&mut self, statement: Statement, refusal: impl Into<Refusal>) {
        self.writes.push(statement);
        let guard = self.guard_statement("changes() = 1", Vec::new(), refusal.into());
        self.writes.push(guard);
    }

    /// Queues a write to run after the response is sent, outside the transaction
    /// and the audit row: only for recording an outcome that happened after the
    /// commit, such as a dispatch.
    pub fn defer_write(&mut self, statement: Statement) {
        self.deferred.push(statement);
    }

    /// Re-enters the dispatcher in process with `request` (the MCP server's tool
    /// calls). The inner call reads the same credential and makes the same checks
    /// in its own first round trip, so this call's own pending checks are handed
    /// over rather than run twice; its round trips and deferred writes count as
    /// this call's.
    pub async fn reenter(&mut self, request: Request) -> Response {
        self.pending_checks.clear();
        let response = Box::pin(crate::dispatch::dispatch(self.node, &request, Surface::Mcp)).await;
        self.inner_round_trips += response.round_trips;
        self.deferred.extend(response.deferred.iter().cloned());
        response
    }

    /// Commits the queued writes and the audit row now, before the handler goes on
    /// to do something that must follow a durable record (handing a sealed send to
    /// the mail binding). On a guard's refusal, that refusal is recorded and returned.
    pub async fn commit_now(&mut self) -> Result<(), Refusal> {
        if !self.pending_checks.is_empty() || self.chain_head.is_none() {
            self.read(Vec::new()).await?;
        }
        self.committed = true;
        let placeholder = Ok(Response::json(200, &serde_json::Value::Null));
        self.commit(placeholder).await.map(|_| ())
    }

    /// Answers `refusal` instead of an internal error if the commit breaks the
    /// UNIQUE constraint on `table.column` (a concurrent request got there first),
    /// or a trigger aborts with `refused:<constraint>`.
    pub fn on_constraint_violation(&mut self, constraint: &'static str, refusal: impl Into<Refusal>) {
        self.constraint_refusals.push((constraint, refusal.into()));
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
        if !self.committed && (!self.pending_checks.is_empty() || (self.audited && self.chain_head.is_none())) {
            if let Err(refusal) = self.read(Vec::new()).await {
                outcome = Err(refusal);
            }
        }
        if let Some(refusal) = &self.failed_check {
            outcome = Err(refusal.clone());
        }
        let outcome = if self.committed {
            outcome
        } else if self.audited && self.identified() {
            self.commit(outcome).await
        } else if (!self.writes.is_empty() && outcome.is_ok()) || !self.attempt_writes.is_empty() {
            // Every changing route is audited, so this is unreachable by the
            // contract; committing without a record would be worse than refusing.
            Err(self.internal("a route with writes was not audited"))
        } else {
            outcome
        };
        let round_trips = self.database.round_trips() + self.inner_round_trips;
        let mut response = match outcome {
            Ok(response) => response,
            Err(refusal) => Response::refusal(&refusal),
        };
        response.headers.extend(self.response_headers);
        response.round_trips = round_trips;
        response.deferred = self.deferred;
        response
    }

    /// Whether the call can be attributed: a public route, or a caller who named
    /// themself with a credential the node issued (a person's signed token; an
    /// agent's credential once its secret matched).
    fn identified(&self) -> bool {
        self.route.authority == mailroom_contract::Authority::Public
            || (self.caller.actor_id().is_some() && !self.credential_unproven)
    }

    async fn commit(&mut self, outcome: Result<Response, Refusal>) -> Result<Response, Refusal> {
        let mut outcome = outcome;
        // A guard or constraint turns a success into a refusal, whose audit row is
        // then committed on its own: at most one such turn, so at most two tries.
        // Handlers ask the same question in their first read, so this second try
        // happens only when a concurrent request changed the answer in between.
        for _ in 0..2 {
            let record = self.record(&outcome);
            let mut batch = self.attempt_writes.clone();
            if outcome.is_ok() {
                batch.extend(self.writes.iter().cloned());
                batch.extend(self.final_guards.iter().cloned());
            }
            let committed =
                audit::commit(&self.database, self.node.platform, &mut self.chain_head, batch, &record).await;
            match committed {
                Ok(()) => return outcome,
                Err(CommitError::Busy) => return Err(Refusal::busy()),
                Err(CommitError::Storage(StorageError::Check(constraint)))
                    if constraint.starts_with(WRITE_GUARD_PREFIX) && outcome.is_ok() =>
                {
                    let slot: usize = constraint[WRITE_GUARD_PREFIX.len()..].parse().unwrap_or(1);
                    let refusal = self.guard_refusals.get(slot.saturating_sub(1)).cloned();
                    outcome = Err(refusal.unwrap_or_else(Refusal::internal));
                }
                Err(CommitError::Storage(error)) if outcome.is_ok() && self.refusal_for(&error).is_some() => {
                    outcome = Err(self.refusal_for(&error).unwrap_or_else(Refusal::internal));
                }
                Err(CommitError::Storage(error)) => return Err(self.internal(error)),
            }
        }
        Err(Refusal::internal())
    }

    /// The refusal a handler registered for this constraint failure, if any.
    fn refusal_for(&self, error: &StorageError) -> Option<Refusal> {
        let name = match error {
            StorageError::Unique(name) | StorageError::Aborted(name) => name,
            _ => return None,
        };
        self.constraint_refusals.iter().find(|(constraint, _)| constraint == name).map(|(_, refusal)| refusal.clone())
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
            delegator: self.delegator.clone(),
            surface: Some(self.surface.as_str()),
            action: self.route.tool.to_string(),
            object,
            outcome: outcome_name,
            detail: detail.map(|detail| detail.to_string()),
        }
    }
}

/// What in SQL reaches message content: the stored text of bodies, and the index
/// over it. Reading either is what `reaches_content` declares.
const CONTENT_NAMES: &[&str] = &["text_body", "receipt_bodies_index"];

fn names_content(sql: &str) -> bool {
    CONTENT_NAMES.iter().any(|name| sql.contains(name))
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
