//! Exports against each other: no two may select the same rows, or
//! readers would see every such row twice. Decided from the spec alone;
//! where it cannot tell (a block range against a time window, a relative
//! window against a fixed interval), the exports are let through.

use super::Validator;
use crate::spec::raw::RawExport;
use crate::spec::{Export, Selection};
use crate::vocab::Dataset;
use crate::vocab::window::{Resolved, Window, iso};
use toml::Spanned;

impl Validator<'_> {
    /// Refuses two exports that select the same rows (same dataset and a
    /// shared table, a shared chain, filters whose rows can meet, windows
    /// that meet): each
    /// would write them, and readers would see every such row twice.
    pub(super) fn overlaps(&mut self, raw: &[Spanned<RawExport>], exports: &[Export]) {
        for (j, b) in exports.iter().enumerate() {
            for a in &exports[..j] {
                // Exports overlap only where they select rows of the same
                // dataset into the same table (a decoded table named like
                // another dataset's is refused as reserved, not as this).
                let (ta, tb) = (a.tables(), b.tables());
                if a.dataset != b.dataset || !ta.iter().any(|t| tb.contains(t)) {
                    continue;
                }
                let Some(chain) = a.chains.iter().find(|c| b.chains.contains(c)) else {
                    continue;
                };
                if !filters_meet(&a.selection, &b.selection) {
                    continue;
                }
                let Some(shared) = covers_meet(&cover(a), &cover(b)) else {
                    continue;
                };
                let rb = raw.get(b.index).map(|r| r.get_ref());
                let span = rb
                    .and_then(|r| r.window.as_ref().or(r.dataset.as_ref()).map(|x| x.span()))
                    .unwrap_or(0..0);
                self.err(
                    span,
                    format!("export[{}]", b.index),
                    format!(
                        "overlaps export[{}] on {chain}: both select {} rows {shared}, which would be written twice; make their windows or filters disjoint, or remove one",
                        a.index, a.dataset
                    ),
                );
            }
        }
    }
}

/// What part of its dataset's rows an export covers, as far as the spec
/// alone tells.
#[derive(Debug)]
enum Cover<'a> {
    /// Blocks `first..=last`.
    Blocks(u64, u64),
    /// These blocks (sorted).
    Numbers(&'a [u64]),
    /// Blocks from this one on (incremental).
    BlocksFrom(u64),
    /// Unix seconds `start..end`.
    Time(i64, i64),
    /// A relative window: it ends at "now" (or at the current period).
    Recent,
    /// Days from this unix second on (incremental portfolio).
    TimeFrom(i64),
    /// No window (tokens).
    All,
}

fn cover(e: &Export) -> Cover<'_> {
    if let Some(inc) = &e.incremental {
        return if e.dataset == Dataset::Portfolio {
            Cover::TimeFrom(i64::try_from(inc.start).unwrap_or(i64::MAX))
        } else {
            Cover::BlocksFrom(inc.start)
        };
    }
    let window = match &e.selection {
        Selection::BlockNumbers(n) => return Cover::Numbers(n),
        Selection::Tokens { .. } => return Cover::All,
        Selection::BlockWindow { window, .. } | Selection::Events { window, .. } | Selection::Portfolio { window, .. } => window,
    };
    match *window {
        Window::Blocks { first, last } => Cover::Blocks(first, last),
        Window::Interval { start, end } => Cover::Time(start, end),
        Window::Relative { .. } => Cover::Recent,
    }
}

/// The rows two covers share, described, or `None` when they cannot meet
/// (or the spec alone cannot tell: a block range against a time window,
/// a relative window against a fixed interval).
fn covers_meet(a: &Cover<'_>, b: &Cover<'_>) -> Option<String> {
    use Cover::*;
    let in_numbers = |n: &[u64], lo: u64, hi: u64| {
        let i = n.partition_point(|x| *x < lo);
        n.get(i).copied().filter(|x| *x <= hi)
    };
    match (a, b) {
        (Blocks(a0, a1), Blocks(b0, b1)) => {
            let (lo, hi) = ((*a0).max(*b0), (*a1).min(*b1));
            (lo <= hi).then(|| format!("in blocks {lo}..{hi}"))
        }
        (Blocks(lo, hi), Numbers(n)) | (Numbers(n), Blocks(lo, hi)) => in_numbers(n, *lo, *hi).map(|x| format!("of block {x}")),
        (Numbers(x), Numbers(y)) => x.iter().find(|n| y.binary_search(n).is_ok()).map(|n| format!("of block {n}")),
        (BlocksFrom(s), Blocks(_, hi)) | (Blocks(_, hi), BlocksFrom(s)) => (hi >= s).then(|| format!("in blocks from {s}")),
        (BlocksFrom(s), Numbers(n)) | (Numbers(n), BlocksFrom(s)) => in_numbers(n, *s, u64::MAX).map(|x| format!("of block {x}")),
        (BlocksFrom(x), BlocksFrom(y)) => Some(format!("in blocks from {}", x.max(y))),
        (Time(a0, a1), Time(b0, b1)) => {
            let (lo, hi) = ((*a0).max(*b0), (*a1).min(*b1));
            (lo < hi).then(|| format!("in {}", Resolved::Time { start: lo, end: hi }))
        }
        (Recent, Recent) => Some("in the most recent period (both windows are relative and end now)".into()),
        (TimeFrom(s), Time(_, end)) | (Time(_, end), TimeFrom(s)) => (end > s).then(|| format!("from {}", iso(*s))),
        (TimeFrom(x), TimeFrom(y)) => Some(format!("from {}", iso(*x.max(y)))),
        (TimeFrom(_), Recent) | (Recent, TimeFrom(_)) => Some("in the most recent days".into()),
        (All, All) => Some("of the same tokens".into()),
        _ => None,
    }
}

/// Whether rows selected by `a`'s filters can also be selected by `b`'s.
fn filters_meet(a: &Selection, b: &Selection) -> bool {
    fn either_none_or_equal(x: &Option<String>, y: &Option<String>) -> bool {
        x.is_none() || y.is_none() || x == y
    }
    fn share(x: &[String], y: &[String]) -> bool {
        let set: std::collections::HashSet<&String> = x.iter().collect();
        y.iter().any(|v| set.contains(v))
    }
    match (a, b) {
        (
            Selection::Events {
                contract_address: ca,
                topics: ta,
                ..
            },
            Selection::Events {
                contract_address: cb,
                topics: tb,
                ..
            },
        ) => either_none_or_equal(ca, cb) && (ta.is_empty() || tb.is_empty() || share(ta, tb)),
        (
            Selection::Portfolio {
                wallets: wa,
                token_address: ta,
                ..
            },
            Selection::Portfolio {
                wallets: wb,
                token_address: tb,
                ..
            },
        ) => share(wa, wb) && either_none_or_equal(ta, tb),
        (Selection::Tokens { addresses: x }, Selection::Tokens { addresses: y }) => share(x, y),
        _ => true,
    }
}
