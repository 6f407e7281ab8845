//! OAuth clients: dynamic registration (RFC 7591) of public clients, and
//! reading a client back from its id.
//!
//! Registration is open to anyone, so it writes nothing: the client id is the
//! registration itself (name, redirect URIs, home page), signed with a key
//! derived from the node's session key. Nobody can make the node store a row by
//! registering, and a client id nobody altered is all a later request needs.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use mailroom_contract::api::{RegisterOAuthClient, RegisteredOAuthClient};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use super::OAuthError;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::refusal::Refusal;
use crate::core::webhooks::acceptable_url;

const CLIENT_ID_PREFIX: &str = "mrc_";
const CLIENT_ID_DOMAIN: &[u8] = b"mailroom.oauth-client.v1\n";
/// The most redirect URIs one client registers.
const MAXIMUM_REDIRECT_URIS: usize = 10;
/// The longest redirect URI or home page taken.
const MAXIMUM_URI_BYTES: usize = 2000;
/// The longest client name taken, in characters (an agent's name is at most 100).
const MAXIMUM_NAME_CHARACTERS: usize = 100;

/// A client, as its id says it registered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Client {
    #[serde(rename = "n")]
    pub(super) name: String,
    #[serde(rename = "r")]
    pub(super) redirect_uris: Vec<String>,
    #[serde(rename = "u", default, skip_serializing_if = "Option::is_none")]
    pub(super) client_uri: Option<String>,
    #[serde(rename = "t")]
    pub(super) issued_at_seconds: i64,
}

fn mac(session_key: &[u8]) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(session_key)
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    mac.update(CLIENT_ID_DOMAIN);
    mac
}

impl Client {
    /// The id that carries this registration, signed.
    fn id(&self, session_key: &[u8]) -> String {
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(self).unwrap_or_default());
        let mut mac = mac(session_key);
        mac.update(payload.as_bytes());
        format!("{CLIENT_ID_PREFIX}{payload}.{}", URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes()))
    }

    /// The client a client id carries, if the node signed it.
    pub(super) fn from_id(client_id: &str, session_key: &[u8]) -> Result<Client, OAuthError> {
        let (payload, signature) = client_id
            .strip_prefix(CLIENT_ID_PREFIX)
            .and_then(|rest| rest.split_once('.'))
            .ok_or(OAuthError::UnknownClient)?;
        let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| OAuthError::UnknownClient)?;
        let mut mac = mac(session_key);
        mac.update(payload.as_bytes());
        mac.verify_slice(&signature).map_err(|_| OAuthError::UnknownClient)?;
        let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| OAuthError::UnknownClient)?;
        serde_json::from_slice(&payload).map_err(|_| OAuthError::UnknownClient)
    }
}

/// Whether a redirect URI can be registered: HTTPS, or HTTP on this machine (a
/// native app's loopback listener), with a host, no credentials and no fragment.
fn acceptable_redirect_uri(uri: &str) -> bool {
    acceptable_url(uri, MAXIMUM_URI_BYTES) && !uri.contains('#')
}

/// The host (and port) a redirect URI sends the grant to.
pub(super) fn host_of(uri: &str) -> String {
    let rest = uri.split_once("://").map_or(uri, |(_, rest)| rest);
    rest.split(['/', '?', '#']).next().unwrap_or_default().to_string()
}

/// Checks a registration and answers the client it describes.
fn validate(request: RegisterOAuthClient, issued_at_seconds: i64) -> Result<Client, OAuthError> {
    if request.redirect_uris.is_empty() || request.redirect_uris.len() > MAXIMUM_REDIRECT_URIS {
        return Err(OAuthError::InvalidRedirectUri { uri: String::new() });
    }
    if let Some(uri) = request.redirect_uris.iter().find(|uri| !acceptable_redirect_uri(uri)) {
        return Err(OAuthError::InvalidRedirectUri { uri: uri.clone() });
    }
    if request.token_endpoint_auth_method.as_deref().is_some_and(|method| method != "none") {
        return Err(OAuthError::InvalidClientMetadata {
            why: "`token_endpoint_auth_method` must be `none`: the node registers public clients, which prove themselves with PKCE.".into(),
        });
    }
    let grant_types_fit = request
        .grant_types
        .iter()
        .flatten()
        .all(|grant_type| matches!(grant_type.as_str(), "authorization_code" | "refresh_token"));
    if !grant_types_fit {
        return Err(OAuthError::InvalidClientMetadata {
            why: "`grant_types` may name only `authorization_code` and `refresh_token`.".into(),
        });
    }
    if request.response_types.iter().flatten().any(|response_type| response_type != "code") {
        return Err(OAuthError::InvalidClientMetadata { why: "`response_types` may name only `code`.".into() });
    }
    let name = request.client_name.as_deref().map(str::trim).filter(|name| !name.is_empty());
    let name = name.unwrap_or("An unnamed app");
    if name.chars().count() > MAXIMUM_NAME_CHARACTERS || name.chars().any(char::is_control) {
        return Err(OAuthError::InvalidClientMetadata {
            why: format!("`client_name` has at most {MAXIMUM_NAME_CHARACTERS} characters and no control characters."),
        });
    }
    if let Some(uri) = &request.client_uri
        && !(uri.starts_with("https://") && acceptable_url(uri, MAXIMUM_URI_BYTES))
    {
        return Err(OAuthError::InvalidClientMetadata {
            why: "`client_uri` must be an HTTPS address of at most 2,000 characters.".into(),
        });
    }
    Ok(Client {
        name: name.to_string(),
        redirect_uris: request.redirect_uris,
        client_uri: request.client_uri,
        issued_at_seconds,
    })
}

