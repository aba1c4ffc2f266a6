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
//!
//! In the `delta` format nothing leaves the tables at the repair: the
//! mark records the rewound files still in them ([`Mark::replacing`]),
//! and the next segment's files replace them in one commit a table once
//! that segment is checked against the chain (an incremental export's
//! segment is published whole, in one commit a table, when it finishes:
//! `job::publish::publish_segment`). So a reader at any version sees the
//! old branch or the new, never both. (Where the new branch's confirmed
//! head is below the old one's, the old branch's blocks above it leave
//! with the swap: the table is shorter until the head catches up.)

use crate::api::{BlocksQuery, Client, Sort};
use crate::job::error::UnitError;
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

/// The units whose files hold the export's blocks now: in `parquet`,
/// those with files on storage; in `delta`, those with files in the tables'
/// current versions or with a checkpoint (a pending segment's) — storage
/// also keeps the files earlier repairs rewound, whose units no longer
/// hold anything (taking their ranges would rewind into blocks compacted
/// since).
async fn exported_units(
    state: &StateStore,
    tables: &std::collections::BTreeSet<String>,
    prefix: &str,
    files: &[(String, String, u64)],
) -> Result<Vec<String>, UnitError> {
    if !state.publishes() {
        return Ok(files.iter().map(|(_, u, _)| u.clone()).collect());
    }
    let mut units: Vec<String> = state
        .list_live_files(tables)
        .await?
        .unwrap_or_default()
        .into_iter()
        .filter_map(|f| match f.kind {
            crate::state::JobFile::Unit(u, _) if u.starts_with(prefix) => Some(u),
            _ => None,
        })
        .collect();
    units.extend(state.load_units().await?.into_keys().filter(|id| id.starts_with(prefix)));
    Ok(units)
}

/// The `delta` format's side of a repair from block `from`, recorded in
/// `mark` before anything else changes: the rewound units' files still in
/// the tables are to be replaced ([`Mark::replacing`]) by the next
/// segment's, in one commit a table (`job::publish::publish_segment`); and
/// the units exported again start their files above every rewound file
/// ([`Mark::seq_floor`]) — and so above every transaction version the logs
/// have for them, which is a unit's next sequence after its files, and
/// rewound files stay on storage while a table has them — so no name or
/// version is used twice.
async fn replace_in_tables(
    state: &StateStore,
    tables: &std::collections::BTreeSet<String>,
    prefix: &str,
    files: &[(String, String, u64)],
    mark: &mut Mark,
    from: u64,
) -> Result<(), UnitError> {
    let rewound = |unit: &str| unit.starts_with(prefix) && block_range_of(unit).is_some_and(|(_, end)| end > from);
    let live = state.list_live_files(tables).await?.unwrap_or_default();
    for f in live {
        if let crate::state::JobFile::Unit(unit, _) = &f.kind
            && rewound(unit)
            && !mark.replacing.contains(&f.rel)
        {
            mark.replacing.push(f.rel);
        }
    }
    let stored = files.iter().filter(|(_, u, _)| rewound(u)).map(|(_, _, seq)| seq + 1);
    let checkpointed = state
        .load_units()
        .await?
        .into_values()
        .filter(|s| rewound(&s.unit))
        .map(|s| s.next_seq);
    mark.seq_floor = stored.chain(checkpointed).fold(mark.seq_floor, u64::max);
    Ok(())
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
    let tables = e.tables().into_iter().collect();
    let files = state.unit_file_seqs(&tables, &prefix).await?;
    let from = match mark.repair_from {
        Some(f) => f,
        None => exported_units(state, &tables, &prefix, &files)
            .await?
            .iter()
            .filter_map(|u| block_range_of(u))
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
        if state.publishes() {
            replace_in_tables(state, &tables, &prefix, &files, mark, from).await?;
        }
        mark.updated_at = chrono::Utc::now().to_rfc3339();
        state.save_mark(mark).await?;
    }
    let mut removed = 0;
    let rewound = |unit: &str| block_range_of(unit).is_some_and(|(_, end)| end > from);
    if state.publishes() {
        // The tables keep them until the next segment's files replace
        // them; storage keeps them for the versions that have them.
        removed = mark.replacing.len();
    } else {
        for (rel, unit, _) in &files {
            if rewound(unit) {
                state.delete_data(rel).await?;
                removed += 1;
            }
        }
    }
    let stale: Vec<String> = state
        .load_units()
        .await?
        .into_keys()
        .filter(|id| id.starts_with(&prefix) && rewound(id))
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
