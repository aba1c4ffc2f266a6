//! Conditional writes of single-writer documents: two processes (two
//! sinks, each with its own versions) on one object store, the first a
//! holder whose lease passed to the second while its own fence let it
//! through.

use super::*;
use crate::sink::Sink;
use crate::sink::tests::output;
use std::sync::Arc;

/// Two holders of one job on one object store, as two processes see it.
fn two_holders() -> (StateStore, StateStore) {
    let store: Arc<dyn object_store::ObjectStore> = Arc::new(object_store::memory::InMemory::new());
    let holder = |_| {
        StateStore::new(
            Arc::new(Sink::with_store(&output("memory://test"), store.clone(), "out").unwrap()),
            "j",
        )
    };
    (holder(0), holder(1))
}

fn stale(e: StateError) -> String {
    let m = e.to_string();
    assert!(
        m.contains("another run changed or removed this document") || m.contains("another run removed this document"),
        "{m}"
    );
    m
}

#[tokio::test]
async fn a_checkpoint_the_new_holder_rewrote_is_not_overwritten_by_the_old_one() {
    let (old, new) = two_holders();
    old.save_unit(&unit_state(UNIT, 1)).await.unwrap();
    // The new holder resumes the unit from the old one's checkpoint.
    assert_eq!(new.load_units().await.unwrap()[UNIT].next_seq, 1);
    new.save_unit(&unit_state(UNIT, 2)).await.unwrap();
    // The old holder thaws and commits again: refused, nothing lands.
    let m = stale(old.save_unit(&unit_state(UNIT, 3)).await.unwrap_err());
    assert!(m.contains(&format!("units/{UNIT}.json")), "names the document: {m}");
    assert_eq!(new.load_units().await.unwrap()[UNIT].next_seq, 2);
    // Nor does anything else it writes afterwards, data included.
    let other = unit_state("e0-blocks-ethereum-b200-300", 1);
    assert!(old.save_unit(&other).await.is_err());
    assert!(
        old.sink
            .storage()
            .store()
            .put(&old.sink.storage().path("x.parquet"), PutPayload::from_static(b"x"))
            .await
            .is_err()
    );
    assert!(!new.load_units().await.unwrap().contains_key(&other.unit));
    // The new holder goes on.
    new.save_unit(&unit_state(UNIT, 4)).await.unwrap();
}

#[tokio::test]
async fn a_checkpoint_the_new_holder_folded_away_is_not_written_again() {
    let (old, new) = two_holders();
    old.save_unit(&unit_state(UNIT, 1)).await.unwrap();
    let done = UnitState {
        done: true,
        ..unit_state(UNIT, 2)
    };
    new.load_units().await.unwrap();
    new.save_unit(&done).await.unwrap();
    assert_eq!(new.fold_units(|_| true).await.unwrap(), 1);
    // A per-unit file would stand over the manifest's entry: refused.
    stale(old.save_unit(&unit_state(UNIT, 3)).await.unwrap_err());
    assert_eq!(new.load_units().await.unwrap()[UNIT], done);
}

#[tokio::test]
async fn a_unit_the_new_holder_started_again_is_not_created_by_the_old_one() {
    let (old, new) = two_holders();
    let done = UnitState {
        done: true,
        ..unit_state(UNIT, 2)
    };
    // The old holder finished the unit and folded it: its file is gone.
    old.save_unit(&done).await.unwrap();
    old.fold_units(|_| true).await.unwrap();
    // The new holder drops it (a reorg repair) and exports it again.
    new.load_units().await.unwrap();
    new.delete_units(&[UNIT.into()]).await.unwrap();
    new.save_unit(&unit_state(UNIT, 1)).await.unwrap();
    // The old holder's write would be a create: refused.
    stale(old.save_unit(&unit_state(UNIT, 5)).await.unwrap_err());
    assert_eq!(new.load_units().await.unwrap()[UNIT].next_seq, 1);
}

#[tokio::test]
async fn a_compaction_record_and_the_index_are_written_only_by_their_holder() {
    let (old, new) = two_holders();
    let record = |generation: u64| Compaction {
        version: STATE_VERSION,
        partition: "blocks/chain=ethereum/date=2024-01-01".into(),
        generation,
        files: Vec::new(),
        replaced: Vec::new(),
        replaced_rows: Default::default(),
        pending: None,
        rolled_back: 0,
        dissolving: Vec::new(),
        updated_at: "2024-01-01T00:00:00Z".into(),
    };
    old.save_compaction(&record(1)).await.unwrap();
    new.load_compactions().await.unwrap();
    new.save_compaction(&record(2)).await.unwrap();
    stale(old.save_compaction(&record(3)).await.unwrap_err());
    let held: Vec<u64> = new.load_compactions().await.unwrap().iter().map(|c| c.generation).collect();
    assert_eq!(held, vec![2]);
}

#[tokio::test]
async fn the_compaction_index_is_written_only_by_its_holder() {
    let (old, new) = two_holders();
    let index = "_chainetl/j/compactions.json";
    let settled = |s: &str| CompactionIndex {
        version: STATE_VERSION,
        settled: Some(s.into()),
        ..Default::default()
    };
    old.write_compact_doc(index, &settled("old")).await.unwrap();
    new.fold_compactions(Some("new".into())).await.unwrap();
    stale(old.write_compact_doc(index, &settled("stale")).await.unwrap_err());
    let held: CompactionIndex = new.read_doc(index).await.unwrap().unwrap();
    assert_eq!(held.settled.as_deref(), Some("new"));
}

