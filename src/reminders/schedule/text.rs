//! The written forms a schedule is read from and shown in: a date (`Day`), a time of
//! day (`ClockTime`), the three forms of `due_at` (`DueAt`), and `ScheduleError`,
//! what was wrong with a text, beside the refusal it becomes.
//!
//! Parsing is strict and byte by byte: one spelling per value, so what is stored is
//! what is shown, and nothing is guessed (no single-digit fields, no seconds, no
//! spaces, no lower-case `t` or `z`). The length is checked before anything else,
//! so a megabyte of text costs one comparison. This file knows no time zone.

use std::fmt;

use chrono::{Datelike, Days, NaiveDate, NaiveDateTime, NaiveTime};

use crate::core::refusal::Refusal;
use crate::core::time::{calendar_day, written_number};

/// The earliest and latest years a written date may have. No reminder falls due
/// outside them, and bounding them keeps every instant computed from a date (the
/// start of the next day, 30 days before, any zone's offset) far inside what the
/// arithmetic and the time-zone database cover, so those computations cannot fail.
pub const EARLIEST_YEAR: i32 = 1900;
pub const LATEST_YEAR: i32 = 2999;

/// The longest `due_at` there is: `YYYY-MM-DDTHH:MM+HH:MM`.
const LONGEST_DUE_AT: usize = 22;

/// The largest offset a place can have from UTC, in minutes (RFC 9557 and
/// ISO 8601 both stop at ±18:00; the widest offset in use is +14:00).
pub const LARGEST_OFFSET_MINUTES: i32 = 18 * 60;

/// How much of a refused text a refusal repeats: enough to recognise it, never
/// the megabyte someone sent.
const SHOWN_CHARACTERS: usize = 40;

/// A calendar date.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day(NaiveDate);

impl Day {
    /// Reads a strict `YYYY-MM-DD`: four-digit year from `EARLIEST_YEAR` to
    /// `LATEST_YEAR`, two-digit month and day, a date the calendar has.
    pub fn parse(text: &str) -> Result<Day, ScheduleError> {
        day_from(text.as_bytes()).ok_or_else(|| ScheduleError::Date { given: shown(text) })
    }

    /// The date `days` days earlier. Saturates at the earliest date the calendar
    /// arithmetic knows (far before any year a text may name) rather than fail.
    pub fn minus_days(self, days: u32) -> Day {
        Day(self.0.checked_sub_days(Days::new(u64::from(days))).unwrap_or(NaiveDate::MIN))
    }

    /// The date after this one, saturating at the latest the arithmetic knows.
    pub(super) fn next(self) -> Day {
        Day(self.0.succ_opt().unwrap_or(NaiveDate::MAX))
    }

    pub(super) fn from_naive_date(date: NaiveDate) -> Day {
        Day(date)
    }

    pub fn year(self) -> i32 {
        self.0.year()
    }

    /// 1 to 12.
    pub fn month(self) -> u32 {
        self.0.month()
    }

    /// 1 to 31.
    pub fn day_of_month(self) -> u32 {
        self.0.day()
    }
}

impl fmt::Display for Day {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{:04}-{:02}-{:02}", self.0.year(), self.0.month(), self.0.day())
    }
}

/// A time of day, in minutes since midnight, read from `HH:MM` (00:00 to 23:59,
/// two digits each). Whole minutes only: nothing a person schedules needs seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClockTime(u16);

impl ClockTime {
    /// Midnight, the first minute of a day.
    pub const MIDNIGHT: ClockTime = ClockTime(0);

    pub fn parse(text: &str) -> Result<ClockTime, ScheduleError> {
        clock_time_from(text.as_bytes()).ok_or_else(|| ScheduleError::Clock { given: shown(text) })
    }

    /// The time `hour`:`minute`, or `None` past 23:59.
    pub fn from_hour_and_minute(hour: u32, minute: u32) -> Option<ClockTime> {
        (hour < 24 && minute < 60).then(|| ClockTime((hour * 60 + minute) as u16))
    }

    /// Minutes since midnight, 0 to 1439.
    pub fn minutes_since_midnight(self) -> u16 {
        self.0
    }

