//! OAuth: discovery, client registration, authorization and consent, tokens and their
//! revocation, and the apps a person has connected.

use crate::api::{
    ApproveOAuthConsent, AuthorizationServerMetadata, ConnectedApp, ConnectedAppList, OAuthConsent, OAuthConsentGiven,
    OAuthRevokeRequest, OAuthTokenRequest, OAuthTokens, ProtectedResourceMetadata, RegisterOAuthClient,
    RegisteredOAuthClient,
};
use crate::route::Method::{Get, Post};
use crate::route::{Authority, Parameter, PathParameter, Produces, Refuses, Route, Tier};
use crate::route_id::RouteId;

/// Why the OAuth discovery documents are not tools.
const OAUTH_DISCOVERY: &str =
    "OAuth discovery is read by a client before it holds any credential, to learn how to get one";

/// Why the OAuth client endpoints are not tools.
const OAUTH_CLIENTS: &str = "it is how an OAuth client registers and gets its tokens, over HTTP before it has them; it is not a tool to call with one";

/// Why consenting and connected apps are not offered to machines.
const OAUTH_CONSENT: &str = "consenting to an app and disconnecting one are a person's own decisions, signed in themselves: an app never grants itself authority";

/// An authorization request's query (RFC 6749 §4.1.1, PKCE, RFC 8707).
const AUTHORIZATION_REQUEST: &[Parameter] = &[
    Parameter::text("response_type", "`code`: the authorization code flow."),
    Parameter::text("client_id", "The client's id: from registration, or the HTTPS URL of its metadata document."),
    Parameter::text("redirect_uri", "Where to send the person back; must be one of the client's, exactly."),
    Parameter::text("code_challenge", "The PKCE challenge: base64url of the SHA-256 of the verifier."),
    Parameter::text("code_challenge_method", "`S256`, the only method taken."),
    Parameter::text("state", "The client's own value, returned unchanged."),
    Parameter::text("scope", "Capability names, space-separated: the consent screen starts them ticked."),
    Parameter::text("resource", "The resource the tokens are for (RFC 8707): this node's MCP endpoint."),
    Parameter::text("prompt", "Accepted and ignored: the person always sees the consent screen."),
];

pub(super) fn get_oauth_protected_resource() -> Route {
    Route::new(RouteId::GetOAuthProtectedResource, Get, "/.well-known/oauth-protected-resource", "get_oauth_protected_resource")
        .summary("The MCP endpoint's OAuth metadata")
        .description("The protected-resource metadata (RFC 9728) of the MCP endpoint: its URL, the audience of every token, and this node as the authorization server that issues them.")
        .response::<ProtectedResourceMetadata>()
        .exception(Tier::Operator, OAUTH_DISCOVERY)
        .cross_origin()
        .authority(Authority::Public)
}

pub(super) fn get_oauth_protected_resource_of_mcp() -> Route {
    Route::new(RouteId::GetOAuthProtectedResourceOfMcp, Get, "/.well-known/oauth-protected-resource/mcp", "get_oauth_protected_resource_of_mcp")
        .summary("The MCP endpoint's OAuth metadata, at its path")
        .description("The same protected-resource metadata, at the path RFC 9728 derives from the MCP endpoint's own (`/mcp`), where clients look first.")
        .response::<ProtectedResourceMetadata>()
        .exception(Tier::Operator, OAUTH_DISCOVERY)
        .cross_origin()
        .authority(Authority::Public)
}

pub(super) fn get_oauth_authorization_server() -> Route {
    Route::new(RouteId::GetOAuthAuthorizationServer, Get, "/.well-known/oauth-authorization-server", "get_oauth_authorization_server")
        .summary("The node's OAuth authorization server metadata")
        .description("The authorization server metadata (RFC 8414): the authorization, token, registration and revocation endpoints, PKCE with S256 only, public clients, client ID metadata documents, and the capability names as scopes.")
        .response::<AuthorizationServerMetadata>()
        .exception(Tier::Operator, OAUTH_DISCOVERY)
        .cross_origin()
        .authority(Authority::Public)
}

pub(super) fn register_oauth_client() -> Route {
    Route::new(RouteId::RegisterOAuthClient, Post, "/oauth/register", "register_oauth_client")
        .summary("Register an OAuth client")
        .description("Dynamic client registration (RFC 7591) for a public client: its redirect URIs (HTTPS, HTTP on a loopback address, or a native app's own URI scheme such as `cursor://`) and name. The node stores nothing: the client id carries the registration, signed with the node's key.")
        .request::<RegisterOAuthClient>()
        .response::<RegisteredOAuthClient>()
        .produces(Produces::OAuth)
        .created()
        .stores_nothing()
        .tier(Tier::Operator)
        .withheld_because(OAUTH_CLIENTS)
        .cross_origin()
        .authority(Authority::Public)
}

