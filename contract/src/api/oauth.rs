//! OAuth 2.1 for MCP clients: the discovery documents, client registration, the
//! consent a person gives, the token endpoint's bodies, and a person's connected
//! apps. The wire names are the RFCs' own (RFC 8414, 9728, 7591, 6749, 7009), so
//! a standard client reads them unchanged.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::agents::{Agent, MailboxGrant};
use super::mail::Mailbox;

/// The protected resource's metadata (RFC 9728): what the MCP endpoint is and
/// which authorization server issues its tokens.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ProtectedResourceMetadata {
    /// The MCP endpoint's URL: the audience every access token is bound to.
    pub resource: String,
    /// The authorization servers that issue its tokens: this node alone.
    pub authorization_servers: Vec<String>,
    /// How a token is presented: `header` (`Authorization: Bearer`).
    pub bearer_methods_supported: Vec<String>,
    /// The resource's name, for a person choosing it.
    pub resource_name: String,
}

/// The authorization server's metadata (RFC 8414).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AuthorizationServerMetadata {
    /// The issuer: the node's origin; it also comes back as `iss` on every authorization response (RFC 9207).
    pub issuer: String,
    /// Where a person signs in and consents.
    pub authorization_endpoint: String,
    /// Where codes and refresh tokens are exchanged for tokens.
    pub token_endpoint: String,
    /// Where a client registers itself (RFC 7591).
    pub registration_endpoint: String,
    /// Where a client revokes a token (RFC 7009).
    pub revocation_endpoint: String,
    /// `code`: the authorization code flow only.
    pub response_types_supported: Vec<String>,
    /// `authorization_code` and `refresh_token`.
    pub grant_types_supported: Vec<String>,
    /// `S256` only: every authorization request carries a PKCE challenge.
    pub code_challenge_methods_supported: Vec<String>,
    /// `none`: clients are public and prove themselves with PKCE.
    pub token_endpoint_auth_methods_supported: Vec<String>,
    /// `none`, as for the token endpoint.
    pub revocation_endpoint_auth_methods_supported: Vec<String>,
    /// The scopes a client may ask for: the capability names. A client that asks
    /// for some has them ticked on the consent screen to start with.
    pub scopes_supported: Vec<String>,
    /// True: a client may be named by the HTTPS URL of its metadata document.
    pub client_id_metadata_document_supported: bool,
    /// True: every authorization response carries `iss` (RFC 9207).
    pub authorization_response_iss_parameter_supported: bool,
}

/// A client's registration (RFC 7591). Fields the node does not use are accepted and ignored.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RegisterOAuthClient {
    /// Where the person is sent back after consenting: HTTPS, HTTP on a loopback
    /// address for a local client, or a native app's own URI scheme (RFC 8252
    /// §7.1, such as `cursor://…`; not one a browser acts on itself, such as
    /// `javascript:`); no fragment. Several may be given in one registration;
    /// each is matched exactly (a loopback one on any port).
    pub redirect_uris: Vec<String>,
    /// The client's name, shown on the consent screen (at most 100 characters).
    #[serde(default)]
    pub client_name: Option<String>,
    /// The client's home page, shown on the consent screen.
    #[serde(default)]
    pub client_uri: Option<String>,
    /// Must be `none` if given: the node registers public clients only.
    #[serde(default)]
    pub token_endpoint_auth_method: Option<String>,
    /// Must be within `authorization_code` and `refresh_token` if given.
    #[serde(default)]
    pub grant_types: Option<Vec<String>>,
    /// Must be `code` if given.
    #[serde(default)]
    pub response_types: Option<Vec<String>>,
}

/// A registered client (RFC 7591). The node keeps nothing: the client id carries
/// the registration, signed, so registering writes nothing.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RegisteredOAuthClient {
    /// The client's id, to send on every authorization and token request.
    pub client_id: String,
    /// When it was issued (seconds since the epoch).
    pub client_id_issued_at: i64,
    /// The redirect URIs, as registered.
    pub redirect_uris: Vec<String>,
    /// The client's name, as shown on the consent screen.
    pub client_name: String,
    /// The client's home page, if it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_uri: Option<String>,
    /// `authorization_code` and `refresh_token`.
    pub grant_types: Vec<String>,
    /// `code`.
    pub response_types: Vec<String>,
    /// `none`.
    pub token_endpoint_auth_method: String,
}

/// An OAuth endpoint's error (RFC 6749 §5.2), with what would change the answer.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct OAuthErrorBody {
    /// The RFC's error code, such as `invalid_grant` or `invalid_redirect_uri`.
    pub error: String,
    /// What was refused and why.
    pub error_description: String,
    /// What would change the answer.
    pub fix: String,
}

