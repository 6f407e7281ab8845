//! JSON-RPC as both A2A endpoints speak it (A2A 1.0 §9): reading one request
//! (its media type, its shape, the A2A version it asks for and the method that
//! version has by that name) and answering it with a result or an error.
//!
//! Every error carries `data`: an array holding one `google.rpc.ErrorInfo`,
//! whose domain is `a2a-protocol.org` for A2A's own errors (§9.5) and the
//! node's for JSON-RPC's and for a route's refusal passed on, with what the
//! node knows (the field, the fix) as its metadata; an error about a parameter
//! adds a `google.rpc.BadRequest` naming it.

use serde_json::{Map, Value, json};

use crate::core::http::{Request, Response};

/// The A2A versions the gateway speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    V1,
    V03,
}

impl Version {
    /// How the version is written (`Major.Minor`, as A2A 1.0 §3.6 has it).
    pub fn name(self) -> &'static str {
        match self {
            Version::V1 => "1.0",
            Version::V03 => "0.3",
        }
    }

    /// The version a request asks for: its `A2A-Version` header, else the
    /// `A2A-Version` query parameter (§3.6.1), read by `Major.Minor` (a patch
    /// number is ignored, §3.6). Empty or absent is 0.3 (§3.6.2). `Err` holds
    /// what was asked for when the gateway does not speak it.
    pub fn asked(request: &Request, parameter: Option<&str>) -> Result<Version, String> {
        let asked = request.header("a2a-version").or(parameter).unwrap_or_default().trim();
        let mut numbers = asked.split('.');
        match (numbers.next(), numbers.next()) {
            (Some(""), None) => Ok(Version::V03),
            (Some("1"), None | Some("0")) => Ok(Version::V1),
            (Some("0"), Some("3")) => Ok(Version::V03),
            _ => Err(asked.to_string()),
        }
    }
}

/// What a method asks of an endpoint, whatever its name in either version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    SendMessage,
    GetTask,
    ListTasks,
    CancelTask,
    /// A send whose answer goes on as the task's updates (server-sent events).
    SendStreaming,
    /// A task's updates from now on, its current state first.
    Subscribe,
    /// A task's push notification configs.
    Push(PushOperation),
    /// The extended card for an authenticated caller: there is none.
    ExtendedCard,
}

/// What a push notification config method asks, whatever its version's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushOperation {
    Create,
    Get,
    List,
    Delete,
}

/// Each version's methods, by name (A2A 1.0 §9.4, 0.3 §7).
const METHODS: [(Version, &str, Operation); 21] = [
    (Version::V1, "SendMessage", Operation::SendMessage),
    (Version::V1, "SendStreamingMessage", Operation::SendStreaming),
    (Version::V1, "GetTask", Operation::GetTask),
    (Version::V1, "ListTasks", Operation::ListTasks),
    (Version::V1, "CancelTask", Operation::CancelTask),
    (Version::V1, "SubscribeToTask", Operation::Subscribe),
    (Version::V1, "CreateTaskPushNotificationConfig", Operation::Push(PushOperation::Create)),
    (Version::V1, "GetTaskPushNotificationConfig", Operation::Push(PushOperation::Get)),
    (Version::V1, "ListTaskPushNotificationConfigs", Operation::Push(PushOperation::List)),
    (Version::V1, "DeleteTaskPushNotificationConfig", Operation::Push(PushOperation::Delete)),
    (Version::V1, "GetExtendedAgentCard", Operation::ExtendedCard),
    (Version::V03, "message/send", Operation::SendMessage),
    (Version::V03, "message/stream", Operation::SendStreaming),
    (Version::V03, "tasks/get", Operation::GetTask),
    (Version::V03, "tasks/cancel", Operation::CancelTask),
    (Version::V03, "tasks/resubscribe", Operation::Subscribe),
    (Version::V03, "tasks/pushNotificationConfig/set", Operation::Push(PushOperation::Create)),
    (Version::V03, "tasks/pushNotificationConfig/get", Operation::Push(PushOperation::Get)),
    (Version::V03, "tasks/pushNotificationConfig/list", Operation::Push(PushOperation::List)),
    (Version::V03, "tasks/pushNotificationConfig/delete", Operation::Push(PushOperation::Delete)),
    (Version::V03, "agent/getAuthenticatedExtendedCard", Operation::ExtendedCard),
];