    pub fn hour(self) -> u32 {
        u32::from(self.0 / 60)
    }

    pub fn minute(self) -> u32 {
        u32::from(self.0 % 60)
    }

    pub(super) fn on(self, day: Day) -> NaiveDateTime {
        // Always valid: hour < 24 and minute < 60 by construction.
        day.0.and_time(NaiveTime::from_hms_opt(self.hour(), self.minute(), 0).unwrap_or(NaiveTime::MIN))
    }
}

impl fmt::Display for ClockTime {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{:02}:{:02}", self.hour(), self.minute())
    }
}

/// The three forms of `due_at`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DueAt {
    /// `YYYY-MM-DD`: due that day, in the person's zone; past due when the day ends.
    Day(Day),
    /// `YYYY-MM-DDTHH:MM`: a local date-time in the person's zone.
    Local { day: Day, time: ClockTime },
    /// `YYYY-MM-DDTHH:MM±HH:MM` (or `Z`): bound to a place; an absolute moment.
    Placed { day: Day, time: ClockTime, offset_minutes: i32 },
}

impl DueAt {
    /// Reads one of the three forms. Seconds are refused rather than dropped, so
    /// a `due_at` never silently means a different moment than the one sent.
    pub fn parse(text: &str) -> Result<DueAt, ScheduleError> {
        due_at_from(text.as_bytes()).ok_or_else(|| ScheduleError::DueAt { given: shown(text) })
    }

    /// The date as written (for a placed `due_at`, the place's date, which may not
    /// be the person's: `schedule::local_due_day` gives theirs).
    pub fn day(&self) -> Day {
        match self {
            DueAt::Day(day) | DueAt::Local { day, .. } | DueAt::Placed { day, .. } => *day,
        }
    }
}

/// The canonical text: the same three forms, an offset always as `+HH:MM` or
/// `-HH:MM` (`Z` and `-00:00` are shown as `+00:00`).
impl fmt::Display for DueAt {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DueAt::Day(day) => write!(formatter, "{day}"),
            DueAt::Local { day, time } => write!(formatter, "{day}T{time}"),
            DueAt::Placed { day, time, offset_minutes } => {
                let sign = if *offset_minutes < 0 { '-' } else { '+' };
                let magnitude = offset_minutes.unsigned_abs();
                write!(formatter, "{day}T{time}{sign}{:02}:{:02}", magnitude / 60, magnitude % 60)
            }
        }
    }
}

/// Why a text could not be read as what a schedule needs. Each variant names what
/// it expected; the field the text came from is the caller's to name, in
/// `refusal`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScheduleError {
    /// Not a `YYYY-MM-DD` date the calendar has, within the years accepted.
    Date { given: String },
    /// None of the three forms of `due_at`.
    DueAt { given: String },
    /// Not an `HH:MM` time of day from 00:00 to 23:59.
    Clock { given: String },
    /// Not the name of a zone in the IANA time-zone database.
    Zone { given: String },
    /// `fire_at` falls after the day the event is due.
    FireAfterDue { fire_at: Day, due_day: Day },
}

