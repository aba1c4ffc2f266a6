//! Changing a finished job's output format: made from the files the output
//! holds, with no request to the service (the conversion runs point at a
//! port nothing listens on: one request would fail them), exact for every
//! reader at every Delta version, through kill -9 at every step.

use crate::common::*;
use crate::delta::{check, every_version_exact, keys_of};
use std::path::Path;

/// `plan` of a spec an interrupted change holds back refuses it as `run`
/// does, and says when the change began to the second (not to the
/// nanosecond).
pub(crate) fn begun_to_the_second(plan: &std::process::Output) {
    assert_eq!(plan.status.code(), Some(2), "{}", text(plan));
    let t = text(plan);
    let begun = t.split("(begun ").nth(1).and_then(|x| x.split(')').next()).unwrap_or_default();
    assert!(
        begun.len() == "2026-11-29T10:00:00Z".len() && begun.ends_with('Z'),
        "to the second: {begun}\n{t}"
    );
}

/// A spec of job `cv` into `uri` in `format`, against `url`.
pub(crate) fn body(url: &str, uri: &str, format: &str, extra_output: &str) -> String {
    format!(
        r#"name = "cv"
[source]
base_url = "{url}"
max_concurrency = 4
max_retries = 1
[output]
uri = "{uri}"
format = "{format}"
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
also_raw = true
table = "transfers"
signatures = ["event Transfer(address indexed from, address indexed to, uint256 value)"]
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
addresses = ["0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"]
"#
    )
}

pub(crate) const TABLES: [&str; 5] = ["blocks", "events", "portfolio", "tokens", "transfers"];

/// A base URL nothing answers at: a run that sends one request fails.
pub(crate) fn dead_url() -> String {
    format!("http://127.0.0.1:{}", free_port())
}

/// Runs `args` and returns its JSON summary, asserting it exited 0 and sent
/// no request.
pub(crate) fn run_without_requests(c: &mut std::process::Command) -> serde_json::Value {
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert_eq!(summary["requests"], 0, "no request: {summary}");
    summary
}

/// Every table of `out` read by deltalake, Polars and DuckDB: every
/// version exact and never shorter, the last one's rows those of the
/// parquet folders under `reference`, with the types and partition
/// columns of the fresh delta export `fresh`.
pub(crate) fn delta_equals(out: &Path, reference: &Path, fresh: &Path) {
    for t in TABLES {
        let doc = check(&out.join(t), keys_of(t), Some(&reference.join(t)));
        every_version_exact(&doc, t);
        assert_eq!(doc["rows"], doc["parquet_rows"], "{t}: the rows of the parquet export");
        let n = doc["rows"].as_array().unwrap().len() as u64;
        assert!(n > 0, "{t} has rows");
        assert_eq!(doc["polars_rows"].as_u64(), Some(n), "{t}: polars");
        assert_eq!(doc["duckdb_rows"].as_u64(), Some(n), "{t}: duckdb");
        let want = check(&fresh.join(t), keys_of(t), None);
        assert_eq!(doc["types"], want["types"], "{t}: the types of a fresh delta export");
        assert_eq!(
            doc["partitions"], want["partitions"],
            "{t}: the partition columns of a fresh delta export"
        );
    }
}

/// Every table of `out` as plain parquet: no Delta log, the rows of
/// `reference`.
fn parquet_equals(out: &Path, reference: &Path) {
    for t in TABLES {
        assert!(!out.join(t).join("_delta_log").exists(), "{t}: its Delta log is gone");
        let cols: &[&str] = keys_of(t);
        let got = read_rows(&out.join(t), cols);
        assert!(!got.is_empty(), "{t} has rows");
        assert_eq!(got, read_rows(&reference.join(t), cols), "{t}: each row once, none missing");
    }
}

