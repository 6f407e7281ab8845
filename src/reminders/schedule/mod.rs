//! When a reminder is due, and what state it is in at a given instant: the pure time
//! logic of the reminders domain (SPEC §9). It owns the written forms (`Day`,
//! `ClockTime`, `DueAt`, in `text`), the person's zone (`Zone`, in `zone`), an event's
//! `Phase` at an instant and the next instant that phase changes (`next_checkpoint`,
//! in `phases`) and quiet hours (`quiet_hours`). It does no I/O, keeps nothing and
//! reads no clock: every instant is milliseconds since the epoch (UTC), passed in,
//! so the cron, a request and a test all compute the same answer.
//!
//! The rules, each decided once here:
//!
//! - **Days are the person's.** "Today" is the person's local date in their IANA zone.
//!   The start of a local day is its first instant: usually midnight, but where the
//!   clock skipped midnight (America/Santiago in September, Asia/Beirut in the past)
//!   the instant the skip ends, and where midnight happened twice, the first.
//! - **A day-form `due_at`** (`2026-03-29`) is due all that day and past due when the
//!   next local day starts, however long the day was (23 or 25 hours on a DST day).
//! - **A local `due_at`** (`2026-03-29T02:30`) is that wall-clock time in the person's
//!   zone. In a gap (the clock moved forward over it) it is read as if the clock had
//!   not yet moved: 02:30 on Berlin's spring day is 03:30 summer time, the instant
//!   01:30 UTC, just as a person waking to an alarm set for 02:30 would find it. In a
//!   fold (the hour repeated) it is the earlier of the two instants, so nothing falls
//!   due later than its time first came round.
//! - **A placed `due_at`** (`2026-05-01T01:00+09:00`) is an absolute instant, bound to
//!   a place. Its due *day*, for the phase, is the person's local date at that instant,
//!   which may differ from the date written: a flight at 01:00 in Tokyo on 1 May is
//!   due at 09:00 on 30 April for a person in Los Angeles, so 30 April is its day.
//!   `fire_at` is still checked against the date written (no zone is needed for that).
//! - **Phases** follow from three instants: the start of the `fire_at` day, the start
//!   of the due day and the due moment. Before the first an event is `Scheduled`,
//!   then `Preparing`, then `Today`, and from the due moment `Overdue` (kept) or
//!   `Expired`. "Local today is on or after the due day" is read as "the due day has
//!   begun", so a clock set back over midnight never returns an event to an earlier
//!   phase, and the phase changes only at those three instants.
//! - **Quiet hours** are a window of wall-clock time that may wrap midnight
//!   (22:00–07:00); a start equal to its end means none. Whether an instant is inside
//!   is read from the local wall clock, so the window follows the person across a DST
//!   change.

mod phases;
mod quiet_hours;
mod text;
mod zone;

pub use phases::{
    Checkpoints, DEFAULT_LEAD_DAYS, Timing, check_fire_at, default_fire_at, due_moment, local_day, local_due_day,
    next_checkpoint, phase_at,
};
pub use quiet_hours::QuietHours;
pub use text::{ClockTime, Day, DueAt, EARLIEST_YEAR, LARGEST_OFFSET_MINUTES, LATEST_YEAR, ScheduleError};
pub use zone::Zone;

/// What happens after the due moment (the contract's words): stay overdue, or
/// close as expired.
pub use mailroom_contract::api::AfterDue;
/// An event's state; time brings an open event through the first five
/// (scheduled, preparing, today, then overdue or expired).
pub use mailroom_contract::api::EventState as Phase;
