//! `chainetl plan` as text: what the next run would do. A new job lists its
//! units with a request estimate; a job with state also says when it
//! started (its windows are the frozen ones, never resolved again), which
//! units are done, partly done or left, and the requests left. With
//! `--summary`, one line per export and chain replaces the unit lines.

use super::render::intro_lines;
use crate::job::{ExportKey, PlanView};
use crate::plan::Unit;
use crate::spec::{Selection, Spec};
use crate::state::UnitState;
use crate::vocab::window::iso_to_second;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The listing of `chainetl plan` (`summary`: per export and chain).
pub fn plan_listing(spec: &Spec, view: &PlanView, summary: bool) -> String {
    let mut s = intro_lines(spec, &view.windows, &view.segments, &view.units, &view.states, true);
    if let Some(started) = &view.started {
        let _ = writeln!(
            s,
            "  job started {}: windows as frozen then; `chainetl run` resumes it",
            iso_to_second(started)
        );
    }
    event_lines(spec, &mut s);
    if summary {
        summary_lines(view, &mut s);
    } else {
        unit_lines(view, &mut s);
    }
    if let Some(c) = view.conversion.as_ref().filter(|c| !c.layout.is_empty()) {
        let _ = writeln!(
            s,
            "\nfrom stored rows: {} files ({:.1} MiB) rewritten into the spec's layout first ({}), 0 requests",
            c.files,
            c.bytes as f64 / (1024.0 * 1024.0),
            c.layout.join("; ")
        );
    } else if let Some(c) = &view.conversion {
        let _ = writeln!(
            s,
            "\nfrom stored rows: {} files ({:.1} MiB) converted from {} to {} first, 0 requests",
            c.files,
            c.bytes as f64 / (1024.0 * 1024.0),
            c.from,
            c.to
        );
    }
    let total: u64 = view.units.iter().map(|u| u.estimated_requests).sum();
    let note = "at least one per unit; events depend on their density";
    let n = view.units.len();
    if view.started.is_none() {
        let _ = writeln!(s, "\n{n} units, about {total} requests ({note})");
    } else {
        let done = view.units.iter().filter(|u| is_done(view, u)).count();
        let left: u64 = view.units.iter().map(|u| requests_left(u, view.states.get(&u.id))).sum();
        let _ = writeln!(
            s,
            "\n{n} units: {done} done, {} left; about {left} requests left ({note})",
            n - done
        );
    }
    s
}

/// Each selected event with its canonical form and topic0 (what the
/// service filters on), so a pasted spelling can be checked against a
/// block explorer before anything runs; decoded events with their table.
fn event_lines(spec: &Spec, s: &mut String) {
    for e in &spec.exports {
        match (&e.selection, &e.decoding) {
            (_, Some(d)) => {
                for t in &d.tables {
                    let _ = writeln!(
                        s,
                        "  export[{}] event {} topic0 {} → table {}",
                        e.index,
                        t.event.signature(),
                        t.topic0(),
                        t.table
                    );
                }
            }
            (Selection::Events { signatures, .. }, None) => {
                for sig in signatures {
                    let _ = writeln!(s, "  export[{}] event {} topic0 {}", e.index, sig.canonical, sig.topic0);
                }
            }
            _ => {}
        }
    }
}

fn is_done(view: &PlanView, u: &Unit) -> bool {
    view.states.get(&u.id).is_some_and(|st| st.done)
}

/// Requests a unit still needs: none when done; for a started one, its
/// estimate less the pages it committed (at least one more).
fn requests_left(u: &Unit, st: Option<&UnitState>) -> u64 {
    match st {
        Some(st) if st.done => 0,
        Some(st) => u.estimated_requests.saturating_sub(st.pages).max(1),
        None => u.estimated_requests,
    }
}

/// One line per unit; a job with state adds what is left of each.
fn unit_lines(view: &PlanView, s: &mut String) {
    if view.started.is_none() {
        let _ = writeln!(s, "\n{:<56} {:>10}  range", "unit", "requests≈");
        for u in &view.units {
            let _ = writeln!(s, "{:<56} {:>10}  {}", u.id, u.estimated_requests, u.range);
        }
        return;
    }
    let _ = writeln!(s, "\n{:<56} {:>10} {:>8}  {:<7}  range", "unit", "requests≈", "left≈", "state");
    for u in &view.units {
        let st = view.states.get(&u.id);
        let state = match st {
            Some(st) if st.done => "done",
            Some(_) => "partial",
            None => "todo",
        };
        let left = requests_left(u, st);
        let _ = writeln!(s, "{:<56} {:>10} {left:>8}  {state:<7}  {}", u.id, u.estimated_requests, u.range);
    }
}

/// One line per export and chain: units, done, left, requests left.
fn summary_lines(view: &PlanView, s: &mut String) {
    let mut by_key: BTreeMap<ExportKey, [u64; 4]> = BTreeMap::new();
    for u in &view.units {
        let t = by_key.entry(ExportKey::of(u)).or_default();
        let st = view.states.get(&u.id);
        t[0] += 1;
        t[1] += u64::from(st.is_some_and(|st| st.done));
        t[2] += u.estimated_requests;
        t[3] += requests_left(u, st);
    }
    let _ = writeln!(
        s,
        "\n{:<28} {:>8} {:>8} {:>8} {:>10} {:>14}",
        "export / chain", "units", "done", "left", "requests≈", "requests left≈"
    );
    for (k, [units, done, requests, left]) in &by_key {
        let _ = writeln!(
            s,
            "{:<28} {units:>8} {done:>8} {:>8} {requests:>10} {left:>14}",
            k.to_string(),
            units - done
        );
    }
}
