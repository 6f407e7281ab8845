//! The A2A gateway's agent cards (decisions 0019 and 0031): an agent's card in
//! the shape of the A2A version it was asked for, and the node's own card.
//!
//! Each version's card carries that version's fields only: a client reading
//! A2A 1.0 as protocol buffers' JSON refuses a field it does not know, so a
//! 1.0 card with 0.3's `url` beside its interfaces is not a 1.0 card.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An agent card, in the A2A version the request asked for (`A2A-Version`,
/// header or query parameter): 1.0 unless 0.3 was asked for.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum A2aCard {
    /// A2A 1.0.
    Current(A2aAgentCard),
    /// A2A 0.3.
    Legacy(A2aLegacyAgentCard),
}

/// An A2A 1.0 agent card (`AgentCard`). Only the fields the gateway fills are described.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct A2aAgentCard {
    /// The agent's name.
    pub name: String,
    /// What the agent is, for another agent choosing it.
    pub description: String,
    /// Where and how to reach it, the preferred first.
    pub supported_interfaces: Vec<A2aInterface>,
    /// The card's version.
    pub version: String,
    /// What the endpoint supports.
    pub capabilities: A2aCapabilities,
    /// The credential the endpoint takes, by name (`bearer`).
    pub security_schemes: serde_json::Value,
    /// Which of `security_schemes` a call must satisfy.
    pub security_requirements: Vec<serde_json::Value>,
    /// The media types it reads.
    pub default_input_modes: Vec<String>,
    /// The media types it answers with.
    pub default_output_modes: Vec<String>,
    /// What it does; on the node's card, the agents whose owners listed them there.
    pub skills: Vec<A2aSkill>,
}

/// An A2A 1.0 interface of an agent card (`AgentInterface`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct A2aInterface {
    /// The endpoint.
    pub url: String,
    /// `JSONRPC`.
    pub protocol_binding: String,
    /// The A2A version spoken there: `1.0` or `0.3`.
    pub protocol_version: String,
}

/// What an A2A 1.0 endpoint supports (`AgentCapabilities`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct A2aCapabilities {
    /// Streaming (`SendStreamingMessage`, `SubscribeToTask`): not supported.
    pub streaming: bool,
    /// Push notifications: not supported.
    pub push_notifications: bool,
    /// An extended card for authenticated callers: none.
    pub extended_agent_card: bool,
}

/// A skill of an agent card (`AgentSkill`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct A2aSkill {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Words to find it by.
    pub tags: Vec<String>,
}

/// An A2A 0.3 agent card, for a client that asked for 0.3.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct A2aLegacyAgentCard {
    /// The A2A version of `url`: `0.3.0`.
    pub protocol_version: String,
    /// The agent's name.
    pub name: String,
    /// What the agent is, for another agent choosing it.
    pub description: String,
    /// The JSON-RPC endpoint.
    pub url: String,
    /// The transport at `url`: `JSONRPC`.
    pub preferred_transport: String,
    /// The card's version.
    pub version: String,
    /// What the endpoint supports.
    pub capabilities: A2aLegacyCapabilities,
    /// The credential the endpoint takes, by name (`bearer`), in 0.3's shape.
    pub security_schemes: serde_json::Value,
    /// Which of `security_schemes` a call must satisfy.
    pub security: Vec<serde_json::Value>,
    /// The media types it reads.
    pub default_input_modes: Vec<String>,
    /// The media types it answers with.
    pub default_output_modes: Vec<String>,
    /// What it does.
    pub skills: Vec<A2aSkill>,
}

/// What an A2A 0.3 endpoint supports.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct A2aLegacyCapabilities {
    /// Streaming (`message/stream`): not supported.
    pub streaming: bool,
    /// Push notifications: not supported.
    pub push_notifications: bool,
}
