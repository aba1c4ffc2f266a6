//! Incremental exports and `--follow` into Delta tables: each segment
//! joins the tables whole, a reorg repair's new branch replaces the old in
//! one commit; every version checked block by block.

use crate::common::*;
use crate::delta::{check, every_version_exact, keys_of};
use crate::schedule::{head_at, post, stop};
use chainetl::sim::data::SimData;
use chainetl::vocab::chain::Chain;
use std::path::Path;

/// An incremental job into Delta tables: each segment joins the tables
/// whole, in one commit a table, once checked against the chain; a reorg
/// repair's new branch replaces the old in one commit. At no version do
/// blocks of both branches sit side by side, nor any block twice; kill -9
/// around the commits, then a re-run: exact.
#[test]
fn an_incremental_delta_job_swaps_a_reorged_branch_in_one_commit() {
    incremental_reorg("delta", check);
}

/// [`an_incremental_delta_job_swaps_a_reorged_branch_in_one_commit`] in
/// Iceberg tables: the repair is one `overwrite` snapshot a table.
#[test]
fn an_incremental_iceberg_job_swaps_a_reorged_branch_in_one_snapshot() {
    incremental_reorg("iceberg", crate::iceberg_format::check);
}

/// A table's reading as a format's checker gives it (`versions`, `rows`).
type Checker = fn(&Path, &[&str], Option<&Path>) -> serde_json::Value;

fn incremental_reorg(format: &str, check: Checker) {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let data = SimData::new(42, 30);
    let head = head_at(&data, Chain::Base, "2025-06-01T00:00:00Z");
    let start = head - 200;
    let spec = write_spec(
        dir.path(),
        "inc.toml",
        &format!(
            "name = \"dinc\"\n[source]\nbase_url = \"{}\"\n[output]\nuri = \"{}\"\nformat = \"{format}\"\n\
             [[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nincremental = true\nstart = {start}\nconfirmations = 20\nchunk_blocks = 64\n\
             [[export]]\ndataset = \"events\"\nchains = [\"base\"]\nincremental = true\nstart = {start}\nconfirmations = 20\nchunk_blocks = 64\n",
            sim.url(),
            out.display()
        ),
    );
    let exact = |last: u64| assert_eq!(incremental_exact(&out, &data, start, check), last);
    let o = chainetl(&["run", &spec, "--progress-secs", "0"]);
    assert!(o.status.success(), "{}", text(&o));
    exact(head - 20);
    post(&sim, "/_sim/advance?secs=120");
    let head2 = head + 60;
    let o = chainetl(&["run", &spec, "--progress-secs", "0"]);
    assert!(o.status.success(), "{}", text(&o));
    exact(head2 - 20);
    // A reorg deeper than the confirmations; the repairing run dies
    // before, then after, the swap's commit.
    post(&sim, "/_sim/reorg?depth=45&chain=base");
    data.reorg(Chain::Base, head2 + 1 - 45);
    for point in ["before-delta-commit:1", "after-delta-commit:1"] {
        let o = crash_bin(point).args(["run", &spec, "--progress-secs", "0"]).output().unwrap();
        assert!(!o.status.success(), "{point}: the run should have died\n{}", text(&o));
        assert!(text(&o).contains("reorg") || point != "before-delta-commit:1", "{}", text(&o));
    }
    let o = chainetl(&["run", &spec, "--progress-secs", "0"]);
    assert!(o.status.success(), "{}", text(&o));
    exact(head2 - 20);
    let o = chainetl(&["status", &spec]);
    assert!(text(&o).contains("1 reorg repaired"), "{}", text(&o));
    let o = chainetl(&["verify", &spec]);
    assert!(o.status.success(), "{}", text(&o));
}

/// The blocks and events tables of an incremental job from `start`: at
/// every version no block twice, no blocks of two branches side by side,
/// none missing, never fewer; the last version exactly the chain's blocks
/// from `start` and their events. Returns the last block.
fn incremental_exact(out: &Path, data: &SimData, start: u64, check: Checker) -> u64 {
    let doc = check(&out.join("blocks"), keys_of("blocks"), None);
    for v in doc["versions"].as_array().unwrap() {
        assert_eq!(v["rows"], v["distinct"], "blocks version {}: a block twice", v["version"]);
        assert_eq!(
            v["broken_links"], 0,
            "blocks version {}: two branches side by side: {v}",
            v["version"]
        );
        assert_eq!(v["gaps"], 0, "blocks version {}: blocks missing: {v}", v["version"]);
    }
    // A repair swaps a block for its new branch's: never fewer blocks.
    let rows = every_version_exact(&doc, "blocks");
    assert!(rows > 0, "no blocks");
    let last = start + rows - 1;
    let got: std::collections::BTreeMap<u64, String> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let r: serde_json::Value = serde_json::from_str(r.as_str().unwrap()).unwrap();
            (
                r["number"].as_str().unwrap().parse().unwrap(),
                r["hash"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: std::collections::BTreeMap<u64, String> = crate::truth::blocks(data, Chain::Base, start..=last)
        .into_iter()
        .map(|r| (r[1].parse().unwrap(), r[2].clone()))
        .collect();
    assert_eq!(got, want, "blocks {start}..={last}");
    let events = check(&out.join("events"), keys_of("events"), None);
    for v in events["versions"].as_array().unwrap() {
        assert_eq!(v["rows"], v["distinct"], "events version {}: a row twice", v["version"]);
    }
    let want = crate::truth::events(data, Chain::Base, start, last, &[], None).len();
    assert_eq!(events["rows"].as_array().unwrap().len(), want, "events {start}..={last}");
    last
}

/// `--follow` into Delta tables across a reorg: each poll's segment joins
/// the tables in one commit a table, the repair swaps the new branch in
/// in one commit; SIGTERM stops it with every version exact.
#[test]
fn following_into_delta_tables_across_a_reorg_keeps_every_version_exact() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let data = SimData::new(42, 30);
    let head = head_at(&data, Chain::Base, "2025-06-01T00:00:00Z");
    let start = head - 100;
    let spec = write_spec(
        dir.path(),
        "follow.toml",
        &format!(
            "name = \"dfol\"\npoll_interval = \"1s\"\nroll_interval = \"1s\"\n[source]\nbase_url = \"{}\"\n[output]\nuri = \"{}\"\nformat = \"delta\"\n\
             [[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nincremental = true\nstart = {start}\nconfirmations = 20\nchunk_blocks = 64\n\
             [[export]]\ndataset = \"events\"\nchains = [\"base\"]\nincremental = true\nstart = {start}\nconfirmations = 20\nchunk_blocks = 64\n",
            sim.url(),
            out.display()
        ),
    );
    let child = bin()
        .args(["run", &spec, "--follow", "--progress-secs", "0"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    for i in 0..4 {
        std::thread::sleep(std::time::Duration::from_millis(1500));
        post(&sim, "/_sim/advance?secs=30");
        if i == 1 {
            std::thread::sleep(std::time::Duration::from_millis(1500));
            let forks: Vec<chainetl::sim::data::Fork> = serde_json::from_str(&post(&sim, "/_sim/reorg?depth=60&chain=base")).unwrap();
            forks.into_iter().for_each(|fork| data.add_fork(fork));
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let stderr = stop(child);
    assert!(stderr.contains("reorg"), "the reorg is logged: {stderr}");
    let last = incremental_exact(&out, &data, start, check);
    assert!(last > head - 20 + 30, "followed the head: last block {last}, head {head}");
}
