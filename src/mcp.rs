//! The MCP server at `POST /mcp`: Streamable HTTP with JSON responses, stateless,
//! speaking the `initialize` era (2025-06-18, 2025-11-25) and the per-request
//! `_meta` era (2026-07-28) on the same endpoint.
//!
//! Its tools are the node's routes. Which ones a caller sees depends on who is
//! asking: a stranger sees the grantable routes, an agent the grantable routes
//! pinned to it, a person the offerable routes they could complete. A tool call
//! builds the route's own HTTP request from the arguments and re-enters the
//! dispatcher in process with the caller's own credentials, so it meets the same
//! authority check, the same refusal and the same audit entry as the REST call
//! (recorded with surface `mcp`). Nothing here calls the functions beneath the
//! router, and nothing fetches the node's origin.
//!
//! "Could complete" is exact as far as tuples go, in the one round trip
//! `tools/list` may cost: with the session's liveness travel the relations the
//! person holds on the organisation and each distinct set of relations they hold
//! together on some mailbox (a few rows, however many mailboxes), so a mailbox
//! route is listed only where one mailbox meets its whole authority. A call is
//! judged by the route alone, as REST is: a withheld tool (by tier, by
//! grantability, an organisation relation not held, outside an agent's ceiling)
//! is the protocol error -32602 carrying the four-part refusal, but a mailbox
//! tool off a person's list answers the route's own refusal (`not_found`,
//! `missing_relation`) as a tool result, because knowing that no mailbox anywhere
//! would do costs a round trip the route itself does not take
//! (`docs/decisions/0009-mcp-catalogue-by-mailbox.md`).

use std::sync::OnceLock;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use mailroom_contract::api::RefusalBody;
use mailroom_contract::relation::ORGANIZATION_OBJECT;
use mailroom_contract::{Authority, Relation, Route, RouteId, Tier, registry, tools};
use serde_json::{Map, Value, json};

use crate::authz::{self, tuples};
use crate::context::Context;
use crate::credentials::Caller;
use crate::http::{Request, Response};
use crate::refusal::Refusal;
use crate::storage::QueryResult;

/// The revision that carries its version in every request's `_meta`.
pub const MODERN_VERSION: &str = "2026-07-28";
/// The `initialize` revisions, newest first.
pub const LEGACY_VERSIONS: [&str; 2] = ["2025-11-25", "2025-06-18"];

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const HEADER_MISMATCH: i64 = -32020;
const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// Every version this server speaks, newest first.
pub fn supported_versions() -> Vec<&'static str> {
    let mut versions = vec![MODERN_VERSION];
    versions.extend(LEGACY_VERSIONS);
    versions
}

/// A JSON-RPC error, with the HTTP status it travels with.
struct RpcError {
    status: u16,
    code: i64,
    message: String,
    data: Option<Value>,
    /// Set when the caller itself was refused; answered as a refusal, not JSON-RPC.
    refusal: Option<Refusal>,
}

impl RpcError {
    fn new(status: u16, code: i64, message: impl Into<String>) -> RpcError {
        RpcError { status, code, message: message.into(), data: None, refusal: None }
    }

    /// The caller's own refusal (authentication), answered as HTTP with the
    /// four-part body, as every other route does.
    fn refusal(refusal: Refusal) -> RpcError {
        RpcError {
            status: refusal.status,
            code: -32001,
            message: refusal.message.clone(),
            data: None,
            refusal: Some(refusal),
        }
    }

    fn mismatch(message: impl Into<String>) -> RpcError {
        RpcError::new(400, HEADER_MISMATCH, message)
    }
}

fn rpc_response(status: u16, body: Value) -> Response {
    Response::json(status, &body)
}

fn rpc_error(id: Value, error: RpcError) -> Response {
    if let Some(refusal) = &error.refusal {
        return Response::refusal(refusal);
    }
    let mut body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": error.code, "message": error.message } });
    if let Some(data) = error.data {
        body["error"]["data"] = data;
    }
    rpc_response(error.status, body)
}

