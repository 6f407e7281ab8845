//! Why a request could not be understood, before any question of authority, and
//! the refusals that say so.
//!
//! The dispatcher finds most of these (no route, a body or query the route does
//! not take); a handler meets the rest while reading its own parameters and body.

use crate::core::refusal::Refusal;

/// Whether a path segment's value is no value at all: empty, or a placeholder
/// left in (`:mailboxId`, `{mailboxId}`, either percent-encoded), which a
/// client copying the path's template sends. No id the node issues, and no
/// name a path takes, begins with `:` or `{`; such a segment is refused as a
/// parameter left out, never looked up, so no refusal echoes a template back.
pub fn names_nothing(value: &str) -> bool {
    let lowered = value.to_ascii_lowercase();
    value.is_empty() || [":", "{", "%3a", "%7b"].iter().any(|placeholder| lowered.starts_with(placeholder))
}

/// A description (`The mailbox's id (`mbx_…`).`) as part of a sentence: its
/// first letter lower case and its full stop gone.
fn in_a_sentence(description: &str) -> String {
    let trimmed = description.trim().trim_end_matches('.');
    let mut characters = trimmed.chars();
    match characters.next() {
        Some(first) => first.to_lowercase().chain(characters).collect(),
        None => String::new(),
    }
}

/// What is wrong with the value at a body's field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BodyFault {
    /// The route needs the field and it was not sent.
    Missing,
    /// The route takes no such field; `detail` names those it takes.
    Unknown { detail: String },
    /// The value has the wrong type, or is not one of the words the field takes.
    Wrong { detail: String },
}

impl RequestError {
    /// The refusal of a body whose value at `field` (`rules.effects[0].assignee`)
    /// is not what the route takes, saying what it takes: for the checks a
    /// handler makes beyond the body's shape.
    pub fn wrong_field(field: &str, detail: impl Into<String>) -> Refusal {
        RequestError::InvalidBody { field: field.to_string(), fault: BodyFault::Wrong { detail: detail.into() } }.into()
    }
}

/// Why a request could not be understood, before any question of authority.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestError {
    /// No route has this path.
    NoSuchRoute { method: String, path: String },
    /// The path exists but not with this method.
    MethodNotAllowed { method: String, path: String, allowed: String },
    /// The body is over the node's cap.
    BodyTooLarge { limit: usize },
    /// The route takes no body and one was sent.
    BodyNotExpected,
    /// The route needs a body and none was sent.
    MissingBody,
    /// The body is not JSON.
    MalformedJson { detail: String },
    /// The body is JSON of the wrong shape. `field` is the path to the value at
    /// fault (`to[0]`, `mailboxes[1].relations`), empty for the body as a whole.
    InvalidBody { field: String, fault: BodyFault },
    /// A query parameter the route does not take.
    UnknownQueryParameter { name: String, known: String },
    /// A query parameter with an unusable value.
    InvalidQueryParameter { name: String, expected: String },
    /// A path parameter that cannot name anything.
    InvalidPathParameter { name: String, expected: String },
    /// A path parameter left out: its segment is empty or still its
    /// placeholder ([`names_nothing`]). `described` says what goes there.
    MissingPathParameter { name: String, described: &'static str },
    /// A query parameter the route cannot be answered without, left out.
    MissingQueryParameter { name: String, described: String },
    /// The route belongs to a feature this node does not run.
    FeatureDisabled { feature: mailroom_contract::Feature },
}

