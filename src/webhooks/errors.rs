//! Why a webhook call was refused, and how each refusal reads.

use mailroom_contract::api::webhook_limits;

use crate::core::refusal::Refusal;

/// Why a webhook call was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WebhookError {
    /// The address breaks the outbound rule (`why` says how).
    InvalidUrl { why: String },
    /// A kind is not an event kind's shape.
    InvalidKind { index: usize, kind: String },
    /// More kinds than one webhook may name.
    TooManyKinds { given: usize },
    /// The mailbox or agent the path names is not on this node.
    NoSuchSubject { id: String },
    /// The path names no live webhook of that mailbox or agent.
    NoSuchWebhook { id: String, subject: String },
    /// The mailbox or agent already has as many webhooks as one may.
    TooManyWebhooks { subject: String },
}

impl From<WebhookError> for Refusal {
    fn from(error: WebhookError) -> Refusal {
        match error {
            WebhookError::InvalidUrl { why } => Refusal::new(
                400,
                "invalid_body",
                "`url` cannot be used as a webhook.",
                format!(
                    "`url` {why}. Deliveries go only to an https address on the internet, checked when it is set and before each delivery."
                ),
                "Give the https address of an endpoint reachable from the internet.",
            ),
            WebhookError::InvalidKind { index, kind } => Refusal::new(
                400,
                "invalid_body",
                format!("`kinds[{index}]` (`{kind}`) is not an event kind."),
                format!(
                    "An event kind is an audit action, such as `receive_mail`: lower-case letters, digits and underscores, at most {} characters.",
                    webhook_limits::KIND_CHARACTERS
                ),
                "Name kinds as a listening stream's frames name them, or leave `kinds` empty for every kind.",
            ),
            WebhookError::TooManyKinds { given } => Refusal::new(
                400,
                "invalid_body",
                format!("`kinds` names {given} kinds."),
                format!("One webhook names at most {} kinds.", webhook_limits::KINDS),
                "Leave `kinds` empty to be told of every kind, or subscribe a second webhook.",
            ),
            WebhookError::NoSuchSubject { id } => Refusal::new(
                404,
                "not_found",
                format!("There is no {id} on this node."),
                "A webhook is subscribed to a mailbox or an agent of this node.",
                "Use an id from list_mailboxes or list_agents.",
            ),
            WebhookError::NoSuchWebhook { id, subject } => Refusal::new(
                404,
                "not_found",
                format!("{subject} has no webhook {id}."),
                "A removed webhook, or another's, is not found here.",
                "List the webhooks of the mailbox or agent and use an id from there.",
            ),
            WebhookError::TooManyWebhooks { subject } => Refusal::new(
                409,
                "conflict",
                format!("{subject} already has {} webhooks.", webhook_limits::PER_SUBJECT),
                format!("A mailbox or an agent has at most {} webhooks.", webhook_limits::PER_SUBJECT),
                "Remove one it no longer needs, then subscribe again.",
            ),
        }
    }
}
