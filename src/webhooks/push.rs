//! A2A push notification configs: a message the caller sent (an A2A task)
//! posted to an endpoint each time it moves. A config is a webhook of the
//! `a2a` flavour on its sender's own topic, told only of its task; its
//! settings (the caller's id for it, the A2A version, the token and the
//! authentication sent with each post) are kept as JSON beside it.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{
    CreatePushConfig, PushAuthentication, PushConfig, PushConfigList, PushVersion, WEBHOOK_URL_MAXIMUM, webhook_limits,
};
use serde::{Deserialize, Serialize};

use super::errors::WebhookError;
use super::routes::deliveries_of;
use super::store::{self, A2A, NewWebhook, Subscriptions};
use crate::core::context::Context;
use crate::core::events::Topic;
use crate::core::http::Response;
use crate::core::ids::{IdKind, new_id};
use crate::core::outbound::Destination;
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Row, StorageError};
use crate::messaging;

/// What a push config keeps beside its webhook row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct PushSettings {
    pub id: String,
    pub version: PushVersion,
    pub token: Option<String>,
    pub authentication: Option<PushAuthentication>,
}

/// A live push config as read back.
struct Stored {
    webhook_id: String,
    url: String,
    settings: PushSettings,
}

impl Stored {
    fn of(row: &Row) -> Result<Stored, StorageError> {
        let settings = row.text("settings")?;
        Ok(Stored {
            webhook_id: row.text("id")?,
            url: row.text("url")?,
            settings: serde_json::from_str(&settings)
                .map_err(|error| StorageError::Decode(format!("a push config's settings: {error}")))?,
        })
    }

    fn present(self, task_id: &str) -> PushConfig {
        PushConfig {
            id: self.settings.id,
            task_id: task_id.to_string(),
            url: self.url,
            token: self.settings.token,
            authentication: self.settings.authentication,
            a2a_version: self.settings.version,
            deliveries: Vec::new(),
        }
    }
}

/// The caller's id and the task the path names, and the caller's live configs
/// on it, once the task is found to be one the caller sent.
async fn own_task(context: &mut Context<'_>) -> Result<(String, String, Vec<Stored>, QueryResult), Refusal> {
    let task_id = context.path(PathParameter::AgentMessageId)?.to_string();
    // A connected organisation's node acts for its agent that sends.
    let me = messaging::party_of(context.caller())?;
    let now = context.now_ms();
    let subscriptions = Subscriptions::PushConfigs { task_id: &task_id, owner: &me };
    let [sent, configs, deliveries] = context
        .read_array([
            messaging::message_sent_by(&task_id, &me, now),
            store::live(subscriptions),
            store::latest_deliveries(subscriptions),
        ])
        .await?;
    if messaging::sent_message(&sent, &me, now).is_none() {
        return Err(WebhookError::NoSuchTask { id: task_id }.into());
    }
    let configs = configs.rows.iter().map(Stored::of).collect::<Result<Vec<_>, _>>();
    let configs = configs.map_err(|error| context.internal(error))?;
    Ok((me, task_id, configs, deliveries))
}

/// A header's value: no line break or control character, within `maximum`.
fn header_value(field: &'static str, value: &str, maximum: usize) -> Result<(), WebhookError> {
    if value.is_empty() || value.chars().count() > maximum {
        return Err(WebhookError::InvalidPushField { field, why: format!("it must hold 1 to {maximum} characters") });
    }
    if value.chars().any(char::is_control) {
        return Err(WebhookError::InvalidPushField { field, why: "it holds a line break or control character".into() });
    }
    Ok(())
}

