//! Streams that follow a topic on the request's own response: server-sent
//! events written while a listener on the topic's hub tells what changed
//! (`core::http::Following`; A2A's streaming methods).
//!
//! The Worker opens the listener as the hub's client (a WebSocket the hub
//! holds with the Hibernation API, admitted, asked again and recorded exactly
//! as a browser's), then, for each event the surface's follower says may
//! concern it, and every `FOLLOW_REREAD_EVERY_MS` besides, dispatches the
//! follower's reading as the caller and writes what the follower makes of it.
//! The stream ends when the follower says so, when the hub closes the
//! listener (its caller may no longer listen, or holds too many streams: one
//! last reading, then the follower's word on the hub's reason), or when the
//! client goes away; the listener is closed with it.

use std::pin::pin;
use std::time::Duration;

use futures_channel::mpsc::{UnboundedSender, unbounded};
use futures_util::future::{Either, join_all, select};
use futures_util::stream::{StreamExt, select_all};
use worker::{Delay, Env, WebSocket, WebsocketEvent};

use crate::core::http::{Deferred, FOLLOW_REREAD_EVERY_MS, Following, Response, Told, server_sent_event};
use crate::dispatch::dispatch;
use crate::live::Listener;

use super::hubs;
use super::installation::{Bindings, bindings};

/// The body's chunks, as the runtime reads them.
type Chunks = UnboundedSender<Result<Vec<u8>, worker::Error>>;

/// Answers with `answer`'s events and goes on writing, after it, what
/// `following`'s follower makes of each change (`context.wait_until`).
pub(super) async fn follow(
    env: &Env,
    context: &worker::Context,
    answer: &Response,
    following: Following,
) -> worker::Result<worker::Response> {
    // Every topic's listener at once (an MCP subscription may need several).
    let opening = following.listeners.iter().map(|(listening, request)| async move {
        let mut listener = Listener::of(request, listening);
        listener.surface = following.surface;
        listener.told_access_checks = following.access_checks;
        hubs::hand_to_hub(env, &listening.topic, &listener).await
    });
    let mut sockets = Vec::new();
    let mut failed = None;
    for opened in join_all(opening).await {
        match opened.map(worker::Response::websocket) {
            Ok(Some(socket)) if socket.accept().is_ok() => sockets.push(socket),
            Ok(_) => failed = Some(worker::Error::RustError("the hub answered without a WebSocket".into())),
            Err(error) => failed = Some(error),
        }
    }
    if let Some(error) = failed {
        // None is followed: the listeners that did open are closed, and recorded so.
        for socket in &sockets {
            let _ = socket.close(Some(1011), Some("the stream could not be opened"));
        }
        return Err(error);
    }
    // The answer's own events first, then what follows.
    let (chunks, body) = unbounded();
    let _ = chunks.unbounded_send(Ok(answer.body.clone()));
    let env = env.clone();
    context.wait_until(async move {
        match bindings(&env, None) {
            Ok(bindings) => go_on(&bindings, &sockets, &chunks, &following).await,
            Err(refusal) => worker::console_error!("a followed stream cannot go on: {}", refusal.reason),
        }
        for socket in &sockets {
            let _ = socket.close(Some(1000), Some("the stream ended"));
        }
        // Dropping the sender ends the body.
        drop(chunks);
    });
    let response_headers = worker::Headers::new();
    for (name, value) in &answer.headers {
        response_headers.set(name, value)?;
    }
    Ok(worker::Response::from_stream(body)?.with_headers(response_headers))
}

/// Reads and writes until the follower, a hub or the client ends the stream.
async fn go_on(bindings: &Bindings, sockets: &[WebSocket], chunks: &Chunks, following: &Following) {
    let Ok(streams) = sockets.iter().map(WebSocket::events).collect::<worker::Result<Vec<_>>>() else { return };
    let mut told = select_all(streams);
    // A first reading: what changed between the answer and the listeners opening.
    if read_again(bindings, chunks, following, None).await {
        return;
    }
    loop {
        let waited = pin!(Delay::from(Duration::from_millis(FOLLOW_REREAD_EVERY_MS)));
        let finished = match select(told.next(), waited).await {
            Either::Left((Some(Ok(WebsocketEvent::Message(message))), _)) => {
                let frame: serde_json::Value =
                    message.text().and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default();
                match frame["kind"].as_str() {
                    // A hub's last word before it closes a listener: a last
                    // reading, and unless that ended the stream, why.
                    Some("stream_closed") => {
                        let reason = frame["reason"].as_str().unwrap_or("the listener was closed");
                        return end(bindings, chunks, following, reason).await;
                    }
                    Some("presence") | None => false,
                    Some(kind) => {
                        let told = Told {
                            topic: frame["topic"].as_str().unwrap_or_default(),
                            kind,
                            object: frame["object"].as_str(),
                        };
                        read_again(bindings, chunks, following, Some(&told)).await
                    }
                }
            }
            // A listener is gone unannounced: likewise.
            Either::Left(_) => return end(bindings, chunks, following, "the listener was closed").await,
            // Nothing told for a while: a comment line, which finds a client
            // that left, and a reading, which finds what no entry told.
            Either::Right(_) => {
                if chunks.unbounded_send(Ok(b": still following\n\n".to_vec())).is_err() {
                    return;
                }
                read_again(bindings, chunks, following, None).await
            }
        };
        if finished || chunks.is_closed() {
            return;
        }
    }
}

/// Ends a stream whose listener a hub closed: a last reading, and unless that
/// ended it, the follower's word on `reason`.
async fn end(bindings: &Bindings, chunks: &Chunks, following: &Following, reason: &str) {
    if !read_again(bindings, chunks, following, None).await {
        let _ = chunks.unbounded_send(Ok(server_sent_event(&following.follower.closed(reason)).into_bytes()));
    }
}

/// Dispatches the readings the follower asks for after `told` and writes what
/// it makes of the answers; whether the stream is over.
async fn read_again(bindings: &Bindings, chunks: &Chunks, following: &Following, told: Option<&Told<'_>>) -> bool {
    let readings = following.follower.readings(told);
    if readings.is_empty() {
        return false;
    }
    let node = bindings.node();
    let answers = join_all(readings.iter().map(|reading| dispatch(&node, reading, following.surface))).await;
    let mut deferred = Deferred::default();
    for answer in &answers {
        deferred.extend(&answer.deferred);
    }
    for error in node.write_deferred(deferred).await {
        worker::console_error!("a deferred write failed: {error}");
    }
    let followed = following.follower.read(told, &answers);
    for data in &followed.events {
        if chunks.unbounded_send(Ok(server_sent_event(data).into_bytes())).is_err() {
            return true;
        }
    }
    followed.finished
}
