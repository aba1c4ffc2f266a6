//! Changing a finished job's layout — partition keys, bloom filters,
//! codec, row groups — made from the files the output holds, with no
//! request to the service (the runs that rewrite point at a port nothing
//! listens on), equal to a fresh export of the new spec, exact through
//! kill -9 at every step.

use crate::changing::{TABLES, body, dead_url, run_without_requests};
use crate::common::*;
use crate::delta::{check, every_version_exact, keys_of};
use std::collections::BTreeSet;
use std::path::Path;

/// The partition directories under each table of `out` (relative paths).
fn partitions(out: &Path) -> BTreeSet<String> {
    let mut dirs = BTreeSet::new();
    for t in TABLES {
        for f in parquet_files(&out.join(t)) {
            let rel = f.strip_prefix(out).unwrap().parent().unwrap().to_string_lossy().into_owned();
            dirs.insert(rel);
        }
    }
    dirs
}

/// Every table of `out` holds the rows of `reference`, every column, each
/// row as often (DuckDB, hive partitions read from the paths).
fn same_rows(out: &Path, reference: &Path) {
    for t in TABLES {
        let q = |a: &Path, b: &Path| {
            format!(
                "select count(*) from (select * from read_parquet('{}/{t}/**/*.parquet', hive_partitioning = true) \
                 except all select * from read_parquet('{}/{t}/**/*.parquet', hive_partitioning = true))",
                a.display(),
                b.display()
            )
        };
        assert_eq!(duckdb(&q(out, reference))[0][0], "0", "{t}: a row the fresh export lacks");
        assert_eq!(duckdb(&q(reference, out))[0][0], "0", "{t}: a row of the fresh export missing");
        let keys = keys_of(t);
        let got = read_rows(&out.join(t), keys);
        assert!(!got.is_empty(), "{t} has rows");
        assert_eq!(got, read_rows(&reference.join(t), keys), "{t}: each key once");
    }
}

/// The columns of `t`'s files under `out` with a bloom filter (DuckDB's
/// `parquet_metadata`).
fn bloom_columns(out: &Path, t: &str) -> BTreeSet<String> {
    let rows = duckdb(&format!(
        "select distinct path_in_schema from parquet_metadata('{}/{t}/**/*.parquet') where bloom_filter_offset is not null",
        out.display()
    ));
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_finished_parquet_job_is_partitioned_anew_from_its_files_with_no_request() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, fresh) = (dir.path().join("out"), dir.path().join("fresh"));
    let by_chain = "partition_by = [\"chain\"]";
    let s =
        |name: &str, url: &str, uri: &Path, extra: &str| write_spec(dir.path(), name, &body(url, &uri.to_string_lossy(), "parquet", extra));
    let o = chainetl(&["run", &s("fresh.toml", &sim.url(), &fresh, by_chain)]);
    assert!(o.status.success(), "{}", text(&o));
    let o = chainetl(&["run", &s("p.toml", &sim.url(), &out, "")]);
    assert!(o.status.success(), "{}", text(&o));
    assert_ne!(partitions(&out), partitions(&fresh), "laid out otherwise before");
    // A new format and a new layout at once: one change a run.
    let both = write_spec(
        dir.path(),
        "both.toml",
        &body(&dead_url(), &out.to_string_lossy(), "delta", by_chain),
    );
    for cmd in ["run", "plan"] {
        let o = chainetl(&[cmd, &both]);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", text(&o));
        assert!(text(&o).contains("one change a run"), "{cmd}: {}", text(&o));
    }
    let new = s("p-dead.toml", &dead_url(), &out, by_chain);
    let p = chainetl(&["plan", &new]);
    assert!(p.status.success(), "{}", text(&p));
    assert!(
        text(&p).contains("from stored rows") && text(&p).contains("rewritten") && text(&p).contains("0 requests"),
        "{}",
        text(&p)
    );
    // Other commands name the command that rewrites.
    let c = chainetl(&["compact", &new]);
    assert_eq!(c.status.code(), Some(2), "{}", text(&c));
    assert!(text(&c).contains("chainetl run"), "{}", text(&c));
    let summary = run_without_requests(bin().args(["run", &new, "--summary", "json"]));
    let conv = &summary["conversion"];
    assert!(
        conv["layout"]
            .as_array()
            .is_some_and(|l| l.len() == 1 && l[0].as_str().unwrap().contains("partition_by")),
        "{summary}"
    );
    assert!(
        conv["files"].as_u64().unwrap() > 0 && conv["rows"].as_u64().unwrap() > 0,
        "{summary}"
    );
    assert_eq!(partitions(&out), partitions(&fresh), "the fresh export's partitions");
    same_rows(&out, &fresh);
    let v = chainetl(&["verify", &new]);
    assert!(v.status.success(), "{}", text(&v));
    assert!(!out.join("_chainetl/cv/migration.json").exists());
    // Done: the next run, against the service, has nothing to fetch.
    let again = run_without_requests(bin().args(["run", &s("p2.toml", &sim.url(), &out, by_chain), "--summary", "json"]));
    assert!(again["conversion"].is_null(), "{again}");
    // Bloom filters on other columns: the files are written again with them.
    assert!(bloom_columns(&out, "events").contains("transaction_hash"), "the default filters");
    let blooms = format!("{by_chain}\nbloom_filters = [\"block_number\"]");
    let summary = run_without_requests(bin().args(["run", &s("b-dead.toml", &dead_url(), &out, &blooms), "--summary", "json"]));
    assert!(
        summary["conversion"]["layout"][0].as_str().unwrap().contains("bloom_filters"),
        "{summary}"
    );
    assert_eq!(bloom_columns(&out, "events"), BTreeSet::from(["block_number".to_string()]));
    same_rows(&out, &fresh);
    let v = chainetl(&["verify", &s("b.toml", &sim.url(), &out, &blooms)]);
    assert!(v.status.success(), "{}", text(&v));
}

