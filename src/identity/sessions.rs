//! Sessions: signing in, refreshing, signing out and changing a password.
//!
//! Authority travels in a 15-minute HMAC-signed access token that needs no
//! database read to check; revocation lives in the database, in the session row
//! and its hashed, rotating refresh token. A refresh token works once: presenting
//! any token the session already spent ends the session, because only a copy would
//! be presented twice.
//! Sign-in spends the one deliberate burst of CPU in the node (PBKDF2), so it is
//! rate limited per account and per address before any hashing happens.

use mailroom_contract::api::{
    ChangePassword, PasswordChanged, RefreshSession, SessionTokens, SessionTransport, SignIn, SignedIn, SignedOut,
};

use super::store::{self, Credentials, PersonRow, SessionRow};
use crate::authz::AuthorityError;
use crate::authz::credentials::{
    ACCESS_COOKIE, ACCESS_TOKEN_LIFETIME_MS, AccessClaims, REFRESH_COOKIE, SESSION_LIFETIME_MS, clear_cookie,
    new_refresh_token, set_cookie, sign_access_token,
};
use crate::authz::throttle::{self, Window};
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::crypto::{hash_secret, hex};
use crate::core::http::Response;
use crate::core::ids::{IdKind, new_id};
use crate::core::platform::random_bytes;
use crate::core::refusal::Refusal;
use crate::core::storage::Statement;
use crate::core::time::rfc3339;
use crate::identity::password;
use crate::identity::people::{self, PersonError};

/// A retired refresh token presented this soon after its rotation is a race
/// between two tabs, not a theft.
const REFRESH_RACE_GRACE_MS: i64 = 60 * 1000;

/// Why a session could not be started, refreshed or used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionError {
    /// Unknown email, wrong password or disabled person: deliberately one answer.
    WrongEmailOrPassword,
    /// Too many recent failures for this account or address.
    TooManyAttempts { retry_after_seconds: u32 },
    /// No refresh token in the body or the cookie.
    MissingRefreshToken,
    /// The refresh token refreshes nothing live.
    RefreshTokenInvalid,
    /// A retired refresh token was presented: the session was ended.
    RefreshTokenReused,
    /// Another refresh of the same token won a moment ago.
    RefreshRaced,
    /// The current password given to change it was wrong.
    WrongCurrentPassword,
}

impl From<SessionError> for Refusal {
    fn from(error: SessionError) -> Refusal {
        match error {
            SessionError::WrongEmailOrPassword => Refusal::new(
                401,
                "wrong_email_or_password",
                "Those credentials do not sign anyone in.",
                "The email is unknown, the password is wrong, or the person is disabled; the node does not say which.",
                "Check the email and password. After repeated failures the node refuses for a while, so ask an administrator if you are unsure.",
            ),
            SessionError::TooManyAttempts { retry_after_seconds } => Refusal::new(
                429,
                "too_many_sign_in_attempts",
                "Password checks are paused for this account or address.",
                "Too many sign-ins or password changes failed recently with a wrong password, for this account or from this address.",
                format!(
                    "Wait {} minutes and try again, or sign in from an address you have signed in from before; \
                     an administrator can also set a new password for you (reset_password).",
                    retry_after_seconds.div_ceil(60)
                ),
            )
            .retry_after(retry_after_seconds),
            SessionError::MissingRefreshToken => Refusal::new(
                400,
                "missing_refresh_token",
                "No refresh token was sent.",
                "A refresh needs the refresh token, in the body or in the browser's refresh cookie.",
                "Send `{\"refresh_token\": \"…\"}` with the token from sign-in or the last refresh.",
            ),
            SessionError::RefreshTokenInvalid => Refusal::new(
                401,
                "refresh_token_invalid",
                "That refresh token does not refresh any session.",
                "It is unknown, expired, or its session was signed out or revoked.",
                "Sign in again at POST /api/sessions.",
            ),
            SessionError::RefreshTokenReused => Refusal::new(
                401,
                "refresh_token_reused",
                "That refresh token was already exchanged, so its session has been ended.",
                "A refresh token works once; presenting a retired one means a copy may have leaked, and the node ends the session to protect it.",
                "Sign in again at POST /api/sessions.",
            ),
            SessionError::RefreshRaced => Refusal::new(
                409,
                "refresh_raced",
                "This session was refreshed a moment ago by another request.",
                "Two refreshes of the same token arrived together; the other one won.",
                "Use the tokens from the other refresh (a browser already has them in its cookies) and retry.",
            ),
            SessionError::WrongCurrentPassword => Refusal::new(
                403,
                "wrong_current_password",
                "The current password is not right, so the password was not changed.",
                "Changing a password needs the one in use now.",
                "Send your current password; if you have forgotten it, ask an administrator.",
            ),
        }
    }
}

