//! A send as stored and as answered, the manifest it is approved as, and the
//! reads of sends: one send, a mailbox's sends, the approval queue.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{AnsweredMessage, ApprovalQueue, EmailAddress, Send, SendAttachment, SendList, SendState};

use super::errors::SendError;
use super::limits::MAXIMUM_RECIPIENTS;
use super::store::{self, AnsweredRow, MailboxAndWriter, SendRow};
use super::version::Submission;
use crate::authz::holder_of;
use crate::core::addresses;
use crate::core::context::{Context, MAILBOXES_PER_READ};
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Statement, StorageError};
use crate::core::time::rfc3339;
use crate::mail::location::{self, MailRead, MailStore};
use crate::mail::names::Names;
use crate::mail::outbound::{Manifest, OutboundFile};
use crate::mail::store::mailboxes;

/// The received message a send answers, from `DECISION_COLUMNS`' JSON.
fn answered(json: &str) -> Option<AnsweredMessage> {
    let row: AnsweredRow = serde_json::from_str(json).ok()?;
    Some(AnsweredMessage {
        id: row.id,
        from: row.from_address.map(|address| EmailAddress { address, name: row.from_name }),
        subject: row.subject,
        received_at: rfc3339(row.received_at),
        sender_authentication: row.sender_authentication,
    })
}

pub(super) fn list_of(json: &str) -> Vec<String> {
    serde_json::from_str(json).unwrap_or_default()
}

impl SendRow {
    pub(super) fn present(&self) -> Send {
        Send {
            id: self.id.clone(),
            mailbox_id: self.mailbox_id.clone(),
            mailbox_address: self.mailbox_address.clone().unwrap_or_default(),
            state: self.state,
            author: self.author.clone(),
            author_name: self.author_name.clone().unwrap_or_default(),
            to: list_of(&self.to_json),
            cc: list_of(&self.cc_json),
            subject: self.subject.clone(),
            text: self.text.clone(),
            thread_id: self.thread_id.clone(),
            resumed: None,
            attachments: self.attachments(),
            answers: self.answers_json.as_deref().and_then(answered),
            writer_read_unverified: self.writer_unverified_reads,
            reply_to: self.reply_to.clone(),
            recipients_to_remove: self.recipients_to_remove(),
            in_reply_to: self.in_reply_to.clone(),
            references: list_of(&self.references_json),
            created_at: rfc3339(self.created_at),
            updated_at: rfc3339(self.updated_at),
            submitted_at: self.submitted_at.map(rfc3339),
            submitted_by: self.submitted_by.clone(),
            version: self.version(),
            decided_at: self.decided_at.map(rfc3339),
            decided_by: self.decided_by.clone(),
            decided_by_name: self.decided_by_name.clone(),
            refusal_reason: self.refusal_reason.clone(),
            message_id: self.message_id.clone(),
            sent_message_ids: list_of(&self.sent_message_ids_json),
            manifest_hash: self.manifest_hash.clone(),
            manifest_intact: self
                .sealed_manifest()
                .zip(self.manifest_hash.as_ref())
                .map(|(manifest, recorded)| manifest.hash() == *recorded),
            sealed_from_address: self.sealed_from_address.clone(),
            sealed_from_name: self.sealed_from_name.clone(),
            dispatched_at: self.dispatched_at.map(rfc3339),
            dispatch_error: self.dispatch_error.clone(),
            delivered_to: list_of(&self.delivered_json),
        }
    }

    /// On a draft holding more recipients than a send may have: how many to
    /// remove before it can be submitted.
    fn recipients_to_remove(&self) -> Option<i64> {
        let count = list_of(&self.to_json).len() + list_of(&self.cc_json).len();
        let over = count.saturating_sub(MAXIMUM_RECIPIENTS);
        (self.state == SendState::Draft && over > 0).then(|| i64::try_from(over).unwrap_or(i64::MAX))
    }

