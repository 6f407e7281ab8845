//! Time as the API shows it. Storage keeps milliseconds since the epoch; every
//! response shows RFC 3339 in UTC, which people and models both read correctly.

use chrono::{DateTime, SecondsFormat};

/// RFC 3339 in UTC with milliseconds, e.g. `2026-11-29T19:31:00.000Z`.
pub fn rfc3339(milliseconds: i64) -> String {
    DateTime::from_timestamp_millis(milliseconds)
        .map(|moment| moment.to_rfc3339_opts(SecondsFormat::Millis, true))
        .unwrap_or_else(|| "1970-01-01T00:00:00.000Z".to_string())
}

pub const MINUTE_MS: i64 = 60 * 1000;
pub const DAY_MS: i64 = 24 * 60 * MINUTE_MS;

#[cfg(test)]
mod tests {
    #[test]
    fn formats_as_utc_with_milliseconds() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(super::rfc3339(1_795_982_460_123), "2026-11-29T20:01:00.123Z");
    }
}