#[test]
fn a_finished_parquet_job_becomes_delta_and_back_from_its_files_with_no_request() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, pq, dl) = (dir.path().join("out"), dir.path().join("pq"), dir.path().join("dl"));
    let s = |name: &str, url: &str, uri: &Path, format: &str| write_spec(dir.path(), name, &body(url, &uri.to_string_lossy(), format, ""));
    for (name, uri, format) in [("pq.toml", &pq, "parquet"), ("dl.toml", &dl, "delta"), ("p.toml", &out, "parquet")] {
        let o = chainetl(&["run", &s(name, &sim.url(), uri, format)]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let to_delta = s("d-dead.toml", &dead_url(), &out, "delta");
    // plan says what the run will do: the files, and no request.
    let p = chainetl(&["plan", &to_delta]);
    assert!(p.status.success(), "{}", text(&p));
    assert!(
        text(&p).contains("from stored rows") && text(&p).contains("0 requests"),
        "{}",
        text(&p)
    );
    // Other commands name the command that converts.
    let c = chainetl(&["compact", &to_delta]);
    assert_eq!(c.status.code(), Some(2), "{}", text(&c));
    assert!(text(&c).contains("chainetl run"), "{}", text(&c));
    let summary = run_without_requests(bin().args(["run", &to_delta, "--summary", "json"]));
    let conv = &summary["conversion"];
    assert_eq!(
        (conv["from"].as_str(), conv["to"].as_str()),
        (Some("parquet"), Some("delta")),
        "{summary}"
    );
    assert!(
        conv["files"].as_u64().unwrap() > 0 && conv["rows"].as_u64().unwrap() > 0,
        "{summary}"
    );
    assert_eq!(conv["requests"], 0);
    delta_equals(&out, &pq, &dl);
    for t in TABLES {
        let doc = check(&out.join(t), keys_of(t), None);
        let ops = doc["operations"].as_array().unwrap();
        assert_eq!(ops.len(), 2, "{t}: created, then one commit adds every file: {ops:?}");
    }
    let v = chainetl(&["verify", &to_delta]);
    assert!(v.status.success(), "{}", text(&v));
    // The job is a delta job now: a run has nothing to do.
    let again = run_without_requests(bin().args(["run", &s("d.toml", &sim.url(), &out, "delta"), "--summary", "json"]));
    assert!(again["conversion"].is_null(), "{again}");
    // And back: the current versions' files stay, the logs go.
    let to_parquet = s("p-dead.toml", &dead_url(), &out, "parquet");
    let summary = run_without_requests(bin().args(["run", &to_parquet, "--summary", "json"]));
    assert_eq!(summary["conversion"]["to"], "parquet", "{summary}");
    parquet_equals(&out, &pq);
    let v = chainetl(&["verify", &to_parquet]);
    assert!(v.status.success(), "{}", text(&v));
    let n = duckdb(&format!(
        "select count(*) as n from read_parquet('{}/events/**/*.parquet', hive_partitioning = true)",
        out.display()
    ));
    let want = read_rows(&pq.join("events"), &["block_number"]).len().to_string();
    assert_eq!(n[0][0].as_str(), Some(want.as_str()), "DuckDB reads each row once");
}

/// kill -9 at every step of a conversion each way, then a re-run: every
/// Delta version holds no key twice and never fewer rows than the one
/// before; the parquet output ends with each row once. Meanwhile the
/// old spec is refused, and `status` names the conversion.
#[test]
fn a_conversion_killed_at_every_step_finishes_exactly_on_the_next_run() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, pq, dl) = (dir.path().join("out"), dir.path().join("pq"), dir.path().join("dl"));
    let s = |name: &str, url: &str, uri: &Path, format: &str, extra: &str| {
        write_spec(dir.path(), name, &body(url, &uri.to_string_lossy(), format, extra))
    };
    for (name, uri, format) in [("pq.toml", &pq, "parquet"), ("dl.toml", &dl, "delta")] {
        let o = chainetl(&["run", &s(name, &sim.url(), uri, format, "")]);
        assert!(o.status.success(), "{}", text(&o));
    }
    // Not compacted as parquet; compacted once delta (a run setting):
    // the Delta tables then keep files for earlier versions, which the
    // way back deletes.
    let o = chainetl(&["run", &s("p.toml", &sim.url(), &out, "parquet", "compact = false")]);
    assert!(o.status.success(), "{}", text(&o));
    let old = s("p-dead.toml", &dead_url(), &out, "parquet", "compact = false");
    let to_delta = s("d-dead.toml", &dead_url(), &out, "delta", "");
    for point in [
        "conversion-recorded:1",
        "during-conversion:1",
        "during-conversion:3",
        "migration-recorded:1",
    ] {
        let o = crash_bin(point).args(["run", &to_delta, "-q"]).output().unwrap();
        assert!(!o.status.success(), "{point}: the run should have died\n{}", text(&o));
        for t in TABLES {
            if out.join(t).join("_delta_log").exists() {
                every_version_exact(&check(&out.join(t), keys_of(t), None), t);
            }
        }
        if point != "migration-recorded:1" {
            let st = chainetl(&["status", &to_delta, "--format", "json"]);
            assert!(text(&st).contains("conversion"), "{point}: status names it\n{}", text(&st));
            let o = chainetl(&["run", &old]);
            assert_eq!(o.status.code(), Some(2), "{point}: the old spec waits\n{}", text(&o));
            assert!(text(&o).contains("was interrupted"), "{}", text(&o));
            begun_to_the_second(&chainetl(&["plan", &old]));
        }
    }
    // verify names the conversion; --repair finishes it (no request).
    let v = chainetl(&["verify", &to_delta]);
    assert_eq!(v.status.code(), Some(1), "{}", text(&v));
    assert!(text(&v).contains("conversion"), "{}", text(&v));
    let r = chainetl(&["verify", &to_delta, "--repair"]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(!out.join("_chainetl/cv/migration.json").exists(), "finished by verify --repair");
    run_without_requests(bin().args(["run", &to_delta, "--summary", "json"]));
    delta_equals(&out, &pq, &dl);
    let v = chainetl(&["verify", &to_delta]);
    assert!(v.status.success(), "{}", text(&v));
    let ops = check(&out.join("events"), keys_of("events"), None)["operations"].clone();
    assert!(ops.as_array().unwrap().iter().any(|o| o == "OPTIMIZE"), "compacted as delta: {ops}");
    // The way back, killed at each step.
    let to_parquet = s("p2-dead.toml", &dead_url(), &out, "parquet", "");
    for point in [
        "conversion-recorded:1",
        "during-conversion:2",
        "conversion-logs:1",
        "migration-recorded:1",
    ] {
        let o = crash_bin(point).args(["run", &to_parquet, "-q"]).output().unwrap();
        assert!(!o.status.success(), "{point}: the run should have died\n{}", text(&o));
    }
    run_without_requests(bin().args(["run", &to_parquet, "--summary", "json"]));
    parquet_equals(&out, &pq);
    let v = chainetl(&["verify", &to_parquet]);
    assert!(v.status.success(), "{}", text(&v));
    // Converted twice, the job changes its format again and grows in the
    // same run: the stored files are adopted, only the new export fetched.
    let mut grown = body(&sim.url(), &out.to_string_lossy(), "delta", "");
    grown.push_str("[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"20000000..20000049\"\n");
    let o = chainetl(&["run", &write_spec(dir.path(), "grown.toml", &grown), "--summary", "json"]);
    assert!(o.status.success(), "{}", text(&o));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["conversion"]["to"], "delta", "{summary}");
    let fetched: Vec<&serde_json::Value> = summary["tallies"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["requests"].as_u64() > Some(0))
        .collect();
    assert!(
        fetched.len() == 1 && fetched[0]["export"] == 5,
        "only the appended export fetched: {summary}"
    );
    let doc = check(&out.join("blocks"), keys_of("blocks"), None);
    every_version_exact(&doc, "blocks");
    assert_eq!(
        doc["rows"].as_array().unwrap().len(),
        read_rows(&pq.join("blocks"), &["number"]).len() + 50
    );
}

