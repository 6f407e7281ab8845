//! Webhooks: an HTTPS endpoint told, in the Standard Webhooks format, of what
//! changes on a mailbox (an administrator subscribes it) or an agent (its
//! sponsor, or an administrator): ids and kinds, never content.

use crate::api::{CreatePushConfig, CreateWebhook, PushConfig, PushConfigList, Webhook, WebhookCreated, WebhookList};
use crate::route::Method::{Delete, Get, Post};
use crate::route::{Authority, Feature, PathParameter, Refuses, Route, Tier};
use crate::route_id::RouteId;

use super::shared::{ADMIN, SPONSOR};

/// What a delivery carries and how it is signed, said once for both subjects
/// (a literal, so each description is one `&'static str`).
macro_rules! delivery {
    () => {
        "Each change is posted as JSON `{\"type\": <kind>, \"timestamp\": <RFC 3339>, \"data\": {\"topic\", \"object\", \"webhook_id\"}}` (ids and kinds, never content: read what changed through the ordinary routes), signed with the Standard Webhooks headers `webhook-id`, `webhook-timestamp` and `webhook-signature`. A failed delivery is tried again after 1, 5 and 30 minutes, then 2, 6 and 12 hours (`RETRY_AFTER_MINUTES`), then given up as failed; deliveries stop while whoever subscribed it no longer may (an administrator who is no longer one, a sponsor who no longer sponsors the agent). Nothing is posted to an address inside a network."
    };
}

pub(super) fn list_mailbox_webhooks() -> Route {
    Route::new(RouteId::ListMailboxWebhooks, Get, "/api/mailboxes/:mailboxId/webhooks", "list_mailbox_webhooks")
        .summary("List a mailbox's webhooks")
        .description("Lists the endpoints told of what changes in a mailbox, each with its latest deliveries and what became of them.")
        .path_parameters(&[PathParameter::MailboxId])
        .response::<WebhookList>()
        .authority(ADMIN)
}

pub(super) fn create_mailbox_webhook() -> Route {
    Route::new(RouteId::CreateMailboxWebhook, Post, "/api/mailboxes/:mailboxId/webhooks", "create_mailbox_webhook")
        .summary("Subscribe a webhook to a mailbox")
        .description(concat!("Subscribes an https endpoint to what changes in a mailbox (mail received, a conversation's status, assignee, labels or read state, a draft, a send submitted, approved, refused or sent), or only to the kinds named, and returns its signing secret, once. ", delivery!()))
        .path_parameters(&[PathParameter::MailboxId])
        .request::<CreateWebhook>()
        .response::<WebhookCreated>()
        .created()
        .refuses(const { &[Refuses::Conflict("It already has as many webhooks as one may (`PER_SUBJECT`).")] })
        .tier(Tier::Operator)
        .withheld_because("a webhook sends word of a mailbox's every change outside the node, and its secret signs it: where that goes is a person's to choose")
        .authority(ADMIN)
}

pub(super) fn remove_mailbox_webhook() -> Route {
    Route::new(RouteId::RemoveMailboxWebhook, Delete, "/api/mailboxes/:mailboxId/webhooks/:webhookId", "remove_mailbox_webhook")
        .summary("Remove a mailbox's webhook")
        .description("Stops telling the endpoint of the mailbox's changes; deliveries not yet made are withheld, and its secret is forgotten.")
        .path_parameters(&[PathParameter::MailboxId, PathParameter::WebhookId])
        .response::<Webhook>()
        .tier(Tier::Operator)
        .withheld_because("where word of a mailbox's changes goes is a person's to choose")
        .authority(ADMIN)
}

pub(super) fn list_agent_webhooks() -> Route {
    Route::new(RouteId::ListAgentWebhooks, Get, "/api/agents/:agentId/webhooks", "list_agent_webhooks")
        .summary("List an agent's webhooks")
        .description("Lists the endpoints told of what changes in an agent's inbox (its sponsor's or an administrator's), each with its latest deliveries and what became of them.")
        .path_parameters(&[PathParameter::AgentId])
        .response::<WebhookList>()
        .feature(Feature::AgentNetwork)
        .authority(SPONSOR)
}

