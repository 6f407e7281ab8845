//! The outbox (SPEC §14, decision 0050): messages to agents elsewhere,
//! delivered over A2A by a run after the answer that queued them and by the
//! per-minute schedule.
//!
//! A run claims the deliveries due, so two runs never work on one at once.
//! For each it judges again what the send judged (the sender may still send,
//! its policy still reaches the agent, the message still waits), reads the
//! agent's card when what it said is no longer fresh, sends the message as an
//! A2A `SendMessage` (or 0.3's `message/send`, as the card says) whose
//! `messageId` is the message's own id, so a retry is the same message, and
//! then asks how the task stands (`GetTask`) until it ends. Every attempt is
//! recorded for the owner; a failure is tried again after
//! `REMOTE_RETRY_AFTER_SECONDS` until the owner's `maximum_attempts` are
//! spent, and an address the node may not reach fails at once. The answer
//! becomes the message's reply, recorded in the audit chain with the agent
//! elsewhere named and the content left out.

use mailroom_contract::api::{
    REMOTE_ANSWER_MAXIMUM_BYTES, REMOTE_CARD_MAXIMUM_BYTES, REMOTE_POLL_SECONDS, REMOTE_RETRY_AFTER_SECONDS,
    REMOTE_URL_MAXIMUM,
};
use serde_json::{Value, json};

use super::client::{answered, card_endpoint, freshness_seconds, push_token, push_url, send_request, stored_parts};

use crate::core::background::{Background, BackgroundError};
use crate::core::context::ports::AuditRecord;
use crate::core::crypto::sha256_hex;
use crate::core::events::Topic;
use crate::core::ids::{IdKind, new_id};
use crate::core::outbound::{self, Destination, Host};
use crate::core::storage::{Row, Statement, StorageError};
use crate::messaging::{self, EndedElsewhere};
use crate::peers::{self, Progress, RemoteAddress};

/// How many deliveries one run claims.
const CLAIMED_PER_RUN: usize = 10;
/// How long a run's claim holds: longer than its requests can take.
const CLAIM_MS: i64 = 120_000;
/// How many times one run claims what is due.
const PASSES_PER_RUN: usize = 3;
/// How long the outbox waits while the sender is paused.
const PAUSED_RETRY_MS: i64 = 60_000;

/// What one run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutboxReport {
    /// Accepted elsewhere, or answered there.
    pub progressed: usize,
    /// Failed this time, to be tried again.
    pub retrying: usize,
    /// Ended for good: failed, or stopped here.
    pub ended: usize,
}

/// One claimed delivery, with what the run needs to judge and send it.
struct Due {
    message_id: String,
    remote_agent_id: String,
    sender_id: String,
    sent: bool,
    attempts: i64,
    remote_task_id: Option<String>,
    /// The last word of progress brought into the conversation.
    progress_key: Option<String>,
    /// The agent elsewhere's context for this conversation, learned from an
    /// earlier message of it: this one continues it.
    remote_context_id: Option<String>,
    kind: String,
    content: String,
    message_state: String,
    expires_at: i64,
    card_url: String,
    domain: String,
    endpoint_url: Option<String>,
    protocol_version: Option<String>,
    card_fresh_until: i64,
    /// Whether the card says the agent pushes its tasks' changes.
    push_notifications: bool,
    outbound_credential: Option<String>,
    /// The domain of the peer whose credential that is.
    peer_domain: Option<String>,
    sender_stopped: Option<String>,
    remote_recipients: Option<String>,
    maximum_attempts: i64,
    /// When this run claimed it.
    claimed_at: i64,
}

