//! The conversation routes: list a mailbox's conversations, show one with its
//! received and sent messages, change its status, assignee and labels, and
//! mark it read or unread for the caller. A summary shows its snippet, and a
//! conversation its messages' text, only to a caller who reads the mailbox's
//! content.

use mailroom_contract::api::label_limits::LABELS_PER_CONVERSATION;
use mailroom_contract::api::thread_limits::{MESSAGES_SHOWN, PARTICIPANTS_SHOWN, SNIPPET_CHARACTERS};
use mailroom_contract::api::{
    AttachmentSummary, EmailAddress, NotificationKind, Thread, ThreadEntry, ThreadEntryKind, ThreadMessage, ThreadPage,
    ThreadStatus, ThreadSummary, UpdateThread, normalise_label,
};
use mailroom_contract::{PathParameter, Relation};

use crate::authz::holder_of;
use crate::authz::tuples::{self, Holder};
use crate::core::context::Context;
use crate::core::events::Topic;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;
use crate::core::storage::{QueryResult, Statement};
use crate::core::time::rfc3339;
use crate::mail::location::{self, MailStore};
use crate::mail::names::Names;
use crate::mail::search::fts_query;
use crate::mail::sends::{self, UnnamedSends};
use crate::mail::store::mailboxes;
use crate::mail::{trust, unverified_reads};
use crate::notifications::{self, Addressee, Notice};

use super::errors::ThreadError;
use super::labels;
use super::snooze::change as snooze;
use super::store::{self, ReceivedRow, SummaryRow, ThreadFilter};

/// The start of `text` on one line, cut on a character so that with its
/// ellipsis it is at most the snippet limit the contract declares.
fn snippet(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= SNIPPET_CHARACTERS {
        return line;
    }
    match line.char_indices().nth(SNIPPET_CHARACTERS - 1) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line,
    }
}

impl SummaryRow {
    /// Its labels, sorted.
    fn labels(&self) -> Vec<String> {
        let mut labels: Vec<String> =
            self.labels_json.as_deref().and_then(|json| serde_json::from_str(json).ok()).unwrap_or_default();
        labels.sort();
        labels
    }

    fn present(&self, reads_content: bool) -> ThreadSummary {
        let participants: Vec<EmailAddress> =
            self.participants_json.as_deref().and_then(|json| serde_json::from_str(json).ok()).unwrap_or_default();
        ThreadSummary {
            id: self.id.clone(),
            mailbox_id: self.mailbox_id.clone(),
            subject: self.subject.clone(),
            status: self.status,
            assignee: self.assignee.clone(),
            assignee_name: self.assignee_name.clone(),
            snoozed_until: self.snoozed_until.map(rfc3339),
            labels: self.labels(),
            participant_count: i64::try_from(participants.len()).unwrap_or(i64::MAX),
            participants: participants.into_iter().take(PARTICIPANTS_SHOWN).collect(),
            message_count: self.received_count + self.sent_count,
            received_count: self.received_count,
            last_activity_at: rfc3339(self.last_activity_at),
            unread: self.last_received_at.is_some_and(|received| self.read_up_to.is_none_or(|read| read < received)),
            has_unauthenticated: self.has_unauthenticated != 0,
            has_attachments: self.has_attachments != 0,
            snippet: self.snippet_source.as_deref().filter(|_| reads_content).map(snippet),
        }
    }
}

/// The relations the caller holds on `mailbox_id`, as names.
fn held_relations(result: &QueryResult) -> Vec<String> {
    result.rows.iter().filter_map(|row| row.text("relation").ok()).collect()
}

fn holds(held: &[String], relation: Relation) -> bool {
    held.iter().any(|name| name == relation.name())
}

fn caller_id(context: &Context<'_>) -> Result<String, Refusal> {
    context.caller().actor_id().map(str::to_string).ok_or_else(Refusal::internal)
}

fn holder(context: &Context<'_>) -> Result<Holder, Refusal> {
    holder_of(context.caller(), context.now_ms()).ok_or_else(Refusal::internal)
}

/// The path's conversation, read where its mailbox's mail is, with the
/// caller's relations on the mailbox and the results of `directory` (read on
/// D1) and `mail` (read beside it); refuses one that is not in the path's
/// mailbox. Its assignee is not yet named (`name_everyone`).
pub(super) struct TheThread {
    /// Where its mailbox's mail is.
    pub(super) store: MailStore,
    pub(super) row: SummaryRow,
    held: Vec<String>,
    pub(super) directory: Vec<QueryResult>,
    pub(super) mail: Vec<QueryResult>,
}

