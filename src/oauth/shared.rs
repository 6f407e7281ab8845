//! What OAuth's files share: how long codes and refresh tokens work, and who
//! may consent to an app or disconnect one.

use crate::authz::AuthorityError;
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::refusal::Refusal;
use crate::core::time::MINUTE_MS;

/// How long an authorization code works: long enough for a client to be
/// redirected and exchange it, short enough that a leaked one is stale.
pub const CODE_LIFETIME_MS: i64 = 2 * MINUTE_MS;
/// How long a refresh token works unused; each use rotates it.
pub const REFRESH_TOKEN_LIFETIME_MS: i64 = 30 * crate::core::time::DAY_MS;

/// The person the consent or connected apps are for: only a person, signed in
/// themselves, consents to an app or disconnects one.
pub(super) fn person(context: &Context<'_>) -> Result<String, Refusal> {
    match context.caller() {
        Caller::Person { person_id, .. } => Ok(person_id.clone()),
        _ => Err(AuthorityError::PeopleOnly.into()),
    }
}