/// One request, read.
pub struct Call {
    /// The request's `id`, echoed in the answer.
    pub id: Value,
    pub method: String,
    pub operation: Operation,
    pub params: Map<String, Value>,
    pub version: Version,
}

/// The errors the gateway answers with: JSON-RPC's and A2A's (§5.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    ParseError,
    InvalidRequest,
    MethodNotFound,
    InvalidParams,
    TaskNotFound,
    TaskNotCancelable,
    PushNotificationNotSupported,
    UnsupportedOperation,
    ContentTypeNotSupported,
    VersionNotSupported,
}

/// The domain of A2A's own errors' `ErrorInfo` (§9.5).
const A2A_DOMAIN: &str = "a2a-protocol.org";
/// The domain of every other error's `ErrorInfo`: this node's.
pub const NODE_DOMAIN: &str = "mailroom";

impl ErrorKind {
    pub fn code(self) -> i64 {
        match self {
            ErrorKind::ParseError => -32700,
            ErrorKind::InvalidRequest => -32600,
            ErrorKind::MethodNotFound => -32601,
            ErrorKind::InvalidParams => -32602,
            ErrorKind::TaskNotFound => -32001,
            ErrorKind::TaskNotCancelable => -32002,
            ErrorKind::PushNotificationNotSupported => -32003,
            ErrorKind::UnsupportedOperation => -32004,
            ErrorKind::ContentTypeNotSupported => -32005,
            ErrorKind::VersionNotSupported => -32009,
        }
    }

    /// The `ErrorInfo` reason and domain: A2A's error type in UPPER_SNAKE_CASE
    /// without `Error` for its own, JSON-RPC's error name for the rest.
    fn reason_and_domain(self) -> (&'static str, &'static str) {
        match self {
            ErrorKind::ParseError => ("PARSE_ERROR", NODE_DOMAIN),
            ErrorKind::InvalidRequest => ("INVALID_REQUEST", NODE_DOMAIN),
            ErrorKind::MethodNotFound => ("METHOD_NOT_FOUND", NODE_DOMAIN),
            ErrorKind::InvalidParams => ("INVALID_PARAMS", NODE_DOMAIN),
            ErrorKind::TaskNotFound => ("TASK_NOT_FOUND", A2A_DOMAIN),
            ErrorKind::TaskNotCancelable => ("TASK_NOT_CANCELABLE", A2A_DOMAIN),
            ErrorKind::PushNotificationNotSupported => ("PUSH_NOTIFICATION_NOT_SUPPORTED", A2A_DOMAIN),
            ErrorKind::UnsupportedOperation => ("UNSUPPORTED_OPERATION", A2A_DOMAIN),
            ErrorKind::ContentTypeNotSupported => ("CONTENT_TYPE_NOT_SUPPORTED", A2A_DOMAIN),
            ErrorKind::VersionNotSupported => ("VERSION_NOT_SUPPORTED", A2A_DOMAIN),
        }
    }
}

/// A JSON-RPC error, with the HTTP status it travels with.
#[derive(Debug)]
pub struct RpcError {
    pub kind: ErrorKind,
    pub message: String,
    /// 200 for an answer about the call; 400 for a request the endpoint cannot
    /// read; 415 for a body not sent as JSON.
    pub status: u16,
    /// The parameter at fault, as a path from `params` (`params.pageSize`).
    pub field: Option<String>,
    /// A refusal's own code, for one passed on from a route (`inbox_full`).
    pub node_reason: Option<String>,
    /// What else the node knows, as `ErrorInfo` metadata: strings by name.
    pub metadata: Vec<(&'static str, String)>,
}

impl RpcError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> RpcError {
        RpcError { kind, message: message.into(), status: 200, field: None, node_reason: None, metadata: Vec::new() }
    }

    /// An error about the request itself, answered with 400.
    pub fn unreadable(kind: ErrorKind, message: impl Into<String>) -> RpcError {
        RpcError { status: 400, ..RpcError::new(kind, message) }
    }