    /// The files it carries, in order.
    pub(super) fn attachments(&self) -> Vec<SendAttachment> {
        self.attachments_json.as_deref().and_then(|json| serde_json::from_str(json).ok()).unwrap_or_default()
    }

    /// The files as the version and the manifest name them.
    pub(super) fn files(&self) -> Vec<OutboundFile> {
        self.attachments()
            .into_iter()
            .map(|file| OutboundFile {
                name: file.name,
                content_type: file.content_type,
                size: file.size,
                sha256: file.sha256,
            })
            .collect()
    }

    /// The submission as it stands, if it was ever submitted.
    pub(super) fn submission(&self) -> Option<Submission> {
        Some(Submission {
            send_id: self.id.clone(),
            mailbox_id: self.mailbox_id.clone(),
            author: self.author.clone(),
            to: list_of(&self.to_json),
            cc: list_of(&self.cc_json),
            subject: self.subject.clone(),
            text: self.text.clone(),
            in_reply_to: self.in_reply_to.clone(),
            references: list_of(&self.references_json),
            submitted_by: self.submitted_by.clone()?,
            submitted_at: self.submitted_at?,
            attachments: self.files(),
        })
    }

    /// The version a decision names: the one recorded at submission, or, for a
    /// send submitted before versions were recorded, the one its row holds now.
    pub(super) fn version(&self) -> Option<String> {
        self.submitted_version.clone().or_else(|| self.submission().map(|submission| submission.version()))
    }

    /// What a second person approves: this send from `from`, approved by
    /// `approved_by` at `sealed_at`.
    pub(super) fn manifest(&self, from_address: &str, from_name: &str, approved_by: &str, sealed_at: i64) -> Manifest {
        Manifest {
            send_id: self.id.clone(),
            mailbox_id: self.mailbox_id.clone(),
            from_name: from_name.to_string(),
            to: list_of(&self.to_json),
            cc: list_of(&self.cc_json),
            subject: self.subject.clone(),
            text: self.text.clone(),
            in_reply_to: self.in_reply_to.clone(),
            references: list_of(&self.references_json),
            message_id: format!("{}@{}", self.id, addresses::domain(from_address)),
            version: self.submitted_version.clone(),
            from_address: from_address.to_string(),
            author: self.author.clone(),
            submitted_by: self.submitted_by.clone().unwrap_or_default(),
            approved_by: approved_by.to_string(),
            sealed_at,
            attachments: self.files(),
        }
    }

    /// How many bytes the message it leaves as would take as written, were it
    /// sealed now from its mailbox as the row read it (`Manifest::written_size`).
    pub(super) fn message_size(&self, now_ms: i64) -> usize {
        let from_address = self.mailbox_address.as_deref().unwrap_or_default();
        let from_name = self.mailbox_display_name.as_deref().unwrap_or_default();
        self.manifest(from_address, from_name, "", now_ms).written_size()
    }

    /// The manifest this sealed send was approved as, rebuilt from the row alone.
    pub(super) fn sealed_manifest(&self) -> Option<Manifest> {
        Some(self.manifest(
            self.sealed_from_address.as_deref()?,
            self.sealed_from_name.as_deref()?,
            self.decided_by.as_deref()?,
            self.sealed_at?,
        ))
    }

