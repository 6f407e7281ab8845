//! When a reminder is due, and what state it is in at a given instant: the pure time
//! logic of the reminders domain (SPEC §9). It owns the written forms (`Day`,
//! `ClockTime`, `DueAt`, in `text`), the person's zone (`Zone`, in `zone`), an event's
//! `Phase` at an instant, the next instant that phase changes (`next_checkpoint`) and
//! quiet hours. It does no I/O, keeps nothing and reads no clock: every instant is
//! milliseconds since the epoch (UTC), passed in, so the cron, a request and a test
//! all compute the same answer.
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

mod text;
mod zone;

pub use text::{ClockTime, Day, DueAt, EARLIEST_YEAR, LARGEST_OFFSET_MINUTES, LATEST_YEAR, ScheduleError};
pub use zone::Zone;

use zone::Resolution;

use crate::core::time::MINUTE_MS;

/// What happens after the due moment (the contract's words): stay overdue, or
/// close as expired.
pub use mailroom_contract::api::AfterDue;
/// An event's state; time brings an open event through the first five
/// (scheduled, preparing, today, then overdue or expired).
pub use mailroom_contract::api::EventState as Phase;

/// What decides an event's phase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timing {
    pub due: DueAt,
    pub fire_at: Day,
    pub after_due: AfterDue,
}

/// How many days before its due day an event starts preparing when no `fire_at`
/// is given.
pub const DEFAULT_LEAD_DAYS: u32 = 30;

/// `fire_at` when none is given: `DEFAULT_LEAD_DAYS` before the due day as written.
pub fn default_fire_at(due: &DueAt) -> Day {
    due.day().minus_days(DEFAULT_LEAD_DAYS)
}

/// Checks `fire_at` is not after the due day as written (`ScheduleError::FireAfterDue`).
pub fn check_fire_at(fire_at: Day, due: &DueAt) -> Result<(), ScheduleError> {
    let due_day = due.day();
    if fire_at > due_day {
        return Err(ScheduleError::FireAfterDue { fire_at, due_day });
    }
    Ok(())
}

/// The person's local date at `now_ms`.
pub fn local_day(zone: &Zone, now_ms: i64) -> Day {
    zone.local_at(now_ms).0
}

/// The moment (ms) the event is past due: for a day, the start of the next local day
/// in the zone; for a local time, that time in the zone (in a gap, as if the clock had
/// not yet moved; in a fold, the earlier); for a placed time, the absolute instant.
pub fn due_moment(due: &DueAt, zone: &Zone) -> i64 {
    match *due {
        DueAt::Day(day) => zone.start_of_day(day.next()),
        DueAt::Local { day, time } => match zone.resolve(day, time) {
            Resolution::Unique(instant) => instant,
            Resolution::Fold { earlier, .. } => earlier,
            Resolution::Gap { moved_forward, .. } => moved_forward,
        },
        DueAt::Placed { day, time, offset_minutes } => {
            time.on(day).and_utc().timestamp_millis() - i64::from(offset_minutes) * MINUTE_MS
        }
    }
}

/// The person's date the event is due on: the date written for a day or a local time;
/// for a placed time, the person's local date at that instant.
pub fn local_due_day(due: &DueAt, zone: &Zone) -> Day {
    match due {
        DueAt::Day(day) | DueAt::Local { day, .. } => *day,
        DueAt::Placed { .. } => local_day(zone, due_moment(due, zone)),
    }
}

/// The phase at `now_ms`: from the due moment `Overdue` or `Expired` by `after_due`;
/// else, once the due day has begun, `Today`; else, once the `fire_at` day has begun,
/// `Preparing`; else `Scheduled`.
pub fn phase_at(timing: &Timing, zone: &Zone, now_ms: i64) -> Phase {
    Checkpoints::of(timing, zone).phase_at(now_ms, timing.after_due)
}

/// The next moment strictly after `now_ms` at which the phase changes (the start of
/// the `fire_at` day, the start of the due day, the due moment), or `None` once past
/// due. An acknowledgement is silent until then, and the cron need not look before.
pub fn next_checkpoint(timing: &Timing, zone: &Zone, now_ms: i64) -> Option<i64> {
    Checkpoints::of(timing, zone).next_after(now_ms, timing.after_due)
}

