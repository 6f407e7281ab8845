//! The dispatcher: the one path every request takes, REST or MCP alike.
//!
//! parse (route, body size, query) → authenticate (the credential's claim) →
//! authority (the checks the route's declared authority needs) → handler →
//! audit → response. The route table is built from the contract, and the match in
//! `handlers::handle` names every route's handler, so a declared route without a
//! handler does not compile.
//!
//! `router` finds a request's route in the table built from the contract,
//! `shape` holds the request to what the route declares, and `dispatcher`
//! takes it from the one to the handler and back.

mod dispatcher;
mod handlers;
mod router;
mod shape;

pub use dispatcher::dispatch;
pub use router::{refused_before_dispatch, route_for};
