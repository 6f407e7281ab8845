//! `Route`: one route, declared once, and the builder its declaration is written
//! with (`Route::new(…).summary(…)…`), with the defaults a declaration starts
//! from and its tier, derived or written down.

use schemars::JsonSchema;
#[cfg(feature = "schemas")]
use schemars::{Schema, SchemaGenerator};

use crate::route_id::RouteId;

use super::authority::Authority;
use super::feature::Feature;
use super::method::Method;
use super::parameter::{Parameter, PathParameter};
use super::produces::Produces;
use super::refuses::Refuses;
use super::tier::{Exposure, Tier};

/// Builds the JSON Schema of a request or response type, registering any
/// definitions it refers to with the generator.
#[cfg(feature = "schemas")]
pub type SchemaFunction = fn(&mut SchemaGenerator) -> Schema;
/// Without the `schemas` feature a route records only that it has a body.
#[cfg(not(feature = "schemas"))]
pub type SchemaFunction = ();

#[cfg(feature = "schemas")]
fn subschema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// One route, declared once.
#[derive(Clone, Copy, Debug)]
pub struct Route {
    pub id: RouteId,
    pub method: Method,
    /// The path with `:name` segments for path parameters.
    pub path: &'static str,
    /// The MCP tool name and the audit action: `[a-z0-9_]`, at most 40 characters.
    pub tool: &'static str,
    /// One line, for a list.
    pub summary: &'static str,
    /// What the route does and when to use it, written for the model that reads
    /// it. Kept only with the `schemas` feature: the Worker hands it out only
    /// inside the documents generated from the contract (its MCP catalogue is
    /// `contract/tools.json` as generated), so its own build leaves it empty.
    pub description: &'static str,
    pub path_parameters: &'static [PathParameter],
    pub query_parameters: &'static [Parameter],
    pub request: Option<SchemaFunction>,
    /// Whether the body is a form (`application/x-www-form-urlencoded`, as
    /// OAuth's token and revocation endpoints take) rather than JSON.
    pub request_is_form: bool,
    pub response: Option<SchemaFunction>,
    pub produces: Produces,
    /// The status of a successful answer.
    pub success_status: u16,
    pub exposure: Exposure,
    pub authority: Authority,
    /// Why agents are never offered this route, in the route's own words, where
    /// the reason derived from its tier and authority would be too general.
    pub withheld_because: Option<&'static str>,
    /// Whether `.authority(…)` was called. A route that never says who may call it
    /// does not build: no default is safe for every route.
    pub authority_declared: bool,
    /// Whether the route reaches message bytes (bodies, attachments, originals).
    pub reaches_content: bool,
    /// The refusals its handler gives that nothing else in the declaration shows;
    /// every other status it answers is derived (`statuses::answers`).
    pub refuses: &'static [Refuses],
    /// The feature it belongs to, if it is one an operator turns on.
    pub feature: Option<Feature>,
    /// A POST that answers without storing anything (an OAuth client's
    /// registration, carried in its signed id): nothing to record, so a
    /// stranger calling it cannot make the node write.
    pub stores_nothing: bool,
    /// Whether the path is also answered with one trailing slash: an endpoint
    /// a client is configured with by URL, which some clients join a path to
    /// (httpx's `base_url` makes `/a2a/agt_1` into `/a2a/agt_1/`).
    pub trailing_slash: bool,
    /// Whether a success may also be server-sent events (`text/event-stream`),
    /// each `data:` one JSON-RPC response: a JSON-RPC endpoint's streaming
    /// methods.
    pub streams: bool,
    /// Whether a browser page of another origin may call it (CORS): an OAuth
    /// endpoint or the MCP endpoint, which a client running in a browser (the
    /// MCP Inspector in direct mode) calls with a bearer token or nothing. Its
    /// path answers preflights, and its answers say any origin may read them;
    /// no cookie ever rides along (a browser sends none to a `*` origin), so
    /// the routes a session cookie reaches keep their Origin checks.
    pub cross_origin: bool,
    /// Whether another organisation's node, with the credential an
    /// administrator issued for it (`mr_per_…`), may call it: the A2A endpoint
    /// and the agent-messaging routes it re-enters, and nothing else.
    pub open_to_peers: bool,
}

impl Route {
    /// Starts a declaration. Every other field has the conservative default: no
    /// parameters, no schemas, unclassified, no content, no refusals of the
    /// handler's own; the authority must be
    /// declared (the registry refuses a route without one).
    pub fn new(id: RouteId, method: Method, path: &'static str, tool: &'static str) -> Route {
        Route {
            id,
            method,
            path,
            tool,
            summary: "",
            description: "",
            path_parameters: &[],
            query_parameters: &[],
            request: None,
            request_is_form: false,
            response: None,
            produces: Produces::Json,
            success_status: 200,
            exposure: if method.is_safe() { Exposure::Derived } else { Exposure::Unclassified },
            authority: Authority::Member,
            withheld_because: None,
            authority_declared: false,
            reaches_content: false,
            refuses: &[],
            feature: None,
            stores_nothing: false,
            trailing_slash: false,
            streams: false,
            cross_origin: false,
            open_to_peers: false,
        }
    }

    /// Declares that the route stores nothing, so it is not recorded.
    pub fn stores_nothing(mut self) -> Route {
        self.stores_nothing = true;
        self
    }

    /// Lets a connected peer's node call the route (see `open_to_peers`).
    pub fn open_to_peers(mut self) -> Route {
        self.open_to_peers = true;
        self
    }

    /// Lets browser pages of other origins call the route (see `cross_origin`).
    pub fn cross_origin(mut self) -> Route {
        self.cross_origin = true;
        self
    }

