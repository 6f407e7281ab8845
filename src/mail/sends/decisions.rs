//! The second person's side of a send and what follows it: approving (which
//! seals it, re-checking the author's authority in the same transaction, then
//! dispatches it), refusing with a reason, and sending a failed send again.

use mailroom_contract::PathParameter;
use mailroom_contract::api::limits::OUTBOUND_MESSAGE_BYTES;
use mailroom_contract::api::{ApproveSend, NotificationKind, RefuseSend, SendState};

use super::errors::{Oversized, SendError};
use super::record::{list_of, the_send};
use super::store::{self, Seal, SendRow, no_one};
use super::version::Submission;
use crate::core::bindings::MailerError;
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::events::Topic;
use crate::core::http::Response;
use crate::core::ids::{IdKind, new_id};
use crate::core::refusal::Refusal;
use crate::mail::message_ids;
use crate::mail::outbound::{Manifest, OutboundFile};
use crate::mail::threads::linking;
use crate::notifications::{self, Addressee, Notice};

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

/// Reads the path's send for a decision on `version`, the one the decider was
/// shown, and refuses unless the send is still exactly that submission, saying
/// what changed since (read from the version named, in the same round trip).
async fn the_version(context: &mut Context<'_>, version: &str) -> Result<(SendRow, String), Refusal> {
    let send_id = context.path(PathParameter::SendId)?.to_string();
    let named = store::named_version(&send_id, version);
    let (row, results) = the_send(context, vec![named]).await?;
    let decider = decidable(context, &row)?;
    if row.version().as_deref() != Some(version) {
        let earlier: Option<Submission> = results
            .first()
            .and_then(|result| result.rows.first())
            .and_then(|named| named.text("submission_json").ok())
            .and_then(|json| serde_json::from_str(&json).ok());
        let changes = earlier.zip(row.submission()).map(|(earlier, now)| now.changes_from(&earlier));
        return Err(SendError::Changed { changes }.into());
    }
    Ok((row, decider))
}

