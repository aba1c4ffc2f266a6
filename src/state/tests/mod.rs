//! `state` on its own, on local disk and on an in-memory object store: no
//! job run, no service.

mod cleanup;
mod compactions;
mod fencing;
mod manifests;
mod verify;

use super::*;
use crate::plan::{Segment, Unit, UnitRange};
use crate::sink::tests::{local_sink, memory_sink};
use crate::vocab::Dataset;
use crate::vocab::chain::Chain;
use crate::vocab::window::Resolved;
use object_store::{ObjectStoreExt, PutPayload};
use std::collections::HashMap;

pub(super) const UNIT: &str = "e0-blocks-ethereum-b100-200";

pub(super) fn unit_state(id: &str, next_seq: u64) -> UnitState {
    UnitState {
        version: STATE_VERSION,
        unit: id.into(),
        cursor: Some(format!("cursor-{next_seq}")),
        next_seq,
        rows: 10 * next_seq,
        files: next_seq,
        updated_at: "2024-01-01T00:00:00Z".into(),
        ..Default::default()
    }
}

pub(super) fn job_state(spec_hash: &str) -> JobState {
    JobState {
        version: STATE_VERSION,
        name: "j".into(),
        spec_hash: spec_hash.into(),
        windows: vec![Some(Resolved::Blocks { first: 100, last: 199 })],
        page_size: Some(100),
        cut_rule: None,
        created_at: "2024-01-01T00:00:00Z".into(),
        chainetl_version: "test".into(),
        identity: None,
        seq_floor: 0,
        generation_floor: 0,
    }
}

pub(super) fn unit(id: &str) -> Unit {
    Unit {
        id: id.into(),
        export: 0,
        dataset: Dataset::Blocks,
        chain: Chain::Ethereum,
        range: UnitRange::Blocks { start: 100, end: 200 },
        estimated_requests: 1,
    }
}

/// Stores `bytes` at `rel` of `store`'s output, bypassing `state`.
pub(super) async fn put(store: &StateStore, rel: &str, bytes: &[u8]) {
    store
        .sink
        .storage()
        .store()
        .put(&store.sink.storage().path(rel), PutPayload::from(bytes.to_vec()))
        .await
        .unwrap();
}

/// Both kinds of store `state` writes differently: local disk and an object store.
pub(super) fn stores() -> Vec<(tempfile::TempDir, StateStore)> {
    let dir = tempfile::tempdir().unwrap();
    let local = StateStore::new(local_sink(dir.path()), "j");
    vec![
        (dir, local),
        (tempfile::tempdir().unwrap(), StateStore::new(memory_sink("out"), "j")),
    ]
}

#[tokio::test]
async fn unit_checkpoints_round_trip() {
    for (_dir, st) in stores() {
        let a = UnitState {
            committed: vec![CommittedFile {
                path: "blocks/x.parquet".into(),
                rows: 10,
                bytes: 99,
                checksum: Some("xxh64:00000000000000ff".into()),
            }],
            last_block: Some(TailBlock {
                number: 150,
                hash: "0xab".into(),
            }),
            ..unit_state("e0-blocks-ethereum-b100-200", 1)
        };
        let b = unit_state("e0-blocks-ethereum-b200-300", 4);
        st.save_unit(&a).await.unwrap();
        st.save_unit(&b).await.unwrap();
        let newer = UnitState { done: true, ..b.clone() };
        st.save_unit(&newer).await.unwrap();
        let got = st.load_units().await.unwrap();
        assert_eq!(got, HashMap::from([(a.unit.clone(), a.clone()), (b.unit.clone(), newer)]));
        st.delete_units(std::slice::from_ref(&a.unit)).await.unwrap();
        assert_eq!(st.load_units().await.unwrap().len(), 1);
    }
}