/// `POST /api/sessions`.
pub async fn sign_in(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: SignIn = context.body()?;
    // An unusable address cannot belong to anyone; it is counted like any failure.
    let email = people::normalize_email(&request.email).unwrap_or_else(|_| request.email.trim().to_lowercase());
    let address = context.request().client_address.clone();
    let now_ms = context.now_ms();
    // Every window this attempt counts against is reserved with the first read,
    // before the password is checked: parallel guesses cannot all slip under a limit.
    let attempt = hex(&random_bytes::<16>(context.platform()));
    let pair = Window::account_from(&email, address.as_deref());
    let account = Window::account(&email);
    let from_address = address.as_deref().map(Window::address);
    let person = store::person_to_sign_in(&email);
    let mut statements = vec![
        person,
        throttle::is_known(&email, address.as_deref(), now_ms),
        pair.reserve(now_ms, &attempt),
        account.reserve(now_ms, &attempt),
    ];
    statements.extend(from_address.as_ref().map(|window| window.reserve(now_ms, &attempt)));
    let mut results = context.read(statements).await?.into_iter();
    let (Some(person), Some(known), Some(pair_count), Some(account_count)) =
        (results.next(), results.next(), results.next(), results.next())
    else {
        return Err(context.internal("a sign-in's first read answered too few results"));
    };
    let address_count = results.next();
    let credentials: Option<Credentials> =
        person.first().map(|row| row.decode()).transpose().map_err(|error| context.internal(error))?;
    if let Some(credentials) = &credentials {
        context.audit_object(credentials.id.clone());
    }
    // An address this account signed in from is never slowed by what others try
    // against it: its attempts do not count towards the account's ceiling.
    let known = known.first_flag("known").unwrap_or(false);
    if known {
        context.write_whatever_the_outcome(account.release());
    }
    let mut admitted = vec![pair.admits(&pair_count, now_ms, &attempt)];
    if !known {
        admitted.push(account.admits(&account_count, now_ms, &attempt));
    }
    if let (Some(window), Some(count)) = (&from_address, &address_count) {
        admitted.push(window.admits(count, now_ms, &attempt));
    }
    if let Some(retry_after_seconds) = admitted.into_iter().filter_map(Result::err).max() {
        return Err(SessionError::TooManyAttempts { retry_after_seconds }.into());
    }
    let stored = credentials.as_ref().map(|credentials| credentials.password_hash.as_str());
    let matches = password::verify(context.platform(), &request.password, stored, context.config().password_iterations)
        .await
        .map_err(|error| context.internal(error.0))?;
    let enabled = credentials.as_ref().is_some_and(|credentials| credentials.disabled_at.is_none());
    // A wrong password keeps its reservations: they are its failures.
    let (Some(credentials), true, true) = (credentials, matches, enabled) else {
        return Err(SessionError::WrongEmailOrPassword.into());
    };
    context.write(pair.clear());
    if !known {
        context.write(account.release());
    }
    if let (Some(window), Some(address)) = (&from_address, &address) {
        context.write(window.release());
        context.write(throttle::remember(&email, address, now_ms));
    }
    let person: PersonRow = person.rows[0].decode().map_err(|error| context.internal(error))?;
    let session_id = new_id(IdKind::Session, context.platform());
    let refresh_token = new_refresh_token(context.platform());
    let session_expires_at = context.now_ms() + SESSION_LIFETIME_MS;
    context.write(store::insert_session(
        &session_id,
        &credentials.id,
        hash_secret(&refresh_token),
        context.now_ms(),
        session_expires_at,
    ));
    // From here the caller has proved who they are, so the entry names them.
    context.attribute_to_person(credentials.id.clone(), session_id.clone());
    context.audit_detail(serde_json::json!({ "session": session_id }));
    let tokens = issue(context, &credentials.id, &session_id, refresh_token, session_expires_at, request.transport);
    Ok(context.json(&SignedIn { person: person.present(), session: tokens }))
}

