//! The core: what every request is made of, naming no runtime and no domain.
//!
//! The request and response (`http`), why a request is not understood
//! (`request_error`), the refusal type (`refusal`), storage (`storage`, and
//! each mailbox's own in `mailbox_storage`), the runtime's other bindings as traits (`platform`, `bindings`), the node a request
//! is handled with (`node`), typed ids, time, the small crypto every layer needs,
//! paging, email addresses, where the node's own requests may go (`outbound`),
//! what every webhook shares (`webhooks`), what names people type may not hold
//! (`text`), where one request's time goes (`timing`), who a request
//! claims to be (`caller`), what listeners are told after a commit
//! (`events`), and the context
//! a handler works through (`context`: the request as read, the unit of work and
//! the audit note). Nothing here imports a module above it: the layers above
//! provide the authority checks and the audit chain through the ports
//! `context::ports` names.

pub mod addresses;
pub mod background;
pub mod bindings;
pub mod caller;
pub mod context;
pub mod crypto;
pub mod delivery;
pub mod events;
pub mod http;
pub mod ids;
pub mod mailbox_storage;
pub mod node;
pub mod outbound;
pub mod paging;
pub mod platform;
pub mod refusal;
pub mod request_error;
pub mod storage;
pub mod text;
pub mod time;
pub mod timing;
pub mod webhooks;
