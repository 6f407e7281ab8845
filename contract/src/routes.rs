//! The declarations: every route of the node, once.
//!
//! `RouteId` names each route; `declare` says everything about it. The match in
//! `declare` is exhaustive, so a new `RouteId` cannot exist without a declaration,
//! and the worker's dispatcher matches on `RouteId` too, so it cannot exist
//! without a handler.

use crate::api::*;
use crate::relation::Relation;
use crate::route::{Authority, Method, Parameter, Route, Tier};

macro_rules! route_ids {
    ($($variant:ident),* $(,)?) => {
        /// Names one route of the contract.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum RouteId { $($variant,)* }

        impl RouteId {
            /// Every route, in declaration order.
            pub const ALL: &'static [RouteId] = &[$(RouteId::$variant,)*];
        }
    };
}

route_ids! {
    InterfaceShell,
    SetUpNode,
    SignIn,
    RefreshSession,
    SignOut,
    GetMe,
    ChangePassword,
    ListPeople,
    CreatePerson,
    GetPerson,
    DisablePerson,
    EnablePerson,
    ListTeams,
    CreateTeam,
    AddTeamMember,
    RemoveTeamMember,
    ListRelations,
    GrantRelation,
    RevokeRelation,
    ListAuditEntries,
    VerifyAuditChain,
    ListAgentCapabilities,
}

const PERSON_ID: Parameter = Parameter { name: "personId", description: "The person's id (`usr_…`)." };
const TEAM_ID: Parameter = Parameter { name: "teamId", description: "The team's id (`tm_…`)." };

const ADMIN: Authority = Authority::Organization(Relation::OrgAdmin);

/// Why reading the audit trail is not offered to machines.
const AUDIT_IS_AN_ESCALATION_MAP: &str = "the audit trail records who holds what and who acted on what across the whole node: a map of how to escalate, not a question an agent's work depends on";

