//! Incremental exports and follow mode.
//!
//! Per incremental export and chain a high-water mark ([`Mark`], in
//! `marks/`) says which blocks (or, for portfolios, days) are exported and
//! committed. Each pass cuts a [`Segment`] from the mark up to the head
//! less the chain's confirmations (at most one pending per export and
//! chain, and at most one per `roll_interval`) and records it before any of
//! its units start, so a resumed run plans the same units. When every unit
//! of a segment is done, the exported blocks are checked against the chain
//! as it is now ([`super::reorg`]) and the mark moves past the segment.
//! Follow mode repeats passes every `poll_interval` until a signal.

use super::reorg::{Reorg, TAIL, block_hashes, first_changed, repair};
use crate::api::Client;
use crate::job::error::UnitError;
use crate::plan::{Segment, Unit, UnitRange};
use crate::spec::Export;
use crate::state::{Mark, STATE_VERSION, TailBlock, UnitState};
use crate::vocab::Chain;
use crate::vocab::Dataset;
use crate::vocab::window::Resolved;
use std::collections::{BTreeMap, HashMap};

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
        replacing: Vec::new(),
        seq_floor: 0,
        updated_at: chrono::Utc::now().to_rfc3339(),
    }
}

/// The newest block number the service reports.
pub async fn head(client: &Client, chain: Chain) -> Result<u64, UnitError> {
    let b = client.block(chain, None).await?;
    b.number.filter(|n| n.0 >= 0).map(|n| n.0 as u64).ok_or(UnitError::NoHead { chain })
}

/// The range of the next segment of an incremental export: from the mark
/// to `head` less confirmations (blocks), or to the last complete UTC day
/// before `now` (portfolios, which need no head). `None`: nothing new.
pub fn next_window(e: &Export, mark: &Mark, now: i64, head: Option<u64>) -> Option<Resolved> {
    let inc = e.incremental.as_ref()?;
    if e.dataset == Dataset::Portfolio {
        let end = now.div_euclid(86_400) * 86_400;
        let start = mark.next as i64;
        return (end > start).then_some(Resolved::Time { start, end });
    }
    let last = head?.checked_sub(inc.confirmations(mark.chain))?;
    (last >= mark.next).then_some(Resolved::Blocks { first: mark.next, last })
}

/// What finishing a segment did.
#[derive(Debug)]
pub enum Finished {
    /// The mark moved past the segment.
    Advanced,
    /// Exported blocks changed: the export was rewound.
    Reorg(Reorg),
}

/// Checks a segment whose units are all done and moves the mark past it
/// (in the `delta` format, publishing it first); its unit checkpoints are
/// then dropped (the mark covers them).
pub(crate) async fn finish_segment(
    client: &Client,
    shared: &super::setup::Shared,
    e: &Export,
    seg: &Segment,
    units: &[Unit],
    states: &HashMap<String, UnitState>,
    pending: &mut Vec<Segment>,
) -> Result<Finished, UnitError> {
    let Some(chain) = seg.chain else {
        return Ok(Finished::Advanced);
    };
    let state = &shared.state;
    let mut mark = state.load_mark(e.index, chain).await?.unwrap_or_else(|| initial_mark(e, chain));
    let first = match seg.window {
        Resolved::Blocks { first, .. } => first,
        Resolved::Time { start, .. } => start as u64,
    };
    // Otherwise an earlier run moved the mark and stopped before cleaning up.
    if first == mark.next {
        match seg.window {
            Resolved::Time { end, .. } => mark.next = end as u64,
            Resolved::Blocks { first, last } => {
                let now = segment_hashes(client, &mark, first, last, units, states).await?;
                if let Some(n0) = first_change(&mark, &now, units, states) {
                    return Ok(Finished::Reorg(repair(state, e, &mut mark, n0, pending).await?));
                }
                advance_tail(&mut mark, &now, first, last);
            }
        }
        // In the `delta` format the segment joins the tables now, whole,
        // replacing what a repair rewound (before the mark moves: a crash
        // between finds the commit in the logs and makes it no more).
        super::publish::publish_segment(shared, units, states, &mark.replacing).await?;
        mark.replacing.clear();
        mark.updated_at = chrono::Utc::now().to_rfc3339();
        state.save_mark(&mark).await?;
    }
    state.remove_segment(seg).await?;
    pending.retain(|s| s != seg);
    let ids: Vec<String> = units.iter().map(|u| u.id.clone()).collect();
    state.delete_units(&ids).await?;
    Ok(Finished::Advanced)
}

/// The blocks a block unit's checkpoint noted at its edges: its first
/// block's parent hash and its last block, as exported.
fn unit_edges<'a>(units: &[Unit], states: &'a HashMap<String, UnitState>) -> Vec<(u64, &'a UnitState)> {
    units
        .iter()
        .filter_map(|u| match u.range {
            UnitRange::Blocks { start, .. } => states.get(&u.id).map(|s| (start, s)),
            _ => None,
        })
        .collect()
}

/// Hashes now of: the mark's tail, the segment's last blocks, and (blocks
/// exports) each unit's edges as exported.
async fn segment_hashes(
    client: &Client,
    mark: &Mark,
    first: u64,
    last: u64,
    units: &[Unit],
    states: &HashMap<String, UnitState>,
) -> Result<HashMap<u64, String>, UnitError> {
    let mut numbers: Vec<u64> = mark.tail.iter().map(|t| t.number).collect();
    numbers.extend((last + 1).saturating_sub(TAIL as u64).max(first)..=last);
    for (start, s) in unit_edges(units, states) {
        if let Some(lb) = &s.last_block {
            numbers.push(lb.number);
        }
        if s.first_parent_hash.is_some() && start > 0 {
            numbers.push(start - 1);
        }
    }
    block_hashes(client, mark.chain, &numbers).await
}

/// The first exported block no longer on the chain: in the mark's tail, or
/// at a unit's edges.
fn first_change(mark: &Mark, now: &HashMap<u64, String>, units: &[Unit], states: &HashMap<String, UnitState>) -> Option<u64> {
    let mut changed = first_changed(&mark.tail, now);
    for (start, st) in unit_edges(units, states) {
        let parent_ok = match (&st.first_parent_hash, start.checked_sub(1)) {
            (Some(p), Some(prev)) => now.get(&prev).is_none_or(|h| h == p),
            _ => true,
        };
        let last_ok = st.last_block.as_ref().is_none_or(|lb| now.get(&lb.number) == Some(&lb.hash));
        if !(parent_ok && last_ok) {
            let n = if parent_ok { start } else { start.saturating_sub(1) };
            changed = Some(changed.map_or(n, |c| c.min(n)));
        }
    }
    changed
}

/// Moves the mark past blocks `first..=last`, keeping the last [`TAIL`]
/// hashes.
fn advance_tail(mark: &mut Mark, now: &HashMap<u64, String>, first: u64, last: u64) {
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
