//! The MCP protocol at `POST /mcp`: a JSON-RPC message read and checked, its
//! era decided from its headers and `_meta` (the `initialize` era or the
//! per-request one), the method answered (`initialize`, `ping`,
//! `server/discover`, `tools/list`, `tools/call`, `resources/list`,
//! `resources/templates/list`, `resources/read`; in 2026-07-28,
//! `subscriptions/listen`, answered as a stream), and the answer written with
//! what the era asks beside the result.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use mailroom_contract::{registry, tools};
use serde_json::{Map, Value, json};

use crate::core::context::Context;
use crate::core::http::{Request, Response};
use crate::core::refusal::Refusal;
use crate::core::timing::Phase;

use super::errors::{
    INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError, UNSUPPORTED_PROTOCOL_VERSION,
};
use super::{call, catalogue, listen, resources};

/// The revision that carries its version in every request's `_meta`.
pub const MODERN_VERSION: &str = "2026-07-28";
/// The `initialize` revisions, newest first.
pub const LEGACY_VERSIONS: [&str; 2] = ["2025-11-25", "2025-06-18"];

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Every version this server speaks, newest first.
pub fn supported_versions() -> Vec<&'static str> {
    let mut versions = vec![MODERN_VERSION];
    versions.extend(LEGACY_VERSIONS);
    versions
}

fn rpc_response(status: u16, body: Value) -> Response {
    Response::json(status, &body)
}

fn rpc_error(id: Value, error: RpcError) -> Response {
    if let Some(answer) = error.answer {
        return answer;
    }
    let mut body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": error.code, "message": error.message } });
    if let Some(data) = error.data {
        body["error"]["data"] = data;
    }
    rpc_response(error.status, body)
}

fn accepted() -> Response {
    Response::empty(202)
}

/// Which era a request speaks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Era {
    Legacy,
    Modern,
}

fn server_info() -> Value {
    json!({ "name": "mailroom", "title": "Mailroom", "version": env!("CARGO_PKG_VERSION") })
}

/// Decodes a header value that may use the `=?base64?…?=` sentinel.
fn header_value(raw: &str) -> Option<String> {
    match raw.strip_prefix("=?base64?").and_then(|rest| rest.strip_suffix("?=")) {
        Some(encoded) => STANDARD.decode(encoded).ok().and_then(|bytes| String::from_utf8(bytes).ok()),
        None => Some(raw.to_string()),
    }
}

/// `POST /mcp`.
pub async fn handle(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let read = context.measured(Phase::Parse, || serde_json::from_slice::<Value>(&context.request().body));
    let message = match read {
        Ok(message) => message,
        Err(error) => {
            return Ok(rpc_error(Value::Null, RpcError::new(400, PARSE_ERROR, format!("Parse error: {error}"))));
        }
    };
    if message.is_array() {
        let error =
            RpcError::new(400, INVALID_REQUEST, "JSON-RPC batches are not supported: send one message per request");
        return Ok(rpc_error(Value::Null, error));
    }
    let Some(object) = message.as_object() else {
        return Ok(rpc_error(Value::Null, RpcError::new(400, INVALID_REQUEST, "A JSON-RPC message is an object")));
    };
    let id = object.get("id").cloned();
    // An error echoes the request's id only when it is one JSON-RPC allows.
    let echoed = id.clone().filter(is_valid_id).unwrap_or(Value::Null);
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        let error = RpcError::new(400, INVALID_REQUEST, "`jsonrpc` must be \"2.0\"");
        return Ok(rpc_error(echoed, error));
    }
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        // A response from the client (to nothing this server asked): accepted and ignored.
        if object.contains_key("result") || object.contains_key("error") {
            return Ok(accepted());
        }
        let error = RpcError::new(400, INVALID_REQUEST, "A JSON-RPC request needs a `method`");
        return Ok(rpc_error(echoed, error));
    };
    let params = match object.get("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params.clone(),
        // JSON-RPC allows parameters by position; MCP names every parameter.
        Some(Value::Array(_)) => {
            let error = RpcError::new(400, INVALID_PARAMS, "`params` must be an object: MCP parameters are named");
            return Ok(rpc_error(echoed, error));
        }
        Some(_) => {
            let error = RpcError::new(400, INVALID_REQUEST, "`params` must be an object");
            return Ok(rpc_error(echoed, error));
        }
    };
    let era = match check_protocol(context.request(), method, &params, id.is_some()) {
        Ok(era) => era,
        Err(error) => return Ok(rpc_error(echoed, error)),
    };
    let Some(id) = id else {
        // A notification (notifications/initialized, cancellations): nothing to answer.
        return Ok(accepted());
    };
    if !is_valid_id(&id) {
        return Ok(rpc_error(Value::Null, RpcError::new(400, INVALID_REQUEST, "`id` must be a string or an integer")));
    }
    // A subscription's answer is its stream (or the error refusing it).
    if era == Era::Modern && method == "subscriptions/listen" {
        return Ok(match listen::listen(context, &id, &params).await {
            Ok(stream) => stream,
            Err(error) => rpc_error(id, error),
        });
    }
    // 2026-07-28 removed `initialize` and `ping`: a request of that era naming
    // them names no method it has.
    let outcome = match (era, method) {
        (Era::Legacy, "initialize") => Ok(Answer::Result(initialize(&params))),
        (Era::Legacy, "ping") => Ok(Answer::Result(json!({}))),
        (_, "server/discover") => Ok(Answer::Result(discover())),
        (_, "tools/list") => catalogue::list_tools(context).await.map(Answer::Tools),
        (_, "tools/call") => call::call_tool(context, &params).await.map(Answer::Result),
        (_, "resources/list") => resources::list(context).await.map(Answer::Result),
        (_, "resources/templates/list") => Ok(Answer::Result(resources::templates())),
        (_, "resources/read") => resources::read(context, &params).await.map(Answer::Result),
        _ => {
            let status = if era == Era::Modern { 404 } else { 200 };
            Err(RpcError::new(status, METHOD_NOT_FOUND, format!("Method not found: {method}")))
        }
    };
    Ok(context.measured(Phase::Serialise, || match outcome {
        Ok(answer) => {
            // What a 2026-07-28 result carries beside the method's own members.
            let mut members = Map::new();
            if era == Era::Modern {
                members.insert("resultType".into(), json!("complete"));
                if let Some(hint) = cache_hint(method) {
                    members.insert("ttlMs".into(), json!(hint.ttl_ms));
                    members.insert("cacheScope".into(), json!(hint.scope));
                }
                members.insert("_meta".into(), json!({ META_SERVER_INFO: server_info() }));
            }
            answer.respond(&id, members)
        }
        Err(error) => rpc_error(id, error),
    }))
}