impl ScheduleError {
    /// A four-part refusal (status 400) naming `field` (`due_at`, `fire_at`, `tz`,
    /// `quiet_start`…), the form it accepts and an example of it.
    pub fn refusal(&self, field: &str) -> Refusal {
        match self {
            ScheduleError::Date { given } => Refusal::new(
                400,
                "invalid_date",
                format!("`{field}` is not a date: `{given}`."),
                format!(
                    "A date is written YYYY-MM-DD, with a four-digit year from {EARLIEST_YEAR} to {LATEST_YEAR} and a two-digit month and day, and must be on the calendar."
                ),
                format!("Send `{field}` as a date such as 2026-03-29."),
            ),
            ScheduleError::DueAt { given } => Refusal::new(
                400,
                "invalid_due_at",
                format!("`{field}` is not a due date or time: `{given}`."),
                "A due date or time takes one of three forms: a day (YYYY-MM-DD), a time of day in the person's own time zone (YYYY-MM-DDTHH:MM), or a time bound to a place, with that place's offset from UTC (YYYY-MM-DDTHH:MM+02:00, or Z for UTC). The date must be on the calendar, the time from 00:00 to 23:59 without seconds, and the offset at most 18 hours.",
                format!(
                    "Send `{field}` as 2026-03-29 (the day), 2026-03-29T09:30 (09:30 where the person is) or 2026-03-29T09:30+02:00 (09:30 at a place two hours ahead of UTC), without seconds."
                ),
            ),
            ScheduleError::Clock { given } => Refusal::new(
                400,
                "invalid_time",
                format!("`{field}` is not a time of day: `{given}`."),
                "A time of day is written HH:MM on a 24-hour clock, two digits each, from 00:00 to 23:59, without seconds.",
                format!("Send `{field}` as a time such as 07:30 or 22:00."),
            ),
            ScheduleError::Zone { given } => Refusal::new(
                400,
                "invalid_time_zone",
                format!("`{field}` is not a time zone this node knows: `{given}`."),
                "A time zone is named as in the IANA time-zone database, by region and city; abbreviations such as PST and bare offsets such as +02:00 change meaning with the season, so they are not zones.",
                format!(
                    "Send `{field}` as the IANA name of the person's zone, such as Europe/Berlin or America/New_York."
                ),
            ),
            ScheduleError::FireAfterDue { fire_at, due_day } => Refusal::new(
                400,
                "fire_after_due",
                format!("`{field}` {fire_at} is after the day the event is due, {due_day}."),
                "A reminder starts preparing on its fire date and is due on its due day, so it cannot start after it is due.",
                format!("Send a `{field}` on or before {due_day}, or leave it out to start 30 days before."),
            ),
        }
    }
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScheduleError::Date { given } => write!(formatter, "`{given}` is not a YYYY-MM-DD date"),
            ScheduleError::DueAt { given } => write!(formatter, "`{given}` is not a due_at"),
            ScheduleError::Clock { given } => write!(formatter, "`{given}` is not an HH:MM time of day"),
            ScheduleError::Zone { given } => write!(formatter, "`{given}` is not an IANA time zone"),
            ScheduleError::FireAfterDue { fire_at, due_day } => {
                write!(formatter, "fire_at {fire_at} is after the due day {due_day}")
            }
        }
    }
}

impl std::error::Error for ScheduleError {}