/// The client asking for a person's consent, as the consent screen shows it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct OAuthClient {
    /// The client's id: the registration's, or the URL of its metadata document.
    pub client_id: String,
    /// The client's name, in its own words.
    pub name: String,
    /// Where the person will be sent back, exactly.
    pub redirect_uri: String,
    /// The host (and port) of `redirect_uri`: who receives the grant; for a
    /// native app's own URI scheme, its link (`cursor://anysphere.cursor-retrieval`).
    pub redirect_host: String,
    /// Whether the grant goes back to an app on the person's own computer (a
    /// loopback listener, or the app's own URI scheme) rather than to a site.
    pub on_this_computer: bool,
    /// `dynamic_registration` or `metadata_document`.
    pub registered_by: String,
    /// The client's home page, if it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_uri: Option<String>,
}

/// What the consent screen shows: the client, the capabilities it asked for, and
/// the mailboxes with what the person holds on each.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct OAuthConsent {
    /// Who is asking.
    pub client: OAuthClient,
    /// The MCP endpoint the tokens will be for.
    pub resource: String,
    /// The capabilities the client asked for by scope, which the screen starts ticked.
    pub requested_capabilities: Vec<String>,
    /// The mailboxes where the person holds something, with what they hold: the most the app can be given.
    pub mailboxes: Vec<Mailbox>,
    /// Where declining sends the person: back to the client with `access_denied`.
    pub deny_to: String,
}

/// A person's consent: the authorization request as the client sent it, and what
/// the person chose.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApproveOAuthConsent {
    /// The client's id, as in the authorization request.
    pub client_id: String,
    /// The redirect URI, as in the authorization request.
    pub redirect_uri: String,
    /// The PKCE challenge (base64url of a SHA-256, 43 characters).
    pub code_challenge: String,
    /// `S256`.
    pub code_challenge_method: String,
    /// The client's `state`, returned unchanged.
    #[serde(default)]
    pub state: Option<String>,
    /// The resource the tokens are for; absent means this node's MCP endpoint.
    #[serde(default)]
    pub resource: Option<String>,
    /// The capabilities the person gives the app, by name.
    pub capabilities: Vec<String>,
    /// The mailboxes the app may work on, with the relations it holds on each; the person must hold each.
    #[serde(default)]
    pub mailboxes: Vec<MailboxGrant>,
}

/// A consent given: the agent it minted, and where to send the person.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct OAuthConsentGiven {
    /// The redirect URI with `code`, `state` and `iss`: where the browser goes next.
    pub redirect_to: String,
    /// The agent the consent minted, sponsored by the person, with the chosen ceiling pinned.
    pub agent: Agent,
}

/// A token request (RFC 6749 §4.1.3 and §6), form-encoded.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct OAuthTokenRequest {
    /// `authorization_code` or `refresh_token`.
    pub grant_type: String,
    /// The client's id.
    #[serde(default)]
    pub client_id: Option<String>,
    /// The authorization code (for `authorization_code`).
    #[serde(default)]
    pub code: Option<String>,
    /// The redirect URI the code was issued for (for `authorization_code`).
    #[serde(default)]
    pub redirect_uri: Option<String>,
    /// The PKCE verifier whose SHA-256 is the code's challenge (for `authorization_code`).
    #[serde(default)]
    pub code_verifier: Option<String>,
    /// The refresh token (for `refresh_token`).
    #[serde(default)]
    pub refresh_token: Option<String>,
    /// The resource the token is for (RFC 8707); must be this node's MCP endpoint if given.
    #[serde(default)]
    pub resource: Option<String>,
    /// Ignored: the consent fixed what the token may do.
    #[serde(default)]
    pub scope: Option<String>,
}

/// Tokens (RFC 6749 §5.1).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct OAuthTokens {
    /// The access token (`mr_oat_…`), for `Authorization: Bearer` at the MCP endpoint only.
    pub access_token: String,
    /// `Bearer`.
    pub token_type: String,
    /// Seconds until the access token expires.
    pub expires_in: i64,
    /// The refresh token (`mr_ort_…`): it works once, and a new one comes with every refresh.
    pub refresh_token: String,
    /// The capabilities the person gave, space-separated.
    pub scope: String,
}

/// A revocation request (RFC 7009), form-encoded.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct OAuthRevokeRequest {
    /// The access or refresh token to revoke; revoking either ends the whole grant.
    pub token: String,
    /// `access_token` or `refresh_token`; a hint only.
    #[serde(default)]
    pub token_type_hint: Option<String>,
    /// The id of the client the token was issued to, which alone may revoke it
    /// (RFC 7009 §2.1): a public client names itself with it.
    pub client_id: String,
}

/// An app a person connected over OAuth: the agent their consent minted.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ConnectedApp {
    /// The agent the consent minted; disconnecting revokes it.
    pub agent: Agent,
    /// The client's id.
    pub client_id: String,
    /// The client's name, as it gave it.
    pub client_name: String,
    /// The host its grant was sent back to.
    pub redirect_host: String,
    /// When the person consented (RFC 3339).
    pub connected_at: String,
    /// When it last exchanged a token (RFC 3339); absent if never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<String>,
}

/// A person's connected apps.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ConnectedAppList {
    /// Newest first, revoked ones included (their agent says so).
    pub apps: Vec<ConnectedApp>,
}
