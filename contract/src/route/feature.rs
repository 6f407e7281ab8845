//! `Feature`: a part of the node an operator turns on, which the routes of it
//! name.

/// A part of the node an operator turns on (a `FEATURE_…` variable). Off, every
/// route of it refuses with `feature_disabled` before anything else is read,
/// and its tools are in no catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// Agent messaging and the A2A gateway (`FEATURE_AGENT_NETWORK`).
    AgentNetwork,
}

impl Feature {
    /// The variable that turns it on, set to `true` in `wrangler.toml`.
    pub fn variable(self) -> &'static str {
        match self {
            Feature::AgentNetwork => "FEATURE_AGENT_NETWORK",
        }
    }

    /// What it is, in a few words.
    pub fn describe(self) -> &'static str {
        match self {
            Feature::AgentNetwork => "agent messaging",
        }
    }
}
