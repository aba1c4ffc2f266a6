//! Derived tables made from the rows a finished job stored, with no
//! request to the service (the runs that derive point at a port nothing
//! listens on): decoding added to a raw events export keeping its raw
//! table, `u256` columns added to a decoding export. Each ends equal to a
//! fresh export of the new spec — rows, column types — in parquet and
//! Delta, exact through kill -9 at every step.

use crate::changing::{dead_url, run_without_requests};
use crate::common::*;
use crate::delta::{check, every_version_exact, keys_of};
use std::path::Path;

const TRANSFER: &str = "event Transfer(address indexed from, address indexed to, uint256 value)";
const DECODE: &str = "decode = true\nalso_raw = true\ntable = \"transfers\"";
const WIDE: &str = "decode = true\nalso_raw = true\ntable = \"transfers\"\nu256 = [\"decimal38\", \"binary\"]";

/// A spec of job `dv` into `uri` (with `output` keys): a raw events export
/// of ERC-20 transfers (with `decoding` added to it) and a blocks export.
fn body(url: &str, uri: &Path, format: &str, output: &str, decoding: &str) -> String {
    format!(
        r#"name = "dv"
[source]
base_url = "{url}"
max_concurrency = 4
max_retries = 1
[output]
uri = "{}"
format = "{format}"
{output}
[[export]]
dataset = "events"
chains = ["ethereum", "base"]
window = "20000000..20000299"
chunk_blocks = 50
signatures = ["{TRANSFER}"]
{decoding}
[[export]]
dataset = "blocks"
chains = ["ethereum"]
window = "20000000..20000199"
"#,
        uri.display()
    )
}

/// Table `t` under `out` holds the rows of `reference`'s, each as often,
/// with the same columns and types (DuckDB, hive partitions read from the
/// paths).
pub(crate) fn same_table(out: &Path, reference: &Path, t: &str) {
    let read = |p: &Path| format!("read_parquet('{}/{t}/**/*.parquet', hive_partitioning = true)", p.display());
    let describe = |p: &Path| {
        duckdb(&format!(
            "select column_name, column_type from (describe select * from {})",
            read(p)
        ))
    };
    assert_eq!(describe(out), describe(reference), "{t}: the fresh export's columns");
    for (a, b) in [(out, reference), (reference, out)] {
        let q = format!(
            "select count(*) from (select * from {} except all select * from {})",
            read(a),
            read(b)
        );
        assert_eq!(duckdb(&q)[0][0], "0", "{t}: rows differ from the fresh export's");
    }
    let got = read_rows(&out.join(t), keys_of(t));
    assert!(!got.is_empty(), "{t} has rows");
    assert_eq!(got, read_rows(&reference.join(t), keys_of(t)), "{t}: each key once");
}

