//! The route table, built once from the contract, and finding a request's
//! route in it by method and path, with its path parameters; a path no route
//! has, or a method the path does not take, is refused naming what it does.

use std::collections::HashMap;
use std::sync::OnceLock;

use mailroom_contract::{Method, PathParameter, Route, RouteId, registry};

use crate::core::http::Response;
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;

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

/// The methods a browser page of another origin may call at `path`, as a
/// preflight's answer names them (`POST, OPTIONS`), when routes declared
/// `cross_origin` answer it. Built once from the contract; asked of every
/// request, so it is one lookup of the path as it came, allocating nothing.
pub(super) fn cross_origin_methods(path: &str) -> Option<&'static str> {
    static PATHS: OnceLock<HashMap<String, String>> = OnceLock::new();
    let paths = PATHS.get_or_init(|| {
        let mut methods: HashMap<String, Vec<&'static str>> = HashMap::new();
        for route in registry().routes().iter().filter(|route| route.cross_origin) {
            // A path with parameters would not be one string: the contract's
            // tests build this table, so such a route fails there.
            assert!(route.path_parameters.is_empty(), "{} is cross_origin and has path parameters", route.path);
            let slashed = route.trailing_slash.then(|| format!("{}/", route.path));
            for path in std::iter::once(route.path.to_string()).chain(slashed) {
                methods.entry(path).or_default().push(route.method.as_str());
            }
        }
        methods
            .into_iter()
            .map(|(path, mut methods)| {
                methods.sort_unstable();
                methods.push("OPTIONS");
                (path, methods.join(", "))
            })
            .collect()
    });
    paths.get(path).map(String::as_str)
}

/// A route the table found, with the values of its path's parameters.
type Found = (&'static Route, Vec<(PathParameter, String)>);

/// Finds the route for a method and path, with its path parameters.
pub(super) fn find_route(method: &str, path: &str) -> Result<Found, RequestError> {
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
