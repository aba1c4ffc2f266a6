//! Incremental exports, follow mode and reorg safety.
//!
//! Per incremental export and chain a high-water mark ([`Mark`]) says which
//! blocks are exported and committed. Each run cuts a [`Segment`] from the
//! mark up to the head less the chain's confirmations and records it before
//! any of its units start, so a resumed run plans the same units. When every
//! unit of a segment is done, the exported blocks are checked against the
//! chain as it is now, and the mark moves past the segment.
//!
//! Reorgs: the mark keeps the hashes of the last [`TAIL`] exported blocks.
//! Every run (and every poll in follow mode) compares them with the
//! service; a blocks export also checks that each unit's first block
//! continues from the block before it (parent hash) and that its last block
//! is still on the chain. On a mismatch the mark is rewound to the start of
//! the unit holding the first changed block, the files from there on are
//! removed, and the next segment exports them again. The rewind point is
//! written to the mark before any file is removed, so a crash during a
//! repair is finished by the next run.

use crate::api::{BlocksQuery, Client, Sort};
use crate::plan::{Segment, Unit, block_range_of};
use crate::run::UnitError;
use crate::spec::{Dataset, Export};
use crate::state::{Mark, STATE_VERSION, StateStore, TailBlock, UnitState};
use crate::vocab::chain::Chain;
use crate::vocab::window::Resolved;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Exported blocks whose hashes a mark keeps for reorg checks.
pub const TAIL: usize = 256;

/// A reorg that was detected and repaired.
#[derive(Debug, Clone, Serialize)]
pub struct Reorg {
    /// Export index.
    pub export: usize,
    /// Dataset.
    pub dataset: Dataset,
    /// Chain.
    pub chain: Chain,
    /// First exported block found changed.
    pub first_changed_block: u64,
    /// Block the export was rewound to (the start of the unit holding it).
    pub reexport_from: u64,
    /// Data files removed, to be written again.
    pub files_removed: usize,
    /// When it was repaired (RFC 3339).
    pub at: String,
}

/// A mark at an export's start, before anything is exported.
pub fn initial_mark(e: &Export, chain: Chain) -> Mark {
    Mark {
        version: STATE_VERSION,
        export: e.index,
        chain,
        next: e.incremental.as_ref().map_or(0, |i| i.start),
        tail: Vec::new(),
        repair_from: None,
        reorgs: 0,
        updated_at: chrono::Utc::now().to_rfc3339(),
    }
}

/// The newest block number the service reports.
pub async fn head(client: &Client, chain: Chain) -> Result<u64, UnitError> {
    let b = client.block(chain, None).await?;
    b.number
        .filter(|n| n.0 >= 0)
        .map(|n| n.0 as u64)
        .ok_or_else(|| UnitError::Chain(format!("{chain}: the latest block has no valid `number`")))
}

/// Current hashes of blocks `numbers`, by number (blocks the service does
/// not return are absent).
pub async fn block_hashes(client: &Client, chain: Chain, numbers: &[u64]) -> Result<HashMap<u64, String>, UnitError> {
    let mut out = HashMap::new();
    let mut sorted: Vec<u64> = numbers.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    for batch in sorted.chunks(crate::plan::NUMBERS_PER_REQUEST) {
        let mut cursor = None;
        loop {
            let q = BlocksQuery {
                numbers: Some(batch.to_vec()),
                sort: Some(Sort::Earliest),
                limit: Some(1000),
                cursor,
                ..Default::default()
            };
            let page = client.blocks(chain, &q).await?;
            for b in page.blocks {
                if let (Some(n), Some(h)) = (b.number, b.hash) {
                    out.insert(n.0 as u64, h.to_ascii_lowercase());
                }
            }
            match page.next_cursor {
                Some(c) if !c.is_empty() => cursor = Some(c),
                _ => break,
            }
        }
    }
    Ok(out)
}

/// The lowest tail block whose hash is not the one exported.
pub fn first_changed(tail: &[TailBlock], now: &HashMap<u64, String>) -> Option<u64> {
    tail.iter().filter(|t| now.get(&t.number) != Some(&t.hash)).map(|t| t.number).min()
}