/// Signs a fresh access token and hands the pair over by the chosen transport.
fn issue(
    context: &mut Context<'_>,
    person_id: &str,
    session_id: &str,
    refresh_token: String,
    session_expires_at: i64,
    transport: SessionTransport,
) -> SessionTokens {
    let access_expires_at = (context.now_ms() + ACCESS_TOKEN_LIFETIME_MS).min(session_expires_at);
    let claims = AccessClaims {
        person_id: person_id.to_string(),
        session_id: session_id.to_string(),
        expires_at_ms: access_expires_at,
    };
    let access_token = sign_access_token(&claims, &context.config().session_key);
    let mut tokens = SessionTokens {
        session_id: session_id.to_string(),
        access_token: Some(access_token),
        access_token_expires_at: rfc3339(access_expires_at),
        refresh_token: Some(refresh_token),
        session_expires_at: rfc3339(session_expires_at),
    };
    if transport == SessionTransport::Cookie {
        // Both cookies live as long as the session. The access token inside its
        // cookie still expires after 15 minutes, and because the browser keeps
        // presenting it the node can answer `access_token_expired`, which tells the
        // page to refresh; a cookie that vanished with its token would read as
        // "not signed in" instead.
        let session_seconds = (session_expires_at - context.now_ms()) / 1000;
        let access = tokens.access_token.take().unwrap_or_default();
        let refresh = tokens.refresh_token.take().unwrap_or_default();
        context.response_header("set-cookie", set_cookie(ACCESS_COOKIE, &access, session_seconds));
        context.response_header("set-cookie", set_cookie(REFRESH_COOKIE, &refresh, session_seconds));
    }
    tokens
}

/// `POST /api/sessions/refresh`.
pub async fn refresh(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: RefreshSession = context.optional_body()?;
    let cookie = context.request().cookie(REFRESH_COOKIE).filter(|token| !token.is_empty());
    let (presented, transport) = match (request.refresh_token, cookie) {
        (Some(token), _) => (token, SessionTransport::Bearer),
        (None, Some(token)) => (token.to_string(), SessionTransport::Cookie),
        (None, None) => return Err(SessionError::MissingRefreshToken.into()),
    };
    let presented_hash = hash_secret(&presented);
    let lookup = store::session_by_refresh_hash(&presented_hash);
    let [found] = context.read_array([lookup]).await?;
    let Some(session) = found.first() else {
        return Err(SessionError::RefreshTokenInvalid.into());
    };
    let session: SessionRow = session.decode().map_err(|error| context.internal(error))?;
    context.audit_object(session.id.clone());
    context.attribute_to_person(session.person_id.clone(), session.id.clone());
    let live =
        session.revoked_at.is_none() && session.person_disabled_at.is_none() && session.expires_at > context.now_ms();
    if !live {
        return Err(SessionError::RefreshTokenInvalid.into());
    }
    if session.is_current == 0 {
        // Every token the session spent is remembered, not only the last: a thief
        // who rotated a stolen token twice still meets this when the victim
        // presents theirs. Only the token the last rotation spent, presented
        // within moments of it, is a race between two tabs.
        let spent_last = session.spent_at == Some(session.refreshed_at);
        if spent_last && context.now_ms() - session.refreshed_at <= REFRESH_RACE_GRACE_MS {
            return Err(SessionError::RefreshRaced.into());
        }
        context.write_whatever_the_outcome(store::revoke_session(&session.id, context.now_ms()));
        return Err(SessionError::RefreshTokenReused.into());
    }
    let refresh_token = new_refresh_token(context.platform());
    let new_hash = hash_secret(&refresh_token);
    // Two refreshes of one token may both pass the read; only the one whose
    // rotation still finds the old hash in place commits.
    context.write_changing_one_row(
        store::rotate_refresh_hash(&session.id, &presented_hash, &new_hash, context.now_ms()),
        SessionError::RefreshRaced,
    );
    // The spent token joins the session's family of spent tokens.
    context.write(store::insert_spent_refresh_token(presented_hash, &session.id, context.now_ms()));
    let tokens = issue(context, &session.person_id, &session.id, refresh_token, session.expires_at, transport);
    Ok(context.json(&tokens))
}

