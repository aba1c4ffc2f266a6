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
use crate::util::words::count;
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
    let req = Requests::of(view);
    let n = view.units.len();
    let left_units: Vec<&Unit> = view.units.iter().filter(|u| !is_done(view, u)).collect();
    let floor = left_units.len() as u64;
    let measured: Vec<&Unit> = left_units.iter().copied().filter(|u| req.about(u).is_some()).collect();
    let head = if view.started.is_none() {
        format!("\n{}", count(n as u64, "unit"))
    } else {
        format!(
            "\n{}: {} done, {} left",
            count(n as u64, "unit"),
            n - left_units.len(),
            left_units.len()
        )
    };
    let figure = if view.started.is_some() && left_units.is_empty() {
        "nothing left to fetch".to_string()
    } else if measured.is_empty() {
        format!(
            "at least {}, one a unit: the pages a unit takes depend on the data in its range{}",
            count(floor, "request") + if view.started.is_none() { "" } else { " left" },
            if view.started.is_none() {
                " (after a run, `plan` estimates from the pages its units took)"
            } else {
                ""
            }
        )
    } else {
        let about: u64 = left_units
            .iter()
            .map(|u| {
                req.about(u)
                    .map_or(1, |a| a.saturating_sub(view.states.get(&u.id).map_or(0, |st| st.pages)).max(1))
            })
            .sum();
        let unmeasured = left_units.len() - measured.len();
        format!(
            "about {} left, from the pages this job's {} took{}",
            count(about, "request"),
            count(req.units_measured, "done unit"),
            if unmeasured > 0 {
                format!(" (at least one a unit for the {unmeasured} of exports and chains with none done yet)")
            } else {
                String::new()
            }
        )
    };
    let _ = writeln!(s, "{head}; {figure}");
    for e in spec.exports.iter().filter(|e| e.incremental.is_some()) {
        if !view.segments.iter().any(|seg| seg.export == e.index) {
            let _ = writeln!(
                s,
                "export[{}] is incremental: the run reads each chain's head first (one request a chain), then cuts units from the mark up to it",
                e.index
            );
        }
    }
    s
}

/// `plan --summary=json`: the plan's figures as one document. Per export
/// and chain: units, done, left and the requests left — `at_least` one a
/// unit left, and `about` where the job's done units measured it (null
/// where none did).
pub fn plan_json(spec: &Spec, view: &PlanView) -> serde_json::Value {
    let req = Requests::of(view);
    let by_key = by_export(view, &req);
    let exports: Vec<serde_json::Value> = by_key
        .iter()
        .map(|(k, (units, done, about))| {
            serde_json::json!({
                "export": k.export,
                "dataset": k.dataset.name(),
                "chain": k.chain.name(),
                "units": units,
                "done": done,
                "left": units - done,
                "requests_left": {"at_least": units - done, "about": about},
            })
        })
        .collect();
    let sum = |f: fn(&(u64, u64, Option<u64>)) -> u64| by_key.values().map(f).sum::<u64>();
    let about = by_key.values().try_fold(0u64, |acc, t| t.2.map(|a| acc + a));
    serde_json::json!({
        "job": spec.name,
        "started": view.started.as_deref().map(iso_to_second),
        "units": sum(|t| t.0),
        "done": sum(|t| t.1),
        "left": sum(|t| t.0 - t.1),
        "requests_left": {"at_least": sum(|t| t.0 - t.1), "about": about, "measured_from_units": req.units_measured},
        "exports": exports,
    })
}

/// Per export and chain: units, units done, and the requests left as
/// measured (None where a unit left has no measure: then at least one a
/// unit left).
fn by_export(view: &PlanView, req: &Requests) -> BTreeMap<ExportKey, (u64, u64, Option<u64>)> {
    let mut by_key: BTreeMap<ExportKey, (u64, u64, Option<u64>)> = BTreeMap::new();
    for u in &view.units {
        let t = by_key.entry(ExportKey::of(u)).or_insert((0, 0, Some(0)));
        let st = view.states.get(&u.id);
        let done = st.is_some_and(|st| st.done);
        t.0 += 1;
        t.1 += u64::from(done);
        if !done {
            t.2 =
                t.2.zip(req.about(u))
                    .map(|(sum, a)| sum + a.saturating_sub(st.map_or(0, |st| st.pages)).max(1));
        }
    }
    by_key
}

