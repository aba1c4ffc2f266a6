//! Fixtures: an in-process simulator, the CLI binary, Parquet read-back and
//! the simulator's ground truth as comparable rows.

use arrow_array::Array;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::DataType;
use chainetl::sim::SimHandle;
use chainetl::spec::SimOptions;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A simulator on a loopback port, served by its own runtime.
pub struct Sim {
    pub rt: tokio::runtime::Runtime,
    pub handle: SimHandle,
}

impl Sim {
    pub fn start(opts: SimOptions) -> Sim {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let handle = rt.block_on(chainetl::sim::spawn(opts)).unwrap();
        Sim { rt, handle }
    }

    pub fn url(&self) -> String {
        self.handle.base_url()
    }
}

/// Frozen, fault-free simulator options.
pub fn frozen() -> SimOptions {
    SimOptions {
        frozen_at: Some("2025-06-01T00:00:00Z".into()),
        events_per_block: 30,
        ..SimOptions::default()
    }
}

/// The CLI under test; `CHAINETL_TEST_BIN` points the tests at another
/// build (to show that a new test fails on an older binary).
pub fn bin() -> Command {
    match std::env::var_os("CHAINETL_TEST_BIN") {
        Some(p) => Command::new(p),
        None => Command::new(env!("CARGO_BIN_EXE_chainetl")),
    }
}

/// The CLI with crash points, armed with `point` (`name:N`: abort the N-th
/// time the run reaches crash point `name`). It is the test tool
/// `tests/bin/chainetl-failpoints.rs`, which `cargo test` builds beside
/// the tests; the `chainetl` binary itself never honours crash points.
/// `CHAINETL_TEST_BIN` points these runs at another build too.
pub fn crash_bin(point: &str) -> Command {
    let mut c = match std::env::var_os("CHAINETL_TEST_BIN") {
        Some(p) => Command::new(p),
        None => Command::new(failpoints_tool()),
    };
    c.env("CHAINETL_FAILPOINT", point);
    c
}

/// `target/<profile>/examples/chainetl-failpoints`, beside this test binary's `deps/`.
fn failpoints_tool() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>/deps/<test binary>");
    let tool = profile_dir
        .join("examples")
        .join(format!("chainetl-failpoints{}", std::env::consts::EXE_SUFFIX));
    // One build links both within seconds of each other; a tool left from
    // an earlier build predates the binary by at least a compile of the
    // library (tens of seconds).
    let built = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let fresh = match (built(&tool), built(Path::new(env!("CARGO_BIN_EXE_chainetl")))) {
        (Some(t), Some(b)) => t + std::time::Duration::from_secs(10) >= b,
        _ => false,
    };
    assert!(
        fresh,
        "{} is missing or older than the chainetl binary: `cargo test` builds both; after \
         `cargo test --test it`, build it with `cargo build --example chainetl-failpoints` \
         and the same profile flags (`--release` for `make test`)",
        tool.display()
    );
    tool
}

/// An HTTP client for the tests' own requests (the process's TLS provider
/// installed first, as chainetl's clients do).
pub fn http_client() -> reqwest::Client {
    chainetl::util::tls::install();
    reqwest::Client::new()
}

/// Runs the CLI with args; returns its output.
pub fn chainetl(args: &[&str]) -> Output {
    bin().args(args).env_remove("RUST_LOG").output().unwrap()
}

pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// A JSON file's document.
pub fn read_json(path: &Path) -> serde_json::Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Edits a JSON file in place, as a person or a restored backup would.
/// Returns what `edit` returns.
pub fn edit_json<R>(path: &Path, edit: impl FnOnce(&mut serde_json::Value) -> R) -> R {
    let mut doc = read_json(path);
    let r = edit(&mut doc);
    std::fs::write(path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    r
}

/// Writes a spec into `dir` and returns its path.
pub fn write_spec(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.to_string_lossy().into_owned()
}

/// Every `.parquet` file under `dir`, sorted.
pub fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "parquet") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Rows of every Parquet file under `dir`, as strings of `columns`, sorted
/// (a column a file does not hold is read from its hive path, `col=value`).
pub fn read_rows(dir: &Path, columns: &[&str]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for f in parquet_files(dir) {
        let file = std::fs::File::open(&f).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap();
        for batch in reader {
            let batch = batch.unwrap();
            let opts = FormatOptions::default().with_null("NULL");
            // Partition keys live only in the path, as hive readers find them.
            let from_path = |c: &str| -> arrow_array::ArrayRef {
                let key = format!("{c}=");
                let value = f
                    .components()
                    .find_map(|p| p.as_os_str().to_str().and_then(|s| s.strip_prefix(&key)).map(str::to_string))
                    .unwrap_or_else(|| panic!("no column {c} in {f:?}"));
                std::sync::Arc::new(arrow_array::StringArray::from(vec![value; batch.num_rows()]))
            };
            let cols: Vec<_> = columns
                .iter()
                .map(|c| match batch.schema().index_of(c) {
                    Ok(i) => batch.column(i).clone(),
                    Err(_) => from_path(c),
                })
                .map(|a| match a.data_type() {
                    // Named zones need chrono-tz to display; the instant is what we compare.
                    DataType::Timestamp(unit, Some(_)) => arrow_cast::cast(&a, &DataType::Timestamp(*unit, None)).unwrap(),
                    _ => a,
                })
                .collect();
            let fmts: Vec<_> = cols
                .iter()
                .map(|a| ArrayFormatter::try_new(a.as_ref() as &dyn Array, &opts).unwrap())
                .collect();
            for i in 0..batch.num_rows() {
                rows.push(fmts.iter().map(|f| f.value(i).to_string()).collect());
            }
        }
    }
    rows.sort();
    rows
}

/// The Python interpreter with duckdb installed (CHAINETL_PYTHON, or .venv, or python3).
/// Runs `tests/<script>` (a read-back check) with [`python`] on `args`,
/// with `envs` set, and returns the JSON of the `RESULT ` line it prints;
/// without one, panics with what it printed.
pub fn check_script(script: &str, args: &[&str], envs: &[(&str, &str)]) -> serde_json::Value {
    let path = format!("{}/tests/{script}", env!("CARGO_MANIFEST_DIR"));
    let o = python_output(Command::new(python()).arg(&path).args(args).envs(envs.iter().copied()))
        .expect("python with the read-back tools (run `make test`, which installs them)");
    let stdout = String::from_utf8_lossy(&o.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("{script} failed:\n{}", text(&o)));
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{script}: {e}: {line}"))
}

/// The test suite's fork server of warm Python processes
/// (tests/warm_python.py), started on first use; `None` where it could
/// not start, or `CHAINETL_TEST_COLD_PYTHON` is set: each read-back then
/// starts a Python of its own.
struct WarmPython {
    socket: PathBuf,
    /// Its stdin: closed when the test binary exits, which ends it.
    _stdin: std::process::ChildStdin,
    _dir: tempfile::TempDir,
}

/// The fork server, or with `spark` the Spark server: one Spark session
/// for the suite, its read-backs run one at a time (tests/warm_python.py).
fn warm_python(spark: bool) -> Option<&'static WarmPython> {
    static WARM: [std::sync::OnceLock<Option<WarmPython>>; 2] = [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    WARM[usize::from(spark)]
        .get_or_init(|| {
            if std::env::var_os("CHAINETL_TEST_COLD_PYTHON").is_some() {
                return None;
            }
            let dir = tempfile::tempdir().ok()?;
            let socket = dir.path().join("warm.sock");
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/warm_python.py");
            let mut child = Command::new(python())
                .arg(script)
                .arg(&socket)
                .args(spark.then_some("--spark"))
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .spawn()
                .ok()?;
            let mut line = String::new();
            std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take()?), &mut line).ok()?;
            (line.trim() == "READY").then_some(())?;
            Some(WarmPython {
                socket,
                _stdin: child.stdin.take()?,
                _dir: dir,
            })
        })
        .as_ref()
}

