//! The event hubs: one Durable Object per topic (a mailbox, a person, and the
//! one that hears access change), holding the topic's WebSockets with the
//! Hibernation API, so an idle listener costs no CPU and no memory in the
//! Worker.
//!
//! A hub decides nothing: who may open a stream is the listening route's
//! (checked by the dispatcher before the hub sees the request), and whether a
//! listener may stay is asked again through the same route (`live::Listener`)
//! whenever the access hub hears access change, and every minute besides
//! (`live::RECHECK_EVERY_MS`, an alarm). Every hub with listeners
//! registers with the access hub when a stream opens there; the access hub
//! forgets a hub that answers it has none. A stream's close (the listener's or
//! the hub's) is recorded in the audit chain, as its opening was; one caller
//! holds at most `live::MAXIMUM_STREAMS_PER_CALLER` streams on a topic. On a
//! mailbox's hub, listeners tell each other who is reading or writing a reply
//! where (`live::Presence`): kept in the socket's attachment, never stored
//! elsewhere or recorded.

use futures_util::future::join_all;
use wasm_bindgen::JsValue;
use worker::{
    DurableObject, Env, Method, Request, RequestInit, Response, State, WebSocket, WebSocketPair, durable_object,
};

use crate::audit::{self, AuditChain};
use crate::core::background::Background;
use crate::core::events::{Event, Topic};
use crate::core::http::Told;
use crate::core::platform::Platform;
use crate::dispatch::dispatch;
use crate::live::{Activity, Listener, MAXIMUM_STREAMS_PER_CALLER, Presence, RECHECK_EVERY_MS, Standing, activity_of};

use super::installation::bindings;
use super::platform::WorkersPlatform;

/// The Durable Object namespace the hubs are in (`wrangler.toml`).
const HUBS: &str = "EVENT_HUBS";
/// The header a hub is told its own topic in: a hub's name is its topic's key.
const TOPIC_HEADER: &str = "x-mailroom-topic";
/// The header the Worker hands a hub the listener in, as JSON.
const LISTENER_HEADER: &str = "x-mailroom-listener";

/// Hands an admitted listening request to its topic's hub, which answers with
/// the WebSocket (101).
pub(super) async fn hand_to_hub(env: &Env, topic: &Topic, listener: &Listener) -> worker::Result<Response> {
    let headers = worker::Headers::new();
    headers.set("upgrade", "websocket")?;
    headers.set(TOPIC_HEADER, &topic.key())?;
    headers.set(LISTENER_HEADER, &serde_json::to_string(listener).map_err(|error| error.to_string())?)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Get).with_headers(headers);
    hub(env, topic)?.fetch_with_request(Request::new_with_init("https://hub/listen", &init)?).await
}

/// Tells each topic's hub its events: one request per topic (a change is
/// almost always one topic's), after the answer.
pub(super) async fn publish(env: &Env, events: Vec<(Topic, Vec<Event>)>) {
    let deliveries = events.into_iter().map(|(topic, events)| async move {
        let frames: Vec<String> = events.iter().map(Event::frame).collect();
        if let Err(error) = post(env, &topic, "/publish", Some(&frames)).await {
            worker::console_error!("telling the hub of {} failed: {error}", topic.key());
        }
    });
    join_all(deliveries).await;
}

/// The stub of `topic`'s hub.
fn hub(env: &Env, topic: &Topic) -> worker::Result<worker::Stub> {
    env.durable_object(HUBS)?.get_by_name(&topic.key())
}

/// A POST to `topic`'s hub at `path`, with `frames` as its JSON body.
async fn post(env: &Env, topic: &Topic, path: &str, frames: Option<&[String]>) -> worker::Result<Response> {
    let headers = worker::Headers::new();
    headers.set(TOPIC_HEADER, &topic.key())?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_headers(headers);
    if let Some(frames) = frames {
        let body = serde_json::to_string(frames).map_err(|error| error.to_string())?;
        init.with_body(Some(JsValue::from_str(&body)));
    }
    hub(env, topic)?.fetch_with_request(Request::new_with_init(&format!("https://hub{path}"), &init)?).await
}

