//! The listening routes' handlers: the caller's authority is the route's
//! (checked in the first read, as any call's); what they decide is the topic.

use mailroom_contract::PathParameter;

use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::events::{Listening, Topic};
use crate::core::http::Response;
use crate::core::refusal::Refusal;
use crate::messaging::MessagingError;
use crate::{agents, identity};

use super::errors::LiveError;

/// Whether `context`'s request asks for a WebSocket. A request that does not
/// opens nothing and is left out of the chain: it changed nothing, and the
/// hub's rechecks (`Listener::recheck_request`) are such requests.
fn upgrade_asked(context: &mut Context<'_>) -> Result<(), Refusal> {
    let asked = context.request().header("upgrade").is_some_and(|value| value.eq_ignore_ascii_case("websocket"));
    if asked {
        Ok(())
    } else {
        context.leave_unrecorded();
        Err(LiveError::NotAnUpgrade.into())
    }
}

/// `GET /api/mailboxes/:mailboxId/live`: a stream of the mailbox's changes.
pub async fn listen_to_mailbox(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let mailbox_id = context.path(PathParameter::MailboxId)?.to_string();
    // The checks first, with the caller's name (told beside its presence): a
    // stream is opened only for a caller who may read.
    let name = match context.caller() {
        Caller::Person { person_id, .. } => Some(identity::name_of_person(person_id)),
        Caller::Agent { agent_id, .. } => Some(agents::name_of_agent(agent_id)),
        _ => None,
    };
    let results = context.read(name.into_iter().collect()).await?;
    let actor_name = results.first().and_then(|result| result.first()).and_then(|row| row.text("name").ok());
    upgrade_asked(context)?;
    let mut opened = opening(context, Topic::Mailbox(mailbox_id));
    if let Some(listening) = opened.listen.as_mut() {
        listening.actor_name = actor_name;
    }
    Ok(opened)
}

/// `GET /api/me/live`: a stream of changes to the caller's own data (an
/// agent's: its sponsor's, whom its credential check has just proved).
pub async fn listen_to_own(context: &mut Context<'_>) -> Result<Response, Refusal> {
    context.read(Vec::new()).await?;
    upgrade_asked(context)?;
    let person = match context.caller() {
        Caller::Person { person_id, .. } => Some(person_id.clone()),
        _ => context.delegator().map(str::to_string),
    };
    let Some(person) = person else {
        return Err(Refusal::new(
            403,
            "nothing_of_your_own",
            "This credential has no data of its own to listen to.",
            "Only a person, or an agent acting for one, has notifications and reminders.",
            "Listen with a person's session or an agent's credential.",
        ));
    };
    Ok(opening(context, Topic::Person(person)))
}

/// `GET /api/agent-inbox/live`: a stream of the calling agent's inbox.
pub async fn listen_to_agent_inbox(context: &mut Context<'_>) -> Result<Response, Refusal> {
    context.read(Vec::new()).await?;
    upgrade_asked(context)?;
    let Caller::Agent { agent_id, .. } = context.caller() else {
        return Err(MessagingError::PeopleHaveNoInbox.into());
    };
    let topic = Topic::Agent(agent_id.clone());
    Ok(opening(context, topic))
}

/// `GET /api/agents/:agentId/live`: a stream of an agent's inbox, for its
/// sponsor or an administrator (the route's authority).
pub async fn listen_to_agent(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let agent_id = context.path(PathParameter::AgentId)?.to_string();
    let [found] = context.read_array([agents::name_of_agent(&agent_id)]).await?;
    upgrade_asked(context)?;
    if found.rows.is_empty() {
        return Err(Refusal::not_found("agent", &agent_id));
    }
    Ok(opening(context, Topic::Agent(agent_id)))
}

/// The answer that opens a stream on `topic` for the caller, its opening
/// recorded with what the topic is about as its object (the action names
/// which kind of stream).
fn opening(context: &mut Context<'_>, topic: Topic) -> Response {
    if let Some(id) = topic.id() {
        context.audit_object(id.to_string());
    }
    let actor = context.caller().actor_id().unwrap_or_default().to_string();
    let delegator = context.delegator().map(str::to_string);
    Response::listening(Listening { topic, actor, delegator, actor_name: None })
}
