//! Splits a job into independent work units. Pure: no I/O.
//!
//! Each unit owns a half-open range that it alone is responsible for, and
//! its id is deterministic (same spec + same frozen windows ⇒ same units),
//! so checkpoints and file names line up across runs and machines.
//! Block and time ranges are cut at multiples of the chunk size counted
//! from zero (block 0, the unix epoch), so units stay stable even when a
//! window is widened.
//!
//! Bounds: cuts are computed in `i128` and estimates saturate, so no
//! window can make a number wrap; the units of one export and chain are
//! at most [`MAX_UNITS`], which `validate` checks with [`unit_count`]
//! before anything is planned (counting is arithmetic: it allocates
//! nothing however large the window), so planning memory is bounded.

use crate::spec::{Dataset, Export, Selection, Spec};
use crate::vocab::chain::Chain;
use crate::vocab::window::{Resolved, Window, day_of};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The range a unit owns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UnitRange {
    /// Blocks `start <= n < end`.
    Blocks {
        /// First block.
        start: u64,
        /// One past the last block.
        end: u64,
    },
    /// Unix seconds `start <= t < end`.
    Time {
        /// First second.
        start: i64,
        /// First second excluded.
        end: i64,
    },
    /// Explicit block numbers (≤ 1000, sorted).
    Numbers {
        /// The blocks.
        numbers: Vec<u64>,
    },
    /// One wallet's days whose midnight is in `start <= t < end`.
    Wallet {
        /// The wallet, lower-case.
        wallet: String,
        /// First second.
        start: i64,
        /// First second excluded.
        end: i64,
    },
    /// Token addresses to look up.
    Tokens {
        /// Lower-case addresses.
        addresses: Vec<String>,
    },
}

/// One work unit.
#[derive(Debug, Clone)]
pub struct Unit {
    /// Deterministic id, safe in file names.
    pub id: String,
    /// Index of its export in the spec.
    pub export: usize,
    /// Dataset.
    pub dataset: Dataset,
    /// Chain.
    pub chain: Chain,
    /// What it owns.
    pub range: UnitRange,
    /// Estimated requests, used to balance shards and estimate work.
    pub estimated_requests: u64,
}

impl fmt::Display for UnitRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitRange::Blocks { start, end } => write!(f, "blocks {start}..{}", end.saturating_sub(1)),
            UnitRange::Time { start, end } => write!(f, "{}", Resolved::Time { start: *start, end: *end }),
            UnitRange::Numbers { numbers } => write!(
                f,
                "{} blocks {}..{}",
                numbers.len(),
                numbers.first().copied().unwrap_or(0),
                numbers.last().copied().unwrap_or(0)
            ),
            UnitRange::Wallet { wallet, start, end } => write!(f, "wallet {wallet} {}", Resolved::Time { start: *start, end: *end }),
            UnitRange::Tokens { addresses } => write!(f, "{} tokens", addresses.len()),
        }
    }
}

/// A slice of an aligned or incremental export fixed by one run (a UTC
/// period, or the blocks from the high-water mark to the confirmed head),
/// recorded before any of its units start so that a resumed run plans
/// exactly the same units.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    /// Index of its export.
    pub export: usize,
    /// Incremental segments belong to one chain; aligned periods to all the export's chains.
    pub chain: Option<Chain>,
    /// The range.
    pub window: Resolved,
}

impl Segment {
    /// Deterministic id, safe in object names.
    pub fn id(&self) -> String {
        let w = match self.window {
            Resolved::Blocks { first, last } => format!("b{first}-{last}"),
            Resolved::Time { start, end } => format!("t{start}-{end}"),
        };
        match self.chain {
            Some(c) => format!("e{}-{c}-{w}", self.export),
            None => format!("e{}-{w}", self.export),
        }
    }

