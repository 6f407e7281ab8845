//! MCP resources: what an agent watches, named by stable URIs
//! (`resources/list`, `resources/templates/list`, `resources/read`).
//!
//! A resource is a route's reading: a mailbox its conversations
//! (`list_threads`), a conversation itself (`get_thread`), the caller's
//! notifications and reminders, an agent's inbox. Reading one re-enters that
//! route as the caller, as a tool call does, so its authority, refusal and
//! budget are the route's own; each is told on one topic (`Resource::topic`),
//! which is what a subscription to it listens to.

use mailroom_contract::{RouteId, registry};
use serde_json::{Map, Value, json};

use super::catalogue::withheld_without_io;
use super::errors::{INVALID_PARAMS, RpcError};
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::http::{Request, Response, Surface};

/// The scheme and authority every resource URI starts with.
const PREFIX: &str = "mailroom://";
/// MCP's code for a resource that does not exist (or is not the caller's to read).
pub(super) const RESOURCE_NOT_FOUND: i64 = -32002;
/// Every resource is JSON, as its route answers it.
const MEDIA_TYPE: &str = "application/json";

/// One resource, parsed from its URI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Resource {
    /// `mailroom://mailboxes/{mailboxId}`: the mailbox's conversations.
    Mailbox { mailbox_id: String },
    /// `mailroom://mailboxes/{mailboxId}/conversations/{threadId}`.
    Conversation { mailbox_id: String, thread_id: String },
    /// `mailroom://me/notifications`: the caller's feed (an agent's: its sponsor's).
    Notifications,
    /// `mailroom://me/reminders`.
    Reminders,
    /// `mailroom://agent-inbox`: the calling agent's inbox.
    AgentInbox,
}

/// Whether `text` may stand as one path segment of a URI: an id as the node
/// makes them, never a separator or an escape.
fn is_segment(text: &str) -> bool {
    !text.is_empty() && text.len() <= 64 && text.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
}

impl Resource {
    /// The resource `uri` names, if it names one.
    pub(super) fn parse(uri: &str) -> Option<Resource> {
        let rest = uri.strip_prefix(PREFIX)?;
        let segments: Vec<&str> = rest.split('/').collect();
        match segments.as_slice() {
            ["mailboxes", mailbox] if is_segment(mailbox) => {
                Some(Resource::Mailbox { mailbox_id: mailbox.to_string() })
            }
            ["mailboxes", mailbox, "conversations", thread] if is_segment(mailbox) && is_segment(thread) => {
                Some(Resource::Conversation { mailbox_id: mailbox.to_string(), thread_id: thread.to_string() })
            }
            ["me", "notifications"] => Some(Resource::Notifications),
            ["me", "reminders"] => Some(Resource::Reminders),
            ["agent-inbox"] => Some(Resource::AgentInbox),
            _ => None,
        }
    }

    pub(super) fn uri(&self) -> String {
        match self {
            Resource::Mailbox { mailbox_id } => format!("{PREFIX}mailboxes/{mailbox_id}"),
            Resource::Conversation { mailbox_id, thread_id } => {
                format!("{PREFIX}mailboxes/{mailbox_id}/conversations/{thread_id}")
            }
            Resource::Notifications => format!("{PREFIX}me/notifications"),
            Resource::Reminders => format!("{PREFIX}me/reminders"),
            Resource::AgentInbox => format!("{PREFIX}agent-inbox"),
        }
    }

    /// The route that reads it.
    fn route(&self) -> RouteId {
        match self {
            Resource::Mailbox { .. } => RouteId::ListThreads,
            Resource::Conversation { .. } => RouteId::GetThread,
            Resource::Notifications => RouteId::ListNotifications,
            Resource::Reminders => RouteId::ListEvents,
            Resource::AgentInbox => RouteId::ListAgentInbox,
        }
    }

