//! The steps of a mailbox's move as the upkeep takes them (`move_next`,
//! `advance_move`): begun, copied, verified, switched, each resumed where the
//! last left it; and the switch itself, the last replay and the batch on D1
//! that points the mailbox's mail at its own database.

use super::copying::{MoveProgress, move_mail};
use super::replaying;
use super::rows::{Mailbox, TableTally};
use super::verifying::{Verification, verify_move};
use crate::core::background::{Background, BackgroundError};
use crate::core::context::ports::AuditRecord;
use crate::core::node::DEFAULT_MOVE_ROUND_TRIPS_PER_RUN;
use crate::core::storage::{Counted, Row, StorageError, WRITE_GUARD_PREFIX};
use crate::mail::store::mailboxes;
use crate::mail::store::moving::{self as store, MOVED_TABLES, MovedTable};

/// The action of the organisation's entry recording a verified move, its
/// object the mailbox, its detail each table's count and hash.
pub const MOVE_ACTION: &str = "move_mailbox_mail";
/// The action of the organisation's entry recording that D1 holds nothing
/// more of a moved mailbox's mail, its object the mailbox.
pub const COPY_REMOVED_ACTION: &str = "remove_moved_mail_from_d1";
/// The most rows of one table a batch removes from D1's copy.
pub const ROWS_REMOVED_PER_BATCH: i64 = 500;
/// The fewest round trips a step switches in: the move's state, the copy's
/// positions, the verification's verdict, the switch's five. A run is given
/// at least one more (its read of which mailbox is next), whatever
/// `Config::move_round_trips_per_run` says.
pub const FEWEST_TO_SWITCH: u32 = 8;
const _: () = assert!(DEFAULT_MOVE_ROUND_TRIPS_PER_RUN > FEWEST_TO_SWITCH, "a run of the upkeep can switch a mailbox");

/// Where a mailbox's move stands after a step of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MoveStage {
    /// Its mail is in its own database: nothing to do.
    Moved,
    /// Pages were copied; more are to come.
    Copying(MoveProgress),
    /// The verification went on, or began again.
    Verifying(Verification),
    /// Rows differ that no write explains, in these tables: the next step
    /// verifies again.
    Differs { tables: Vec<String> },
    /// Verified, but a write came between the last replay and the switch,
    /// or the run's round trips ran out: the next step replays and tries again.
    Switching,
    /// Switched in this step: the mailbox's mail is read and written in its
    /// own database from now on.
    Switched { tables: Vec<TableTally> },
    /// Rows of D1's copy of the mailbox's moved mail were removed; more are left.
    Emptying { rows: u64 },
    /// D1 was found to hold nothing more of the mailbox's mail in this step:
    /// the move is over.
    Emptied { rows: u64 },
}

/// Moves the mail of the first mailbox whose mail is still in D1 a step on
/// (one whose move began first), within `Config::move_round_trips_per_run`: what the
/// upkeep runs while `MOVE_MAIL_INTO_OWN_DATABASES` is on. Answers the
/// mailbox and where its move stands, or `None` when every mailbox's mail
/// is in its own database.
pub async fn move_next(work: &Background<'_>) -> Result<Option<(String, MoveStage)>, BackgroundError> {
    let [next] = work.run(vec![store::next_to_move()]).await?.try_into().map_err(|_| unreadable("the next to move"))?;
    let Some(row) = next.first() else { return Ok(None) };
    let mailbox_id = row.text("id")?;
    let state = MoveState::read(row)?;
    let round_trips = work.node().config.move_round_trips_per_run.max(FEWEST_TO_SWITCH + 1);
    let stage = advance_from(work, &mailbox_id, state, round_trips - 1).await?;
    Ok(Some((mailbox_id, stage)))
}

/// Where a mailbox's move stands in D1, as `store::move_state` and
/// `store::next_to_move` read it.
#[derive(Clone, Copy)]
struct MoveState {
    moving: bool,
    moved: bool,
}