    /// Answers the path with one trailing slash as well (see `trailing_slash`).
    pub fn trailing_slash(mut self) -> Route {
        self.trailing_slash = true;
        self
    }

    /// Declares that a success may be server-sent events (see `streams`).
    pub fn streams(mut self) -> Route {
        self.streams = true;
        self
    }

    /// Puts the route in a feature an operator turns on.
    pub fn feature(mut self, feature: Feature) -> Route {
        self.feature = Some(feature);
        self
    }

    pub fn summary(mut self, summary: &'static str) -> Route {
        self.summary = summary;
        self
    }

    pub fn description(mut self, description: &'static str) -> Route {
        if cfg!(feature = "schemas") {
            self.description = description;
        }
        self
    }

    pub fn path_parameters(mut self, parameters: &'static [PathParameter]) -> Route {
        self.path_parameters = parameters;
        self
    }

    pub fn query_parameters(mut self, parameters: &'static [Parameter]) -> Route {
        self.query_parameters = parameters;
        self
    }

    pub fn request<T: JsonSchema>(mut self) -> Route {
        #[cfg(feature = "schemas")]
        let schema: SchemaFunction = subschema::<T>;
        #[cfg(not(feature = "schemas"))]
        let schema: SchemaFunction = ();
        self.request = Some(schema);
        self
    }

    /// A body sent as a form (`application/x-www-form-urlencoded`), its fields
    /// described by `T`.
    pub fn form_request<T: JsonSchema>(mut self) -> Route {
        self = self.request::<T>();
        self.request_is_form = true;
        self
    }

    pub fn response<T: JsonSchema>(mut self) -> Route {
        #[cfg(feature = "schemas")]
        let schema: SchemaFunction = subschema::<T>;
        #[cfg(not(feature = "schemas"))]
        let schema: SchemaFunction = ();
        self.response = Some(schema);
        self
    }

    pub fn html(mut self) -> Route {
        self.produces = Produces::Html;
        self
    }

    pub fn produces(mut self, produces: Produces) -> Route {
        self.produces = produces;
        if produces == Produces::Live {
            self.success_status = 101;
        }
        self
    }

    pub fn created(mut self) -> Route {
        self.success_status = 201;
        self
    }

    /// Answers 202: accepted, stored, and handled later (a message to an agent).
    pub fn accepted(mut self) -> Route {
        self.success_status = 202;
        self
    }

    /// Classifies a changing route by hand.
    pub fn tier(mut self, tier: Tier) -> Route {
        self.exposure = Exposure::Classified(tier);
        self
    }

    /// Takes a GET out of the derived `read` tier, with the reason why.
    pub fn exception(mut self, tier: Tier, reason: &'static str) -> Route {
        self.exposure = Exposure::Exception { tier, reason };
        self
    }

    pub fn authority(mut self, authority: Authority) -> Route {
        self.authority = authority;
        self.authority_declared = true;
        self
    }

    /// Says, in this route's own words, why it is never offered to an agent. Only
    /// for a route that is not grantable; the registry refuses it on one that is.
    pub fn withheld_because(mut self, reason: &'static str) -> Route {
        self.withheld_because = Some(reason);
        self
    }

    pub fn reaches_content(mut self) -> Route {
        self.reaches_content = true;
        self
    }

    /// The refusals the route's handler gives that its declaration cannot show
    /// otherwise (a send in the wrong state, too many guesses), each with when.
    pub fn refuses(mut self, refusals: &'static [Refuses]) -> Route {
        self.refuses = refusals;
        self
    }

    /// The route's tier, or why it has none. A GET is `read` unless it is a named
    /// exception; a changing route has exactly the tier it was classified with.
    pub fn derive_tier(&self) -> Result<Tier, &'static str> {
        match (self.method.is_safe(), self.exposure) {
            (true, Exposure::Derived) => Ok(Tier::Read),
            (true, Exposure::Exception { tier, reason }) => {
                if reason.trim().is_empty() {
                    Err("a GET exception must say why it is not a read")
                } else if tier == Tier::Read {
                    Err("a GET exception to the read tier cannot itself be read")
                } else {
                    Ok(tier)
                }
            }
            (true, Exposure::Classified(_)) => {
                Err("a GET is classified by derivation or as a named exception, not by hand")
            }
            (true, Exposure::Unclassified) => Err("a GET cannot be unclassified"),
            (false, Exposure::Classified(tier)) => Ok(tier),
            (false, Exposure::Unclassified | Exposure::Derived) => Err(
                "this route changes something and nobody has decided its tier: classify it with .tier(..) as act, governed, operator or surface",
            ),
            (false, Exposure::Exception { .. }) => {
                Err("only a GET can be an exception to the derived read tier; classify a changing route with .tier(..)")
            }
        }
    }

    /// The names of the `:name` segments of the path, in order.
    pub fn path_parameter_names(&self) -> impl Iterator<Item = &'static str> {
        self.path.split('/').filter_map(|segment| segment.strip_prefix(':'))
    }

    /// The query parameter named `name`, if the route takes one.
    pub fn query_parameter(&self, name: &str) -> Option<&'static Parameter> {
        self.query_parameters.iter().find(|parameter| parameter.name == name)
    }

    /// The path parameter naming the mailbox or person its authority is judged
    /// on, if it names one.
    pub fn authority_parameter(&self) -> Option<PathParameter> {
        match self.authority {
            Authority::SelfOrAdmin { person_parameter } => Some(person_parameter),
            Authority::Mailbox { mailbox_parameter, .. } => Some(mailbox_parameter),
            Authority::Sponsor { agent_parameter } => Some(agent_parameter),
            _ => None,
        }
    }
}
