//! Reorg safety of incremental exports.
//!
//! A mark keeps the hashes of the last [`TAIL`] exported blocks. Every run
//! (and every poll in follow mode) compares them with the service; a blocks
//! export also checks, when a segment closes, that each unit's first block
//! continues from the block before it (parent hash) and that its last block
//! is still on the chain ([`super::incremental::finish_segment`]). On a
//! mismatch the mark is rewound to the start of the unit holding the first
//! changed block, the files from there on are removed, and the next segment
//! exports them again. The rewind point is written to the mark
//! (`repair_from`) before any file is removed, so a crash during a repair
//! is finished by the next run.
//!
//! A reader listing files while a repair runs can see the files of the
//! changed blocks disappear before their replacements are written (the
//! next segment writes them); rows are never seen twice.

use super::error::UnitError;
use crate::api::{BlocksQuery, Client, Sort};
use crate::plan::{Segment, block_range_of};
use crate::spec::Export;
use crate::state::{Mark, StateStore, TailBlock};
use crate::vocab::Chain;
use crate::vocab::Dataset;
use serde::Serialize;
use std::collections::HashMap;

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

/// Current hashes of blocks `numbers`, by number (blocks the service does
/// not return are absent).
pub async fn block_hashes(client: &Client, chain: Chain, numbers: &[u64]) -> Result<HashMap<u64, String>, UnitError> {
    let mut out = HashMap::new();
    let mut sorted: Vec<u64> = numbers.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    for batch in sorted.chunks(crate::vocab::cuts::NUMBERS_PER_REQUEST) {
        let mut cursor = None;
        loop {
            let q = BlocksQuery {
                numbers: Some(batch.to_vec()),
                sort: Some(Sort::Earliest),
                limit: Some(crate::vocab::cuts::MAX_PAGE_ITEMS),
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
    let files = state.unit_files(&e.tables().into_iter().collect(), &prefix).await?;
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
