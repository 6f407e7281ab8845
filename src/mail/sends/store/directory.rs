//! What D1, the directory, says of sends, whatever database holds them
//! (decision 0040): which await a decision or failed, and whose they are, whether an
//! author may still send from a mailbox, who handled an agent, and a
//! mailbox's address with a writer's name. Asked beside a send's own
//! statements, or as its change commits.

use mailroom_contract::Relation;
use serde::Deserialize;

use crate::authz::dual_control;
use crate::authz::tuples::{self, Holder};
use crate::core::storage::Statement;

/// Who handled the agents `person_id` sponsors, minted or handed a
/// credential: `id`, `sponsor_id`, `created_by`, `credential_issued_by`. What
/// a decision on a send in a mailbox's own database asks beside it, before
/// it knows which agent submitted the send.
pub(crate) fn agents_handled_by(person_id: &str) -> Statement {
    Statement::new(
        "SELECT id, sponsor_id, created_by, credential_issued_by FROM agents \
         WHERE sponsor_id = ?1 OR created_by = ?1 OR credential_issued_by = ?1",
    )
    .bind(person_id)
}

/// Whether `author` still holds send.propose on mailbox `mailbox_id`: one
/// row, `proposes` (1 or 0). What a seal in a mailbox's own database asks of
/// D1 as it commits (`author_still_proposes` is the guard on D1).
pub(crate) fn author_proposes(author: &str, mailbox_id: &str, now_ms: i64) -> Statement {
    let may_propose = tuples::holds(&Holder::of_actor(author, now_ms), Relation::SendPropose, mailbox_id);
    Statement { sql: format!("SELECT ({}) AS proposes", may_propose.sql).into(), parameters: may_propose.parameters }
}

/// Send `send_id` of mailbox `mailbox_id`, written by `author`, submitted by
/// `submitted_by` at `submitted_at`, awaits a decision: D1's note of it
/// (migration 0033), whatever database holds the send.
pub(crate) fn awaiting(
    (send_id, mailbox_id, author): (&str, &str, &str),
    submitted_by: &str,
    submitted_at: i64,
) -> Statement {
    Statement::new(
        "INSERT INTO sends_awaiting_decision (send_id, mailbox_id, author, submitted_by, submitted_at) \
         VALUES (?1, ?2, ?3, ?4, ?5) \
         ON CONFLICT (send_id) DO UPDATE SET submitted_by = excluded.submitted_by, submitted_at = excluded.submitted_at",
    )
    .bind(send_id)
    .bind(mailbox_id)
    .bind(author)
    .bind(submitted_by)
    .bind(submitted_at)
}

/// Send `send_id` no longer awaits a decision: taken back or decided.
pub(crate) fn no_longer_awaiting(send_id: &str) -> Statement {
    Statement::new("DELETE FROM sends_awaiting_decision WHERE send_id = ?1").bind(send_id)
}

/// D1's notes of the sends awaiting a decision in the mailboxes where
/// `holder` holds what the route needs (`all_of`, `any_of`), leaving out
/// those `caller` submitted or whose submitting agent is on the caller's
/// side, oldest first from the cursor (`after_at`, `after_id`), at most
/// `limit`: `send_id`, `mailbox_id`, `submitted_at`, and what the directory
/// says of each (`mail_moved_at` of its mailbox, `mailbox_address`,
/// `author_name`). Asked inside `awaiting_with_sends_in_d1`, which joins
/// the sends D1 holds to it.
pub(crate) fn awaiting_page(
    holder: &Holder,
    (all_of, any_of): (&[Relation], &[Relation]),
    caller: &str,
    (after_at, after_id): (i64, &str),
    limit: i64,
) -> Statement {
    let (deciding, mut parameters) = tuples::mailbox_ids_where(holder, all_of, any_of);
    parameters.extend([caller.into(), caller.into(), caller.into(), caller.into()]);
    parameters.extend([after_at.into(), after_at.into(), after_id.into(), after_id.into()]);
    parameters.push(limit.into());
    let not_the_submitters_side = dual_control::not_on_the_side_of("w.submitted_by", "?");
    Statement {
        sql: format!(
            "SELECT w.send_id, w.mailbox_id, w.submitted_at, m.mail_moved_at, m.address AS mailbox_address, \
               COALESCE((SELECT p.name FROM people p WHERE p.id = w.author), \
                        (SELECT a.name FROM agents a WHERE a.id = w.author)) AS author_name \
             FROM sends_awaiting_decision w JOIN mailboxes m ON m.id = w.mailbox_id \
             WHERE w.mailbox_id IN ({deciding}) AND {not_the_submitters_side} \
               AND (w.submitted_at > ? OR (w.submitted_at = ? AND (? = '' OR w.send_id > ?))) \
             ORDER BY w.submitted_at, w.send_id LIMIT ?"
        )
        .into(),
        parameters,
    }
}

