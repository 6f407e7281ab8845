//! What can go wrong at the OAuth endpoints and the consent screen, and the
//! refusal each answers.

use crate::core::refusal::Refusal;

/// What can go wrong at the OAuth endpoints and the consent screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OAuthError {
    /// The client id names no client this node registered (or it was altered).
    UnknownClient,
    /// The client id is a metadata document's URL the node could not use.
    ClientMetadataUnusable { url: String, why: String },
    /// A field of an authorization request is missing or unusable; shown on the
    /// consent screen, never sent to a redirect URI the node has not checked.
    InvalidAuthorizationRequest { field: &'static str, why: String },
    /// A token or revocation request lacks a field or repeats one.
    InvalidRequest { field: &'static str, why: String },
    /// The code or refresh token is unknown, expired, already used, or its
    /// verifier or redirect URI does not match.
    InvalidGrant { why: String },
    /// A replayed code or a reused refresh token: the grant was ended.
    GrantEnded { why: &'static str },
    /// A grant type other than the two the node takes.
    UnsupportedGrantType { grant_type: String },
    /// A resource other than this node's MCP endpoint.
    InvalidTarget { resource: String, expected: String },
    /// A registration's redirect URI cannot be used.
    InvalidRedirectUri { uri: String },
    /// A registration's metadata cannot be used.
    InvalidClientMetadata { why: String },
    /// Too many unknown codes or refresh tokens from this address.
    TooManyAttempts { retry_after_seconds: u32 },
}

impl From<OAuthError> for Refusal {
    fn from(error: OAuthError) -> Refusal {
        match error {
            OAuthError::UnknownClient => Refusal::new(
                404,
                "unknown_client",
                "The app asking to connect is not one this node knows.",
                "Its client id was not issued by this node's registration endpoint, or it was altered.",
                "Ask the app to register again (POST /oauth/register) and start over.",
            ),
            OAuthError::ClientMetadataUnusable { url, why } => Refusal::new(
                404,
                "client_metadata_unusable",
                format!("The app's metadata document at {url} cannot be used."),
                format!("The app names itself by that document, and {why}."),
                "Tell the app's maker; the document must be JSON at that HTTPS address, naming itself as `client_id` and listing its `redirect_uris`.",
            ),
            OAuthError::InvalidAuthorizationRequest { field, why } => Refusal::new(
                400,
                "invalid_authorization_request",
                format!("The app's authorization request cannot be used: `{field}` {why}."),
                "The node checks every authorization request before a person is asked to consent, and sends nothing back to an address it could not check.",
                "Tell the app's maker; the request must carry `response_type=code`, a registered `redirect_uri`, and a PKCE `code_challenge` with `code_challenge_method=S256`.",
            ),
            OAuthError::InvalidRequest { field, why } => Refusal::new(
                400,
                "invalid_request",
                format!("`{field}` {why}."),
                "A token or revocation request carries each field it needs exactly once (RFC 6749).",
                format!("Send `{field}` once, as the endpoint's metadata describes."),
            ),
            OAuthError::InvalidGrant { why } => Refusal::new(
                400,
                "invalid_grant",
                "That grant does not give tokens.",
                why,
                "Start the authorization again: the person consents, and the new code is exchanged once, with its verifier.",
            ),
            OAuthError::GrantEnded { why } => Refusal::new(
                400,
                "invalid_grant",
                "That grant has ended.",
                format!(
                    "{why}, which only a replay or a stolen token would do, so the whole grant was revoked and every token of it stopped working."
                ),
                "Ask the person to connect the app again.",
            ),
            OAuthError::UnsupportedGrantType { grant_type } => Refusal::new(
                400,
                "unsupported_grant_type",
                format!("The grant type `{grant_type}` is not taken here."),
                "The node issues tokens for `authorization_code` (with PKCE) and `refresh_token` only.",
                "Use the authorization code flow.",
            ),
            OAuthError::InvalidTarget { resource, expected } => Refusal::new(
                400,
                "invalid_target",
                format!("Tokens cannot be issued for `{resource}`."),
                format!("This node's tokens are for its MCP endpoint, {expected}, and nothing else (RFC 8707)."),
                format!("Send `resource={expected}`, or leave it out."),
            ),
            OAuthError::InvalidRedirectUri { uri } => Refusal::new(
                400,
                "invalid_redirect_uri",
                format!("The redirect URI `{uri}` cannot be registered."),
                "A redirect URI is HTTPS, or HTTP on this machine (localhost, 127.0.0.1, [::1]), without a fragment or credentials, at most 2,000 characters; between 1 and 10 of them.",
                "Register the exact address the app listens on for the code.",
            ),
            OAuthError::InvalidClientMetadata { why } => Refusal::new(
                400,
                "invalid_client_metadata",
                "That registration cannot be used.",
                why,
                "Register a public client (`token_endpoint_auth_method` `none`) for the authorization code flow.",
            ),
            OAuthError::TooManyAttempts { retry_after_seconds } => Refusal::new(
                429,
                "too_many_token_attempts",
                "The token endpoint is paused for this address.",
                "Too many unknown codes or refresh tokens came from this address recently.",
                format!("Wait {} minutes, then start the authorization again.", retry_after_seconds.div_ceil(60)),
            )
            .retry_after(retry_after_seconds),
        }
    }
}
