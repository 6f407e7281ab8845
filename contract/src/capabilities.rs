//! Capabilities: the product's words for what an agent may be given, each a set
//! of grantable routes.
//!
//! An administrator mints an agent by choosing capabilities; the choice is
//! expanded to routes and the routes are pinned. A capability's requirements (the
//! relations the agent and its sponsor must hold on a mailbox) are not written
//! here: they are derived from its routes' authorities, so a capability can never
//! promise less than its routes check. Every grantable route belongs to exactly
//! one capability, and every route in a capability is grantable; the tests below
//! enforce both against the registry.

use std::collections::BTreeSet;

use crate::api::{CapabilityRoute, CapabilityVocabulary, PublishedCapability, PublishedRelation};
use crate::registry::Registry;
use crate::relation::Relation;
use crate::route_id::RouteId;

/// One capability, in the product's words.
#[derive(Clone, Copy, Debug)]
pub struct Capability {
    /// The name an administrator chooses, such as `mail.read`.
    pub name: &'static str,
    /// One line for a list.
    pub summary: &'static str,
    /// What an agent holding it can do, and what it cannot.
    pub description: &'static str,
    /// The routes it grants.
    pub routes: &'static [RouteId],
}

/// The vocabulary.
pub const CAPABILITIES: &[Capability] = &[
    Capability {
        name: "identity.read",
        summary: "Know who it is",
        description: "Read its own identity: its id, its name, and for an agent the person whose authority it acts under.",
        routes: &[RouteId::GetMe],
    },
    Capability {
        name: "mail.triage",
        summary: "See what mail exists",
        description: "List the mailboxes it can read and their messages: senders, recipients, subjects, dates, sizes and attachment names. Never bodies.",
        routes: &[RouteId::ListReadableMailboxes, RouteId::ListMessages, RouteId::GetMessage],
    },
    Capability {
        name: "mail.read",
        summary: "Read mail",
        description: "Read messages' text and attachments, follow conversations with their messages in order, and search bodies as well as headers. Every read is recorded in the audit chain.",
        routes: &[
            RouteId::GetMessageBody,
            RouteId::GetAttachment,
            RouteId::SearchMessages,
            RouteId::ListThreads,
            RouteId::GetThread,
        ],
    },
    Capability {
        name: "mail.manage",
        summary: "Work conversations",
        description: "Set a conversation's status (open, waiting, closed) and who it is assigned to, in the mailboxes it may send from, and mark conversations read or unread for itself. Never reads bodies.",
        routes: &[RouteId::UpdateThread, RouteId::MarkThreadRead, RouteId::MarkThreadUnread],
    },
    Capability {
        name: "mail.notes",
        summary: "Read and write internal notes",
        description: "Read the internal notes a mailbox's people write in its conversations, write notes of its own (an @handle tells that teammate in their notifications) and delete its own, in the mailboxes whose mail it reads and sends from. Notes are the team's words, never sent; without this capability an agent never sees them.",
        routes: &[RouteId::ListNotes, RouteId::AddNote, RouteId::DeleteNote],
    },
    Capability {
        name: "mail.export",
        summary: "Download original messages",
        description: "Download received messages exactly as they arrived (.eml), every header and part included.",
        routes: &[RouteId::GetMessageOriginal],
    },
    Capability {
        name: "mail.draft",
        summary: "Draft and submit mail",
        description: "Find the mailboxes it can send from, draft new mail and replies, edit and delete its drafts, submit them for a person's approval or take a submission back, write a refused one again, attach files, follow what became of them, send again what the mail service failed to deliver, and read the mailbox's saved replies and signature to write with. It can never approve: a second person always decides.",
        routes: &[
            RouteId::ListMailboxes,
            RouteId::ListSends,
            RouteId::GetSend,
            RouteId::CreateDraft,
            RouteId::UpdateDraft,
            RouteId::DeleteDraft,
            RouteId::SubmitSend,
            RouteId::CancelSend,
            RouteId::RedraftSend,
            RouteId::AddSendAttachment,
            RouteId::RemoveSendAttachment,
            RouteId::GetSendAttachment,
            RouteId::RetrySend,
            RouteId::ListSavedReplies,
            RouteId::GetMailboxSignature,
        ],
    },
    Capability {
        name: "reminders.read",
        summary: "See its person's reminders",
        description: "List and read the reminders in its sponsor's inbox, from every source, and their profile (time zone, quiet hours, channels). Only its sponsor's, never anyone else's.",
        routes: &[RouteId::ListEvents, RouteId::GetEvent, RouteId::GetProfile],
    },
    Capability {
        name: "reminders.manage",
        summary: "Manage its person's reminders",
        description: "Add reminders to its sponsor's inbox, change and delete the manual ones (its own and those the person added by hand), mark any reminder done or acknowledged, reopen one closed by hand, and change the time zone, quiet hours and email channel. It cannot change or withdraw another source's reminder, nor set where notifications go.",
        routes: &[
            RouteId::CreateEvent,
            RouteId::UpdateEvent,
            RouteId::DeleteEvent,
            RouteId::MarkDone,
            RouteId::ReopenEvent,
            RouteId::MarkAck,
            RouteId::UpdateProfile,
        ],
    },
    Capability {
        name: "notifications.read",
        summary: "See its person's notifications",
        description: "Read its sponsor's notifications feed: approvals waiting, sends refused, sent or failed, conversations assigned, reminders due. Mail notifications only in mailboxes it and its sponsor both hold a relation on; the sponsor's own (reminders due, with their titles) always.",
        routes: &[RouteId::ListNotifications],
    },
    Capability {
        name: "notifications.manage",
        summary: "Mark its person's notifications read",
        description: "Mark notifications in its sponsor's feed read or unread again: they are marked for the sponsor, as if they had read them.",
        routes: &[RouteId::MarkNotificationsRead, RouteId::MarkNotificationUnread],
    },
    Capability {
        name: "agent.messaging",
        summary: "Exchange messages with agents",
        description: "Send requests and events to agents on the node, and work its own durable inbox: claim messages as fenced leases, acknowledge, renew, reply and reject, follow its conversations and cancel them, and have the messages it sent pushed to an endpoint as they move. Delivery is at least once. Only when the node runs agent messaging.",
        routes: &[
            RouteId::SendAgentMessage,
            RouteId::ListSentAgentMessages,
            RouteId::GetAgentMessage,
            RouteId::ListAgentInbox,
            RouteId::ClaimAgentMessages,
            RouteId::AckAgentMessage,
            RouteId::RenewAgentLease,
            RouteId::ReplyToAgentMessage,
            RouteId::RejectAgentMessage,
            RouteId::ListAgentConversations,
            RouteId::GetAgentConversation,
            RouteId::CancelAgentConversation,
            RouteId::CreatePushConfig,
            RouteId::ListPushConfigs,
            RouteId::RemovePushConfig,
        ],
    },
];

