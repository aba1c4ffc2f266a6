//! Iceberg tables committed through a REST catalog whose commit logic is
//! not chainetl's: `tests/rest_catalog.py` serves the REST protocol over
//! pyiceberg's `SqlCatalog` (sqlite), which checks each commit's
//! requirements and applies its updates with pyiceberg's code, and scripts
//! the catalog's failures (a 409 without applying, a commit applied and
//! then answered 504 or not at all, a 500, tokens that expire within the
//! run). Tables are read back through pyiceberg's own `RestCatalog`, every
//! snapshot checked for a key twice or a parent's key missing, the rows
//! against the same job's parquet export.

use crate::common::*;
use crate::delta::keys_of;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The client id and secret the test catalog takes.
const CLIENT: &str = "chainetl-test";
const SECRET: &str = "s3cr3t-catalog-Value-77";

/// A REST catalog served by `tests/rest_catalog.py` over a SQL catalog in
/// `dir`, stopped when dropped.
pub(crate) struct RestCatalog {
    child: Child,
    pub(crate) dir: PathBuf,
    pub(crate) url: String,
    /// The S3 endpoint its metadata and readers go to (`None`: local disk).
    s3: Option<String>,
}

/// The environment pyiceberg's S3 file IO takes its credentials from, as
/// the S3 tests' server wants them.
const S3_ENV: [(&str, &str); 3] = [
    ("AWS_ACCESS_KEY_ID", "testing"),
    ("AWS_SECRET_ACCESS_KEY", crate::s3::SECRET),
    ("AWS_REGION", "us-east-1"),
];

impl RestCatalog {
    /// Serves a catalog in `dir` taking OAuth2 client credentials.
    pub(crate) fn start(dir: &Path) -> RestCatalog {
        RestCatalog::start_on(dir, None)
    }

