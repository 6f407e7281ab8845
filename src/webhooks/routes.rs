//! The webhook routes: subscribing an endpoint to a mailbox (an
//! administrator's) or an agent (its sponsor's, or an administrator's),
//! listing each with its latest deliveries, and removing one.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{
    CreateWebhook, WEBHOOK_URL_MAXIMUM, Webhook, WebhookCreated, WebhookDelivery, WebhookDeliveryState, WebhookList,
    webhook_limits,
};

use super::errors::WebhookError;
use super::store::{self, NewWebhook, Subscriptions};
use crate::agents;
use crate::core::context::Context;
use crate::core::events::Topic;
use crate::core::http::Response;
use crate::core::ids::{IdKind, new_id};
use crate::core::outbound::Destination;
use crate::core::platform::random_bytes;
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Row, Statement, StorageError};
use crate::core::time::rfc3339;
use crate::core::webhooks::standard_secret;
use crate::mail;

/// What a webhook is subscribed to: a mailbox or an agent, named by the path.
struct Subject {
    id: String,
    topic: Topic,
}

impl Subject {
    fn of(context: &Context<'_>) -> Result<Subject, Refusal> {
        if context.route().path_parameters.contains(&PathParameter::MailboxId) {
            let id = context.path(PathParameter::MailboxId)?.to_string();
            return Ok(Subject { topic: Topic::Mailbox(id.clone()), id });
        }
        let id = context.path(PathParameter::AgentId)?.to_string();
        Ok(Subject { topic: Topic::Agent(id.clone()), id })
    }

    /// The read that finds it on this node: a row when it is.
    fn found(&self) -> Statement {
        match self.topic {
            Topic::Mailbox(_) => mail::mailboxes_among(std::slice::from_ref(&self.id)),
            _ => agents::name_of_agent(&self.id),
        }
    }
}

/// `POST /api/mailboxes/:mailboxId/webhooks` and `POST /api/agents/:agentId/webhooks`.
pub async fn create(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: CreateWebhook = context.body()?;
    let subject = Subject::of(context)?;
    let url = request.url.trim().to_string();
    // Checked here and again before every delivery.
    Destination::check(&url, WEBHOOK_URL_MAXIMUM, &context.config().outbound_policy())
        .map_err(|refused| WebhookError::InvalidUrl { why: refused.why() })?;
    let kinds = valid_kinds(&request.kinds)?;
    let topic = subject.topic.key();
    let subscriptions = Subscriptions::Webhooks { topic: &topic };
    let [found, live] = context.read_array([subject.found(), store::live(subscriptions)]).await?;
    if found.rows.is_empty() {
        return Err(WebhookError::NoSuchSubject { id: subject.id }.into());
    }
    if live.rows.len() >= webhook_limits::PER_SUBJECT {
        return Err(WebhookError::TooManyWebhooks { subject: subject.id }.into());
    }
    let id = new_id(IdKind::Webhook, context.platform());
    let secret = standard_secret(&random_bytes(context.platform()));
    let created_by = context.caller().actor_id().unwrap_or_default().to_string();
    let stored_kinds = if kinds.is_empty() { String::new() } else { format!(" {} ", kinds.join(" ")) };
    context.write(store::webhook_created(NewWebhook {
        id: &id,
        topic: &topic,
        subject: &subject.id,
        url: &url,
        kinds: &stored_kinds,
        secret: &secret,
        created_by: &created_by,
        created_at: context.now_ms(),
        object: None,
        flavour: store::STANDARD,
        settings: None,
    }));
    // Two subscribed at once cannot pass the limit together.
    context
        .guard(store::within_the_limit(subscriptions), WebhookError::TooManyWebhooks { subject: subject.id.clone() });
    context.audit_object(id.clone());
    context.audit_detail(serde_json::json!({ "subject": subject.id, "url": url, "kinds": kinds }));
    let webhook =
        Webhook { id, url, kinds, topic, created_by, created_at: rfc3339(context.now_ms()), deliveries: Vec::new() };
    Ok(context.json(&WebhookCreated { webhook, secret }))
}

