//! `Context`, everything a handler may use, put together from the request as
//! read, the unit of work and the audit note; and `Admitted`, what the
//! dispatcher hands it. A read that names message content is refused here
//! unless the route declares `reaches_content`.

use mailroom_contract::{Accepts, Authority, PathParameter, Route};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::core::caller::{AgentProof, Caller};
use crate::core::events::{Event, Listening, Told, Topic};
use crate::core::http::{Request, Response, Surface};
use crate::core::node::Node;
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Statement, StorageError};
use crate::core::timing::Phase;

use super::note::AuditNote;
use super::ports::{Ledger, PendingCheck, Reentry};
use super::request::RequestView;
use super::work::{UnitOfWork, WorkError};

/// What the dispatcher hands a handler's context: the route it matched, the
/// request as read, who the request claims to be, the checks the route's
/// authority needs, and the chain its call is recorded in.
pub struct Admitted<'request> {
    pub route: &'static Route,
    pub request: &'request Request,
    pub surface: Surface,
    /// The time the request is handled at, read once from the platform.
    pub now_ms: i64,
    pub caller: Caller,
    pub path: Vec<(PathParameter, String)>,
    pub query: Vec<(String, String)>,
    pub checks: Vec<PendingCheck>,
    /// Whether the route's calls are recorded (`Registry::is_audited`).
    pub audited: bool,
    pub ledger: &'request dyn Ledger,
    /// The dispatcher, for a surface that re-enters it.
    pub reentry: Reentry,
}

/// Everything a handler may use.
pub struct Context<'request> {
    node: &'request Node<'request>,
    view: RequestView<'request>,
    work: UnitOfWork<'request>,
    note: AuditNote,
    response_headers: Vec<(String, String)>,
    reentry: Reentry,
}

impl<'request> Context<'request> {
    pub fn new(node: &'request Node<'request>, admitted: Admitted<'request>) -> Context<'request> {
        Context {
            node,
            view: RequestView::new(
                admitted.route,
                admitted.request,
                admitted.now_ms,
                admitted.surface,
                admitted.path,
                admitted.query,
            ),
            work: UnitOfWork::new(node, admitted.ledger, admitted.checks),
            note: AuditNote::new(admitted.caller, admitted.audited),
            response_headers: Vec::new(),
            reentry: admitted.reentry,
        }
    }

    // ---- The request, as read.

    pub fn route(&self) -> &'static Route {
        self.view.route()
    }