    /// [`RestCatalog::start`], writing metadata to the S3 server at
    /// `s3` (an endpoint URL) where given.
    pub(crate) fn start_on(dir: &Path, s3: Option<&str>) -> RestCatalog {
        std::fs::create_dir_all(dir).unwrap();
        let script = format!("{}/tests/rest_catalog.py", env!("CARGO_MANIFEST_DIR"));
        let mut c = Command::new(python());
        c.args([&script, "serve", "--dir"]).arg(dir);
        if let Some(endpoint) = s3 {
            c.args(["--s3-endpoint", endpoint]).envs(S3_ENV);
        }
        let child = c
            .args(["--client-id", CLIENT, "--client-secret", SECRET])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python with pyiceberg (run `make test`, which installs it)");
        let t = Instant::now();
        let url = loop {
            if let Ok(u) = std::fs::read_to_string(dir.join("url"))
                && u.ends_with('\n')
            {
                break u.trim().to_string();
            }
            assert!(t.elapsed() < Duration::from_secs(60), "the test catalog did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        RestCatalog {
            child,
            dir: dir.to_path_buf(),
            url,
            s3: s3.map(str::to_string),
        }
    }

    /// `[output.catalog]` for namespace `ns`, credentials in `$CAT_CRED`.
    pub(crate) fn section(&self, ns: &str) -> String {
        format!(
            "[output.catalog]\ntype = \"rest\"\nuri = \"{}\"\nnamespace = \"{ns}\"\ncredential_env = \"CAT_CRED\"\n",
            self.url
        )
    }

    /// Scripts the catalog's next answers (see tests/rest_catalog.py).
    pub(crate) fn faults(&self, faults: Value) {
        std::fs::write(self.dir.join("faults.json"), faults.to_string()).unwrap();
    }

    /// The commit answers scripted and not yet given.
    pub(crate) fn faults_left(&self) -> usize {
        let doc = read_json(&self.dir.join("faults.json"));
        doc["commit"].as_array().map_or(0, Vec::len)
    }

    /// Requests the catalog answered, by action.
    pub(crate) fn requests(&self) -> std::collections::BTreeMap<String, u64> {
        let log = std::fs::read_to_string(self.dir.join("requests.log")).unwrap_or_default();
        let mut out = std::collections::BTreeMap::new();
        for l in log.lines() {
            let v: Value = serde_json::from_str(l).unwrap();
            *out.entry(v["action"].as_str().unwrap().to_string()).or_default() += 1;
        }
        out
    }

    /// The tables `tables` (`ns.name`) read through pyiceberg's
    /// `RestCatalog`, each by its dataset's key columns, from one process.
    pub(crate) fn read(&self, ns: &str, tables: &[&str]) -> Value {
        let script = format!("{}/tests/rest_catalog.py", env!("CARGO_MANIFEST_DIR"));
        let mut c = Command::new(python());
        c.args([&script, "read", "--uri", &self.url, "--credential", &format!("{CLIENT}:{SECRET}")]);
        if let Some(endpoint) = &self.s3 {
            c.args(["--s3-endpoint", endpoint]).envs(S3_ENV);
        }
        for t in tables {
            c.args(["--table", &format!("{ns}.{t}:{}", keys_of(t).join(","))]);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "reading through the catalog failed:\n{}", text(&o));
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        doc["tables"].clone()
    }
}

impl Drop for RestCatalog {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// chainetl with the catalog's credential in `$CAT_CRED`.
fn run_with(cmd: &mut Command, args: &[&str]) -> std::process::Output {
    cmd.args(args)
        .env("CAT_CRED", format!("{CLIENT}:{SECRET}"))
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

fn cli(args: &[&str]) -> std::process::Output {
    run_with(&mut bin(), args)
}

/// A job `name` into `out` in `format` of every dataset and a decoded
/// table, small windows, units of 50 blocks.
fn every_dataset(dir: &Path, name: &str, url: &str, out: &Path, format: &str, extra_output: &str) -> String {
    let body = format!(
        "name = \"{name}\"\n[source]\nbase_url = \"{url}\"\nmax_concurrency = 2\n[output]\nuri = \"{}\"\nformat = \"{format}\"\n\
         {extra_output}\n\
         [[export]]\ndataset = \"events\"\nchains = [\"ethereum\", \"base\"]\nwindow = \"20000000..20000199\"\nchunk_blocks = 50\n\
         [[export]]\ndataset = \"events\"\nchains = [\"polygon\"]\nwindow = \"20000000..20000099\"\ndecode = true\n\
         table = \"transfers\"\nsignatures = [\"event Transfer(address indexed from, address indexed to, uint256 value)\"]\n\
         [[export]]\ndataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000199\"\nchunk_blocks = 50\n\
         [[export]]\ndataset = \"portfolio\"\nchains = [\"ethereum\"]\n\
         wallets = [\"0x28c6c06298d514db089934071355e5743bf21d60\"]\nwindow = \"2025-05-20T00:00:00Z..2025-06-01T00:00:00Z\"\n\
         [[export]]\ndataset = \"tokens\"\nchains = [\"ethereum\"]\naddresses = [\"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48\"]\n",
        out.display()
    );
    write_spec(dir, &format!("{name}-{format}.toml"), &body)
}

const TABLES: [&str; 5] = ["events", "transfers", "blocks", "portfolio", "tokens"];

/// Every table of `tables` (as [`RestCatalog::read`] gives them) exact:
/// no snapshot with a key twice, none losing its parent's keys on an
/// append or a compaction, and the current rows those of the parquet
/// export under `pq`.
fn exact(tables: &Value, ns: &str, pq: &Path, names: &[&str], what: &str) {
    for t in names {
        let doc = &tables[format!("{ns}.{t}")];
        assert!(doc.get("error").is_none(), "{what}: {t}: {doc}");
        for s in doc["snapshots"].as_array().unwrap() {
            assert_eq!(s["rows"], s["distinct"], "{what}: {t}: a snapshot holds a row twice: {s}");
            if matches!(s["operation"].as_str(), Some("append" | "replace")) {
                assert_eq!(s["holds_parent"], true, "{what}: {t}: a snapshot lost its parent's rows: {s}");
            }
        }
        let want: Vec<String> = read_rows(&pq.join(t), keys_of(t))
            .into_iter()
            .map(|r| serde_json::to_string(&r).unwrap())
            .collect();
        let mut got: Vec<String> = doc["row_keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| {
                let cells: Vec<String> = serde_json::from_str::<Vec<Value>>(k.as_str().unwrap())
                    .unwrap()
                    .into_iter()
                    .map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_string))
                    .collect();
                serde_json::to_string(&cells).unwrap()
            })
            .collect();
        got.sort();
        assert!(!want.is_empty(), "{what}: {t}: the parquet export has no rows");
        assert_eq!(got.len(), want.len(), "{what}: {t}: rows through the catalog");
        assert!(got == want, "{what}: {t}: the catalog's rows are not the parquet export's");
    }
}

