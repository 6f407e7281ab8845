//! The A2A gateway (SPEC §10): a public agent card per agent, and one JSON-RPC
//! endpoint per agent that speaks A2A 1.0 (`SendMessage`, `GetTask`,
//! `ListTasks`, `CancelTask`) and 0.3 (`message/send`, `tasks/get`,
//! `tasks/cancel`), told apart by the method's name.
//!
//! A task is a request to the agent: sending creates a durable request (the
//! A2A `messageId` is its idempotency key), and the task's state is the
//! request's, its artifact the reply. Like the MCP server, every call
//! re-enters the node's own router as the caller (`Surface::A2a`), so the
//! credential, authority, policy, audit entry and refusal are the routes' own;
//! this module only translates. The caller is its bearer credential; a task is
//! only ever the caller's own request.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{A2aAgentCard, A2aInterface, AgentMessage, AgentMessageList, AgentMessageState};
use mailroom_contract::registry;
use serde_json::{Map, Value, json};

use crate::authz::credentials::AuthenticationError;
use crate::core::context::Context;
use crate::core::http::{Response, Surface};
use crate::core::refusal::Refusal;
use crate::core::storage::Statement;

/// The two protocol versions, as the method names tell them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Version {
    V1,
    V03,
}

/// A JSON-RPC error of A2A's own, or of JSON-RPC's.
struct RpcError {
    code: i64,
    message: String,
    /// The HTTP status: 200 for an answer about a task, 400 for a request the
    /// gateway cannot read.
    status: u16,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError { code, message: message.into(), status: 200 }
    }
}

const TASK_NOT_FOUND: i64 = -32001;
const TASK_NOT_CANCELABLE: i64 = -32002;
const UNSUPPORTED_OPERATION: i64 = -32004;
const CONTENT_TYPE_NOT_SUPPORTED: i64 = -32005;
const VERSION_NOT_SUPPORTED: i64 = -32009;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

/// The endpoint of `agent_id` at this node.
fn endpoint(context: &Context<'_>, agent_id: &str) -> String {
    format!("{}/a2a/{agent_id}", context.config().origin_of(context.request()))
}

/// `GET /a2a/:agentId/.well-known/agent-card.json`.
pub async fn card(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let agent_id = context.path(PathParameter::AgentId)?.to_string();
    let agent = Statement::new("SELECT name FROM agents WHERE id = ?1 AND revoked_at IS NULL").bind(agent_id.as_str());
    let [agent] = context.read_array([agent]).await?;
    let Some(name) = agent.first().and_then(|row| row.text("name").ok()) else {
        return Err(Refusal::not_found("agent", &agent_id));
    };
    let url = endpoint(context, &agent_id);
    let interface = |version: &str| A2aInterface {
        url: url.clone(),
        protocol_binding: "JSONRPC".into(),
        protocol_version: version.into(),
    };
    // The bearer scheme in the shape the asking version reads (1.0 says so in
    // its header; 0.3 clients send none).
    let speaks_1 = context.request().header("a2a-version").is_some_and(|version| version.starts_with('1'));
    let security_schemes = if speaks_1 {
        json!({ "bearer": { "httpAuthSecurityScheme": { "scheme": "Bearer", "description": "An mr_agt_ agent credential, or a person's access token." } } })
    } else {
        json!({ "bearer": { "type": "http", "scheme": "bearer", "description": "An mr_agt_ agent credential, or a person's access token." } })
    };
    let card = A2aAgentCard {
        description: format!(
            "{name}, an agent on a Mailroom node. Send it a request: it is stored durably and delivered at least once, and the agent's reply becomes the task's artifact."
        ),
        name,
        version: env!("CARGO_PKG_VERSION").into(),
        supported_interfaces: vec![interface("1.0"), interface("0.3")],
        protocol_version: "0.3.0".into(),
        url: url.clone(),
        preferred_transport: "JSONRPC".into(),
        capabilities: json!({ "streaming": false, "pushNotifications": false }),
        security_schemes,
        default_input_modes: vec!["text/plain".into(), "application/json".into()],
        default_output_modes: vec!["text/plain".into(), "application/json".into()],
        skills: vec![json!({
            "id": "requests",
            "name": "Requests",
            "description": "Takes a request as text or JSON and answers it when it can; the answer may take minutes or days.",
            "tags": ["mailroom", "requests"],
        })],
    };
    let mut body = serde_json::to_value(&card).map_err(|error| context.internal(error))?;
    if speaks_1 {
        body["securityRequirements"] = json!([{ "schemes": { "bearer": { "list": [] } } }]);
    } else {
        body["security"] = json!([{ "bearer": [] }]);
    }
    let mut response = context.json(&body);
    response.headers.push(("vary".into(), "A2A-Version".into()));
    Ok(response)
}

