//! Tasks: an agent endpoint's methods, each translated into the node's own
//! routes and re-entered as the caller, and the node's messages presented as
//! A2A tasks in the version asked for.
//!
//! A task is the caller's request to the agent (`amg_…`), its context the
//! conversation (`cnv_…`), its state the request's (`TaskState::of`), its
//! artifact the reply. Parameters are checked before anything is asked of the
//! node, so a refusal names the parameter as the caller sent it.

use mailroom_contract::api::{AgentMessage, AgentMessageState, AgentReply, RefusalBody, SentAgentMessageList};
use mailroom_contract::{RouteId, registry};
use serde_json::{Map, Value, json};

use super::params::Fields;
use super::rpc::{ErrorKind, RpcError, Version};
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::crypto::sha256_hex;
use crate::core::http::{Response, Surface};
use crate::core::time::{instant, rfc3339};
use crate::peers;

/// The most history a request may ask for: protocol buffers' `int32`.
const HISTORY_MAXIMUM: i64 = i32::MAX as i64;
/// The page size of `ListTasks` when the caller gives none, and the most it
/// may ask for (A2A 1.0's `ListTasksRequest.page_size`).
const PAGE_SIZE_DEFAULT: i64 = 50;
const PAGE_SIZE_MAXIMUM: i64 = 100;

/// A task's state (A2A 1.0 `TaskState`; 0.3 spells it in lower case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    Submitted,
    Working,
    Completed,
    Failed,
    Canceled,
    InputRequired,
    Rejected,
    AuthRequired,
}

impl TaskState {
    const ALL: [TaskState; 8] = [
        TaskState::Submitted,
        TaskState::Working,
        TaskState::Completed,
        TaskState::Failed,
        TaskState::Canceled,
        TaskState::InputRequired,
        TaskState::Rejected,
        TaskState::AuthRequired,
    ];

    /// Its 1.0 name, its 0.3 name and its number in 1.0's enum.
    fn names(self) -> (&'static str, &'static str, i64) {
        match self {
            TaskState::Submitted => ("TASK_STATE_SUBMITTED", "submitted", 1),
            TaskState::Working => ("TASK_STATE_WORKING", "working", 2),
            TaskState::Completed => ("TASK_STATE_COMPLETED", "completed", 3),
            TaskState::Failed => ("TASK_STATE_FAILED", "failed", 4),
            TaskState::Canceled => ("TASK_STATE_CANCELED", "canceled", 5),
            TaskState::InputRequired => ("TASK_STATE_INPUT_REQUIRED", "input-required", 6),
            TaskState::Rejected => ("TASK_STATE_REJECTED", "rejected", 7),
            TaskState::AuthRequired => ("TASK_STATE_AUTH_REQUIRED", "auth-required", 8),
        }
    }

    pub(super) fn name(self, version: Version) -> &'static str {
        let (current, legacy, _) = self.names();
        if version == Version::V1 { current } else { legacy }
    }

    /// The state of the request `message` as a task: waiting with no attempt
    /// submitted; leased, or waiting again after one, working; answered
    /// completed; rejected or refused rejected; failed or expired failed.
    pub fn of(message: &AgentMessage) -> TaskState {
        use AgentMessageState as State;
        match message.state {
            State::Queued | State::Held if message.attempts == 0 => TaskState::Submitted,
            State::Queued | State::Held | State::Leased => TaskState::Working,
            State::Answered | State::Acknowledged | State::Delivered => TaskState::Completed,
            State::Rejected | State::Refused => TaskState::Rejected,
            State::Failed | State::Expired => TaskState::Failed,
            State::Canceled => TaskState::Canceled,
        }
    }

    /// The requests in this state, as the list of sent messages filters them:
    /// their states now, and whether they were ever delivered. `None` for a
    /// state no request is ever in. [`TaskState::of`] read backwards, held to
    /// it by a test.
    fn sent_filter(self) -> Option<(&'static str, Option<bool>)> {
        match self {
            // A leased message was delivered, so it is never submitted.
            TaskState::Submitted => Some(("queued,held", Some(false))),
            TaskState::Working => Some(("queued,held,leased", Some(true))),
            TaskState::Completed => Some(("answered,acknowledged,delivered", None)),
            TaskState::Rejected => Some(("rejected,refused", None)),
            TaskState::Failed => Some(("failed,expired", None)),
            TaskState::Canceled => Some(("canceled", None)),
            TaskState::InputRequired | TaskState::AuthRequired => None,
        }
    }

    /// The `status` filter of `ListTasks`: a state by its name or number, or
    /// none (`TASK_STATE_UNSPECIFIED`, 0, or `UNRECOGNIZED`, what the 1.3
    /// JavaScript client sends when its caller gives no status).
    fn filter(value: Option<&Value>, field: &str) -> Result<Option<TaskState>, RpcError> {
        let unspecified = |text: &str| text == "TASK_STATE_UNSPECIFIED" || text == "UNRECOGNIZED";
        let found = match value {
            None => return Ok(None),
            Some(Value::String(text)) if unspecified(text) => return Ok(None),
            Some(Value::Number(number)) if number.as_i64() == Some(0) => return Ok(None),
            Some(Value::String(text)) => TaskState::ALL.into_iter().find(|state| state.names().0 == text),
            Some(Value::Number(number)) => {
                TaskState::ALL.into_iter().find(|state| Some(state.names().2) == number.as_i64())
            }
            Some(_) => None,
        };
        found.map(Some).ok_or_else(|| {
            let names: Vec<&str> = TaskState::ALL.iter().map(|state| state.names().0).collect();
            RpcError::invalid(field, format!("`{field}` must be a task state: {}.", names.join(", ")))
        })
    }
}

