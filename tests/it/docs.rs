//! The docs cannot rot: every spec example in README.md and docs/ passes
//! `chainetl validate`, every relative link resolves to a file and a
//! heading that exist, and docs/quickstart.md runs as written.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    out.extend(docs);
    out
}

/// The ```toml blocks of a page.
fn toml_blocks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut block: Option<String> = None;
    for line in text.lines() {
        match (&mut block, line.trim_start().starts_with("```")) {
            (None, true) if line.trim_start() == "```toml" => block = Some(String::new()),
            (Some(b), true) => {
                out.push(std::mem::take(b));
                block = None;
            }
            (Some(b), false) => {
                b.push_str(line);
                b.push('\n');
            }
            (None, _) => {}
        }
    }
    out
}

/// GitHub's anchor of a heading.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == ' ' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn every_spec_example_in_the_docs_validates() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for page in pages() {
        let page_text = std::fs::read_to_string(&page).unwrap();
        for (i, block) in toml_blocks(&page_text).into_iter().enumerate() {
            // A fragment (an `[[export]]` or two) is checked inside a job.
            let spec = if block.lines().any(|l| l.starts_with("name = ")) {
                block.clone()
            } else {
                format!("name = \"docs\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"out\"\n{block}")
            };
            let path = dir.path().join(format!("example-{checked}.toml"));
            std::fs::write(&path, &spec).unwrap();
            let o = bin()
                .args(["validate", path.to_str().unwrap()])
                .env("BDS_API_KEY", "example-key")
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(o.status.success(), "{}, toml block {i}:\n{spec}\n{}", page.display(), text(&o));
            checked += 1;
        }
    }
    assert!(checked >= 4, "only {checked} examples found");
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = &rest[..end];
            if target.starts_with("http") || target.contains(' ') {
                continue;
            }
            let (file, frag) = target.split_once('#').unwrap_or((target, ""));
            let linked = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            assert!(linked.exists(), "{}: a link to {target}: no such file", page.display());
            if !frag.is_empty() {
                let body = std::fs::read_to_string(&linked).unwrap();
                let found = body
                    .lines()
                    .filter_map(|l| l.strip_prefix('#').map(|h| h.trim_start_matches('#')))
                    .any(|h| anchor(h) == frag);
                assert!(found, "{}: a link to {target}: no such heading", page.display());
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} links found");
}

/// A fenced block of a page: its language, the file it is saved as (a
/// `<!-- file: NAME -->` line right above the fence), its first line's
/// number and its text.
struct Block {
    lang: String,
    file: Option<String>,
    line: usize,
    body: String,
    /// The `## ` heading it stands under.
    section: String,
}

fn fenced_blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    let (mut prev, mut section) = ("", String::new());
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(lang)) => {
                let file = prev
                    .trim()
                    .strip_prefix("<!-- file:")
                    .and_then(|r| r.strip_suffix("-->"))
                    .map(|f| f.trim().to_string());
                open = Some(Block {
                    lang: lang.trim().to_string(),
                    file,
                    line: i + 1,
                    body: String::new(),
                    section: section.clone(),
                });
            }
            (Some(_), Some(_)) => out.push(open.take().unwrap()),
            (Some(b), None) => {
                b.body.push_str(line);
                b.body.push('\n');
            }
            (None, None) => {
                if let Some(h) = line.strip_prefix("## ") {
                    section = h.trim().to_string();
                }
            }
        }
        prev = line;
    }
    assert!(open.is_none(), "a fence left open");
    out
}

/// `label rows: N columns: C` and `report rows: N` lines of a block's output.
fn counts(stdout: &str, label: &str) -> Vec<(u64, Option<u64>)> {
    let prefix = format!("{label} rows: ");
    stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix(prefix.as_str()))
        .map(|rest| {
            let mut words = rest.split_whitespace();
            let rows = words.next().unwrap().parse().unwrap();
            let cols = (words.next() == Some("columns:")).then(|| words.next().unwrap().parse().unwrap());
            (rows, cols)
        })
        .collect()
}