/// One topic's hub.
#[durable_object]
pub struct EventHub {
    state: State,
    env: Env,
}

impl DurableObject for EventHub {
    fn new(state: State, env: Env) -> EventHub {
        EventHub { state, env }
    }

    async fn fetch(&self, mut request: Request) -> worker::Result<Response> {
        let topic = request.headers().get(TOPIC_HEADER)?.as_deref().and_then(Topic::from_key);
        let Some(topic) = topic else {
            return Response::error("a hub is reached only by the Worker, naming its topic", 400);
        };
        match (request.method(), request.path().as_str()) {
            (Method::Get, "/listen") => {
                let listener = request.headers().get(LISTENER_HEADER)?.unwrap_or_default();
                let Ok(listener) = serde_json::from_str::<Listener>(&listener) else {
                    return Response::error("the listener is not described", 400);
                };
                self.listen(&topic, &listener).await
            }
            (Method::Post, "/publish") => {
                let frames: Vec<String> = request.json().await.unwrap_or_default();
                self.tell(&topic, &frames).await
            }
            (Method::Post, "/register") => {
                let hub: String = request.text().await?;
                self.state.storage().put(&hub, true).await?;
                Response::empty()
            }
            (Method::Post, "/recheck") => Response::ok(self.recheck_all().await?.to_string()),
            _ => Response::error("no such hub operation", 404),
        }
    }

    /// Asks every listener again, and again later while any remain.
    async fn alarm(&self) -> worker::Result<Response> {
        let remaining = self.recheck_all().await?;
        if remaining > 0 {
            self.state.storage().set_alarm(RECHECK_EVERY_MS).await?;
        }
        Response::empty()
    }

    async fn websocket_message(
        &self,
        socket: WebSocket,
        message: worker::WebSocketIncomingMessage,
    ) -> worker::Result<()> {
        // A listener says only where it is reading or writing, on a mailbox's
        // stream; anything else it sends is not read.
        let worker::WebSocketIncomingMessage::String(frame) = message else { return Ok(()) };
        let (Some(presence), Ok(Some(mut listener))) =
            (Presence::from_frame(&frame), socket.deserialize_attachment::<Listener>())
        else {
            return Ok(());
        };
        let on_a_mailbox = matches!(Topic::from_key(&listener.topic), Some(Topic::Mailbox(_)));
        let said = (presence.presence != Activity::Idle).then(|| presence.clone());
        let held = listener.presence.as_ref().map(|held| held.object.clone());
        // An idle for a conversation this stream is not in changes nothing.
        let idle_elsewhere = said.is_none() && held.as_deref() != Some(presence.object.as_str());
        if !on_a_mailbox || listener.presence == said || idle_elsewhere {
            return Ok(());
        }
        // The conversations whose told activity may change: the one left, if
        // the stream moved, and the one it is in now.
        let mut touched = vec![presence.object.clone()];
        touched.extend(held.filter(|held| *held != presence.object));
        let before: Vec<Activity> = touched.iter().map(|object| self.activity(None, &listener.actor, object)).collect();
        listener.presence = said;
        socket.serialize_attachment(&listener)?;
        for (object, before) in touched.iter().zip(before) {
            self.tell_if_changed(&socket, &listener, object, before, None);
        }
        Ok(())
    }

    async fn websocket_close(
        &self,
        socket: WebSocket,
        code: usize,
        _reason: String,
        _clean: bool,
    ) -> worker::Result<()> {
        let code = u16::try_from(code).unwrap_or(1006);
        // Answer the client's close so the connection ends on both sides; 1005
        // (no code) and 1006 (gone) cannot be sent back.
        let _ = socket.close(Some(if matches!(code, 1005 | 1006) { 1000 } else { code }), Some("closed"));
        if let Ok(Some(listener)) = socket.deserialize_attachment::<Listener>() {
            if let Some(presence) = &listener.presence {
                let before = self.activity(None, &listener.actor, &presence.object);
                self.tell_if_changed(&socket, &listener, &presence.object, before, Some(&socket));
            }
            self.record_close(&listener, code).await;
        }
        Ok(())
    }
}

