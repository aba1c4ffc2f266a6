//! The written forms of durations and block numbers, as a spec, a flag or
//! `--set` gives them. One parser per kind of value, used everywhere that
//! kind is accepted, so `chunk_duration`, `poll_interval`, a relative
//! `window` and so on all take the same spellings.
//!
//! - Durations ([`parse_duration`]): a number and a unit (`30s`, `30m`,
//!   `24h`, `7d`, `2w`, `1h30m`, `90 minutes`) or ISO 8601 (`PT30M`,
//!   `P7D`, `P2W`), parsed by `jiff`. A day is 24 hours and a week 7 days;
//!   months and years are refused (their length varies). The result is a
//!   whole number of seconds from 1 to [`MAX_DURATION_SECS`].
//! - Block numbers ([`parse_block`]): digits, optionally scaled by `k`
//!   (10^3) or `M` (10^6), with a decimal point before the suffix:
//!   `18M` = 18000000, `18.1M` = 18100000, `500k`. The scaled value must be
//!   a whole number (`1.0005k` is refused), is computed without floating
//!   point or overflow, and is at most [`MAX_BLOCK`].

use jiff::{Span, SpanRelativeTo};

/// The highest block number a window, `numbers` or `start` may name:
/// 10^12, thousands of times any chain's height today (Arbitrum, the
/// fastest, makes ~10^8 blocks a year), and far enough below `u64::MAX`
/// and the service's int64 that `last + 1` and every unit boundary fit.
pub const MAX_BLOCK: u64 = 1_000_000_000_000;

/// The longest duration: 100,000 days (about 273 years), far inside `i64`
/// seconds and every window bound.
pub const MAX_DURATION_SECS: i64 = 100_000 * 86_400;

/// The accepted duration forms, for "expected …" in errors.
pub const DURATION_FORMS: &str = "`30s`, `30m`, `24h`, `7d`, `2w`, `1h30m`, or ISO 8601 `PT30M`, `P7D`";

/// The accepted block number forms, for "expected …" in errors.
pub const BLOCK_FORMS: &str = "`18000000`, `18M`, `18.1M`, `500k`";

/// Parses a duration (see the module doc) to whole seconds.
pub fn parse_duration(s: &str) -> Result<i64, String> {
    let s = s.trim();
    // jiff's reasons name its grammar; the forms we take say more.
    let not_one = || format!("`{s}` is not a duration: expected {DURATION_FORMS}");
    let span: Span = s.parse().map_err(|_| not_one())?;
    if span.get_years() != 0 || span.get_months() != 0 {
        return Err(format!(
            "`{s}`: months and years vary in length; give days or weeks instead (`30d`, `52w`)"
        ));
    }
    let d = span.to_duration(SpanRelativeTo::days_are_24_hours()).map_err(|_| not_one())?;
    if d.subsec_nanos() != 0 {
        return Err(format!("`{s}`: a duration is a whole number of seconds"));
    }
    match d.as_secs() {
        n if n <= 0 => Err(format!("`{s}`: a duration must be above zero")),
        n if n > MAX_DURATION_SECS => Err(format!("`{s}`: a duration is at most 100000 days")),
        n => Ok(n),
    }
}

/// Whether `s` is written as a block number (digits, a decimal point, a
/// `k`/`M` suffix) rather than as something else, such as a date.
pub fn looks_like_block(s: &str) -> bool {
    let body = s.strip_suffix(['k', 'K', 'M']).unwrap_or(s);
    body.bytes().next().is_some_and(|c| c.is_ascii_digit()) && body.bytes().all(|c| c.is_ascii_digit() || c == b'.')
}

/// Parses a block number (see the module doc).
pub fn parse_block(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (body, scale) = match s.as_bytes().last() {
        Some(b'k' | b'K') => (&s[..s.len() - 1], 3),
        Some(b'M') => (&s[..s.len() - 1], 6),
        _ => (s, 0),
    };
    let bad = || format!("`{s}` is not a block number: expected {BLOCK_FORMS}");
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits = |x: &str| x.bytes().all(|c| c.is_ascii_digit());
    if int.is_empty() || !digits(int) || !digits(frac) || (body.contains('.') && (scale == 0 || frac.is_empty())) {
        return Err(bad());
    }
    // Digits of the fraction past the suffix's scale must be zeros.
    let (kept, rest) = frac.split_at(frac.len().min(scale));
    if rest.bytes().any(|c| c != b'0') {
        return Err(format!("`{s}` is not a whole block number"));
    }
    let beyond = || format!("block number `{s}` is beyond {MAX_BLOCK}, the highest block chainetl accepts");
    // Both parts are at most MAX_BLOCK (13 digits) before scaling: no overflow below.
    let whole: u64 = int.parse().ok().filter(|n| *n <= MAX_BLOCK).ok_or_else(beyond)?;
    let pow = 10u64.pow(scale as u32);
    let part = if kept.is_empty() {
        0
    } else {
        kept.parse::<u64>().map_err(|_| bad())? * 10u64.pow((scale - kept.len()) as u32)
    };
    whole
        .checked_mul(pow)
        .and_then(|n| n.checked_add(part))
        .filter(|n| *n <= MAX_BLOCK)
        .ok_or_else(beyond)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_every_form_agree() {
        for (text, secs) in [
            ("30s", 30),
            ("30m", 1_800),
            ("24h", 86_400),
            ("7d", 7 * 86_400),
            ("2w", 14 * 86_400),
            ("P7D", 7 * 86_400),
            ("P2W", 14 * 86_400),
            ("PT30M", 1_800),
            ("1h30m", 5_400),
            ("1.5h", 5_400),
            (" 90 minutes ", 5_400),
            ("100000d", MAX_DURATION_SECS),
        ] {
            assert_eq!(parse_duration(text), Ok(secs), "{text}");
        }
        for bad in ["", "5", "0s", "-5m", "1mo", "P1Y", "500ms", "100001d", "5x", "PT"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert!(parse_duration("1mo").unwrap_err().contains("vary in length"));
        assert!(parse_duration("5").unwrap_err().contains("`P7D`"));
    }

    #[test]
    fn block_numbers_with_suffixes_are_exact() {
        for (text, n) in [
            ("18000000", 18_000_000),
            ("18M", 18_000_000),
            ("18.1M", 18_100_000),
            ("18.100000M", 18_100_000),
            ("18.1234560M", 18_123_456),
            ("500k", 500_000),
            ("500K", 500_000),
            ("1.5k", 1_500),
            ("0", 0),
            ("1000000M", MAX_BLOCK),
            ("1000000000k", MAX_BLOCK),
        ] {
            assert_eq!(parse_block(text), Ok(n), "{text}");
        }
        for bad in ["1.0005k", "18.1234567M", "1.5", "18.M", ".5M", "M", "18m", "1e6", "-1", "1_000"] {
            assert!(parse_block(bad).is_err(), "{bad}");
        }
        assert!(parse_block("1.0005k").unwrap_err().contains("whole"));
        for beyond in ["1000001M", "1000000.001M", "18446744073709551616", "99999999999999999999M"] {
            assert!(parse_block(beyond).unwrap_err().contains("1000000000000"), "{beyond}");
        }
        assert!(looks_like_block("18.1M") && looks_like_block("18") && !looks_like_block("2024-01-01"));
    }
}