/// Prefix of the ids of an export's block-range units on a chain.
fn unit_prefix(e: &Export, chain: Chain) -> String {
    format!("e{}-{}-{}-b", e.index, e.dataset, chain)
}

/// Checks the mark's tail against the chain; on a change, repairs.
pub async fn check_tail(
    client: &Client,
    state: &StateStore,
    e: &Export,
    mark: &mut Mark,
    pending: &mut Vec<Segment>,
) -> Result<Option<Reorg>, UnitError> {
    if mark.tail.is_empty() {
        return Ok(None);
    }
    let numbers: Vec<u64> = mark.tail.iter().map(|t| t.number).collect();
    let now = block_hashes(client, mark.chain, &numbers).await?;
    match first_changed(&mark.tail, &now) {
        Some(n0) => Ok(Some(repair(state, e, mark, n0, pending).await?)),
        None => Ok(None),
    }
}

/// Rewinds `mark` to the start of the unit holding block `n0` (or to the
/// start of the pending segment, whichever is lower) and removes every file
/// and checkpoint of the export's units from there on, so they are exported
/// again. Idempotent: a crash part-way is finished by calling it again
/// (see [`Mark::repair_from`]).
pub async fn repair(state: &StateStore, e: &Export, mark: &mut Mark, n0: u64, pending: &mut Vec<Segment>) -> Result<Reorg, UnitError> {
    let chain = mark.chain;
    let prefix = unit_prefix(e, chain);
    let files = state.unit_files(e.dataset, &prefix).await?;
    let from = match mark.repair_from {
        Some(f) => f,
        None => files
            .iter()
            .filter_map(|(_, u)| block_range_of(u))
            .filter(|(_, end)| *end > n0)
            .map(|(s, _)| s)
            .fold(n0, u64::min)
            .min(mark.next),
    };
    if mark.repair_from.is_none() {
        tracing::warn!(
            export = e.index,
            %chain,
            block = n0,
            "reorg: exported block {n0} of {chain} is no longer on the chain; re-exporting from block {from}"
        );
        mark.repair_from = Some(from);
        mark.updated_at = chrono::Utc::now().to_rfc3339();
        state.save_mark(mark).await?;
    }
    let mut removed = 0;
    for (rel, unit) in &files {
        if block_range_of(unit).is_some_and(|(_, end)| end > from) {
            state.delete_data(rel).await?;
            removed += 1;
        }
    }
    let stale: Vec<String> = state
        .load_units()
        .await?
        .into_keys()
        .filter(|id| id.starts_with(&prefix) && block_range_of(id).is_some_and(|(_, end)| end > from))
        .collect();
    state.delete_units(&stale).await?;
    let mut kept = Vec::new();
    for s in pending.drain(..) {
        if s.export == e.index && s.chain == Some(chain) {
            state.remove_segment(&s).await?;
        } else {
            kept.push(s);
        }
    }
    *pending = kept;
    mark.next = from.min(mark.next);
    mark.tail.retain(|t| t.number < from);
    mark.repair_from = None;
    mark.reorgs += 1;
    mark.updated_at = chrono::Utc::now().to_rfc3339();
    state.save_mark(mark).await?;
    Ok(Reorg {
        export: e.index,
        dataset: e.dataset,
        chain,
        first_changed_block: n0,
        reexport_from: from,
        files_removed: removed,
        at: mark.updated_at.clone(),
    })
}

/// The range of the next segment of an incremental export on `chain`: from
/// the mark to the head less confirmations (blocks), or to the last
/// complete UTC day before `now` (portfolios). `None`: nothing new.
pub async fn next_window(client: &Client, e: &Export, mark: &Mark, now: i64) -> Result<Option<Resolved>, UnitError> {
    let Some(inc) = &e.incremental else {
        return Ok(None);
    };
    if e.dataset == Dataset::Portfolio {
        let end = now.div_euclid(86_400) * 86_400;
        let start = mark.next as i64;
        return Ok((end > start).then_some(Resolved::Time { start, end }));
    }
    let head = head(client, mark.chain).await?;
    let confirmations = inc.confirmations(mark.chain);
    let Some(last) = head.checked_sub(confirmations) else {
        return Ok(None);
    };
    Ok((last >= mark.next).then_some(Resolved::Blocks { first: mark.next, last }))
}