    /// What the directory says of a send read from its mailbox's own database
    /// (`the_send`'s own statements' results, `found`): its mailbox's address
    /// and name, the caller's name (the author's or decider's too, when the
    /// caller wrote or decided it), and, when asked for a decision, who
    /// handled the agent that submitted it.
    fn given(&mut self, found: &[QueryResult], caller: &str) -> Result<(), StorageError> {
        let [mailbox_and_caller, handled @ ..] = found else {
            return Err(StorageError::Backend("the directory answered too little for a send".into()));
        };
        if let Some(row) = mailbox_and_caller.first() {
            let MailboxAndWriter { address, display_name, name } = row.decode()?;
            (self.mailbox_address, self.mailbox_display_name, self.caller_name) = (address, display_name, name);
        }
        if self.author == caller && self.author_name.is_none() {
            self.author_name.clone_from(&self.caller_name);
        }
        if self.decided_by.as_deref() == Some(caller) && self.decided_by_name.is_none() {
            self.decided_by_name.clone_from(&self.caller_name);
        }
        let submitter = self.submitted_by.as_deref().unwrap_or_default();
        if let Some(agent) = handled
            .first()
            .and_then(|handled| handled.rows.iter().find(|agent| agent.text("id").is_ok_and(|id| id == submitter)))
        {
            self.submitted_by_sponsor = agent.optional_text("sponsor_id")?;
            self.submitted_by_minter = agent.optional_text("created_by")?;
            self.submitted_by_credential_issuer = agent.optional_text("credential_issued_by")?;
        }
        Ok(())
    }

    /// Gives the author and the decider the names `names` has for them,
    /// where they have none yet.
    pub(super) fn name_from(&mut self, names: &Names) {
        if self.author_name.is_none() {
            self.author_name = names.of_id(&self.author);
        }
        if self.decided_by_name.is_none() {
            self.decided_by_name = self.decided_by.as_deref().and_then(|id| names.of_id(id));
        }
    }

    /// When it happened, as a conversation orders it: sealed, submitted or begun.
    fn happened_at(&self) -> i64 {
        self.sealed_at.or(self.submitted_at).unwrap_or(self.created_at)
    }

    /// Drafts are their author's alone; everything else is the mailbox's.
    pub(super) fn visible_to(&self, caller: &str) -> bool {
        self.state != SendState::Draft || self.author == caller
    }
}

pub(super) fn caller_id(context: &Context<'_>) -> Result<String, Refusal> {
    context.caller().actor_id().map(str::to_string).ok_or_else(Refusal::internal)
}

pub(super) fn json_list(list: &[String]) -> String {
    serde_json::to_string(list).unwrap_or_else(|_| "[]".into())
}

/// What a route asks with the path's send (`the_send`), beside the send.
#[derive(Default)]
pub(super) struct Asked {
    /// Statements over D1's own tables.
    pub(super) directory: Vec<Statement>,
    /// Statements over the mailbox's mail, asked where it is.
    pub(super) mail: Vec<Statement>,
    /// For a decision: who handled the agent that submitted it is asked too.
    pub(super) deciding: bool,
}

/// The path's send as `the_send` found it.
pub(super) struct TheSend {
    pub(super) row: SendRow,
    /// Where its mailbox's mail is, and so where its changes are written.
    pub(super) store: MailStore,
    /// What `Asked::directory` read, in order.
    pub(super) directory: Vec<QueryResult>,
    /// What `Asked::mail` read, in order.
    pub(super) mail: Vec<QueryResult>,
}