impl MoveState {
    fn read(row: &Row) -> Result<MoveState, StorageError> {
        Ok(MoveState {
            moving: row.optional_integer("mail_moving_since")?.is_some(),
            moved: row.optional_integer("mail_moved_at")?.is_some(),
        })
    }
}

fn unreadable(what: &str) -> BackgroundError {
    BackgroundError::Unreadable(format!("{what}: a batch answered the wrong number of results"))
}

/// Takes mailbox `mailbox_id`'s move as far as `round_trips` round trips
/// allow: begins it, copies, verifies, and switches, each resumed where the
/// last step left it.
pub async fn advance_move(
    work: &Background<'_>,
    mailbox_id: &str,
    round_trips: u32,
) -> Result<MoveStage, BackgroundError> {
    let [state] =
        work.run(vec![store::move_state(mailbox_id)]).await?.try_into().map_err(|_| unreadable("a move's state"))?;
    let Some(state) = state.first() else { return Ok(MoveStage::Moved) };
    let state = MoveState::read(state)?;
    advance_from(work, mailbox_id, state, round_trips.saturating_sub(1)).await
}

/// `advance_move` for a mailbox whose move stands at `state`, already read.
async fn advance_from(
    work: &Background<'_>,
    mailbox_id: &str,
    state: MoveState,
    round_trips: u32,
) -> Result<MoveStage, BackgroundError> {
    let before = work.round_trips();
    let left = |work: &Background<'_>| round_trips.saturating_sub(work.round_trips() - before);
    if state.moved {
        if state.moving {
            return remove_d1_copy(work, mailbox_id, left(work)).await;
        }
        return Ok(MoveStage::Moved);
    }
    if !state.moving {
        // Noting begins before the first page is read, so no write is missed.
        work.run(vec![store::move_begun(mailbox_id, work.now_ms())]).await?;
    }
    if left(work) < 3 {
        // Not even a page: the positions' read, a page's read and its write.
        return Ok(MoveStage::Copying(MoveProgress::default()));
    }
    let progress = move_mail(work, mailbox_id, left(work)).await?;
    if !progress.finished {
        return Ok(MoveStage::Copying(progress));
    }
    if left(work) == 0 {
        // The copy ended on the step's last round trip: the verification's
        // first read is the next step's.
        return Ok(MoveStage::Verifying(Verification::Unfinished { pages: 0 }));
    }
    let tables = match verify_move(work, mailbox_id, left(work)).await? {
        Verification::Verified { tables, .. } => tables,
        Verification::Differs { tables } => return Ok(MoveStage::Differs { tables }),
        other => return Ok(MoveStage::Verifying(other)),
    };
    switch(work, mailbox_id, tables, left(work)).await
}

