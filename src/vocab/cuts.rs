//! How work is cut into units: the service's batch bounds (block numbers,
//! token lookups and portfolio days per request), the bound on units per
//! export and chain, and the arithmetic that cuts a block range or a time
//! window into unit ranges. `spec` counts units with it
//! ([`crate::spec::Selection::unit_count`], to bound them before anything
//! is planned) and `plan` makes them with it (`plan/cut.rs`: ids and
//! estimates), so the two can never disagree.
//!
//! Invariants:
//! - Cuts fall at multiples of the chunk size counted from zero (block 0,
//!   the unix epoch), so the units of a window stay the same when the
//!   window is widened.
//! - The ranges cover the window exactly, in order, none empty.
//! - [`Cuts::count`] is arithmetic: it allocates nothing however large
//!   the window, and it equals the number of [`Cuts::ranges`].
//! - Everything is computed in `i128`, so no window can make a number wrap.

use super::chain::Chain;
use super::window::Resolved;

// The service's bounds, and the batch sizes they set: how work is cut
// into units and units into pages.

/// Blocks per `numbers` request, the service's bound.
pub const NUMBERS_PER_REQUEST: usize = 1000;
/// Token lookups per unit.
pub const TOKENS_PER_UNIT: usize = 50;
/// Token lookups per page of a tokens unit.
pub const TOKENS_PER_PAGE: usize = 10;
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

/// A window without `chunk_blocks`/`chunk_duration` is cut into at least
/// this many units where it is big enough: pages of one unit are fetched one
/// after another (cursors are sequential), so units are what lets
/// `max_concurrency` requests be in flight at once.
const AUTO_UNITS: i64 = 64;
/// Largest automatic unit, in blocks and in seconds, under
/// [`CutRule::Hourly`] (jobs started before [`CutRule::Daily`]).
const MAX_AUTO_BLOCKS: i64 = 10_000;
const MAX_AUTO_SECS: i64 = 3_600;
/// Largest automatic unit under [`CutRule::Daily`]: a UTC day, or 100,000
/// blocks (about a day of blocks on a 1-second chain). See [`CutRule`] for
/// why a unit may be this long.
const MAX_DAILY_BLOCKS: i64 = 100_000;
const MAX_DAILY_SECS: i64 = 86_400;
/// Smallest automatic unit, in estimated pages: every unit costs a file, a
/// checkpoint and a last page that is rarely full, so units of a page or
/// two would cost requests (and a quota) as well as small files.
const MIN_UNIT_PAGES: f64 = 8.0;
/// The end of a window (this share of its units) is cut finer, down to
/// `MIN_TAIL_PAGES`: units run largest first, so the job ends on short
/// units and the request slots stay busy until close to the end, instead
/// of idling while the last big units page through alone.
const TAIL_SHARE: usize = 8;
const MIN_TAIL_PAGES: f64 = 2.0;
/// Automatic unit sizes are round numbers, so unit ids read well and the
/// cuts fall on the same blocks whatever the window.
/// Sizes above a rule's largest unit are never picked (sizes are clamped
/// to it), so both rules share the ladders.
/// How many more units than at page size 1 another page size may cut: a
/// larger page picks larger units, fewer of them over the window, but
/// cut at multiples of their size, and ladder sizes need not divide each
/// other (10 and 25), so each of the cut's two runs (the units and the
/// finer tail) may gain one unit from where its multiples fall (page 1
/// cuts [270, 276) at multiples of 10, one unit; page 547 at multiples of
/// 25, two). Validation's bound on units counts at page 1 plus this.
pub const ALIGNMENT_SLACK: u64 = 2;
const NICE_BLOCKS: [i64; 17] = [
    10, 20, 25, 50, 100, 200, 250, 500, 1_000, 2_000, 2_500, 5_000, 10_000, 20_000, 25_000, 50_000, 100_000,
];
const NICE_SECS: [i64; 13] = [
    60, 300, 600, 900, 1_200, 1_800, 3_600, 7_200, 10_800, 14_400, 21_600, 43_200, 86_400,
];