fn accepted() -> Response {
    Response { status: 202, headers: Vec::new(), body: Vec::new(), round_trips: 0, deferred: Vec::new() }
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

/// Every offerable tool's definition, built once per isolate: schemas are
/// derived from the contract, and the same for every caller.
fn definitions() -> &'static Vec<(RouteId, Value)> {
    static DEFINITIONS: OnceLock<Vec<(RouteId, Value)>> = OnceLock::new();
    DEFINITIONS.get_or_init(|| {
        registry()
            .routes_with_tiers()
            .filter(|(_, tier)| tier.is_offerable())
            .map(|(route, tier)| (route.id, tools::definition(route, tier)))
            .collect()
    })
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
    let message: Value = match serde_json::from_slice(&context.request.body) {
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
    let era = match check_protocol(context.request, method, &params) {
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
    let outcome = match method {
        "initialize" => Ok(initialize(&params)),
        "ping" => Ok(json!({})),
        "server/discover" => Ok(discover()),
        "tools/list" => list_tools(context).await.map(|tools| json!({ "tools": tools })),
        "tools/call" => call_tool(context, &params).await,
        _ => {
            let status = if era == Era::Modern { 404 } else { 200 };
            Err(RpcError::new(status, METHOD_NOT_FOUND, format!("Method not found: {method}")))
        }
    };
    match outcome {
        Ok(mut result) => {
            if era == Era::Modern {
                result["resultType"] = json!("complete");
                result["_meta"] = json!({ META_SERVER_INFO: server_info() });
            }
            Ok(rpc_response(200, json!({ "jsonrpc": "2.0", "id": id, "result": result })))
        }
        Err(error) => Ok(rpc_error(id, error)),
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
fn check_protocol(request: &Request, method: &str, params: &Map<String, Value>) -> Result<Era, RpcError> {
    let header = request.header("mcp-protocol-version").map(str::trim);
    let declared = params.get("_meta").and_then(|meta| meta.get(META_VERSION)).and_then(Value::as_str);
    let unsupported = |requested: &str| RpcError {
        status: 400,
        code: UNSUPPORTED_PROTOCOL_VERSION,
        message: "Unsupported protocol version".into(),
        data: Some(json!({ "supported": supported_versions(), "requested": requested })),
        refusal: None,
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
        None => return Err(RpcError::mismatch("The Mcp-Method header is required")),
        Some(header_method) if header_method != method => {
            return Err(RpcError::mismatch(format!(
                "Mcp-Method header value '{header_method}' does not match body value '{method}'"
            )));
        }
        Some(_) => {}
    }
    if method == "tools/call" {
        let name = params.get("name").and_then(Value::as_str).unwrap_or_default();
        match request.header("mcp-name").and_then(header_value) {
            None => return Err(RpcError::mismatch("The Mcp-Name header is required for tools/call")),
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
        "capabilities": { "tools": { "listChanged": false } },
        "serverInfo": server_info(),
        "instructions": tools::instructions(registry()),
    })
}

fn discover() -> Value {
    json!({
        "supportedVersions": supported_versions(),
        "capabilities": { "tools": { "listChanged": false } },
        "instructions": tools::instructions(registry()),
    })
}

/// Why a route that exists is not on a caller's list, as far as that can be
/// known without asking the database. A call to it is the protocol error -32602
/// carrying the four-part refusal this maps to (in `refusal.rs`), so a model
/// meeting the absence reads why rather than going to look for a way round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WithheldTool {
    /// The caller is an agent and no agent is ever given the route (its tier, or
    /// an authority no machine can be provisioned for). Answered as the REST call
    /// would be: the route is outside every agent's ceiling, and why.
    NotForAgents(RouteId),
    /// The route's tier (governed, operator, surface) is offered to no machine,
    /// not even a signed-in person's client.
    NeverOffered(RouteId),
    /// The route is offered to a signed-in person's client but never to an agent,
    /// and the call carried no credential, so it is offered what an agent could be.
    PeopleOnly(RouteId),
}

impl WithheldTool {
    /// The route withheld.
    pub fn route_id(self) -> RouteId {
        match self {
            WithheldTool::NotForAgents(id) | WithheldTool::NeverOffered(id) | WithheldTool::PeopleOnly(id) => id,
        }
    }
}

/// Whether, and why, a route is off a caller's list before any database fact is
/// known. `Organization` routes are on a person's list only if they hold the
/// relation, which the caller of this function settles.
fn withheld_without_io(route: &Route, tier: Tier, caller: &Caller) -> Option<WithheldTool> {
    let grantable = registry().is_grantable(route.id);
    match caller {
        Caller::Agent { .. } if !grantable => Some(WithheldTool::NotForAgents(route.id)),
        Caller::Agent { .. } => None,
        _ if !tier.is_offerable() => Some(WithheldTool::NeverOffered(route.id)),
        Caller::Stranger if !grantable => Some(WithheldTool::PeopleOnly(route.id)),
        Caller::Stranger | Caller::Person { .. } => None,
    }
}

/// What a person holds, as far as their catalogue needs to know: the relations
/// on the organisation, and each distinct set of relations held together on
/// some mailbox.
struct Held {
    on_organization: Vec<Relation>,
    on_mailboxes: Vec<Vec<Relation>>,
}

impl Held {
    /// Whether what is held could meet `authority` somewhere: an organisation
    /// relation held, or a mailbox where the route's relations are held together.
    /// Every other authority depends on no tuple the catalogue could read (or on
    /// the row or person the call names), so the route is offered.
    fn could_complete(&self, authority: &Authority) -> bool {
        match authority {
            Authority::Organization(relation) => self.on_organization.contains(relation),
            Authority::Mailbox { .. } => self.on_mailboxes.iter().any(|held| authority.met_on_mailbox(held)),
            _ => true,
        }
    }
}

/// Each row's `column`, a comma-separated list of relation names, as relations.
fn relation_lists<'result>(
    result: &'result QueryResult,
    column: &'result str,
) -> impl Iterator<Item = Vec<Relation>> + 'result {
    result
        .rows
        .iter()
        .filter_map(move |row| row.text(column).ok())
        .map(|names| names.split(',').filter_map(Relation::parse).collect())
}

/// The tools this caller may see, in the contract's order: for a stranger the
/// grantable routes; for a person the offerable routes they can complete; for an
/// agent the grantable routes within its pinned ceiling. What it takes to know
/// that travels in one round trip with the caller's own authentication.
async fn list_tools(context: &mut Context<'_>) -> Result<Vec<Value>, RpcError> {
    let caller = context.caller.clone();
    let (held, ceiling): (Option<Held>, Option<Vec<String>>) = match &caller {
        Caller::Stranger => {
            context.read(Vec::new()).await.map_err(refused)?;
            (None, None)
        }
        Caller::Person { person_id, .. } => {
            let holder = tuples::Holder::Person(person_id.clone());
            let [organization, mailboxes] = context
                .read_array([
                    tuples::relations_on(&holder, ORGANIZATION_OBJECT),
                    tuples::mailbox_relation_sets(&holder),
                ])
                .await
                .map_err(refused)?;
            let held = Held {
                on_organization: relation_lists(&organization, "relation").flatten().collect(),
                on_mailboxes: relation_lists(&mailboxes, "held").collect(),
            };
            (Some(held), None)
        }
        Caller::Agent { agent_id, .. } => {
            let [pinned] = context.read_array([authz::ceiling_of(agent_id)]).await.map_err(refused)?;
            (None, Some(authz::ceiling_tools(&pinned)))
        }
    };
    let registry = registry();
    Ok(definitions()
        .iter()
        .filter(|(id, _)| {
            let route = registry.route(*id);
            withheld_without_io(route, registry.tier(*id), &caller).is_none()
                && ceiling.as_ref().is_none_or(|pinned| pinned.iter().any(|tool| tool == route.tool))
                && held.as_ref().is_none_or(|held| held.could_complete(&route.authority))
        })
        .map(|(_, definition)| definition.clone())
        .collect())
}

/// A refusal of the caller itself (a revoked session, a paused agent) while
/// working out its tools: answered as any route's refusal, not as JSON-RPC.
fn refused(refusal: Refusal) -> RpcError {
    RpcError::refusal(refusal)
}

fn unknown_tool(name: &str) -> RpcError {
    RpcError::new(200, INVALID_PARAMS, format!("Unknown tool: {name}"))
}

/// A tool that exists but is not this caller's: still no tool (-32602), with the
/// refusal in the message a model reads and, whole, in `data`.
fn withheld_tool(name: &str, refusal: RefusalBody) -> RpcError {
    let detail = &refusal.error;
    let message = format!("Tool withheld: {name}. {} {} Fix: {}", detail.message, detail.reason, detail.fix);
    RpcError { status: 200, code: INVALID_PARAMS, message, data: serde_json::to_value(&refusal).ok(), refusal: None }
}

/// An argument as it travels in a path or a query: strings as given, anything
/// else as its JSON text, for the route to accept or refuse.
fn as_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (byte as char).to_string(),
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

/// The route's own HTTP request, built from a tool call's arguments: path
/// parameters into the path, query parameters into the query, everything else
/// into the body (or the query, for a route without one, so the route names it).
/// Absent and null arguments are left out; nothing else is judged here.
fn route_request(route: &Route, arguments: &Map<String, Value>, outer: &Request) -> Request {
    let mut path = route.path.to_string();
    let mut query = form_urlencoded::Serializer::new(String::new());
    let mut body = Map::new();
    for (name, value) in arguments.iter().filter(|(_, value)| !value.is_null()) {
        if route.path_parameters.iter().any(|parameter| parameter.name() == name) {
            path = path.replace(&format!(":{name}"), &percent_encode(&as_text(value)));
        } else if route.query_parameters.iter().any(|parameter| parameter.name == name) || route.request.is_none() {
            query.append_pair(name, &as_text(value));
        } else {
            body.insert(name.clone(), value.clone());
        }
    }
    let mut headers: Vec<(String, String)> =
        outer.headers.iter().filter(|(name, _)| name != "content-length" && name != "content-type").cloned().collect();
    let body = if route.request.is_some() {
        headers.push(("content-type".into(), "application/json".into()));
        serde_json::to_vec(&Value::Object(body)).unwrap_or_default()
    } else {
        Vec::new()
    };
    Request {
        method: route.method.as_str().to_string(),
        path,
        query: query.finish(),
        headers,
        body,
        origin: outer.origin.clone(),
        client_address: outer.client_address.clone(),
    }
}

/// `tools/call`: re-enters the router as the caller.
async fn call_tool(context: &mut Context<'_>, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Err(RpcError::new(
            200,
            INVALID_PARAMS,
            "tools/call needs `name`, a string naming a tool from tools/list",
        ));
    };
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(arguments)) => arguments.clone(),
        Some(_) => return Err(RpcError::new(200, INVALID_PARAMS, "`arguments` must be an object")),
    };
    let registry = registry();
    let Some(route) = registry.route_by_tool(name) else {
        return Err(unknown_tool(name));
    };
    if let Some(withheld) = withheld_without_io(route, registry.tier(route.id), &context.caller) {
        return Err(withheld_tool(name, Refusal::from(withheld).body()));
    }
    let request = route_request(route, &arguments, context.request);
    let response = context.reenter(request).await;
    // A person without an organisation relation, or an agent without the route
    // in its ceiling, never saw this tool on their list; the route's own check is
    // what finds that out, at no extra cost, and its refusal says why.
    if response.status == 403 {
        let refusal: Option<RefusalBody> = response.json_body().and_then(|body| serde_json::from_value(body).ok());
        let not_on_list = refusal.as_ref().is_some_and(|refusal| match refusal.error.code.as_str() {
            "missing_relation" => matches!(route.authority, Authority::Organization(_)),
            "outside_ceiling" | "not_for_agents" => true,
            _ => false,
        });
        if let (true, Some(refusal)) = (not_on_list, refusal) {
            return Err(withheld_tool(name, refusal));
        }
    }
    Ok(tool_result(route, &response))
}

/// A route's answer as a tool result: JSON as text and as structured content; a
/// refusal the same way with `isError`; bytes as an embedded resource.
fn tool_result(route: &Route, response: &Response) -> Value {
    let is_error = response.status >= 400;
    let content_type = response.header("content-type").unwrap_or("application/octet-stream");
    if content_type.starts_with("application/json") {
        let text = String::from_utf8_lossy(&response.body).into_owned();
        let structured = response.json_body().unwrap_or(Value::Null);
        return json!({
            "content": [{ "type": "text", "text": text }],
            "structuredContent": structured,
            "isError": is_error,
        });
    }
    json!({
        "content": [{
            "type": "resource",
            "resource": {
                "uri": format!("mailroom:{}", route.path),
                "mimeType": content_type,
                "blob": STANDARD.encode(&response.body),
            }
        }],
        "isError": is_error,
    })
}