#[test]
fn decoding_and_u256_columns_are_made_from_the_stored_raw_logs_with_no_request() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, fresh, wide) = (dir.path().join("out"), dir.path().join("fresh"), dir.path().join("wide"));
    // Hashes kept as bytes: read back as hex to be decoded.
    let binary = "hash_encoding = \"binary\"";
    let s = |name: &str, url: &str, uri: &Path, decoding: &str| write_spec(dir.path(), name, &body(url, uri, "parquet", binary, decoding));
    for (name, uri, decoding) in [("fresh.toml", &fresh, DECODE), ("wide.toml", &wide, WIDE), ("raw.toml", &out, "")] {
        let o = chainetl(&["run", &s(name, &sim.url(), uri, decoding)]);
        assert!(o.status.success(), "{name}: {}", text(&o));
    }
    assert!(!out.join("transfers").exists());
    // Without the raw table kept, the change is not one made from stored rows.
    let o = chainetl(&["run", &s("no-raw.toml", &dead_url(), &out, "decode = true\ntable = \"transfers\"")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--fresh"), "{}", text(&o));
    let new = s("new-dead.toml", &dead_url(), &out, DECODE);
    let p = chainetl(&["plan", &new]);
    assert!(p.status.success(), "{}", text(&p));
    assert!(
        text(&p).contains("from stored rows") && text(&p).contains("export[0].decode") && text(&p).contains("0 requests"),
        "{}",
        text(&p)
    );
    // kill -9 at every step; the last run finishes it.
    for point in [
        "rewrite-recorded:1",
        "during-rewrite:1",
        "rewrite-written:1",
        "during-rewrite-swap:1",
        "rewrite-checkpointed:1",
        "rewrite-applied:1",
    ] {
        let o = crash_bin(point).args(["run", &new, "-q"]).output().unwrap();
        assert!(!o.status.success(), "{point}: the run should have died\n{}", text(&o));
        let st = chainetl(&["status", &new, "--format", "json"]);
        assert!(text(&st).contains("rewrite"), "{point}: status names it\n{}", text(&st));
    }
    let summary = run_without_requests(bin().args(["run", &new, "--summary", "json"]));
    assert!(summary["conversion"]["layout"].is_array(), "finished by the next run: {summary}");
    for t in ["events", "transfers", "blocks"] {
        same_table(&out, &fresh, t);
    }
    let v = chainetl(&["verify", &new]);
    assert!(v.status.success(), "{}", text(&v));
    // Against the service: nothing left to fetch.
    let again = run_without_requests(bin().args(["run", &s("new.toml", &sim.url(), &out, DECODE), "--summary", "json"]));
    assert!(again["conversion"].is_null(), "{again}");

    // u256 columns: computed from the stored decimal text.
    let widen = s("wide-dead.toml", &dead_url(), &out, WIDE);
    let summary = run_without_requests(bin().args(["run", &widen, "--summary", "json"]));
    let layout = summary["conversion"]["layout"].to_string();
    assert!(layout.contains("export[0].u256"), "{summary}");
    assert!(summary["conversion"]["files"].as_u64() > Some(0), "{summary}");
    for t in ["events", "transfers", "blocks"] {
        same_table(&out, &wide, t);
    }
    let v = chainetl(&["verify", &widen]);
    assert!(v.status.success(), "{}", text(&v));
    let decimals = duckdb(&format!(
        "select count(*) from read_parquet('{}/transfers/**/*.parquet') where value_decimal38 is not null",
        out.display()
    ));
    assert_ne!(decimals[0][0], "0", "values computed, not nulls");
}

/// In Delta: the decoded table is created and its files added in one
/// commit, the raw table untouched; `u256` columns join the table's
/// schema (metadata only) and its files are written again in one commit;
/// every version holds each key once, through kill -9 at every step.
#[test]
fn a_delta_job_gains_its_decoded_table_from_its_raw_table_in_one_commit() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, fresh, wide) = (dir.path().join("out"), dir.path().join("fresh"), dir.path().join("wide"));
    let s = |name: &str, url: &str, uri: &Path, format: &str, decoding: &str| {
        write_spec(dir.path(), name, &body(url, uri, format, "compact = false", decoding))
    };
    for (name, uri, format, decoding) in [
        ("fresh.toml", &fresh, "parquet", DECODE),
        ("wide.toml", &wide, "parquet", WIDE),
        ("raw.toml", &out, "delta", ""),
    ] {
        let o = chainetl(&["run", &s(name, &sim.url(), uri, format, decoding)]);
        assert!(o.status.success(), "{name}: {}", text(&o));
    }
    let events_versions = check(&out.join("events"), keys_of("events"), None)["operations"]
        .as_array()
        .unwrap()
        .len();
    let new = s("new-dead.toml", &dead_url(), &out, "delta", DECODE);
    // A table where the decoded one would be made (another job's) is
    // refused before anything is recorded: its layout is not this job's.
    let log = out.join("transfers/_delta_log");
    std::fs::create_dir_all(&log).unwrap();
    std::fs::copy(
        out.join("events/_delta_log/00000000000000000000.json"),
        log.join("00000000000000000000.json"),
    )
    .unwrap();
    let o = chainetl(&["run", &new]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("a table is there already"), "{}", text(&o));
    assert!(!out.join("_chainetl/dv/migration.json").exists(), "refused before anything changed");
    std::fs::remove_dir_all(out.join("transfers")).unwrap();
    for point in [
        "during-rewrite:2",
        "rewrite-published:1",
        "during-rewrite-commit:1",
        "rewrite-committed:1",
    ] {
        let o = crash_bin(point).args(["run", &new, "-q"]).output().unwrap();
        assert!(!o.status.success(), "{point}: the run should have died\n{}", text(&o));
        if out.join("transfers/_delta_log").exists() {
            every_version_exact(&check(&out.join("transfers"), keys_of("transfers"), None), point);
        }
    }
    run_without_requests(bin().args(["run", &new, "--summary", "json"]));
    for (t, reference) in [("events", &fresh), ("transfers", &fresh), ("blocks", &fresh)] {
        let doc = check(&out.join(t), keys_of(t), Some(&reference.join(t)));
        every_version_exact(&doc, t);
        assert_eq!(doc["rows"], doc["parquet_rows"], "{t}: the rows of the fresh export");
    }
    let ops = check(&out.join("events"), keys_of("events"), None)["operations"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(ops, events_versions, "the raw table is not touched");
    // New rows for a reader following the table: a data change.
    let ops = check(&out.join("transfers"), keys_of("transfers"), None)["operations"].clone();
    assert_eq!(ops.as_array().unwrap().len(), 2, "created, then its rows in one commit: {ops}");
    assert_ne!(ops[1], "OPTIMIZE", "{ops}");
    let v = chainetl(&["verify", &new]);
    assert!(v.status.success(), "{}", text(&v));
    // u256 columns added: the table gains them and its files are written again.
    let widen = s("wide-dead.toml", &dead_url(), &out, "delta", WIDE);
    run_without_requests(bin().args(["run", &widen, "--summary", "json"]));
    let doc = check(&out.join("transfers"), keys_of("transfers"), Some(&wide.join("transfers")));
    every_version_exact(&doc, "transfers");
    assert_eq!(doc["rows"], doc["parquet_rows"], "the rows of the fresh export");
    let files: Vec<String> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("'{}'", f.as_str().unwrap().replace("file://", "")))
        .collect();
    let nulls = duckdb(&format!(
        "select count(*) from read_parquet([{}]) where value_decimal38 is null and value_binary is null",
        files.join(", ")
    ));
    assert_eq!(nulls[0][0], "0", "every current file holds the computed columns");
    let v = chainetl(&["verify", &widen]);
    assert!(v.status.success(), "{}", text(&v));
    // Dropping them again is refused in Delta, before anything changes.
    let o = chainetl(&["run", &s("narrow.toml", &dead_url(), &out, "delta", DECODE)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("only ever added"), "{}", text(&o));
    assert!(!out.join("_chainetl/dv/migration.json").exists());
}