/// The start of a refused text, as a refusal repeats it.
pub(super) fn shown(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARACTERS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// The core's one reading of a day, within the years a schedule accepts.
fn day_from(bytes: &[u8]) -> Option<Day> {
    calendar_day(bytes).filter(|date| (EARLIEST_YEAR..=LATEST_YEAR).contains(&date.year())).map(Day)
}

fn clock_time_from(bytes: &[u8]) -> Option<ClockTime> {
    let [_, _, b':', _, _] = bytes else { return None };
    ClockTime::from_hour_and_minute(written_number(&bytes[0..2])?, written_number(&bytes[3..5])?)
}

fn due_at_from(bytes: &[u8]) -> Option<DueAt> {
    if bytes.len() > LONGEST_DUE_AT {
        return None;
    }
    if bytes.len() == 10 {
        return day_from(bytes).map(DueAt::Day);
    }
    if bytes.len() < 16 || bytes[10] != b'T' {
        return None;
    }
    let day = day_from(&bytes[..10])?;
    let time = clock_time_from(&bytes[11..16])?;
    match &bytes[16..] {
        [] => Some(DueAt::Local { day, time }),
        [b'Z'] => Some(DueAt::Placed { day, time, offset_minutes: 0 }),
        [sign @ (b'+' | b'-'), offset @ ..] if offset.len() == 5 && offset[2] == b':' => {
            let hours = written_number(&offset[0..2])?;
            let minutes = written_number(&offset[3..5])?;
            let magnitude = i32::try_from(hours * 60 + minutes).ok()?;
            if minutes >= 60 || magnitude > LARGEST_OFFSET_MINUTES {
                return None;
            }
            let offset_minutes = if *sign == b'-' { -magnitude } else { magnitude };
            Some(DueAt::Placed { day, time, offset_minutes })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_is_read_only_in_its_one_spelling() {
        for good in ["2026-02-03", "2028-02-29", "1900-01-01", "2999-12-31"] {
            assert_eq!(Day::parse(good).map(|day| day.to_string()), Ok(good.to_string()), "{good}");
        }
        for bad in [
            "2026-2-3",
            "2026-02-3",
            "2026-02-30",
            "2026-13-01",
            "2026-00-10",
            "2026-01-00",
            "2027-02-29",
            "1899-12-31",
            "3000-01-01",
            "2026-02-03 ",
            " 2026-02-03",
            "2026/02/03",
            "+2026-02-03",
            "2026-02-03T09:00",
            "２０２６-02-03",
            "",
        ] {
            assert_eq!(Day::parse(bad), Err(ScheduleError::Date { given: bad.to_string() }), "{bad}");
        }
    }

    #[test]
    fn days_before_cross_months_years_and_leap_days() {
        let day = |text| Day::parse(text).unwrap();
        assert_eq!(day("2028-03-01").minus_days(30), day("2028-01-31"));
        assert_eq!(day("2026-03-01").minus_days(30), day("2026-01-30"));
        assert_eq!(day("2026-01-15").minus_days(30), day("2025-12-16"));
        assert_eq!(day("2026-01-15").minus_days(0), day("2026-01-15"));
        assert_eq!(day("2028-02-29").next(), day("2028-03-01"));
        assert_eq!(day("2026-12-31").next(), day("2027-01-01"));
        // Absurd counts saturate instead of failing.
        assert!(day("1900-01-01").minus_days(u32::MAX) < day("1900-01-01"));
    }

    #[test]
    fn a_time_of_day_is_two_digits_each_from_midnight_to_23_59() {
        for (good, minutes) in [("00:00", 0), ("07:05", 425), ("23:59", 1439)] {
            let time = ClockTime::parse(good).unwrap();
            assert_eq!((time.minutes_since_midnight(), time.to_string()), (minutes, good.to_string()));
        }
        for bad in ["24:00", "7:00", "07:0", "07:60", "07:00 ", "07:00:00", "0700", "07-00", "07.00", "-1:00", ""] {
            assert_eq!(ClockTime::parse(bad), Err(ScheduleError::Clock { given: bad.to_string() }), "{bad}");
        }
    }

    #[test]
    fn due_at_takes_three_forms_and_shows_each_canonically() {
        let day = |text| Day::parse(text).unwrap();
        let time = |text| ClockTime::parse(text).unwrap();
        let cases = [
            ("2026-03-29", DueAt::Day(day("2026-03-29")), "2026-03-29"),
            ("2026-03-29T02:30", DueAt::Local { day: day("2026-03-29"), time: time("02:30") }, "2026-03-29T02:30"),
            (
                "2026-05-01T01:00+09:00",
                DueAt::Placed { day: day("2026-05-01"), time: time("01:00"), offset_minutes: 540 },
                "2026-05-01T01:00+09:00",
            ),
            (
                "2026-05-01T01:00-03:30",
                DueAt::Placed { day: day("2026-05-01"), time: time("01:00"), offset_minutes: -210 },
                "2026-05-01T01:00-03:30",
            ),
            (
                "2026-05-01T01:00Z",
                DueAt::Placed { day: day("2026-05-01"), time: time("01:00"), offset_minutes: 0 },
                "2026-05-01T01:00+00:00",
            ),
            (
                "2026-05-01T01:00-00:00",
                DueAt::Placed { day: day("2026-05-01"), time: time("01:00"), offset_minutes: 0 },
                "2026-05-01T01:00+00:00",
            ),
            (
                "2026-05-01T01:00+18:00",
                DueAt::Placed { day: day("2026-05-01"), time: time("01:00"), offset_minutes: 1080 },
                "2026-05-01T01:00+18:00",
            ),
            (
                "2026-05-01T01:00-18:00",
                DueAt::Placed { day: day("2026-05-01"), time: time("01:00"), offset_minutes: -1080 },
                "2026-05-01T01:00-18:00",
            ),
        ];
        for (text, due, canonical) in cases {
            let parsed = DueAt::parse(text).unwrap();
            assert_eq!(parsed, due, "{text}");
            assert_eq!(parsed.to_string(), canonical, "{text}");
            assert_eq!(DueAt::parse(canonical), Ok(due.clone()), "{canonical} reads back");
            assert_eq!(parsed.day(), Day::parse(&text[..10]).unwrap());
        }
    }

    #[test]
    fn every_malformed_due_at_is_refused() {
        for bad in [
            "2026-3-29",
            "2026-02-30",
            "2026-02-30T09:00",
            "2026-03-29T09:00:00",
            "2026-03-29T09:00:00Z",
            "2026-03-29T09:00:00+02:00",
            "2026-03-29 09:00",
            "2026-03-29t09:00",
            "2026-03-29T24:00",
            "2026-03-29T9:00",
            "2026-03-29T09:00z",
            "2026-03-29T09:00+0200",
            "2026-03-29T09:00+02",
            "2026-03-29T09:00+2:00",
            "2026-03-29T09:00+18:01",
            "2026-03-29T09:00+19:00",
            "2026-03-29T09:00-18:30",
            "2026-03-29T09:00+02:60",
            "2026-03-29T09:00 +02:00",
            "2026-03-29T09:00+02:00 ",
            "2026-03-29 ",
            "2026-03-29T",
            "2026-03-29T09:00Europe/Berlin",
            "",
        ] {
            assert_eq!(DueAt::parse(bad), Err(ScheduleError::DueAt { given: bad.to_string() }), "{bad}");
        }
    }

    #[test]
    fn a_megabyte_is_refused_and_repeated_only_in_part() {
        let huge = "2026-03-29".repeat(100_000);
        let ScheduleError::DueAt { given } = DueAt::parse(&huge).unwrap_err() else { panic!("wrong variant") };
        assert_eq!(given.chars().count(), SHOWN_CHARACTERS + 1);
        assert!(given.ends_with('…'));
        assert!(matches!(Day::parse(&huge), Err(ScheduleError::Date { .. })));
        assert!(matches!(ClockTime::parse(&huge), Err(ScheduleError::Clock { .. })));
        // Cut on a character, never inside one.
        assert_eq!(shown(&"é".repeat(100)), format!("{}…", "é".repeat(SHOWN_CHARACTERS)));
    }

    #[test]
    fn each_error_refuses_with_its_code_naming_the_field() {
        let day = |text| Day::parse(text).unwrap();
        let cases = [
            (ScheduleError::Date { given: "2026-02-30".into() }, "fire_at", "invalid_date"),
            (ScheduleError::DueAt { given: "2026-03-29T09:00:00".into() }, "due_at", "invalid_due_at"),
            (ScheduleError::Clock { given: "7:00".into() }, "quiet_start", "invalid_time"),
            (ScheduleError::Zone { given: "Mars/Olympus".into() }, "tz", "invalid_time_zone"),
            (
                ScheduleError::FireAfterDue { fire_at: day("2026-04-02"), due_day: day("2026-04-01") },
                "fire_at",
                "fire_after_due",
            ),
        ];
        for (error, field, code) in cases {
            let refusal = error.refusal(field);
            assert_eq!((refusal.status, refusal.code), (400, code));
            assert!(refusal.message.contains(&format!("`{field}`")), "{}", refusal.message);
            assert!(refusal.fix.contains(&format!("`{field}`")), "{}", refusal.fix);
        }
        let refusal = ScheduleError::DueAt { given: "2026-03-29T09:00:00".into() }.refusal("due_at");
        assert!(refusal.message.contains("2026-03-29T09:00:00"));
        assert!(refusal.reason.contains("without seconds") && refusal.fix.contains("2026-03-29T09:30+02:00"));
        let refusal =
            ScheduleError::FireAfterDue { fire_at: day("2026-04-02"), due_day: day("2026-04-01") }.refusal("fire_at");
        assert!(refusal.message.contains("2026-04-02") && refusal.fix.contains("on or before 2026-04-01"));
    }
}