    /// Whether `unit` is one of this segment's units.
    pub fn owns(&self, unit: &Unit) -> bool {
        unit.export == self.export
            && self.chain.is_none_or(|c| c == unit.chain)
            && match (&unit.range, self.window) {
                (UnitRange::Blocks { start, end }, Resolved::Blocks { first, last }) => *start >= first && *end <= last + 1,
                (UnitRange::Time { start, end }, Resolved::Time { start: s, end: e }) => *start >= s && *end <= e,
                (UnitRange::Wallet { start, end, .. }, Resolved::Time { start: s, end: e }) => *start == s && *end == e,
                _ => false,
            }
    }
}

/// The block range `[start, end)` of a block-range unit, from its id.
pub fn block_range_of(unit_id: &str) -> Option<(u64, u64)> {
    let (_, r) = unit_id.rsplit_once("-b")?;
    let (s, e) = r.split_once('-')?;
    Some((s.parse().ok()?, e.parse().ok()?))
}

/// Whether `id` is a unit id as [`plan`] writes them, read strictly:
/// `e<export>-<dataset>-<chain>-<range>` with `<range>` one of `b<first>-<end>`,
/// `t<start>-<end>`, `n<5 digits>`, `w<40 hex>-d<day>-<day>`, `a<5 digits>`.
/// File names are `<job>-<unit>-<seq>.parquet`, and job names may contain
/// `-`: only a strict reading tells job `x`'s files from job `x-y`'s, so a
/// job never deletes or counts files of another job sharing its output.
pub fn is_unit_id(id: &str) -> bool {
    fn digits(s: &str) -> bool {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
    }
    fn signed(s: &str) -> bool {
        digits(s.strip_prefix('-').unwrap_or(s))
    }
    /// `<a>-<b>`; each may be negative when `neg` (times before 1970).
    fn pair(s: &str, neg: bool) -> bool {
        let body = if neg { s.strip_prefix('-').unwrap_or(s) } else { s };
        match body.split_once('-') {
            Some((a, b)) => digits(a) && if neg { signed(b) } else { digits(b) },
            None => false,
        }
    }
    let Some(rest) = id.strip_prefix('e') else {
        return false;
    };
    let mut parts = rest.splitn(4, '-');
    let (Some(idx), Some(dataset), Some(chain), Some(range)) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    if !digits(idx) || Dataset::parse(dataset).is_none() || chain.parse::<Chain>().is_err() {
        return false;
    }
    let (kind, body) = range.split_at(range.len().min(1));
    match kind {
        "b" => pair(body, false),
        "t" => pair(body, true),
        "n" | "a" => body.len() == 5 && digits(body),
        "w" => {
            let Some((wallet, days)) = body.split_once("-d") else {
                return false;
            };
            wallet.len() == 40 && wallet.bytes().all(|b| b.is_ascii_hexdigit()) && pair(days, true)
        }
        _ => false,
    }
}

/// Blocks per `numbers` request, the service's bound.
pub const NUMBERS_PER_REQUEST: usize = 1000;
/// Token lookups per unit.
pub const TOKENS_PER_UNIT: usize = 50;

/// The instant relative windows resolve against: now, or the frozen clock
/// of a built-in simulator (so a frozen demo stays reproducible).
pub fn job_now(spec: &Spec) -> i64 {
    if let crate::spec::BaseUrl::Sim(o) = &spec.source.base_url
        && let Some(t) = &o.frozen_at
        && let Ok(secs) = crate::vocab::window::parse_instant(t)
    {
        return secs;
    }
    chrono::Utc::now().timestamp()
}

/// Resolves every export's window against `now` (unix seconds); `None` for
/// exports without one and for aligned or incremental exports, whose range
/// is decided per run. Done once per job; the result is frozen in its state.
pub fn freeze_windows(spec: &Spec, now: i64) -> Vec<Option<Resolved>> {
    spec.exports
        .iter()
        .map(|e| match &e.selection {
            _ if e.per_run() => None,
            Selection::BlockWindow { window, .. } | Selection::Events { window, .. } | Selection::Portfolio { window, .. } => {
                Some(window.resolve(now))
            }
            Selection::BlockNumbers(_) | Selection::Tokens { .. } => None,
        })
        .collect()
}

