//! One count of files: `status` (text and JSON), `report` (JSON and page)
//! and `verify` say the same files and bytes a table, those readers see
//! (the `.parquet` files a glob finds; the current version's files as
//! deltalake and pyiceberg read them), in MiB, through a newcomer's first
//! hour: a run, then a re-partition, parquet → delta and a column left
//! out (and the same in Iceberg). A run that changed the output says what
//! it changed: its summary, its run report and the report's page.

use crate::common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const TABLES: [&str; 2] = ["blocks", "events"];

/// The job `cn`: blocks on two chains, events on one, compacted after the
/// run (the default), in `format`, with `extra` in `[output]` and
/// `exclude` in the blocks export.
fn spec(dir: &Path, url: &str, format: &str, extra: &str, exclude: &str) -> String {
    write_spec(
        dir,
        "cn.toml",
        &format!(
            r#"name = "cn"
[source]
base_url = "{url}"
[output]
uri = "{}"
format = "{format}"
{extra}
[[export]]
dataset = "blocks"
chains = ["base", "ethereum"]
window = "20000000..20000399"
chunk_blocks = 100
{exclude}
[[export]]
dataset = "events"
chains = ["ethereum"]
window = "20000000..20000199"
chunk_blocks = 50
"#,
            dir.join("out").display()
        ),
    )
}

