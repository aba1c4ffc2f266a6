//! Sharding: which units one of `n` cooperating processes runs.

use super::unit::Unit;

/// Units of shard `k` of `n` (1-based `k`), balanced by estimated requests:
/// units are dealt largest first to the least-loaded shard, ties broken by
/// id, so every shard computes the same assignment with no coordination.
pub fn shard(units: Vec<Unit>, k: usize, n: usize) -> Vec<Unit> {
    if n <= 1 {
        return units;
    }
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by(|a, b| {
        units[*b]
            .estimated_requests
            .cmp(&units[*a].estimated_requests)
            .then_with(|| units[*a].id.cmp(&units[*b].id))
    });
    let mut load = vec![0u64; n];
    let mut owner = vec![0usize; units.len()];
    for i in order {
        let (best, _) = load.iter().enumerate().min_by_key(|(j, l)| (**l, *j)).unwrap_or((0, &0));
        load[best] += units[i].estimated_requests;
        owner[i] = best;
    }
    units
        .into_iter()
        .enumerate()
        .filter(|(i, _)| owner[*i] == k - 1)
        .map(|(_, u)| u)
        .collect()
}
