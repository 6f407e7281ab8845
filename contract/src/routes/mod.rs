//! The declarations: every route of the node, once, in a file per domain.
//!
//! `RouteId` (in `route_id`) names each route; `declare` says everything about
//! it, by calling the function that declares it in its domain's file (named as
//! its tool is: `identity::sign_in` declares `POST /api/sessions`). A new route
//! is declared in its domain's file and named once in `declare` (in `index`).
//!
//! How every route stays declared: the match in `declare` is exhaustive and has
//! no catch-all arm, so a new `RouteId` does not compile until it is matched to a
//! function, and that function must exist to be called. Each function names its
//! own `RouteId` in `Route::new`; the test beside `declare` holds that every
//! route is matched to its own declaration, so two arms cannot swap. The worker's
//! dispatcher matches on `RouteId` too, so a route cannot exist without a handler.
//! What several domains' declarations share is in `shared`.

// The declarations keep the layout they were written in (a refusal a line, a
// `const { &[ … ] }` block for a list): rustfmt cannot lay out most of them
// (their words run past the line width), and would give the few it can a
// nested layout of its own, so each domain's file is left as written.
#[rustfmt::skip]
mod a2a;
#[rustfmt::skip]
mod agents;
#[rustfmt::skip]
mod audit;
#[rustfmt::skip]
mod butlers;
#[rustfmt::skip]
mod exports;
#[rustfmt::skip]
mod identity;
#[rustfmt::skip]
mod interface;
#[rustfmt::skip]
mod mail;
#[rustfmt::skip]
mod mcp;
#[rustfmt::skip]
mod messaging;
#[rustfmt::skip]
mod notifications;
#[rustfmt::skip]
mod oauth;
#[rustfmt::skip]
mod reminders;
#[rustfmt::skip]
mod sends;
mod index;
mod shared;

pub use index::declare;
