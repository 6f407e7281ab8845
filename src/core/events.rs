//! Events: what a listener is told after a commit, and where it is told.
//!
//! An event is the audit entry of a successful change, cut down to ids and
//! kinds (never content): its action (`kind`), the id it acted on, and its
//! `Topic`, the stream that tells it. Both commits (a request's unit of work
//! and background work's) queue the event of every entry they append, and only
//! once the batch holding it has committed, on the invocation's `Published`
//! queue; the adapter hands the queue to the topics' hubs after the answer.
//! So every changing call publishes, whichever surface it came by, without a
//! handler remembering to.
//!
//! The same commits queue each event for the endpoints outside the node that
//! subscribed to its topic (webhooks), through a `Relay` the installation
//! names: a statement in the batch that commits the change, so the change and
//! its deliveries land together or not at all, at no extra round trip.

use std::cell::{Cell, RefCell};

use mailroom_contract::{Authority, Route, Tier, registry};
use serde::Serialize;

use crate::core::ids::{IdKind, new_id};
use crate::core::platform::Platform;
use crate::core::storage::{QueryResult, Statement, Value};

/// The stream an event is told on: who listens there is decided by the route
/// that opened the stream (`listen_to_mailbox`, `listen_to_own`), and again
/// whenever access changes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Topic {
    /// What changed in one mailbox: its mail, conversations, drafts and sends.
    Mailbox(String),
    /// What changed of one person's own: their notifications, reminders and
    /// profile (an agent acting for them changes its sponsor's), and the
    /// answers to the messages they sent agents.
    Person(String),
    /// What changed in one agent's inbox: a message waiting for it, and the
    /// answers to the messages it sent.
    Agent(String),
    /// The answers to the messages an agent elsewhere (`rag_…`) sent here:
    /// told only to the push configs its organisation's node set on them,
    /// since nobody on this node listens for it (decision 0050).
    Remote(String),
    /// Access itself changed somewhere (an administrator's act, a session
    /// ended): nothing is told on it, but every open stream's authority is
    /// checked again.
    Access,
}

/// The prefix of a mailbox topic's key.
const MAILBOX_PREFIX: &str = "mailbox:";
/// The prefix of a person topic's key.
const PERSON_PREFIX: &str = "person:";
/// The prefix of an agent topic's key.
const AGENT_PREFIX: &str = "agent:";
/// The prefix of a remote agent topic's key.
const REMOTE_PREFIX: &str = "remote:";
/// The access topic's key.
const ACCESS_KEY: &str = "access";

impl Topic {
    /// The topic's key: the name of the hub that tells it.
    pub fn key(&self) -> String {
        match self {
            Topic::Mailbox(id) => format!("{MAILBOX_PREFIX}{id}"),
            Topic::Person(id) => format!("{PERSON_PREFIX}{id}"),
            Topic::Agent(id) => format!("{AGENT_PREFIX}{id}"),
            Topic::Remote(id) => format!("{REMOTE_PREFIX}{id}"),
            Topic::Access => ACCESS_KEY.to_string(),
        }
    }

    /// The id of what the topic is about (a mailbox, a person, an agent), as
    /// an audit entry names its object; none for access.
    pub fn id(&self) -> Option<&str> {
        match self {
            Topic::Mailbox(id) | Topic::Person(id) | Topic::Agent(id) | Topic::Remote(id) => Some(id),
            Topic::Access => None,
        }
    }

    /// The topic a key names, if it names one.
    pub fn from_key(key: &str) -> Option<Topic> {
        if key == ACCESS_KEY {
            return Some(Topic::Access);
        }
        let named = |prefix: &str| key.strip_prefix(prefix).filter(|id| !id.is_empty()).map(str::to_string);
        named(MAILBOX_PREFIX)
            .map(Topic::Mailbox)
            .or_else(|| named(PERSON_PREFIX).map(Topic::Person))
            .or_else(|| named(AGENT_PREFIX).map(Topic::Agent))
            .or_else(|| named(REMOTE_PREFIX).map(Topic::Remote))
    }