impl Due {
    fn of(row: &Row, claimed_at: i64) -> Result<Due, StorageError> {
        Ok(Due {
            claimed_at,
            message_id: row.text("message_id")?,
            remote_agent_id: row.text("remote_agent_id")?,
            sender_id: row.text("sender_id")?,
            sent: row.text("state")? == "sent",
            attempts: row.integer("attempts")?,
            remote_task_id: row.optional_text("remote_task_id")?,
            progress_key: row.optional_text("progress_key")?,
            remote_context_id: row.optional_text("remote_context_id")?,
            kind: row.text("kind")?,
            content: row.text("content")?,
            message_state: row.text("message_state")?,
            expires_at: row.integer("expires_at")?,
            card_url: row.text("card_url")?,
            domain: row.text("domain")?,
            endpoint_url: row.optional_text("endpoint_url")?,
            protocol_version: row.optional_text("protocol_version")?,
            card_fresh_until: row.optional_integer("card_fresh_until")?.unwrap_or(0),
            push_notifications: row.integer("push_notifications")? != 0,
            outbound_credential: row.optional_text("outbound_credential")?,
            peer_domain: row.optional_text("peer_domain")?,
            sender_stopped: row.optional_text("sender_stopped")?,
            remote_recipients: row.optional_text("remote_recipients")?,
            maximum_attempts: row.integer("maximum_attempts")?,
        })
    }
}

/// How one step ended.
enum Step {
    /// The message ended elsewhere (answered, acknowledged, rejected).
    Ended(EndedElsewhere),
    /// Accepted: its task is to be asked after; with the word of progress
    /// its status gave, when that is new.
    Accepted { task_id: String, progress: Option<WordOfProgress> },
    /// Failed, worth trying again.
    Retry(String),
    /// Failed for good.
    Dead(String),
}

/// A working task's word of progress, to be stored as an event from the agent
/// elsewhere: its key (the status message's id, or its parts' digest), its
/// parts as JSON, and the id it is stored under.
struct WordOfProgress {
    key: String,
    content: String,
    id: String,
}

/// Runs the outbox: claims what is due and works each delivery, then claims
/// again what was pushed meanwhile (word that landed while its delivery was
/// claimed, which the run that took the push could not work on), a few times
/// at most.
pub async fn deliver_remote(work: &Background<'_>) -> Result<OutboxReport, BackgroundError> {
    let mut report = OutboxReport::default();
    let started = work.now_ms();
    let mut pushed_since = None;
    for _ in 0..PASSES_PER_RUN {
        if deliver_due_once(work, &mut report, pushed_since).await? == 0 {
            break;
        }
        pushed_since = Some(started);
    }
    Ok(report)
}

/// One pass: claims what is due now (with `pushed_since`, only what was
/// pushed since then) and works it. Answers how many it claimed.
async fn deliver_due_once(
    work: &Background<'_>,
    report: &mut OutboxReport,
    pushed_since: Option<i64>,
) -> Result<usize, BackgroundError> {
    let node = work.node();
    let now = work.now_ms();
    let claim_until = now + CLAIM_MS;
    let claim = peers::claim_due(now, claim_until, CLAIMED_PER_RUN, pushed_since);
    let results = work.run(vec![claim, peers::claimed(claim_until)]).await?;
    let rows = results.get(1).map(|result| result.rows.clone()).unwrap_or_default();
    for row in &rows {
        let due = Due::of(row, now)?;
        let origin = node.config.public_origin.clone();
        let (statements, records, outcome) = work_one(work, &due, origin.as_deref()).await;
        match outcome {
            Outcome::Progressed => report.progressed += 1,
            Outcome::Retrying => report.retrying += 1,
            Outcome::Ended => report.ended += 1,
        }
        work.commit(statements, &records).await?;
    }
    Ok(rows.len())
}

/// What became of one delivery in a run.
enum Outcome {
    Progressed,
    Retrying,
    Ended,
}

