//! Who is calling: reading a request's credential, signing and checking access
//! tokens, minting refresh tokens, and the cookies and Origin rule for browsers.
//!
//! This module decides what a request *claims* without any I/O: an access token's
//! HMAC is checked here, in memory. Whether the claimed session is still live (not
//! signed out, person not disabled) is a database fact, confirmed by the dispatcher
//! in the same round trip as the route's own reads. `AuthenticationError` and the
//! refusals it answers with are here, beside the rules that raise them.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::core::caller::{AgentProof, Caller};
use crate::core::crypto::hash_secret;
use crate::core::http::Request;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::platform::{Platform, random_bytes};
use crate::core::refusal::{CredentialRefused, Refusal};
use crate::core::time::{DAY_MS, MINUTE_MS};

/// The browser's access-token cookie. `__Host-` binds it to this origin, Secure, Path=/.
pub const ACCESS_COOKIE: &str = "__Host-mailroom-access";
/// The browser's refresh-token cookie.
pub const REFRESH_COOKIE: &str = "__Host-mailroom-refresh";

/// An access token's lifetime: short, because it is checked without a database read.
pub const ACCESS_TOKEN_LIFETIME_MS: i64 = 15 * MINUTE_MS;
/// A session's lifetime, however often it is refreshed.
pub const SESSION_LIFETIME_MS: i64 = 30 * DAY_MS;

const ACCESS_TOKEN_PREFIX: &str = "mr_ses_";
const REFRESH_TOKEN_PREFIX: &str = "mr_ref_";
const AGENT_CREDENTIAL_PREFIX: &str = "mr_agt_";
const PAIRING_CODE_PREFIX: &str = "mr_pair_";
const SOURCE_CREDENTIAL_PREFIX: &str = "mr_src_";
/// A peer organisation's node: `mr_per_<peer ULID>.<secret>`.
const PEER_CREDENTIAL_PREFIX: &str = "mr_per_";
/// The header a peer's node names its agent that sends in: that agent's card URL.
pub const PEER_SENDER_HEADER: &str = "mailroom-sender";
const ACCESS_TOKEN_DOMAIN: &[u8] = b"mailroom.access-token.v1\n";
/// An OAuth access token: `mr_oat_<claims>.<HMAC>`, like a session's but for an
/// agent and one resource, under a domain of its own so neither passes as the other.
const OAUTH_ACCESS_TOKEN_PREFIX: &str = "mr_oat_";
const OAUTH_ACCESS_TOKEN_DOMAIN: &[u8] = b"mailroom.oauth-access-token.v1\n";
/// How long an OAuth access token works. Every request still confirms the
/// agent is live, so revoking it ends access at once; the lifetime bounds only
/// a token that leaked.
pub const OAUTH_ACCESS_TOKEN_LIFETIME_MS: i64 = 15 * MINUTE_MS;

/// Why a request's credential was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthenticationError {
    /// The route needs a signed-in caller and none was presented.
    MissingCredentials,
    /// The credential is not one the node issued, or its signature fails.
    MalformedCredential,
    /// The access token's 15 minutes are over.
    AccessTokenExpired,
    /// The session was revoked or signed out, or its person disabled.
    SessionEnded,
    /// A changing request came from another origin.
    CrossOrigin,
    /// The credential is genuine but its kind cannot call this route.
    CredentialNotAccepted,
    /// The request was addressed to a host that is not the node's.
    WrongHost { node_origin: String },
    /// The agent credential is unknown, or its secret does not match.
    AgentCredentialInvalid,
    /// The agent was revoked.
    AgentRevoked,
    /// The agent is paused.
    AgentPaused,
    /// The agent's credential expired.
    AgentExpired,
    /// The agent's sponsor is disabled, so the agent has no authority to act under.
    SponsorDisabled,
    /// The source credential is unknown, or its secret does not match.
    SourceCredentialInvalid,
    /// The source was revoked.
    SourceRevoked,
    /// A source's credential was presented to a route that is not a source's.
    SourceOnlyPushes,
    /// A route only a reminder source calls was called with another credential.
    SourcesOnly,
    /// The peer credential is unknown, or its secret does not match.
    PeerCredentialInvalid,
    /// The peer was disconnected.
    PeerDisconnected,
    /// A peer's credential was presented to a route not open to peers.
    PeersOnlyMessage,
    /// A peer named an agent that sends on a domain not its own.
    PeerSenderOutsideDomain { sender: String, domain: String },
    /// An OAuth access token was presented somewhere other than its audience.
    TokenForAnotherResource { resource: String },
}

