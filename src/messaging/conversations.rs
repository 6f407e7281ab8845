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
use serde_json::json;

use super::errors::MessagingError;
use super::shared::participant;
use super::store::{self, ConversationRow, MessageRow, SentFilter};
use crate::authz::holder_of;
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
    store::administers(holder_of(context.caller(), context.now_ms()).as_ref())
}

/// `GET /api/agent-messages/:agentMessageId`.
pub async fn get_message(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let id = context.path(PathParameter::AgentMessageId)?.to_string();
    let me = participant(context.caller())?;
    let now = context.now_ms();
    let message = store::message_with_sponsorship(&id, &me, now);
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

/// The read that finds the message `id` for `sender`, at `now_ms`: answered by
/// `sent_message`.
pub fn message_sent_by(id: &str, sender: &str, now_ms: i64) -> Statement {
    store::message_with_sponsorship(id, sender, now_ms)
}

/// The message a `message_sent_by` read found, as its sender sees it, when
/// `sender` sent it (a request or an event, never a reply): a task someone
/// follows is one they asked.
pub fn sent_message(result: &QueryResult, sender: &str, now_ms: i64) -> Option<mailroom_contract::api::AgentMessage> {
    let row: MessageRow = result.first()?.decode().ok()?;
    (row.sender_id == sender && row.kind != "reply").then(|| row.present(now_ms))
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
    let filter = SentFilter {
        now_ms: now,
        sender: &me,
        recipient: context.query("recipient"),
        kind: context.query("kind"),
        conversation: context.query("conversation"),
        attempted,
        changed_since,
        states,
    };
    let page = store::sent_page(&filter, before_at, &before_id, limit);
    let total = store::sent_total(&filter);
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
    let whose_is_mine = store::is_mine(&whose, &me);
    let administers = administers(context);
    let page = store::conversations_page(&whose, before_at, &before_id, limit);
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
    let conversation = store::conversation_seen_by(&id, &me, now);
    let messages = store::conversation_messages(&id, now);
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
        store::cancel_conversation(&conversation.id, &me, now),
        MessagingError::ConversationCanceled { id: conversation.id.clone() },
    );
    context.write(store::cancel_unfinished_messages(&conversation.id, now));
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
