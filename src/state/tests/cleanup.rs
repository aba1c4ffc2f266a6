//! Cleanup of what dead writers leave, and `--fresh`: each removes exactly
//! what the job owns.

use super::{UNIT, job_state, put, stores, unit, unit_state};
use crate::sink::tests::local_sink;
use crate::state::StateStore;
use std::collections::{BTreeSet, HashMap};

#[tokio::test]
async fn orphan_removal_deletes_exactly_the_uncommitted_files_of_planned_units() {
    let dir = tempfile::tempdir().unwrap();
    let st = StateStore::new(local_sink(dir.path()), "j");
    let other_unit = "e0-blocks-ethereum-b200-300";
    let d = "blocks/chain=ethereum/date=2024-01-01";
    let keep = [
        format!("{d}/j-{UNIT}-000000.parquet"),       // committed
        format!("{d}/j-{UNIT}-000001.parquet"),       // committed
        format!("{d}/j-{other_unit}-000005.parquet"), // a unit not planned this pass
        format!("{d}/j-x-{UNIT}-000007.parquet"),     // job `j-x`, sharing the output
        format!("{d}/jj-{UNIT}-000007.parquet"),      // job `jj`
        format!("{d}/j-{UNIT}-7.parquet"),            // not a name `j` writes
        format!("{d}/notes.txt"),                     // not a data file
        format!("tokens/j-{UNIT}-000009.parquet"),    // a dataset no planned unit has
    ];
    let gone = [
        format!("{d}/j-{UNIT}-000002.parquet"),
        format!("blocks/chain=ethereum/date=2024-01-02/j-{UNIT}-000003.parquet"),
    ];
    for rel in keep.iter().chain(&gone) {
        put(&st, rel, b"bytes").await;
    }
    // Staging leftovers of an upload that never completed.
    std::fs::write(dir.path().join(format!("{d}/j-{UNIT}-000004.parquet#1")), b"x").unwrap();
    std::fs::write(dir.path().join(format!("{d}/j-x-{UNIT}-000004.parquet#1")), b"x").unwrap();
    // Another shard's upload in progress, of a unit not planned here.
    std::fs::write(dir.path().join(format!("{d}/j-{other_unit}-000006.parquet#1")), b"x").unwrap();

    let mut states = HashMap::from([(UNIT.to_string(), unit_state(UNIT, 2))]);
    let removed = st
        .remove_orphans(&[unit(UNIT)], &mut states, &BTreeSet::from(["blocks".to_string()]))
        .await
        .unwrap();
    assert_eq!(removed, 3, "two orphans and one staging file");
    let mut left = crate::sink::tests::on_disk(dir.path());
    left.retain(|f| !f.starts_with("_chainetl"));
    let mut want: Vec<String> = keep.to_vec();
    want.push(format!("{d}/j-x-{UNIT}-000004.parquet#1"));
    want.push(format!("{d}/j-{other_unit}-000006.parquet#1"));
    want.sort();
    assert_eq!(left, want);
}

#[tokio::test]
async fn a_unit_without_a_checkpoint_owns_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let st = StateStore::new(local_sink(dir.path()), "j");
    let rel = format!("blocks/j-{UNIT}-000000.parquet");
    put(&st, &rel, b"bytes").await;
    assert_eq!(
        st.remove_orphans(&[unit(UNIT)], &mut HashMap::new(), &BTreeSet::from(["blocks".to_string()]))
            .await
            .unwrap(),
        1
    );
    assert!(!dir.path().join(rel).exists());
}

#[tokio::test]
async fn stale_temporary_files_are_removed_only_under_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let st = StateStore::new(local_sink(dir.path()), "j");
    st.save_unit(&unit_state(UNIT, 1)).await.unwrap();
    let ours = dir.path().join(format!("_chainetl/j/units/{UNIT}.json.123.0.tmp"));
    let theirs = dir.path().join(format!("_chainetl/jj/units/{UNIT}.json.123.0.tmp"));
    let data = dir.path().join("blocks/x.tmp");
    for p in [&ours, &theirs, &data] {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"half a doc").unwrap();
    }
    assert_eq!(st.remove_stale_tmp().await, 1);
    assert!(!ours.exists() && theirs.exists() && data.exists());
    assert_eq!(st.load_units().await.unwrap().len(), 1, "the checkpoint itself stays");
}

