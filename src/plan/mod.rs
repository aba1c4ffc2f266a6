//! Splits a job into independent work units. Pure: no I/O.
//!
//! Invariants:
//! - Each unit owns a half-open range that it alone is responsible for,
//!   and its id is deterministic (same spec + same frozen windows ⇒ same
//!   units), so checkpoints and file names line up across runs and
//!   machines (`unit`).
//! - Block and time ranges are cut at multiples of the chunk size counted
//!   from zero (block 0, the unix epoch), so units stay stable even when a
//!   window is widened ([`crate::vocab::cuts`]).
//! - Bounds: cuts are computed in `i128` and estimates saturate, so no
//!   window can make a number wrap; the units of one export and chain are
//!   at most [`crate::vocab::cuts::MAX_UNITS`], which `validate` checks with [`Selection::unit_count`](crate::spec::Selection::unit_count)
//!   before anything is planned (counting is arithmetic: it allocates
//!   nothing however large the window), so planning memory is bounded.
//! - Units are sized for the job, not only for the request slots. Without
//!   `chunk_blocks`/`chunk_duration` a window gets at least 64 units per
//!   export and chain where it is long enough (enough to keep
//!   `max_concurrency` requests in flight) and a tail cut four times finer
//!   (so slots stay busy to the end), but no unit is cut smaller than it
//!   needs to be for that: a unit may grow to a day or 100,000 blocks
//!   ([`CutRule::Daily`]), so a year on seven chains is ~3,500 units rather
//!   than 84,315. The bound is right because resume granularity comes
//!   from the commits *within* a unit (a checkpoint with its cursor after
//!   each durable file), not from unit size: a kill -9 loses at most the
//!   pages since the unit's last commit, however long the unit; while
//!   every unit beyond those needed for concurrency costs a checkpoint,
//!   small files and a part-full last page. Explicit chunk sizes are cut
//!   as written.
//! - A job's cutting ([`Cutting`]: page size and rule) is frozen in its
//!   state when it starts; a job started under the hourly rule keeps it.
//!
//! `plan` knows only `spec` and the shared vocabulary.
//! Sharding: which units one of `n` cooperating processes runs.

mod cut;
mod segment;
mod unit;

pub use segment::Segment;
pub use unit::{Unit, UnitRange, block_range_of, is_unit_id, unit_end};

use crate::spec::{BaseUrl, Export, Selection, Spec};
use crate::vocab::cuts::CutRule;
use crate::vocab::window::{Resolved, Window, parse_instant};

/// The instant relative windows resolve against: now, or the frozen clock
/// of a built-in simulator (so a frozen demo stays reproducible).
pub fn job_now(spec: &Spec) -> i64 {
    if let BaseUrl::Sim(o) = &spec.source.base_url
        && let Some(t) = &o.frozen_at
        && let Ok(secs) = parse_instant(t)
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

/// How a job's windows are cut into units: frozen with its windows when it
/// starts, so that a resumed run (even with another `page_size`) or another
/// shard finds the same units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cutting {
    /// Rows a page the automatic cut estimates with.
    pub page_size: u32,
    /// How large an automatic unit may grow.
    pub rule: CutRule,
}

impl Cutting {
    /// The cutting of a job that starts now with `page_size`.
    pub fn latest(page_size: u32) -> Cutting {
        Cutting {
            page_size,
            rule: CutRule::LATEST,
        }
    }
}

/// Every unit of the job, in a deterministic order: exports with frozen
/// windows from `windows`, aligned and incremental ones from `segments`,
/// cut as the job was when it started (`cut`).
pub fn plan(spec: &Spec, windows: &[Option<Resolved>], cut: Cutting, segments: &[Segment]) -> Vec<Unit> {
    let mut units = Vec::new();
    for e in &spec.exports {
        if e.per_run() {
            for s in segments.iter().filter(|s| s.export == e.index) {
                for &chain in &e.chains {
                    if s.chain.is_none_or(|c| c == chain) {
                        cut::plan_export(e, chain, Some(s.window), cut, &mut units);
                    }
                }
            }
            continue;
        }
        let frozen = windows.get(e.index).copied().flatten();
        for &chain in &e.chains {
            cut::plan_export(e, chain, frozen, cut, &mut units);
        }
    }
    units
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
mod tests;

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