/// The settings a request asks for, checked.
fn valid_settings(request: &CreatePushConfig, default_id: &str) -> Result<PushSettings, WebhookError> {
    let id = request.id.clone().filter(|id| !id.is_empty()).unwrap_or_else(|| default_id.to_string());
    let id_shaped = id.chars().count() <= webhook_limits::CONFIG_ID_CHARACTERS
        && id.chars().all(|character| character.is_ascii_alphanumeric() || "-_.".contains(character));
    if !id_shaped {
        let why =
            format!("an id holds at most {} letters, digits, `-`, `_` and `.`", webhook_limits::CONFIG_ID_CHARACTERS);
        return Err(WebhookError::InvalidPushField { field: "id", why });
    }
    let version = request.a2a_version.unwrap_or_default();
    if let Some(token) = &request.token {
        header_value("token", token, webhook_limits::CREDENTIAL_CHARACTERS)?;
    }
    if let Some(authentication) = &request.authentication {
        header_value("authentication.scheme", &authentication.scheme, webhook_limits::SCHEME_CHARACTERS)?;
        if !authentication
            .scheme
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || "-_.".contains(character))
        {
            let why = "a scheme is one word, such as Bearer".to_string();
            return Err(WebhookError::InvalidPushField { field: "authentication.scheme", why });
        }
        header_value("authentication.credentials", &authentication.credentials, webhook_limits::CREDENTIAL_CHARACTERS)?;
    }
    Ok(PushSettings { id, version, token: request.token.clone(), authentication: request.authentication.clone() })
}

/// `POST /api/agent-messages/:agentMessageId/push-configs`.
pub async fn create(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: CreatePushConfig = context.body()?;
    let url = request.url.trim().to_string();
    // Checked here and again before every post.
    Destination::check(&url, WEBHOOK_URL_MAXIMUM, &context.config().outbound_policy())
        .map_err(|refused| WebhookError::InvalidUrl { why: refused.why() })?;
    let webhook_id = new_id(IdKind::Webhook, context.platform());
    let settings = valid_settings(&request, &webhook_id)?;
    let (me, task_id, configs, _) = own_task(context).await?;
    let Some(topic) = Topic::of_party(&me) else { return Err(WebhookError::NoSuchTask { id: task_id }.into()) };
    // The same id replaces the config it names, as A2A's create does.
    let replaced = configs.iter().find(|config| config.settings.id == settings.id);
    if let Some(replaced) = replaced {
        for statement in store::webhook_removed(&replaced.webhook_id, context.now_ms()) {
            context.write(statement);
        }
    } else if configs.len() >= webhook_limits::PER_TASK {
        return Err(WebhookError::TooManyPushConfigs { task: task_id }.into());
    }
    let settings_json = serde_json::to_string(&settings).map_err(|error| context.internal(error))?;
    let topic_key = topic.key();
    context.write(store::webhook_created(NewWebhook {
        id: &webhook_id,
        topic: &topic_key,
        subject: &me,
        url: &url,
        kinds: "",
        secret: "",
        created_by: &me,
        created_at: context.now_ms(),
        object: Some(&task_id),
        flavour: A2A,
        settings: Some(&settings_json),
    }));
    let subscriptions = Subscriptions::PushConfigs { task_id: &task_id, owner: &me };
    context.guard(store::within_the_limit(subscriptions), WebhookError::TooManyPushConfigs { task: task_id.clone() });
    context.audit_object(task_id.clone());
    context.audit_detail(serde_json::json!({ "push_config": settings.id, "url": url, "replaced": replaced.is_some() }));
    let stored = Stored { webhook_id, url, settings };
    Ok(context.json(&stored.present(&task_id)))
}

/// `GET /api/agent-messages/:agentMessageId/push-configs`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (_, task_id, configs, deliveries) = own_task(context).await?;
    let mut presented = Vec::with_capacity(configs.len());
    for config in configs {
        let delivered = deliveries_of(&deliveries, &config.webhook_id).map_err(|error| context.internal(error))?;
        presented.push(PushConfig { deliveries: delivered, ..config.present(&task_id) });
    }
    Ok(context.json(&PushConfigList { configs: presented }))
}

/// `DELETE /api/agent-messages/:agentMessageId/push-configs/:pushConfigId`.
pub async fn remove(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let config_id = context.path(PathParameter::PushConfigId)?.to_string();
    let (_, task_id, configs, _) = own_task(context).await?;
    let Some(config) = configs.into_iter().find(|config| config.settings.id == config_id) else {
        return Err(WebhookError::NoSuchPushConfig { id: config_id, task: task_id }.into());
    };
    let [removed, withheld] = store::webhook_removed(&config.webhook_id, context.now_ms());
    let gone = WebhookError::NoSuchPushConfig { id: config_id.clone(), task: task_id.clone() };
    context.write_changing_one_row(removed, gone);
    context.write(withheld);
    context.audit_object(task_id.clone());
    context.audit_detail(serde_json::json!({ "push_config": config_id }));
    Ok(context.json(&config.present(&task_id)))
}