fn assert_no_secret(what: &str, bytes: &[u8]) {
    let s = String::from_utf8_lossy(bytes);
    assert!(!s.contains(SECRET), "{what} holds the client secret");
}

/// Every dataset and a decoded table committed through the catalog (the
/// namespace made by the run), read through pyiceberg's `RestCatalog`
/// exactly as the parquet export holds them; the catalog wrote each
/// metadata file (no version hint), under the job's own folders; `verify`
/// reads the catalog's tables; the credential is nowhere but in memory.
#[test]
fn every_dataset_and_decoded_table_is_committed_through_a_rest_catalog_and_read_exactly_through_it() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let catalog = RestCatalog::start(&dir.path().join("catalog"));
    let (pq, ice) = (dir.path().join("pq"), dir.path().join("ice"));
    let o = chainetl(&["run", &every_dataset(dir.path(), "whole", &sim.url(), &pq, "parquet", "")]);
    assert!(o.status.success(), "{}", text(&o));
    let spec = every_dataset(dir.path(), "whole", &sim.url(), &ice, "iceberg", &catalog.section("chain"));
    let o = cli(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    assert_no_secret("the run's output", &o.stdout);
    assert_no_secret("the run's log", &o.stderr);
    let tables = catalog.read("chain", &TABLES);
    exact(&tables, "chain", &pq, &TABLES, "through the catalog");
    for t in TABLES {
        let doc = &tables[format!("chain.{t}")];
        let location = doc["metadata_location"].as_str().unwrap();
        assert!(
            location.starts_with(&format!("file://{}/{t}/metadata/", ice.display())),
            "{t}: the catalog's metadata is under the job's folder: {location}"
        );
        assert!(
            !ice.join(t).join("metadata/version-hint.text").exists(),
            "{t}: the catalog is the pointer, not a hint"
        );
        // The table declares the order its files are sorted in, and every
        // data file is listed as of it.
        let key: Vec<&str> = doc["sort_columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c[0].as_str().unwrap())
            .collect();
        let want: &[&str] = match t {
            "blocks" => &["number"],
            "tokens" => &["address"],
            "portfolio" => &["wallet_address", "date", "token_address"],
            _ => &["block_number", "log_index"],
        };
        assert_eq!(key, want, "{t}: the sort order: {}", doc["sort_columns"]);
        assert!(
            doc["sort_columns"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c[1] == "ASC" && c[2] == "NULLS_FIRST" && c[3] == "identity"),
            "{t}: {}",
            doc["sort_columns"]
        );
        // Files whose rows came in key order declare it (portfolio rows
        // come by wallet and day, tokens not in address order: those
        // files declare none, and are listed as of none).
        let of_order = serde_json::json!([doc["sort_order_id"]]);
        if t == "portfolio" {
            assert!(
                doc["files_sort_order_ids"] == serde_json::json!([-1]) || doc["files_sort_order_ids"] == of_order,
                "{t}: {doc}"
            );
        } else {
            assert_eq!(doc["files_sort_order_ids"], of_order, "{t}: each file is of the table's order");
        }
        assert!(
            doc["snapshots"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s["summary"]["engine-name"] == "chainetl")
        );
    }
    let requests = catalog.requests();
    assert_eq!(requests.get("namespace_create"), Some(&1), "{requests:?}");
    assert_eq!(requests.get("table_create"), Some(&5), "{requests:?}");
    let o = cli(&["verify", &spec]);
    assert!(o.status.success(), "verify reads the catalog's tables:\n{}", text(&o));
    let said = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        said.contains(&format!("tables in the REST catalog at {}: ", catalog.url)) && said.contains("chain.blocks (blocks/)"),
        "verify names the catalog and each table's identifier:\n{said}"
    );
    // status and the report name each table's identifier, and the report's
    // snapshot is the one the catalog points at.
    let o = cli(&["status", &spec, "--format", "json"]);
    assert!(o.status.success(), "{}", text(&o));
    let status: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(status["catalog"]["uri"], catalog.url.as_str(), "{status}");
    for t in TABLES {
        assert_eq!(status["catalog"]["tables"][t], format!("chain.{t}"), "{status}");
    }
    let o = cli(&["status", &spec]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("chain.transfers (transfers/)"),
        "{}",
        text(&o)
    );
    let o = cli(&["report", &spec, "--format", "json"]);
    assert!(o.status.success(), "{}", text(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    for line in report["tables"].as_array().unwrap() {
        let t = line["table"].as_str().unwrap();
        assert_eq!(line["catalog_identifier"], format!("chain.{t}"), "{line}");
        assert_eq!(
            line["snapshot_id"],
            tables[format!("chain.{t}")]["current_snapshot_id"],
            "{t}: {line}"
        );
    }
    let o = cli(&["report", &spec, "--out", &dir.path().join("page.html").display().to_string()]);
    assert!(o.status.success(), "{}", text(&o));
    let page = std::fs::read_to_string(dir.path().join("page.html")).unwrap();
    assert!(
        page.contains("blocks (catalog: chain.blocks)"),
        "the report's page names the identifier"
    );
    for f in crate::hostile::walk(&ice).into_iter().chain(crate::hostile::walk(&catalog.dir)) {
        assert_no_secret(&f.display().to_string(), &std::fs::read(&f).unwrap());
    }
}

/// On S3 (moto): every dataset and a decoded table committed through the
/// catalog, the run killed after the catalog applied a commit and run
/// again, read exactly through the catalog; the catalog's metadata is
/// under the job's prefix, and no hint is written.
#[test]
fn a_job_on_s3_commits_through_a_catalog_exactly_through_kill_9() {
    let s3 = crate::s3::S3::start("lake");
    let dir = tempfile::tempdir().unwrap();
    let catalog = RestCatalog::start_on(&dir.path().join("catalog"), Some(&s3.endpoint()));
    let pq = dir.path().join("pq");
    let url = s3.sim.url();
    let o = chainetl(&["run", &every_dataset(dir.path(), "ons3", &url, &pq, "parquet", "")]);
    assert!(o.status.success(), "{}", text(&o));
    let spec = every_dataset(
        dir.path(),
        "ons3",
        &url,
        Path::new(&format!("s3://{}/ice", s3.bucket)),
        "iceberg",
        &catalog.section("chain"),
    );
    let o = run_with(&mut s3.cmd_on(crash_bin("after-catalog-commit:2"), &[]), &["run", &spec, "-q"]);
    assert!(!o.status.success(), "the run should have died after a commit:\n{}", text(&o));
    s3.settle();
    let o = run_with(&mut s3.cmd(&[]), &["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let tables = catalog.read("chain", &TABLES);
    exact(&tables, "chain", &pq, &TABLES, "on S3 through the catalog");
    for t in TABLES {
        let location = tables[format!("chain.{t}")]["metadata_location"].as_str().unwrap().to_string();
        assert!(
            location.starts_with(&format!("s3://{}/ice/{t}/metadata/", s3.bucket)),
            "{t}: {location}"
        );
    }
    let keys = s3.download("ice", &dir.path().join("got"));
    assert!(
        keys.iter().all(|k| !k.ends_with("version-hint.text")),
        "the catalog is the pointer: {keys:?}"
    );
    let o = run_with(&mut s3.cmd(&[]), &["verify", &spec]);
    assert!(o.status.success(), "{}", text(&o));
}

/// The catalog fails the way catalogs do — 409s without applying, commits
/// applied and answered 504 or not answered at all, a 500, tokens that
/// expire every second — and no snapshot of any table holds a row twice
/// or misses one, and the end is the parquet export's rows.
#[test]
fn a_catalogs_409s_lost_answers_and_expiring_tokens_leave_no_row_twice_and_none_missing() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let catalog = RestCatalog::start(&dir.path().join("catalog"));
    let (pq, ice) = (dir.path().join("pq"), dir.path().join("ice"));
    let o = chainetl(&["run", &every_dataset(dir.path(), "faults", &sim.url(), &pq, "parquet", "")]);
    assert!(o.status.success(), "{}", text(&o));
    let script = [
        "409",
        "apply-504",
        "ok",
        "apply-drop",
        "409",
        "500",
        "apply-504",
        "apply-504",
        "409",
        "ok",
        "apply-drop",
        "409",
        "apply-504",
    ];
    catalog.faults(serde_json::json!({"commit": script, "token_ttl": 1}));
    let spec = every_dataset(dir.path(), "faults", &sim.url(), &ice, "iceberg", &catalog.section("chain"));
    let o = cli(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(catalog.faults_left(), 0, "every scripted answer was given");
    assert!(catalog.requests()["token"] >= 2, "tokens expired and were fetched again");
    exact(
        &catalog.read("chain", &TABLES),
        "chain",
        &pq,
        &TABLES,
        "through the catalog's failures",
    );
    let o = cli(&["verify", &spec]);
    assert!(o.status.success(), "{}", text(&o));
}

/// A run killed at each step of a catalog commit — before it is sent,
/// after it is applied (before the state records it) — and run again:
/// every table exact, no unit committed twice.
#[test]
fn a_run_killed_before_or_after_a_catalog_commit_is_exact_when_run_again() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let catalog = RestCatalog::start(&dir.path().join("catalog"));
    let pq = dir.path().join("pq");
    let o = chainetl(&["run", &every_dataset(dir.path(), "killed", &sim.url(), &pq, "parquet", "")]);
    assert!(o.status.success(), "{}", text(&o));
    for (i, point) in ["before-catalog-commit:3", "after-catalog-commit:3", "after-catalog-commit:9"]
        .iter()
        .enumerate()
    {
        let ns = format!("killed{i}");
        let ice = dir.path().join(&ns);
        let spec = every_dataset(dir.path(), &ns, &sim.url(), &ice, "iceberg", &catalog.section(&ns));
        let o = run_with(&mut crash_bin(point), &["run", &spec]);
        assert!(!o.status.success(), "{point}: the run was not killed:\n{}", text(&o));
        let o = cli(&["run", &spec]);
        assert!(o.status.success(), "{point}: {}", text(&o));
        exact(&catalog.read(&ns, &TABLES), &ns, &pq, &TABLES, point);
        let o = cli(&["verify", &spec]);
        assert!(o.status.success(), "{point}: {}", text(&o));
    }
}

/// A refused credential, and one whose variable is unset, end the run
/// with exit 2 naming the variable, and never print the secret; before
/// any request to the service (there is none to answer: one would fail
/// the run with exit 1).
#[test]
fn a_refused_or_missing_catalog_credential_exits_2_naming_its_variable_not_its_value() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = RestCatalog::start(&dir.path().join("catalog"));
    let ice = dir.path().join("ice");
    let spec = every_dataset(
        dir.path(),
        "cred",
        &crate::changing::dead_url(),
        &ice,
        "iceberg",
        &catalog.section("chain"),
    );
    let wrong = "chainetl-test:Wrong-secret-Value-1234";
    let o = bin().args(["run", &spec]).env("CAT_CRED", wrong).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("$CAT_CRED"), "{}", text(&o));
    assert!(!text(&o).contains("Wrong-secret-Value-1234"), "{}", text(&o));
    let o = bin().args(["run", &spec]).env_remove("CAT_CRED").output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("CAT_CRED, which is not set"), "{}", text(&o));
}

