//! The four-part refusal, and the few refusals every layer shares.
//!
//! A refusal is an answer written to be acted on: what was refused, why, and what
//! would change the answer. Each domain owns an error enum naming what can go
//! wrong in its own words, and maps it to a refusal beside it (`impl From<…> for
//! Refusal` in the domain's own module), so whoever adds a variant sees the words
//! it will carry. This module imports no domain. Internal failures map to a single
//! detail-free 500, so nothing about storage or code ever reaches a client.

use mailroom_contract::api::{RefusalBody, RefusalDetail};

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
}

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
        }
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
