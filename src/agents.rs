//! Agents: principals that act in their own right under a named person's
//! authority. For now, the capability vocabulary they will be minted from.

use mailroom_contract::{capabilities, registry};

use crate::context::Context;
use crate::http::Response;
use crate::refusal::Refusal;

/// `GET /api/agent-capabilities`.
pub async fn list_capabilities(context: &mut Context<'_>) -> Result<Response, Refusal> {
    Ok(context.json(&capabilities::vocabulary(registry())))
}
