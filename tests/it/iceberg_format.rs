//! `format = "iceberg"` through the CLI: every dataset read exactly by
//! pyiceberg (a static table and a SQL catalog's registered one), Polars
//! and DuckDB; conversions from and to parquet and delta with no request,
//! through kill -9; shards committing at once; a vacuum that expires the
//! snapshot recording a unit the job has not yet marked.

use crate::changing::{TABLES, body, dead_url, run_without_requests};
use crate::common::*;
use crate::delta::keys_of;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// What `tests/iceberg_check.py` says of the table at `table`, compared
/// with the Parquet folder `parquet` if given.
pub(crate) fn check(table: &Path, keys: &[&str], parquet: Option<&Path>) -> Value {
    check_with(table, keys, parquet, false)
}

/// [`check`]; `pyiceberg_polars`: Polars reads through pyiceberg (files
/// without field ids, adopted from another format).
fn check_with(table: &Path, keys: &[&str], parquet: Option<&Path>, pyiceberg_polars: bool) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/iceberg_check.py");
    let mut c = Command::new(python());
    if pyiceberg_polars {
        c.env("POLARS_PYICEBERG", "1");
    }
    c.arg(script).arg(table).arg(keys.join(","));
    if let Some(p) = parquet {
        c.arg(p);
    }
    let out = python_output(&mut c).expect("python with pyiceberg (run `make test`, which installs it)");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "iceberg_check.py on {}: {e}\n{}{}",
            table.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(doc.get("error").is_none(), "reading {}: {doc}", table.display());
    doc
}

/// Every snapshot of a table: no key twice; an `append` or `replace`
/// holds every key of its parent; (a batch job) never fewer rows than the
/// one before. Returns the current snapshot's rows.
pub(crate) fn every_snapshot_exact(doc: &Value, what: &str) -> u64 {
    let mut before = 0;
    for v in doc["versions"].as_array().unwrap() {
        let (rows, distinct) = (v["rows"].as_u64().unwrap(), v["distinct"].as_u64().unwrap());
        assert_eq!(rows, distinct, "{what}: snapshot {} holds a key twice: {v}", v["version"]);
        if matches!(v["operation"].as_str(), Some("append" | "replace")) {
            assert_eq!(
                v["holds_parent"], true,
                "{what}: snapshot {} lost its parent's rows: {v}",
                v["version"]
            );
        }
        assert!(
            rows >= before,
            "{what}: snapshot {} has fewer rows: {}",
            v["version"],
            doc["versions"]
        );
        before = rows;
    }
    before
}

/// Every table of `out` in Iceberg read exactly: every snapshot exact, the
/// current one's rows those of the parquet folders under `reference`, and
/// as many rows in Polars and a SQL catalog's registered table.
fn iceberg_equals(out: &Path, reference: &Path, adopted: bool) {
    for t in TABLES {
        let doc = check_with(&out.join(t), keys_of(t), Some(&reference.join(t)), adopted);
        let n = every_snapshot_exact(&doc, t);
        assert!(n > 0, "{t} has rows");
        assert_eq!(doc["rows"], doc["parquet_rows"], "{t}: the rows of the parquet export");
        assert_eq!(doc["polars_rows"].as_u64(), Some(n), "{t}: polars: {}", doc["polars_rows"]);
        assert_eq!(doc["catalog_rows"].as_u64(), Some(n), "{t}: a SQL catalog's registered table");
    }
}

/// DuckDB's iceberg extension (an environment of its own:
/// `scripts/iceberg-duckdb-venv`) on each table of `out`: its rows and
/// distinct keys.
fn duckdb_counts(out: &Path) -> Value {
    let venv = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/iceberg-duckdb-venv"))
        .output()
        .expect("scripts/iceberg-duckdb-venv");
    assert!(venv.status.success(), "{}", String::from_utf8_lossy(&venv.stderr));
    let py = String::from_utf8(venv.stdout).unwrap().trim().to_string();
    let tables: Vec<String> = TABLES.iter().map(|t| format!("{t}:{}", keys_of(t).join(","))).collect();
    let script = r#"
import importlib.util, json, os, sys
import duckdb
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
for ext in ["avro", "iceberg"]:
    pkg = os.path.dirname(importlib.util.find_spec("duckdb_extension_" + ext).origin)
    con.load_extension(os.path.join(pkg, "extensions", "v" + duckdb.__version__, ext + ".duckdb_extension"))
out = {}
for spec in sys.argv[2:]:
    t, keys = spec.split(":")
    q = f"select count(*), count(distinct ({keys})) from iceberg_scan(?)"
    out[t] = list(con.execute(q, [os.path.join(sys.argv[1], t)]).fetchall()[0])
print("RESULT " + json.dumps(out))
"#;
    let o = Command::new(&py).arg("-c").arg(script).arg(out).args(&tables).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("duckdb on {}: {stdout}{}", out.display(), String::from_utf8_lossy(&o.stderr)));
    serde_json::from_str(line).unwrap()
}