pub(super) async fn the_thread(
    context: &mut Context<'_>,
    with_snippet: bool,
    directory: Vec<Statement>,
    mail: Vec<Statement>,
) -> Result<TheThread, Refusal> {
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let thread_id = context.path(PathParameter::ThreadId)?.to_string();
    context.audit_object(thread_id.clone());
    if !is_id_of(&thread_id, IdKind::Thread) {
        return Err(ThreadError::NoSuchThread { id: thread_id }.into());
    }
    let thread = store::thread(&caller_id(context)?, &thread_id, &mailbox_id, with_snippet);
    let directory = [vec![tuples::relations_on(&holder(context)?, &mailbox_id)], directory].concat();
    let read = location::read(context, &mailbox_id, directory, [vec![thread], mail].concat()).await?;
    let (store, mut directory, mut mail) = (read.store, read.directory, read.mail);
    let (held, thread) = (directory.remove(0), mail.remove(0));
    let row: SummaryRow = match thread.first() {
        Some(row) => row.decode().map_err(|error| context.internal(error))?,
        None => return Err(ThreadError::NoSuchThread { id: thread_id }.into()),
    };
    Ok(TheThread { store, row, held: held_relations(&held), directory, mail })
}

/// Names the assignees of `rows` not named yet and everyone in `also` (a
/// mailbox's rows hold ids; the directory has the names), reading them in the
/// batch that commits the call; with nobody to name, it reads nothing and
/// leaves the commit to the dispatcher. The names, each row's assignee named.
async fn name_everyone<'a>(
    context: &mut Context<'_>,
    rows: &mut [SummaryRow],
    also: impl IntoIterator<Item = &'a str>,
) -> Result<Names, Refusal> {
    let mut mentioned: Vec<String> = also.into_iter().map(str::to_string).collect();
    mentioned.extend(rows.iter().filter(|row| row.assignee_name.is_none()).filter_map(|row| row.assignee.clone()));
    if mentioned.is_empty() {
        return Ok(Names::default());
    }
    let wanted = Names::of(mentioned.iter().map(String::as_str));
    // The change has committed by now: names the directory could not give
    // leave the answer without them rather than refuse what happened.
    let names = match context.read_as_it_commits(vec![wanted]).await?.first() {
        Some(names) => Names::read(names).map_err(|error| context.internal(error))?,
        None => Names::default(),
    };
    for row in rows.iter_mut().filter(|row| row.assignee_name.is_none()) {
        row.assignee_name = row.assignee.as_deref().and_then(|id| names.of_id(id));
    }
    Ok(names)
}

/// `GET /api/mailboxes/:mailboxId/threads`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let caller = caller_id(context)?;
    // The dispatcher has refused a `status` the declaration does not name.
    let status = context.query("status").map(str::to_string);
    let assignee = match context.query("assignee") {
        None => None,
        Some("me") => Some(caller.clone()),
        Some("none") => Some(String::new()),
        Some(id) if is_id_of(id, IdKind::Person) || is_id_of(id, IdKind::Agent) => Some(id.to_string()),
        Some(_) => {
            return Err(RequestError::InvalidQueryParameter {
                name: "assignee".into(),
                expected: "`me`, `none`, or a person's or agent's id (`usr_…`, `agt_…`)".into(),
            }
            .into());
        }
    };
    let label = context
        .query("label")
        .map(|label| {
            normalise_label(label).ok_or_else(|| -> Refusal {
                RequestError::InvalidQueryParameter { name: "label".into(), expected: labels::label_words() }.into()
            })
        })
        .transpose()?;
    let unread = context.query("unread") == Some("true");
    let snoozed = context.query("snoozed") == Some("true");
    let search = context.query("q").map(fts_query).transpose()?;
    let limit = paging::limit(context)?;
    let (before_at, before_id) = paging::cursor(context, IdKind::Thread, i64::MAX)?;

    let filter = ThreadFilter { status, assignee, label, unread, snoozed, words: search };
    let statement = store::page(&caller, &mailbox_id, filter, before_at, &before_id, limit);
    let held = tuples::relations_on(&holder(context)?, &mailbox_id);
    let read = location::read(context, &mailbox_id, vec![held], vec![statement]).await?;
    let (held, threads) = read.directory.first().zip(read.mail.first()).ok_or_else(Refusal::internal)?;
    let reads_content = holds(&held_relations(held), Relation::MailboxContentRead);
    let mut rows: Vec<SummaryRow> = threads.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = paging::cut(&mut rows, limit, |row| (row.last_activity_at, &row.id));
    context.audit_detail(serde_json::json!({ "mailbox": mailbox_id, "snippets": reads_content }));
    // A snippet is content: an agent shown one of a message from a sender not
    // authenticated is noted, before the names are read as the call commits.
    if reads_content {
        let shown = rows
            .iter()
            .filter(|row| row.snippet_source.is_some())
            .filter_map(|row| Some((row.snippet_receipt_id.as_deref()?, row.snippet_verdict?)));
        unverified_reads::note_shown(context, shown.collect::<Vec<_>>());
    }
    name_everyone(context, &mut rows, []).await?;
    Ok(context.json(&ThreadPage {
        threads: rows.iter().map(|row| row.present(reads_content)).collect(),
        next_cursor,
        content_notice: (reads_content && trust::fence_for(context).is_some())
            .then(|| trust::CONTENT_NOTICE.to_string()),
    }))
}

