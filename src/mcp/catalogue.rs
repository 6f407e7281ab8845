//! Which tools a caller sees, and why a real route is not among them.
//!
//! An agent sees the grantable routes pinned to it, a person the offerable
//! routes they could complete, read in the one round trip `tools/list` may cost.
//! A stranger never gets this far: the endpoint needs a credential (decision 0026). A route withheld before any database fact is known
//! is a `WithheldTool`, whose refusal (beside it) a call to it carries.

use std::sync::OnceLock;

use mailroom_contract::relation::ORGANIZATION_OBJECT;
use mailroom_contract::{Authority, Relation, Route, RouteId, Tier, registry};
use serde_json::Value;

use super::errors::{RpcError, refused};
use crate::authz::{self, AuthorityError, tuples};
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::refusal::Refusal;
use crate::core::storage::QueryResult;

/// The catalogue as the contract generates it (`contract/tools.json`, held to
/// the contract by its generated-artifacts test): every offerable tool's
/// definition, one a line, as compact JSON.
const CATALOGUE: &str = include_str!("../../contract/tools.json");

/// One offerable tool: its definition's bytes as generated, and the definition
/// read, once, the first time a call is held to its schema.
struct Tool {
    route_id: RouteId,
    served: &'static str,
    read: OnceLock<Option<Value>>,
}

/// Every offerable tool, in the contract's order, sliced out of the embedded
/// catalogue once per isolate (decision 0034). Nothing is parsed: the lines are
/// the offerable routes in the registry's order (a test holds them to it), and
/// a line that does not name its route's tool is left out rather than served
/// under another name.
fn catalogue() -> &'static [Tool] {
    static TOOLS: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let registry = registry();
        let offered = registry.routes().iter().filter(|route| registry.is_offered_to_machines(route.id));
        let lines =
            CATALOGUE.lines().map(|line| line.strip_suffix(',').unwrap_or(line)).filter(|line| line.starts_with('{'));
        offered
            .zip(lines)
            .filter(|(route, line)| line.contains(&format!("\"name\":\"{}\"", route.tool)))
            .map(|(route, served)| Tool { route_id: route.id, served, read: OnceLock::new() })
            .collect()
    })
}

/// The definition `tools/list` serves for a route, if it is offerable: read
/// from its bytes the first time this isolate needs it.
pub(super) fn definition_of(route_id: RouteId) -> Option<&'static Value> {
    let tool = catalogue().iter().find(|tool| tool.route_id == route_id)?;
    tool.read.get_or_init(|| serde_json::from_str(tool.served).ok()).as_ref()
}

/// Why a route that exists is not on a caller's list, as far as that can be
/// known without asking the database. A call to it is the protocol error -32602
/// carrying the four-part refusal this maps to (below), so a model
/// meeting the absence reads why rather than going to look for a way round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WithheldTool {
    /// The caller is an agent and no agent is ever given the route (its tier, or
    /// an authority no machine can be provisioned for). Answered as the REST call
    /// would be: the route is outside every agent's ceiling, and why. The
    /// route's own ceiling check refuses it too, whatever the database holds
    /// (no ceiling ever holds such a route), so the call is re-entered as it is.
    NotForAgents(RouteId),
    /// The route's tier (governed, operator, surface) is offered to no machine,
    /// not even a signed-in person's client. Over REST it might succeed, so the
    /// route must not run: its refusal is decided before its handler.
    NeverOffered(RouteId),
}

impl WithheldTool {
    /// Whether the route's own checks refuse the call whatever the database
    /// holds, so the dispatcher re-entered as for any call records exactly what
    /// REST would; otherwise the route must not run at all.
    pub fn refused_by_the_route(self) -> bool {
        matches!(self, WithheldTool::NotForAgents(_))
    }

    /// The route withheld.
    pub fn route_id(self) -> RouteId {
        match self {
            WithheldTool::NotForAgents(id) | WithheldTool::NeverOffered(id) => id,
        }
    }
}

impl From<WithheldTool> for Refusal {
    fn from(error: WithheldTool) -> Refusal {
        let registry = registry();
        let route = registry.route(error.route_id());
        let tier = registry.tier(route.id);
        match error {
            // A route no agent is ever given says why, whoever the agent is.
            WithheldTool::NotForAgents(_) => AuthorityError::OutsideCeiling {
                tool: route.tool,
                never_offered_because: registry.withheld_from_agents_because(route.id),
                connected_app: false,
            }
            .into(),
            WithheldTool::NeverOffered(_) => Refusal::new(
                403,
                "never_offered",
                format!("{} is not offered as a tool to anyone.", route.tool),
                registry
                    .never_offered_because(route.id)
                    .unwrap_or_else(|| "Its tier is never offered to a machine.".into()),
                if tier == Tier::Surface {
                    "Call the tools that tools/list offers; each one is a route of the node."
                } else {
                    "A person does this themselves, signed in to Mailroom's web interface; ask the person you are working for."
                },
            ),
        }
    }
}

