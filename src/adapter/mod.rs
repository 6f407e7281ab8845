//! The adapter: the only code that names the `worker` crate.
//!
//! It turns a Worker `fetch` event into a core `Request`, hands the core a
//! `Database` on D1 and a `Platform` on the Workers runtime (clock, WebCrypto,
//! timers, console), and turns the core's `Response` back into a Worker one,
//! saying where its time went (`Server-Timing`) when the configuration asks. It
//! decides nothing about the product: every rule lives in the core.
//!
//! `events` holds the three entry points (`fetch`, `scheduled`, `email`),
//! `installation` the node a Worker's environment describes, `http` the
//! request and response carried across; `hubs` the Durable Objects that hold
//! listeners, `follow` the server-sent streams that listen through them,
//! `mailboxes` the Durable Objects that hold each mailbox's own database;
//! `d1`, `bindings` and `platform` are the core's traits on the runtime.

mod bindings;
mod d1;
mod events;
mod follow;
mod http;
mod hubs;
mod installation;
mod mailboxes;
mod platform;
