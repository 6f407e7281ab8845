//! An agent as the API answers it: its state, and its pinned ceiling read back
//! as held of total per capability, with pinned routes no capability contains
//! still shown.

use std::collections::{BTreeMap, BTreeSet};

use mailroom_contract::api::{Agent, AgentState, CapabilityHeld, MailboxGrant};
use mailroom_contract::capabilities::{self, CAPABILITIES};
use mailroom_contract::registry;
use serde::Deserialize;

use super::store::{AgentRow, RouteRow};
use crate::core::context::Context;
use crate::core::refusal::Refusal;
use crate::core::storage::QueryResult;
use crate::core::time::rfc3339;

#[derive(Deserialize)]
struct TupleRow {
    subject: String,
    relation: String,
    object: String,
}

impl AgentRow {
    pub(super) fn state(&self, now_ms: i64) -> AgentState {
        if self.revoked_at.is_some() {
            AgentState::Revoked
        } else if self.expires_at.is_some_and(|expires_at| expires_at <= now_ms) {
            AgentState::Expired
        } else if self.paused_at.is_some() {
            AgentState::Paused
        } else if self.connection_pending_until.is_some() {
            AgentState::AwaitingExchange
        } else if self.credential_hash.is_none() && self.connected.is_none() {
            AgentState::AwaitingPairing
        } else {
            AgentState::Active
        }
    }

    pub(super) fn present(&self, now_ms: i64, routes: &[String], tuples: &[(String, String)]) -> Agent {
        let pinned: BTreeSet<&str> = routes.iter().map(String::as_str).collect();
        let capabilities = CAPABILITIES
            .iter()
            .filter_map(|capability| {
                let held = capability.routes.iter().filter(|id| pinned.contains(registry().route(**id).tool)).count();
                (held > 0).then(|| CapabilityHeld {
                    name: capability.name.to_string(),
                    held: held as i64,
                    total: capability.routes.len() as i64,
                })
            })
            .collect();
        let other_routes = routes
            .iter()
            .filter(|route| {
                registry().route_by_tool(route).and_then(|route| capabilities::capability_of(route.id)).is_none()
            })
            .cloned()
            .collect();
        let mut by_mailbox: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for (relation, object) in tuples {
            by_mailbox.entry(object).or_default().push(relation.clone());
        }
        Agent {
            id: self.id.clone(),
            name: self.name.clone(),
            sponsor: self.sponsor_id.clone(),
            state: self.state(now_ms),
            created_at: rfc3339(self.created_at),
            created_by: self.created_by.clone(),
            expires_at: self.expires_at.map(rfc3339),
            paused_at: self.paused_at.map(rfc3339),
            revoked_at: self.revoked_at.map(rfc3339),
            last_seen_at: self.last_seen_at.map(rfc3339),
            capabilities,
            other_routes,
            routes: routes.to_vec(),
            mailboxes: by_mailbox
                .into_iter()
                .map(|(mailbox, relations)| MailboxGrant { mailbox: mailbox.to_string(), relations })
                .collect(),
        }
    }
}

/// Presents agents from their rows, their pinned routes and their tuples.
pub(super) fn present_all(
    context: &Context<'_>,
    agents: &QueryResult,
    routes: &QueryResult,
    tuples: &QueryResult,
) -> Result<Vec<Agent>, Refusal> {
    let agents: Vec<AgentRow> = agents.decode_all().map_err(|error| context.internal(error))?;
    let routes: Vec<RouteRow> = routes.decode_all().map_err(|error| context.internal(error))?;
    let tuples: Vec<TupleRow> = tuples.decode_all().map_err(|error| context.internal(error))?;
    Ok(agents
        .iter()
        .map(|agent| {
            let pinned: Vec<String> =
                routes.iter().filter(|row| row.agent_id == agent.id).map(|row| row.route.clone()).collect();
            let held: Vec<(String, String)> = tuples
                .iter()
                .filter(|row| row.subject == agent.id)
                .map(|row| (row.relation.clone(), row.object.clone()))
                .collect();
            agent.present(context.now_ms(), &pinned, &held)
        })
        .collect())
}