impl EventHub {
    /// Accepts a listener's WebSocket, to hibernate between events, and makes
    /// sure the access hub asks this hub again when access changes.
    async fn listen(&self, topic: &Topic, listener: &Listener) -> worker::Result<Response> {
        let pair = WebSocketPair::new()?;
        // Tagged with who opened it, to count a caller's streams here.
        self.state.accept_websocket_with_tags(&pair.server, &[&listener.actor]);
        pair.server.serialize_attachment(listener)?;
        if self.state.get_websockets_with_tag(&listener.actor).len() > MAXIMUM_STREAMS_PER_CALLER {
            let over = Standing::TooManyStreams;
            if let (Some(farewell), Some((code, reason))) = (over.farewell(), over.close()) {
                let _ = pair.server.send_with_str(farewell);
                let _ = pair.server.close(Some(code), Some(reason));
            }
            return Response::from_websocket(pair.client);
        }
        // Asked again every so often while anyone listens here (`alarm`).
        if self.state.storage().get_alarm().await?.is_none() {
            self.state.storage().set_alarm(RECHECK_EVERY_MS).await?;
        }
        // Who is reading or writing where, as the others last said: each
        // person once per conversation, doing the most any of their streams says.
        let mut told: Vec<(String, String)> = Vec::new();
        for other in self.state.get_websockets() {
            if let Ok(Some(Listener { presence: Some(presence), actor, actor_name, topic, .. })) =
                other.deserialize_attachment()
            {
                if actor == listener.actor || told.contains(&(actor.clone(), presence.object.clone())) {
                    continue;
                }
                let activity = self.activity(None, &actor, &presence.object);
                let combined = Presence { presence: activity, object: presence.object.clone() };
                let _ = pair.server.send_with_str(combined.told(
                    &actor,
                    actor_name.as_deref(),
                    &topic,
                    WorkersPlatform.now_ms(),
                ));
                told.push((actor, presence.object));
            }
        }
        if *topic != Topic::Access {
            let registered = register(&self.env, topic).await;
            if let Err(error) = registered {
                worker::console_error!("registering the hub of {} failed: {error}", topic.key());
            }
        }
        Response::from_websocket(pair.client)
    }

    /// Tells every listener the frames; on the access topic, asks every
    /// registered hub to check its listeners again instead.
    async fn tell(&self, topic: &Topic, frames: &[String]) -> worker::Result<Response> {
        if *topic == Topic::Access {
            return self.ask_every_hub_again().await;
        }
        for socket in self.state.get_websockets() {
            for frame in frames {
                // A socket closing as it is told is the one that misses it.
                let _ = socket.send_with_str(frame);
            }
        }
        Response::empty()
    }

    /// The access hub: every registered hub checks its listeners again; a hub
    /// that has none left is forgotten.
    async fn ask_every_hub_again(&self) -> worker::Result<Response> {
        let registered = self.state.storage().list().await?;
        let keys: Vec<String> = registered.keys().into_iter().filter_map(|key| key.ok()?.as_string()).collect();
        let asked = keys.iter().filter_map(|key| Topic::from_key(key)).map(|topic| async move {
            let answer = post(&self.env, &topic, "/recheck", None).await;
            let remaining = match answer {
                Ok(mut answer) => answer.text().await.ok().and_then(|text| text.parse::<usize>().ok()),
                Err(_) => None,
            };
            (topic, remaining)
        });
        for (topic, remaining) in join_all(asked).await {
            if remaining == Some(0) {
                self.state.storage().delete(&topic.key()).await?;
            }
        }
        Response::empty()
    }

