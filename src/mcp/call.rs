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
use mailroom_contract::{Authority, PathParameter, Route, registry, tools};
use serde_json::{Map, Value, json};

use super::arguments::ArgumentFaults;
use super::catalogue::{definition_of, withheld_without_io};
use super::errors::{INVALID_PARAMS, RpcError, invalid_arguments, refused, unknown_tool, withheld_tool};
use crate::authz::{self, AuthorityError};
use crate::core::caller::{AgentProof, Caller};
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
/// parameters into the path (each by its argument's name, `mailbox_id`),
/// query parameters into the query, everything else into the body (or the
/// query, for a route without one, so the route names it). Absent and null
/// arguments are left out, and a path parameter left out leaves its segment
/// empty, never its placeholder; nothing else is judged here.
fn route_request(route: &Route, arguments: &Map<String, Value>, outer: &Request) -> Request {
    let argument = |name: &str| arguments.get(name).filter(|value| !value.is_null());
    let path = route
        .path
        .split('/')
        .map(|segment| match segment.strip_prefix(':').and_then(PathParameter::parse) {
            Some(parameter) => argument(tools::argument_name(parameter))
                .map(|value| percent_encode(&as_text(value)))
                .unwrap_or_default(),
            None => segment.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/");
    let mut query = form_urlencoded::Serializer::new(String::new());
    let mut body = Map::new();
    let in_the_path = |name: &str| {
        tools::path_parameter_named(name).is_some_and(|parameter| route.path_parameters.contains(&parameter))
    };
    for (name, value) in arguments.iter().filter(|(name, value)| !value.is_null() && !in_the_path(name)) {
        if route.query_parameters.iter().any(|parameter| parameter.name == name) || route.request.is_none() {
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
    // A call to a tool the caller may see is held to the names its schema
    // declares; a withheld tool's answer is that it is withheld, whatever it
    // was called with.
    let faults = withheld
        .is_none()
        .then(|| definition_of(route.id))
        .flatten()
        .and_then(|tool| ArgumentFaults::of(route, &tool["inputSchema"], &arguments));
    // Without a path argument the route's path names nothing, so the route
    // cannot be asked: REST answers such a path before anything is read.
    if let Some(faults) = faults.as_ref().filter(|faults| faults.leave_the_path_incomplete()) {
        return Err(incomplete_path(context, route, name, faults.clone()).await);
    }
    // The inner call reads the same credential and makes the same checks in its
    // own first round trip; its round trips and deferred writes are this call's.
    let decided: Option<Refusal> = match withheld {
        // A route REST might let this caller run, withheld here whatever the
        // database holds: it must not run, but the call is still the route's,
        // refused, with its credential and authority checked and recorded as
        // the route's refused call.
        Some(withheld) if !withheld.refused_by_the_route() => Some(withheld.into()),
        // Anything else meets the route's own checks, which refuse it exactly
        // as over REST when it is withheld (an agent's ceiling).
        Some(_) => None,
        // Arguments the schema refuses: the route must not run either, and the
        // call is recorded as REST records a malformed call, once its caller's
        // authority has been judged first, as the dispatcher judges it.
        None => faults.map(Refusal::from),
    };
    let response = context.reenter(&request, Surface::Mcp, decided.clone()).await;
    // A dead or stopped credential is the caller's own refusal, not the tool's:
    // answered as HTTP, as REST, `tools/list` and `initialize` answer it, so a
    // client meets it as an authentication failure rather than a tool result.
    if response.credential_refused.is_some() {
        return Err(RpcError::answered(response));
    }
    if let Some(withheld) = withheld {
        return Err(withheld_tool(name, Refusal::from(withheld).body()));
    }
    let refusal: Option<RefusalBody> = (response.status >= 400)
        .then(|| response.json_body().and_then(|body| serde_json::from_value(body).ok()))
        .flatten();
    // A person without an organisation relation, or an agent without the route
    // in its ceiling, never saw this tool on their list; the route's own check is
    // what finds that out, at no extra cost, and its refusal says why.
    if response.status == 403
        && let Some(refusal) = refusal.as_ref()
    {
        let not_on_list = match refusal.error.code.as_str() {
            "missing_relation" => matches!(route.authority, Authority::Organization(_) | Authority::Requester(_)),
            "outside_ceiling" | "not_for_agents" => true,
            _ => false,
        };
        if not_on_list {
            return Err(withheld_tool(name, refusal.clone()));
        }
    }
    // The arguments' own refusal, unless the caller's authority over what the
    // path names refused the call first, as the dispatcher orders it: the
    // route's refusal of the request's shape (400, the arguments as the REST
    // call carried them) is the same fault, said in the tool's terms.
    if let Some(decided) = decided.filter(|decided| {
        refusal.as_ref().is_some_and(|refusal| refusal.error.code == decided.code || response.status == 400)
    }) {
        return Err(invalid_arguments(name, decided.body()));
    }
    Ok(tool_result(&request, &response))
}

/// The answer to a call whose path arguments are missing: the route cannot be
/// asked, so nothing is recorded (a REST path that names nothing is answered
/// alike). An agent calling a tool outside its ceiling is still told that
/// first, as any call to a tool off its list is: its ceiling is read with the
/// caller's own checks, in the one round trip.
async fn incomplete_path(context: &mut Context<'_>, route: &Route, name: &str, faults: ArgumentFaults) -> RpcError {
    if let Caller::Agent { agent_id, proof } = context.caller() {
        let connected_app = matches!(proof, AgentProof::Connection);
        let ceiling = authz::ceiling_of(agent_id);
        let pinned = match context.read_array([ceiling]).await {
            Ok([pinned]) => pinned,
            Err(refusal) => return refused(refusal),
        };
        if !authz::ceiling_tools(&pinned).iter().any(|tool| tool == route.tool) {
            let outside =
                AuthorityError::OutsideCeiling { tool: route.tool, never_offered_because: None, connected_app };
            return withheld_tool(name, Refusal::from(outside).body());
        }
    }
    invalid_arguments(name, Refusal::from(faults).body())
}

/// A route's answer as a tool result: JSON as text and as structured content; a
/// refusal the same way with `isError`; bytes as an embedded resource, named
/// by the path it was read from (never the route's template).
fn tool_result(request: &Request, response: &Response) -> Value {
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
                "uri": format!("mailroom:{}", request.path),
                "mimeType": content_type,
                "blob": STANDARD.encode(&response.body),
            }
        }],
        "isError": is_error,
    })
}
