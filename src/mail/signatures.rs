//! Signatures: one a mailbox's people keep for it, and one each person keeps
//! for themselves, which the interface adds once to a new draft, the
//! person's above the mailbox's (decision 0045). This module owns their six
//! routes; the text is checked as saved replies are (`replies::checked_text`),
//! and its SQL is in `store::replies`.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{SetSignature, Signature, reply_limits};

use super::replies::checked_text;
use super::store::replies::{self as store, SignatureRow};
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::refusal::Refusal;
use crate::core::time::rfc3339;

/// Whose signature a call is about: the path's mailbox, or the signed-in person.
enum Owner {
    Mailbox,
    Me,
}

fn owner_id(context: &Context<'_>, owner: Owner) -> Result<String, Refusal> {
    match owner {
        Owner::Mailbox => Ok(context.path(PathParameter::MailboxId)?.to_string()),
        // A person's own routes are never offered to an agent, so any other
        // caller is a fault of the node's, not of the request.
        Owner::Me => match context.caller() {
            Caller::Person { person_id, .. } => Ok(person_id.clone()),
            Caller::Agent { .. } | Caller::Stranger | Caller::Source { .. } | Caller::Peer { .. } => {
                Err(context.internal("a person's signature route reached by someone other than a person"))
            }
        },
    }
}

/// The answer for `owner_id`'s signature as `row` has it, or none.
fn present(owner_id: String, row: Option<SignatureRow>) -> Signature {
    let (text, updated_by, updated_at) = match row {
        Some(row) => (row.text, Some(row.updated_by), Some(rfc3339(row.updated_at))),
        None => (String::new(), None, None),
    };
    Signature { owner: owner_id, text, updated_by, updated_at, limit: reply_limits::SIGNATURE_CHARACTERS }
}

async fn get(context: &mut Context<'_>, owner: Owner) -> Result<Response, Refusal> {
    let owner_id = owner_id(context, owner)?;
    let [found] = context.read_array([store::signature(&owner_id)]).await?;
    let row = found.decode_all::<SignatureRow>().map_err(|error| context.internal(error))?.into_iter().next();
    Ok(context.json(&present(owner_id, row)))
}

async fn set(context: &mut Context<'_>, owner: Owner) -> Result<Response, Refusal> {
    let request: SetSignature = context.body()?;
    let text = checked_text("text", &request.text, reply_limits::SIGNATURE_CHARACTERS)?;
    let owner_id = owner_id(context, owner)?;
    let author = context.caller().actor_id().unwrap_or_default().to_string();
    let now_ms = context.now_ms();
    context.audit_object(owner_id.clone());
    context.write(store::set_signature(&owner_id, &text, &author, now_ms));
    Ok(context.json(&present(owner_id, Some(SignatureRow { text, updated_by: author, updated_at: now_ms }))))
}

async fn remove(context: &mut Context<'_>, owner: Owner) -> Result<Response, Refusal> {
    let owner_id = owner_id(context, owner)?;
    context.audit_object(owner_id.clone());
    context.write(store::remove_signature(&owner_id));
    Ok(context.json(&present(owner_id, None)))
}

/// `GET /api/mailboxes/:mailboxId/signature`.
pub async fn get_mailbox(context: &mut Context<'_>) -> Result<Response, Refusal> {
    get(context, Owner::Mailbox).await
}

/// `PUT /api/mailboxes/:mailboxId/signature`.
pub async fn set_mailbox(context: &mut Context<'_>) -> Result<Response, Refusal> {
    set(context, Owner::Mailbox).await
}

/// `DELETE /api/mailboxes/:mailboxId/signature`.
pub async fn remove_mailbox(context: &mut Context<'_>) -> Result<Response, Refusal> {
    remove(context, Owner::Mailbox).await
}

/// `GET /api/me/signature`.
pub async fn get_mine(context: &mut Context<'_>) -> Result<Response, Refusal> {
    get(context, Owner::Me).await
}

/// `PUT /api/me/signature`.
pub async fn set_mine(context: &mut Context<'_>) -> Result<Response, Refusal> {
    set(context, Owner::Me).await
}

/// `DELETE /api/me/signature`.
pub async fn remove_mine(context: &mut Context<'_>) -> Result<Response, Refusal> {
    remove(context, Owner::Me).await
}
