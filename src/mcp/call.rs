//! `tools/call`: the route's own HTTP request built from a tool call's
//! arguments, the dispatcher re-entered in process with the caller's
//! credentials, and the route's answer as a tool result.
//!
//! A tool call must meet the same authority check, refusal and audit entry as
//! the REST call, so it goes through the same door rather than the functions
//! beneath it: `Context::reenter`, the dispatcher the context was handed (no
//! import of it here). A tool withheld from the caller goes through it too,
//! with its refusal decided before the handler, so the call is recorded as the
//! route's refused call.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use mailroom_contract::api::RefusalBody;
use mailroom_contract::{Authority, Route, registry};
use serde_json::{Map, Value, json};

use super::catalogue::withheld_without_io;
use super::{INVALID_PARAMS, RpcError, unknown_tool, withheld_tool};
use crate::core::context::Context;
use crate::core::http::{Request, Response, Surface};
use crate::core::refusal::Refusal;

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
    let body = route.request.map(|_| serde_json::to_vec(&Value::Object(body)).unwrap_or_default());
    outer.reentering(route.method.as_str(), path, query.finish(), body)
}

/// `tools/call`: re-enters the router as the caller.
pub(super) async fn call_tool(context: &mut Context<'_>, params: &Map<String, Value>) -> Result<Value, RpcError> {
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
    // A tool of a feature the node does not run is no tool at all.
    let Some(route) =
        registry.route_by_tool(name).filter(|route| route.feature.is_none_or(|feature| context.config().runs(feature)))
    else {
        return Err(unknown_tool(name));
    };
    let withheld = withheld_without_io(route, registry.tier(route.id), context.caller());
    let request = route_request(route, &arguments, context.request());
    // The inner call reads the same credential and makes the same checks in its
    // own first round trip; its round trips and deferred writes are this call's.
    let decided = match withheld {
        // A route REST might let this caller run, withheld here whatever the
        // database holds: it must not run, but the call is still the route's,
        // refused, with its credential and authority checked and recorded as
        // the route's refused call.
        Some(withheld) if !withheld.refused_by_the_route() => Some(withheld.into()),
        // Anything else meets the route's own checks, which refuse it exactly
        // as over REST when it is withheld (an agent's ceiling).
        _ => None,
    };
    let response = context.reenter(&request, Surface::Mcp, decided).await;
    // A dead or stopped credential is the caller's own refusal, not the tool's:
    // answered as HTTP, as REST, `tools/list` and `initialize` answer it, so a
    // client meets it as an authentication failure rather than a tool result.
    if response.credential_refused.is_some() {
        return Err(RpcError::answered(response));
    }
    if let Some(withheld) = withheld {
        return Err(withheld_tool(name, Refusal::from(withheld).body()));
    }
    // A person without an organisation relation, or an agent without the route
    // in its ceiling, never saw this tool on their list; the route's own check is
    // what finds that out, at no extra cost, and its refusal says why.
    if response.status == 403 {
        let refusal: Option<RefusalBody> = response.json_body().and_then(|body| serde_json::from_value(body).ok());
        let not_on_list = refusal.as_ref().is_some_and(|refusal| match refusal.error.code.as_str() {
            "missing_relation" => matches!(route.authority, Authority::Organization(_) | Authority::Requester(_)),
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