#[test]
fn a_conversion_that_cannot_be_made_now_is_refused_before_anything_changes() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let job = |name: &str, format: &str, window: &str| {
        format!(
            "name = \"{name}\"\n[source]\nbase_url = \"{}\"\n[output]\nuri = \"{}\"\nformat = \"{format}\"\n\
             [[export]]\ndataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"{window}\"\n",
            sim.url(),
            out.display()
        )
    };
    let o = chainetl(&["run", &write_spec(dir.path(), "a.toml", &job("a", "parquet", "20000000..20000009"))]);
    assert!(o.status.success(), "{}", text(&o));
    // Shards each see part of the job: the conversion needs it whole.
    let a_delta = write_spec(dir.path(), "ad.toml", &job("a", "delta", "20000000..20000009"));
    let o = chainetl(&["run", &a_delta, "--shard", "1/2"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("without --shard"), "{}", text(&o));
    // Another change beside the format: the window is what needs --fresh.
    let o = chainetl(&["run", &write_spec(dir.path(), "aw.toml", &job("a", "delta", "20000000..20000019"))]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("window") && text(&o).contains("--fresh"), "{}", text(&o));
    assert!(!out.join("blocks/_delta_log").exists(), "nothing converted");
    // Converted, then another job adds its rows to the same table: the
    // way back would delete the log they are read through.
    let o = chainetl(&["run", &a_delta]);
    assert!(o.status.success(), "{}", text(&o));
    let o = chainetl(&["run", &write_spec(dir.path(), "b.toml", &job("b", "delta", "20000010..20000019"))]);
    assert!(o.status.success(), "{}", text(&o));
    let o = chainetl(&[
        "run",
        &write_spec(dir.path(), "ap.toml", &job("a", "parquet", "20000000..20000009")),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("other jobs"), "{}", text(&o));
    assert!(out.join("blocks/_delta_log").exists());
    assert!(chainetl(&["verify", &a_delta]).status.success());
}

#[test]
fn a_parquet_job_on_s3_becomes_delta_and_back_with_no_request() {
    let s3 = crate::s3::S3::start("bkt-convert");
    let dir = tempfile::tempdir().unwrap();
    let pq = dir.path().join("pq");
    let uri = format!("s3://{}/lake", s3.bucket);
    let o = chainetl(&[
        "run",
        &write_spec(dir.path(), "pq.toml", &body(&s3.sim.url(), &pq.to_string_lossy(), "parquet", "")),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = s3
        .cmd(&[
            "run",
            &write_spec(dir.path(), "p.toml", &body(&s3.sim.url(), &uri, "parquet", "")),
            "-q",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let to_delta = write_spec(dir.path(), "d.toml", &body(&dead_url(), &uri, "delta", ""));
    let o = s3
        .cmd_on(crash_bin("during-conversion:2"), &["run", &to_delta, "-q"])
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", text(&o));
    run_without_requests(&mut s3.cmd(&["run", &to_delta, "--summary", "json"]));
    let copy = dir.path().join("copy");
    for t in TABLES {
        let keys = s3.download(&format!("lake/{t}"), &copy.join(t));
        assert!(keys.iter().any(|k| k.starts_with("_delta_log/")), "{t}: {keys:?}");
        let doc = check(&copy.join(t), keys_of(t), Some(&pq.join(t)));
        every_version_exact(&doc, t);
        assert_eq!(doc["rows"], doc["parquet_rows"], "{t} on S3");
    }
    assert!(s3.cmd(&["verify", &to_delta]).output().unwrap().status.success());
    let to_parquet = write_spec(dir.path(), "p2.toml", &body(&dead_url(), &uri, "parquet", ""));
    run_without_requests(&mut s3.cmd(&["run", &to_parquet, "--summary", "json"]));
    let back = dir.path().join("back");
    for t in TABLES {
        let keys = s3.download(&format!("lake/{t}"), &back.join(t));
        assert!(!keys.iter().any(|k| k.starts_with("_delta_log/")), "{t}: {keys:?}");
    }
    parquet_equals(&back, &pq);
    assert!(s3.cmd(&["verify", &to_parquet]).output().unwrap().status.success());
}

/// An incremental job converted part way through a segment: the units of
/// the pending segment that were done as parquet join the table with
/// their segment, once it is checked against the chain — not dropped
/// (their version recorded with no file) nor added twice.
#[test]
fn an_incremental_job_converted_mid_segment_publishes_the_segment_whole() {
    use chainetl::sim::data::SimData;
    use chainetl::vocab::chain::Chain;
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, pq) = (dir.path().join("out"), dir.path().join("pq"));
    let data = SimData::new(42, 30);
    let start = crate::schedule::head_at(&data, Chain::Base, "2025-06-01T00:00:00Z") - 200;
    let s = |name: &str, uri: &Path, format: &str| {
        write_spec(
            dir.path(),
            name,
            &format!(
                "name = \"ci\"\n[source]\nbase_url = \"{}\"\nmax_concurrency = 1\n[output]\nuri = \"{}\"\nformat = \"{format}\"\ncompact = false\n\
                 [[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nincremental = true\nstart = {start}\nconfirmations = 20\nchunk_blocks = 32\n",
                sim.url(),
                uri.display()
            ),
        )
    };
    let o = chainetl(&["run", &s("pq.toml", &pq, "parquet")]);
    assert!(o.status.success(), "{}", text(&o));
    let o = crash_bin("after-file-write:3")
        .args(["run", &s("p.toml", &out, "parquet")])
        .output()
        .unwrap();
    assert!(!o.status.success(), "the run should have died\n{}", text(&o));
    let o = chainetl(&["run", &s("d.toml", &out, "delta")]);
    assert!(o.status.success(), "{}", text(&o));
    let doc = check(&out.join("blocks"), keys_of("blocks"), Some(&pq.join("blocks")));
    every_version_exact(&doc, "blocks");
    assert_eq!(doc["rows"], doc["parquet_rows"], "every block of the segment once");
    for v in doc["versions"].as_array().unwrap() {
        assert_eq!(v["broken_links"], 0, "{v}");
        assert_eq!(v["gaps"], 0, "the segment joined whole: {v}");
    }
    assert!(chainetl(&["verify", &s("d.toml", &out, "delta")]).status.success());
}

/// A Delta table written by a release whose dataset lacked a column
/// (here: the table's metadata rewritten without `withdrawals_root`,
/// a nullable column) gains it by a metadata-only commit on the next run;
/// a column whose type would change is refused, saying which and why.
#[test]
fn a_delta_table_gains_a_new_column_by_a_metadata_commit_and_refuses_a_changed_type() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let spec = write_spec(
        dir.path(),
        "b.toml",
        &format!(
            "name = \"ev\"\n[source]\nbase_url = \"{}\"\n[output]\nuri = \"{}\"\nformat = \"delta\"\n\
             [[export]]\ndataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000049\"\n",
            sim.url(),
            out.display()
        ),
    );
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let table = out.join("blocks");
    let before = check(&table, keys_of("blocks"), None);
    let column = "withdrawals_root";
    assert!(before["types"].get(column).is_some(), "{}", before["types"]);
    // The table as an older release would have left it: a metadata
    // commit whose schema lacks the column.
    let rewrite = |f: &dyn Fn(&mut Vec<serde_json::Value>)| {
        let log = table.join("_delta_log");
        let first = std::fs::read_to_string(log.join(format!("{:020}.json", 0))).unwrap();
        let mut meta: serde_json::Value = first
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|a| a.get("metaData").is_some())
            .unwrap();
        let mut schema: serde_json::Value = serde_json::from_str(meta["metaData"]["schemaString"].as_str().unwrap()).unwrap();
        f(schema["fields"].as_array_mut().unwrap());
        meta["metaData"]["schemaString"] = schema.to_string().into();
        let next = std::fs::read_dir(&log)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".json")?.parse::<u64>().ok())
            .max()
            .unwrap()
            + 1;
        let info = serde_json::json!({"commitInfo": {"timestamp": 0, "operation": "SET TBLPROPERTIES"}});
        std::fs::write(log.join(format!("{next:020}.json")), format!("{info}\n{meta}\n")).unwrap();
    };
    rewrite(&|fields| fields.retain(|f| f["name"] != column));
    let older = check(&table, keys_of("blocks"), None);
    assert!(older["types"].get(column).is_none(), "the older table lacks it");
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let after = check(&table, keys_of("blocks"), None);
    assert_eq!(after["types"][column], before["types"][column], "{}", after["types"]);
    assert_eq!(after["rows"], before["rows"], "the same rows");
    assert_eq!(
        after["operations"].as_array().unwrap().last().unwrap(),
        "ALTER TABLE",
        "one metadata-only commit"
    );
    every_version_exact(&after, "blocks");
    // A type that would change is refused, naming the column.
    rewrite(&|fields| {
        for f in fields.iter_mut().filter(|f| f["name"] == "size") {
            f["type"] = "string".into();
        }
    });
    let o = chainetl(&["run", &spec]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("column size would change type from string to long"),
        "{}",
        text(&o)
    );
}

