//! Identity: the node's setup, sessions and passwords, people, teams and the relations
//! they hold.

use crate::api::{
    ChangePassword, CreatePerson, CreateTeam, Me, NodeSetUp, PasswordChanged, PasswordReset, Person, PersonList,
    RefreshSession, RelationChange, RelationList, RelationTuple, ResetPassword, SessionTokens, SetUpNode, SignIn,
    SignedIn, SignedOut, Team, TeamList,
};
use crate::route::Method::{Delete, Get, Post, Put};
use crate::route::{Authority, Parameter, PathParameter, Refuses, Route, Tier};
use crate::route_id::RouteId;

use super::shared::ADMIN;

pub(super) fn set_up_node() -> Route {
    Route::new(RouteId::SetUpNode, Post, "/api/setup", "set_up_node")
        .summary("Create the first administrator")
        .description("Creates the node's first administrator from the SETUP_TOKEN secret. Works exactly once: after an administrator exists it refuses, whatever the token.")
        .request::<SetUpNode>()
        .response::<NodeSetUp>()
        .created()
        .tier(Tier::Operator)
        .withheld_because("it creates the first administrator, once, from a secret only the person deploying the node holds")
        .refuses(const { &[
            Refuses::Forbidden("The node has no SETUP_TOKEN secret, or `setup_token` is not it."),
            Refuses::Conflict("The node is already set up: an administrator exists."),
        ] })
        .authority(Authority::Public)
}

pub(super) fn sign_in() -> Route {
    Route::new(RouteId::SignIn, Post, "/api/sessions", "sign_in")
        .summary("Sign in with a password")
        .description("Signs a person in with email and password and starts a session: a 15-minute access token and a rotating refresh token. Repeated failures for one account or from one address are refused for a while.")
        .request::<SignIn>()
        .response::<SignedIn>()
        .created()
        .tier(Tier::Operator)
        .withheld_because("it signs a person in with their password; an agent has a credential of its own and no password")
        .refuses(const { &[
            Refuses::WrongSecret("The email and password do not match a person who may sign in."),
            Refuses::TooManyAttempts("Too many wrong passwords for this account, or from this address, within the window."),
        ] })
        .authority(Authority::Public)
}

pub(super) fn refresh_session() -> Route {
    Route::new(RouteId::RefreshSession, Post, "/api/sessions/refresh", "refresh_session")
        .summary("Refresh a session")
        .description("Exchanges a refresh token for a new access token and a new refresh token. The old refresh token stops working; presenting a retired one again ends the session, because only a stolen copy would be presented twice.")
        .request::<RefreshSession>()
        .response::<SessionTokens>()
        .tier(Tier::Operator)
        .withheld_because("it renews a person's session; an agent's credential has no session to renew")
        .refuses(const { &[
            Refuses::WrongSecret("The refresh token is not one the node issued or its session has ended; or it was already used, which ends the session, because only a stolen copy is presented twice."),
            Refuses::Conflict("Another refresh with the same token won a race; use the tokens that one answered."),
        ] })
        .authority(Authority::Public)
}

pub(super) fn sign_out() -> Route {
    Route::new(RouteId::SignOut, Delete, "/api/sessions/current", "sign_out")
        .summary("Sign out")
        .description(
            "Ends the caller's session: its refresh token and its access token stop working on the next request.",
        )
        .response::<SignedOut>()
        .tier(Tier::Operator)
        .authority(Authority::Member)
}

pub(super) fn get_me() -> Route {
    Route::new(RouteId::GetMe, Get, "/api/me", "get_me")
        .summary("Who am I")
        .description("Returns the caller: id, kind, name, whether they administer the node, and their teams.")
        .response::<Me>()
        .authority(Authority::Member)
}

pub(super) fn change_password() -> Route {
    Route::new(RouteId::ChangePassword, Post, "/api/me/password", "change_password")
        .summary("Change my password")
        .description("Changes the signed-in person's password, given the current one. Every other session of theirs is signed out.")
        .request::<ChangePassword>()
        .response::<PasswordChanged>()
        .tier(Tier::Operator)
        .refuses(const { &[
            Refuses::Forbidden("`current_password` is not the person's password."),
            Refuses::TooManyAttempts("Too many wrong current passwords for this account within the window."),
        ] })
        .authority(Authority::Personal)
}

pub(super) fn list_people() -> Route {
    Route::new(RouteId::ListPeople, Get, "/api/people", "list_people")
        .summary("List people")
        .description("Lists every person on the node, disabled ones included.")
        .response::<PersonList>()
        .authority(ADMIN)
}

pub(super) fn create_person() -> Route {
    Route::new(RouteId::CreatePerson, Post, "/api/people", "create_person")
        .summary("Create a person")
        .description("Creates a person who can sign in with the given email and first password. They hold nothing until an administrator grants a relation.")
        .request::<CreatePerson>()
        .response::<Person>()
        .created()
        .tier(Tier::Operator)
        .refuses(const { &[
            Refuses::Conflict("A person already has that email."),
        ] })
        .authority(ADMIN)
}

pub(super) fn get_person() -> Route {
    Route::new(RouteId::GetPerson, Get, "/api/people/:personId", "get_person")
        .summary("Show a person")
        .description("Returns one person. A person may read their own record; an administrator may read anyone's.")
        .path_parameters(&[PathParameter::PersonId])
        .response::<Person>()
        .authority(Authority::SelfOrAdmin { person_parameter: PathParameter::PersonId })
}