/// kill -9 at every step of a rewrite, then a re-run: the output ends
/// equal to a fresh export of the new spec; meanwhile `status` names the
/// rewrite and the old spec is refused.
#[test]
fn a_rewrite_killed_at_every_step_finishes_exactly_on_the_next_run() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, fresh) = (dir.path().join("out"), dir.path().join("fresh"));
    let s =
        |name: &str, url: &str, uri: &Path, extra: &str| write_spec(dir.path(), name, &body(url, &uri.to_string_lossy(), "parquet", extra));
    let new_layout = "partition_by = [\"date\"]\ncompression = \"snappy\"";
    let o = chainetl(&["run", &s("fresh.toml", &sim.url(), &fresh, new_layout)]);
    assert!(o.status.success(), "{}", text(&o));
    let o = chainetl(&["run", &s("p.toml", &sim.url(), &out, "")]);
    assert!(o.status.success(), "{}", text(&o));
    let old = s("old-dead.toml", &dead_url(), &out, "");
    let new = s("new-dead.toml", &dead_url(), &out, new_layout);
    // Before anything is published the old spec takes the job back.
    let o = crash_bin("during-rewrite:2").args(["run", &new, "-q"]).output().unwrap();
    assert!(!o.status.success(), "the run should have died\n{}", text(&o));
    run_without_requests(bin().args(["run", &old, "--summary", "json"]));
    assert!(!out.join("_chainetl/cv/migration.json").exists(), "undone");
    assert!(walk(&out.join("_chainetl/cv")).iter().all(|p| !p.contains("/rewrite/")), "undone");
    assert!(chainetl(&["verify", &old]).status.success());
    assert!(
        walk(&out).iter().all(|p| !p.ends_with(".pending")),
        "no output of the undone rewrite is left"
    );
    for point in [
        "rewrite-recorded:1",
        "during-rewrite:2",
        "during-rewrite:1",
        "rewrite-written:1",
        "during-rewrite-swap:3",
        "rewrite-checkpointed:1",
        "rewrite-applied:1",
        "migration-recorded:1",
    ] {
        let o = crash_bin(point).args(["run", &new, "-q"]).output().unwrap();
        assert!(!o.status.success(), "{point}: the run should have died\n{}", text(&o));
        if point != "migration-recorded:1" {
            let st = chainetl(&["status", &new, "--format", "json"]);
            assert!(text(&st).contains("rewrite"), "{point}: status names it\n{}", text(&st));
        }
        if ["during-rewrite-swap:3", "rewrite-checkpointed:1", "rewrite-applied:1"].contains(&point) {
            let o = chainetl(&["run", &old]);
            assert_eq!(o.status.code(), Some(2), "{point}: the old spec waits\n{}", text(&o));
            assert!(text(&o).contains("was interrupted"), "{}", text(&o));
            crate::changing::begun_to_the_second(&chainetl(&["plan", &old]));
        }
    }
    let v = chainetl(&["verify", &new]);
    assert_eq!(v.status.code(), Some(1), "{}", text(&v));
    let summary = run_without_requests(bin().args(["run", &new, "--summary", "json"]));
    assert!(summary["conversion"].is_null(), "finished by the run that died last: {summary}");
    assert_eq!(partitions(&out), partitions(&fresh), "the fresh export's partitions");
    same_rows(&out, &fresh);
    let v = chainetl(&["verify", &new]);
    assert!(v.status.success(), "{}", text(&v));
    let codecs = duckdb(&format!(
        "select distinct compression from parquet_metadata('{}/events/**/*.parquet')",
        out.display()
    ));
    assert_eq!(
        codecs,
        serde_json::json!([["SNAPPY"]]),
        "every file written again with the new codec"
    );
    // Compacted by date alone, a partition's files hold both chains: a
    // new codec writes them again, each row once.
    let again = s(
        "again-dead.toml",
        &dead_url(),
        &out,
        "partition_by = [\"date\"]\ncompression = \"lz4\"",
    );
    run_without_requests(bin().args(["run", &again, "--summary", "json"]));
    same_rows(&out, &fresh);
    assert!(chainetl(&["verify", &again]).status.success());
}

