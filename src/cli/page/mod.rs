//! `chainetl report`'s page: one self-contained HTML file drawn from the
//! job's overview (`crate::job::view::overview`, the same document `--format
//! json` prints), which it also carries whole in
//! `<script type="application/json" id="chainetl-report">`.
//!
//! Invariants: a pure function of the typed [`Overview`], reading its
//! fields (never the JSON by name, so a renamed field fails to build, not
//! to show); inline CSS and SVG only, no script that runs, nothing
//! fetched when it opens (no URL but `#` fragments); every text from the
//! document is HTML-escaped, and the embedded JSON cannot close its
//! element; colour is never the only signal (each state has a pattern and
//! a label too); printable (no fixed heights, light background); instants
//! shown to the second (the JSON keeps them whole); a run that found
//! nothing to do is a line, not a chart, and a run that changed the
//! output says what it changed; files and bytes are shown of the tables
//! only (those readers see, as `status` and `verify` count them), never
//! what units wrote.

mod series;

use crate::job::view::overview::{CellState, Counts, Overview, RunLine, Strip};
use crate::vocab::window::iso_to_second;
use std::fmt::Write;

/// Failed and unfinished units listed under a strip (the rest are counted).
const OPEN_LISTED: usize = 50;

const STYLE: &str = "body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1d2329;background:#fff;\
margin:0 auto;max-width:1100px;padding:16px 24px}h1{font-size:22px;margin:8px 0}h2{font-size:17px;margin:24px 0 8px;\
border-bottom:1px solid #d0d7de;padding-bottom:4px}h3{font-size:14px;margin:14px 0 4px}table{border-collapse:collapse;\
width:100%;font-size:13px}th,td{text-align:left;padding:3px 8px;border-bottom:1px solid #eaeef2;vertical-align:top}\
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}.meta{color:#57606a}.badge{display:inline-block;\
padding:1px 8px;border-radius:10px;border:1px solid #57606a;font-weight:600}.strip{width:100%;height:22px;\
border:1px solid #8c959f;display:block}.legend span{margin-right:14px;white-space:nowrap}.legend svg{vertical-align:middle;\
margin-right:4px}.err{font-family:ui-monospace,monospace;font-size:12px;white-space:pre-wrap;word-break:break-word}\
.chart{width:100%;height:90px;border:1px solid #d0d7de}@media print{body{max-width:none}details{display:block}}";

/// Patterns for each state: a fill and a texture, so print in grey and
/// colour-blind eyes still tell them apart.
const DEFS: &str = r##"<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>
<pattern id="p-committed" width="4" height="4" patternUnits="userSpaceOnUse"><rect width="4" height="4" fill="#2da44e"/></pattern>
<pattern id="p-compacted" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#2da44e"/><rect width="2" height="6" fill="#116329"/></pattern>
<pattern id="p-in_progress" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="#f2c744"/><circle cx="3" cy="3" r="1.3" fill="#7d4e00"/></pattern>
<pattern id="p-failed" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="#e5534b"/><path d="M0 0L6 6M6 0L0 6" stroke="#6e1111" stroke-width="1.2"/></pattern>
<pattern id="p-not_started" width="4" height="4" patternUnits="userSpaceOnUse"><rect width="4" height="4" fill="#eaeef2"/></pattern>
</defs></svg>"##;

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// An optional text, escaped (blank when absent).
fn opt(v: Option<&str>) -> String {
    v.map(esc).unwrap_or_default()
}

/// `n` with thousands separators.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// A state's label, as the legend names it.
fn label_of(state: CellState) -> &'static str {
    match state {
        CellState::Committed => "committed",
        CellState::Compacted => "compacted",
        CellState::InProgress => "in flight or interrupted",
        CellState::Failed => "failed",
        CellState::NotStarted => "not started",
    }
}

/// A state's fill: one of the patterns of [`DEFS`].
fn fill_of(state: CellState) -> &'static str {
    match state {
        CellState::Committed => "url(#p-committed)",
        CellState::Compacted => "url(#p-compacted)",
        CellState::InProgress => "url(#p-in_progress)",
        CellState::Failed => "url(#p-failed)",
        CellState::NotStarted => "url(#p-not_started)",
    }
}

fn swatch(state: CellState) -> String {
    format!(
        r##"<svg width="14" height="14" aria-hidden="true"><rect width="14" height="14" fill="{}" stroke="#57606a"/></svg>"##,
        fill_of(state)
    )
}