/// One call to an agent's endpoint: the agent it is addressed to, the version
/// it speaks, and the answer of an inner call to hand back as it is.
pub struct Gateway<'call, 'request> {
    pub context: &'call mut Context<'request>,
    pub agent_id: String,
    pub version: Version,
    /// The caller's own refusal (a dead or stopped credential, a route its
    /// credential may not call, a failure inside the node): answered as HTTP,
    /// as it would be over REST.
    pub answered: Option<Response>,
}

impl Gateway<'_, '_> {
    /// Re-enters the router as the caller, with the route's own request. A
    /// refusal of what the call asked for (400, 404, 409, 413) becomes an
    /// invalid-parameters error carrying the route's refusal; any other is the
    /// caller's own and is answered as it is.
    pub(super) async fn call(
        &mut self,
        method: &str,
        path: String,
        query: String,
        body: Option<Value>,
    ) -> Result<Value, RpcError> {
        let body = body.map(|body| body.to_string().into_bytes());
        let request = self.context.request().reentering(method, path, query, body);
        let response = self.context.reenter(&request, Surface::A2a, None).await;
        if response.status < 400 {
            return Ok(response.json_body().unwrap_or(Value::Null));
        }
        let refusal: Option<RefusalBody> = response.json_body().and_then(|body| serde_json::from_value(body).ok());
        match (response.status, refusal) {
            (400 | 404 | 409 | 413, Some(refusal)) if response.credential_refused.is_none() => {
                let refusal = refusal.error;
                let mut error = RpcError::new(ErrorKind::InvalidParams, refusal.message)
                    .with("reason", refusal.reason)
                    .with("fix", refusal.fix);
                error.node_reason = Some(refusal.code);
                Err(error)
            }
            _ => {
                self.answered = Some(response);
                Err(RpcError::new(ErrorKind::InvalidRequest, "The call was refused."))
            }
        }
    }

    /// The caller's request to this agent that task `id` names.
    pub(super) async fn task(&mut self, id: &str) -> Result<AgentMessage, RpcError> {
        let not_found = || RpcError::new(ErrorKind::TaskNotFound, format!("Task not found: {id}")).with("taskId", id);
        if !id.starts_with("amg_") || id.contains(['/', '?', '#']) {
            return Err(not_found());
        }
        let path = registry().route(RouteId::GetAgentMessage).path.replace(":agentMessageId", id);
        let found = match self.call("GET", path, String::new(), None).await {
            Ok(found) => found,
            Err(error) if self.answered.is_some() => return Err(error),
            Err(_) => return Err(not_found()),
        };
        let message: AgentMessage = serde_json::from_value(found).map_err(|_| not_found())?;
        let mine = sender_of(self.context.caller()).as_deref() == Some(message.sender.as_str());
        if !mine || message.recipient != self.agent_id || message.kind.name() != "request" {
            return Err(not_found());
        }
        Ok(message)
    }

    /// `SendMessage` (1.0, answered as `{ task }`) and `message/send` (0.3,
    /// answered as the task).
    pub async fn send(&mut self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let (sent, history) = self.send_message(params).await?;
        let task = task_json(&sent, self.version, history, true);
        Ok(if self.version == Version::V1 { json!({ "task": task }) } else { task })
    }