/// The three instants at which an event's phase can change, in the person's zone,
/// each at most the next: a `fire_at` day that starts after the due day (possible
/// for a placed time falling due on the person's day before the date written) is
/// taken as the due day's start, and so on. That changes no phase (before the due
/// day begins, being past a later `fire_at` start and past the due day's start
/// are the same question), and it lets anyone holding the three, such as a
/// database query, read a phase as plain comparisons in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoints {
    /// Preparing from here.
    pub fire_day_start: i64,
    /// Today from here.
    pub due_day_start: i64,
    /// Overdue or expired from here.
    pub due_moment: i64,
}

impl Checkpoints {
    /// An event's checkpoints in `zone`.
    pub fn of(timing: &Timing, zone: &Zone) -> Checkpoints {
        let due_moment = due_moment(&timing.due, zone);
        let due_day_start = zone.start_of_day(local_due_day(&timing.due, zone)).min(due_moment);
        let fire_day_start = zone.start_of_day(timing.fire_at).min(due_day_start);
        Checkpoints { fire_day_start, due_day_start, due_moment }
    }

    /// The phase at `now_ms`.
    pub fn phase_at(&self, now_ms: i64, after_due: AfterDue) -> Phase {
        if now_ms >= self.due_moment {
            match after_due {
                AfterDue::Keep => Phase::Overdue,
                AfterDue::Expire => Phase::Expired,
            }
        } else if now_ms >= self.due_day_start {
            Phase::Today
        } else if now_ms >= self.fire_day_start {
            Phase::Preparing
        } else {
            Phase::Scheduled
        }
    }

    /// The next instant after `now_ms` at which the phase changes, or `None` once past due.
    pub fn next_after(&self, now_ms: i64, after_due: AfterDue) -> Option<i64> {
        let phase_now = self.phase_at(now_ms, after_due);
        // The phase is constant between these instants, so the first one after now
        // where it differs is where it changes; one may change nothing (a `fire_at`
        // on the due day).
        [self.fire_day_start, self.due_day_start, self.due_moment]
            .into_iter()
            .filter(|instant| *instant > now_ms)
            .find(|instant| self.phase_at(*instant, after_due) != phase_now)
    }

    /// The instant the phase at `now_ms` began, for a phase a person is told of
    /// (preparing, today, overdue); `None` before preparing and once expired.
    pub fn began(&self, now_ms: i64, after_due: AfterDue) -> Option<i64> {
        match self.phase_at(now_ms, after_due) {
            Phase::Preparing => Some(self.fire_day_start),
            Phase::Today => Some(self.due_day_start),
            Phase::Overdue => Some(self.due_moment),
            _ => None,
        }
    }
}

/// Quiet hours: a window of local wall-clock time, from `start` (inside) to `end`
/// (outside), that may wrap midnight (22:00–07:00); `start == end` means none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuietHours {
    pub start: ClockTime,
    pub end: ClockTime,
}

impl QuietHours {
    /// Whether the person's wall clock at `now_ms` is inside the window.
    pub fn contains(&self, zone: &Zone, now_ms: i64) -> bool {
        self.contains_time(zone.local_at(now_ms).1)
    }

    /// The first moment at or after `now_ms` outside the window: `now_ms` itself when
    /// it is outside; otherwise the next time the wall clock reads `end`, or earlier if
    /// a change of the clock jumps it out of the window first (03:00 summer time when
    /// the window ends at 02:30 on a spring-forward night; 02:00 winter time when a
    /// 02:45–03:30 window is left by setting the clock back).
    pub fn next_outside(&self, zone: &Zone, now_ms: i64) -> i64 {
        let (today, time_now) = zone.local_at(now_ms);
        if !self.contains_time(time_now) {
            return now_ms;
        }
        let wraps_and_before_midnight = self.start > self.end && time_now >= self.start;
        let end_day = if wraps_and_before_midnight { today.next() } else { today };
        // The first time the wall clock reads `end` after now: in a fold the later
        // reading may be the first still ahead; if neither is, the next day's.
        let end_instant = [end_day, end_day.next()]
            .into_iter()
            .flat_map(|day| match zone.resolve(day, self.end) {
                Resolution::Unique(instant) => [instant, instant],
                Resolution::Fold { earlier, later } => [earlier, later],
                Resolution::Gap { gap_end, .. } => [gap_end, gap_end],
            })
            .find(|instant| *instant > now_ms)
            .unwrap_or(now_ms);
        // A change of the clock before then can carry the wall clock out of the window.
        let mut after = now_ms;
        while let Some(transition) = zone.next_transition_after(after) {
            if transition >= end_instant {
                break;
            }
            if !self.contains(zone, transition) {
                return transition;
            }
            after = transition;
        }
        end_instant
    }

