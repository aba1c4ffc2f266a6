//! Compaction where it meets other things: shards, hand-edited state, a
//! damaged input (each failed on an earlier build).

use crate::common::*;
use crate::compact::{EVENT_KEY, assert_compacted_exact, files_by_partition, reference, spec};

#[test]
fn a_shard_refuses_to_export_again_a_unit_whose_rows_are_compacted() {
    let sim = Sim::start(frozen());
    let (_r, ev, bl) = reference(&sim);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = spec(dir.path(), &out, &sim.url(), "job", "");
    assert!(chainetl(&["run", &s, "-q"]).status.success());
    // A finished unit's checkpoint lost (its manifest entry removed by
    // hand): its rows are in compacted files.
    let manifests = out.join("_chainetl/job/manifests");
    let listed: Vec<_> = std::fs::read_dir(&manifests).unwrap().flatten().collect();
    assert_eq!(listed.len(), 1, "a whole-job run leaves one manifest");
    let lost = edit_json(&listed[0].path(), |doc| doc["units"].as_array_mut().unwrap().remove(0));
    assert!(lost["unit"].is_string(), "{lost}");
    for k in ["1/2", "2/2"] {
        let o = chainetl(&["run", &s, "-q", "--shard", k]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains("without --shard"), "{}", text(&o));
    }
    let o = chainetl(&["run", &s, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_compacted_exact(&out, &ev, &bl);
    assert!(chainetl(&["verify", &s]).status.success());
}

#[test]
fn a_record_naming_another_jobs_file_is_refused_and_deletes_nothing() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let x = spec(dir.path(), &out, &sim.url(), "x", "");
    let xy = spec(dir.path(), &out, &sim.url(), "x-y", "");
    for s in [&x, &xy] {
        assert!(chainetl(&["run", s, "-q"]).status.success());
    }
    let theirs: Vec<_> = files_by_partition(&out, "x-y").into_values().flatten().collect();
    let victim = parquet_files(&out)
        .into_iter()
        .find(|f| f.file_name().unwrap().to_string_lossy().starts_with("x-y-compacted-"))
        .unwrap();
    let rel = victim.strip_prefix(&out).unwrap().to_string_lossy().to_string();
    // Settled records are folded into the index.
    assert!(!out.join("_chainetl/x/compacted").exists() || std::fs::read_dir(out.join("_chainetl/x/compacted")).unwrap().next().is_none());
    edit_json(&out.join("_chainetl/x/compactions.json"), |doc| {
        doc["records"][0]["files"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"path": rel, "rows": 1, "bytes": 1}))
    });
    for args in [
        vec!["verify", x.as_str(), "--repair"],
        vec!["compact", x.as_str()],
        vec!["run", x.as_str()],
    ] {
        let o = chainetl(&args);
        assert!(!o.status.success(), "{args:?}: {}", text(&o));
        assert!(text(&o).contains("not one of this job's files"), "{args:?}: {}", text(&o));
        assert!(victim.exists(), "{args:?} deleted another job's file");
    }
    assert_eq!(files_by_partition(&out, "x-y").into_values().flatten().collect::<Vec<_>>(), theirs);
}

#[test]
fn an_unreadable_input_leaves_its_partition_and_compacts_the_others() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = spec(dir.path(), &out, &sim.url(), "job", "compact = false");
    assert!(chainetl(&["run", &s, "-q"]).status.success());
    let before = read_rows(&out.join("events"), EVENT_KEY).len();
    // Damage the data pages of one file, its size and footer unchanged.
    let bad = parquet_files(&out.join("events")).into_iter().next().unwrap();
    let mut bytes = std::fs::read(&bad).unwrap();
    for b in &mut bytes[200..2000] {
        *b ^= 0x5a;
    }
    std::fs::write(&bad, &bytes).unwrap();
    let o = chainetl(&["compact", &s]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("reading") && text(&o).contains("left as it is"), "{}", text(&o));
    assert!(bad.exists(), "the damaged partition is left as it was");
    let by = files_by_partition(&out, "job");
    let damaged = by.get(bad.parent().unwrap()).unwrap();
    assert!(
        damaged.len() > 1 && damaged.iter().all(|n| !n.starts_with("job-compacted-")),
        "{damaged:?}"
    );
    assert!(
        by.iter()
            .filter(|(d, _)| d.as_path() != bad.parent().unwrap())
            .all(|(_, f)| f.len() == 1),
        "{by:?}"
    );
    let hidden: Vec<_> = std::fs::read_dir(bad.parent().unwrap())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with('_'))
        .collect();
    assert!(hidden.is_empty(), "the failed swap was not undone: {hidden:?}");
    assert!(before > 0);
}

#[test]
fn a_compacted_file_no_record_names_is_reported_and_not_repaired_into_rows_twice() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = spec(dir.path(), &out, &sim.url(), "job", "");
    assert!(chainetl(&["run", &s, "-q"]).status.success());
    let before = read_rows(&out.join("events"), EVENT_KEY).len();
    // The index restored from an older backup: one partition's record is
    // not in it, its compacted file is.
    let lost = edit_json(&out.join("_chainetl/job/compactions.json"), |doc| {
        doc["records"].as_array_mut().unwrap().remove(0)
    });
    let file = lost["files"][0]["path"].as_str().unwrap().to_string();
    let o = chainetl(&["verify", &s]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains(&file) && text(&o).contains("no compaction record names it"),
        "{}",
        text(&o)
    );
    let o = chainetl(&["verify", &s, "--repair"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("compactions.json"), "{}", text(&o));
    assert!(out.join(&file).exists());
    assert_eq!(read_rows(&out.join("events"), EVENT_KEY).len(), before, "rows changed");
}

/// A killed run's upload of a compaction output can land after the next
/// run rolled its swap back (an object store finishing a PUT the dead
/// process sent): the hidden file is swept by the next compaction of its
/// partition instead of staying in the output for good.
#[test]
fn a_hidden_output_landing_after_its_swap_was_rolled_back_is_swept() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = spec(dir.path(), &out, &sim.url(), "job", "compact = false");
    assert!(chainetl(&["run", &s, "-q"]).status.success());
    // One partition's late upload, of a generation no record names.
    let (partition, files) = files_by_partition(&out, "job").into_iter().next().unwrap();
    let late = partition.join("_job-compacted-000007-000000.parquet.pending");
    std::fs::copy(partition.join(&files[0]), &late).unwrap();
    let o = chainetl(&["compact", &spec(dir.path(), &out, &sim.url(), "job", "")]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!late.exists(), "the late upload is swept");
    assert!(chainetl(&["verify", &s]).status.success());
}
