//! The OpenAPI 3.1 document, generated from the registry.
//!
//! Every operation, parameter, schema and refusal in `contract/openapi.json` is
//! derived from the route declarations and the API types; a test fails when the
//! committed file differs from what this module generates, and an end-to-end test
//! validates the running Worker's real answers against it.

use schemars::SchemaGenerator;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::api::RefusalBody;
use crate::capabilities::capability_of;
use crate::registry::Registry;
use crate::route::{Authority, Produces, Route};

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
    let refusal = responses.subschema_for::<RefusalBody>();
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
                json!({ "name": parameter.name, "in": "query", "required": false,
                        "description": description, "schema": schema })
            }))
            .collect();
        if !parameters.is_empty() {
            operation.insert("parameters".into(), parameters.into());
        }
        if let Some(schema) = route.request {
            operation.insert(
                "requestBody".into(),
                json!({ "required": true, "content": { "application/json": { "schema": schema(&mut requests) } } }),
            );
        }
        let success = match (route.produces, route.response) {
            (Produces::Html, _) => {
                json!({ "description": route.summary, "content": { "text/html": { "schema": { "type": "string" } } } })
            }
            (Produces::Script, _) => json!({ "description": route.summary,
                "content": { "text/javascript": { "schema": { "type": "string" } } } }),
            (Produces::Json | Produces::JsonRpc, Some(schema)) => {
                json!({ "description": route.summary, "content": { "application/json": { "schema": schema(&mut responses) } } })
            }
            (Produces::Json | Produces::JsonRpc, None) => json!({ "description": route.summary }),
            (Produces::Message, _) => json!({ "description": route.summary,
                "content": { "message/rfc822": { "schema": { "type": "string", "contentMediaType": "message/rfc822" } } } }),
            (Produces::Attachment, _) => json!({ "description": route.summary,
                "content": { "*/*": { "schema": { "type": "string", "description": "The attachment's bytes, with the content type the message gave them." } } } }),
        };
        let refused = |description: &str| json!({ "description": description, "content": { "application/json": { "schema": refusal } } });
        let mut responses = json!({
            route.success_status.to_string(): success,
            "4XX": refused("A refusal: what was refused, why, and what would change the answer."),
            "5XX": refused("The node could not complete the request; the body carries no internal detail."),
        });
        if route.produces == Produces::JsonRpc {
            // The MCP endpoint answers protocol errors as JSON-RPC, and the
            // dispatcher's own refusals (origin, size, method) as refusals.
            responses["202"] = json!({ "description": "A notification or a response was accepted; there is no body." });
            responses["4XX"] = json!({
                "description": "A JSON-RPC error (malformed message, unknown method, header mismatch, unsupported protocol version) or a refusal (foreign origin, oversized body).",
                "content": { "application/json": { "schema": { "anyOf": [
                    { "$ref": "#/components/schemas/JsonRpcResponse" },
                    refusal.clone(),
                ] } } }
            });
        }
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
    fn every_operation_answers_refusals_with_the_four_parts() {
        let document = document(registry());
        for (path, methods) in document["paths"].as_object().unwrap() {
            for (method, operation) in methods.as_object().unwrap() {
                let schema = &operation["responses"]["4XX"]["content"]["application/json"]["schema"];
                let refusal = json!({ "$ref": "#/components/schemas/RefusalBody" });
                let includes_refusal =
                    *schema == refusal || schema["anyOf"].as_array().is_some_and(|choices| choices.contains(&refusal));
                assert!(includes_refusal, "{method} {path}: {schema}");
            }
        }
    }
}
