//! Work units: what each owns, and the ids that name them in file names
//! and checkpoints.

use crate::vocab::Dataset;
use crate::vocab::chain::Chain;
use crate::vocab::window::Resolved;
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

/// The block range `[start, end)` of a block-range unit, from its id.
pub fn block_range_of(unit_id: &str) -> Option<(u64, u64)> {
    let (_, r) = unit_id.rsplit_once("-b")?;
    let (s, e) = r.split_once('-')?;
    Some((s.parse().ok()?, e.parse().ok()?))
}

/// The export, chain and end (exclusive: a block, or a unix second) of a
/// block-range or time-range unit, from its id (`e0-blocks-base-b10-26`:
/// `(0, base, 26)`); `None` for other units.
pub fn unit_end(unit_id: &str) -> Option<(usize, Chain, u64)> {
    let mut parts = unit_id.strip_prefix('e')?.splitn(4, '-');
    let (idx, _dataset, chain, range) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let (kind, body) = range.split_at(range.len().min(1));
    let end = match kind {
        "b" => body.split_once('-')?.1.parse::<u64>().ok()?,
        "t" => {
            let unsigned = body.strip_prefix('-').unwrap_or(body);
            u64::try_from(unsigned.split_once('-')?.1.parse::<i64>().ok()?).ok()?
        }
        _ => return None,
    };
    Some((idx.parse().ok()?, chain.parse().ok()?, end))
}

/// Whether `id` is a unit id as [`super::plan`] writes them, read strictly:
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
