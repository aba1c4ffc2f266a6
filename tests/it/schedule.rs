//! Scheduled (aligned), incremental and follow runs, and reorg repair,
//! checked row by row against the simulator's ground truth.

use crate::common::*;
use crate::truth;
use chainetl::sim::data::SimData;
use chainetl::vocab::chain::Chain;
use std::path::Path;

const T0: &str = "2025-06-01T00:00:00Z";

pub(crate) fn post(sim: &Sim, path: &str) -> String {
    let url = format!("{}{path}", sim.url());
    sim.rt.block_on(async {
        let r = http_client().post(url).send().await.unwrap();
        assert!(r.status().is_success(), "{path}: {}", r.status());
        r.text().await.unwrap()
    })
}

pub(crate) fn head_at(data: &SimData, chain: Chain, iso: &str) -> u64 {
    data.head(chain, chainetl::vocab::window::parse_instant(iso).unwrap() * 1000)
}

fn mark_next(out: &Path, job: &str, export: usize, chain: &str) -> u64 {
    read_json(&out.join(format!("_chainetl/{job}/marks/e{export}-{chain}.json")))["next"]
        .as_u64()
        .unwrap()
}

fn incremental_spec(url: &str, out: &Path, start: u64, extra: &str) -> String {
    format!(
        r#"name = "inc"
{extra}
[source]
base_url = "{url}"
[output]
uri = "{}"
[[export]]
dataset = "blocks"
chains = ["base"]
incremental = true
start = {start}
confirmations = {{ base = 20 }}
chunk_blocks = 64
[[export]]
dataset = "events"
chains = ["base"]
incremental = true
start = {start}
confirmations = 20
chunk_blocks = 64
"#,
        out.display()
    )
}

fn assert_exact(out: &Path, data: &SimData, start: u64, last: u64) {
    let blocks = read_rows(&out.join("blocks"), truth::BLOCK_COLS);
    assert_eq!(blocks.len() as u64, last - start + 1, "blocks {start}..={last}");
    assert_eq!(blocks, truth::blocks(data, Chain::Base, start..=last));
    let events = read_rows(&out.join("events"), truth::EVENT_COLS);
    assert_eq!(events, truth::events(data, Chain::Base, start, last, &[], None));
}

