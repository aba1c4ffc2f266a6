use super::*;
#[test]
fn scopes_overlap_unless_disjoint_shards() {
    assert!(overlaps("all", "shard-1-of-2"));
    assert!(overlaps("shard-1-of-2", "all"));
    assert!(!overlaps("shard-1-of-2", "shard-2-of-2"));
    assert!(overlaps("shard-1-of-2", "shard-1-of-2"));
    assert!(overlaps("shard-1-of-2", "shard-1-of-3"));
}

#[test]
fn a_holder_is_dead_when_its_pid_is_gone_or_ours() {
    let me = Holder::me();
    let other = |pid| Holder {
        host: me.host.clone(),
        pid,
        run_id: "x".into(),
    };
    assert!(other(me.pid).known_dead(&me));
    assert!(other(u32::MAX - 7).known_dead(&me));
    assert!(!other(1).known_dead(&me));
    let far = Holder {
        host: "elsewhere".into(),
        ..other(u32::MAX - 7)
    };
    assert!(!far.known_dead(&me));
}

use crate::sink::tests::{local_sink, memory_sink};

/// A lease document held by `holder` on the lease path of `scope`.
async fn plant(sink: &Sink, scope: &str, holder: Holder, expires_unix: i64) {
    let doc = LeaseDoc {
        expires_unix,
        ..now_doc("j", scope, &holder, "2024-01-01T00:00:00Z")
    };
    let path = sink.storage().path(&format!("_chainetl/j/leases/{scope}.json"));
    let body = serde_json::to_vec(&doc).unwrap();
    sink.storage().store().put(&path, body.into()).await.unwrap();
}

fn elsewhere() -> Holder {
    Holder {
        host: "another-host".into(),
        pid: 4242,
        run_id: "r".into(),
    }
}

async fn is_busy(sink: &Arc<Sink>, scope: &str) -> String {
    match Lease::acquire(sink.clone(), "j", scope).await {
        Err(LeaseError::Busy { holder, .. }) => holder,
        other => panic!("{scope}: expected Busy, got {other:?}"),
    }
}

#[tokio::test]
async fn a_local_lease_is_busy_until_its_holder_lets_go() {
    let dir = tempfile::tempdir().unwrap();
    let sink = local_sink(dir.path());
    let held = Lease::acquire(sink.clone(), "j", "all").await.unwrap();
    let doc: LeaseDoc = serde_json::from_slice(&std::fs::read(dir.path().join("_chainetl/j/leases/all.lock")).unwrap()).unwrap();
    assert_eq!(
        (doc.holder.pid, doc.scope.as_str()),
        (std::process::id(), "all"),
        "the holder names itself"
    );
    is_busy(&sink, "all").await;
    drop(held);
    let again = Lease::acquire(sink.clone(), "j", "all").await.unwrap();
    again.release().await;
    // Another job's lease is another lock.
    let _j = Lease::acquire(sink.clone(), "j", "all").await.unwrap();
    Lease::acquire(sink.clone(), "j-x", "all").await.unwrap();
}

#[tokio::test]
async fn local_shards_exclude_the_whole_job_but_not_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let sink = local_sink(dir.path());
    let _one = Lease::acquire(sink.clone(), "j", "shard-1-of-2").await.unwrap();
    let _two = Lease::acquire(sink.clone(), "j", "shard-2-of-2").await.unwrap();
    is_busy(&sink, "all").await;
    is_busy(&sink, "shard-1-of-3").await;
}

#[tokio::test]
async fn an_object_store_lease_of_a_live_holder_is_busy_and_names_it() {
    let sink = memory_sink("out");
    let in_a_minute = chrono::Utc::now().timestamp() + 60;
    plant(&sink, "all", elsewhere(), in_a_minute).await;
    let holder = is_busy(&sink, "all").await;
    assert!(
        holder.contains("pid 4242 on another-host") && holder.contains("expires at"),
        "{holder}"
    );
    // An overlapping scope is busy too, and gives its own lease back.
    is_busy(&sink, "shard-1-of-2").await;
    let left = crate::sink::tests::listed(&sink).await;
    assert_eq!(left, vec!["_chainetl/j/leases/all.json".to_string()]);
}

#[tokio::test]
async fn an_object_store_lease_is_put_if_absent_and_released_if_still_ours() {
    let sink = memory_sink("out");
    let lease = Lease::acquire(sink.clone(), "j", "all").await.unwrap();
    let path = sink.storage().path("_chainetl/j/leases/all.json");
    let bytes = sink.storage().store().get(&path).await.unwrap().bytes().await.unwrap();
    let doc: LeaseDoc = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(doc.holder.pid, std::process::id());
    lease.release().await;
    assert!(crate::sink::tests::listed(&sink).await.is_empty(), "released");

    // A lease taken over by another run is not deleted by the old holder.
    let lease = Lease::acquire(sink.clone(), "j", "all").await.unwrap();
    plant(&sink, "all", elsewhere(), chrono::Utc::now().timestamp() + 60).await;
    lease.release().await;
    is_busy(&sink, "all").await;
}

#[tokio::test]
async fn an_expired_or_dead_holders_object_store_lease_is_taken_over() {
    let sink = memory_sink("out");
    plant(&sink, "all", elsewhere(), chrono::Utc::now().timestamp() - 1).await;
    let _lease = Lease::acquire(sink.clone(), "j", "all").await.unwrap();
    let me = Holder::me();
    let dead = Holder { pid: u32::MAX - 7, ..me };
    plant(&sink, "shard-1-of-2", dead, chrono::Utc::now().timestamp() + 60).await;
    let _shard = Lease::acquire(sink.clone(), "j", "shard-1-of-2").await;
    let bytes = sink
        .storage()
        .store()
        .get(&sink.storage().path("_chainetl/j/leases/shard-1-of-2.json"))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let doc: LeaseDoc = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(doc.holder.pid, std::process::id(), "the dead holder's lease is ours now");
}