/// The period an aligned export covers when run at `now`.
pub fn aligned_segment(e: &Export, now: i64) -> Option<Segment> {
    let align = e.align?;
    let secs = match &e.selection {
        Selection::BlockWindow { window, .. } | Selection::Events { window, .. } | Selection::Portfolio { window, .. } => match window {
            Window::Relative { secs } => *secs,
            _ => return None,
        },
        _ => return None,
    };
    Some(Segment {
        export: e.index,
        chain: None,
        window: align.resolve(secs, now),
    })
}

/// Every unit of the job, in a deterministic order: exports with frozen
/// windows from `windows`, aligned and incremental ones from `segments`.
/// `page_size` is the one the job's units were cut for (frozen with the
/// windows: the cut must not move when a resumed run changes the page size).
pub fn plan(spec: &Spec, windows: &[Option<Resolved>], page_size: u32, segments: &[Segment]) -> Vec<Unit> {
    let page = page_size.max(1) as u64;
    let mut units = Vec::new();
    for e in &spec.exports {
        if e.per_run() {
            for s in segments.iter().filter(|s| s.export == e.index) {
                for &chain in &e.chains {
                    if s.chain.is_none_or(|c| c == chain) {
                        plan_export(e, chain, Some(s.window), page, &mut units);
                    }
                }
            }
            continue;
        }
        let frozen = windows.get(e.index).copied().flatten();
        for &chain in &e.chains {
            plan_export(e, chain, frozen, page, &mut units);
        }
    }
    units
}

fn plan_export(e: &Export, chain: Chain, frozen: Option<Resolved>, page: u64, out: &mut Vec<Unit>) {
    let prefix = format!("e{}-{}-{}", e.index, e.dataset, chain);
    let mut push = |id: String, range: UnitRange, estimated_requests: u64| {
        out.push(Unit {
            id,
            export: e.index,
            dataset: e.dataset,
            chain,
            range,
            estimated_requests: estimated_requests.max(1),
        });
    };
    match &e.selection {
        Selection::BlockWindow {
            window,
            chunk_blocks,
            chunk_secs,
        }
        | Selection::Events {
            window,
            chunk_blocks,
            chunk_secs,
            ..
        } => {
            let resolved = frozen.unwrap_or_else(|| window.resolve(0));
            let per_block = rows_per_block(&e.selection);
            match resolved {
                Resolved::Blocks { first, last } => {
                    let (lo, hi) = (i128::from(first), i128::from(last) + 1);
                    let cuts = match chunk_blocks {
                        Some(c) => Cuts::even(lo, hi, i128::from(*c)),
                        None => Cuts::auto(lo, hi, per_block as f64, page as f64, MAX_AUTO_BLOCKS, &NICE_BLOCKS),
                    };
                    for (s, end) in cuts.ranges() {
                        // Cuts lie within [first, last + 1]; only last = u64::MAX
                        // (refused by validation) could saturate here.
                        let (s, end) = (u64::try_from(s).unwrap_or(u64::MAX), u64::try_from(end).unwrap_or(u64::MAX));
                        let blocks = end.saturating_sub(s);
                        push(
                            format!("{prefix}-b{s}-{end}"),
                            UnitRange::Blocks { start: s, end },
                            (blocks.saturating_mul(per_block) / page).saturating_add(1),
                        );
                    }
                }
                Resolved::Time { start, end } => {
                    let (lo, hi) = (i128::from(start), i128::from(end));
                    let cuts = match chunk_secs {
                        Some(c) => Cuts::even(lo, hi, i128::from(*c)),
                        None => {
                            let rows_per_sec = per_block as f64 * 1000.0 / chain.block_ms().max(1) as f64;
                            Cuts::auto(lo, hi, rows_per_sec, page as f64, MAX_AUTO_SECS, &NICE_SECS)
                        }
                    };
                    for (s, t) in cuts.ranges() {
                        // Cuts lie within [start, end], both i64.
                        let (s, t) = (i64::try_from(s).unwrap_or(i64::MAX), i64::try_from(t).unwrap_or(i64::MAX));
                        let ms = u64::try_from(chain.block_ms()).unwrap_or(1).max(1);
                        let blocks = u64::try_from(i128::from(t) - i128::from(s)).unwrap_or(0).saturating_mul(1000) / ms;
                        push(
                            format!("{prefix}-t{s}-{t}"),
                            UnitRange::Time { start: s, end: t },
                            (blocks.saturating_mul(per_block) / page).saturating_add(1),
                        );
                    }
                }
            }
        }
        Selection::BlockNumbers(numbers) => {
            for (i, batch) in numbers.chunks(NUMBERS_PER_REQUEST).enumerate() {
                let n = batch.len() as u64;
                push(
                    format!("{prefix}-n{i:05}"),
                    UnitRange::Numbers { numbers: batch.to_vec() },
                    n.div_ceil(page),
                );
            }
        }
        Selection::Portfolio { wallets, window, .. } => {
            let (start, end) = match frozen.unwrap_or_else(|| window.resolve(0)) {
                Resolved::Time { start, end } => (start, end),
                // Validation rejects block ranges for portfolios.
                Resolved::Blocks { .. } => return,
            };
            let days = u64::try_from((i128::from(end) - i128::from(start)) / 86_400 + 1).unwrap_or(0);
            for w in wallets {
                push(
                    format!("{prefix}-w{}-d{}-{}", &w[2..], day_of(start), day_of(end)),
                    UnitRange::Wallet {
                        wallet: w.clone(),
                        start,
                        end,
                    },
                    days.div_ceil(page.min(31)),
                );
            }
        }
        Selection::Tokens { addresses } => {
            for (i, batch) in addresses.chunks(TOKENS_PER_UNIT).enumerate() {
                push(
                    format!("{prefix}-a{i:05}"),
                    UnitRange::Tokens { addresses: batch.to_vec() },
                    batch.len() as u64,
                );
            }
        }
    }
}

