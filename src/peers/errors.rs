//! Why a call about peers or agents elsewhere was refused, and how each
//! refusal reads.

use mailroom_contract::api::{MAXIMUM_REMOTE_RECIPIENTS, PEER_CREDENTIAL_MAXIMUM, PEER_NAME_MAXIMUM};

use crate::core::refusal::Refusal;

/// Why a call about peers or agents elsewhere was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PeersError {
    /// `domain` is not a host name the node could reach.
    InvalidDomain { domain: String },
    /// A name empty or too long.
    InvalidName,
    /// A credential empty, too long, or with characters a header cannot carry.
    InvalidCredential,
    /// A live peer already has the domain.
    DomainTaken { domain: String },
    /// The path names no peer.
    NoSuchPeer { id: String },
    /// The peer is disconnected.
    Disconnected { id: String },
    /// A card URL the node may not or cannot read (`why` says how).
    InvalidCardUrl { field: String, why: String },
    /// An outbound policy entry that is neither a domain nor a card URL.
    InvalidRemoteRecipient { index: usize, entry: String },
    /// More outbound policy entries than one may name.
    TooManyRemoteRecipients { given: usize },
}

impl From<PeersError> for Refusal {
    fn from(error: PeersError) -> Refusal {
        match error {
            PeersError::InvalidDomain { domain } => Refusal::new(
                400,
                "invalid_body",
                format!("`domain` ({domain}) is not a domain."),
                "A peer is named by the host its node answers on: letters, digits, hyphens and dots, such as `mail.example.org`.",
                "Give the host of the other organisation's agent cards, without a scheme or a path.",
            ),
            PeersError::InvalidName => Refusal::new(
                400,
                "invalid_body",
                "`name` is empty or too long.",
                format!("A peer's name is 1 to {PEER_NAME_MAXIMUM} characters."),
                "Give the other organisation's name.",
            ),
            PeersError::InvalidCredential => Refusal::new(
                400,
                "invalid_body",
                "`outbound_credential` cannot be sent as a credential.",
                format!(
                    "It is sent as `Authorization: Bearer`, so it is 1 to {PEER_CREDENTIAL_MAXIMUM} printable characters without spaces."
                ),
                "Paste the credential the other organisation's administrator gave you, unchanged.",
            ),
            PeersError::DomainTaken { domain } => Refusal::new(
                409,
                "conflict",
                format!("{domain} is already connected."),
                "One live peer per domain: the credential it presents names it.",
                "Disconnect the existing peer first, or set its credential with update_peer.",
            ),
            PeersError::NoSuchPeer { id } => Refusal::new(
                404,
                "not_found",
                format!("No peer is {id}."),
                "The id names no organisation connected to this node.",
                "List the peers with list_peers.",
            ),
            PeersError::Disconnected { id } => Refusal::new(
                409,
                "conflict",
                format!("{id} is disconnected."),
                "A disconnected peer stays as a record; nothing about it changes again.",
                "Connect the organisation again with create_peer.",
            ),
            PeersError::InvalidCardUrl { field, why } => Refusal::new(
                400,
                "invalid_body",
                format!("`{field}` cannot be an agent's card."),
                format!(
                    "`{field}`: {why}. An agent elsewhere is named by its A2A agent card's https address on the internet."
                ),
                "Give the URL of the agent's card, such as https://agents.example.org/.well-known/agent-card.json.",
            ),
            PeersError::InvalidRemoteRecipient { index, entry } => Refusal::new(
                400,
                "invalid_body",
                format!("`remote_recipients[{index}]` ({entry}) is neither a domain nor a card URL."),
                "An agent's outbound policy names domains (`example.org`, covering its subdomains) or the https URLs of agents' cards.",
                "Give a domain without a scheme, or a card's full https URL.",
            ),
            PeersError::TooManyRemoteRecipients { given } => Refusal::new(
                400,
                "invalid_body",
                format!("`remote_recipients` names {given} entries."),
                format!("An outbound policy names at most {MAXIMUM_REMOTE_RECIPIENTS} domains or cards."),
                "Name a domain instead of each of its cards.",
            ),
        }
    }
}