/// `GET /api/mailboxes/:mailboxId/threads/:threadId`.
pub async fn get(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let thread_id = context.path(PathParameter::ThreadId)?.to_string();
    let caller = caller_id(context)?;
    let received = store::received_in(&thread_id);
    let sent = sends::in_thread(&thread_id, &caller);
    let mailbox = mailboxes::mailbox(context.path(PathParameter::MailboxId)?);
    let TheThread { mut row, held, directory, mail: results, .. } =
        the_thread(context, true, vec![mailbox], vec![received, sent]).await?;
    let mailbox_address = directory[0].first().and_then(|mailbox| mailbox.text("address").ok());
    let sent = UnnamedSends::read(&results[1]).map_err(|error| context.internal(error))?;
    let received: Vec<ReceivedRow> = results[0].decode_all().map_err(|error| context.internal(error))?;
    let reads_content = holds(&held, Relation::MailboxContentRead);
    // Outbound text is the mailbox's own mail: shown to whoever reads its content,
    // writes from it or decides on what it sends.
    let sees_sends = reads_content || holds(&held, Relation::SendPropose) || holds(&held, Relation::ApprovalDecide);
    if reads_content {
        // The received messages whose text the answer shows (those among its
        // latest entries), noted before the names are read as the call commits.
        let mut shown: Vec<(i64, Option<&ReceivedRow>)> =
            received.iter().map(|message| (message.received_at, Some(message))).collect();
        if sees_sends {
            shown.extend(sent.times().map(|at| (at, None)));
        }
        shown.sort_by_key(|(at, _)| *at);
        let skip = shown.len().saturating_sub(MESSAGES_SHOWN);
        let shown = shown.into_iter().skip(skip).filter_map(|(_, message)| message);
        unverified_reads::note_shown(
            context,
            shown.map(|message| (message.id.as_str(), message.sender_authentication)),
        );
    }
    let names = name_everyone(context, std::slice::from_mut(&mut row), sent.mentioned()).await?;
    let fence = trust::fence_for(context).filter(|_| reads_content);
    let mut entries: Vec<(i64, ThreadEntry)> = received
        .into_iter()
        .map(|message| {
            let text = reads_content.then(|| match &fence {
                Some(nonce) => trust::fence(&message.text_body, nonce, message.sender_authentication),
                None => message.text_body.clone(),
            });
            let authentication = trust::stored(&message.authentication_json, message.sender_authentication);
            let attachments: Vec<AttachmentSummary> =
                serde_json::from_str(&message.attachments_json).unwrap_or_default();
            let entry = ThreadMessage {
                id: message.id,
                from: message.from_address.map(|address| EmailAddress { address, name: message.from_name }),
                to: serde_json::from_str(&message.to_json).unwrap_or_default(),
                cc: serde_json::from_str(&message.cc_json).unwrap_or_default(),
                reply_to: serde_json::from_str(&message.reply_to_json).unwrap_or_default(),
                subject: message.subject,
                received_at: rfc3339(message.received_at),
                authentication,
                attachments,
                text,
                truncated: reads_content.then_some(message.text_truncated != 0),
                filed_by: message.filed_by,
                message_id_reused: message.claimed_message_id.is_some().then_some(true),
            };
            (
                message.received_at,
                ThreadEntry { kind: ThreadEntryKind::Received, received: Some(Box::new(entry)), sent: None },
            )
        })
        .collect();
    if sees_sends {
        entries.extend(sent.present(&names, mailbox_address.as_deref()).into_iter().map(|(at, send)| {
            (at, ThreadEntry { kind: ThreadEntryKind::Sent, received: None, sent: Some(Box::new(send)) })
        }));
    }
    entries.sort_by_key(|(at, _)| *at);
    let skip = entries.len().saturating_sub(MESSAGES_SHOWN);
    Ok(context.json(&Thread {
        summary: row.present(reads_content),
        entries: entries.into_iter().skip(skip).map(|(_, entry)| entry).collect(),
        content_notice: fence.as_ref().map(|_| trust::CONTENT_NOTICE.to_string()),
    }))
}