    /// Asks again, for every listener here, whether it may still hear this
    /// topic; closes those that may not. Answers how many remain.
    async fn recheck_all(&self) -> worker::Result<usize> {
        let installation = bindings(&self.env, None).map_err(|refusal| worker::Error::RustError(refusal.reason))?;
        let node = installation.node();
        let sockets = self.state.get_websockets();
        let standings = sockets.iter().map(|socket| {
            let node = &node;
            async move {
                match socket.deserialize_attachment::<Listener>() {
                    Ok(Some(listener)) => {
                        let answer = dispatch(node, &listener.recheck_request(), listener.surface).await;
                        // What a listener that asked is told when it may stay.
                        let checked = listener.told_access_checks.then(|| {
                            serde_json::json!({ "kind": Told::ACCESS_CHECKED, "topic": listener.topic }).to_string()
                        });
                        (Standing::of(&answer), checked)
                    }
                    _ => (Standing::Unanswered, None),
                }
            }
        });
        let standings = join_all(standings).await;
        let mut remaining = 0;
        for (socket, (standing, checked)) in sockets.iter().zip(standings) {
            match standing.close() {
                Some((code, reason)) => {
                    // The last frame says why before the close does: a client
                    // acts on it at once, whenever its close event comes
                    // (workerd finishes a close handshake late: workerd#2569).
                    let _ = socket.send_with_str(standing.farewell().unwrap_or_default());
                    let _ = socket.close(Some(code), Some(reason));
                }
                None => {
                    if let Some(checked) = checked {
                        let _ = socket.send_with_str(&checked);
                    }
                    remaining += 1;
                }
            }
        }
        Ok(remaining)
    }
}

impl EventHub {
    /// What `actor` is doing in `object` across its streams here, leaving out
    /// `closing` (a stream going away).
    fn activity(&self, closing: Option<&WebSocket>, actor: &str, object: &str) -> Activity {
        let streams: Vec<Listener> = self
            .state
            .get_websockets()
            .iter()
            .filter(|socket| Some(*socket) != closing)
            .filter_map(|socket| socket.deserialize_attachment::<Listener>().ok().flatten())
            .collect();
        activity_of(streams.iter().map(|stream| (stream.actor.as_str(), stream.presence.as_ref())), actor, object)
    }

    /// Tells the others of `listener`'s activity in `object` when it is no
    /// longer `before` (counting its streams but `closing`).
    fn tell_if_changed(
        &self,
        speaker: &WebSocket,
        listener: &Listener,
        object: &str,
        before: Activity,
        closing: Option<&WebSocket>,
    ) {
        let now = self.activity(closing, &listener.actor, object);
        if now != before {
            let told = Presence { presence: now, object: object.to_string() };
            let frame =
                told.told(&listener.actor, listener.actor_name.as_deref(), &listener.topic, WorkersPlatform.now_ms());
            self.tell_others(speaker, &frame);
        }
    }

    /// Sends `frame` to every listener here but `speaker`.
    fn tell_others(&self, speaker: &WebSocket, frame: &str) {
        for socket in self.state.get_websockets() {
            if &socket != speaker {
                let _ = socket.send_with_str(frame);
            }
        }
    }

    /// Records a stream's close in the audit chain, with its code, then seals.
    async fn record_close(&self, listener: &Listener, code: u16) {
        let Ok(installation) = bindings(&self.env, None) else { return };
        let node = installation.node();
        let chain = AuditChain::new(node.config, node.platform);
        let record = listener.closing_record(code, node.platform.now_ms());
        if let Err(error) = Background::new(&node, &chain).commit(Vec::new(), &[record]).await {
            worker::console_error!("recording a stream's close failed: {error}");
            return;
        }
        if let Err(error) = audit::seal(&installation.database, &installation.config).await {
            worker::console_error!("sealing the audit chain failed: {error}");
        }
    }
}

/// Registers `topic`'s hub with the access hub.
async fn register(env: &Env, topic: &Topic) -> worker::Result<()> {
    let headers = worker::Headers::new();
    headers.set(TOPIC_HEADER, &Topic::Access.key())?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_headers(headers).with_body(Some(JsValue::from_str(&topic.key())));
    hub(env, &Topic::Access)?.fetch_with_request(Request::new_with_init("https://hub/register", &init)?).await?;
    Ok(())
}
