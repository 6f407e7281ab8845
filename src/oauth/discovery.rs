//! The discovery documents: the MCP endpoint's protected-resource metadata
//! (RFC 9728) and the node's authorization-server metadata (RFC 8414), both
//! written from the node's origin and the capability vocabulary.

use mailroom_contract::api::{AuthorizationServerMetadata, ProtectedResourceMetadata};
use mailroom_contract::capabilities::CAPABILITIES;
use mailroom_contract::{RouteId, registry};

use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::refusal::Refusal;

/// The resource every access token is bound to: the node's MCP endpoint.
pub fn mcp_resource(origin: &str) -> String {
    format!("{origin}{}", registry().route(RouteId::McpEndpoint).path)
}

/// Where the MCP endpoint's metadata is, as a 401 from it names it.
pub fn resource_metadata_url(origin: &str) -> String {
    format!("{origin}{}", registry().route(RouteId::GetOAuthProtectedResourceOfMcp).path)
}

/// An endpoint of the node, by its route.
fn endpoint(origin: &str, route: RouteId) -> String {
    format!("{origin}{}", registry().route(route).path)
}

/// The scopes a client may ask for: the capability names.
fn scopes() -> Vec<String> {
    CAPABILITIES.iter().map(|capability| capability.name.to_string()).collect()
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|word| word.to_string()).collect()
}

/// `GET /.well-known/oauth-protected-resource` and its `/mcp` suffixed twin.
pub async fn protected_resource(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let origin = context.config().origin_of(context.request()).to_string();
    Ok(context.json(&ProtectedResourceMetadata {
        resource: mcp_resource(&origin),
        authorization_servers: vec![origin],
        bearer_methods_supported: words(&["header"]),
        // No `scopes_supported` here: clients ask for every scope the resource
        // lists when they are told nothing else, which would start the consent
        // with everything ticked. The person chooses; a client that wants
        // something names it (the authorization server lists the names).
        resource_name: "Mailroom".into(),
    }))
}

/// `GET /.well-known/oauth-authorization-server`.
pub async fn authorization_server(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let origin = context.config().origin_of(context.request()).to_string();
    Ok(context.json(&AuthorizationServerMetadata {
        authorization_endpoint: endpoint(&origin, RouteId::OAuthAuthorize),
        token_endpoint: endpoint(&origin, RouteId::OAuthToken),
        registration_endpoint: endpoint(&origin, RouteId::RegisterOAuthClient),
        revocation_endpoint: endpoint(&origin, RouteId::OAuthRevoke),
        issuer: origin,
        response_types_supported: words(&["code"]),
        grant_types_supported: words(&["authorization_code", "refresh_token"]),
        code_challenge_methods_supported: words(&["S256"]),
        token_endpoint_auth_methods_supported: words(&["none"]),
        revocation_endpoint_auth_methods_supported: words(&["none"]),
        scopes_supported: scopes(),
        client_id_metadata_document_supported: true,
        authorization_response_iss_parameter_supported: true,
    }))
}