impl AuthenticationError {
    /// Whether this refuses the credential the request presented, and how: a
    /// dead one (401, `error="invalid_token"`) or one whose holder is stopped
    /// (403). `None` when no credential was presented, or when the credential is
    /// fine and the refusal is of where or how it was used.
    pub fn credential_refused(&self) -> Option<CredentialRefused> {
        match self {
            AuthenticationError::MalformedCredential
            | AuthenticationError::AccessTokenExpired
            | AuthenticationError::SessionEnded
            | AuthenticationError::AgentCredentialInvalid
            | AuthenticationError::AgentRevoked
            | AuthenticationError::AgentExpired
            | AuthenticationError::SourceCredentialInvalid
            | AuthenticationError::SourceRevoked
            | AuthenticationError::PeerCredentialInvalid
            | AuthenticationError::PeerDisconnected
            | AuthenticationError::TokenForAnotherResource { .. } => Some(CredentialRefused::Dead),
            AuthenticationError::AgentPaused | AuthenticationError::SponsorDisabled => {
                Some(CredentialRefused::Suspended)
            }
            AuthenticationError::MissingCredentials
            | AuthenticationError::CrossOrigin
            | AuthenticationError::CredentialNotAccepted
            | AuthenticationError::SourceOnlyPushes
            | AuthenticationError::SourcesOnly
            | AuthenticationError::PeersOnlyMessage
            | AuthenticationError::PeerSenderOutsideDomain { .. }
            | AuthenticationError::WrongHost { .. } => None,
        }
    }
}