/// On S3 (moto): decoding made from the stored logs, killed once mid-swap,
/// then `u256` columns; each equal to a fresh export, with no request.
#[test]
fn a_job_on_s3_gains_its_decoded_table_and_u256_columns_with_no_request() {
    let s3 = crate::s3::S3::start("bkt-derive");
    let dir = tempfile::tempdir().unwrap();
    let (fresh, wide) = (dir.path().join("fresh"), dir.path().join("wide"));
    let uri = format!("s3://{}/lake", s3.bucket);
    let s = |name: &str, url: &str, uri: &str, decoding: &str| {
        let b = body(url, Path::new(uri), "parquet", "", decoding);
        write_spec(dir.path(), name, &b)
    };
    for (name, path, decoding) in [("fresh.toml", &fresh, DECODE), ("wide.toml", &wide, WIDE)] {
        let o = chainetl(&["run", &s(name, &s3.sim.url(), &path.to_string_lossy(), decoding)]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let o = s3.cmd(&["run", &s("raw.toml", &s3.sim.url(), &uri, ""), "-q"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let new = s("new.toml", &dead_url(), &uri, DECODE);
    let o = s3
        .cmd_on(crash_bin("during-rewrite-swap:1"), &["run", &new, "-q"])
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", text(&o));
    run_without_requests(&mut s3.cmd(&["run", &new, "--summary", "json"]));
    let copy = dir.path().join("copy");
    for t in ["events", "transfers", "blocks"] {
        s3.download(&format!("lake/{t}"), &copy.join(t));
        same_table(&copy, &fresh, t);
    }
    assert!(s3.cmd(&["verify", &new]).output().unwrap().status.success());
    let widen = s("widen.toml", &dead_url(), &uri, WIDE);
    run_without_requests(&mut s3.cmd(&["run", &widen, "--summary", "json"]));
    let again = dir.path().join("again");
    s3.download("lake/transfers", &again.join("transfers"));
    same_table(&again, &wide, "transfers");
    assert!(s3.cmd(&["verify", &widen]).output().unwrap().status.success());
}