    /// The topic of a party to a conversation between agents (and the people
    /// who message them), by its id: a person's or an agent's own, or an
    /// agent elsewhere's.
    pub fn of_party(id: &str) -> Option<Topic> {
        if id.starts_with(IdKind::Agent.prefix()) {
            Some(Topic::Agent(id.to_string()))
        } else if id.starts_with(IdKind::Person.prefix()) {
            Some(Topic::Person(id.to_string()))
        } else if id.starts_with(IdKind::RemoteAgent.prefix()) {
            Some(Topic::Remote(id.to_string()))
        } else {
            None
        }
    }

    /// Whether anyone on this node can listen on the topic, so that its hub
    /// is told: an agent elsewhere's is told only to webhooks.
    pub fn has_listeners(&self) -> bool {
        !matches!(self, Topic::Remote(_))
    }
}

/// Where a successful call of `route` is told, derived from its declaration:
/// a change in the mailbox its path names (`mailbox`, its `mailboxId`); a change to the caller's own data
/// (`Authority::Personal`) on `own_person`'s topic (an agent's sponsor's); an
/// administrator's act, or a session's end, as access changing. Reads, the
/// machine surfaces (whose re-entered calls tell for themselves) and calls
/// anyone may make (signing in adds access only to the caller) tell nothing.
pub fn topic_of_call(route: &Route, mailbox: Option<&str>, own_person: Option<&str>) -> Option<Topic> {
    if route.method.is_safe() {
        return None;
    }
    match registry().tier(route.id) {
        Tier::Read | Tier::Surface => None,
        Tier::Operator if route.authority == Authority::Public => None,
        Tier::Operator => Some(Topic::Access),
        Tier::Act | Tier::Governed => match (mailbox, &route.authority) {
            (Some(mailbox), _) => Some(Topic::Mailbox(mailbox.to_string())),
            (_, Authority::Personal) => own_person.map(|person| Topic::Person(person.to_string())),
            _ => None,
        },
    }
}

/// A stream a listening route admitted: on which topic, and for whom (who
/// opened it, and for an agent, its sponsor), as the chain records them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listening {
    pub topic: Topic,
    pub actor: String,
    pub delegator: Option<String>,
    /// The opener's name, as the others on a mailbox are told it beside its
    /// presence (everyone there may read the mailbox, where it already shows).
    pub actor_name: Option<String>,
}

/// One committed change, as a listener is told it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub topic: Topic,
    /// The change's audit action: the tool name of the route that made it, or
    /// the background action's (`receive_mail`).
    pub kind: String,
    /// The id the change acted on, as its audit entry names it.
    pub object: Option<String>,
    /// When it was committed, in milliseconds since the epoch.
    pub at: i64,
}

/// An event as one WebSocket frame carries it.
#[derive(Serialize)]
struct Frame<'event> {
    kind: &'event str,
    object: Option<&'event str>,
    topic: String,
    at: i64,
}

impl Event {
    /// The frame a listener receives: one JSON object.
    pub fn frame(&self) -> String {
        let frame = Frame { kind: &self.kind, object: self.object.as_deref(), topic: self.topic.key(), at: self.at };
        serde_json::to_string(&frame).unwrap_or_default()
    }
}

/// Where a committed event is queued for the endpoints outside the node that
/// subscribed to its topic: the domain that keeps the subscriptions answers
/// the statement, and the core names none.
pub trait Relay {
    /// The statement that queues `event`, as the message `message_id`, for
    /// every endpoint subscribed to it; it reports how many it queued as the
    /// rows it changed.
    fn queue(&self, event: &Event, message_id: &str) -> Statement;

    /// The statement that queues an event of `kind` committed `at` for every
    /// endpoint subscribed to it, on topics only the commit's own rows name:
    /// `selected` is SQL (with its parameters) answering a `topic` (a topic's
    /// key) and an `object` per row, read after the batch's writes. Each
    /// message's id is `message_prefix` and its object.
    fn queue_selected(&self, kind: &str, at: i64, message_prefix: &str, selected: &Told) -> Statement;
}

