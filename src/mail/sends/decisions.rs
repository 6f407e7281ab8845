//! The second person's side of a send and what follows it: approving (which
//! seals it, re-checking the author's authority in the same transaction, then
//! dispatches it), refusing with a reason, and sending a failed send again.

use mailroom_contract::Relation;
use mailroom_contract::api::{RefuseSend, SendState};

use super::SendError;
use super::record::{SendRow, list_of, no_one, the_send, transition};
use crate::authz::tuples::{self, Holder};
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::refusal::Refusal;
use crate::core::storage::Statement;
use crate::mail::outbound::Manifest;

/// The checks every decision shares: a person, not the submitter, on a
/// submitted send. An agent's submission is its sponsor's for this purpose: the
/// agent acted under their authority, so they cannot be its second person.
fn decidable(context: &Context<'_>, row: &SendRow) -> Result<String, Refusal> {
    let Caller::Person { person_id, .. } = context.caller() else {
        return Err(SendError::AgentsCannotDecide.into());
    };
    if row.state != SendState::Submitted {
        return Err(SendError::WrongState { state: row.state, needs: SendState::Submitted }.into());
    }
    let submitted_as = [row.submitted_by.as_deref(), row.submitted_by_sponsor.as_deref()];
    if submitted_as.contains(&Some(person_id.as_str())) {
        return Err(SendError::OwnSubmission.into());
    }
    // Whoever minted the submitting agent, or handed it its credential, may be
    // holding that credential: they would be both sides of dual control.
    let handled_by = [row.submitted_by_minter.as_deref(), row.submitted_by_credential_issuer.as_deref()];
    if handled_by.contains(&Some(person_id.as_str())) {
        return Err(SendError::HandedTheAgent.into());
    }
    Ok(person_id.clone())
}

/// The holder the author's authority is read from at sealing, `now_ms`: a
/// person's own, or an agent's intersected with its sponsor's while it is live.
fn author_holder(author: &str, now_ms: i64) -> Holder {
    Holder::of_actor(author, now_ms)
}

/// `POST /api/mailboxes/:mailboxId/sends/:sendId/approve`.
pub async fn approve(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (mut row, _) = the_send(context, Vec::new()).await?;
    let approver = decidable(context, &row)?;
    let from_address = row.mailbox_address.clone().unwrap_or_default();
    let from_name = row.mailbox_display_name.clone().unwrap_or_default();
    let manifest = row.manifest(&from_address, &from_name, &approver, context.now_ms());
    let manifest_hash = manifest.hash();
    let parameters = vec![
        context.now_ms().into(),
        approver.as_str().into(),
        manifest.message_id.as_str().into(),
        manifest_hash.as_str().into(),
        context.now_ms().into(),
        context.now_ms().into(),
        from_address.as_str().into(),
        from_name.as_str().into(),
    ];
    transition(
        context,
        &row.id,
        (SendState::Submitted, SendState::Sealed),
        "decided_at = ?, decided_by = ?, message_id = ?, manifest_hash = ?, sealed_at = ?, \
         updated_at = ?, sealed_from_address = ?, sealed_from_name = ?",
        parameters,
    );
    // The seal-time check: the author must still hold send.propose here, asked
    // inside the transaction that seals, so no revocation can slip between.
    let author_may_propose =
        tuples::holds(&author_holder(&row.author, context.now_ms()), Relation::SendPropose, &row.mailbox_id);
    context.guard(
        Statement {
            sql: format!("({}) = 1", author_may_propose.sql).into(),
            parameters: author_may_propose.parameters,
        },
        SendError::AuthorLostAuthority { author: row.author.clone() },
    );
    context.audit_detail(serde_json::json!({
        "manifest_hash": manifest_hash,
        "message_id": manifest.message_id,
        "recipients": manifest.recipients().len(),
    }));
    context.commit_now().await?;

    row.state = SendState::Sealed;
    row.decided_at = Some(context.now_ms());
    row.decided_by = Some(approver);
    row.decided_by_name = row.caller_name.clone();
    row.message_id = Some(manifest.message_id.clone());
    row.manifest_hash = Some(manifest_hash);
    row.sealed_at = Some(context.now_ms());
    row.sealed_from_address = Some(from_address);
    row.sealed_from_name = Some(from_name);
    row.updated_at = context.now_ms();

    dispatch(context, &mut row, &manifest).await;
    Ok(context.json(&row.present()))
}

