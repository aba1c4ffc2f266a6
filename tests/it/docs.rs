//! The docs cannot rot: every spec example in README.md and docs/ passes
//! `chainetl validate`, and every relative link resolves to a file and a
//! heading that exist.

use crate::common::*;
use std::path::{Path, PathBuf};

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
