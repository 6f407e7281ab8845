//! Agents and the capability vocabulary they are minted from.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::relation::ObjectKind;
use crate::vocabulary::vocabulary;

/// The capability vocabulary administrators mint agents from.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CapabilityVocabulary {
    /// Every capability, in the order the mint form shows them.
    pub capabilities: Vec<PublishedCapability>,
    /// Every relation a tuple can name, in declaration order: what the
    /// capabilities' `requires` lists draw from, and what an administrator grants.
    pub relations: Vec<PublishedRelation>,
}

/// One relation of the vocabulary (SPEC §2).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PublishedRelation {
    /// The relation's name, such as `mailbox.content.read`.
    pub name: String,
    /// What it is held on: `organization` (the object `org`) or `mailbox` (an `mbx_…` id).
    pub on: ObjectKind,
    /// What holding it lets the holder do.
    pub description: String,
}

/// One capability: what it lets an agent do, and what it requires.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PublishedCapability {
    /// The capability's name, such as `mail.read`.
    pub name: String,
    /// One line for a list.
    pub summary: String,
    /// What an agent holding it can do.
    pub description: String,
    /// The relations the agent, and the person it acts for, must both hold on a
    /// mailbox for this capability to work there. Derived from its routes.
    pub requires: Vec<String>,
    /// Whether any of its routes reaches message content (bodies, attachments, originals).
    pub reaches_content: bool,
    /// The routes it grants; they are pinned to an agent when it is minted.
    pub routes: Vec<CapabilityRoute>,
}

/// A route as a capability lists it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CapabilityRoute {
    /// The route's tool name.
    pub tool: String,
    /// The HTTP method.
    pub method: String,
    /// The path, with `:name` parameters.
    pub path: String,
    /// What the route does, in one line.
    pub summary: String,
    /// Whether the route reaches message content.
    pub reaches_content: bool,
}

/// Relations to grant an agent on one mailbox at mint.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailboxGrant {
    /// The mailbox (`mbx_…`).
    pub mailbox: String,
    /// The relations to grant the agent there; the sponsor must hold each of them there.
    pub relations: Vec<String>,
}

/// How a new agent's credential is handed over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CredentialDelivery {
    /// The credential itself, shown once in the answer.
    #[default]
    Credential,
    /// A pairing code the agent's software redeems for the credential.
    PairingCode,
}

/// Mints an agent.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MintAgent {
    /// A name for the agent, such as "Invoice triage bot" (at most 100 characters).
    pub name: String,
    /// The person whose authority the agent acts under (`usr_…`); it can never do more than they can.
    pub sponsor: String,
    /// The capabilities to give it, by name (see list_agent_capabilities); expanded to routes and pinned.
    pub capabilities: Vec<String>,
    /// The mailboxes it may work on, with the relations it holds on each.
    #[serde(default)]
    pub mailboxes: Vec<MailboxGrant>,
    /// When its credential stops working (RFC 3339); absent for no expiry.
    #[serde(default)]
    pub expires_at: Option<String>,
    /// `credential` (default) shows the credential once; `pairing_code` issues a code to redeem instead.
    #[serde(default)]
    pub delivery: CredentialDelivery,
}

/// How much of one capability an agent holds.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CapabilityHeld {
    /// The capability's name.
    pub name: String,
    /// How many of the capability's current routes are pinned to the agent.
    pub held: i64,
    /// How many routes the capability has now.
    pub total: i64,
}

/// An agent: a principal that acts in its own right under a sponsor's authority.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Agent {
    /// The agent's id (`agt_…`).
    pub id: String,
    /// Its name.
    pub name: String,
    /// The person whose authority it acts under (`usr_…`).
    pub sponsor: String,
    /// Whether its credential works now, and if not, why.
    pub state: AgentState,
    /// When it was minted (RFC 3339).
    pub created_at: String,
    /// Who minted it.
    pub created_by: String,
    /// When its credential stops working (RFC 3339), if ever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// When it was paused (RFC 3339), while it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_at: Option<String>,
    /// When it was revoked (RFC 3339), if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
    /// When it last listed or claimed its agent-messaging inbox (RFC 3339), to the minute; absent if never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seen_at: Option<String>,
    /// Its ceiling, held of total, per capability it holds any route of.
    pub capabilities: Vec<CapabilityHeld>,
    /// Pinned routes (tool names) that no current capability contains: still pinned, still checked.
    pub other_routes: Vec<String>,
    /// Every pinned route (tool names).
    pub routes: Vec<String>,
    /// The relations it holds, by mailbox.
    pub mailboxes: Vec<MailboxGrant>,
}

vocabulary! {
    /// Whether an agent's credential works now. When several apply, the first in this
    /// order is reported: revoked, expired, paused, awaiting exchange, awaiting pairing.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum AgentState {
        Active = "active": "Paired and usable.";
        AwaitingExchange = "awaiting_exchange": "A person consented to an app over OAuth, and the app has not yet exchanged its authorization code for tokens: until it does, the agent holds nothing and can do nothing, and if the code expires unexchanged the agent is removed.";
        AwaitingPairing = "awaiting_pairing": "Minted, but no credential has been paired yet: a pairing code redeems one.";
        Paused = "paused": "Refused until its sponsor or an administrator resumes it; its grants are kept.";
        Expired = "expired": "Its expiry has passed; the credential is refused for good.";
        Revoked = "revoked": "Revoked by an administrator; the credential is refused for good.";
    }
}

/// Every agent.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AgentList {
    /// The agents, newest first.
    pub agents: Vec<Agent>,
}

/// A pairing code, shown once.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PairingCode {
    /// The agent it pairs (`agt_…`).
    pub agent_id: String,
    /// The code: give it to the agent's software, which redeems it at POST /api/agents/pair.
    pub code: String,
    /// When it stops working (RFC 3339), at most 10 minutes away.
    pub expires_at: String,
}

/// A newly minted agent, with its credential or pairing code, shown once.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct MintedAgent {
    /// The agent.
    pub agent: Agent,
    /// The credential (`mr_agt_…`), when delivered directly. Shown once; only its hash is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
    /// The pairing code, when delivered by pairing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairing: Option<PairingCode>,
}

/// Redeems a pairing code.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedeemPairingCode {
    /// The pairing code the administrator issued.
    pub code: String,
}

/// An agent's credential, shown once.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AgentCredential {
    /// The agent (`agt_…`).
    pub agent_id: String,
    /// The credential: send it as `Authorization: Bearer mr_agt_…`. Shown once.
    pub credential: String,
}

#[cfg(test)]
mod tests {
    use super::AgentState;

    #[test]
    fn every_agent_state_is_named_as_it_is_answered() {
        for state in AgentState::ALL {
            assert_eq!(serde_json::to_value(state).unwrap(), state.name());
        }
    }
}
