//! The authorization request and a person's answer to it.
//!
//! `GET /oauth/authorize` is the interface's page; the page asks
//! `GET /api/oauth/consent` what the request asks (checked here before the
//! person sees anything: the client, its redirect URI (exact, but for a
//! loopback address's port: `redirects`), PKCE with S256,
//! the resource), and posts the person's choice to `POST /api/oauth/consent`.
//! Approving mints the agent and a single-use code in one commit; the answer
//! says where to send the browser. A request the node could not check is shown
//! on the page and never sent to a redirect URI.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mailroom_contract::api::{ApproveOAuthConsent, OAuthClient, OAuthConsent, OAuthConsentGiven};
use mailroom_contract::capabilities::CAPABILITIES;

use super::clients::{Client, host_of, resolve};
use super::discovery::mcp_resource;
use super::errors::OAuthError;
use super::redirects;
use super::shared::{CODE_LIFETIME_MS, person};
use super::store::{self, NewCode, NewConnection};
use crate::agents;
use crate::authz::tuples::{self, Holder};
use crate::core::context::Context;
use crate::core::crypto::hash_secret;
use crate::core::http::Response;
use crate::core::platform::random_bytes;
use crate::core::refusal::Refusal;
use crate::mail;

/// The prefix of an authorization code.
pub(super) const CODE_PREFIX: &str = "mr_oac_";

/// An authorization request, checked.
pub(super) struct AuthorizationRequest {
    pub(super) client_id: String,
    pub(super) client: Client,
    pub(super) redirect_uri: String,
    pub(super) code_challenge: String,
    pub(super) state: Option<String>,
    pub(super) resource: String,
    /// The node's origin: the issuer, sent back as `iss`.
    pub(super) issuer: String,
}

/// The fields of an authorization request, from the page's query or the
/// person's answer.
struct Fields {
    response_type: Option<String>,
    client_id: Option<String>,
    redirect_uri: Option<String>,
    code_challenge: Option<String>,
    code_challenge_method: Option<String>,
    state: Option<String>,
    resource: Option<String>,
}

/// Whether `text` is a PKCE value: 43 to 128 of the unreserved characters (RFC 7636 §4.1).
pub(super) fn is_pkce_value(text: &str) -> bool {
    (43..=128).contains(&text.len())
        && text.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~'))
}