/// How large an automatic unit may grow. A job keeps the rule it started
/// with (recorded in its state), so its units never move under it.
///
/// Why [`CutRule::Daily`] lets a unit grow to a day: units exist for
/// request concurrency, and the cut already makes at least `AUTO_UNITS`
/// of them per export and chain where the window allows, plus the finer
/// tail that keeps request slots busy at the end. Beyond that, more units
/// buy nothing: resume granularity comes from the commits *within* a unit
/// (a checkpoint after each file, cursor included), not from its size, and
/// a unit's memory is bounded by file rolling, not by its length. What
/// more units do cost is one checkpoint, one set of small files and a last
/// page that is rarely full each, and state that grows with the job. Under
/// the hourly cap a year on seven chains was 84,315 units; under the daily
/// one it is ~3,500. Every window long enough still gets at least
/// `AUTO_UNITS` units per export and chain and its fine tail; the cap only
/// holds windows past 64 days (6.4M blocks) at a day (100,000 blocks) a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutRule {
    /// Units of at most an hour or 10,000 blocks (jobs started before the
    /// rule was recorded).
    Hourly,
    /// Units of at most a day or 100,000 blocks.
    Daily,
}

impl CutRule {
    /// The rule new jobs are cut with.
    pub const LATEST: CutRule = CutRule::Daily;

    /// The rule recorded as `version` in a job's state (absent: [`CutRule::Hourly`]).
    pub fn of_version(version: Option<u32>) -> Option<CutRule> {
        match version {
            None | Some(1) => Some(CutRule::Hourly),
            Some(2) => Some(CutRule::Daily),
            Some(_) => None,
        }
    }

    /// The number recorded in a job's state.
    pub fn version(self) -> u32 {
        match self {
            CutRule::Hourly => 1,
            CutRule::Daily => 2,
        }
    }

    /// Largest automatic unit: `(blocks, seconds)`.
    fn max(self) -> (i64, i64) {
        match self {
            CutRule::Hourly => (MAX_AUTO_BLOCKS, MAX_AUTO_SECS),
            CutRule::Daily => (MAX_DAILY_BLOCKS, MAX_DAILY_SECS),
        }
    }
}

/// How `[lo, hi)` is cut: at multiples of `size` up to `tail_from`, then
/// at multiples of `fine`. Described by four numbers, so the units of any
/// window can be counted without being made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cuts {
    lo: i128,
    hi: i128,
    size: i128,
    tail_from: i128,
    fine: i128,
}

impl Cuts {
    /// The cuts of a resolved window: blocks `first..=last` or seconds
    /// `start..end`, at `chunk_blocks` / `chunk_secs` when set, else
    /// automatic for `rows_per_block` estimated rows a block of `chain`
    /// and `page` rows a page, units at most as large as `rule` allows.
    pub fn of_window(
        w: Resolved,
        chunk_blocks: Option<u64>,
        chunk_secs: Option<i64>,
        rows_per_block: u64,
        chain: Chain,
        page: u64,
        rule: CutRule,
    ) -> Cuts {
        let (max_blocks, max_secs) = rule.max();
        match w {
            Resolved::Blocks { first, last } => {
                let (lo, hi) = (i128::from(first), i128::from(last) + 1);
                match chunk_blocks {
                    Some(c) => Cuts::even(lo, hi, i128::from(c)),
                    None => Cuts::auto(lo, hi, rows_per_block as f64, page as f64, max_blocks, &NICE_BLOCKS),
                }
            }
            Resolved::Time { start, end } => {
                let (lo, hi) = (i128::from(start), i128::from(end));
                match chunk_secs {
                    Some(c) => Cuts::even(lo, hi, i128::from(c)),
                    None => {
                        let rows_per_sec = rows_per_block as f64 * 1000.0 / chain.block_ms().max(1) as f64;
                        Cuts::auto(lo, hi, rows_per_sec, page as f64, max_secs, &NICE_SECS)
                    }
                }
            }
        }
    }

