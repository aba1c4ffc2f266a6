//! The service's `window` parameter: relative (`30d`, `12h`), ISO interval
//! (`start..end`) or block range (`first..last`). Parsed here once for the
//! spec, the planner and the simulator.
//!
//! Ends, as users read them: a block range includes both of its blocks; a
//! time interval is half-open, `start <= t < end`.
//!
//! Bounds, so that no arithmetic on a window can wrap and no window means
//! more than the service can: block numbers are at most [`MAX_BLOCK`], time
//! intervals lie within [`MIN_TIME`]..[`MAX_TIME`], relative windows are at
//! most 100,000 days. Resolving and aligning saturate rather than wrap.

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};
use std::fmt;

/// The highest block number a window, `numbers` or `start` may name:
/// 10^12, thousands of times any chain's height today (Arbitrum, the
/// fastest, makes ~10^8 blocks a year), and far enough below `u64::MAX`
/// and the service's int64 that `last + 1` and every unit boundary fit.
pub const MAX_BLOCK: u64 = 1_000_000_000_000;
/// Time intervals start at or after the unix epoch…
pub const MIN_TIME: i64 = 0;
/// …and end by 2200-01-01T00:00:00Z.
pub const MAX_TIME: i64 = 7_258_118_400;

/// A window as written, before relative forms are resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// The last `secs` seconds before "now".
    Relative {
        /// Length of the window in seconds.
        secs: i64,
    },
    /// `start..end` in unix seconds, half-open.
    Interval {
        /// First second included.
        start: i64,
        /// First second excluded.
        end: i64,
    },
    /// `first..last` block numbers, both included.
    Blocks {
        /// First block included.
        first: u64,
        /// Last block included.
        last: u64,
    },
}

/// A window with its relative form resolved against a fixed instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Resolved {
    /// Unix seconds, `start <= t < end`.
    Time {
        /// First second included.
        start: i64,
        /// First second excluded.
        end: i64,
    },
    /// Block numbers, `first <= n <= last`.
    Blocks {
        /// First block included.
        first: u64,
        /// Last block included.
        last: u64,
    },
}

impl Window {
    /// Parses any of the three forms; the error says what was expected.
    pub fn parse(s: &str) -> Result<Window, String> {
        let s = s.trim();
        if let Some((a, b)) = s.split_once("..") {
            let (a, b) = (a.trim(), b.trim());
            let digits = |x: &str| !x.is_empty() && x.bytes().all(|c| c.is_ascii_digit());
            if digits(a) && digits(b) {
                let block = |x: &str| {
                    x.parse::<u64>()
                        .ok()
                        .filter(|n| *n <= MAX_BLOCK)
                        .ok_or_else(|| format!("block number `{x}` is beyond {MAX_BLOCK}, the highest block a window may name"))
                };
                let (first, last) = (block(a)?, block(b)?);
                if first > last {
                    return Err(format!("block range `{s}` is empty: {first} > {last}"));
                }
                return Ok(Window::Blocks { first, last });
            }
            let start = parse_instant(a)?;
            let end = parse_instant(b)?;
            if start >= end {
                return Err(format!("time interval `{s}` is empty: its start is not before its end"));
            }
            if start < MIN_TIME || end > MAX_TIME {
                return Err(format!("time interval `{s}` must lie within {}..{}", iso(MIN_TIME), iso(MAX_TIME)));
            }
            return Ok(Window::Interval { start, end });
        }
        let unit_secs = match s.chars().last() {
            Some('d') => 86_400,
            Some('h') => 3_600,
            _ => {
                return Err(format!(
                    "`{s}` is not a window: expected a relative duration (`30d`, `12h`), \
                     an ISO interval (`2024-01-01T00:00:00Z..2024-01-02T00:00:00Z`) \
                     or a block range (`18000000..18000100`)"
                ));
            }
        };
        let num = &s[..s.len() - 1];
        let n: i64 = num
            .parse()
            .ok()
            .filter(|n: &i64| *n > 0 && *n <= 100_000)
            .ok_or_else(|| format!("`{s}`: the duration must be a whole number from 1 to 100000 before `d` or `h`"))?;
        Ok(Window::Relative { secs: n * unit_secs })
    }

