//! `chainetl report`: the page and its JSON after a failed run, a run
//! killed mid-way and a finished one; opened in headless Chromium with no
//! console error and no network request; no secret in it; on S3 too.

use crate::common::*;
use chainetl::spec::SimOptions;
use std::io::Read;
use std::path::Path;

const KEY_VAR: &str = "BDS_REPORT_KEY";

fn spec(dir: &Path, url: &str, uri: &str) -> String {
    spec_in(dir, "r.toml", url, uri)
}

/// The job's spec in file `name`, for the service at `url`.
fn spec_in(dir: &Path, name: &str, url: &str, uri: &str) -> String {
    write_spec(
        dir,
        name,
        &format!(
            "name = \"rp\"\n[source]\nbase_url = \"{url}\"\napi_key_env = \"{KEY_VAR}\"\nmax_retries = 1\n[output]\nuri = \"{uri}\"\n\
             [[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"100..2099\"\nchunk_blocks = 500\n"
        ),
    )
}

/// `report --format json`, asserting it exits 0.
fn overview(spec: &str, key: &str) -> serde_json::Value {
    let o = bin().args(["report", spec, "--format", "json"]).env(KEY_VAR, key).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)))
}

/// The JSON a page carries in its `chainetl-report` element.
fn embedded(page: &str) -> serde_json::Value {
    let open = r#"<script type="application/json" id="chainetl-report">"#;
    let start = page.find(open).expect("the page holds its document") + open.len();
    let end = start + page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..end]).unwrap()
}

/// The Chromium the test setup installed (scripts/need-chromium).
fn chromium() -> String {
    set_up("chromium");
    if let Ok(c) = std::env::var("CHROMIUM") {
        return c;
    }
    for c in ["chromium", "chromium-browser"] {
        if std::process::Command::new("which")
            .arg(c)
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return c.into();
        }
    }
    panic!("no chromium: `make test` installs it (scripts/need-chromium), or set CHROMIUM");
}

/// Hosts Chromium itself calls (time, updates, accounts), not the page.
const BROWSER_HOSTS: [&str; 3] = ["google.com", "googleapis.com", "gstatic.com"];

