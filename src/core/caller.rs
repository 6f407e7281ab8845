//! Who a request claims to be, before the database has confirmed it.
//!
//! The claim is read from the credential without I/O (`authz::credentials`);
//! whether it still holds (a live session, a live agent whose secret matched) is
//! settled in the request's first round trip. The prefix of an id is its kind, so
//! nothing here carries a kind or a sponsor alongside an id.

/// The caller a request claims to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    /// No credential.
    Stranger,
    /// A person's session.
    Person { person_id: String, session_id: String },
    /// An agent: the id its credential names and what proves it, which the
    /// database must confirm.
    Agent { agent_id: String, proof: AgentProof },
    /// A reminder source's credential: the source it names and the SHA-256 of
    /// the whole credential, which the database must confirm.
    Source { source_id: String, credential_hash: String },
    /// Another organisation's node, with the credential an administrator
    /// issued for it: the peer it names and the SHA-256 of the whole
    /// credential, which the database must confirm, and the card URL of its
    /// agent that sends (its `Mailroom-Sender` header), which must be on the
    /// peer's domain. It reaches only the routes declared open to peers.
    Peer { peer_id: String, credential_hash: String, sender: Option<String> },
}

/// What proves a request is an agent's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentProof {
    /// Its `mr_agt_` credential: the SHA-256 of the whole credential, which must
    /// be the one stored for the agent.
    Credential { hash: String },
    /// An OAuth access token the node signed for the agent a person's consent
    /// minted; the agent's connection must still stand.
    Connection,
}

impl Caller {
    /// The id that acts: what the audit chain records as the actor.
    pub fn actor_id(&self) -> Option<&str> {
        match self {
            Caller::Stranger => None,
            Caller::Person { person_id, .. } => Some(person_id),
            Caller::Agent { agent_id, .. } => Some(agent_id),
            Caller::Source { source_id, .. } => Some(source_id),
            Caller::Peer { peer_id, .. } => Some(peer_id),
        }
    }
}
