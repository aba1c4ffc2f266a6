//! `verify`: every committed file checked against its checkpoint.

use super::{UNIT, put, unit_state};
use crate::sink::tests::{JAN_1, local_sink, rows, writer};
use crate::state::{CommittedFile, FileProblem, StateStore};
use std::collections::{BTreeSet, HashMap};

#[tokio::test]
async fn verify_reports_missing_changed_and_unreadable_files() {
    let dir = tempfile::tempdir().unwrap();
    let sink = local_sink(dir.path());
    let st = StateStore::new(sink.clone(), "j");
    let mut w = writer(&sink, "j");
    w.write(rows(0, &[JAN_1, JAN_1 + 1, JAN_1 + 2, JAN_1 + 3], 8)).await.unwrap();
    let files = w.finish().await.unwrap();
    let mut st_unit = unit_state(UNIT, files.len() as u64);
    st_unit.committed = files
        .iter()
        .map(|f| CommittedFile {
            path: f.rel.clone(),
            rows: f.rows,
            bytes: f.bytes,
        })
        .collect();
    st_unit.committed.sort_by(|a, b| a.path.cmp(&b.path));
    let states = HashMap::from([(UNIT.to_string(), st_unit.clone())]);
    let datasets = BTreeSet::from(["blocks".to_string()]);
    assert_eq!(st.verify(&datasets, &states).await.unwrap(), vec![]);

    let [gone, grown, garbled, recounted] = [0, 1, 2, 3].map(|i| st_unit.committed[i].clone());
    std::fs::remove_file(dir.path().join(&gone.path)).unwrap();
    let mut bytes = std::fs::read(dir.path().join(&grown.path)).unwrap();
    bytes.push(0);
    std::fs::write(dir.path().join(&grown.path), &bytes).unwrap();
    std::fs::write(dir.path().join(&garbled.path), vec![1u8; garbled.bytes as usize]).unwrap();
    let mut states = states;
    states.get_mut(UNIT).unwrap().committed[3].rows = 5;
    let problems = st.verify(&datasets, &states).await.unwrap();
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
async fn verify_without_recorded_files_checks_sequences() {
    let dir = tempfile::tempdir().unwrap();
    let st = StateStore::new(local_sink(dir.path()), "j");
    put(&st, &format!("blocks/j-{UNIT}-000000.parquet"), b"x").await;
    let states = HashMap::from([(UNIT.to_string(), unit_state(UNIT, 2))]);
    let problems = st.verify(&BTreeSet::from(["blocks".to_string()]), &states).await.unwrap();
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
