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
    /// The caller sent no message (task) with this id.
    NoSuchTask { id: String },
    /// The task has no push config with this id (of the caller's).
    NoSuchPushConfig { id: String, task: String },
    /// The task already has as many push configs as one may.
    TooManyPushConfigs { task: String },
    /// A push config's field is not one the node can send (`why` says how).
    InvalidPushField { field: &'static str, why: String },
}

impl From<WebhookError> for Refusal {
    fn from(error: WebhookError) -> Refusal {
        match error {
            WebhookError::InvalidUrl { why } => Refusal::new(
                400,
                "invalid_body",
                "`url` cannot be used as a webhook.",
                format!(
                    "`url`: {why}. Deliveries go only to an https address on the internet, checked when it is set and before each delivery."
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
            WebhookError::NoSuchTask { id } => Refusal::new(
                404,
                "not_found",
                format!("You sent no message {id}."),
                "A task's progress is pushed only to the one who sent it.",
                "Use the id of a message you sent (list_sent_agent_messages).",
            ),
            WebhookError::NoSuchPushConfig { id, task } => Refusal::new(
                404,
                "not_found",
                format!("{task} has no push config {id} of yours."),
                "A removed config, or another's, is not found here.",
                "List the task's push configs with list_push_configs and use an id from there.",
            ),
            WebhookError::TooManyPushConfigs { task } => Refusal::new(
                409,
                "conflict",
                format!("{task} already has {} push configs.", webhook_limits::PER_TASK),
                format!("A task has at most {} push configs.", webhook_limits::PER_TASK),
                "Remove one it no longer needs, or give an existing config's id to replace it.",
            ),
            WebhookError::InvalidPushField { field, why } => Refusal::new(
                400,
                "invalid_body",
                format!("`{field}` cannot be used: {why}."),
                "A push config's values are sent as HTTP headers, so they hold no line breaks or control characters, within their limits.",
                format!("Correct `{field}` and send the config again."),
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