/// Replays what D1 noted since the verification and, in the batch on D1 that
/// marks the last notes replayed, guarded by "no note pending", points the
/// mailbox at its own database and records the move in the organisation's
/// chain (`MOVE_ACTION`, each table's agreeing rows as detail).
async fn switch(
    work: &Background<'_>,
    mailbox_id: &str,
    tables: Vec<TableTally>,
    round_trips: u32,
) -> Result<MoveStage, BackgroundError> {
    // Its read of the replays; then a round (its read and write), the
    // switch's batch, and the verdict forgotten (or the marks kept).
    if round_trips < 5 {
        return Ok(MoveStage::Switching);
    }
    let database = work.node().mailboxes.of(mailbox_id);
    let mailbox = Mailbox { work, database: Counted::new(&*database) };
    let before = work.round_trips();
    let spent = |work: &Background<'_>| work.round_trips() - before;
    let [replays] = mailbox.execute::<1>(vec![store::replays()]).await?;
    let mut replays = replays.first().map(|row| row.integer("replays")).transpose()?.unwrap_or(0);
    let detail = serde_json::to_string(&serde_json::json!({ "tables": tables }))
        .map_err(|error| BackgroundError::Unreadable(error.to_string()))?;
    let record = recorded(work, MOVE_ACTION, mailbox_id, Some(detail));
    while spent(work) + 4 <= round_trips {
        let round = replaying::replay_round(work, &mailbox, mailbox_id, replays).await?;
        let marked = store::notes_replayed(mailbox_id, round.notes);
        if round.count > 0 {
            replays += 1;
        }
        if !round.complete {
            work.run(vec![marked]).await?;
            continue;
        }
        let switched = work
            .run(vec![
                marked.clone(),
                store::nothing_pending(mailbox_id),
                store::notes_forgotten(mailbox_id),
                mailboxes::mail_moved_now(mailbox_id, work.now_ms()),
                work.append(&record),
            ])
            .await;
        match switched {
            Ok(_) => {
                // The verification's verdict has served; a failure to forget
                // it leaves a row nothing reads.
                if let Err(error) = mailbox.execute_all(vec![store::checks_cleared()]).await {
                    work.node().platform.log(&format!("forgetting {mailbox_id}'s verification: {error}"));
                }
                return Ok(MoveStage::Switched { tables });
            }
            Err(BackgroundError::Storage(StorageError::Check(guard))) if guard.starts_with(WRITE_GUARD_PREFIX) => {
                // A write came after the round read D1: what the round wrote
                // is kept, and the next round carries the write.
                work.run(vec![marked]).await?;
            }
            Err(error) => return Err(error),
        }
    }
    Ok(MoveStage::Switching)
}

/// Removes D1's copy of mailbox `mailbox_id`'s moved mail, children before
/// parents: a read of which tables still hold any, then a batch of up to
/// `ROWS_REMOVED_PER_BATCH` rows of a table per round trip, each inside the
/// transaction naming the mailbox as emptying (D1 refuses any other write to
/// it). A read finding nothing left ends the move, recorded in the
/// organisation's chain.
async fn remove_d1_copy(
    work: &Background<'_>,
    mailbox_id: &str,
    round_trips: u32,
) -> Result<MoveStage, BackgroundError> {
    let before = work.round_trips();
    let spent = |work: &Background<'_>| work.round_trips() - before;
    if round_trips < 2 {
        return Ok(MoveStage::Emptying { rows: 0 });
    }
    let held = work.run(MOVED_TABLES.iter().map(|table| store::holds_any(table, mailbox_id)).collect()).await?;
    let left: Vec<&MovedTable> = MOVED_TABLES
        .iter()
        .zip(&held)
        .filter(|(_, held)| held.first_flag("held").unwrap_or(true))
        .map(|(table, _)| table)
        .collect();
    if left.is_empty() {
        let record = recorded(work, COPY_REMOVED_ACTION, mailbox_id, None);
        work.run(vec![store::copy_removed(mailbox_id), work.append(&record)]).await?;
        return Ok(MoveStage::Emptied { rows: 0 });
    }
    let mut rows = 0;
    for table in left.into_iter().rev() {
        loop {
            if spent(work) + 1 > round_trips {
                return Ok(MoveStage::Emptying { rows });
            }
            let mut batch = vec![store::emptying_begins(mailbox_id)];
            batch.extend(store::emptied(table, mailbox_id, ROWS_REMOVED_PER_BATCH));
            batch.push(store::emptying_ends(mailbox_id));
            let results = work.run(batch).await?;
            let removed = results.iter().rev().nth(1).map_or(0, |deleted| deleted.changes);
            rows += removed;
            if (removed as i64) < ROWS_REMOVED_PER_BATCH {
                break;
            }
        }
    }
    Ok(MoveStage::Emptying { rows })
}

/// The organisation's entry recording a step of mailbox `mailbox_id`'s move,
/// taken by the node itself.
fn recorded(work: &Background<'_>, action: &str, mailbox_id: &str, detail: Option<String>) -> AuditRecord {
    AuditRecord {
        at: work.now_ms(),
        actor: None,
        delegator: None,
        surface: None,
        action: action.into(),
        object: Some(mailbox_id.to_string()),
        outcome: "ok",
        detail,
        topic: None,
    }
}