/// The full declaration of one route.
pub fn declare(id: RouteId) -> Route {
    use Method::*;
    use RouteId as R;
    match id {
        R::InterfaceShell => Route::new(id, Get, "/", "interface_shell")
            .summary("The browser interface")
            .description("Serves the single-page browser interface: sign-in, people, teams, relations and the audit trail.")
            .html()
            .exception(Tier::Operator, "the interface shell is a page for a person's browser, not a question anyone would ask a node")
            .authority(Authority::Public),

        R::SetUpNode => Route::new(id, Post, "/api/setup", "set_up_node")
            .summary("Create the first administrator")
            .description("Creates the node's first administrator from the SETUP_TOKEN secret. Works exactly once: after an administrator exists it refuses, whatever the token.")
            .request::<SetUpNode>()
            .response::<NodeSetUp>()
            .created()
            .tier(Tier::Operator)
            .authority(Authority::Public),

        R::SignIn => Route::new(id, Post, "/api/sessions", "sign_in")
            .summary("Sign in with a password")
            .description("Signs a person in with email and password and starts a session: a 15-minute access token and a rotating refresh token. Repeated failures for one account or from one address are refused for a while.")
            .request::<SignIn>()
            .response::<SignedIn>()
            .created()
            .tier(Tier::Operator)
            .authority(Authority::Public),

        R::RefreshSession => Route::new(id, Post, "/api/sessions/refresh", "refresh_session")
            .summary("Refresh a session")
            .description("Exchanges a refresh token for a new access token and a new refresh token. The old refresh token stops working; presenting a retired one again ends the session, because only a stolen copy would be presented twice.")
            .request::<RefreshSession>()
            .response::<SessionTokens>()
            .tier(Tier::Operator)
            .authority(Authority::Public),

        R::SignOut => Route::new(id, Delete, "/api/sessions/current", "sign_out")
            .summary("Sign out")
            .description("Ends the caller's session: its refresh token and its access token stop working on the next request.")
            .response::<SignedOut>()
            .tier(Tier::Operator)
            .authority(Authority::Member),

        R::GetMe => Route::new(id, Get, "/api/me", "get_me")
            .summary("Who am I")
            .description("Returns the caller: id, kind, name, whether they administer the node, and their teams.")
            .response::<Me>()
            .authority(Authority::Member),

        R::ChangePassword => Route::new(id, Post, "/api/me/password", "change_password")
            .summary("Change my password")
            .description("Changes the signed-in person's password, given the current one. Every other session of theirs is signed out.")
            .request::<ChangePassword>()
            .response::<PasswordChanged>()
            .tier(Tier::Operator)
            .authority(Authority::Personal),

        R::ListPeople => Route::new(id, Get, "/api/people", "list_people")
            .summary("List people")
            .description("Lists every person on the node, disabled ones included.")
            .response::<PersonList>()
            .authority(ADMIN),

        R::CreatePerson => Route::new(id, Post, "/api/people", "create_person")
            .summary("Create a person")
            .description("Creates a person who can sign in with the given email and first password. They hold nothing until an administrator grants a relation.")
            .request::<CreatePerson>()
            .response::<Person>()
            .created()
            .tier(Tier::Operator)
            .authority(ADMIN),

        R::GetPerson => Route::new(id, Get, "/api/people/:personId", "get_person")
            .summary("Show a person")
            .description("Returns one person. A person may read their own record; an administrator may read anyone's.")
            .path_parameters(&[PERSON_ID])
            .response::<Person>()
            .authority(Authority::SelfOrAdmin { person_parameter: "personId" }),

        R::DisablePerson => Route::new(id, Post, "/api/people/:personId/disable", "disable_person")
            .summary("Disable a person")
            .description("Stops a person from signing in and ends every session of theirs at once. Their relations stay, inert, until they are enabled again.")
            .path_parameters(&[PERSON_ID])
            .response::<Person>()
            .tier(Tier::Operator)
            .authority(ADMIN),

        R::EnablePerson => Route::new(id, Post, "/api/people/:personId/enable", "enable_person")
            .summary("Enable a person")
            .description("Lets a disabled person sign in again.")
            .path_parameters(&[PERSON_ID])
            .response::<Person>()
            .tier(Tier::Operator)
            .authority(ADMIN),

        R::ListTeams => Route::new(id, Get, "/api/teams", "list_teams")
            .summary("List teams")
            .description("Lists every team with its members.")
            .response::<TeamList>()
            .authority(ADMIN),

        R::CreateTeam => Route::new(id, Post, "/api/teams", "create_team")
            .summary("Create a team")
            .description("Creates an empty team. A relation granted to `tm_…#member` is held by every member of the team.")
            .request::<CreateTeam>()
            .response::<Team>()
            .created()
            .tier(Tier::Operator)
            .authority(ADMIN),

        R::AddTeamMember => Route::new(id, Put, "/api/teams/:teamId/members/:personId", "add_team_member")
            .summary("Add a person to a team")
            .description("Makes a person a member of a team, so they hold every relation granted to the team. Adding a member twice changes nothing.")
            .path_parameters(&[TEAM_ID, PERSON_ID])
            .response::<Team>()
            .tier(Tier::Operator)
            .authority(ADMIN),

        R::RemoveTeamMember => Route::new(id, Delete, "/api/teams/:teamId/members/:personId", "remove_team_member")
            .summary("Remove a person from a team")
            .description("Removes a person from a team; relations they held only through the team stop applying on their next request.")
            .path_parameters(&[TEAM_ID, PERSON_ID])
            .response::<Team>()
            .tier(Tier::Operator)
            .authority(ADMIN),

        R::ListRelations => Route::new(id, Get, "/api/relations", "list_relations")
            .summary("List relationship tuples")
            .description("Lists relationship tuples, optionally only those of one subject or on one object.")
            .query_parameters(&[
                Parameter { name: "subject", description: "Only tuples held by this subject (`usr_…`, `agt_…` or `tm_…#member`)." },
                Parameter { name: "object", description: "Only tuples on this object (`org` or `mbx_…`)." },
            ])
            .response::<RelationList>()
            .authority(ADMIN),

        R::GrantRelation => Route::new(id, Post, "/api/relations", "grant_relation")
            .summary("Grant a relation")
            .description("Grants a relation to a person, an agent or a team's members. Granting one that is already held changes nothing.")
            .request::<RelationChange>()
            .response::<RelationTuple>()
            .created()
            .tier(Tier::Operator)
            .authority(ADMIN),

        R::RevokeRelation => Route::new(id, Post, "/api/relations/revoke", "revoke_relation")
            .summary("Revoke a relation")
            .description("Revokes a relation. It stops applying on the holder's next request, and on the next request of every agent the holder sponsors. The node refuses to revoke the last administrator.")
            .request::<RelationChange>()
            .response::<RelationTuple>()
            .tier(Tier::Operator)
            .authority(ADMIN),

        R::ListAuditEntries => Route::new(id, Get, "/api/audit", "list_audit_entries")
            .summary("Read the audit trail")
            .description("Lists audit entries newest first: who acted (and, for an agent, under whose authority), through which route, on what, and with what outcome.")
            .query_parameters(&[
                Parameter { name: "limit", description: "How many entries to return: 1 to 200, default 50." },
                Parameter { name: "cursor", description: "The `next_cursor` of the previous page, to continue with older entries." },
            ])
            .response::<AuditPage>()
            .exception(Tier::Operator, AUDIT_IS_AN_ESCALATION_MAP)
            .authority(ADMIN),

        R::VerifyAuditChain => Route::new(id, Get, "/api/audit/verify", "verify_audit_chain")
            .summary("Verify the audit chain")
            .description("Recomputes the hash chain from the start (or from `after_seq`) for up to 5,000 entries and names the first entry that does not verify. Continue with `next_after_seq` until it is absent.")
            .query_parameters(&[Parameter {
                name: "after_seq",
                description: "Start after this entry, trusting its stored hash; use the previous answer's `next_after_seq`. Default: verify from the first entry.",
            }])
            .response::<AuditVerification>()
            .exception(Tier::Operator, AUDIT_IS_AN_ESCALATION_MAP)
            .authority(ADMIN),

        R::ListAgentCapabilities => Route::new(id, Get, "/api/agent-capabilities", "list_agent_capabilities")
            .summary("The capability vocabulary")
            .description("Lists the capabilities an administrator can mint an agent with: what each lets an agent do, the routes it grants, what it requires on a mailbox, and whether it reaches message content.")
            .response::<CapabilityVocabulary>()
            .exception(Tier::Operator, "the vocabulary is a map of what an agent could be given: it serves the person minting one, not the agent")
            .authority(Authority::Member),
    }
}
