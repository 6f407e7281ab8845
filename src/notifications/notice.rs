//! What a notification says and whom it is for: what another domain hands
//! over when it tells of a change.

use mailroom_contract::api::NotificationKind;

/// Who a notification is for.
#[derive(Clone, Copy, Debug)]
pub enum Addressee<'a> {
    /// The person an actor works for: the actor if it is a person, the agent's
    /// sponsor if it is an agent (read from the agent's row as it is written).
    PersonOf(&'a str),
    /// Whoever holds approval.decide on the notice's mailbox when the feed is
    /// read, except those on `actor`'s side of dual control.
    Deciders,
}

/// What a notification says.
#[derive(Clone, Copy, Debug)]
pub struct Notice<'a> {
    pub kind: NotificationKind,
    /// What it is about: a send, a conversation or a reminder.
    pub object_id: &'a str,
    /// The mailbox it happened in, for mail.
    pub mailbox_id: Option<&'a str>,
    /// Who caused it, where someone did.
    pub actor: Option<&'a str>,
    pub title: &'a str,
    pub detail: Option<&'a str>,
}
