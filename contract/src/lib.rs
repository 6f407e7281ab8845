//! The contract: every HTTP route of Mailroom, declared once, as data.
//!
//! A route's method, path, tool name, descriptions, parameters, schemas, exposure
//! tier, authority and whether it reaches message content live here and nowhere
//! else. The worker's router, the MCP catalogue, the Agent Skill, the capability
//! vocabulary and the OpenAPI document are all read from this crate, so they
//! cannot disagree about what a machine may do.
//!
//! This crate performs no I/O and knows nothing of the `worker` crate: it is plain
//! data and the pure functions that derive facts from it.

pub mod api;
#[cfg(feature = "schemas")]
pub mod artifacts;
pub mod capabilities;
#[cfg(feature = "schemas")]
pub mod openapi;
pub mod registry;
pub mod relation;
pub mod route;
pub mod route_id;
pub mod routes;
pub mod skill;
pub mod statuses;
pub mod tools;
mod vocabulary;
pub mod withheld;

pub use registry::{ContractError, Registry, registry};
pub use relation::{ObjectKind, Relation};
pub use route::{Accepts, Authority, Exposure, Feature, Method, Parameter, PathParameter, Refuses, Route, Tier};
pub use route_id::RouteId;
pub use statuses::{Answer, Carries, MAXIMUM_BODY_BYTES};
