//! `subscriptions/listen` (2026-07-28): one request whose answer is a stream of
//! the notifications the client asked for, as server-sent events.
//!
//! The stream opens with `notifications/subscriptions/acknowledged`, naming
//! what the server agreed to send: the resources asked for
//! (`resourceSubscriptions`), each read first as the caller (a resource the
//! caller may not read refuses the whole request, naming it),
//! `toolsListChanged` and `resourcesListChanged`. Every message on the stream
//! carries the request's id as `io.modelcontextprotocol/subscriptionId`. What wakes it is the node's own
//! event path: each resource's listening route (`listen_to_mailbox`,
//! `listen_to_own`, `listen_to_agent_inbox`) is opened as the caller, admitted
//! and asked again like any listener's; when its topic tells of a change, the
//! resources on it are read again through their routes and a
//! `notifications/resources/updated` is sent for each whose answer changed. The
//! catalogue and the resource list (which change only as access does) are
//! listed again each time the caller's access was checked again, and
//! `notifications/tools/list_changed` or `notifications/resources/list_changed`
//! sent when one changed. Prompts are never announced: there are none.

use std::cell::RefCell;
use std::rc::Rc;

use mailroom_contract::{RouteId, registry};
use serde_json::{Map, Value, json};

use super::errors::{INVALID_PARAMS, RpcError};
use super::resources::{Resource, as_caller, not_found, read_as_caller, why_refused};
use crate::core::context::Context;
use crate::core::crypto::sha256_hex;
use crate::core::http::{Followed, Follower, Following, Request, Response, Surface, Told};
use crate::mail::trust;

/// The most resources one stream follows: enough for an agent's mailboxes and
/// its own, never a crawl of the node.
pub(super) const MAXIMUM_SUBSCRIPTIONS: usize = 16;
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// `subscriptions/listen`, answered as a stream, or the error that refuses it.
pub(super) async fn listen(
    context: &mut Context<'_>,
    id: &Value,
    params: &Map<String, Value>,
) -> Result<Response, RpcError> {
    let invalid = |message: &str| RpcError::new(200, INVALID_PARAMS, message);
    let Some(filter) = params.get("notifications").and_then(Value::as_object) else {
        return Err(invalid("`notifications` is required: the notification types to receive"));
    };
    let wanted = |member: &str| filter.get(member).and_then(Value::as_bool).unwrap_or(false);
    // The lists that change only as access does, each with the method that
    // lists it and the notification that tells it changed.
    let lists: Vec<(&'static str, &'static str, &'static str)> = [
        ("toolsListChanged", "tools/list", "notifications/tools/list_changed"),
        ("resourcesListChanged", "resources/list", "notifications/resources/list_changed"),
    ]
    .into_iter()
    .filter(|(member, _, _)| wanted(member))
    .collect();
    let uris: Vec<String> = match filter.get("resourceSubscriptions") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(uris)) => {
            let mut named = Vec::new();
            for uri in uris {
                let Some(uri) = uri.as_str() else {
                    return Err(invalid("`notifications.resourceSubscriptions` must be a list of resource URIs"));
                };
                if !named.iter().any(|held: &String| held == uri) {
                    named.push(uri.to_string());
                }
            }
            named
        }
        Some(_) => return Err(invalid("`notifications.resourceSubscriptions` must be a list of resource URIs")),
    };
    if uris.len() > MAXIMUM_SUBSCRIPTIONS {
        return Err(invalid(&format!(
            "`notifications.resourceSubscriptions` names {} resources; one stream follows at most {MAXIMUM_SUBSCRIPTIONS}: open another for the rest",
            uris.len()
        )));
    }
    // Each resource read first, as the caller: what it may not read is refused
    // here, naming it, and what it reads is what a change is measured from.
    let mut subscriptions = Vec::new();
    for uri in uris {
        let resource = Resource::parse(&uri).ok_or_else(|| not_found(&uri, "it names no resource of this node"))?;
        let answer = read_as_caller(context, &uri, &resource).await?;
        let reading = resource.reading(context.request());
        subscriptions.push(Subscription {
            uri,
            listening_path: listening_path(&resource),
            topic: String::new(),
            reading,
            seen: RefCell::new(fingerprint(&answer)),
        });
    }
    let mut catalogues = Vec::new();
    for (member, method, notification) in lists {
        let reading = list_reading(context.request(), method);
        let answer = context.reenter(&reading, Surface::Mcp, None).await;
        if answer.credential_refused.is_some() {
            return Err(RpcError::answered(answer));
        }
        catalogues.push(Catalogue { member, notification, reading, seen: RefCell::new(fingerprint(&answer)) });
    }
    // One listener per listening route the resources need (the caller's own
    // stream when only the catalogue is followed), opened as the caller.
    let mut paths: Vec<String> = subscriptions.iter().map(|subscription| subscription.listening_path.clone()).collect();
    if paths.is_empty() {
        paths.push(registry().route(RouteId::ListenToOwn).path.to_string());
    }
    paths.sort();
    paths.dedup();
    let mut listeners = Vec::new();
    for path in paths {
        let request = as_caller(context.request(), "GET", path.clone(), None);
        let (listening, request) = match context.admit_listener(request, Surface::Mcp).await {
            Ok(admitted) => admitted,
            Err(refused) if refused.credential_refused.is_some() => return Err(RpcError::answered(refused)),
            Err(refused) => {
                let why = why_refused(&refused);
                let named = subscriptions.iter().find(|subscription| subscription.listening_path == path);
                return Err(match named {
                    Some(subscription) => not_found(&subscription.uri, &why),
                    None => RpcError::new(200, INVALID_PARAMS, format!("The caller's own stream was refused: {why}")),
                });
            }
        };
        for subscription in subscriptions.iter_mut().filter(|subscription| subscription.listening_path == path) {
            subscription.topic = listening.topic.key();
        }
        listeners.push((listening, request));
    }
    let mut honored = Map::new();
    for catalogue in &catalogues {
        honored.insert(catalogue.member.into(), json!(true));
    }
    if !subscriptions.is_empty() {
        let uris: Vec<&str> = subscriptions.iter().map(|subscription| subscription.uri.as_str()).collect();
        honored.insert("resourceSubscriptions".into(), json!(uris));
    }
    let follower = ListenFollower { id: id.clone(), subscriptions, catalogues };
    let opening =
        vec![follower.notification("notifications/subscriptions/acknowledged", json!({ "notifications": honored }))];
    let mut answer = Response::events(&opening);
    answer.follow = Some(Following {
        listeners,
        surface: Surface::Mcp,
        access_checks: !follower.catalogues.is_empty(),
        follower: Rc::new(follower),
    });
    Ok(answer)
}