/// `PATCH /api/mailboxes/:mailboxId/threads/:threadId`.
pub async fn update(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: UpdateThread = context.body()?;
    // A label with a direction control is refused when added; one already
    // carried can still be taken off.
    for (index, label) in request.add_labels.iter().flatten().enumerate() {
        crate::core::text::refuse_direction_controls(&format!("add_labels[{index}]"), label)?;
    }
    let adding = labels_in(request.add_labels.as_deref(), "add_labels")?;
    let removing = labels_in(request.remove_labels.as_deref(), "remove_labels")?;
    if let Some(index) = removing.iter().position(|label| adding.contains(label)) {
        return Err(RequestError::wrong_field(&format!("remove_labels[{index}]"), "a label not also in `add_labels`"));
    }
    let snooze = snooze::change_of(request.snoozed_until.as_deref(), request.status.is_some(), context.now_ms())?;
    if request.status.is_none()
        && request.assignee.is_none()
        && adding.is_empty()
        && removing.is_empty()
        && snooze.is_none()
    {
        return Err(ThreadError::NothingToChange.into());
    }
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let assignee = request.assignee.as_deref().map(str::trim).map(str::to_string);
    // An assignee works the mailbox: holds send.propose on it, intersected with
    // the sponsor's for an agent, as every tuple read is.
    let mut extra = Vec::new();
    if let Some(id) = assignee.as_deref().filter(|id| !id.is_empty()) {
        if !(is_id_of(id, IdKind::Person) || is_id_of(id, IdKind::Agent)) {
            return Err(ThreadError::NotAnAssignee { id: id.to_string() }.into());
        }
        extra.push(tuples::holds(&Holder::of_actor(id, context.now_ms()), Relation::SendPropose, &mailbox_id));
        extra.push(store::live_name_of(id));
    }
    let TheThread { store: mail, mut row, directory: results, .. } =
        the_thread(context, false, extra, Vec::new()).await?;
    let previous_assignee = row.assignee.clone();
    if let Some(id) = assignee.as_deref().filter(|id| !id.is_empty()) {
        let name = results[1].first().and_then(|name| name.optional_text("name").ok().flatten());
        let works_the_mailbox = results[0].first().and_then(|held| held.integer("held").ok()) == Some(1);
        if !works_the_mailbox || name.is_none() {
            return Err(ThreadError::NotAnAssignee { id: id.to_string() }.into());
        }
        row.assignee = Some(id.to_string());
        row.assignee_name = name;
    } else if assignee.is_some() {
        row.assignee = None;
        row.assignee_name = None;
    }
    if let Some(status) = request.status {
        row.status = status;
    }
    let carried = row.labels();
    let added: Vec<&String> = adding.iter().filter(|label| !carried.contains(label)).collect();
    let removed: Vec<&String> = removing.iter().filter(|label| carried.contains(label)).collect();
    let after = carried.len() + added.len() - removed.len();
    if !added.is_empty() && after > LABELS_PER_CONVERSATION {
        return Err(ThreadError::TooManyLabels { carried: carried.len(), after }.into());
    }
    location::write_changing_one_row(
        context,
        mail,
        &mailbox_id,
        store::status_and_assignee_set(&row.id, &mailbox_id, row.status, row.assignee.clone()),
        ThreadError::NoSuchThread { id: row.id.clone() },
    )?;
    if let Some(change) = snooze {
        row.snoozed_until = snooze::queue(context, mail, &mailbox_id, &row.id, change)?;
    }
    // Removals first: the cap each addition is held to in SQL counts what is left.
    for label in &removed {
        location::write(context, mail, &mailbox_id, store::label_removed(&row.id, label))?;
    }
    for label in &added {
        location::write(context, mail, &mailbox_id, labels::add_label(&row.id, label))?;
    }
    let mut labels: Vec<String> =
        carried.iter().filter(|label| !removed.contains(label)).chain(added.iter().copied()).cloned().collect();
    labels.sort();
    row.labels_json = serde_json::to_string(&labels).ok();
    // A person newly given a conversation by someone else hears of it.
    let caller = context.caller().actor_id().unwrap_or_default().to_string();
    if let Some(assigned) = row.assignee.as_deref().filter(|id| is_id_of(id, IdKind::Person))
        && row.assignee != previous_assignee
    {
        let notice = Notice {
            kind: NotificationKind::ConversationAssigned,
            object_id: &row.id,
            mailbox_id: Some(&mailbox_id),
            actor: Some(&caller),
            title: &row.subject,
            detail: None,
        };
        let notice = notifications::notify(&notice, Addressee::PersonOf(assigned), context.platform());
        location::write_after(context, mail, notice);
        if let Some(assignee) = Topic::of_party(assigned) {
            context.tell_also(assignee);
        }
    }
    context.audit_detail(serde_json::json!({
        "mailbox": mailbox_id,
        "status": request.status.map(ThreadStatus::name),
        "assignee": assignee,
        "added_labels": added,
        "removed_labels": removed,
        // "" for a snooze ended by hand, absent (null) where the change left it.
        "snoozed_until": snooze.map(|_| row.snoozed_until.map(rfc3339).unwrap_or_default()),
    }));
    name_everyone(context, std::slice::from_mut(&mut row), []).await?;
    Ok(context.json(&row.present(false)))
}

