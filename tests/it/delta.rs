//! `output.format = "delta"`: tables every Delta reader reads, with the
//! rows of the parquet export; every version exactly once through kill -9
//! and shards.

use crate::common::*;
use std::path::Path;
use std::process::Command;

/// What `tests/delta_check.py` says of the table at `table` (natural key
/// `keys`), compared with the Parquet folder `parquet` if given.
pub(crate) fn check(table: &Path, keys: &[&str], parquet: Option<&Path>) -> serde_json::Value {
    check_with(table, keys, parquet, false)
}

/// [`check`], of every version or (`latest_only`) of the latest.
fn check_with(table: &Path, keys: &[&str], parquet: Option<&Path>, latest_only: bool) -> serde_json::Value {
    check_from(table, keys, parquet, latest_only, 0)
}

/// [`check_with`], of the versions from `from` on.
fn check_from(table: &Path, keys: &[&str], parquet: Option<&Path>, latest_only: bool, from: u64) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/delta_check.py");
    let mut c = Command::new(python());
    if latest_only {
        c.env("DELTA_CHECK_LATEST", "1");
    }
    c.env("DELTA_CHECK_FROM", from.to_string());
    c.arg(script).arg(table).arg(keys.join(","));
    if let Some(p) = parquet {
        c.arg(p);
    }
    let out = python_output(&mut c).expect("python with deltalake (run `make test`, which installs it)");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "delta_check.py on {}: {e}\n{}{}",
            table.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(doc.get("error").is_none(), "reading {}: {doc}", table.display());
    doc
}

/// The table's latest version, from its log's file names.
fn latest_version(table: &Path) -> u64 {
    std::fs::read_dir(table.join("_delta_log"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".json")?.parse().ok())
        .max()
        .unwrap()
}

/// Every version of a table: no key twice, and (a batch job) no version
/// with fewer rows than the one before. Returns the last version's rows.
pub(crate) fn every_version_exact(doc: &serde_json::Value, what: &str) -> u64 {
    let versions = doc["versions"].as_array().unwrap();
    let mut before = 0;
    for v in versions {
        let (rows, distinct) = (v["rows"].as_u64().unwrap(), v["distinct"].as_u64().unwrap());
        assert_eq!(rows, distinct, "{what}: version {} holds a key twice: {v}", v["version"]);
        assert!(
            rows >= before,
            "{what}: version {} has fewer rows than the one before: {}",
            v["version"],
            doc["versions"]
        );
        before = rows;
    }
    before
}

fn spec(sim: &Sim, out: &Path, format: &str, extra_output: &str) -> String {
    format!(
        r#"name = "dj"
[source]
base_url = "{url}"
max_concurrency = 4
[output]
uri = "{out}"
format = "{format}"
commit_pages = 1
{extra_output}
[[export]]
dataset = "events"
chains = ["ethereum", "base"]
window = "20000000..20000299"
chunk_blocks = 50
[[export]]
dataset = "events"
chains = ["polygon"]
window = "20000000..20000099"
decode = true
signatures = ["event Transfer(address indexed from, address indexed to, uint256 value)", "event Approval(address indexed owner, address indexed spender, uint256 value)"]
[[export]]
dataset = "blocks"
chains = ["ethereum"]
window = "20000000..20000199"
[[export]]
dataset = "portfolio"
chains = ["ethereum"]
wallets = ["0x28c6c06298d514db089934071355e5743bf21d60"]
window = "2025-05-20T00:00:00Z..2025-06-01T00:00:00Z"
[[export]]
dataset = "tokens"
chains = ["ethereum"]
addresses = ["0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", "0xdac17f958d2ee523a2206206994597c13d831ec7"]
"#,
        url = sim.url(),
        out = out.display(),
    )
}

/// The tables under `out` (folders with a Delta log), sorted.
fn tables(out: &Path) -> Vec<String> {
    let mut t: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("_delta_log").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    t.sort();
    t
}