/// The kinds asked for, each an event kind's shape, without repeats.
fn valid_kinds(kinds: &[String]) -> Result<Vec<String>, WebhookError> {
    if kinds.len() > webhook_limits::KINDS {
        return Err(WebhookError::TooManyKinds { given: kinds.len() });
    }
    let mut valid: Vec<String> = Vec::new();
    for (index, kind) in kinds.iter().enumerate() {
        let shaped = !kind.is_empty()
            && kind.chars().count() <= webhook_limits::KIND_CHARACTERS
            && kind
                .chars()
                .all(|character| character.is_ascii_lowercase() || character.is_ascii_digit() || character == '_');
        if !shaped {
            return Err(WebhookError::InvalidKind { index, kind: kind.clone() });
        }
        if !valid.contains(kind) {
            valid.push(kind.clone());
        }
    }
    Ok(valid)
}

/// `GET /api/mailboxes/:mailboxId/webhooks` and `GET /api/agents/:agentId/webhooks`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let subject = Subject::of(context)?;
    let topic = subject.topic.key();
    let subscriptions = Subscriptions::Webhooks { topic: &topic };
    let [found, live, deliveries] = context
        .read_array([subject.found(), store::live(subscriptions), store::latest_deliveries(subscriptions)])
        .await?;
    if found.rows.is_empty() {
        return Err(WebhookError::NoSuchSubject { id: subject.id }.into());
    }
    let mut webhooks = present_all(context, &live)?;
    for webhook in &mut webhooks {
        webhook.deliveries = deliveries_of(&deliveries, &webhook.id).map_err(|error| context.internal(error))?;
    }
    Ok(context.json(&WebhookList { webhooks }))
}

/// `DELETE /api/mailboxes/:mailboxId/webhooks/:webhookId` and `DELETE /api/agents/:agentId/webhooks/:webhookId`.
pub async fn remove(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let subject = Subject::of(context)?;
    let id = context.path(PathParameter::WebhookId)?.to_string();
    let [live] = context.read_array([store::live_webhook(&subject.topic.key(), &id)]).await?;
    let Some(webhook) = present_all(context, &live)?.pop() else {
        return Err(WebhookError::NoSuchWebhook { id, subject: subject.id }.into());
    };
    let [removed, withheld] = store::webhook_removed(&id, context.now_ms());
    context.write_changing_one_row(removed, WebhookError::NoSuchWebhook { id: id.clone(), subject: subject.id });
    context.write(withheld);
    context.audit_object(id);
    Ok(context.json(&webhook))
}

fn present_all(context: &Context<'_>, result: &QueryResult) -> Result<Vec<Webhook>, Refusal> {
    result.rows.iter().map(|row| present(row).map_err(|error| context.internal(error))).collect()
}

fn present(row: &Row) -> Result<Webhook, StorageError> {
    Ok(Webhook {
        id: row.text("id")?,
        url: row.text("url")?,
        kinds: row.text("kinds")?.split_whitespace().map(str::to_string).collect(),
        topic: row.text("topic")?,
        created_by: row.text("created_by")?,
        created_at: rfc3339(row.integer("created_at")?),
        deliveries: Vec::new(),
    })
}

/// The deliveries among `deliveries` (read by `store::latest_deliveries`)
/// made to the webhook `webhook_id`, as they were read: newest first.
pub(super) fn deliveries_of(deliveries: &QueryResult, webhook_id: &str) -> Result<Vec<WebhookDelivery>, StorageError> {
    deliveries
        .rows
        .iter()
        .filter(|row| row.text("webhook_id").ok().as_deref() == Some(webhook_id))
        .map(present_delivery)
        .collect()
}

fn present_delivery(row: &Row) -> Result<WebhookDelivery, StorageError> {
    let state = row.text("state")?;
    let state = WebhookDeliveryState::parse(&state)
        .ok_or_else(|| StorageError::Decode(format!("a delivery's state `{state}`")))?;
    let pending = state == WebhookDeliveryState::Pending;
    Ok(WebhookDelivery {
        id: row.text("id")?,
        kind: row.text("kind")?,
        object: row.optional_text("object")?,
        committed_at: rfc3339(row.integer("committed_at")?),
        state,
        attempts: u32::try_from(row.integer("attempts")?).unwrap_or_default(),
        last_status: row.optional_integer("last_status")?.and_then(|status| u16::try_from(status).ok()),
        last_error: row.optional_text("last_error")?,
        last_attempt_at: row.optional_integer("last_attempt_at")?.map(rfc3339),
        next_attempt_at: pending.then(|| row.integer("next_attempt_at").map(rfc3339)).transpose()?,
    })
}