/// The path's send, in the path's mailbox, read where the mailbox's mail is
/// (`location`), with the mailbox's address and name, the caller's name
/// and, for a decision, who handled the agent that submitted it; refuses one
/// that does not exist or that the caller may not see. D1 answers all of it
/// in the send's own statement; a mailbox's own database holds only ids, so
/// the directory is asked beside it, for what can be asked before the send
/// is known, and `answer` names the rest.
pub(super) async fn the_send(context: &mut Context<'_>, asked: Asked) -> Result<TheSend, Refusal> {
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let send_id = context.path(PathParameter::SendId)?.to_string();
    context.audit_object(send_id.clone());
    if !is_id_of(&send_id, IdKind::Send) {
        return Err(SendError::NoSuchSend { id: send_id }.into());
    }
    let caller = caller_id(context)?;
    let mut directory = vec![store::mailbox_and_writer(&mailbox_id, &caller)];
    if asked.deciding {
        directory.push(store::agents_handled_by(&caller));
    }
    let own = directory.len();
    directory.extend(asked.directory);
    let in_d1 = std::iter::once(store::send_for_caller(&send_id, &mailbox_id, &caller)).chain(asked.mail.clone());
    let in_own_database = std::iter::once(store::send_in_mailbox(&send_id, &mailbox_id)).chain(asked.mail);
    let read =
        location::read_each(context, &mailbox_id, directory, (in_d1.collect(), in_own_database.collect())).await?;
    let MailRead { store, directory: mut found, mail: mut sends } = read;
    let asked_directory = found.split_off(own.min(found.len()));
    let asked_mail = sends.split_off(1.min(sends.len()));
    let mut row: SendRow = match sends.first().and_then(QueryResult::first) {
        Some(row) => row.decode().map_err(|error| context.internal(error))?,
        None => return Err(SendError::NoSuchSend { id: send_id }.into()),
    };
    if !row.visible_to(&caller) {
        return Err(SendError::NoSuchSend { id: send_id }.into());
    }
    if store == MailStore::OwnDatabase {
        row.given(&found, &caller).map_err(|error| context.internal(error))?;
    }
    Ok(TheSend { row, store, directory: asked_directory, mail: asked_mail })
}

/// Answers `row` as a route that read it with `the_send` from `store`: read
/// from a mailbox's own database, the author and decider `the_send` could
/// not name (not the caller) are named first, from D1, as the call commits
/// when it is recorded in the chain (so at no round trip's cost), or in a
/// read of their own when it is not.
pub(super) async fn answer(context: &mut Context<'_>, store: MailStore, mut row: SendRow) -> Result<Response, Refusal> {
    let unnamed: Vec<String> = match store {
        MailStore::D1 => Vec::new(),
        MailStore::OwnDatabase => {
            let author = row.author_name.is_none().then(|| row.author.clone());
            let decider = row.decided_by.clone().filter(|_| row.decided_by_name.is_none());
            author.into_iter().chain(decider).collect()
        }
    };
    if !unnamed.is_empty() {
        let asked = vec![Names::of(unnamed.iter().map(String::as_str))];
        let found = match mailroom_contract::registry().is_audited(context.route().id) {
            true => context.read_as_it_commits(asked).await?,
            false => context.read(asked).await?,
        };
        let names =
            Names::read(found.first().ok_or_else(Refusal::internal)?).map_err(|error| context.internal(error))?;
        row.name_from(&names);
    }
    Ok(context.json(&row.present()))
}

/// `GET /api/mailboxes/:mailboxId/sends`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    // The dispatcher has refused any `state` the declaration does not name.
    let state = context.query("state").map(str::to_string);
    let caller = caller_id(context)?;
    let limit = paging::limit(context)?;
    let (before_at, before_id) = paging::cursor(context, IdKind::Send, i64::MAX)?;
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let page = |with_names| {
        store::sends_of_mailbox(&mailbox_id, &caller, state.clone(), (before_at, &before_id), limit + 1, with_names)
    };
    // D1 names them in the same statement; a mailbox's own database holds only
    // ids, so there the names are read from D1 after it has answered (this read
    // is not recorded in the chain, so it has no commit to ride).
    let read = location::read_each(
        context,
        &mailbox_id,
        vec![mailboxes::mailbox(&mailbox_id)],
        (vec![page(true)], vec![page(false)]),
    )
    .await?;
    let sends = read.mail.first().ok_or_else(Refusal::internal)?;
    let mut rows: Vec<SendRow> = sends.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = paging::cut(&mut rows, limit, |row| (row.created_at, &row.id));
    let sends = match read.store {
        MailStore::D1 => rows.iter().map(SendRow::present).collect(),
        MailStore::OwnDatabase => {
            let address = read.directory[0].first().and_then(|mailbox| mailbox.text("address").ok());
            let unnamed = UnnamedSends(rows);
            let names = match unnamed.0.is_empty() {
                true => Names::default(),
                false => {
                    let [names] = context.read_array([Names::of(unnamed.mentioned())]).await?;
                    Names::read(&names).map_err(|error| context.internal(error))?
                }
            };
            unnamed.present(&names, address.as_deref()).into_iter().map(|(_, send)| send).collect()
        }
    };
    Ok(context.json(&SendList { sends, next_cursor }))
}

