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

pub use crate::spec::{MAX_UNITS, NUMBERS_PER_REQUEST, TOKENS_PER_UNIT, unit_count};

use crate::spec::{Dataset, Export, PORTFOLIO_DAYS_PER_PAGE, Selection, Spec, rows_per_block};
use crate::vocab::chain::Chain;
use crate::vocab::cuts::Cuts;
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

/// Adds the units of `e` on `chain` to `out`: over `frozen` when given (a
/// frozen window or a segment's range), else over the export's window
/// resolved at 0; `page` rows a page.
fn plan_export(e: &Export, chain: Chain, frozen: Option<Resolved>, page: u64, out: &mut Vec<Unit>) {
    let mut units = Units {
        prefix: format!("e{}-{}-{}", e.index, e.dataset, chain),
        export: e,
        chain,
        out,
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
            let cuts = Cuts::of_window(resolved, *chunk_blocks, *chunk_secs, per_block, chain, page);
            match resolved {
                Resolved::Blocks { .. } => units.blocks(&cuts, per_block, page),
                Resolved::Time { .. } => units.times(&cuts, per_block, page),
            }
        }
        Selection::BlockNumbers(numbers) => units.numbers(numbers, page),
        Selection::Portfolio { wallets, window, .. } => match frozen.unwrap_or_else(|| window.resolve(0)) {
            Resolved::Time { start, end } => units.wallets(wallets, start, end, page),
            // Validation rejects block ranges for portfolios.
            Resolved::Blocks { .. } => {}
        },
        Selection::Tokens { addresses } => units.tokens(addresses),
    }
}

/// Units of one export and chain being made.
struct Units<'a> {
    /// `e<export>-<dataset>-<chain>`, the start of every id.
    prefix: String,
    export: &'a Export,
    chain: Chain,
    out: &'a mut Vec<Unit>,
}

impl Units<'_> {
    fn push(&mut self, id: String, range: UnitRange, estimated_requests: u64) {
        self.out.push(Unit {
            id,
            export: self.export.index,
            dataset: self.export.dataset,
            chain: self.chain,
            range,
            estimated_requests: estimated_requests.max(1),
        });
    }

    /// Block ranges `[s, end)`, ids `…-b<s>-<end>`.
    fn blocks(&mut self, cuts: &Cuts, per_block: u64, page: u64) {
        for (s, end) in cuts.ranges() {
            // Cuts lie within [first, last + 1]; only last = u64::MAX
            // (refused by validation) could saturate here.
            let (s, end) = (u64::try_from(s).unwrap_or(u64::MAX), u64::try_from(end).unwrap_or(u64::MAX));
            let blocks = end.saturating_sub(s);
            self.push(
                format!("{}-b{s}-{end}", self.prefix),
                UnitRange::Blocks { start: s, end },
                (blocks.saturating_mul(per_block) / page).saturating_add(1),
            );
        }
    }

    /// Time ranges `[s, t)`, ids `…-t<s>-<t>`.
    fn times(&mut self, cuts: &Cuts, per_block: u64, page: u64) {
        for (s, t) in cuts.ranges() {
            // Cuts lie within [start, end], both i64.
            let (s, t) = (i64::try_from(s).unwrap_or(i64::MAX), i64::try_from(t).unwrap_or(i64::MAX));
            let ms = u64::try_from(self.chain.block_ms()).unwrap_or(1).max(1);
            let blocks = u64::try_from(i128::from(t) - i128::from(s)).unwrap_or(0).saturating_mul(1000) / ms;
            self.push(
                format!("{}-t{s}-{t}", self.prefix),
                UnitRange::Time { start: s, end: t },
                (blocks.saturating_mul(per_block) / page).saturating_add(1),
            );
        }
    }

    /// Batches of explicit block numbers, one request each, ids `…-n<5 digits>`.
    fn numbers(&mut self, numbers: &[u64], page: u64) {
        for (i, batch) in numbers.chunks(NUMBERS_PER_REQUEST).enumerate() {
            let n = batch.len() as u64;
            self.push(
                format!("{}-n{i:05}", self.prefix),
                UnitRange::Numbers { numbers: batch.to_vec() },
                n.div_ceil(page),
            );
        }
    }

    /// One unit per wallet over the days of `[start, end)`, ids
    /// `…-w<40 hex>-d<day>-<day>`.
    fn wallets(&mut self, wallets: &[String], start: i64, end: i64, page: u64) {
        let days = u64::try_from((i128::from(end) - i128::from(start)) / 86_400 + 1).unwrap_or(0);
        for w in wallets {
            self.push(
                format!("{}-w{}-d{}-{}", self.prefix, &w[2..], day_of(start), day_of(end)),
                UnitRange::Wallet {
                    wallet: w.clone(),
                    start,
                    end,
                },
                days.div_ceil(page.min(PORTFOLIO_DAYS_PER_PAGE)),
            );
        }
    }

    /// Batches of token addresses, ids `…-a<5 digits>`.
    fn tokens(&mut self, addresses: &[String]) {
        for (i, batch) in addresses.chunks(TOKENS_PER_UNIT).enumerate() {
            self.push(
                format!("{}-a{i:05}", self.prefix),
                UnitRange::Tokens { addresses: batch.to_vec() },
                batch.len() as u64,
            );
        }
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
    use crate::vocab::window::MAX_BLOCK;
    use proptest::prelude::*;

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

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn block_windows_that_validate_plan_exactly_without_wrapping(
            first in prop_oneof![0u64..1_000_000, 0u64..=MAX_BLOCK + 10, (u64::MAX - 10)..=u64::MAX],
            len in prop_oneof![0u64..5_000, 0u64..100_000_000, Just(MAX_BLOCK)],
            chunk in prop::option::of(1u64..1_000_000),
            page in 1u32..=1000,
        ) {
            let last = first.saturating_add(len);
            let chunk = chunk.map(|c| format!("chunk_blocks = {c}\n")).unwrap_or_default();
            let text = format!(
                "name = \"w\"\n[source]\nbase_url = \"sim\"\npage_size = {page}\n[output]\nuri = \"o\"\n[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"{first}..{last}\"\n{chunk}"
            );
            let Ok(spec) = Spec::parse("w.toml", &text) else {
                // Refused: beyond the bound, or too many units.
                prop_assert!(last > MAX_BLOCK || len / 10 > MAX_UNITS || !chunk.is_empty());
                return Ok(());
            };
            prop_assert!(last <= MAX_BLOCK);
            let windows = freeze_windows(&spec, 0);
            let units = plan(&spec, &windows, page, &[]);
            prop_assert!(units.len() as u64 <= MAX_UNITS);
            prop_assert_eq!(units.len() as u64, unit_count(&spec.exports[0].selection, Chain::Base, windows[0].unwrap(), u64::from(page)));
            let mut next = first;
            for u in &units {
                match u.range {
                    UnitRange::Blocks { start, end } => {
                        prop_assert_eq!(start, next);
                        prop_assert!(end > start);
                        prop_assert_eq!(block_range_of(&u.id), Some((start, end)));
                        next = end;
                    }
                    _ => prop_assert!(false, "not a block unit"),
                }
            }
            prop_assert_eq!(next, last + 1);
        }
    }
}
