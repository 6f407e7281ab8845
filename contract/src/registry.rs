//! The registry: every declared route, validated once, with the facts derived from
//! the declarations.
//!
//! Building the registry checks the rules a declaration cannot express in its
//! types (a tier for every changing route, a reason for every exception, tool
//! names real clients accept, parameters that match the path, words for every
//! parameter, refusals of the handler's own that can be true of the route). The process-wide registry panics on a violation, and the tests
//! build it, so a route that breaks a rule fails `cargo test` by name.

use std::collections::HashSet;
use std::fmt;
use std::sync::OnceLock;

use crate::relation::Relation;
use crate::route::{Authority, Produces, Route, Tier};
use crate::route_id::RouteId;
use crate::routes::declare;
use crate::statuses::{self, Answer};
use crate::withheld;

/// A declaration that breaks a rule of the contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContractError {
    /// `METHOD /path` of the offending route.
    pub route: String,
    /// What is wrong and what to decide.
    pub problem: String,
}

impl fmt::Display for ContractError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}: {}", self.route, self.problem)
    }
}

/// A validated set of routes.
#[derive(Debug)]
pub struct Registry {
    routes: Vec<Route>,
    tiers: Vec<Tier>,
}

/// The longest tool name the MCP clients we know of accept.
pub const MAXIMUM_TOOL_NAME_LENGTH: usize = 40;

impl Registry {
    /// Validates `routes` and derives their tiers, or names every broken rule.
    pub fn build(routes: Vec<Route>) -> Result<Registry, Vec<ContractError>> {
        let mut errors = Vec::new();
        let mut tiers = Vec::with_capacity(routes.len());
        let mut tools = HashSet::new();
        let mut endpoints = HashSet::new();
        for route in &routes {
            let mut problem = |problem: String| {
                errors.push(ContractError { route: describe(route), problem });
            };
            match route.derive_tier() {
                Ok(tier) => tiers.push(tier),
                Err(why) => {
                    problem(why.to_string());
                    tiers.push(Tier::Operator);
                }
            }
            if !route.authority_declared {
                problem(
                    "it does not say who may call it: declare .authority(…) (Member for any signed-in caller, \
                     ADMIN, a relation on the organisation, a mailbox's relations, Filtered, …)"
                        .to_string(),
                );
            }
            if !valid_tool_name(route.tool) {
                problem(format!(
                    "tool name `{}` must be 1 to {MAXIMUM_TOOL_NAME_LENGTH} characters of [a-z0-9_], starting with a letter",
                    route.tool
                ));
            }
            if !tools.insert(route.tool) {
                problem(format!("tool name `{}` is already used by another route", route.tool));
            }
            if !endpoints.insert((route.method, route.path)) {
                problem("another route already answers this method and path".to_string());
            }
            // Without the documents (the Worker's build), descriptions are not kept.
            let undescribed = cfg!(feature = "schemas") && route.description.trim().is_empty();
            if route.summary.trim().is_empty() || undescribed {
                problem(
                    "every route needs a summary and a description written for the model that reads them".to_string(),
                );
            }
            let named_in_path: Vec<&str> = route.path_parameter_names().collect();
            let declared: Vec<&str> = route.path_parameters.iter().map(|parameter| parameter.name()).collect();
            if named_in_path != declared {
                problem(format!(
                    "the path names parameters {named_in_path:?} but the declaration describes {declared:?}"
                ));
            }
            if let Some(parameter) =
                route.authority_parameter().filter(|parameter| !declared.contains(&parameter.name()))
            {
                problem(format!("its authority is judged on `{}`, which its path does not name", parameter.name()));
            }
            for refusal in statuses::problems(route) {
                problem(refusal);
            }
            for query in route.query_parameters {
                if query.describe().trim().is_empty() {
                    problem(format!("parameter `{}` has no description", query.name));
                }
                if named_in_path.contains(&query.name) {
                    problem(format!("query parameter `{}` has the same name as a path parameter", query.name));
                }
            }
        }
        let registry = Registry { routes, tiers };
        for route in &registry.routes {
            match route.withheld_because {
                Some(reason) if reason.trim().is_empty() => errors.push(ContractError {
                    route: describe(route),
                    problem: "its reason for being withheld from agents is empty".to_string(),
                }),
                Some(_) if registry.is_grantable(route.id) => errors.push(ContractError {
                    route: describe(route),
                    problem: "it says why it is withheld from agents, but its tier and authority make it grantable"
                        .to_string(),
                }),
                _ => {}
            }
        }
        if errors.is_empty() { Ok(registry) } else { Err(errors) }
    }

