//! Every status a route answers, and why.
//!
//! Most of it follows from the declaration: every route can be sent a query or
//! body it does not take (400), be addressed to the wrong host (403), fail inside
//! the node (500) or meet a deployment that lacks a setting (503); a route that
//! needs a credential answers 401 without a good one; a changing route refuses a
//! browser's call from another origin; a path that names something answers 404
//! when it names nothing; a route that takes a body can be sent one too large
//! (413). What only
//! its handler knows (a send in the wrong state, too many guesses) a route
//! declares with `Route::refuses`, as a `Refuses` in words. OpenAPI lists exactly
//! these statuses per operation, the registry refuses a declaration that cannot
//! be true, and the native and end-to-end tests fail on an answer whose status is
//! not among them.

use crate::route::{Authority, Produces, Refuses, Route, Tier};

/// The largest request body the node reads. Bigger bodies are refused before they
/// are decoded, so a client cannot make the node hold an arbitrary payload.
pub const MAXIMUM_BODY_BYTES: usize = 1024 * 1024;

/// What the body of an answer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Carries {
    /// The route's own answer: its response schema or media type.
    Answer,
    /// No body.
    Nothing,
    /// The four-part refusal.
    Refusal,
    /// A JSON-RPC response carrying an error.
    JsonRpcError,
    /// Either of the two: the machine surface answers its protocol's errors as
    /// JSON-RPC and the dispatcher's refusals as refusals, with one status.
    JsonRpcErrorOrRefusal,
    /// An OAuth error body (RFC 6749 §5.2): every error of an OAuth endpoint,
    /// the dispatcher's refusals before its handler included, so a standard
    /// client reads each one.
    OAuthError,
}

impl Carries {
    /// What one status carries when two of its reasons carry different bodies.
    fn either(self, other: Carries) -> Carries {
        if self == other { self } else { Carries::JsonRpcErrorOrRefusal }
    }
}

/// One status a route answers, with every reason it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    /// Each a sentence.
    pub reasons: Vec<String>,
    pub carries: Carries,
}

/// A header every answer of a status carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub name: &'static str,
    pub description: &'static str,
    /// Whether its value is a whole number (otherwise text).
    pub is_integer: bool,
}

impl Answer {
    /// The reasons, as one description.
    pub fn description(&self) -> String {
        self.reasons.join(" ")
    }

    /// The headers the status carries: every 401 a challenge (RFC 9110), a 429
    /// when to try again.
    pub fn headers(&self) -> Vec<Header> {
        match self.status {
            401 => vec![Header {
                name: "WWW-Authenticate",
                description: "The Bearer scheme in the node's realm, with `error=\"invalid_token\"` when the credential presented is dead.",
                is_integer: false,
            }],
            429 => vec![Header {
                name: "Retry-After",
                description: "How many seconds to wait before trying again.",
                is_integer: true,
            }],
            _ => Vec::new(),
        }
    }
}