    /// An invalid parameter, named by its path from `params`.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> RpcError {
        RpcError { field: Some(field.into()), ..RpcError::new(ErrorKind::InvalidParams, message) }
    }

    pub fn with(mut self, name: &'static str, value: impl Into<String>) -> RpcError {
        self.metadata.push((name, value.into()));
        self
    }

    /// The error's `data`: its `ErrorInfo`, and a `BadRequest` naming the field.
    fn data(&self) -> Value {
        let (reason, domain) = self.kind.reason_and_domain();
        let (reason, domain) = match (&self.node_reason, domain) {
            (Some(code), NODE_DOMAIN) => (code.to_ascii_uppercase(), NODE_DOMAIN),
            _ => (reason.to_string(), domain),
        };
        let mut metadata: Map<String, Value> =
            self.metadata.iter().map(|(name, value)| ((*name).to_string(), Value::from(value.as_str()))).collect();
        if let Some(field) = &self.field {
            metadata.insert("field".into(), field.as_str().into());
        }
        let mut data = vec![json!({
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": reason,
            "domain": domain,
            "metadata": metadata,
        })];
        if let Some(field) = &self.field {
            data.push(json!({
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [{ "field": field, "description": self.message }],
            }));
        }
        Value::Array(data)
    }
}

/// The answer to a call that succeeded.
pub fn result(id: Value, result: Value) -> Response {
    Response::json(200, &json!({ "jsonrpc": "2.0", "id": id, "result": result }))
}

/// The answer to a call that failed.
pub fn error(id: Value, error: RpcError) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": error.kind.code(), "message": error.message, "data": error.data() },
    });
    Response::json(error.status, &body)
}

/// The media types a request may be sent as: JSON, or A2A's own name for it
/// (§14.1), whatever parameters follow.
fn sent_as_json(request: &Request) -> bool {
    let media = request.header("content-type").unwrap_or_default();
    let media = media.split(';').next().unwrap_or_default().trim();
    media.eq_ignore_ascii_case("application/json") || media.eq_ignore_ascii_case("application/a2a+json")
}

/// Reads one request: `Ok(None)` for a notification (a request without `id`,
/// which JSON-RPC answers with nothing), `Err` with the error to answer.
/// `parameter` is the `A2A-Version` query parameter, if sent.
pub fn read(request: &Request, parameter: Option<&str>) -> Result<Option<Call>, (Value, RpcError)> {
    if !sent_as_json(request) {
        let sent = request.header("content-type").unwrap_or("nothing");
        let error = RpcError {
            status: 415,
            ..RpcError::new(
                ErrorKind::ContentTypeNotSupported,
                format!("A2A JSON-RPC is sent as application/json; this request was sent as {sent}."),
            )
        };
        return Err((Value::Null, error.with("contentType", sent)));
    }
    let message: Value = serde_json::from_slice(&request.body).map_err(|parsed| {
        (Value::Null, RpcError::unreadable(ErrorKind::ParseError, format!("The body is not JSON: {parsed}.")))
    })?;
    let object = match message {
        Value::Object(object) => object,
        Value::Array(_) => {
            let error = "JSON-RPC batches are not supported: send one request per call.";
            return Err((Value::Null, RpcError::unreadable(ErrorKind::InvalidRequest, error)));
        }
        _ => {
            let error = "A JSON-RPC request is an object with `jsonrpc`, `id`, `method` and `params`.";
            return Err((Value::Null, RpcError::unreadable(ErrorKind::InvalidRequest, error)));
        }
    };
    let id = object.get("id").cloned();
    // An error echoes the request's id only when it is one JSON-RPC allows.
    let echoed = id.clone().filter(is_valid_id).unwrap_or(Value::Null);
    let invalid = |message: &str| Err((echoed.clone(), RpcError::unreadable(ErrorKind::InvalidRequest, message)));
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("`jsonrpc` must be \"2.0\".");
    }
    if id.as_ref().is_some_and(|id| !is_valid_id(id)) {
        return invalid("`id` must be a string, a number or null.");
    }
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return invalid("A JSON-RPC request names its `method`.");
    };
    let params = match object.get("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params.clone(),
        Some(_) => {
            let error = RpcError::invalid("params", "`params` must be an object: A2A names every parameter.");
            return Err((echoed, error));
        }
    };
    let version = Version::asked(request, parameter).map_err(|asked| {
        let message = format!("A2A {asked} is not spoken here: the supported versions are 1.0 and 0.3.");
        let error = RpcError::unreadable(ErrorKind::VersionNotSupported, message)
            .with("requestedVersion", asked)
            .with("supportedVersions", "1.0, 0.3");
        (echoed.clone(), error)
    })?;
    let Some(id) = id else { return Ok(None) };
    let operation = operation_of(version, method).map_err(|error| (id.clone(), error))?;
    Ok(Some(Call { id, method: method.to_string(), operation, params, version }))
}

