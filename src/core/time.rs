//! Time as the API shows it and reads it. Storage keeps milliseconds since the
//! epoch; every response shows RFC 3339 in UTC, which people and models both read
//! correctly. A day a request names is read here, in its one spelling, for every
//! domain that takes one (an export's `since`, a reminder's `fire_at`): what each
//! domain then does with it (a range of years, the zone its day starts in) is its
//! own.

use chrono::{DateTime, NaiveDate, NaiveTime, SecondsFormat};

/// RFC 3339 in UTC with milliseconds, e.g. `2026-11-29T19:31:00.000Z`.
pub fn rfc3339(milliseconds: i64) -> String {
    DateTime::from_timestamp_millis(milliseconds)
        .map(|moment| moment.to_rfc3339_opts(SecondsFormat::Millis, true))
        .unwrap_or_else(|| "1970-01-01T00:00:00.000Z".to_string())
}

/// The millisecond an RFC 3339 moment names (`2026-11-29T19:31:00Z`, any
/// offset, any fraction of a second), or `None` when it is not one.
pub fn instant(text: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(text).ok().map(|moment| moment.timestamp_millis())
}

pub const MINUTE_MS: i64 = 60 * 1000;
pub const DAY_MS: i64 = 24 * 60 * MINUTE_MS;

/// Reads a strict `YYYY-MM-DD`: a four-digit year, a two-digit month and day, a
/// date the calendar has. One spelling per day and nothing guessed (no sign, no
/// single digits, no spaces), so what is stored is what was sent. Bytes, not
/// text, so a longer form can hand over its first ten.
pub fn calendar_day(bytes: &[u8]) -> Option<NaiveDate> {
    let [_, _, _, _, b'-', _, _, b'-', _, _] = bytes else { return None };
    let year = i32::try_from(written_number(&bytes[0..4])?).ok()?;
    NaiveDate::from_ymd_opt(year, written_number(&bytes[5..7])?, written_number(&bytes[8..10])?)
}

/// The millisecond `day` starts in UTC.
pub fn utc_day_start(day: NaiveDate) -> i64 {
    day.and_time(NaiveTime::MIN).and_utc().timestamp_millis()
}

/// The number written by `bytes`, which must all be ASCII digits: how each field
/// of a written date or time is read.
pub fn written_number(bytes: &[u8]) -> Option<u32> {
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(bytes.iter().fold(0, |number, digit| number * 10 + u32::from(digit - b'0')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_utc_with_milliseconds() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(super::rfc3339(1_795_982_460_123), "2026-11-29T20:01:00.123Z");
    }

    #[test]
    fn a_day_is_read_only_in_its_one_spelling() {
        let check = |text: &str, expected: Option<(i32, u32, u32)>| {
            let expected = expected.and_then(|(year, month, day)| NaiveDate::from_ymd_opt(year, month, day));
            assert_eq!(calendar_day(text.as_bytes()), expected, "{text}");
        };
        check("2026-02-03", Some((2026, 2, 3)));
        check("2028-02-29", Some((2028, 2, 29)));
        check("2000-02-29", Some((2000, 2, 29)));
        check("0000-01-01", Some((0, 1, 1)));
        check("9999-12-31", Some((9999, 12, 31)));
        check("2027-02-29", None);
        check("1900-02-29", None);
        check("2026-04-31", None);
        check("2026-13-01", None);
        check("2026-00-10", None);
        check("2026-01-00", None);
        check("2026-1-03", None);
        check("2026-01-3", None);
        check("2026-01-03 ", None);
        check(" 2026-01-03", None);
        check("+026-01-03", None);
        check("2026/01/03", None);
        check("2026-01-03T00:00", None);
        check("２０２６-01-03", None);
        check("", None);
    }

    #[test]
    fn a_day_starts_at_its_first_millisecond_in_utc() {
        let start = |text: &str| calendar_day(text.as_bytes()).map(utc_day_start);
        assert_eq!(start("1970-01-01"), Some(0));
        assert_eq!(start("1970-01-02"), Some(DAY_MS));
        assert_eq!(start("2028-03-01").zip(start("2028-02-29")).map(|(march, leap)| march - leap), Some(DAY_MS));
        assert_eq!(start("2026-11-29").map(super::rfc3339).as_deref(), Some("2026-11-29T00:00:00.000Z"));
    }
}