    /// Every route, in declaration order.
    pub fn routes(&self) -> &[Route] {
        &self.routes
    }

    /// Every route with its tier, in declaration order.
    pub fn routes_with_tiers(&self) -> impl Iterator<Item = (&Route, Tier)> {
        self.routes.iter().zip(self.tiers.iter().copied())
    }

    /// The route a `RouteId` names.
    pub fn route(&self, id: RouteId) -> &Route {
        // `RouteId::ALL` and the registry are built in the same order, so the
        // position is the index; the fallback search keeps a hand-built registry
        // (as in tests) correct.
        let position = id as usize;
        match self.routes.get(position) {
            Some(route) if route.id == id => route,
            _ => self
                .routes
                .iter()
                .find(|route| route.id == id)
                .unwrap_or_else(|| panic!("{id:?} is not in this registry")),
        }
    }

    /// The tier of the route a `RouteId` names.
    pub fn tier(&self, id: RouteId) -> Tier {
        let index = self.routes.iter().position(|route| route.id == id);
        index.map(|index| self.tiers[index]).unwrap_or(Tier::Operator)
    }

    /// Whether the route is a tool over MCP for anyone who may call it: its tier
    /// is offerable (read or act) and it is not a reminder source's own route,
    /// which a source calls over REST with its own credential.
    pub fn is_offered_to_machines(&self, id: RouteId) -> bool {
        self.tier(id).is_offerable() && self.route(id).authority != Authority::Source
    }

    /// Whether a machine may ever be offered the route: its tier is offerable
    /// (read or act) and its authority is one an agent can be provisioned for.
    pub fn is_grantable(&self, id: RouteId) -> bool {
        self.tier(id).is_offerable() && self.route(id).authority.machine_provisionable()
    }

    /// Every grantable route, in declaration order.
    pub fn grantable_routes(&self) -> impl Iterator<Item = &Route> {
        self.routes.iter().filter(|route| self.is_grantable(route.id))
    }

    /// The tools of the routes that act on one mailbox and that `held`, the
    /// relations held there, lets their holder call, in declaration order.
    pub fn tools_on_mailbox(&self, held: &[Relation]) -> Vec<&'static str> {
        self.routes.iter().filter(|route| route.authority.met_on_mailbox(held)).map(|route| route.tool).collect()
    }

    /// Whether a route's calls are recorded in the audit chain: every changing
    /// call except the machine surface (whose tool calls are recorded as the
    /// routes they re-enter), and every read that reaches message content. A
    /// `read` route answers a question and changes nothing whatever its method
    /// (a dry run is a POST), so it is recorded only if it reaches content. A
    /// route that stores nothing (`Route::stores_nothing`) has nothing to record.
    /// Opening a stream (`Produces::Live`) is recorded: who listened to what.
    pub fn is_audited(&self, id: RouteId) -> bool {
        let route = self.route(id);
        (!route.method.is_safe() && !matches!(self.tier(id), Tier::Surface | Tier::Read) && !route.stores_nothing)
            || route.reaches_content
            || route.produces == Produces::Live
    }

    /// Every status the route answers, success first, each with why: derived
    /// from its declaration and the refusals it declares. OpenAPI lists exactly
    /// these, and the tests fail on an answer outside them.
    pub fn answers(&self, id: RouteId) -> Vec<Answer> {
        statuses::answers(self.route(id), self.tier(id))
    }

    /// Why no agent is ever given a route, in a sentence an agent can act on;
    /// `None` for a grantable route. The Agent Skill's withheld table, the
    /// refusal an agent meets outside its ceiling and the MCP server's answer to
    /// a withheld tool all read it here.
    pub fn withheld_from_agents_because(&self, id: RouteId) -> Option<String> {
        (!self.is_grantable(id)).then(|| withheld::from_agents(self.route(id), self.tier(id)))
    }

    /// Why no MCP caller is offered a route, not even the client of a signed-in
    /// person who may call it over REST: its tier says a machine should not do it.
    /// `None` for the read and act tiers, whose routes are offered by who asks.
    pub fn never_offered_because(&self, id: RouteId) -> Option<String> {
        withheld::from_every_machine(self.route(id), self.tier(id))
    }

    /// The route a tool name names, if any.
    pub fn route_by_tool(&self, tool: &str) -> Option<&Route> {
        self.routes.iter().find(|route| route.tool == tool)
    }
}

