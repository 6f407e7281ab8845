//! The OpenAPI 3.1 document, generated from the registry.
//!
//! Every operation, parameter, schema and status in `contract/openapi.json` is
//! derived from the route declarations and the API types (each operation lists
//! exactly the statuses `statuses::answers` gives it, never a range); a test fails when the
//! committed file differs from what this module generates, and an end-to-end test
//! validates the running Worker's real answers against it.

use schemars::SchemaGenerator;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::api::{OAuthErrorBody, RefusalBody};
use crate::capabilities::capability_of;
use crate::registry::Registry;
use crate::route::{Authority, Produces, Route};
use crate::statuses::Carries;

/// A path in OpenAPI's template syntax: `:name` becomes `{name}`.
pub fn template(path: &str) -> String {
    path.split('/')
        .map(|segment| match segment.strip_prefix(':') {
            Some(name) => format!("{{{name}}}"),
            None => segment.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn generator(serialize: bool) -> SchemaGenerator {
    let settings = SchemaSettings::draft2020_12().with(|settings| {
        settings.definitions_path = "/components/schemas".into();
        settings.meta_schema = None;
    });
    let settings = if serialize { settings.for_serialize() } else { settings.for_deserialize() };
    SchemaGenerator::new(settings)
}

/// The document, as JSON.
pub fn document(registry: &Registry) -> Value {
    // Requests are described as they are read, responses as they are written, so
    // an optional field is optional on the side where it is.
    let mut requests = generator(false);
    let mut responses = generator(true);
    let refusal = responses.subschema_for::<RefusalBody>().to_value();
    let oauth_error = responses.subschema_for::<OAuthErrorBody>().to_value();
    let mut paths = Map::new();
    for (route, tier) in registry.routes_with_tiers() {
        let mut operation = Map::new();
        operation.insert("operationId".into(), route.tool.into());
        operation.insert("summary".into(), route.summary.into());
        operation.insert("description".into(), describe(route, registry).into());
        operation.insert("tags".into(), json!([tag(route)]));
        let parameters: Vec<Value> = route
            .path_parameters
            .iter()
            .map(|parameter| {
                json!({ "name": parameter.name(), "in": "path", "required": true,
                        "description": parameter.description(), "schema": parameter.accepts().schema() })
            })
            .chain(route.query_parameters.iter().map(|parameter| {
                let mut schema = parameter.schema();
                let description = schema.as_object_mut().and_then(|schema| schema.remove("description"));
                json!({ "name": parameter.name, "in": "query", "required": parameter.required,
                        "description": description, "schema": schema })
            }))
            .collect();
        if !parameters.is_empty() {
            operation.insert("parameters".into(), parameters.into());
        }
        if let Some(schema) = route.request {
            let media = if route.request_is_form { "application/x-www-form-urlencoded" } else { "application/json" };
            operation.insert(
                "requestBody".into(),
                json!({ "required": true, "content": { media: { "schema": schema(&mut requests) } } }),
            );
        }
        let success = match (route.produces, route.response) {
            (Produces::Html, _) => {
                json!({ "description": route.summary, "content": { "text/html": { "schema": { "type": "string" } } } })
            }
            (Produces::Live, _) => {
                json!({ "description": format!("{}: the WebSocket is open; each frame is one JSON object of ids and kinds.", route.summary) })
            }
            (Produces::Script, _) => json!({ "description": route.summary,
                "content": { "text/javascript": { "schema": { "type": "string" } } } }),
            (Produces::Json | Produces::JsonRpc | Produces::OAuth, Some(schema)) => {
                json!({ "description": route.summary, "content": { "application/json": { "schema": schema(&mut responses) } } })
            }
            (Produces::Json | Produces::JsonRpc | Produces::OAuth, None) => json!({ "description": route.summary }),
            (Produces::Message, _) => json!({ "description": route.summary,
                "content": { "message/rfc822": { "schema": { "type": "string", "contentMediaType": "message/rfc822" } } } }),
            (Produces::ExportObject, schema) => json!({ "description": route.summary, "content": {
                "application/json": { "schema": schema.map_or_else(|| json!({}), |schema| schema(&mut responses).into()) },
                "message/rfc822": { "schema": { "type": "string", "contentMediaType": "message/rfc822" } } } }),
            (Produces::Attachment, _) => json!({ "description": route.summary,
                "content": { "*/*": { "schema": { "type": "string", "description": "The attachment's bytes, with the content type the message gave them." } } } }),
        };
        let mut success = success;
        if route.streams {
            success["content"]["text/event-stream"] = json!({ "schema": { "type": "string",
                "description": "Server-sent events: each `data:` line one JSON-RPC response (JsonRpcResponse) to the call." } });
        }
        let json_rpc_error = json!({ "$ref": "#/components/schemas/JsonRpcResponse" });
        let mut answered = Map::new();
        for answer in registry.answers(route.id) {
            let description = answer.description();
            let body = |schema: &Value| json!({ "application/json": { "schema": schema } });
            let mut response = match answer.carries {
                Carries::Answer => {
                    let mut response = success.clone();
                    response["description"] = description.into();
                    response
                }
                Carries::Nothing => json!({ "description": description }),
                Carries::Refusal => json!({ "description": description, "content": body(&refusal) }),
                Carries::JsonRpcError => json!({ "description": description, "content": body(&json_rpc_error) }),
                Carries::JsonRpcErrorOrRefusal => json!({ "description": description,
                    "content": body(&json!({ "anyOf": [json_rpc_error.clone(), refusal.clone()] })) }),
                Carries::OAuthError => json!({ "description": description, "content": body(&oauth_error) }),
            };
            let headers: Map<String, Value> = answer
                .headers()
                .into_iter()
                .map(|header| {
                    let schema = if header.is_integer {
                        json!({ "type": "integer", "minimum": 0 })
                    } else {
                        json!({ "type": "string" })
                    };
                    let documented = json!({ "description": header.description, "required": true, "schema": schema });
                    (header.name.to_string(), documented)
                })
                .collect();
            if !headers.is_empty() {
                response["headers"] = Value::Object(headers);
            }
            answered.insert(answer.status.to_string(), response);
        }
        let responses = Value::Object(answered);
        operation.insert("responses".into(), responses);
        let security =
            if route.authority == Authority::Public { json!([]) } else { json!([{ "bearer": [] }, { "cookie": [] }]) };
        operation.insert("security".into(), security);
        operation.insert("x-mailroom-tier".into(), tier.as_str().into());
        operation.insert("x-mailroom-grantable".into(), registry.is_grantable(route.id).into());
        if let Some(capability) = capability_of(route.id) {
            operation.insert("x-mailroom-capability".into(), capability.name.into());
        }
        operation.insert("x-mailroom-reaches-content".into(), route.reaches_content.into());
        if route.produces == Produces::OAuth {
            operation.insert("x-mailroom-oauth".into(), true.into());
        }
        if route.trailing_slash {
            // The same operation, also at the path with one trailing slash.
            operation.insert("x-mailroom-trailing-slash".into(), true.into());
        }
        if let Some(feature) = route.feature {
            // Off unless the operator sets this variable to `true`: then the
            // route answers 404 feature_disabled and its tool is in no catalogue.
            operation.insert("x-mailroom-feature".into(), feature.variable().into());
        }
        let entry = paths.entry(template(route.path)).or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(methods) = entry {
            methods.insert(route.method.as_str().to_lowercase(), Value::Object(operation));
        }
    }
    let mut schemas = requests.take_definitions(true);
    for (name, schema) in responses.take_definitions(true) {
        if let Some(existing) = schemas.get(&name) {
            assert_eq!(existing, &schema, "{name} is described differently as a request and as a response");
        }
        schemas.insert(name, schema);
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Mailroom",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "An organisation's mail node: people and agents share inboxes under one authority model. \
                Every route is declared once in the contract; this document, the MCP tools at POST /mcp and the \
                Agent Skill are generated from that declaration.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "bearer": { "type": "http", "scheme": "bearer",
                    "description": "A person's access token (`mr_ses_…`, from POST /api/sessions) or an agent's credential (`mr_agt_…`)." },
                "cookie": { "type": "apiKey", "in": "cookie", "name": "__Host-mailroom-access",
                    "description": "A browser session. Changing requests must carry the node's own Origin." },
            },
        },
    })
}