impl From<AuthenticationError> for Refusal {
    fn from(error: AuthenticationError) -> Refusal {
        let credential = error.credential_refused();
        let refusal = match error {
            AuthenticationError::MissingCredentials => Refusal::new(
                401,
                "not_signed_in",
                "This route needs a signed-in caller.",
                "The request carried no session and no agent credential.",
                "Sign in at POST /api/sessions and send the access token as `Authorization: Bearer <token>`, or use an agent's `mr_agt_` credential.",
            ),
            AuthenticationError::MalformedCredential => Refusal::new(
                401,
                "invalid_credential",
                "The credential in this request is not one the node issued.",
                "The bearer token or session cookie is malformed or its signature does not verify.",
                "Sign in again at POST /api/sessions to get a fresh access token.",
            ),
            AuthenticationError::AccessTokenExpired => Refusal::new(
                401,
                "access_token_expired",
                "The access token has expired.",
                "Access tokens last 15 minutes.",
                "Exchange your refresh token at POST /api/sessions/refresh for a new access token, then retry.",
            ),
            AuthenticationError::SessionEnded => Refusal::new(
                401,
                "session_ended",
                "This session no longer works.",
                "The session was signed out or revoked, or the person was disabled.",
                "Sign in again at POST /api/sessions; if your account was disabled, ask an administrator.",
            ),
            AuthenticationError::CrossOrigin => Refusal::new(
                403,
                "cross_origin_refused",
                "A request that changes something came from another origin.",
                "Changing requests sent with cookies, or carrying an Origin header, must come from the node's own origin; anything else could be a forged request.",
                "Call the node from its own pages, or use `Authorization: Bearer` without cookies.",
            ),
            AuthenticationError::WrongHost { node_origin } => Refusal::new(
                403,
                "wrong_host",
                "This node does not answer at that address.",
                format!(
                    "The node answers only at {node_origin}; a request for any other host could be a DNS rebinding attack."
                ),
                format!("Send the request to {node_origin}."),
            ),
            AuthenticationError::AgentCredentialInvalid => Refusal::new(
                401,
                "agent_credential_invalid",
                "That agent credential does not work.",
                "It is unknown, or it was replaced by pairing again.",
                "Ask an administrator for a new credential or pairing code for this agent.",
            ),
            AuthenticationError::AgentRevoked => Refusal::new(
                401,
                "agent_revoked",
                "This agent was revoked.",
                "An administrator ended this agent for good; its credential never works again.",
                "Ask an administrator to mint a new agent if the work should continue.",
            ),
            AuthenticationError::AgentPaused => Refusal::new(
                403,
                "agent_paused",
                "This agent is paused.",
                "An administrator paused it; its credential works again when it is resumed.",
                "Ask an administrator (or your sponsor) to resume the agent.",
            ),
            AuthenticationError::AgentExpired => Refusal::new(
                401,
                "agent_expired",
                "This agent's credential has expired.",
                "It was minted with an expiry, which has passed.",
                "Ask an administrator to mint a new agent.",
            ),
            AuthenticationError::SponsorDisabled => Refusal::new(
                403,
                "sponsor_disabled",
                "This agent's sponsor is disabled, so it cannot act.",
                "An agent acts under its sponsor's authority, and a disabled person has none to lend.",
                "Ask an administrator to enable the sponsor, or to mint a new agent under another sponsor.",
            ),
            AuthenticationError::SourceCredentialInvalid => Refusal::new(
                401,
                "source_credential_invalid",
                "That source credential does not work.",
                "It is not one this node issued, or its secret does not match.",
                "Ask an administrator for the source's credential; a lost one is replaced by creating a new source.",
            ),
            AuthenticationError::SourceRevoked => Refusal::new(
                401,
                "source_revoked",
                "This reminder source was revoked.",
                "An administrator ended this source; its credential never works again.",
                "Ask an administrator to create a new source if it should push reminders again.",
            ),
            AuthenticationError::SourceOnlyPushes => Refusal::new(
                403,
                "source_only_pushes",
                "A reminder source's credential can only push and withdraw its reminders.",
                "A source is a service that keeps people's reminders in step with its own records; it reads and changes nothing else.",
                "Call PUT /api/source/events or DELETE /api/source/events with it, or use a person's or an agent's credential for anything else.",
            ),
            AuthenticationError::SourcesOnly => Refusal::new(
                403,
                "sources_only",
                "Only a reminder source can call this.",
                "This route pushes or withdraws a source's own reminders, so it takes a source's `mr_src_` credential.",
                "Add a reminder of your own with POST /api/me/events (create_event), or ask an administrator to create a source.",
            ),
            AuthenticationError::PeerCredentialInvalid => Refusal::new(
                401,
                "peer_credential_invalid",
                "The peer credential is not recognised.",
                "No connected organisation has this credential: it is mistyped, or was never issued here.",
                "Ask this node's administrator for the credential issued to your organisation (create_peer shows it once).",
            ),
            AuthenticationError::PeerDisconnected => Refusal::new(
                401,
                "peer_disconnected",
                "This organisation was disconnected.",
                "An administrator disconnected the peer this credential was issued to; it never works again.",
                "Ask this node's administrator to connect your organisation again.",
            ),
            AuthenticationError::PeerSenderOutsideDomain { sender, domain } => Refusal::new(
                403,
                "peer_sender_outside_domain",
                format!("`Mailroom-Sender` ({sender}) is not an agent of {domain}."),
                format!(
                    "A connected organisation speaks for its own agents only: their cards are on {domain} or beneath it."
                ),
                "Name the card URL of your own agent that sends, on your organisation's domain.",
            ),
            AuthenticationError::PeersOnlyMessage => Refusal::new(
                403,
                "peers_only_message",
                "A peer's credential can only message this node's agents.",
                "Another organisation's node reaches this node's agents over A2A and nothing else.",
                "Call an agent's A2A endpoint (`POST /a2a/{agentId}`, named by its card) with it.",
            ),
            AuthenticationError::TokenForAnotherResource { resource } => Refusal::new(
                401,
                "token_for_another_resource",
                "This access token is not for this route.",
                format!("An OAuth access token works only at the resource it was issued for, {resource}."),
                "Call the MCP endpoint with it, or use a session or an agent's `mr_agt_` credential for the REST API.",
            ),
            AuthenticationError::CredentialNotAccepted => Refusal::new(
                403,
                "credential_not_accepted",
                "This kind of credential cannot call this route.",
                "The route answers people signed in with a session.",
                "Sign in as a person and call it with that session.",
            ),
        };
        Refusal { credential, ..refusal }
    }
}

