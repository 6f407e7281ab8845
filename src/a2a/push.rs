//! Push notifications: a task's configs created, read, listed and deleted by
//! re-entering the node's push config routes as the caller (in either A2A
//! version's shape), a config given inline with a send, and the body a task
//! is posted with (`push_body`, which the webhook runs call).

use mailroom_contract::api::{AgentMessage, PushConfig, PushConfigList, PushVersion, WEBHOOK_URL_MAXIMUM};
use mailroom_contract::{RouteId, registry};
use serde_json::{Map, Value, json};

use super::params::Fields;
use super::rpc::{ErrorKind, PushOperation, RpcError, Version};
use super::tasks::{Gateway, task_json};
use crate::core::outbound::Destination;

/// The body and media type a task is posted with to a push config of A2A
/// `version`: 1.0 a `StreamResponse` holding the task; 0.3 the task itself.
pub fn push_body(task: &AgentMessage, version: PushVersion) -> (String, &'static str) {
    match version {
        PushVersion::V03 => (task_json(task, Version::V03, None, true).to_string(), "application/json"),
        PushVersion::V1 => {
            (json!({ "task": task_json(task, Version::V1, None, true) }).to_string(), "application/a2a+json")
        }
    }
}

/// The version a config set in `version` is posted in: the caller's own.
fn push_version(version: Version) -> PushVersion {
    match version {
        Version::V1 => PushVersion::V1,
        Version::V03 => PushVersion::V03,
    }
}

/// A config as the route stores it, read from A2A's shape at `at` (1.0's flat
/// `TaskPushNotificationConfig`, or 0.3's `PushNotificationConfig`), for a task
/// pushed in `version`. The address is checked as the route will check it, so
/// a send that carries a config it cannot keep is refused before it is sent.
fn route_body(
    gateway: &Gateway<'_, '_>,
    config: &Map<String, Value>,
    at: &str,
    version: Version,
) -> Result<Value, RpcError> {
    let fields = Fields::read(config, at)?;
    let url = fields.required_text("url")?;
    Destination::check(url.trim(), WEBHOOK_URL_MAXIMUM, &gateway.context.config().outbound_policy()).map_err(
        |refused| {
            let field = fields.path("url");
            RpcError::invalid(&field, format!("`{field}` cannot be used: {}.", refused.why()))
        },
    )?;
    let mut body = json!({ "url": url, "a2a_version": push_version(version) });
    if let Some(id) = fields.text("id")?.filter(|id| !id.is_empty()) {
        body["id"] = id.into();
    }
    if let Some(token) = fields.text("token")?.filter(|token| !token.is_empty()) {
        body["token"] = token.into();
    }
    if let Some(authentication) = fields.object("authentication")? {
        let authentication = Fields::read(authentication, &format!("{}.", fields.path("authentication")))?;
        // 1.0 names one scheme; 0.3 lists them, and the first is used.
        let scheme = match version {
            Version::V1 => authentication.text("scheme")?.map(str::to_string),
            Version::V03 => authentication
                .list("schemes")?
                .and_then(|schemes| schemes.first())
                .and_then(Value::as_str)
                .map(str::to_string),
        };
        let credentials = authentication.text("credentials")?.filter(|credentials| !credentials.is_empty());
        if let (Some(scheme), Some(credentials)) = (scheme.filter(|scheme| !scheme.is_empty()), credentials) {
            body["authentication"] = json!({ "scheme": scheme, "credentials": credentials });
        }
    }
    Ok(body)
}

/// A stored config in `version`'s shape: 1.0's flat config, 0.3's
/// `{ taskId, pushNotificationConfig }`.
fn a2a_config(config: &PushConfig, version: Version) -> Value {
    // The same fields in both; 0.3 lists the schemes, and nests the config
    // under its task where 1.0 flattens it.
    let mut fields = json!({ "id": config.id, "url": config.url });
    if let Some(token) = &config.token {
        fields["token"] = token.clone().into();
    }
    if let Some(authentication) = &config.authentication {
        fields["authentication"] = match version {
            Version::V1 => json!({ "scheme": authentication.scheme, "credentials": authentication.credentials }),
            Version::V03 => json!({ "schemes": [authentication.scheme], "credentials": authentication.credentials }),
        };
    }
    match version {
        Version::V1 => {
            fields["taskId"] = config.task_id.clone().into();
            fields
        }
        Version::V03 => json!({ "taskId": config.task_id, "pushNotificationConfig": fields }),
    }
}