/// A run killed part way leaves uncommitted files; a layout change then
/// removes them before rewriting, so no file of the old layout is left
/// and the units fetch what they had not committed, once.
#[test]
fn uncommitted_files_of_a_killed_run_are_not_left_in_the_old_layout() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, fresh) = (dir.path().join("out"), dir.path().join("fresh"));
    let s = |name: &str, uri: &Path, extra: &str| write_spec(dir.path(), name, &body(&sim.url(), &uri.to_string_lossy(), "parquet", extra));
    // A commit a page: the crash leaves files past a checkpoint.
    let by_chain = "partition_by = [\"chain\"]\ncompact = false\ncommit_pages = 1";
    let o = chainetl(&["run", &s("fresh.toml", &fresh, by_chain)]);
    assert!(o.status.success(), "{}", text(&o));
    let o = crash_bin("after-file-write:9")
        .args(["run", &s("p.toml", &out, "compact = false\ncommit_pages = 1")])
        .output()
        .unwrap();
    assert!(!o.status.success(), "the run should have died\n{}", text(&o));
    let o = chainetl(&["run", &s("new.toml", &out, by_chain), "--summary", "json"]);
    assert!(o.status.success(), "{}", text(&o));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(summary["conversion"]["layout"].is_array(), "{summary}");
    assert!(
        summary["requests"].as_u64() > Some(0),
        "the units not committed are fetched: {summary}"
    );
    let old_layout: Vec<String> = walk(&out).into_iter().filter(|p| p.contains("date=")).collect();
    assert!(old_layout.is_empty(), "no file of the old layout is left: {old_layout:?}");
    same_rows(&out, &fresh);
    assert!(chainetl(&["verify", &s("new.toml", &out, by_chain)]).status.success());
}

/// Every file under `dir`, as a path string.
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p.to_string_lossy().into_owned());
            }
        }
    }
    out
}

/// Runs `spec`, a Delta rewrite of `out`, killed at each of its steps in
/// turn; after each, every version of every table holds each key once
/// and never fewer rows than the one before.
pub(crate) fn killed_at_every_delta_rewrite_step(spec: &str, out: &Path) {
    for point in [
        "during-rewrite:3",
        "rewrite-published:1",
        "during-rewrite-commit:2",
        "rewrite-committed:1",
    ] {
        let o = crash_bin(point).args(["run", spec, "-q"]).output().unwrap();
        assert!(!o.status.success(), "{point}: the run should have died\n{}", text(&o));
        for t in TABLES {
            every_version_exact(&check(&out.join(t), keys_of(t), None), t);
        }
    }
}