/// What a request presented.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Presented {
    pub caller: Caller,
    /// Whether the credential came from a cookie (so the Origin rule applies).
    pub via_cookie: bool,
    /// For an OAuth access token, the one resource it works at.
    pub resource: Option<String>,
}

/// The claims an OAuth access token carries: the agent a person's consent
/// minted, the resource (RFC 8707) it is bound to, and when it expires.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OAuthAccessClaims {
    #[serde(rename = "a")]
    pub agent_id: String,
    #[serde(rename = "r")]
    pub resource: String,
    #[serde(rename = "e")]
    pub expires_at_ms: i64,
}

/// The claims an access token carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessClaims {
    #[serde(rename = "p")]
    pub person_id: String,
    #[serde(rename = "s")]
    pub session_id: String,
    #[serde(rename = "e")]
    pub expires_at_ms: i64,
}

/// Reads the request's credential: `Authorization: Bearer` first, then the access
/// cookie. A present but unusable credential is an error, never a silent stranger,
/// so a client with a broken token learns that rather than seeing less.
pub fn identify(request: &Request, session_key: &[u8], now_ms: i64) -> Result<Presented, AuthenticationError> {
    if let Some(authorization) = request.header("authorization") {
        let token = authorization
            .strip_prefix("Bearer ")
            .or_else(|| authorization.strip_prefix("bearer "))
            .map(str::trim)
            .ok_or(AuthenticationError::MalformedCredential)?;
        if let Some(kind) = NamingCredential::claimed_by(token) {
            let id = kind.named_id(token).ok_or(AuthenticationError::MalformedCredential)?;
            let credential_hash = hash_secret(token);
            let caller = match kind {
                NamingCredential::Agent => {
                    Caller::Agent { agent_id: id, proof: AgentProof::Credential { hash: credential_hash } }
                }
                NamingCredential::Source => Caller::Source { source_id: id, credential_hash },
                NamingCredential::Peer => Caller::Peer {
                    peer_id: id,
                    credential_hash,
                    sender: request.header(PEER_SENDER_HEADER).map(|card| card.trim().to_string()),
                },
            };
            return Ok(Presented { caller, via_cookie: false, resource: None });
        }
        if token.starts_with(OAUTH_ACCESS_TOKEN_PREFIX) {
            let claims = verify_oauth_access_token(token, session_key, now_ms)?;
            let caller = Caller::Agent { agent_id: claims.agent_id, proof: AgentProof::Connection };
            return Ok(Presented { caller, via_cookie: false, resource: Some(claims.resource) });
        }
        let claims = verify_access_token(token, session_key, now_ms)?;
        return Ok(Presented { caller: caller_from(claims), via_cookie: false, resource: None });
    }
    if let Some(token) = request.cookie(ACCESS_COOKIE) {
        let claims = verify_access_token(token, session_key, now_ms)?;
        return Ok(Presented { caller: caller_from(claims), via_cookie: true, resource: None });
    }
    Ok(Presented { caller: Caller::Stranger, via_cookie: false, resource: None })
}