    /// `[lo, hi)` cut at multiples of `size`.
    fn even(lo: i128, hi: i128, size: i128) -> Cuts {
        let size = size.max(1);
        Cuts {
            lo,
            hi,
            size,
            tail_from: hi.max(lo),
            fine: size,
        }
    }

    /// `[lo, hi)` cut automatically (`rows` estimated rows per block or
    /// second, `page` rows a page): into `AUTO_UNITS` units or more, of at
    /// least `MIN_UNIT_PAGES`; the last `1/TAIL_SHARE` of them a quarter as
    /// long, where that stays above `MIN_TAIL_PAGES`.
    fn auto(lo: i128, hi: i128, rows: f64, page: f64, max: i64, nice: &[i64]) -> Cuts {
        // A float-to-int `as` saturates (and NaN is 0): no wrap.
        let min_size = |pages: f64| (pages * page / rows.max(1e-9)).ceil() as i128;
        let max = i128::from(max);
        let size = nice_size((hi - lo) / i128::from(AUTO_UNITS), min_size(MIN_UNIT_PAGES), max, nice).max(1);
        let mut cuts = Cuts::even(lo, hi, size);
        let fine = nice_size(size / 4, min_size(MIN_TAIL_PAGES), max, nice).max(1);
        let n = count_chunks(lo, hi, size);
        if fine < size && n >= TAIL_SHARE as i128 {
            let keep = n - (n + TAIL_SHARE as i128 - 1) / TAIL_SHARE as i128;
            // The start of cut number `keep` (keep >= 7, so not the first).
            cuts.tail_from = (lo.div_euclid(size) + keep) * size;
            cuts.fine = fine;
        }
        cuts
    }

    /// How many ranges [`Cuts::ranges`] gives, without making them.
    pub fn count(&self) -> u64 {
        let n = count_chunks(self.lo, self.tail_from, self.size) + count_chunks(self.tail_from, self.hi, self.fine);
        u64::try_from(n).unwrap_or(u64::MAX)
    }

    /// The ranges, in order; they cover `[lo, hi)` exactly.
    pub fn ranges(&self) -> Vec<(i128, i128)> {
        let mut out = chunks(self.lo, self.tail_from, self.size);
        out.extend(chunks(self.tail_from, self.hi, self.fine));
        out
    }
}

/// The largest nice size of at most `want`, but no smaller than the
/// smallest nice size of at least `min` and no larger than `max`.
fn nice_size(want: i128, min: i128, max: i128, nice: &[i64]) -> i128 {
    let floor = nice.iter().map(|&n| i128::from(n)).find(|&n| n >= min).unwrap_or(max).min(max);
    let at_most = nice.iter().map(|&n| i128::from(n)).rev().find(|&n| n <= want).unwrap_or(0);
    at_most.clamp(floor, max)
}

/// Number of ranges `chunks(lo, hi, size)` gives.
fn count_chunks(lo: i128, hi: i128, size: i128) -> i128 {
    let size = size.max(1);
    if lo >= hi {
        0
    } else {
        (hi - 1).div_euclid(size) - lo.div_euclid(size) + 1
    }
}

/// `[lo, hi)` cut at multiples of `size`.
fn chunks(lo: i128, hi: i128, size: i128) -> Vec<(i128, i128)> {
    let size = size.max(1);
    let mut out = Vec::with_capacity(usize::try_from(count_chunks(lo, hi, size)).unwrap_or(0).min(1 << 20));
    let mut s = lo;
    while s < hi {
        let e = ((s.div_euclid(size) + 1) * size).min(hi);
        out.push((s, e));
        s = e;
    }
    out
}

#[cfg(test)]
mod tests;
