//! The dispatcher: the one path every request takes, REST or MCP alike.
//!
//! parse (route, body size, query) → authenticate (the credential's claim) →
//! authority (the checks the route's declared authority needs) → handler →
//! audit → response. The route table is built from the contract, and the match in
//! `handlers::handle` names every route's handler, so a declared route without a
//! handler does not compile.

mod handlers;

use std::collections::HashMap;
use std::sync::OnceLock;

use mailroom_contract::{Authority, Method, PathParameter, Route, RouteId, registry, tools};

use crate::audit::AuditChain;
use crate::authz::credentials::{self, AuthenticationError, Presented};
use crate::authz::{self};
use crate::core::caller::Caller;
use crate::core::context::{Admitted, Context};
use crate::core::http::{MAXIMUM_BODY_BYTES, Request, Response, Surface};
use crate::core::node::Node;
use crate::core::refusal::Refusal;
use crate::core::request_error::{RequestError, names_nothing};
use crate::core::storage::LocalBoxFuture;
use crate::core::timing::Phase;
use crate::oauth;

type RouteTable = matchit::Router<HashMap<Method, RouteId>>;

/// The path router, built once from the contract.
fn route_table() -> &'static RouteTable {
    static TABLE: OnceLock<RouteTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut by_path: Vec<(String, HashMap<Method, RouteId>)> = Vec::new();
        for route in registry().routes() {
            let slashed = route.trailing_slash.then(|| format!("{}/", route.path));
            for path in std::iter::once(route.path.to_string()).chain(slashed) {
                match by_path.iter_mut().find(|(known, _)| *known == path) {
                    Some((_, methods)) => {
                        methods.insert(route.method, route.id);
                    }
                    None => by_path.push((path, HashMap::from([(route.method, route.id)]))),
                }
            }
        }
        let mut table = matchit::Router::new();
        for (path, methods) in by_path {
            // The contract's own tests build this table; a path it cannot hold
            // fails there, never on a deployed node.
            if let Err(error) = table.insert(path.as_str(), methods) {
                panic!("the contract declares a path the router cannot hold: {path}: {error}");
            }
        }
        table
    })
}

/// A route the table found, with the values of its path's parameters.
type Found = (&'static Route, Vec<(PathParameter, String)>);

/// Finds the route for a method and path, with its path parameters.
fn find_route(method: &str, path: &str) -> Result<Found, RequestError> {
    let matched = route_table()
        .at(path)
        .map_err(|_| RequestError::NoSuchRoute { method: method.to_string(), path: path.to_string() })?;
    let route_id = Method::parse(method).and_then(|method| matched.value.get(&method).copied());
    let Some(route_id) = route_id else {
        let mut allowed: Vec<&str> = matched.value.keys().map(|method| method.as_str()).collect();
        allowed.sort_unstable();
        return Err(RequestError::MethodNotAllowed {
            method: method.to_string(),
            path: path.to_string(),
            allowed: allowed.join(", "),
        });
    };
    // The registry refuses a path naming a parameter the contract does not
    // declare, so every `:name` the table matched parses.
    let parameters = matched
        .params
        .iter()
        .filter_map(|(name, value)| Some((PathParameter::parse(name)?, value.to_string())))
        .collect();
    Ok((registry().route(route_id), parameters))
}

/// A refusal met before a request could be dispatched (the deployment lacks a
/// binding), answered as the route the method and path reach answers its own:
/// an OAuth endpoint in OAuth's form, anything else in four parts.
pub fn refused_before_dispatch(method: &str, path: &str, refusal: Refusal) -> Response {
    match find_route(method, path) {
        Ok((route, _)) => Response::refusal(&refusal.answered_by(route)),
        Err(_) => Response::refusal(&refusal),
    }
}

/// The route a method and path reach, if any. The test kit holds every answer a
/// native test receives to the statuses the contract lists for that route.
pub fn route_for(method: &str, path: &str) -> Option<RouteId> {
    find_route(method, path).ok().map(|(route, _)| route.id)
}

/// Parses the query string, refusing parameters the route does not declare.
fn parse_query(route: &Route, query: &str) -> Result<Vec<(String, String)>, RequestError> {
    let mut parameters = Vec::new();
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        let Some(parameter) = route.query_parameter(&name) else {
            let known: Vec<&str> = route.query_parameters.iter().map(|parameter| parameter.name).collect();
            return Err(RequestError::UnknownQueryParameter { name: name.into_owned(), known: known.join(", ") });
        };
        if let (false, Some(expected)) = (parameter.accepts(&value), parameter.expects()) {
            return Err(RequestError::InvalidQueryParameter { name: name.into_owned(), expected });
        }
        parameters.push((name.into_owned(), value.into_owned()));
    }
    // What the route cannot be answered without is refused as missing, naming
    // it, rather than looked up as empty and answered as a missing object.
    if let Some(missing) = route
        .query_parameters
        .iter()
        .find(|parameter| parameter.required && !parameters.iter().any(|(name, _)| name == parameter.name))
    {
        return Err(RequestError::MissingQueryParameter {
            name: missing.name.to_string(),
            described: missing.describe(),
        });
    }
    Ok(parameters)
}

