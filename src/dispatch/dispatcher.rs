//! One request's path from route to response: the host, the feature and the
//! path's parameters checked, the credential read, the request's shape and
//! Origin checked, the route's authority checks queued, the handler called
//! and its outcome committed with the audit entry; and the same path re-entered
//! by a machine surface as the core's `Reentry`.

use mailroom_contract::{Authority, PathParameter, RouteId, registry};

use crate::audit::AuditChain;
use crate::authz::credentials::{self, AuthenticationError, Presented};
use crate::authz::{self};
use crate::core::caller::Caller;
use crate::core::context::{Admitted, Context};
use crate::core::http::{Request, Response, Surface};
use crate::core::node::Node;
use crate::core::refusal::Refusal;
use crate::core::request_error::{RequestError, names_nothing};
use crate::core::storage::LocalBoxFuture;
use crate::core::timing::Phase;
use crate::oauth;

use super::handlers;
use super::router::{cross_origin_methods, find_route};
use super::shape::{named_on, request_shape};

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
    // A browser client of another origin (the MCP Inspector) asks first
    // whether it may call an OAuth or the MCP endpoint: answered here, before
    // anything is read, for the routes the contract declares `cross_origin`.
    let cross_origin = cross_origin_methods(&request.path);
    if let Some(methods) = cross_origin
        && request.method == "OPTIONS"
    {
        return preflight(methods);
    }
    let mut response = dispatch_deciding(node, request, surface, None).await;
    if cross_origin.is_some() {
        response.headers.push(("access-control-allow-origin".into(), "*".into()));
        response.headers.push(("access-control-expose-headers".into(), CROSS_ORIGIN_EXPOSED.into()));
    }
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

/// The request headers a browser client of another origin may send to a
/// `cross_origin` route: its bearer token, its body's type, and the MCP
/// transport's own.
const CROSS_ORIGIN_HEADERS: &str =
    "authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id";
/// The answer's headers such a client may read: the challenge that says where
/// to sign in, and the MCP transport's own.
const CROSS_ORIGIN_EXPOSED: &str = "www-authenticate, mcp-session-id, mcp-protocol-version";
/// How long a browser may remember a preflight's answer, in seconds.
const PREFLIGHT_MAX_AGE_SECONDS: u32 = 86_400;

/// The answer to a CORS preflight for a path whose `methods` browser pages of
/// other origins may call: any origin, never with credentials (a `*` origin
/// carries no cookie), those methods and headers.
fn preflight(methods: &str) -> Response {
    Response::empty(204)
        .with_header("access-control-allow-origin", "*")
        .with_header("access-control-allow-methods", methods)
        .with_header("access-control-allow-headers", CROSS_ORIGIN_HEADERS)
        .with_header("access-control-max-age", PREFLIGHT_MAX_AGE_SECONDS.to_string())
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
                    "{} {}: lost a race twice (for a unique name, or with its mail moving)",
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
