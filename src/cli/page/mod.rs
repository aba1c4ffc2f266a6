//! `chainetl report`'s page: one self-contained HTML file drawn from the
//! job's overview (`crate::job::view::overview`, the same JSON `--format json`
//! prints), which it also carries whole in
//! `<script type="application/json" id="chainetl-report">`.
//!
//! Invariants: inline CSS and SVG only, no script that runs, nothing
//! fetched when it opens (no URL but `#` fragments); every text from the
//! document is HTML-escaped, and the embedded JSON cannot close its
//! element; colour is never the only signal (each state has a pattern and
//! a label too); printable (no fixed heights, light background).

mod series;

use serde_json::Value;
use std::fmt::Write;

/// Unit states, in legend order: (key, label, fill).
const STATES: [(&str, &str, &str); 5] = [
    ("committed", "committed", "url(#p-committed)"),
    ("compacted", "compacted", "url(#p-compacted)"),
    ("in_progress", "in flight or interrupted", "url(#p-in_progress)"),
    ("failed", "failed", "url(#p-failed)"),
    ("not_started", "not started", "url(#p-not_started)"),
];

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

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => esc(s),
        Value::Null => String::new(),
        other => esc(&other.to_string()),
    }
}

/// `v`'s items, or none when it is not an array (borrowed: the document
/// is only read).
fn list(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

fn num(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
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

fn label_of(state: &str) -> &'static str {
    STATES.iter().find(|(k, ..)| *k == state).map_or("unknown", |(_, l, _)| l)
}

fn swatch(state: &str) -> String {
    let fill = STATES.iter().find(|(k, ..)| *k == state).map_or("#fff", |(.., f)| f);
    format!(r##"<svg width="14" height="14" aria-hidden="true"><rect width="14" height="14" fill="{fill}" stroke="#57606a"/></svg>"##)
}

/// Units by state, each with its swatch and label.
fn legend(counts: &Value) -> String {
    let mut out = String::from(r#"<p class="legend">"#);
    for (key, label, _) in STATES {
        let _ = write!(out, "<span>{}{label}: <b>{}</b></span>", swatch(key), grouped(num(&counts[key])));
    }
    out.push_str("</p>");
    out
}

fn coverage(doc: &Value, out: &mut String) {
    out.push_str(r#"<section id="coverage"><h2>Coverage</h2>"#);
    let strips = list(&doc["coverage"]);
    if strips.is_empty() {
        out.push_str("<p>No units yet: the job has not run, or its exports have no frozen window (aligned and incremental exports show under <i>Incremental</i>).</p>");
    }
    for s in strips {
        let cells = list(&s["cells"]);
        let _ = write!(
            out,
            r#"<h3>export[{}] {} on {} <span class="meta">{}</span></h3>"#,
            text(&s["export"]),
            text(&s["dataset"]),
            text(&s["chain"]),
            text(&s["window"])
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
            let state = c["state"].as_str().unwrap_or_default();
            let fill = STATES.iter().find(|(k, ..)| *k == state).map_or("#fff", |(.., f)| f);
            let _ = write!(
                out,
                r#"<rect x="{:.4}%" width="{:.4}%" height="100%" fill="{fill}"{gap}><title>{} — {}: {}, {} rows, {} files, {}</title></rect>"#,
                i as f64 * 100.0 / n,
                100.0 / n,
                text(&c["unit"]),
                text(&c["range"]),
                label_of(state),
                grouped(num(&c["rows"])),
                num(&c["files"]),
                bytes(num(&c["bytes"]))
            );
        }
        out.push_str("</svg>");
        let by_state: Vec<String> = STATES
            .iter()
            .filter(|(k, ..)| num(&s["counts"][k]) > 0)
            .map(|(k, label, _)| format!("{} {label}", grouped(num(&s["counts"][k]))))
            .collect();
        let _ = write!(
            out,
            r#"<p class="meta">{} unit{} ({}) · {} rows · {} files · {}</p>"#,
            cells.len(),
            if cells.len() == 1 { "" } else { "s" },
            by_state.join(", "),
            grouped(num(&s["rows"])),
            grouped(num(&s["files"])),
            bytes(num(&s["bytes"]))
        );
        // Failed first: the list is cut at OPEN_LISTED.
        let open: Vec<&Value> = ["failed", "in_progress"]
            .iter()
            .flat_map(|s| cells.iter().filter(move |c| c["state"].as_str() == Some(*s)))
            .collect();
        if !open.is_empty() {
            out.push_str(r#"<table><tr><th>unit</th><th>range</th><th>state</th><th class="n">rows</th></tr>"#);
            let more = open.len().saturating_sub(OPEN_LISTED);
            for c in open.into_iter().take(OPEN_LISTED) {
                let _ = write!(
                    out,
                    r#"<tr><td>{}</td><td>{}</td><td>{}</td><td class="n">{}</td></tr>"#,
                    text(&c["unit"]),
                    text(&c["range"]),
                    label_of(c["state"].as_str().unwrap_or_default()),
                    grouped(num(&c["rows"]))
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
    let marks = list(&doc["marks"]);
    let periods = list(&doc["periods"]);
    if !marks.is_empty() || !periods.is_empty() {
        out.push_str("<h3>Incremental and aligned exports</h3><table><tr><th>export</th><th>chain</th><th>exported below</th><th class=\"n\">confirmations</th><th class=\"n\">reorgs repaired</th><th>repair</th></tr>");
        for m in marks {
            let _ = write!(
                out,
                r#"<tr><td>{}</td><td>{}</td><td>{}</td><td class="n">{}</td><td class="n">{}</td><td>{}</td></tr>"#,
                text(&m["export"]),
                text(&m["chain"]),
                text(&m["next"]),
                text(&m["confirmations"]),
                num(&m["reorgs"]),
                if m["repairing"].as_bool() == Some(true) {
                    "unfinished: run again"
                } else {
                    "—"
                }
            );
        }
        for p in periods {
            let _ = write!(
                out,
                r#"<tr><td>{}</td><td>—</td><td>period {} exported</td><td class="n">—</td><td class="n">—</td><td>—</td></tr>"#,
                text(&p["export"]),
                text(&p["window"])
            );
        }
        out.push_str("</table>");
    }
    out.push_str("</section>");
}

/// Bars of rows/s per run (newest right), labelled.
fn runs_chart(runs: &[Value]) -> String {
    let recent = &runs[runs.len().saturating_sub(40)..];
    let top = recent.iter().map(|r| r["rows_per_sec"].as_f64().unwrap_or(0.0)).fold(0.0, f64::max);
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
        let v = r["rows_per_sec"].as_f64().unwrap_or(0.0);
        let h = (v / top * 95.0).max(0.5);
        let _ = write!(
            out,
            r##"<rect x="{:.3}%" y="{:.1}%" width="{:.3}%" height="{h:.1}%" fill="url(#p-committed)" stroke="#116329"><title>{}: {:.0} rows/s, {:.1} requests/s</title></rect>"##,
            i as f64 * slot + slot * 0.1,
            100.0 - h,
            slot * 0.8,
            text(&r["run_id"]),
            v,
            r["requests_per_sec"].as_f64().unwrap_or(0.0)
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

fn runs(doc: &Value, out: &mut String) {
    out.push_str(r#"<section id="runs"><h2>Runs</h2>"#);
    let runs = list(&doc["runs"]);
    if runs.is_empty() {
        out.push_str("<p>No run report yet (a run killed before it ended writes none).</p></section>");
        return;
    }
    out.push_str(&runs_chart(runs));
    let charts: Vec<String> = runs.iter().rev().filter_map(series::chart).collect();
    if !charts.is_empty() {
        out.push_str("<h3>The newest runs over time</h3>");
        for c in charts {
            out.push_str(&c);
        }
    }
    out.push_str(
        r#"<table><tr><th>started</th><th class="n">seconds</th><th>status</th><th class="n">rows</th><th class="n">requests</th><th class="n">retries</th><th class="n">429s</th><th class="n">5xx</th><th class="n">failed units</th><th>shard</th></tr>"#,
    );
    for r in runs.iter().rev() {
        let _ = write!(
            out,
            r#"<tr><td>{}</td><td class="n">{:.1}</td><td>{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td>{}</td></tr>"#,
            text(&r["started_at"]),
            r["elapsed_secs"].as_f64().unwrap_or(0.0),
            text(&r["status"]),
            grouped(num(&r["rows"])),
            grouped(num(&r["requests"])),
            grouped(num(&r["retries"])),
            grouped(num(&r["throttled"])),
            grouped(num(&r["server_errors"])),
            num(&r["failed"]),
            text(&r["shard"])
        );
    }
    out.push_str("</table></section>");
}

fn failures(doc: &Value, out: &mut String) {
    out.push_str(r#"<section id="failures"><h2>Failures and unfinished work</h2>"#);
    let next = &doc["next_run"];
    let _ = write!(
        out,
        "<p><b>The next run:</b> {} unit{} to export, about {} requests.</p>",
        grouped(num(&next["units"])),
        if num(&next["units"]) == 1 { "" } else { "s" },
        grouped(num(&next["requests_estimated"]))
    );
    let interrupted = list(&doc["interrupted"]);
    if !interrupted.is_empty() {
        out.push_str("<h3>Interrupted operations</h3><ul>");
        for op in interrupted {
            let _ = write!(
                out,
                "<li><b>{}</b> at {}: {}; readers see {} until it ends; {}</li>",
                text(&op["kind"]),
                text(&op["at"]),
                text(&op["what"]),
                text(&op["readers"]),
                text(&op["finish"])
            );
        }
        out.push_str("</ul>");
    }
    let failed = list(&doc["failures"]);
    if failed.is_empty() {
        out.push_str("<p>No unit failed in the runs reported.</p>");
    } else {
        out.push_str("<h3>Failed units</h3><table><tr><th>unit</th><th>range</th><th>run</th><th>last error</th></tr>");
        for f in failed {
            let _ = write!(
                out,
                r#"<tr><td>{}</td><td>{}</td><td>{}</td><td class="err">{}</td></tr>"#,
                text(&f["unit"]),
                text(&f["range"]),
                text(&f["run_id"]),
                text(&f["error"])
            );
        }
        out.push_str("</table>");
    }
    out.push_str("</section>");
}

fn tables(doc: &Value, out: &mut String) {
    out.push_str(r#"<section id="tables"><h2>Tables</h2><table><tr><th>table</th><th class="n">rows</th><th class="n">files</th><th class="n">compacted files</th><th class="n">bytes</th><th class="n">Delta version</th></tr>"#);
    for t in doc["tables"].as_array().into_iter().flatten() {
        let _ = write!(
            out,
            r#"<tr><td>{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td></tr>"#,
            text(&t["table"]),
            grouped(num(&t["rows"])),
            grouped(num(&t["files"])),
            grouped(num(&t["compacted_files"])),
            bytes(num(&t["bytes"])),
            t["delta_version"].as_u64().map_or("—".to_string(), |v| v.to_string())
        );
    }
    out.push_str("</table>");
    for t in doc["tables"].as_array().into_iter().flatten() {
        let commits = list(&t["last_commits"]);
        if commits.is_empty() {
            continue;
        }
        let _ = write!(
            out,
            r#"<h3>{}: the last commits</h3><table><tr><th class="n">version</th><th>when</th><th>operation</th><th class="n">files added</th><th class="n">files removed</th><th>changes data</th></tr>"#,
            text(&t["table"])
        );
        for c in commits {
            let _ = write!(
                out,
                r#"<tr><td class="n">{}</td><td>{}</td><td>{}{}</td><td class="n">{}</td><td class="n">{}</td><td>{}</td></tr>"#,
                num(&c["version"]),
                text(&c["timestamp"]),
                text(&c["operation"]),
                if c["metadata"].as_bool() == Some(true) { " (schema)" } else { "" },
                grouped(num(&c["adds"])),
                grouped(num(&c["removes"])),
                if c["data_change"].as_bool() == Some(true) { "yes" } else { "no" }
            );
        }
        out.push_str("</table>");
    }
    out.push_str("</section>");
}

/// The page of overview `doc`.
pub(super) fn render(doc: &Value) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let job = text(&doc["job"]);
    let _ = write!(
        out,
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>chainetl report: {job}</title><style>{STYLE}</style></head><body>{DEFS}"#
    );
    let _ = write!(
        out,
        r#"<header><h1>{job} <span class="badge">{}</span></h1><p class="meta">{} · format {} · {} rows · read {} by chainetl {}</p>"#,
        text(&doc["state"]).replace('_', " "),
        text(&doc["output"]),
        text(&doc["format"]),
        grouped(num(&doc["rows"])),
        text(&doc["generated_at"]),
        text(&doc["chainetl_version"])
    );
    out.push_str(&legend(&doc["counts"]));
    out.push_str("</header>");
    coverage(doc, &mut out);
    failures(doc, &mut out);
    runs(doc, &mut out);
    tables(doc, &mut out);
    // The document the page is drawn from, for scripts; with no `<`, `>`
    // or `&` (escaped inside its strings) nothing in it is markup.
    let json = serde_json::to_string(doc)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_the_document_cannot_open_markup_nor_close_the_embedded_json() {
        let doc =
            serde_json::json!({"job": "<script>x</script>", "failures": [{"unit": "u", "error": "</script><img src=x onerror=alert(1)>"}]});
        let page = render(&doc);
        assert!(!page.contains("<script>x"), "{page}");
        assert!(!page.contains("<img"), "{page}");
        assert_eq!(page.matches("</script>").count(), 1, "only the JSON element's own end");
        let start = page.find(r#"id="chainetl-report">"#).unwrap() + r#"id="chainetl-report">"#.len();
        let end = page.rfind("</script>").unwrap();
        let back: Value = serde_json::from_str(&page[start..end]).unwrap();
        assert_eq!(back, doc, "the page holds the document whole");
    }

    #[test]
    fn failed_units_are_listed_before_the_list_is_cut() {
        let mut cells: Vec<Value> = (0..OPEN_LISTED + 10)
            .map(|i| serde_json::json!({"unit": format!("busy-{i}"), "state": "in_progress"}))
            .collect();
        cells.push(serde_json::json!({"unit": "broken-one", "state": "failed"}));
        let doc = serde_json::json!({"coverage": [{"export": 0, "cells": cells}]});
        let mut out = String::new();
        coverage(&doc, &mut out);
        assert!(out.contains("<td>broken-one</td>"), "{out}");
        assert!(out.contains("… and 11 more"), "{out}");
    }

    #[test]
    fn figures_read_as_people_read_them() {
        assert_eq!(grouped(1234567), "1,234,567");
        assert_eq!(grouped(999), "999");
        assert_eq!(bytes(3 << 20), "3.0 MiB");
    }
}
