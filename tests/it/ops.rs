//! Machine-readable operation: JSON lines on stderr, the run report's
//! status and `latest.json`, Prometheus metrics in a file and over HTTP.

use crate::common::*;
use chainetl::spec::SimOptions;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A blocks job on `url`; `source` and `export` add keys to those tables.
fn spec(dir: &Path, name: &str, url: &str, source: &str, export: &str) -> String {
    write_spec(
        dir,
        &format!("{name}.toml"),
        &format!(
            "name = \"{name}\"\n[source]\nbase_url = \"{url}\"\n{source}\n\n[output]\nuri = \"{}\"\n\
             [[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\n{export}\n",
            dir.join("out").display()
        ),
    )
}

/// Every stderr line as JSON (the test fails on the first that is not).
fn json_lines(stderr: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stderr)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l:?}")))
        .collect()
}

fn events(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| l["fields"]["event"].as_str().map(String::from))
        .collect()
}

fn terminate(child: Child, after: Duration) -> std::process::Output {
    std::thread::sleep(after);
    let st = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    child.wait_with_output().unwrap()
}

fn report(out: &Path, job: &str, file: &str) -> Value {
    read_json(&out.join(format!("_chainetl/{job}/runs/{file}")))
}

#[test]
fn json_logs_parse_line_by_line_through_failed_units_signals_and_spec_errors() {
    let secret = "sk-wrong-key-NEVER-SHOWN";
    let sim = Sim::start(SimOptions {
        api_key: Some("the-right-key".into()),
        latency_ms: 20,
        ..frozen()
    });
    let dir = tempfile::tempdir().unwrap();
    let s = spec(
        dir.path(),
        "jl",
        &sim.url(),
        "api_key_env = \"OPS_KEY\"",
        "window = \"100..2099\"\nchunk_blocks = 500",
    );
    // The key is refused: one JSON line says so, naming the variable.
    let o = bin()
        .args(["run", &s, "--log-format", "json", "-v", "--summary", "json"])
        .env("OPS_KEY", secret)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["status"], "failed", "{summary}");
    assert_eq!(summary["refused"][0]["variable"], "OPS_KEY", "{summary}");
    let lines = json_lines(&o.stderr);
    assert!(!String::from_utf8_lossy(&o.stderr).contains(secret), "the key leaked");
    let ev = events(&lines);
    assert!(ev.contains(&"plan".into()), "{ev:?}");
    let refused: Vec<&Value> = lines.iter().filter(|l| l["fields"]["event"] == "refused").collect();
    assert_eq!(refused.len(), 1, "{ev:?}");
    assert_eq!(
        (refused[0]["level"].as_str(), refused[0]["fields"]["refused"]["status"].as_u64()),
        (Some("ERROR"), Some(401))
    );
    assert!(!ev.contains(&"failed_units".into()), "no unit failed: {ev:?}");

    // Units fail (the service answers 5xx): the failed-unit list is one JSON line.
    let failing = Sim::start(SimOptions {
        error_rate: 1.0,
        ..frozen()
    });
    let failing_dir = tempfile::tempdir().unwrap();
    let f = spec(
        failing_dir.path(),
        "jf",
        &failing.url(),
        "max_retries = 1",
        "window = \"100..2099\"\nchunk_blocks = 500",
    );
    let o = bin()
        .args(["run", &f, "--log-format", "json", "-v", "--summary", "json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["status"], "failed", "{summary}");
    let lines = json_lines(&o.stderr);
    let failed = lines
        .iter()
        .find(|l| l["fields"]["event"] == "failed_units")
        .expect("a failed_units line");
    let n = failed["fields"]["units"].as_array().unwrap().len();
    assert!(n > 0 && failed["fields"]["count"] == n, "{failed}");
    assert_eq!(failed["fields"]["units"][0]["chain"], "base");
    assert_eq!(failed["level"], "ERROR");

    // SIGTERM mid-run: progress, the signal and the interruption are JSON too.
    let o = terminate(
        bin()
            .args([
                "run",
                &s,
                "--log-format",
                "json",
                "--progress-secs",
                "1",
                "--set",
                "source.page_size=10",
                "--set",
                "source.max_concurrency=1",
            ])
            .env("OPS_KEY", "the-right-key")
            .env_remove("RUST_LOG")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        Duration::from_millis(1800),
    );
    assert_eq!(o.status.code(), Some(143), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = json_lines(&o.stderr);
    let ev = events(&lines);
    for want in ["plan", "progress", "signal", "interrupted"] {
        assert!(ev.contains(&want.into()), "no {want} line in {ev:?}");
    }
    let p = lines.iter().find(|l| l["fields"]["event"] == "progress").unwrap();
    assert!(
        p["fields"]["units_total"].as_u64().unwrap() > 0 && p["fields"]["requests"].is_u64(),
        "{p}"
    );

    // Spec errors: one line each, with file, line, column and key.
    let bad = write_spec(
        dir.path(),
        "bad.toml",
        "name = \"x\"\n[source]\nbase_url = \"sim\"\npage_size = \"8\"\n",
    );
    let o = chainetl(&["validate", &bad, "--log-format", "json"]);
    assert_eq!(o.status.code(), Some(2));
    let lines = json_lines(&o.stderr);
    let e = lines
        .iter()
        .find(|l| l["fields"]["key"] == "source.page_size")
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert_eq!((e["fields"]["line"].as_u64(), e["fields"]["column"].as_u64()), (Some(4), Some(13)));
    assert!(e["fields"]["file"].as_str().unwrap().ends_with("bad.toml"));
    assert_eq!(e["fields"]["event"], "spec_error");
}

#[test]
fn the_report_says_how_each_run_ended_and_latest_json_is_the_last_finished_one() {
    let sim = Sim::start(SimOptions {
        latency_ms: 20,
        ..frozen()
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = spec(dir.path(), "st", &sim.url(), "", "window = \"100..2099\"\nchunk_blocks = 500");
    let summary = |args: &[&str]| -> (Option<i32>, Value) {
        let o = chainetl(&[&["run", &s, "--summary", "json", "-q"], args].concat());
        (o.status.code(), serde_json::from_slice(&o.stdout).unwrap_or(Value::Null))
    };
    let (code, first) = summary(&[]);
    assert_eq!((code, first["status"].as_str()), (Some(0), Some("succeeded")), "{first}");
    assert_eq!(first["version"], 2);
    let t = &first["tallies"][0];
    assert_eq!(
        (t["export"].as_u64(), t["dataset"].as_str(), t["chain"].as_str()),
        (Some(0), Some("blocks"), Some("base"))
    );
    assert_eq!(t["rows"], 2000);
    assert_eq!(first["exports"]["e0 blocks base"]["rows"], 2000, "the old key stays");
    // The summary on stdout is the report, and latest.json is it too.
    let run_id = first["run_id"].as_str().unwrap();
    assert_eq!(report(&out, "st", &format!("{run_id}.json"))["status"], "succeeded");
    assert_eq!(report(&out, "st", "latest.json")["run_id"], run_id);

    let (code, again) = summary(&[]);
    assert_eq!((code, again["status"].as_str()), (Some(0), Some("nothing_to_do")), "{again}");
    let before = again["run_id"].as_str().unwrap().to_string();

    // The job grows by an export; a run of it killed with -9 writes no
    // report: latest.json stays the last finished run's.
    let grown = std::fs::read_to_string(&s).unwrap()
        + "[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"5000..9999\"\nchunk_blocks = 500\n";
    let g = write_spec(dir.path(), "grown.toml", &grown);
    let slow = ["--set", "source.page_size=10", "--set", "source.max_concurrency=1"];
    let mut child = bin()
        .args([&["run", g.as_str(), "-q"][..], &slow].concat())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(child.try_wait().unwrap().is_none(), "the run ended before the kill");
    child.kill().unwrap();
    child.wait().unwrap();
    let latest = report(&out, "st", "latest.json");
    assert_eq!(
        (latest["run_id"].as_str(), latest["status"].as_str()),
        (Some(before.as_str()), Some("nothing_to_do"))
    );

    // Interrupted by SIGTERM, then finished.
    let child = bin()
        .args([&["run", g.as_str(), "-q", "--summary", "json"][..], &slow].concat())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let o = terminate(child, Duration::from_millis(1000));
    assert_eq!(o.status.code(), Some(143));
    let stopped: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(stopped["status"], "interrupted");
    assert_eq!(report(&out, "st", "latest.json")["run_id"], stopped["run_id"]);
    let o = chainetl(&["run", &g, "--summary", "json", "-q"]);
    let done: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((o.status.code(), done["status"].as_str()), (Some(0), Some("succeeded")), "{done}");
    assert_eq!(report(&out, "st", "latest.json")["run_id"], done["run_id"]);
}

/// Metric families as Python's `prometheus_client` text parser reads them:
/// name → samples `[sample name, labels, value]`.
fn parse_prometheus(text: &str) -> serde_json::Map<String, Value> {
    let script = "import json, sys\nfrom prometheus_client.parser import text_string_to_metric_families\n\
                  out = {f.name: [[s.name, s.labels, s.value] for s in f.samples] for f in text_string_to_metric_families(sys.stdin.read())}\n\
                  print(json.dumps(out))";
    let mut child = std::process::Command::new(python())
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python with prometheus_client (run `make test`, which installs it)");
    use std::io::Write;
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "the Prometheus parser refused it: {}\n{text}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice::<Value>(&o.stdout).unwrap().as_object().unwrap().clone()
}

/// The value of `family`'s sample `name` whose labels include `labels`.
fn sample(fams: &serde_json::Map<String, Value>, family: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    fams.get(family)?.as_array()?.iter().find_map(|s| {
        let ok = s[0] == name && labels.iter().all(|(k, v)| s[1][*k] == *v);
        ok.then(|| s[2].as_f64()).flatten()
    })
}

#[test]
fn the_metrics_file_parses_as_prometheus_text_and_its_counters_equal_the_summary() {
    let sim = Sim::start(SimOptions {
        error_rate: 0.15,
        quota_rps: 150.0,
        ..frozen()
    });
    let dir = tempfile::tempdir().unwrap();
    let s = spec(dir.path(), "mf", &sim.url(), "", "window = \"100..3099\"\nchunk_blocks = 250");
    let prom = dir.path().join("textfile/chainetl-mf.prom");
    std::fs::create_dir_all(prom.parent().unwrap()).unwrap();
    let o = chainetl(&["run", &s, "--summary", "json", "-q", "--metrics-file", prom.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    let fams = parse_prometheus(&std::fs::read_to_string(&prom).unwrap());
    let t = &summary["tallies"][0];
    assert!(t["retries"].as_u64().unwrap() > 0, "the test needs retries to compare: {t}");
    let labels = [("pipeline", "mf"), ("export", "0"), ("dataset", "blocks"), ("chain", "base")];
    for (family, field) in [
        ("chainetl_rows", "rows"),
        ("chainetl_files", "files"),
        ("chainetl_bytes", "bytes"),
        ("chainetl_requests", "requests"),
        ("chainetl_retries", "retries"),
        ("chainetl_throttled", "throttled"),
        ("chainetl_server_errors", "server_errors"),
    ] {
        let got = sample(&fams, family, &format!("{family}_total"), &labels);
        assert_eq!(got, t[field].as_f64(), "{family}_total against the summary's {field}");
    }
    for f in ["chainetl_units", "chainetl_units_done"] {
        assert_eq!(sample(&fams, f, f, &labels), t[&f["chainetl_".len()..]].as_f64(), "{f}");
    }
    let status = |s: &str| sample(&fams, "chainetl_run_status", "chainetl_run_status", &[("status", s)]);
    assert_eq!((status("succeeded"), status("running")), (Some(1.0), Some(0.0)));
    assert!(
        sample(
            &fams,
            "chainetl_last_commit_timestamp_seconds",
            "chainetl_last_commit_timestamp_seconds",
            &labels
        )
        .is_some()
    );
    // Written through a temporary name that is gone.
    let names: Vec<_> = std::fs::read_dir(prom.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("chainetl-mf.prom")]);
}

/// GET `path` on 127.0.0.1:`port`; the body, or None when nothing answers.
fn http_get(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    c.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(c, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut resp = String::new();
    c.read_to_string(&mut resp).ok()?;
    let (head, body) = resp.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.0 200")
        .then(|| body.to_string())
        .or_else(|| head.starts_with("HTTP/1.1 200").then(|| body.to_string()))
}

/// Every metric docs/grafana-dashboard.json queries is one of `exported`'s
/// samples (a following run's, which has every kind but the conversion's).
fn dashboard_queries_only_exported_metrics(exported: &serde_json::Map<String, Value>) {
    let names: std::collections::HashSet<&str> = exported
        .values()
        .flat_map(|f| f.as_array().into_iter().flatten())
        .filter_map(|s| s[0].as_str())
        .collect();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/grafana-dashboard.json");
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut queries: Vec<String> = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap().iter())
        .map(|t| t["expr"].as_str().unwrap().to_string())
        .collect();
    queries.extend(
        dashboard["templating"]["list"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v["definition"].as_str().map(String::from)),
    );
    let mut queried = std::collections::BTreeSet::new();
    for q in &queries {
        let mut rest = q.as_str();
        while let Some(at) = rest.find("chainetl_") {
            let name: String = rest[at..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
            rest = &rest[at + name.len()..];
            queried.insert(name);
        }
    }
    assert!(queried.len() >= 10, "the dashboard's queries: {queried:?}");
    let missing: Vec<&String> = queried.iter().filter(|n| !names.contains(n.as_str())).collect();
    assert!(
        missing.is_empty(),
        "the dashboard queries {missing:?}, which the binary does not export: {names:?}"
    );
}

#[test]
fn metrics_endpoint_answers_while_following_and_its_lag_moves_with_the_head() {
    let sim = Sim::start(frozen());
    let data = chainetl::sim::data::SimData::new(42, 30);
    let t0 = chainetl::vocab::window::parse_instant("2025-06-01T00:00:00Z").unwrap();
    let head = data.head(chainetl::vocab::chain::Chain::Base, t0 * 1000);
    let dir = tempfile::tempdir().unwrap();
    let s = spec(
        dir.path(),
        "fol",
        &sim.url(),
        "requests_per_second = 200",
        &format!(
            "incremental = true\nstart = {}\nconfirmations = {{ base = 20 }}\nchunk_blocks = 64\npoll_interval = \"1s\"\nroll_interval = \"1h\"",
            head - 100
        ),
    );
    let port = free_port();
    let child = bin()
        .args([
            "run",
            &s,
            "--follow",
            "--progress-secs",
            "0",
            "--metrics-addr",
            &format!("127.0.0.1:{port}"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let labels = [("export", "0"), ("dataset", "blocks"), ("chain", "base")];
    let wait = |what: &str, ok: &dyn Fn(&serde_json::Map<String, Value>) -> bool| {
        let t = Instant::now();
        loop {
            if let Some(body) = http_get(port, "/metrics") {
                let fams = parse_prometheus(&body);
                if ok(&fams) {
                    return fams;
                }
            }
            assert!(t.elapsed() < Duration::from_secs(30), "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let g = |f: &serde_json::Map<String, Value>, name: &str| sample(f, name, name, &labels);
    // Caught up: the mark is past the confirmed head and nothing lags.
    let caught = wait("the catch-up", &|f| g(f, "chainetl_lag_blocks") == Some(0.0));
    assert_eq!(g(&caught, "chainetl_mark"), Some((head - 20 + 1) as f64));
    assert_eq!(g(&caught, "chainetl_lag_seconds"), Some(0.0));
    let running = sample(&caught, "chainetl_run_status", "chainetl_run_status", &[("status", "running")]);
    assert_eq!(running, Some(1.0));
    let pace = sample(
        &caught,
        "chainetl_pace_requests_per_second",
        "chainetl_pace_requests_per_second",
        &[],
    );
    assert!(pace.is_some_and(|p| p > 0.0 && p <= 200.0), "the pace, within the bound: {pace:?}");
    dashboard_queries_only_exported_metrics(&caught);
    // The head moves a minute (30 base blocks); no segment is cut for an
    // hour, so the lag shows it at the next poll.
    let url = format!("{}/_sim/advance?secs=60", sim.url());
    sim.rt
        .block_on(async { http_client().post(url).send().await.unwrap().error_for_status().unwrap() });
    let behind = wait("the lag to grow", &|f| g(f, "chainetl_lag_blocks").is_some_and(|b| b > 0.0));
    assert_eq!(g(&behind, "chainetl_lag_blocks"), Some(30.0));
    assert_eq!(g(&behind, "chainetl_lag_seconds"), Some(60.0));
    assert_eq!(g(&behind, "chainetl_confirmed_head_block"), Some((head + 30 - 20) as f64));
    let o = terminate(child, Duration::ZERO);
    assert_eq!(o.status.code(), Some(143), "{}", String::from_utf8_lossy(&o.stderr));
}
