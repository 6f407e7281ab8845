//! OAuth clients: dynamic registration (RFC 7591) of public clients, client ID
//! metadata documents, and reading a client back from its id.
//!
//! Registration is open to anyone, so it writes nothing: the client id is the
//! registration itself (name, redirect URIs, home page), signed under the
//! node's session key in a domain of its own. Nobody can make the node store a
//! row by registering, and a client id nobody altered is all a later request
//! needs.
//!
//! A client may instead name itself by the HTTPS URL of its metadata document
//! (the MCP authorization spec's preference). The node fetches it only for a
//! signed-in person's consent screen, never for a stranger, only where
//! `core::outbound`'s rule allows (never inward, checked just before the
//! fetch), and besides from a DNS name on the default port, with a path and no
//! query; no redirects followed, a few seconds and a few kilobytes at most.

use mailroom_contract::api::{RegisterOAuthClient, RegisteredOAuthClient};
use serde::{Deserialize, Serialize};

use super::errors::OAuthError;
use super::redirects;
use crate::authz::credentials::{signed_claims, verified_claims};
use crate::core::bindings::Fetched;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::outbound::{self, Destination, Host, OutboundPolicy};
use crate::core::refusal::Refusal;
use crate::core::text;

const CLIENT_ID_PREFIX: &str = "mrc_";
const CLIENT_ID_DOMAIN: &[u8] = b"mailroom.oauth-client.v1\n";
/// The most redirect URIs one client registers.
const MAXIMUM_REDIRECT_URIS: usize = 10;
/// The longest redirect URI or home page taken.
const MAXIMUM_URI_BYTES: usize = 2000;
/// The longest client name taken, in characters (an agent's name is at most 100).
const MAXIMUM_NAME_CHARACTERS: usize = 100;
/// The largest client metadata document the node reads.
pub(super) const MAXIMUM_METADATA_DOCUMENT_BYTES: usize = 8 * 1024;

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
    /// Whether the client named itself by its metadata document's URL rather
    /// than registering. Never part of a signed client id.
    #[serde(skip)]
    pub(super) by_metadata_document: bool,
}

impl Client {
    /// The id that carries this registration, signed.
    fn id(&self, session_key: &[u8]) -> String {
        signed_claims(self, CLIENT_ID_PREFIX, CLIENT_ID_DOMAIN, session_key)
    }

    /// The client a client id carries, if the node signed it.
    pub(super) fn from_id(client_id: &str, session_key: &[u8]) -> Result<Client, OAuthError> {
        verified_claims(client_id, CLIENT_ID_PREFIX, CLIENT_ID_DOMAIN, session_key)
            .map_err(|_| OAuthError::UnknownClient)
    }
}

/// Whether `uri` is an HTTPS page a person's browser can be sent to (a
/// client's home page): a host, no credentials and nothing a URL reader could
/// take two ways, at most 2,000 bytes. The node never fetches it itself, so
/// `core::outbound`'s rule is not its.
fn https_page(uri: &str) -> bool {
    let Some(rest) = uri.strip_prefix("https://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    uri.len() <= MAXIMUM_URI_BYTES
        && !authority.is_empty()
        && !authority.contains('@')
        && !uri.chars().any(|c| c.is_whitespace() || c.is_control() || c == '\\')
}

/// Whether a redirect URI can be registered: HTTPS, or HTTP on this machine (a
/// native app's loopback listener), with a host, no credentials and no
/// fragment (`redirects` says it, and how a request's URI is matched to it).
fn acceptable_redirect_uri(uri: &str) -> bool {
    redirects::can_be_registered(uri, MAXIMUM_URI_BYTES)
}

/// Where a redirect URI sends the grant, as the consent shows it: the host
/// (and port) of a web or loopback address; for a native app's own scheme, the
/// scheme with its authority (`cursor://anysphere.cursor-retrieval`), or the
/// scheme alone (`com.example.app:`), so it never reads as a site.
pub(super) fn host_of(uri: &str) -> String {
    if let Some(scheme) = redirects::private_use_scheme(uri) {
        let rest = &uri[scheme.len() + 1..];
        return match rest.strip_prefix("//") {
            Some(after) => format!("{scheme}://{}", after.split(['/', '?', '#']).next().unwrap_or_default()),
            None => format!("{scheme}:"),
        };
    }
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
    // The name becomes the agent's, shown to the person consenting: a direction
    // control could make it read as another app's.
    if name.chars().count() > MAXIMUM_NAME_CHARACTERS
        || name.chars().any(|character| character.is_control() || text::is_direction_control(character))
    {
        return Err(OAuthError::InvalidClientMetadata {
            why: format!(
                "`client_name` has at most {MAXIMUM_NAME_CHARACTERS} characters, and no control characters or direction controls (U+202A–U+202E, U+2066–U+2069)."
            ),
        });
    }
    if let Some(uri) = &request.client_uri
        && !https_page(uri)
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
        by_metadata_document: false,
    })
}