pub(super) fn create_agent_webhook() -> Route {
    Route::new(RouteId::CreateAgentWebhook, Post, "/api/agents/:agentId/webhooks", "create_agent_webhook")
        .summary("Subscribe a webhook to an agent")
        .description(concat!("Subscribes an https endpoint to what changes in an agent's inbox (a message waiting for it, and the messages it sent claimed, answered or rejected), or only to the kinds named, and returns its signing secret, once: an agent that cannot hold a connection open is woken this way. ", delivery!()))
        .path_parameters(&[PathParameter::AgentId])
        .request::<CreateWebhook>()
        .response::<WebhookCreated>()
        .created()
        .refuses(const { &[Refuses::Conflict("It already has as many webhooks as one may (`PER_SUBJECT`).")] })
        .tier(Tier::Operator)
        .feature(Feature::AgentNetwork)
        .authority(SPONSOR)
}

pub(super) fn remove_agent_webhook() -> Route {
    Route::new(RouteId::RemoveAgentWebhook, Delete, "/api/agents/:agentId/webhooks/:webhookId", "remove_agent_webhook")
        .summary("Remove an agent's webhook")
        .description("Stops telling the endpoint of the agent's changes; deliveries not yet made are withheld, and its secret is forgotten.")
        .path_parameters(&[PathParameter::AgentId, PathParameter::WebhookId])
        .response::<Webhook>()
        .tier(Tier::Operator)
        .feature(Feature::AgentNetwork)
        .authority(SPONSOR)
}

pub(super) fn create_push_config() -> Route {
    Route::new(RouteId::CreatePushConfig, Post, "/api/agent-messages/:agentMessageId/push-configs", "create_push_config")
        .summary("Push a task's progress to an endpoint")
        .description("Asks the node to post a message the caller sent (an A2A task) to an https endpoint each time it moves: claimed, answered, rejected. Each post is the task as it then stands, in the A2A version asked for, with the config's token as `X-A2A-Notification-Token` and its authentication as `Authorization`; a failed post is tried again as a webhook's is. Posts stop once the caller's credential no longer works. An A2A client sets this with CreateTaskPushNotificationConfig (or `tasks/pushNotificationConfig/set`).")
        .path_parameters(&[PathParameter::AgentMessageId])
        .request::<CreatePushConfig>()
        .response::<PushConfig>()
        .created()
        .tier(Tier::Act)
        .feature(Feature::AgentNetwork)
        .refuses(const { &[Refuses::Conflict("The task already has as many push configs as one may (`PER_TASK`).")] })
        .open_to_peers()
        .authority(Authority::Member)
}

pub(super) fn list_push_configs() -> Route {
    Route::new(RouteId::ListPushConfigs, Get, "/api/agent-messages/:agentMessageId/push-configs", "list_push_configs")
        .summary("List a task's push configs")
        .description("Lists where a message the caller sent is pushed as it moves, each with its latest deliveries and what became of them.")
        .path_parameters(&[PathParameter::AgentMessageId])
        .response::<PushConfigList>()
        .feature(Feature::AgentNetwork)
        .open_to_peers()
        .authority(Authority::Member)
}

pub(super) fn remove_push_config() -> Route {
    Route::new(
        RouteId::RemovePushConfig,
        Delete,
        "/api/agent-messages/:agentMessageId/push-configs/:pushConfigId",
        "remove_push_config",
    )
    .summary("Stop pushing a task to an endpoint")
    .description("Removes one of a task's push configs; what it had not yet delivered is withheld.")
    .path_parameters(&[PathParameter::AgentMessageId, PathParameter::PushConfigId])
    .response::<PushConfig>()
    .tier(Tier::Act)
    .feature(Feature::AgentNetwork)
    .open_to_peers()
    .authority(Authority::Member)
}