/// Works one delivery: the statements recording what happened, the audit
/// entries they carry, and the outcome.
async fn work_one(
    work: &Background<'_>,
    due: &Due,
    origin: Option<&str>,
) -> (Vec<Statement>, Vec<AuditRecord>, Outcome) {
    let now = work.now_ms();
    let progress =
        |state, attempts, next, task, error| progressed(due, now, (state, attempts, next, task, error), None);
    // Judged again at every attempt: what the send judged may have changed.
    let stopped = if due.message_state != "queued" {
        Some(format!("the message is {} here: nothing more is sent for it", due.message_state))
    } else if due.expires_at <= now {
        Some("the message expired before the agent elsewhere answered".to_string())
    } else if let Some(why @ ("revoked" | "disabled")) = due.sender_stopped.as_deref() {
        Some(format!("the sender was {why}: nothing more is sent for it"))
    } else if due.sender_id.starts_with(IdKind::Agent.prefix()) && !policy_reaches(due) {
        Some("the sender's outbound policy no longer reaches this agent".to_string())
    } else {
        None
    };
    if let Some(why) = stopped {
        let mut statements = vec![peers::attempt_recorded(&due.message_id, now, step_name(due), "failed", &why)];
        statements.extend(messaging::ended_elsewhere(
            &due.message_id,
            &EndedElsewhere::Failed { reason: why.clone() },
            now,
        ));
        statements.push(progress("dead", due.attempts, now, None, Some(&why)));
        let record = ended_record(due, now, "failed", json!({ "why": why }));
        return (statements, vec![record], Outcome::Ended);
    }
    if due.sender_stopped.as_deref() == Some("paused") {
        // Held, not tried: a paused sender sends nothing until resumed.
        return (
            vec![progress(if due.sent { "sent" } else { "pending" }, due.attempts, now + PAUSED_RETRY_MS, None, None)],
            Vec::new(),
            Outcome::Retrying,
        );
    }

    let mut statements = Vec::new();
    let endpoint = match endpoint(work, due, &mut statements).await {
        Ok(endpoint) => endpoint,
        Err(step) => return settle(due, (step, None), statements, now, "card"),
    };
    let (step, push_refused, context) = exchange(work, due, &endpoint, origin).await;
    if push_refused {
        statements.push(peers::pushes_refused(&due.remote_agent_id));
    }
    if matches!(&step, Step::Retry(why) if why.contains("answered 404") || why.contains("answered 410")) {
        // The endpoint the card named is gone: read the card again next time.
        statements.push(peers::card_forgotten(&due.remote_agent_id));
    }
    settle(due, (step, context), statements, now, step_name(due))
}

/// Whether the sender's policy, as it is now, reaches the agent.
fn policy_reaches(due: &Due) -> bool {
    let entries: Vec<String> =
        due.remote_recipients.as_deref().and_then(|entries| serde_json::from_str(entries).ok()).unwrap_or_default();
    let address =
        RemoteAddress { id: due.remote_agent_id.clone(), card_url: due.card_url.clone(), domain: due.domain.clone() };
    peers::reaches(&entries, &address)
}

/// Where a delivery stands after this run: its state, attempts, next attempt,
/// the remote task (when one is learned) and the last error.
type Standing<'a> = (&'static str, i64, i64, Option<&'a str>, Option<&'a str>);

/// The statement recording `due`'s progress at `now`, with the remote context
/// learned, if any.
fn progressed(
    due: &Due,
    now: i64,
    (state, attempts, next, task, error): Standing<'_>,
    context: Option<&str>,
) -> Statement {
    peers::delivery_progressed(&Progress {
        message_id: &due.message_id,
        state,
        attempts,
        next_attempt_at: next,
        remote_task_id: task,
        remote_context_id: context,
        last_error: error,
        now_ms: now,
        claimed_at: due.claimed_at,
    })
}

/// What the attempt does: send the message, or ask after its task.
fn step_name(due: &Due) -> &'static str {
    if due.sent { "poll" } else { "send" }
}

