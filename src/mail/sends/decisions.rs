//! The second person's side of a send and what follows it: approving (which
//! seals it, re-checking the author's authority in the same transaction, then
//! dispatches it), refusing with a reason, and sending a failed send again.

use mailroom_contract::PathParameter;
use mailroom_contract::api::limits::OUTBOUND_MESSAGE_BYTES;
use mailroom_contract::api::{ApproveSend, NotificationKind, RefuseSend, SendState};

use super::errors::{Oversized, SendError};
use super::record::{Asked, TheSend, answer, list_of, the_send};
use super::store::{self, Seal, SendRow, no_one};
use super::version::Submission;
use crate::core::bindings::MailerError;
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::events::Topic;
use crate::core::http::Response;
use crate::core::ids::{IdKind, new_id};
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Statement};
use crate::mail::location::{self, MailStore};
use crate::mail::message_ids;
use crate::mail::names::Names;
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
async fn the_version(
    context: &mut Context<'_>,
    version: &str,
    directory: Vec<Statement>,
) -> Result<(TheSend, String), Refusal> {
    let send_id = context.path(PathParameter::SendId)?.to_string();
    let named = store::named_version(&send_id, version);
    let asked = Asked { directory, mail: vec![named], deciding: true };
    let the_send = the_send(context, asked).await?;
    let (row, results) = (&the_send.row, &the_send.mail);
    let decider = decidable(context, row)?;
    if row.version().as_deref() != Some(version) {
        let earlier: Option<Submission> = results
            .first()
            .and_then(|result| result.rows.first())
            .and_then(|named| named.text("submission_json").ok())
            .and_then(|json| serde_json::from_str(&json).ok());
        let changes = earlier.zip(row.submission()).map(|(earlier, now)| now.changes_from(&earlier));
        return Err(SendError::Changed { changes }.into());
    }
    Ok((the_send, decider))
}

/// Commits a call that hands a sealed send to the mail service next (an
/// approval, a retry), and answers whether its author still holds
/// send.propose on its mailbox. On D1 that is a guard in the sealing
/// transaction itself, refusing the call. A mailbox's own database shares no
/// transaction with D1, so there D1 is asked as the seal commits, at no
/// round trip's cost (with the author's name, when the read could not give
/// it): a send whose author had lost it is failed before anything leaves
/// (`stopped`).
async fn commit_checking_the_author(
    context: &mut Context<'_>,
    mail_store: MailStore,
    row: &mut SendRow,
) -> Result<bool, Refusal> {
    let now_ms = context.now_ms();
    if mail_store == MailStore::D1 {
        context.guard(
            store::author_still_proposes(&row.author, &row.mailbox_id, now_ms),
            SendError::AuthorLostAuthority { author: row.author.clone() },
        );
        context.commit_now().await?;
        return Ok(true);
    }
    let asked = vec![store::author_proposes(&row.author, &row.mailbox_id, now_ms), Names::of([row.author.as_str()])];
    let found = context.read_as_it_commits(asked).await?;
    let [proposes, names] = found.as_slice() else {
        return Err(context.internal("D1 answered too little beside a seal"));
    };
    let names = Names::read(names).map_err(|error| context.internal(error))?;
    row.name_from(&names);
    match proposes.first() {
        Some(answer) => Ok(answer.integer("proposes").map_err(|error| context.internal(error))? == 1),
        None => Err(context.internal("D1 did not say whether the author still proposes")),
    }
}