fn caller_from(claims: AccessClaims) -> Caller {
    Caller::Person { person_id: claims.person_id, session_id: claims.session_id }
}

/// The rule that keeps another site from acting with a browser's cookies: a
/// changing request that carries an Origin must carry this node's, and one
/// authenticated by cookie must carry one at all. Bearer clients (CLIs, MCP
/// clients) send no Origin and no cookie, and pass.
pub fn check_origin(
    request: &Request,
    node_origin: &str,
    changes_something: bool,
    via_cookie: bool,
) -> Result<(), AuthenticationError> {
    if !changes_something {
        return Ok(());
    }
    match request.header("origin") {
        Some(origin) if origin == node_origin => Ok(()),
        Some(_) => Err(AuthenticationError::CrossOrigin),
        None if via_cookie => Err(AuthenticationError::CrossOrigin),
        None => Ok(()),
    }
}

/// Signs an access token for `claims`.
pub fn sign_access_token(claims: &AccessClaims, session_key: &[u8]) -> String {
    signed_claims(claims, ACCESS_TOKEN_PREFIX, ACCESS_TOKEN_DOMAIN, session_key)
}

/// Checks an access token's signature (in constant time) and expiry.
pub fn verify_access_token(token: &str, session_key: &[u8], now_ms: i64) -> Result<AccessClaims, AuthenticationError> {
    let claims: AccessClaims = verified_claims(token, ACCESS_TOKEN_PREFIX, ACCESS_TOKEN_DOMAIN, session_key)?;
    if now_ms >= claims.expires_at_ms {
        return Err(AuthenticationError::AccessTokenExpired);
    }
    Ok(claims)
}

/// Signs an OAuth access token for `claims`.
pub fn sign_oauth_access_token(claims: &OAuthAccessClaims, session_key: &[u8]) -> String {
    signed_claims(claims, OAUTH_ACCESS_TOKEN_PREFIX, OAUTH_ACCESS_TOKEN_DOMAIN, session_key)
}

/// `<prefix><claims>.<HMAC>`: `claims` as base64url JSON, signed under the
/// session key in `domain`, so a token of one kind never verifies as another.
/// Session and OAuth access tokens, and OAuth client ids, are made this way.
pub fn signed_claims<T: Serialize>(claims: &T, prefix: &str, domain: &[u8], session_key: &[u8]) -> String {
    let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).unwrap_or_default());
    let mut mac = keyed_mac(session_key);
    mac.update(domain);
    mac.update(payload.as_bytes());
    let signature = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    format!("{prefix}{payload}.{signature}")
}

/// Checks an OAuth access token's signature (in constant time) and expiry.
pub fn verify_oauth_access_token(
    token: &str,
    session_key: &[u8],
    now_ms: i64,
) -> Result<OAuthAccessClaims, AuthenticationError> {
    let claims: OAuthAccessClaims =
        verified_claims(token, OAUTH_ACCESS_TOKEN_PREFIX, OAUTH_ACCESS_TOKEN_DOMAIN, session_key)?;
    if now_ms >= claims.expires_at_ms {
        return Err(AuthenticationError::AccessTokenExpired);
    }
    Ok(claims)
}

/// The claims of a `<prefix><payload>.<HMAC>` token whose MAC under `domain`
/// verifies, compared in constant time (`signed_claims` makes them).
pub fn verified_claims<T: serde::de::DeserializeOwned>(
    token: &str,
    prefix: &str,
    domain: &[u8],
    session_key: &[u8],
) -> Result<T, AuthenticationError> {
    let malformed = AuthenticationError::MalformedCredential;
    let body = token.strip_prefix(prefix).ok_or(malformed.clone())?;
    let (payload, signature) = body.split_once('.').ok_or(malformed.clone())?;
    let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| malformed.clone())?;
    let mut mac = keyed_mac(session_key);
    mac.update(domain);
    mac.update(payload.as_bytes());
    mac.verify_slice(&signature).map_err(|_| malformed.clone())?;
    let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| malformed.clone())?;
    serde_json::from_slice(&payload).map_err(|_| malformed)
}

