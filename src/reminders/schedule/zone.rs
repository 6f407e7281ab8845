//! A person's time zone (`Zone`), and the one place the schedule meets the
//! time-zone database: the local date and time at an instant, and the instants a
//! local date and time stand for.
//!
//! The database is jiff's bundled copy of the IANA tzdb, compiled into the Worker
//! (Workers have no system database), with every zone in it. A local date and time
//! can stand for no instant (a gap: the clock was moved forward over it) or for two
//! (a fold: the clock was set back and the hour repeated); `Resolution` says which
//! and the caller picks, because a due time and the start of a day pick differently.
//! Nothing here reads a clock: instants are milliseconds since the epoch, passed in.

use jiff::civil;
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::{Timestamp, tz};

use super::text::{ClockTime, Day, ScheduleError, shown};

/// The longest zone name accepted. The longest in the database has 32 characters;
/// anything much longer is refused before it is looked up.
const LONGEST_ZONE_NAME: usize = 64;

/// A person's IANA time zone.
#[derive(Clone, Debug)]
pub struct Zone {
    /// The name as the database spells it (`Europe/Berlin`, even when `europe/berlin`
    /// was given), so what is stored is one spelling.
    name: String,
    time_zone: TimeZone,
}

impl Zone {
    /// Looks a zone up by its IANA name (without regard to ASCII case). Links kept
    /// for old names (`US/Eastern`, `Asia/Calcutta`) are zones too. Offsets and
    /// POSIX rules are not names and are refused.
    pub fn parse(name: &str) -> Result<Zone, ScheduleError> {
        let refused = || ScheduleError::Zone { given: shown(name) };
        if name.is_empty() || name.len() > LONGEST_ZONE_NAME {
            return Err(refused());
        }
        let time_zone = tz::db().get(name).map_err(|_| refused())?;
        // jiff answers `Etc/Unknown` with its own marker for a zone it could not
        // find, which is not a zone anyone lives in.
        if time_zone.is_unknown() {
            return Err(refused());
        }
        let name = time_zone.iana_name().unwrap_or(name).to_string();
        Ok(Zone { name, time_zone })
    }

    /// The name as the database spells it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Coordinated Universal Time: the zone of a person who has not set one.
    pub fn utc() -> Zone {
        Zone { name: "UTC".to_string(), time_zone: TimeZone::UTC }
    }

    /// The local date and time of day (to the minute, seconds dropped) at `instant`.
    pub(super) fn local_at(&self, instant: i64) -> (Day, ClockTime) {
        let local = self.time_zone.to_datetime(timestamp(instant));
        let day = chrono::NaiveDate::from_ymd_opt(i32::from(local.year()), local.month() as u32, local.day() as u32)
            .map(Day::from_naive_date);
        let time = ClockTime::from_hour_and_minute(local.hour() as u32, local.minute() as u32);
        // A civil date jiff produced is always on chrono's calendar too.
        (day.unwrap_or(Day::from_naive_date(chrono::NaiveDate::MIN)), time.unwrap_or(ClockTime::MIDNIGHT))
    }

    /// The instants `time` on `day` stands for in this zone.
    pub(super) fn resolve(&self, day: Day, time: ClockTime) -> Resolution {
        let local = civil_date(day).at(time.hour() as i8, time.minute() as i8, 0, 0);
        let ambiguous = self.time_zone.to_ambiguous_timestamp(local);
        // Each conversion fails only at the ends of jiff's range (years ±9999),
        // which a date a text may name never nears; the fallback keeps it total.
        let fallback = time.on(day).and_utc().timestamp_millis();
        let millis = |result: Result<Timestamp, jiff::Error>| result.map(|t| t.as_millisecond()).unwrap_or(fallback);
        match ambiguous.offset() {
            AmbiguousOffset::Unambiguous { .. } => Resolution::Unique(millis(ambiguous.earlier())),
            AmbiguousOffset::Fold { .. } => {
                Resolution::Fold { earlier: millis(ambiguous.earlier()), later: millis(ambiguous.later()) }
            }
            AmbiguousOffset::Gap { .. } => {
                // `earlier` reads the time with the offset after the gap, which
                // lands before the transition; the next transition is the gap's end.
                let before_gap = ambiguous.earlier().unwrap_or(Timestamp::MIN);
                let gap_end = self.time_zone.following(before_gap).next().map(|transition| transition.timestamp());
                let moved_forward = millis(ambiguous.later());
                Resolution::Gap { moved_forward, gap_end: gap_end.map_or(moved_forward, |end| end.as_millisecond()) }
            }
        }
    }

