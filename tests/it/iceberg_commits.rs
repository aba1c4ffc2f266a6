//! What an Iceberg commit must hold beyond its metadata version, each
//! reproduced first as the defect it was:
//!
//! - the version hint readers of the file-system layout follow is part of
//!   the commit: a run killed between the two leaves `verify` failing
//!   (not passing on a table readers see empty or short), and the next
//!   writer — a run, `compact`, `vacuum`, `verify --repair` — points it;
//! - a vacuum leaves the manifests of another job's commit in flight,
//!   whatever the snapshot retention, and a commit whose own files are
//!   gone when it names them fails instead of breaking the table;
//! - a parquet job converted to Iceberg is re-partitioned from its
//!   adopted files (whose list items carry no field id).

use crate::changing::dead_url;
use crate::common::*;
use crate::delta::keys_of;
use crate::iceberg_format::{check, every_snapshot_exact};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A job `name` exporting ethereum's events of `window` into `out` in
/// `format`, not compacting at the end of its runs, with a 1 s retention.
fn events_job(dir: &Path, name: &str, url: &str, out: &Path, format: &str, window: &str, extra: &str) -> String {
    let body = format!(
        "name = \"{name}\"\n[source]\nbase_url = \"{url}\"\nmax_concurrency = 1\nmax_retries = 1\n[output]\nuri = \"{}\"\n\
         format = \"{format}\"\ncompact = false\ndelta_retention = \"1s\"\n{extra}\n[[export]]\ndataset = \"events\"\n\
         chains = [\"ethereum\"]\nwindow = \"{window}\"\nchunk_blocks = 100\n",
        out.display()
    );
    write_spec(dir, &format!("{name}-{format}.toml"), &body)
}

