//! A request's shape against its route's declaration, before anything is
//! read: the body's size and presence, each path segment, and the query
//! string's parameters (declared, well formed, none required left out); and a
//! path parameter named as the caller's surface names it.

use mailroom_contract::{PathParameter, Route, tools};

use crate::core::http::{MAXIMUM_BODY_BYTES, Request, Surface};
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;

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

/// The request's size, body, path and query string against what the route
/// declares; answers the query parameters.
pub(super) fn request_shape(
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
pub(super) fn named_on(parameter: PathParameter, surface: Surface) -> String {
    match surface {
        Surface::Mcp => tools::argument_name(parameter).to_string(),
        Surface::Rest | Surface::A2a => parameter.name().to_string(),
    }
}
