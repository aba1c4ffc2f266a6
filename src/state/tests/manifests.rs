//! Manifests: finished units' checkpoints folded, dropped and merged, and
//! read back as they were whatever step a crash stopped.

use super::*;
use crate::state::units::{Manifest, next_seq};

fn done(id: &str, next_seq: u64) -> UnitState {
    UnitState {
        done: true,
        cursor: None,
        ..unit_state(id, next_seq)
    }
}

async fn count(st: &StateStore, sub: &str) -> usize {
    st.list(&format!("_chainetl/j/{sub}")).await.unwrap().len()
}

#[tokio::test]
async fn folding_moves_finished_units_into_one_manifest_and_reads_the_same() {
    for (_dir, st) in stores() {
        let (a, b, c) = (
            done("e0-blocks-base-b0-10", 2),
            done("e0-blocks-base-b10-20", 1),
            unit_state("e0-blocks-base-b20-30", 3),
        );
        for u in [&a, &b, &c] {
            st.save_unit(u).await.unwrap();
        }
        let before = st.load_units().await.unwrap();
        // Only the units the caller owns are folded (a shard's own).
        assert_eq!(st.fold_units(|id| id != b.unit).await.unwrap(), 1);
        assert_eq!(st.fold_units(|_| true).await.unwrap(), 1);
        assert_eq!(count(&st, "units").await, 1, "the unit in progress keeps its file");
        assert_eq!(count(&st, "manifests").await, 2);
        assert_eq!(st.load_units().await.unwrap(), before);
        // Dropping a folded unit and one in progress; the others stay.
        st.delete_units(&[a.unit.clone(), c.unit.clone()]).await.unwrap();
        let left = st.load_units().await.unwrap();
        assert_eq!(left.keys().collect::<Vec<_>>(), vec![&b.unit]);
        // A dropped unit exported again comes back.
        st.save_unit(&done(&a.unit, 5)).await.unwrap();
        st.fold_units(|_| true).await.unwrap();
        assert_eq!(st.load_units().await.unwrap()[&a.unit].next_seq, 5);
    }
}

#[tokio::test]
async fn a_fold_that_died_before_its_deletes_reads_the_same_and_is_finished() {
    for (_dir, st) in stores() {
        let a = done("e0-blocks-base-b0-10", 2);
        st.save_unit(&a).await.unwrap();
        // The manifest written, the per-unit file not yet deleted.
        st.create_manifest(&Manifest::new(0, vec![a.clone()], Vec::new())).await.unwrap();
        assert_eq!(st.load_units().await.unwrap()[&a.unit], a);
        assert_eq!(st.fold_units(|_| true).await.unwrap(), 1);
        assert_eq!(count(&st, "manifests").await, 1, "an entry already folded is not written again");
        assert_eq!(count(&st, "units").await, 0);
        assert_eq!(st.load_units().await.unwrap()[&a.unit], a);
    }
}

#[tokio::test]
async fn merging_reads_the_same_after_every_step_a_crash_may_stop() {
    for (_dir, st) in stores() {
        for i in 0..8u64 {
            st.save_unit(&done(&format!("e0-blocks-base-b{i}-{}", i + 1), i + 1)).await.unwrap();
            st.fold_units(|_| true).await.unwrap();
            if i == 3 {
                st.delete_units(&["e0-blocks-base-b1-2".into()]).await.unwrap();
            }
        }
        let before = st.load_units().await.unwrap();
        assert_eq!(before.len(), 7);
        let manifests = st.load_manifests().await.unwrap();
        assert_eq!(manifests.len(), 9, "one a fold, one the drop");
        // A merge that dies after writing the merged manifest and deleting
        // the oldest `k` reads as before, for every `k`.
        let mut all = HashMap::new();
        for (_, m) in &manifests {
            m.apply(&mut all);
        }
        let merged = st
            .create_manifest(&Manifest::new(next_seq(&manifests), all.into_values().collect(), Vec::new()))
            .await
            .unwrap();
        for (rel, _) in &manifests {
            assert_eq!(st.load_units().await.unwrap(), before);
            st.sink.delete(rel).await.unwrap();
        }
        assert_eq!(st.load_units().await.unwrap(), before);
        st.sink.delete(&merged).await.unwrap();
        // And the merge itself.
        for (_, m) in &manifests {
            st.create_manifest(m).await.unwrap();
        }
        assert!(st.merge_manifests(MERGE_AT).await.unwrap());
        assert_eq!(count(&st, "manifests").await, 1);
        assert_eq!(st.load_units().await.unwrap(), before);
        assert!(!st.merge_manifests(MERGE_AT).await.unwrap(), "one manifest is not merged again");
    }
}

#[tokio::test]
async fn a_shard_folding_units_another_shard_drops_meanwhile_does_not_bring_them_back() {
    for (_dir, st) in stores() {
        let (x, y) = (done("e0-blocks-base-b0-10", 2), done("e0-blocks-base-b10-20", 1));
        let z = done("e0-blocks-base-b20-30", 1);
        for u in [&x, &y, &z] {
            st.save_unit(u).await.unwrap();
        }
        // z was folded before: its drop is a tombstone.
        assert_eq!(st.fold_units(|id| id == z.unit).await.unwrap(), 1);
        // Shard B reads its finished units; shard A, closing the segment
        // they belong to, drops them; then B writes its fold.
        let read_by_b = st.load_stored().await.unwrap();
        st.delete_units(&[x.unit.clone(), z.unit.clone()]).await.unwrap();
        st.fold_stored(&read_by_b, |id| id != z.unit).await.unwrap();
        let left = st.load_units().await.unwrap();
        assert_eq!(left.keys().collect::<Vec<_>>(), vec![&y.unit], "a dropped unit came back");
        assert_eq!(count(&st, "units").await, 0);
    }
}