/// Records how a step ended: an attempt row, the delivery's progress, and
/// for an end, the message's and its audit entry.
fn settle(
    due: &Due,
    (step, context): (Step, Option<String>),
    mut statements: Vec<Statement>,
    now: i64,
    step_name: &str,
) -> (Vec<Statement>, Vec<AuditRecord>, Outcome) {
    let progress = |state, attempts, next, task, error| {
        progressed(due, now, (state, attempts, next, task, error), context.as_deref())
    };
    let attempts = due.attempts + 1;
    match step {
        Step::Ended(ended) => {
            let detail = match &ended {
                EndedElsewhere::Answered { reply_id, .. } => format!("answered ({reply_id})"),
                EndedElsewhere::Acknowledged => "accepted".to_string(),
                EndedElsewhere::Rejected { reason } => format!("ended there: {reason}"),
                EndedElsewhere::Failed { reason } => reason.clone(),
            };
            statements.push(peers::attempt_recorded(&due.message_id, now, step_name, "ok", &detail));
            statements.extend(messaging::ended_elsewhere(&due.message_id, &ended, now));
            statements.push(progress("done", attempts, now, None, None));
            let (outcome, facts) = match &ended {
                EndedElsewhere::Answered { reply_id, .. } => ("ok", json!({ "reply": reply_id })),
                EndedElsewhere::Acknowledged => ("ok", json!({ "acknowledged": true })),
                EndedElsewhere::Rejected { reason } | EndedElsewhere::Failed { reason } => {
                    ("failed", json!({ "why": reason }))
                }
            };
            (statements, vec![ended_record(due, now, outcome, facts)], Outcome::Progressed)
        }
        Step::Accepted { task_id, progress: word_of_progress } => {
            let detail = format!("accepted as task {task_id}");
            statements.push(peers::attempt_recorded(&due.message_id, now, step_name, "ok", &detail));
            let mut records = Vec::new();
            if let Some(word) = word_of_progress {
                // Word of progress is a message from elsewhere: it is audited
                // with the agent named, its words left in the conversation.
                statements.push(messaging::progress_elsewhere(
                    &word.id,
                    &due.message_id,
                    &word.key,
                    &word.content,
                    now,
                ));
                statements.push(peers::progress_noted(&due.message_id, &word.key));
                let mut record = ended_record(due, now, "ok", json!({ "progress": word.id }));
                record.action = "receive_remote_progress".into();
                records.push(record);
            }
            // Asking after a task is not a failure: the count starts again. A
            // task just accepted is asked after at the next run; one still
            // working, every `REMOTE_POLL_SECONDS`.
            let next = if due.sent { now + REMOTE_POLL_SECONDS * 1000 } else { now };
            statements.push(progress("sent", 0, next, Some(&task_id), None));
            (statements, records, Outcome::Progressed)
        }
        Step::Retry(why) if attempts < due.maximum_attempts => {
            statements.push(peers::attempt_recorded(&due.message_id, now, step_name, "retrying", &why));
            let wait = REMOTE_RETRY_AFTER_SECONDS
                [usize::try_from(attempts - 1).unwrap_or(0).min(REMOTE_RETRY_AFTER_SECONDS.len() - 1)];
            let state = if due.sent { "sent" } else { "pending" };
            statements.push(progress(state, attempts, now + wait * 1000, None, Some(&why)));
            (statements, Vec::new(), Outcome::Retrying)
        }
        Step::Retry(why) | Step::Dead(why) => {
            let reason = format!("gave up after {attempts} attempts: {why}");
            statements.push(peers::attempt_recorded(&due.message_id, now, step_name, "failed", &why));
            statements.extend(messaging::ended_elsewhere(
                &due.message_id,
                &EndedElsewhere::Failed { reason: reason.clone() },
                now,
            ));
            statements.push(progress("dead", attempts, now, None, Some(&why)));
            (statements, vec![ended_record(due, now, "failed", json!({ "why": reason }))], Outcome::Ended)
        }
    }
}

/// The audit entry of a message's end elsewhere: the agent elsewhere named,
/// the content left out; told to the sender.
fn ended_record(due: &Due, now: i64, outcome: &'static str, facts: Value) -> AuditRecord {
    let mut detail = json!({
        "remote": { "id": due.remote_agent_id, "card_url": due.card_url, "domain": due.domain },
        "sender": due.sender_id,
    });
    if let (Some(object), Some(facts)) = (detail.as_object_mut(), facts.as_object()) {
        object.extend(facts.clone());
    }
    AuditRecord {
        at: now,
        actor: None,
        delegator: None,
        surface: Some("a2a"),
        action: "deliver_remote_message".into(),
        object: Some(due.message_id.clone()),
        outcome,
        detail: Some(detail.to_string()),
        topic: Topic::of_party(&due.sender_id),
    }
}