#[tokio::test]
async fn marks_segments_and_periods_round_trip() {
    for (_dir, st) in stores() {
        let mark = Mark {
            version: STATE_VERSION,
            export: 1,
            chain: Chain::Base,
            next: 500,
            tail: vec![TailBlock {
                number: 499,
                hash: "0x01".into(),
            }],
            repair_from: None,
            reorgs: 2,
            replacing: Vec::new(),
            seq_floor: 0,
            updated_at: "2024-01-01T00:00:00Z".into(),
        };
        st.save_mark(&mark).await.unwrap();
        let got = st.load_mark(1, Chain::Base).await.unwrap().unwrap();
        assert_eq!((got.next, got.tail, got.reorgs), (500, mark.tail.clone(), 2));
        assert!(st.load_mark(1, Chain::Ethereum).await.unwrap().is_none());
        assert_eq!(st.load_marks().await.unwrap().len(), 1);

        let seg = |first| Segment {
            export: 0,
            chain: None,
            window: Resolved::Blocks { first, last: first + 99 },
        };
        st.create_segment(&seg(100)).await.unwrap();
        st.create_segment(&seg(0)).await.unwrap();
        assert_eq!(st.load_segments().await.unwrap(), vec![seg(100), seg(0)], "oldest first");
        st.remove_segment(&seg(100)).await.unwrap();
        assert_eq!(st.load_segments().await.unwrap(), vec![seg(0)]);

        assert!(!st.period_done(&seg(0)).await.unwrap());
        st.save_period_done(&seg(0)).await.unwrap();
        assert!(st.period_done(&seg(0)).await.unwrap());
        assert_eq!(st.load_periods().await.unwrap(), vec![seg(0)]);
    }
}

#[tokio::test]
async fn the_first_creator_of_a_document_wins_and_every_creator_gets_its_doc() {
    for (dir, st) in stores() {
        // A second process: its own sink on the same output.
        let other = match st.sink.storage().os_locks() {
            Some(_) => StateStore::new(local_sink(dir.path()), "j"),
            None => StateStore::new(st.sink.clone(), "j"),
        };
        let (ja, jb) = (job_state("a"), job_state("b"));
        let (a, b) = tokio::join!(st.create_job(&ja), other.create_job(&jb));
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(a.spec_hash, b.spec_hash, "both creators agree");
        assert_eq!(st.load_job().await.unwrap().unwrap().spec_hash, a.spec_hash);
        let again = other.create_job(&job_state("c")).await.unwrap();
        assert_eq!(again.spec_hash, a.spec_hash, "a later creator gets the first's doc");

        let seg = |export| Segment {
            export,
            chain: Some(Chain::Base),
            window: Resolved::Blocks { first: 0, last: 9 },
        };
        let first = st.create_segment(&seg(0)).await.unwrap();
        let moved = Segment {
            window: Resolved::Blocks { first: 0, last: 99 },
            ..seg(0)
        };
        assert_eq!(other.create_segment(&moved).await.unwrap(), first, "the pending segment stays");

        let added = |first| AddedExport {
            version: STATE_VERSION,
            export: 1,
            identity: crate::spec::ExportIdentity {
                chains: vec!["base".into()],
                keys: Default::default(),
            },
            window: Some(Resolved::Blocks { first, last: 999 }),
            created_at: "2024-01-01T00:00:00Z".into(),
        };
        let (ea, eb) = (added(1), added(2));
        let (x, y) = tokio::join!(st.create_added_export(&ea), other.create_added_export(&eb));
        assert_eq!(x.unwrap().window, y.unwrap().window, "both shards freeze one window");
    }
}

#[tokio::test]
async fn a_corrupt_document_names_its_location_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let st = StateStore::new(local_sink(dir.path()), "j");
    put(&st, &format!("_chainetl/j/units/{UNIT}.json"), b"{\"version\": 1, \"unit\": ").await;
    let e = st.load_units().await.unwrap_err();
    let StateError::Corrupt { path, message, source } = &e else {
        panic!("{e:?}");
    };
    assert_eq!(path, &format!("{}/_chainetl/j/units/{UNIT}.json", dir.path().to_string_lossy()));
    assert!(
        message.starts_with("not a chainetl state document (") && message.contains("delete this file and re-run"),
        "{message}"
    );
    assert!(source.is_some(), "the parse error is kept");
    assert!(e.to_string().contains(&format!("_chainetl/j/units/{UNIT}.json")), "{e}");

    let other = serde_json::json!({"version": 3, "name": "j", "spec_hash": "", "windows": [], "created_at": "", "chainetl_version": ""});
    put(&st, "_chainetl/j/job.json", other.to_string().as_bytes()).await;
    let e = st.load_job().await.unwrap_err().to_string();
    assert!(
        e.contains("state format version 3 is not one this build reads (1 to 2)") && e.contains("run that version"),
        "{e}"
    );
}

