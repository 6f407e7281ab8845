//! The two JSON-RPC endpoints: an agent's (`POST /a2a/:agentId`), which reads
//! a call, answers at once what needs no caller (an unreadable request, a
//! notification, an operation not supported) and hands a task's operation to
//! the gateway; and the node's (`POST /a2a`), which reads calls alike and
//! takes no tasks.

use mailroom_contract::PathParameter;

use crate::authz::credentials::AuthenticationError;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::refusal::Refusal;

use super::rpc::{self, Call, ErrorKind, Operation, RpcError};
use super::tasks::Gateway;

/// Reads the request, answering at once what needs no caller: an unreadable
/// request, a notification, and an operation the endpoint does not support.
fn read_call(context: &Context<'_>, takes_tasks: bool) -> Result<Call, Response> {
    let call = match rpc::read(context.request(), context.query("A2A-Version")) {
        Ok(Some(call)) => call,
        // A notification is answered with nothing (JSON-RPC 2.0 §4.1).
        Ok(None) => return Err(Response::empty(202)),
        Err((id, error)) => return Err(rpc::error(id, error)),
    };
    let unsupported = match call.operation {
        Operation::Push(_) if !takes_tasks => Some(RpcError::new(
            ErrorKind::PushNotificationNotSupported,
            format!(
                "{} is not supported here: the node takes no tasks (its card says `pushNotifications: false`). A task's push notifications are set at the agent's own endpoint, /a2a/{{agentId}}, which its card names.",
                call.method
            ),
        )),
        Operation::ExtendedCard => Some(RpcError::new(
            ErrorKind::UnsupportedOperation,
            "There is no extended card (the card says `extendedAgentCard: false`): the public card is all there is.",
        )),
        Operation::SendMessage
        | Operation::SendStreaming
        | Operation::Subscribe
        | Operation::GetTask
        | Operation::ListTasks
        | Operation::CancelTask
            if !takes_tasks =>
        {
            Some(RpcError::new(
                ErrorKind::UnsupportedOperation,
                format!(
                    "The node takes no tasks itself: {} goes to an agent's own endpoint, /a2a/{{agentId}}, which its card names. The node's card lists the agents their owners listed.",
                    call.method
                ),
            ))
        }
        _ => None,
    };
    match unsupported {
        Some(error) => Err(rpc::error(call.id, error.with("method", call.method.as_str()))),
        None => Ok(call),
    }
}

/// `POST /a2a/:agentId` (and with a trailing slash).
pub async fn handle(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let agent_id = context.path(PathParameter::AgentId)?.to_string();
    let call = match read_call(context, true) {
        Ok(call) => call,
        Err(answer) => return Ok(answer),
    };
    if context.caller().actor_id().is_none() {
        return Err(AuthenticationError::MissingCredentials.into());
    }
    let mut gateway = Gateway { context, agent_id, version: call.version, answered: None };
    // A stream's answer is its events; a refusal before it opens is an
    // ordinary JSON-RPC error (1.0 §9.4.2).
    let streamed = match call.operation {
        Operation::SendStreaming => Some(gateway.send_streaming(&call.id, &call.params).await),
        Operation::Subscribe => Some(gateway.subscribe(&call.id, &call.params).await),
        _ => None,
    };
    if let Some(streamed) = streamed {
        if let Some(response) = gateway.answered {
            return Ok(response);
        }
        return Ok(streamed.unwrap_or_else(|error| rpc::error(call.id, error)));
    }
    let outcome = match call.operation {
        Operation::SendMessage => gateway.send(&call.params).await,
        Operation::GetTask => gateway.get(&call.params).await,
        Operation::ListTasks => gateway.list(&call.params).await,
        Operation::CancelTask => gateway.cancel(&call.params).await,
        Operation::Push(operation) => gateway.push(operation, &call.params).await,
        // Streams are answered above, and `read_call` answered every other
        // operation.
        Operation::SendStreaming | Operation::Subscribe | Operation::ExtendedCard => {
            return Err(gateway.context.internal("an unsupported A2A operation reached the gateway"));
        }
    };
    // The caller's own refusal, answered as HTTP, as it would be over REST.
    if let Some(response) = gateway.answered {
        return Ok(response);
    }
    Ok(match outcome {
        Ok(result) => rpc::result(call.id, result),
        Err(error) => rpc::error(call.id, error),
    })
}

/// `POST /a2a` (and with a trailing slash): the node's endpoint, which its card
/// names. It reads requests as an agent's endpoint does and takes no tasks.
pub async fn handle_node(context: &mut Context<'_>) -> Result<Response, Refusal> {
    match read_call(context, false) {
        Ok(call) => Err(context.internal(format!("the node's endpoint reached {}", call.method))),
        Err(answer) => Ok(answer),
    }
}