/// A job `name` of ethereum's events (and base's too where `both`) into
/// `out`, Iceberg, with `extra_output` (a catalog).
fn events(dir: &Path, name: &str, url: &str, out: &Path, format: &str, both: bool, extra_output: &str) -> String {
    let mut body = format!(
        "name = \"{name}\"\n[source]\nbase_url = \"{url}\"\n[output]\nuri = \"{}\"\nformat = \"{format}\"\n{extra_output}\n\
         [[export]]\ndataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000199\"\nchunk_blocks = 50\n",
        out.display()
    );
    if both {
        body.push_str("[[export]]\ndataset = \"events\"\nchains = [\"base\"]\nwindow = \"20000000..20000199\"\nchunk_blocks = 50\n");
    }
    write_spec(dir, &format!("{name}-{format}-{both}-{}.toml", !extra_output.is_empty()), &body)
}

/// Runs `args` with the catalog's credential and returns its JSON summary.
fn summary_of(args: &[&str]) -> Value {
    let o = cli(args);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)))
}

/// A finished parquet job and a finished Delta job each gain
/// `format = "iceberg"` and `[output.catalog]` in one change: the
/// conversion and the registration are one run with no request to the
/// service (it is not even reachable), the catalog's table is the job's
/// rows exactly, and `verify` passes.
#[test]
fn a_parquet_or_delta_job_converted_to_iceberg_with_a_catalog_is_registered_in_the_same_run() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let catalog = RestCatalog::start(&dir.path().join("catalog"));
    let pq = dir.path().join("pq");
    let o = chainetl(&["run", &events(dir.path(), "conv", &sim.url(), &pq, "parquet", false, "")]);
    assert!(o.status.success(), "{}", text(&o));
    for from in ["parquet", "delta"] {
        let out = dir.path().join(from);
        let o = chainetl(&["run", &events(dir.path(), from, &sim.url(), &out, from, false, "")]);
        assert!(o.status.success(), "{}", text(&o));
        let ns = format!("from_{from}");
        let to = events(
            dir.path(),
            from,
            &crate::changing::dead_url(),
            &out,
            "iceberg",
            false,
            &catalog.section(&ns),
        );
        let summary = summary_of(&["run", &to, "--summary", "json"]);
        assert_eq!(
            summary["requests"], 0,
            "{from}: converting and registering ask the service nothing: {summary}"
        );
        exact(
            &catalog.read(&ns, &["events"]),
            &ns,
            &pq,
            &["events"],
            &format!("converted from {from}"),
        );
        let o = cli(&["verify", &to]);
        assert!(o.status.success(), "{from}: {}", text(&o));
        assert!(
            !out.join("events/metadata/version-hint.text").exists(),
            "{from}: the catalog is the pointer, not a hint"
        );
    }
}

