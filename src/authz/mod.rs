//! Authority: turning a route's declared authority into the checks the dispatcher
//! runs, and the errors when they fail.
//!
//! The contract says what a route needs; this module says how that is asked of
//! the database. It decides nothing per route: a route's authority is data in the
//! contract, and the dispatcher enforces exactly that data, plus, for an agent,
//! its pinned ceiling, on every surface alike. Each check is an `Admission` the
//! core's unit of work settles in the request's first round trip.
//!
//! Beside it: `credentials` (what a request claims, read without I/O), `tuples`
//! (every question of the relation table, where delegation lives), `holder`
//! (who such a question asks about), `store` (every statement authority builds),
//! `dual_control` (who stands on an actor's side, so cannot be its second person)
//! and `throttle` (the failure window that rate-limits guessing a secret).
//! The checks themselves are in `checks`, their refusals in `errors`.

mod checks;
pub mod credentials;
pub mod dual_control;
mod errors;
mod holder;
mod store;
pub mod throttle;
pub mod tuples;

pub use checks::{Check, ceiling_of, ceiling_tools, checks_for, holder_of};
pub use errors::AuthorityError;
pub use store::access::actor_live_in_sql;
