//! A person's connected apps: the agents their OAuth consents minted, with the
//! client each was for, and disconnecting one (revoking its agent).

use mailroom_contract::api::{Agent, ConnectedApp, ConnectedAppList};

use super::clients::host_of;
use super::shared::person;
use super::store::connections_of;
use crate::agents;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::refusal::Refusal;
use crate::core::storage::QueryResult;
use crate::core::time::rfc3339;

/// Pairs each agent with its connection, in the agents' order (newest first).
fn apps(context: &Context<'_>, agents: Vec<Agent>, connections: &QueryResult) -> Result<Vec<ConnectedApp>, Refusal> {
    let mut apps = Vec::new();
    for agent in agents {
        let Some(row) = connections.rows.iter().find(|row| row.text("agent_id").is_ok_and(|id| id == agent.id)) else {
            continue;
        };
        let text = |column: &str| row.text(column).map_err(|error| context.internal(error));
        apps.push(ConnectedApp {
            client_id: text("client_id")?,
            client_name: text("client_name")?,
            redirect_host: host_of(&text("redirect_uri")?),
            connected_at: rfc3339(row.integer("connected_at").map_err(|error| context.internal(error))?),
            last_used_at: row.optional_integer("last_used_at").ok().flatten().map(rfc3339),
            agent,
        });
    }
    Ok(apps)
}

/// `GET /api/me/connected-apps`.
pub async fn list_connected_apps(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let person_id = person(context)?;
    let (agents, connections) = agents::connected_by(context, &person_id, connections_of(&person_id)).await?;
    let apps = apps(context, agents, &connections)?;
    Ok(context.json(&ConnectedAppList { apps }))
}

/// `POST /api/me/connected-apps/:agentId/disconnect`.
pub async fn disconnect(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let person_id = person(context)?;
    let (agent, connections) = agents::disconnect(context, &person_id, connections_of(&person_id)).await?;
    let app = apps(context, vec![agent], &connections)?.into_iter().next().ok_or_else(Refusal::internal)?;
    Ok(context.json(&app))
}