pub(crate) fn keys_of(table: &str) -> &'static [&'static str] {
    match table {
        "blocks" => &["chain", "number"],
        "portfolio" => &["chain", "wallet_address", "date", "token_address"],
        "tokens" => &["chain", "address"],
        _ => &["chain", "block_number", "log_index"],
    }
}

#[test]
fn a_delta_export_reads_back_the_rows_of_the_parquet_export_in_every_reader() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (pq, dl) = (dir.path().join("pq"), dir.path().join("dl"));
    let o = chainetl(&[
        "run",
        &write_spec(dir.path(), "pq.toml", &spec(&sim, &pq, "parquet", "compact = false")),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = chainetl(&["run", &write_spec(dir.path(), "dl.toml", &spec(&sim, &dl, "delta", ""))]);
    assert!(o.status.success(), "{}", text(&o));
    let names = tables(&dl);
    assert!(names.len() >= 5, "a table per dataset and decoded table: {names:?}");
    for want in ["blocks", "events", "portfolio", "tokens"] {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
    for t in &names {
        let doc = check(&dl.join(t), keys_of(t), Some(&pq.join(t)));
        let rows = every_version_exact(&doc, t);
        assert!(rows > 0, "{t}: no rows");
        assert_eq!(doc["rows"], doc["parquet_rows"], "{t}: delta rows differ from the parquet export's");
        assert_eq!(doc["polars_rows"].as_u64(), Some(rows), "{t}: Polars read_delta");
        assert_eq!(doc["duckdb_rows"].as_u64(), Some(rows), "{t}: DuckDB over deltalake's dataset");
        let partitions: Vec<&str> = doc["partitions"].as_array().unwrap().iter().filter_map(|p| p.as_str()).collect();
        if t == "tokens" {
            assert_eq!(partitions, ["chain"], "{t}");
        } else {
            assert_eq!(partitions, ["chain", "date"], "{t}");
            assert_eq!(doc["types"]["date"], "date32[day]", "{t}: date typed as a date");
        }
    }
    // A re-run adds nothing: every unit's files are in, and the log says so.
    let before: Vec<_> = names
        .iter()
        .map(|t| check(&dl.join(t), keys_of(t), None)["versions"].as_array().unwrap().len())
        .collect();
    let o = chainetl(&["run", &dir.path().join("dl.toml").to_string_lossy()]);
    assert!(o.status.success(), "{}", text(&o));
    let after: Vec<_> = names
        .iter()
        .map(|t| check(&dl.join(t), keys_of(t), None)["versions"].as_array().unwrap().len())
        .collect();
    assert_eq!(before, after, "a re-run of a done job commits nothing");
}

#[test]
fn a_delta_export_is_exact_at_every_version_after_kill_9_at_every_point() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (pq, dl) = (dir.path().join("pq"), dir.path().join("dl"));
    let body = |out: &Path, format: &str| {
        format!(
            "name = \"dk\"\n[source]\nbase_url = \"{}\"\nmax_concurrency = 2\npage_size = 200\n[output]\nuri = \"{}\"\nformat = \"{format}\"\ncommit_pages = 1\ncompact = false\n\
             [[export]]\ndataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000199\"\nchunk_blocks = 50\n",
            sim.url(),
            out.display()
        )
    };
    let o = chainetl(&["run", &write_spec(dir.path(), "pq.toml", &body(&pq, "parquet"))]);
    assert!(o.status.success(), "{}", text(&o));
    let dl_spec = write_spec(dir.path(), "dl.toml", &body(&dl, "delta"));
    for point in [
        "after-file-write:2",
        "during-checkpoint:3",
        "before-delta-commit:2",
        "after-delta-commit:3",
        "before-delta-commit:5",
    ] {
        let o = crash_bin(point).args(["run", &dl_spec]).output().unwrap();
        assert!(!o.status.success(), "{point}: the run should have died\n{}", text(&o));
    }
    let o = chainetl(&["run", &dl_spec]);
    assert!(o.status.success(), "{}", text(&o));
    // The last crash came between a checkpoint and its Delta commit.
    assert!(text(&o).contains("not yet added to the Delta log"), "{}", text(&o));
    let doc = check(&dl.join("events"), keys_of("events"), Some(&pq.join("events")));
    every_version_exact(&doc, "events");
    assert_eq!(
        doc["rows"], doc["parquet_rows"],
        "after the crashes, the last version holds every row once"
    );
    // verify and status read delta jobs too.
    let v = chainetl(&["verify", &dl_spec]);
    assert!(v.status.success(), "{}", text(&v));
    let st = chainetl(&["status", &dl_spec, "--format", "json"]);
    assert!(st.status.success(), "{}", text(&st));
    // A file of the table's current version gone: verify names it.
    let victim = parquet_files(&dl.join("events"))
        .into_iter()
        .find(|p| !p.to_string_lossy().contains("_delta_log"))
        .unwrap();
    std::fs::remove_file(&victim).unwrap();
    let v = chainetl(&["verify", &dl_spec]);
    assert_eq!(v.status.code(), Some(1), "{}", text(&v));
    assert!(text(&v).contains("Delta table's current version"), "{}", text(&v));
    // --repair exports the unit again, and its new files replace the
    // old in one commit: every version it makes holds every row once
    // (the versions before it name the deleted file).
    let before = latest_version(&dl.join("events"));
    let r = chainetl(&["verify", &dl_spec, "--repair"]);
    assert!(r.status.success(), "{}", text(&r));
    let doc = check_from(&dl.join("events"), keys_of("events"), Some(&pq.join("events")), false, before + 1);
    let versions = doc["versions"].as_array().unwrap();
    assert!(!versions.is_empty(), "the repair committed: {doc}");
    let want = doc["parquet_rows"].as_array().unwrap().len() as u64;
    for v in versions {
        assert_eq!(v["rows"].as_u64(), Some(want), "version {} during the repair: {v}", v["version"]);
        assert_eq!(v["rows"], v["distinct"], "version {}: a key twice", v["version"]);
    }
    assert_eq!(doc["rows"], doc["parquet_rows"]);
    let v = chainetl(&["verify", &dl_spec]);
    assert!(v.status.success(), "after the repair: {}", text(&v));
}

#[test]
fn three_shards_at_once_then_an_unsharded_run_make_one_exact_table() {
    three_shards_then_unsharded("delta", check, every_version_exact);
}

/// Three shards of one job committing to the same `format` tables at
/// once, then an unsharded run: one table, each version exact (`exact`,
/// over what `check` reads), the last holding the parquet export's rows.
pub(crate) fn three_shards_then_unsharded(
    format: &str,
    check: fn(&Path, &[&str], Option<&Path>) -> serde_json::Value,
    exact: fn(&serde_json::Value, &str) -> u64,
) {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (pq, out) = (dir.path().join("pq"), dir.path().join("out"));
    let body = |out: &Path, format: &str| {
        format!(
            "name = \"ds\"\n[source]\nbase_url = \"{}\"\nmax_concurrency = 2\n[output]\nuri = \"{}\"\nformat = \"{format}\"\ncommit_pages = 1\ncompact = false\n\
             [[export]]\ndataset = \"events\"\nchains = [\"ethereum\", \"base\"]\nwindow = \"20000000..20000599\"\nchunk_blocks = 50\n",
            sim.url(),
            out.display()
        )
    };
    let o = chainetl(&["run", &write_spec(dir.path(), "pq.toml", &body(&pq, "parquet"))]);
    assert!(o.status.success(), "{}", text(&o));
    let spec = write_spec(dir.path(), "out.toml", &body(&out, format));
    let shards: Vec<_> = (1..=3)
        .map(|k| {
            bin()
                .args(["run", &spec, "--shard", &format!("{k}/3")])
                .env_remove("RUST_LOG")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for s in shards {
        let o = s.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
    }
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let doc = check(&out.join("events"), keys_of("events"), Some(&pq.join("events")));
    exact(&doc, "events");
    assert_eq!(doc["rows"], doc["parquet_rows"]);
    let v = chainetl(&["verify", &spec]);
    assert!(v.status.success(), "{}", text(&v));
}

#[test]
fn delta_specs_are_checked_before_anything_is_written() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let base = |format: &str| {
        format!(
            "name = \"dv\"\n[source]\nbase_url = \"{}\"\n[output]\nuri = \"{}\"\nformat = \"{format}\"\n\
             [[export]]\ndataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000009\"\n",
            sim.url(),
            out.display()
        )
    };
    let o = chainetl(&["run", &write_spec(dir.path(), "orc.toml", &base("orc"))]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("parquet, delta or iceberg"), "{}", text(&o));
    assert!(!out.exists(), "nothing written for a bad spec");
    // A job started as parquet goes on as delta, its files adopted (see
    // tests/it/changing.rs), unless something else changed too.
    let o = chainetl(&["run", &write_spec(dir.path(), "p.toml", &base("parquet"))]);
    assert!(o.status.success(), "{}", text(&o));
    let other = base("delta").replace("20000000..20000009", "20000000..20000019");
    let o = chainetl(&["run", &write_spec(dir.path(), "d.toml", &other)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("output.format") && text(&o).contains("--fresh"), "{}", text(&o));
    assert!(!out.join("blocks/_delta_log").exists());
    // Two jobs share a delta output: one that writes hashes as binary is
    // refused before it writes anything, naming the other job and both
    // encodings.
    let shared = dir.path().join("shared");
    let job = |name: &str, extra: &str| {
        format!(
            "name = \"{name}\"\n[source]\nbase_url = \"{}\"\n[output]\nuri = \"{}\"\nformat = \"delta\"\n{extra}\n\
             [[export]]\ndataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000009\"\n",
            sim.url(),
            shared.display()
        )
    };
    let o = chainetl(&["run", &write_spec(dir.path(), "hex.toml", &job("hex", ""))]);
    assert!(o.status.success(), "{}", text(&o));
    let o = chainetl(&[
        "run",
        &write_spec(dir.path(), "bin.toml", &job("bin", "hash_encoding = \"binary\"")),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("job `hex`") && text(&o).contains("hash_encoding: \"binary\" here, \"hex\" there"),
        "{}",
        text(&o)
    );
    assert!(
        !parquet_files(&shared.join("blocks"))
            .iter()
            .any(|p| p.to_string_lossy().contains("bin-"))
    );
}

#[test]
fn a_delta_export_on_s3_is_exact_at_every_version_after_kill_9() {
    let s3 = crate::s3::S3::start("bkt-delta");
    let dir = tempfile::tempdir().unwrap();
    let pq = dir.path().join("pq");
    let body = |uri: &str, format: &str| {
        // The parquet reference is left as written; the delta job compacts.
        let compact = if format == "parquet" { "false" } else { "true" };
        format!(
            "name = \"d3\"\n[source]\nbase_url = \"{}\"\nmax_concurrency = 4\npage_size = 200\n[output]\nuri = \"{uri}\"\nformat = \"{format}\"\ncommit_pages = 1\ncompact = {compact}\n\
             [[export]]\ndataset = \"events\"\nchains = [\"ethereum\", \"base\"]\nwindow = \"20000000..20000299\"\nchunk_blocks = 50\n",
            s3.sim.url()
        )
    };
    let o = chainetl(&["run", &write_spec(dir.path(), "pq.toml", &body(&pq.to_string_lossy(), "parquet"))]);
    assert!(o.status.success(), "{}", text(&o));
    let spec = write_spec(dir.path(), "s3.toml", &body(&format!("s3://{}/lake", s3.bucket), "delta"));
    // A store that says it cannot create objects only if absent is
    // refused before anything is written.
    let o = s3
        .cmd(&["run", &spec, "-q"])
        .env("AWS_CONDITIONAL_PUT", "disabled")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("AWS_CONDITIONAL_PUT"), "{}", text(&o));
    assert!(s3.download("lake", &dir.path().join("nothing")).is_empty(), "nothing written");
    for point in [
        "before-delta-commit:3",
        "after-delta-commit:2",
        "after-file-write:4",
        "compact-swapping:1",
        "compact-published:1",
        "compact-committed:1",
    ] {
        let o = s3.cmd_on(crash_bin(point), &["run", &spec, "-q"]).output().unwrap();
        assert!(!o.status.success(), "{point}: the run should have died\n{}", text(&o));
    }
    let o = s3.cmd(&["run", &spec, "-q"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let local = dir.path().join("copy");
    let keys = s3.download("lake/events", &local);
    assert!(keys.iter().any(|k| k.starts_with("_delta_log/")), "{keys:?}");
    let doc = check(&local, keys_of("events"), Some(&pq.join("events")));
    every_version_exact(&doc, "events on S3");
    assert_eq!(doc["rows"], doc["parquet_rows"]);
    assert!(
        doc["operations"].as_array().unwrap().iter().any(|o| o == "OPTIMIZE"),
        "compacted in one commit a partition: {:?}",
        doc["operations"]
    );
}

#[test]
fn fresh_removes_the_jobs_files_in_one_commit_and_never_reuses_a_name() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (pq, dl) = (dir.path().join("pq"), dir.path().join("dl"));
    let body = |out: &Path, format: &str| {
        format!(
            "name = \"df\"\n[source]\nbase_url = \"{}\"\nmax_concurrency = 2\n[output]\nuri = \"{}\"\nformat = \"{format}\"\ncommit_pages = 1\ncompact = false\n\
             [[export]]\ndataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000199\"\nchunk_blocks = 50\n",
            sim.url(),
            out.display()
        )
    };
    let o = chainetl(&["run", &write_spec(dir.path(), "pq.toml", &body(&pq, "parquet"))]);
    assert!(o.status.success(), "{}", text(&o));
    let dl_spec = write_spec(dir.path(), "dl.toml", &body(&dl, "delta"));
    let o = chainetl(&["run", &dl_spec]);
    assert!(o.status.success(), "{}", text(&o));
    let first = check(&dl.join("events"), keys_of("events"), None);
    let before = first["versions"].as_array().unwrap().len();
    // Killed part-way through a --fresh, then a --fresh again.
    let o = crash_bin("during-checkpoint:2")
        .args(["run", &dl_spec, "--fresh"])
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", text(&o));
    let o = chainetl(&["run", &dl_spec, "--fresh"]);
    assert!(o.status.success(), "{}", text(&o));
    let doc = check(&dl.join("events"), keys_of("events"), Some(&pq.join("events")));
    assert_eq!(doc["rows"], doc["parquet_rows"], "the last version holds every row once");
    let versions = doc["versions"].as_array().unwrap();
    for v in versions {
        assert_eq!(v["rows"], v["distinct"], "a key twice at version {v}");
    }
    // The --fresh removed the job's rows in one commit: the version after
    // the first run's last is empty, none is partly removed.
    assert_eq!(versions[before]["rows"], 0, "{versions:?}");
    let old: std::collections::HashSet<&str> = first["files"].as_array().unwrap().iter().filter_map(|f| f.as_str()).collect();
    for f in doc["files"].as_array().unwrap().iter().filter_map(|f| f.as_str()) {
        assert!(!old.contains(f), "{f}: a name of the earlier version written again");
    }
}

/// A shard killed between a unit's last checkpoint and its Delta commit,
/// another shard finishing the period: the period must not close (and
/// drop the checkpoints) before every unit's files are in the table.
#[test]
fn a_period_closes_only_once_every_units_files_are_in_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let spec = write_spec(
        dir.path(),
        "al.toml",
        &format!(
            "name = \"al\"\n[source]\nbase_url = \"sim\"\n[source.sim]\nfrozen_at = \"2025-06-01T13:00:00Z\"\n[output]\nuri = \"{}\"\nformat = \"delta\"\n\
             commit_pages = 100000\ncommit_interval_secs = 3600\n[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"1d\"\nalign = \"day\"\nchunk_duration = \"12h\"\n",
            out.display()
        ),
    );
    let o = crash_bin("before-delta-commit:1")
        .args(["run", &spec, "--shard", "1/2", "-q"])
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", text(&o));
    for args in [&["run", &spec, "--shard", "2/2", "-q"][..], &["run", &spec, "-q"][..]] {
        let o = chainetl(args);
        assert!(o.status.success(), "{}", text(&o));
    }
    let doc = check(&out.join("blocks"), keys_of("blocks"), None);
    // A day of base blocks, one every 2 s.
    assert_eq!(every_version_exact(&doc, "blocks"), 43_200, "{:?}", doc["versions"]);
}

/// `vacuum` deletes only files removed longer ago than the retention (and
/// the job's files no version ever read, once as old); versions within
/// the retention stay readable; other jobs' files are never touched.
#[test]
fn vacuum_deletes_only_files_removed_longer_ago_than_the_retention() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let dl = dir.path().join("dl");
    let spec = write_spec(
        dir.path(),
        "dl.toml",
        &format!(
            "name = \"dvac\"\n[source]\nbase_url = \"{}\"\n[output]\nuri = \"{}\"\nformat = \"delta\"\ndelta_retention = \"3s\"\ncompact = false\n\
             [[export]]\ndataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000099\"\nchunk_blocks = 50\n",
            sim.url(),
            dl.display()
        ),
    );
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let first: Vec<_> = parquet_files(&dl.join("events"))
        .into_iter()
        .filter(|p| !p.to_string_lossy().contains("_delta_log"))
        .collect();
    // Another job's file, old: never the job's to delete.
    let other = dl.join("events/chain=ethereum/other-e0-events-ethereum-b1-2-000000.parquet");
    std::fs::copy(&first[0], &other).unwrap();
    let o = chainetl(&["run", &spec, "--fresh"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = chainetl(&["vacuum", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(first.iter().all(|p| p.exists()), "removed within the retention: kept");
    let doc = check(&dl.join("events"), keys_of("events"), None);
    let rows = doc["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["rows"].as_u64().unwrap())
        .max()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(4));
    let o = chainetl(&["vacuum", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains(&format!("deleted {} data files", first.len())), "{}", text(&o));
    assert!(first.iter().all(|p| !p.exists()), "removed longer ago than the retention: deleted");
    assert!(other.exists(), "another job's file");
    // The current version reads whole (versions older than the retention
    // need not).
    let after = check_with(&dl.join("events"), keys_of("events"), None, true);
    let last = after["versions"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["rows"].as_u64(), Some(rows), "{last}");
}

/// A job switched delta → parquet → delta, each time with `--fresh`:
/// parquet readers see each row once, the table's versions too, and no
/// file name of an earlier version is written again.
#[test]
fn switching_formats_with_fresh_keeps_every_reader_exact() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (pq, out) = (dir.path().join("pq"), dir.path().join("out"));
    let body = |out: &Path, format: &str| {
        format!(
            "name = \"dsw\"\n[source]\nbase_url = \"{}\"\n[output]\nuri = \"{}\"\nformat = \"{format}\"\ncompact = false\n\
             [[export]]\ndataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000099\"\nchunk_blocks = 50\n",
            sim.url(),
            out.display()
        )
    };
    let o = chainetl(&["run", &write_spec(dir.path(), "ref.toml", &body(&pq, "parquet"))]);
    assert!(o.status.success(), "{}", text(&o));
    let delta = write_spec(dir.path(), "d.toml", &body(&out, "delta"));
    let parquet = write_spec(dir.path(), "p.toml", &body(&out, "parquet"));
    let o = chainetl(&["run", &delta]);
    assert!(o.status.success(), "{}", text(&o));
    let first = check(&out.join("events"), keys_of("events"), None);
    let o = chainetl(&["run", &parquet, "--fresh"]);
    assert!(o.status.success(), "{}", text(&o));
    // The files it deleted left the Delta table first: its current version
    // names none of them, so a Delta reader of the folder still reads.
    let left = check_with(&out.join("events"), keys_of("events"), None, true);
    assert_eq!(left["files"].as_array().map(Vec::len), Some(0), "{left}");
    assert_eq!(left["versions"][0]["rows"].as_u64(), Some(0), "{left}");
    let cols = ["block_number", "log_index", "transaction_hash"];
    assert_eq!(
        read_rows(&out.join("events"), &cols),
        read_rows(&pq.join("events"), &cols),
        "parquet readers see each row once"
    );
    let o = chainetl(&["run", &delta, "--fresh"]);
    assert!(o.status.success(), "{}", text(&o));
    // (The parquet --fresh deleted the first delta files: a job leaving
    // delta keeps no time travel. The current version reads whole.)
    let doc = check_with(&out.join("events"), keys_of("events"), Some(&pq.join("events")), true);
    assert_eq!(doc["rows"], doc["parquet_rows"]);
    let last = doc["versions"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["rows"], last["distinct"], "{last}");
    let old: std::collections::HashSet<&str> = first["files"].as_array().unwrap().iter().filter_map(|f| f.as_str()).collect();
    for f in doc["files"].as_array().unwrap().iter().filter_map(|f| f.as_str()) {
        assert!(!old.contains(f), "{f}: a name of an earlier version written again");
    }
}

/// Compaction of a Delta table: each partition's swap is one commit
/// (inputs removed, outputs added, `dataChange = false`), so every version
/// holds every row once; kill -9 at every point of it, then a re-run,
/// finishes or undoes the swap without committing it twice. The replaced
/// files stay for the earlier versions until `vacuum`.
#[test]
fn compaction_swaps_each_partition_in_one_commit_through_kill_9_at_every_point() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (pq, dl) = (dir.path().join("pq"), dir.path().join("dl"));
    let body = |out: &Path, format: &str, extra: &str| {
        format!(
            "name = \"dc\"\n[source]\nbase_url = \"{}\"\nmax_concurrency = 2\npage_size = 200\n[output]\nuri = \"{}\"\nformat = \"{format}\"\ncommit_pages = 1\n{extra}\n\
             [[export]]\ndataset = \"events\"\nchains = [\"ethereum\", \"base\"]\nwindow = \"20000000..20000399\"\nchunk_blocks = 50\n",
            sim.url(),
            out.display()
        )
    };
    let o = chainetl(&["run", &write_spec(dir.path(), "pq.toml", &body(&pq, "parquet", "compact = false"))]);
    assert!(o.status.success(), "{}", text(&o));
    let dl_spec = write_spec(dir.path(), "dl.toml", &body(&dl, "delta", "delta_retention = \"3s\""));
    for point in [
        "compact-recorded:1",
        "compact-written:1",
        "compact-swapping:1",
        "compact-published:1",
        "compact-committed:1",
    ] {
        let o = crash_bin(point).args(["run", &dl_spec]).output().unwrap();
        assert!(!o.status.success(), "{point}: the run should have died\n{}", text(&o));
    }
    let o = chainetl(&["run", &dl_spec]);
    assert!(o.status.success(), "{}", text(&o));
    let doc = check(&dl.join("events"), keys_of("events"), Some(&pq.join("events")));
    every_version_exact(&doc, "events");
    assert_eq!(doc["rows"], doc["parquet_rows"], "the last version holds every row once");
    let live: Vec<&str> = doc["files"].as_array().unwrap().iter().filter_map(|f| f.as_str()).collect();
    assert!(
        !live.is_empty() && live.iter().all(|f| f.contains("dc-compacted-")),
        "every partition compacted: {live:?}"
    );
    let compactions = doc["operations"].as_array().unwrap().iter().filter(|o| *o == "OPTIMIZE").count();
    let partitions = live
        .iter()
        .filter_map(|f| f.rsplit_once('/').map(|(d, _)| d))
        .collect::<std::collections::BTreeSet<_>>();
    assert_eq!(
        compactions,
        partitions.len(),
        "one commit a partition, none twice: {:?}",
        doc["operations"]
    );
    for args in [&["verify", &dl_spec][..], &["status", &dl_spec][..], &["compact", &dl_spec][..]] {
        let o = chainetl(args);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
    }
    // A compacted file lost: --repair exports its units again, and their
    // files replace it in one commit — every version the repair makes
    // holds every row once (the versions before it name the lost file).
    let lost = live
        .iter()
        .find(|f| f.contains("/chain=base/"))
        .unwrap()
        .trim_start_matches("file://")
        .to_string();
    std::fs::remove_file(&lost).unwrap();
    let v = chainetl(&["verify", &dl_spec]);
    assert_eq!(v.status.code(), Some(1), "{}", text(&v));
    let before = latest_version(&dl.join("events"));
    let r = chainetl(&["verify", &dl_spec, "--repair"]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(text(&r).contains("replacing their earlier files"), "{}", text(&r));
    let repaired = check_from(&dl.join("events"), keys_of("events"), Some(&pq.join("events")), false, before + 1);
    let want = repaired["parquet_rows"].as_array().unwrap().len() as u64;
    assert!(!repaired["versions"].as_array().unwrap().is_empty());
    for v in repaired["versions"].as_array().unwrap() {
        assert_eq!(v["rows"].as_u64(), Some(want), "version {} during the repair: {v}", v["version"]);
        assert_eq!(v["rows"], v["distinct"], "version {}: a key twice", v["version"]);
    }
    assert_eq!(repaired["rows"], repaired["parquet_rows"]);
    let v = chainetl(&["verify", &dl_spec]);
    assert!(v.status.success(), "after the repair: {}", text(&v));
    let live: Vec<String> = repaired["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str().map(String::from))
        .collect();
    // The replaced files stay for the earlier versions, then vacuum
    // deletes them; the current version still reads whole.
    let written = parquet_files(&dl.join("events")).len();
    assert!(written > live.len(), "the replaced files are kept within the retention");
    std::thread::sleep(std::time::Duration::from_secs(4));
    let o = chainetl(&["vacuum", &dl_spec]);
    assert!(o.status.success(), "{}", text(&o));
    let left = parquet_files(&dl.join("events"))
        .into_iter()
        .filter(|p| !p.to_string_lossy().contains("_delta_log"))
        .count();
    assert_eq!(left, live.len(), "vacuum leaves the current version's files: {}", text(&o));
    let after = check_with(&dl.join("events"), keys_of("events"), Some(&pq.join("events")), true);
    assert_eq!(after["rows"], after["parquet_rows"]);
}

/// A compacted job whose unit files a vacuum deleted, then `--fresh`: the
/// units start over above every transaction version their tables
/// recorded, so none of their new files is taken for one already in.
#[test]
fn fresh_after_compaction_and_vacuum_adds_every_row_again() {
    fresh_after_compaction_and_vacuum("delta", check);
}

pub(crate) fn fresh_after_compaction_and_vacuum(format: &str, check: fn(&Path, &[&str], Option<&Path>) -> serde_json::Value) {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (pq, out) = (dir.path().join("pq"), dir.path().join("out"));
    let body = |out: &Path, format: &str| {
        format!(
            "name = \"fv\"\n[source]\nbase_url = \"{}\"\nmax_concurrency = 2\n[output]\nuri = \"{}\"\nformat = \"{format}\"\ndelta_retention = \"1s\"\n\
             [[export]]\ndataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000199\"\nchunk_blocks = 50\n",
            sim.url(),
            out.display()
        )
    };
    let o = chainetl(&["run", &write_spec(dir.path(), "pq.toml", &body(&pq, "parquet"))]);
    assert!(o.status.success(), "{}", text(&o));
    let spec = write_spec(dir.path(), "out.toml", &body(&out, format));
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let o = chainetl(&["vacuum", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let left = parquet_files(&out.join("events"));
    assert!(
        !left.is_empty() && left.iter().all(|f| f.to_string_lossy().contains("-compacted-")),
        "the vacuum left only compacted files: {left:?}"
    );
    let o = chainetl(&["run", &spec, "--fresh"]);
    assert!(o.status.success(), "{}", text(&o));
    let doc = check(&out.join("events"), keys_of("events"), Some(&pq.join("events")));
    assert_eq!(doc["rows"], doc["parquet_rows"], "every row again, once");
}
