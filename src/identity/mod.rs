//! Identity: who can act on the node and what they hold. Setting the node up
//! (`setup`), sessions and passwords (`sessions`, `password`), people (`people`),
//! teams (`teams`) and the relations granted to people, teams and agents
//! (`relations`), each with its routes, its errors and their refusals.
//!
//! Other domains reach this one through the items re-exported here.

mod errors;
pub mod password;
pub mod people;
pub mod relations;
pub mod sessions;
pub mod setup;
mod store;
pub mod teams;

pub(crate) use store::name_of_person;
