//! The Agent Skill (`skills/mailroom/SKILL.md`) and the route table
//! (`docs/routes.md`), generated from the registry.
//!
//! The Skill says what an agent can be given, by capability, and what is withheld
//! with the reason for each: an agent that meets an unexplained absence infers a
//! gap and goes looking; one that reads why it stops. The reasons are the
//! registry's (`Registry::withheld_from_agents_because`), so a route cannot be
//! withheld without one, and the refusals say the same.

use std::fmt::Write;

use crate::capabilities::{CAPABILITIES, capability_of};
use crate::registry::Registry;
use crate::route::{Exposure, PathParameter, Route, Tier};
use crate::tools::argument_name;

const GENERATED: &str = "<!-- Generated from the contract by `cargo run -p mailroom-contract --bin generate`; edit contract/src, not this file. -->";

fn route_cell(route: &Route) -> String {
    format!("`{} {}`", route.method.as_str(), route.path)
}

/// `skills/mailroom/SKILL.md`.
pub fn skill(registry: &Registry) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "---");
    let _ = writeln!(out, "name: mailroom");
    let _ = writeln!(
        out,
        "description: Work with a Mailroom node (an organisation's shared mailboxes, with dual-control outbound mail) \
         as an agent with an mr_agt_ credential. Use it to connect, to learn what each operation does and which \
         capability grants it, and to learn which acts are withheld from agents and why."
    );
    let _ = writeln!(out, "---");
    let _ = writeln!(out);
    let _ = writeln!(out, "{GENERATED}");
    let _ = writeln!(out);
    let _ = writeln!(out, "# Mailroom");
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Mailroom is an organisation's mail node, one Cloudflare Worker on the organisation's own account. \
         People and agents share inboxes under one authority model. As an agent (`agt_…`) you act in your own \
         right under a named person's authority (your sponsor): on any mailbox you can do only what your \
         capabilities allow **and** what both you and your sponsor hold there. If your sponsor loses a \
         relation, you lose it on your next request."
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "## Connecting");
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "- **Your credential** (`mr_agt_…`) is shown once, when an administrator mints you. If you were given a \
         pairing code instead, redeem it once, within 10 minutes and with no other authentication: \
         `POST https://<node>/api/agents/pair` with `{{\"code\": \"…\"}}` answers `{{\"credential\": \"mr_agt_…\"}}`. \
         Keep the credential as a secret; a new pairing code replaces it."
    );
    let _ = writeln!(
        out,
        "- **MCP**: the node's MCP server is `POST https://<node>/mcp` (Streamable HTTP, JSON responses; protocol \
         revisions 2025-06-18 and 2025-11-25 through `initialize`, and 2026-07-28 statelessly). Send \
         `Authorization: Bearer <credential>`. `tools/list` shows exactly the tools your credential may use. \
         With Claude Code: `claude mcp add --transport http mailroom https://<node>/mcp --header \"Authorization: Bearer <credential>\"`."
    );
    let _ = writeln!(
        out,
        "- **OAuth** (for MCP clients that connect only that way, such as connectors): without a credential, \
         `/mcp` answers 401 with `WWW-Authenticate: Bearer resource_metadata=\"https://<node>/.well-known/oauth-protected-resource/mcp\"`. \
         The node is its own authorization server (`/.well-known/oauth-authorization-server`): register at \
         `/oauth/register`, send the person to `/oauth/authorize` with PKCE (S256) and `resource=https://<node>/mcp`; \
         they sign in and choose what you may do, which mints you as an agent they sponsor. Your access token works \
         at `/mcp` only; refresh tokens work once each, and one presented twice ends the grant."
    );
    let _ = writeln!(
        out,
        "- **REST**: the same operations are the node's routes, with the same header. The OpenAPI 3.1 document \
         (`contract/openapi.json` in the repository) describes every route, parameter and answer; a tool's name is \
         its route's `operationId`."
    );
    let mailbox = PathParameter::MailboxId;
    let _ = writeln!(
        out,
        "- **Tool arguments** are the route's path parameters, its query parameters and its body's fields side by \
         side, every one in snake_case: the path's `{{{}}}` is the argument `{}`. A call that names an argument \
         the tool's input schema does not declare, or leaves out one it requires, is refused with JSON-RPC -32602 \
         naming each (the four-part refusal is in `data`); a value the route cannot use is the route's refusal, as \
         a tool result.",
        mailbox.name(),
        argument_name(mailbox)
    );
    let _ = writeln!(
        out,
        "- **Refusals**: every 4xx answer is `{{\"error\": {{\"code\", \"message\", \"reason\", \"fix\"}}}}`. \
         Read `fix`: it says what would change the answer. An object you may not see answers exactly like one \
         that does not exist (404)."
    );
    let _ = writeln!(out, "- **Audit**: every change you make is recorded under your id and your sponsor's.");
    let _ = writeln!(out);
    let _ = writeln!(out, "## What an agent can be given, by capability");
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "An administrator mints you with capabilities; their routes are pinned to you then, so a capability \
         that grows later does not grow you. Requirements are relations that you and your sponsor must both hold \
         on a mailbox for the capability to work there."
    );
    for capability in CAPABILITIES {
        let requirements = capability.requirements(registry);
        let requires = if requirements.is_empty() {
            "nothing on a mailbox".to_string()
        } else {
            requirements.iter().map(|relation| format!("`{}`", relation.name())).collect::<Vec<_>>().join(", ")
        };
        let _ = writeln!(out);
        let _ = writeln!(out, "### `{}`: {}", capability.name, capability.summary);
        let _ = writeln!(out);
        let _ = writeln!(out, "{}", capability.description);
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "Requires: {requires}. Reaches message content: {}.",
            if capability.reaches_content(registry) { "yes" } else { "no" }
        );
        // A capability's routes share their feature (a test holds them to it).
        if let Some(feature) = capability.routes.first().and_then(|id| registry.route(*id).feature) {
            let _ = writeln!(
                out,
                "\nOnly where the node runs {} (`{}`): elsewhere these tools are not offered, and their routes \
                 answer 404 `feature_disabled`.",
                feature.describe(),
                feature.variable()
            );
        }
        let _ = writeln!(out);
        let _ = writeln!(out, "| tool | route | what it does |");
        let _ = writeln!(out, "|---|---|---|");
        for id in capability.routes {
            let route = registry.route(*id);
            let _ = writeln!(out, "| `{}` | {} | {} |", route.tool, route_cell(route), route.description);
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "## What is withheld, and why");
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "These routes exist but are never offered to an agent. Do not look for a way around them: each is \
         withheld by decision, for the reason given. Ask a person when one is what the work needs."
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "| tool | route | why it is withheld |");
    let _ = writeln!(out, "|---|---|---|");
    for route in registry.routes().iter().filter(|route| !registry.is_grantable(route.id)) {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            route.tool,
            route_cell(route),
            registry.withheld_from_agents_because(route.id).unwrap_or_default()
        );
    }
    out
}