impl From<RequestError> for Refusal {
    fn from(error: RequestError) -> Refusal {
        match error {
            RequestError::FeatureDisabled { feature } => Refusal::new(
                404,
                "feature_disabled",
                format!("This node does not run {}.", feature.describe()),
                format!("{} is a feature the node's operator turns on, and it is off here.", feature.describe()),
                format!(
                    "Ask the node's operator to set {} = \"true\" in wrangler.toml's [vars] and deploy.",
                    feature.variable()
                ),
            ),
            RequestError::NoSuchRoute { method, path } => Refusal::new(
                404,
                "no_such_route",
                format!("Nothing answers {method} {path}."),
                "The node declares no route with that path.",
                "See the OpenAPI document or the Agent Skill for the routes the node offers.",
            ),
            RequestError::MethodNotAllowed { method, path, allowed } => {
                let mut refusal = Refusal::new(
                    405,
                    "method_not_allowed",
                    format!("{path} does not answer {method}."),
                    format!("The route exists but answers only {allowed}."),
                    format!("Use {allowed}."),
                );
                refusal.allow = Some(allowed);
                refusal
            }
            RequestError::BodyTooLarge { limit } => Refusal::new(
                413,
                "body_too_large",
                "The request body is too large.",
                format!("The node reads request bodies of at most {limit} bytes."),
                "Send a smaller body.",
            ),
            RequestError::BodyNotExpected => Refusal::new(
                400,
                "unexpected_body",
                "This route takes no request body.",
                "A body was sent to a route that declares none, so the node cannot tell what was meant.",
                "Send the request without a body; pass values in the path or query.",
            ),
            RequestError::MissingBody => Refusal::new(
                400,
                "missing_body",
                "This route needs a JSON request body.",
                "The request had no body.",
                "Send a JSON object as described by the route's request schema.",
            ),
            RequestError::MalformedJson { detail } => Refusal::new(
                400,
                "malformed_json",
                "The request body is not valid JSON.",
                detail,
                "Send a well-formed JSON object.",
            ),
            RequestError::InvalidBody { field, fault } => {
                let (message, reason, fix) = match fault {
                    BodyFault::Missing => (
                        format!("The request body lacks `{field}`."),
                        format!("`{field}` is required by this route's request schema and was not sent."),
                        format!("Send `{field}`, as the route's request schema describes."),
                    ),
                    BodyFault::Unknown { detail } => (
                        format!("The request body has a field this route does not take: `{field}`."),
                        format!("`{field}`: {detail}."),
                        format!("Remove `{field}`, or correct its spelling."),
                    ),
                    BodyFault::Wrong { detail } if field.is_empty() => (
                        "The request body does not have the shape this route needs.".to_string(),
                        format!("{detail}."),
                        "Send a JSON object as described by the route's request schema.".to_string(),
                    ),
                    BodyFault::Wrong { detail } => (
                        format!("The request body's `{field}` does not have the shape this route needs."),
                        format!("`{field}`: {detail}."),
                        format!("Correct `{field}` to match the route's request schema."),
                    ),
                };
                Refusal::new(400, "invalid_body", message, reason, fix)
            }
            RequestError::UnknownQueryParameter { name, known } => Refusal::new(
                400,
                "unknown_query_parameter",
                format!("The query parameter `{name}` is not one this route takes."),
                if known.is_empty() {
                    "This route takes no query parameters.".to_string()
                } else {
                    format!("This route takes: {known}.")
                },
                "Remove it, or correct its spelling.",
            ),
            RequestError::InvalidQueryParameter { name, expected } => Refusal::new(
                400,
                "invalid_query_parameter",
                format!("The query parameter `{name}` has a value this route cannot use."),
                format!("`{name}` must be {expected}."),
                format!("Send `{name}` as {expected}, or leave it out."),
            ),
            RequestError::MissingPathParameter { name, described } => Refusal::new(
                400,
                "missing_path_parameter",
                format!("The path leaves out `{name}`."),
                format!(
                    "The segment of the path that gives `{name}` is empty, or still its placeholder, so it names \
                     nothing; nothing was looked up."
                ),
                format!("Put {} in that segment.", in_a_sentence(described)),
            ),
            RequestError::MissingQueryParameter { name, described } => Refusal::new(
                400,
                "missing_query_parameter",
                format!("The query leaves out `{name}`."),
                format!("This route needs `{name}`: {}", in_a_sentence(&described)),
                format!("Send `{name}` in the query."),
            ),
            RequestError::InvalidPathParameter { name, expected } => Refusal::new(
                404,
                "not_found",
                format!("`{name}` does not name anything here."),
                format!("`{name}` must be {expected}."),
                "Check the id; list what you can see to find the right one.",
            ),
        }
    }
}