#[tokio::test]
async fn clear_deletes_the_jobs_state_and_files_but_not_its_lease_or_another_jobs() {
    for (dir, st) in stores() {
        let other = StateStore::new(st.sink.clone(), "j-x");
        st.create_job(&job_state("a")).await.unwrap();
        st.save_unit(&unit_state(UNIT, 1)).await.unwrap();
        other.save_unit(&unit_state(UNIT, 1)).await.unwrap();
        let ours = format!("blocks/j-{UNIT}-000000.parquet");
        let theirs = format!("blocks/j-x-{UNIT}-000000.parquet");
        put(&st, &ours, b"x").await;
        put(&st, &theirs, b"x").await;
        put(&st, "_chainetl/j/leases/all.json", b"{}").await;

        let cleared = st.clear(&BTreeSet::from(["blocks".to_string()])).await.unwrap();
        assert_eq!(
            (cleared.removed, cleared.seq_floor),
            (1, 1),
            "the floor is above the file it removed"
        );
        assert!(!st.clear_interrupted().await.unwrap(), "the marker is removed last");
        assert!(st.load_job().await.unwrap().is_none() && st.load_units().await.unwrap().is_empty());
        let left = crate::sink::tests::listed(&st.sink).await;
        let mut want = vec![
            "_chainetl/j/leases/all.json".to_string(),
            format!("_chainetl/j-x/units/{UNIT}.json"),
            theirs.clone(),
        ];
        want.sort();
        assert_eq!(left, want, "{:?}", dir.path());
    }
}

#[tokio::test]
async fn an_interrupted_clear_is_seen_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let st = StateStore::new(local_sink(dir.path()), "j");
    assert!(!st.clear_interrupted().await.unwrap());
    put(&st, "_chainetl/j/clearing.json", b"{\"started_at\": \"2024-01-01T00:00:00Z\"}").await;
    assert!(st.clear_interrupted().await.unwrap());
}

/// `--fresh` keeps every generation the job had taken as its floor, from
/// wherever it is kept: an earlier `--fresh`'s floor in `job.json`, a
/// record's rolled-back generation (no file holds it) beside a record
/// that no longer reads, a pending generation in the index, and a
/// clearing killed part-way (its marker).
#[tokio::test]
async fn clear_keeps_every_generation_the_job_had_taken_as_its_floor() {
    for (_dir, st) in stores() {
        let tables = BTreeSet::from(["blocks".to_string()]);
        let mut job = job_state("a");
        job.generation_floor = 3;
        st.create_job(&job).await.unwrap();
        assert_eq!(st.clear(&tables).await.unwrap().generation_floor, 3, "an earlier --fresh's floor");

        let rolled_back = br#"{"partition": "blocks/chain=base", "generation": 2, "rolled_back": 7, "files": []}"#;
        put(&st, "_chainetl/j/compacted/blocks__chain=base.json", rolled_back).await;
        put(&st, "_chainetl/j/compacted/blocks__chain=ethereum.json", b"{\"partition\": ").await;
        assert_eq!(st.clear(&tables).await.unwrap().generation_floor, 7, "a rolled-back generation");

        let index = br#"{"version": 2, "records": [{"generation": 4, "pending": {"generation": 9}}]}"#;
        put(&st, "_chainetl/j/compactions.json", index).await;
        assert_eq!(
            st.clear(&tables).await.unwrap().generation_floor,
            9,
            "a pending generation in the index"
        );

        put(
            &st,
            "_chainetl/j/clearing.json",
            br#"{"started_at": "2024-01-01T00:00:00Z", "generation_floor": 12}"#,
        )
        .await;
        assert_eq!(st.clear(&tables).await.unwrap().generation_floor, 12, "a clearing killed part-way");
        assert_eq!(st.clear(&tables).await.unwrap().generation_floor, 0, "nothing left");
    }
}