/// Every dataset (and a decoded table) exported to Iceberg tables reads
/// exactly in pyiceberg, a SQL catalog, Polars' own reader and DuckDB,
/// its files carrying field ids, its tables partitioned by chain and the
/// day of their timestamp; a re-run sends no request; the report names
/// each table's snapshot.
#[test]
fn every_dataset_exported_to_iceberg_reads_exactly_everywhere() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (pq, ice) = (dir.path().join("pq"), dir.path().join("ice"));
    let s = |name: &str, url: &str, uri: &Path, format: &str| write_spec(dir.path(), name, &body(url, &uri.to_string_lossy(), format, ""));
    for (name, uri, format) in [("pq.toml", &pq, "parquet"), ("ice.toml", &ice, "iceberg")] {
        let o = chainetl(&["run", &s(name, &sim.url(), uri, format)]);
        assert!(o.status.success(), "{}", text(&o));
    }
    iceberg_equals(&ice, &pq, false);
    let partitions = |t: &str| check(&ice.join(t), keys_of(t), None)["partitions"].clone();
    assert_eq!(
        partitions("blocks"),
        serde_json::json!(["chain=identity(chain)", "date=day(timestamp)"])
    );
    assert_eq!(
        partitions("events"),
        serde_json::json!(["chain=identity(chain)", "date=day(block_timestamp)"])
    );
    assert_eq!(
        partitions("transfers"),
        serde_json::json!(["chain=identity(chain)", "date=day(block_timestamp)"])
    );
    assert_eq!(
        partitions("portfolio"),
        serde_json::json!(["chain=identity(chain)", "date=identity(date)"])
    );
    assert_eq!(partitions("tokens"), serde_json::json!(["chain=identity(chain)"]));
    for t in TABLES {
        assert_eq!(
            check(&ice.join(t), keys_of(t), None)["field_ids"],
            true,
            "{t}: columns carry field ids"
        );
    }
    let duck = duckdb_counts(&ice);
    for t in TABLES {
        let want = read_rows(&pq.join(t), keys_of(t)).len() as u64;
        assert_eq!(duck[t], serde_json::json!([want, want]), "{t}: DuckDB reads each row once");
    }
    let spec = s("ice.toml", &sim.url(), &ice, "iceberg");
    run_without_requests(bin().args(["run", &spec, "--summary", "json"]));
    let v = chainetl(&["verify", &spec]);
    assert!(v.status.success(), "{}", text(&v));
    let r = chainetl(&["report", &spec, "--format", "json", "--out", "-"]);
    assert!(r.status.success(), "{}", text(&r));
    let doc: Value = serde_json::from_slice(&r.stdout).unwrap();
    for t in doc["tables"].as_array().unwrap() {
        assert!(t["snapshot_id"].is_i64() && t["sequence_number"].is_i64(), "{t}");
        assert!(t["delta_version"].is_null(), "{t}");
        let ops: Vec<&str> = t["last_commits"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["operation"].as_str())
            .collect();
        assert!(ops.contains(&"append"), "{t}");
    }
}