/// Where to send: the endpoint the card named while it is fresh, or what the
/// card says now (kept as long as its caching headers allow).
async fn endpoint(work: &Background<'_>, due: &Due, statements: &mut Vec<Statement>) -> Result<Endpoint, Step> {
    let now = work.now_ms();
    if let (Some(url), Some(version)) = (&due.endpoint_url, &due.protocol_version)
        && due.card_fresh_until > now
    {
        return Ok(Endpoint { url: url.clone(), version: version.clone(), pushes: due.push_notifications });
    }
    let node = work.node();
    let destination = Destination::check(&due.card_url, REMOTE_URL_MAXIMUM, &node.config.outbound_policy())
        .map_err(|refused| Step::Dead(format!("the card may not be read: {}", refused.why())))?;
    let fetched = outbound::within(
        node.platform,
        outbound::DOCUMENT_TIMEOUT_MS,
        node.webhooks.get(&destination, REMOTE_CARD_MAXIMUM_BYTES),
    )
    .await;
    let fetched = match fetched {
        None => {
            return Err(Step::Retry(format!(
                "the card did not answer within {} seconds",
                outbound::DOCUMENT_TIMEOUT_MS / 1000
            )));
        }
        Some(Err(error)) => return Err(Step::Retry(format!("the card could not be read ({})", error.0))),
        Some(Ok(fetched)) => fetched,
    };
    if fetched.status != 200 {
        return Err(Step::Retry(format!("the card {}", answered(&fetched))));
    }
    let card: Value =
        serde_json::from_slice(&fetched.body).map_err(|_| Step::Retry("the card is not JSON".to_string()))?;
    let (url, version) = card_endpoint(&card)
        .ok_or_else(|| Step::Retry("the card names no JSON-RPC endpoint of A2A 1.0 or 0.3".to_string()))?;
    let fresh_for = freshness_seconds(fetched.cache_control.as_deref());
    let pushes = card.pointer("/capabilities/pushNotifications").and_then(Value::as_bool).unwrap_or(false);
    let read = peers::CardRead {
        endpoint_url: &url,
        protocol_version: &version,
        name: card.get("name").and_then(Value::as_str),
        push_notifications: pushes,
    };
    statements.push(peers::card_cached(&due.remote_agent_id, &read, now, now + fresh_for * 1000));
    Ok(Endpoint { url, version, pushes })
}

/// Where the card says to send, in which version, and whether the agent
/// pushes its tasks' changes.
struct Endpoint {
    url: String,
    version: String,
    pushes: bool,
}

