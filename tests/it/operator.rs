//! Operator experience: help and error texts (snapshots), exit codes, the
//! run report, secrets kept out of every output, and progress on a terminal.

use crate::common::*;
use chainetl::spec::SimOptions;
use std::path::Path;

/// Compares `actual` with `tests/it/snapshots/<name>.txt`;
/// `UPDATE_SNAPSHOTS=1` rewrites the file instead.
fn snapshot(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/snapshots")
        .join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("no snapshot {path:?}; run with UPDATE_SNAPSHOTS=1"));
    assert_eq!(actual, want, "snapshot {name} differs (UPDATE_SNAPSHOTS=1 to accept)");
}

#[test]
fn help_texts() {
    let o = chainetl(&["--help"]);
    assert!(o.status.success());
    snapshot("help", &String::from_utf8_lossy(&o.stdout));
    let o = chainetl(&["run", "--help"]);
    snapshot("help-run", &String::from_utf8_lossy(&o.stdout));
    let o = chainetl(&["sim", "--help"]);
    snapshot("help-sim", &String::from_utf8_lossy(&o.stdout));
    let o = chainetl(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2), "usage errors exit 2");
}

#[test]
fn key_error_messages() {
    let dir = tempfile::tempdir().unwrap();
    write_spec(
        dir.path(),
        "bad.toml",
        "name = \"x\"\n[source]\nbase_url = \"ftp://nowhere\"\ntimeout_secs = 0\n[output]\nuri = \"out\"\ncompression = \"brotli\"\n[[export]]\ndataset = \"portfolio\"\nchains = [\"base\"]\nwallets = [\"0x12\"]\nwindow = \"1..2\"\nnumbers = [1]\n",
    );
    let o = bin().current_dir(dir.path()).args(["validate", "bad.toml"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    snapshot("error-spec", &text(&o));
    std::fs::write(dir.path().join("toml.toml"), "name = \"x\"\n[source\nbase_url = 1\n").unwrap();
    let o = bin().current_dir(dir.path()).args(["validate", "toml.toml"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    snapshot("error-toml", &text(&o));
    let o = bin().current_dir(dir.path()).args(["validate", "missing.toml"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("missing.toml: cannot read the spec"), "{}", text(&o));
}

fn job(dir: &Path, url: &str, source_extra: &str) -> String {
    write_spec(
        dir,
        "job.toml",
        &format!(
            "name = \"op\"\n[source]\nbase_url = \"{url}\"\nmax_retries = 1\n{source_extra}\n[output]\nuri = \"{}\"\n[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"100..2099\"\nchunk_blocks = 500\n",
            dir.join("out").display()
        ),
    )
}

#[test]
fn a_refused_api_key_exits_2_naming_the_variable_never_the_key() {
    let sim = Sim::start(SimOptions {
        api_key: Some("the-right-key".into()),
        ..frozen()
    });
    let dir = tempfile::tempdir().unwrap();
    let spec = job(dir.path(), &sim.url(), "api_key_env = \"BDS_TEST_KEY\"");
    let secret = "sk-live-DO-NOT-LEAK-42";
    let o = bin().args(["run", &spec, "-v"]).env("BDS_TEST_KEY", secret).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("refused the API key in $BDS_TEST_KEY"), "{t}");
    assert!(t.contains("5 of 5 units left to do") && !t.contains("unit(s) failed"), "{t}");
    assert!(!t.contains(secret), "the key leaked into the output");
    // Nor into state, reports or data files.
    let mut stack = vec![dir.path().join("out")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                let bytes = std::fs::read(e.path()).unwrap();
                assert!(!String::from_utf8_lossy(&bytes).contains(secret), "key leaked into {:?}", e.path());
            }
        }
    }
    // The right key works; the unset variable is a configuration error.
    let o = bin()
        .args(["run", &spec, "-q"])
        .env("BDS_TEST_KEY", "the-right-key")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = bin().args(["run", &spec, "-q"]).env_remove("BDS_TEST_KEY").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("names $BDS_TEST_KEY, which is not set: export BDS_TEST_KEY="),
        "{}",
        text(&o)
    );
}

#[test]
fn an_unreachable_base_url_says_so_and_exits_1() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let spec = job(dir.path(), &format!("http://127.0.0.1:{port}"), "");
    let o = chainetl(&["run", &spec, "-q"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains(&format!("cannot reach the service at http://127.0.0.1:{port}")),
        "{}",
        text(&o)
    );
}

#[test]
fn the_run_report_has_the_figures() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let spec = job(dir.path(), &sim.url(), "");
    let o = chainetl(&["run", &spec, "-q"]);
    assert!(o.status.success());
    let runs: Vec<_> = std::fs::read_dir(dir.path().join("out/_chainetl/op/runs"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name() != "latest.json")
        .collect();
    assert_eq!(runs.len(), 1);
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(runs[0].path()).unwrap()).unwrap();
    for k in [
        "job",
        "spec_hash",
        "chainetl_version",
        "started_at",
        "finished_at",
        "elapsed_secs",
        "requests",
        "retries",
        "throttled",
        "failed",
        "exports",
        "windows",
    ] {
        assert!(r.get(k).is_some(), "report lacks {k}: {r}");
    }
    let t = &r["exports"]["e0 blocks base"];
    assert_eq!(t["rows"], 2000);
    assert_eq!(t["units"], 5);
    assert!(t["requests"].as_u64().unwrap() >= 4 && t["files"].as_u64().unwrap() >= 4 && t["bytes"].as_u64().unwrap() > 0);
    assert_eq!(r["failed"].as_array().unwrap().len(), 0);
}