pub(super) fn disable_person() -> Route {
    Route::new(RouteId::DisablePerson, Post, "/api/people/:personId/disable", "disable_person")
        .summary("Disable a person")
        .description("Stops a person from signing in and ends every session of theirs at once. Their relations stay, inert, until they are enabled again.")
        .path_parameters(&[PathParameter::PersonId])
        .response::<Person>()
        .tier(Tier::Operator)
        .refuses(const { &[
            Refuses::Conflict("A person cannot disable themselves, and the last live administrator cannot be disabled."),
        ] })
        .authority(ADMIN)
}

pub(super) fn enable_person() -> Route {
    Route::new(RouteId::EnablePerson, Post, "/api/people/:personId/enable", "enable_person")
        .summary("Enable a person")
        .description("Lets a disabled person sign in again.")
        .path_parameters(&[PathParameter::PersonId])
        .response::<Person>()
        .tier(Tier::Operator)
        .authority(ADMIN)
}

pub(super) fn reset_password() -> Route {
    Route::new(RouteId::ResetPassword, Post, "/api/people/:personId/password", "reset_password")
        .summary("Set a new password for a person")
        .description("Sets a new password for a person who has lost theirs, or whose sign-ins are being slowed by guesses from elsewhere. Every session of theirs ends at once, and the guesses counted against their account are forgotten. Tell them the new password by another channel; they can change it at POST /api/me/password.")
        .path_parameters(&[PathParameter::PersonId])
        .request::<ResetPassword>()
        .response::<PasswordReset>()
        .tier(Tier::Operator)
        .authority(ADMIN)
}

pub(super) fn list_teams() -> Route {
    Route::new(RouteId::ListTeams, Get, "/api/teams", "list_teams")
        .summary("List teams")
        .description("Lists every team with its members.")
        .response::<TeamList>()
        .authority(ADMIN)
}

pub(super) fn create_team() -> Route {
    Route::new(RouteId::CreateTeam, Post, "/api/teams", "create_team")
        .summary("Create a team")
        .description("Creates an empty team. A relation granted to `tm_…#member` is held by every member of the team.")
        .request::<CreateTeam>()
        .response::<Team>()
        .created()
        .tier(Tier::Operator)
        .refuses(const { &[Refuses::Conflict("A team already has that name.")] })
        .authority(ADMIN)
}

pub(super) fn add_team_member() -> Route {
    Route::new(RouteId::AddTeamMember, Put, "/api/teams/:teamId/members/:personId", "add_team_member")
        .summary("Add a person to a team")
        .description("Makes a person a member of a team, so they hold every relation granted to the team. Adding a member twice changes nothing.")
        .path_parameters(&[PathParameter::TeamId, PathParameter::PersonId])
        .response::<Team>()
        .tier(Tier::Operator)
        .authority(ADMIN)
}

pub(super) fn remove_team_member() -> Route {
    Route::new(RouteId::RemoveTeamMember, Delete, "/api/teams/:teamId/members/:personId", "remove_team_member")
        .summary("Remove a person from a team")
        .description("Removes a person from a team; relations they held only through the team stop applying on their next request.")
        .path_parameters(&[PathParameter::TeamId, PathParameter::PersonId])
        .response::<Team>()
        .tier(Tier::Operator)
        .refuses(const { &[
            Refuses::Conflict("Removing the person would leave no live administrator."),
        ] })
        .authority(ADMIN)
}

pub(super) fn list_relations() -> Route {
    Route::new(RouteId::ListRelations, Get, "/api/relations", "list_relations")
        .summary("List relationship tuples")
        .description("Lists relationship tuples, optionally only those of one subject or on one object.")
        .query_parameters(
            const {
                &[
                    Parameter::text("subject", "Only tuples held by this subject (`usr_…`, `agt_…` or `tm_…#member`)."),
                    Parameter::text("object", "Only tuples on this object (`org` or `mbx_…`)."),
                ]
            },
        )
        .response::<RelationList>()
        .authority(ADMIN)
}

pub(super) fn grant_relation() -> Route {
    Route::new(RouteId::GrantRelation, Post, "/api/relations", "grant_relation")
        .summary("Grant a relation")
        .description("Grants a relation to a person, an agent or a team's members. Granting one that is already held changes nothing.")
        .request::<RelationChange>()
        .response::<RelationTuple>()
        .created()
        .tier(Tier::Operator)
        .refuses(const { &[
            Refuses::Forbidden("An agent cannot hold a relation its sponsor does not hold on that object."),
            Refuses::NotFound("The subject or the object does not exist."),
        ] })
        .authority(ADMIN)
}

pub(super) fn revoke_relation() -> Route {
    Route::new(RouteId::RevokeRelation, Post, "/api/relations/revoke", "revoke_relation")
        .summary("Revoke a relation")
        .description("Revokes a relation. It stops applying on the holder's next request, and on the next request of every agent the holder sponsors. The node refuses to revoke the last administrator.")
        .request::<RelationChange>()
        .response::<RelationTuple>()
        .tier(Tier::Operator)
        .refuses(const { &[
            Refuses::NotFound("The subject does not hold that relation on that object."),
            Refuses::Conflict("Revoking it would leave no live administrator."),
        ] })
        .authority(ADMIN)
}