    fn contains_time(&self, time: ClockTime) -> bool {
        if self.start <= self.end {
            self.start <= time && time < self.end
        } else {
            time >= self.start || time < self.end
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instant(text: &str) -> i64 {
        text.parse::<jiff::Timestamp>().unwrap().as_millisecond()
    }

    fn day(text: &str) -> Day {
        Day::parse(text).unwrap()
    }

    fn zone(name: &str) -> Zone {
        Zone::parse(name).unwrap()
    }

    fn timing(due: &str, fire_at: &str, after_due: AfterDue) -> Timing {
        Timing { due: DueAt::parse(due).unwrap(), fire_at: day(fire_at), after_due }
    }

    /// Checks the phase at each instant, and at the millisecond before each.
    fn check_phases(zone_name: &str, timing: &Timing, cases: &[(&str, Phase, Phase)]) {
        let zone = zone(zone_name);
        for (at, just_before, from_then) in cases {
            let at_ms = instant(at);
            assert_eq!(phase_at(timing, &zone, at_ms - 1), *just_before, "{zone_name} just before {at}");
            assert_eq!(phase_at(timing, &zone, at_ms), *from_then, "{zone_name} at {at}");
        }
    }

    /// Every checkpoint from `from`, in order, checking each is where the phase changes.
    fn checkpoints_from(timing: &Timing, zone: &Zone, from: &str) -> Vec<i64> {
        let mut checkpoints = Vec::new();
        let mut now = instant(from);
        while let Some(next) = next_checkpoint(timing, zone, now) {
            assert!(next > now);
            assert_eq!(phase_at(timing, zone, next - 1), phase_at(timing, zone, now), "no change before {next}");
            assert_ne!(phase_at(timing, zone, next), phase_at(timing, zone, now), "a change at {next}");
            checkpoints.push(next);
            now = next;
        }
        checkpoints
    }

    use Phase::{Expired, Overdue, Preparing, Scheduled, Today};

    #[test]
    fn a_day_passes_through_every_phase_east_and_west_of_utc() {
        let keep = timing("2026-06-15", "2026-06-01", AfterDue::Keep);
        // The local midnights of 1, 15 and 16 June, written out by hand per zone.
        let zones = [
            ("Asia/Tokyo", ["2026-05-31T15:00:00Z", "2026-06-14T15:00:00Z", "2026-06-15T15:00:00Z"]),
            ("Pacific/Kiritimati", ["2026-05-31T10:00:00Z", "2026-06-14T10:00:00Z", "2026-06-15T10:00:00Z"]),
            ("America/Los_Angeles", ["2026-06-01T07:00:00Z", "2026-06-15T07:00:00Z", "2026-06-16T07:00:00Z"]),
            ("Pacific/Pago_Pago", ["2026-06-01T11:00:00Z", "2026-06-15T11:00:00Z", "2026-06-16T11:00:00Z"]),
        ];
        for (name, [fire_day, due_day, day_after]) in zones {
            check_phases(
                name,
                &keep,
                &[(fire_day, Scheduled, Preparing), (due_day, Preparing, Today), (day_after, Today, Overdue)],
            );
            let expire = Timing { after_due: AfterDue::Expire, ..keep.clone() };
            check_phases(name, &expire, &[(day_after, Today, Expired)]);
            assert_eq!(
                checkpoints_from(&keep, &zone(name), "2026-05-01T00:00:00Z"),
                [fire_day, due_day, day_after].map(instant).to_vec(),
                "{name}"
            );
        }
        // One instant, four zones, three phases.
        let at = |name, text| phase_at(&keep, &zone(name), instant(text));
        let zone_names = ["Pacific/Kiritimati", "Asia/Tokyo", "America/Los_Angeles", "Pacific/Pago_Pago"];
        assert_eq!(zone_names.map(|name| at(name, "2026-06-14T12:00:00Z")), [Today, Preparing, Preparing, Preparing]);
        assert_eq!(zone_names.map(|name| at(name, "2026-06-15T10:30:00Z")), [Overdue, Today, Today, Preparing]);
    }

    #[test]
    fn a_day_due_on_a_dst_change_lasts_as_long_as_that_day() {
        let cases = [
            // 23 hours: Berlin and New York move their clocks forward.
            ("Europe/Berlin", "2026-03-29", "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"),
            ("America/New_York", "2026-03-08", "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z"),
            // 25 hours: they set them back.
            ("Europe/Berlin", "2026-10-25", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z"),
            ("America/New_York", "2026-11-01", "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z"),
        ];
        for (name, due, day_start, day_end) in cases {
            let keep = timing(due, due, AfterDue::Keep);
            assert_eq!(due_moment(&keep.due, &zone(name)), instant(day_end), "{name} {due}");
            check_phases(name, &keep, &[(day_start, Scheduled, Today), (day_end, Today, Overdue)]);
            // fire_at on the due day: no preparing, straight to today.
            assert_eq!(
                checkpoints_from(&keep, &zone(name), "2026-01-01T00:00:00Z"),
                [instant(day_start), instant(day_end)]
            );
        }
    }

    #[test]
    fn a_local_time_in_a_gap_is_read_as_if_the_clock_had_not_moved_and_in_a_fold_as_the_first() {
        let cases = [
            // 02:30 does not exist in Berlin on 29 March: it is 03:30 summer time.
            ("Europe/Berlin", "2026-03-29T02:30", "2026-03-29T01:30:00Z"),
            ("America/New_York", "2026-03-08T02:30", "2026-03-08T07:30:00Z"),
            // 02:30 happens twice in Berlin on 25 October: the first is summer time.
            ("Europe/Berlin", "2026-10-25T02:30", "2026-10-25T00:30:00Z"),
            ("America/New_York", "2026-11-01T01:30", "2026-11-01T05:30:00Z"),
            // An ordinary time on the same days, for contrast.
            ("Europe/Berlin", "2026-03-29T09:00", "2026-03-29T07:00:00Z"),
            ("Europe/Berlin", "2026-10-25T09:00", "2026-10-25T08:00:00Z"),
        ];
        for (name, due, moment) in cases {
            let keep = timing(due, &due[..10], AfterDue::Keep);
            assert_eq!(due_moment(&keep.due, &zone(name)), instant(moment), "{name} {due}");
            check_phases(name, &keep, &[(moment, Today, Overdue)]);
        }
        // In Berlin the clock reads 03:00 at 01:00 UTC, after the 02:30 written, yet
        // the event is not due until 03:30: as if the clock had been moved by hand.
        let berlin_gap = timing("2026-03-29T02:30", "2026-03-01", AfterDue::Keep);
        assert_eq!(phase_at(&berlin_gap, &zone("Europe/Berlin"), instant("2026-03-29T01:00:00Z")), Today);
        assert_eq!(
            checkpoints_from(&berlin_gap, &zone("Europe/Berlin"), "2026-02-01T00:00:00Z"),
            ["2026-02-28T23:00:00Z", "2026-03-28T23:00:00Z", "2026-03-29T01:30:00Z"].map(instant).to_vec()
        );
    }

    #[test]
    fn a_placed_time_is_due_on_the_persons_own_date_at_that_instant() {
        // 01:00 on 1 May in Tokyo is 09:00 on 30 April in Los Angeles.
        let flight = timing("2026-05-01T01:00+09:00", "2026-04-01", AfterDue::Keep);
        let los_angeles = zone("America/Los_Angeles");
        assert_eq!(due_moment(&flight.due, &los_angeles), instant("2026-04-30T16:00:00Z"));
        assert_eq!(local_due_day(&flight.due, &los_angeles), day("2026-04-30"));
        assert_eq!(flight.due.day(), day("2026-05-01"));
        check_phases(
            "America/Los_Angeles",
            &flight,
            &[
                ("2026-04-01T07:00:00Z", Scheduled, Preparing),
                ("2026-04-30T07:00:00Z", Preparing, Today),
                ("2026-04-30T16:00:00Z", Today, Overdue),
            ],
        );
        // A fire_at on the date written, after the person's own due day, changes nothing.
        let late_fire = timing("2026-05-01T01:00+09:00", "2026-05-01", AfterDue::Expire);
        assert_eq!(check_fire_at(late_fire.fire_at, &late_fire.due), Ok(()));
        assert_eq!(
            checkpoints_from(&late_fire, &los_angeles, "2026-04-01T00:00:00Z"),
            ["2026-04-30T07:00:00Z", "2026-04-30T16:00:00Z"].map(instant).to_vec()
        );
        // The other way round: 20:00 on 30 April in Los Angeles is noon on 1 May in
        // Tokyo, so for a person there it is not today until Tokyo's 1 May begins.
        let call = timing("2026-04-30T20:00-07:00", "2026-04-20", AfterDue::Keep);
        assert_eq!(local_due_day(&call.due, &zone("Asia/Tokyo")), day("2026-05-01"));
        check_phases(
            "Asia/Tokyo",
            &call,
            &[("2026-04-30T15:00:00Z", Preparing, Today), ("2026-05-01T03:00:00Z", Today, Overdue)],
        );
        // A placed time is the same instant for everyone.
        assert_eq!(due_moment(&call.due, &Zone::utc()), due_moment(&call.due, &zone("Asia/Tokyo")));
    }

    #[test]
    fn checkpoints_run_fire_day_due_day_due_moment_then_stop() {
        let berlin = zone("Europe/Berlin");
        let keep = timing("2026-03-29", "2026-03-20", AfterDue::Keep);
        assert_eq!(
            checkpoints_from(&keep, &berlin, "2026-03-01T00:00:00Z"),
            ["2026-03-19T23:00:00Z", "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"].map(instant).to_vec()
        );
        // From inside a phase, the next is the end of that phase.
        assert_eq!(
            next_checkpoint(&keep, &berlin, instant("2026-03-25T12:00:00Z")),
            Some(instant("2026-03-28T23:00:00Z"))
        );
        // Exactly at a checkpoint, the next one: strictly after now.
        assert_eq!(
            next_checkpoint(&keep, &berlin, instant("2026-03-28T23:00:00Z")),
            Some(instant("2026-03-29T22:00:00Z"))
        );
        // Past due, nothing more changes, kept or expired.
        assert_eq!(next_checkpoint(&keep, &berlin, instant("2026-03-29T22:00:00Z")), None);
        let expire = Timing { after_due: AfterDue::Expire, ..keep };
        assert_eq!(next_checkpoint(&expire, &berlin, instant("2026-04-10T00:00:00Z")), None);
    }

    #[test]
    fn fire_at_defaults_to_thirty_days_before_the_date_written_and_is_never_after_it() {
        let cases = [
            ("2028-03-01", "2028-01-31"),
            ("2026-03-01", "2026-01-30"),
            ("2026-01-15", "2025-12-16"),
            ("2026-03-29T02:30", "2026-02-27"),
            ("2026-05-01T01:00+09:00", "2026-04-01"),
        ];
        for (due, fire_at) in cases {
            let due = DueAt::parse(due).unwrap();
            assert_eq!(default_fire_at(&due), day(fire_at), "{due}");
            assert_eq!(check_fire_at(default_fire_at(&due), &due), Ok(()));
        }
        let due = DueAt::parse("2026-04-01T09:00").unwrap();
        assert_eq!(check_fire_at(day("2026-04-01"), &due), Ok(()));
        assert_eq!(
            check_fire_at(day("2026-04-02"), &due),
            Err(ScheduleError::FireAfterDue { fire_at: day("2026-04-02"), due_day: day("2026-04-01") })
        );
    }

    fn quiet(start: &str, end: &str) -> QuietHours {
        QuietHours { start: ClockTime::parse(start).unwrap(), end: ClockTime::parse(end).unwrap() }
    }

    #[test]
    fn quiet_hours_may_wrap_midnight() {
        let berlin = zone("Europe/Berlin");
        let night = quiet("22:00", "07:00");
        // (instant, inside, first moment outside) in June, Berlin on summer time.
        let cases = [
            ("2026-06-10T19:59:59Z", false, "2026-06-10T19:59:59Z"),
            ("2026-06-10T20:00:00Z", true, "2026-06-11T05:00:00Z"),
            ("2026-06-10T21:00:00Z", true, "2026-06-11T05:00:00Z"),
            ("2026-06-11T01:00:00Z", true, "2026-06-11T05:00:00Z"),
            ("2026-06-11T04:59:59Z", true, "2026-06-11T05:00:00Z"),
            ("2026-06-11T05:00:00Z", false, "2026-06-11T05:00:00Z"),
            ("2026-06-11T10:00:00Z", false, "2026-06-11T10:00:00Z"),
        ];
        for (at, inside, outside) in cases {
            assert_eq!(night.contains(&berlin, instant(at)), inside, "{at}");
            assert_eq!(night.next_outside(&berlin, instant(at)), instant(outside), "{at}");
        }
        let working_day = quiet("09:00", "17:00");
        assert!(!working_day.contains(&berlin, instant("2026-06-10T06:59:00Z")));
        assert!(working_day.contains(&berlin, instant("2026-06-10T07:00:00Z")));
        assert_eq!(working_day.next_outside(&berlin, instant("2026-06-10T12:00:00Z")), instant("2026-06-10T15:00:00Z"));
        // The same wall-clock window is other instants elsewhere.
        assert!(night.contains(&zone("Asia/Tokyo"), instant("2026-06-10T15:00:00Z")));
        assert!(!night.contains(&zone("America/Los_Angeles"), instant("2026-06-10T15:00:00Z")));
        // No window when start and end agree.
        let none = quiet("22:00", "22:00");
        for at in ["2026-06-10T20:00:00Z", "2026-06-10T20:30:00Z", "2026-06-11T03:00:00Z"] {
            assert!(!none.contains(&berlin, instant(at)));
            assert_eq!(none.next_outside(&berlin, instant(at)), instant(at));
        }
    }

    #[test]
    fn quiet_hours_follow_the_wall_clock_across_a_dst_change() {
        let cases = [
            // A night of seven hours (spring) and of nine (autumn), both to 07:00 local.
            ("Europe/Berlin", quiet("22:00", "07:00"), "2026-03-28T22:00:00Z", "2026-03-29T05:00:00Z"),
            ("Europe/Berlin", quiet("22:00", "07:00"), "2026-10-24T21:00:00Z", "2026-10-25T06:00:00Z"),
            // A window ending inside the skipped hour ends when the skip does, 03:00.
            ("Europe/Berlin", quiet("01:00", "02:30"), "2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z"),
            ("America/New_York", quiet("22:00", "02:30"), "2026-03-08T06:30:00Z", "2026-03-08T07:00:00Z"),
            // 02:10 summer time (the first pass): the first 02:30 ends it.
            ("Europe/Berlin", quiet("01:00", "02:30"), "2026-10-25T00:10:00Z", "2026-10-25T00:30:00Z"),
            // 02:10 winter time (the second pass): the second 02:30 does.
            ("Europe/Berlin", quiet("01:00", "02:30"), "2026-10-25T01:10:00Z", "2026-10-25T01:30:00Z"),
            // Setting 03:00 back to 02:00 carries the clock out of 02:45–03:30 at once.
            ("Europe/Berlin", quiet("02:45", "03:30"), "2026-10-25T00:50:00Z", "2026-10-25T01:00:00Z"),
        ];
        for (name, window, at, outside) in cases {
            let zone = zone(name);
            assert!(window.contains(&zone, instant(at)), "{name} {window:?} at {at}");
            let first_outside = window.next_outside(&zone, instant(at));
            assert_eq!(first_outside, instant(outside), "{name} {window:?} from {at}");
            assert!(!window.contains(&zone, first_outside));
            assert!(window.contains(&zone, first_outside - 1));
        }
        // After the clock is set back, 02:00 winter time is inside 01:00–02:30 again.
        assert!(quiet("01:00", "02:30").contains(&zone("Europe/Berlin"), instant("2026-10-25T01:00:00Z")));
    }
}