/// `POST /api/mailboxes/:mailboxId/sends/:sendId/retry`.
pub async fn retry(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (mut row, _) = the_send(context, Vec::new()).await?;
    if row.state != SendState::Failed {
        return Err(SendError::WrongState { state: row.state, needs: SendState::Failed }.into());
    }
    // What leaves is rebuilt from the row, so it must still be what was approved.
    let manifest = row
        .sealed_manifest()
        .filter(|manifest| row.manifest_hash.as_deref() == Some(manifest.hash().as_str()))
        .ok_or_else(|| SendError::NotAsApproved { id: row.id.clone() })?;
    // Back to sealed before anything leaves, committed: of two retries at once,
    // one finds it sealed and is refused, so nobody receives it twice.
    transition(
        context,
        &row.id,
        (SendState::Failed, SendState::Sealed),
        "updated_at = ?",
        vec![context.now_ms().into()],
    );
    context.audit_detail(serde_json::json!({
        "manifest_hash": row.manifest_hash,
        "recipients": undelivered(manifest.recipients(), &list_of(&row.delivered_json)).len(),
        "earlier_error": row.dispatch_error,
    }));
    context.commit_now().await?;
    row.state = SendState::Sealed;
    row.updated_at = context.now_ms();
    dispatch(context, &mut row, &manifest).await;
    Ok(context.json(&row.present()))
}

/// The envelope recipients of `recipients` not yet among `delivered`: those a
/// dispatch hands the message to, so nobody receives it twice.
fn undelivered<'recipient>(recipients: Vec<&'recipient str>, delivered: &[String]) -> Vec<&'recipient str> {
    recipients.into_iter().filter(|recipient| !delivered.iter().any(|done| done == recipient)).collect()
}

/// Hands a sealed send's message to the mail binding, one envelope recipient at
/// a time (the binding takes one), skipping those it already reached, and records
/// the outcome with a deferred write: dispatched once every recipient has it,
/// otherwise failed, saying exactly who has it and who does not.
async fn dispatch(context: &mut Context<'_>, row: &mut SendRow, manifest: &Manifest) {
    let mut delivered = list_of(&row.delivered_json);
    let mut failures = Vec::new();
    match manifest.to_message() {
        Ok(raw) => {
            let pending = undelivered(manifest.recipients(), &delivered);
            for recipient in pending {
                match context.node().mailer.send(&manifest.from_address, recipient, &raw).await {
                    Ok(()) => delivered.push(recipient.to_string()),
                    Err(error) => failures.push(format!("not delivered to {recipient}: {}", error.0)),
                }
            }
        }
        Err(error) => failures.push(error.0),
    }
    if !failures.is_empty() && !delivered.is_empty() {
        failures.push(format!("delivered to {}", delivered.join(", ")));
    }
    let delivered_json = serde_json::to_string(&delivered).unwrap_or_else(|_| no_one());
    row.delivered_json = delivered_json.clone();
    row.updated_at = context.now_ms();
    if failures.is_empty() {
        row.state = SendState::Dispatched;
        row.dispatched_at = Some(context.now_ms());
        row.dispatch_error = None;
        context.defer_write(
            Statement::new(
                "UPDATE sends SET state = ?4, dispatched_at = ?2, updated_at = ?2, dispatch_error = NULL, \
                 delivered_json = ?3 WHERE id = ?1 AND state = ?5",
            )
            .bind(row.id.as_str())
            .bind(context.now_ms())
            .bind(delivered_json)
            .bind(SendState::Dispatched.name())
            .bind(SendState::Sealed.name()),
        );
    } else {
        let error = failures.join("; ");
        context.platform().log(&format!("dispatching {}: {error}", row.id));
        row.state = SendState::Failed;
        row.dispatch_error = Some(error.clone());
        context.defer_write(
            Statement::new(
                "UPDATE sends SET state = ?5, dispatch_error = ?2, updated_at = ?3, delivered_json = ?4 \
                 WHERE id = ?1 AND state = ?6",
            )
            .bind(row.id.as_str())
            .bind(error)
            .bind(context.now_ms())
            .bind(delivered_json)
            .bind(SendState::Failed.name())
            .bind(SendState::Sealed.name()),
        );
    }
}

/// `POST /api/mailboxes/:mailboxId/sends/:sendId/refuse`.
pub async fn refuse(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: RefuseSend = context.body()?;
    let reason = request.reason.trim().to_string();
    if reason.is_empty() || reason.chars().count() > 1000 {
        return Err(SendError::InvalidReason.into());
    }
    let (mut row, _) = the_send(context, Vec::new()).await?;
    let decider = decidable(context, &row)?;
    row.state = SendState::Refused;
    row.decided_at = Some(context.now_ms());
    row.decided_by = Some(decider.clone());
    row.decided_by_name = row.caller_name.clone();
    row.refusal_reason = Some(reason.clone());
    row.updated_at = context.now_ms();
    let parameters =
        vec![context.now_ms().into(), decider.as_str().into(), reason.as_str().into(), context.now_ms().into()];
    transition(
        context,
        &row.id,
        (SendState::Submitted, SendState::Refused),
        "decided_at = ?, decided_by = ?, refusal_reason = ?, updated_at = ?",
        parameters,
    );
    context.audit_detail(serde_json::json!({ "reason": reason }));
    Ok(context.json(&row.present()))
}