/// A finished job of the file-system layout gains `[output.catalog]`: its
/// table is registered with no request to the service, read exactly
/// through the catalog, and no hint is left to show an older table; the
/// catalog's commits go on from it; the catalog removed again, the folder
/// carries on from the catalog's last commit, read through its hint.
#[test]
fn a_finished_iceberg_job_gains_a_catalog_with_no_request_and_loses_it_with_every_row_still_read() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let catalog = RestCatalog::start(&dir.path().join("catalog"));
    let (pq, ice) = (dir.path().join("pq"), dir.path().join("ice"));
    for both in [false, true] {
        let o = chainetl(&[
            "run",
            &events(dir.path(), "mind", &sim.url(), &pq.join(both.to_string()), "parquet", both, ""),
        ]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let folder = events(dir.path(), "mind", &sim.url(), &ice, "iceberg", false, "");
    let o = chainetl(&["run", &folder]);
    assert!(o.status.success(), "{}", text(&o));

    let with = events(dir.path(), "mind", &sim.url(), &ice, "iceberg", false, &catalog.section("chain"));
    let summary = summary_of(&["run", &with, "--summary", "json"]);
    assert_eq!(summary["requests"], 0, "registering asks the service nothing: {summary}");
    assert_eq!(catalog.requests().get("table_register"), Some(&1), "{:?}", catalog.requests());
    assert!(
        !ice.join("events/metadata/version-hint.text").exists(),
        "no hint left behind the catalog"
    );
    exact(
        &catalog.read("chain", &["events"]),
        "chain",
        &pq.join("false"),
        &["events"],
        "registered",
    );

    // The catalog's commits go on from the registered table.
    let more = events(dir.path(), "mind", &sim.url(), &ice, "iceberg", true, &catalog.section("chain"));
    let o = cli(&["run", &more]);
    assert!(o.status.success(), "{}", text(&o));
    exact(
        &catalog.read("chain", &["events"]),
        "chain",
        &pq.join("true"),
        &["events"],
        "committed through the catalog",
    );
    let o = cli(&["verify", &more]);
    assert!(o.status.success(), "{}", text(&o));

    // Removed: the folder carries on from the catalog's last commit.
    let without = events(dir.path(), "mind", &crate::changing::dead_url(), &ice, "iceberg", true, "");
    let summary = summary_of(&["run", &without, "--summary", "json"]);
    assert_eq!(summary["requests"], 0, "{summary}");
    let doc = crate::iceberg_format::check(&ice.join("events"), keys_of("events"), Some(&pq.join("true").join("events")));
    crate::iceberg_format::every_snapshot_exact(&doc, "the catalog removed");
    assert_eq!(
        doc["rows"], doc["parquet_rows"],
        "the folder's readers see every row the catalog committed"
    );
    let o = chainetl(&["verify", &without]);
    assert!(o.status.success(), "{}", text(&o));
}

/// The names and sizes of every file under `dir`.
fn listing(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out: Vec<(PathBuf, u64)> = crate::hostile::walk(dir)
        .into_iter()
        .filter(|p| !p.components().any(|c| c.as_os_str() == "_chainetl"))
        .map(|p| {
            let len = std::fs::metadata(&p).unwrap().len();
            (p, len)
        })
        .collect();
    out.sort();
    out
}

/// Another engine appends to a table of the file-system layout (through
/// its own SQL catalog, metadata `00000-<uuid>.metadata.json`): the next
/// run, `compact` and `vacuum` refuse with exit 2, name the file and say
/// to commit through a catalog, and change nothing in the table.
#[test]
fn another_engines_commit_to_a_folder_table_is_refused_by_run_compact_and_vacuum_changing_nothing() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let ice = dir.path().join("ice");
    let blocks = |chains: &str| {
        let body = format!(
            "name = \"other\"\n[source]\nbase_url = \"{}\"\n[output]\nuri = \"{}\"\nformat = \"iceberg\"\n\
             [[export]]\ndataset = \"blocks\"\nchains = [{chains}]\nwindow = \"20000000..20000199\"\nchunk_blocks = 50\n",
            sim.url(),
            ice.display()
        );
        write_spec(dir.path(), &format!("other-{}.toml", chains.len()), &body)
    };
    let spec = blocks("\"ethereum\"");
    let o = chainetl(&["run", &spec, "--set", "output.compact=false"]);
    assert!(o.status.success(), "{}", text(&o));
    let script = format!("{}/tests/rest_catalog.py", env!("CARGO_MANIFEST_DIR"));
    let o = Command::new(python())
        .args([&script, "append-elsewhere", "--table-dir"])
        .arg(ice.join("blocks"))
        .arg("--db")
        .arg(dir.path().join("elsewhere.db"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let before = listing(&ice);
    let grown = blocks("\"ethereum\", \"base\"");
    for args in [
        vec!["run", grown.as_str()],
        vec!["compact", spec.as_str()],
        vec!["vacuum", spec.as_str()],
    ] {
        let o = chainetl(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains(".metadata.json was written by another writer"),
            "{args:?}: {}",
            text(&o)
        );
        assert!(text(&o).contains("[output.catalog]"), "{args:?}: {}", text(&o));
        assert_eq!(listing(&ice), before, "{args:?} changed the table");
    }
}

/// A `--follow` run into Iceberg with short `history.expire.*` and
/// `write.metadata.*` properties keeps, while it runs, its current
/// metadata to the snapshots they allow and `metadata/` to the versions
/// they allow; stopped, every snapshot kept is exact and the rows are
/// every block followed.
#[test]
fn a_follow_into_iceberg_keeps_its_metadata_within_the_tables_properties_while_it_runs() {
    use chainetl::sim::data::SimData;
    use chainetl::vocab::chain::Chain;
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let data = SimData::new(42, 30);
    let start = crate::schedule::head_at(&data, Chain::Base, "2025-06-01T00:00:00Z") - 100;
    let spec = write_spec(
        dir.path(),
        "follow.toml",
        &format!(
            "name = \"bounded\"\npoll_interval = \"1s\"\nroll_interval = \"1s\"\n[source]\nbase_url = \"{}\"\n[output]\nuri = \"{}\"\n\
             format = \"iceberg\"\ncompact = false\n[output.table_properties]\n\"history.expire.max-snapshot-age-ms\" = \"1500\"\n\
             \"history.expire.min-snapshots-to-keep\" = \"2\"\n\"write.metadata.previous-versions-max\" = \"3\"\n\
             [[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nincremental = true\nstart = {start}\nconfirmations = 5\nchunk_blocks = 16\n",
            sim.url(),
            out.display()
        ),
    );
    let child = bin()
        .args(["run", &spec, "--follow", "--progress-secs", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let metadata = out.join("blocks/metadata");
    let (mut most_snapshots, mut most_versions, mut newest_seen, mut most_txn_keys) = (0, 0, 0, 0);
    // The transaction ids kept in the table's properties past their
    // snapshots' expiry.
    let txn_keys = |doc: &Value| {
        doc["properties"]
            .as_object()
            .map_or(0, |p| p.keys().filter(|k| k.starts_with("chainetl.txn.")).count())
    };
    for _ in 0..10 {
        std::thread::sleep(Duration::from_millis(1200));
        crate::schedule::post(&sim, "/_sim/advance?secs=30");
        let Ok(hint) = std::fs::read_to_string(metadata.join("version-hint.text")) else {
            continue;
        };
        let newest: u64 = hint.trim().parse().unwrap();
        newest_seen = newest_seen.max(newest);
        let Ok(bytes) = std::fs::read(metadata.join(format!("v{newest}.metadata.json"))) else {
            continue;
        };
        let doc: Value = serde_json::from_slice(&bytes).unwrap();
        most_snapshots = most_snapshots.max(doc["snapshots"].as_array().map_or(0, Vec::len));
        most_txn_keys = most_txn_keys.max(txn_keys(&doc));
        let versions = std::fs::read_dir(&metadata)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".metadata.json"))
            .count();
        most_versions = most_versions.max(versions);
    }
    let stderr = crate::schedule::stop(child);
    assert!(newest_seen >= 6, "the follow committed often ({newest_seen} versions): {stderr}");
    // 1.5 s of 1 s rolls, the one current at the cutoff and the two kept
    // whatever their age: a few, where a follow kept every one before.
    assert!(most_snapshots <= 6, "at most the snapshots the properties keep: {most_snapshots}");
    // Three previous versions, the current one, and one a commit wrote
    // between two expiries.
    assert!(
        most_versions <= 6,
        "at most the metadata versions the properties keep: {most_versions}"
    );
    // Units published before their snapshots expire leave no id behind:
    // at most one a poll in flight, where each unit left one before.
    let hint = std::fs::read_to_string(metadata.join("version-hint.text")).unwrap();
    let last: Value = serde_json::from_slice(&std::fs::read(metadata.join(format!("v{}.metadata.json", hint.trim()))).unwrap()).unwrap();
    assert!(
        most_txn_keys <= 1 && txn_keys(&last) <= 1,
        "transaction ids kept past expiry: at most {most_txn_keys} while it ran, {} at the end: {}",
        txn_keys(&last),
        last["properties"]
    );
    let doc = crate::iceberg_format::check(&out.join("blocks"), keys_of("blocks"), None);
    crate::iceberg_format::every_snapshot_exact(&doc, "a bounded follow");
    assert_eq!(doc["versions"].as_array().unwrap().last().unwrap()["gaps"], 0, "{doc}");
}

/// Two jobs sharing the catalog's tables (one chain each) run at once,
/// killed after a commit the catalog applied, and run again at once: the
/// shared tables hold both jobs' rows exactly, every snapshot exact, and
/// `verify` passes for each.
#[test]
fn two_jobs_sharing_a_catalogs_tables_run_at_once_killed_and_run_again_are_both_exact() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let catalog = RestCatalog::start(&dir.path().join("catalog"));
    let (pq, ice) = (dir.path().join("pq"), dir.path().join("ice"));
    let o = chainetl(&["run", &events(dir.path(), "both", &sim.url(), &pq, "parquet", true, "")]);
    assert!(o.status.success(), "{}", text(&o));
    let job = |name: &str, chain: &str| {
        let body = format!(
            "name = \"{name}\"\n[source]\nbase_url = \"{}\"\nmax_concurrency = 2\n[output]\nuri = \"{}\"\nformat = \"iceberg\"\n{}\n\
             [[export]]\ndataset = \"events\"\nchains = [\"{chain}\"]\nwindow = \"20000000..20000199\"\nchunk_blocks = 25\n",
            sim.url(),
            ice.display(),
            catalog.section("chain")
        );
        write_spec(dir.path(), &format!("{name}.toml"), &body)
    };
    let specs = [job("job-a", "ethereum"), job("job-b", "base")];
    let at_once = |point: Option<&str>| -> Vec<std::process::Output> {
        let children: Vec<Child> = specs
            .iter()
            .map(|s| {
                let mut c = match point {
                    Some(p) => crash_bin(p),
                    None => bin(),
                };
                c.args(["run", s])
                    .env("CAT_CRED", format!("{CLIENT}:{SECRET}"))
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        children.into_iter().map(|c| c.wait_with_output().unwrap()).collect()
    };
    for o in at_once(Some("after-catalog-commit:4")) {
        assert!(!o.status.success(), "the run was not killed: {}", text(&o));
    }
    for o in at_once(None) {
        assert!(o.status.success(), "{}", text(&o));
    }
    exact(&catalog.read("chain", &["events"]), "chain", &pq, &["events"], "two jobs at once");
    for s in &specs {
        let o = cli(&["verify", s]);
        assert!(o.status.success(), "{}", text(&o));
    }
}
