//! How many work units an export makes, counted from the spec alone, and
//! the bound on them: validation refuses an export that would make more
//! than [`MAX_UNITS`] on a chain, before anything is planned. The units
//! themselves are made by the planner (the next stage) with the same cuts
//! ([`crate::vocab::cuts`]) and the same batch sizes, which it re-exports.

use super::Selection;
use crate::vocab::chain::Chain;
use crate::vocab::cuts::{CutRule, Cuts};
use crate::vocab::window::Resolved;

/// Blocks per `numbers` request, the service's bound.
pub const NUMBERS_PER_REQUEST: usize = 1000;
/// Token lookups per unit.
pub const TOKENS_PER_UNIT: usize = 50;
/// Items per page of a list endpoint (blocks, events), the service's bound.
pub const MAX_PAGE_ITEMS: u32 = 1000;
/// Days per portfolio page, the service's bound.
pub const PORTFOLIO_DAYS_PER_PAGE: u64 = 31;

/// The units of one export and chain are at most this many: each costs
/// memory while the job runs (its id, range and state, ~0.2 KiB) and a
/// checkpoint file, so a window cut finer than this is refused by
/// `validate` (a year of Arbitrum, the fastest chain, cut automatically is
/// ~20,000 units).
pub const MAX_UNITS: u64 = 200_000;

/// How many units an export selecting `selection` makes on `chain` for
/// the window `w` at page size `page` under `rule`, counted without making
/// them; page size 1 and [`CutRule::Hourly`] give the most units any page
/// size and rule can (automatic units only grow with the page and the cap).
pub fn unit_count(selection: &Selection, chain: Chain, w: Resolved, page: u64, rule: CutRule) -> u64 {
    let page = page.max(1);
    match selection {
        Selection::BlockWindow {
            chunk_blocks, chunk_secs, ..
        }
        | Selection::Events {
            chunk_blocks, chunk_secs, ..
        } => Cuts::of_window(w, *chunk_blocks, *chunk_secs, rows_per_block(selection), chain, page, rule).count(),
        Selection::BlockNumbers(n) => n.len().div_ceil(NUMBERS_PER_REQUEST) as u64,
        Selection::Portfolio { wallets, .. } => wallets.len() as u64,
        Selection::Tokens { addresses } => addresses.len().div_ceil(TOKENS_PER_UNIT) as u64,
    }
}

/// Estimated rows a block: a filter keeps a fraction of the events.
pub(crate) fn rows_per_block(s: &Selection) -> u64 {
    match s {
        Selection::Events {
            contract_address, topics, ..
        } if contract_address.is_some() || !topics.is_empty() => 4,
        Selection::Events { .. } => 40,
        _ => 1,
    }
}