/// The read-back scripts that run Spark: they go to the Spark server.
const SPARK_SCRIPTS: [&str; 2] = ["spark_check.py", "engines_check.py"];

/// Runs `c` (a command of [`python()`]: its arguments and the variables it
/// sets) and returns what it printed, as [`Command::output`] would: in a
/// child of the warm fork server where there is one (a second of imports
/// saved a read-back), a Spark script in the Spark server, else in a
/// Python of its own.
pub fn python_output(c: &mut Command) -> std::io::Result<Output> {
    use std::io::{BufRead, Read, Write};
    use std::os::unix::process::ExitStatusExt;
    let argv: Vec<String> = c.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
    let spark = argv
        .first()
        .and_then(|a| Path::new(a).file_name())
        .is_some_and(|name| SPARK_SCRIPTS.iter().any(|s| name == *s));
    if spark {
        set_up("spark");
    }
    let Some(warm) = warm_python(spark) else {
        return c.output();
    };
    // A variable removed is sent as null.
    let mut env: serde_json::Map<String, serde_json::Value> = c
        .get_envs()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.map(|v| v.to_string_lossy().into_owned()).into()))
        .collect();
    // For the cost log (docs/testing.md).
    if let Some(test) = std::thread::current().name() {
        env.insert("CHAINETL_TEST_NAME".into(), test.into());
    }
    let cwd = c.get_current_dir().map(|d| d.to_string_lossy().into_owned());
    let mut stream = std::os::unix::net::UnixStream::connect(&warm.socket)?;
    let request = serde_json::json!({"argv": argv, "env": env, "cwd": cwd});
    stream.write_all(format!("{request}\n").as_bytes())?;
    // A JSON line of the exit code and the two outputs' lengths, then the
    // outputs' bytes (tests/warm_python.py).
    let mut reply = std::io::BufReader::new(stream);
    let mut head = String::new();
    reply.read_line(&mut head)?;
    let doc: serde_json::Value =
        serde_json::from_str(&head).map_err(|e| std::io::Error::other(format!("the warm Python server answered {head:?}: {e}")))?;
    let mut bytes = |name: &str| -> std::io::Result<Vec<u8>> {
        let mut b = vec![0; doc[name].as_u64().unwrap_or(0) as usize];
        reply
            .read_exact(&mut b)
            .map_err(|e| std::io::Error::other(format!("the warm Python server's answer ended before its {name}: {e}")))?;
        Ok(b)
    };
    let (stdout, stderr) = (bytes("stdout")?, bytes("stderr")?);
    let code = doc["code"].as_i64().unwrap_or(1) as i32;
    Ok(Output {
        status: std::process::ExitStatus::from_raw((code & 0xff) << 8),
        stdout,
        stderr,
    })
}

/// Waits for `make test`'s set-up job `name` where one is under way: the
/// suite starts before the slow ones end (pyspark's install, Chromium's),
/// and only the tests that need one wait for it. `scripts/run-tests` names
/// the folder where each job writes its exit code, `NAME.rc`, when it ends
/// (CHAINETL_TEST_SETUP_DIR); run any other way, there is nothing to wait
/// for. A job that failed fails the test, naming it.
pub fn set_up(name: &str) {
    let Some(dir) = std::env::var_os("CHAINETL_TEST_SETUP_DIR") else {
        return;
    };
    let file = Path::new(&dir).join(format!("{name}.rc"));
    let waited = std::time::Instant::now();
    loop {
        // Empty while the job is writing it.
        let code = std::fs::read_to_string(&file).unwrap_or_default();
        match code.trim() {
            "" if waited.elapsed() < std::time::Duration::from_secs(3600) => std::thread::sleep(std::time::Duration::from_millis(200)),
            "" => panic!("make test's set-up job `{name}` has not ended after an hour"),
            "0" => return,
            code => panic!("make test's set-up job `{name}` failed (exit code {code}): its message is in make test's output"),
        }
    }
}

