//! Why a signed-in caller may not use a route (`AuthorityError`), and the
//! four-part refusal each case is answered with.

use mailroom_contract::Relation;

use crate::core::refusal::Refusal;

/// Why a signed-in caller may not use a route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthorityError {
    /// The caller holds nothing on the mailbox, which answers as if it did not exist.
    NoSuchMailbox { mailbox_id: String },
    /// The caller holds something on the mailbox, but not these relations.
    MissingMailboxRelations { mailbox_id: String, missing: Vec<Relation>, any: bool },
    /// The route needs this relation on the organisation.
    MissingOrganizationRelation(Relation),
    /// The route is the named person's own, or an administrator's.
    NotSelfOrAdministrator,
    /// The route is an agent's owner plane and the caller neither sponsors the
    /// agent nor administers the node.
    NotSponsorOrAdministrator,
    /// The route acts on a person's own account and the caller is not a person.
    PeopleOnly,
    /// The route is not in the agent's pinned ceiling; for a route no agent is ever
    /// given, why. `connected_app`: the agent is an app a person connected with
    /// OAuth, whose ceiling is what that person allowed at the consent, so the
    /// way to more is to connect it again, not an administrator's minting.
    OutsideCeiling { tool: &'static str, never_offered_because: Option<String>, connected_app: bool },
    /// An agent was to hold what its sponsor does not, at minting or by a later
    /// grant: an agent can never hold more than the person it acts for.
    SponsorLacks { relation: String, object: String },
}

impl From<AuthorityError> for Refusal {
    fn from(error: AuthorityError) -> Refusal {
        match error {
            AuthorityError::MissingOrganizationRelation(relation) => Refusal::new(
                403,
                "missing_relation",
                format!("This needs {} on the organisation.", relation.name()),
                format!("You do not hold {} ({}).", relation.name(), relation.description()),
                format!(
                    "Ask an administrator to grant you {} on org, or ask someone who holds it to do this.",
                    relation.name()
                ),
            ),
            AuthorityError::NotSelfOrAdministrator => Refusal::new(
                403,
                "not_self_or_administrator",
                "Only the person themself or an administrator can do this.",
                "The path names another person and you do not hold org.admin.",
                "Use your own id (see GET /api/me), or ask an administrator.",
            ),
            AuthorityError::NotSponsorOrAdministrator => Refusal::new(
                403,
                "not_sponsor_or_administrator",
                "Only the agent's sponsor or an administrator can do this.",
                "An agent's inbox, policy and pause are its owner's: the person it acts for, or an administrator.",
                "Ask the agent's sponsor or an administrator.",
            ),
            AuthorityError::NoSuchMailbox { mailbox_id } => Refusal::not_found("mailbox", &mailbox_id),
            AuthorityError::MissingMailboxRelations { mailbox_id, missing, any } => {
                let names: Vec<&str> = missing.iter().map(|relation| relation.name()).collect();
                let (needs, grant) = if any {
                    (format!("one of {}", names.join(", ")), format!("one of {}", names.join(", ")))
                } else {
                    (names.join(" and "), names.join(" and "))
                };
                Refusal::new(
                    403,
                    "missing_relation",
                    format!("This needs {needs} on mailbox {mailbox_id}."),
                    format!(
                        "You hold something on this mailbox, but not {needs} ({}).",
                        missing.iter().map(|relation| relation.description()).collect::<Vec<_>>().join(" / ")
                    ),
                    format!(
                        "Ask an administrator to grant you {grant} on {mailbox_id}, or ask someone who holds it to do this."
                    ),
                )
            }
            AuthorityError::OutsideCeiling { tool, never_offered_because: Some(reason), .. } => Refusal::new(
                403,
                "not_for_agents",
                format!("An agent cannot use {tool}."),
                reason,
                "Ask a person to do it; if your work needs it, tell your sponsor what you were trying to do.",
            ),
            AuthorityError::OutsideCeiling { tool, never_offered_because: None, connected_app: false } => Refusal::new(
                403,
                "outside_ceiling",
                format!("This agent was not given {tool}."),
                "An agent can use only the routes pinned to it when it was minted, and nothing widens that ceiling later.",
                "Ask an administrator to mint an agent with the capability that contains this route.",
            ),
            AuthorityError::OutsideCeiling { tool, never_offered_because: None, connected_app: true } => Refusal::new(
                403,
                "outside_ceiling",
                format!("This app was not given {tool}."),
                "An app connected with OAuth can use only the capabilities the person who connected it allowed on \
                 the consent page, and nothing widens that later.",
                "Connect the app again and, on the consent page, allow the capability that contains this route.",
            ),
            AuthorityError::SponsorLacks { relation, object } => Refusal::new(
                403,
                "sponsor_lacks_relation",
                format!("The sponsor does not hold {relation} on {object}."),
                "An agent can never hold more than its sponsor: it acts under the sponsor's authority.",
                "Leave that relation out, choose a sponsor who holds it, or grant it to the sponsor first.",
            ),
            AuthorityError::PeopleOnly => Refusal::new(
                403,
                "people_only",
                "Only a person can do this.",
                "This route acts on a person's own account, and the caller is not a person.",
                "Ask the person to do it themselves, signed in with their own session.",
            ),
        }
    }
}
