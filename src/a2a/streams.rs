//! Streaming: a task's updates as server-sent events on the call that asked
//! for them (A2A 1.0 `SendStreamingMessage` and `SubscribeToTask`, 0.3
//! `message/stream` and `tasks/resubscribe`).
//!
//! Each event is one JSON-RPC response to the call, its result one stream
//! response: the task first (1.0 §3.1.6 requires it of a subscription), then a
//! status update each time its state changes and an artifact update when the
//! agent's reply arrives, until the task is finished, when the stream ends. A
//! send whose task is already finished (a retry of an answered message) is
//! answered with the task alone; subscribing to a finished task is refused, as
//! 1.0 has it, with `UnsupportedOperationError`.
//!
//! What wakes the stream is the caller's own: the answer to a request is told
//! on its requester's topic (`messaging` names it), so the stream listens as
//! the caller would (`listen_to_agent_inbox` for an agent, `listen_to_own` for
//! a person), admitted and asked again like any listener, and reads the task
//! again through the router, as the caller, when it is told of it
//! (`TaskFollower`).

use std::cell::RefCell;
use std::rc::Rc;

use mailroom_contract::api::{AgentMessage, AgentReply};
use mailroom_contract::{RouteId, registry};
use serde_json::{Map, Value, json};

use super::rpc::{ErrorKind, RpcError, Version};
use super::tasks::{Gateway, TaskState, artifact_json, status_json, task_json};
use crate::core::caller::Caller;
use crate::core::http::{Followed, Follower, Following, Told};
use crate::core::http::{Request, Response, Surface};

impl Gateway<'_, '_> {
    /// `SendStreamingMessage` and `message/stream`: the send, then its task's
    /// updates.
    pub async fn send_streaming(&mut self, rpc_id: &Value, params: &Map<String, Value>) -> Result<Response, RpcError> {
        let (task, history) = self.send_message(params).await?;
        let opening = self.task_event(&task, history);
        self.stream(rpc_id, task, opening).await
    }

    /// `SubscribeToTask` and `tasks/resubscribe`: an unfinished task's updates
    /// from now on, its current state first.
    pub async fn subscribe(&mut self, rpc_id: &Value, params: &Map<String, Value>) -> Result<Response, RpcError> {
        let task = self
            .unfinished_task(params, ErrorKind::UnsupportedOperation, |id, state| {
                format!("Task {id} is {state}, a terminal state: nothing more will happen to it. Read it with GetTask.")
            })
            .await?;
        let opening = self.task_event(&task, None);
        self.stream(rpc_id, task, opening).await
    }

    /// The stream response that carries the whole task.
    fn task_event(&self, task: &AgentMessage, history: Option<i64>) -> Value {
        let task = task_json(task, self.version, history, true);
        if self.version == Version::V1 { json!({ "task": task }) } else { task }
    }

    /// The answer that opens a stream with `opening` and follows `task` until
    /// it is finished; only `opening` when it already is.
    async fn stream(&mut self, rpc_id: &Value, task: AgentMessage, opening: Value) -> Result<Response, RpcError> {
        let opening = vec![event(rpc_id, opening)];
        if TaskState::of(&task).ends_stream() {
            return Ok(Response::events(&opening));
        }
        // The caller's own stream, opened as the caller would open it: the
        // answer to its request is told there.
        let listening_route = match self.context.caller() {
            Caller::Agent { .. } => RouteId::ListenToAgentInbox,
            _ => RouteId::ListenToOwn,
        };
        let path = registry().route(listening_route).path.to_string();
        let listening = self.context.request().reentering("GET", path, String::new(), None);
        let admitted = match self.context.admit_listener(listening, Surface::A2a).await {
            Ok(admitted) => admitted,
            Err(refused) => {
                // The caller may not listen (its own refusal, answered as HTTP).
                self.answered = Some(refused);
                return Err(RpcError::new(ErrorKind::InvalidRequest, "The stream was refused."));
            }
        };
        let reread = self.context.request().reentering(
            "GET",
            registry().route(RouteId::GetAgentMessage).path.replace(":agentMessageId", &task.id),
            String::new(),
            None,
        );
        let follower = TaskFollower {
            rpc_id: rpc_id.clone(),
            version: self.version,
            task_id: task.id.clone(),
            reread,
            sent: RefCell::new(Sent {
                state: TaskState::of(&task),
                reply: task.reply.as_ref().map(|reply| reply.id.clone()),
            }),
        };
        let mut answer = Response::events(&opening);
        answer.follow = Some(Following {
            listeners: vec![admitted],
            surface: Surface::A2a,
            access_checks: false,
            follower: Rc::new(follower),
        });
        Ok(answer)
    }
}

