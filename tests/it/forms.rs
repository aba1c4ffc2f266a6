//! Windows and durations in the forms users know: `30m`, `2w`,
//! `P7D`, `7d` and `24h` alike wherever a duration is accepted, block
//! numbers with `k`/`M` suffixes, and each form named in `validate`'s
//! errors.

use crate::common::*;
use std::path::Path;

/// A spec on the frozen built-in simulator with one export's `body`.
fn spec(dir: &Path, name: &str, body: &str) -> String {
    write_spec(
        dir,
        &format!("{name}.toml"),
        &format!(
            "name = \"{name}\"\n[source]\nbase_url = \"sim\"\n[source.sim]\nfrozen_at = \"2025-06-01T00:00:00Z\"\n[output]\nuri = \"{}\"\n[[export]]\n{body}",
            dir.join("out").display()
        ),
    )
}

/// The unit lines of `chainetl plan` (id, requests, range).
fn unit_lines(spec: &str) -> Vec<String> {
    let o = chainetl(&["plan", spec]);
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.starts_with("e0-"))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_duration_form_plans_the_same_window() {
    let dir = tempfile::tempdir().unwrap();
    let body = |w: &str| {
        format!(
            "dataset = \"portfolio\"\nchains = [\"base\"]\nwallets = [\"0x{}\"]\nwindow = \"{w}\"\n",
            "ab".repeat(20)
        )
    };
    let want = unit_lines(&spec(dir.path(), "w0", &body("7d")));
    assert!(!want.is_empty());
    for (i, w) in ["P7D", "168h", "1w", "10080m", "P1W"].into_iter().enumerate() {
        assert_eq!(unit_lines(&spec(dir.path(), &format!("w{}", i + 1), &body(w))), want, "{w}");
    }
    // Minutes and weeks are windows too (they were refused before).
    let o = chainetl(&["plan", &spec(dir.path(), "m", &body("30m"))]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("30m → 2025-05-31T23:30:00Z..2025-06-01T00:00:00Z"),
        "{}",
        text(&o)
    );
}

#[test]
fn chunk_duration_and_intervals_take_every_duration_form() {
    let dir = tempfile::tempdir().unwrap();
    let body = |chunk: &str| {
        format!(
            "dataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"2025-05-31T00:00:00Z..2025-05-31T02:00:00Z\"\nchunk_duration = \"{chunk}\"\n"
        )
    };
    let want = unit_lines(&spec(dir.path(), "c0", &body("30m")));
    assert_eq!(want.len(), 4, "{want:?}");
    assert_eq!(unit_lines(&spec(dir.path(), "c1", &body("PT30M"))), want);
    assert_eq!(unit_lines(&spec(dir.path(), "c2", &body("1800s"))), want);
    let inc =
        "dataset = \"blocks\"\nchains = [\"base\"]\nincremental = true\nstart = \"18M\"\npoll_interval = \"P1D\"\nroll_interval = \"2w\"\n";
    let o = chainetl(&["validate", &spec(dir.path(), "inc", inc)]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn block_ranges_take_k_and_m_suffixes() {
    let dir = tempfile::tempdir().unwrap();
    let body = |w: &str| format!("dataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"{w}\"\nchunk_blocks = 25000\n");
    let want = unit_lines(&spec(dir.path(), "b0", &body("18000000..18100000")));
    assert_eq!(want.len(), 5, "{want:?}");
    for (i, w) in ["18M..18.1M", "18000k..18.100M", "18.0M..18100000"].into_iter().enumerate() {
        assert_eq!(unit_lines(&spec(dir.path(), &format!("b{}", i + 1), &body(w))), want, "{w}");
    }
}

#[test]
fn bad_forms_fail_validate_naming_every_accepted_form() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_spec(
        dir.path(),
        "bad.toml",
        "name = \"bad\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"o\"\n\
         [[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"1.0005k..2k\"\n\
         [[export]]\ndataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"soon\"\n\
         [[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"2024-01-01..2024-01-02\"\nchunk_duration = \"1mo\"\n\
         [[export]]\ndataset = \"blocks\"\nchains = [\"optimism\"]\nincremental = true\nstart = \"1.5\"\npoll_interval = \"5x\"\n\
         [[export]]\ndataset = \"blocks\"\nchains = [\"polygon\"]\nwindow = \"1000001M..1000002M\"\n",
    );
    let o = chainetl(&["validate", &p]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    for want in [
        "bad.toml:9:10: export[0].window: `1.0005k` is not a whole block number",
        "bad.toml:13:10: export[1].window: `soon` is not a window: expected a relative duration (`30m`, `24h`, `7d`, `2w`, ISO 8601 `P7D`), an ISO interval (`2024-01-01T00:00:00Z..2024-01-02T00:00:00Z`, `2024-01-01..2024-01-08`) or a block range (`18000000..18100000`, `18M..18.1M`, `500k..600k`)",
        "bad.toml:18:18: export[2].chunk_duration: `1mo`: months and years vary in length",
        "bad.toml:23:9: export[3].start: `1.5` is not a block number: expected `18000000`, `18M`, `18.1M`, `500k`",
        "bad.toml:24:17: export[3].poll_interval: `5x` is not a duration",
        "bad.toml:28:10: export[4].window: block number `1000001M` is beyond 1000000000000",
    ] {
        assert!(t.contains(want), "missing {want:?} in:\n{t}");
    }
    assert!(t.contains("`30m`, `24h`, `7d`, `2w`, `1h30m`, or ISO 8601 `PT30M`, `P7D`"), "{t}");
}
