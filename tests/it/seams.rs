//! Exactly-once where jobs, processes and features meet: jobs sharing an
//! output, two runs of one job at once, servers whose cursors never end,
//! specs mixing fixed and aligned exports, a job's identity across spec
//! edits, missing data files and corrupt checkpoints.

use crate::common::*;
use crate::truth;
use chainetl::sim::data::SimData;
use chainetl::vocab::chain::Chain;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const FIRST: u64 = 20_000_000;
const LAST: u64 = 20_000_399;

fn events_spec(dir: &Path, file: &str, name: &str, url: &str, uri: &str, extra: &str) -> String {
    write_spec(
        dir,
        file,
        &format!(
            r#"name = "{name}"
[source]
base_url = "{url}"
page_size = 200
max_concurrency = 4
[output]
uri = "{uri}"
commit_pages = 2
[[export]]
dataset = "events"
chains = ["ethereum"]
window = "{FIRST}..{LAST}"
chunk_blocks = 50
{extra}"#
        ),
    )
}

fn truth_events(chains: &[Chain]) -> Vec<Vec<String>> {
    let data = SimData::new(42, 30);
    let mut want: Vec<Vec<String>> = chains
        .iter()
        .flat_map(|c| truth::events(&data, *c, FIRST, LAST, &[], None))
        .collect();
    want.sort();
    want
}

/// Files of `job` (exact name followed by `-e<digit>`) under `dir`.
fn files_of(dir: &Path, job: &str) -> Vec<PathBuf> {
    parquet_files(dir)
        .into_iter()
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            n.strip_prefix(&format!("{job}-e"))
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
                || n.starts_with(&format!("{job}-compacted-"))
        })
        .collect()
}

/// The newest run report of `job` in the output `out`.
fn last_report(out: &Path, job: &str) -> serde_json::Value {
    let dir = out.join("_chainetl").join(job).join("runs");
    let mut reports: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    reports.sort();
    serde_json::from_slice(&std::fs::read(reports.last().unwrap()).unwrap()).unwrap()
}

fn requests_of(report: &serde_json::Value, key: &str) -> u64 {
    report["exports"][key]["requests"]
        .as_u64()
        .unwrap_or_else(|| panic!("no {key} in {report}"))
}

