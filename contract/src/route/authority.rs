//! `Authority`: what a caller must hold to be answered by a route, as data, and
//! what is derived from it (whether a machine can ever hold it, the relations it
//! needs on a mailbox, the sentence that describes it). `mailbox_relations_met`
//! is the one statement of what a mailbox authority needs.

use crate::relation::Relation;

use super::parameter::PathParameter;

/// What a caller must hold to be answered by a route, as data. The dispatcher
/// enforces exactly this; capabilities, the mint form and the tests read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Authority {
    /// Anyone, signed in or not; any credential presented is ignored, so the call
    /// acts as a stranger (setup, sign-in, the page).
    Public,
    /// Anyone; a caller who presents a credential is identified by it and answered
    /// as itself, and one who presents none is a stranger (the MCP endpoint).
    Open,
    /// Any signed-in person or agent.
    Member,
    /// A relation held on the organisation.
    Organization(Relation),
    /// Answers every member; the rows are filtered to what the caller may see:
    /// rows on mailboxes where it holds every one of `all_of` and, when `any_of`
    /// is not empty, one of `any_of` (as for `Mailbox`, `all_of` is what a
    /// capability requires). `machine_visible` says whether an agent could ever
    /// see a row: a filter no machine satisfies (decisions that need a second
    /// person) would answer an agent with an empty list for ever, so such a route
    /// is not grantable.
    Filtered { machine_visible: bool, all_of: &'static [Relation], any_of: &'static [Relation] },
    /// The person named by the path parameter, or an administrator.
    SelfOrAdmin { person_parameter: PathParameter },
    /// Relations on the mailbox the path parameter names: every one of `all_of`
    /// and, when `any_of` is not empty, at least one of `any_of`.
    Mailbox { mailbox_parameter: PathParameter, all_of: &'static [Relation], any_of: &'static [Relation] },
    /// The caller's own person-scoped data: a person's own, an agent's sponsor's.
    /// Every member is admitted; what "own" means is the handler's scope, as rows
    /// are a `Filtered` route's.
    Personal,
    /// Objects the caller requested (an export), while it still holds the
    /// relation on the organisation that let it request them. The dispatcher
    /// checks the relation; the object is looked up by its requester and the
    /// caller together, so anyone else's answers as one that does not exist (a
    /// native test drives every such route as a second holder of the relation).
    Requester(Relation),
    /// A reminder source's own credential (`mr_src_…`): the handler touches only
    /// that source's events. No person or agent is admitted, and a source is
    /// admitted nowhere else.
    Source,
    /// The agent the path parameter names: its sponsor, or an administrator
    /// (the owner plane of an agent's messaging). No machine is ever admitted.
    Sponsor { agent_parameter: PathParameter },
}

/// Whether `held`, the relations held on one mailbox, meet a mailbox authority's
/// `all_of` and `any_of`: see [`Authority::met_on_mailbox`].
pub fn mailbox_relations_met(all_of: &[Relation], any_of: &[Relation], held: &[Relation]) -> bool {
    !held.is_empty()
        && all_of.iter().all(|relation| held.contains(relation))
        && (any_of.is_empty() || any_of.iter().any(|relation| held.contains(relation)))
}

impl Authority {
    /// Whether a machine (an agent) can ever be provisioned to satisfy this
    /// authority. Organisation relations are never conferred on agents, and a
    /// route that is a person's own or an administrator's has no agent half.
    pub fn machine_provisionable(&self) -> bool {
        match self {
            Authority::Public
            | Authority::Open
            | Authority::Member
            | Authority::Filtered { machine_visible: true, .. }
            | Authority::Mailbox { .. }
            | Authority::Personal => true,
            Authority::Organization(_)
            | Authority::Requester(_)
            | Authority::SelfOrAdmin { .. }
            | Authority::Source
            | Authority::Sponsor { .. }
            | Authority::Filtered { machine_visible: false, .. } => false,
        }
    }

