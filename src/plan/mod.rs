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
//!   at most [`MAX_UNITS`], which `validate` checks with [`unit_count`]
//!   before anything is planned (counting is arithmetic: it allocates
//!   nothing however large the window), so planning memory is bounded.
//!
//! `plan` knows only `spec` and the shared vocabulary.

mod cut;
mod segment;
mod shard;
mod unit;

pub use crate::spec::{MAX_UNITS, NUMBERS_PER_REQUEST, TOKENS_PER_UNIT, unit_count};
pub use segment::Segment;
pub use shard::shard;
pub use unit::{Unit, UnitRange, block_range_of, is_unit_id};

use crate::spec::{BaseUrl, Export, Selection, Spec};
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
                        cut::plan_export(e, chain, Some(s.window), page, &mut units);
                    }
                }
            }
            continue;
        }
        let frozen = windows.get(e.index).copied().flatten();
        for &chain in &e.chains {
            cut::plan_export(e, chain, frozen, page, &mut units);
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
