//! Why a route is withheld: from every agent, or from every machine.
//!
//! Two questions with one home, read through the registry
//! (`Registry::withheld_from_agents_because`, `Registry::never_offered_because`)
//! by the Agent Skill, the MCP server's answer to a withheld tool and the refusal
//! an agent meets outside its ceiling, so the three say the same thing. A route's
//! own words (its exception's reason, or `withheld_because`) come first; the rest
//! is derived from its tier and authority, so no route is withheld without a reason.

use crate::route::{Authority, Exposure, Route, Tier};

/// Why an agent is never given `route` (of `tier`), in a sentence an agent can act on.
pub(crate) fn from_agents(route: &Route, tier: Tier) -> String {
    if let Exposure::Exception { reason, .. } = route.exposure {
        return sentence(reason);
    }
    if let Some(reason) = route.withheld_because {
        return sentence(reason);
    }
    match (tier, route.authority) {
        (Tier::Governed, _) => {
            "It needs a second person, or cannot be undone; an agent acts as its sponsor, so it can never be that second person.".into()
        }
        (Tier::Surface, _) => "It is the machine surface itself, not something to do through it.".into(),
        (_, Authority::Organization(relation)) => format!(
            "It needs {} on the organisation, which is never given to an agent; ask a person who holds it.",
            relation.name()
        ),
        (_, Authority::Requester(relation)) => format!(
            "It reads what a person requested with {} on the organisation, which is never given to an agent, so no agent requests anything it could read.",
            relation.name()
        ),
        (_, Authority::Filtered { machine_visible: false, .. }) => {
            "It lists decisions that need a second person; an agent acts as its sponsor, so for an agent it would always be empty.".into()
        }
        (_, Authority::Sponsor { .. }) => {
            "It is an agent's owner plane, for its sponsor or an administrator; an agent is neither.".into()
        }
        (_, Authority::SelfOrAdmin { .. }) => {
            "It shows a person's own record to that person or to an administrator; an agent is neither.".into()
        }
        (Tier::Operator, Authority::Public) => {
            "It is called with no credential, to get one; holding a credential, you have no use for it.".into()
        }
        (Tier::Operator, _) => {
            "It manages a person's own session or credentials, which only that person does, signed in themselves.".into()
        }
        (Tier::Read | Tier::Act, _) => "It is not offered to agents.".into(),
    }
}

/// Why no machine is offered `route` (of `tier`), not even a signed-in person's
/// client; `None` for the tiers that are offered by who asks.
pub(crate) fn from_every_machine(route: &Route, tier: Tier) -> Option<String> {
    const NO_MACHINE: &str = "It is never offered to a machine, even one a person signed in with.";
    if let Exposure::Exception { reason, .. } = route.exposure {
        return (!tier.is_offerable()).then(|| format!("{} {NO_MACHINE}", sentence(reason)));
    }
    if route.authority == Authority::Source {
        return Some(
            "It is a reminder source's own route, called over REST with the source's `mr_src_` credential. It is never \
             offered to a machine over MCP."
                .into(),
        );
    }
    match tier {
        Tier::Read | Tier::Act => None,
        Tier::Governed => Some(format!("It needs a second person, or cannot be undone. {NO_MACHINE}")),
        Tier::Operator => {
            Some(format!("It sets up or administers the node: its people, access or credentials. {NO_MACHINE}"))
        }
        Tier::Surface => Some("It is the MCP endpoint itself, not something to do through it.".into()),
    }
}

/// A reason written as a clause, as a sentence: capitalised, one full stop.
fn sentence(reason: &str) -> String {
    let mut characters = reason.chars();
    let first = characters.next().map(|c| c.to_uppercase().collect::<String>()).unwrap_or_default();
    format!("{first}{}.", characters.as_str().trim_end_matches('.'))
}

#[cfg(test)]
mod tests {
    use crate::registry::registry;

    #[test]
    fn every_route_withheld_from_agents_has_a_specific_reason_and_no_grantable_one_does() {
        let registry = registry();
        for route in registry.routes() {
            match registry.withheld_from_agents_because(route.id) {
                Some(reason) => {
                    assert!(reason.len() > 30 && reason != "It is not offered to agents.", "{}: {reason}", route.path)
                }
                None => assert!(registry.is_grantable(route.id), "{} is withheld without a reason", route.path),
            }
        }
    }

    #[test]
    fn every_route_no_machine_is_offered_says_why_and_no_other_route_does() {
        let registry = registry();
        for route in registry.routes() {
            match registry.never_offered_because(route.id) {
                Some(reason) => {
                    assert!(
                        !registry.is_offered_to_machines(route.id),
                        "{}: an offerable route is given a reason to withhold it",
                        route.tool
                    );
                    assert!(reason.len() > 40 && reason.ends_with('.'), "{}: {reason}", route.tool);
                }
                None => assert!(
                    registry.is_offered_to_machines(route.id),
                    "{} is never offered, and says no reason why",
                    route.tool
                ),
            }
        }
        let reason = registry.never_offered_because(crate::RouteId::ListAuditEntries).unwrap_or_default();
        assert!(reason.starts_with("The audit trail"), "an exception gives its own reason first: {reason}");
    }
}