/// The operation's description: the declaration's words, then its authority and
/// tier in a sentence each.
fn describe(route: &Route, registry: &Registry) -> String {
    let tier = registry.tier(route.id);
    let mut text =
        format!("{}\n\nWho may call it: {}\nTier: {}.", route.description, route.authority.describe(), tier.as_str());
    if route.reaches_content {
        text.push_str(" Reaches message content; every call is recorded in the audit chain.");
    }
    text
}

fn tag(route: &Route) -> &'static str {
    let mut segments = route.path.trim_start_matches('/').split('/');
    let first = segments.next().unwrap_or("");
    let segment = if first == "api" { segments.next().unwrap_or("") } else { first };
    match segment {
        "" | "interface" => "interface",
        "setup" | "sessions" | "me" => "identity",
        "people" | "teams" => "people",
        "relations" => "relations",
        "audit" => "audit",
        "agent-capabilities" | "agents" => "agents",
        "mailboxes" if route.path.contains("/sends") => "sends",
        "mailboxes" if route.path.contains("/messages") => "messages",
        "mailboxes" => "mailboxes",
        "search" => "messages",
        "mcp" => "mcp",
        "approvals" => "sends",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::registry;

    #[test]
    fn templates_use_braces() {
        assert_eq!(template("/api/teams/:teamId/members/:personId"), "/api/teams/{teamId}/members/{personId}");
        assert_eq!(template("/"), "/");
    }

    /// Walks every schema and parameter and names any that lacks a description.
    #[test]
    fn every_parameter_and_property_is_described() {
        let document = document(registry());
        let mut undescribed = Vec::new();
        walk(&document["components"]["schemas"], "schemas", &mut undescribed);
        for (path, methods) in document["paths"].as_object().unwrap() {
            for (method, operation) in methods.as_object().unwrap() {
                for parameter in operation["parameters"].as_array().into_iter().flatten() {
                    if parameter["description"].as_str().unwrap_or("").trim().is_empty() {
                        undescribed.push(format!("{method} {path} parameter {}", parameter["name"]));
                    }
                }
                if operation["description"].as_str().unwrap_or("").trim().is_empty() {
                    undescribed.push(format!("{method} {path}"));
                }
            }
        }
        assert!(undescribed.is_empty(), "undescribed: {undescribed:#?}");
    }

    fn walk(value: &Value, at: &str, undescribed: &mut Vec<String>) {
        if let Some(properties) = value.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                let described =
                    property.get("description").and_then(Value::as_str).is_some_and(|text| !text.trim().is_empty());
                if !described {
                    undescribed.push(format!("{at}.{name}"));
                }
                walk(property, &format!("{at}.{name}"), undescribed);
            }
        }
        if let Some(object) = value.as_object() {
            for (key, child) in object {
                if key != "properties" && (child.is_object() || child.is_array()) {
                    walk(child, &format!("{at}/{key}"), undescribed);
                }
            }
        } else if let Some(array) = value.as_array() {
            for (index, child) in array.iter().enumerate() {
                walk(child, &format!("{at}[{index}]"), undescribed);
            }
        }
    }

    #[test]
    fn every_operation_lists_exact_statuses_each_described_and_refusals_with_the_four_parts() {
        let document = document(registry());
        let refusal = json!({ "$ref": "#/components/schemas/RefusalBody" });
        let json_rpc = json!({ "$ref": "#/components/schemas/JsonRpcResponse" });
        let oauth_error = json!({ "$ref": "#/components/schemas/OAuthErrorBody" });
        for (path, methods) in document["paths"].as_object().unwrap() {
            for (method, operation) in methods.as_object().unwrap() {
                let surface = operation["x-mailroom-tier"] == "surface";
                for (status, response) in operation["responses"].as_object().unwrap() {
                    let code: u16 = status.parse().unwrap_or_else(|_| panic!("{method} {path}: `{status}` is a range"));
                    let described = response["description"].as_str().is_some_and(|text| !text.trim().is_empty());
                    assert!(described, "{method} {path} {status} has no description");
                    if code < 400 {
                        continue;
                    }
                    let schema = &response["content"]["application/json"]["schema"];
                    let choices = schema["anyOf"].as_array().cloned().unwrap_or_else(|| vec![schema.clone()]);
                    // Every error of an OAuth endpoint is OAuth's, for standard clients.
                    let oauth = operation["x-mailroom-oauth"] == true;
                    let fits = if oauth {
                        choices == [oauth_error.clone()]
                    } else {
                        choices.contains(&refusal) || (surface && choices == [json_rpc.clone()])
                    };
                    assert!(fits, "{method} {path} {status}: {schema}");
                }
            }
        }
    }

    #[test]
    fn statuses_follow_from_the_declaration() {
        let document = document(registry());
        let statuses = |method: &str, path: &str| -> Vec<String> {
            document["paths"][path][method]["responses"].as_object().unwrap().keys().cloned().collect()
        };
        // Public, no body, no path parameter: no 401, 404 or 413.
        assert_eq!(statuses("get", "/"), ["200", "400", "403", "500", "503"]);
        // A signed-in caller's question: 401 for the credential, nothing it names.
        assert_eq!(statuses("get", "/api/me"), ["200", "400", "401", "403", "500", "503"]);
        // A public route guarding a secret declares its own 401 and 429, and takes a body.
        assert_eq!(statuses("post", "/api/sessions"), ["201", "400", "401", "403", "413", "429", "500", "503"]);
        // A path naming things, a body (the version approved), a handler's own conflict.
        let approve = statuses("post", "/api/mailboxes/{mailboxId}/sends/{sendId}/approve");
        assert_eq!(approve, ["200", "400", "401", "403", "404", "409", "413", "500", "503"]);
        // The machine surface: 202 for a notification, a JSON-RPC 404.
        assert_eq!(statuses("post", "/mcp"), ["200", "202", "400", "401", "403", "404", "413", "500", "503"]);
        let retry_after = &document["paths"]["/api/sessions"]["post"]["responses"]["429"]["headers"]["Retry-After"];
        assert_eq!(retry_after["schema"]["type"], "integer");
    }
}
