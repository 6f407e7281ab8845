//! The relation vocabulary: what a relationship tuple can confer, and on what.
//!
//! Relations are the only authority a principal can hold. They are conferred by an
//! administrator's grant, read only through the worker's tuple module, and named
//! here once so the contract, the grant validation and the documentation agree.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The kind of object a relation is held on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ObjectKind {
    /// The node's one organisation, written `org` in a tuple.
    Organization,
    /// A mailbox, written `mbx_…` in a tuple.
    Mailbox,
}

/// The object id every organisation-scoped tuple names.
pub const ORGANIZATION_OBJECT: &str = "org";

macro_rules! relations {
    ($($variant:ident = $name:literal on $kind:ident : $description:literal;)*) => {
        /// A relation a subject can hold on an object.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Relation {
            $(#[doc = $description] $variant,)*
        }

        impl Relation {
            /// Every relation, in declaration order.
            pub const ALL: &'static [Relation] = &[$(Relation::$variant,)*];

            /// The relation's name as it appears in tuples and the API.
            pub fn name(self) -> &'static str {
                match self { $(Relation::$variant => $name,)* }
            }

            /// The kind of object this relation is held on.
            pub fn object_kind(self) -> ObjectKind {
                match self { $(Relation::$variant => ObjectKind::$kind,)* }
            }

            /// What holding this relation lets the holder do, in product words.
            pub fn description(self) -> &'static str {
                match self { $(Relation::$variant => $description,)* }
            }
        }
    };
}

relations! {
    OrgAdmin = "org.admin" on Organization:
        "Administer the node: people, teams, relations, agents, sources, mailboxes and the audit trail.";
    EdiscoveryExport = "ediscovery.export" on Organization:
        "Run eDiscovery exports across mailboxes.";
    MailboxMetadataRead = "mailbox.metadata.read" on Mailbox:
        "See that mail exists in a mailbox: sender, recipients, subject, date and size.";
    MailboxContentRead = "mailbox.content.read" on Mailbox:
        "Read the bodies and attachments of mail in a mailbox.";
    MessageExport = "message.export" on Mailbox:
        "Download the original .eml of mail in a mailbox.";
    SendPropose = "send.propose" on Mailbox:
        "Draft outbound mail from a mailbox and submit it for approval.";
    ApprovalDecide = "approval.decide" on Mailbox:
        "Approve or refuse a send that someone else submitted from a mailbox (dual control).";
}

impl Relation {
    /// The names of the relations held on objects of the kinds `held_on` accepts,
    /// in declaration order, as a list a sentence can carry.
    pub fn names_held_on(held_on: impl Fn(ObjectKind) -> bool) -> String {
        let names: Vec<&str> = Relation::ALL
            .iter()
            .filter(|relation| held_on(relation.object_kind()))
            .map(|relation| relation.name())
            .collect();
        names.join(", ")
    }

    /// Parses a relation from its name; `None` for anything not in the vocabulary.
    pub fn parse(name: &str) -> Option<Relation> {
        Relation::ALL.iter().copied().find(|relation| relation.name() == name)
    }
}

impl Serialize for Relation {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_relation_parses_back_from_its_name() {
        for relation in Relation::ALL {
            assert_eq!(Relation::parse(relation.name()), Some(*relation));
        }
        assert_eq!(Relation::parse("org.root"), None);
    }

    #[test]
    fn relation_names_are_prefixed_by_their_object_kind() {
        for relation in Relation::ALL {
            let expected_prefixes: &[&str] = match relation.object_kind() {
                ObjectKind::Organization => &["org.", "ediscovery."],
                ObjectKind::Mailbox => &["mailbox.", "message.", "send.", "approval."],
            };
            assert!(
                expected_prefixes.iter().any(|prefix| relation.name().starts_with(prefix)),
                "{} is held on {:?} but its name does not say so",
                relation.name(),
                relation.object_kind()
            );
        }
    }
}