impl Gateway<'_, '_> {
    /// The path of `route` for the task `task_id`.
    fn push_path(route: RouteId, task_id: &str) -> String {
        registry().route(route).path.replace(":agentMessageId", task_id)
    }

    /// The config `config` (in A2A's shape at `at`) as the push config route
    /// takes it, its address checked: before a send that carries it is sent.
    pub(super) fn push_config_body(&self, config: &Map<String, Value>, at: &str) -> Result<Value, RpcError> {
        route_body(self, config, at, self.version)
    }

    /// Stores `body` (from `push_config_body`) as a config of the caller's
    /// task `task_id`, answering it as the route stored it.
    pub(super) async fn create_push(&mut self, task_id: &str, mut body: Value) -> Result<PushConfig, RpcError> {
        // 0.3's reference server names a config without an id by its task.
        if self.version == Version::V03 && body.get("id").is_none() {
            body["id"] = task_id.into();
        }
        let created = self.call("POST", Self::push_path(RouteId::CreatePushConfig, task_id), String::new(), Some(body));
        serde_json::from_value(created.await?).map_err(|_| unreadable())
    }

    /// The caller's configs on task `task_id`, which must be one of its
    /// requests to this agent.
    async fn push_configs(&mut self, task_id: &str) -> Result<Vec<PushConfig>, RpcError> {
        self.task(task_id).await?;
        let listed = self.call("GET", Self::push_path(RouteId::ListPushConfigs, task_id), String::new(), None).await?;
        let listed: PushConfigList = serde_json::from_value(listed).map_err(|_| unreadable())?;
        Ok(listed.configs)
    }

    /// The four push config methods of either version.
    pub async fn push(&mut self, operation: PushOperation, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let version = self.version;
        let fields = Fields::read(params, "params.")?;
        if version == Version::V1 {
            fields.no_tenant()?;
        }
        // 1.0 names the task `taskId` (and the config `id`); 0.3's create
        // names it `taskId`, and its others `id` (the config
        // `pushNotificationConfigId`).
        let (task_field, config_field) = match (version, operation) {
            (Version::V1, _) | (Version::V03, PushOperation::Create) => ("taskId", "id"),
            (Version::V03, _) => ("id", "pushNotificationConfigId"),
        };
        let task_id = fields.required_text(task_field)?.to_string();
        match operation {
            PushOperation::Create => {
                self.task(&task_id).await?;
                let (config, at) = match version {
                    Version::V1 => (params, "params.".to_string()),
                    Version::V03 => {
                        let inner = fields.object("pushNotificationConfig")?.ok_or_else(|| {
                            RpcError::invalid(
                                "params.pushNotificationConfig",
                                "`params.pushNotificationConfig` is required.",
                            )
                        })?;
                        (inner, "params.pushNotificationConfig.".to_string())
                    }
                };
                let body = self.push_config_body(config, &at)?;
                let created = self.create_push(&task_id, body).await?;
                Ok(a2a_config(&created, version))
            }
            PushOperation::List => {
                let configs = self.push_configs(&task_id).await?;
                let shown: Vec<Value> = configs.iter().map(|config| a2a_config(config, version)).collect();
                Ok(match version {
                    Version::V1 => json!({ "configs": shown, "nextPageToken": "" }),
                    Version::V03 => Value::Array(shown),
                })
            }
            PushOperation::Get | PushOperation::Delete => {
                // 0.3 names a config by its task when no id is given, as its
                // reference server does.
                let config_id = match fields.text(config_field)?.filter(|id| !id.is_empty()) {
                    Some(id) => id.to_string(),
                    None if version == Version::V03 => task_id.clone(),
                    None => {
                        let field = fields.path(config_field);
                        return Err(RpcError::invalid(&field, format!("`{field}` is required.")));
                    }
                };
                let configs = self.push_configs(&task_id).await?;
                let Some(config) = configs.into_iter().find(|config| config.id == config_id) else {
                    return Err(RpcError::new(
                        ErrorKind::TaskNotFound,
                        format!("Task {task_id} has no push notification config {config_id} of yours."),
                    )
                    .with("taskId", task_id.as_str())
                    .with("id", config_id.as_str()));
                };
                if operation == PushOperation::Get {
                    return Ok(a2a_config(&config, version));
                }
                let path = format!("{}/{}", Self::push_path(RouteId::ListPushConfigs, &task_id), config_id);
                self.call("DELETE", path, String::new(), None).await?;
                Ok(Value::Null)
            }
        }
    }
}

fn unreadable() -> RpcError {
    RpcError::new(ErrorKind::InvalidRequest, "The node's answer could not be read.")
}
