//! Where a mailbox's mail is read (decision 0040): in D1 until its move into
//! the mailbox's own database is verified, and from then on in that database
//! (`mailboxes.mail_moved_at`, set in the batch that records the verification).
//!
//! A route reads a mailbox's mail through `read`, in one round trip's time:
//! D1 is asked, with the route's pending checks, where the mail is, any
//! statements the route wants from the directory, and the mail statements
//! (the whole read while a mailbox's mail is in D1, as before mail could
//! move); at the same time the mailbox's own database is asked the mail
//! statements, only if it was ever created, so a read asked before the
//! checks pass makes no database for an id of the caller's choosing. Both
//! answers are handed over only once the checks have passed, and D1's word
//! on where the mail is picks one. Kept to one round trip so that a route
//! that records its read in the audit chain stays within two. What D1 still
//! holds of a moved mailbox's mail is read by nothing.
//!
//! A route that changes a mailbox's mail writes it through `write`, where its
//! read found the mail: in a mailbox's own database the change commits with
//! the call's entry in the mailbox's segment of the chain; what follows in D1
//! goes through `write_after`, and what is recorded after the answer (a
//! dispatch's outcome) through `defer_write`. Conversations, sends, the
//! approval queue and deleting mail follow; delivery does not yet (it goes to
//! D1 whatever this says, and D1 keeps a copy of every receipt, which a
//! search across mailboxes and an export still read), so no job moves a
//! mailbox's mail until it does (the move is scheduled by nothing; decision
//! 0040 orders what comes next).

use crate::core::context::Context;
use crate::core::refusal::Refusal;
use crate::core::storage::{QueryResult, Statement};
use crate::mail::store::mailboxes as store;

/// Which database holds a mailbox's mail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MailStore {
    /// The organisation's D1 database, where all mail was before it could move.
    D1,
    /// The mailbox's own database.
    OwnDatabase,
}

/// What `read` found.
#[derive(Debug)]
pub struct MailRead {
    /// Where the mailbox's mail was read.
    pub store: MailStore,
    /// The results of the statements asked of the directory, in order.
    pub directory: Vec<QueryResult>,
    /// The results of the mail statements, in order, from where the mail is.
    pub mail: Vec<QueryResult>,
}

/// Reads `mail` (statements over the tables of mail) where mailbox
/// `mailbox_id`'s mail is, and `directory` (statements over D1's own tables)
/// in the round trip that decides where, with the route's pending checks.
/// A mailbox that does not exist reads as one whose mail is in D1, where
/// nothing of it is found.
pub async fn read(
    context: &mut Context<'_>,
    mailbox_id: &str,
    directory: Vec<Statement>,
    mail: Vec<Statement>,
) -> Result<MailRead, Refusal> {
    read_each(context, mailbox_id, directory, (mail.clone(), mail)).await
}

/// `read` for mail statements that differ by where they run: `in_d1`, where
/// a mailbox's rows sit beside every other mailbox's (and a statement may
/// still decide there who sees what), and `in_own_database`, where every row
/// is the mailbox's; as many of each, answering alike.
pub async fn read_each(
    context: &mut Context<'_>,
    mailbox_id: &str,
    directory: Vec<Statement>,
    (in_d1, in_own_database): (Vec<Statement>, Vec<Statement>),
) -> Result<MailRead, Refusal> {
    let directory_count = directory.len();
    let mut on_d1 = Vec::with_capacity(1 + directory_count + in_d1.len());
    on_d1.push(store::mail_moved(mailbox_id));
    on_d1.extend(directory);
    on_d1.extend(in_d1);
    let (asked, asked_of_mailbox) = (on_d1.len(), in_own_database.len());
    let (mut results, in_own_database) = context.read_beside_mailbox(on_d1, mailbox_id, in_own_database).await?;
    if results.len() != asked {
        return Err(context.internal(format!("D1 answered {} of {asked} statements", results.len())));
    }
    let mut directory = results.split_off(1);
    let mail_in_d1 = directory.split_off(directory_count);
    let moved = match results.first().and_then(QueryResult::first) {
        Some(row) => row.optional_integer("mail_moved_at").map_err(|error| context.internal(error))?.is_some(),
        None => false,
    };
    if !moved {
        return Ok(MailRead { store: MailStore::D1, directory, mail: mail_in_d1 });
    }
    let mail = in_own_database.map_err(|error| context.internal(format!("mailbox {mailbox_id}'s mail: {error}")))?;
    if mail.len() != asked_of_mailbox {
        return Err(context.internal(format!("mailbox {mailbox_id} answered {} of {asked_of_mailbox}", mail.len())));
    }
    Ok(MailRead { store: MailStore::OwnDatabase, directory, mail })
}

/// Queues `statement`, a change of mailbox `mailbox_id`'s mail, for where a
/// read found its mail (`store`): D1, or the mailbox's own database, where
/// it commits with the call's entry in the mailbox's segment of the chain.
pub fn write(
    context: &mut Context<'_>,
    store: MailStore,
    mailbox_id: &str,
    statement: Statement,
) -> Result<(), Refusal> {
    match store {
        MailStore::D1 => {
            context.write(statement);
            Ok(())
        }
        MailStore::OwnDatabase => context.write_in_mailbox(mailbox_id, statement),
    }
}

/// `write` for a change that must change exactly one row, or the whole
/// commit is refused with `refusal`.
pub fn write_changing_one_row(
    context: &mut Context<'_>,
    store: MailStore,
    mailbox_id: &str,
    statement: Statement,
    refusal: impl Into<Refusal>,
) -> Result<(), Refusal> {
    match store {
        MailStore::D1 => {
            context.write_changing_one_row(statement, refusal);
            Ok(())
        }
        MailStore::OwnDatabase => context.write_in_mailbox_changing_one_row(mailbox_id, statement, refusal),
    }
}

/// Queues `statement`, a change of D1 that follows a change of mailbox
/// `store`'s mail (a notice in someone's feed): in D1's transaction while the
/// mail is there, and after the answer once it is in the mailbox's own
/// database, which shares no transaction with D1, and only if the change it
/// follows committed; so it is written at most once, never for a change
/// refused.
pub fn write_after(context: &mut Context<'_>, store: MailStore, statement: Statement) {
    match store {
        MailStore::D1 => context.write(statement),
        MailStore::OwnDatabase => context.defer_write_on_success(statement),
    }
}

/// Queues `statement`, a change of mailbox `mailbox_id`'s mail recording what
/// happened after the call committed (a dispatch's outcome), to run after the
/// answer where a read found the mail (`store`).
pub fn defer_write(context: &mut Context<'_>, store: MailStore, mailbox_id: &str, statement: Statement) {
    match store {
        MailStore::D1 => context.defer_write(statement),
        MailStore::OwnDatabase => context.defer_write_in_mailbox(mailbox_id, statement),
    }
}
