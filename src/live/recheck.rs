//! Asking again: what a hub keeps of each listener so it can ask the node
//! whether the listener may still hear its topic, and what the answer means.
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
use crate::core::http::{Request, Response};

/// What a hub keeps of one open stream: the request to replay. Only the
/// credential that opened it (the bearer header, or the short-lived access
/// cookie), never a refresh token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listener {
    pub path: String,
    pub origin: String,
    pub credential: Option<(String, String)>,
}

impl Listener {
    /// The listener that `request` (a listening route's, just admitted) opens.
    pub fn of(request: &Request) -> Listener {
        let credential = match (request.header("authorization"), request.cookie(ACCESS_COOKIE)) {
            (Some(bearer), _) => Some(("authorization".to_string(), bearer.to_string())),
            (None, Some(access)) => Some(("cookie".to_string(), format!("{ACCESS_COOKIE}={access}"))),
            (None, None) => None,
        };
        Listener { path: request.path.clone(), origin: request.origin.clone(), credential }
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
        }
    }
}