    /// The first instant of `day` in this zone. Usually its midnight; where the
    /// clock skipped midnight (`America/Santiago` moves 00:00 to 01:00 in
    /// September) the instant the skip ends, and where it repeated it, the first.
    pub(super) fn start_of_day(&self, day: Day) -> i64 {
        match self.resolve(day, ClockTime::MIDNIGHT) {
            Resolution::Unique(instant) => instant,
            Resolution::Fold { earlier, .. } => earlier,
            Resolution::Gap { gap_end, .. } => gap_end,
        }
    }

    /// The first change of this zone's offset strictly after `instant`, if any.
    pub(super) fn next_transition_after(&self, instant: i64) -> Option<i64> {
        self.time_zone
            .following(timestamp(instant))
            .map(|transition| transition.timestamp().as_millisecond())
            .find(|transition| *transition > instant)
    }
}

/// Two zones are the same zone when the database names them alike.
impl PartialEq for Zone {
    fn eq(&self, other: &Zone) -> bool {
        self.name == other.name
    }
}

impl Eq for Zone {}

/// The instants a local date and time stand for in a zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Resolution {
    /// One instant: almost always.
    Unique(i64),
    /// The clock was set back over this time, so it happened twice.
    Fold { earlier: i64, later: i64 },
    /// The clock was moved forward over this time, so it never happened.
    /// `moved_forward` is the time read as if the clock had not yet changed (02:30
    /// on Berlin's spring day is 03:30 summer time); `gap_end` is the first instant
    /// after the gap (03:00 summer time).
    Gap { moved_forward: i64, gap_end: i64 },
}