/// The listening route whose topic tells of `resource`'s changes.
fn listening_path(resource: &Resource) -> String {
    let route = |id: RouteId| registry().route(id).path;
    match resource {
        Resource::Mailbox { mailbox_id } | Resource::Conversation { mailbox_id, .. } => {
            route(RouteId::ListenToMailbox).replace(":mailboxId", mailbox_id)
        }
        Resource::Notifications | Resource::Reminders => route(RouteId::ListenToOwn).to_string(),
        Resource::AgentInbox => route(RouteId::ListenToAgentInbox).to_string(),
    }
}

/// A list's reading: `method` (`tools/list`, `resources/list`) on the
/// endpoint, as the caller.
fn list_reading(outer: &Request, method: &str) -> Request {
    let body = json!({ "jsonrpc": "2.0", "id": 0, "method": method }).to_string().into_bytes();
    as_caller(outer, "POST", registry().route(RouteId::McpEndpoint).path.to_string(), Some(body))
}

/// What an answer says, as far as telling a change goes: its status and body,
/// less the nonces that fence its mail (each reading is fenced anew).
fn fingerprint(answer: &Response) -> String {
    let mut said = answer.status.to_be_bytes().to_vec();
    said.extend_from_slice(trust::without_nonces(&String::from_utf8_lossy(&answer.body)).as_bytes());
    sha256_hex(&said)
}

/// One resource followed: its URI, where its changes are told and how it is
/// read, and what its last reading said.
struct Subscription {
    uri: String,
    listening_path: String,
    /// The key of the topic its listener hears.
    topic: String,
    reading: Request,
    seen: RefCell<String>,
}

/// A list that changes only as the caller's access does (its tools, its
/// resources): read again each time access was checked.
struct Catalogue {
    /// The filter's member that asked for it (`toolsListChanged`).
    member: &'static str,
    /// What tells it changed (`notifications/tools/list_changed`).
    notification: &'static str,
    reading: Request,
    seen: RefCell<String>,
}

/// What one stream follows: its resources and, when asked, the lists.
struct ListenFollower {
    /// The `subscriptions/listen` request's id: the subscription's.
    id: Value,
    subscriptions: Vec<Subscription>,
    catalogues: Vec<Catalogue>,
}

/// What a reading reads.
#[derive(Clone, Copy)]
enum Target {
    Resource(usize),
    Catalogue(usize),
}

impl ListenFollower {
    /// A notification on this stream, tagged with the subscription's id.
    fn notification(&self, method: &str, mut params: Value) -> String {
        params["_meta"] = json!({ SUBSCRIPTION_ID: self.id });
        json!({ "jsonrpc": "2.0", "method": method, "params": params }).to_string()
    }

    /// What `told` calls to be read again, in order.
    fn targets(&self, told: Option<&Told<'_>>) -> Vec<Target> {
        let resources = (0..self.subscriptions.len()).map(Target::Resource);
        let catalogues = (0..self.catalogues.len()).map(Target::Catalogue);
        match told {
            None => resources.chain(catalogues).collect(),
            Some(told) if told.kind == Told::ACCESS_CHECKED => catalogues.collect(),
            Some(told) => {
                resources.filter(|target| matches!(target, Target::Resource(index) if self.subscriptions[*index].topic == told.topic)).collect()
            }
        }
    }
}

impl Follower for ListenFollower {
    fn readings(&self, told: Option<&Told<'_>>) -> Vec<Request> {
        self.targets(told)
            .into_iter()
            .map(|target| match target {
                Target::Resource(index) => self.subscriptions[index].reading.clone(),
                Target::Catalogue(index) => self.catalogues[index].reading.clone(),
            })
            .collect()
    }

    fn read(&self, told: Option<&Told<'_>>, answers: &[Response]) -> Followed {
        let mut events = Vec::new();
        for (target, answer) in self.targets(told).into_iter().zip(answers) {
            let now = fingerprint(answer);
            match target {
                Target::Resource(index) => {
                    let subscription = &self.subscriptions[index];
                    if subscription.seen.replace(now.clone()) != now {
                        let params = json!({ "uri": subscription.uri });
                        events.push(self.notification("notifications/resources/updated", params));
                    }
                }
                Target::Catalogue(index) => {
                    let catalogue = &self.catalogues[index];
                    if catalogue.seen.replace(now.clone()) != now {
                        events.push(self.notification(catalogue.notification, json!({})));
                    }
                }
            }
        }
        Followed { events, finished: false }
    }

    fn closed(&self, reason: &str) -> String {
        json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {
                "code": -32600,
                "message": format!("The subscription was closed: {reason}. Listen again (subscriptions/listen) when it may be opened."),
            },
        })
        .to_string()
    }
}
