//! A send as stored and as answered, the manifest it is approved as, and the
//! reads of sends: one send, a mailbox's sends, the approval queue.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{
    AnsweredMessage, ApprovalQueue, EmailAddress, Send, SendAttachment, SendList, SendState, SenderAuthentication,
};
use serde::Deserialize;

use super::{MAXIMUM_RECIPIENTS, SendError};
use crate::authz::tuples;
use crate::authz::{dual_control, holder_of};
use crate::core::addresses;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Statement, Value};
use crate::core::time::rfc3339;
use crate::mail::outbound::{Manifest, OutboundFile};

use super::version::Submission;

pub(super) const SEND_COLUMNS: &str = "s.id, s.mailbox_id, s.author, s.state, s.to_json, s.cc_json, s.subject, s.text, s.reply_to, \
     s.in_reply_to, s.references_json, s.created_at, s.updated_at, s.submitted_at, s.submitted_by, s.decided_at, \
     s.decided_by, s.refusal_reason, s.message_id, s.manifest_hash, s.sealed_at, s.dispatched_at, s.dispatch_error, \
     s.sealed_from_address, s.sealed_from_name, s.delivered_json, s.submitted_version, s.thread_id, \
     s.sent_message_ids_json, \
     (SELECT json_group_array(json_object('index', f.position, 'name', f.name, 'content_type', f.content_type, \
        'size', f.size, 'sha256', f.sha256)) FROM (SELECT * FROM send_attachments f WHERE f.send_id = s.id \
        ORDER BY f.position) AS f) AS attachments_json, \
     (SELECT m.address FROM mailboxes m WHERE m.id = s.mailbox_id) AS mailbox_address, \
     COALESCE((SELECT p.name FROM people p WHERE p.id = s.author), (SELECT a.name FROM agents a WHERE a.id = s.author)) \
       AS author_name, \
     (SELECT p.name FROM people p WHERE p.id = s.decided_by) AS decided_by_name";

#[derive(Clone, Debug, Deserialize)]
pub(super) struct SendRow {
    pub(super) id: String,
    pub(super) mailbox_id: String,
    pub(super) author: String,
    pub(super) state: SendState,
    pub(super) to_json: String,
    pub(super) cc_json: String,
    pub(super) subject: String,
    pub(super) text: String,
    pub(super) reply_to: Option<String>,
    pub(super) in_reply_to: Option<String>,
    pub(super) references_json: String,
    pub(super) created_at: i64,
    pub(super) updated_at: i64,
    pub(super) submitted_at: Option<i64>,
    pub(super) submitted_by: Option<String>,
    pub(super) decided_at: Option<i64>,
    pub(super) decided_by: Option<String>,
    pub(super) refusal_reason: Option<String>,
    pub(super) message_id: Option<String>,
    pub(super) manifest_hash: Option<String>,
    pub(super) sealed_at: Option<i64>,
    pub(super) dispatched_at: Option<i64>,
    pub(super) dispatch_error: Option<String>,
    #[serde(default)]
    pub(super) sealed_from_address: Option<String>,
    #[serde(default)]
    pub(super) sealed_from_name: Option<String>,
    /// The envelope recipients the binding has accepted it for.
    #[serde(default = "no_one")]
    pub(super) delivered_json: String,
    /// The version submitted (`Submission::version`); absent on a draft, and on
    /// a send submitted before versions were recorded, whose version is then
    /// computed from the row (`version`).
    #[serde(default)]
    pub(super) submitted_version: Option<String>,
    /// The conversation it belongs to.
    #[serde(default)]
    pub(super) thread_id: Option<String>,
    /// The Message-IDs the mail service reported for it.
    #[serde(default = "no_one")]
    pub(super) sent_message_ids_json: String,
    /// The files it carries, as `SEND_COLUMNS` reads them.
    #[serde(default)]
    pub(super) attachments_json: Option<String>,
    /// The received message it answers, as `DECISION_COLUMNS` reads it.
    #[serde(default)]
    pub(super) answers_json: Option<String>,
    /// For an agent's send, as `DECISION_COLUMNS` counts them.
    #[serde(default)]
    pub(super) writer_unverified_reads: Option<i64>,
    #[serde(default)]
    pub(super) mailbox_address: Option<String>,
    #[serde(default)]
    pub(super) mailbox_display_name: Option<String>,
    #[serde(default)]
    pub(super) author_name: Option<String>,
    #[serde(default)]
    pub(super) decided_by_name: Option<String>,
    /// When an agent submitted it, the agent's sponsor.
    #[serde(default)]
    pub(super) submitted_by_sponsor: Option<String>,
    /// When an agent submitted it, who minted the agent.
    #[serde(default)]
    pub(super) submitted_by_minter: Option<String>,
    /// When an agent submitted it, who handed the agent its credential.
    #[serde(default)]
    pub(super) submitted_by_credential_issuer: Option<String>,
    /// The name of the person asking, when read for a decision.
    #[serde(default)]
    pub(super) caller_name: Option<String>,
}

