//! What a hub keeps of each listener: enough to ask the node whether the
//! listener may still hear its topic, and to record the stream's close; what
//! the answer means for the stream; and how many streams one caller may hold
//! on one topic.
//!
//! A hub never decides authority itself. It replays the request that opened the
//! stream, without the upgrade, through the ordinary dispatcher: the route's
//! own checks run again against the database as they are now (relations,
//! sponsor ∩ agent ∩ ceiling, pause, revocation, the session), and the
//! listening handler answers 426 only once they all pass. So one rule decides
//! both opening and staying open, and an access change closes exactly the
//! streams the route would no longer open.

use serde::{Deserialize, Serialize};

use crate::authz::credentials::ACCESS_COOKIE;
use crate::core::context::ports::AuditRecord;
use crate::core::events::{Listening, Topic};
use crate::core::http::{Request, Response, Surface};

use super::presence::Presence;

/// How many streams one caller may hold open on one topic at once: a page in
/// a few tabs and an agent or two, never a flood. The next is closed at once
/// (4429), and told why.
pub const MAXIMUM_STREAMS_PER_CALLER: usize = 8;

/// How often a hub with listeners asks again of its own accord, besides
/// whenever access changes: what changes no administrator makes (an access
/// token expiring, a session lapsing) closes a stream within this.
pub const RECHECK_EVERY_MS: i64 = 60_000;

/// The audit action of a stream's close.
const CLOSING_ACTION: &str = "stop_listening";

/// What a hub keeps of one open stream: who opened it on which topic, and the
/// request to replay. Only the credential that opened it (the bearer header,
/// or the short-lived access cookie), never a refresh token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listener {
    /// The topic's key.
    pub topic: String,
    pub actor: String,
    pub delegator: Option<String>,
    pub path: String,
    pub origin: String,
    pub credential: Option<(String, String)>,
    /// The opener's name, told beside its presence.
    #[serde(default)]
    pub actor_name: Option<String>,
    /// What it last said it is doing, on a mailbox's stream (`presence`).
    #[serde(default)]
    pub presence: Option<Presence>,
    /// The surface it was opened over, and is asked again over: an MCP
    /// client's credential may be an OAuth token that works only there.
    #[serde(default)]
    pub surface: Surface,
    /// Whether it is told each time it was asked again and may stay
    /// (`Told::ACCESS_CHECKED`), for a follower whose catalogue depends on it.
    #[serde(default)]
    pub told_access_checks: bool,
}

impl Listener {
    /// The listener that `request`, a listening route's admitted as
    /// `listening`, opens.
    pub fn of(request: &Request, listening: &Listening) -> Listener {
        let credential = match (request.header("authorization"), request.cookie(ACCESS_COOKIE)) {
            (Some(bearer), _) => Some(("authorization".to_string(), bearer.to_string())),
            (None, Some(access)) => Some(("cookie".to_string(), format!("{ACCESS_COOKIE}={access}"))),
            (None, None) => None,
        };
        Listener {
            topic: listening.topic.key(),
            actor: listening.actor.clone(),
            delegator: listening.delegator.clone(),
            path: request.path.clone(),
            origin: request.origin.clone(),
            credential,
            actor_name: listening.actor_name.clone(),
            presence: None,
            surface: Surface::Rest,
            told_access_checks: false,
        }
    }

    /// The audit entry of this stream's close, with the WebSocket close code
    /// it ended with (the listener's own, or the node's: 4401, 4403, 4429).
    pub fn closing_record(&self, code: u16, now_ms: i64) -> AuditRecord {
        AuditRecord {
            at: now_ms,
            actor: Some(self.actor.clone()),
            delegator: self.delegator.clone(),
            surface: Some(self.surface.as_str()),
            action: CLOSING_ACTION.into(),
            object: Topic::from_key(&self.topic).and_then(|topic| topic.id().map(str::to_string)),
            outcome: "ok",
            detail: Some(serde_json::json!({ "code": code }).to_string()),
            topic: None,
        }
    }

    /// The request that asks again: the opening one, without the upgrade.
    pub fn recheck_request(&self) -> Request {
        Request {
            method: "GET".into(),
            path: self.path.clone(),
            query: String::new(),
            headers: self.credential.iter().cloned().collect(),
            body: Vec::new(),
            origin: self.origin.clone(),
            client_address: None,
        }
    }
}

/// Where a listener stands after asking again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// It may still hear the topic.
    Admitted,
    /// Its credential no longer holds (signed out, expired, revoked): closed
    /// with 4401, so a client signs in or refreshes before reconnecting.
    CredentialGone,
    /// It may no longer read the topic (a relation revoked, an agent paused or
    /// its ceiling lowered): closed with 4403, and reconnecting is refused.
    Withdrawn,
    /// The node could not answer: closed with 1011, and the reconnect is
    /// checked as any opening is. A stream is never kept on a question unanswered.
    Unanswered,
    /// One stream too many for its caller on its topic
    /// (`MAXIMUM_STREAMS_PER_CALLER`): closed with 4429 as it opens.
    TooManyStreams,
}

impl Standing {
    /// What the replayed request's answer means.
    pub fn of(answer: &Response) -> Standing {
        match answer.status {
            426 => Standing::Admitted,
            401 => Standing::CredentialGone,
            403 | 404 => Standing::Withdrawn,
            _ => Standing::Unanswered,
        }
    }

    /// The last frame a listener that must go is sent, just before its close:
    /// `{"kind":"stream_closed","code":…,"reason":…}`, so a client knows why
    /// at once, whenever the close handshake ends. `None` while it may stay.
    pub fn farewell(self) -> Option<String> {
        let (code, reason) = self.close()?;
        Some(serde_json::json!({ "kind": "stream_closed", "code": code, "reason": reason }).to_string())
    }

    /// The WebSocket close code and reason a listener that must go is closed
    /// with; `None` while it may stay.
    pub fn close(self) -> Option<(u16, &'static str)> {
        match self {
            Standing::Admitted => None,
            Standing::CredentialGone => Some((4401, "the credential no longer holds: sign in again, then reconnect")),
            Standing::Withdrawn => Some((4403, "you may no longer read this")),
            Standing::Unanswered => Some((1011, "access could not be checked: reconnect")),
            Standing::TooManyStreams => Some((4429, "too many of your streams on this topic: close one first")),
        }
    }
}