    /// The request that reads it, as the caller whose request `outer` is.
    pub(super) fn reading(&self, outer: &Request) -> Request {
        let path = registry().route(self.route()).path;
        let path = match self {
            Resource::Mailbox { mailbox_id } => path.replace(":mailboxId", mailbox_id),
            Resource::Conversation { mailbox_id, thread_id } => {
                path.replace(":mailboxId", mailbox_id).replace(":threadId", thread_id)
            }
            _ => path.to_string(),
        };
        as_caller(outer, "GET", path, None)
    }

    /// How a listing describes it: (name, title, description).
    fn described(&self) -> (String, String, String) {
        match self {
            Resource::Mailbox { mailbox_id } => (
                mailbox_id.clone(),
                format!("Conversations in {mailbox_id}"),
                "The mailbox's conversations, latest activity first, as list_threads answers.".into(),
            ),
            Resource::Conversation { thread_id, .. } => (
                thread_id.clone(),
                format!("Conversation {thread_id}"),
                "One conversation: its status, assignee, labels and messages, as get_thread answers.".into(),
            ),
            Resource::Notifications => (
                "notifications".into(),
                "My notifications".into(),
                "The caller's notifications feed (an agent's: its sponsor's), as list_notifications answers.".into(),
            ),
            Resource::Reminders => (
                "reminders".into(),
                "My reminders".into(),
                "The caller's reminders (an agent's: its sponsor's), as list_events answers.".into(),
            ),
            Resource::AgentInbox => (
                "agent-inbox".into(),
                "My inbox".into(),
                "The calling agent's inbox of agent messages, as list_agent_inbox answers.".into(),
            ),
        }
    }

    fn listed(&self) -> Value {
        let (name, title, description) = self.described();
        json!({ "uri": self.uri(), "name": name, "title": title, "description": description, "mimeType": MEDIA_TYPE })
    }
}

/// A request to `path` as the caller whose MCP request `outer` is: what the
/// caller presented goes on; the protocol's own headers do not (they name the
/// method that asked, and would contradict the body of a request to the
/// endpoint itself).
pub(super) fn as_caller(outer: &Request, method: &str, path: String, body: Option<Vec<u8>>) -> Request {
    let mut request = outer.reentering(method, path, String::new(), body);
    request.headers.retain(|(name, _)| !name.starts_with("mcp-"));
    request
}

/// Why a route refused a reading, in its own words.
pub(super) fn why_refused(answer: &Response) -> String {
    answer
        .json_body()
        .and_then(|body| body["error"]["message"].as_str().map(str::to_string))
        .unwrap_or_else(|| format!("its route answered {}", answer.status))
}

/// Whether the caller's catalogue could offer the route that reads `resource`
/// (an agent's ceiling, a person's tools), as far as that is known unread.
fn offered(context: &Context<'_>, resource: &Resource) -> bool {
    let route = registry().route(resource.route());
    let reads_for_agents =
        !matches!(resource, Resource::AgentInbox) || matches!(context.caller(), Caller::Agent { .. });
    reads_for_agents && withheld_without_io(route, registry().tier(route.id), context.caller()).is_none()
}

/// `resources/list`: every mailbox the caller may read, then its own feed,
/// reminders and (for an agent) inbox.
pub(super) async fn list(context: &mut Context<'_>) -> Result<Value, RpcError> {
    let mut resources = Vec::new();
    let mailboxes = registry().route(RouteId::ListReadableMailboxes).path.to_string();
    let request = as_caller(context.request(), "GET", mailboxes, None);
    let answer = context.reenter(&request, Surface::Mcp, None).await;
    if answer.credential_refused.is_some() {
        return Err(RpcError::answered(answer));
    }
    let listed = if answer.status == 200 { answer.json_body() } else { None };
    for mailbox in listed.as_ref().and_then(|body| body["mailboxes"].as_array()).into_iter().flatten() {
        let Some(mailbox_id) = mailbox["id"].as_str() else { continue };
        let resource = Resource::Mailbox { mailbox_id: mailbox_id.to_string() };
        let mut entry = resource.listed();
        if let Some(address) = mailbox["address"].as_str() {
            entry["title"] = format!("Conversations in {address}").into();
        }
        resources.push(entry);
    }
    for resource in [Resource::Notifications, Resource::Reminders, Resource::AgentInbox] {
        if offered(context, &resource) {
            resources.push(resource.listed());
        }
    }
    Ok(json!({ "resources": resources }))
}