/// Whether a request id is one JSON-RPC allows: a string, a number or null.
fn is_valid_id(id: &Value) -> bool {
    id.is_string() || id.is_number() || id.is_null()
}

/// What `method` asks of the version asked for: a method of the other version
/// is not one of this one's, and the error says which it is.
fn operation_of(version: Version, method: &str) -> Result<Operation, RpcError> {
    let named = |wanted: Version| {
        METHODS.iter().find(|(of, name, _)| *of == wanted && *name == method).map(|(_, _, operation)| *operation)
    };
    if let Some(operation) = named(version) {
        return Ok(operation);
    }
    let other = if version == Version::V1 { Version::V03 } else { Version::V1 };
    let message = match named(other) {
        Some(operation) => {
            let here = METHODS.iter().find(|(of, _, named)| *of == version && *named == operation);
            let instead = here.map_or(format!("A2A {} has no such method", version.name()), |(_, name, _)| {
                format!("its method is {name}")
            });
            format!(
                "{method} is an A2A {} method, and this request asked for A2A {} (`A2A-Version`, absent meaning 0.3): {instead}.",
                other.name(),
                version.name()
            )
        }
        None => format!("A2A {} has no method {method}.", version.name()),
    };
    Err(RpcError::new(ErrorKind::MethodNotFound, message).with("method", method).with("version", version.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asking(header: Option<&str>) -> Request {
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        if let Some(version) = header {
            headers.push(("A2A-Version".into(), version.into()));
        }
        Request {
            method: "POST".into(),
            path: "/a2a".into(),
            query: String::new(),
            headers,
            body: Vec::new(),
            origin: "https://node.example".into(),
            client_address: None,
        }
    }

    #[test]
    fn the_version_asked_for_is_read_by_major_and_minor_and_empty_is_0_3() {
        for (asked, expected) in [
            (Some("1.0"), Ok(Version::V1)),
            (Some("1"), Ok(Version::V1)),
            (Some("1.0.2"), Ok(Version::V1)),
            (Some(" 0.3 "), Ok(Version::V03)),
            (Some("0.3.0"), Ok(Version::V03)),
            (Some(""), Ok(Version::V03)),
            (None, Ok(Version::V03)),
            (Some("1.1"), Err("1.1".to_string())),
            (Some("2.0"), Err("2.0".to_string())),
            (Some("0.2"), Err("0.2".to_string())),
        ] {
            assert_eq!(Version::asked(&asking(asked), None), expected, "{asked:?}");
        }
        assert_eq!(Version::asked(&asking(None), Some("1.0")), Ok(Version::V1), "the query parameter");
        assert_eq!(Version::asked(&asking(Some("0.3")), Some("1.0")), Ok(Version::V03), "the header wins");
    }

    #[test]
    fn every_method_belongs_to_one_version_and_names_its_counterpart() {
        assert_eq!(operation_of(Version::V1, "SendMessage").ok(), Some(Operation::SendMessage));
        let crossed = operation_of(Version::V03, "SendMessage").unwrap_err();
        assert_eq!(crossed.kind, ErrorKind::MethodNotFound);
        assert!(crossed.message.contains("message/send"), "{}", crossed.message);
        let missing = operation_of(Version::V03, "ListTasks").unwrap_err();
        assert!(missing.message.contains("A2A 0.3 has no such method"), "{}", missing.message);
        for (version, name, _) in METHODS {
            assert_eq!(METHODS.iter().filter(|(of, named, _)| *of == version && *named == name).count(), 1);
        }
    }

    #[test]
    fn every_error_carries_an_error_info_and_a_named_field_a_bad_request() {
        let data = RpcError::new(ErrorKind::TaskNotFound, "gone").with("taskId", "amg_1").data();
        assert_eq!(data[0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(data[0]["domain"], A2A_DOMAIN);
        assert_eq!(data[0]["metadata"]["taskId"], "amg_1");
        let data = RpcError::invalid("params.pageSize", "too large").data();
        assert_eq!(data[0]["domain"], NODE_DOMAIN);
        assert_eq!(data[1]["fieldViolations"][0]["field"], "params.pageSize");
    }
}
