//! The shape of one route declaration: method, path, tool name, words for the
//! reader, parameters, schemas, exposure and authority.
//!
//! Everything a surface needs to know about a route is a field here or is derived
//! from one by a method here. Nothing in this module knows how a route is served.
//! A file a type (or a pair that belong together); this module only gathers them,
//! so each is `route::X` wherever it is named.

mod authority;
mod declaration;
mod feature;
mod method;
mod parameter;
mod produces;
mod refuses;
mod tier;

pub use authority::{Authority, mailbox_relations_met};
pub use declaration::{Route, SchemaFunction};
pub use feature::Feature;
pub use method::Method;
pub use parameter::{Accepts, Parameter, PathParameter};
pub use produces::Produces;
pub use refuses::Refuses;
pub use tier::{Exposure, Tier};