/// What `metadata/version-hint.text` of `table` names.
fn hint(table: &Path) -> u64 {
    std::fs::read_to_string(table.join("metadata/version-hint.text"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// The newest `v<N>.metadata.json` of `table`.
fn newest(table: &Path) -> u64 {
    names(&table.join("metadata"))
        .iter()
        .filter_map(|n| n.strip_prefix('v')?.strip_suffix(".metadata.json")?.parse().ok())
        .max()
        .unwrap()
}

fn names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// The events table read through its hint (pyiceberg's StaticTable), each
/// snapshot exact, holds the rows of the parquet export `pq`.
fn reads_as(table: &Path, pq: &Path, what: &str) {
    let doc = check(table, keys_of("events"), Some(&pq.join("events")));
    every_snapshot_exact(&doc, what);
    assert_eq!(doc["rows"], doc["parquet_rows"], "{what}: every row once, none missing");
}

/// A run killed between its last commit's metadata version and the hint:
/// readers that follow the hint read an older table; `verify` says so
/// (exit 1, naming the hint) instead of passing; the re-run (no request)
/// points the hint at the newest version, and every reader then reads
/// every row.
#[test]
fn a_run_killed_between_a_metadata_version_and_its_hint_leaves_verify_failing_until_the_next_writer_points_it() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (pq, ice, count) = (dir.path().join("pq"), dir.path().join("ice"), dir.path().join("count"));
    let window = "22000000..22000299";
    for (out, format) in [(&pq, "parquet"), (&count, "iceberg")] {
        let o = chainetl(&["run", &events_job(dir.path(), "hint", &sim.url(), out, format, window, "")]);
        assert!(o.status.success(), "{}", text(&o));
    }
    // The last version a whole run writes.
    let last = newest(&count.join("events"));
    assert!(last >= 3, "the table is created, then committed to more than once: v{last}");
    let spec = events_job(dir.path(), "hint", &sim.url(), &ice, "iceberg", window, "");
    let o = crash_bin(&format!("table-version-written:{last}"))
        .args(["run", &spec, "-q"])
        .output()
        .unwrap();
    assert!(!o.status.success(), "the run should have died\n{}", text(&o));
    let table = ice.join("events");
    assert_eq!(
        (hint(&table), newest(&table)),
        (last - 1, last),
        "killed between the version and its hint"
    );
    let v = chainetl(&["verify", &spec]);
    assert_eq!(v.status.code(), Some(1), "verify reports the hint behind: {}", text(&v));
    assert!(text(&v).contains("version-hint.text"), "{}", text(&v));
    let spec = events_job(dir.path(), "hint", &dead_url(), &ice, "iceberg", window, "");
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(hint(&table), newest(&table), "the re-run points the hint at the newest version");
    reads_as(&table, &pq, "after the re-run");
    let leftovers: Vec<String> = names(&table.join("metadata")).into_iter().filter(|n| n.ends_with(".tmp")).collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let v = chainetl(&["verify", &spec]);
    assert!(v.status.success(), "{}", text(&v));
}

/// A hint left behind (as by a writer that died between a version and
/// it) is reported by `verify` and pointed at the newest version by each
/// writer of the table, even one with nothing to commit: `verify
/// --repair`, `compact`, `vacuum` and a run.
#[test]
fn every_writer_points_a_hint_left_behind_at_the_newest_version() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (pq, ice) = (dir.path().join("pq"), dir.path().join("ice"));
    let window = "22000000..22000199";
    let o = chainetl(&["run", &events_job(dir.path(), "writers", &sim.url(), &pq, "parquet", window, "")]);
    assert!(o.status.success(), "{}", text(&o));
    let spec = events_job(dir.path(), "writers", &sim.url(), &ice, "iceberg", window, "");
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let table = ice.join("events");
    let spec = events_job(dir.path(), "writers", &dead_url(), &ice, "iceberg", window, "");
    for writer in [&["verify", "--repair"][..], &["compact"], &["vacuum"], &["run"]] {
        std::fs::write(table.join("metadata/version-hint.text"), "1").unwrap();
        let v = chainetl(&["verify", &spec]);
        assert_eq!(v.status.code(), Some(1), "{writer:?}: {}", text(&v));
        assert!(text(&v).contains("version-hint.text"), "{}", text(&v));
        let mut args = vec![writer[0], spec.as_str()];
        args.extend(&writer[1..]);
        let o = chainetl(&args);
        assert!(o.status.success(), "{writer:?}: {}", text(&o));
        assert_eq!(hint(&table), newest(&table), "{writer:?} points the hint at the newest version");
        reads_as(&table, &pq, &format!("after {writer:?}"));
        let v = chainetl(&["verify", &spec]);
        assert!(v.status.success(), "{writer:?}: {}", text(&v));
    }
}

/// `chainetl <args>` started and frozen (SIGSTOP) at crash point `point`.
fn frozen_at(point: &str, args: &[&str]) -> Child {
    let mut child = crash_bin(&format!("{point}:1:stop"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !crate::lease::stopped(child.id()) {
        if child.try_wait().unwrap().is_some() {
            panic!("{args:?} ended before {point}: {}", text(&child.wait_with_output().unwrap()));
        }
        assert!(t.elapsed() < Duration::from_secs(60), "{args:?} never reached {point}");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// Thaws a [`frozen_at`] process and waits for it.
fn thawed(child: Child) -> std::process::Output {
    // SAFETY: kill only sends a signal to the child we started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGCONT) }, 0);
    child.wait_with_output().unwrap()
}

/// Two jobs sharing an Iceberg table with a 1 s retention. One's
/// compaction is paused after writing its manifests; the other's vacuum
/// meanwhile leaves them (they may be joining a commit, whatever the
/// retention), so the compaction commits a table every reader reads
/// exactly. Then a compaction paused while its own manifests are deleted
/// under it (as an orphan removal with a short age would): it fails
/// rather than name them, the table stays readable, and compacting again
/// succeeds.
#[test]
fn a_vacuum_leaves_the_manifests_of_another_jobs_commit_in_flight() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (pq, ice) = (dir.path().join("pq"), dir.path().join("ice"));
    let o = chainetl(&[
        "run",
        &events_job(dir.path(), "both", &sim.url(), &pq, "parquet", "20000000..20000399", ""),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let a = events_job(dir.path(), "ja", &sim.url(), &ice, "iceberg", "20000000..20000199", "");
    let b = events_job(dir.path(), "jb", &sim.url(), &ice, "iceberg", "20000200..20000399", "");
    for spec in [&a, &b] {
        let o = chainetl(&["run", spec]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let table = ice.join("events");
    let compacting = frozen_at("table-manifests-written", &["compact", &a]);
    std::thread::sleep(Duration::from_millis(1200));
    let o = chainetl(&["vacuum", &b]);
    assert!(o.status.success(), "{}", text(&o));
    let o = thawed(compacting);
    assert!(o.status.success(), "the paused compaction commits: {}", text(&o));
    reads_as(&table, &pq, "after a compaction that was paused across a vacuum");
    for spec in [&a, &b] {
        let v = chainetl(&["verify", spec]);
        assert!(v.status.success(), "{}", text(&v));
    }

    let before: std::collections::HashSet<String> = names(&table.join("metadata")).into_iter().collect();
    let compacting = frozen_at("table-manifests-written", &["compact", &b]);
    let staged: Vec<String> = names(&table.join("metadata"))
        .into_iter()
        .filter(|n| n.ends_with(".avro") && !before.contains(n))
        .collect();
    assert!(!staged.is_empty(), "the compaction wrote its manifests");
    for n in &staged {
        std::fs::remove_file(table.join("metadata").join(n)).unwrap();
    }
    std::thread::sleep(Duration::from_millis(5500));
    let o = thawed(compacting);
    assert_eq!(o.status.code(), Some(1), "a commit whose files are gone fails: {}", text(&o));
    assert!(text(&o).contains("is gone"), "{}", text(&o));
    reads_as(&table, &pq, "after a compaction that failed");
    let o = chainetl(&["compact", &b]);
    assert!(o.status.success(), "{}", text(&o));
    reads_as(&table, &pq, "after compacting again");
    for spec in [&a, &b] {
        let v = chainetl(&["verify", spec]);
        assert!(v.status.success(), "{}", text(&v));
    }
}

/// A parquet events job converted to Iceberg (its files adopted as they
/// are, list items without field ids), then re-partitioned: the rewrite
/// writes the table's ids into every column, nested ones included.
#[test]
fn a_parquet_job_converted_to_iceberg_is_repartitioned() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (pq, out) = (dir.path().join("pq"), dir.path().join("out"));
    let job = |url: &str, out: &Path, format: &str, extra: &str| {
        let body = format!(
            "name = \"rp\"\n[source]\nbase_url = \"{url}\"\nmax_retries = 1\n[output]\nuri = \"{}\"\nformat = \"{format}\"\n{extra}\n\
             [[export]]\ndataset = \"events\"\nchains = [\"base\"]\nwindow = \"14001560..14001609\"\nchunk_blocks = 35\n",
            out.display()
        );
        write_spec(dir.path(), &format!("rp-{format}-{}.toml", extra.len()), &body)
    };
    for o in [&pq, &out] {
        let r = chainetl(&["run", &job(&sim.url(), o, "parquet", "")]);
        assert!(r.status.success(), "{}", text(&r));
    }
    let r = chainetl(&["run", &job(&dead_url(), &out, "iceberg", "")]);
    assert!(r.status.success(), "{}", text(&r));
    let spec = job(&dead_url(), &out, "iceberg", "partition_by = [\"chain\"]");
    let r = chainetl(&["run", &spec]);
    assert!(r.status.success(), "{}", text(&r));
    let doc = check(&out.join("events"), keys_of("events"), Some(&pq.join("events")));
    every_snapshot_exact(&doc, "events");
    assert_eq!(doc["rows"], doc["parquet_rows"], "the parquet export's rows");
    assert_eq!(doc["partitions"], serde_json::json!(["chain=identity(chain)"]));
    let v = chainetl(&["verify", &spec]);
    assert!(v.status.success(), "{}", text(&v));
}