/// parquet → iceberg, killed at every step; iceberg → parquet, likewise;
/// then parquet → delta → iceberg → delta: each with no request, every
/// snapshot exact, `verify` clean.
#[test]
fn conversions_to_and_from_iceberg_are_made_from_the_files_through_kill_9() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, pq) = (dir.path().join("out"), dir.path().join("pq"));
    let s = |name: &str, url: &str, uri: &Path, format: &str| write_spec(dir.path(), name, &body(url, &uri.to_string_lossy(), format, ""));
    for (name, uri) in [("pq.toml", &pq), ("p.toml", &out)] {
        let o = chainetl(&["run", &s(name, &sim.url(), uri, "parquet")]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let to_iceberg = s("i-dead.toml", &dead_url(), &out, "iceberg");
    for point in [
        "conversion-recorded:1",
        "during-conversion:1",
        "during-conversion:3",
        "migration-recorded:1",
    ] {
        let o = crash_bin(point).args(["run", &to_iceberg, "-q"]).output().unwrap();
        assert!(!o.status.success(), "{point}: the run should have died\n{}", text(&o));
        for t in TABLES {
            if out.join(t).join("metadata/version-hint.text").exists() {
                every_snapshot_exact(&check_with(&out.join(t), keys_of(t), None, true), t);
            }
        }
    }
    let summary = run_without_requests(bin().args(["run", &to_iceberg, "--summary", "json"]));
    assert!(
        summary["conversion"].is_null() || summary["conversion"]["to"] == "iceberg",
        "{summary}"
    );
    iceberg_equals(&out, &pq, true);
    let v = chainetl(&["verify", &to_iceberg]);
    assert!(v.status.success(), "{}", text(&v));

    let to_parquet = s("p-dead.toml", &dead_url(), &out, "parquet");
    for point in [
        "conversion-recorded:1",
        "conversion-logs:1",
        "during-log-delete:2",
        "migration-recorded:1",
    ] {
        let o = crash_bin(point).args(["run", &to_parquet, "-q"]).output().unwrap();
        assert!(!o.status.success(), "{point}: the run should have died\n{}", text(&o));
    }
    run_without_requests(bin().args(["run", &to_parquet, "--summary", "json"]));
    for t in TABLES {
        assert!(!out.join(t).join("metadata").exists(), "{t}: its Iceberg metadata is gone");
        assert_eq!(read_rows(&out.join(t), keys_of(t)), read_rows(&pq.join(t), keys_of(t)), "{t}");
    }
    let v = chainetl(&["verify", &to_parquet]);
    assert!(v.status.success(), "{}", text(&v));

    // parquet → delta → iceberg → delta.
    for (name, format) in [("d1.toml", "delta"), ("i1.toml", "iceberg"), ("d2.toml", "delta")] {
        let spec = s(name, &dead_url(), &out, format);
        let summary = run_without_requests(bin().args(["run", &spec, "--summary", "json"]));
        assert_eq!(summary["conversion"]["to"], format, "{summary}");
        let v = chainetl(&["verify", &spec]);
        assert!(v.status.success(), "to {format}: {}", text(&v));
        for t in TABLES {
            let (has_log, has_metadata) = (out.join(t).join("_delta_log").exists(), out.join(t).join("metadata").exists());
            assert_eq!((has_log, has_metadata), (format == "delta", format == "iceberg"), "{t} in {format}");
        }
        if format == "iceberg" {
            iceberg_equals(&out, &pq, true);
        } else {
            for t in TABLES {
                let doc = crate::delta::check(&out.join(t), keys_of(t), Some(&pq.join(t)));
                assert_eq!(doc["rows"], doc["parquet_rows"], "{t} in delta");
            }
        }
    }
}

/// Three shards of one job committing to the same Iceberg tables at
/// once, then an unsharded run: one exact table, every snapshot exact.
#[test]
fn three_shards_at_once_then_an_unsharded_run_make_one_exact_iceberg_table() {
    crate::delta::three_shards_then_unsharded("iceberg", check, every_snapshot_exact);
}

/// A shard killed after its unit's snapshot and before its checkpoint
/// says so; the other shard commits on top; a vacuum then expires that
/// snapshot: the unit's transaction id moves into the table's
/// properties (a published unit's does not), so the next run finds it in
/// and adds nothing twice.
/// Metadata stays bounded.
#[test]
fn a_vacuum_keeps_the_record_of_units_whose_snapshots_it_expires() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (pq, ice) = (dir.path().join("pq"), dir.path().join("ice"));
    let body = |out: &Path, format: &str| {
        format!(
            "name = \"iv\"\n[source]\nbase_url = \"{}\"\nmax_concurrency = 1\n[output]\nuri = \"{}\"\nformat = \"{format}\"\ncompact = false\ndelta_retention = \"1s\"\n\
             [[export]]\ndataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000299\"\nchunk_blocks = 50\n",
            sim.url(),
            out.display()
        )
    };
    let o = chainetl(&["run", &write_spec(dir.path(), "pq.toml", &body(&pq, "parquet"))]);
    assert!(o.status.success(), "{}", text(&o));
    let spec = write_spec(dir.path(), "ice.toml", &body(&ice, "iceberg"));
    let o = crash_bin("after-delta-commit:1")
        .args(["run", &spec, "--shard", "1/2", "-q"])
        .output()
        .unwrap();
    assert!(!o.status.success(), "the shard should have died\n{}", text(&o));
    let o = chainetl(&["run", &spec, "--shard", "2/2"]);
    assert!(o.status.success(), "{}", text(&o));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let o = chainetl(&["vacuum", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(" metadata file") && !text(&o).contains("log file"),
        "an Iceberg vacuum names Iceberg's files: {}",
        text(&o)
    );
    let doc = check(&ice.join("events"), keys_of("events"), None);
    assert_eq!(
        doc["versions"].as_array().unwrap().len(),
        1,
        "snapshots expired: {}",
        doc["versions"]
    );
    let recorded = doc["properties"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| k.starts_with("chainetl.txn."))
        .count();
    // The dead shard's units committed and not published are recorded;
    // the published ones (the other shard's three) leave no id behind.
    assert!(
        (1..=3).contains(&recorded),
        "the expired snapshots' units not yet published are recorded, and only those: {}",
        doc["properties"]
    );
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let doc = check(&ice.join("events"), keys_of("events"), Some(&pq.join("events")));
    every_snapshot_exact(&doc, "events");
    assert_eq!(doc["rows"], doc["parquet_rows"], "each row once");
    let v = chainetl(&["verify", &spec]);
    assert!(v.status.success(), "{}", text(&v));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let o = chainetl(&["vacuum", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    // Only the current snapshot's manifest list and manifests are left;
    // metadata versions, up to the 100 the metadata log keeps.
    let names: Vec<String> = std::fs::read_dir(ice.join("events/metadata"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let lists = names.iter().filter(|n| n.starts_with("snap-")).count();
    let manifests = names.iter().filter(|n| n.ends_with("-m0.avro")).count();
    assert_eq!(lists, 1, "one snapshot's manifest list: {names:?}");
    assert!(manifests <= 7, "the current snapshot's manifests: {names:?}");
}

/// A finished Iceberg job changes its partitioning, then its hash
/// encoding, from its files with no request, killed at each step of each
/// rewrite: every snapshot exact; at the end the tables read as a fresh
/// export in the new layout does — the new partition spec, hashes as
/// bytes under new field ids — in pyiceberg, Polars and DuckDB.
#[test]
fn a_finished_iceberg_job_is_rewritten_into_a_new_layout_one_snapshot_a_table() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, fresh) = (dir.path().join("out"), dir.path().join("fresh"));
    let s =
        |name: &str, url: &str, uri: &Path, extra: &str| write_spec(dir.path(), name, &body(url, &uri.to_string_lossy(), "iceberg", extra));
    let o = chainetl(&["run", &s("i.toml", &sim.url(), &out, "")]);
    assert!(o.status.success(), "{}", text(&o));
    let binary = "partition_by = [\"chain\"]\nhash_encoding = \"binary\"";
    let o = chainetl(&["run", &s("fresh.toml", &sim.url(), &fresh, binary)]);
    assert!(o.status.success(), "{}", text(&o));
    for (name, extra) in [("chain.toml", "partition_by = [\"chain\"]"), ("binary.toml", binary)] {
        let spec = s(name, &dead_url(), &out, extra);
        for point in [
            "during-rewrite:3",
            "rewrite-published:1",
            "during-rewrite-commit:2",
            "rewrite-committed:1",
        ] {
            let o = crash_bin(point).args(["run", &spec, "-q"]).output().unwrap();
            assert!(!o.status.success(), "{point}: the run should have died\n{}", text(&o));
            for t in TABLES {
                every_snapshot_exact(&check(&out.join(t), keys_of(t), None), t);
            }
        }
        let summary = run_without_requests(bin().args(["run", &spec, "--summary", "json"]));
        assert!(
            summary["conversion"]["layout"].is_array() || summary["conversion"].is_null(),
            "{summary}"
        );
        let v = chainetl(&["verify", &spec]);
        assert!(v.status.success(), "{name}: {}", text(&v));
    }
    for t in TABLES {
        let got = check(&out.join(t), keys_of(t), None);
        let want = check(&fresh.join(t), keys_of(t), None);
        every_snapshot_exact(&got, t);
        assert_eq!(got["rows"], want["rows"], "{t}: the rows of a fresh export in the new layout");
        assert_eq!(got["types"], want["types"], "{t}: its types");
        assert_eq!(got["partitions"], serde_json::json!(["chain=identity(chain)"]), "{t}");
        assert_eq!(got["field_ids"], true, "{t}: rewritten files carry the new schema's ids");
        let n = got["rows"].as_array().unwrap().len() as u64;
        assert_eq!(got["polars_rows"].as_u64(), Some(n), "{t}: polars: {}", got["polars_rows"]);
        assert_eq!(got["catalog_rows"].as_u64(), Some(n), "{t}: catalog");
    }
    let duck = duckdb_counts(&out);
    for t in TABLES {
        let n = check(&fresh.join(t), keys_of(t), None)["rows"].as_array().unwrap().len() as u64;
        assert_eq!(duck[t], serde_json::json!([n, n]), "{t}: DuckDB reads each row once");
    }
}

/// [`crate::delta::fresh_after_compaction_and_vacuum`] in Iceberg.
#[test]
fn fresh_after_compaction_and_vacuum_adds_every_row_again_in_iceberg() {
    crate::delta::fresh_after_compaction_and_vacuum("iceberg", check);
}