/// `POST /oauth/register`.
pub async fn register(context: &mut Context<'_>) -> Result<Response, Refusal> {
    // Read here rather than through `Context::body`, so a body of the wrong
    // shape is answered as RFC 7591 says: `invalid_client_metadata`.
    let request: RegisterOAuthClient = serde_json::from_slice(&context.request().body).map_err(|error| {
        OAuthError::InvalidClientMetadata { why: format!("The body is not a registration: {error}.") }
    })?;
    let client = validate(request, context.now_ms() / 1000)?;
    let client_id = client.id(&context.config().session_key);
    Ok(context.json(&RegisteredOAuthClient {
        client_id,
        client_id_issued_at: client.issued_at_seconds,
        redirect_uris: client.redirect_uris,
        client_name: client.name,
        client_uri: client.client_uri,
        grant_types: vec!["authorization_code".into(), "refresh_token".into()],
        response_types: vec!["code".into()],
        token_endpoint_auth_method: "none".into(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registration(redirect_uris: &[&str]) -> RegisterOAuthClient {
        RegisterOAuthClient {
            redirect_uris: redirect_uris.iter().map(|uri| uri.to_string()).collect(),
            client_name: Some("Claude".into()),
            client_uri: None,
            token_endpoint_auth_method: None,
            grant_types: None,
            response_types: None,
        }
    }

    #[test]
    fn a_client_id_carries_its_registration_and_nothing_altered_passes() {
        let client = validate(registration(&["https://app.example/callback"]), 7).unwrap();
        let id = client.id(b"key");
        assert_eq!(Client::from_id(&id, b"key"), Ok(client.clone()));
        assert_eq!(Client::from_id(&id, b"another key"), Err(OAuthError::UnknownClient));
        let mut forged = client;
        forged.redirect_uris = vec!["https://evil.example/".into()];
        let forged_payload = forged.id(b"attacker's key");
        let signature = id.rsplit('.').next().unwrap();
        let spliced = format!("{}.{signature}", forged_payload.rsplit_once('.').unwrap().0);
        assert_eq!(Client::from_id(&spliced, b"key"), Err(OAuthError::UnknownClient));
        assert_eq!(Client::from_id("https://app.example/client.json", b"key"), Err(OAuthError::UnknownClient));
    }

    #[test]
    fn redirect_uris_are_https_or_this_machine_without_a_fragment() {
        assert!(validate(registration(&["http://127.0.0.1:4567/callback"]), 0).is_ok());
        assert!(validate(registration(&["http://localhost/cb"]), 0).is_ok());
        for refused in
            ["http://app.example/cb", "https://app.example/cb#x", "javascript:alert(1)", "https://u:p@a.example/"]
        {
            assert!(
                matches!(validate(registration(&[refused]), 0), Err(OAuthError::InvalidRedirectUri { .. })),
                "{refused}"
            );
        }
        assert!(matches!(validate(registration(&[]), 0), Err(OAuthError::InvalidRedirectUri { .. })));
        let mut confidential = registration(&["https://app.example/cb"]);
        confidential.token_endpoint_auth_method = Some("client_secret_basic".into());
        assert!(matches!(validate(confidential, 0), Err(OAuthError::InvalidClientMetadata { .. })));
    }

    #[test]
    fn the_redirect_host_is_what_follows_the_scheme() {
        assert_eq!(host_of("http://127.0.0.1:4567/callback?x=1"), "127.0.0.1:4567");
        assert_eq!(host_of("https://claude.ai/api/mcp/auth_callback"), "claude.ai");
    }
}