/// `instant` as jiff's timestamp, held inside jiff's range (years ±9999).
fn timestamp(instant: i64) -> Timestamp {
    let clamped = instant.clamp(Timestamp::MIN.as_millisecond(), Timestamp::MAX.as_millisecond());
    Timestamp::from_millisecond(clamped).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// `day` as jiff's civil date, held inside jiff's range (years ±9999).
fn civil_date(day: Day) -> civil::Date {
    let year = day.year().clamp(i32::from(civil::Date::MIN.year()), i32::from(civil::Date::MAX.year()));
    if year != day.year() {
        return if year < 0 { civil::Date::MIN } else { civil::Date::MAX };
    }
    civil::Date::new(year as i16, day.month() as i8, day.day_of_month() as i8).unwrap_or(civil::Date::MIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instant(text: &str) -> i64 {
        text.parse::<Timestamp>().unwrap().as_millisecond()
    }

    fn day(text: &str) -> Day {
        Day::parse(text).unwrap()
    }

    fn time(text: &str) -> ClockTime {
        ClockTime::parse(text).unwrap()
    }

    fn zone(name: &str) -> Zone {
        Zone::parse(name).unwrap()
    }

    #[test]
    fn zones_are_read_by_their_iana_names_and_spelt_as_the_database_spells_them() {
        for (given, name) in [
            ("Europe/Berlin", "Europe/Berlin"),
            ("europe/berlin", "Europe/Berlin"),
            ("America/Argentina/ComodRivadavia", "America/Argentina/ComodRivadavia"),
            ("US/Eastern", "US/Eastern"),
            ("Asia/Calcutta", "Asia/Calcutta"),
            ("Antarctica/Troll", "Antarctica/Troll"),
            ("Pacific/Kiritimati", "Pacific/Kiritimati"),
            ("Etc/GMT+12", "Etc/GMT+12"),
            ("UTC", "UTC"),
        ] {
            assert_eq!(Zone::parse(given).map(|zone| zone.name().to_string()), Ok(name.to_string()), "{given}");
        }
        assert_eq!(Zone::utc().name(), "UTC");
        assert_eq!(zone("utc"), Zone::utc());
        let long = "Europe/".repeat(200_000);
        for bad in ["Mars/Olympus", "", "Europe/Berlin ", "+02:00", "EST5EDT,M3.2.0,M11.1.0x", "Etc/Unknown", &long] {
            assert!(matches!(Zone::parse(bad), Err(ScheduleError::Zone { .. })), "{bad}");
        }
    }

    #[test]
    fn every_zone_of_the_database_is_there() {
        // The tzdb names about 600 zones and links; a build that filtered zones out
        // (as chrono-tz's `filter-by-regex` would) would leave people unable to say
        // where they live.
        let names: Vec<String> = tz::db().available().map(|name| name.to_string()).collect();
        assert!(names.len() >= 590, "only {} zones", names.len());
        for name in &names {
            assert!(Zone::parse(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn local_date_and_time_at_an_instant() {
        let cases = [
            ("Asia/Tokyo", "2026-06-14T15:00:00Z", "2026-06-15", "00:00"),
            ("Pacific/Kiritimati", "2026-06-14T09:59:59Z", "2026-06-14", "23:59"),
            ("America/Los_Angeles", "2026-06-15T06:59:00Z", "2026-06-14", "23:59"),
            ("Pacific/Pago_Pago", "2026-06-15T10:30:00Z", "2026-06-14", "23:30"),
            ("Europe/Berlin", "2026-03-29T01:00:00Z", "2026-03-29", "03:00"),
            ("Europe/Berlin", "2026-10-25T00:30:00Z", "2026-10-25", "02:30"),
            ("Europe/Berlin", "2026-10-25T01:30:00Z", "2026-10-25", "02:30"),
        ];
        for (name, at, date, clock) in cases {
            assert_eq!(zone(name).local_at(instant(at)), (day(date), time(clock)), "{name} at {at}");
        }
    }

    #[test]
    fn a_local_time_in_a_gap_or_a_fold_names_its_instants() {
        let cases = [
            ("Europe/Berlin", "2026-03-29", "01:59", Resolution::Unique(instant("2026-03-29T00:59:00Z"))),
            (
                "Europe/Berlin",
                "2026-03-29",
                "02:30",
                Resolution::Gap {
                    moved_forward: instant("2026-03-29T01:30:00Z"),
                    gap_end: instant("2026-03-29T01:00:00Z"),
                },
            ),
            (
                "Europe/Berlin",
                "2026-10-25",
                "02:30",
                Resolution::Fold { earlier: instant("2026-10-25T00:30:00Z"), later: instant("2026-10-25T01:30:00Z") },
            ),
            (
                "America/New_York",
                "2026-03-08",
                "02:30",
                Resolution::Gap {
                    moved_forward: instant("2026-03-08T07:30:00Z"),
                    gap_end: instant("2026-03-08T07:00:00Z"),
                },
            ),
            (
                "America/New_York",
                "2026-11-01",
                "01:30",
                Resolution::Fold { earlier: instant("2026-11-01T05:30:00Z"), later: instant("2026-11-01T06:30:00Z") },
            ),
            (
                "America/Havana",
                "2025-11-02",
                "00:00",
                Resolution::Fold { earlier: instant("2025-11-02T04:00:00Z"), later: instant("2025-11-02T05:00:00Z") },
            ),
        ];
        for (name, date, clock, expected) in cases {
            assert_eq!(zone(name).resolve(day(date), time(clock)), expected, "{name} {date} {clock}");
        }
    }

    #[test]
    fn a_day_starts_at_its_first_instant_even_when_midnight_is_skipped_or_repeated() {
        let cases = [
            ("Europe/Berlin", "2026-03-29", "2026-03-28T23:00:00Z"),
            ("Europe/Berlin", "2026-03-30", "2026-03-29T22:00:00Z"),
            // Chile moves 00:00 to 01:00 on the first Sunday of September: the day
            // begins at 01:00 local, the instant 04:00 UTC.
            ("America/Santiago", "2026-09-06", "2026-09-06T04:00:00Z"),
            // Lebanon moved 00:00 to 01:00 on 29 March 2020; on 25 October 2020 it
            // set 00:00 back to 23:00, repeating the 24th's last hour, so the 25th
            // began an hour after the change, at its only midnight.
            ("Asia/Beirut", "2020-03-29", "2020-03-28T22:00:00Z"),
            ("Asia/Beirut", "2020-10-25", "2020-10-24T22:00:00Z"),
            // Cuba skipped 00:00 on 8 March 2026 and set 01:00 back to 00:00 on
            // 2 November 2025: that day's midnight came twice, and it starts at the first.
            ("America/Havana", "2026-03-08", "2026-03-08T05:00:00Z"),
            ("America/Havana", "2025-11-02", "2025-11-02T04:00:00Z"),
        ];
        for (name, date, first_instant) in cases {
            assert_eq!(zone(name).start_of_day(day(date)), instant(first_instant), "{name} {date}");
        }
    }

    #[test]
    fn transitions_are_found_strictly_after_an_instant() {
        let berlin = zone("Europe/Berlin");
        let spring = instant("2026-03-29T01:00:00Z");
        assert_eq!(berlin.next_transition_after(instant("2026-03-01T00:00:00Z")), Some(spring));
        assert_eq!(berlin.next_transition_after(spring), Some(instant("2026-10-25T01:00:00Z")));
        assert_eq!(Zone::utc().next_transition_after(spring), None);
    }
}