    /// Sends the message `params` carry to the agent (a retry is the same
    /// request): the request, and the history its configuration asks for.
    pub(super) async fn send_message(
        &mut self,
        params: &Map<String, Value>,
    ) -> Result<(AgentMessage, Option<i64>), RpcError> {
        let version = self.version;
        let fields = Fields::read(params, "params.")?;
        // Only 1.0 requests carry a tenant.
        if version == Version::V1 {
            fields.no_tenant()?;
        }
        fields.object("metadata")?;
        let (history, push) = match fields.object("configuration")? {
            Some(configuration) => configured(configuration, version)?,
            None => (None, None),
        };
        // A config given with the send is checked before anything is sent.
        let push = push.map(|(config, at)| self.push_config_body(config, &at)).transpose()?;
        let message = fields
            .object("message")?
            .ok_or_else(|| RpcError::invalid("params.message", "`params.message` is required."))?;
        let message = Fields::read(message, "params.message.")?;
        let message_id = message.required_text("messageId")?;
        let role = message.get("role");
        let from_the_user = match version {
            Version::V1 => role == Some(&json!("ROLE_USER")) || role == Some(&json!(1)),
            Version::V03 => role == Some(&json!("user")),
        };
        if !from_the_user {
            let user = if version == Version::V1 { "ROLE_USER" } else { "user" };
            return Err(RpcError::invalid(
                "params.message.role",
                format!("`params.message.role` must be {user}: the caller of a task is its user."),
            ));
        }
        message.object("metadata")?;
        message.list("extensions")?;
        message.list("referenceTaskIds")?;
        if let Some(task_id) = message.text("taskId")?.filter(|id| !id.is_empty()) {
            let task = self.task(task_id).await?;
            let why = if task.state.is_finished() {
                "the task is in a terminal state"
            } else {
                "this agent takes no further input on a task"
            };
            return Err(RpcError::new(
                ErrorKind::UnsupportedOperation,
                format!("A message cannot continue a task here: {why}. Send a new message."),
            )
            .with("taskId", task_id));
        }
        let parts = parts_in(&message)?;
        let context_id = message.text("contextId")?.filter(|id| !id.is_empty());
        // A retry repeats the message: its id, what it says, to whom and in
        // which context. That is its idempotency key, so a retry is the same
        // task, and a message that reuses an id with other content is a task
        // of its own rather than a refusal or, worse, the other's answer.
        let retry = json!([self.agent_id, message_id, parts, context_id]).to_string();
        let mut body = json!({
            "recipient": self.agent_id,
            "kind": "request",
            "content": { "parts": parts },
            "idempotency_key": format!("a2a:{}", sha256_hex(retry.as_bytes())),
        });
        // A context is a conversation the caller takes part in; one the node
        // never made is refused rather than replaced by a new one, so the
        // caller never mistakes the task's context for the one it named.
        if let Some(context_id) = context_id {
            if !context_id.starts_with("cnv_") {
                return Err(RpcError::invalid(
                    "params.message.contextId",
                    format!(
                        "`params.message.contextId` names no context here ({context_id}): a context is the `contextId` of one of your tasks. Leave it out to start a new one."
                    ),
                ));
            }
            body["conversation_id"] = context_id.into();
        }
        let path = registry().route(RouteId::SendAgentMessage).path.to_string();
        let sent = self.call("POST", path, String::new(), Some(body)).await?;
        let sent: AgentMessage = serde_json::from_value(sent)
            .map_err(|_| RpcError::new(ErrorKind::InvalidRequest, "The node's answer could not be read."))?;
        // A config given with the send: its address was checked before the
        // send, so what is refused now is the caller's own (a limit).
        if let Some(push) = push {
            self.create_push(&sent.id, push).await?;
        }
        Ok((sent, history))
    }

    /// `GetTask` and `tasks/get`.
    pub async fn get(&mut self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let fields = Fields::read(params, "params.")?;
        // Only 1.0 requests carry a tenant.
        if self.version == Version::V1 {
            fields.no_tenant()?;
        }
        let id = fields.required_text("id")?;
        let history = fields.integer("historyLength", 0, HISTORY_MAXIMUM)?;
        let task = self.task(id).await?;
        Ok(task_json(&task, self.version, history, true))
    }

