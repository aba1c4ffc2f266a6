//! Operations begun and not finished: `verify` and `status`
//! name an interrupted compaction swap as what it is (not as damaged
//! files), and `verify --repair` finishes it first, with no request to the
//! service, then repairs only what is really missing.

use crate::common::*;
use crate::compact::{BLOCK_KEY, EVENT_KEY, reference, spec};

#[test]
fn an_interrupted_swap_is_named_by_verify_and_status_and_repair_finishes_it_with_no_request() {
    let sim = Sim::start(frozen());
    let (_r, ev, bl) = reference(&sim);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = spec(dir.path(), &out, &sim.url(), "job", "");
    // Killed mid-swap: outputs published, two inputs deleted, the rest not.
    let o = crash_bin("compact-deleting:2").args(["run", &s, "-q"]).output().unwrap();
    assert!(!o.status.success(), "the failpoint must crash the run: {}", text(&o));

    let v = chainetl(&["verify", &s]);
    let t = text(&v);
    assert_eq!(v.status.code(), Some(1), "readers see rows twice right now: {t}");
    assert!(t.contains("a compaction swap was interrupted") && t.contains("rows twice"), "{t}");
    assert!(t.contains("`chainetl compact SPEC`") && t.contains("no request"), "{t}");
    assert!(
        !t.contains("missing or changed") && !t.contains("already holds its rows"),
        "no file is damaged: {t}"
    );

    let st = chainetl(&["status", &s]);
    assert!(st.status.success(), "{}", text(&st));
    assert!(
        text(&st).contains("interrupted") && text(&st).contains("compaction swap"),
        "{}",
        text(&st)
    );
    let st = chainetl(&["status", &s, "--format", "json"]);
    assert!(st.status.success(), "{}", text(&st));
    let doc: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(doc["state"], "interrupted", "{doc}");
    assert_eq!(doc["interrupted"][0]["kind"], "compaction_swap", "{doc}");

    // With the service gone, a repair that sent a request would fail.
    drop(sim);
    let r = chainetl(&["verify", &s, "--repair"]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(text(&r).contains("finished 1 compaction swap"), "{}", text(&r));
    // Exactly the rows of an uninterrupted run, each once (the partitions
    // the dead run did not reach are compacted by the next run).
    assert_eq!(read_rows(&out.join("events"), EVENT_KEY), ev);
    assert_eq!(read_rows(&out.join("blocks"), BLOCK_KEY), bl);
    let v = chainetl(&["verify", &s]);
    assert!(v.status.success(), "{}", text(&v));
    let st = chainetl(&["status", &s, "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(doc["state"], "complete", "{doc}");
}

#[test]
fn a_compaction_killed_before_its_swap_hides_no_missing_file() {
    // The inputs of a compaction not yet swapped are still
    // the table; one deleted by hand must be reported.
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = spec(dir.path(), &out, &sim.url(), "job", "");
    let o = crash_bin("compact-written:1").args(["run", &s, "-q"]).output().unwrap();
    assert!(!o.status.success(), "the failpoint must crash the run: {}", text(&o));
    let lost = parquet_files(&out.join("events"))
        .into_iter()
        .find(|f| f.file_name().unwrap().to_string_lossy().starts_with("job-e0-"))
        .expect("a unit file of the uncompacted partitions");
    std::fs::remove_file(&lost).unwrap();
    let v = chainetl(&["verify", &s]);
    let t = text(&v);
    assert_eq!(v.status.code(), Some(1), "{t}");
    assert!(t.contains("a compaction was interrupted before its swap"), "{t}");
    let name = lost.file_name().unwrap().to_string_lossy().to_string();
    assert!(t.contains(&name) && t.contains("missing"), "{t}");
}

/// A `verify --repair` of a unit of an aligned period still open: the run
/// that exports it again also finishes the period, which drops the
/// period's checkpoints; the repair then counts as ended (its record
/// goes), so `verify` passes again, rather than naming the repair for
/// ever.
#[test]
fn a_repair_whose_period_closes_in_the_same_run_ends() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = write_spec(
        dir.path(),
        "daily.toml",
        &format!(
            "name = \"daily\"\n[source]\nbase_url = \"sim\"\nmax_concurrency = 1\n[source.sim]\nfrozen_at = \
             \"2025-06-01T13:00:00Z\"\n[output]\nuri = \"{}\"\n[[export]]\ndataset = \"blocks\"\nchains = \
             [\"base\"]\nwindow = \"1d\"\nalign = \"day\"\nchunk_duration = \"6h\"\n",
            out.display()
        ),
    );
    // The period part done: a unit's file and checkpoint in place. Two
    // units run at once and state documents other than checkpoints (a
    // lease's) are written on a clock, so a run killed at its second
    // document write may have committed none: the next run goes on.
    let committed = || {
        let st = chainetl(&["status", &s, "--format", "json"]);
        serde_json::from_slice::<serde_json::Value>(&st.stdout).unwrap()["rows"]
            .as_u64()
            .unwrap_or(0)
    };
    for _ in 0..4 {
        let o = crash_bin("during-checkpoint:2").args(["run", &s, "-q"]).output().unwrap();
        assert!(!o.status.success(), "the failpoint must crash the run: {}", text(&o));
        if committed() > 0 {
            break;
        }
    }
    assert!(committed() > 0, "a unit committed");
    let day = out.join("blocks/chain=base/date=2025-05-31");
    let files: Vec<_> = std::fs::read_dir(&day)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    assert!(!files.is_empty(), "a unit's file is in place");
    // Every file: the committed ones among them are the repair's.
    for f in &files {
        let mut bytes = std::fs::read(f).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 1;
        std::fs::write(f, bytes).unwrap();
    }
    assert_eq!(chainetl(&["verify", &s]).status.code(), Some(1));
    let o = chainetl(&["verify", &s, "--repair"]);
    assert!(o.status.success(), "{}", text(&o));
    let v = chainetl(&["verify", &s]);
    assert_eq!(v.status.code(), Some(0), "the repair ended with its period: {}", text(&v));
    assert!(!out.join("_chainetl/daily/repair.json").exists(), "the record went");
    let st = chainetl(&["status", &s]);
    assert!(!text(&st).contains("repair"), "{}", text(&st));
}