#[test]
fn incremental_runs_add_only_the_new_range_and_repair_a_reorg() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let data = SimData::new(42, 30);
    let head = head_at(&data, Chain::Base, T0);
    let start = head - 200;
    let spec = write_spec(dir.path(), "inc.toml", &incremental_spec(&sim.url(), &out, start, ""));

    let o = chainetl(&["run", &spec, "--progress-secs", "0"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(mark_next(&out, "inc", 0, "base"), head - 20 + 1);
    assert_exact(&out, &data, start, head - 20);
    let first_files = parquet_files(&out);

    // Nothing new: no file written, exit 0.
    let o = chainetl(&["run", &spec, "--progress-secs", "0"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(parquet_files(&out), first_files);

    // The head moves 60 blocks: the second run adds exactly the new range.
    post(&sim, "/_sim/advance?secs=120");
    let head2 = head + 60;
    let o = chainetl(&["run", &spec, "--progress-secs", "0"]);
    assert!(o.status.success(), "{}", text(&o));
    let files = parquet_files(&out);
    assert!(first_files.iter().all(|f| files.contains(f)), "earlier files were rewritten");
    assert_exact(&out, &data, start, head2 - 20);

    // A reorg deeper than the confirmations replaces exported blocks.
    post(&sim, "/_sim/reorg?depth=45&chain=base");
    data.reorg(Chain::Base, head2 + 1 - 45);
    let o = chainetl(&["run", &spec, "--progress-secs", "0"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("reorg"), "{}", text(&o));
    assert_exact(&out, &data, start, head2 - 20);
    let reports = std::fs::read_dir(out.join("_chainetl/inc/runs")).unwrap();
    let reorgs: usize = reports
        .flatten()
        .filter(|e| e.file_name() != "latest.json")
        .map(|e| {
            let v: serde_json::Value = serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap();
            v["reorgs"].as_array().map_or(0, |a| a.len())
        })
        .sum();
    assert!(reorgs >= 1, "the run report counts the reorg");

    // `status` shows the high-water mark and the repaired reorg.
    let o = chainetl(&["status", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let want = format!(
        "export[0] base: incremental, exported blocks below {} (1 reorg repaired)",
        head2 - 20 + 1
    );
    assert!(text(&o).contains(&want), "want {want:?} in:\n{}", text(&o));
}

#[test]
fn aligned_daily_runs_keep_one_copy_per_day() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let spec = write_spec(
        dir.path(),
        "daily.toml",
        &format!(
            r#"name = "daily"
[source]
base_url = "sim"
[source.sim]
frozen_at = "2025-06-01T13:00:00Z"
[output]
uri = "{}"
[[export]]
dataset = "blocks"
chains = ["base"]
window = "1d"
align = "day"
"#,
            out.display()
        ),
    );
    let data = SimData::new(42, 40);
    let day = |d: &str| {
        let t = chainetl::vocab::window::parse_instant(d).unwrap();
        data.blocks_in_time(Chain::Base, t, t + 86_400, false)
    };
    let (a, b) = day("2025-05-31");
    for _ in 0..2 {
        let o = chainetl(&["run", &spec, "--progress-secs", "0"]);
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(
            read_rows(&out.join("blocks"), truth::BLOCK_COLS),
            truth::blocks(&data, Chain::Base, a..b)
        );
    }
    assert!(out.join("blocks/chain=base/date=2025-05-31").is_dir());
    assert_eq!(std::fs::read_dir(out.join("blocks/chain=base")).unwrap().count(), 1);

    // A backfill of the day before with --as-of, twice.
    for _ in 0..2 {
        let o = chainetl(&["run", &spec, "--progress-secs", "0", "--as-of", "2025-05-31T05:00:00Z"]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let (c, _) = day("2025-05-30");
    assert_eq!(
        read_rows(&out.join("blocks"), truth::BLOCK_COLS),
        truth::blocks(&data, Chain::Base, c..b)
    );
    let o = chainetl(&["status", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    for period in [
        "2025-05-30T00:00:00Z..2025-05-31T00:00:00Z",
        "2025-05-31T00:00:00Z..2025-06-01T00:00:00Z",
    ] {
        let want = format!("export[0]: aligned period {period} exported");
        assert!(text(&o).contains(&want), "want {want:?} in:\n{}", text(&o));
    }
}

/// A `--follow` run of the incremental spec from 100 blocks before the
/// head of base, polling every second.
struct Follower {
    sim: Sim,
    _dir: tempfile::TempDir,
    out: std::path::PathBuf,
    data: SimData,
    head: u64,
    start: u64,
    child: std::process::Child,
}

fn follow(args: &[&str]) -> Follower {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let data = SimData::new(42, 30);
    let head = head_at(&data, Chain::Base, T0);
    let start = head - 100;
    let spec = write_spec(
        dir.path(),
        "follow.toml",
        &incremental_spec(&sim.url(), &out, start, "poll_interval = \"1s\"\nroll_interval = \"1s\""),
    );
    let child = bin()
        .args(["run", &spec, "--follow", "--progress-secs", "0"])
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    Follower {
        sim,
        _dir: dir,
        out,
        data,
        head,
        start,
        child,
    }
}

/// Stops a follower with SIGTERM; it exits 143. Returns its stderr.
pub(crate) fn stop(child: std::process::Child) -> String {
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(143), "{stderr}");
    stderr
}

#[test]
fn follow_exports_confirmed_blocks_until_sigterm_across_a_reorg() {
    let f = follow(&[]);
    for i in 0..4 {
        std::thread::sleep(std::time::Duration::from_millis(1500));
        post(&f.sim, "/_sim/advance?secs=30");
        if i == 1 {
            // A reorg deeper than the confirmations, while following: blocks
            // already exported change, and the follower must repair them.
            std::thread::sleep(std::time::Duration::from_millis(1500));
            let forks: Vec<chainetl::sim::data::Fork> = serde_json::from_str(&post(&f.sim, "/_sim/reorg?depth=60&chain=base")).unwrap();
            forks.into_iter().for_each(|fork| f.data.add_fork(fork));
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let (out, head, start) = (&f.out, f.head, f.start);
    let stderr = stop(f.child);
    assert!(stderr.contains("reorg"), "the reorg is logged: {stderr}");
    let next = mark_next(out, "inc", 0, "base");
    // Caught up, then followed at least two of the head's moves.
    assert!(next > head - 20 + 30, "mark {next} did not follow the head {head}");
    assert!(next <= head + 60 - 20 + 1, "exported unconfirmed blocks: mark {next}");
    let blocks = read_rows(&out.join("blocks"), truth::BLOCK_COLS);
    let last = start + blocks.len() as u64 - 1;
    assert!(last + 1 >= next, "committed blocks are missing");
    assert_exact(out, &f.data, start, last);
}

#[test]
fn a_follow_run_lists_the_output_for_orphans_only_on_its_first_pass() {
    let f = follow(&["-v"]);
    let mut marks = Vec::new();
    for _ in 0..5 {
        std::thread::sleep(std::time::Duration::from_millis(1500));
        post(&f.sim, "/_sim/advance?secs=30");
        if f.out.join("_chainetl/inc/marks/e0-base.json").exists() {
            marks.push(mark_next(&f.out, "inc", 0, "base"));
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(2000));
    let stderr = stop(f.child);
    marks.dedup();
    assert!(marks.len() >= 3, "the follower exported at least three new segments: {marks:?}");
    // Per table: the first pass's orphan cleanup and the first compaction
    // pass; the passes after it cut new segments, whose units no run
    // started, and leave compaction for ten minutes.
    let listings = stderr.matches("listing the job's data files").count();
    assert!(
        listings <= 2 * 2,
        "{listings} listings of the output for {} segments: {stderr}",
        marks.len()
    );
    let last = f.start + read_rows(&f.out.join("blocks"), truth::BLOCK_COLS).len() as u64 - 1;
    assert_exact(&f.out, &f.data, f.start, last);
}
