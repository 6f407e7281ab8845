//! Identity: who can act on the node and what they hold. Setting the node up
//! (`setup`), sessions and passwords (`sessions`, `password`), people (`people`),
//! teams (`teams`) and the relations granted to people, teams and agents
//! (`relations`), each with its routes, its errors and their refusals.
//!
//! Other domains reach this one through the items re-exported here.

pub mod password;
pub mod people;
pub mod relations;
pub mod sessions;
pub mod setup;
pub mod teams;

use crate::core::refusal::Refusal;

/// The refusal of any change that would leave the node without an enabled
/// administrator: disabling one, removing one from a team, revoking org.admin.
fn last_administrator() -> Refusal {
    Refusal::new(
        409,
        "last_administrator",
        "This would leave the node without an administrator.",
        "At least one enabled person must hold org.admin, or nobody could manage the node.",
        "Grant org.admin to another person first, then try again.",
    )
}