/// `POST /api/mailboxes/:mailboxId/sends/:sendId/approve`.
pub async fn approve(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: ApproveSend = context.body()?;
    // Whether the author D1 notes for it may still send from here, asked
    // before the send is read: refused now, as the seal's own check would.
    let send_id = context.path(PathParameter::SendId)?.to_string();
    let author_check = store::awaiting_author_proposes(&send_id, context.now_ms());
    let (TheSend { mut row, store: mail_store, directory, .. }, approver) =
        the_version(context, &request.version, vec![author_check]).await?;
    refuse_if_the_noted_author_may_not_send(context, &directory, &row)?;
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
    let sealed = store::sealed(&row.id, (&row_version, &request.version), seal);
    location::write_changing_one_row(context, mail_store, &row.mailbox_id, sealed, SendError::Raced)?;
    // The sealed send joins the conversation it answers, or begins one.
    let (thread_id, new_thread) = match &row.thread_id {
        Some(thread_id) => (thread_id.clone(), false),
        None => (new_id(IdKind::Thread, context.platform()), true),
    };
    for statement in linking::seal_into(&row.id, &thread_id, new_thread, &row.subject) {
        location::write(context, mail_store, &row.mailbox_id, statement)?;
    }
    let resolved = notifications::resolve(NotificationKind::ApprovalWaiting, &row.id, context.now_ms());
    location::write_after(context, mail_store, resolved);
    location::write_after(context, mail_store, store::no_longer_awaiting(&row.id));
    context.audit_detail(serde_json::json!({
        "manifest_hash": manifest_hash,
        "version": request.version,
        "message_id": manifest.message_id,
        "recipients": manifest.recipients().len(),
        "thread": thread_id,
    }));
    // The seal-time check: the author must still hold send.propose here (a
    // person's own, or an agent's intersected with its sponsor's while it is
    // live), asked as the seal commits, so no revocation can slip between.
    let author_proposes = commit_checking_the_author(context, mail_store, &mut row).await?;
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

    match author_proposes {
        true => dispatch(context, mail_store, &mut row, &manifest).await,
        false => stopped(context, mail_store, &mut row),
    }
    Ok(context.json(&row.present()))
}

/// Refuses a call that would hand send `row` to the mail service when the
/// author D1 noted for it (the first of the `directory`'s answers, from
/// `store::awaiting_author_proposes` or `failed_author_proposes`) no longer
/// holds send.propose on its mailbox: up front, as the guard in D1's own
/// sealing transaction refuses it for a send D1 holds.
fn refuse_if_the_noted_author_may_not_send(
    context: &Context<'_>,
    directory: &[QueryResult],
    row: &SendRow,
) -> Result<(), Refusal> {
    if let Some(noted) = directory.first().and_then(QueryResult::first) {
        let same_author = noted.text("author").is_ok_and(|author| author == row.author);
        if same_author && noted.integer("proposes").map_err(|error| context.internal(error))? != 1 {
            return Err(SendError::AuthorLostAuthority { author: row.author.clone() }.into());
        }
    }
    Ok(())
}