/// Whether the author D1 notes for send `send_id`, awaiting a decision,
/// still holds send.propose on its mailbox at `now_ms`: one row, `author`
/// and `proposes` (1 or 0), or none when D1 notes no such send. What a
/// decision asks in its first read, before the send itself is known.
pub(crate) fn awaiting_author_proposes(send_id: &str, now_ms: i64) -> Statement {
    noted_author_proposes("sends_awaiting_decision", send_id, now_ms)
}

/// Send `send_id` of mailbox `mailbox_id`, written by `author`, failed in
/// the mailbox's own database: D1's note of it (migration 0036).
pub(crate) fn failed_in_own_database((send_id, mailbox_id, author): (&str, &str, &str)) -> Statement {
    Statement::new("INSERT OR IGNORE INTO sends_failed (send_id, mailbox_id, author) VALUES (?1, ?2, ?3)")
        .bind(send_id)
        .bind(mailbox_id)
        .bind(author)
}

/// Send `send_id` is no longer failed: dispatched.
pub(crate) fn no_longer_failed(send_id: &str) -> Statement {
    Statement::new("DELETE FROM sends_failed WHERE send_id = ?1").bind(send_id)
}

/// As `awaiting_author_proposes`, for a failed send D1 notes: what a retry
/// asks in its first read.
pub(crate) fn failed_author_proposes(send_id: &str, now_ms: i64) -> Statement {
    noted_author_proposes("sends_failed", send_id, now_ms)
}

/// Whether the author that D1's `notes` (a table of sends by `send_id`, with
/// their `mailbox_id` and `author`) names for send `send_id` still holds
/// send.propose on its mailbox at `now_ms`: `author` and `proposes`.
fn noted_author_proposes(notes: &str, send_id: &str, now_ms: i64) -> Statement {
    let holder = Holder::ActorIn { column: "w.author", now_ms };
    let (proposes, mut parameters) = tuples::holds_in_sql(&holder, Relation::SendPropose, "w.mailbox_id");
    parameters.push(send_id.into());
    Statement {
        sql: format!("SELECT w.author, {proposes} AS proposes FROM {notes} w WHERE w.send_id = ?").into(),
        parameters,
    }
}

/// The address and name of mailbox `mailbox_id` and the name of `writer` (a
/// person or an agent): what a new draft is answered with, and what a send
/// read from a mailbox's own database is given (`writer` then the caller).
#[derive(Deserialize)]
pub(crate) struct MailboxAndWriter {
    pub(crate) address: Option<String>,
    #[serde(default)]
    pub(crate) display_name: Option<String>,
    pub(crate) name: Option<String>,
}

/// One `MailboxAndWriter`.
pub(crate) fn mailbox_and_writer(mailbox_id: &str, writer: &str) -> Statement {
    Statement::new(
        "SELECT (SELECT address FROM mailboxes WHERE id = ?1) AS address, \
                (SELECT display_name FROM mailboxes WHERE id = ?1) AS display_name, \
                COALESCE((SELECT name FROM people WHERE id = ?2), (SELECT name FROM agents WHERE id = ?2)) AS name",
    )
    .bind(mailbox_id)
    .bind(writer)
}

/// The seal-time guard: `author` still holds send.propose on `mailbox_id` at
/// `now_ms`, asked inside the transaction that seals.
pub(crate) fn author_still_proposes(author: &str, mailbox_id: &str, now_ms: i64) -> Statement {
    let may_propose = tuples::holds(&Holder::of_actor(author, now_ms), Relation::SendPropose, mailbox_id);
    Statement { sql: format!("({}) = 1", may_propose.sql).into(), parameters: may_propose.parameters }
}