/// The dispatcher as the core's `Reentry`: what a machine surface's context
/// re-enters it through.
fn reenter<'call>(
    node: &'call Node<'call>,
    request: &'call Request,
    surface: Surface,
    decided: Option<Refusal>,
) -> LocalBoxFuture<'call, Response> {
    Box::pin(dispatch_deciding(node, request, surface, decided))
}

/// Handles one request from `surface`. Never panics on input and never answers a
/// 500 for anything a client sent.
pub async fn dispatch(node: &Node<'_>, request: &Request, surface: Surface) -> Response {
    let mut response = dispatch_deciding(node, request, surface, None).await;
    // Every 401 from the MCP endpoint names where its OAuth metadata is (RFC
    // 9728 §5.1): an OAuth-only client starts signing in from that challenge.
    if response.status == 401 && request.path == registry().route(RouteId::McpEndpoint).path {
        let metadata = oauth::resource_metadata_url(node.config.origin_of(request));
        for (_, value) in response.headers.iter_mut().filter(|(name, _)| name == "www-authenticate") {
            value.push_str(&format!(", resource_metadata=\"{metadata}\""));
        }
    }
    response
}

/// Handles one request; with `decided`, a refusal decided before its handler by a
/// surface that withholds the route from this caller (the MCP server, for a
/// tool it never offers). Everything else is the route's own: its credential,
/// Origin, shape and authority are checked as for any call, whichever of them
/// refuses first is the answer (so a dead credential is still a 401), and the
/// call is recorded as the route's refused call wherever the route's calls are
/// recorded. Only the handler never runs. A caller who presented no
/// credential is answered without I/O, as every refusal before the caller is
/// known is: no one writes to the chain at will.
async fn dispatch_deciding(node: &Node<'_>, request: &Request, surface: Surface, decided: Option<Refusal>) -> Response {
    // Where the time goes (`core::timing`): parsing until the caller is read,
    // authority, parsing the rest, then the handler, its round trips, its
    // answer written and its commit each their own. Dropped, this goes back
    // to the phase that called: the adapter's, or the MCP handler re-entering.
    let timings = node.timings;
    let _dispatching = timings.during(node.platform, Phase::Parse);
    let now_ms = node.platform.now_ms();
    let (route, path_parameters) = match find_route(&request.method, &request.path) {
        Ok(found) => found,
        Err(error) => return Response::refusal(&error.into()),
    };
    // Refusals before the caller is known are answered without I/O and recorded
    // nowhere: a request for another host (DNS rebinding) or with no credential
    // the node issued could otherwise write to the audit chain at will.
    let early = |refusal: Refusal| Response::refusal(&refusal.answered_by(route));
    let node_origin = node.config.origin_of(request);
    if node_origin != request.origin {
        return early(AuthenticationError::WrongHost { node_origin: node_origin.to_string() }.into());
    }
    // A feature the node does not run answers before anything is read, so
    // nothing of it is stored, delivered or recorded.
    if let Some(feature) = route.feature.filter(|feature| !node.config.runs(*feature)) {
        return early(RequestError::FeatureDisabled { feature }.into());
    }
    // A segment left empty or as its placeholder names nothing, so no check
    // could judge it and no lookup could find it: it is refused as the
    // parameter it leaves out, before anything is read (as a path no route has
    // is), never as a missing object, and its refusal shows no template.
    if let Some((parameter, _)) = path_parameters.iter().find(|(_, value)| names_nothing(value)) {
        let name = named_on(*parameter, surface);
        return early(RequestError::MissingPathParameter { name, described: parameter.description() }.into());
    }
    let changes_something = !route.method.is_safe();

    timings.switch(node.platform, Phase::Authority);
    // Public routes answer anyone and act as a stranger, whatever credential a
    // browser happens to send along.
    let (caller, via_cookie) = if route.authority == Authority::Public {
        (
            Caller::Stranger,
            request.cookie(credentials::ACCESS_COOKIE).is_some()
                || request.cookie(credentials::REFRESH_COOKIE).is_some(),
        )
    } else {
        match credentials::identify(request, &node.config.session_key, now_ms) {
            // An OAuth access token works at its resource alone: the MCP
            // endpoint, and the routes its tool calls re-enter.
            Ok(Presented { resource: Some(resource), .. })
                if resource != oauth::mcp_resource(node_origin)
                    || !(surface == Surface::Mcp || route.id == RouteId::McpEndpoint) =>
            {
                return early(AuthenticationError::TokenForAnotherResource { resource }.into());
            }
            Ok(presented) => (presented.caller, presented.via_cookie),
            Err(error) => return early(error.into()),
        }
    };
    // From here the caller is known, so a refusal of a changing call is recorded
    // like any other: it goes through the handler's place, with its checks.
    timings.switch(node.platform, Phase::Parse);
    let mut refused_before_handling = None;
    if let Err(error) = credentials::check_origin(request, node_origin, changes_something, via_cookie) {
        refused_before_handling = Some(Refusal::from(error));
    }
    let query_parameters = match request_shape(route, request, surface, &path_parameters) {
        Ok(parameters) => parameters,
        Err(refusal) => {
            refused_before_handling.get_or_insert(refusal);
            Vec::new()
        }
    };
    if let Some(refusal) = decided {
        if caller == Caller::Stranger {
            return early(refusal);
        }
        refused_before_handling.get_or_insert(refusal);
    }
    let path_parameter = |wanted: PathParameter| {
        path_parameters.iter().find(|(name, _)| *name == wanted).map(|(_, value)| value.clone())
    };
    let chain = AuditChain::new(node.config, node.platform);
    // A call that lost a race for a unique name (a message under an idempotency
    // key another call stored first) applied nothing and recorded nothing: it
    // is handled once more, and its second handling reads what the winner
    // stored. The winner's row is durable by then, so once is enough.
    let mut lost: Option<Response> = None;
    loop {
        timings.switch(node.platform, Phase::Authority);
        let checks = match authz::checks_for(route, &caller, now_ms, path_parameter) {
            Ok(checks) => checks,
            Err(error) => return early(error.into()),
        };
        let mut context = Context::new(
            node,
            Admitted {
                route,
                request,
                surface,
                now_ms,
                caller: caller.clone(),
                path: path_parameters.clone(),
                query: query_parameters.clone(),
                checks,
                audited: registry().is_audited(route.id),
                ledger: &chain,
                reentry: reenter,
            },
        );
        timings.switch(node.platform, Phase::Handler);
        let outcome = match refused_before_handling.clone() {
            Some(refusal) => Err(refusal),
            None => handlers::handle(&mut context).await,
        };
        let mut response = context.finish(outcome).await;
        if let Some(first) = &lost {
            response.round_trips += first.round_trips;
            response.commit_attempts += first.commit_attempts;
        }
        match (response.handle_again, &lost) {
            (false, _) => return response,
            (true, None) => lost = Some(response),
            (true, Some(_)) => {
                node.platform.log(&format!(
                    "{} {}: lost the race for a unique name twice",
                    route.method.as_str(),
                    route.path
                ));
                let mut refused = Response::refusal(&Refusal::internal());
                refused.round_trips = response.round_trips;
                refused.commit_attempts = response.commit_attempts;
                return refused;
            }
        }
    }
}

