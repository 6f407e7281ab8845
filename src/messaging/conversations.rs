//! What a sender, a recipient and the owner of either reads: one message, the
//! messages the caller sent, conversations; and canceling a conversation.
//!
//! Who may read: a participant (the caller sent or received a message in it),
//! the sponsor of a participating agent, or an administrator. Anything else
//! answers as if it did not exist.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{
    AgentConversation, AgentConversationList, AgentConversationSummary, SentAgentMessageList,
};
use serde::Deserialize;
use serde_json::json;

use super::{
    MESSAGE_COLUMNS, MESSAGE_FROM, MessageRow, MessagingError, PolicyNumber, held_because_sql, participant, policy_sql,
    state_now_sql,
};
use crate::authz::{holder_of, tuples};
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::IdKind;
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;
use crate::core::storage::{QueryResult, Statement};
use crate::core::time::{instant, rfc3339};

/// Whether the caller administers the node, read beside what it asks for.
fn administers(context: &Context<'_>) -> Statement {
    match holder_of(context.caller(), context.now_ms()) {
        Some(holder) => tuples::is_administrator(&holder),
        None => Statement::new("SELECT 0 AS held"),
    }
}

/// Whether `?2` (the caller) takes part in conversation `?3`, or sponsors an
/// agent that does: SQL for one column, `sees`.
const SEES_CONVERSATION: &str = "EXISTS (SELECT 1 FROM agent_conversation_participants p \
      LEFT JOIN agents a ON a.id = p.participant_id \
      WHERE p.conversation_id = ?3 AND (p.participant_id = ?2 OR a.sponsor_id = ?2)) AS sees";

/// `GET /api/agent-messages/:agentMessageId`.
pub async fn get_message(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let id = context.path(PathParameter::AgentMessageId)?.to_string();
    let me = participant(context.caller())?;
    let now = context.now_ms();
    let message = Statement::new(format!(
        "SELECT {MESSAGE_COLUMNS}, {}, EXISTS (SELECT 1 FROM agents a \
           WHERE a.id IN (m.sender_id, m.recipient_id) AND a.sponsor_id = ?2) AS sponsors \
         {MESSAGE_FROM} WHERE m.id = ?3",
        held_because_sql()
    ))
    .bind(now)
    .bind(me.as_str())
    .bind(id.as_str());
    let administers = administers(context);
    let [message, administers] = context.read_array([message, administers]).await?;
    let Some(row) = message.first() else { return Err(MessagingError::NoSuchMessage { id }.into()) };
    let found: MessageRow = row.decode().map_err(|error| context.internal(error))?;
    let sees = found.sender_id == me
        || found.recipient_id == me
        || row.flag("sponsors").unwrap_or(false)
        || administers.first_flag("held") == Some(true);
    if !sees {
        return Err(MessagingError::NoSuchMessage { id }.into());
    }
    Ok(context.json(&found.present(now)))
}

/// `GET /api/agent-messages`: what the caller sent, most recently changed
/// first, filtered by recipient, kind, conversation, state now, whether it was
/// ever delivered and when it last changed; with how many match in all.
pub async fn list_sent(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let me = participant(context.caller())?;
    let limit = paging::limit(context)?;
    let (before_at, before_id) = paging::cursor(context, IdKind::AgentMessage, i64::MAX)?;
    let before_id = if before_id.is_empty() { "~".to_string() } else { before_id };
    let now = context.now_ms();
    // The dispatcher has refused a state outside the vocabulary.
    let states = context.query("state").map(|states| json!(states.split(',').collect::<Vec<_>>()).to_string());
    let attempted = context.query("attempted").map(|attempted| i64::from(attempted == "true"));
    let changed_since = match context.query("changed_since") {
        None => None,
        Some(moment) => Some(instant(moment).ok_or_else(|| RequestError::InvalidQueryParameter {
            name: "changed_since".into(),
            expected: "a moment in RFC 3339, such as 2026-01-31T09:00:00Z".into(),
        })?),
    };
    // `?1` is the time, as the state and `held_because` are judged at it.
    let matching = format!(
        "m.sender_id = ?2 AND m.kind <> 'reply' AND (?3 IS NULL OR m.recipient_id = ?3) \
           AND (?4 IS NULL OR m.kind = ?4) AND (?5 IS NULL OR m.conversation_id = ?5) \
           AND (?6 IS NULL OR (m.attempts > 0) = ?6) AND (?7 IS NULL OR m.updated_at >= ?7) \
           AND (?8 IS NULL OR ({}) IN (SELECT value FROM json_each(?8)))",
        state_now_sql()
    );
    let filtered = |statement: Statement| {
        statement
            .bind(now)
            .bind(me.as_str())
            .bind(context.query("recipient"))
            .bind(context.query("kind"))
            .bind(context.query("conversation"))
            .bind(attempted)
            .bind(changed_since)
            .bind(states.clone())
    };
    let page = filtered(Statement::new(format!(
        "SELECT {MESSAGE_COLUMNS}, {} {MESSAGE_FROM} WHERE {matching} AND (m.updated_at, m.id) < (?9, ?10) \
         ORDER BY m.updated_at DESC, m.id DESC LIMIT ?11",
        held_because_sql()
    )))
    .bind(before_at)
    .bind(before_id)
    .bind(limit + 1);
    let total = filtered(Statement::new(format!("SELECT COUNT(*) AS total FROM agent_messages m WHERE {matching}")));
    let [page, total] = context.read_array([page, total]).await?;
    let mut rows: Vec<MessageRow> = page.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = paging::cut(&mut rows, limit, |row| (row.updated_at, row.id.as_str()));
    let total = total.first().and_then(|row| row.integer("total").ok()).unwrap_or_default();
    Ok(context.json(&SentAgentMessageList {
        messages: rows.iter().map(|row| row.present(now)).collect(),
        next_cursor,
        total,
    }))
}

