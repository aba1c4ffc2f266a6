//! Text for the terminal: plan listings, the run's intro, summaries, status
//! tables and schema DDL. Pure functions of the library's values.

use crate::job::RunSummary;
use crate::job::view::status_view::StatusView;
use crate::plan::{Segment, Unit, describe_window};
use crate::spec::{Export, Spec};
use crate::state::UnitState;
use crate::util::words::count;
use crate::vocab::window::{Resolved, iso_to_second};
use std::collections::HashMap;
use std::fmt::Write;

/// An operation begun and not finished, a line each: where, what, what
/// readers see meanwhile, how it ends.
pub(super) fn interrupted_lines(ops: &[crate::job::view::status_view::InterruptedLine]) -> Vec<String> {
    ops.iter()
        .map(|op| format!("  {}: {}; readers see {} until it ends; {}", op.at, op.what, op.readers, op.finish))
        .collect()
}

/// Human-readable bytes.
pub fn bytes(n: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut i = 0;
    while v >= 1024.0 && i < units.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 { format!("{n} B") } else { format!("{v:.1} {}", units[i]) }
}

/// The few lines printed before a run: what will be exported where.
pub fn intro(spec: &Spec, windows: &[Option<Resolved>], segments: &[Segment], units: &[Unit], done: &HashMap<String, UnitState>) -> String {
    intro_lines(spec, windows, segments, units, done, false)
}

/// `dry`: for `plan`, which counts units done and left (a run says how
/// many were already done) and describes incremental exports it cannot
/// cut without asking the service for the head.
pub(super) fn intro_lines(
    spec: &Spec,
    windows: &[Option<Resolved>],
    segments: &[Segment],
    units: &[Unit],
    done: &HashMap<String, UnitState>,
    dry: bool,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "job {} → {}", spec.name, spec.output.uri);
    for e in &spec.exports {
        let chains: Vec<&str> = e.chains.iter().map(|c| c.name()).collect();
        let n = units.iter().filter(|u| u.export == e.index).count();
        let d = units
            .iter()
            .filter(|u| u.export == e.index && done.get(&u.id).is_some_and(|s| s.done))
            .count();
        let count = if dry {
            format!("{d} done, {} left", n - d)
        } else {
            format!("{d} already done")
        };
        let _ = writeln!(
            s,
            "  export[{}] {} on {}: window {}; units {n} ({count})",
            e.index,
            e.dataset,
            chains.join(", "),
            describe_export_window(e, windows, segments, dry)
        );
    }
    s
}

/// An export's range as this run sees it: the frozen window, the aligned
/// period(s), or each chain's incremental segment.
pub(super) fn describe_export_window(e: &Export, windows: &[Option<Resolved>], segments: &[Segment], dry: bool) -> String {
    if !e.per_run() {
        return describe_window(&windows.get(e.index).copied().flatten(), &e.window_text);
    }
    let own: Vec<&Segment> = segments.iter().filter(|s| s.export == e.index).collect();
    if e.align.is_some() {
        if own.is_empty() {
            return "period already exported".into();
        }
        let w: Vec<String> = own.iter().map(|s| s.window.to_string()).collect();
        return format!("{} aligned → {}", e.window_text.as_deref().unwrap_or("-"), w.join(", "));
    }
    let parts: Vec<String> = e
        .chains
        .iter()
        .map(|c| match own.iter().find(|s| s.chain == Some(*c)) {
            Some(s) => format!("{c} {}", s.window),
            None if dry => format!(
                "{c} from its mark (first run: {}) to the head less {} confirmations",
                e.incremental.as_ref().map_or(0, |i| i.start),
                e.incremental.as_ref().map_or(0, |i| i.confirmations(*c))
            ),
            None => format!("{c} nothing new"),
        })
        .collect();
    format!("incremental: {}", parts.join("; "))
}

