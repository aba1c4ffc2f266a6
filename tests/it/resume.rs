//! Exactly-once resume: kill the exporter at many moments (kill -9, test
//! failpoints, SIGTERM), re-run until done, and the Parquet rows must equal
//! the source's — nothing lost, nothing twice. A tool that restarted from
//! scratch and appended would leave duplicates and fail these tests.

use crate::common::*;
use crate::truth;
use chainetl::sim::data::SimData;
use chainetl::vocab::chain::Chain;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

// Five days of ethereum blocks in units that straddle midnights, and three
// days of polygon in 7-hour units: commits land in many date partitions, so
// a file left by a killed run is not simply overwritten by the re-run.
const FIRST: u64 = 20_000_000;
const LAST: u64 = 20_035_999;
const POLY_START: i64 = 1_748_476_800; // 2025-05-29T00:00:00Z
const POLY_END: i64 = 1_748_736_000; // 2025-06-01T00:00:00Z

fn contract(chain: Chain) -> [u8; 20] {
    SimData::new(42, 30).token_address(chain, 10)
}

fn job_spec(dir: &Path, url: &str, commit_pages: u32) -> String {
    write_spec(
        dir,
        "job.toml",
        &format!(
            r#"name = "crashy"
[source]
base_url = "{url}"
page_size = 150
max_concurrency = 4
max_retries = 20
[output]
uri = "{}"
commit_pages = {commit_pages}
commit_interval_secs = 1
[[export]]
dataset = "events"
chains = ["ethereum"]
window = "{FIRST}..{LAST}"
chunk_blocks = 6000
contract_address = "{}"
[[export]]
dataset = "events"
chains = ["polygon"]
window = "2025-05-29T00:00:00Z..2025-06-01T00:00:00Z"
chunk_duration = "7h"
contract_address = "{}"
"#,
            dir.join("out").display(),
            chainetl::vocab::evm::hex0x(&contract(Chain::Ethereum)),
            chainetl::vocab::evm::hex0x(&contract(Chain::Polygon)),
        ),
    )
}

/// The source's rows of [`job_spec`]'s job, made once for every test here.
fn expected() -> &'static [Vec<String>] {
    static ROWS: std::sync::OnceLock<Vec<Vec<String>>> = std::sync::OnceLock::new();
    ROWS.get_or_init(source_rows)
}

fn source_rows() -> Vec<Vec<String>> {
    let data = SimData::new(42, 30);
    let mut want = truth::events(&data, Chain::Ethereum, FIRST, LAST, &[], Some(contract(Chain::Ethereum)));
    let (a, b) = data.blocks_in_time(Chain::Polygon, POLY_START, POLY_END, false);
    want.extend(truth::events(&data, Chain::Polygon, a, b - 1, &[], Some(contract(Chain::Polygon))));
    want.sort();
    want
}

fn assert_exact(dir: &Path) {
    let got = read_rows(&dir.join("out/events"), truth::EVENT_COLS);
    let want = expected();
    assert_eq!(
        got.len(),
        want.len(),
        "row count differs: {} written, {} in the source",
        got.len(),
        want.len()
    );
    assert!(got == want, "rows differ from the source");
    // No staging leftovers or temporary checkpoints.
    let mut stack = vec![dir.join("out")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                stack.push(p);
            } else {
                assert!(!name.contains('#') && !name.ends_with(".tmp"), "leftover {p:?}");
            }
        }
    }
}

fn slow_sim() -> Sim {
    let mut o = frozen();
    o.latency_ms = 15;
    Sim::start(o)
}