#[derive(Deserialize)]
struct ConversationRow {
    id: String,
    participants: String,
    message_count: i64,
    last_activity_at: i64,
    canceled_at: Option<i64>,
}

fn participants_of(joined: &str) -> Vec<String> {
    let mut participants: Vec<String> = joined.split(',').filter(|id| !id.is_empty()).map(str::to_string).collect();
    participants.sort();
    participants
}

/// `GET /api/agent-conversations`.
pub async fn list_conversations(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let me = participant(context.caller())?;
    let whose = context.query("agent").map(str::to_string).unwrap_or_else(|| me.clone());
    let limit = paging::limit(context)?;
    let (before_at, before_id) = paging::cursor(context, IdKind::Conversation, i64::MAX)?;
    let before_id = if before_id.is_empty() { "~".to_string() } else { before_id };
    // The agent named must be the caller or one it sponsors (an administrator
    // reads any agent's through the owner plane's inbox and conversations).
    let whose_is_mine =
        Statement::new("SELECT (?1 = ?2 OR EXISTS (SELECT 1 FROM agents WHERE id = ?1 AND sponsor_id = ?2)) AS mine")
            .bind(whose.as_str())
            .bind(me.as_str());
    let administers = administers(context);
    let page = Statement::new(
        "SELECT c.id, c.last_activity_at, c.canceled_at, \
           (SELECT GROUP_CONCAT(participant_id) FROM agent_conversation_participants WHERE conversation_id = c.id) AS participants, \
           (SELECT COUNT(*) FROM agent_messages WHERE conversation_id = c.id) AS message_count \
         FROM agent_conversation_participants p JOIN agent_conversations c ON c.id = p.conversation_id \
         WHERE p.participant_id = ?1 AND (c.last_activity_at, c.id) < (?2, ?3) \
         ORDER BY c.last_activity_at DESC, c.id DESC LIMIT ?4",
    )
    .bind(whose.as_str())
    .bind(before_at)
    .bind(before_id)
    .bind(limit + 1);
    let [whose_is_mine, administers, page] = context.read_array([whose_is_mine, administers, page]).await?;
    let admitted = whose_is_mine.first_flag("mine") == Some(true)
        || (administers.first_flag("held") == Some(true) && whose.starts_with(IdKind::Agent.prefix()));
    if !admitted {
        return Err(MessagingError::NoSuchAgent { id: whose }.into());
    }
    let mut rows: Vec<ConversationRow> = page.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = paging::cut(&mut rows, limit, |row| (row.last_activity_at, row.id.as_str()));
    let conversations = rows
        .into_iter()
        .map(|row| AgentConversationSummary {
            participants: participants_of(&row.participants),
            id: row.id,
            message_count: row.message_count,
            last_activity_at: rfc3339(row.last_activity_at),
            canceled_at: row.canceled_at.map(rfc3339),
        })
        .collect();
    Ok(context.json(&AgentConversationList { conversations, next_cursor }))
}