/// Units in `state` (absent: none).
fn count(counts: &Counts, state: CellState) -> u64 {
    counts.get(&state).copied().unwrap_or(0)
}

/// A time a run took: milliseconds under a second, where tenths of a
/// second would read as nothing.
fn took(secs: f64) -> String {
    if secs < 1.0 {
        format!("{:.0} ms", secs * 1000.0)
    } else {
        format!("{secs:.1} s")
    }
}

/// Units by state, each with its swatch and label.
fn legend(counts: &Counts) -> String {
    let mut out = String::from(r#"<p class="legend">"#);
    for state in CellState::ALL {
        let _ = write!(
            out,
            "<span>{}{}: <b>{}</b></span>",
            swatch(state),
            label_of(state),
            grouped(count(counts, state))
        );
    }
    out.push_str("</p>");
    out
}

/// One export on one chain: its strip of units, their figures, and its
/// failed and unfinished units.
fn strip(s: &Strip, out: &mut String) {
    let cells = &s.cells;
    let _ = write!(
        out,
        r#"<h3>export[{}] {} on {} <span class="meta">{}</span></h3>"#,
        s.export,
        esc(&s.dataset),
        esc(&s.chain),
        esc(&s.window)
    );
    // Percentages, not a stretched view box: the patterns keep their size.
    let n = cells.len().max(1) as f64;
    let _ = write!(out, r#"<svg class="strip" role="img" aria-label="{} units">"#, cells.len());
    let gap = if cells.len() <= 200 {
        r##" stroke="#ffffff" stroke-width="1""##
    } else {
        ""
    };
    for (i, c) in cells.iter().enumerate() {
        let _ = write!(
            out,
            r#"<rect x="{:.4}%" width="{:.4}%" height="100%" fill="{}"{gap}><title>{} — {}: {}, {} rows</title></rect>"#,
            i as f64 * 100.0 / n,
            100.0 / n,
            fill_of(c.state),
            esc(&c.unit),
            esc(&c.range),
            label_of(c.state),
            grouped(c.rows)
        );
    }
    out.push_str("</svg>");
    let by_state: Vec<String> = CellState::ALL
        .into_iter()
        .filter(|st| count(&s.counts, *st) > 0)
        .map(|st| format!("{} {}", grouped(count(&s.counts, st)), label_of(st)))
        .collect();
    let _ = write!(
        out,
        r#"<p class="meta">{} unit{} ({}) · {} rows</p>"#,
        cells.len(),
        if cells.len() == 1 { "" } else { "s" },
        by_state.join(", "),
        grouped(s.rows)
    );
    // Failed first: the list is cut at OPEN_LISTED.
    let open: Vec<_> = [CellState::Failed, CellState::InProgress]
        .into_iter()
        .flat_map(|st| cells.iter().filter(move |c| c.state == st))
        .collect();
    if !open.is_empty() {
        out.push_str(r#"<table><tr><th>unit</th><th>range</th><th>state</th><th class="n">rows</th></tr>"#);
        let more = open.len().saturating_sub(OPEN_LISTED);
        for c in open.into_iter().take(OPEN_LISTED) {
            let _ = write!(
                out,
                r#"<tr><td>{}</td><td>{}</td><td>{}</td><td class="n">{}</td></tr>"#,
                esc(&c.unit),
                esc(&c.range),
                label_of(c.state),
                grouped(c.rows)
            );
        }
        if more > 0 {
            let _ = write!(
                out,
                r#"<tr><td colspan="4">… and {} more (each is a cell of the strip above, and in <code>report --format json</code>)</td></tr>"#,
                grouped(more as u64)
            );
        }
        out.push_str("</table>");
    }
}

fn coverage(doc: &Overview, out: &mut String) {
    out.push_str(r#"<section id="coverage"><h2>Coverage</h2>"#);
    if doc.coverage.is_empty() {
        out.push_str("<p>No units yet: the job has not run, or its exports have no frozen window (aligned and incremental exports show under <i>Incremental</i>).</p>");
    }
    for s in &doc.coverage {
        strip(s, out);
    }
    if !doc.marks.is_empty() || !doc.periods.is_empty() {
        out.push_str("<h3>Incremental and aligned exports</h3><table><tr><th>export</th><th>chain</th><th>exported below</th><th class=\"n\">confirmations</th><th class=\"n\">reorgs repaired</th><th>repair</th></tr>");
        for m in &doc.marks {
            let _ = write!(
                out,
                r#"<tr><td>{}</td><td>{}</td><td>{}</td><td class="n">{}</td><td class="n">{}</td><td>{}</td></tr>"#,
                m.export,
                esc(&m.chain),
                m.next,
                m.confirmations.map(|c| c.to_string()).unwrap_or_default(),
                m.reorgs,
                if m.repairing { "unfinished: run again" } else { "—" }
            );
        }
        for p in &doc.periods {
            let _ = write!(
                out,
                r#"<tr><td>{}</td><td>—</td><td>period {} exported</td><td class="n">—</td><td class="n">—</td><td>—</td></tr>"#,
                p.export,
                esc(&p.window)
            );
        }
        out.push_str("</table>");
    }
    out.push_str("</section>");
}

/// Bars of rows/s per run (newest right), labelled.
fn runs_chart(runs: &[RunLine]) -> String {
    let recent = &runs[runs.len().saturating_sub(40)..];
    let top = recent.iter().map(|r| r.rows_per_sec).fold(0.0, f64::max);
    if recent.is_empty() || top <= 0.0 {
        return String::new();
    }
    // Percentages: a slot a run, at least a tenth of the width each.
    let slot = 100.0 / recent.len().max(10) as f64;
    let mut out = format!(
        r#"<svg class="chart" role="img" aria-label="rows per second of the last {} runs">"#,
        recent.len()
    );
    for (i, r) in recent.iter().enumerate() {
        let v = r.rows_per_sec;
        let h = (v / top * 95.0).max(0.5);
        let _ = write!(
            out,
            r##"<rect x="{:.3}%" y="{:.1}%" width="{:.3}%" height="{h:.1}%" fill="url(#p-committed)" stroke="#116329"><title>{}: {:.0} rows/s, {:.1} requests/s</title></rect>"##,
            i as f64 * slot + slot * 0.1,
            100.0 - h,
            slot * 0.8,
            esc(&r.run_id),
            v,
            r.requests_per_sec
        );
    }
    out.push_str("</svg>");
    let _ = write!(
        out,
        r#"<p class="meta">Rows per second of the last {} runs, oldest left; the tallest is {:.0} rows/s.</p>"#,
        recent.len(),
        top
    );
    out
}

/// A run that found nothing to do, in a line where a chart would be flat.
fn idle_line(r: &RunLine) -> String {
    format!(
        r#"<p class="idle"><b>Run {}</b> <span class="meta">{}, {}</span>: nothing to do (every unit done already, no new confirmed block, or the period exported).</p>"#,
        esc(&r.run_id),
        esc(&iso_to_second(&r.started_at)),
        took(r.elapsed_secs)
    )
}

fn runs(doc: &Overview, out: &mut String) {
    out.push_str(r#"<section id="runs"><h2>Runs</h2>"#);
    let runs = &doc.runs;
    if runs.is_empty() {
        out.push_str("<p>No run report yet (a run killed before it ended writes none).</p></section>");
        return;
    }
    out.push_str(&runs_chart(runs));
    let charts: Vec<String> = runs
        .iter()
        .rev()
        .filter(|r| r.series.is_some())
        .filter_map(|r| {
            if r.had_nothing_to_do() {
                Some(idle_line(r))
            } else {
                series::chart(r)
            }
        })
        .collect();
    if !charts.is_empty() {
        out.push_str("<h3>The newest runs over time</h3>");
        for c in charts {
            out.push_str(&c);
        }
    }
    out.push_str(
        r#"<table><tr><th>started</th><th class="n">took</th><th>status</th><th class="n">rows</th><th class="n">requests</th><th class="n">retries</th><th class="n">429s</th><th class="n">5xx</th><th class="n">failed units</th><th>shard</th></tr>"#,
    );
    for r in runs.iter().rev() {
        let _ = write!(
            out,
            r#"<tr><td>{}</td><td class="n">{}</td><td>{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td>{}</td></tr>"#,
            esc(&iso_to_second(&r.started_at)),
            took(r.elapsed_secs),
            esc(&r.status) + &r.changed.as_deref().map(|c| format!(": {}", esc(c))).unwrap_or_default(),
            grouped(r.rows),
            grouped(r.requests),
            grouped(r.retries),
            grouped(r.throttled),
            grouped(r.server_errors),
            r.failed,
            opt(r.shard.as_deref())
        );
    }
    out.push_str("</table></section>");
}

fn failures(doc: &Overview, out: &mut String) {
    out.push_str(r#"<section id="failures"><h2>Failures and unfinished work</h2>"#);
    let next = &doc.next_run;
    let _ = write!(
        out,
        "<p><b>The next run:</b> {} unit{} to export, at least {} request{} (one a unit; the pages a unit takes depend on the data in its range).</p>",
        grouped(next.units),
        if next.units == 1 { "" } else { "s" },
        grouped(next.units),
        if next.units == 1 { "" } else { "s" }
    );
    if !doc.interrupted.is_empty() {
        out.push_str("<h3>Interrupted operations</h3><ul>");
        for op in &doc.interrupted {
            let _ = write!(
                out,
                "<li><b>{}</b> at {}: {}; readers see {} until it ends; {}</li>",
                esc(&op.kind),
                esc(&op.at),
                esc(&op.what),
                esc(&op.readers),
                esc(&op.finish)
            );
        }
        out.push_str("</ul>");
    }
    if !doc.refused.is_empty() {
        out.push_str("<h3>Refused by the service</h3><ul>");
        for r in &doc.refused {
            let _ = write!(out, r#"<li class="err">The newest run stopped: {}</li>"#, esc(&r.text));
        }
        out.push_str("</ul>");
    }
    if doc.failures.is_empty() {
        out.push_str("<p>No unit failed in the runs reported.</p>");
    } else {
        out.push_str("<h3>Failed units</h3><table><tr><th>unit</th><th>range</th><th>run</th><th>last error</th></tr>");
        for f in &doc.failures {
            let _ = write!(
                out,
                r#"<tr><td>{}</td><td>{}</td><td>{}</td><td class="err">{}</td></tr>"#,
                esc(&f.unit),
                esc(&f.range),
                esc(&f.run_id),
                esc(&f.error)
            );
        }
        out.push_str("</table>");
    }
    out.push_str("</section>");
}

fn tables(doc: &Overview, out: &mut String) {
    out.push_str(r#"<section id="tables"><h2>Tables</h2><table><tr><th>table</th><th class="n">rows</th><th class="n">files</th><th class="n">compacted files</th><th class="n">bytes</th><th class="n">version</th></tr>"#);
    for t in &doc.tables {
        let _ = write!(
            out,
            r#"<tr><td>{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td></tr>"#,
            esc(&table_name(t)),
            grouped(t.rows),
            grouped(t.files),
            grouped(t.compacted_files),
            bytes(t.bytes),
            esc(&table_version(t))
        );
    }
    out.push_str("</table>");
    for t in doc.tables.iter().filter(|t| !t.last_commits.is_empty()) {
        let _ = write!(
            out,
            r#"<h3>{}: the last commits</h3><table><tr><th class="n">version</th><th>when</th><th>operation</th><th class="n">files added</th><th class="n">files removed</th><th>changes data</th></tr>"#,
            esc(&t.table)
        );
        for c in &t.last_commits {
            let _ = write!(
                out,
                r#"<tr><td class="n">{}</td><td>{}</td><td>{}{}</td><td class="n">{}</td><td class="n">{}</td><td>{}</td></tr>"#,
                c.version,
                opt(c.timestamp.as_deref()),
                esc(&c.operation),
                if c.metadata { " (schema)" } else { "" },
                grouped(c.adds),
                grouped(c.removes),
                if c.data_change { "yes" } else { "no" }
            );
        }
        out.push_str("</table>");
    }
    out.push_str("</section>");
}

/// The page of overview `doc`.
pub(super) fn render(doc: &Overview) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let job = esc(&doc.job);
    let _ = write!(
        out,
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>chainetl report: {job}</title><style>{STYLE}</style></head><body>{DEFS}"#
    );
    let _ = write!(
        out,
        r#"<header><h1>{job} <span class="badge">{}</span></h1><p class="meta">{} · format {} · {} rows · read {} by chainetl {}</p>"#,
        esc(&doc.state).replace('_', " "),
        esc(&doc.output),
        esc(&doc.format),
        grouped(doc.rows),
        esc(&iso_to_second(&doc.generated_at)),
        esc(&doc.chainetl_version)
    );
    out.push_str(&legend(&doc.counts));
    out.push_str("</header>");
    coverage(doc, &mut out);
    failures(doc, &mut out);
    runs(doc, &mut out);
    tables(doc, &mut out);
    // The document the page is drawn from, for scripts, as `--format json`
    // has it (a Value: its keys sorted); with no `<`, `>` or `&` (escaped
    // inside its strings) nothing in it is markup.
    let json = serde_json::to_value(doc)
        .and_then(|v| serde_json::to_string(&v))
        .unwrap_or_default()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026");
    let _ = write!(
        out,
        r#"<script type="application/json" id="chainetl-report">{json}</script></body></html>"#
    );
    out.push('\n');
    out
}

/// A table's name, and its identifier in the REST catalog it is committed
/// through, if any.
fn table_name(t: &crate::job::view::overview::TableLine) -> String {
    match &t.catalog_identifier {
        Some(id) => format!("{} (catalog: {id})", t.table),
        None => t.table.clone(),
    }
}

/// A table's version as its format names it: a Delta version, or an
/// Iceberg snapshot's sequence number and id; `—` where there is none.
fn table_version(t: &crate::job::view::overview::TableLine) -> String {
    match (t.delta_version, t.snapshot_id, t.sequence_number) {
        (Some(v), _, _) => v.to_string(),
        (None, Some(id), Some(seq)) => format!("snapshot {id} (sequence {seq})"),
        _ => "—".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::view::overview::{Cell, Failure};

    fn cell(unit: &str, state: CellState) -> Cell {
        Cell {
            unit: unit.into(),
            range: String::new(),
            state,
            rows: 0,
            files: 0,
            bytes: 0,
        }
    }

    #[test]
    fn text_from_the_document_cannot_open_markup_nor_close_the_embedded_json() {
        let doc = Overview {
            job: "<script>x</script>".into(),
            failures: vec![Failure {
                unit: "u".into(),
                error: "</script><img src=x onerror=alert(1)>".into(),
                ..Failure::default()
            }],
            ..Overview::default()
        };
        let page = render(&doc);
        assert!(!page.contains("<script>x"), "{page}");
        assert!(!page.contains("<img"), "{page}");
        assert_eq!(page.matches("</script>").count(), 1, "only the JSON element's own end");
        let start = page.find(r#"id="chainetl-report">"#).unwrap() + r#"id="chainetl-report">"#.len();
        let end = page.rfind("</script>").unwrap();
        let back: Overview = serde_json::from_str(&page[start..end]).unwrap();
        assert_eq!(back, doc, "the page holds the document whole");
    }

    #[test]
    fn a_refusal_shows_once_escaped_and_no_unit_as_failed() {
        let text = "the service at <h> refused the API key in $BDS_API_KEY (HTTP 401: no)";
        let doc = Overview {
            refused: vec![crate::job::run::report_format::RefusedLine {
                status: 401,
                text: text.into(),
                ..Default::default()
            }],
            ..Overview::default()
        };
        let mut out = String::new();
        failures(&doc, &mut out);
        assert_eq!(out.matches("refused the API key").count(), 1, "{out}");
        assert!(out.contains(&esc(text)) && !out.contains("<h>"), "{out}");
        assert!(out.contains("No unit failed"), "{out}");
    }

    #[test]
    fn failed_units_are_listed_before_the_list_is_cut() {
        let mut cells: Vec<Cell> = (0..OPEN_LISTED + 10)
            .map(|i| cell(&format!("busy-{i}"), CellState::InProgress))
            .collect();
        cells.push(cell("broken-one", CellState::Failed));
        let doc = Overview {
            coverage: vec![Strip { cells, ..Strip::default() }],
            ..Overview::default()
        };
        let mut out = String::new();
        coverage(&doc, &mut out);
        assert!(out.contains("<td>broken-one</td>"), "{out}");
        assert!(out.contains("… and 11 more"), "{out}");
    }

    #[test]
    fn every_field_of_a_0_2_0_document_shows_on_the_page() {
        for doc in crate::job::view::overview::tests::DOCUMENTS {
            let doc: Overview = serde_json::from_str(doc).unwrap();
            let page = render(&doc);
            let shows = |text: String| assert!(page.contains(&text), "not on the page: {text}");
            shows(format!(
                r#"<h1>{} <span class="badge">{}</span></h1><p class="meta">{} · format {} · {} rows · read {} by chainetl {}</p>"#,
                doc.job,
                doc.state.replace('_', " "),
                doc.output,
                doc.format,
                grouped(doc.rows),
                iso_to_second(&doc.generated_at),
                doc.chainetl_version
            ));
            for (state, n) in &doc.counts {
                shows(format!("{}: <b>{}</b>", label_of(*state), grouped(*n)));
            }
            for s in &doc.coverage {
                shows(format!(
                    "<h3>export[{}] {} on {} <span class=\"meta\">{}</span></h3>",
                    s.export, s.dataset, s.chain, s.window
                ));
                // The files readers see are the tables' (below), not
                // what the units wrote.
                shows(format!("{} rows</p>", grouped(s.rows)));
                for c in &s.cells {
                    let (label, rows) = (label_of(c.state), grouped(c.rows));
                    shows(format!("<title>{} — {}: {label}, {rows} rows</title>", c.unit, c.range));
                }
            }
            for m in &doc.marks {
                let confirmations = m.confirmations.map(|c| c.to_string()).unwrap_or_default();
                shows(format!(
                    r#"<tr><td>{}</td><td>{}</td><td>{}</td><td class="n">{confirmations}</td><td class="n">{}</td>"#,
                    m.export, m.chain, m.next, m.reorgs
                ));
            }
            for p in &doc.periods {
                shows(format!("<tr><td>{}</td><td>—</td><td>period {} exported</td>", p.export, p.window));
            }
            for r in &doc.runs {
                shows(format!(
                    r#"<tr><td>{}</td><td class="n">{}</td><td>{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td>{}</td></tr>"#,
                    iso_to_second(&r.started_at),
                    took(r.elapsed_secs),
                    r.status,
                    grouped(r.rows),
                    grouped(r.requests),
                    grouped(r.retries),
                    grouped(r.throttled),
                    grouped(r.server_errors),
                    r.failed,
                    r.shard.as_deref().unwrap_or_default()
                ));
                if r.series.is_some() {
                    shows(format!("Run {}", r.run_id));
                }
            }
            for f in &doc.failures {
                shows(format!(
                    r#"<tr><td>{}</td><td>{}</td><td>{}</td><td class="err">{}</td></tr>"#,
                    f.unit,
                    f.range,
                    f.run_id,
                    esc(&f.error)
                ));
            }
            for op in &doc.interrupted {
                shows(format!(
                    "<li><b>{}</b> at {}: {}; readers see {} until it ends; {}</li>",
                    op.kind,
                    op.at,
                    op.what,
                    op.readers,
                    esc(&op.finish)
                ));
            }
            shows(format!(
                "{} unit{} to export, at least {} request{}",
                grouped(doc.next_run.units),
                if doc.next_run.units == 1 { "" } else { "s" },
                grouped(doc.next_run.units),
                if doc.next_run.units == 1 { "" } else { "s" }
            ));
            for t in &doc.tables {
                let version = esc(&table_version(t));
                shows(format!(
                    r#"<tr><td>{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{version}</td></tr>"#,
                    esc(&table_name(t)),
                    grouped(t.rows),
                    grouped(t.files),
                    grouped(t.compacted_files),
                    bytes(t.bytes)
                ));
                for c in &t.last_commits {
                    shows(format!(
                        r#"<tr><td class="n">{}</td><td>{}</td><td>{}{}</td><td class="n">{}</td><td class="n">{}</td><td>{}</td></tr>"#,
                        c.version,
                        c.timestamp.as_deref().unwrap_or_default(),
                        c.operation,
                        if c.metadata { " (schema)" } else { "" },
                        c.adds,
                        c.removes,
                        if c.data_change { "yes" } else { "no" }
                    ));
                }
            }
        }
    }

    #[test]
    fn a_run_that_found_nothing_to_do_is_a_line_not_a_chart() {
        let doc: Overview = serde_json::from_str(crate::job::view::overview::tests::DOCUMENTS[0]).unwrap();
        let idle: Vec<&RunLine> = doc.runs.iter().filter(|r| r.had_nothing_to_do()).collect();
        assert_eq!(idle.len(), 1, "the fixture has one");
        let mut out = String::new();
        runs(&doc, &mut out);
        assert!(out.contains(&format!("<b>Run {}</b>", idle[0].run_id)), "{out}");
        assert!(out.contains("nothing to do"), "{out}");
        assert!(!out.contains(&format!("<h3>Run {}", idle[0].run_id)), "no chart of it: {out}");
        let charted = doc.runs.iter().filter(|r| r.series.is_some() && !r.had_nothing_to_do()).count();
        assert_eq!(out.matches("<h3>Run ").count(), charted, "the others are charted: {out}");
        assert_eq!(charted, 2);
    }

    #[test]
    fn figures_read_as_people_read_them() {
        assert_eq!(grouped(1234567), "1,234,567");
        assert_eq!(grouped(999), "999");
        assert_eq!(bytes(3 << 20), "3.0 MiB");
        assert_eq!(took(0.0237), "24 ms");
        assert_eq!(took(12.34), "12.3 s");
    }
}