    /// `ListTasks` (1.0 only): the caller's requests to this agent, most
    /// recently changed first, filtered and paged by the node's own list.
    pub async fn list(&mut self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let fields = Fields::read(params, "params.")?;
        fields.no_tenant()?;
        let page_size = fields.integer("pageSize", 1, PAGE_SIZE_MAXIMUM)?.unwrap_or(PAGE_SIZE_DEFAULT);
        let status = TaskState::filter(fields.get("status"), &fields.path("status"))?;
        let history = fields.integer("historyLength", 0, HISTORY_MAXIMUM)?;
        let include_artifacts = fields.boolean("includeArtifacts")?.unwrap_or(false);
        let context_id = fields.text("contextId")?.filter(|id| !id.is_empty());
        let page_token = fields.text("pageToken")?.filter(|token| !token.is_empty());
        let changed_since = match fields.text("statusTimestampAfter")? {
            None => None,
            Some(moment) => Some(instant(moment).map(rfc3339).ok_or_else(|| {
                RpcError::invalid(
                    "params.statusTimestampAfter",
                    "`params.statusTimestampAfter` must be a moment in RFC 3339, such as 2026-01-31T09:00:00Z.",
                )
            })?),
        };
        let empty = json!({ "tasks": [], "nextPageToken": "", "pageSize": page_size, "totalSize": 0 });
        // A context the node never made, or a state no request is ever in,
        // has no tasks.
        let sent_filter = match status.map(TaskState::sent_filter) {
            Some(None) => return Ok(empty),
            Some(Some(filter)) => Some(filter),
            None => None,
        };
        if context_id.is_some_and(|id| !id.starts_with("cnv_")) {
            return Ok(empty);
        }
        let mut query = form_urlencoded::Serializer::new(String::new());
        query
            .append_pair("recipient", &self.agent_id)
            .append_pair("kind", "request")
            .append_pair("limit", &page_size.to_string());
        if let Some(token) = page_token {
            query.append_pair("cursor", token);
        }
        if let Some(context_id) = context_id {
            query.append_pair("conversation", context_id);
        }
        if let Some((states, attempted)) = sent_filter {
            query.append_pair("state", states);
            if let Some(attempted) = attempted {
                query.append_pair("attempted", if attempted { "true" } else { "false" });
            }
        }
        if let Some(moment) = &changed_since {
            query.append_pair("changed_since", moment);
        }
        let path = registry().route(RouteId::ListSentAgentMessages).path.to_string();
        // Every other parameter was checked here, so a refusal is of the token.
        let page = self.call("GET", path, query.finish(), None).await.map_err(|error| match error.kind {
            ErrorKind::InvalidParams => RpcError::invalid(
                "params.pageToken",
                "`params.pageToken` is not a `nextPageToken` this endpoint gave: send one unchanged, or leave it out for the first page.",
            ),
            _ => error,
        })?;
        let page: SentAgentMessageList = serde_json::from_value(page)
            .map_err(|_| RpcError::new(ErrorKind::InvalidRequest, "The node's answer could not be read."))?;
        let tasks: Vec<Value> =
            page.messages.iter().map(|message| task_json(message, Version::V1, history, include_artifacts)).collect();
        Ok(json!({
            "tasks": tasks,
            "nextPageToken": page.next_cursor.unwrap_or_default(),
            "pageSize": page_size,
            "totalSize": page.total,
        }))
    }

    /// The task `params` name (`id`; `metadata` checked, and 1.0's tenant
    /// refused), refused as `kind` with `refusal`'s words (given its id and
    /// state) when it is finished and nothing more can happen to it.
    pub(super) async fn unfinished_task(
        &mut self,
        params: &Map<String, Value>,
        kind: ErrorKind,
        refusal: fn(&str, &str) -> String,
    ) -> Result<AgentMessage, RpcError> {
        let fields = Fields::read(params, "params.")?;
        // Only 1.0 requests carry a tenant.
        if self.version == Version::V1 {
            fields.no_tenant()?;
        }
        fields.object("metadata")?;
        let id = fields.required_text("id")?;
        let task = self.task(id).await?;
        if task.state.is_finished() {
            let state = TaskState::of(&task).name(self.version);
            return Err(RpcError::new(kind, refusal(&task.id, state))
                .with("taskId", task.id.as_str())
                .with("state", state));
        }
        Ok(task)
    }