/// `POST /a2a/:agentId`.
pub async fn handle(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let agent_id = context.path(PathParameter::AgentId)?.to_string();
    let request: Value = match serde_json::from_slice(&context.request().body) {
        Ok(request) => request,
        Err(_) => {
            return Ok(rpc_error(
                Value::Null,
                RpcError { code: -32700, message: "The body is not JSON.".into(), status: 400 },
            ));
        }
    };
    // A notification (no `id`) wants no answer, and A2A has none: accepted, ignored.
    let Some(id) = request.get("id").cloned() else {
        return Ok(Response::empty(202));
    };
    let (Some(method), true) =
        (request.get("method").and_then(Value::as_str), request.get("jsonrpc") == Some(&json!("2.0")))
    else {
        let error = RpcError {
            code: INVALID_REQUEST,
            message: "The body is not one JSON-RPC 2.0 request.".into(),
            status: 400,
        };
        return Ok(rpc_error(id, error));
    };
    if let Some(version) = context.request().header("a2a-version")
        && !(version.starts_with("1.0") || version.starts_with("0.3") || version == "1")
    {
        let message = format!("A2A {version} is not spoken here: the supported versions are 1.0 and 0.3.");
        return Ok(rpc_error(id, RpcError { code: VERSION_NOT_SUPPORTED, message, status: 400 }));
    }
    if context.caller().actor_id().is_none() {
        return Err(AuthenticationError::MissingCredentials.into());
    }
    let params = request.get("params").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut gateway = Gateway { context, agent_id, answered: None };
    let outcome = match method {
        "SendMessage" => gateway.send(&params, Version::V1).await.map(|task| json!({ "task": task })),
        "message/send" => gateway.send(&params, Version::V03).await,
        "GetTask" => gateway.get(&params, Version::V1).await,
        "tasks/get" => gateway.get(&params, Version::V03).await,
        "ListTasks" => gateway.list(&params).await,
        "CancelTask" => gateway.cancel(&params, Version::V1).await,
        "tasks/cancel" => gateway.cancel(&params, Version::V03).await,
        other => Err(RpcError::new(METHOD_NOT_FOUND, format!("The gateway has no method {other}."))),
    };
    // A dead or stopped credential is the caller's own refusal: answered as
    // HTTP, as it would be over REST.
    if let Some(response) = gateway.answered {
        return Ok(response);
    }
    Ok(match outcome {
        Ok(result) => Response::json(200, &json!({ "jsonrpc": "2.0", "id": id, "result": result })),
        Err(error) => rpc_error(id, error),
    })
}

fn rpc_error(id: Value, error: RpcError) -> Response {
    let body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": error.code, "message": error.message } });
    Response::json(error.status, &body)
}

/// One gateway call: the agent it is addressed to, and the inner calls it makes.
struct Gateway<'call, 'request> {
    context: &'call mut Context<'request>,
    agent_id: String,
    /// An inner answer to hand back as it is (a refused credential).
    answered: Option<Response>,
}

impl Gateway<'_, '_> {
    /// Re-enters the router as the caller, with the route's own request.
    async fn call(
        &mut self,
        method: &str,
        path: String,
        query: String,
        body: Option<Value>,
    ) -> Result<Value, RpcError> {
        let body = body.map(|body| body.to_string().into_bytes());
        let request = self.context.request().reentering(method, path, query, body);
        let response = self.context.reenter(&request, Surface::A2a, None).await;
        let body = response.json_body().unwrap_or(Value::Null);
        if response.credential_refused.is_some() {
            self.answered = Some(response);
            return Err(RpcError::new(INVALID_REQUEST, "The credential was refused."));
        }
        if response.status >= 400 {
            let code = match response.status {
                404 => TASK_NOT_FOUND,
                400 => INVALID_PARAMS,
                _ => INVALID_REQUEST,
            };
            let message = body["error"]["message"].as_str().unwrap_or("The node refused the call.").to_string();
            let reason = body["error"]["reason"].as_str().unwrap_or_default();
            return Err(RpcError::new(code, format!("{message} {reason}").trim().to_string()));
        }
        Ok(body)
    }

