//! Compaction records: settled ones folded into `compactions.json`, a
//! record being changed a file of its own that stands over its entry, and
//! nothing lost or revived whatever step a crash stopped.

use super::*;
use crate::state::{CommittedFile, Compaction, CompactionIndex, PendingCompaction};

fn record(partition: &str, generation: u64, pending: bool) -> Compaction {
    Compaction {
        version: STATE_VERSION,
        partition: partition.into(),
        generation,
        files: vec![CommittedFile {
            path: format!("{partition}/{}", crate::sink::compacted_name("j", generation, 0)),
            rows: 3,
            bytes: 100,
            checksum: None,
        }],
        replaced: vec![format!("{partition}/j-e0-blocks-base-b0-10-000000.parquet")],
        replaced_rows: Default::default(),
        pending: pending.then(|| PendingCompaction {
            generation: generation + 1,
            ..Default::default()
        }),
        rolled_back: 0,
        dissolving: Vec::new(),
        updated_at: String::new(),
    }
}

async fn loose(st: &StateStore) -> usize {
    st.list("_chainetl/j/compacted").await.unwrap().len()
}

#[tokio::test]
async fn settled_records_fold_into_one_index_and_read_the_same() {
    for (_dir, st) in stores() {
        let (a, b) = (record("blocks/chain=base", 1, false), record("blocks/chain=bsc", 1, false));
        st.save_compaction(&a).await.unwrap();
        st.save_compaction(&b).await.unwrap();
        let before = st.load_compactions().await.unwrap();
        st.fold_compactions(Some("digest".into())).await.unwrap();
        assert_eq!(loose(&st).await, 0);
        let after = st.load_compaction_state().await.unwrap();
        assert_eq!(after.records, before);
        assert_eq!((after.settled.as_deref(), after.loose), (Some("digest"), 0));

        // A swap begins: its file stands over the entry, and the index no
        // longer says settled once a fold finds it unsettled.
        let swapping = record("blocks/chain=base", 1, true);
        st.save_compaction(&swapping).await.unwrap();
        st.fold_compactions(Some("other".into())).await.unwrap();
        let now = st.load_compaction_state().await.unwrap();
        assert_eq!((now.settled, now.loose), (None, 1), "an unsettled record stays a file");
        assert_eq!(now.records, vec![swapping, b.clone()]);

        // Deleted: gone from the index and as a file.
        st.delete_compaction("blocks/chain=base").await.unwrap();
        assert_eq!(st.load_compactions().await.unwrap(), vec![b.clone()]);
        assert_eq!(loose(&st).await, 0);
    }
}

#[tokio::test]
async fn a_fold_that_dies_before_its_deletes_reads_the_same_and_finishes_next_time() {
    for (_dir, st) in stores() {
        let a = record("blocks/chain=base", 2, false);
        st.save_compaction(&a).await.unwrap();
        st.fold_compactions(None).await.unwrap();
        // The index written, the file written again as a dead fold leaves it.
        let newer = record("blocks/chain=base", 3, false);
        st.save_compaction(&newer).await.unwrap();
        let rel = st.compaction_path(&newer.partition);
        assert_eq!(
            st.load_compactions().await.unwrap(),
            vec![newer.clone()],
            "the file stands over the entry"
        );
        st.fold_compactions(None).await.unwrap();
        assert!(st.read(&rel).await.unwrap().is_none());
        assert_eq!(st.load_compactions().await.unwrap(), vec![newer]);
    }
}

#[tokio::test]
async fn a_record_in_the_index_naming_another_jobs_file_is_refused_with_the_index_path() {
    for (_dir, st) in stores() {
        let mut a = record("blocks/chain=base", 1, false);
        st.save_compaction(&a).await.unwrap();
        st.fold_compactions(None).await.unwrap();
        a.files[0].path = "blocks/chain=base/other-compacted-000001-000000.parquet".into();
        let index = CompactionIndex {
            version: STATE_VERSION,
            records: vec![a],
            settled: None,
            updated_at: String::new(),
        };
        st.write_compact_doc("_chainetl/j/compactions.json", &index).await.unwrap();
        let e = st.load_compactions().await.unwrap_err().to_string();
        assert!(e.contains("compactions.json") && e.contains("not one of this job's files"), "{e}");
    }
}
