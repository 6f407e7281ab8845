//! The request as the dispatcher read it: the route it matched, when it is
//! handled, which surface it came through, its path and query parameters, and
//! its body, decoded on demand into the route's request type.
//!
//! Read-only: nothing a handler does changes what was asked.

use mailroom_contract::{PathParameter, Route};
use serde::de::DeserializeOwned;

use crate::core::http::{Request, Surface};
use crate::core::refusal::Refusal;
use crate::core::request_error::{BodyFault, RequestError};

/// What was asked, and of which route.
pub struct RequestView<'request> {
    route: &'static Route,
    request: &'request Request,
    now_ms: i64,
    surface: Surface,
    path: Vec<(PathParameter, String)>,
    query: Vec<(String, String)>,
}

impl<'request> RequestView<'request> {
    pub(super) fn new(
        route: &'static Route,
        request: &'request Request,
        now_ms: i64,
        surface: Surface,
        path: Vec<(PathParameter, String)>,
        query: Vec<(String, String)>,
    ) -> RequestView<'request> {
        RequestView { route, request, now_ms, surface, path, query }
    }

    pub fn route(&self) -> &'static Route {
        self.route
    }

    /// The HTTP request itself: headers, body, the client's address.
    pub fn request(&self) -> &'request Request {
        self.request
    }

    /// The time this request is handled at, read once from the platform.
    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    pub fn surface(&self) -> Surface {
        self.surface
    }

    /// The value of a path parameter, if the route's path names it.
    pub fn path(&self, parameter: PathParameter) -> Option<&str> {
        self.path.iter().find(|(name, _)| *name == parameter).map(|(_, value)| value.as_str())
    }

    /// The value of the path's first parameter: the object a call acts on, when
    /// its handler names no other.
    pub fn first_path_value(&self) -> Option<&str> {
        self.path.first().map(|(_, value)| value.as_str())
    }

    /// A query parameter, if the request sent it.
    pub fn query(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    /// Decodes the JSON body into the route's request type, naming the field at fault.
    pub fn body<T: DeserializeOwned>(&self) -> Result<T, Refusal> {
        if self.request.body.iter().all(u8::is_ascii_whitespace) {
            return Err(RequestError::MissingBody.into());
        }
        let value: serde_json::Value = serde_json::from_slice(&self.request.body)
            .map_err(|error| RequestError::MalformedJson { detail: describe_json_error(&error) })?;
        // Every request body the contract declares is an object; serde would
        // read an array as a struct's fields in order, and fault its first element.
        if !value.is_object() {
            let detail = format!("the body must be a JSON object, not {}", json_kind(&value));
            return Err(RequestError::InvalidBody { field: String::new(), fault: BodyFault::Wrong { detail } }.into());
        }
        serde_path_to_error::deserialize(value).map_err(|error| invalid_body(&error).into())
    }

    /// Decodes an optional JSON body: an empty body is the type's default.
    pub fn optional_body<T: DeserializeOwned + Default>(&self) -> Result<T, Refusal> {
        if self.request.body.iter().all(u8::is_ascii_whitespace) {
            return Ok(T::default());
        }
        self.body()
    }
}

/// Where a body that does not deserialize goes wrong, and how.
fn invalid_body(error: &serde_path_to_error::Error<serde_json::Error>) -> RequestError {
    let path = error.path().to_string();
    let at = if path == "." { String::new() } else { path };
    let detail = error.inner().to_string();
    // serde names a missing field only in its message, and the path stops at the
    // object that lacks it; an unknown field's path ends at its key.
    if let Some(name) = detail.strip_prefix("missing field `").and_then(|rest| rest.strip_suffix('`')) {
        let field = if at.is_empty() { name.to_string() } else { format!("{at}.{name}") };
        return RequestError::InvalidBody { field, fault: BodyFault::Missing };
    }
    let fault =
        if detail.starts_with("unknown field `") { BodyFault::Unknown { detail } } else { BodyFault::Wrong { detail } };
    RequestError::InvalidBody { field: at, fault }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "true or false",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

fn describe_json_error(error: &serde_json::Error) -> String {
    format!("{error} (line {}, column {})", error.line(), error.column())
        .replace(&format!(" at line {} column {}", error.line(), error.column()), "")
}