/// Where the metadata document `client_id` names may be fetched from: what
/// `core::outbound`'s rule allows under `policy`, and besides a DNS name on the
/// default port, with a path beyond `/` and no query or fragment. Otherwise
/// why not, naming `client_id`.
pub(super) fn metadata_document_destination(client_id: &str, policy: &OutboundPolicy) -> Result<Destination, String> {
    let destination = Destination::check(client_id, MAXIMUM_URI_BYTES, policy)
        .map_err(|refused| format!("`client_id` cannot be fetched: {}", refused.why()))?;
    let rest = client_id.split_once("://").map_or("", |(_, rest)| rest);
    let path = &rest[rest.find('/').unwrap_or(rest.len())..];
    if !client_id.starts_with("https://")
        || !matches!(destination.host(), Host::Name(_))
        || destination.port().is_some()
        || path.len() <= 1
        || client_id.contains(['?', '#'])
    {
        return Err("`client_id` is not where the node fetches metadata from: an HTTPS address with a DNS name, on the default port, with a path and no query".into());
    }
    Ok(destination)
}

/// The client a metadata document describes, when it describes `client_id`
/// itself in a way the node can use.
fn from_metadata_document(client_id: &str, fetched: &Fetched, issued_at_seconds: i64) -> Result<Client, OAuthError> {
    let unusable = |why: &str| OAuthError::ClientMetadataUnusable { url: client_id.to_string(), why: why.to_string() };
    if fetched.status != 200 {
        return Err(unusable(&format!("it answered HTTP {}", fetched.status)));
    }
    #[derive(Deserialize)]
    struct Document {
        client_id: String,
        #[serde(flatten)]
        registration: RegisterOAuthClient,
    }
    let document: Document = serde_json::from_slice(&fetched.body)
        .map_err(|_| unusable("it is not a client metadata document (JSON with `client_id` and `redirect_uris`)"))?;
    if document.client_id != client_id {
        return Err(unusable("its `client_id` is not its own URL"));
    }
    let mut client = validate(document.registration, issued_at_seconds).map_err(|error| match error {
        OAuthError::InvalidRedirectUri { uri } => {
            unusable(&format!("its redirect URI `{uri}` is not HTTPS or this machine's"))
        }
        OAuthError::InvalidClientMetadata { why } => unusable(&why),
        other => other,
    })?;
    client.by_metadata_document = true;
    Ok(client)
}