/// The labels of a change's `field` (`add_labels`, `remove_labels`),
/// normalised and without repeats; refuses the first that cannot be a label,
/// naming it.
fn labels_in(labels: Option<&[String]>, field: &str) -> Result<Vec<String>, Refusal> {
    let labels = labels.unwrap_or_default();
    if labels.len() > LABELS_PER_CONVERSATION {
        return Err(RequestError::wrong_field(field, format!("at most {LABELS_PER_CONVERSATION} labels")));
    }
    let mut normalised: Vec<String> = Vec::with_capacity(labels.len());
    for (index, label) in labels.iter().enumerate() {
        let Some(label) = normalise_label(label) else {
            return Err(RequestError::wrong_field(&format!("{field}[{index}]"), labels::label_words()));
        };
        if !normalised.contains(&label) {
            normalised.push(label);
        }
    }
    Ok(normalised)
}

/// `PUT /api/mailboxes/:mailboxId/threads/:threadId/read`.
pub async fn mark_read(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let caller = caller_id(context)?;
    let TheThread { store: mail, mut row, .. } = the_thread(context, false, Vec::new(), Vec::new()).await?;
    // Read up to the latest message received when the caller asked, even if
    // another lands before this commits: that one stays unread.
    let read_up_to = row.last_received_at.unwrap_or(0);
    location::write(context, mail, &row.mailbox_id, store::read_up_to(&row.id, &caller, read_up_to))?;
    row.read_up_to = Some(read_up_to);
    name_everyone(context, std::slice::from_mut(&mut row), []).await?;
    Ok(context.json(&row.present(false)))
}

/// `DELETE /api/mailboxes/:mailboxId/threads/:threadId/read`.
pub async fn mark_unread(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let caller = caller_id(context)?;
    let TheThread { store: mail, mut row, .. } = the_thread(context, false, Vec::new(), Vec::new()).await?;
    location::write(context, mail, &row.mailbox_id, store::unread(&row.id, &caller))?;
    row.read_up_to = None;
    name_everyone(context, std::slice::from_mut(&mut row), []).await?;
    Ok(context.json(&row.present(false)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snippet_with_its_ellipsis_is_within_the_declared_limit() {
        for length in [SNIPPET_CHARACTERS - 1, SNIPPET_CHARACTERS, SNIPPET_CHARACTERS + 1, SNIPPET_CHARACTERS * 3] {
            let shown = snippet(&"é".repeat(length));
            assert_eq!(shown.chars().count(), length.min(SNIPPET_CHARACTERS), "{length}");
            assert_eq!(shown.ends_with('…'), length > SNIPPET_CHARACTERS, "{length}");
        }
        assert_eq!(snippet("two\n\n  lines"), "two lines");
    }
}