impl Capability {
    /// The relations this capability needs on a mailbox: the union of its routes'
    /// `all_of`.
    pub fn requirements(&self, registry: &Registry) -> Vec<Relation> {
        let required: BTreeSet<Relation> = self
            .routes
            .iter()
            .flat_map(|id| registry.route(*id).authority.required_relations().iter().copied())
            .collect();
        required.into_iter().collect()
    }

    /// Whether any of its routes reaches message content.
    pub fn reaches_content(&self, registry: &Registry) -> bool {
        self.routes.iter().any(|id| registry.route(*id).reaches_content)
    }
}

/// The capability a route belongs to, if any.
pub fn capability_of(route: RouteId) -> Option<&'static Capability> {
    CAPABILITIES.iter().find(|capability| capability.routes.contains(&route))
}

/// The vocabulary as `GET /api/agent-capabilities` publishes it.
pub fn vocabulary(registry: &Registry) -> CapabilityVocabulary {
    CapabilityVocabulary {
        capabilities: CAPABILITIES
            .iter()
            .map(|capability| PublishedCapability {
                name: capability.name.to_string(),
                summary: capability.summary.to_string(),
                description: capability.description.to_string(),
                requires: capability
                    .requirements(registry)
                    .iter()
                    .map(|relation| relation.name().to_string())
                    .collect(),
                reaches_content: capability.reaches_content(registry),
                routes: capability
                    .routes
                    .iter()
                    .map(|id| {
                        let route = registry.route(*id);
                        CapabilityRoute {
                            tool: route.tool.to_string(),
                            method: route.method.as_str().to_string(),
                            path: route.path.to_string(),
                            summary: route.summary.to_string(),
                            reaches_content: route.reaches_content,
                        }
                    })
                    .collect(),
            })
            .collect(),
        relations: Relation::ALL
            .iter()
            .map(|relation| PublishedRelation {
                name: relation.name().to_string(),
                on: relation.object_kind(),
                description: relation.description().to_string(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::registry;

    #[test]
    fn every_grantable_route_is_in_exactly_one_capability() {
        let registry = registry();
        for route in registry.routes() {
            let homes: Vec<&str> = CAPABILITIES
                .iter()
                .filter(|capability| capability.routes.contains(&route.id))
                .map(|capability| capability.name)
                .collect();
            if registry.is_grantable(route.id) {
                assert_eq!(
                    homes.len(),
                    1,
                    "{} {} is grantable, so it belongs in exactly one capability; it is in {homes:?}. \
                     Decide which capability an administrator would choose to give an agent this, and add it there.",
                    route.method.as_str(),
                    route.path
                );
            } else {
                assert!(
                    homes.is_empty(),
                    "{} {} is not grantable (tier or authority) but capability {homes:?} offers it: \
                     an agent minted with it would be refused on its own promise.",
                    route.method.as_str(),
                    route.path
                );
            }
        }
    }

    #[test]
    fn what_is_offered_and_what_is_not_grantable_are_disjoint() {
        let registry = registry();
        let offered: BTreeSet<RouteId> =
            CAPABILITIES.iter().flat_map(|capability| capability.routes.iter().copied()).collect();
        let withheld: BTreeSet<RouteId> =
            registry.routes().iter().map(|route| route.id).filter(|id| !registry.is_grantable(*id)).collect();
        assert!(offered.is_disjoint(&withheld), "offered and withheld overlap: {:?}", offered.intersection(&withheld));
        let grantable: BTreeSet<RouteId> = registry.grantable_routes().map(|route| route.id).collect();
        assert_eq!(offered, grantable, "every grantable route is offered through a capability, and nothing else is");
    }

    #[test]
    fn capability_names_are_unique_and_in_product_words() {
        let mut names = BTreeSet::new();
        for capability in CAPABILITIES {
            assert!(names.insert(capability.name), "{} is declared twice", capability.name);
            let (noun, verb) = capability.name.split_once('.').expect("capabilities are noun.verb");
            assert!(!noun.is_empty() && !verb.is_empty());
            assert!(!capability.routes.is_empty(), "{} grants nothing", capability.name);
            assert!(!capability.summary.is_empty() && !capability.description.is_empty());
        }
    }

    #[test]
    fn the_published_vocabulary_names_every_relation_and_requires_only_mailbox_relations() {
        let published = vocabulary(registry());
        let names: Vec<&str> = published.relations.iter().map(|relation| relation.name.as_str()).collect();
        let declared: Vec<&str> = Relation::ALL.iter().map(|relation| relation.name()).collect();
        assert_eq!(names, declared, "the vocabulary publishes every relation once, in declaration order");
        for capability in &published.capabilities {
            for required in &capability.requires {
                let relation = published.relations.iter().find(|relation| &relation.name == required);
                assert_eq!(
                    relation.map(|relation| relation.on),
                    Some(crate::relation::ObjectKind::Mailbox),
                    "{} requires {required}, which the published relations must list as held on a mailbox",
                    capability.name
                );
            }
        }
    }

    #[test]
    fn requirements_are_derived_from_all_of_and_never_from_any_of() {
        use crate::route::{Authority, Method, Route};
        let mut content = Route::new(RouteId::GetMe, Method::Get, "/a/:mailboxId", "a");
        content.authority = Authority::Mailbox {
            mailbox_parameter: crate::route::PathParameter::MailboxId,
            all_of: &[Relation::MailboxContentRead, Relation::MessageExport],
            any_of: &[Relation::SendPropose],
        };
        assert_eq!(content.authority.required_relations(), &[Relation::MailboxContentRead, Relation::MessageExport]);
        let mut either = content;
        either.authority = Authority::Mailbox {
            mailbox_parameter: crate::route::PathParameter::MailboxId,
            all_of: &[],
            any_of: &[Relation::MailboxMetadataRead, Relation::MailboxContentRead],
        };
        assert!(either.authority.required_relations().is_empty());
    }

    #[test]
    fn a_capabilitys_routes_share_one_feature() {
        for capability in CAPABILITIES {
            let features: BTreeSet<_> =
                capability.routes.iter().map(|id| format!("{:?}", registry().route(*id).feature)).collect();
            assert_eq!(features.len(), 1, "{} mixes routes of different features: {features:?}", capability.name);
        }
    }
}