/// A window without `chunk_blocks`/`chunk_duration` is cut into at least
/// this many units where it is big enough: pages of one unit are fetched one
/// after another (cursors are sequential), so units are what lets
/// `max_concurrency` requests be in flight at once.
const AUTO_UNITS: i64 = 64;
/// Largest automatic unit, in blocks and in seconds.
const MAX_AUTO_BLOCKS: i64 = 10_000;
const MAX_AUTO_SECS: i64 = 3_600;
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
const NICE_BLOCKS: [i64; 13] = [10, 20, 25, 50, 100, 200, 250, 500, 1_000, 2_000, 2_500, 5_000, 10_000];
const NICE_SECS: [i64; 7] = [60, 300, 600, 900, 1_200, 1_800, 3_600];

/// The units of one export and chain are at most this many: each costs
/// memory while the job runs (its id, range and state, ~0.2 KiB) and a
/// checkpoint file, so a window cut finer than this is refused by
/// `validate` (a year of Arbitrum, the fastest chain, cut automatically is
/// ~20,000 units).
pub const MAX_UNITS: u64 = 200_000;

/// The largest nice size of at most `want`, but no smaller than the
/// smallest nice size of at least `min` and no larger than `max`.
fn nice_size(want: i128, min: i128, max: i128, nice: &[i64]) -> i128 {
    let floor = nice.iter().map(|&n| i128::from(n)).find(|&n| n >= min).unwrap_or(max).min(max);
    let at_most = nice.iter().map(|&n| i128::from(n)).rev().find(|&n| n <= want).unwrap_or(0);
    at_most.clamp(floor, max)
}

/// How `[lo, hi)` is cut: at multiples of `size` up to `tail_from`, then
/// at multiples of `fine`. Described by four numbers, so the units of any
/// window can be counted without being made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cuts {
    lo: i128,
    hi: i128,
    size: i128,
    tail_from: i128,
    fine: i128,
}

impl Cuts {
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
    fn count(&self) -> u64 {
        let n = count_chunks(self.lo, self.tail_from, self.size) + count_chunks(self.tail_from, self.hi, self.fine);
        u64::try_from(n).unwrap_or(u64::MAX)
    }