/// `GET /api/mailboxes/:mailboxId/sends/:sendId`.
pub async fn get(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let TheSend { row, store, .. } = the_send(context, Asked::default()).await?;
    answer(context, store, row).await
}

/// `GET /api/approvals`.
pub async fn approvals(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let holder = holder_of(context.caller(), context.now_ms()).ok_or_else(Refusal::internal)?;
    let caller = caller_id(context)?;
    let (all_of, any_of) = context.route().authority.rows_where().ok_or_else(Refusal::internal)?;
    let limit = paging::limit(context)?;
    // Oldest first, the order a queue is worked in.
    let (after_at, after_id) = paging::cursor(context, IdKind::Send, i64::MIN)?;
    // D1 notes which sends await a decision, wherever each is kept: a page of
    // them, and those D1 holds, in one read; then those of mailboxes whose
    // mail moved, from each such mailbox at once.
    let page = store::awaiting_page(&holder, (all_of, any_of), &caller, (after_at, &after_id), limit + 1);
    let [page] = context.read_array([store::awaiting_with_sends_in_d1(&page)]).await?;
    let mut notes = Vec::with_capacity(page.rows.len());
    let mut rows: Vec<SendRow> = Vec::new();
    for row in &page.rows {
        notes.push(row.decode::<AwaitingNote>().map_err(|error| context.internal(error))?);
        if row.optional_text("id").map_err(|error| context.internal(error))?.is_some() {
            rows.push(row.decode().map_err(|error| context.internal(error))?);
        }
    }
    let mut next_cursor = paging::cut(&mut notes, limit, |note| (note.awaiting_since, &note.awaiting_send));
    let moved_mailboxes = notes.iter().map(|note| note.mail_moved_at.map(|_| note.awaiting_mailbox.as_str()));
    if let Some(fits) = within_one_read(moved_mailboxes) {
        notes.truncate(fits);
        next_cursor = notes.last().map(|note| paging::encode_cursor(note.awaiting_since, &note.awaiting_send));
    }
    let reads: Vec<(String, Vec<Statement>)> = moved_reads(&notes);
    if !reads.is_empty() {
        for answered in context.read_in_mailboxes(reads).await? {
            let found = answered.first().ok_or_else(Refusal::internal)?;
            rows.extend(found.decode_all::<SendRow>().map_err(|error| context.internal(error))?);
        }
    }
    // In the notes' order; a note its send no longer bears out is left out.
    let mut sends = Vec::with_capacity(notes.len());
    for note in &notes {
        if let Some(index) = rows.iter().position(|row| row.id == note.awaiting_send) {
            let mut row = rows.swap_remove(index);
            row.mailbox_address = row.mailbox_address.or_else(|| note.awaiting_mailbox_address.clone());
            row.author_name = row.author_name.or_else(|| note.awaiting_author_name.clone());
            sends.push(row.present());
        }
    }
    Ok(context.json(&ApprovalQueue { sends, next_cursor }))
}

/// One of D1's notes of a send awaiting a decision
/// (`store::awaiting_with_sends_in_d1`).
#[derive(serde::Deserialize)]
struct AwaitingNote {
    awaiting_send: String,
    awaiting_mailbox: String,
    awaiting_since: i64,
    /// Set when the send's mailbox's mail is in its own database.
    mail_moved_at: Option<i64>,
    awaiting_mailbox_address: Option<String>,
    awaiting_author_name: Option<String>,
}