/// Whether, and why, a route is off a caller's list before any database fact is
/// known. `Organization` routes are on a person's list only if they hold the
/// relation, which the caller of this function settles.
pub(super) fn withheld_without_io(route: &Route, tier: Tier, caller: &Caller) -> Option<WithheldTool> {
    let grantable = registry().is_grantable(route.id);
    match caller {
        // The machine surface itself is no tool for anyone, and no ceiling
        // check refuses an agent it (a surface is not a capability), so it is
        // never offered rather than outside the agent's ceiling.
        _ if tier == Tier::Surface => Some(WithheldTool::NeverOffered(route.id)),
        Caller::Agent { .. } if !grantable => Some(WithheldTool::NotForAgents(route.id)),
        Caller::Agent { .. } => None,
        _ if !registry().is_offered_to_machines(route.id) => Some(WithheldTool::NeverOffered(route.id)),
        Caller::Person { .. } => None,
        // The endpoint refuses a stranger and a source's credential before any catalogue.
        Caller::Stranger | Caller::Source { .. } | Caller::Peer { .. } => Some(WithheldTool::NeverOffered(route.id)),
    }
}

/// What a person holds, as far as their catalogue needs to know: the relations
/// on the organisation, and each distinct set of relations held together on
/// some mailbox.
struct Held {
    on_organization: Vec<Relation>,
    on_mailboxes: Vec<Vec<Relation>>,
}

impl Held {
    /// Whether what is held could meet `authority` somewhere: an organisation
    /// relation held, or a mailbox where the route's relations are held together.
    /// Every other authority depends on no tuple the catalogue could read (or on
    /// the row or person the call names), so the route is offered.
    fn could_complete(&self, authority: &Authority) -> bool {
        match authority {
            Authority::Organization(relation) | Authority::Requester(relation) => {
                self.on_organization.contains(relation)
            }
            Authority::Mailbox { .. } => self.on_mailboxes.iter().any(|held| authority.met_on_mailbox(held)),
            _ => true,
        }
    }
}

/// Each row's `column`, a comma-separated list of relation names, as relations.
fn relation_lists<'result>(
    result: &'result QueryResult,
    column: &'result str,
) -> impl Iterator<Item = Vec<Relation>> + 'result {
    result
        .rows
        .iter()
        .filter_map(move |row| row.text(column).ok())
        .map(|names| names.split(',').filter_map(Relation::parse).collect())
}

/// The tools this caller may see, in the contract's order, each as the bytes of
/// its definition, to be spliced into the answer as they are: for a person the
/// offerable routes they can complete; for an agent the grantable routes within
/// its pinned ceiling. What it takes to know
/// that travels in one round trip with the caller's own authentication.
pub(super) async fn list_tools(context: &mut Context<'_>) -> Result<Vec<&'static str>, RpcError> {
    let caller = context.caller().clone();
    let (held, ceiling): (Option<Held>, Option<Vec<String>>) = match &caller {
        Caller::Person { person_id, .. } => {
            let holder = tuples::Holder::Person(person_id.clone());
            let [organization, mailboxes] = context
                .read_array([
                    tuples::relations_on(&holder, ORGANIZATION_OBJECT),
                    tuples::mailbox_relation_sets(&holder),
                ])
                .await
                .map_err(refused)?;
            let held = Held {
                on_organization: relation_lists(&organization, "relation").flatten().collect(),
                on_mailboxes: relation_lists(&mailboxes, "held").collect(),
            };
            (Some(held), None)
        }
        Caller::Agent { agent_id, .. } => {
            let [pinned] = context.read_array([authz::ceiling_of(agent_id)]).await.map_err(refused)?;
            (None, Some(authz::ceiling_tools(&pinned)))
        }
        // The endpoint refuses a stranger and a source's credential before any catalogue.
        Caller::Stranger | Caller::Source { .. } | Caller::Peer { .. } => return Err(refused(Refusal::internal())),
    };
    let registry = registry();
    let config = context.config();
    Ok(catalogue()
        .iter()
        .filter(|tool| {
            let route = registry.route(tool.route_id);
            route.feature.is_none_or(|feature| config.runs(feature))
                && withheld_without_io(route, registry.tier(route.id), &caller).is_none()
                && ceiling.as_ref().is_none_or(|pinned| pinned.iter().any(|tool| tool == route.tool))
                && held.as_ref().is_none_or(|held| held.could_complete(&route.authority))
        })
        .map(|tool| tool.served)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generated_catalogue_holds_every_offerable_route_and_reads_back_whole() {
        let offered: Vec<RouteId> = registry()
            .routes()
            .iter()
            .filter(|route| registry().is_offered_to_machines(route.id))
            .map(|route| route.id)
            .collect();
        let served: Vec<RouteId> = catalogue().iter().map(|tool| tool.route_id).collect();
        assert_eq!(served, offered, "contract/tools.json is the catalogue of every offerable route, in order");
        let derived = mailroom_contract::tools::catalogue(registry());
        let read: Vec<&Value> = catalogue().iter().map(|tool| definition_of(tool.route_id).unwrap()).collect();
        assert_eq!(serde_json::to_value(read).unwrap(), derived, "and exactly what the contract derives");
        for (tool, definition) in catalogue().iter().zip(derived.as_array().unwrap()) {
            assert_eq!(tool.served, serde_json::to_string(definition).unwrap(), "served as compact JSON, one a line");
        }
    }
}