/// A parquet output whose older files lack a column a newer release
/// writes reads by name, the missing values null, as
/// docs/changing-a-job.md says: DuckDB `union_by_name`, Polars
/// `how="diagonal"`, Spark `mergeSchema`.
#[test]
fn parquet_files_with_and_without_a_column_read_by_name() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let spec = format!(
        "name = \"pc\"\n[source]\nbase_url = \"{}\"\n[output]\nuri = \"{}\"\ncompact = false\n\
         [[export]]\ndataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000099\"\nchunk_blocks = 50\n",
        sim.url(),
        out.display()
    );
    let o = chainetl(&["run", &write_spec(dir.path(), "b.toml", &spec)]);
    assert!(o.status.success(), "{}", text(&o));
    let files = parquet_files(&out.join("blocks"));
    assert!(files.len() >= 2, "{files:?}");
    // One file as an older release wrote it: without the column.
    let script = r#"
import json, sys
import pyarrow.parquet as pq, duckdb, polars as pl
older, root, files = sys.argv[1], sys.argv[2], sys.argv[3:]
t = pq.read_table(older)
pq.write_table(t.drop_columns(["withdrawals_root"]), older)
q = f"select count(*), count(withdrawals_root) from read_parquet('{root}/**/*.parquet', hive_partitioning = true, union_by_name = true)"
total, valued = duckdb.sql(q).fetchall()[0]
frame = pl.concat([pl.read_parquet(f) for f in files], how="diagonal")
print(json.dumps({"duckdb": [total, valued], "polars": [frame.height, frame["withdrawals_root"].null_count()], "older": t.num_rows}))
"#;
    let mut c = std::process::Command::new(python());
    c.args(["-c", script]).arg(&files[0]).arg(out.join("blocks"));
    c.args(&files);
    let o = python_output(&mut c).unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let older = doc["older"].as_u64().unwrap();
    let total = doc["duckdb"][0].as_u64().unwrap();
    assert_eq!(total, 100, "every block once: {doc}");
    assert!(
        doc["duckdb"][1].as_u64().unwrap() <= total - older,
        "the older file's values are null: {doc}"
    );
    assert_eq!(doc["polars"][0].as_u64(), Some(total), "{doc}");
    assert!(doc["polars"][1].as_u64().unwrap() >= older, "{doc}");
    // Spark, with mergeSchema.
    let r = check_script("spark_check.py", &[out.to_str().unwrap(), "blocks"], &[("SPARK_MERGE_SCHEMA", "1")]);
    assert_eq!(r["blocks"]["rows"].as_u64(), Some(total), "{r}");
    assert_eq!(r["blocks"]["types"]["withdrawals_root"], "string", "{r}");
    assert!(r["blocks"]["nulls"]["withdrawals_root"].as_u64().unwrap() >= older, "{r}");
}

