//! Webhooks: an HTTPS endpoint outside the node subscribed to what changes on
//! a mailbox (an administrator's) or an agent (its sponsor's), told in the
//! Standard Webhooks format, with each delivery's outcome kept to be shown.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::api::WEBHOOK_URL_MAXIMUM;
use crate::vocabulary::vocabulary;

/// Limits on webhooks, stated once because the contract publishes them.
pub mod webhook_limits {
    /// How many live webhooks one mailbox or one agent may have.
    pub const PER_SUBJECT: usize = 10;
    /// How many event kinds one webhook may name.
    pub const KINDS: usize = 32;
    /// The longest event kind, in characters.
    pub const KIND_CHARACTERS: usize = 64;
    /// How many of its latest deliveries a webhook is shown with.
    pub const DELIVERIES_SHOWN: usize = 20;
    /// How long a failed delivery waits before each attempt after the first,
    /// in minutes: one entry per retry, so a delivery is attempted one more
    /// time than it has entries before it is given up as failed.
    pub const RETRY_AFTER_MINUTES: [i64; 6] = [1, 5, 30, 120, 360, 720];
    /// How many push notification configs one task may have.
    pub const PER_TASK: usize = 10;
    /// The longest push notification config id, in characters.
    pub const CONFIG_ID_CHARACTERS: usize = 64;
    /// The longest authentication scheme, in characters.
    pub const SCHEME_CHARACTERS: usize = 32;
    /// The longest token or credentials, in characters.
    pub const CREDENTIAL_CHARACTERS: usize = 4096;
    /// How long a delivery's outcome is kept once settled, in days.
    pub const KEPT_DAYS: i64 = 7;
}

/// An endpoint to subscribe.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWebhook {
    /// An https address on the internet that accepts a POST of JSON: never
    /// inside a network (loopback, private, link-local, unique-local, shared
    /// addresses in any spelling, `localhost`, `.local`, `.internal`), except
    /// loopback for a node that itself runs on a loopback origin.
    #[schemars(length(max = WEBHOOK_URL_MAXIMUM))]
    pub url: String,
    /// The event kinds to deliver (each an audit action, such as
    /// `receive_mail`, `update_thread` or `send_agent_message`, as a listening
    /// stream's frames name them); empty or absent for every kind.
    #[serde(default)]
    #[schemars(length(max = webhook_limits::KINDS))]
    pub kinds: Vec<String>,
}

vocabulary! {
    /// Where one delivery stands.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum WebhookDeliveryState {
        Pending = "pending": "Waiting for its first attempt, or for the next after a failure (`next_attempt_at`).";
        Delivered = "delivered": "The endpoint answered with a 2xx status.";
        Failed = "failed": "Every attempt failed, or the address is one the node may not post to: not tried again.";
        Withheld = "withheld": "Not sent: whoever subscribed the endpoint no longer administers the node or sponsors the agent, or the webhook was removed before it went.";
    }
}

/// One event told to a webhook, and what became of it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct WebhookDelivery {
    /// The message's id (`msg_…`), sent as `webhook-id`: the same on every
    /// attempt, so a receiver can ignore a repeat.
    pub id: String,
    /// The event's kind: the audit action of the change.
    pub kind: String,
    /// The id the change acted on, when it names one.
    pub object: Option<String>,
    /// When the change was committed (RFC 3339).
    pub committed_at: String,
    /// Where the delivery stands.
    pub state: WebhookDeliveryState,
    /// Attempts made so far.
    pub attempts: u32,
    /// The status the endpoint last answered, when it answered.
    pub last_status: Option<u16>,
    /// Why the last attempt failed, or why it was withheld.
    pub last_error: Option<String>,
    /// When it was last attempted (RFC 3339).
    pub last_attempt_at: Option<String>,
    /// When it is tried next, while pending (RFC 3339).
    pub next_attempt_at: Option<String>,
}

