//! The four-part refusal, and the few refusals every layer shares.
//!
//! A refusal is an answer written to be acted on: what was refused, why, and what
//! would change the answer. Each domain owns an error enum naming what can go
//! wrong in its own words, and maps it to a refusal beside it (`impl From<…> for
//! Refusal` in the domain's own module), so whoever adds a variant sees the words
//! it will carry. This module imports no domain. Internal failures map to a single
//! detail-free 500, so nothing about storage or code ever reaches a client.

use mailroom_contract::Route;
use mailroom_contract::api::{RefusalBody, RefusalDetail};
use mailroom_contract::route::Produces;

/// A refusal, ready to be answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
    pub reason: String,
    pub fix: String,
    /// Sent as `Retry-After` when waiting would change the answer.
    pub retry_after_seconds: Option<u32>,
    /// Sent as `Allow` on a 405.
    pub allow: Option<String>,
    /// Set when what was refused is the credential the request presented, not
    /// what it asked for: every surface answers that as HTTP (a tool call too),
    /// and a dead one's 401 says `error="invalid_token"`.
    pub credential: Option<CredentialRefused>,
    /// Answered as an OAuth endpoint's error (RFC 6749 §5.2: `error` is `code`)
    /// rather than the four-part body, so standard clients read it.
    pub oauth: bool,
}

/// How the credential a request presented was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CredentialRefused {
    /// Revoked, expired, unknown or malformed: it will never work again as it
    /// is, so its 401 challenges with `error="invalid_token"` (RFC 6750 §3.1).
    Dead,
    /// Genuine, but its holder may not act now (an agent paused, its sponsor
    /// disabled): a 403, which a resumed agent's same credential gets past.
    Suspended,
}

/// The realm every challenge names.
pub const REALM: &str = "mailroom";

impl Refusal {
    pub fn new(
        status: u16,
        code: &'static str,
        message: impl Into<String>,
        reason: impl Into<String>,
        fix: impl Into<String>,
    ) -> Refusal {
        Refusal {
            status,
            code,
            message: message.into(),
            reason: reason.into(),
            fix: fix.into(),
            retry_after_seconds: None,
            allow: None,
            credential: None,
            oauth: false,
        }
    }

    /// This refusal as `route` answers it: an OAuth endpoint answers every
    /// error in OAuth's form (RFC 6749 §5.2), whoever refused the request (the
    /// handler, the throttle, or the dispatcher before the handler ran), since
    /// a standard client parses nothing else; every other route, in four parts.
    pub fn answered_by(mut self, route: &Route) -> Refusal {
        self.oauth = route.produces == Produces::OAuth;
        self
    }

    /// The same refusal, saying it refuses the credential the request presented.
    pub fn of_credential(mut self, how: CredentialRefused) -> Refusal {
        self.credential = Some(how);
        self
    }

    /// The `WWW-Authenticate` challenge a 401 carries (RFC 9110 §11.6.1 requires
    /// one on every 401): the Bearer scheme in this node's realm, and
    /// `error="invalid_token"` when the credential presented is dead. A request
    /// that presented none, or a sign-in whose password was wrong, is only told
    /// which scheme to use (RFC 6750 §3: no error code when the request lacked
    /// the token). `None` for any other status.
    pub fn challenge(&self) -> Option<String> {
        if self.status != 401 {
            return None;
        }
        Some(match self.credential {
            Some(CredentialRefused::Dead) => format!("Bearer realm=\"{REALM}\", error=\"invalid_token\""),
            _ => format!("Bearer realm=\"{REALM}\""),
        })
    }

    /// The answer to anything that went wrong inside the node. Deliberately says
    /// nothing about what: the detail goes to the operator's log.
    pub fn internal() -> Refusal {
        Refusal::new(
            500,
            "internal_error",
            "The node could not complete this request.",
            "Something failed inside the node; the details are in the operator's logs, not here.",
            "Try again. If it keeps failing, tell the node's operator the time of the request.",
        )
    }

    /// The same refusal, saying how long waiting takes to change the answer
    /// (sent as `Retry-After`).
    pub fn retry_after(mut self, seconds: u32) -> Refusal {
        self.retry_after_seconds = Some(seconds);
        self
    }

    /// The answer when the deployment lacks something it needs. Names the missing
    /// setting (an operator's fix), never a value.
    pub fn misconfigured(what: &str) -> Refusal {
        Refusal::new(
            503,
            "node_not_configured",
            "The node is not fully configured.",
            format!("The deployment is missing {what}."),
            "Tell the node's operator; the README's deploy section lists every binding and secret.",
        )
    }

    /// The JSON body every refusal answers with.
    pub fn body(&self) -> RefusalBody {
        RefusalBody {
            error: RefusalDetail {
                code: self.code.to_string(),
                message: self.message.clone(),
                reason: self.reason.clone(),
                fix: self.fix.clone(),
            },
        }
    }

    /// A 404 that answers exactly as a missing object would, so an object the caller
    /// may not see is indistinguishable from one that does not exist.
    pub fn not_found(what: &str, id: &str) -> Refusal {
        Refusal::new(
            404,
            "not_found",
            format!("There is no {what} {id}."),
            format!("No {what} with that id exists, or you are not allowed to know that it does."),
            format!("Check the id; list what you can see to find the right {what}."),
        )
    }
}