pub(super) fn oauth_authorize() -> Route {
    Route::new(RouteId::OAuthAuthorize, Get, "/oauth/authorize", "oauth_authorize")
        .summary("Sign in and consent")
        .description("The authorization endpoint: the browser interface, which signs the person in and shows the consent screen for the request its query carries.")
        .query_parameters(AUTHORIZATION_REQUEST)
        .html()
        .exception(Tier::Operator, "the authorization endpoint is a page where a person signs in and consents, not a question a machine asks")
        .authority(Authority::Public)
}

pub(super) fn get_oauth_consent() -> Route {
    Route::new(RouteId::GetOAuthConsent, Get, "/api/oauth/consent", "get_oauth_consent")
        .summary("What an authorization request asks of me")
        .description("Checks an authorization request (its client, exact redirect URI, PKCE challenge and resource) and answers what the consent screen shows: the client, the capabilities it asked for, and what the signed-in person holds on each mailbox.")
        .query_parameters(AUTHORIZATION_REQUEST)
        .response::<OAuthConsent>()
        .exception(Tier::Operator, OAUTH_CONSENT)
        .refuses(const { &[
            Refuses::NotFound("The client id names no client: not one this node registered, or a metadata document that could not be fetched or read."),
        ] })
        .authority(Authority::Personal)
}

pub(super) fn approve_oauth_consent() -> Route {
    Route::new(RouteId::ApproveOAuthConsent, Post, "/api/oauth/consent", "approve_oauth_consent")
        .summary("Consent: connect an app")
        .description("The signed-in person approves an authorization request with the capabilities and mailboxes they chose: an agent is minted with them as its sponsor and that ceiling pinned, and the answer says where to send the browser (the redirect URI with a single-use code).")
        .request::<ApproveOAuthConsent>()
        .response::<OAuthConsentGiven>()
        .tier(Tier::Operator)
        .withheld_because(OAUTH_CONSENT)
        .refuses(const { &[
            Refuses::NotFound("The client id names no client, or a chosen mailbox does not exist or the person holds nothing there."),
        ] })
        .authority(Authority::Personal)
}

pub(super) fn oauth_token() -> Route {
    Route::new(RouteId::OAuthToken, Post, "/oauth/token", "oauth_token")
        .summary("Exchange a code or refresh token for tokens")
        .description("The token endpoint (RFC 6749): an authorization code with its PKCE verifier, or a refresh token, for an access token bound to the MCP endpoint and a new refresh token. A code or refresh token presented a second time ends the whole grant.")
        .form_request::<OAuthTokenRequest>()
        .response::<OAuthTokens>()
        .produces(Produces::OAuth)
        .tier(Tier::Operator)
        .withheld_because(OAUTH_CLIENTS)
        .refuses(const { &[
            Refuses::TooManyAttempts("Too many unknown codes or refresh tokens from this address within the window."),
        ] })
        .cross_origin()
        .authority(Authority::Public)
}

pub(super) fn oauth_revoke() -> Route {
    Route::new(RouteId::OAuthRevoke, Post, "/oauth/revoke", "oauth_revoke")
        .summary("Revoke a token")
        .description("Token revocation (RFC 7009): revoking an access or refresh token ends the whole grant, so the app's agent stops working at once. Only the client the token was issued to, named by `client_id`, may revoke it: another client's token is refused (`invalid_grant`) and keeps working. A token the node does not know is answered the same, 200.")
        .form_request::<OAuthRevokeRequest>()
        .produces(Produces::OAuth)
        .tier(Tier::Operator)
        .withheld_because(OAUTH_CLIENTS)
        .cross_origin()
        .authority(Authority::Public)
}

pub(super) fn list_connected_apps() -> Route {
    Route::new(RouteId::ListConnectedApps, Get, "/api/me/connected-apps", "list_connected_apps")
        .summary("My connected apps")
        .description("The apps the signed-in person connected over OAuth, each with the agent their consent minted.")
        .response::<ConnectedAppList>()
        .exception(Tier::Operator, OAUTH_CONSENT)
        .authority(Authority::Personal)
}

pub(super) fn disconnect_app() -> Route {
    Route::new(RouteId::DisconnectApp, Post, "/api/me/connected-apps/:agentId/disconnect", "disconnect_app")
        .summary("Disconnect an app")
        .description("Ends a connected app's access at once: its agent is revoked, so its tokens stop working on their next request.")
        .path_parameters(&[PathParameter::AgentId])
        .response::<ConnectedApp>()
        .tier(Tier::Operator)
        .withheld_because(OAUTH_CONSENT)
        .refuses(const { &[
            Refuses::Conflict("The app is already disconnected."),
        ] })
        .authority(Authority::Personal)
}