    /// Resolves a relative window to `[now - secs, now)`; the others are unchanged.
    pub fn resolve(self, now: i64) -> Resolved {
        match self {
            Window::Relative { secs } => Resolved::Time {
                start: now.saturating_sub(secs),
                end: now,
            },
            Window::Interval { start, end } => Resolved::Time { start, end },
            Window::Blocks { first, last } => Resolved::Blocks { first, last },
        }
    }
}

/// Whole UTC periods a scheduled window snaps to (`align`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Align {
    /// Midnight to midnight, UTC.
    Day,
    /// Whole hours.
    Hour,
}

impl Align {
    /// Length of the period in seconds.
    pub fn secs(self) -> i64 {
        match self {
            Align::Day => 86_400,
            Align::Hour => 3_600,
        }
    }

    /// The window of `secs` seconds that ends at the start of the period
    /// containing `now`: `1d` aligned to days at any time of a day is the
    /// whole previous UTC day, so a daily run exports exactly yesterday.
    pub fn resolve(self, secs: i64, now: i64) -> Resolved {
        let end = now.div_euclid(self.secs()).saturating_mul(self.secs());
        Resolved::Time {
            start: end.saturating_sub(secs),
            end,
        }
    }
}

/// Parses a duration such as `30s`, `5m`, `2h` or `1d` to seconds.
pub fn parse_duration(s: &str) -> Result<i64, String> {
    let s = s.trim();
    let unit = match s.chars().last() {
        Some('s') => 1,
        Some('m') => 60,
        Some('h') => 3_600,
        Some('d') => 86_400,
        _ => {
            return Err(format!(
                "`{s}` is not a duration: expected a number followed by s, m, h or d (`30s`, `5m`)"
            ));
        }
    };
    s[..s.len() - 1]
        .parse::<i64>()
        .ok()
        .filter(|n| *n > 0 && *n <= 10_000_000)
        // At most 10^7 days: 8.64 * 10^11 s, far inside i64.
        .map(|n| n * unit)
        .ok_or_else(|| format!("`{s}`: expected a whole number above 0 before the unit (`30s`, `5m`, `1h`)"))
}

impl fmt::Display for Resolved {
    /// The service form of the window.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resolved::Time { start, end } => write!(f, "{}..{}", iso(*start), iso(*end)),
            Resolved::Blocks { first, last } => write!(f, "{first}..{last}"),
        }
    }
}

/// Parses an ISO 8601 UTC date-time (`2024-01-01T00:00:00Z`, fractional
/// seconds and `+00:00` accepted) or a bare date (midnight UTC) to unix
/// seconds. The error gives the parser's reason for the form the text
/// looks like (a date-time when it has a time, else a date), so that
/// `2024-02-30` reads as out of range rather than as malformed.
pub fn parse_instant(s: &str) -> Result<i64, String> {
    let as_datetime = match DateTime::parse_from_rfc3339(s) {
        Ok(dt) => return Ok(dt.with_timezone(&Utc).timestamp()),
        Err(e) => e,
    };
    if let Ok(dt) = NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S") {
        return Ok(Utc.from_utc_datetime(&dt).timestamp());
    }
    let as_date = match NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        Ok(d) => return Ok(Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0).unwrap_or_default()).timestamp()),
        Err(e) => e,
    };
    let why = if s.contains(['T', ':']) { as_datetime } else { as_date };
    Err(format!(
        "`{s}` is not an ISO 8601 UTC date-time such as 2024-01-31T00:00:00Z ({why})"
    ))
}

/// Unix seconds as `YYYY-MM-DDThh:mm:ssZ`.
pub fn iso(secs: i64) -> String {
    match Utc.timestamp_opt(secs, 0).single() {
        Some(dt) => dt.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        None => format!("@{secs}"),
    }
}