/// What finishing a segment did.
#[derive(Debug)]
pub enum Finished {
    /// The mark moved past the segment.
    Advanced,
    /// Exported blocks changed: the export was rewound.
    Reorg(Reorg),
}

/// Checks a segment whose units are all done and moves the mark past it;
/// its unit checkpoints are then dropped (the mark covers them).
pub async fn finish_segment(
    client: &Client,
    state: &StateStore,
    e: &Export,
    seg: &Segment,
    units: &[Unit],
    states: &HashMap<String, UnitState>,
    pending: &mut Vec<Segment>,
) -> Result<Finished, UnitError> {
    let Some(chain) = seg.chain else {
        return Ok(Finished::Advanced);
    };
    let mut mark = state.load_mark(e.index, chain).await?.unwrap_or_else(|| initial_mark(e, chain));
    let first = match seg.window {
        Resolved::Blocks { first, .. } => first,
        Resolved::Time { start, .. } => start as u64,
    };
    if first == mark.next {
        match seg.window {
            Resolved::Time { end, .. } => mark.next = end as u64,
            Resolved::Blocks { first, last } => {
                // Hashes now of: the tail, the segment's last blocks, and
                // (blocks exports) each unit's edges as exported.
                let mut numbers: Vec<u64> = mark.tail.iter().map(|t| t.number).collect();
                numbers.extend((last + 1).saturating_sub(TAIL as u64).max(first)..=last);
                let mut edges: Vec<(u64, &UnitState)> = Vec::new();
                for u in units {
                    if let crate::plan::UnitRange::Blocks { start, .. } = u.range
                        && let Some(s) = states.get(&u.id)
                    {
                        if let Some(lb) = &s.last_block {
                            numbers.push(lb.number);
                        }
                        if s.first_parent_hash.is_some() && start > 0 {
                            numbers.push(start - 1);
                        }
                        edges.push((start, s));
                    }
                }
                let now = block_hashes(client, chain, &numbers).await?;
                let mut changed = first_changed(&mark.tail, &now);
                for (start, st) in &edges {
                    let parent_ok = match (&st.first_parent_hash, start.checked_sub(1)) {
                        (Some(p), Some(prev)) => now.get(&prev).is_none_or(|h| h == p),
                        _ => true,
                    };
                    let last_ok = st.last_block.as_ref().is_none_or(|lb| now.get(&lb.number) == Some(&lb.hash));
                    if !(parent_ok && last_ok) {
                        let n = if parent_ok { *start } else { start.saturating_sub(1) };
                        changed = Some(changed.map_or(n, |c| c.min(n)));
                    }
                }
                if let Some(n0) = changed {
                    return Ok(Finished::Reorg(repair(state, e, &mut mark, n0, pending).await?));
                }
                let mut tail: BTreeMap<u64, String> = mark.tail.iter().map(|t| (t.number, t.hash.clone())).collect();
                for n in (last + 1).saturating_sub(TAIL as u64).max(first)..=last {
                    if let Some(h) = now.get(&n) {
                        tail.insert(n, h.clone());
                    }
                }
                let skip = tail.len().saturating_sub(TAIL);
                mark.tail = tail
                    .into_iter()
                    .skip(skip)
                    .map(|(number, hash)| TailBlock { number, hash })
                    .collect();
                mark.next = last + 1;
            }
        }
        mark.updated_at = chrono::Utc::now().to_rfc3339();
        state.save_mark(&mark).await?;
    }
    // Otherwise an earlier run moved the mark and stopped before cleaning up.
    state.remove_segment(seg).await?;
    pending.retain(|s| s != seg);
    let ids: Vec<String> = units.iter().map(|u| u.id.clone()).collect();
    state.delete_units(&ids).await?;
    Ok(Finished::Advanced)
}