#[tokio::test]
async fn a_write_that_landed_though_its_answer_was_lost_is_ours() {
    let (st, _) = two_holders();
    st.save_unit(&unit_state(UNIT, 1)).await.unwrap();
    // The store client retried a PUT that had landed: the object is what
    // this process wrote, at a version it never saw.
    let next = unit_state(UNIT, 2);
    let bytes = crate::util::redact::redact_bytes(serde_json::to_vec_pretty(&next).unwrap());
    put(&st, &st.unit_path(UNIT), &bytes).await;
    st.save_unit(&next).await.unwrap();
    st.save_unit(&unit_state(UNIT, 3)).await.unwrap();
    assert_eq!(st.load_units().await.unwrap()[UNIT].next_seq, 3);
}

#[tokio::test]
async fn local_disk_is_locked_by_the_os_and_keeps_no_versions() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        StateStore::new(crate::sink::tests::local_sink(dir.path()), "j"),
        StateStore::new(crate::sink::tests::local_sink(dir.path()), "j"),
    );
    a.save_unit(&unit_state(UNIT, 1)).await.unwrap();
    b.save_unit(&unit_state(UNIT, 2)).await.unwrap();
    a.save_unit(&unit_state(UNIT, 3)).await.unwrap();
    assert_eq!(b.load_units().await.unwrap()[UNIT].next_seq, 3);
}

#[tokio::test]
async fn a_unit_the_old_holder_never_checkpointed_is_created_not_overwritten() {
    let (old, new) = two_holders();
    // Both planned from the same state: the unit had no checkpoint.
    old.load_units().await.unwrap();
    new.load_units().await.unwrap();
    new.save_unit(&unit_state(UNIT, 1)).await.unwrap();
    // The old holder's first checkpoint of it is a create: refused.
    stale(old.save_unit(&unit_state(UNIT, 7)).await.unwrap_err());
    assert_eq!(new.load_units().await.unwrap()[UNIT].next_seq, 1);
}

#[tokio::test]
async fn reading_the_new_holders_checkpoint_does_not_make_it_the_old_ones() {
    let (old, new) = two_holders();
    old.save_unit(&unit_state(UNIT, 1)).await.unwrap();
    new.load_units().await.unwrap();
    new.save_unit(&unit_state(UNIT, 2)).await.unwrap();
    // The old holder thaws and reads the job's state (a next pass): its
    // token stays the version it wrote.
    assert_eq!(old.load_units().await.unwrap()[UNIT].next_seq, 2);
    stale(old.save_unit(&unit_state(UNIT, 3)).await.unwrap_err());
    assert_eq!(new.load_units().await.unwrap()[UNIT].next_seq, 2);
}

/// A store whose next `lose` PUTs land but answer with a timeout, as a
/// connection cut after the request reached the server.
#[derive(Debug)]
struct LostAnswers {
    inner: Arc<dyn object_store::ObjectStore>,
    lose: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Display for LostAnswers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LostAnswers({})", self.inner)
    }
}

#[async_trait::async_trait]
impl object_store::ObjectStore for LostAnswers {
    async fn put_opts(
        &self,
        location: &object_store::path::Path,
        payload: PutPayload,
        opts: object_store::PutOptions,
    ) -> object_store::Result<object_store::PutResult> {
        let r = self.inner.put_opts(location, payload, opts).await?;
        let lose = self.lose.load(std::sync::atomic::Ordering::SeqCst);
        if lose > 0 {
            self.lose.store(lose - 1, std::sync::atomic::Ordering::SeqCst);
            return Err(object_store::Error::Generic {
                store: "test",
                source: "operation timed out".into(),
            });
        }
        Ok(r)
    }
    async fn put_multipart_opts(
        &self,
        location: &object_store::path::Path,
        opts: object_store::PutMultipartOptions,
    ) -> object_store::Result<Box<dyn object_store::MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }
    async fn get_opts(
        &self,
        location: &object_store::path::Path,
        options: object_store::GetOptions,
    ) -> object_store::Result<object_store::GetResult> {
        self.inner.get_opts(location, options).await
    }
    async fn get_ranges(
        &self,
        location: &object_store::path::Path,
        ranges: &[std::ops::Range<u64>],
    ) -> object_store::Result<Vec<bytes::Bytes>> {
        self.inner.get_ranges(location, ranges).await
    }
    fn delete_stream(
        &self,
        locations: futures::stream::BoxStream<'static, object_store::Result<object_store::path::Path>>,
    ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::path::Path>> {
        self.inner.delete_stream(locations)
    }
    fn list(
        &self,
        prefix: Option<&object_store::path::Path>,
    ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
        self.inner.list(prefix)
    }
    async fn list_with_delimiter(&self, prefix: Option<&object_store::path::Path>) -> object_store::Result<object_store::ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }
    async fn copy_opts(
        &self,
        from: &object_store::path::Path,
        to: &object_store::path::Path,
        options: object_store::CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

#[tokio::test]
async fn a_conditional_write_whose_answer_was_lost_is_tried_again_and_found_landed() {
    let store = Arc::new(LostAnswers {
        inner: Arc::new(object_store::memory::InMemory::new()),
        lose: 0.into(),
    });
    let st = StateStore::new(
        Arc::new(Sink::with_store(&output("memory://test"), store.clone(), "out").unwrap()),
        "j",
    );
    st.load_units().await.unwrap();
    for n in 1..=3 {
        // Each write lands and its answer is lost: a create, then updates.
        store.lose.store(1, std::sync::atomic::Ordering::SeqCst);
        st.save_unit(&unit_state(UNIT, n)).await.unwrap();
    }
    store.lose.store(0, std::sync::atomic::Ordering::SeqCst);
    st.save_unit(&unit_state(UNIT, 4)).await.unwrap();
    assert_eq!(st.load_units().await.unwrap()[UNIT].next_seq, 4);
}