/// A Delta job's files are written again in one commit a table; every
/// version holds each key once — also when killed.
#[test]
fn a_delta_job_is_rewritten_in_one_commit_a_table() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, pq) = (dir.path().join("out"), dir.path().join("pq"));
    let s = |name: &str, url: &str, uri: &Path, format: &str, extra: &str| {
        write_spec(dir.path(), name, &body(url, &uri.to_string_lossy(), format, extra))
    };
    let o = chainetl(&["run", &s("pq.toml", &sim.url(), &pq, "parquet", "")]);
    assert!(o.status.success(), "{}", text(&o));
    let o = chainetl(&["run", &s("d.toml", &sim.url(), &out, "delta", "")]);
    assert!(o.status.success(), "{}", text(&o));
    let versions = |t: &str| check(&out.join(t), keys_of(t), None)["operations"].as_array().unwrap().len();
    let before: Vec<usize> = TABLES.iter().map(|t| versions(t)).collect();
    let new = s(
        "new.toml",
        &dead_url(),
        &out,
        "delta",
        "row_group_rows = 1000\ncompression = \"lz4\"",
    );
    killed_at_every_delta_rewrite_step(&new, &out);
    let summary = run_without_requests(bin().args(["run", &new, "--summary", "json"]));
    assert!(summary["conversion"]["layout"].is_array(), "the last run finishes it: {summary}");
    for (t, before) in TABLES.iter().zip(before) {
        let doc = check(&out.join(t), keys_of(t), Some(&pq.join(t)));
        every_version_exact(&doc, t);
        assert_eq!(doc["rows"], doc["parquet_rows"], "{t}: the rows of the parquet export");
        let ops = doc["operations"].as_array().unwrap();
        assert_eq!(ops.len(), before + 1, "{t}: one commit rewrote the table: {ops:?}");
        let files: Vec<String> = doc["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().replace("file://", ""))
            .collect();
        let list = files.iter().map(|f| format!("'{f}'")).collect::<Vec<_>>().join(", ");
        let codecs = duckdb(&format!("select distinct compression from parquet_metadata([{list}])"));
        assert_eq!(
            codecs,
            serde_json::json!([["LZ4_RAW"]]),
            "{t}: the current version's files, written again"
        );
    }
    let v = chainetl(&["verify", &new]);
    assert!(v.status.success(), "{}", text(&v));
}

/// A Delta job's partition columns changed: each table's files written
/// again in the new partitions and swapped in by one commit that also
/// replaces the table's metadata, with no request; killed at every step,
/// every version exact; then equal to a fresh export of the new spec.
#[test]
fn a_delta_table_is_partitioned_anew_in_one_commit_with_no_request() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, pq, fresh) = (dir.path().join("out"), dir.path().join("pq"), dir.path().join("fresh"));
    let s = |name: &str, url: &str, uri: &Path, format: &str, extra: &str| {
        write_spec(dir.path(), name, &body(url, &uri.to_string_lossy(), format, extra))
    };
    let by_chain = "partition_by = [\"chain\"]";
    for (name, uri, format, extra) in [
        ("pq.toml", &pq, "parquet", by_chain),
        ("fresh.toml", &fresh, "delta", by_chain),
        ("d.toml", &out, "delta", ""),
    ] {
        let o = chainetl(&["run", &s(name, &sim.url(), uri, format, extra)]);
        assert!(o.status.success(), "{name}: {}", text(&o));
    }
    let versions = |t: &str| check(&out.join(t), keys_of(t), None)["operations"].as_array().unwrap().len();
    let before: Vec<usize> = TABLES.iter().map(|t| versions(t)).collect();
    let new = s("new.toml", &dead_url(), &out, "delta", by_chain);
    let p = chainetl(&["plan", &new]);
    assert!(p.status.success(), "{}", text(&p));
    assert!(
        text(&p).contains("from stored rows") && text(&p).contains("0 requests"),
        "{}",
        text(&p)
    );
    killed_at_every_delta_rewrite_step(&new, &out);
    let summary = run_without_requests(bin().args(["run", &new, "--summary", "json"]));
    assert!(
        summary["conversion"]["layout"][0].as_str().unwrap().contains("partition_by"),
        "the last run finishes it: {summary}"
    );
    crate::changing::delta_equals(&out, &pq, &fresh);
    for (t, before) in TABLES.iter().zip(before) {
        let doc = check(&out.join(t), keys_of(t), None);
        assert_eq!(doc["partitions"], serde_json::json!(["chain"]), "{t}");
        let ops = doc["operations"].as_array().unwrap();
        assert_eq!(ops.len(), before + 1, "{t}: one commit rewrote the table: {ops:?}");
    }
    let v = chainetl(&["verify", &new]);
    assert!(v.status.success(), "{}", text(&v));
    // The job goes on as one started with these partitions: nothing to fetch.
    let again = run_without_requests(bin().args(["run", &s("again.toml", &sim.url(), &out, "delta", by_chain), "--summary", "json"]));
    assert!(again["conversion"].is_null(), "{again}");
}

