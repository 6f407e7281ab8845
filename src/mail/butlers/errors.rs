//! Why a butler call was refused, and the refusal that says so to the caller.

use mailroom_contract::Relation;

use crate::core::refusal::Refusal;

/// Why a butler call was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ButlerError {
    NoSuchMailbox {
        id: String,
    },
    NoSuchButler {
        id: String,
    },
    NoSuchVersion {
        version: i64,
    },
    NoSuchReceipt {
        id: String,
    },
    /// The sponsor named is not an enabled person.
    NotASponsor {
        id: String,
    },
    AlreadyPublished {
        version: i64,
    },
    /// The sponsor does not hold what the version's effects need.
    SponsorLacks {
        relation: Relation,
    },
    /// The sponsor does not hold what an effect needs on the other mailbox it
    /// reaches, or there is no such mailbox.
    SponsorLacksThere {
        relation: Relation,
        mailbox: String,
    },
}

impl From<ButlerError> for Refusal {
    fn from(error: ButlerError) -> Refusal {
        match error {
            ButlerError::NoSuchMailbox { id } => Refusal::new(
                404,
                "not_found",
                format!("There is no mailbox {id}."),
                "No mailbox has this id.",
                "List mailboxes with GET /api/mailboxes/all and use an id from there.",
            ),
            ButlerError::NoSuchButler { id } => Refusal::new(
                404,
                "not_found",
                format!("There is no butler {id} on this mailbox."),
                "No butler of this mailbox has this id.",
                "List the mailbox's butlers with list_butlers and use an id from there.",
            ),
            ButlerError::NoSuchVersion { version } => Refusal::new(
                404,
                "not_found",
                format!("The butler has no version {version}."),
                "Versions are numbered from 1, one per edit of its rules.",
                "Read the butler with get_butler and name one of its versions.",
            ),
            ButlerError::NoSuchReceipt { id } => Refusal::new(
                404,
                "not_found",
                format!("This mailbox received no message {id}."),
                "A dry run walks a message the butler's own mailbox received.",
                "List the mailbox's messages and name one of them (`rcp_…`).",
            ),
            ButlerError::NotASponsor { id } => Refusal::new(
                400,
                "invalid_body",
                format!("{id} cannot sponsor a butler."),
                "A butler's sponsor is a person of this node, enabled; an agent acts under a person and cannot lend authority itself.",
                "Name an enabled person's id (`usr_…`) in `sponsor`.",
            ),
            ButlerError::AlreadyPublished { version } => Refusal::new(
                409,
                "conflict",
                format!("Version {version} is already published."),
                "A published version stays as published; another edit makes a new draft version.",
                "Change the rules with update_butler, then publish the new version.",
            ),
            ButlerError::SponsorLacks { relation } => Refusal::new(
                409,
                "sponsor_lacks",
                format!("Its sponsor does not hold {} on the mailbox.", relation.name()),
                "A published version pins what its sponsor holds, and an effect runs only with that: this one's would all be skipped.",
                format!(
                    "Ask an administrator to grant the sponsor {} on the mailbox, or choose another sponsor.",
                    relation.name()
                ),
            ),
            ButlerError::SponsorLacksThere { relation, mailbox } => Refusal::new(
                409,
                "sponsor_lacks",
                format!("Its sponsor does not hold {} on mailbox {mailbox}.", relation.name()),
                "A butler files a copy only where its sponsor could read it, and there is no such mailbox or the sponsor cannot.",
                format!(
                    "Ask an administrator to grant the sponsor {} on {mailbox}, or file the copy in a mailbox the sponsor reads.",
                    relation.name()
                ),
            ),
        }
    }
}