#[test]
fn fresh_on_one_job_never_touches_a_job_whose_name_it_prefixes() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let uri = out.display().to_string();
    let x = events_spec(dir.path(), "x.toml", "x", &sim.url(), &uri, "");
    let xy = events_spec(dir.path(), "xy.toml", "x-y", &sim.url(), &uri, "");
    for s in [&x, &xy] {
        let o = chainetl(&["run", s, "-q"]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let before = files_of(&out, "x-y");
    assert!(!before.is_empty());
    let o = chainetl(&["run", &x, "--fresh", "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(files_of(&out, "x-y"), before, "--fresh of job x deleted files of job x-y");
    // x-y is whole: its rows are the source's, and a re-run has nothing to do.
    let o = chainetl(&["run", &xy]);
    assert!(String::from_utf8_lossy(&o.stdout).contains(" 0 requests"), "{}", text(&o));
    let rows = |job: &str| {
        let d = tempfile::tempdir().unwrap();
        // Kept at their paths: partition keys are read from them.
        for f in files_of(&out, job) {
            let to = d.path().join(f.strip_prefix(&out).unwrap());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&f, to).unwrap();
        }
        read_rows(d.path(), truth::EVENT_COLS)
    };
    assert_eq!(rows("x-y"), truth_events(&[Chain::Ethereum]));
    assert_eq!(rows("x"), truth_events(&[Chain::Ethereum]));
}

/// A server answering every events request with one event and the same
/// cursor (`same`), or with no events and a new cursor every time (`empty`).
struct LoopServer {
    port: u16,
    requests: Arc<AtomicU64>,
}

impl LoopServer {
    fn start(kind: &'static str) -> LoopServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(AtomicU64::new(0));
        let count = requests.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                let count = count.clone();
                std::thread::spawn(move || {
                    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    loop {
                        // One request at a time on a keep-alive connection.
                        while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                            match conn.read(&mut chunk) {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                        }
                        let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                        buf.drain(..end);
                        let n = count.fetch_add(1, Ordering::SeqCst);
                        let body = match kind {
                            "same" => r#"{"events":[{"block_number":22000000,"block_timestamp":"2025-03-08T00:00:11Z","contract_address":"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48","data":"0x01","log_index":0,"topics":["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"],"transaction_hash":"0x1111111111111111111111111111111111111111111111111111111111111111","transaction_index":0}],"next_cursor":"same"}"#.to_string(),
                            _ => format!(r#"{{"events":[],"next_cursor":"c{n}"}}"#),
                        };
                        let resp = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        if conn.write_all(resp.as_bytes()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        LoopServer { port, requests }
    }
}

fn loop_spec(dir: &Path, port: u16) -> String {
    write_spec(
        dir,
        "loop.toml",
        &format!(
            r#"name = "loop"
[source]
base_url = "http://127.0.0.1:{port}"
max_concurrency = 1
[output]
uri = "{}"
commit_pages = 1
commit_interval_secs = 1
[[export]]
dataset = "events"
chains = ["ethereum"]
window = "22000000..22000009"
chunk_blocks = 10
"#,
            dir.join("out").display()
        ),
    )
}

#[test]
fn a_cursor_that_never_ends_fails_the_unit_and_commits_nothing_twice() {
    for kind in ["same", "empty"] {
        let server = LoopServer::start(kind);
        let dir = tempfile::tempdir().unwrap();
        let spec = loop_spec(dir.path(), server.port);
        let t = Instant::now();
        let mut child = bin()
            .args(["run", &spec, "-q"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        while child.try_wait().unwrap().is_none() && t.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let ended = child.try_wait().unwrap().is_some();
        if !ended {
            child.kill().unwrap();
        }
        let o = child.wait_with_output().unwrap();
        assert!(
            ended,
            "{kind}: the unit paged for 20 s ({} requests)",
            server.requests.load(Ordering::SeqCst)
        );
        assert_eq!(o.status.code(), Some(1), "{kind}: {}", text(&o));
        let msg = text(&o);
        assert!(
            msg.contains("e0-events-ethereum-b22000000-22000010"),
            "{kind}: names the unit: {msg}"
        );
        assert!(
            msg.contains("already followed") || msg.contains("pages in a row"),
            "{kind}: says the server loops: {msg}"
        );
        assert!(server.requests.load(Ordering::SeqCst) <= 110, "{kind}: bounded requests");
        let rows = read_rows(&dir.path().join("out/events"), &["block_number", "log_index"]);
        assert!(rows.len() <= 1, "{kind}: the looping row was committed {} times", rows.len());
        // Re-running does not commit the row again either.
        let o = chainetl(&["run", &spec, "-q"]);
        assert_eq!(o.status.code(), Some(1), "{kind}: {}", text(&o));
        let rows = read_rows(&dir.path().join("out/events"), &["block_number", "log_index"]);
        assert!(rows.len() <= 1, "{kind}: the looping row was committed {} times", rows.len());
    }
}

#[test]
fn two_runs_of_one_job_at_once_never_corrupt_it() {
    let sim = Sim::start(frozen());
    let mut lock_messages = 0;
    for trial in 0..6 {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let spec = events_spec(dir.path(), "conc.toml", "conc", &sim.url(), &out.display().to_string(), "");
        let children: Vec<_> = (0..2)
            .map(|_| {
                bin()
                    .args(["run", &spec, "-q"])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let outs: Vec<_> = children.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
        for o in &outs {
            let msg = text(o);
            match o.status.code() {
                Some(0) => {}
                Some(1) if msg.contains("already running") => {
                    lock_messages += 1;
                    assert!(msg.contains("pid ") && msg.contains("since"), "names the holder: {msg}");
                }
                _ => panic!("trial {trial}: {:?}: {msg}", o.status),
            }
        }
        assert!(outs.iter().any(|o| o.status.success()), "trial {trial}: one run finishes");
        // Every checkpoint parses, status works, and the rows are the source's.
        for e in std::fs::read_dir(out.join("_chainetl/conc/units")).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "json") {
                let v: Result<serde_json::Value, _> = serde_json::from_slice(&std::fs::read(&p).unwrap());
                assert!(v.is_ok(), "trial {trial}: corrupt checkpoint {p:?}");
            }
        }
        let o = chainetl(&["status", &spec]);
        assert!(o.status.success(), "{}", text(&o));
        let o = chainetl(&["run", &spec, "-q"]);
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(read_rows(&out.join("events"), truth::EVENT_COLS), truth_events(&[Chain::Ethereum]));
    }
    assert!(lock_messages > 0, "the second run never met the first's lease");
}

#[test]
fn a_spec_mixing_fixed_and_aligned_exports_keeps_the_fixed_exports_done() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let spec = events_spec(
        dir.path(),
        "mixed.toml",
        "mixed",
        &sim.url(),
        &out.display().to_string(),
        "[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"1d\"\nalign = \"day\"\n",
    );
    let o = chainetl(&["run", &spec, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let files = files_of(&out.join("events"), "mixed");
    let o = chainetl(&["status", &spec]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("8/8"), "{}", text(&o));
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(requests_of(&last_report(&out, "mixed"), "e0 events ethereum"), 0, "{}", text(&o));
    assert_eq!(files_of(&out.join("events"), "mixed"), files);
    assert_eq!(read_rows(&out.join("events"), truth::EVENT_COLS), truth_events(&[Chain::Ethereum]));
}

#[test]
fn a_job_is_what_it_exports_not_how_it_fetches_or_how_its_path_is_spelled() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let abs = dir.path().join("out/rel1");
    let spec = |uri: &str, extra: &str| events_spec(dir.path(), "id.toml", "ident", &sim.url(), uri, extra);
    let run = |spec: &str, sets: &[&str]| {
        let mut args = vec!["run", spec];
        for s in sets {
            args.extend(["--set", s]);
        }
        bin().args(&args).current_dir(dir.path()).output().unwrap()
    };
    let o = run(&spec("out/rel1", ""), &[]);
    assert!(o.status.success(), "{}", text(&o));
    // The same place spelled four ways, and operational settings changed.
    for uri in ["./out/rel1/", &abs.display().to_string(), &format!("file://{}", abs.display())] {
        let o = run(
            &spec(uri, ""),
            &["source.page_size=100", "source.max_concurrency=2", "source.timeout_secs=10"],
        );
        assert!(o.status.success(), "{uri}: {}", text(&o));
        assert_eq!(requests_of(&last_report(&abs, "ident"), "e0 events ethereum"), 0, "{uri}");
    }
    // Adding a chain runs only the new chain's units.
    let grown = spec("out/rel1", "");
    std::fs::write(
        &grown,
        std::fs::read_to_string(&grown)
            .unwrap()
            .replace(r#"["ethereum"]"#, r#"["ethereum", "base"]"#),
    )
    .unwrap();
    let o = run(&grown, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let r = last_report(&abs, "ident");
    assert_eq!(requests_of(&r, "e0 events ethereum"), 0);
    assert!(requests_of(&r, "e0 events base") > 0);
    assert_eq!(
        read_rows(&abs.join("events"), truth::EVENT_COLS),
        truth_events(&[Chain::Ethereum, Chain::Base])
    );
    // Appending an export runs it; the others stay done.
    let mut text2 = std::fs::read_to_string(&grown).unwrap();
    text2.push_str("[[export]]\ndataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000099\"\n");
    std::fs::write(&grown, &text2).unwrap();
    let o = run(&grown, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let r = last_report(&abs, "ident");
    assert_eq!(requests_of(&r, "e0 events base"), 0);
    assert!(requests_of(&r, "e1 blocks ethereum") > 0);
    // Any other change is refused, key by key, before anything is touched.
    let files = parquet_files(&abs);
    let o = run(&grown, &["export.0.window=20000000..20000499"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let msg = text(&o);
    assert!(
        msg.contains(r#"export[0].window: was "20000000..20000399", now "20000000..20000499""#),
        "{msg}"
    );
    assert!(msg.contains("--fresh") && msg.contains("committed files"), "{msg}");
    let o = run(&grown, &["export.0.contract_address=0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("export[0].contract_address: was unset"), "{}", text(&o));
    assert_eq!(parquet_files(&abs), files);
}

#[test]
fn fresh_checks_everything_before_it_deletes() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let spec = events_spec(dir.path(), "f.toml", "f", &sim.url(), &out.display().to_string(), "");
    let o = chainetl(&["run", &spec, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let files = parquet_files(&out);
    let o = bin()
        .args(["run", &spec, "--fresh", "--set", "source.api_key_env=CHAINETL_TEST_UNSET_KEY"])
        .env_remove("CHAINETL_TEST_UNSET_KEY")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("CHAINETL_TEST_UNSET_KEY"), "{}", text(&o));
    assert_eq!(parquet_files(&out), files, "--fresh deleted data, then failed");
    assert!(out.join("_chainetl/f/job.json").exists());
}

#[test]
fn verify_finds_missing_files_and_repair_re_exports_exactly_those_units() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let spec = events_spec(dir.path(), "v.toml", "v", &sim.url(), &out.display().to_string(), "");
    // Repair of a unit's own files (compacted files: tests/it/compact.rs).
    std::fs::write(
        &spec,
        std::fs::read_to_string(&spec)
            .unwrap()
            .replace("commit_pages = 2", "commit_pages = 2\ncompact = false"),
    )
    .unwrap();
    let o = chainetl(&["run", &spec, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = chainetl(&["verify", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let files = files_of(&out, "v");
    let gone = &files[files.len() / 2];
    std::fs::remove_file(gone).unwrap();
    let gone_name = gone.file_name().unwrap().to_string_lossy().to_string();
    let o = chainetl(&["verify", &spec]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains(&gone_name) && text(&o).contains("missing"), "{}", text(&o));
    // A changed file (rewritten with other content) is found too.
    let changed = &files[0];
    std::fs::write(changed, b"not parquet").unwrap();
    let o = chainetl(&["verify", &spec]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains(&changed.file_name().unwrap().to_string_lossy().to_string()),
        "{}",
        text(&o)
    );
    // A byte flipped inside a unit's file (same size) is found.
    let rotten = &files[files.len() - 1];
    crate::compact::flip_a_byte(rotten);
    let o = chainetl(&["verify", &spec]);
    let name = rotten.file_name().unwrap().to_string_lossy().to_string();
    assert!(
        text(&o).contains(&format!("{name}: changed: its content is not what was committed")),
        "{}",
        text(&o)
    );
    let o = chainetl(&["verify", &spec, "--repair"]);
    assert!(o.status.success(), "{}", text(&o));
    let r = last_report(&out, "v");
    let requests = requests_of(&r, "e0 events ethereum");
    // Up to three 50-block units of ~1,500 events at 200 a page: ~8
    // requests each (the job: ~64).
    assert!(
        (1..=30).contains(&requests),
        "repair re-exports only those units: {requests} requests"
    );
    assert_eq!(read_rows(&out.join("events"), truth::EVENT_COLS), truth_events(&[Chain::Ethereum]));
    let o = chainetl(&["verify", &spec]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn a_corrupt_checkpoint_names_the_file_and_its_safe_fix() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let spec = events_spec(dir.path(), "c.toml", "c", &sim.url(), &out.display().to_string(), "");
    // A run killed mid-way leaves checkpoints of units in progress (those
    // of finished units are folded into a manifest at the end of a run).
    let in_progress = || {
        std::fs::read_dir(out.join("_chainetl/c/units"))
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "json"))
    };
    for n in [3, 6, 12, 24] {
        let o = crash_bin(&format!("after-file-write:{n}"))
            .args(["run", &spec, "-q"])
            .output()
            .unwrap();
        assert!(!o.status.success(), "{}", text(&o));
        if in_progress().is_some() {
            break;
        }
    }
    let cp = in_progress().expect("a checkpoint of a unit in progress");
    let name = format!("units/{}", cp.file_name().unwrap().to_string_lossy());
    let body = std::fs::read(&cp).unwrap();
    std::fs::write(&cp, &body[..body.len() / 2]).unwrap();
    for cmd in ["run", "status"] {
        let o = chainetl(&[cmd, &spec]);
        assert_ne!(o.status.code(), Some(0), "{cmd}: {}", text(&o));
        let msg = text(&o);
        assert!(msg.contains(&name) && msg.contains("delete this file"), "{cmd}: {msg}");
    }
    // The fix the message gives is safe: the unit is exported again, once.
    std::fs::remove_file(&cp).unwrap();
    let o = chainetl(&["run", &spec, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(read_rows(&out.join("events"), truth::EVENT_COLS), truth_events(&[Chain::Ethereum]));
}

/// `verify` where the job never ran (a wrong URI, an empty bucket) says so,
/// rather than that every committed file is in place.
#[test]
fn verify_of_a_job_that_never_ran_there_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("nowhere");
    let spec = events_spec(dir.path(), "n.toml", "n", "http://127.0.0.1:9", &out.display().to_string(), "");
    let o = chainetl(&["verify", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("it has not run there, so there is nothing to verify"),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("in place"), "{}", text(&o));
}