/// A Delta job whose incremental segment a killed run left pending: its
/// files are written again too but join the table only with the segment,
/// whole; every version exact.
#[test]
fn a_rewrite_mid_segment_leaves_the_segment_to_join_whole() {
    use chainetl::sim::data::SimData;
    use chainetl::vocab::chain::Chain;
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, pq) = (dir.path().join("out"), dir.path().join("pq"));
    let data = SimData::new(42, 30);
    let start = crate::schedule::head_at(&data, Chain::Base, "2025-06-01T00:00:00Z") - 200;
    let s = |name: &str, uri: &Path, format: &str, extra: &str| {
        write_spec(
            dir.path(),
            name,
            &format!(
                "name = \"ri\"\n[source]\nbase_url = \"{}\"\nmax_concurrency = 1\n[output]\nuri = \"{}\"\nformat = \"{format}\"\ncompact = false\n{extra}\n\
                 [[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nincremental = true\nstart = {start}\nconfirmations = 20\nchunk_blocks = 32\n",
                sim.url(),
                uri.display()
            ),
        )
    };
    let o = chainetl(&["run", &s("pq.toml", &pq, "parquet", "")]);
    assert!(o.status.success(), "{}", text(&o));
    let o = crash_bin("after-file-write:3")
        .args(["run", &s("d.toml", &out, "delta", "")])
        .output()
        .unwrap();
    assert!(!o.status.success(), "the run should have died\n{}", text(&o));
    let o = chainetl(&["run", &s("d2.toml", &out, "delta", "row_group_rows = 5000"), "--summary", "json"]);
    assert!(o.status.success(), "{}", text(&o));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(summary["conversion"]["layout"].is_array(), "{summary}");
    let doc = check(&out.join("blocks"), keys_of("blocks"), Some(&pq.join("blocks")));
    every_version_exact(&doc, "blocks");
    assert_eq!(doc["rows"], doc["parquet_rows"], "every block of the segment once");
    for v in doc["versions"].as_array().unwrap() {
        assert_eq!(v["gaps"], 0, "the segment joined whole: {v}");
    }
    assert!(
        chainetl(&["verify", &s("d2.toml", &out, "delta", "row_group_rows = 5000")])
            .status
            .success()
    );
}

