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
    assert_eq!(Window::parse("5m"), Ok(Window::Relative { secs: 300 }));
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

#[test]
fn windows_take_every_duration_and_block_form() {
    let week = Ok(Window::Relative { secs: 7 * 86_400 });
    for w in ["7d", "168h", "1w", "P7D", "P1W", "10080m"] {
        assert_eq!(Window::parse(w), week, "{w}");
    }
    assert_eq!(Window::parse("30m"), Ok(Window::Relative { secs: 1_800 }));
    assert_eq!(Window::parse("2w"), Ok(Window::Relative { secs: 14 * 86_400 }));
    assert_eq!(
        Window::parse("18M..18.1M"),
        Ok(Window::Blocks {
            first: 18_000_000,
            last: 18_100_000
        })
    );
    assert_eq!(
        Window::parse("500k..18000000"),
        Ok(Window::Blocks {
            first: 500_000,
            last: 18_000_000
        })
    );
    assert!(Window::parse("1.0005k..2k").unwrap_err().contains("whole"));
    assert!(Window::parse("2M..1M").unwrap_err().contains("empty"));
    assert!(Window::parse("1000001M..1000002M").unwrap_err().contains("1000000000000"));
    assert!(Window::parse("2024-01-01..2024-01-02").is_ok());
    // Every form is named in the error of something that is none of them.
    let e = Window::parse("yesterday").unwrap_err();
    for form in [
        "`30m`",
        "`7d`",
        "`2w`",
        "`P7D`",
        "..2024-01-02T00:00:00Z",
        "`18M..18.1M`",
        "`500k..600k`",
    ] {
        assert!(e.contains(form), "{form}: {e}");
    }
    assert!(Window::parse("1mo").unwrap_err().contains("vary in length"));
}

#[test]
fn the_simulator_takes_only_the_services_forms() {
    assert_eq!(Window::parse_service("30d"), Ok(Window::Relative { secs: 30 * 86_400 }));
    assert!(Window::parse_service("12h").is_ok() && Window::parse_service("1..2").is_ok());
    for w in ["30m", "2w", "P7D", "18M..18.1M"] {
        assert!(Window::parse_service(w).is_err(), "{w}");
    }
}

#[test]
fn an_instant_for_people_is_to_the_second_in_utc() {
    assert_eq!(iso_to_second("2026-11-26T13:01:28.611366874+00:00"), "2026-11-26T13:01:28Z");
    assert_eq!(iso_to_second("2026-11-26T14:01:28.999+01:00"), "2026-11-26T13:01:28Z");
    assert_eq!(iso_to_second("2026-11-26T13:01:28Z"), "2026-11-26T13:01:28Z");
    assert_eq!(iso_to_second("not a time"), "not a time");
}
