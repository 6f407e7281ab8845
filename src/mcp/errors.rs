//! The MCP server's errors: JSON-RPC's codes, `RpcError` (an error with the
//! HTTP status it travels with, or a refusal of the caller answered as HTTP),
//! and the errors a tool call meets (an unknown tool, a withheld one, arguments
//! its schema refuses).

use mailroom_contract::api::RefusalBody;
use serde_json::Value;

use crate::core::http::Response;
use crate::core::refusal::Refusal;

pub(super) const PARSE_ERROR: i64 = -32700;
pub(super) const INVALID_REQUEST: i64 = -32600;
pub(super) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;
pub(super) const HEADER_MISMATCH: i64 = -32020;
pub(super) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// A JSON-RPC error, with the HTTP status it travels with.
pub(crate) struct RpcError {
    pub(super) status: u16,
    pub(super) code: i64,
    pub(super) message: String,
    pub(super) data: Option<Value>,
    /// Set when the caller itself was refused: this HTTP answer goes as it is
    /// (the four-part body, its status, its `WWW-Authenticate`), not JSON-RPC.
    pub(super) answer: Option<Response>,
}

impl RpcError {
    pub(crate) fn new(status: u16, code: i64, message: impl Into<String>) -> RpcError {
        RpcError { status, code, message: message.into(), data: None, answer: None }
    }

    /// The caller's own refusal, answered as HTTP, as every other route answers it.
    pub(super) fn refusal(refusal: Refusal) -> RpcError {
        RpcError::answered(Response::refusal(&refusal))
    }

    /// A route's refusal of the caller's own credential, met while re-entering
    /// the dispatcher for a tool call: answered as the route answered it.
    pub(crate) fn answered(answer: Response) -> RpcError {
        RpcError { status: answer.status, code: -32001, message: String::new(), data: None, answer: Some(answer) }
    }

    pub(super) fn mismatch(message: impl Into<String>) -> RpcError {
        RpcError::new(400, HEADER_MISMATCH, message)
    }
}

/// A refusal of the caller itself (a revoked session, a paused agent) while
/// working out its tools: answered as any route's refusal, not as JSON-RPC.
pub(crate) fn refused(refusal: Refusal) -> RpcError {
    RpcError::refusal(refusal)
}

pub(crate) fn unknown_tool(name: &str) -> RpcError {
    RpcError::new(200, INVALID_PARAMS, format!("Unknown tool: {name}"))
}

/// A call whose argument names its tool's schema refuses (one it does not
/// declare, one it requires left out): the protocol's invalid params, with the
/// refusal naming each in the message a model reads and, whole, in `data`.
pub(crate) fn invalid_arguments(name: &str, refusal: RefusalBody) -> RpcError {
    let detail = &refusal.error;
    let message = format!("Invalid arguments for {name}: {} {} Fix: {}", detail.message, detail.reason, detail.fix);
    RpcError { status: 200, code: INVALID_PARAMS, message, data: serde_json::to_value(&refusal).ok(), answer: None }
}

/// A tool that exists but is not this caller's: still no tool (-32602), with the
/// refusal in the message a model reads and, whole, in `data`.
pub(crate) fn withheld_tool(name: &str, refusal: RefusalBody) -> RpcError {
    let detail = &refusal.error;
    let message = format!("Tool withheld: {name}. {} {} Fix: {}", detail.message, detail.reason, detail.fix);
    RpcError { status: 200, code: INVALID_PARAMS, message, data: serde_json::to_value(&refusal).ok(), answer: None }
}