/// Bytes as people read them: B, KiB, MiB (binary units, one decimal).
fn human(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// Reads the current version's files of each table the way readers do.
const READERS: &str = r#"
import json, os, sys
fmt, out, tables = sys.argv[1], sys.argv[2], sys.argv[3:]
local = lambda p: p[len("file://"):] if p.startswith("file://") else p
seen = {}
for t in tables:
    path = os.path.join(out, t)
    if fmt == "delta":
        import deltalake
        files = [local(u) for u in deltalake.DeltaTable(path).file_uris()]
        seen[t] = [len(files), sum(os.path.getsize(f) for f in files)]
    else:
        from pyiceberg.table import StaticTable
        tasks = list(StaticTable.from_metadata(path).scan().plan_files())
        seen[t] = [len(tasks), sum(task.file.file_size_in_bytes for task in tasks)]
print(json.dumps(seen))
"#;

/// Each table's files and bytes as readers find them: the `.parquet`
/// files under its folder (what `read_parquet('…/**/*.parquet')` in
/// DuckDB or Polars reads), or its current version's (deltalake,
/// pyiceberg).
fn readers_see(out: &Path, format: &str) -> BTreeMap<String, (u64, u64)> {
    if format == "parquet" {
        return TABLES
            .iter()
            .map(|t| {
                let files = parquet_files(&out.join(t));
                let bytes = files.iter().map(|f| std::fs::metadata(f).unwrap().len()).sum();
                (t.to_string(), (files.len() as u64, bytes))
            })
            .collect();
    }
    let o = python_output(
        Command::new(python())
            .args(["-c", READERS, format, &out.to_string_lossy()])
            .args(TABLES),
    )
    .expect("python with deltalake and pyiceberg (run `make test`, which installs them)");
    assert!(o.status.success(), "{}", text(&o));
    let doc: BTreeMap<String, (u64, u64)> = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    doc
}

fn json_of(args: &[&str]) -> serde_json::Value {
    let o = chainetl(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", text(&o)))
}

/// Whether `text` has a line reading `name files bytes` (any spacing).
fn has_line(text: &str, name: &str, files: u64, bytes: u64) -> bool {
    let want = format!("{name} {files} {}", human(bytes));
    text.lines().any(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") == want)
}

/// `status` (text and JSON), `report` (JSON and page) and `verify` give
/// each table, and all of them, the files and bytes readers see.
fn counts_agree(dir: &Path, spec: &str, format: &str, step: &str) {
    let out = dir.join("out");
    let seen = readers_see(&out, format);
    let (files, bytes) = seen.values().fold((0, 0), |(f, b), (tf, tb)| (f + tf, b + tb));
    assert!(files > 0, "{step}: readers see files");
    // status --format json: the totals, and a line a table.
    let st = json_of(&["status", spec, "--format", "json"]);
    assert_eq!(
        (st["files"].as_u64(), st["bytes"].as_u64()),
        (Some(files), Some(bytes)),
        "{step}: status --format json: {st}"
    );
    for (t, (f, b)) in &seen {
        let line = st["tables"].as_array().and_then(|ts| ts.iter().find(|l| l["table"] == t.as_str()));
        let got = line.map(|l| (l["files"].as_u64(), l["bytes"].as_u64()));
        assert_eq!(got, Some((Some(*f), Some(*b))), "{step}: status --format json, table {t}: {st}");
    }
    // status: the same in MiB.
    let o = chainetl(&["status", spec]);
    let status = String::from_utf8_lossy(&o.stdout).into_owned();
    for (t, (f, b)) in &seen {
        assert!(
            has_line(&status, t, *f, *b),
            "{step}: status, table {t}: {f} files, {}:\n{status}",
            human(*b)
        );
    }
    assert!(
        has_line(&status, "all tables", files, bytes),
        "{step}: status, all tables:\n{status}"
    );
    // report --format json, and the page drawn from it.
    let doc = json_of(&["report", spec, "--format", "json"]);
    let page_path = dir.join("cn.html");
    let o = chainetl(&["report", spec, "--out", &page_path.to_string_lossy()]);
    assert!(o.status.success(), "{}", text(&o));
    let page = std::fs::read_to_string(&page_path).unwrap();
    for (t, (f, b)) in &seen {
        let line = doc["tables"]
            .as_array()
            .and_then(|ts| ts.iter().find(|l| l["table"] == t.as_str()))
            .unwrap_or_else(|| panic!("{step}: no table {t} in the report: {doc}"));
        assert_eq!(
            (line["files"].as_u64(), line["bytes"].as_u64()),
            (Some(*f), Some(*b)),
            "{step}: report --format json, table {t}: {line}"
        );
        let row = page
            .split("<tr><td>")
            .find(|r| r.starts_with(&format!("{t}</td>")))
            .unwrap_or_else(|| panic!("{step}: no row of {t} on the page"));
        assert!(
            row.contains(&format!(r#"<td class="n">{f}</td>"#)) && row.contains(&human(*b)),
            "{step}: the page's row of {t} ({f} files, {}): {row}",
            human(*b)
        );
    }
    // verify: checks those files, reads those bytes, and says them.
    let o = chainetl(&["verify", spec]);
    assert!(o.status.success(), "{step}: {}", text(&o));
    let (vout, verr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let checked = format!(
        "checked {files} file{} by content: {} read",
        if files == 1 { "" } else { "s" },
        human(bytes)
    );
    assert!(verr.contains(&checked), "{step}: verify should say `{checked}`:\n{}", text(&o));
    for (t, (f, b)) in &seen {
        assert!(has_line(&vout, t, *f, *b), "{step}: verify, table {t}:\n{vout}");
    }
}

/// Runs `spec` (a change of the job, made from its files); its summary,
/// its run report, the report's JSON and page say what it changed (`what`
/// among its words), none of them "nothing to do".
fn run_says_what_it_changed(dir: &Path, spec: &str, what: &[&str], step: &str) {
    let o = chainetl(&["run", spec]);
    assert!(o.status.success(), "{step}: {}", text(&o));
    let said = text(&o);
    let line = said
        .lines()
        .find(|l| what.iter().all(|w| l.contains(w)))
        .unwrap_or_else(|| panic!("{step}: the run should say what it changed ({what:?}):\n{said}"));
    let latest = read_json(&dir.join("out/_chainetl/cn/runs/latest.json"));
    assert_eq!(latest["status"], "succeeded", "{step}: the run report: {latest}");
    let doc = json_of(&["report", spec, "--format", "json"]);
    let run = doc["runs"].as_array().and_then(|r| r.last()).cloned().unwrap_or_default();
    assert_eq!(run["run_id"], latest["run_id"], "{step}");
    assert_ne!(run["status"], "nothing_to_do", "{step}: {run}");
    let changed = run["changed"]
        .as_str()
        .unwrap_or_else(|| panic!("{step}: the report's run says no change: {run}"));
    assert!(what.iter().all(|w| changed.contains(w)), "{step}: {changed}");
    assert!(
        line.contains(changed),
        "{step}: the summary and the report say it alike:\n{line}\n{changed}"
    );
    let page_path = dir.join("cn.html");
    let o = chainetl(&["report", spec, "--out", &page_path.to_string_lossy()]);
    assert!(o.status.success(), "{}", text(&o));
    let page = std::fs::read_to_string(&page_path).unwrap();
    let id = run["run_id"].as_str().unwrap();
    assert!(
        !page
            .split("<p")
            .any(|p| p.contains(&format!("Run {id}")) && p.contains("nothing to do")),
        "{step}: the page says the run had nothing to do"
    );
    let html = changed
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;");
    assert!(page.contains(&html), "{step}: the page should say `{html}`");
}

#[test]
fn status_report_and_verify_count_the_files_readers_see_through_a_first_hour_of_changes() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = chainetl(&["run", &spec(d, &sim.url(), "parquet", "", ""), "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    // Compacted: the checkpoints count the units' files, readers see fewer.
    counts_agree(d, &spec(d, &sim.url(), "parquet", "", ""), "parquet", "parquet, compacted");
    let by_chain = "partition_by = [\"chain\"]";
    let s = spec(d, &sim.url(), "parquet", by_chain, "");
    run_says_what_it_changed(d, &s, &["rewrote", "partition_by"], "re-partitioned");
    counts_agree(d, &s, "parquet", "re-partitioned");
    let s = spec(d, &sim.url(), "delta", by_chain, "");
    run_says_what_it_changed(d, &s, &["converted 2 tables from parquet to delta"], "parquet → delta");
    counts_agree(d, &s, "delta", "parquet → delta");
    let s = spec(d, &sim.url(), "delta", by_chain, "exclude_columns = [\"extra_data\"]");
    run_says_what_it_changed(d, &s, &["rewrote", "exclude_columns", "extra_data"], "a column left out");
    // The Delta tables keep the replaced files for earlier versions.
    counts_agree(d, &s, "delta", "a column left out");
}

#[test]
fn status_report_and_verify_count_an_iceberg_tables_current_files() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = spec(d, &sim.url(), "iceberg", "", "");
    let o = chainetl(&["run", &s, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    counts_agree(d, &s, "iceberg", "iceberg, compacted");
    let by_chain = "partition_by = [\"chain\"]";
    let s = spec(d, &sim.url(), "iceberg", by_chain, "");
    run_says_what_it_changed(d, &s, &["rewrote", "partition_by"], "re-partitioned");
    counts_agree(d, &s, "iceberg", "re-partitioned");
    let s = spec(d, &sim.url(), "iceberg", by_chain, "exclude_columns = [\"extra_data\"]");
    run_says_what_it_changed(d, &s, &["rewrote", "exclude_columns", "extra_data"], "a column left out");
    counts_agree(d, &s, "iceberg", "a column left out");
}
