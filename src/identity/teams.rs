//! Teams: named sets of people. A relation granted to `tm_…#member` is held by
//! every member, so adding or removing a member changes what they hold on their
//! next request.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{CreateTeam, Team, TeamList};

use super::errors::last_administrator;
use super::store::{self, MemberRow, TeamRow, members_of};
use crate::authz::tuples::{self, Losing};
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of, new_id};
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Statement};
use crate::core::time::rfc3339;

/// What can be wrong with a team or a request about one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TeamError {
    /// Empty or over-long team name.
    InvalidName,
    /// Another team has this name.
    NameTaken,
    /// No team has this id.
    NoSuchTeam { id: String },
    /// No person has this id.
    NoSuchPerson { id: String },
    /// Removing this member would leave no enabled administrator.
    LastAdministrator,
}

impl From<TeamError> for Refusal {
    fn from(error: TeamError) -> Refusal {
        match error {
            TeamError::InvalidName => Refusal::new(
                400,
                "invalid_team_name",
                "That team name cannot be used.",
                "A team name must have 1 to 100 characters and not be only spaces.",
                "Send a name such as \"Support\".",
            ),
            TeamError::NameTaken => Refusal::new(
                409,
                "team_name_taken",
                "A team with that name already exists.",
                "Team names are unique on the node.",
                "Choose another name, or use the existing team from GET /api/teams.",
            ),
            TeamError::NoSuchTeam { id } => Refusal::not_found("team", &id),
            TeamError::NoSuchPerson { id } => Refusal::not_found("person", &id),
            TeamError::LastAdministrator => last_administrator(),
        }
    }
}

fn assemble(teams: &QueryResult, members: &QueryResult) -> Result<Vec<Team>, crate::core::storage::StorageError> {
    let members: Vec<MemberRow> = members.decode_all()?;
    let teams: Vec<TeamRow> = teams.decode_all()?;
    Ok(teams
        .into_iter()
        .map(|team| Team {
            members: members
                .iter()
                .filter(|member| member.team_id == team.id)
                .map(|member| member.person_id.clone())
                .collect(),
            id: team.id,
            name: team.name,
            created_at: rfc3339(team.created_at),
        })
        .collect())
}

/// `GET /api/teams`.
pub async fn list_teams(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let [teams, members] = context.read_array([store::every_team(), members_of(None)]).await?;
    let teams = assemble(&teams, &members).map_err(|error| context.internal(error))?;
    Ok(context.json(&TeamList { teams }))
}

fn validate_name(name: &str) -> Result<String, TeamError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 { Err(TeamError::InvalidName) } else { Ok(name.to_string()) }
}

/// `POST /api/teams`.
pub async fn create_team(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let request: CreateTeam = context.body()?;
    crate::core::text::refuse_direction_controls("name", &request.name)?;
    let name = validate_name(&request.name)?;
    let [existing] = context.read_array([store::team_named(&name)]).await?;
    if !existing.rows.is_empty() {
        return Err(TeamError::NameTaken.into());
    }
    let team_id = new_id(IdKind::Team, context.platform());
    context.write(store::insert_team(&team_id, &name, context.now_ms()));
    context.on_constraint_violation("teams.name", TeamError::NameTaken);
    context.audit_object(team_id.clone());
    context.audit_detail(serde_json::json!({ "name": name }));
    Ok(context.json(&Team { id: team_id, name, created_at: rfc3339(context.now_ms()), members: Vec::new() }))
}

/// Reads the team and person a membership route names, refusing unknown ones.
/// Reads the path's team and person, refusing unknown ones, along with `also`
/// (answered in the same round trip).
async fn membership(
    context: &mut Context<'_>,
    also: impl FnOnce(&str, &str) -> Option<Statement>,
) -> Result<(Team, String, Option<QueryResult>), Refusal> {
    let team_id = context.path(PathParameter::TeamId)?.to_string();
    let person_id = context.path(PathParameter::PersonId)?.to_string();
    if !is_id_of(&team_id, IdKind::Team) {
        return Err(TeamError::NoSuchTeam { id: team_id }.into());
    }
    if !is_id_of(&person_id, IdKind::Person) {
        return Err(TeamError::NoSuchPerson { id: person_id }.into());
    }
    let mut statements =
        vec![store::team_by_id(&team_id), store::person_id_if_any(&person_id), members_of(Some(&team_id))];
    statements.extend(also(&team_id, &person_id));
    let mut results = context.read(statements).await?.into_iter();
    let (Some(team), Some(person), Some(members)) = (results.next(), results.next(), results.next()) else {
        return Err(Refusal::internal());
    };
    let team = assemble(&team, &members).map_err(|error| context.internal(error))?.pop();
    let Some(team) = team else {
        return Err(TeamError::NoSuchTeam { id: team_id }.into());
    };
    if person.rows.is_empty() {
        return Err(TeamError::NoSuchPerson { id: person_id }.into());
    }
    context.audit_object(team_id);
    context.audit_detail(serde_json::json!({ "person": person_id }));
    Ok((team, person_id, results.next()))
}

/// `PUT /api/teams/:teamId/members/:personId`.
pub async fn add_member(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (mut team, person_id, _) = membership(context, |_, _| None).await?;
    if !team.members.contains(&person_id) {
        context.write(store::insert_member(&team.id, &person_id, context.now_ms()));
        team.members.push(person_id);
    }
    Ok(context.json(&team))
}

/// `DELETE /api/teams/:teamId/members/:personId`.
pub async fn remove_member(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let (mut team, person_id, remains) = membership(context, |team_id, person_id| {
        Some(tuples::an_administrator_would_remain(Losing {
            membership: Some((team_id, person_id)),
            ..Losing::default()
        }))
    })
    .await?;
    if remains.and_then(|result| result.first_flag("held")) != Some(true) {
        return Err(TeamError::LastAdministrator.into());
    }
    context.write(store::delete_member(&team.id, &person_id));
    context.guard(tuples::a_live_administrator_remains(), TeamError::LastAdministrator);
    team.members.retain(|member| *member != person_id);
    Ok(context.json(&team))
}