#[test]
fn kill_9_at_growing_moments_then_resume_gives_exactly_the_source_rows() {
    let sim = slow_sim();
    let dir = tempfile::tempdir().unwrap();
    let spec = job_spec(dir.path(), &sim.url(), 2);
    let mut kills = 0;
    let mut finished = false;
    for attempt in 0..40u64 {
        let mut child = bin()
            .args(["run", &spec, "-q"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Growing, jittered moments: early kills hit start-up and orphan cleanup, later ones mid-commit.
        let wait = Duration::from_millis(120 + attempt * 90 + (attempt * 7919 % 113));
        let start = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                assert!(status.success(), "run failed on attempt {attempt}: {status:?}");
                finished = true;
                break;
            }
            if start.elapsed() >= wait {
                child.kill().unwrap();
                child.wait().unwrap();
                kills += 1;
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        if finished {
            break;
        }
    }
    assert!(finished, "the job never finished");
    assert!(kills >= 3, "the test must kill the job mid-run several times, killed {kills}");
    assert_exact(dir.path());
    // A finished job re-runs as a no-op.
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains(" 0 requests"), "{}", text(&o));
}

#[test]
fn failpoints_during_write_between_write_and_checkpoint_and_during_checkpoint() {
    let sim = Sim::start(frozen());
    for (point, nth) in [
        ("during-file-write", 7),
        ("after-file-write", 4),
        ("during-checkpoint", 5),
        ("after-file-write", 7),
        ("after-file-write", 10),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let spec = job_spec(dir.path(), &sim.url(), 7);
        let o = crash_bin(&format!("{point}:{nth}")).args(["run", &spec, "-q"]).output().unwrap();
        assert!(!o.status.success(), "{point}: the failpoint must crash the run");
        assert!(String::from_utf8_lossy(&o.stderr).contains("failpoint"), "{point}: {}", text(&o));
        // Resume with another commit cadence (tuning that the spec hash
        // ignores): files are cut differently, so uncommitted files of the
        // crashed run are not simply overwritten and must be cleaned up.
        let spec = job_spec(dir.path(), &sim.url(), 2);
        let o = chainetl(&["run", &spec, "-q"]);
        assert!(o.status.success(), "{point}: resume failed: {}", text(&o));
        assert_exact(dir.path());
    }
}

#[test]
fn sigterm_commits_and_exits_143_then_resume_completes() {
    let sim = slow_sim();
    let dir = tempfile::tempdir().unwrap();
    let spec = job_spec(dir.path(), &sim.url(), 2);
    let child = bin()
        .args(["run", &spec])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let sent = Instant::now();
    let st = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let o = child.wait_with_output().unwrap();
    assert!(sent.elapsed() < Duration::from_secs(10), "must exit within seconds");
    assert_eq!(o.status.code(), Some(143), "{}", text(&o));
    let status = chainetl(&["status", &spec]);
    assert!(String::from_utf8_lossy(&status.stdout).contains("incomplete"), "{}", text(&status));
    let o = chainetl(&["run", &spec, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_exact(dir.path());
    let status = chainetl(&["status", &spec]);
    assert!(String::from_utf8_lossy(&status.stdout).contains("complete"), "{}", text(&status));
}

#[test]
fn a_changed_spec_is_refused_unless_fresh() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let spec = job_spec(dir.path(), &sim.url(), 2);
    assert!(chainetl(&["run", &spec, "-q"]).status.success());
    let changed = std::fs::read_to_string(&spec).unwrap().replace("\"polygon\"", "\"base\"").replace(
        &chainetl::vocab::evm::hex0x(&contract(Chain::Polygon)),
        &chainetl::vocab::evm::hex0x(&contract(Chain::Base)),
    );
    std::fs::write(&spec, changed).unwrap();
    let o = chainetl(&["run", &spec]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("different spec") && text(&o).contains("--fresh"), "{}", text(&o));
    let o = chainetl(&["run", &spec, "--fresh", "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let got = read_rows(&dir.path().join("out/events"), &["chain"]);
    assert!(got.iter().all(|r| r[0] != "polygon"), "--fresh removes the earlier output");
    assert!(got.iter().any(|r| r[0] == "base"));
}

#[test]
fn an_interrupted_fresh_is_finished_by_the_next_run() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let spec = job_spec(dir.path(), &sim.url(), 2);
    assert!(chainetl(&["run", &spec, "-q"]).status.success());
    // `--fresh` dies after deleting two data files: had the checkpoints
    // outlived them, the next run would find every unit done and leave the
    // rows of those files missing.
    let o = crash_bin("during-fresh:2").args(["run", &spec, "--fresh", "-q"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("failpoint during-fresh"),
        "{}",
        text(&o)
    );
    let status = chainetl(&["status", &spec]);
    assert!(String::from_utf8_lossy(&status.stdout).contains("not started"), "{}", text(&status));
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("earlier --fresh did not finish"), "{}", text(&o));
    assert_exact(dir.path());
    assert!(!dir.path().join("out/_chainetl/crashy/clearing.json").exists());
}