    /// The relations a caller must hold on a mailbox for this authority to let it
    /// act there, or see rows there: every one of `all_of`. `any_of` contributes
    /// nothing, because a route satisfied by either of two relations cannot say
    /// which one to grant.
    pub fn required_relations(&self) -> &'static [Relation] {
        match self {
            Authority::Mailbox { all_of, .. } | Authority::Filtered { all_of, .. } => all_of,
            _ => &[],
        }
    }

    /// Whether the relations held on one mailbox meet this authority there:
    /// something is held, every one of `all_of`, and one of `any_of` when it
    /// names any. False for every authority that is not a mailbox's. The rule
    /// itself, read by the dispatcher's check, the MCP catalogue and the
    /// mailbox listings' `tools` alike.
    pub fn met_on_mailbox(&self, held: &[Relation]) -> bool {
        match self {
            Authority::Mailbox { all_of, any_of, .. } => mailbox_relations_met(all_of, any_of, held),
            _ => false,
        }
    }

    /// For a route that names no mailbox, the relations that make a mailbox's rows
    /// appear in its answer: (`all_of`, `any_of`).
    pub fn rows_where(&self) -> Option<(&'static [Relation], &'static [Relation])> {
        match self {
            Authority::Filtered { all_of, any_of, .. } => Some((all_of, any_of)),
            _ => None,
        }
    }

    /// The authority in a sentence, for documents a person or a model reads,
    /// naming a path parameter as the path does (`mailboxId`).
    pub fn describe(&self) -> String {
        self.describe_naming(|parameter| parameter.name().to_string())
    }

    /// The authority in a sentence, naming a path parameter by `name`: the MCP
    /// tools name it as their argument (`mailbox_id`), not as the path does.
    pub fn describe_naming(&self, name: impl Fn(PathParameter) -> String) -> String {
        let names =
            |relations: &[Relation]| relations.iter().map(|relation| relation.name()).collect::<Vec<_>>().join(", ");
        match self {
            Authority::Public => "Anyone, signed in or not.".into(),
            Authority::Open => "Anyone; a caller who presents a credential is answered as itself.".into(),
            Authority::Member => "Any signed-in person or agent.".into(),
            Authority::Organization(relation) => {
                format!("Holders of {} on the organisation.", relation.name())
            }
            Authority::Filtered { all_of, any_of, .. } => {
                let mut sentence =
                    "Any signed-in person or agent; the answer holds only mailboxes where the caller holds "
                        .to_string();
                match (all_of.is_empty(), any_of.is_empty()) {
                    (false, true) => sentence.push_str(&format!("all of {}.", names(all_of))),
                    (true, false) => sentence.push_str(&format!("any of {}.", names(any_of))),
                    _ => sentence.push_str(&format!("all of {}, and any of {}.", names(all_of), names(any_of))),
                }
                sentence
            }
            Authority::SelfOrAdmin { person_parameter } => {
                format!("The person named by `{}`, or a holder of org.admin.", name(*person_parameter))
            }
            Authority::Mailbox { mailbox_parameter, all_of, any_of } => {
                let mut sentence = format!("On the mailbox named by `{}`: ", name(*mailbox_parameter));
                match (all_of.is_empty(), any_of.is_empty()) {
                    (false, true) => sentence.push_str(&format!("all of {}.", names(all_of))),
                    (true, false) => sentence.push_str(&format!("any of {}.", names(any_of))),
                    (false, false) => {
                        sentence.push_str(&format!("all of {}, and any of {}.", names(all_of), names(any_of)))
                    }
                    (true, true) => sentence.push_str("nothing more than membership."),
                }
                sentence
            }
            Authority::Personal => "The caller's own person-scoped data (for an agent, its sponsor's).".into(),
            Authority::Requester(relation) => {
                format!("The person who requested it, while they hold {} on the organisation.", relation.name())
            }
            Authority::Source => {
                "A reminder source, with its own `mr_src_` credential; only that source's events.".into()
            }
            Authority::Sponsor { agent_parameter } => {
                format!("The sponsor of the agent named by `{}`, or a holder of org.admin.", name(*agent_parameter))
            }
        }
    }
}
