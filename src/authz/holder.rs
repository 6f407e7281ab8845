//! Who a relation check asks about (`Holder`), and what a change takes away
//! from the node's administrators (`Losing`): the plain values the tuple
//! statements are built from, beneath both `tuples` and the store.

/// Who a predicate asks about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Holder {
    /// A person: their own tuples and those of every team they belong to.
    Person(String),
    /// An agent: its own tuples, each only while its sponsor (derived from the
    /// agent's row, never passed in) holds the same relation on the same object,
    /// and only while the agent is live at `now_ms` (not yet expired).
    Agent { agent_id: String, now_ms: i64 },
    /// The person an agent acts for, named by the agent: what the agent could be
    /// granted, since it can never hold more than its sponsor.
    SponsorOf(String),
    /// The person or agent whose id is in the SQL column `column` of the row
    /// being asked about (an assignee a butler's rules name, say), judged at
    /// `now_ms`: a person as `Person`, an agent as `Agent`, by the id's prefix.
    ActorIn { column: &'static str, now_ms: i64 },
}

impl Holder {
    /// The holder an actor id names, by its prefix, judged at `now_ms`.
    pub fn of_actor(actor_id: &str, now_ms: i64) -> Holder {
        if actor_id.starts_with("agt_") {
            Holder::Agent { agent_id: actor_id.to_string(), now_ms }
        } else {
            Holder::Person(actor_id.to_string())
        }
    }
}

/// What a change takes away from the node's administrators.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Losing<'a> {
    /// A person being disabled.
    pub person: Option<&'a str>,
    /// The subject whose `org.admin` tuple is being revoked (a person or `tm_…#member`).
    pub tuple_subject: Option<&'a str>,
    /// A membership being ended: (team, person).
    pub membership: Option<(&'a str, &'a str)>,
}