fn keyed_mac(session_key: &[u8]) -> Hmac<Sha256> {
    // HMAC accepts keys of any length, so this cannot fail.
    <Hmac<Sha256> as KeyInit>::new_from_slice(session_key).unwrap_or_else(|_| unreachable!("HMAC takes any key length"))
}

/// A new opaque refresh token. Only its hash is stored.
pub fn new_refresh_token(platform: &dyn Platform) -> String {
    let secret: [u8; 32] = random_bytes(platform);
    format!("{REFRESH_TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(secret))
}

/// The credentials that name the row they prove: `<prefix><ULID>.<secret>`. The
/// id is public and names the row to check; the 256-bit secret is what proves it;
/// only the SHA-256 of the whole credential is stored, so liveness is one indexed
/// read in the route's own first round trip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NamingCredential {
    /// An agent's: `mr_agt_<agent ULID>.<secret>`.
    Agent,
    /// A reminder source's: `mr_src_<source ULID>.<secret>`.
    Source,
    /// A peer organisation's node's: `mr_per_<peer ULID>.<secret>`.
    Peer,
}

impl NamingCredential {
    fn prefix(self) -> &'static str {
        match self {
            NamingCredential::Agent => AGENT_CREDENTIAL_PREFIX,
            NamingCredential::Source => SOURCE_CREDENTIAL_PREFIX,
            NamingCredential::Peer => PEER_CREDENTIAL_PREFIX,
        }
    }

    fn kind(self) -> IdKind {
        match self {
            NamingCredential::Agent => IdKind::Agent,
            NamingCredential::Source => IdKind::Source,
            NamingCredential::Peer => IdKind::Peer,
        }
    }

    /// The kind a presented token claims to be, by its prefix.
    fn claimed_by(token: &str) -> Option<NamingCredential> {
        [NamingCredential::Agent, NamingCredential::Source, NamingCredential::Peer]
            .into_iter()
            .find(|kind| token.starts_with(kind.prefix()))
    }

    /// A new credential for the row `id`.
    pub fn issue(self, id: &str, platform: &dyn Platform) -> String {
        let secret: [u8; 32] = random_bytes(platform);
        let ulid = id.strip_prefix(self.kind().prefix()).unwrap_or(id);
        format!("{}{ulid}.{}", self.prefix(), URL_SAFE_NO_PAD.encode(secret))
    }

    /// The id a credential of this kind names, if it is well formed.
    pub fn named_id(self, credential: &str) -> Option<String> {
        let (ulid, secret) = credential.strip_prefix(self.prefix())?.split_once('.')?;
        let id = format!("{}{ulid}", self.kind().prefix());
        let well_formed = is_id_of(&id, self.kind()) && secret.len() == 43 && URL_SAFE_NO_PAD.decode(secret).is_ok();
        well_formed.then_some(id)
    }
}

/// A new pairing code: 160 random bits, typed or pasted once.
pub fn new_pairing_code(platform: &dyn Platform) -> String {
    const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let random: [u8; 32] = random_bytes(platform);
    let code: String = random.iter().map(|byte| CROCKFORD[(*byte & 0x1F) as usize] as char).collect();
    format!("{PAIRING_CODE_PREFIX}{code}")
}

/// A `Set-Cookie` value for a `__Host-` cookie: HttpOnly, Secure, SameSite=Strict.
pub fn set_cookie(name: &str, value: &str, max_age_seconds: i64) -> String {
    format!("{name}={value}; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age={max_age_seconds}")
}