    /// The caller's request to this agent that task `id` names.
    async fn task(&mut self, params: &Map<String, Value>) -> Result<AgentMessage, RpcError> {
        let id = params.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
        let not_found = || RpcError::new(TASK_NOT_FOUND, format!("Task not found: {id}"));
        if !id.starts_with("amg_") || id.contains('/') {
            return Err(not_found());
        }
        let path = registry().route(mailroom_contract::RouteId::GetAgentMessage).path.replace(":agentMessageId", &id);
        let found = self.call("GET", path, String::new(), None).await.map_err(|error| match error.code {
            TASK_NOT_FOUND => not_found(),
            _ => error,
        })?;
        let message: AgentMessage = serde_json::from_value(found).map_err(|_| not_found())?;
        let mine = Some(message.sender.as_str()) == self.context.caller().actor_id();
        if !mine || message.recipient != self.agent_id || message.kind.name() != "request" {
            return Err(not_found());
        }
        Ok(message)
    }

    async fn send(&mut self, params: &Map<String, Value>, version: Version) -> Result<Value, RpcError> {
        let Some(message) = params.get("message").and_then(Value::as_object) else {
            return Err(RpcError::new(INVALID_PARAMS, "`message` is required."));
        };
        let Some(message_id) = message.get("messageId").and_then(Value::as_str).filter(|id| !id.is_empty()) else {
            return Err(RpcError::new(INVALID_PARAMS, "`message.messageId` is required."));
        };
        if let Some(task_id) = message.get("taskId").and_then(Value::as_str).filter(|id| !id.is_empty()) {
            let named = Map::from_iter([("id".to_string(), Value::from(task_id))]);
            let task = self.task(&named).await;
            let task =
                task.map_err(|_| RpcError::new(TASK_NOT_FOUND, "The message names a task that is not found."))?;
            let why = if task.state.is_finished() {
                "the task is in a terminal state"
            } else {
                "this agent takes no further input on a task"
            };
            return Err(RpcError::new(
                UNSUPPORTED_OPERATION,
                format!("A message cannot continue a task here: {why}. Send a new message."),
            ));
        }
        let parts = parts_in(message.get("parts"))?;
        let mut body = json!({
            "recipient": self.agent_id,
            "kind": "request",
            "content": { "parts": parts },
            "idempotency_key": format!("a2a:{message_id}"),
        });
        if let Some(context_id) = message.get("contextId").and_then(Value::as_str).filter(|id| id.starts_with("cnv_")) {
            body["conversation_id"] = context_id.into();
        }
        let path = registry().route(mailroom_contract::RouteId::SendAgentMessage).path.to_string();
        let sent = self.call("POST", path, String::new(), Some(body)).await?;
        let sent: AgentMessage =
            serde_json::from_value(sent).map_err(|_| RpcError::new(INVALID_REQUEST, "Unreadable answer."))?;
        Ok(task_json(&sent, version, None))
    }

    async fn get(&mut self, params: &Map<String, Value>, version: Version) -> Result<Value, RpcError> {
        let task = self.task(params).await?;
        let history = params.get("historyLength").and_then(Value::as_u64);
        Ok(task_json(&task, version, history))
    }

    async fn list(&mut self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let page_size = params.get("pageSize").and_then(Value::as_u64).filter(|size| *size > 0).unwrap_or(50).min(100);
        let mut query = form_urlencoded::Serializer::new(String::new());
        query
            .append_pair("recipient", &self.agent_id)
            .append_pair("kind", "request")
            .append_pair("limit", &page_size.to_string());
        if let Some(token) = params.get("pageToken").and_then(Value::as_str).filter(|token| !token.is_empty()) {
            query.append_pair("cursor", token);
        }
        let path = registry().route(mailroom_contract::RouteId::ListSentAgentMessages).path.to_string();
        let page = self.call("GET", path, query.finish(), None).await?;
        let page: AgentMessageList =
            serde_json::from_value(page).map_err(|_| RpcError::new(INVALID_REQUEST, "Unreadable answer."))?;
        // `UNRECOGNIZED` is what a client sends when it means no filter.
        let status = params
            .get("status")
            .and_then(Value::as_str)
            .filter(|status| status.starts_with("TASK_STATE_") && *status != "TASK_STATE_UNSPECIFIED");
        let context_id = params.get("contextId").and_then(Value::as_str).filter(|id| !id.is_empty());
        let history = params.get("historyLength").and_then(Value::as_u64);
        let tasks: Vec<Value> = page
            .messages
            .iter()
            .filter(|message| status.is_none_or(|status| v1_state(task_state(message)) == status))
            .filter(|message| context_id.is_none_or(|id| message.conversation_id == id))
            .map(|message| task_json(message, Version::V1, history))
            .collect();
        let mut result = json!({ "tasks": tasks, "nextPageToken": page.next_cursor.clone().unwrap_or_default(), "pageSize": page_size });
        if page.next_cursor.is_none() && params.get("pageToken").is_none_or(|token| token.as_str() == Some("")) {
            result["totalSize"] = result["tasks"].as_array().map_or(0, Vec::len).into();
        }
        Ok(result)
    }

