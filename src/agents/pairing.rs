//! Pairing: a short-lived, single-use code an agent's software redeems for the
//! agent's credential, so nobody copies a credential by hand. The code is the
//! credential for that one call; wrong codes are throttled per address.

use mailroom_contract::api::{AgentCredential, PairingCode, RedeemPairingCode};

use super::errors::AgentError;
use super::lifecycle::the_agent;
use super::store;
use crate::authz::credentials::{NamingCredential, new_pairing_code};
use crate::authz::throttle::Window;
use crate::core::caller::AgentProof;
use crate::core::context::Context;
use crate::core::crypto::{hash_secret, hex};
use crate::core::http::Response;
use crate::core::platform::random_bytes;
use crate::core::refusal::Refusal;
use crate::core::time::{MINUTE_MS, rfc3339};

/// How long a pairing code works.
pub const PAIRING_CODE_LIFETIME_MS: i64 = 10 * MINUTE_MS;

/// Queues a new pairing code for `agent_id` and answers it.
pub(super) fn issue_code(context: &mut Context<'_>, agent_id: &str) -> PairingCode {
    let code = new_pairing_code(context.platform());
    let expires_at = context.now_ms() + PAIRING_CODE_LIFETIME_MS;
    let issued_by = context.caller().actor_id().map(str::to_string);
    context.write(store::insert_pairing_code(hash_secret(&code), agent_id, context.now_ms(), expires_at, issued_by));
    PairingCode { agent_id: agent_id.to_string(), code, expires_at: rfc3339(expires_at) }
}

/// `POST /api/agents/:agentId/pairing-code`.
pub async fn issue_pairing_code(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (row, _) = the_agent(context).await?;
    if row.revoked_at.is_some() {
        return Err(AgentError::Revoked.into());
    }
    let code = issue_code(context, &row.id);
    context.audit_detail(serde_json::json!({ "expires_at": code.expires_at }));
    Ok(context.json(&code))
}

/// `POST /api/agents/pair`.
pub async fn redeem_pairing_code(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: RedeemPairingCode = context.body()?;
    // Counted before the code is looked at: parallel guesses cannot all slip under the limit.
    let window = Window::pairing(context.request().client_address.as_deref());
    let attempt = hex(&random_bytes::<16>(context.platform()));
    let code_hash = hash_secret(request.code.trim());
    let code = store::pairing_code(&code_hash);
    let [code, reserved] = context.read_array([code, window.reserve(context.now_ms(), &attempt)]).await?;
    if let Err(retry_after_seconds) = window.admits(&reserved, context.now_ms(), &attempt) {
        return Err(AgentError::TooManyPairingAttempts { retry_after_seconds }.into());
    }
    let usable = code.first().filter(|row| {
        row.optional_integer("redeemed_at").ok().flatten().is_none()
            && row.optional_integer("revoked_at").ok().flatten().is_none()
            && row.integer("expires_at").is_ok_and(|expires_at| expires_at > context.now_ms())
    });
    // A wrong code keeps its reservation: it is its failure.
    let Some(row) = usable else {
        return Err(AgentError::PairingCodeInvalid.into());
    };
    context.write(window.release());
    let agent_id = row.text("agent_id").map_err(|error| context.internal(error))?;
    let sponsor = row.text("sponsor_id").map_err(|error| context.internal(error))?;
    let credential = NamingCredential::Agent.issue(&agent_id, context.platform());
    context.write_changing_one_row(
        store::redeem_pairing_code(&code_hash, context.now_ms()),
        AgentError::PairingCodeInvalid,
    );
    // Whoever issued the code handed the agent this credential: never the second
    // person on what the agent submits.
    let issued_by = row.optional_text("issued_by").map_err(|error| context.internal(error))?;
    context.write(store::set_credential(&agent_id, hash_secret(&credential), issued_by));
    // The code proved who is redeeming it: the entry names the agent, under its sponsor.
    let proof = AgentProof::Credential { hash: hash_secret(&credential) };
    context.attribute_to_agent(agent_id.clone(), proof, sponsor);
    context.audit_object(agent_id.clone());
    Ok(context.json(&AgentCredential { agent_id, credential }))
}
