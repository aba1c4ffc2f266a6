//! Backfills at scale: finished units' checkpoints are folded into
//! manifests, so state stays a handful of objects. A kill -9 while folding
//! or merging loses no unit and duplicates no row; shards finishing units
//! at once each fold their own, and a run holding the whole job merges
//! them into one.

use crate::common::*;
use crate::truth;
use chainetl::sim::data::SimData;
use chainetl::vocab::chain::Chain;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

fn spec(dir: &Path, url: &str) -> String {
    spec_compacting(dir, url, false)
}

fn spec_compacting(dir: &Path, url: &str, compact: bool) -> String {
    let contract = chainetl::vocab::evm::hex0x(&SimData::new(42, 30).token_address(Chain::Base, 10));
    write_spec(
        dir,
        "scale.toml",
        &format!(
            r#"name = "scale"
[source]
base_url = "{url}"
page_size = 200
max_concurrency = 4
[output]
uri = "{}"
compact = {compact}
[[export]]
dataset = "events"
chains = ["base"]
window = "20000000..20011999"
chunk_blocks = 500
contract_address = "{contract}"
"#,
            dir.join("out").display()
        ),
    )
}

/// The job's state files under `sub` (`units`, `manifests`).
fn state_files(dir: &Path, sub: &str) -> Vec<PathBuf> {
    match std::fs::read_dir(dir.join("out/_chainetl/scale").join(sub)) {
        Ok(rd) => rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn rows(dir: &Path) -> Vec<Vec<String>> {
    read_rows(&dir.join("out/events"), truth::EVENT_COLS)
}

/// Rows of an uninterrupted, unsharded run.
fn reference(url: &str) -> Vec<Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let o = chainetl(&["run", &spec(dir.path(), url), "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let r = rows(dir.path());
    assert!(!r.is_empty());
    r
}

fn assert_done_in_one_manifest(dir: &Path, spec: &str, want: &[Vec<String>]) {
    assert!(rows(dir) == want, "rows differ from an uninterrupted run");
    assert_eq!(
        state_files(dir, "units"),
        Vec::<PathBuf>::new(),
        "finished units keep no per-unit checkpoint"
    );
    assert_eq!(state_files(dir, "manifests").len(), 1, "{:?}", state_files(dir, "manifests"));
    let o = chainetl(&["status", spec]);
    let t = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(t.contains("24/24") && t.contains("complete"), "{t}");
    let o = chainetl(&["run", spec]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains(" 0 requests"), "{}", text(&o));
}

#[test]
fn kill_9_while_folding_checkpoints_into_a_manifest_loses_no_unit() {
    let sim = Sim::start(frozen());
    let want = reference(&sim.url());
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), &sim.url());
    let o = crash_bin("during-fold:1").args(["run", &spec, "-q"]).output().unwrap();
    assert!(!o.status.success(), "the failpoint must crash the run");
    assert!(String::from_utf8_lossy(&o.stderr).contains("failpoint"), "{}", text(&o));
    // The manifest is written, the per-unit checkpoints not yet deleted.
    assert_eq!(state_files(dir.path(), "manifests").len(), 1);
    assert_eq!(state_files(dir.path(), "units").len(), 24);
    let o = chainetl(&["status", &spec]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("24/24"), "{}", text(&o));
    let o = chainetl(&["run", &spec, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_done_in_one_manifest(dir.path(), &spec, &want);
}

#[test]
fn three_shards_at_once_fold_their_units_and_a_whole_job_run_merges_them_into_one_manifest() {
    let sim = Sim::start(frozen());
    let want = reference(&sim.url());
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), &sim.url());
    let children: Vec<Child> = (1..=3)
        .map(|k| {
            bin()
                .args(["run", &spec, "-q", "--shard", &format!("{k}/3")])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
    }
    assert!(rows(dir.path()) == want, "rows differ from an unsharded run");
    assert_eq!(state_files(dir.path(), "units"), Vec::<PathBuf>::new());
    assert_eq!(state_files(dir.path(), "manifests").len(), 3, "each shard folds its own units");
    // A whole-job run killed while merging, then again: one manifest.
    let o = crash_bin("during-merge:1").args(["run", &spec, "-q"]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("failpoint"), "{}", text(&o));
    assert_eq!(
        state_files(dir.path(), "manifests").len(),
        4,
        "merged, the merged ones not yet deleted"
    );
    let o = chainetl(&["run", &spec, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_done_in_one_manifest(dir.path(), &spec, &want);
}

/// Every state object of the job but run reports and leases, relative to
/// its state directory.
fn state_objects(dir: &Path) -> Vec<String> {
    let root = dir.join("out/_chainetl/scale");
    let mut out = Vec::new();
    let mut todo = vec![root.clone()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(&root).unwrap().to_string_lossy().to_string();
            if rel.starts_with("runs") || rel.starts_with("leases") {
                continue;
            }
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_finished_compacted_job_is_a_few_state_objects_and_a_no_op_rerun_lists_no_data_file() {
    let sim = Sim::start(frozen());
    let want = reference(&sim.url());
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_compacting(dir.path(), &sim.url(), true);
    let o = chainetl(&["run", &spec, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(rows(dir.path()) == want, "rows differ from a run without compaction");
    let objects = state_objects(dir.path());
    let names: Vec<&str> = objects.iter().map(|o| o.split('/').next().unwrap()).collect();
    assert_eq!(names, ["compactions.json", "job.json", "manifests"], "{objects:?}");
    let index = read_json(&dir.path().join("out/_chainetl/scale/compactions.json"));
    assert!(!index["records"].as_array().unwrap().is_empty(), "{index}");
    assert!(index["settled"].is_string(), "{index}");
    let o = chainetl(&["run", &spec, "-v"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains(" 0 requests"), "{}", text(&o));
    assert!(
        !text(&o).contains("listing the job's data files"),
        "a no-op re-run listed the output: {}",
        text(&o)
    );
    assert_eq!(state_objects(dir.path()), objects, "a no-op re-run changes no state");
    // The same event is what a listing logs.
    let o = chainetl(&["verify", &spec, "-v"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("listing the job's data files"), "{}", text(&o));
}

#[test]
fn a_job_an_older_build_started_carries_on_and_is_marked_so_older_builds_refuse_it() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), &sim.url());
    assert!(chainetl(&["run", &spec, "-q"]).status.success());
    let want = rows(dir.path());
    // The state as a build of format 1 left it: a checkpoint per unit.
    let state = dir.path().join("out/_chainetl/scale");
    let manifests = state_files(dir.path(), "manifests");
    assert_eq!(manifests.len(), 1);
    for mut u in read_json(&manifests[0])["units"].as_array().unwrap().clone() {
        u["version"] = 1.into();
        let path = state.join("units").join(format!("{}.json", u["unit"].as_str().unwrap()));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, serde_json::to_vec_pretty(&u).unwrap()).unwrap();
    }
    std::fs::remove_dir_all(state.join("manifests")).unwrap();
    let job_path = state.join("job.json");
    edit_json(&job_path, |job| job["version"] = 1.into());
    let o = chainetl(&["status", &spec]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("24/24"), "{}", text(&o));

    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains(" 0 requests"), "{}", text(&o));
    let job = read_json(&job_path);
    assert_eq!(job["version"], 2, "a build of format 1 must refuse the job now: {job}");
    assert_done_in_one_manifest(dir.path(), &spec, &want);
}

#[test]
fn a_job_run_only_in_shards_has_its_manifests_merged_by_compact() {
    let sim = Sim::start(frozen());
    let want = reference(&sim.url());
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), &sim.url());
    for k in 1..=3 {
        let o = chainetl(&["run", &spec, "-q", "--shard", &format!("{k}/3")]);
        assert!(o.status.success(), "{}", text(&o));
    }
    assert_eq!(state_files(dir.path(), "manifests").len(), 3, "each shard folds its own units");
    let o = chainetl(&["compact", &spec, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_done_in_one_manifest(dir.path(), &spec, &want);
}