/// On S3 (moto): a parquet job re-partitioned and written with another
/// codec, killed once mid-rewrite, ends with the rows of a fresh export
/// of the new spec; then, as Delta, with new bloom filters in one commit a
/// table. No request to the service.
#[test]
fn a_job_on_s3_is_laid_out_anew_with_no_request() {
    let s3 = crate::s3::S3::start("bkt-relayout");
    let dir = tempfile::tempdir().unwrap();
    let (fresh, pq) = (dir.path().join("fresh"), dir.path().join("pq"));
    let uri = format!("s3://{}/lake", s3.bucket);
    let new_layout = "partition_by = [\"chain\"]\ncompression = \"snappy\"";
    let s = |name: &str, url: &str, uri: &str, format: &str, extra: &str| write_spec(dir.path(), name, &body(url, uri, format, extra));
    for (name, path, extra) in [("fresh.toml", &fresh, new_layout), ("pq.toml", &pq, "")] {
        let o = chainetl(&["run", &s(name, &s3.sim.url(), &path.to_string_lossy(), "parquet", extra)]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let o = s3
        .cmd(&["run", &s("p.toml", &s3.sim.url(), &uri, "parquet", ""), "-q"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let new = s("new.toml", &dead_url(), &uri, "parquet", new_layout);
    let o = s3
        .cmd_on(crash_bin("during-rewrite-swap:2"), &["run", &new, "-q"])
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", text(&o));
    run_without_requests(&mut s3.cmd(&["run", &new, "--summary", "json"]));
    let copy = dir.path().join("copy");
    for t in TABLES {
        s3.download(&format!("lake/{t}"), &copy.join(t));
    }
    assert_eq!(partitions(&copy), partitions(&fresh), "the fresh export's partitions");
    same_rows(&copy, &fresh);
    assert!(s3.cmd(&["verify", &new]).output().unwrap().status.success());
    // As Delta (adopted), then new bloom filters: one commit a table.
    let delta = s("d.toml", &dead_url(), &uri, "delta", new_layout);
    run_without_requests(&mut s3.cmd(&["run", &delta, "--summary", "json"]));
    let blooms = s(
        "db.toml",
        &dead_url(),
        &uri,
        "delta",
        &format!("{new_layout}\nbloom_filters = [\"block_number\"]"),
    );
    let summary = run_without_requests(&mut s3.cmd(&["run", &blooms, "--summary", "json"]));
    assert!(
        summary["conversion"]["layout"][0].as_str().unwrap().contains("bloom_filters"),
        "{summary}"
    );
    let back = dir.path().join("back");
    for t in TABLES {
        s3.download(&format!("lake/{t}"), &back.join(t));
        let doc = check(&back.join(t), keys_of(t), Some(&pq.join(t)));
        every_version_exact(&doc, t);
        assert_eq!(doc["rows"], doc["parquet_rows"], "{t} on S3");
        let ops = doc["operations"].as_array().unwrap();
        assert_eq!(ops.len(), 3, "{t}: created, adopted, rewritten: {ops:?}");
    }
    assert!(s3.cmd(&["verify", &blooms]).output().unwrap().status.success());
    // Partitioned by chain and date again, still Delta: the commit that
    // replaces each table's partition columns lands on S3 too.
    let by_date = s("dd.toml", &dead_url(), &uri, "delta", "bloom_filters = [\"block_number\"]");
    let summary = run_without_requests(&mut s3.cmd(&["run", &by_date, "--summary", "json"]));
    assert!(
        summary["conversion"]["layout"][0].as_str().unwrap().contains("partition_by"),
        "{summary}"
    );
    let again = dir.path().join("again");
    for t in TABLES {
        s3.download(&format!("lake/{t}"), &again.join(t));
        let doc = check(&again.join(t), keys_of(t), Some(&pq.join(t)));
        every_version_exact(&doc, t);
        assert_eq!(doc["rows"], doc["parquet_rows"], "{t} on S3, by chain and date");
        assert_eq!(doc["operations"].as_array().unwrap().len(), 4, "{t}: {doc}");
    }
    assert!(s3.cmd(&["verify", &by_date]).output().unwrap().status.success());
}

/// Laid out by date alone, a partition's compacted files hold rows of two
/// chains; written again with another codec, every row is there once.
#[test]
fn compacted_files_holding_two_chains_are_written_again_whole() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, fresh) = (dir.path().join("out"), dir.path().join("fresh"));
    let s = |name: &str, url: &str, uri: &Path, extra: &str| {
        write_spec(
            dir.path(),
            name,
            &format!(
                "name = \"two\"\n[source]\nbase_url = \"{url}\"\nmax_retries = 1\n[output]\nuri = \"{}\"\npartition_by = [\"date\"]\n{extra}\n\
                 [[export]]\ndataset = \"events\"\nchains = [\"ethereum\", \"base\"]\nwindow = \"2025-05-20T00:00:00Z..2025-05-20T00:10:00Z\"\n",
                uri.display()
            ),
        )
    };
    let lz4 = "compression = \"lz4\"";
    for (name, uri, extra) in [("fresh.toml", &fresh, lz4), ("p.toml", &out, "")] {
        let o = chainetl(&["run", &s(name, &sim.url(), uri, extra)]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let two = duckdb(&format!(
        "select count(distinct chain) from read_parquet('{}/events/**/*.parquet', hive_partitioning = true)",
        out.display()
    ));
    assert_eq!(two[0][0], "2", "one date, two chains");
    let summary = run_without_requests(bin().args(["run", &s("new.toml", &dead_url(), &out, lz4), "--summary", "json"]));
    assert!(summary["conversion"]["layout"].is_array(), "{summary}");
    let keys = keys_of("events");
    let got = read_rows(&out.join("events"), keys);
    assert!(!got.is_empty());
    assert_eq!(got, read_rows(&fresh.join("events"), keys), "each row once, none missing");
    assert!(chainetl(&["verify", &s("v.toml", &sim.url(), &out, lz4)]).status.success());
}

/// Hashes as bytes where they were 0x-hex text: every table's hash,
/// address and topic columns converted from the stored files, with no
/// request, equal to a fresh export of the new spec, in parquet and in
/// Delta (one commit a table replaces the files and the column types).
#[test]
fn a_new_hash_encoding_converts_every_hash_column_from_the_stored_files() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, fresh, d) = (dir.path().join("out"), dir.path().join("fresh"), dir.path().join("d"));
    let s = |name: &str, url: &str, uri: &Path, format: &str, extra: &str| {
        write_spec(dir.path(), name, &body(url, &uri.to_string_lossy(), format, extra))
    };
    let binary = "hash_encoding = \"binary\"";
    for (name, uri, format, extra) in [
        ("fresh.toml", &fresh, "parquet", binary),
        ("p.toml", &out, "parquet", ""),
        ("d.toml", &d, "delta", ""),
    ] {
        let o = chainetl(&["run", &s(name, &sim.url(), uri, format, extra)]);
        assert!(o.status.success(), "{name}: {}", text(&o));
    }
    // In Delta, one commit a table replaces the files and the column types.
    let fd = dir.path().join("fd");
    let o = chainetl(&["run", &s("fd.toml", &sim.url(), &fd, "delta", binary)]);
    assert!(o.status.success(), "{}", text(&o));
    let d_bin = s("d-bin.toml", &dead_url(), &d, "delta", binary);
    let summary = run_without_requests(bin().args(["run", &d_bin, "--summary", "json"]));
    assert!(
        summary["conversion"]["layout"][0].as_str().unwrap().contains("hash_encoding"),
        "{summary}"
    );
    crate::changing::delta_equals(&d, &fresh, &fd);
    assert!(chainetl(&["verify", &d_bin]).status.success());
    let new = s("bin-dead.toml", &dead_url(), &out, "parquet", binary);
    let summary = run_without_requests(bin().args(["run", &new, "--summary", "json"]));
    assert!(
        summary["conversion"]["layout"][0].as_str().unwrap().contains("hash_encoding"),
        "{summary}"
    );
    let types = |p: &Path, t: &str| {
        duckdb(&format!(
            "select column_name, column_type from (describe select * from read_parquet('{}/{t}/**/*.parquet', hive_partitioning = true))",
            p.display()
        ))
    };
    for t in TABLES {
        assert_eq!(types(&out, t), types(&fresh, t), "{t}: the fresh export's column types");
    }
    same_rows(&out, &fresh);
    let v = chainetl(&["verify", &new]);
    assert!(v.status.success(), "{}", text(&v));
    // And back to text.
    let back = s("hex-dead.toml", &dead_url(), &out, "parquet", "");
    run_without_requests(bin().args(["run", &back, "--summary", "json"]));
    let hex = dir.path().join("hex");
    let o = chainetl(&["run", &s("hex.toml", &sim.url(), &hex, "parquet", "")]);
    assert!(o.status.success(), "{}", text(&o));
    same_rows(&out, &hex);
    assert!(chainetl(&["verify", &back]).status.success());
}

/// New partition columns of Delta tables another job also writes to:
/// refused before anything changes, naming the table and the other
/// jobs' files (their files would be left in the old layout).
#[test]
fn a_delta_table_shared_with_another_job_keeps_its_partition_columns() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = |name: &str, job: &str, url: &str, extra: &str| {
        let text = body(url, &out.to_string_lossy(), "delta", extra).replace("name = \"cv\"", &format!("name = \"{job}\""));
        write_spec(dir.path(), name, &text)
    };
    for (name, job) in [("a.toml", "cv"), ("b.toml", "cw")] {
        let o = chainetl(&["run", &s(name, job, &sim.url(), "")]);
        assert!(o.status.success(), "{name}: {}", text(&o));
    }
    let new = s("a2.toml", "cv", &dead_url(), "partition_by = [\"chain\"]");
    let o = chainetl(&["run", &new]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("of other jobs sharing the output"), "{}", text(&o));
    assert!(!out.join("_chainetl/cv/migration.json").exists(), "refused before anything changed");
}
