//! Windows: relative (`30d`, `12h`, `30m`, `2w`, `P7D`), ISO interval
//! (`start..end`) or block range (`first..last`, `18M..18.1M`). Parsed here
//! once for the spec and the planner ([`Window::parse`], every written
//! form of [`super::forms`]) and for the simulator ([`Window::parse_service`],
//! only the forms the service documents).
//!
//! Ends, as users read them: a block range includes both of its blocks; a
//! time interval is half-open, `start <= t < end`.
//!
//! Bounds, so that no arithmetic on a window can wrap and no window means
//! more than the service can: block numbers are at most [`MAX_BLOCK`], time
//! intervals lie within [`MIN_TIME`]..[`MAX_TIME`], relative windows are at
//! most 100,000 days. Resolving and aligning saturate rather than wrap.

pub use super::forms::MAX_BLOCK;
pub use super::forms::parse_duration;
use super::forms::{looks_like_block, parse_block};
use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};
use std::fmt;

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
    /// Parses a window as a spec gives it: a relative duration in any form
    /// [`parse_duration`] takes (`30m`, `7d`, `2w`, `P7D`), an ISO interval,
    /// or a block range whose ends may carry `k`/`M` (`18M..18.1M`). The
    /// error lists every accepted form.
    pub fn parse(s: &str) -> Result<Window, String> {
        Window::parse_as(s, true)
    }

    /// Parses the service's own forms only (the simulator's `window`
    /// parameter): `30d`/`12h`, an ISO interval, or digits `first..last`.
    pub fn parse_service(s: &str) -> Result<Window, String> {
        Window::parse_as(s, false)
    }

    fn parse_as(s: &str, spec_forms: bool) -> Result<Window, String> {
        let s = s.trim();
        if let Some((a, b)) = s.split_once("..") {
            let (a, b) = (a.trim(), b.trim());
            let digits = |x: &str| !x.is_empty() && x.bytes().all(|c| c.is_ascii_digit());
            let blocks = if spec_forms {
                looks_like_block(a) && looks_like_block(b)
            } else {
                digits(a) && digits(b)
            };
            if blocks {
                let (first, last) = (parse_block(a)?, parse_block(b)?);
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
        if !spec_forms {
            return service_relative(s);
        }
        match parse_duration(s) {
            Ok(secs) => Ok(Window::Relative { secs }),
            // A duration that parses but is out of bounds says why.
            Err(why) if !why.contains("is not a duration") => Err(why),
            Err(_) => Err(format!("`{s}` is not a window: expected {WINDOW_FORMS}")),
        }
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

/// Every window form a spec accepts, for "expected …" in errors.
pub const WINDOW_FORMS: &str = "a relative duration (`30m`, `24h`, `7d`, `2w`, ISO 8601 `P7D`), \
     an ISO interval (`2024-01-01T00:00:00Z..2024-01-02T00:00:00Z`, `2024-01-01..2024-01-08`) \
     or a block range (`18000000..18100000`, `18M..18.1M`, `500k..600k`)";

/// The service's relative form: a whole number of days or hours.
fn service_relative(s: &str) -> Result<Window, String> {
    let unit_secs = match s.chars().last() {
        Some('d') => 86_400,
        Some('h') => 3_600,
        _ => {
            return Err(format!(
                "`{s}` is not a window: expected `30d`, `12h`, `start..end` or `first..last`"
            ));
        }
    };
    s[..s.len() - 1]
        .parse::<i64>()
        .ok()
        .filter(|n| *n > 0 && *n <= 100_000)
        .map(|n| Window::Relative { secs: n * unit_secs })
        .ok_or_else(|| format!("`{s}`: the duration must be a whole number from 1 to 100000 before `d` or `h`"))
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

/// An RFC 3339 instant as people read it: in UTC to the second, as
/// [`iso`] (`2026-11-26T13:01:28Z`), the fraction dropped; documents keep
/// the instant whole. Text that is no instant is returned as it is.
pub fn iso_to_second(rfc3339: &str) -> String {
    match DateTime::parse_from_rfc3339(rfc3339) {
        Ok(t) => iso(t.timestamp()),
        Err(_) => rfc3339.to_string(),
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
mod tests;
