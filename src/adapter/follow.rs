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
use futures_util::StreamExt;
use futures_util::future::{Either, select};
use worker::{Delay, Env, WebSocket, WebsocketEvent};

use crate::core::http::{FOLLOW_REREAD_EVERY_MS, Following};
use crate::core::storage::Database;
use crate::dispatch::dispatch;
use crate::live::Listener;

use super::hubs;
use super::installation::{Bindings, bindings};

/// The body's chunks, as the runtime reads them.
type Chunks = UnboundedSender<Result<Vec<u8>, worker::Error>>;

/// Answers with `following`'s opening events and goes on writing, after the
/// answer, what its follower makes of each change (`context.wait_until`).
pub(super) async fn follow(
    env: &Env,
    context: &worker::Context,
    headers: &[(String, String)],
    following: Following,
) -> worker::Result<worker::Response> {
    let listener = Listener::of(&following.listener, &following.listening);
    let opened = hubs::hand_to_hub(env, &following.listening.topic, &listener).await?;
    let Some(socket) = opened.websocket() else {
        return Err(worker::Error::RustError("the hub answered without a WebSocket".into()));
    };
    socket.accept()?;
    let (chunks, body) = unbounded();
    for data in &following.opening {
        let _ = chunks.unbounded_send(Ok(event(data)));
    }
    let env = env.clone();
    context.wait_until(async move {
        match bindings(&env, None) {
            Ok(bindings) => go_on(&bindings, &socket, &chunks, &following).await,
            Err(refusal) => worker::console_error!("a followed stream cannot go on: {}", refusal.reason),
        }
        let _ = socket.close(Some(1000), Some("the stream ended"));
        // Dropping the sender ends the body.
        drop(chunks);
    });
    let response_headers = worker::Headers::new();
    for (name, value) in headers {
        response_headers.set(name, value)?;
    }
    Ok(worker::Response::from_stream(body)?.with_headers(response_headers))
}

/// Reads and writes until the follower, the hub or the client ends the stream.
async fn go_on(bindings: &Bindings, socket: &WebSocket, chunks: &Chunks, following: &Following) {
    let Ok(mut told) = socket.events() else { return };
    // A first reading: what changed between the answer and the listener opening.
    if read_again(bindings, chunks, following).await {
        return;
    }
    loop {
        let waited = pin!(Delay::from(Duration::from_millis(FOLLOW_REREAD_EVERY_MS)));
        let read = match select(told.next(), waited).await {
            Either::Left((Some(Ok(WebsocketEvent::Message(message))), _)) => {
                let frame: serde_json::Value =
                    message.text().and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default();
                match frame["kind"].as_str() {
                    // The hub's last word before it closes the listener: a
                    // last reading, and unless that ended the stream, why.
                    Some("stream_closed") => {
                        let reason = frame["reason"].as_str().unwrap_or("the listener was closed");
                        return end(bindings, chunks, following, reason).await;
                    }
                    Some("presence") | None => false,
                    Some(_) => following.follower.concerns(frame["object"].as_str()),
                }
            }
            // The listener is gone unannounced: likewise.
            Either::Left(_) => return end(bindings, chunks, following, "the listener was closed").await,
            // Nothing told for a while: a comment line, which finds a client
            // that left, and a reading, which finds what no entry told.
            Either::Right(_) => {
                if chunks.unbounded_send(Ok(b": still following\n\n".to_vec())).is_err() {
                    return;
                }
                true
            }
        };
        if chunks.is_closed() || (read && read_again(bindings, chunks, following).await) {
            return;
        }
    }
}

/// Ends a stream whose listener the hub closed: a last reading, and unless
/// that ended it, the follower's word on `reason`.
async fn end(bindings: &Bindings, chunks: &Chunks, following: &Following, reason: &str) {
    if !read_again(bindings, chunks, following).await {
        let _ = chunks.unbounded_send(Ok(event(&following.follower.closed(reason))));
    }
}

/// Dispatches the follower's reading and writes what it makes of the answer;
/// whether the stream is over.
async fn read_again(bindings: &Bindings, chunks: &Chunks, following: &Following) -> bool {
    let answer = dispatch(&bindings.node(), &following.follower.reread(), following.surface).await;
    if !answer.deferred.is_empty()
        && let Err(error) = bindings.database.execute(answer.deferred.clone()).await
    {
        worker::console_error!("a deferred write failed: {error}");
    }
    let followed = following.follower.read(&answer);
    for data in &followed.events {
        if chunks.unbounded_send(Ok(event(data))).is_err() {
            return true;
        }
    }
    followed.finished
}

/// One server-sent event carrying `data` (one line of JSON).
fn event(data: &str) -> Vec<u8> {
    format!("data: {data}\n\n").into_bytes()
}
