//! What can go wrong with an agent or a request about one, and the refusal
//! each answers.

use mailroom_contract::{ObjectKind, Relation};

use crate::authz::AuthorityError;
use crate::core::refusal::Refusal;

/// What can be wrong with an agent or a request about one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentError {
    /// Empty or over-long name.
    InvalidName,
    /// No agent has this id.
    NoSuchAgent { id: String },
    /// No person has the sponsor's id.
    NoSuchSponsor { id: String },
    /// The sponsor is disabled.
    SponsorDisabled,
    /// No capabilities were chosen.
    NoCapabilities,
    /// A capability name is not in the vocabulary.
    UnknownCapability { name: String },
    /// A mailbox named in a grant does not exist.
    NoSuchMailbox { id: String },
    /// The same mailbox was named twice.
    DuplicateMailbox { id: String },
    /// A grant names something that is not a mailbox relation.
    NotAMailboxRelation { relation: String },
    /// The sponsor does not hold a relation the grant asks for.
    SponsorLacks { relation: String, mailbox: String },
    /// No chosen mailbox grants everything a chosen capability needs.
    CapabilityUnsatisfiable { capability: String, requires: Vec<String> },
    /// The expiry is not an RFC 3339 time in the future.
    InvalidExpiry,
    /// The agent was revoked; nothing more can be done with it.
    Revoked,
    /// The pairing code is unknown, used or expired.
    PairingCodeInvalid,
    /// Too many failed redemptions from this address.
    TooManyPairingAttempts { retry_after_seconds: u32 },
}

impl From<AgentError> for Refusal {
    fn from(error: AgentError) -> Refusal {
        match error {
            AgentError::InvalidName => Refusal::new(
                400,
                "invalid_agent_name",
                "That agent name cannot be used.",
                "An agent's name has 1 to 100 characters.",
                "Name it for its work, such as \"Invoice triage\".",
            ),
            AgentError::NoSuchAgent { id } => Refusal::not_found("agent", &id),
            AgentError::NoSuchSponsor { id } => Refusal::not_found("person", &id),
            AgentError::SponsorDisabled => Refusal::new(
                409,
                "sponsor_disabled",
                "A disabled person cannot sponsor an agent.",
                "An agent acts under its sponsor's authority, and a disabled person has none to lend.",
                "Choose an enabled sponsor, or enable this person first.",
            ),
            AgentError::NoCapabilities => Refusal::new(
                400,
                "no_capabilities",
                "An agent needs at least one capability.",
                "Capabilities are what an agent may do; with none it could do nothing.",
                "Choose capabilities from GET /api/agent-capabilities.",
            ),
            AgentError::UnknownCapability { name } => Refusal::new(
                400,
                "unknown_capability",
                format!("`{name}` is not a capability."),
                "Capabilities are a fixed vocabulary.",
                "Choose from GET /api/agent-capabilities.",
            ),
            AgentError::NoSuchMailbox { id } => Refusal::not_found("mailbox", &id),
            AgentError::DuplicateMailbox { id } => Refusal::new(
                400,
                "duplicate_mailbox",
                format!("Mailbox {id} is named twice."),
                "Each mailbox takes one list of relations.",
                "Merge the two entries into one.",
            ),
            AgentError::NotAMailboxRelation { relation } => Refusal::new(
                400,
                "not_a_mailbox_relation",
                format!("`{relation}` cannot be granted on a mailbox."),
                "An agent holds only mailbox relations; organisation relations are never given to agents.",
                format!("Use one of {}.", Relation::names_held_on(|kind| kind == ObjectKind::Mailbox)),
            ),
            AgentError::SponsorLacks { relation, mailbox } => {
                AuthorityError::SponsorLacks { relation, object: mailbox }.into()
            }
            AgentError::CapabilityUnsatisfiable { capability, requires } => Refusal::new(
                400,
                "capability_unsatisfiable",
                format!("No chosen mailbox lets {capability} work."),
                format!("{capability} needs {} together on one mailbox.", requires.join(" and ")),
                format!("Grant {} on at least one mailbox, or leave {capability} out.", requires.join(" and ")),
            ),
            AgentError::InvalidExpiry => Refusal::new(
                400,
                "invalid_expiry",
                "That expiry cannot be used.",
                "`expires_at` must be an RFC 3339 time in the future, such as 2027-01-31T00:00:00Z.",
                "Send a future time, or leave it out for no expiry.",
            ),
            AgentError::Revoked => Refusal::new(
                409,
                "agent_revoked",
                "This agent was revoked.",
                "A revoked agent stays revoked; nothing can pause, resume or pair it.",
                "Mint a new agent.",
            ),
            AgentError::PairingCodeInvalid => Refusal::new(
                401,
                "pairing_code_invalid",
                "That pairing code does not pair anything.",
                "It is unknown, was already used, has expired (codes last 10 minutes), or its agent was revoked.",
                "Ask an administrator for a new pairing code.",
            ),
            AgentError::TooManyPairingAttempts { retry_after_seconds } => Refusal::new(
                429,
                "too_many_pairing_attempts",
                "Pairing is paused for this address.",
                "Too many pairing codes failed from this address recently.",
                format!("Wait {} minutes and try again with the right code.", retry_after_seconds.div_ceil(60)),
            )
            .retry_after(retry_after_seconds),
        }
    }
}