/// One event of a stream: a JSON-RPC response to the call that opened it.
fn event(rpc_id: &Value, result: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": rpc_id, "result": result }).to_string()
}

impl TaskState {
    /// Whether a stream ends at this state: a terminal one, or one that waits
    /// for the caller (A2A's interrupted states).
    fn ends_stream(self) -> bool {
        !matches!(self, TaskState::Submitted | TaskState::Working)
    }
}

/// What a stream has told of its task so far.
struct Sent {
    state: TaskState,
    /// The reply sent as an artifact, once it was.
    reply: Option<String>,
}

/// Follows one task on its stream: read again through the get-message route as
/// the caller, and told as the changes since the last reading.
struct TaskFollower {
    rpc_id: Value,
    version: Version,
    task_id: String,
    reread: Request,
    sent: RefCell<Sent>,
}

impl Follower for TaskFollower {
    fn readings(&self, told: Option<&Told<'_>>) -> Vec<Request> {
        // The reply's and the rejection's entries name the request, the task;
        // a claim tells each request it leased.
        let concerns = told.is_none_or(|told| told.object == Some(self.task_id.as_str()));
        if concerns { vec![self.reread.clone()] } else { Vec::new() }
    }

    fn read(&self, _told: Option<&Told<'_>>, answers: &[Response]) -> Followed {
        let Some(answer) = answers.first() else { return Followed::default() };
        let task = (answer.status == 200)
            .then(|| answer.json_body().and_then(|body| serde_json::from_value::<AgentMessage>(body).ok()))
            .flatten();
        let Some(task) = task else {
            // The task can no longer be read as the caller: its credential
            // ended, or the node could not answer. The stream says so and ends.
            let message = format!(
                "The task can no longer be followed (the node answered {}): read it with GetTask.",
                answer.status
            );
            return Followed { events: vec![self.error(message)], finished: true };
        };
        let mut sent = self.sent.borrow_mut();
        let mut events = Vec::new();
        let state = TaskState::of(&task);
        if let Some(reply) = task.reply.as_ref().filter(|reply| sent.reply.as_deref() != Some(reply.id.as_str())) {
            events.push(event(&self.rpc_id, self.artifact_update(&task, reply)));
            sent.reply = Some(reply.id.clone());
        }
        if state != sent.state {
            events.push(event(&self.rpc_id, self.status_update(&task, state)));
            sent.state = state;
        }
        Followed { events, finished: state.ends_stream() }
    }

    fn closed(&self, reason: &str) -> String {
        self.error(format!(
            "The stream was closed before the task finished: {reason}. Subscribe to the task again (SubscribeToTask), or read it with GetTask."
        ))
    }
}

impl TaskFollower {
    /// An error event: the stream ends without the task's end.
    fn error(&self, message: String) -> String {
        let error = RpcError::new(ErrorKind::InvalidRequest, message);
        json!({ "jsonrpc": "2.0", "id": self.rpc_id, "error": { "code": error.kind.code(), "message": error.message } })
            .to_string()
    }

    fn status_update(&self, task: &AgentMessage, state: TaskState) -> Value {
        let update =
            json!({ "taskId": task.id, "contextId": task.conversation_id, "status": status_json(task, self.version) });
        match self.version {
            Version::V1 => json!({ "statusUpdate": update }),
            Version::V03 => {
                let mut update = update;
                update["kind"] = "status-update".into();
                update["final"] = state.ends_stream().into();
                update
            }
        }
    }

    fn artifact_update(&self, task: &AgentMessage, reply: &AgentReply) -> Value {
        let mut update = json!({
            "taskId": task.id,
            "contextId": task.conversation_id,
            "artifact": artifact_json(reply, self.version),
            "append": false,
            "lastChunk": true,
        });
        match self.version {
            Version::V1 => json!({ "artifactUpdate": update }),
            Version::V03 => {
                update["kind"] = "artifact-update".into();
                update
            }
        }
    }
}
