//! The declarations: every route of the node, once, in a file per domain.
//!
//! `RouteId` (in `route_id`) names each route; `declare` says everything about
//! it, by calling the function that declares it in its domain's file (named as
//! its tool is: `identity::sign_in` declares `POST /api/sessions`). A new route
//! is declared in its domain's file and named once here.
//!
//! How every route stays declared: the match in `declare` is exhaustive and has
//! no catch-all arm, so a new `RouteId` does not compile until it is matched to a
//! function, and that function must exist to be called. Each function names its
//! own `RouteId` in `Route::new`; the test below holds that every route is
//! matched to its own declaration, so two arms cannot swap. The worker's
//! dispatcher matches on `RouteId` too, so a route cannot exist without a handler.
//! What several domains' declarations share is in `shared`.

mod a2a;
mod agents;
mod audit;
mod butlers;
mod exports;
mod identity;
mod index;
mod interface;
mod live;
mod mail;
mod mcp;
mod messaging;
mod notes;
mod notifications;
mod oauth;
mod peers;
mod reminders;
mod replies;
mod sends;
mod shared;
mod webhooks;

pub use index::declare;
