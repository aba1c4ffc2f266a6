//! `verify`: every committed file checked against its checkpoint.

use super::{UNIT, put, unit_state};
use crate::sink::tests::{JAN_1, local_sink, rows, writer};
use crate::state::{CommittedFile, Depth, FileProblem, Progress, StateStore};
use object_store::ObjectStoreExt;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::Ordering;

#[tokio::test]
async fn verify_reports_missing_changed_and_unreadable_files() {
    let dir = tempfile::tempdir().unwrap();
    let sink = local_sink(dir.path());
    let st = StateStore::new(sink.clone(), "j");
    let mut w = writer(&sink, "j");
    w.write(rows(0, &[JAN_1, JAN_1 + 1, JAN_1 + 2, JAN_1 + 3], 8)).await.unwrap();
    let files = w.finish().await.unwrap();
    let mut st_unit = unit_state(UNIT, files.len() as u64);
    st_unit.committed = files.iter().map(CommittedFile::from).collect();
    st_unit.committed.sort_by(|a, b| a.path.cmp(&b.path));
    let states = HashMap::from([(UNIT.to_string(), st_unit.clone())]);
    let datasets = BTreeSet::from(["blocks".to_string()]);
    assert_eq!(
        st.verify(&datasets, &states, Depth::Quick, &Progress::default())
            .await
            .unwrap()
            .problems,
        vec![]
    );

    let [gone, grown, garbled, recounted] = [0, 1, 2, 3].map(|i| st_unit.committed[i].clone());
    std::fs::remove_file(dir.path().join(&gone.path)).unwrap();
    let mut bytes = std::fs::read(dir.path().join(&grown.path)).unwrap();
    bytes.push(0);
    std::fs::write(dir.path().join(&grown.path), &bytes).unwrap();
    std::fs::write(dir.path().join(&garbled.path), vec![1u8; garbled.bytes as usize]).unwrap();
    let mut states = states;
    states.get_mut(UNIT).unwrap().committed[3].rows = 5;
    let problems = st
        .verify(&datasets, &states, Depth::Quick, &Progress::default())
        .await
        .unwrap()
        .problems;
    let what: Vec<(&str, &str)> = problems.iter().map(|p| (p.path.as_str(), p.what.as_str())).collect();
    assert_eq!(what.len(), 4, "{what:?}");
    assert_eq!(what[0], (gone.path.as_str(), "missing (1 rows)"));
    assert_eq!(
        what[1],
        (
            grown.path.as_str(),
            format!("changed: {} bytes, {} when committed", grown.bytes + 1, grown.bytes).as_str()
        )
    );
    assert!(
        what[2].0 == garbled.path && what[2].1.starts_with("changed: not a readable Parquet file ("),
        "{what:?}"
    );
    assert_eq!(what[3], (recounted.path.as_str(), "changed: 1 rows, 5 when committed"));
    assert!(problems.iter().all(|p| p.unit == UNIT));
}

#[tokio::test]
async fn verify_reads_content_against_the_checksum_written_with_it() {
    for (_dir, st) in super::stores() {
        let mut w = writer(&st.sink, "j");
        w.write(rows(0, &[JAN_1, JAN_1 + 1, JAN_1 + 2], 64)).await.unwrap();
        let files = w.finish().await.unwrap();
        let mut unit = unit_state(UNIT, files.len() as u64);
        unit.committed = files.iter().map(CommittedFile::from).collect();
        unit.committed.sort_by(|a, b| a.path.cmp(&b.path));
        // The oldest file as an older build committed it: no checksum.
        unit.committed[0].checksum = None;
        let states = HashMap::from([(UNIT.to_string(), unit.clone())]);
        let datasets = BTreeSet::from(["blocks".to_string()]);
        let progress = Progress::default();
        assert_eq!(
            st.verify(&datasets, &states, Depth::Content, &progress).await.unwrap().problems,
            vec![]
        );
        let whole: u64 = unit.committed[1..].iter().map(|f| f.bytes).sum();
        assert_eq!(
            progress.bytes_read.load(Ordering::Relaxed),
            whole,
            "every file with a checksum read whole"
        );
        assert_eq!(progress.without_checksum.load(Ordering::Relaxed), 1);
        assert_eq!(progress.files_done.load(Ordering::Relaxed), 3);
        // One bit flipped in the middle of each file: same size.
        for f in &unit.committed {
            let path = st.sink.storage().path(&f.path);
            let mut b = st.sink.storage().store().get(&path).await.unwrap().bytes().await.unwrap().to_vec();
            let mid = b.len() / 2;
            b[mid] ^= 0x01;
            st.sink.storage().store().put(&path, b.into()).await.unwrap();
        }
        let problems = st
            .verify(&datasets, &states, Depth::Content, &Progress::default())
            .await
            .unwrap()
            .problems;
        let changed: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        let want: Vec<&str> = unit.committed[1..].iter().map(|f| f.path.as_str()).collect();
        assert_eq!(changed, want, "{problems:?}");
        assert!(
            problems[0]
                .what
                .starts_with("changed: its content is not what was committed (xxh64:"),
            "{problems:?}"
        );
        let quick = st
            .verify(&datasets, &states, Depth::Quick, &Progress::default())
            .await
            .unwrap()
            .problems;
        assert!(quick.len() < problems.len(), "--quick reads footers only: {quick:?}");
    }
}

#[tokio::test]
async fn verify_without_recorded_files_checks_sequences() {
    let dir = tempfile::tempdir().unwrap();
    let st = StateStore::new(local_sink(dir.path()), "j");
    put(&st, &format!("blocks/j-{UNIT}-000000.parquet"), b"x").await;
    let states = HashMap::from([(UNIT.to_string(), unit_state(UNIT, 2))]);
    let problems = st
        .verify(
            &BTreeSet::from(["blocks".to_string()]),
            &states,
            Depth::Content,
            &Progress::default(),
        )
        .await
        .unwrap()
        .problems;
    assert_eq!(
        problems,
        vec![FileProblem {
            unit: UNIT.into(),
            units: vec![UNIT.into()],
            path: format!("j-{UNIT}-000001.parquet"),
            what: "missing".into(),
        }]
    );
}