/// An endpoint told of changes, with its latest deliveries.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Webhook {
    /// The webhook's id (`whk_…`).
    pub id: String,
    /// Where deliveries are posted.
    pub url: String,
    /// The event kinds delivered; empty for every kind.
    pub kinds: Vec<String>,
    /// What it is told about: `mailbox:mbx_…` or `agent:agt_…`, as a listening
    /// stream's frames name their topic.
    pub topic: String,
    /// Who subscribed it: its deliveries go only while they still administer
    /// the node (or, for an agent's, sponsor the agent).
    pub created_by: String,
    /// When it was subscribed (RFC 3339).
    pub created_at: String,
    /// Its latest deliveries, newest first.
    pub deliveries: Vec<WebhookDelivery>,
}

/// The webhooks of a mailbox or an agent.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct WebhookList {
    /// Each live webhook, oldest first.
    pub webhooks: Vec<Webhook>,
}

/// A webhook subscribed, with the secret its deliveries are signed with, shown once.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct WebhookCreated {
    /// The webhook.
    pub webhook: Webhook,
    /// The signing secret (`whsec_…`, base64 after the prefix), shown only
    /// now. Each delivery carries the Standard Webhooks headers `webhook-id`,
    /// `webhook-timestamp` (unix seconds) and `webhook-signature`
    /// (`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>" keyed with the
    /// secret's decoded bytes>`); any Standard Webhooks library verifies them.
    pub secret: String,
}

/// How an A2A push notification authenticates itself to the receiver: sent as
/// `Authorization: <scheme> <credentials>`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PushAuthentication {
    /// The HTTP authentication scheme, such as `Bearer` or `Basic`.
    #[schemars(length(min = 1, max = webhook_limits::SCHEME_CHARACTERS))]
    pub scheme: String,
    /// The credentials sent with it.
    #[schemars(length(min = 1, max = webhook_limits::CREDENTIAL_CHARACTERS))]
    pub credentials: String,
}

/// The A2A version a task is posted in to a push config.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum PushVersion {
    /// A2A 1.0: a `StreamResponse` holding the task, as `application/a2a+json`.
    #[default]
    #[serde(rename = "1.0")]
    V1,
    /// A2A 0.3: the task itself, as `application/json`.
    #[serde(rename = "0.3")]
    V03,
}

/// An endpoint to tell of one task (an agent message the caller sent), as
/// A2A's push notifications do.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatePushConfig {
    /// The config's id among the task's, chosen by the caller (letters,
    /// digits, `-`, `_`, `.`); a new one when absent. Giving an id the task
    /// already has replaces that config.
    #[serde(default)]
    #[schemars(length(max = webhook_limits::CONFIG_ID_CHARACTERS))]
    pub id: Option<String>,
    /// An https address on the internet that accepts a POST (as for a webhook).
    #[schemars(length(max = WEBHOOK_URL_MAXIMUM))]
    pub url: String,
    /// Sent back as `X-A2A-Notification-Token` with every notification, so the
    /// receiver knows it asked for it.
    #[serde(default)]
    #[schemars(length(max = webhook_limits::CREDENTIAL_CHARACTERS))]
    pub token: Option<String>,
    /// How each notification authenticates itself to the receiver.
    #[serde(default)]
    pub authentication: Option<PushAuthentication>,
    /// The A2A version the task is posted in; `1.0` when absent.
    #[serde(default)]
    pub a2a_version: Option<PushVersion>,
}

/// A task's push notification config.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PushConfig {
    /// The config's id among the task's.
    pub id: String,
    /// The task: the agent message it tells of (`amg_…`).
    pub task_id: String,
    /// Where notifications are posted.
    pub url: String,
    /// The token sent with each notification.
    pub token: Option<String>,
    /// How each notification authenticates itself.
    pub authentication: Option<PushAuthentication>,
    /// The A2A version notifications are posted in.
    pub a2a_version: PushVersion,
    /// Its latest deliveries, newest first.
    pub deliveries: Vec<WebhookDelivery>,
}

/// A task's push notification configs.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PushConfigList {
    /// Each config, oldest first.
    pub configs: Vec<PushConfig>,
}