pub fn python() -> String {
    if let Ok(p) = std::env::var("CHAINETL_PYTHON") {
        return p;
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    if venv.exists() {
        venv.to_string_lossy().into_owned()
    } else {
        "python3".into()
    }
}

/// Runs a DuckDB query over the output and returns its rows as JSON.
pub fn duckdb(sql: &str) -> serde_json::Value {
    let script =
        "import duckdb, json, sys\nrows = duckdb.sql(sys.argv[1]).fetchall()\nprint(json.dumps([[str(v) for v in r] for r in rows]))";
    let out =
        python_output(Command::new(python()).args(["-c", script, sql])).expect("python with duckdb (run `make test`, which installs it)");
    assert!(
        out.status.success(),
        "duckdb query failed: {sql}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub fn wait_for(port: u16) {
    let t = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(t.elapsed() < std::time::Duration::from_secs(60), "server on {port} did not come up");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// moto's S3 server (a test fails, not skips, without it), as
/// `tests/s3_server.py` serves it: two for the test binary, each started
/// on first use and handed to tests in turn. Each
/// test makes buckets of its own ([`Moto::bucket`]), so none sees
/// another's objects, as users share S3; a test that takes the endpoint
/// away does it with a proxy of its own (`s3.rs`), not by stopping a
/// server. One server for all would make two tests' requests wait on
/// one interpreter.
/// `CHAINETL_TEST_MOTO_PORT` points every test at a moto started by hand
/// (to profile it), `CHAINETL_TEST_MOTO_LOG` keeps its request log.
pub struct Moto {
    pub port: u16,
    /// The server, never waited for: it ends when the test binary does
    /// (its stdin, below, closes), and init reaps it then.
    _child: Option<std::process::Child>,
    /// Its stdin: closed when the test binary exits, which ends it.
    _stdin: Option<std::process::ChildStdin>,
}

impl Moto {
    /// The next of the suite's servers.
    pub fn shared() -> &'static Moto {
        static MOTO: [std::sync::OnceLock<Moto>; 2] = [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        MOTO[NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 2].get_or_init(|| {
            if let Some(port) = std::env::var("CHAINETL_TEST_MOTO_PORT").ok().and_then(|p| p.parse().ok()) {
                return Moto {
                    port,
                    _child: None,
                    _stdin: None,
                };
            }
            let port = free_port();
            // It ends when the test binary goes (its end of this stdin
            // closes): a static is never dropped.
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/s3_server.py");
            let mut child = Command::new(python())
                .arg(script)
                .arg(port.to_string())
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::null())
                .stderr(match std::env::var_os("CHAINETL_TEST_MOTO_LOG") {
                    // Appended to: the suite's two servers may share it.
                    Some(path) => std::fs::File::options()
                        .append(true)
                        .create(true)
                        .open(path)
                        .map(Into::into)
                        .unwrap_or(std::process::Stdio::null()),
                    None => std::process::Stdio::null(),
                })
                .spawn()
                .expect("moto (installed by `make test` into .venv)");
            wait_for(port);
            Moto {
                port,
                _stdin: child.stdin.take(),
                _child: Some(child),
            }
        })
    }

    /// Makes a bucket no other test has: `name` and a number.
    pub fn bucket(&self, name: &str) -> String {
        static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let bucket = format!("{name}-{}", MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let url = format!("http://127.0.0.1:{}/{bucket}", self.port);
        // On a thread and runtime of their own: the caller may be inside a runtime.
        let status = std::thread::scope(|s| {
            s.spawn(|| {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                rt.block_on(async { http_client().put(url).send().await.unwrap().status() })
            })
            .join()
            .unwrap()
        });
        assert!(status.is_success(), "create bucket {bucket}: {status}");
        bucket
    }
}