/// What `plan` can say of units' requests. The requests a unit takes
/// depend on the data in its range (events per block above all), which a
/// plan cannot know: a unit takes at least one. Where the job has done
/// units of the same export and chain, their pages against the cut's
/// estimate scale the estimate of the units left: measured, not guessed.
struct Requests {
    /// Pages taken per request the cut estimated, by export and chain.
    scale: BTreeMap<ExportKey, f64>,
    /// The done units measured.
    units_measured: u64,
}

impl Requests {
    fn of(view: &PlanView) -> Requests {
        let mut sums: BTreeMap<ExportKey, (u64, u64)> = BTreeMap::new();
        let mut units_measured = 0;
        for u in &view.units {
            if let Some(st) = view.states.get(&u.id).filter(|st| st.done && st.pages > 0) {
                let t = sums.entry(ExportKey::of(u)).or_default();
                t.0 += st.pages;
                t.1 += u.estimated_requests.max(1);
                units_measured += 1;
            }
        }
        let scale = sums.into_iter().map(|(k, (pages, est))| (k, pages as f64 / est as f64)).collect();
        Requests { scale, units_measured }
    }

    /// The requests `u` takes, measured from done units like it; None
    /// where there are none (then: at least one).
    fn about(&self, u: &Unit) -> Option<u64> {
        let scale = self.scale.get(&ExportKey::of(u))?;
        Some(((u.estimated_requests as f64 * scale).ceil() as u64).max(1))
    }

    /// `about`, or "≥1", as a column shows it.
    fn shown(&self, u: &Unit) -> String {
        self.about(u).map_or_else(|| "≥1".to_string(), |a| a.to_string())
    }
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

/// Requests a unit still needs, as a column shows it: none when done;
/// else its measured figure less the pages it committed (at least one
/// more), or "≥1".
fn requests_left(req: &Requests, u: &Unit, st: Option<&UnitState>) -> String {
    match (st, req.about(u)) {
        (Some(st), _) if st.done => "0".into(),
        (Some(st), Some(a)) => a.saturating_sub(st.pages).max(1).to_string(),
        (None, Some(a)) => a.to_string(),
        (_, None) => "≥1".into(),
    }
}

/// One line per unit; a job with state adds what is left of each.
fn unit_lines(view: &PlanView, s: &mut String) {
    let req = Requests::of(view);
    if view.started.is_none() {
        let _ = writeln!(s, "\n{:<56} {:>10}  range", "unit", "requests");
        for u in &view.units {
            let _ = writeln!(s, "{:<56} {:>10}  {}", u.id, req.shown(u), u.range);
        }
        return;
    }
    let _ = writeln!(s, "\n{:<56} {:>10} {:>8}  {:<7}  range", "unit", "requests", "left", "state");
    for u in &view.units {
        let st = view.states.get(&u.id);
        let state = match st {
            Some(st) if st.done => "done",
            Some(_) => "partial",
            None => "todo",
        };
        let left = requests_left(&req, u, st);
        let _ = writeln!(s, "{:<56} {:>10} {left:>8}  {state:<7}  {}", u.id, req.shown(u), u.range);
    }
}

/// One line per export and chain: units, done, left, requests left
/// (measured, or at least one a unit left).
fn summary_lines(view: &PlanView, s: &mut String) {
    let by_key = by_export(view, &Requests::of(view));
    let _ = writeln!(
        s,
        "\n{:<28} {:>8} {:>8} {:>8} {:>14}",
        "export / chain", "units", "done", "left", "requests left"
    );
    for (k, (units, done, about)) in &by_key {
        let left = units - done;
        let requests = about.map_or_else(|| format!("≥{left}"), |a| format!("≈{a}"));
        let _ = writeln!(s, "{:<28} {units:>8} {done:>8} {left:>8} {requests:>14}", k.to_string());
    }
}