    /// `CancelTask` and `tasks/cancel`: cancels the task's conversation.
    pub async fn cancel(&mut self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let task = self
            .unfinished_task(params, ErrorKind::TaskNotCancelable, |id, state| {
                format!("Task not cancelable: {id} is {state}")
            })
            .await?;
        let path =
            registry().route(RouteId::CancelAgentConversation).path.replace(":conversationId", &task.conversation_id);
        let canceled = self.call("POST", path, String::new(), None).await?;
        let now = canceled["messages"]
            .as_array()
            .and_then(|messages| messages.iter().find(|message| message["id"] == json!(task.id)))
            .and_then(|message| serde_json::from_value::<AgentMessage>(message.clone()).ok())
            .unwrap_or(task);
        Ok(task_json(&now, self.version, None, true))
    }
}

/// Who sends as the caller: the caller itself, or for a peer's node, its
/// agent that sends (named by its card, as the messaging routes name it).
pub(super) fn sender_of(caller: &Caller) -> Option<String> {
    match caller {
        Caller::Peer { sender, .. } => sender.as_deref().map(peers::remote_agent_id),
        _ => caller.actor_id().map(str::to_string),
    }
}

/// What a send's configuration asks for: the history to answer with, and a
/// push notification config to keep for the task (with where it was given).
type Configured<'a> = (Option<i64>, Option<(&'a Map<String, Value>, String)>);

/// Reads a send's configuration.
fn configured(configuration: &Map<String, Value>, version: Version) -> Result<Configured<'_>, RpcError> {
    let (push, wait) = match version {
        Version::V1 => ("taskPushNotificationConfig", "returnImmediately"),
        Version::V03 => ("pushNotificationConfig", "blocking"),
    };
    let configuration = Fields::read(configuration, "params.configuration.")?;
    let push = configuration.object(push)?.map(|config| (config, format!("{}.", configuration.path(push))));
    configuration.list("acceptedOutputModes")?;
    // A send always answers at once, with the task as it stands: the agent
    // answers in minutes or days (decision 0031).
    configuration.boolean(wait)?;
    Ok((configuration.integer("historyLength", 0, HISTORY_MAXIMUM)?, push))
}

/// A message's parts as the node stores them (A2A 1.0's shape): text and data
/// parts; a file is refused as content this agent does not take.
fn parts_in(message: &Fields<'_>) -> Result<Vec<Value>, RpcError> {
    let Some(parts) = message.list("parts")?.filter(|parts| !parts.is_empty()) else {
        return Err(RpcError::invalid("params.message.parts", "`params.message.parts` must hold at least one part."));
    };
    parts
        .iter()
        .enumerate()
        .map(|(index, part)| {
            let at = format!("params.message.parts[{index}]");
            let Some(part) = part.as_object() else {
                return Err(RpcError::invalid(at.clone(), format!("`{at}` must be an object.")));
            };
            if let Some(text) = part.get("text").and_then(Value::as_str) {
                Ok(json!({ "text": text }))
            } else if let Some(data) = part.get("data").filter(|data| !data.is_null()) {
                Ok(json!({ "data": data }))
            } else if ["raw", "url", "file"].iter().any(|file| part.contains_key(*file)) {
                let media = part.get("mediaType").and_then(Value::as_str).unwrap_or("a file");
                Err(RpcError::new(
                    ErrorKind::ContentTypeNotSupported,
                    format!(
                        "`{at}` is {media}: only text and data parts are carried (text/plain, application/json). Send a file as a link in text."
                    ),
                )
                .with("field", at))
            } else {
                Err(RpcError::invalid(at.clone(), format!("`{at}` carries no content: send `text` or `data`.")))
            }
        })
        .collect()
}

/// Content as parts: parts the node stored, text, or data.
fn parts_of(content: &Value, version: Version) -> Vec<Value> {
    let parts: Vec<Value> = match content {
        Value::String(text) => vec![json!({ "text": text })],
        Value::Object(object) if object.get("parts").and_then(Value::as_array).is_some() => {
            object["parts"].as_array().cloned().unwrap_or_default()
        }
        other => vec![json!({ "data": other })],
    };
    parts
        .into_iter()
        .map(|mut part| {
            if version == Version::V03 {
                part["kind"] = if part.get("text").is_some() { "text" } else { "data" }.into();
            }
            part
        })
        .collect()
}