/// docs/quickstart.md as a newcomer runs it: every block in order in one
/// empty directory, the built `chainetl` and the test Python (with
/// duckdb, polars, deltalake, pyiceberg) first on `PATH`. A file block is
/// written; an `sh` block runs under `bash -euo pipefail` and must exit 0;
/// a `text` block after it is output it must print, line for line. In
/// each format's section, DuckDB and Polars read the same rows and
/// columns (more than none) at every read, the change leaves one column
/// fewer and the same rows, and `report` counts those rows.
#[test]
fn the_quickstart_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/quickstart.md")).unwrap();
    let work = tempfile::tempdir().unwrap();
    // `chainetl` by that name, whatever binary the tests run.
    let bin_dir = tempfile::tempdir().unwrap();
    let exe = bin().get_program().to_owned();
    std::os::unix::fs::symlink(std::fs::canonicalize(&exe).unwrap(), bin_dir.path().join("chainetl")).unwrap();
    let mut path = vec![bin_dir.path().to_path_buf()];
    if let Some(py_dir) = Path::new(&python()).parent().filter(|d| !d.as_os_str().is_empty()) {
        path.push(py_dir.to_path_buf());
    }
    path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    let path = std::env::join_paths(path).unwrap();

    let started = std::time::Instant::now();
    let (mut last_stdout, mut last_sh): (Option<String>, usize) = (None, 0);
    // Per section: the reads' (rows, columns) and the report's rows.
    let mut reads: std::collections::BTreeMap<String, Vec<(u64, u64)>> = Default::default();
    let mut reports: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
    let (mut files, mut commands, mut outputs) = (0, 0, 0);
    for b in fenced_blocks(&page) {
        let at = format!("docs/quickstart.md:{} ({})", b.line, b.section);
        match (b.lang.as_str(), &b.file) {
            (_, Some(name)) => {
                std::fs::write(work.path().join(name), &b.body).unwrap();
                files += 1;
                last_stdout = None;
            }
            ("sh", None) => {
                let o = Command::new("bash")
                    .args(["-euo", "pipefail", "-c", &b.body])
                    .current_dir(work.path())
                    .env("PATH", &path)
                    .env_remove("RUST_LOG")
                    .output()
                    .unwrap();
                assert!(
                    o.status.success(),
                    "{at}: the block failed ({}):\n{}\n{}",
                    o.status,
                    b.body,
                    text(&o)
                );
                let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
                let duck = counts(&stdout, "duckdb");
                let polars = counts(&stdout, "polars");
                assert_eq!(
                    duck.len(),
                    polars.len(),
                    "{at}: DuckDB and Polars read a different number of times:\n{stdout}"
                );
                for (d, p) in duck.iter().zip(&polars) {
                    assert_eq!(d, p, "{at}: DuckDB and Polars disagree:\n{stdout}");
                    assert!(d.0 > 0, "{at}: no rows read:\n{stdout}");
                    reads
                        .entry(b.section.clone())
                        .or_default()
                        .push((d.0, d.1.expect("columns printed")));
                }
                for (rows, _) in counts(&stdout, "report") {
                    reports.entry(b.section.clone()).or_default().push(rows);
                }
                last_stdout = Some(stdout);
                last_sh = b.line;
                commands += 1;
            }
            ("text", None) => {
                let stdout = last_stdout
                    .as_deref()
                    .unwrap_or_else(|| panic!("{at}: an output block that follows no command block"));
                for want in b.body.lines().map(str::trim).filter(|l| !l.is_empty()) {
                    assert!(
                        stdout.lines().any(|l| l.trim() == want),
                        "{at}: the page shows `{want}`; the block at line {last_sh} printed:\n{stdout}"
                    );
                }
                outputs += 1;
            }
            (lang, None) => panic!("{at}: a ```{lang} block the test does not run: give it a file marker, or make it sh or text"),
        }
    }
    for section in ["Parquet", "Delta Lake", "Iceberg"] {
        let r = reads.get(section).unwrap_or_else(|| panic!("{section}: no DuckDB/Polars read"));
        assert!(r.len() >= 2, "{section}: a read before and after the change: {r:?}");
        let (rows, cols) = r[0];
        assert!(r.iter().all(|&(n, _)| n == rows), "{section}: the change changed the rows: {r:?}");
        assert_eq!(
            r.last().unwrap().1 + 1,
            cols,
            "{section}: the change leaves one column fewer: {r:?}"
        );
        assert_eq!(
            reports.get(section).map(Vec::as_slice),
            Some(&[rows][..]),
            "{section}: `report` counts the rows read"
        );
    }
    assert!(
        files >= 6 && commands >= 10 && outputs >= 9,
        "{files} files, {commands} command blocks, {outputs} outputs"
    );
    eprintln!("the quickstart ran in {:.1?}", started.elapsed());
}