/// Days since 1970-01-01 of a unix second (floor), saturating at the ends
/// of `i32` (beyond any date chrono represents).
pub fn day_of(secs: i64) -> i32 {
    i32::try_from(secs.div_euclid(86_400)).unwrap_or(if secs < 0 { i32::MIN } else { i32::MAX })
}

/// `YYYY-MM-DD` of a day number.
pub fn date_string(day: i32) -> String {
    match Utc.timestamp_opt(i64::from(day) * 86_400, 0).single() {
        Some(dt) => dt.format("%Y-%m-%d").to_string(),
        None => format!("day{day}"),
    }
}

/// Parses `YYYY-MM-DD` to a day number.
pub fn parse_date(s: &str) -> Option<i32> {
    let d = NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()?;
    let secs = Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0)?).timestamp();
    Some(day_of(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_all_three_forms() {
        assert_eq!(Window::parse("30d"), Ok(Window::Relative { secs: 30 * 86_400 }));
        assert_eq!(Window::parse("12h"), Ok(Window::Relative { secs: 12 * 3_600 }));
        assert_eq!(
            Window::parse("18000000..18000100"),
            Ok(Window::Blocks {
                first: 18_000_000,
                last: 18_000_100
            })
        );
        let w = Window::parse("2025-08-20T00:00:00Z..2025-08-26T12:00:00Z").unwrap();
        assert_eq!(w.resolve(0).to_string(), "2025-08-20T00:00:00Z..2025-08-26T12:00:00Z");
        assert!(Window::parse("0d").is_err());
        assert!(Window::parse("5m").is_err());
        assert!(Window::parse("10..5").is_err());
        assert!(Window::parse("2025-08-26T00:00:00Z..2025-08-20T00:00:00Z").is_err());
        assert_eq!(date_string(parse_date("2024-02-29").unwrap()), "2024-02-29");
        assert_eq!(parse_duration("5m"), Ok(300));
        assert!(parse_duration("5").is_err() && parse_duration("0s").is_err());
    }

    #[test]
    fn windows_beyond_the_bounds_are_refused_without_wrapping() {
        for w in [
            "0..100000000000000",
            "0..18446744073709551615",
            "0..18446744073709551616",
            "9223372036854775807..9223372036854775900",
            "1000000000001..1000000000002",
            "1969-12-31..1970-01-02",
            "2199-12-31..2200-01-02",
        ] {
            let e = Window::parse(w).unwrap_err();
            assert!(e.contains("1000000000000") || e.contains("must lie within"), "{w}: {e}");
        }
        assert_eq!(Window::parse("0..1000000000000"), Ok(Window::Blocks { first: 0, last: MAX_BLOCK }));
        // Resolving against extreme instants saturates.
        assert_eq!(
            Window::Relative { secs: 10 }.resolve(i64::MIN),
            Resolved::Time {
                start: i64::MIN,
                end: i64::MIN
            }
        );
        assert_eq!(day_of(i64::MAX), i32::MAX);
        let _ = Align::Day.resolve(86_400, i64::MIN);
    }

    #[test]
    fn a_bad_instant_says_why() {
        let e = parse_instant("2024-02-30").unwrap_err();
        assert!(
            e.starts_with("`2024-02-30` is not an ISO 8601 UTC date-time") && e.contains("out of range"),
            "{e}"
        );
        let e = parse_instant("2024-01-01T25:00:00Z").unwrap_err();
        assert!(e.contains("out of range"), "{e}");
    }

    #[test]
    fn aligned_day_is_yesterday() {
        let now = parse_instant("2025-06-01T13:45:00Z").unwrap();
        let w = Align::Day.resolve(86_400, now);
        assert_eq!(w.to_string(), "2025-05-31T00:00:00Z..2025-06-01T00:00:00Z");
        let midnight = parse_instant("2025-06-01T00:00:00Z").unwrap();
        assert_eq!(Align::Day.resolve(86_400, midnight), w);
        assert_eq!(
            Align::Hour.resolve(2 * 3_600, now).to_string(),
            "2025-06-01T11:00:00Z..2025-06-01T13:00:00Z"
        );
    }
}