fn describe(route: &Route) -> String {
    format!("{} {}", route.method.as_str(), route.path)
}

fn valid_tool_name(name: &str) -> bool {
    let mut characters = name.chars();
    let starts_with_letter = characters.next().is_some_and(|first| first.is_ascii_lowercase());
    starts_with_letter
        && name.len() <= MAXIMUM_TOOL_NAME_LENGTH
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The node's registry, built from every declaration on first use.
///
/// # Panics
/// On a declaration that breaks a rule of the contract, naming every one. The
/// contract's tests build it, so this cannot reach a deployed node.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let routes = RouteId::ALL.iter().map(|id| declare(*id)).collect();
        match Registry::build(routes) {
            Ok(registry) => registry,
            Err(errors) => {
                let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
                panic!("the contract breaks its own rules:\n{}", list.join("\n"))
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::{Exposure, Method};

    #[test]
    fn the_declared_contract_builds() {
        let registry = registry();
        assert_eq!(registry.routes().len(), RouteId::ALL.len());
        for id in RouteId::ALL {
            assert_eq!(registry.route(*id).id, *id);
        }
    }

    /// The one error the contract gives when one more route, a copy of `like` at
    /// `path` altered by `break_it`, is declared.
    fn the_error_for(like: RouteId, path: &'static str, break_it: impl FnOnce(&mut Route)) -> ContractError {
        let mut routes: Vec<Route> = RouteId::ALL.iter().map(|id| declare(*id)).collect();
        let mut broken = declare(like);
        broken.path = path;
        broken.tool = "broken_route";
        break_it(&mut broken);
        routes.push(broken);
        let mut errors = Registry::build(routes).expect_err("a broken route must not build");
        assert_eq!(errors.len(), 1, "{errors:?}");
        errors.remove(0)
    }

    #[test]
    fn an_unclassified_changing_route_fails_the_build_by_name() {
        let error =
            the_error_for(RouteId::CreateTeam, "/api/teams/forgotten", |route| route.exposure = Exposure::Unclassified);
        assert_eq!(error.route, "POST /api/teams/forgotten");
        assert!(error.problem.contains("nobody has decided its tier"), "{}", error.problem);
    }

    #[test]
    fn a_route_that_does_not_say_who_may_call_it_fails_the_build_by_name() {
        let error =
            the_error_for(RouteId::CreateTeam, "/api/teams/unguarded", |route| route.authority_declared = false);
        assert_eq!(error.route, "POST /api/teams/unguarded");
        assert!(error.problem.contains("who may call it"), "{}", error.problem);
    }

    #[test]
    fn a_grantable_route_cannot_claim_to_be_withheld() {
        let error = the_error_for(RouteId::CreateDraft, "/api/mailboxes/:mailboxId/drafts", |route| {
            route.withheld_because = Some("agents may not draft");
        });
        assert_eq!(error.route, "POST /api/mailboxes/:mailboxId/drafts");
        assert!(error.problem.contains("grantable"), "{}", error.problem);
    }

    #[test]
    fn a_declared_refusal_that_cannot_be_true_of_its_route_fails_the_build_by_name() {
        use crate::route::Refuses;
        let cases: [(RouteId, &'static str, &'static [Refuses], &str); 7] = [
            (RouteId::GetMe, "/api/me/conflicted", &[Refuses::Conflict("never")], "a GET changes nothing"),
            (RouteId::CreateTeam, "/api/teams/secret", &[Refuses::WrongSecret("wrong")], "needs a credential"),
            (RouteId::InterfaceShell, "/secret", &[Refuses::WrongSecret("wrong")], "takes no body"),
            (RouteId::GetMe, "/api/me/missing", &[Refuses::NotFound("gone")], "takes neither"),
            (RouteId::CreateTeam, "/api/teams/rpc", &[Refuses::JsonRpc { status: 400, when: "x" }], "JSON-RPC"),
            (RouteId::CreateTeam, "/api/teams/twice", &[Refuses::Conflict("a"), Refuses::Conflict("b")], "once"),
            (RouteId::CreateTeam, "/api/teams/mute", &[Refuses::Conflict(" ")], "does not say when"),
        ];
        for (like, path, refuses, expected) in cases {
            let error = the_error_for(like, path, |route| route.refuses = refuses);
            assert!(error.route.ends_with(path), "{error}");
            assert!(error.problem.contains(expected), "{path}: {}", error.problem);
        }
        let mut surface = declare(RouteId::McpEndpoint);
        surface.refuses = &[Refuses::JsonRpc { status: 200, when: "fine" }];
        let problems = crate::statuses::problems(&surface);
        assert!(problems.iter().any(|problem| problem.contains("a 4xx")), "{problems:?}");
    }

    fn check(method: Method, exposure: Exposure, expected: Result<Tier, ()>) {
        let mut route = declare(RouteId::GetMe);
        route.method = method;
        route.exposure = exposure;
        assert_eq!(route.derive_tier().map_err(|_| ()), expected, "{method:?} {exposure:?}");
    }

    #[test]
    fn tiers_derive_from_method_and_exposure() {
        use Exposure::*;
        check(Method::Get, Derived, Ok(Tier::Read));
        check(Method::Get, Exception { tier: Tier::Operator, reason: "a page" }, Ok(Tier::Operator));
        check(Method::Get, Exception { tier: Tier::Operator, reason: " " }, Err(()));
        check(Method::Get, Exception { tier: Tier::Read, reason: "pointless" }, Err(()));
        check(Method::Get, Classified(Tier::Act), Err(()));
        check(Method::Post, Classified(Tier::Act), Ok(Tier::Act));
        check(Method::Delete, Classified(Tier::Governed), Ok(Tier::Governed));
        check(Method::Post, Unclassified, Err(()));
        check(Method::Put, Derived, Err(()));
        check(Method::Patch, Exception { tier: Tier::Act, reason: "no" }, Err(()));
    }

    #[test]
    fn tool_names_are_what_real_clients_accept() {
        assert!(valid_tool_name("list_messages"));
        assert!(valid_tool_name("get_v2_thing"));
        assert!(!valid_tool_name("mail.read"));
        assert!(!valid_tool_name("ListMessages"));
        assert!(!valid_tool_name("_private"));
        assert!(!valid_tool_name(""));
        assert!(!valid_tool_name(&"a".repeat(41)));
        assert!(valid_tool_name(&"a".repeat(40)));
    }

    #[test]
    fn mismatched_path_parameters_fail_the_build() {
        let mut route = declare(RouteId::GetPerson);
        route.path_parameters = &[];
        let errors = Registry::build(vec![route]).expect_err("undescribed path parameter");
        assert!(errors[0].problem.contains("personId"), "{}", errors[0].problem);
    }

    #[test]
    fn an_authority_judged_on_a_parameter_the_path_lacks_fails_the_build() {
        use crate::route::{Authority, PathParameter};
        let error = the_error_for(RouteId::GetMessage, "/api/messages/:receiptId", |route| {
            route.path_parameters = &[PathParameter::ReceiptId];
            route.authority = Authority::Mailbox {
                mailbox_parameter: PathParameter::MailboxId,
                all_of: &[crate::Relation::MailboxMetadataRead],
                any_of: &[],
            };
        });
        assert!(error.problem.contains("mailboxId"), "{}", error.problem);
    }
}