/// A file an older release wrote with other columns is not adopted into
/// a Delta table whose schema it would break: the conversion is refused
/// before anything is written (no log left in the parquet output), and
/// the old spec still runs.
#[test]
fn a_file_with_other_columns_refuses_the_conversion_before_anything_is_written() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = |name: &str, format: &str| {
        write_spec(
            dir.path(),
            name,
            &format!(
                "name = \"oc\"\n[source]\nbase_url = \"{}\"\n[output]\nuri = \"{}\"\nformat = \"{format}\"\ncompact = false\n\
                 [[export]]\ndataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000099\"\nchunk_blocks = 50\n",
                sim.url(),
                out.display()
            ),
        )
    };
    let o = chainetl(&["run", &s("p.toml", "parquet")]);
    assert!(o.status.success(), "{}", text(&o));
    let older = parquet_files(&out.join("blocks")).remove(0);
    let script = "import sys, pyarrow.parquet as pq\nt = pq.read_table(sys.argv[1])\npq.write_table(t.drop_columns(['withdrawals_root']), sys.argv[1])";
    let o = python_output(std::process::Command::new(python()).args(["-c", script]).arg(&older)).unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let o = chainetl(&["run", &s("d.toml", "delta")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("it has no column withdrawals_root"), "{}", text(&o));
    assert!(!out.join("blocks/_delta_log").exists(), "no table created");
    assert!(!out.join("_chainetl/oc/migration.json").exists(), "nothing recorded");
    let o = chainetl(&["run", &s("p.toml", "parquet")]);
    assert!(o.status.success(), "the old spec runs: {}", text(&o));
}