/// Every status `route` answers, success first, then in order, with why:
/// derived from its declaration (`tier` is the registry's) and the refusals it
/// declares.
pub fn answers(route: &Route, tier: Tier) -> Vec<Answer> {
    let mut answers: Vec<Answer> = Vec::new();
    let mut add =
        |status: u16, reason: String, carries: Carries| match answers.iter_mut().find(|answer| answer.status == status)
        {
            Some(answer) => {
                answer.reasons.push(reason);
                answer.carries = answer.carries.either(carries);
            }
            None => answers.push(Answer { status, reasons: vec![reason], carries }),
        };
    let refusal = Carries::Refusal;
    let json_rpc = route.produces == Produces::JsonRpc;
    let oauth = route.produces == Produces::OAuth;
    let needs_credential = !matches!(route.authority, Authority::Public);

    add(route.success_status, route.summary.to_string(), Carries::Answer);
    if route.produces == Produces::Live {
        add(
            426,
            "The request is not a WebSocket upgrade (`upgrade_required`): this route only opens a stream.".into(),
            refusal,
        );
    }
    if json_rpc {
        add(202, "A notification, or a client's response, was accepted; there is no body.".into(), Carries::Nothing);
    }

    add(
        400,
        if route.query_parameters.is_empty() {
            "The request carries a query parameter, and this route takes none.".into()
        } else if route.query_parameters.iter().any(|parameter| parameter.required) {
            "The request leaves out a query parameter this route needs (`missing_query_parameter`, naming it), or \
             carries one it does not take, or a value outside what it accepts."
                .into()
        } else {
            "The request carries a query parameter this route does not take, or a value outside what it accepts.".into()
        },
        refusal,
    );
    if !route.path_parameters.is_empty() {
        add(
            400,
            "A segment of the path that names something is empty or still its placeholder \
             (`missing_path_parameter`, naming it): nothing is looked up."
                .into(),
            refusal,
        );
    }
    match route.request {
        None => add(400, "The request carries a body, and this route takes none.".into(), refusal),
        Some(_) if oauth => add(
            400,
            "The body is not what the endpoint takes, or a field in it is missing or one the node cannot use \
             (`error` names the OAuth error, `error_description` the field)."
                .into(),
            Carries::OAuthError,
        ),
        Some(_) if !json_rpc => add(
            400,
            "The body is missing, is not JSON, or does not match the request schema (the refusal names the path \
             to the field at fault), or a value in it is one the route cannot use."
                .into(),
            refusal,
        ),
        Some(_) => {}
    }

    if needs_credential {
        let without = match route.authority {
            Authority::Open => {
                "The request carries a credential that is not valid (with none, the caller is a stranger)"
            }
            _ => "The request carries no credential, or one that is not valid",
        };
        add(
            401,
            format!("{without}: malformed, not issued by this node, expired, or of a session or agent that has ended."),
            refusal,
        );
    }

    add(403, "The request was addressed to a host other than the node's own.".into(), refusal);
    if !route.method.is_safe() {
        add(403, "The call came from a browser on another origin, with the session cookie.".into(), refusal);
    }
    if needs_credential {
        add(403, "The caller is an agent that is paused, or whose sponsor is disabled.".into(), refusal);
        if tier != Tier::Surface {
            add(
                403,
                "The caller is an agent and the route is outside its pinned ceiling, or one no agent is ever given."
                    .into(),
                refusal,
            );
        }
    }
    match route.authority {
        Authority::Organization(_)
        | Authority::Requester(_)
        | Authority::SelfOrAdmin { .. }
        | Authority::Mailbox { .. }
        | Authority::Sponsor { .. } => {
            add(403, format!("The caller lacks the authority it needs. {}", route.authority.describe()), refusal)
        }
        Authority::Source => add(
            403,
            "The caller is not a reminder source: only a source's `mr_src_` credential is admitted.".into(),
            refusal,
        ),
        Authority::Public | Authority::Open | Authority::Member | Authority::Filtered { .. } | Authority::Personal => {
            if needs_credential {
                add(
                    403,
                    "The caller presented a reminder source's credential, which pushes reminders and does nothing else."
                        .into(),
                    refusal,
                )
            }
        }
    }

    if !route.path_parameters.is_empty() {
        let named: Vec<String> =
            route.path_parameters.iter().map(|parameter| format!("`{}`", parameter.name())).collect();
        add(
            404,
            format!("Nothing the path's {} names exists, or the caller may not know that it does.", named.join(", ")),
            refusal,
        );
    }

    if let Some(feature) = route.feature {
        add(
            404,
            format!(
                "The node does not run {} (`{}` is not `true`): `feature_disabled`.",
                feature.describe(),
                feature.variable()
            ),
            refusal,
        );
    }

    if route.request.is_some() {
        add(413, format!("The body is larger than {MAXIMUM_BODY_BYTES} bytes, the most the node reads."), refusal);
    }

    for refuses in route.refuses {
        let carries = if refuses.is_json_rpc() {
            Carries::JsonRpcError
        } else if refuses.is_oauth() {
            Carries::OAuthError
        } else {
            refusal
        };
        add(refuses.status(), refuses.when().to_string(), carries);
    }

    add(
        500,
        "Something failed inside the node; the refusal carries no detail, which is in the operator's logs.".into(),
        refusal,
    );
    add(503, "The deployment lacks a binding or secret the node needs.".into(), refusal);
    answers.sort_by_key(|answer| answer.status);
    if oauth {
        // An OAuth endpoint answers every error in OAuth's form (decision 0026):
        // a standard client parses nothing else, whatever refused it.
        for answer in answers.iter_mut().filter(|answer| answer.status >= 400) {
            answer.carries = Carries::OAuthError;
        }
    }
    answers
}

/// What is wrong with a route's declared refusals: each problem in a sentence
/// that says what to decide instead.
pub fn problems(route: &Route) -> Vec<String> {
    let mut problems = Vec::new();
    for (index, refuses) in route.refuses.iter().enumerate() {
        let status = refuses.status();
        if refuses.when().trim().is_empty() {
            problems.push(format!("its {status} refusal does not say when it is given"));
        }
        if route.refuses[..index].iter().any(|earlier| earlier.status() == status) {
            problems.push(format!("it declares {status} more than once: say every reason for it in one sentence"));
        }
        match refuses {
            Refuses::Conflict(_) if route.method.is_safe() => problems.push(
                "it declares a 409, but a GET changes nothing, so nothing it acts on can be in the wrong state"
                    .to_string(),
            ),
            Refuses::WrongSecret(_) if route.authority != Authority::Public => problems.push(
                "it declares a wrong secret (401), but it needs a credential, which already answers 401; a wrong \
                 secret from a caller the node knows is Forbidden (403)"
                    .to_string(),
            ),
            Refuses::WrongSecret(_) if route.request.is_none() => problems
                .push("it declares a wrong secret (401), but it takes no body for a secret to come in".to_string()),
            Refuses::NotFound(_) if route.request.is_none() && route.query_parameters.is_empty() => problems
                .push("it declares a 404 for something the body or query names, but it takes neither".to_string()),
            Refuses::JsonRpc { .. } if route.produces != Produces::JsonRpc => problems.push(
                "it declares a JSON-RPC error, but it does not speak JSON-RPC: declare a refusal instead".to_string(),
            ),
            Refuses::JsonRpc { status, .. } if !(400..500).contains(status) => problems.push(format!(
                "it declares a JSON-RPC error with status {status}; a protocol error is the client's, a 4xx"
            )),
            Refuses::OAuth { .. } if route.produces != Produces::OAuth => problems.push(
                "it declares an OAuth error, but it is not an OAuth endpoint: declare a refusal instead".to_string(),
            ),
            Refuses::OAuth { status, .. } if !(400..500).contains(status) => problems.push(format!(
                "it declares an OAuth error with status {status}; a protocol error is the client's, a 4xx"
            )),
            _ => {}
        }
    }
    problems
}
