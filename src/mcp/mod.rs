//! The MCP server at `POST /mcp`: Streamable HTTP with JSON responses, stateless,
//! speaking the `initialize` era (2025-06-18, 2025-11-25) and the per-request
//! `_meta` era (2026-07-28) on the same endpoint.
//!
//! Its tools are the node's routes. Which ones a caller sees depends on who is
//! asking: an agent sees the grantable routes pinned to it, a person the
//! offerable routes they could complete; a caller without a credential is
//! challenged (401) before it is read at all (decision 0026). A tool call
//! builds the route's own HTTP request from the arguments and re-enters the
//! dispatcher in process with the caller's own credentials, so it meets the same
//! authority check, the same refusal and the same audit entry as the REST call
//! (recorded with surface `mcp`). Nothing here calls the functions beneath the
//! router, and nothing fetches the node's origin.
//!
//! "Could complete" is exact as far as tuples go, in the one round trip
//! `tools/list` may cost: with the session's liveness travel the relations the
//! person holds on the organisation and each distinct set of relations they hold
//! together on some mailbox (a few rows, however many mailboxes), so a mailbox
//! route is listed only where one mailbox meets its whole authority. A call is
//! judged by the route alone, as REST is: a withheld tool (by tier, by
//! grantability, an organisation relation not held, outside an agent's ceiling)
//! is the protocol error -32602 carrying the four-part refusal, but a mailbox
//! tool off a person's list answers the route's own refusal (`not_found`,
//! `missing_relation`) as a tool result, because knowing that no mailbox anywhere
//! would do costs a round trip the route itself does not take
//! (`docs/decisions/0009-mcp-catalogue-by-mailbox.md`). A withheld tool's call
//! still re-enters the dispatcher, so the chain holds what the REST call leaves
//! there; and a refusal of the caller's own credential (dead, or its agent
//! stopped) is answered as HTTP on every method, a tool call's included
//! (`docs/decisions/0012-withheld-tool-calls-and-dead-credentials-over-mcp.md`).
//!
//! `catalogue` decides which tools a caller sees and why a real route is
//! withheld; `arguments` holds a call's argument names to the tool's schema
//! (decision 0030); `call` turns a tool call into the route's own request and
//! back.
//! `resources` names what an agent watches (a mailbox, a conversation, its own
//! feed, reminders and inbox) by URI, each read through its route as a tool is;
//! `listen` streams what changes in them (2026-07-28's `subscriptions/listen`).
//! `protocol` is the protocol itself: JSON-RPC, the two eras, their headers.

mod arguments;
mod call;
mod catalogue;
mod errors;
mod listen;
mod protocol;
mod resources;

pub use catalogue::WithheldTool;
pub use protocol::{LEGACY_VERSIONS, MODERN_VERSION, handle, supported_versions};