/// A method's result, before it is written.
enum Answer {
    /// A result to be written whole.
    Result(Value),
    /// `tools/list`'s: the tools' definitions as the contract generated them,
    /// spliced into the answer byte for byte, never parsed or written again.
    Tools(Vec<&'static str>),
}

impl Answer {
    /// The JSON-RPC answer to request `id`, with `members` beside the result's own.
    fn respond(self, id: &Value, members: Map<String, Value>) -> Response {
        match self {
            Answer::Result(mut result) => {
                if let Some(result) = result.as_object_mut() {
                    result.extend(members);
                }
                rpc_response(200, json!({ "jsonrpc": "2.0", "id": id, "result": result }))
            }
            Answer::Tools(tools) => {
                let written: usize = tools.iter().map(|tool| tool.len() + 1).sum();
                let mut body = Vec::with_capacity(written + 512);
                body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                body.extend(serde_json::to_vec(id).unwrap_or_default());
                body.extend_from_slice(br#","result":{"tools":["#);
                for (index, tool) in tools.iter().enumerate() {
                    if index > 0 {
                        body.push(b',');
                    }
                    body.extend_from_slice(tool.as_bytes());
                }
                body.push(b']');
                for (name, value) in &members {
                    body.push(b',');
                    body.extend(serde_json::to_vec(name).unwrap_or_default());
                    body.push(b':');
                    body.extend(serde_json::to_vec(value).unwrap_or_default());
                }
                body.extend_from_slice(b"}}");
                Response::json_written(200, body)
            }
        }
    }
}

/// How long a client may reuse a result, and who may share it: what 2026-07-28
/// requires on every cacheable result (`CacheableResult`: `ttlMs`, `cacheScope`).
struct CacheHint {
    ttl_ms: u64,
    scope: &'static str,
}

/// How long `server/discover`'s answer stays fresh: it changes only when a new
/// version of the node is deployed, which no client can foresee, and a stale one
/// costs little (a version no longer spoken is refused with the ones that are).
const DISCOVER_TTL_MS: u64 = 60 * 60 * 1000;

/// The hint for a method whose result the revision makes cacheable.
fn cache_hint(method: &str) -> Option<CacheHint> {
    match method {
        // The catalogue is the caller's own (by credential, ceiling and
        // relations held), so it is private. It changes the moment an
        // administrator grants or revokes a relation, which the node cannot
        // foresee and does not announce, so it promises no freshness at all:
        // a client lists again when it needs the list. Nothing depends on a
        // stale list but what is shown: every call is judged afresh.
        "tools/list" => Some(CacheHint { ttl_ms: 0, scope: "private" }),
        // A resource is the caller's own reading of something that changes
        // whenever anyone acts: never fresh for long, never shared.
        "resources/list" | "resources/read" => Some(CacheHint { ttl_ms: 0, scope: "private" }),
        // The same two templates for everyone, until a new version is deployed.
        "resources/templates/list" => Some(CacheHint { ttl_ms: DISCOVER_TTL_MS, scope: "public" }),
        // The same answer for every caller, credential or none.
        "server/discover" => Some(CacheHint { ttl_ms: DISCOVER_TTL_MS, scope: "public" }),
        _ => None,
    }
}

/// Whether a request id is one MCP allows: a string or an integer (never null).
fn is_valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// Decides the era and checks the headers against the body: a modern request
/// carries its version in `_meta` and mirrors it, its method and its tool name in
/// headers, which must match; a legacy request's version header, when present,
/// must name a version this server speaks.
/// A notification (`asks` false) need not carry the method and name headers
/// (a client's `notifications/cancelled` has none), but those it carries must
/// match.
fn check_protocol(request: &Request, method: &str, params: &Map<String, Value>, asks: bool) -> Result<Era, RpcError> {
    let header = request.header("mcp-protocol-version").map(str::trim);
    let declared = params.get("_meta").and_then(|meta| meta.get(META_VERSION)).and_then(Value::as_str);
    let unsupported = |requested: &str| RpcError {
        status: 400,
        code: UNSUPPORTED_PROTOCOL_VERSION,
        message: "Unsupported protocol version".into(),
        data: Some(json!({ "supported": supported_versions(), "requested": requested })),
        answer: None,
    };
    let Some(declared) = declared else {
        return match header {
            Some(version) if LEGACY_VERSIONS.contains(&version) => Ok(Era::Legacy),
            Some(version) if version == MODERN_VERSION => Err(RpcError::mismatch(format!(
                "MCP-Protocol-Version is {version} but the body's _meta declares no {META_VERSION}"
            ))),
            Some(version) => Err(unsupported(version)),
            None => Ok(Era::Legacy),
        };
    };
    if declared != MODERN_VERSION {
        return Err(unsupported(declared));
    }
    match header {
        None => return Err(RpcError::mismatch("The MCP-Protocol-Version header is required")),
        Some(version) if version != declared => {
            return Err(RpcError::mismatch(format!(
                "MCP-Protocol-Version header value '{version}' does not match body value '{declared}'"
            )));
        }
        Some(_) => {}
    }
    match request.header("mcp-method").map(str::trim) {
        None if !asks => {}
        None => return Err(RpcError::mismatch("The Mcp-Method header is required")),
        Some(header_method) if header_method != method => {
            return Err(RpcError::mismatch(format!(
                "Mcp-Method header value '{header_method}' does not match body value '{method}'"
            )));
        }
        Some(_) => {}
    }
    // The member `Mcp-Name` mirrors, for the methods that name what they act on.
    let named = match method {
        "tools/call" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(member) = named {
        let name = params.get(member).and_then(Value::as_str).unwrap_or_default();
        match request.header("mcp-name").and_then(header_value) {
            None if !asks => {}
            None => return Err(RpcError::mismatch(format!("The Mcp-Name header is required for {method}"))),
            Some(header_name) if header_name != name => {
                return Err(RpcError::mismatch(format!(
                    "Mcp-Name header value '{header_name}' does not match body value '{name}'"
                )));
            }
            Some(_) => {}
        }
    }
    Ok(Era::Modern)
}

fn initialize(params: &Map<String, Value>) -> Value {
    let requested = params.get("protocolVersion").and_then(Value::as_str).unwrap_or_default();
    let version = LEGACY_VERSIONS.iter().find(|version| **version == requested).copied().unwrap_or(LEGACY_VERSIONS[0]);
    json!({
        "protocolVersion": version,
        // No `subscribe` in this era: it needs a session's GET stream, which a
        // stateless endpoint has not (README, "Connecting an MCP client").
        "capabilities": { "tools": { "listChanged": false }, "resources": { "subscribe": false, "listChanged": false } },
        "serverInfo": server_info(),
        "instructions": tools::instructions(registry()),
    })
}

fn discover() -> Value {
    json!({
        "supportedVersions": supported_versions(),
        // Subscribed to on `subscriptions/listen`, which 2026-07-28 has.
        "capabilities": { "tools": { "listChanged": true }, "resources": { "subscribe": true, "listChanged": true } },
        "instructions": tools::instructions(registry()),
    })
}