/// The client `client_id` names: a registration the node signed, or a metadata
/// document fetched now.
pub(super) async fn resolve(context: &Context<'_>, client_id: &str) -> Result<Client, OAuthError> {
    if !client_id.starts_with("https://") {
        return Client::from_id(client_id, &context.config().session_key);
    }
    // Checked just before the fetch, against the rule every request the node makes meets.
    let policy = context.config().outbound_policy();
    let destination = metadata_document_destination(client_id, &policy)
        .map_err(|why| OAuthError::ClientMetadataUnusable { url: client_id.to_string(), why })?;
    let fetching = context.node().webhooks.get(&destination, MAXIMUM_METADATA_DOCUMENT_BYTES);
    let unusable = |why: String| OAuthError::ClientMetadataUnusable { url: client_id.to_string(), why };
    let fetched = outbound::within(context.platform(), outbound::DOCUMENT_TIMEOUT_MS, fetching)
        .await
        .ok_or_else(|| unusable(format!("it did not arrive within {} seconds", outbound::DOCUMENT_TIMEOUT_MS / 1000)))?
        .map_err(|error| unusable(format!("it could not be fetched: {}", error.0)))?;
    from_metadata_document(client_id, &fetched, context.now_ms() / 1000)
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
    fn a_metadata_document_is_fetched_only_from_a_public_name_over_https() {
        let mut config = crate::core::node::Config::new(b"k".to_vec(), b"a".to_vec(), None);
        config.public_origin = Some("https://mail.example.com".into());
        let policy = config.outbound_policy();
        assert!(metadata_document_destination("https://app.example/oauth/client.json", &policy).is_ok());
        for refused in [
            "http://app.example/client.json",
            "https://app.example/",
            "https://app.example",
            "https://127.0.0.1/client.json",
            "https://10.0.0.1/client.json",
            "https://[::1]/client.json",
            "https://localhost/client.json",
            "https://intranet.localhost/client.json",
            "https://app.example:8443/client.json",
            "https://user@app.example/client.json",
            "https://app.example/client.json?x=1",
            "https://mail.example.com/client.json",
            "https://0x7f.0.0.1/client.json",
            "https://2130706433/client.json",
            "https://169.254.169.254/client.json",
            "https://[::ffff:10.0.0.1]/client.json",
            "https://8.8.8.8/client.json",
            "https://metadata.google.internal./client.json",
            "https://printer.home.arpa/client.json",
            "https://localhost./client.json",
        ] {
            assert!(metadata_document_destination(refused, &policy).is_err(), "{refused}");
        }
        let why = metadata_document_destination("https://10.0.0.1/client.json", &policy).unwrap_err();
        assert!(
            why.starts_with("`client_id` cannot be fetched: its host `10.0.0.1` is a private address (10.0.0.0/8)"),
            "{why}"
        );
    }

    #[test]
    fn a_metadata_document_must_describe_its_own_url() {
        let url = "https://app.example/client.json";
        let document = |body: serde_json::Value| Fetched::of(200, body.to_string().into_bytes());
        let good =
            serde_json::json!({ "client_id": url, "client_name": "App", "redirect_uris": ["https://app.example/cb"] });
        let client = from_metadata_document(url, &document(good), 0).unwrap();
        assert!(client.by_metadata_document);
        assert_eq!(client.redirect_uris, ["https://app.example/cb"]);
        let elsewhere = serde_json::json!({ "client_id": "https://evil.example/c.json", "redirect_uris": ["https://app.example/cb"] });
        assert!(matches!(
            from_metadata_document(url, &document(elsewhere), 0),
            Err(OAuthError::ClientMetadataUnusable { .. })
        ));
        let plain = serde_json::json!({ "client_id": url, "redirect_uris": ["http://app.example/cb"] });
        assert!(matches!(
            from_metadata_document(url, &document(plain), 0),
            Err(OAuthError::ClientMetadataUnusable { .. })
        ));
        let missing = Fetched::of(404, Vec::new());
        assert!(matches!(from_metadata_document(url, &missing, 0), Err(OAuthError::ClientMetadataUnusable { .. })));
    }

    #[test]
    fn the_redirect_host_is_what_follows_the_scheme() {
        assert_eq!(host_of("http://127.0.0.1:4567/callback?x=1"), "127.0.0.1:4567");
        assert_eq!(host_of("https://claude.ai/api/mcp/auth_callback"), "claude.ai");
        // A native app's own scheme reads as the app's link, never as a site.
        assert_eq!(
            host_of("cursor://anysphere.cursor-retrieval/oauth/user-mailroom/callback"),
            "cursor://anysphere.cursor-retrieval"
        );
        assert_eq!(host_of("com.example.app:/oauth2redirect"), "com.example.app:");
    }
}