/// `resources/templates/list`: the two kinds named by ids.
pub(super) fn templates() -> Value {
    json!({ "resourceTemplates": [
        {
            "uriTemplate": format!("{PREFIX}mailboxes/{{mailboxId}}"),
            "name": "mailbox",
            "title": "A mailbox's conversations",
            "description": "The conversations of a mailbox the caller may read (mailbox.metadata.read), latest activity first.",
            "mimeType": MEDIA_TYPE,
        },
        {
            "uriTemplate": format!("{PREFIX}mailboxes/{{mailboxId}}/conversations/{{threadId}}"),
            "name": "conversation",
            "title": "A conversation",
            "description": "One conversation in a mailbox: status, assignee, labels and messages.",
            "mimeType": MEDIA_TYPE,
        },
    ] })
}

/// The URI `params` name, read.
pub(super) fn named(params: &Map<String, Value>) -> Result<(String, Resource), RpcError> {
    let Some(uri) = params.get("uri").and_then(Value::as_str) else {
        return Err(RpcError::new(
            200,
            INVALID_PARAMS,
            "`uri` is required: a resource's URI, as resources/list gives it",
        ));
    };
    let resource = Resource::parse(uri).ok_or_else(|| not_found(uri, "it names no resource of this node"))?;
    Ok((uri.to_string(), resource))
}

/// A resource that is not there, or not the caller's to read: MCP's -32002,
/// naming the URI.
pub(super) fn not_found(uri: &str, why: &str) -> RpcError {
    let mut error = RpcError::new(200, RESOURCE_NOT_FOUND, format!("Resource not found: {uri} ({why})"));
    error.data = Some(json!({ "uri": uri }));
    error
}

/// `resources/read`: the route's answer as the resource's one content.
pub(super) async fn read(context: &mut Context<'_>, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let (uri, resource) = named(params)?;
    let answer = read_as_caller(context, &uri, &resource).await?;
    Ok(json!({ "contents": [{
        "uri": uri,
        "mimeType": MEDIA_TYPE,
        "text": String::from_utf8_lossy(&answer.body),
    }] }))
}

/// Reads `resource` through its route as the caller: the answer, or the error
/// that says why it cannot be read (the caller's own refusal as HTTP).
pub(super) async fn read_as_caller(
    context: &mut Context<'_>,
    uri: &str,
    resource: &Resource,
) -> Result<Response, RpcError> {
    let request = resource.reading(context.request());
    let answer = context.reenter(&request, Surface::Mcp, None).await;
    if answer.credential_refused.is_some() {
        return Err(RpcError::answered(answer));
    }
    if answer.status == 200 {
        return Ok(answer);
    }
    Err(not_found(uri, &why_refused(&answer)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_resource_is_found_again_from_its_uri_and_nothing_else_is_one() {
        for resource in [
            Resource::Mailbox { mailbox_id: "mbx_1".into() },
            Resource::Conversation { mailbox_id: "mbx_1".into(), thread_id: "thr_2".into() },
            Resource::Notifications,
            Resource::Reminders,
            Resource::AgentInbox,
        ] {
            assert_eq!(Resource::parse(&resource.uri()), Some(resource));
        }
        for uri in [
            "",
            "mailroom://",
            "mailroom://mailboxes/",
            "mailroom://mailboxes/mbx_1/",
            "mailroom://mailboxes/../api",
            "mailroom://mailboxes/mbx%2F1",
            "mailroom://mailboxes/mbx_1/conversations/thr_1/x",
            "mailroom://me",
            "https://mailroom/mailboxes/mbx_1",
            "mailroom:/api/me/notifications",
        ] {
            assert_eq!(Resource::parse(uri), None, "{uri}");
        }
    }
}