    /// The ranges, in order; they cover `[lo, hi)` exactly.
    fn ranges(&self) -> Vec<(i128, i128)> {
        let mut out = chunks(self.lo, self.tail_from, self.size);
        out.extend(chunks(self.tail_from, self.hi, self.fine));
        out
    }
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

/// How many units an export selecting `selection` makes on `chain` for
/// the window `w` at page size `page`, counted without making them; page
/// size 1 gives the most units any page size can (automatic units only
/// grow with the page).
pub fn unit_count(selection: &Selection, chain: Chain, w: Resolved, page: u64) -> u64 {
    let page = page.max(1);
    match selection {
        Selection::BlockWindow {
            chunk_blocks, chunk_secs, ..
        }
        | Selection::Events {
            chunk_blocks, chunk_secs, ..
        } => {
            let per_block = rows_per_block(selection);
            let cuts = match w {
                Resolved::Blocks { first, last } => {
                    let (lo, hi) = (i128::from(first), i128::from(last) + 1);
                    match chunk_blocks {
                        Some(c) => Cuts::even(lo, hi, i128::from(*c)),
                        None => Cuts::auto(lo, hi, per_block as f64, page as f64, MAX_AUTO_BLOCKS, &NICE_BLOCKS),
                    }
                }
                Resolved::Time { start, end } => {
                    let (lo, hi) = (i128::from(start), i128::from(end));
                    match chunk_secs {
                        Some(c) => Cuts::even(lo, hi, i128::from(*c)),
                        None => {
                            let rows_per_sec = per_block as f64 * 1000.0 / chain.block_ms().max(1) as f64;
                            Cuts::auto(lo, hi, rows_per_sec, page as f64, MAX_AUTO_SECS, &NICE_SECS)
                        }
                    }
                }
            };
            cuts.count()
        }
        Selection::BlockNumbers(n) => n.len().div_ceil(NUMBERS_PER_REQUEST) as u64,
        Selection::Portfolio { wallets, .. } => wallets.len() as u64,
        Selection::Tokens { addresses } => addresses.len().div_ceil(TOKENS_PER_UNIT) as u64,
    }
}

/// Estimated rows a block: a filter keeps a fraction of the events.
fn rows_per_block(s: &Selection) -> u64 {
    match s {
        Selection::Events {
            contract_address, topics, ..
        } if contract_address.is_some() || !topics.is_empty() => 4,
        Selection::Events { .. } => 40,
        _ => 1,
    }
}

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

/// A window as it was written, for display.
pub fn describe_window(w: &Option<Resolved>, written: &Option<String>) -> String {
    match (w, written) {
        (Some(r), Some(t)) if Window::parse(t).is_ok_and(|x| matches!(x, Window::Relative { .. })) => {
            format!("{t} → {r}")
        }
        (Some(r), _) => r.to_string(),
        (None, _) => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn auto_cuts(lo: i64, hi: i64, rows: f64, page: f64, max: i64, nice: &[i64]) -> Vec<(i128, i128)> {
        let c = Cuts::auto(lo.into(), hi.into(), rows, page, max, nice);
        let r = c.ranges();
        assert_eq!(c.count(), r.len() as u64);
        r
    }

    /// Checks that `cuts` cover `[lo, hi)` exactly, in order, with no empty range.
    fn covers(cuts: &[(i128, i128)], lo: i128, hi: i128) -> bool {
        let contiguous = cuts.windows(2).all(|w| w[0].1 == w[1].0);
        let nonempty = cuts.iter().all(|(a, b)| a < b);
        let ends = match (cuts.first(), cuts.last()) {
            (Some(f), Some(l)) => f.0 == lo && l.1 == hi,
            _ => lo >= hi,
        };
        contiguous && nonempty && ends
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn cuts_cover_the_window_exactly_and_count_without_making_them(
            lo in prop_oneof![0i128..1_000, 0i128..=1_000_000_000_000, Just(1_000_000_000_000i128 - 5)],
            len in prop_oneof![0i128..200, 0i128..5_000_000],
            size in 1i128..100_000,
            rows in prop_oneof![Just(1.0f64), Just(4.0), Just(40.0), 0.01f64..200.0],
            page in 1.0f64..1_000.0,
        ) {
            let hi = lo + len;
            let even = Cuts::even(lo, hi, size.max(len / 1_000));
            let r = even.ranges();
            prop_assert!(covers(&r, lo, hi));
            prop_assert_eq!(even.count(), r.len() as u64);
            for (max, nice) in [(MAX_AUTO_BLOCKS, &NICE_BLOCKS[..]), (MAX_AUTO_SECS, &NICE_SECS[..])] {
                let auto = Cuts::auto(lo, hi, rows, page, max, nice);
                let r = auto.ranges();
                prop_assert!(covers(&r, lo, hi));
                prop_assert_eq!(auto.count(), r.len() as u64);
                // Page size 1 makes the most units: validation's bound holds for any page.
                prop_assert!(Cuts::auto(lo, hi, rows, 1.0, max, nice).count() >= auto.count());
            }
        }

        #[test]
        fn counting_huge_windows_neither_wraps_nor_allocates(
            first in 0u64..=u64::MAX,
            last in 0u64..=u64::MAX,
            size in 1i128..=i128::from(u64::MAX),
        ) {
            let (lo, hi) = (i128::from(first.min(last)), i128::from(first.max(last)) + 1);
            let n = Cuts::even(lo, hi, size).count();
            prop_assert!(n >= 1);
            let a = Cuts::auto(lo, hi, 40.0, 1.0, MAX_AUTO_BLOCKS, &NICE_BLOCKS).count();
            prop_assert!(a >= 1);
        }
    }

    #[test]
    fn chunks_align_to_multiples() {
        assert_eq!(
            chunks(18_000_005, 18_020_001, 10_000),
            vec![(18_000_005, 18_010_000), (18_010_000, 18_020_000), (18_020_000, 18_020_001)]
        );
        assert_eq!(chunks(5, 5, 10), vec![]);
    }

    #[test]
    fn unset_chunks_give_enough_units_for_the_requests_in_flight() {
        let sizes = |cuts: &[(i128, i128)]| cuts.iter().map(|(a, b)| b - a).collect::<Vec<_>>();
        // Events (40 rows a block) at 100-row pages: at least 8 pages (20
        // blocks, so 25), 2 at the end (5, so 10): 2,000 blocks → 70 units
        // of 25, then 25 of 10.
        let c = auto_cuts(20_000_000, 20_002_000, 40.0, 100.0, MAX_AUTO_BLOCKS, &NICE_BLOCKS);
        assert_eq!(c.first(), Some(&(20_000_000, 20_000_025)));
        assert_eq!(c.last(), Some(&(20_001_990, 20_002_000)));
        assert_eq!(sizes(&c).iter().filter(|&&s| s == 25).count(), 70);
        assert_eq!(sizes(&c).iter().filter(|&&s| s == 10).count(), 25);
        // The cuts cover the window exactly, in order.
        assert!(c.windows(2).all(|w| w[0].1 == w[1].0));
        // At 1000-row pages the same window gets 200-block units: fewer
        // requests wasted on part-full last pages.
        let c = auto_cuts(20_000_000, 20_002_000, 40.0, 1_000.0, MAX_AUTO_BLOCKS, &NICE_BLOCKS);
        assert_eq!(sizes(&c)[..8], [200; 8]);
        assert_eq!(sizes(&c)[8..], [50; 8]);
        // Big windows keep 10,000-block units (the tail 2,500).
        let c = auto_cuts(0, 5_000_000, 40.0, 1_000.0, MAX_AUTO_BLOCKS, &NICE_BLOCKS);
        assert_eq!(sizes(&c)[0], 10_000);
        assert_eq!(*sizes(&c).last().unwrap(), 2_500);
        // Small windows stop at the floor, with no finer tail.
        assert_eq!(sizes(&auto_cuts(0, 100, 40.0, 1_000.0, MAX_AUTO_BLOCKS, &NICE_BLOCKS)), vec![100]);
        // Blocks (a row a block): 10,000 at 1000-row pages; 1,000 and a
        // tail of 250 at 100-row pages.
        assert_eq!(
            sizes(&auto_cuts(0, 20_000, 1.0, 1_000.0, MAX_AUTO_BLOCKS, &NICE_BLOCKS)),
            vec![10_000; 2]
        );
        let c = auto_cuts(0, 20_000, 1.0, 100.0, MAX_AUTO_BLOCKS, &NICE_BLOCKS);
        assert_eq!(sizes(&c)[..17], [1_000; 17]);
        assert_eq!(sizes(&c)[17..], [250; 12]);
        // Time: a day of Ethereum events (3.3 rows a second) → hours, the
        // last three in 15 minutes (1000-row pages), or 20-minute units
        // ending in 5 minutes (100-row pages); blocks stay at an hour.
        let c = auto_cuts(0, 86_400, 40.0 / 12.0, 1_000.0, MAX_AUTO_SECS, &NICE_SECS);
        assert_eq!(sizes(&c)[..21], [3_600; 21]);
        assert_eq!(sizes(&c)[21..], [900; 12]);
        let c = auto_cuts(0, 86_400, 40.0 / 12.0, 100.0, MAX_AUTO_SECS, &NICE_SECS);
        assert_eq!(sizes(&c)[0], 1_200);
        assert_eq!(*sizes(&c).last().unwrap(), 300);
        assert_eq!(
            sizes(&auto_cuts(0, 7_200, 1.0 / 12.0, 1_000.0, MAX_AUTO_SECS, &NICE_SECS)),
            vec![3_600; 2]
        );
    }

    #[test]
    fn unit_ids_are_read_strictly() {
        for id in [
            "e0-events-ethereum-b22000000-22000100",
            "e12-blocks-base-t1748476800-1748502000",
            "e0-blocks-base-t-100-200",
            "e1-blocks-bsc-n00003",
            "e2-tokens-polygon-a00000",
            "e3-portfolio-ethereum-wa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48-d20000-20030",
        ] {
            assert!(is_unit_id(id), "{id}");
        }
        for id in [
            "y-e0-events-ethereum-b1-2",
            "e0-events-ethereum-b1-2-e0-blocks-base-b5-6",
            "e0-events-ethereum-b1",
            "e0-events-ethereum-n0003",
            "e0-logs-ethereum-b1-2",
            "e0-events-solana-b1-2",
            "ex-events-ethereum-b1-2",
            "e0-events-ethereum-b-1-2",
            "",
        ] {
            assert!(!is_unit_id(id), "{id}");
        }
        // Every id the planner writes reads back.
        let spec = crate::spec::Spec::parse(
            "t.toml",
            "name = \"t\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"out\"\n[[export]]\ndataset = \"events\"\nchains = [\"ethereum\", \"base\"]\nwindow = \"22000000..22009999\"\n",
        )
        .unwrap();
        let windows = freeze_windows(&spec, 0);
        for u in plan(&spec, &windows, 1000, &[]) {
            assert!(is_unit_id(&u.id), "{}", u.id);
        }
    }

    #[test]
    fn shards_partition_the_units() {
        let mk = |i: u64| Unit {
            id: format!("u{i}"),
            export: 0,
            dataset: Dataset::Blocks,
            chain: Chain::Base,
            range: UnitRange::Blocks { start: i, end: i + 1 },
            estimated_requests: 1 + i % 7,
        };
        let units: Vec<Unit> = (0..50).map(mk).collect();
        let mut all: Vec<String> = (1..=3).flat_map(|k| shard(units.clone(), k, 3)).map(|u| u.id).collect();
        all.sort();
        let mut want: Vec<String> = units.iter().map(|u| u.id.clone()).collect();
        want.sort();
        assert_eq!(all, want);
    }
}