/// `POST /api/mailboxes/:mailboxId/sends/:sendId/retry`.
pub async fn retry(context: &mut Context<'_>) -> Result<Response, Refusal> {
    // Whether the author D1 notes for it may still send from here, asked
    // before the send is read: refused now, as the seal's own check would.
    let send_id = context.path(PathParameter::SendId)?.to_string();
    let asked =
        Asked { directory: vec![store::failed_author_proposes(&send_id, context.now_ms())], ..Asked::default() };
    let TheSend { mut row, store: mail_store, directory, .. } = the_send(context, asked).await?;
    if row.state != SendState::Failed {
        return Err(SendError::WrongState { state: row.state, needs: SendState::Failed }.into());
    }
    refuse_if_the_noted_author_may_not_send(context, &directory, &row)?;
    // What leaves is rebuilt from the row, so it must still be what was approved.
    let manifest = row
        .sealed_manifest()
        .filter(|manifest| row.manifest_hash.as_deref() == Some(manifest.hash().as_str()))
        .ok_or_else(|| SendError::NotAsApproved { id: row.id.clone() })?;
    // Back to sealed before anything leaves, committed: of two retries at once,
    // one finds it sealed and is refused, so nobody receives it twice.
    let sealed_again = store::sealed_again(&row.id, context.now_ms());
    location::write_changing_one_row(context, mail_store, &row.mailbox_id, sealed_again, SendError::Raced)?;
    context.audit_detail(serde_json::json!({
        "manifest_hash": row.manifest_hash,
        "recipients": undelivered(manifest.recipients(), &list_of(&row.delivered_json)).len(),
        "earlier_error": row.dispatch_error,
    }));
    // Sent again only while its author may still send from here.
    let author_proposes = commit_checking_the_author(context, mail_store, &mut row).await?;
    row.state = SendState::Sealed;
    row.updated_at = context.now_ms();
    match author_proposes {
        true => dispatch(context, mail_store, &mut row, &manifest).await,
        false => stopped(context, mail_store, &mut row),
    }
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
async fn dispatch(context: &mut Context<'_>, mail_store: MailStore, row: &mut SendRow, manifest: &Manifest) {
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
                                location::defer_write(context, mail_store, &row.mailbox_id, statement);
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
    record_outcome(context, mail_store, row, delivered, failures);
}

/// A sealed send whose author no longer holds send.propose on its mailbox,
/// as D1 said when the seal committed: failed, saying why, and handed to
/// nobody. Sending it again asks again.
fn stopped(context: &mut Context<'_>, mail_store: MailStore, row: &mut SendRow) {
    let delivered = list_of(&row.delivered_json);
    let why = format!("not sent: its author ({}) may no longer send from this mailbox", row.author);
    record_outcome(context, mail_store, row, delivered, vec![why]);
}

/// Records what became of a sealed send handed to the mail service (or not
/// handed, for `failures`), after the answer: dispatched when nothing
/// failed, otherwise failed, saying exactly who has it (`delivered`) and
/// who does not; its writer is told either way.
fn record_outcome(
    context: &mut Context<'_>,
    mail_store: MailStore,
    row: &mut SendRow,
    delivered: Vec<String>,
    failures: Vec<String>,
) {
    // A send retried had failed: its error is still the row's until this outcome.
    let had_failed = row.dispatch_error.is_some();
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
        let dispatched = store::dispatched(&row.id, context.now_ms(), delivered_json);
        location::defer_write(context, mail_store, &row.mailbox_id, dispatched);
    } else {
        let error = failures.join("; ");
        context.platform().log(&format!("dispatching {}: {error}", row.id));
        row.state = SendState::Failed;
        row.dispatch_error = Some(error.clone());
        let failed = store::failed(&row.id, error, context.now_ms(), delivered_json);
        location::defer_write(context, mail_store, &row.mailbox_id, failed);
    }
    // D1 notes a failed send in a mailbox's own database, so that a retry
    // asks whether its author may still send before the send is read; the
    // note goes once a send that had failed is dispatched, and only then.
    if mail_store == MailStore::OwnDatabase {
        match row.state {
            SendState::Failed => {
                context.defer_write(store::failed_in_own_database((&row.id, &row.mailbox_id, &row.author)))
            }
            _ if had_failed => context.defer_write(store::no_longer_failed(&row.id)),
            _ => {}
        }
    }
}

/// `POST /api/mailboxes/:mailboxId/sends/:sendId/refuse`.
pub async fn refuse(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: RefuseSend = context.body()?;
    let reason = request.reason.trim().to_string();
    if reason.is_empty() || reason.chars().count() > 1000 {
        return Err(SendError::InvalidReason.into());
    }
    let (TheSend { mut row, store: mail_store, .. }, decider) =
        the_version(context, &request.version, Vec::new()).await?;
    row.state = SendState::Refused;
    row.decided_at = Some(context.now_ms());
    row.decided_by = Some(decider.clone());
    row.decided_by_name = row.caller_name.clone();
    row.refusal_reason = Some(reason.clone());
    row.updated_at = context.now_ms();
    let row_version = row.version().unwrap_or_default();
    let refused = store::refused(&row.id, (&row_version, &request.version), &decider, &reason, context.now_ms());
    location::write_changing_one_row(context, mail_store, &row.mailbox_id, refused, SendError::Raced)?;
    let resolved = notifications::resolve(NotificationKind::ApprovalWaiting, &row.id, context.now_ms());
    location::write_after(context, mail_store, resolved);
    location::write_after(context, mail_store, store::no_longer_awaiting(&row.id));
    let notice = Notice {
        kind: NotificationKind::SendRefused,
        object_id: &row.id,
        mailbox_id: Some(&row.mailbox_id),
        actor: Some(&decider),
        title: &row.subject,
        detail: Some(&reason),
    };
    let notified = notifications::notify(&notice, Addressee::PersonOf(&row.author), context.platform());
    location::write_after(context, mail_store, notified);
    if let Some(author) = Topic::of_party(&row.author) {
        context.tell_also(author);
    }
    context.audit_detail(serde_json::json!({ "reason": reason, "version": request.version }));
    answer(context, mail_store, row).await
}
