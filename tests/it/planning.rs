//! `chainetl plan` knows the job: with state it shows the
//! frozen windows (not resolved again against now), units done and left
//! and the requests left; `--as-of` as `run` has it; `--summary` prints one
//! line per export and chain.

use crate::common::*;
use std::path::Path;

/// A two-chain blocks export of the last 2 hours, in 30-minute units, on
/// the built-in simulator frozen at 2025-06-01T00:00:00Z.
fn job_spec(dir: &Path) -> String {
    write_spec(
        dir,
        "job.toml",
        &format!(
            "name = \"half\"\n[source]\nbase_url = \"sim\"\n[source.sim]\nfrozen_at = \"2025-06-01T00:00:00Z\"\n[output]\nuri = \"{}\"\n\
             [[export]]\ndataset = \"blocks\"\nchains = [\"base\", \"ethereum\"]\nwindow = \"2h\"\nchunk_duration = \"30m\"\n",
            dir.join("out").display()
        ),
    )
}

fn stdout(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}", text(o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn plan_on_a_half_done_job_shows_its_frozen_windows_and_what_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let spec = job_spec(dir.path());
    let before = stdout(&chainetl(&["plan", &spec]));
    assert!(before.contains("2h → 2025-05-31T22:00:00Z..2025-06-01T00:00:00Z"), "{before}");
    assert!(
        before.contains("units 8 (0 done, 8 left)") && before.contains("8 units; at least 8 requests, one a unit"),
        "{before}"
    );
    // Half the job, a day earlier: the windows frozen are that day's.
    let o = chainetl(&["run", &spec, "--as-of", "2025-05-31T00:00:00Z", "--shard", "1/2"]);
    assert!(o.status.success(), "{}", text(&o));
    let plan = stdout(&chainetl(&["plan", &spec]));
    assert!(plan.contains("2h → 2025-05-30T22:00:00Z..2025-05-31T00:00:00Z"), "{plan}");
    assert!(!plan.contains("2025-06-01T00:00:00Z"), "re-resolved against now:\n{plan}");
    assert!(plan.contains("job started "), "{plan}");
    let units: Vec<&str> = plan.lines().filter(|l| l.starts_with("e0-blocks-")).collect();
    assert_eq!(units.len(), 8, "{plan}");
    let done = units.iter().filter(|l| l.contains(" done ")).count();
    assert!((1..8).contains(&done), "{plan}");
    assert_eq!(units.iter().filter(|l| l.contains(" todo ")).count(), 8 - done, "{plan}");
    assert!(plan.contains(&format!("units 8 ({done} done, {} left)", 8 - done)), "{plan}");
    assert!(plan.contains(&format!("8 units: {done} done, {} left; about ", 8 - done)), "{plan}");
    let left: u64 = plan
        .split("left; about ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(left >= (8 - done) as u64, "{plan}");
    // --as-of as `run` has it: the job's own instant plans, another is refused.
    let o = chainetl(&["plan", &spec, "--as-of", "2025-06-01T00:00:00Z"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let same = stdout(&chainetl(&["plan", &spec, "--as-of", "2025-05-31T00:00:00Z"]));
    assert_eq!(same, plan);
    let o = chainetl(&["plan", &spec, "--as-of", "yesterday"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // --summary: one line per export and chain, none per unit.
    let summary = stdout(&chainetl(&["plan", &spec, "--summary"]));
    assert!(!summary.contains("e0-blocks-"), "{summary}");
    let lines: Vec<&str> = summary.lines().filter(|l| l.starts_with("e0 blocks ")).collect();
    assert_eq!(lines.len(), 2, "{summary}");
    let figures = |l: &str| {
        l.split_whitespace()
            .skip(3)
            .map(|x| x.trim_start_matches(['≈', '≥']).parse::<u64>().unwrap())
            .collect::<Vec<_>>()
    };
    let (a, b) = (figures(lines[0]), figures(lines[1]));
    assert_eq!(
        (a[0] + b[0], a[1] + b[1], a[2] + b[2]),
        (8, done as u64, 8 - done as u64),
        "{summary}"
    );
    assert_eq!(a[3] + b[3], left, "{summary}");
    // --summary=json, as `run --summary` takes it: the same figures.
    let doc: serde_json::Value = serde_json::from_str(&stdout(&chainetl(&["plan", &spec, "--summary=json"]))).unwrap();
    assert_eq!(doc["units"], 8, "{doc}");
    assert_eq!(doc["done"], done as u64, "{doc}");
    assert_eq!(doc["requests_left"]["at_least"], 8 - done as u64, "{doc}");
    let shown: u64 = doc["exports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            e["requests_left"]["about"]
                .as_u64()
                .or(e["requests_left"]["at_least"].as_u64())
                .unwrap()
        })
        .sum();
    assert_eq!(shown, left, "{doc}");
    // The rest done: the figure measured from the done units was the run's.
    let o = chainetl(&["run", &spec, "--summary", "json"]);
    assert!(o.status.success(), "{}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let sent = report["requests"].as_u64().unwrap_or_else(|| panic!("{report}"));
    assert!(
        sent.abs_diff(left) <= left / 4 + 1,
        "plan said about {left} requests, the run sent {sent}:\n{plan}"
    );
    let plan = stdout(&chainetl(&["plan", &spec]));
    assert!(plan.contains("8 units: 8 done, 0 left; nothing left to fetch"), "{plan}");
}

#[test]
fn plan_of_a_changed_job_is_refused_as_run_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let spec = job_spec(dir.path());
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let body = std::fs::read_to_string(&spec).unwrap().replace("\"base\", ", "");
    std::fs::write(&spec, body).unwrap();
    let p = chainetl(&["plan", &spec]);
    let r = chainetl(&["run", &spec]);
    assert_eq!(p.status.code(), Some(2), "{}", text(&p));
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert_eq!(String::from_utf8_lossy(&p.stderr), String::from_utf8_lossy(&r.stderr));
}
