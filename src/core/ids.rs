//! Typed identifiers: a prefix that names the kind, then a ULID.
//!
//! The prefix is the kind. Code derives an actor's kind (and, for an agent, its
//! sponsor) from the identifier, never from a flag passed alongside it, so no
//! caller can pass the wrong one.

use crate::core::platform::{Platform, random_bytes};

/// The kinds of thing the node names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdKind {
    Person,
    Session,
    Team,
    Agent,
    Source,
    Mailbox,
    Receipt,
    Send,
    Event,
    AgentMessage,
    Conversation,
    Thread,
    Notification,
    Butler,
    Export,
    Webhook,
    WebhookMessage,
    SavedReply,
    Note,
    Peer,
    RemoteAgent,
}

impl IdKind {
    pub fn prefix(self) -> &'static str {
        match self {
            IdKind::Person => "usr_",
            IdKind::Session => "ses_",
            IdKind::Team => "tm_",
            IdKind::Agent => "agt_",
            IdKind::Source => "src_",
            IdKind::Mailbox => "mbx_",
            IdKind::Receipt => "rcp_",
            IdKind::Send => "snd_",
            IdKind::Event => "evt_",
            IdKind::AgentMessage => "amg_",
            IdKind::Conversation => "cnv_",
            IdKind::Thread => "thr_",
            IdKind::Notification => "ntf_",
            IdKind::Butler => "btl_",
            IdKind::Export => "exp_",
            IdKind::Webhook => "whk_",
            IdKind::WebhookMessage => "msg_",
            IdKind::SavedReply => "svr_",
            IdKind::Note => "nte_",
            IdKind::Peer => "per_",
            IdKind::RemoteAgent => "rag_",
        }
    }

    /// Every kind, in the order they are declared.
    pub const ALL: [IdKind; 21] = [
        IdKind::Person,
        IdKind::Session,
        IdKind::Team,
        IdKind::Agent,
        IdKind::Source,
        IdKind::Mailbox,
        IdKind::Receipt,
        IdKind::Send,
        IdKind::Event,
        IdKind::AgentMessage,
        IdKind::Conversation,
        IdKind::Thread,
        IdKind::Notification,
        IdKind::Butler,
        IdKind::Export,
        IdKind::Webhook,
        IdKind::WebhookMessage,
        IdKind::SavedReply,
        IdKind::Note,
        IdKind::Peer,
        IdKind::RemoteAgent,
    ];
}

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const ULID_LENGTH: usize = 26;

/// A new identifier of `kind`: its prefix, then a ULID from the platform's clock
/// and randomness, so identifiers sort by creation time.
pub fn new_id(kind: IdKind, platform: &dyn Platform) -> String {
    let timestamp = u128::from(platform.now_ms().max(0) as u64 & 0xFFFF_FFFF_FFFF);
    let random: [u8; 10] = random_bytes(platform);
    let randomness = random.iter().fold(0u128, |value, byte| (value << 8) | u128::from(*byte));
    let value = (timestamp << 80) | randomness;
    let mut id = String::with_capacity(kind.prefix().len() + ULID_LENGTH);
    id.push_str(kind.prefix());
    for index in (0..ULID_LENGTH).rev() {
        let digit = ((value >> (index * 5)) & 0x1F) as usize;
        id.push(CROCKFORD[digit] as char);
    }
    id
}

/// An identifier of `kind` derived from `seed` rather than drawn: the same
/// seed always names the same thing (an agent elsewhere, by its card's URL),
/// so two writers name it alike without reading first. Its 26 digits are the
/// seed's SHA-256, so it does not sort by time.
pub fn derived_id(kind: IdKind, seed: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(seed);
    // The digest's first 128 bits, five at a time: the first of the 26 digits
    // holds only the top three.
    let value = digest[..16].iter().fold(0u128, |value, byte| (value << 8) | u128::from(*byte));
    let mut id = String::with_capacity(kind.prefix().len() + ULID_LENGTH);
    id.push_str(kind.prefix());
    for index in (0..ULID_LENGTH).rev() {
        let digit = ((value >> (index * 5)) & 0x1F) as usize;
        id.push(CROCKFORD[digit] as char);
    }
    id
}

/// The kind an identifier's prefix names, if it is a well-formed identifier.
pub fn kind_of(id: &str) -> Option<IdKind> {
    IdKind::ALL.into_iter().find(|kind| is_id_of(id, *kind))
}

/// Whether `id` is a well-formed identifier of `kind`.
pub fn is_id_of(id: &str, kind: IdKind) -> bool {
    id.strip_prefix(kind.prefix())
        .is_some_and(|ulid| ulid.len() == ULID_LENGTH && ulid.bytes().all(|byte| CROCKFORD.contains(&byte)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::FixedPlatform;

    #[test]
    fn identifiers_carry_their_kind_and_sort_by_time() {
        let platform = FixedPlatform::at(1_700_000_000_000);
        let first = new_id(IdKind::Person, &platform);
        platform.advance(1);
        let second = new_id(IdKind::Person, &platform);
        assert!(first.starts_with("usr_") && first.len() == 30, "{first}");
        assert!(first < second);
        assert_eq!(kind_of(&first), Some(IdKind::Person));
        assert_eq!(kind_of(&new_id(IdKind::Agent, &platform)), Some(IdKind::Agent));
        assert_eq!(kind_of("usr_short"), None);
        assert_eq!(kind_of("usr_0123456789ABCDEFGHJKMNPQRI"), None, "I is not Crockford");
    }
}