/// A `Set-Cookie` value that removes a cookie.
pub fn clear_cookie(name: &str) -> String {
    set_cookie(name, "", 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8] = b"a session key for tests only";

    fn claims(expires_at_ms: i64) -> AccessClaims {
        AccessClaims { person_id: "usr_A".into(), session_id: "ses_B".into(), expires_at_ms }
    }

    #[test]
    fn a_signed_token_verifies_until_it_expires() {
        let token = sign_access_token(&claims(1_000), KEY);
        assert_eq!(verify_access_token(&token, KEY, 999), Ok(claims(1_000)));
        assert_eq!(verify_access_token(&token, KEY, 1_000), Err(AuthenticationError::AccessTokenExpired));
    }

    #[test]
    fn a_token_signed_with_another_key_or_altered_is_refused() {
        let token = sign_access_token(&claims(1_000), KEY);
        assert_eq!(verify_access_token(&token, b"another key", 0), Err(AuthenticationError::MalformedCredential));
        let forged_claims = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims(9_999_999)).unwrap());
        let signature = token.rsplit('.').next().unwrap();
        let forged = format!("{ACCESS_TOKEN_PREFIX}{forged_claims}.{signature}");
        assert_eq!(verify_access_token(&forged, KEY, 0), Err(AuthenticationError::MalformedCredential));
        assert_eq!(verify_access_token("mr_ses_nonsense", KEY, 0), Err(AuthenticationError::MalformedCredential));
    }

    fn origin_check(origin: Option<&str>, changes: bool, via_cookie: bool) -> bool {
        let mut request = Request { origin: "https://mail.example".into(), ..Request::default() };
        if let Some(origin) = origin {
            request.headers.push(("origin".into(), origin.into()));
        }
        check_origin(&request, "https://mail.example", changes, via_cookie).is_ok()
    }

    #[test]
    fn the_origin_rule_guards_changing_requests() {
        assert!(origin_check(Some("https://mail.example"), true, true));
        assert!(!origin_check(Some("https://evil.example"), true, true));
        assert!(!origin_check(Some("https://evil.example"), true, false));
        assert!(!origin_check(None, true, true));
        assert!(origin_check(None, true, false));
        assert!(origin_check(Some("https://evil.example"), false, true));
    }

    #[test]
    fn agent_credentials_name_their_agent_and_nothing_else_parses() {
        let platform = crate::testing::FixedPlatform::at(0);
        let agent = crate::core::ids::new_id(IdKind::Agent, &platform);
        let credential = NamingCredential::Agent.issue(&agent, &platform);
        assert!(credential.starts_with("mr_agt_"));
        assert_eq!(NamingCredential::Agent.named_id(&credential), Some(agent));
        assert_eq!(NamingCredential::Agent.named_id("mr_agt_nonsense"), None);
        assert_eq!(NamingCredential::Agent.named_id(&credential.replace('.', "")), None);
        assert_eq!(NamingCredential::Agent.named_id(&format!("{credential}x")), None);
    }

    #[test]
    fn source_credentials_name_their_source_and_are_read_as_a_source() {
        let platform = crate::testing::FixedPlatform::at(0);
        let source = crate::core::ids::new_id(IdKind::Source, &platform);
        let credential = NamingCredential::Source.issue(&source, &platform);
        assert!(credential.starts_with("mr_src_"));
        assert_eq!(NamingCredential::Source.named_id(&credential), Some(source.clone()));
        assert_eq!(NamingCredential::Source.named_id(&credential.replace("mr_src_", "mr_agt_")), None);
        assert_eq!(NamingCredential::Source.named_id(&format!("{credential}x")), None);
        let request =
            Request { headers: vec![("authorization".into(), format!("Bearer {credential}"))], ..Request::default() };
        let presented = identify(&request, b"key", 0).unwrap();
        assert_eq!(presented.caller, Caller::Source { source_id: source, credential_hash: hash_secret(&credential) });
    }
}
