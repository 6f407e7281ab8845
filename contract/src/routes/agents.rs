//! Agents: the capability vocabulary, minting, pausing, resuming and revoking an agent,
//! pairing one, and the mailboxes a person could sponsor one for.

use crate::api::{
    Agent, AgentCredential, AgentList, CapabilityVocabulary, MailboxList, MintAgent, MintedAgent, PairingCode,
    RedeemPairingCode,
};
use crate::route::Method::{Get, Post};
use crate::route::{Authority, PathParameter, Refuses, Route, Tier};
use crate::route_id::RouteId;

use super::shared::{ADMIN, AGENTS_ARE_AN_ESCALATION_MAP, SPONSOR};

pub(super) fn list_agent_capabilities() -> Route {
    Route::new(RouteId::ListAgentCapabilities, Get, "/api/agent-capabilities", "list_agent_capabilities")
        .summary("The capability vocabulary")
        .description("Lists the capabilities an administrator can mint an agent with: what each lets an agent do, the routes it grants, what it requires on a mailbox, and whether it reaches message content.")
        .response::<CapabilityVocabulary>()
        .exception(Tier::Operator, "the vocabulary is a map of what an agent could be given: it serves the person minting one, not the agent")
        .authority(Authority::Member)
}

pub(super) fn list_agents() -> Route {
    Route::new(RouteId::ListAgents, Get, "/api/agents", "list_agents")
        .summary("List agents")
        .description("Lists every agent with its sponsor, state and ceiling, held of total per capability.")
        .response::<AgentList>()
        .exception(Tier::Operator, AGENTS_ARE_AN_ESCALATION_MAP)
        .authority(ADMIN)
}

pub(super) fn mint_agent() -> Route {
    Route::new(RouteId::MintAgent, Post, "/api/agents", "mint_agent")
        .summary("Mint an agent")
        .description("Creates an agent that acts in its own right under a named sponsor's authority. The chosen capabilities are expanded to routes, which are pinned: no later change widens this agent. Each chosen mailbox grants the agent relations the sponsor holds there. The credential is shown once, or a pairing code (10 minutes, single use) is issued instead.")
        .request::<MintAgent>()
        .response::<MintedAgent>()
        .created()
        .tier(Tier::Operator)
        .refuses(const { &[
            Refuses::Forbidden("The sponsor does not hold a relation the agent was to hold on a mailbox."),
            Refuses::NotFound("The sponsor, or a mailbox named in `mailboxes`, does not exist."),
            Refuses::Conflict("The sponsor is disabled."),
        ] })
        .authority(ADMIN)
}

pub(super) fn get_agent() -> Route {
    Route::new(RouteId::GetAgent, Get, "/api/agents/:agentId", "get_agent")
        .summary("Show an agent")
        .description("Returns one agent: sponsor, state, its pinned ceiling as held of total per capability (and any pinned routes no current capability contains), and its mailbox relations.")
        .path_parameters(&[PathParameter::AgentId])
        .response::<Agent>()
        .exception(Tier::Operator, AGENTS_ARE_AN_ESCALATION_MAP)
        .authority(ADMIN)
}

pub(super) fn pause_agent() -> Route {
    Route::new(RouteId::PauseAgent, Post, "/api/agents/:agentId/pause", "pause_agent")
        .summary("Pause an agent")
        .description("Stops an agent's credential working until it is resumed. Its ceiling and relations are kept.")
        .path_parameters(&[PathParameter::AgentId])
        .response::<Agent>()
        .tier(Tier::Operator)
        .refuses(const { &[Refuses::Conflict("The agent is revoked: nothing changes it any more.")] })
        .authority(SPONSOR)
}

pub(super) fn resume_agent() -> Route {
    Route::new(RouteId::ResumeAgent, Post, "/api/agents/:agentId/resume", "resume_agent")
        .summary("Resume an agent")
        .description("Lets a paused agent's credential work again.")
        .path_parameters(&[PathParameter::AgentId])
        .response::<Agent>()
        .tier(Tier::Operator)
        .refuses(const { &[Refuses::Conflict("The agent is revoked: nothing changes it any more.")] })
        .authority(SPONSOR)
}

pub(super) fn revoke_agent() -> Route {
    Route::new(RouteId::RevokeAgent, Post, "/api/agents/:agentId/revoke", "revoke_agent")
        .summary("Revoke an agent")
        .description("Ends an agent for good: its credential stops working on its next request and cannot be restored. Mint a new agent to replace it.")
        .path_parameters(&[PathParameter::AgentId])
        .response::<Agent>()
        .tier(Tier::Operator)
        .refuses(const { &[
            Refuses::Conflict("The agent is revoked: nothing changes it any more."),
        ] })
        .authority(ADMIN)
}

pub(super) fn issue_pairing_code() -> Route {
    Route::new(RouteId::IssuePairingCode, Post, "/api/agents/:agentId/pairing-code", "issue_pairing_code")
        .summary("Issue a pairing code")
        .description("Issues a short-lived, single-use code the agent's software redeems for a new credential, so nobody has to copy the credential by hand. Redeeming it replaces any credential the agent had.")
        .path_parameters(&[PathParameter::AgentId])
        .response::<PairingCode>()
        .created()
        .tier(Tier::Operator)
        .refuses(const { &[
            Refuses::Conflict("The agent is revoked: nothing changes it any more."),
        ] })
        .authority(ADMIN)
}

pub(super) fn redeem_pairing_code() -> Route {
    Route::new(RouteId::RedeemPairingCode, Post, "/api/agents/pair", "redeem_pairing_code")
        .summary("Redeem a pairing code")
        .description("Exchanges a pairing code for the agent's credential. Needs no other authentication: the code is the credential, and it works once, within its 10 minutes.")
        .request::<RedeemPairingCode>()
        .response::<AgentCredential>()
        .tier(Tier::Operator)
        .withheld_because("it is how an agent's software gets its credential, over REST with no credential yet (see Connecting); it is not a tool to call with one")
        .refuses(const { &[
            Refuses::WrongSecret("The code is not one the node issued, has expired, or was already used."),
            Refuses::TooManyAttempts("Too many wrong codes from this address within the window."),
        ] })
        .authority(Authority::Public)
}

pub(super) fn list_person_mailboxes() -> Route {
    Route::new(RouteId::ListPersonMailboxes, Get, "/api/people/:personId/mailboxes", "list_person_mailboxes")
        .summary("What a person holds on each mailbox")
        .description("Lists every mailbox with the relations the person holds on it (directly or through a team): what they could sponsor an agent for.")
        .path_parameters(&[PathParameter::PersonId])
        .response::<MailboxList>()
        .exception(Tier::Operator, "a person's mailboxes and relations are a map of how to escalate: they serve the administrator minting an agent, not an agent")
        .authority(ADMIN)
}
