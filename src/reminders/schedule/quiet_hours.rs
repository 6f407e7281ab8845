//! Quiet hours (`QuietHours`): a window of the person's wall-clock time that
//! may wrap midnight, whether an instant is inside it, and the first moment
//! outside it, following the wall clock across a change of the clock.

use super::text::ClockTime;
use super::zone::{Resolution, Zone};

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

    fn zone(name: &str) -> Zone {
        Zone::parse(name).unwrap()
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