/// The request's size, body, path and query string against what the route
/// declares; answers the query parameters.
fn request_shape(
    route: &Route,
    request: &Request,
    surface: Surface,
    path_parameters: &[(PathParameter, String)],
) -> Result<Vec<(String, String)>, Refusal> {
    let too_large = request.body.len() > MAXIMUM_BODY_BYTES;
    // A route that takes no body refuses any body as one it does not take, so
    // only a route that takes one answers 413, as the contract says.
    if route.request.is_none() && (too_large || !request.body.iter().all(u8::is_ascii_whitespace)) {
        return Err(RequestError::BodyNotExpected.into());
    }
    if too_large {
        return Err(RequestError::BodyTooLarge { limit: MAXIMUM_BODY_BYTES }.into());
    }
    // A segment that cannot be what its parameter names (a position that is not
    // a whole number) names nothing: the 404 any missing object gets.
    for (parameter, value) in path_parameters {
        if let (false, Some(expected)) = (parameter.accepts().admits(value), parameter.accepts().expects()) {
            return Err(RequestError::InvalidPathParameter { name: named_on(*parameter, surface), expected }.into());
        }
    }
    Ok(parse_query(route, &request.query)?)
}

/// A path parameter as the caller named it: a tool call by its argument's
/// name (`mailbox_id`), anything else as the path does (`mailboxId`).
fn named_on(parameter: PathParameter, surface: Surface) -> String {
    match surface {
        Surface::Mcp => tools::argument_name(parameter).to_string(),
        Surface::Rest | Surface::A2a => parameter.name().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_declared_path_fits_the_router() {
        for route in registry().routes() {
            let concrete: String = route
                .path
                .split('/')
                .map(|segment| if segment.starts_with(':') { "x" } else { segment })
                .collect::<Vec<_>>()
                .join("/");
            let (found, _) = find_route(route.method.as_str(), &concrete).expect("declared route is routable");
            assert_eq!(found.id, route.id, "{} {}", route.method.as_str(), route.path);
        }
    }

    #[test]
    fn a_known_path_with_the_wrong_method_names_the_allowed_ones() {
        match find_route("PATCH", "/api/people") {
            Err(RequestError::MethodNotAllowed { allowed, .. }) => assert_eq!(allowed, "GET, POST"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(find_route("GET", "/api/nothing"), Err(RequestError::NoSuchRoute { .. })));
    }
}
