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