/// The S256 challenge of a verifier.
pub(super) fn challenge_of(verifier: &str) -> String {
    use sha2::{Digest, Sha256};
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Checks an authorization request: its client first (a registration the node
/// signed, or a metadata document fetched now), then everything else against it.
async fn check(context: &Context<'_>, fields: Fields) -> Result<AuthorizationRequest, OAuthError> {
    let invalid = |field: &'static str, why: &str| OAuthError::InvalidAuthorizationRequest { field, why: why.into() };
    let client_id = fields.client_id.ok_or_else(|| invalid("client_id", "is missing"))?;
    let client = resolve(context, &client_id).await?;
    let redirect_uri = fields.redirect_uri.ok_or_else(|| invalid("redirect_uri", "is missing"))?;
    if !redirects::is_registered(&client.redirect_uris, &redirect_uri) {
        return Err(invalid(
            "redirect_uri",
            "is not one the app registered (they are matched exactly, but for the port of a loopback address)",
        ));
    }
    if fields.response_type.as_deref().is_some_and(|response_type| response_type != "code") {
        return Err(invalid("response_type", "must be `code`"));
    }
    let code_challenge =
        fields.code_challenge.ok_or_else(|| invalid("code_challenge", "is missing (PKCE is required)"))?;
    if !is_pkce_value(&code_challenge) {
        return Err(invalid("code_challenge", "is not a PKCE challenge (43 to 128 unreserved characters)"));
    }
    if fields.code_challenge_method.as_deref() != Some("S256") {
        return Err(invalid("code_challenge_method", "must be `S256`"));
    }
    let origin = context.config().origin_of(context.request());
    let expected = mcp_resource(origin);
    if fields.resource.as_deref().is_some_and(|resource| resource != expected) {
        return Err(invalid("resource", "names another resource: this node's tokens are for its MCP endpoint only"));
    }
    Ok(AuthorizationRequest {
        client_id,
        client,
        redirect_uri,
        code_challenge,
        state: fields.state,
        resource: expected,
        issuer: origin.to_string(),
    })
}

impl AuthorizationRequest {
    /// The redirect URI with `parameters`, `state` and `iss` added to its query.
    fn back_to_client(&self, parameters: &[(&str, &str)]) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        for (name, value) in parameters {
            query.append_pair(name, value);
        }
        if let Some(state) = &self.state {
            query.append_pair("state", state);
        }
        query.append_pair("iss", &self.issuer);
        let separator = if self.redirect_uri.contains('?') { '&' } else { '?' };
        format!("{}{separator}{}", self.redirect_uri, query.finish())
    }
}

/// `GET /api/oauth/consent`.
pub async fn get_consent(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let person_id = person(context)?;
    let query = |name: &str| context.query(name).map(str::to_string);
    let fields = Fields {
        response_type: Some(query("response_type").unwrap_or_default()),
        client_id: query("client_id"),
        redirect_uri: query("redirect_uri"),
        code_challenge: query("code_challenge"),
        code_challenge_method: query("code_challenge_method"),
        state: query("state"),
        resource: query("resource"),
    };
    let request = check(context, fields).await?;
    let requested_capabilities: Vec<String> = context
        .query("scope")
        .unwrap_or_default()
        .split_whitespace()
        .filter(|scope| CAPABILITIES.iter().any(|capability| capability.name == *scope))
        .map(str::to_string)
        .collect();
    let [mailboxes] = context.read_array([tuples::every_mailbox_with_held(&Holder::Person(person_id))]).await?;
    // Only where the person holds something: the screen is no list of every
    // mailbox on the node for someone who may not know of them.
    let mailboxes: Vec<_> = mail::present_mailboxes(context, &mailboxes, None)?
        .into_iter()
        .filter(|mailbox| !mailbox.held.is_empty())
        .collect();
    Ok(context.json(&OAuthConsent {
        client: OAuthClient {
            client_id: request.client_id.clone(),
            name: request.client.name.clone(),
            redirect_uri: request.redirect_uri.clone(),
            redirect_host: host_of(&request.redirect_uri),
            on_this_computer: redirects::on_this_computer(&request.redirect_uri),
            registered_by: if request.client.by_metadata_document {
                "metadata_document"
            } else {
                "dynamic_registration"
            }
            .into(),
            client_uri: request.client.client_uri.clone(),
        },
        resource: request.resource.clone(),
        requested_capabilities,
        mailboxes,
        deny_to: request.back_to_client(&[
            ("error", "access_denied"),
            ("error_description", "The person declined to connect the app."),
        ]),
    }))
}

/// `POST /api/oauth/consent`.
pub async fn approve_consent(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let person_id = person(context)?;
    let answer: ApproveOAuthConsent = context.body()?;
    let fields = Fields {
        response_type: None,
        client_id: Some(answer.client_id.clone()),
        redirect_uri: Some(answer.redirect_uri.clone()),
        code_challenge: Some(answer.code_challenge.clone()),
        code_challenge_method: Some(answer.code_challenge_method.clone()),
        state: answer.state.clone(),
        resource: answer.resource.clone(),
    };
    let request = check(context, fields).await?;
    // The mint form's own rules: capabilities from the vocabulary, each
    // satisfiable on a chosen mailbox, and nothing the person does not hold.
    // The agent waits on its code: pending, holding nothing and doing nothing,
    // until the code is exchanged, and removed by the upkeep if it never is.
    let now_ms = context.now_ms();
    let code_expires_at = now_ms + CODE_LIFETIME_MS;
    let agent = agents::mint_for_connection(
        context,
        &request.client.name,
        &person_id,
        &answer.capabilities,
        &answer.mailboxes,
        code_expires_at,
    )
    .await?;
    context.write(
        store::insert_connection(NewConnection {
            agent_id: &agent.id,
            client_id: &request.client_id,
            client_name: &request.client.name,
            redirect_uri: &request.redirect_uri,
            resource: &request.resource,
            connected_at: now_ms,
        })
        .statement(),
    );
    let code = format!("{CODE_PREFIX}{}", URL_SAFE_NO_PAD.encode(random_bytes::<32>(context.platform())));
    context.write(
        store::insert_code(NewCode {
            code_hash: hash_secret(&code),
            agent_id: &agent.id,
            client_id: &request.client_id,
            redirect_uri: &request.redirect_uri,
            code_challenge: &request.code_challenge,
            resource: &request.resource,
            expires_at: code_expires_at,
        })
        .statement(),
    );
    context.audit_object(agent.id.clone());
    context.audit_detail(serde_json::json!({
        "client": request.client.name,
        "redirect_host": host_of(&request.redirect_uri),
        "capabilities": answer.capabilities,
        "mailboxes": answer.mailboxes.iter().map(|grant| &grant.mailbox).collect::<Vec<_>>(),
    }));
    let redirect_to = request.back_to_client(&[("code", &code)]);
    Ok(context.json(&OAuthConsentGiven { redirect_to, agent }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_s256_challenge_is_rfc_7636s_example() {
        // RFC 7636 appendix B.
        assert_eq!(
            challenge_of("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert!(is_pkce_value("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"));
        assert!(!is_pkce_value("short"));
        assert!(!is_pkce_value(&"a".repeat(129)));
        assert!(!is_pkce_value(&format!("{}+", "a".repeat(43))));
    }
}
