//! What the declarations of more than one domain share: paging parameters, the
//! authorities they name most, and the reasons they give alike.

use crate::relation::Relation;
use crate::route::{Authority, Parameter, PathParameter};

/// A page of up to 100 of a list's items, 50 by default.
pub(super) const LIMIT: Parameter = Parameter::page_size("", 50, 100);

/// The cursor of a paged list: where the previous page ended.
pub(super) const CURSOR: Parameter = Parameter::text(
    "cursor",
    "The `next_cursor` of the previous page, unchanged, to continue where that page ended. Leave it out for the first page.",
);

/// An administrator of the node.
pub(super) const ADMIN: Authority = Authority::Organization(Relation::OrgAdmin);

/// Relations on the path's mailbox: every one of `all_of`.
pub(super) const fn on_mailbox(all_of: &'static [Relation]) -> Authority {
    Authority::Mailbox { mailbox_parameter: PathParameter::MailboxId, all_of, any_of: &[] }
}

/// Relations on the path's mailbox: at least one of `any_of`.
pub(super) const fn on_mailbox_any(any_of: &'static [Relation]) -> Authority {
    Authority::Mailbox { mailbox_parameter: PathParameter::MailboxId, all_of: &[], any_of }
}

/// The agent the path names: its sponsor, or an administrator.
pub(super) const SPONSOR: Authority = Authority::Sponsor { agent_parameter: PathParameter::AgentId };

/// Why the list of agents and their ceilings is not offered to machines.
pub(super) const AGENTS_ARE_AN_ESCALATION_MAP: &str = "agents and their ceilings are a map of which credential can do what: it serves the administrator who mints and revokes them";