/// A conversion to parquet killed while deleting the Delta logs, then
/// `--fresh`: the logs left no longer read, and the clearing goes on
/// rather than failing on them for good.
#[test]
fn fresh_after_a_conversion_killed_while_deleting_the_logs_starts_over() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, pq) = (dir.path().join("out"), dir.path().join("pq"));
    let s = |name: &str, uri: &Path, format: &str| {
        write_spec(
            dir.path(),
            name,
            &format!(
                "name = \"fl\"\n[source]\nbase_url = \"{}\"\npage_size = 200\n[output]\nuri = \"{}\"\nformat = \"{format}\"\ncommit_pages = 1\n\
                 [[export]]\ndataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000099\"\nchunk_blocks = 25\n",
                sim.url(),
                uri.display()
            ),
        )
    };
    for (name, uri, format) in [("ref.toml", &pq, "parquet"), ("d.toml", &out, "delta")] {
        let o = chainetl(&["run", &s(name, uri, format)]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let to_parquet = s("p.toml", &out, "parquet");
    let o = crash_bin("during-log-delete:1").args(["run", &to_parquet]).output().unwrap();
    assert!(!o.status.success(), "the run should have died\n{}", text(&o));
    assert!(out.join("events/_delta_log").exists(), "part of the log is left");
    let o = chainetl(&["run", &to_parquet, "--fresh"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!out.join("events/_delta_log").exists());
    let cols = keys_of("events");
    assert_eq!(read_rows(&out.join("events"), cols), read_rows(&pq.join("events"), cols));
}

/// Several changes at once: the output format, a chain
/// added to an export and an export appended. The stored rows are
/// converted with no request; only the new chain and the new export are
/// fetched; the output is a fresh delta export of the new spec's.
#[test]
fn a_format_change_with_a_new_chain_and_a_new_export_fetches_only_what_is_new() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, pq, dl) = (dir.path().join("out"), dir.path().join("pq"), dir.path().join("dl"));
    let full = |url: &str, uri: &Path, format: &str| body(url, &uri.to_string_lossy(), format, "");
    // The job as it was: export 0 on ethereum only, no tokens export.
    let before = |url: &str, uri: &Path| {
        let b = full(url, uri, "parquet").replacen(r#"chains = ["ethereum", "base"]"#, r#"chains = ["ethereum"]"#, 1);
        b[..b.find("[[export]]\ndataset = \"tokens\"").unwrap()].to_string()
    };
    let old = write_spec(dir.path(), "old.toml", &before(&sim.url(), &out));
    let o = chainetl(&["run", &old]);
    assert!(o.status.success(), "{}", text(&o));
    for (name, uri, format) in [("pq.toml", &pq, "parquet"), ("dl.toml", &dl, "delta")] {
        let o = chainetl(&["run", &write_spec(dir.path(), name, &full(&sim.url(), uri, format))]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let new = write_spec(dir.path(), "new.toml", &full(&sim.url(), &out, "delta"));
    let o = bin().args(["run", &new, "--summary", "json"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert_eq!(summary["conversion"]["to"], "delta", "{summary}");
    assert!(summary["conversion"]["files"].as_u64().unwrap() > 0, "{summary}");
    let exports = summary["exports"].as_object().unwrap();
    for (label, e) in exports {
        let new_work = label == "e0 events base" || label.starts_with("e4 tokens");
        let requests = e["requests"].as_u64().unwrap();
        if new_work {
            assert!(requests > 0 && e["rows_before"] == 0, "{label} is fetched: {e}");
        } else {
            assert_eq!(requests, 0, "{label} was stored: {summary}");
        }
    }
    assert!(
        exports.contains_key("e0 events base") && exports.keys().any(|k| k.starts_with("e4 tokens")),
        "{summary}"
    );
    delta_equals(&out, &pq, &dl);
    let v = chainetl(&["verify", &new]);
    assert!(v.status.success(), "{}", text(&v));
}