#[derive(Deserialize)]
struct AnsweredRow {
    id: String,
    from_address: Option<String>,
    from_name: Option<String>,
    subject: String,
    received_at: i64,
    sender_authentication: SenderAuthentication,
}

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

pub(super) fn no_one() -> String {
    "[]".into()
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

/// What a decision is taken beside: the received message the send answers, and
/// for an agent's send how many unauthenticated messages the agent read (their
/// text, per the audit chain) in the day before it submitted.
pub(super) const DECISION_COLUMNS: &str = "(SELECT json_object('id', r.id, 'from_address', r.from_address, \
       'from_name', r.from_name, 'subject', r.subject, 'received_at', r.received_at, \
       'sender_authentication', r.sender_authentication) FROM receipts r WHERE r.id = s.reply_to) AS answers_json, \
     CASE WHEN s.author LIKE 'agt!_%' ESCAPE '!' THEN \
       (SELECT count(DISTINCT r.id) FROM audit_entries a JOIN receipts r ON r.id = a.object OR r.thread_id = a.object \
        WHERE a.actor = s.author AND a.action IN ('get_message_body', 'get_thread') AND a.outcome = 'ok' \
          AND a.at <= COALESCE(s.submitted_at, s.updated_at) AND a.at >= COALESCE(s.submitted_at, s.updated_at) - 86400000 \
          AND r.sender_authentication != 'authenticated') END AS writer_unverified_reads";

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
    let statement = Statement::new(format!(
        "SELECT {SEND_COLUMNS}, {DECISION_COLUMNS}, m.display_name AS mailbox_display_name, \
                (SELECT a.sponsor_id FROM agents a WHERE a.id = s.submitted_by) AS submitted_by_sponsor, \
                (SELECT a.created_by FROM agents a WHERE a.id = s.submitted_by) AS submitted_by_minter, \
                (SELECT a.credential_issued_by FROM agents a WHERE a.id = s.submitted_by) \
                  AS submitted_by_credential_issuer, \
                (SELECT p.name FROM people p WHERE p.id = ?3) AS caller_name \
         FROM sends s JOIN mailboxes m ON m.id = s.mailbox_id WHERE s.id = ?1 AND s.mailbox_id = ?2"
    ))
    .bind(send_id.as_str())
    .bind(mailbox_id.as_str())
    .bind(caller.as_str());
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

/// Queues the move of a send from one state to another, with `assignments`
/// (and their `parameters`) alongside, conditional on its state not having
/// moved since it was read: a race loses with a refusal, never a silent overwrite.
pub(super) fn transition(
    context: &mut Context<'_>,
    send_id: &str,
    (from, to): (SendState, SendState),
    assignments: &str,
    parameters: Vec<Value>,
) {
    let mut statement = Statement::new(format!("UPDATE sends SET state = ?, {assignments} WHERE id = ? AND state = ?"));
    statement.parameters.push(to.name().into());
    statement.parameters.extend(parameters);
    statement.parameters.push(send_id.into());
    statement.parameters.push(from.name().into());
    context.write_changing_one_row(statement, SendError::Raced);
}

/// A decision's move out of `submitted`, changing the row only while it still
/// holds `version` (the one the decider named; `row_version` is what the row
/// read as, for a send submitted before versions were recorded): a submission
/// replaced between the read and this commit is never what gets decided.
pub(super) fn decide(
    context: &mut Context<'_>,
    row: &SendRow,
    version: &str,
    to: SendState,
    assignments: &str,
    parameters: Vec<Value>,
) {
    let mut statement = Statement::new(format!(
        "UPDATE sends SET state = ?, {assignments} WHERE id = ? AND state = ? AND COALESCE(submitted_version, ?) = ?"
    ));
    statement.parameters.push(to.name().into());
    statement.parameters.extend(parameters);
    statement.parameters.push(row.id.as_str().into());
    statement.parameters.push(SendState::Submitted.name().into());
    statement.parameters.push(row.version().unwrap_or_default().into());
    statement.parameters.push(version.into());
    context.write_changing_one_row(statement, SendError::Raced);
}

/// `GET /api/mailboxes/:mailboxId/sends`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    // The dispatcher has refused any `state` the declaration does not name.
    let state = context.query("state").map(str::to_string);
    let caller = caller_id(context)?;
    let limit = paging::limit(context)?;
    let (before_at, before_id) = paging::cursor(context, IdKind::Send, i64::MAX)?;
    let statement = Statement::new(format!(
        "SELECT {SEND_COLUMNS} FROM sends s WHERE s.mailbox_id = ?1 AND (s.state != ?7 OR s.author = ?2) \
         AND (?3 IS NULL OR s.state = ?3) \
         AND (s.created_at < ?4 OR (s.created_at = ?4 AND (?5 = '' OR s.id < ?5))) \
         ORDER BY s.created_at DESC, s.id DESC LIMIT ?6"
    ))
    .bind(context.path(PathParameter::MailboxId)?)
    .bind(caller)
    .bind(state)
    .bind(before_at)
    .bind(before_id)
    .bind(limit + 1)
    .bind(SendState::Draft.name());
    let [sends] = context.read_array([statement]).await?;
    let mut rows: Vec<SendRow> = sends.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = paging::cut(&mut rows, limit, |row| (row.created_at, &row.id));
    Ok(context.json(&SendList { sends: rows.iter().map(SendRow::present).collect(), next_cursor }))
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
    let (deciding, deciding_parameters) = tuples::mailbox_ids_where(&holder, all_of, any_of);
    let mut parameters: Vec<Value> = vec![SendState::Submitted.name().into()];
    parameters.extend(deciding_parameters);
    parameters.extend([caller.as_str().into(), caller.as_str().into(), caller.as_str().into(), caller.as_str().into()]);
    parameters.extend([after_at.into(), after_at.into(), after_id.as_str().into(), after_id.as_str().into()]);
    parameters.push((limit + 1).into());
    let not_the_submitters_side = dual_control::not_on_the_side_of("s.submitted_by", "?");
    let statement = Statement {
        sql: format!(
            "SELECT {SEND_COLUMNS}, {DECISION_COLUMNS} FROM sends s WHERE s.state = ? AND s.mailbox_id IN ({deciding}) \
             AND {not_the_submitters_side} \
             AND (s.submitted_at > ? OR (s.submitted_at = ? AND (? = '' OR s.id > ?))) \
             ORDER BY s.submitted_at, s.id LIMIT ?"
        )
        .into(),
        parameters,
    };
    let [sends] = context.read_array([statement]).await?;
    let mut rows: Vec<SendRow> = sends.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = paging::cut(&mut rows, limit, |row| (row.submitted_at.unwrap_or_default(), &row.id));
    Ok(context.json(&ApprovalQueue { sends: rows.iter().map(SendRow::present).collect(), next_cursor }))
}

/// The sends of conversation `thread_id` that `caller` may see: everything but
/// other people's drafts, in the order they happened.
pub fn in_thread(thread_id: &str, caller: &str) -> Statement {
    Statement::new(format!(
        "SELECT {SEND_COLUMNS} FROM sends s WHERE s.thread_id = ?1 AND (s.state != ?3 OR s.author = ?2) \
         ORDER BY COALESCE(s.sealed_at, s.submitted_at, s.created_at), s.id"
    ))
    .bind(thread_id)
    .bind(caller)
    .bind(SendState::Draft.name())
}

/// The sends `in_thread` read, each with when it happened: sealed, submitted or
/// begun.
pub fn present_in_thread(result: &QueryResult) -> Result<Vec<(i64, Send)>, crate::core::storage::StorageError> {
    let rows: Vec<SendRow> = result.decode_all()?;
    Ok(rows.iter().map(|row| (row.sealed_at.or(row.submitted_at).unwrap_or(row.created_at), row.present())).collect())
}
