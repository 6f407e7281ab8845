//! The MCP endpoint's JSON-RPC messages, described only as far as the node shapes them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One JSON-RPC 2.0 message for the Model Context Protocol: a request (with `id`),
/// or a notification (without). See the MCP specification for the methods.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct JsonRpcRequest {
    /// Always `2.0`.
    pub jsonrpc: String,
    /// The request's id; absent for a notification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<serde_json::Value>,
    /// The method, such as `initialize`, `server/discover`, `tools/list` or `tools/call`.
    pub method: String,
    /// The method's parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Map<String, serde_json::Value>>,
}

/// A JSON-RPC 2.0 response: a `result` or an `error`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct JsonRpcResponse {
    /// Always `2.0`.
    pub jsonrpc: String,
    /// The id of the request answered (null when the request could not be read).
    pub id: serde_json::Value,
    /// The method's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Map<String, serde_json::Value>>,
    /// Why the request failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<JsonRpcError>,
}

/// A JSON-RPC 2.0 error.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct JsonRpcError {
    /// The error code: -32700 parse error, -32600 invalid request, -32601 method not
    /// found, -32602 invalid params (an unknown tool), -32020 header mismatch,
    /// -32022 unsupported protocol version.
    pub code: i64,
    /// What went wrong.
    pub message: String,
    /// Further facts, such as the supported protocol versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}
