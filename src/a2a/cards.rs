//! Agent cards: each agent's, and the node's own at its origin, in the A2A
//! version asked for (decision 0031).
//!
//! A card is read before any version is agreed, so it is A2A 1.0's, whose
//! interfaces each name the version spoken there, unless the request asks for
//! 0.3 (`A2A-Version: 0.3`, as a header or the query parameter); each version's
//! card carries that version's fields only. The node's card names an agent only
//! when its owner listed it there: an agent's id and name are its owner's to
//! give, and nobody else may list the node's agents.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{
    A2aAgentCard, A2aCapabilities, A2aCard, A2aInterface, A2aLegacyAgentCard, A2aLegacyCapabilities, A2aSkill,
};
use serde_json::json;

use super::rpc::Version;
use crate::agents;
use crate::core::context::Context;
use crate::core::crypto::sha256_hex;
use crate::core::http::Response;
use crate::core::refusal::Refusal;
use crate::messaging::{self, ListedAgent};

/// How long a cache may keep a card: an agent renamed or revoked shows within
/// five minutes, and a revoked agent's calls are refused at once anyway.
const CARD_MAX_AGE_SECONDS: u32 = 300;

const CREDENTIAL: &str = "An mr_agt_ agent credential, or a person's access token, of this node.";

/// The media types every endpoint reads and answers with: JSON and text.
fn modes() -> Vec<String> {
    vec!["text/plain".into(), "application/json".into()]
}

/// What a card says, whichever version it is written in.
struct Described {
    name: String,
    description: String,
    /// The JSON-RPC endpoint.
    endpoint: String,
    skills: Vec<A2aSkill>,
    /// Whether the endpoint streams a task's updates: an agent's does; the
    /// node's takes no tasks.
    streaming: bool,
}

/// The version a card is asked for in: 0.3 only when asked for by name.
fn asked_version(context: &Context<'_>) -> Version {
    let request = context.request();
    let parameter = context.query("A2A-Version");
    let asked = request.header("a2a-version").or(parameter).is_some_and(|asked| !asked.trim().is_empty());
    match Version::asked(request, parameter) {
        Ok(Version::V03) if asked => Version::V03,
        _ => Version::V1,
    }
}

fn card_in(version: Version, described: Described) -> A2aCard {
    let Described { name, description, endpoint, skills, streaming } = described;
    match version {
        Version::V1 => A2aCard::Current(A2aAgentCard {
            name,
            description,
            supported_interfaces: [Version::V1, Version::V03]
                .map(|spoken| A2aInterface {
                    url: endpoint.clone(),
                    protocol_binding: "JSONRPC".into(),
                    protocol_version: spoken.name().into(),
                })
                .into(),
            version: env!("CARGO_PKG_VERSION").into(),
            // An endpoint that takes tasks streams them and pushes them.
            capabilities: A2aCapabilities { streaming, push_notifications: streaming, extended_agent_card: false },
            security_schemes: json!({ "bearer": { "httpAuthSecurityScheme": { "scheme": "Bearer", "description": CREDENTIAL } } }),
            security_requirements: vec![json!({ "schemes": { "bearer": { "list": [] } } })],
            default_input_modes: modes(),
            default_output_modes: modes(),
            skills,
        }),
        Version::V03 => A2aCard::Legacy(A2aLegacyAgentCard {
            protocol_version: "0.3.0".into(),
            name,
            description,
            url: endpoint,
            preferred_transport: "JSONRPC".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            capabilities: A2aLegacyCapabilities { streaming, push_notifications: streaming },
            security_schemes: json!({ "bearer": { "type": "http", "scheme": "bearer", "description": CREDENTIAL } }),
            security: vec![json!({ "bearer": [] })],
            default_input_modes: modes(),
            default_output_modes: modes(),
            skills,
        }),
    }
}

/// A card as HTTP: one per version asked for, which caches keep apart, kept
/// five minutes and tagged by its content.
fn answered(context: &Context<'_>, card: &A2aCard) -> Result<Response, Refusal> {
    let body = serde_json::to_vec(card).map_err(|error| context.internal(error))?;
    let tag = sha256_hex(&body);
    let mut response = context.json(card);
    // A card is public and the same for everyone who asks in one version: it
    // may be kept, unlike every other answer (A2A 1.0 §8.6).
    response.headers.retain(|(name, _)| !name.eq_ignore_ascii_case("cache-control"));
    Ok(response
        .with_header("vary", "A2A-Version")
        .with_header("cache-control", format!("public, max-age={CARD_MAX_AGE_SECONDS}"))
        .with_header("etag", format!("\"{}\"", &tag[..32])))
}

/// Where an agent's card is.
pub fn agent_card_url(origin: &str, agent_id: &str) -> String {
    format!("{origin}/a2a/{agent_id}/.well-known/agent-card.json")
}

/// `GET /a2a/:agentId/.well-known/agent-card.json`.
pub async fn agent_card(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let agent_id = context.path(PathParameter::AgentId)?.to_string();
    let agent = agents::unrevoked_agent_name(&agent_id);
    let [agent] = context.read_array([agent]).await?;
    let Some(name) = agent.first().and_then(|row| row.text("name").ok()) else {
        return Err(Refusal::not_found("agent", &agent_id));
    };
    let origin = context.config().origin_of(context.request()).to_string();
    let card = card_in(
        asked_version(context),
        Described {
            description: format!(
                "{name}, an agent on a Mailroom node. Send it a request: it is stored durably and delivered at least once, and the agent's reply becomes the task's artifact. Stream a send, or subscribe to a task, to be told as it changes."
            ),
            name,
            endpoint: format!("{origin}/a2a/{agent_id}"),
            skills: vec![A2aSkill {
                id: "requests".into(),
                name: "Requests".into(),
                description:
                    "Takes a request as text or JSON and answers it when it can; the answer may take minutes or days."
                        .into(),
                tags: vec!["mailroom".into(), "requests".into()],
            }],
            streaming: true,
        },
    );
    answered(context, &card)
}

/// `GET /.well-known/agent-card.json`: the node's card, naming the agents
/// whose owners listed them there.
pub async fn node_card(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let [listed] = context.read_array([messaging::listed_on_node_card()]).await?;
    let listed: Vec<ListedAgent> = listed.decode_all().map_err(|error| context.internal(error))?;
    let origin = context.config().origin_of(context.request()).to_string();
    let host = origin.split("://").nth(1).unwrap_or(&origin).to_string();
    let mut skills = vec![A2aSkill {
        id: "agents".into(),
        name: "Agents on this node".into(),
        description: format!(
            "Each agent on this node takes A2A requests at its own endpoint, {origin}/a2a/{{agentId}}, and describes itself in its own card, {origin}/a2a/{{agentId}}/.well-known/agent-card.json. The other skills here are the agents whose owners listed them; any other agent is reached by the card its owner gives."
        ),
        tags: vec!["mailroom".into(), "directory".into()],
    }];
    skills.extend(listed.into_iter().map(|agent| A2aSkill {
        description: format!(
            "{}: send it requests at {origin}/a2a/{}; its card is {}.",
            agent.name,
            agent.id,
            agent_card_url(&origin, &agent.id)
        ),
        id: agent.id,
        name: agent.name,
        tags: vec!["agent".into()],
    }));
    let card = card_in(asked_version(context), Described {
        name: format!("Mailroom at {host}"),
        description: "A Mailroom node, where one organisation's people and agents share inboxes. The node itself takes no tasks: its agents do, each at its own endpoint. Calls need a credential of this node.".into(),
        endpoint: format!("{origin}/a2a"),
        skills,
        streaming: false,
    });
    answered(context, &card)
}