/// Sends the message, or asks after its task, and reads the answer. A send
/// whose push config the agent refuses (A2A's -32003) is sent again at once
/// without one, and the agent asked after by polling (`push_refused`).
async fn exchange(
    work: &Background<'_>,
    due: &Due,
    endpoint: &Endpoint,
    origin: Option<&str>,
) -> (Step, bool, Option<String>) {
    let node = work.node();
    let (url, version) = (&endpoint.url, &endpoint.version);
    let v1 = version == "1.0";
    let destination = match Destination::check(url, REMOTE_URL_MAXIMUM, &node.config.outbound_policy()) {
        Ok(destination) => destination,
        Err(refused) => {
            return (Step::Dead(format!("the endpoint {url} may not be reached: {}", refused.why())), false, None);
        }
    };
    let push = origin.filter(|_| endpoint.pushes && !due.sent).map(|origin| {
        json!({ "url": push_url(origin, &due.message_id), "token": push_token(&node.config.session_key, &due.message_id) })
    });
    let request = |push: Option<Value>| match (&due.remote_task_id, due.sent) {
        (Some(task_id), true) => {
            let method = if v1 { "GetTask" } else { "tasks/get" };
            json!({ "jsonrpc": "2.0", "id": due.message_id, "method": method, "params": { "id": task_id } })
        }
        // An agent that pushes is asked to tell this node when the task
        // changes, at an address only the token proves (decision 0050).
        _ => send_request(&due.message_id, &due.content, due.remote_context_id.as_deref(), v1, push),
    };
    let mut headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("accept".to_string(), "application/json".to_string()),
        ("a2a-version".to_string(), version.clone()),
    ];
    // The peer's credential goes only to an endpoint on the peer's own
    // domain, whatever else the card names.
    let on_the_peer = |domain: &String| Host::of_url(url).is_some_and(|host| host.is_within(domain));
    if let Some(credential) =
        due.outbound_credential.as_ref().filter(|_| due.peer_domain.as_ref().is_some_and(on_the_peer))
    {
        headers.push(("authorization".to_string(), format!("Bearer {credential}")));
        // A peer's node is told which of this node's agents speaks.
        if let Some(origin) = origin.filter(|_| due.sender_id.starts_with(IdKind::Agent.prefix())) {
            headers.push((
                "mailroom-sender".to_string(),
                format!("{origin}/a2a/{}/.well-known/agent-card.json", due.sender_id),
            ));
        }
    }
    let asked_to_push = push.is_some();
    let answer = match call(work, &destination, url, &headers, &request(push)).await {
        Ok(answer) => answer,
        Err(step) => return (step, false, None),
    };
    let push_refused = asked_to_push && answer.pointer("/error/code").and_then(Value::as_i64) == Some(-32003);
    if !push_refused {
        return (read_answer(work, due, &answer), false, context_of(&answer));
    }
    match call(work, &destination, url, &headers, &request(None)).await {
        Ok(answer) => (read_answer(work, due, &answer), true, context_of(&answer)),
        Err(step) => (step, true, None),
    }
}

/// One JSON-RPC call to the endpoint: its answer, or the step a failure is.
async fn call(
    work: &Background<'_>,
    destination: &Destination,
    url: &str,
    headers: &[(String, String)],
    request: &Value,
) -> Result<Value, Step> {
    let node = work.node();
    let body = request.to_string();
    let answered_within = outbound::within(
        node.platform,
        outbound::POST_TIMEOUT_MS,
        node.webhooks.exchange(destination, headers, &body, REMOTE_ANSWER_MAXIMUM_BYTES),
    )
    .await;
    let fetched = match answered_within {
        None => {
            return Err(Step::Retry(format!(
                "{url} did not answer within {} seconds",
                outbound::POST_TIMEOUT_MS / 1000
            )));
        }
        Some(Err(error)) => return Err(Step::Retry(format!("{url} could not be reached ({})", error.0))),
        Some(Ok(fetched)) => fetched,
    };
    if fetched.status != 200 {
        return Err(Step::Retry(format!("{url} {}", answered(&fetched))));
    }
    serde_json::from_slice::<Value>(&fetched.body)
        .map_err(|_| Step::Retry(format!("{url} answered something that is not JSON")))
}

/// The context an answer's task or message names (A2A `contextId`), for the
/// conversation's next message to continue.
fn context_of(answer: &Value) -> Option<String> {
    let result = answer.get("result")?;
    [result.pointer("/task/contextId"), result.pointer("/message/contextId"), result.get("contextId")]
        .into_iter()
        .flatten()
        .find_map(|context| context.as_str().filter(|context| !context.is_empty()).map(str::to_string))
}