/// `docs/routes.md`: every route with its tier, authority and capability, and the
/// counts by tier. The only place a count of routes is written.
pub fn route_table(registry: &Registry) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Routes");
    let _ = writeln!(out);
    let _ = writeln!(out, "{GENERATED}");
    let _ = writeln!(out);
    let _ = writeln!(out, "## By tier");
    let _ = writeln!(out);
    let _ = writeln!(out, "| tier | offered to machines | routes | grantable |");
    let _ = writeln!(out, "|---|---|---|---|");
    for tier in [Tier::Read, Tier::Act, Tier::Governed, Tier::Operator, Tier::Surface] {
        let routes: Vec<&Route> =
            registry.routes_with_tiers().filter(|(_, t)| *t == tier).map(|(route, _)| route).collect();
        let grantable = routes.iter().filter(|route| registry.is_grantable(route.id)).count();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            tier.as_str(),
            if tier.is_offerable() { "yes" } else { "no" },
            routes.len(),
            grantable
        );
    }
    let _ = writeln!(out, "| all | | {} | {} |", registry.routes().len(), registry.grantable_routes().count());
    let _ = writeln!(out);
    let _ = writeln!(out, "## Every route");
    let _ = writeln!(out);
    let _ = writeln!(out, "| route | tool | tier | who may call it | capability |");
    let _ = writeln!(out, "|---|---|---|---|---|");
    for (route, tier) in registry.routes_with_tiers() {
        let capability =
            capability_of(route.id).map_or("—".to_string(), |capability| format!("`{}`", capability.name));
        let tier_cell = match route.exposure {
            Exposure::Exception { .. } => format!("{} (exception)", tier.as_str()),
            _ => tier.as_str().to_string(),
        };
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {} | {} |",
            route_cell(route),
            route.tool,
            tier_cell,
            route.authority.describe(),
            capability
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "## Exceptions to the read tier");
    let _ = writeln!(out);
    for route in registry.routes() {
        if let Exposure::Exception { tier, reason } = route.exposure {
            let _ = writeln!(out, "- {} is {}: {}.", route_cell(route), tier.as_str(), reason);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::registry;

    #[test]
    fn the_skill_lists_every_route_once_either_offered_or_withheld() {
        let registry = registry();
        let skill = skill(registry);
        for route in registry.routes() {
            let mentions = skill.matches(&format!("| `{}` |", route.tool)).count();
            assert_eq!(mentions, 1, "{} appears {mentions} times", route.tool);
        }
    }
}