#[tokio::test]
async fn a_storage_failure_keeps_its_cause_and_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let st = StateStore::new(local_sink(dir.path()), "j");
    // A file where the units directory should be: the write cannot happen.
    put(&st, "_chainetl/j/units", b"not a directory").await;
    let e = st.save_unit(&unit_state(UNIT, 1)).await.unwrap_err();
    let StateError::Io { path, action, source } = &e else {
        panic!("{e:?}");
    };
    assert_eq!(
        (path.as_str(), *action),
        (format!("_chainetl/j/units/{UNIT}.json").as_str(), "writing")
    );
    assert!(source.downcast_ref::<std::io::Error>().is_some(), "{source:?}");
    let shown = e.to_string();
    assert!(
        shown.starts_with(&format!("state _chainetl/j/units/{UNIT}.json: writing: ")),
        "{shown}"
    );
    assert!(std::error::Error::source(&e).is_some());
}

#[tokio::test]
async fn a_job_keeps_the_cut_rule_it_started_with() {
    use crate::vocab::cuts::CutRule;
    let spec = crate::spec::Spec::parse(
        "j.toml",
        "name = \"j\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"out\"\n[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"100..199\"\n",
    )
    .unwrap();
    let mut job = job_state("h");
    assert_eq!(job.cutting(&spec).rule, CutRule::Hourly, "absent: the rule before it was recorded");
    job.cut_rule = Some(CutRule::Daily.version());
    assert_eq!(job.cutting(&spec).rule, CutRule::Daily);
    assert_eq!(job.cutting(&spec).page_size, 100, "the frozen page size");
    // A rule of a newer build is refused, not replaced by ours.
    let dir = tempfile::tempdir().unwrap();
    let st = StateStore::new(local_sink(dir.path()), "j");
    job.cut_rule = Some(99);
    put(&st, "_chainetl/j/job.json", &serde_json::to_vec(&job).unwrap()).await;
    let e = st.load_job().await.unwrap_err().to_string();
    assert!(e.contains("cut rule 99 is not known to this build"), "{e}");
}

/// A checkpoint from before files were listed counts every sequence below
/// its `next_seq`. A rewrite that adds files beside the ones it counts (a
/// derived table) keeps it so: listing only the new files would leave the
/// old ones uncounted.
#[tokio::test]
async fn a_derived_table_beside_an_unlisted_checkpoint_leaves_its_files_counted() {
    for (_dir, st) in stores() {
        st.save_unit(&unit_state(UNIT, 2)).await.unwrap();
        let doc = Rewrite {
            version: STATE_VERSION,
            unit: Some(UNIT.into()),
            partition: None,
            inputs: Vec::new(),
            live: false,
            outputs: vec![CommittedFile {
                path: format!("transfers/j-{UNIT}-000002.parquet"),
                rows: 5,
                bytes: 7,
                checksum: None,
            }],
            next_seq: 3,
            replaced: Vec::new(),
            generation: 0,
        };
        assert_eq!(st.apply_rewrites(std::slice::from_ref(&doc)).await.unwrap(), 1);
        let got = st.load_units().await.unwrap()[UNIT].clone();
        assert!(got.committed.is_empty(), "still counted by sequence: {got:?}");
        assert_eq!((got.next_seq, got.files), (3, 3));
        assert_eq!(st.apply_rewrites(&[doc]).await.unwrap(), 0, "applied once");
        assert_eq!(st.load_units().await.unwrap()[UNIT].files, 3);
    }
}
