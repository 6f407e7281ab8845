//! What agents read of mail whose sender was not authenticated (decision
//! 0020): mail can carry instructions aimed at agents, so an approver weighs
//! an agent's send by how many such messages the agent read in the day
//! before submitting it.
//!
//! The routes that hand a received message's content to its caller (its
//! text, on its own or in a conversation, its original, one of its files, a
//! search's passage from it, the snippet a list of conversations shows)
//! know its sender's verdict from their own read, and note the read here
//! when the caller is an agent (`note_shown`), in the batch that records the
//! read in the chain: always D1's, as no read changes a mailbox's database,
//! wherever the message itself is kept (decision 0040). A submission counts
//! the notes of the day before it (`count_before`, read with the send) and
//! keeps the count on the send, so reading a send or the approval queue
//! joins nothing; the upkeep forgets notes older than any count looks back
//! (`forget_past`).

use mailroom_contract::api::SenderAuthentication;

use super::store::unverified_reads as store;
use crate::core::context::Context;
use crate::core::ids::{IdKind, kind_of};
use crate::core::storage::{QueryResult, Statement, StorageError};

/// How far back a count looks: a day, not ever, since an agent that triages
/// all mail reads unverified mail daily, and a count that never falls to
/// zero tells an approver nothing.
pub const LOOKED_BACK_MS: i64 = 24 * 60 * 60 * 1000;

/// The caller's id, when the caller is an agent.
fn agent_caller<'a>(context: &'a Context<'_>) -> Option<&'a str> {
    context.caller().actor_id().filter(|id| kind_of(id) == Some(IdKind::Agent))
}

/// Notes, when the caller is an agent, that it was shown the content of the
/// received messages `shown` (each id with its sender's verdict): those
/// whose sender was not authenticated are noted in the call's batch, so
/// only a read that is answered counts.
pub fn note_shown<'a>(context: &mut Context<'_>, shown: impl IntoIterator<Item = (&'a str, SenderAuthentication)>) {
    if let Some(note) = noted(context, shown) {
        context.write(note);
    }
}

/// The note of what of `shown` an agent caller was shown from senders not
/// authenticated; none for anyone else, or when there is none.
fn noted<'a>(
    context: &Context<'_>,
    shown: impl IntoIterator<Item = (&'a str, SenderAuthentication)>,
) -> Option<Statement> {
    let agent_id = agent_caller(context)?;
    let unproven: Vec<&str> =
        shown.into_iter().filter(|(_, verdict)| verdict.is_unproven()).map(|(receipt_id, _)| receipt_id).collect();
    (!unproven.is_empty()).then(|| store::noted(agent_id, &unproven, context.now_ms()))
}

/// `note_shown`, for a call whose entry committed as it read (a search across
/// mailboxes whose mail moved): the note is written on D1 after the answer.
pub fn note_shown_after<'a>(
    context: &mut Context<'_>,
    shown: impl IntoIterator<Item = (&'a str, SenderAuthentication)>,
) {
    if let Some(note) = noted(context, shown) {
        context.defer_write(note);
    }
}

/// When the caller is an agent, the statement counting what it read in the
/// day before `at` (`reads_in` reads its answer); none for anyone else.
pub fn count_before(context: &Context<'_>, at: i64) -> Option<Statement> {
    agent_caller(context).map(|agent_id| store::count(agent_id, (at - LOOKED_BACK_MS, at)))
}

/// The count `count_before` asked for.
pub fn reads_in(result: &QueryResult) -> Result<i64, StorageError> {
    match result.first() {
        Some(row) => row.integer("reads"),
        None => Ok(0),
    }
}

/// Forgets the reads no count looks back to any more, as of `now_ms`.
pub fn forget_past(now_ms: i64) -> Statement {
    store::forget_before(now_ms - LOOKED_BACK_MS)
}
