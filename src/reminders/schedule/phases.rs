//! An event's phase at an instant, and when it next changes: `Timing` (what
//! decides the phase), the three `Checkpoints` a phase changes at in the
//! person's zone, the due moment and due day, and `fire_at`'s default and its
//! bound. Every instant is passed in; nothing here reads a clock.

use mailroom_contract::api::{AfterDue, EventState as Phase};

use crate::core::time::MINUTE_MS;

use super::text::{Day, DueAt, ScheduleError};
use super::zone::{Resolution, Zone};

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
}