/// SQL answering `topic` and `object` per row, with its parameters: the
/// events a commit tells on topics its own rows name (`Relay::queue_selected`).
pub type Told = (String, Vec<Value>);

/// The events one invocation (a request, an inbound message, a cron run) has
/// committed, in order, waiting to be handed to their hubs; and how many
/// deliveries to subscribed endpoints its commits queued.
#[derive(Default)]
pub struct Published {
    events: RefCell<Vec<Event>>,
    relay: Option<&'static dyn Relay>,
    queued: Cell<u64>,
}

impl Published {
    /// A queue whose commits also queue each event through `relay`.
    pub fn relaying(relay: &'static dyn Relay) -> Published {
        Published { relay: Some(relay), ..Published::default() }
    }

    /// The statements that queue `events` through the relay, for the batch
    /// that commits them (none without a relay).
    pub(crate) fn queue(&self, events: &[Event], platform: &dyn Platform) -> Vec<Statement> {
        let Some(relay) = self.relay else { return Vec::new() };
        events.iter().map(|event| relay.queue(event, &new_id(IdKind::WebhookMessage, platform))).collect()
    }

    /// Counts the deliveries the queue statements' `results` queued.
    pub(crate) fn count_queued(&self, results: &[QueryResult]) {
        self.queued.set(self.queued.get() + results.iter().map(|result| result.changes).sum::<u64>());
    }

    /// The statement that queues, through the relay, the events of `kind`
    /// committed `at` that `selected` names (none without a relay).
    pub(crate) fn queue_selected(
        &self,
        kind: &str,
        at: i64,
        selected: &Told,
        platform: &dyn Platform,
    ) -> Option<Statement> {
        let relay = self.relay?;
        Some(relay.queue_selected(kind, at, &new_id(IdKind::WebhookMessage, platform), selected))
    }

    /// How many deliveries the commits since the last call queued, leaving
    /// none counted: when any, they are made after the answer.
    pub fn take_queued(&self) -> u64 {
        self.queued.replace(0)
    }

    pub(crate) fn push(&self, event: Event) {
        self.events.borrow_mut().push(event);
    }

    /// Takes every event committed so far, leaving none.
    pub fn take(&self) -> Vec<Event> {
        std::mem::take(&mut *self.events.borrow_mut())
    }

    /// The events committed so far, grouped by topic (each topic's in the order
    /// they were committed), the topics in a stable order: one delivery per hub.
    /// A topic nobody on this node listens on has no hub, and is left out.
    pub fn take_by_topic(&self) -> Vec<(Topic, Vec<Event>)> {
        let mut grouped: std::collections::BTreeMap<Topic, Vec<Event>> = std::collections::BTreeMap::new();
        for event in self.take().into_iter().filter(|event| event.topic.has_listeners()) {
            grouped.entry(event.topic.clone()).or_default().push(event);
        }
        grouped.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topic_is_found_again_from_its_key_and_nothing_else_is_a_topic() {
        for topic in [
            Topic::Mailbox("mbx_1".into()),
            Topic::Person("usr_1".into()),
            Topic::Agent("agt_1".into()),
            Topic::Remote("rag_1".into()),
            Topic::Access,
        ] {
            assert_eq!(Topic::from_key(&topic.key()), Some(topic));
        }
        for key in ["", "mailbox:", "person:", "agent:", "team:tm_1", "accessx", "Mailbox:mbx_1"] {
            assert_eq!(Topic::from_key(key), None, "{key}");
        }
    }

    #[test]
    fn a_frame_carries_ids_and_kinds_only() {
        let event = Event {
            topic: Topic::Mailbox("mbx_1".into()),
            kind: "receive_mail".into(),
            object: Some("rcp_1".into()),
            at: 7,
        };
        assert_eq!(event.frame(), r#"{"kind":"receive_mail","object":"rcp_1","topic":"mailbox:mbx_1","at":7}"#);
    }
}
