//! Scalar values of the service's JSON: exact integers and timestamps.

/// `v`, cut to 80 characters for an error message.
pub(crate) fn clip(v: &str) -> String {
    if v.len() > 80 {
        format!("{}…", &v[..v.char_indices().nth(77).map_or(v.len(), |(i, _)| i)])
    } else {
        v.to_string()
    }
}

/// Exact decimal (or 0x-hex) text → i128 for Decimal128(38,0); the values
/// it carries (difficulties) are never negative.
pub(crate) fn parse_i128(text: &str) -> Result<i128, String> {
    let t = text.trim();
    let parsed = if let Some(h) = t.strip_prefix("0x") {
        i128::from_str_radix(h, 16).ok()
    } else {
        t.parse::<i128>().ok()
    };
    match parsed {
        Some(v) if v < 0 => Err(format!("`{}` is negative", clip(t))),
        Some(v) if v < 10i128.pow(38) => Ok(v),
        _ => Err(format!("`{}` is not an integer of at most 38 digits", clip(t))),
    }
}

/// Exact decimal (or 0x-hex) text → i64, for amounts that are never
/// negative (gas).
pub(crate) fn parse_i64(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let parsed = if let Some(h) = t.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else {
        t.parse::<i64>().ok()
    };
    match parsed {
        Some(v) if v < 0 => Err(format!("`{}` is negative", clip(t))),
        Some(v) => Ok(v),
        None => Err(format!("`{}` is not an integer that fits in int64", clip(t))),
    }
}

/// ISO 8601 UTC → microseconds since the epoch, not before 1970 (no chain
/// has a block from before; a negative time is malformed, not a row to
/// drop). Fast path for the service's `YYYY-MM-DDThh:mm:ssZ`; anything
/// RFC 3339 is accepted.
pub(crate) fn parse_ts_micros(s: &str) -> Result<i64, String> {
    let micros = parse_any_ts_micros(s)?;
    if micros < 0 {
        return Err(format!("`{}` is before 1970-01-01", clip(s)));
    }
    Ok(micros)
}

fn parse_any_ts_micros(s: &str) -> Result<i64, String> {
    let b = s.as_bytes();
    if b.len() == 20 && b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && b[13] == b':' && b[16] == b':' && b[19] == b'Z' {
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let mut v = 0i64;
            for &c in &b[r] {
                if !c.is_ascii_digit() {
                    return None;
                }
                v = v * 10 + (c - b'0') as i64;
            }
            Some(v)
        };
        if let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(se)) =
            (num(0..4), num(5..7), num(8..10), num(11..13), num(14..16), num(17..19))
            && (1..=12).contains(&mo)
            && (1..=days_in_month(y, mo)).contains(&d)
            && h < 24
            && mi < 60
            && se < 61
        {
            let days = days_from_civil(y, mo, d);
            return Ok((days * 86_400 + h * 3600 + mi * 60 + se) * 1_000_000);
        }
    }
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|dt| dt.timestamp_micros())
        .map_err(|e| format!("`{}` is not an ISO 8601 UTC date-time ({e})", clip(s)))
}

/// Days in month `m` (1–12) of year `y`.
fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_outside_their_domain_are_errors() {
        // A negative or impossible value is malformed, not a row to drop.
        assert!(parse_ts_micros("1969-12-31T23:59:59Z").is_err());
        assert!(parse_ts_micros("1969-12-31T23:59:59+00:00").is_err());
        assert!(parse_ts_micros("2023-02-30T00:00:00Z").is_err());
        assert!(parse_ts_micros("1970-01-01T00:00:00Z").is_ok());
        assert!(parse_i64("-1").is_err());
        assert!(parse_i64("-0x1").is_err());
        assert!(parse_i128("-5").is_err());
        assert_eq!(parse_i64("0x10"), Ok(16));
    }

    #[test]
    fn timestamps_parse_exactly() {
        assert_eq!(parse_ts_micros("2023-11-07T05:31:56Z").unwrap(), 1_699_335_116_000_000);
        assert_eq!(parse_ts_micros("2023-11-07T05:31:56.5+00:00").unwrap(), 1_699_335_116_500_000);
        assert!(parse_ts_micros("yesterday").is_err());
    }
}