/// An A2A message of the task's history.
fn history_message(id: &str, task: &AgentMessage, user: bool, content: &Value, version: Version) -> Value {
    let mut message = json!({
        "messageId": id,
        "contextId": task.conversation_id,
        "taskId": task.id,
        "parts": parts_of(content, version),
    });
    message["role"] = match (version, user) {
        (Version::V1, true) => "ROLE_USER",
        (Version::V1, false) => "ROLE_AGENT",
        (Version::V03, true) => "user",
        (Version::V03, false) => "agent",
    }
    .into();
    if version == Version::V03 {
        message["kind"] = "message".into();
    }
    message
}

/// The status of the request `task` as a task: its state, when it last
/// changed, and why it was rejected or failed, as the agent's message.
pub(super) fn status_json(task: &AgentMessage, version: Version) -> Value {
    let mut status = json!({ "state": TaskState::of(task).name(version), "timestamp": task.updated_at });
    if let Some(reason) = &task.reason {
        status["message"] = history_message(&format!("{}-status", task.id), task, false, &json!(reason), version);
    }
    status
}

/// The agent's reply as the task's one artifact.
pub(super) fn artifact_json(reply: &AgentReply, version: Version) -> Value {
    let mut artifact = json!({ "artifactId": reply.id, "name": "reply", "parts": parts_of(&reply.content, version) });
    if version == Version::V03 {
        artifact["description"] = "The agent's reply.".into();
    }
    artifact
}

/// The request `task` as an A2A task of `version`: at most `history` messages
/// of its history (all when not given, and no `history` at all for 0), and its
/// artifact when `artifacts` (a list leaves them out unless asked).
pub(super) fn task_json(task: &AgentMessage, version: Version, history: Option<i64>, artifacts: bool) -> Value {
    let mut body = json!({ "id": task.id, "contextId": task.conversation_id, "status": status_json(task, version) });
    let mut messages = vec![history_message(&task.id, task, true, &task.content, version)];
    if let Some(reply) = &task.reply {
        messages.push(history_message(&reply.id, task, false, &reply.content, version));
        if artifacts {
            body["artifacts"] = json!([artifact_json(reply, version)]);
        }
    }
    let keep = history.map_or(messages.len(), |history| usize::try_from(history).unwrap_or(0).min(messages.len()));
    if keep > 0 {
        body["history"] = Value::Array(messages.split_off(messages.len() - keep));
    }
    if version == Version::V03 {
        body["kind"] = "task".into();
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_filter_of_each_task_state_finds_exactly_the_requests_in_it() {
        let admits = |filter: Option<(&str, Option<bool>)>, state: AgentMessageState, attempted: bool| {
            filter.is_some_and(|(states, wanted)| {
                states.split(',').any(|name| name == state.name()) && wanted.is_none_or(|wanted| wanted == attempted)
            })
        };
        for &state in AgentMessageState::ALL {
            for attempts in [0, 1] {
                // A leased message has been delivered at least once.
                if state == AgentMessageState::Leased && attempts == 0 {
                    continue;
                }
                let message: AgentMessage = serde_json::from_value(json!({
                    "id": "amg_1", "conversation_id": "cnv_1", "sender": "agt_1", "recipient": "agt_2",
                    "kind": "request", "content": "x", "state": state.name(), "attempts": attempts,
                    "fencing_token": attempts, "deduplicated": false, "created_at": "", "updated_at": "", "expires_at": "",
                }))
                .unwrap();
                let of = TaskState::of(&message);
                for candidate in TaskState::ALL {
                    assert_eq!(
                        admits(candidate.sent_filter(), state, attempts > 0),
                        candidate == of,
                        "{state:?} after {attempts} attempts is {of:?}; {candidate:?}'s filter disagrees"
                    );
                }
            }
        }
    }

    #[test]
    fn a_status_filter_is_a_state_by_name_or_number_or_none() {
        assert_eq!(
            TaskState::filter(Some(&json!("TASK_STATE_WORKING")), "status").ok(),
            Some(Some(TaskState::Working))
        );
        assert_eq!(TaskState::filter(Some(&json!(3)), "status").ok(), Some(Some(TaskState::Completed)));
        assert_eq!(TaskState::filter(Some(&json!("UNRECOGNIZED")), "status").ok(), Some(None));
        assert_eq!(TaskState::filter(Some(&json!(0)), "status").ok(), Some(None));
        assert!(TaskState::filter(Some(&json!("working")), "status").is_err());
        assert!(TaskState::filter(Some(&json!(9)), "status").is_err());
    }
}