/// Reads a JSON-RPC answer: an error, a task (1.0's `{task}` or a bare one),
/// or a message answering at once.
fn read_answer(work: &Background<'_>, due: &Due, answer: &Value) -> Step {
    if let Some(error) = answer.get("error") {
        let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
        let words = error.get("message").and_then(Value::as_str).unwrap_or("no words");
        // The agent elsewhere refused the message itself (its parameters, its
        // content type, a task it does not know): trying again changes nothing.
        return match code {
            -32602 | -32001 | -32005 | -32600 => {
                Step::Dead(format!("the agent elsewhere refused it ({code}: {words})"))
            }
            _ => Step::Retry(format!("the agent elsewhere answered an error ({code}: {words})")),
        };
    }
    let Some(result) = answer.get("result") else {
        return Step::Retry("the answer is neither a result nor an error".to_string());
    };
    let task =
        result.get("task").or_else(|| (result.get("status").is_some() && result.get("id").is_some()).then_some(result));
    let message = result.get("message").or_else(|| result.get("messageId").is_some().then_some(result));
    if let Some(task) = task {
        return read_task(work, due, task);
    }
    if let Some(message) = message {
        let parts = stored_parts(message.get("parts"));
        return answered_with(work, due, parts);
    }
    Step::Retry("the answer is neither a task nor a message".to_string())
}

/// A task's state, by its 1.0 or 0.3 name.
fn read_task(work: &Background<'_>, due: &Due, task: &Value) -> Step {
    let Some(task_id) = task.get("id").and_then(Value::as_str).filter(|id| !id.is_empty()) else {
        return Step::Retry("the task has no id".to_string());
    };
    let state = task.pointer("/status/state").and_then(Value::as_str).unwrap_or_default();
    let state = state.trim_start_matches("TASK_STATE_").to_ascii_lowercase().replace('_', "-");
    let status_words = || {
        stored_parts(task.pointer("/status/message/parts"))
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str).map(str::to_string))
            .collect::<Vec<_>>()
            .join(" ")
    };
    match state.as_str() {
        "completed" => {
            let mut parts: Vec<Value> = task
                .get("artifacts")
                .and_then(Value::as_array)
                .map(|artifacts| artifacts.iter().flat_map(|artifact| stored_parts(artifact.get("parts"))).collect())
                .unwrap_or_default();
            if parts.is_empty() {
                parts = stored_parts(task.pointer("/status/message/parts"));
            }
            answered_with(work, due, parts)
        }
        "failed" | "rejected" | "canceled" | "input-required" | "auth-required" => {
            let words = status_words();
            let reason =
                if words.is_empty() { format!("its task is {state}") } else { format!("its task is {state}: {words}") };
            Step::Ended(EndedElsewhere::Rejected { reason })
        }
        "submitted" | "working" if due.kind == "event" => Step::Ended(EndedElsewhere::Acknowledged),
        "submitted" | "working" => {
            Step::Accepted { task_id: task_id.to_string(), progress: progress_of(work, due, task) }
        }
        other => Step::Retry(format!("the task is in a state A2A does not name ({other})")),
    }
}

/// The word of progress a working task's status gives, when it has one this
/// delivery has not brought in yet.
fn progress_of(work: &Background<'_>, due: &Due, task: &Value) -> Option<WordOfProgress> {
    let message = task.pointer("/status/message")?;
    let parts = stored_parts(message.get("parts"));
    if parts.is_empty() {
        return None;
    }
    let content = json!({ "parts": parts }).to_string();
    let key = match message.get("messageId").and_then(Value::as_str).filter(|id| !id.is_empty()) {
        Some(id) => id.to_string(),
        None => sha256_hex(content.as_bytes()),
    };
    let new = due.progress_key.as_deref() != Some(key.as_str());
    new.then(|| WordOfProgress { key, content, id: new_id(IdKind::AgentMessage, work.node().platform) })
}

/// The message answered with `parts`: a request's reply, an event taken.
fn answered_with(work: &Background<'_>, due: &Due, parts: Vec<Value>) -> Step {
    if due.kind == "event" {
        return Step::Ended(EndedElsewhere::Acknowledged);
    }
    let reply_id = new_id(IdKind::AgentMessage, work.node().platform);
    Step::Ended(EndedElsewhere::Answered { reply_id, content: json!({ "parts": parts }).to_string() })
}