/// The table printed when a run ends: per export and chain, what this run
/// committed and what it cost.
pub fn summary_table(s: &RunSummary, uri: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<26} {:>11} {:>6} {:>10} {:>8} {:>8} {:>7} {:>5} {:>8} {:>10} {:>12}",
        "export / chain", "rows", "files", "bytes", "units", "requests", "retries", "429s", "elapsed", "rows/s", "rows total"
    );
    for (k, t) in &s.exports {
        let _ = writeln!(
            out,
            "{:<26} {:>11} {:>6} {:>10} {:>8} {:>8} {:>7} {:>5} {:>7.1}s {:>10.0} {:>12}",
            k,
            t.rows,
            t.files,
            bytes(t.bytes),
            format!("{}/{}", t.units_done, t.units),
            t.requests,
            t.retries,
            t.throttled,
            t.elapsed_secs,
            t.rows_per_sec,
            t.rows + t.rows_before
        );
    }
    let rows = s.rows();
    let _ = writeln!(
        out,
        "{} rows in {:.1}s ({:.0} rows/s); {} requests, {} retries, {} throttled (429), {} server errors",
        rows,
        s.elapsed_secs,
        rows as f64 / s.elapsed_secs.max(0.001),
        s.requests,
        s.retries,
        s.throttled,
        s.server_errors
    );
    for (k, t) in &s.exports {
        let mut notes = Vec::new();
        if t.undecodable > 0 {
            notes.push(format!(
                "{} logs fit no decoded event (undecodable: left out of the decoded tables)",
                t.undecodable
            ));
            if let Some(hint) = &t.decode_hint {
                notes.push(format!("{} of them: {hint}", t.layout_mismatched));
            }
        }
        if t.decimal38_nulls > 0 {
            notes.push(format!(
                "{} values too wide for _decimal38 (null there; exact in the text column)",
                t.decimal38_nulls
            ));
        }
        if t.invalid_utf8 > 0 {
            notes.push(format!("{} strings not UTF-8 (written as 0x-hex)", t.invalid_utf8));
        }
        if !notes.is_empty() {
            let _ = writeln!(out, "{k}: {}", notes.join("; "));
        }
    }
    if s.units_already_done > 0 {
        let _ = writeln!(
            out,
            "{} already complete from earlier runs",
            count(s.units_already_done as u64, "unit")
        );
    }
    if s.orphans_removed > 0 {
        let _ = writeln!(
            out,
            "{} of an interrupted run's uncommitted work removed",
            count(s.orphans_removed as u64, "file")
        );
    }
    if let Some(c) = &s.conversion {
        let replaced = match (c.layout.is_empty(), c.deleted) {
            (_, 0) => String::new(),
            (false, n) => format!("; {} replaced", count(n as u64, "old file")),
            (true, n) => format!("; {} no current version read deleted", count(n as u64, "file")),
        };
        let _ = writeln!(
            out,
            "{} from the files the output holds (0 requests): {}{replaced}, in {:.1}s",
            c.what(),
            bytes(c.bytes),
            c.secs
        );
    }
    if let Some(c) = s.compaction.as_ref().filter(|c| c.partitions > 0 || !c.skipped.is_empty()) {
        let _ = writeln!(out, "{}", compaction(c));
    }
    if let Some(r) = &s.report {
        let _ = writeln!(out, "run report: {}/{r}", uri.trim_end_matches('/'));
    }
    out
}

/// `chainetl status` table: one line an export and chain, each commit's
/// time to the second, then where the job stands.
pub fn status_table(view: &StatusView) -> String {
    let mut out = format!("job {} → {}\n", view.job, view.output);
    if let Some(c) = &view.catalog {
        let _ = writeln!(out, "{}", c.text());
    }
    let _ = writeln!(out, "{:<28} {:>11} {:>12}  last commit", "export / chain", "units", "rows");
    for e in &view.exports {
        let _ = writeln!(
            out,
            "{:<28} {:>11} {:>12}  {}",
            e.key,
            format!("{}/{}", e.units_done, e.units),
            e.rows,
            e.last_commit.as_deref().map_or_else(|| "-".to_string(), iso_to_second)
        );
    }
    out.push_str(&live_tables(&view.tables));
    for (table, columns) in &view.columns {
        let _ = writeln!(out, "{table} holds the columns {} (columns the spec selects)", columns.join(", "));
    }
    let per_run_state = view.marks.len() + view.periods_exported.len();
    let _ = writeln!(
        out,
        "{}",
        if view.units == 0 && (per_run_state == 0 || !view.per_run) {
            "not started"
        } else if view.units == 0 {
            "no units pending in frozen windows (aligned and incremental exports below)"
        } else if view.units_done == view.units {
            "complete"
        } else {
            "incomplete: `chainetl run` resumes it"
        }
    );
    out
}

/// The files readers see, a line a table and one for all of them, as
/// `status` and `verify` print them (`crate::state::LiveTable`); nothing
/// for a job with no table yet.
pub fn live_tables(tables: &[crate::state::LiveTable]) -> String {
    if tables.is_empty() {
        return String::new();
    }
    let mut out = format!("{:<28} {:>11} {:>12}\n", "table (files readers see)", "files", "bytes");
    for t in tables {
        let _ = writeln!(out, "{:<28} {:>11} {:>12}", t.table, t.files, bytes(t.bytes));
    }
    let (files, all) = crate::state::LiveTable::total(tables);
    let _ = writeln!(out, "{:<28} {:>11} {:>12}", "all tables", files, bytes(all));
    out
}

/// One line saying what a compaction did.
pub(super) fn compaction(c: &crate::job::maintain::compact::CompactSummary) -> String {
    let skipped = if c.skipped.is_empty() {
        String::new()
    } else {
        format!(
            "; {} partition{} left as {} (an input cannot be read: see the warnings)",
            c.skipped.len(),
            if c.skipped.len() == 1 { "" } else { "s" },
            if c.skipped.len() == 1 { "it was" } else { "they were" }
        )
    };
    if c.partitions == 0 {
        return format!("nothing to compact: every finished partition is compacted{skipped}");
    }
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    format!(
        "compacted {}: {} ({:.1} MiB) into {} ({:.1} MiB), {} rows in {:.1}s ({:.0} rows/s)",
        count(c.partitions as u64, "partition"),
        count(c.files_in as u64, "file"),
        mib(c.bytes_in),
        c.files_out,
        mib(c.bytes_out),
        c.rows,
        c.secs,
        c.rows as f64 / c.secs.max(1e-9)
    ) + &skipped
}