#[test]
fn sigint_exits_130() {
    let sim = Sim::start(SimOptions {
        latency_ms: 50,
        ..frozen()
    });
    let dir = tempfile::tempdir().unwrap();
    let spec = job(dir.path(), &sim.url(), "page_size = 20\nmax_concurrency = 1");
    let child = bin()
        .args(["run", &spec])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(600));
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
}

#[test]
fn progress_bars_render_on_a_terminal_and_end_in_the_summary() {
    let sim = Sim::start(SimOptions {
        latency_ms: 30,
        ..frozen()
    });
    let dir = tempfile::tempdir().unwrap();
    let spec = job(dir.path(), &sim.url(), "page_size = 50\nmax_concurrency = 2");
    // `script` gives the command a pseudo-terminal.
    let cmd = format!("{} run {spec}", env!("CARGO_BIN_EXE_chainetl"));
    let o = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect("script(1) from util-linux");
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    let bar = t.find("export[0] blocks (base)").expect("a progress bar per export");
    assert!(t.contains("ETA") && t.contains("units 5/5"), "{t}");
    let table = t.rfind("export / chain").expect("the summary table");
    assert!(table > bar, "the summary comes after the bars");
    assert!(t[table..].contains("e0 blocks base") && t[table..].contains("2000 rows in"), "{t}");
    // Not on a terminal: plain lines, no escape codes.
    let o = chainetl(&["run", &spec, "--fresh", "--progress-secs", "1"]);
    assert!(!text(&o).contains('\u{1b}'), "no terminal escapes when not on a TTY");
}

#[test]
fn init_writes_a_spec_that_validates() {
    let dir = tempfile::tempdir().unwrap();
    let o = bin().current_dir(dir.path()).args(["init"]).output().unwrap();
    assert!(o.status.success());
    let o = bin().current_dir(dir.path()).args(["validate", "pipeline.toml"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let o = bin().current_dir(dir.path()).args(["init"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "init does not overwrite");
    let o = bin()
        .current_dir(dir.path())
        .args([
            "plan",
            "pipeline.toml",
            "--set",
            "export.0.window=1..100",
            "--set",
            "source.max_concurrency=3",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("window 1..100"), "{}", text(&o));
    let o = bin()
        .current_dir(dir.path())
        .env("CHAINETL_TEST_URI", "elsewhere")
        .args(["validate", "pipeline.toml", "--set", "output.uri=${CHAINETL_TEST_URI}"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn schema_ddl_for_engines() {
    let o = chainetl(&["schema", "portfolio", "--format", "duckdb"]);
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(
        t.starts_with("CREATE TABLE portfolio (") && t.contains("date DATE NOT NULL") && t.contains("balance_raw VARCHAR"),
        "{t}"
    );
    let o = chainetl(&["schema", "blocks", "--format", "spark"]);
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(
        t.contains("total_difficulty DECIMAL(38,0)") && t.contains("timestamp TIMESTAMP NOT NULL"),
        "{t}"
    );
    // The DuckDB DDL really creates the table.
    let ddl = String::from_utf8_lossy(&chainetl(&["schema", "events", "--format", "duckdb"]).stdout).to_string();
    let rows = duckdb(&format!("{ddl} select count(*) from events"));
    assert_eq!(rows[0][0], "0");
    assert_eq!(chainetl(&["schema", "events", "--format", "xml"]).status.code(), Some(2));
}

/// Output to a pipe whose reader has gone (`chainetl schema … | head -1`,
/// `--summary json | head -c 100`): the command ends as it would have,
/// without a panic, whatever it printed; any other failure to write is
/// one.
#[test]
fn a_reader_that_closes_its_end_of_stdout_is_no_panic() {
    use std::os::fd::FromRawFd;
    let dir = tempfile::tempdir().unwrap();
    let sim = Sim::start(frozen());
    let spec = job(dir.path(), &sim.url(), "");
    for args in [
        vec!["schema", "events", "--format", "spark"],
        vec!["completions", "bash"],
        vec!["run", spec.as_str(), "--summary", "json"],
    ] {
        let mut fds = [0; 2];
        // SAFETY: pipe(2) fills both descriptors; the reading one is
        // closed at once, so every write to the other fails with EPIPE.
        let stdout = unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            libc::close(fds[0]);
            std::process::Stdio::from_raw_fd(fds[1])
        };
        let o = bin()
            .args(&args)
            .stdout(stdout)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    }
    // A full disk under `> file` is a failure: said in one line, exit 1.
    let full = std::fs::File::create("/dev/full").unwrap();
    let o = bin()
        .args(["schema", "events"])
        .stdout(full)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked") && err.contains("cannot write to stdout"), "{err}");
    assert_eq!(o.status.code(), Some(1), "{err}");
}
