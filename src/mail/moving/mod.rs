//! A mailbox's mail moved out of D1 into the mailbox's own database (decision
//! 0040, issue 30), while it keeps changing, by the upkeep (`move_next`), a
//! step per run (`advance_move`):
//! - *begun*: D1 notes from then on the key of every row of the mailbox's
//!   mail a write touches (migration 0035);
//! - *copied* a page at a time (`move_mail`);
//! - *replayed*: the noted rows written over what the copy put
//!   (`replaying`);
//! - *verified* by comparing both sides a page at a time, every difference a
//!   noted row (`verifying`);
//! - *switched*: the last notes replayed and, in one batch on D1 guarded by
//!   "no note pending", the mailbox's mail pointed at its own database and
//!   the verification recorded in the organisation's chain. From then on D1
//!   refuses a write to the mailbox's mail there, and a call that read
//!   before the switch is handled again, following the mail.
//!
//! The copy keeps its position in the mailbox's database, never in D1: each
//! page is written there in one batch with its search index rows and the
//! position it reached, behind a guard that the recorded position is exactly
//! where the page starts. So a call can stop anywhere, the next resumes from
//! what the object holds, and a page sent twice (a retry after a lost answer)
//! rolls back whole instead of indexing its receipts twice. Rowids are copied
//! as they are, so storage order and the search indexes' rowids carry over.
//!
//! Once switched, D1's copy is removed a batch a round trip, children first,
//! each batch inside a transaction naming the mailbox in `mail_emptying` (the
//! one write to it D1 lets through); an original its receipts refer to under
//! a key not naming the mailbox is kept in mind for it (`originals_kept_for`),
//! so the upkeep asks its own database before deleting it.

pub use super::store::moving::{Key, MOVED_TABLES, MovedTable, NOT_MOVED, Owner, SEARCH_INDEXES};
pub use advancing::{
    COPY_REMOVED_ACTION, FEWEST_TO_SWITCH, MOVE_ACTION, MoveStage, ROWS_REMOVED_PER_BATCH, advance_move, move_next,
};
pub use copying::{MoveProgress, move_mail};
pub use replaying::NOTES_PER_ROUND;
pub use rows::{FIRST_PAGE_ROWS, PAGE_BYTES, ROWS_PER_PAGE, TableTally};
pub use verifying::{MOST_DIFFERING, Verification, verify_move};

mod advancing;
mod copying;
mod replaying;
mod rows;
mod verifying;
