//! A send as stored and as answered, the manifest it is approved as, and the
//! reads of sends: one send, a mailbox's sends, the approval queue.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{AnsweredMessage, ApprovalQueue, EmailAddress, Send, SendAttachment, SendList, SendState};

use super::errors::SendError;
use super::limits::MAXIMUM_RECIPIENTS;
use super::store::{self, AnsweredRow, SendRow};
use super::version::Submission;
use crate::authz::holder_of;
use crate::core::addresses;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Statement, StorageError};
use crate::core::time::rfc3339;
use crate::mail::location::{self, MailStore};
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

/// The path's send, in the path's mailbox, with the mailbox's address; refuses
/// one that does not exist or that the caller may not see.
pub(super) async fn the_send(
    context: &mut Context<'_>,
    extra: Vec<Statement>,
) -> Result<(SendRow, Vec<QueryResult>), Refusal> {
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    let send_id = context.path(PathParameter::SendId)?.to_string();
    context.audit_object(send_id.clone());
    if !is_id_of(&send_id, IdKind::Send) {
        return Err(SendError::NoSuchSend { id: send_id }.into());
    }
    let caller = caller_id(context)?;
    let statement = store::send_for_caller(&send_id, &mailbox_id, &caller);
    let mut statements = vec![statement];
    statements.extend(extra);
    let mut results = context.read(statements).await?;
    let rest = results.split_off(1);
    let row: SendRow = match results[0].first() {
        Some(row) => row.decode().map_err(|error| context.internal(error))?,
        None => return Err(SendError::NoSuchSend { id: send_id }.into()),
    };
    if !row.visible_to(&caller) {
        return Err(SendError::NoSuchSend { id: send_id }.into());
    }
    Ok((row, rest))
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
    let (row, _) = the_send(context, Vec::new()).await?;
    Ok(context.json(&row.present()))
}

/// `GET /api/approvals`.
pub async fn approvals(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let holder = holder_of(context.caller(), context.now_ms()).ok_or_else(Refusal::internal)?;
    let caller = caller_id(context)?;
    let (all_of, any_of) = context.route().authority.rows_where().ok_or_else(Refusal::internal)?;
    let limit = paging::limit(context)?;
    // Oldest first, the order a queue is worked in.
    let (after_at, after_id) = paging::cursor(context, IdKind::Send, i64::MIN)?;
    let statement = store::approval_queue(&holder, (all_of, any_of), &caller, (after_at, &after_id), limit + 1);
    let [sends] = context.read_array([statement]).await?;
    let mut rows: Vec<SendRow> = sends.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = paging::cut(&mut rows, limit, |row| (row.submitted_at.unwrap_or_default(), &row.id));
    Ok(context.json(&ApprovalQueue { sends: rows.iter().map(SendRow::present).collect(), next_cursor }))
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
                (row.sealed_at.or(row.submitted_at).unwrap_or(row.created_at), row.present())
            })
            .collect()
    }
}