/// The conversation the path names, with its messages, if the caller may see it.
async fn visible_conversation(context: &mut Context<'_>) -> Result<(AgentConversation, bool), Refusal> {
    let id = context.path(PathParameter::ConversationId)?.to_string();
    let me = participant(context.caller())?;
    let now = context.now_ms();
    let conversation = Statement::new(format!(
        "SELECT c.canceled_at, \
           (SELECT GROUP_CONCAT(participant_id) FROM agent_conversation_participants WHERE conversation_id = c.id) AS participants, \
           EXISTS (SELECT 1 FROM agent_conversation_participants WHERE conversation_id = c.id AND participant_id = ?2) AS takes_part, \
           {SEES_CONVERSATION} \
         FROM agent_conversations c WHERE c.id = ?3 AND ?1 = ?1"
    ))
    .bind(now)
    .bind(me.as_str())
    .bind(id.as_str());
    let messages = Statement::new(format!(
        "SELECT {MESSAGE_COLUMNS}, {} {MESSAGE_FROM} WHERE m.conversation_id = ?2 ORDER BY m.created_at, m.id",
        held_because_sql()
    ))
    .bind(now)
    .bind(id.as_str());
    let administers = administers(context);
    let [conversation, messages, administers] = context.read_array([conversation, messages, administers]).await?;
    let not_found = || Refusal::from(MessagingError::NoSuchConversation { id: id.clone() });
    let row = conversation.first().ok_or_else(not_found)?;
    if !(row.flag("sees").unwrap_or(false) || administers.first_flag("held") == Some(true)) {
        return Err(not_found());
    }
    let takes_part = row.flag("takes_part").unwrap_or(false);
    let presented = AgentConversation {
        id: id.clone(),
        participants: participants_of(&row.optional_text("participants").ok().flatten().unwrap_or_default()),
        canceled_at: row.optional_integer("canceled_at").ok().flatten().map(rfc3339),
        messages: messages_of(context, &messages, now)?,
    };
    Ok((presented, takes_part))
}

fn messages_of(
    context: &Context<'_>,
    result: &QueryResult,
    now_ms: i64,
) -> Result<Vec<mailroom_contract::api::AgentMessage>, Refusal> {
    let rows: Vec<MessageRow> = result.decode_all().map_err(|error| context.internal(error))?;
    Ok(rows.iter().map(|row| row.present(now_ms)).collect())
}

/// `GET /api/agent-conversations/:conversationId`.
pub async fn get_conversation(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (conversation, _) = visible_conversation(context).await?;
    Ok(context.json(&conversation))
}

/// `POST /api/agent-conversations/:conversationId/cancel`: every unfinished
/// message in it becomes canceled, in one guarded batch.
pub async fn cancel_conversation(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (mut conversation, takes_part) = visible_conversation(context).await?;
    context.audit_object(conversation.id.clone());
    if !takes_part {
        return Err(MessagingError::OnlyParticipantsCancel.into());
    }
    if conversation.canceled_at.is_some() {
        return Err(MessagingError::ConversationCanceled { id: conversation.id }.into());
    }
    let me = participant(context.caller())?;
    let now = context.now_ms();
    context.write_changing_one_row(
        Statement::new(
            "UPDATE agent_conversations SET canceled_at = ?2, canceled_by = ?3, last_activity_at = ?2 \
             WHERE id = ?1 AND canceled_at IS NULL",
        )
        .bind(conversation.id.as_str())
        .bind(now)
        .bind(me.as_str()),
        MessagingError::ConversationCanceled { id: conversation.id.clone() },
    );
    // What is still unfinished: not expired, and not a lapsed lease that had
    // its attempts (failed, though not yet recorded so).
    let attempts = policy_sql(PolicyNumber::MaximumAttempts, "recipient_id");
    context.write(
        Statement::new(format!(
            "UPDATE agent_messages SET state = 'canceled', lease_expires_at = NULL, updated_at = ?2 \
             WHERE conversation_id = ?1 AND expires_at > ?2 \
               AND (state = 'queued' OR (state = 'leased' AND (lease_expires_at > ?2 OR attempts < {attempts})))"
        ))
        .bind(conversation.id.as_str())
        .bind(now),
    );
    let mut canceled = 0;
    for message in &mut conversation.messages {
        if !message.state.is_finished() {
            message.state = mailroom_contract::api::AgentMessageState::Canceled;
            message.held_because = None;
            message.lease_expires_at = None;
            message.updated_at = rfc3339(now);
            canceled += 1;
        }
    }
    context.audit_detail(json!({ "canceled_messages": canceled }));
    conversation.canceled_at = Some(rfc3339(now));
    Ok(context.json(&conversation))
}
