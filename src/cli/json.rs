//! The fields of JSON lines on stderr (`--log-format json`, see
//! [`super::say`]): the plan's intro and progress, as numbers and lists
//! rather than the text's columns.

use super::render::describe_export_window;
use crate::job::ExportProgress;
use crate::plan::{Segment, Unit};
use crate::spec::Spec;
use crate::state::UnitState;
use crate::vocab::window::Resolved;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::Ordering;

/// The intro's figures: per export its dataset, chains, window as the run
/// sees it, units and units already done; the segments pending.
pub(super) fn intro(
    spec: &Spec,
    windows: &[Option<Resolved>],
    segments: &[Segment],
    units: &[Unit],
    done: &HashMap<String, UnitState>,
) -> Value {
    let exports: Vec<Value> = spec
        .exports
        .iter()
        .map(|e| {
            let own = units.iter().filter(|u| u.export == e.index);
            let n = own.clone().count();
            let d = own.filter(|u| done.get(&u.id).is_some_and(|s| s.done)).count();
            json!({
                "export": e.index,
                "dataset": e.dataset,
                "chains": e.chains,
                "window": describe_export_window(e, windows, segments, false),
                "frozen_window": windows.get(e.index).copied().flatten(),
                "units": n,
                "units_done": d,
            })
        })
        .collect();
    json!({
        "job": spec.name,
        "output": spec.output.uri,
        "exports": exports,
        "segments": segments,
        "units": units.len(),
    })
}

/// One export's progress figures.
pub(super) fn progress(index: usize, e: &ExportProgress, secs: f64) -> Value {
    let rows = e.rows.load(Ordering::Relaxed);
    json!({
        "export": index,
        "label": e.label,
        "units_done": e.units_done.load(Ordering::Relaxed),
        "units_total": e.units_total.load(Ordering::Relaxed),
        "rows": rows,
        "rows_per_sec": (rows as f64 / secs.max(0.001)).round(),
        "requests": e.sum(|s| &s.requests),
        "retries": e.sum(|s| &s.retries),
        "throttled": e.sum(|s| &s.throttled),
        "server_errors": e.sum(|s| &s.server_errors),
        "elapsed_secs": secs,
    })
}