/// Where a page must end for its moved mailboxes (`Some` id for a row in a
/// mailbox whose mail moved, `None` for one in D1) to be read at once: before
/// the first row of one mailbox more than one read may ask
/// (`MAILBOXES_PER_READ`), the next page starting there; `None` when all fit.
fn within_one_read<'a>(mailboxes: impl Iterator<Item = Option<&'a str>>) -> Option<usize> {
    let mut asked: Vec<&str> = Vec::new();
    for (index, mailbox) in mailboxes.enumerate() {
        let Some(mailbox) = mailbox.filter(|mailbox| !asked.contains(mailbox)) else {
            continue;
        };
        if asked.len() == MAILBOXES_PER_READ {
            return Some(index);
        }
        asked.push(mailbox);
    }
    None
}

/// For the notes whose mailbox's mail moved, the read of their sends in
/// each such mailbox: one statement per mailbox, in the notes' order.
fn moved_reads(notes: &[AwaitingNote]) -> Vec<(String, Vec<Statement>)> {
    let mut by_mailbox: Vec<(&str, Vec<&str>)> = Vec::new();
    for note in notes.iter().filter(|note| note.mail_moved_at.is_some()) {
        match by_mailbox.iter_mut().find(|(mailbox, _)| *mailbox == note.awaiting_mailbox) {
            Some((_, ids)) => ids.push(&note.awaiting_send),
            None => by_mailbox.push((&note.awaiting_mailbox, vec![&note.awaiting_send])),
        }
    }
    by_mailbox.into_iter().map(|(mailbox, ids)| (mailbox.to_string(), vec![store::submitted_among(&ids)])).collect()
}

/// The sends of conversation `thread_id` that `caller` may see: everything but
/// other people's drafts, in the order they happened.
pub fn in_thread(thread_id: &str, caller: &str) -> Statement {
    store::sends_in_thread(thread_id, caller)
}

/// Sends as a mailbox's own database holds them (`in_thread` reads a
/// conversation's so, and a list of a moved mailbox's), before the directory
/// has named their authors and deciders.
pub struct UnnamedSends(Vec<SendRow>);

impl UnnamedSends {
    pub fn read(result: &QueryResult) -> Result<UnnamedSends, StorageError> {
        Ok(UnnamedSends(result.decode_all()?))
    }

    /// When each happened, as a conversation orders its entries.
    pub fn times(&self) -> impl Iterator<Item = i64> + '_ {
        self.0.iter().map(SendRow::happened_at)
    }

    /// The people and agents they mention: their authors and deciders.
    pub fn mentioned(&self) -> impl Iterator<Item = &str> {
        self.0.iter().flat_map(|row| std::iter::once(row.author.as_str()).chain(row.decided_by.as_deref()))
    }

    /// Each, with when it happened (sealed, submitted or begun), named from
    /// `names`, sent from the mailbox at `mailbox_address`.
    pub fn present(self, names: &Names, mailbox_address: Option<&str>) -> Vec<(i64, Send)> {
        self.0
            .into_iter()
            .map(|mut row| {
                row.author_name = names.of_id(&row.author);
                row.decided_by_name = row.decided_by.as_deref().and_then(|id| names.of_id(id));
                row.mailbox_address = mailbox_address.map(str::to_string);
                (row.happened_at(), row.present())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_ends_before_one_mailbox_more_than_one_read_may_ask() {
        let names: Vec<String> = (0..=MAILBOXES_PER_READ).map(|n| format!("mbx_{n}")).collect();
        // Every mailbox once, a row in D1 between each: the one past the
        // limit starts the next page.
        let rows: Vec<Option<&str>> = names.iter().flat_map(|name| [Some(name.as_str()), None]).collect();
        assert_eq!(within_one_read(rows.iter().copied()), Some(2 * MAILBOXES_PER_READ));
        // The same mailboxes again, and rows in D1, fit however many.
        let again: Vec<Option<&str>> =
            names[..MAILBOXES_PER_READ].iter().cycle().take(200).map(|name| Some(name.as_str())).collect();
        assert_eq!(within_one_read(again.into_iter().chain([None; 50])), None);
    }
}