/// `POST /api/mailboxes/:mailboxId/sends/:sendId/approve`.
pub async fn approve(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: ApproveSend = context.body()?;
    let (mut row, approver) = the_version(context, &request.version).await?;
    // A send submitted before versions were recorded is sealed with the version
    // its row read as, so its manifest names it too.
    row.submitted_version = Some(request.version.clone());
    let from_address = row.mailbox_address.clone().unwrap_or_default();
    let from_name = row.mailbox_display_name.clone().unwrap_or_default();
    let manifest = row.manifest(&from_address, &from_name, &approver, context.now_ms());
    // Counted as it will be written, before anything is sealed: a send
    // submitted before its size was counted, or whose sender's name grew since.
    let size = manifest.written_size();
    if size > OUTBOUND_MESSAGE_BYTES {
        return Err(SendError::MessageTooLarge { size, step: Oversized::Approving }.into());
    }
    let manifest_hash = manifest.hash();
    // Changed only while it still holds the version the approver named (for a
    // send submitted before versions were recorded, the one its row read as):
    // a submission replaced between the read and this commit is never sealed.
    let row_version = row.version().unwrap_or_default();
    let seal = Seal {
        approver: &approver,
        message_id: &manifest.message_id,
        manifest_hash: &manifest_hash,
        sealed_at: context.now_ms(),
        from_address: &from_address,
        from_name: &from_name,
    };
    context.write_changing_one_row(store::sealed(&row.id, (&row_version, &request.version), seal), SendError::Raced);
    // The seal-time check: the author must still hold send.propose here (a
    // person's own, or an agent's intersected with its sponsor's while it is
    // live), asked inside the transaction that seals, so no revocation can slip
    // between.
    context.guard(
        store::author_still_proposes(&row.author, &row.mailbox_id, context.now_ms()),
        SendError::AuthorLostAuthority { author: row.author.clone() },
    );
    // The sealed send joins the conversation it answers, or begins one.
    let (thread_id, new_thread) = match &row.thread_id {
        Some(thread_id) => (thread_id.clone(), false),
        None => (new_id(IdKind::Thread, context.platform()), true),
    };
    for statement in linking::seal_into(&row.id, &thread_id, new_thread, &row.subject) {
        context.write(statement);
    }
    context.write(notifications::resolve(NotificationKind::ApprovalWaiting, &row.id, context.now_ms()));
    context.audit_detail(serde_json::json!({
        "manifest_hash": manifest_hash,
        "version": request.version,
        "message_id": manifest.message_id,
        "recipients": manifest.recipients().len(),
        "thread": thread_id,
    }));
    context.commit_now().await?;
    row.thread_id = Some(thread_id);

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
    context.write_changing_one_row(store::sealed_again(&row.id, context.now_ms()), SendError::Raced);
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
    // The files, from the object store; `to_message` checks each against the
    // hash that was approved.
    let mut files = Vec::with_capacity(manifest.attachments.len());
    for file in &manifest.attachments {
        match context.node().blobs.get(&OutboundFile::key(&file.sha256)).await {
            Ok(Some(bytes)) => files.push(bytes),
            Ok(None) => failures.push(format!("{} is no longer in the object store", file.name)),
            Err(error) => failures.push(format!("{} could not be read: {}", file.name, error.0)),
        }
    }
    let written = if failures.is_empty() { manifest.to_message(&files) } else { Err(MailerError(failures.join("; "))) };
    failures.clear();
    match written {
        Ok(raw) => {
            let pending = undelivered(manifest.recipients(), &delivered);
            for recipient in pending {
                match context.node().mailer.send(&manifest.from_address, recipient, &raw).await {
                    Ok(reported) => {
                        delivered.push(recipient.to_string());
                        // The service sets its own Message-ID on what leaves: a
                        // reply will name that one, so the conversation knows it.
                        if let Some(message_id) = reported.as_deref().and_then(message_ids::message_id) {
                            let mut known = list_of(&row.sent_message_ids_json);
                            if !known.contains(&message_id) {
                                known.push(message_id.clone());
                                row.sent_message_ids_json = serde_json::to_string(&known).unwrap_or_else(|_| no_one());
                            }
                            for statement in
                                linking::sent_as(&row.id, &row.mailbox_id, row.thread_id.as_deref(), &message_id)
                            {
                                context.defer_write(statement);
                            }
                        }
                    }
                    Err(error) => failures.push(format!("not delivered to {recipient}: {}", error.0)),
                }
            }
        }
        Err(error) => failures.push(error.0),
    }
    if !failures.is_empty() && !delivered.is_empty() {
        failures.push(format!("delivered to {}", delivered.join(", ")));
    }
    // The writer hears what became of it (an agent's sponsor, for an agent's).
    let outcome = if failures.is_empty() { NotificationKind::SendSent } else { NotificationKind::SendFailed };
    let failure = failures.join("; ");
    let actor = context.caller().actor_id().map(str::to_string);
    let notice = Notice {
        kind: outcome,
        object_id: &row.id,
        mailbox_id: Some(&row.mailbox_id),
        actor: actor.as_deref(),
        title: &row.subject,
        detail: (!failure.is_empty()).then_some(failure.as_str()),
    };
    context.defer_write(notifications::notify(&notice, Addressee::PersonOf(&row.author), context.platform()));
    if let Some(author) = Topic::of_party(&row.author) {
        context.tell_also(author);
    }
    let delivered_json = serde_json::to_string(&delivered).unwrap_or_else(|_| no_one());
    row.delivered_json = delivered_json.clone();
    row.updated_at = context.now_ms();
    if failures.is_empty() {
        row.state = SendState::Dispatched;
        row.dispatched_at = Some(context.now_ms());
        row.dispatch_error = None;
        context.defer_write(store::dispatched(&row.id, context.now_ms(), delivered_json));
    } else {
        let error = failures.join("; ");
        context.platform().log(&format!("dispatching {}: {error}", row.id));
        row.state = SendState::Failed;
        row.dispatch_error = Some(error.clone());
        context.defer_write(store::failed(&row.id, error, context.now_ms(), delivered_json));
    }
}

/// `POST /api/mailboxes/:mailboxId/sends/:sendId/refuse`.
pub async fn refuse(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: RefuseSend = context.body()?;
    let reason = request.reason.trim().to_string();
    if reason.is_empty() || reason.chars().count() > 1000 {
        return Err(SendError::InvalidReason.into());
    }
    let (mut row, decider) = the_version(context, &request.version).await?;
    row.state = SendState::Refused;
    row.decided_at = Some(context.now_ms());
    row.decided_by = Some(decider.clone());
    row.decided_by_name = row.caller_name.clone();
    row.refusal_reason = Some(reason.clone());
    row.updated_at = context.now_ms();
    let row_version = row.version().unwrap_or_default();
    context.write_changing_one_row(
        store::refused(&row.id, (&row_version, &request.version), &decider, &reason, context.now_ms()),
        SendError::Raced,
    );
    context.write(notifications::resolve(NotificationKind::ApprovalWaiting, &row.id, context.now_ms()));
    let notice = Notice {
        kind: NotificationKind::SendRefused,
        object_id: &row.id,
        mailbox_id: Some(&row.mailbox_id),
        actor: Some(&decider),
        title: &row.subject,
        detail: Some(&reason),
    };
    context.write(notifications::notify(&notice, Addressee::PersonOf(&row.author), context.platform()));
    if let Some(author) = Topic::of_party(&row.author) {
        context.tell_also(author);
    }
    context.audit_detail(serde_json::json!({ "reason": reason, "version": request.version }));
    Ok(context.json(&row.present()))
}
