//! What people read and what scripts read of a job: `status`, `plan` and
//! the report page show instants to the second while their JSON keeps
//! them whole, and a run that found nothing to do is a line on the page,
//! not an empty chart.

use crate::common::*;
use std::path::Path;

fn spec(dir: &Path, url: &str) -> String {
    write_spec(
        dir,
        "v.toml",
        &format!(
            "name = \"v\"\n[source]\nbase_url = \"{url}\"\n[output]\nuri = \"{}\"\n\
             [[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"100..2099\"\nchunk_blocks = 500\n",
            dir.join("out").display()
        ),
    )
}

/// The first instant in `text` written with a fraction of a second
/// (`13:01:28.611`), if any.
fn fractional_instant(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    let digits = |at: usize| b[at].is_ascii_digit() && b[at + 1].is_ascii_digit();
    (0..b.len().saturating_sub(9))
        .find(|&i| {
            digits(i)
                && b[i + 2] == b':'
                && digits(i + 3)
                && b[i + 5] == b':'
                && digits(i + 6)
                && b[i + 8] == b'.'
                && b[i + 9].is_ascii_digit()
        })
        .map(|i| &text[i..(i + 16).min(text.len())])
}

/// The page without the document it embeds (which keeps instants whole).
fn page_text(page: &Path) -> String {
    let html = std::fs::read_to_string(page).unwrap();
    let cut = html
        .find(r#"<script type="application/json""#)
        .expect("the page embeds its document");
    html[..cut].to_string()
}

fn stdout_of(args: &[&str]) -> String {
    let o = chainetl(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn human_text_gives_instants_to_the_second_and_json_keeps_them_whole() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), &sim.url());
    stdout_of(&["run", &spec, "-q"]);
    let status = stdout_of(&["status", &spec]);
    let line = status
        .lines()
        .find(|l| l.starts_with("e0 blocks base"))
        .expect("a line for the export");
    let last_commit = line.split_whitespace().last().unwrap();
    assert_eq!(last_commit.len(), "2026-11-26T13:01:28Z".len(), "{status}");
    assert!(last_commit.ends_with('Z') && last_commit.contains('T'), "{status}");
    assert_eq!(fractional_instant(&status), None, "{status}");
    let plan = stdout_of(&["plan", &spec]);
    assert!(plan.contains("job started "), "{plan}");
    assert_eq!(fractional_instant(&plan), None, "{plan}");
    let page = dir.path().join("v.html");
    stdout_of(&["report", &spec, "--out", &page.to_string_lossy()]);
    let html = page_text(&page);
    assert!(html.contains(" · read ") && html.contains("<th>started</th>"), "{html}");
    assert_eq!(fractional_instant(&html), None, "{html}");
    // Scripts get the instants whole.
    let doc: serde_json::Value = serde_json::from_str(&stdout_of(&["report", &spec, "--format", "json"])).unwrap();
    for instant in [&doc["generated_at"], &doc["runs"][0]["started_at"], &doc["runs"][0]["finished_at"]] {
        let instant = instant.as_str().unwrap();
        assert!(fractional_instant(instant).is_some(), "{instant}: {doc}");
    }
}

#[test]
fn a_run_that_found_nothing_to_do_is_a_line_on_the_page_not_an_empty_chart() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), &sim.url());
    let latest = dir.path().join("out/_chainetl/v/runs/latest.json");
    stdout_of(&["run", &spec, "-q"]);
    let worked = read_json(&latest);
    stdout_of(&["run", &spec, "-q"]);
    let idle = read_json(&latest);
    assert_eq!(
        (worked["status"].as_str(), idle["status"].as_str()),
        (Some("succeeded"), Some("nothing_to_do"))
    );
    let page = dir.path().join("v.html");
    stdout_of(&["report", &spec, "--out", &page.to_string_lossy()]);
    let html = page_text(&page);
    let (worked, idle) = (worked["run_id"].as_str().unwrap(), idle["run_id"].as_str().unwrap());
    assert_eq!(html.matches("<h3>Run ").count(), 1, "one chart, of the run that worked: {html}");
    assert!(html.contains(&format!("<h3>Run {worked} ")), "{html}");
    let line = html
        .split("<p")
        .map(|p| p.split("</p>").next().unwrap_or_default())
        .find(|p| p.contains(&format!("Run {idle}")))
        .unwrap_or_else(|| panic!("no line for {idle}: {html}"));
    assert!(line.contains("nothing to do") && !line.contains("<svg"), "{line}");
}