/// `DELETE /api/sessions/current`.
pub async fn sign_out(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let Caller::Person { session_id, .. } = context.caller().clone() else {
        return Err(AuthorityError::PeopleOnly.into());
    };
    context.read(Vec::new()).await?;
    context.write(store::revoke_session(&session_id, context.now_ms()));
    context.audit_object(session_id.clone());
    context.response_header("set-cookie", clear_cookie(ACCESS_COOKIE));
    context.response_header("set-cookie", clear_cookie(REFRESH_COOKIE));
    Ok(context.json(&SignedOut { session_id }))
}

/// `POST /api/me/password`.
pub async fn change_password(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let Caller::Person { person_id, session_id } = context.caller().clone() else {
        return Err(AuthorityError::PeopleOnly.into());
    };
    let request: ChangePassword = context.body()?;
    if !password::is_acceptable(&request.new_password) {
        return Err(PersonError::WeakPassword { minimum: password::MINIMUM_LENGTH }.into());
    }
    let stored = store::password_hash_of(&person_id);
    let others = store::other_live_sessions_of(&person_id, &session_id, context.now_ms());
    // The same reservation as signing in: a stolen access token must not become
    // a way to guess the password, one request after another.
    let attempt = hex(&random_bytes::<16>(context.platform()));
    let window = Window::session(&session_id);
    let [stored, others, reserved] =
        context.read_array([stored, others, window.reserve(context.now_ms(), &attempt)]).await?;
    context.audit_object(person_id.clone());
    if let Err(retry_after_seconds) = window.admits(&reserved, context.now_ms(), &attempt) {
        return Err(SessionError::TooManyAttempts { retry_after_seconds }.into());
    }
    let row = stored.first().ok_or_else(|| context.internal("a live session's person is missing"))?;
    let password_hash = row.text("password_hash").map_err(|error| context.internal(error))?;
    let matches = password::verify(
        context.platform(),
        &request.current_password,
        Some(&password_hash),
        context.config().password_iterations,
    )
    .await
    .map_err(|error| context.internal(error.0))?;
    if !matches {
        return Err(SessionError::WrongCurrentPassword.into());
    }
    context.write(window.release());
    let new_hash = password::hash(context.platform(), &request.new_password, context.config().password_iterations)
        .await
        .map_err(|error| context.internal(error.0))?;
    context.write(store::set_password_hash(&person_id, new_hash));
    context.write(store::revoke_other_sessions_of(&person_id, &session_id, context.now_ms()));
    let other_sessions_revoked = others.first().and_then(|row| row.integer("other_sessions").ok()).unwrap_or(0);
    Ok(context.json(&PasswordChanged { other_sessions_revoked: other_sessions_revoked as u32 }))
}

/// The statement that forgets the spent refresh tokens of sessions that ended:
/// none of them can refresh anything any more.
pub fn forget_spent(now_ms: i64) -> Statement {
    store::forget_spent_refresh_tokens(now_ms)
}