    async fn cancel(&mut self, params: &Map<String, Value>, version: Version) -> Result<Value, RpcError> {
        let task = self.task(params).await?;
        if task.state.is_finished() {
            return Err(RpcError::new(
                TASK_NOT_CANCELABLE,
                format!("Task not cancelable: {} is {}", task.id, v1_state(task_state(&task))),
            ));
        }
        let path = registry()
            .route(mailroom_contract::RouteId::CancelAgentConversation)
            .path
            .replace(":conversationId", &task.conversation_id);
        let canceled = self.call("POST", path, String::new(), None).await?;
        let now = canceled["messages"]
            .as_array()
            .and_then(|messages| messages.iter().find(|message| message["id"] == json!(task.id)))
            .and_then(|message| serde_json::from_value::<AgentMessage>(message.clone()).ok())
            .unwrap_or(task);
        Ok(task_json(&now, version, None))
    }
}

/// A message's parts as the node stores them (A2A 1.0's shape): text and data
/// parts; files are refused.
fn parts_in(parts: Option<&Value>) -> Result<Vec<Value>, RpcError> {
    let Some(parts) = parts.and_then(Value::as_array).filter(|parts| !parts.is_empty()) else {
        return Err(RpcError::new(INVALID_PARAMS, "`message.parts` must hold at least one part."));
    };
    parts
        .iter()
        .map(|part| {
            if let Some(text) = part.get("text").and_then(Value::as_str) {
                Ok(json!({ "text": text }))
            } else if let Some(data) = part.get("data") {
                Ok(json!({ "data": data }))
            } else {
                Err(RpcError::new(
                    CONTENT_TYPE_NOT_SUPPORTED,
                    "Only text and data parts are carried: send a file as a link in text.",
                ))
            }
        })
        .collect()
}

/// A task's state, in words both versions spell from.
fn task_state(message: &AgentMessage) -> &'static str {
    use AgentMessageState as State;
    match message.state {
        State::Queued | State::Held if message.attempts == 0 => "submitted",
        State::Queued | State::Held | State::Leased => "working",
        State::Answered | State::Acknowledged | State::Delivered => "completed",
        State::Rejected | State::Refused => "rejected",
        State::Failed | State::Expired => "failed",
        State::Canceled => "canceled",
    }
}

fn v1_state(state: &str) -> String {
    format!("TASK_STATE_{}", state.to_ascii_uppercase())
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

/// The request `task` as an A2A task of `version`, with at most `history`
/// messages of its history (all when not given).
fn task_json(task: &AgentMessage, version: Version, history: Option<u64>) -> Value {
    let state = task_state(task);
    let mut status = json!({
        "state": if version == Version::V1 { v1_state(state) } else { state.to_string() },
        "timestamp": task.updated_at,
    });
    if let Some(reason) = &task.reason {
        status["message"] = history_message(&format!("{}-status", task.id), task, false, &json!(reason), version);
    }
    let mut messages = vec![history_message(&task.id, task, true, &task.content, version)];
    let mut body = json!({ "id": task.id, "contextId": task.conversation_id, "status": status });
    if let Some(reply) = &task.reply {
        messages.push(history_message(&reply.id, task, false, &reply.content, version));
        let mut artifact =
            json!({ "artifactId": reply.id, "name": "reply", "parts": parts_of(&reply.content, version) });
        if version == Version::V03 {
            artifact["description"] = "The agent's reply.".into();
        }
        body["artifacts"] = json!([artifact]);
    }
    let keep =
        history.map_or(messages.len(), |history| usize::try_from(history).unwrap_or(usize::MAX).min(messages.len()));
    body["history"] = Value::Array(messages.split_off(messages.len() - keep));
    if version == Version::V03 {
        body["kind"] = "task".into();
    }
    body
}