/// Opens `page` in headless Chromium with every connection sent to a
/// proxy that records them; returns the DOM it rendered, the console
/// messages it logged, and the requests the page made (the browser's own
/// calls home left out).
fn open_in_chromium(page: &Path) -> (String, String, Vec<String>) {
    let proxy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = proxy.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    // Each connection: its request line recorded, then refused (502), so
    // the page loads on without it.
    let log = seen.clone();
    std::thread::spawn(move || {
        for s in proxy.incoming() {
            let Ok(mut s) = s else { break };
            s.set_read_timeout(Some(std::time::Duration::from_secs(2))).ok();
            let mut head = [0u8; 512];
            let n = s.read(&mut head).unwrap_or(0);
            let line = String::from_utf8_lossy(&head[..n]).lines().next().unwrap_or_default().to_string();
            log.lock().unwrap().push(line);
            let _ = std::io::Write::write_all(
                &mut s,
                b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    let profile = tempfile::tempdir().unwrap();
    let child = std::process::Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-pings",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-domain-reliability",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            &format!("--user-data-dir={}", profile.path().display()),
            &format!("--proxy-server=http://127.0.0.1:{port}"),
            "--proxy-bypass-list=<-loopback>",
            "--dump-dom",
            &format!("file://{}", page.display()),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Never hang the suite on a browser that does not exit; its output is
    // read meanwhile (a pipe left full would stop it).
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Ok(o) = rx.recv_timeout(std::time::Duration::from_secs(90)) else {
        let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
        panic!("chromium did not finish in 90 s");
    };
    let o = o.unwrap();
    assert!(o.status.success(), "chromium: {}", text(&o));
    let fetched = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|request| {
            let target = request.split_whitespace().nth(1).unwrap_or_default();
            let host = target.trim_start_matches("http://").split(['/', ':']).next().unwrap_or_default();
            !BROWSER_HOSTS.iter().any(|b| host == *b || host.ends_with(&format!(".{b}")))
        })
        .cloned()
        .collect();
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        fetched,
    )
}

#[test]
fn a_failed_a_killed_and_a_finished_run_each_show_on_the_page() {
    let sim = Sim::start(SimOptions {
        api_key: Some("the-right-key".into()),
        ..frozen()
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let spec = spec(dir.path(), &sim.url(), &out.to_string_lossy());
    // Before any run: not started, and a page all the same.
    assert_eq!(overview(&spec, "x")["state"], "not_started");
    // A refused key: the run stops at the first 401, every unit is left
    // not started (none failed), and the report says so once.
    let secret = "sk-live-REPORT-NEVER-SHOWN-77";
    let o = bin().args(["run", &spec, "-q"]).env(KEY_VAR, secret).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let doc = overview(&spec, secret);
    assert_eq!(doc["counts"]["not_started"], 5, "{doc}");
    assert!(doc["failures"].as_array().unwrap().is_empty(), "{doc}");
    assert_eq!(doc["refused"][0]["variable"], KEY_VAR, "{doc}");
    let page = dir.path().join("refused.html");
    let o = bin()
        .args(["report", &spec, "--out", &page.to_string_lossy()])
        .env(KEY_VAR, secret)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains(secret) && !doc.to_string().contains(secret),
        "no secret in the report"
    );
    assert!(html.contains("refused the API key"), "the page says the key was refused");
    assert!(!html.contains("Failed units"), "and lists no failed unit");
    // Every unit fails: the service answers 5xx to each request.
    let failing = Sim::start(SimOptions {
        api_key: Some("the-right-key".into()),
        error_rate: 1.0,
        ..frozen()
    });
    let failing_spec = spec_in(dir.path(), "failing.toml", &failing.url(), &out.to_string_lossy());
    let o = bin()
        .args(["run", &failing_spec, "-q"])
        .env(KEY_VAR, "the-right-key")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let doc = overview(&spec, secret);
    assert_eq!(doc["counts"]["failed"], 5, "{doc}");
    let failures = doc["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 5, "{doc}");
    assert!(failures[0]["error"].as_str().unwrap().contains("HTTP 5"), "{doc}");
    assert_eq!(doc["runs"].as_array().unwrap().len(), 2);
    assert_eq!(doc["next_run"]["units"], 5);
    let page = dir.path().join("failed.html");
    let o = bin()
        .args(["report", &spec, "--out", &page.to_string_lossy()])
        .env(KEY_VAR, secret)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains(secret) && !doc.to_string().contains(secret),
        "no secret in the report"
    );
    assert!(
        html.contains("Failed units") && html.contains("failed"),
        "the page names the failures"
    );
    // Killed part way: units begun and not done.
    let o = crash_bin("during-checkpoint:3")
        .args(["run", &spec, "-q"])
        .env(KEY_VAR, "the-right-key")
        .output()
        .unwrap();
    assert!(!o.status.success(), "the run should have died\n{}", text(&o));
    let doc = overview(&spec, "the-right-key");
    assert_eq!(doc["state"], "in_progress", "{doc}");
    let cells = doc["coverage"][0]["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 5);
    assert!(
        cells.iter().any(|c| c["state"] == "in_progress" || c["state"] == "committed"),
        "work of the killed run shows: {doc}"
    );
    // Finished.
    let o = bin().args(["run", &spec, "-q"]).env(KEY_VAR, "the-right-key").output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let doc = overview(&spec, "the-right-key");
    assert_eq!(doc["state"], "complete", "{doc}");
    let done = doc["counts"]["committed"].as_u64().unwrap_or(0) + doc["counts"]["compacted"].as_u64().unwrap_or(0);
    assert_eq!(done, 5, "{doc}");
    assert!(doc["failures"].as_array().unwrap().is_empty(), "a unit done is no failure: {doc}");
    assert_eq!(doc["next_run"]["units"], 0);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3, "the killed run wrote no report: {doc}");
    let this_run = runs[2]["rows"].as_u64().unwrap();
    assert!(
        this_run > 0 && this_run < 2000,
        "the rows the last run committed, after the killed one's: {doc}"
    );
    assert_eq!(doc["tables"][0]["rows"], 2000, "{doc}");
    assert_eq!(doc["rows"], 2000);
    // The page holds the document it is drawn from, and opens cleanly.
    let page = dir.path().join("done.html");
    let o = bin()
        .args(["report", &spec, "--out", &page.to_string_lossy()])
        .env(KEY_VAR, "the-right-key")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("done.html"), "the path is said: {}", text(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    let mut held = embedded(&html);
    let mut fresh = doc.clone();
    held["generated_at"] = serde_json::Value::Null;
    fresh["generated_at"] = serde_json::Value::Null;
    assert_eq!(held, fresh, "the page is drawn from what --format json prints");
    // The trap catches a page that fetches something.
    let control = dir.path().join("control.html");
    std::fs::write(&control, "<!doctype html><img src=\"http://example.invalid/pixel.png\">").unwrap();
    let (_, _, fetched) = open_in_chromium(&control);
    assert!(!fetched.is_empty(), "the proxy sees a page's request");
    let (dom, log, fetched) = open_in_chromium(&page);
    assert!(fetched.is_empty(), "the page fetched {fetched:?}");
    assert!(dom.contains("Coverage") && dom.contains("rp"), "rendered: {dom}");
    for line in log.lines() {
        assert!(
            !(line.contains("CONSOLE") || line.contains("Failed to load") || line.contains("Uncaught")),
            "a console message: {line}\n{log}"
        );
    }
}

#[test]
fn a_job_on_s3_reports_with_no_request() {
    let s3 = crate::s3::S3::start("bkt-report");
    let dir = tempfile::tempdir().unwrap();
    let uri = format!("s3://{}/lake", s3.bucket);
    let spec = spec(dir.path(), &s3.sim.url(), &uri);
    let o = s3.cmd(&["run", &spec, "-q"]).env(KEY_VAR, "k").output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let o = s3.cmd(&["report", &spec, "--format", "json"]).env(KEY_VAR, "k").output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["state"], "complete", "{doc}");
    assert_eq!(doc["rows"], 2000, "{doc}");
    assert!(doc["tables"][0]["files"].as_u64() > Some(0), "{doc}");
}

#[test]
fn a_run_keeps_its_figures_over_time_and_the_page_charts_them_beside_the_pace() {
    let mut opts = frozen();
    opts.latency_ms = 40;
    let sim = Sim::start(opts);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let spec = write_spec(
        dir.path(),
        "ts.toml",
        &format!(
            "name = \"ts\"\n[source]\nbase_url = \"{}\"\nrequests_per_second = 60\npage_size = 100\nmax_concurrency = 4\n\
             [output]\nuri = \"{}\"\nformat = \"delta\"\n\
             [[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"100..20099\"\nchunk_blocks = 5000\n",
            sim.url(),
            out.display()
        ),
    );
    let metrics = dir.path().join("m.prom");
    let o = bin()
        .args(["run", &spec, "-q", "--metrics-file", &metrics.to_string_lossy()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    // The run report: one sample a second at first, cumulative counters
    // ending at the run's totals, the pace the limiter held.
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("_chainetl/ts/runs/latest.json")).unwrap()).unwrap();
    let s = &report["series"];
    let t = s["t"].as_array().unwrap();
    assert!(t.len() >= 3, "a run of {}s: {s}", report["elapsed_secs"]);
    assert_eq!(s["every_secs"], 1.0, "{s}");
    for k in ["rows", "requests", "retries", "throttled", "server_errors", "units_done", "pace"] {
        assert_eq!(s[k].as_array().map(Vec::len), Some(t.len()), "{k}: {s}");
    }
    let last = |k: &str| s[k].as_array().unwrap().last().unwrap().as_u64().unwrap();
    assert_eq!(last("rows"), 20_000, "{s}");
    assert_eq!(last("requests"), report["requests"].as_u64().unwrap(), "{s}");
    assert_eq!(last("units_done"), 5, "{s}");
    let rows: Vec<u64> = s["rows"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert!(rows.windows(2).all(|w| w[0] <= w[1]), "cumulative: {s}");
    assert!(
        s["pace"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p.as_f64().is_some_and(|p| p > 0.0 && p <= 60.0)),
        "the pace, never above the bound: {s}"
    );
    // The metrics say the pace and the failed units too.
    let m = std::fs::read_to_string(&metrics).unwrap();
    assert!(m.contains("chainetl_pace_requests_per_second{pipeline=\"ts\"}"), "{m}");
    assert!(m.contains("chainetl_units_failed{"), "{m}");
    // The page: the series in its document, a chart of it, the table's commits.
    let doc = overview(&spec, "");
    let run = &doc["runs"][0];
    assert_eq!(run["series"], *s, "{doc}");
    let commits = doc["tables"][0]["last_commits"].as_array().unwrap();
    assert_eq!(doc["tables"][0]["delta_version"], commits[0]["version"], "{doc}");
    assert!(!commits.is_empty() && commits.len() <= 5, "{doc}");
    assert!(
        commits.windows(2).all(|w| w[0]["version"].as_u64() > w[1]["version"].as_u64()),
        "newest first: {doc}"
    );
    assert!(
        commits
            .iter()
            .any(|c| c["operation"] == "WRITE" && c["adds"].as_u64() > Some(0) && c["data_change"] == true),
        "{doc}"
    );
    let page = dir.path().join("ts.html");
    let o = bin().args(["report", &spec, "--out", &page.to_string_lossy()]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<polyline").count(), 3, "rows/s, requests/s and the pace");
    assert!(html.contains("pace (requests/s)") && html.contains("the last commits"), "{html}");
}

#[test]
fn an_incremental_export_shows_its_mark_and_confirmations() {
    let sim = Sim::start(frozen());
    let data = chainetl::sim::data::SimData::new(42, 30);
    let t0 = chainetl::vocab::window::parse_instant("2025-06-01T00:00:00Z").unwrap();
    let head = data.head(chainetl::vocab::chain::Chain::Base, t0 * 1000);
    let dir = tempfile::tempdir().unwrap();
    let spec = write_spec(
        dir.path(),
        "inc.toml",
        &format!(
            "name = \"inc\"\n[source]\nbase_url = \"{}\"\n[output]\nuri = \"{}\"\n\
             [[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nincremental = true\nstart = {}\nconfirmations = {{ base = 20 }}\nchunk_blocks = 64\n",
            sim.url(),
            dir.path().join("out").display(),
            head - 100
        ),
    );
    let o = bin().args(["run", &spec, "-q"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let doc = overview(&spec, "");
    let m = &doc["marks"][0];
    assert_eq!(m["next"], head - 20 + 1, "{doc}");
    assert_eq!(m["confirmations"], 20, "{doc}");
    assert_eq!((m["reorgs"].as_u64(), m["repairing"].as_bool()), (Some(0), Some(false)), "{doc}");
    let page = dir.path().join("inc.html");
    let o = bin().args(["report", &spec, "--out", &page.to_string_lossy()]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(&format!("<td>{}</td><td class=\"n\">20</td>", head - 20 + 1)),
        "{html}"
    );
}