    /// The HTTP request: headers, body, the client's address.
    pub fn request(&self) -> &'request Request {
        self.view.request()
    }

    /// The time this request is handled at.
    pub fn now_ms(&self) -> i64 {
        self.view.now_ms()
    }

    pub fn surface(&self) -> Surface {
        self.view.surface()
    }

    /// A path parameter the route declares. Asking for one it does not declare is
    /// a defect in the handler: an internal error, never a 404 that hides it.
    pub fn path(&self, parameter: PathParameter) -> Result<&str, Refusal> {
        self.view.path(parameter).ok_or_else(|| {
            self.internal(format!(
                "{} asks for the path parameter {}, which its path lacks",
                self.route().tool,
                parameter.name()
            ))
        })
    }

    /// A query parameter, if the request sent it.
    pub fn query(&self, name: &str) -> Option<&str> {
        self.view.query(name)
    }

    /// A query parameter the route declares as a whole number, if the request
    /// sent it. The dispatcher has already refused a value the declaration does
    /// not accept, so reading one it does not declare, or one that does not
    /// parse, is a defect in the handler: an internal error.
    pub fn whole_number(&self, name: &str) -> Result<Option<i64>, Refusal> {
        let declared = self.route().query_parameter(name).map(|parameter| parameter.accepts);
        if !matches!(declared, Some(Accepts::WholeNumber { .. })) {
            return Err(self.internal(format!("{} reads {name} as a number it does not declare", self.route().tool)));
        }
        self.query(name)
            .map(|text| text.parse().map_err(|_| self.internal(format!("an accepted {name} does not parse"))))
            .transpose()
    }

    /// Decodes the JSON body into the route's request type, naming the field at fault.
    pub fn body<T: DeserializeOwned>(&self) -> Result<T, Refusal> {
        self.measured(Phase::Parse, || self.view.body())
    }

    /// Decodes an optional JSON body: an empty body is the type's default.
    pub fn optional_body<T: DeserializeOwned + Default>(&self) -> Result<T, Refusal> {
        self.measured(Phase::Parse, || self.view.optional_body())
    }

    // ---- Who is calling.

    /// Who the request claims to be; confirmed by the first read.
    pub fn caller(&self) -> &Caller {
        self.note.caller()
    }

    /// For an agent, the sponsor its acts are recorded under.
    pub fn delegator(&self) -> Option<&str> {
        self.note.delegator()
    }

    /// Attributes this call to a person whose session it has just proved (a
    /// sign-in, a refresh): its entry names them.
    pub fn attribute_to_person(&mut self, person_id: String, session_id: String) {
        self.note.attribute_to_person(person_id, session_id);
    }

    /// Attributes this call to an agent it has just proved, acting for `sponsor`
    /// (a pairing code redeemed for the agent's credential, an OAuth code or
    /// refresh token exchanged for the agent's tokens).
    pub fn attribute_to_agent(&mut self, agent_id: String, proof: AgentProof, sponsor: String) {
        self.note.attribute_to_agent(agent_id, proof, sponsor);
    }

    // ---- The node's platform and bindings.

    pub fn node(&self) -> &'request Node<'request> {
        self.node
    }

    pub fn platform(&self) -> &'request dyn crate::core::platform::Platform {
        self.node.platform
    }

    pub fn config(&self) -> &'request crate::core::node::Config {
        self.node.config
    }

    /// Does `work`, its time charged to `phase` (`core::timing`): for a surface
    /// that reads or writes its own protocol's messages (the MCP server's
    /// JSON-RPC).
    pub fn measured<T>(&self, phase: Phase, work: impl FnOnce() -> T) -> T {
        let _phase = self.node.timings.during(self.node.platform, phase);
        work()
    }

    // ---- Reading and writing.

    /// Runs `statements` and returns their results, in the same round trip as every
    /// check still pending. Fails with the check's refusal if one fails, and with
    /// an internal error if a route not marked `reaches_content` asks for content.
    pub async fn read(&mut self, statements: Vec<Statement>) -> Result<Vec<QueryResult>, Refusal> {
        self.refuse_undeclared_content(&statements)?;
        match self.work.read(statements, &mut self.note).await {
            Ok(results) => Ok(results),
            Err(error) => Err(self.refusal(error)),
        }
    }

    /// An internal error if `statements` read message content and the route
    /// is not marked `reaches_content`: a content read is always declared, so
    /// always audited.
    fn refuse_undeclared_content<'a>(
        &self,
        statements: impl IntoIterator<Item = &'a Statement>,
    ) -> Result<(), Refusal> {
        match statements.into_iter().find(|statement| names_content(&statement.sql)) {
            Some(statement) if !self.route().reaches_content => Err(self.internal(format!(
                "{} reads message content ({}) but its route is not marked reaches_content",
                self.route().tool,
                statement.sql
            ))),
            _ => Ok(()),
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

    /// Runs `statements` in mailbox `mailbox_id`'s own database (decision
    /// 0040), at the same time as every check still pending on D1, and returns
    /// their results only once every check passed: the route's authority is
    /// decided on D1, and the mailbox's database is handed only what it
    /// admitted. Content is refused as for `read`.
    pub async fn read_in_mailbox(
        &mut self,
        mailbox_id: &str,
        statements: Vec<Statement>,
    ) -> Result<Vec<QueryResult>, Refusal> {
        let mut answered = self.read_in_mailboxes(vec![(mailbox_id.to_string(), statements)]).await?;
        answered.pop().ok_or_else(Refusal::internal)
    }

    /// `read_in_mailbox` in several mailboxes at once (a list or a search over
    /// every mailbox the caller may read), each with its own statements:
    /// their results in the order asked, for `paging::merge`. One round
    /// trip's time; at most `MAILBOXES_PER_READ` mailboxes, each a
    /// subrequest, so a longer list is paged.
    pub async fn read_in_mailboxes(
        &mut self,
        reads: Vec<(String, Vec<Statement>)>,
    ) -> Result<Vec<Vec<QueryResult>>, Refusal> {
        self.refuse_undeclared_content(reads.iter().flat_map(|(_, statements)| statements))?;
        match self.work.read_in_mailboxes(reads, &mut self.note).await {
            Ok(results) => Ok(results),
            Err(error) => Err(self.refusal(error)),
        }
    }

    /// `read` on D1 and, at the same time, `in_mailbox` in mailbox
    /// `mailbox_id`'s own database if it was ever created (a read asked
    /// before the checks pass creates none): one round trip's time, both
    /// answered only once every check passed. The mailbox's answer is its
    /// results (no row to each statement from a database never created, which
    /// holds nothing), or why it has none, for the caller to weigh against
    /// what D1 says. Content is refused as for `read`.
    pub async fn read_beside_mailbox(
        &mut self,
        on_d1: Vec<Statement>,
        mailbox_id: &str,
        in_mailbox: Vec<Statement>,
    ) -> Result<(Vec<QueryResult>, Result<Vec<QueryResult>, StorageError>), Refusal> {
        let (on_d1, mut in_mailboxes) =
            self.read_beside_mailboxes(on_d1, vec![(mailbox_id.to_string(), in_mailbox)]).await?;
        Ok((on_d1, in_mailboxes.pop().unwrap_or_else(|| Ok(Vec::new()))))
    }

    /// `read_beside_mailbox` in several mailboxes at once (each with its own
    /// statements, at most `MAILBOXES_PER_READ`): D1's results, and each
    /// mailbox's, in the order asked, or why it has none.
    pub async fn read_beside_mailboxes(
        &mut self,
        on_d1: Vec<Statement>,
        reads: Vec<(String, Vec<Statement>)>,
    ) -> Result<(Vec<QueryResult>, Vec<Result<Vec<QueryResult>, StorageError>>), Refusal> {
        self.refuse_undeclared_content(&on_d1)?;
        self.refuse_undeclared_content(reads.iter().flat_map(|(_, statements)| statements))?;
        match self.work.read_beside_mailboxes(on_d1, reads, &mut self.note).await {
            Ok(results) => Ok(results),
            Err(error) => Err(self.refusal(error)),
        }
    }

    /// Queues a change of mailbox `mailbox_id`'s own database, committed there
    /// with the call's entry in the mailbox's segment of the chain if the
    /// handler succeeds; guards are then evaluated there too. A call changes
    /// one database: asking to write to a second is an internal error.
    pub fn write_in_mailbox(&mut self, mailbox_id: &str, statement: Statement) -> Result<(), Refusal> {
        self.work.write_in_mailbox(mailbox_id, statement).map_err(|error| self.refusal(error))
    }

    /// `write_in_mailbox` for a change that must change exactly one row, or
    /// the whole commit is refused with `refusal` (`write_changing_one_row`).
    pub fn write_in_mailbox_changing_one_row(
        &mut self,
        mailbox_id: &str,
        statement: Statement,
        refusal: impl Into<Refusal>,
    ) -> Result<(), Refusal> {
        let refusal = refusal.into();
        self.work.write_in_mailbox_changing_one_row(mailbox_id, statement, refusal).map_err(|error| self.refusal(error))
    }

    /// A received message's raw bytes from the object store. Only a route marked
    /// `reaches_content` may ask, so a content read is always audited.
    pub async fn content_blob(&self, key: &str) -> Result<Option<Vec<u8>>, Refusal> {
        if !self.route().reaches_content {
            return Err(self.internal(format!(
                "{} reads a raw message but its route is not marked reaches_content",
                self.route().tool
            )));
        }
        self.node.blobs.get(key).await.map_err(|error| self.internal(error.0))
    }

    /// Queues a change, to be committed with the audit row if the handler succeeds.
    pub fn write(&mut self, statement: Statement) {
        self.work.write(statement);
    }

    /// Queues a change that stands whatever the outcome, such as counting a failed
    /// sign-in: it is committed with the audit row of a refusal as well as a success.
    pub fn write_whatever_the_outcome(&mut self, statement: Statement) {
        self.work.write_whatever_the_outcome(statement);
    }

    /// Makes the commit conditional: `condition` (an SQL boolean expression, with
    /// its parameters) is evaluated after the queued writes, inside the same
    /// transaction, and if it is false nothing applies and `refusal` is answered.
    /// This is how an invariant such as "an administrator remains" holds under
    /// concurrent requests, without a read-then-write race.
    pub fn guard(&mut self, condition: Statement, refusal: impl Into<Refusal>) {
        self.work.guard(condition, refusal.into());
    }

    /// Queues a change that must change exactly one row, or the whole commit is
    /// refused with `refusal`. An `UPDATE … WHERE state = 'submitted'` that finds
    /// the state already moved (another request decided first) changes nothing, and
    /// this turns that into a refusal instead of a success that did nothing.
    pub fn write_changing_one_row(&mut self, statement: Statement, refusal: impl Into<Refusal>) {
        self.work.write_changing_one_row(statement, refusal.into());
    }

    /// `defer_write` for a mailbox whose mail is in its own database: run
    /// there, after the response, outside the transaction and the entry.
    pub fn defer_write_in_mailbox(&mut self, mailbox_id: &str, statement: Statement) {
        self.work.defer_write_in_mailbox(mailbox_id, statement);
    }

    /// Queues a write on D1 to run after the response is sent, and only if the
    /// call's change in a mailbox's own database committed: what follows such
    /// a change in D1 (a notice in someone's feed), which cannot share its
    /// transaction. Written at most once; a failure is logged.
    pub fn defer_write_on_success(&mut self, statement: Statement) {
        self.work.defer_write_on_success(statement);
    }

    /// Queues a write to run after the response is sent, outside the transaction
    /// and the audit row: only for recording an outcome that happened after the
    /// commit, such as a dispatch.
    pub fn defer_write(&mut self, statement: Statement) {
        self.work.defer_write(statement);
    }

    /// Answers `refusal` instead of an internal error if the commit breaks the
    /// UNIQUE constraint on `table.column` (a concurrent request got there first),
    /// or a trigger aborts with `refused:<constraint>`.
    pub fn on_constraint_violation(&mut self, constraint: &'static str, refusal: impl Into<Refusal>) {
        self.work.on_constraint_violation(constraint, refusal.into());
    }

    /// Handles the call again if the commit breaks the UNIQUE constraint on
    /// `table.column`: a concurrent call stored the same thing first (a
    /// message under the same idempotency key). Nothing of this handling is
    /// applied or recorded; the dispatcher runs the handler once more, whose
    /// first read finds what the winner stored and answers as a repeat would.
    /// Two more round trips, only for the call that lost the race.
    pub fn on_constraint_violation_handle_again(&mut self, constraint: &'static str) {
        self.work.on_constraint_violation_handle_again(constraint);
    }

    /// Commits the queued writes and the audit row now, before the handler goes on
    /// to do something that must follow a durable record (handing a sealed send to
    /// the mail binding). On a guard's refusal, that refusal is recorded and returned.
    pub async fn commit_now(&mut self) -> Result<(), Refusal> {
        if self.work.owes_a_read() {
            self.read(Vec::new()).await?;
        }
        let placeholder = Ok(Response::json(200, &serde_json::Value::Null));
        self.commit(placeholder).await.map(|_| ())
    }

    /// Commits like `commit_now`, and answers the results of the handler's own
    /// queued writes, in order: what their `RETURNING` clauses gave, for a
    /// change whose outcome only the statement itself knows (a claim's leases).
    pub async fn commit_returning(&mut self) -> Result<Vec<QueryResult>, Refusal> {
        self.commit_now().await?;
        Ok(self.work.take_write_results())
    }

    /// Commits like `commit_now`, running `statements` on D1 in the same batch
    /// (or, for a call that changes a mailbox's database, on D1 at the same
    /// time), and answers their results: for a call that is recorded in the
    /// chain, and so commits anyway, a read that must follow another's answer
    /// (the names of the people a mailbox's rows mention, once the mailbox has
    /// answered) costs no round trip of its own. The call's outcome is then a
    /// success.
    pub async fn read_as_it_commits(&mut self, statements: Vec<Statement>) -> Result<Vec<QueryResult>, Refusal> {
        if self.work.writes_in_a_mailbox() {
            // A mailbox's database shares no transaction with D1: the read goes
            // to D1 at the same time as the commit goes to the mailbox.
            self.work.read_beside_commit(statements);
            self.commit_now().await?;
            return Ok(self.work.take_beside_results());
        }
        let asked = statements.len();
        for statement in statements {
            self.work.write(statement);
        }
        let mut results = self.commit_returning().await?;
        Ok(results.split_off(results.len().saturating_sub(asked)))
    }

    /// Commits like `commit_now` and, at the same time, reads `reads` (each a
    /// mailbox and its statements, at most `MAILBOXES_PER_READ`) in those
    /// mailboxes' own databases: for a call recorded in the chain that learns
    /// from its first read on D1 which mailboxes to ask (a search across
    /// mailboxes whose mail moved), the entry commits as they are read, one
    /// round trip for both, and nothing is answered that was not recorded.
    /// Answers each mailbox's results, in the order asked; a mailbox that
    /// could not answer fails the call, after its entry.
    pub async fn read_in_mailboxes_as_it_commits(
        &mut self,
        reads: Vec<(String, Vec<Statement>)>,
    ) -> Result<Vec<Vec<QueryResult>>, Refusal> {
        self.refuse_undeclared_content(reads.iter().flat_map(|(_, statements)| statements))?;
        if let Err(error) = self.work.read_in_mailboxes_beside_commit(reads) {
            return Err(self.refusal(error));
        }
        self.commit_now().await?;
        self.work
            .take_in_mailboxes_beside_results()
            .into_iter()
            .map(|answered| answered.map_err(|error| self.internal(error)))
            .collect()
    }

    /// Leaves this call out of the audit chain because it changed nothing and
    /// read no content: a poll of an empty inbox, which agents repeat every few
    /// seconds, would otherwise write an entry each time. Only before any
    /// write is queued; a call that then queues one is refused as unaudited.
    pub fn leave_unrecorded(&mut self) {
        if !self.route().reaches_content && !self.work.has_writes(true) {
            self.note.leave_unrecorded();
        }
    }

    // ---- Calls that re-enter the dispatcher (the MCP server's tool calls).

    /// Re-enters the dispatcher with `request`, as this call's caller (the
    /// request carries the same credentials) on `surface`, and counts the
    /// answer's round trips, commits and deferred writes as this call's. The
    /// first re-entry takes over this call's pending checks: the inner call
    /// reads the same credential and makes the same checks in its own first
    /// round trip. `decided`: see [`Reentry`].
    pub async fn reenter(&mut self, request: &Request, surface: Surface, decided: Option<Refusal>) -> Response {
        self.work.hand_over_checks();
        let response = (self.reentry)(self.node, request, surface, decided).await;
        self.work.absorb(&response);
        response
    }

    // ---- The audit entry and the answer.

    /// Opens, as the caller, the listening route `listening` asks for (the
    /// request to it, without the upgrade), re-entering the router over
    /// `surface`: the route's admission with the request a hub replays to ask
    /// again, or the route's own answer refusing it. For a surface that follows
    /// a topic on its own answer (`Following`).
    pub async fn admit_listener(
        &mut self,
        mut listening: Request,
        surface: Surface,
    ) -> Result<(Listening, Request), Response> {
        listening.headers.push(("upgrade".into(), "websocket".into()));
        let admitted = self.reenter(&listening, surface, None).await;
        let Some(admission) = admitted.listen.clone() else { return Err(admitted) };
        listening.headers.retain(|(name, _)| name != "upgrade");
        Ok((admission, listening))
    }

    /// Names the object this call acts on, for its audit entry.
    pub fn audit_object(&mut self, object: impl Into<String>) {
        self.note.object(object.into());
    }

    /// Notes that this change queues a message for an agent elsewhere, so
    /// the outbox runs once the answer is sent.
    pub fn queue_remote_delivery(&mut self) {
        self.work.queue_remote_delivery();
    }

    /// Tells this call's change on `topic` instead of the one its route's
    /// declaration gives (`core::events::topic_of_call`): for a change whose
    /// listener only the handler knows, such as the agent a message is for.
    pub fn tell_on(&mut self, topic: Topic) {
        self.note.topic(topic);
    }

    /// Tells this call's change on `topic` as well as where its entry is told:
    /// for a notification it adds to someone's own feed (a conversation
    /// assigned to them, their send refused or sent).
    pub fn tell_also(&mut self, topic: Topic) {
        self.work.tell_also(topic);
    }

    /// Tells `topic` that this call changed `object`, once its commit landed
    /// (nothing, before): for listeners only the committed rows name, such as
    /// the requesters whose messages a claim leased.
    /// Its deliveries to subscribed endpoints were queued in the commit
    /// itself, by `queue_told_by`.
    pub fn tell_committed(&mut self, topic: Topic, object: &str) {
        if self.work.committed() {
            let kind = self.route().tool.to_string();
            self.node.events.push(Event { topic, kind, object: Some(object.to_string()), at: self.now_ms() });
        }
    }

    /// Queues, in this call's commit, the deliveries to subscribed endpoints
    /// of what it tells on topics only its committed rows name (the
    /// requesters whose messages a claim leases): `selected` answers a
    /// `topic` and an `object` per row, read after the call's writes in the
    /// same batch. Listeners are told with `tell_committed` once it lands.
    pub fn queue_told_by(&mut self, selected: Told) {
        self.work.queue_told_by(selected);
    }

    /// Records further facts about this call in its audit entry. Never a secret.
    pub fn audit_detail(&mut self, detail: serde_json::Value) {
        self.note.detail(detail);
    }

    /// Adds a header (such as `Set-Cookie`) to the response, whatever its body.
    pub fn response_header(&mut self, name: &str, value: String) {
        self.response_headers.push((name.to_string(), value));
    }

    /// The route's success answer with `body`.
    pub fn json<T: Serialize>(&self, body: &T) -> Response {
        self.measured(Phase::Serialise, || Response::json(self.route().success_status, body))
    }

    /// Logs an internal failure for the operator and returns the detail-free refusal.
    pub fn internal(&self, error: impl std::fmt::Display) -> Refusal {
        let route = self.route();
        self.node.platform.log(&format!("{} {}: {error}", route.method.as_str(), route.path));
        Refusal::internal()
    }

    fn refusal(&self, error: WorkError) -> Refusal {
        match error {
            WorkError::Refused(refusal) => refusal,
            WorkError::Internal(detail) => self.internal(detail),
        }
    }

    async fn commit(&mut self, outcome: Result<Response, Refusal>) -> Result<Response, Refusal> {
        let _audit = self.node.timings.during(self.node.platform, Phase::Audit);
        let Context { view, work, note, .. } = self;
        let committed = work.commit(outcome, |outcome| note.record(outcome, view)).await;
        committed.map_err(|error| self.refusal(error))
    }

    /// Commits a refusal of a call made without a proven credential, as a counted
    /// attempt rather than an entry of its own.
    async fn commit_attempt(&mut self, refusal: Refusal) -> Result<Response, Refusal> {
        let _audit = self.node.timings.during(self.node.platform, Phase::Audit);
        let record = self.note.record(&Err(refusal.clone()), &self.view);
        let committed = self.work.commit_attempt(refusal, &record).await;
        committed.map_err(|error| self.refusal(error))
    }

    /// Turns the handler's result into the response: confirms any checks the
    /// handler did not need a read for, then commits its writes and the audit row.
    pub async fn finish(mut self, outcome: Result<Response, Refusal>) -> Response {
        let mut outcome = outcome;
        let audited = self.note.audited();
        if !self.work.committed()
            && self.work.owes_a_read()
            && let Err(refusal) = self.read(Vec::new()).await
        {
            outcome = Err(refusal);
        }
        if let Some(refusal) = self.work.failed_check() {
            outcome = Err(refusal.clone());
        }
        let public = self.route().authority == Authority::Public;
        let outcome = if self.work.queued_after_commit() {
            Err(self.internal("a change was queued after the call committed, so nothing would write it"))
        } else if self.work.committed() {
            outcome
        } else if audited
            && public
            && !self.note.attributed()
            && let Err(refusal) = outcome
        {
            // Refused before anyone proved who they are (a wrong password, a wrong
            // pairing code, a rate-limited try): counted, not written one by one.
            self.commit_attempt(refusal).await
        } else if audited && self.note.identified(public) {
            self.commit(outcome).await
        } else if self.work.has_writes(outcome.is_ok()) {
            // Every changing route is audited, so this is unreachable by the
            // contract; committing without a record would be worse than refusing.
            Err(self.internal("a route with writes was not audited"))
        } else {
            outcome
        };
        let mut response = match outcome {
            Ok(response) => response,
            Err(refusal) => self.measured(Phase::Serialise, || Response::refusal(&refusal.answered_by(self.route()))),
        };
        response.headers.extend(std::mem::take(&mut self.response_headers));
        response.round_trips = self.work.round_trips();
        response.commit_attempts = self.work.commit_attempts();
        response.handle_again = self.work.lost_race();
        response.seal_chain |= self.work.appended();
        response.remote_deliveries_queued |= self.work.remote_deliveries_queued();
        response.seal_segment = response.seal_segment.take().or_else(|| self.work.appended_segment());
        response.deferred = self.work.take_deferred();
        response
    }
}

/// What in SQL reaches message content: the stored text of bodies, and the index
/// over it. Reading either is what `reaches_content` declares.
const CONTENT_NAMES: &[&str] = &["text_body", "receipt_bodies_index"];

fn names_content(sql: &str) -> bool {
    CONTENT_NAMES.iter().any(|name| sql.contains(name))
}
