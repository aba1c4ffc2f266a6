//! Every row through every change: jobs whose units span several
//! partitions, some compacted and some not, keep every row through a
//! change of layout or format and the compactions after it; `verify`
//! counts the rows readers see against the rows the job committed.

use crate::changing::{dead_url, run_without_requests};
use crate::common::*;
use crate::delta::keys_of;
use std::path::Path;

/// Base's block 30886926 is the last of 2025-05-29: with units of 35
/// blocks (cut at multiples of 35), unit 30886905..30886939 spans the
/// midnight. `FIRST_DAY_COMPACTED`: the day before holds two units' files
/// (compacted), the day after one (not); `SECOND_DAY_COMPACTED` the reverse.
const FIRST_DAY_COMPACTED: &str = "30886870..30886939";
const SECOND_DAY_COMPACTED: &str = "30886905..30886974";

/// Events and blocks on base in `window`, in 35-block units.
fn midnight(url: &str, out: &Path, format: &str, output: &str, window: &str, decoding: &str) -> String {
    format!(
        r#"name = "mid"
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
chains = ["base"]
window = "{window}"
chunk_blocks = 35
{decoding}
[[export]]
dataset = "blocks"
chains = ["base"]
window = "{window}"
chunk_blocks = 35
"#,
        out.display()
    )
}

const DECODE: &str = "decode = true\nalso_raw = true\ntable = \"transfers\"\nsignatures = [\"event Transfer(address indexed from, address indexed to, uint256 value)\"]";

/// Each table of `tables` under `out` holds the rows of `reference`'s,
/// each as often (parquet files read as a hive reader lists them).
fn same_rows(out: &Path, reference: &Path, tables: &[&str]) {
    for t in tables {
        let keys = keys_of(t);
        let want = read_rows(&reference.join(t), keys);
        assert!(!want.is_empty(), "{t}: the reference has rows");
        let got = read_rows(&out.join(t), keys);
        assert_eq!(got.len(), want.len(), "{t}: {} rows, a fresh export {}", got.len(), want.len());
        assert_eq!(got, want, "{t}: each row once, none missing");
    }
}

fn ok(o: std::process::Output) -> String {
    assert!(o.status.success(), "{}", text(&o));
    text(&o)
}

/// Portfolios of two wallets over 13 days, one active from the 8th
/// (2023-03-04): each unit spans 13 date partitions, the first seven with
/// one unit's file (not compacted), the rest with both (compacted).
fn portfolio(url: &str, out: &Path, format: &str, output: &str) -> String {
    format!(
        r#"name = "pf"
[source]
base_url = "{url}"
max_retries = 1
[output]
uri = "{}"
format = "{format}"
{output}
[[export]]
dataset = "portfolio"
chains = ["ethereum"]
wallets = ["0x0000000000000000000000000000000000001003", "0x0000000000000000000000000000000000001005"]
window = "2023-02-25T00:00:00Z..2023-03-10T00:00:00Z"
"#,
        out.display()
    )
}

/// `spec` (a change pointing at a dead URL) runs with no request, and
/// leaves `tables` equal to `fresh`'s and `verify` passing.
fn changed_exactly(spec: &str, out: &Path, fresh: &Path, tables: &[&str]) {
    run_without_requests(bin().args(["run", spec, "--summary", "json"]));
    for t in tables {
        crate::derive::same_table(out, fresh, t);
    }
    ok(chainetl(&["verify", spec]));
}

/// Every parquet file under `out` with its bytes, sorted by path.
fn snapshot(out: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    parquet_files(out)
        .into_iter()
        .map(|f| (f.clone(), std::fs::read(&f).unwrap()))
        .collect()
}

/// A job whose partitions were each compacted or not, its layout changed
/// with no request again and again: every row stays, through the
/// compaction after each change.
fn layout_change_keeps_every_row(body: impl Fn(&str, &Path, &str) -> String, tables: &[&str]) {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, fresh) = (dir.path().join("out"), dir.path().join("fresh"));
    let s = |name: &str, url: &str, uri: &Path, output: &str| write_spec(dir.path(), name, &body(url, uri, output));
    ok(chainetl(&["run", &s("fresh.toml", &sim.url(), &fresh, "")]));
    ok(chainetl(&["run", &s("job.toml", &sim.url(), &out, "")]));
    same_rows(&out, &fresh, tables);
    for (i, layout) in ["partition_by = [\"chain\"]", "partition_by = []", "", "partition_by = [\"date\"]"]
        .iter()
        .enumerate()
    {
        let spec = s(&format!("change-{i}.toml"), &dead_url(), &out, layout);
        run_without_requests(bin().args(["run", &spec, "--summary", "json"]));
        same_rows(&out, &fresh, tables);
        ok(chainetl(&["compact", &spec]));
        same_rows(&out, &fresh, tables);
        ok(chainetl(&["verify", &spec]));
    }
}

#[test]
fn portfolios_spanning_partitions_keep_every_row_through_layout_changes() {
    layout_change_keeps_every_row(|url, out, output| portfolio(url, out, "parquet", output), &["portfolio"]);
}

#[test]
fn a_unit_spanning_midnight_keeps_every_row_when_the_first_day_was_compacted() {
    layout_change_keeps_every_row(
        |url, out, output| midnight(url, out, "parquet", output, FIRST_DAY_COMPACTED, ""),
        &["events", "blocks"],
    );
}

#[test]
fn a_unit_spanning_midnight_keeps_every_row_when_the_second_day_was_compacted() {
    layout_change_keeps_every_row(
        |url, out, output| midnight(url, out, "parquet", output, SECOND_DAY_COMPACTED, ""),
        &["events", "blocks"],
    );
}

#[test]
fn decoded_tables_keep_every_row_through_layout_changes() {
    layout_change_keeps_every_row(
        |url, out, output| midnight(url, out, "parquet", output, FIRST_DAY_COMPACTED, DECODE),
        &["events", "blocks", "transfers"],
    );
}

/// With `compact = false` the re-partition itself is exact; the loss came
/// at the `chainetl compact` after it.
#[test]
fn an_uncompacted_job_laid_out_anew_keeps_every_row_at_its_first_compaction() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, fresh) = (dir.path().join("out"), dir.path().join("fresh"));
    let tables = ["events", "blocks"];
    for window in [FIRST_DAY_COMPACTED, SECOND_DAY_COMPACTED] {
        let _ = std::fs::remove_dir_all(&out);
        let _ = std::fs::remove_dir_all(&fresh);
        let s = |name: &str, url: &str, uri: &Path, output: &str| {
            write_spec(dir.path(), name, &midnight(url, uri, "parquet", output, window, ""))
        };
        ok(chainetl(&[
            "run",
            &s("fresh.toml", &sim.url(), &fresh, "partition_by = [\"chain\"]"),
        ]));
        ok(chainetl(&["run", &s("job.toml", &sim.url(), &out, "")]));
        let spec = s("c.toml", &dead_url(), &out, "partition_by = [\"chain\"]\ncompact = false");
        run_without_requests(bin().args(["run", &spec, "--summary", "json"]));
        same_rows(&out, &fresh, &tables);
        ok(chainetl(&[
            "compact",
            &s("compacting.toml", &dead_url(), &out, "partition_by = [\"chain\"]"),
        ]));
        same_rows(&out, &fresh, &tables);
        ok(chainetl(&["verify", &spec]));
    }
}

/// A Delta job is exact while it stays Delta; converted to parquet, it
/// lost rows at its first compaction.
#[test]
fn a_delta_job_converted_to_parquet_keeps_every_row_through_its_compactions() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, fresh) = (dir.path().join("out"), dir.path().join("fresh"));
    let tables = ["events", "blocks"];
    let s = |name: &str, url: &str, uri: &Path, format: &str, output: &str| {
        write_spec(dir.path(), name, &midnight(url, uri, format, output, FIRST_DAY_COMPACTED, ""))
    };
    ok(chainetl(&["run", &s("fresh.toml", &sim.url(), &fresh, "parquet", "")]));
    ok(chainetl(&["run", &s("job.toml", &sim.url(), &out, "delta", "")]));
    let parquet = s("p.toml", &dead_url(), &out, "parquet", "");
    run_without_requests(bin().args(["run", &parquet, "--summary", "json"]));
    same_rows(&out, &fresh, &tables);
    ok(chainetl(&["compact", &parquet]));
    same_rows(&out, &fresh, &tables);
    let parquet = s("p-chain.toml", &dead_url(), &out, "parquet", "partition_by = [\"chain\"]");
    run_without_requests(bin().args(["run", &parquet, "--summary", "json"]));
    same_rows(&out, &fresh, &tables);
    ok(chainetl(&["compact", &parquet]));
    same_rows(&out, &fresh, &tables);
    ok(chainetl(&["verify", &parquet]));
}

/// The output the defect left, made as it made it: a unit's file deleted
/// and recorded as replaced by a compacted partition, its checkpoint
/// untouched. Every file is in place; `verify` counts the rows, says how
/// many are missing and of which units, and exits 1; `--repair` restores
/// them, fetching those units and no other.
#[test]
fn verify_counts_rows_recorded_as_compacted_that_no_compacted_file_holds_and_repair_restores_them() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, fresh) = (dir.path().join("out"), dir.path().join("fresh"));
    // Events only, so the run report's requests are the events units'.
    let events_only = |uri: &Path| {
        let body = midnight(&sim.url(), uri, "parquet", "", FIRST_DAY_COMPACTED, "");
        body[..body.rfind("[[export]]").unwrap()].to_string()
    };
    ok(chainetl(&["run", &write_spec(dir.path(), "fresh.toml", &events_only(&fresh))]));
    let spec = write_spec(dir.path(), "job.toml", &events_only(&out));
    ok(chainetl(&["run", &spec]));
    let requests = |out: &Path| read_json(&out.join("_chainetl/mid/runs/latest.json"))["requests"].as_u64().unwrap();
    let first = requests(&out);
    let v = chainetl(&["verify", &spec]);
    assert!(v.status.success(), "{}", text(&v));
    assert!(text(&v).contains("rows as committed: events on base: 2137"), "{}", text(&v));
    // The spanning unit's file of the second day, gone, named as compacted
    // into the first day's partition.
    let unit = "e0-events-base-b30886905-30886940";
    let day2 = out.join("events/chain=base/date=2025-05-30");
    let lost = parquet_files(&day2)
        .into_iter()
        .find(|f| f.to_string_lossy().contains(unit))
        .unwrap();
    let lost_rows = read_rows(&day2, &["block_number"]).len();
    std::fs::remove_file(&lost).unwrap();
    let rel = lost.strip_prefix(&out).unwrap().to_string_lossy().into_owned();
    edit_json(&out.join("_chainetl/mid/compactions.json"), |doc| {
        let record = doc["records"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|r| r["partition"] == "events/chain=base/date=2025-05-29")
            .unwrap();
        record["replaced"].as_array_mut().unwrap().push(rel.clone().into());
    });
    for quick in [false, true] {
        let v = chainetl(&["verify", &spec, if quick { "--quick" } else { "-q" }]);
        assert_eq!(v.status.code(), Some(1), "{}", text(&v));
        let t = text(&v);
        assert!(t.contains(&format!("{lost_rows} rows missing")), "{t}");
        assert!(t.contains(unit), "{t}");
        assert!(
            t.contains(&format!(
                "rows of events on base: readers see {}, the job committed 2137",
                2137 - lost_rows
            )),
            "{t}"
        );
    }
    let r = chainetl(&["verify", &spec, "--repair"]);
    assert!(r.status.success(), "{}", text(&r));
    let repaired = requests(&out);
    assert!(
        repaired > 0 && repaired <= first,
        "{repaired} requests to repair, {first} to export the job"
    );
    same_rows(&out, &fresh, &["events"]);
    ok(chainetl(&["verify", &spec]));
}

/// Rows of table `t` under `out` as DuckDB, Polars and pyarrow read the
/// folder (hive partitions from the paths): one count each.
fn engine_counts(out: &Path, t: &str) -> serde_json::Value {
    let script = r#"
import json, sys
import duckdb, polars as pl, pyarrow.dataset as ds
d = sys.argv[1]
print(json.dumps([
    duckdb.sql(f"select count(*) from read_parquet('{d}/**/*.parquet', hive_partitioning = true)").fetchall()[0][0],
    pl.scan_parquet(f"{d}/**/*.parquet", hive_partitioning=True).select(pl.len()).collect().item(),
    ds.dataset(d, format="parquet", partitioning="hive").count_rows(),
]))
"#;
    let o = python_output(std::process::Command::new(python()).args(["-c", script, &out.join(t).to_string_lossy()])).unwrap();
    assert!(o.status.success(), "{t}: {}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Two jobs sharing a parquet output: one whose format, partition keys
/// or hash encoding would differ from the other's in a table folder both
/// write is refused before anything changes — as a new job and as a
/// change alike — naming the other job; what readers cannot tell apart
/// (compression) may differ. Both jobs' rows read as one table in DuckDB,
/// Polars and pyarrow.
#[test]
fn a_second_job_that_would_mix_layouts_in_a_shared_table_folder_is_refused() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let job = |name: &str, url: &str, format: &str, output: &str, window: &str| {
        let body = midnight(url, &out, format, output, window, "").replace("name = \"mid\"", &format!("name = \"{name}\""));
        write_spec(dir.path(), &format!("{name}-{}.toml", output.len() + format.len()), &body)
    };
    ok(chainetl(&["run", &job("a", &sim.url(), "parquet", "", FIRST_DAY_COMPACTED)]));
    let snapshot = || snapshot(&out);
    let before = snapshot();
    let window = "30886975..30887009";
    for (format, output) in [
        ("parquet", "partition_by = [\"chain\"]"),
        ("parquet", "hash_encoding = \"binary\""),
        ("delta", ""),
    ] {
        let o = chainetl(&["run", &job("b", &sim.url(), format, output, window)]);
        assert_eq!(o.status.code(), Some(2), "{format} {output}: {}", text(&o));
        assert!(text(&o).contains("job `a`") && text(&o).contains("events/"), "{}", text(&o));
        assert_eq!(snapshot(), before, "refused before anything changed");
        assert!(!out.join("_chainetl/b/job.json").exists(), "no state of the refused job");
    }
    // The same layout: both jobs write the folder.
    ok(chainetl(&["run", &job("b", &sim.url(), "parquet", "", window)]));
    // A change that would mix is refused as a new job is; one readers
    // cannot tell apart is made.
    let before = snapshot();
    for (format, output) in [("parquet", "partition_by = [\"chain\"]"), ("delta", "")] {
        let o = chainetl(&["run", &job("b", &dead_url(), format, output, window)]);
        assert_eq!(o.status.code(), Some(2), "{format} {output}: {}", text(&o));
        assert!(text(&o).contains("job `a`"), "{}", text(&o));
        assert_eq!(snapshot(), before, "refused before anything changed");
    }
    run_without_requests(bin().args([
        "run",
        &job("b", &dead_url(), "parquet", "compression = \"snappy\"", window),
        "--summary",
        "json",
    ]));
    for t in ["events", "blocks"] {
        let n = read_rows(&out.join(t), keys_of(t)).len() as u64;
        assert_eq!(engine_counts(&out, t), serde_json::json!([n, n, n]), "{t}");
    }
    ok(chainetl(&["verify", &job("a", &dead_url(), "parquet", "", FIRST_DAY_COMPACTED)]));
    ok(chainetl(&[
        "verify",
        &job("b", &dead_url(), "parquet", "compression = \"snappy\"", window),
    ]));
}

/// A folder that mixes already (two jobs started before the rule): `verify`
/// says so, naming the other job, and exits 1.
#[test]
fn verify_reports_a_table_folder_two_jobs_write_in_other_layouts() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let a = write_spec(
        dir.path(),
        "a.toml",
        &midnight(&sim.url(), &out, "parquet", "", FIRST_DAY_COMPACTED, "").replace("\"mid\"", "\"a\""),
    );
    let b = write_spec(
        dir.path(),
        "b.toml",
        &midnight(&sim.url(), &out, "parquet", "", "30886975..30887009", "").replace("\"mid\"", "\"b\""),
    );
    ok(chainetl(&["run", &a]));
    ok(chainetl(&["run", &b]));
    // What an older build let job b record.
    edit_json(&out.join("_chainetl/b/job.json"), |doc| {
        doc["identity"]["output"]["partition_by"] = serde_json::json!(["chain"]);
    });
    let v = chainetl(&["verify", &a]);
    assert_eq!(v.status.code(), Some(1), "{}", text(&v));
    assert!(text(&v).contains("with job `b`: partition_by"), "{}", text(&v));
}

/// Raw transfers exported the usual way, one export a chain each with its
/// own window, writing one raw table.
fn per_chain(url: &str, out: &Path, decoding: &str) -> String {
    format!(
        r#"name = "pc"
[source]
base_url = "{url}"
max_concurrency = 4
max_retries = 1
[output]
uri = "{}"
[[export]]
dataset = "events"
chains = ["ethereum"]
window = "20000000..20000099"
chunk_blocks = 50
signatures = ["event Transfer(address indexed from, address indexed to, uint256 value)"]
{decoding}
[[export]]
dataset = "events"
chains = ["bsc"]
window = "40000000..40000199"
chunk_blocks = 100
signatures = ["event Transfer(address indexed from, address indexed to, uint256 value)"]
{decoding}
"#,
        out.display()
    )
}

/// Decoding, then `u256` columns, added to every export of a
/// one-export-per-chain job: each made from the stored rows with no
/// request, equal to a fresh export of the spec (each file's rows are of
/// one export: by its chain, not by which exports name the table).
#[test]
fn decoding_and_u256_added_to_one_export_a_chain_are_made_from_the_stored_rows() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let decode = "decode = true\nalso_raw = true\ntable = \"transfer\"";
    let wide = "decode = true\nalso_raw = true\ntable = \"transfer\"\nu256 = [\"decimal38\"]";
    ok(chainetl(&[
        "run",
        &write_spec(dir.path(), "raw.toml", &per_chain(&sim.url(), &out, "")),
    ]));
    for (i, decoding) in [decode, wide].into_iter().enumerate() {
        let fresh = dir.path().join(format!("fresh-{i}"));
        ok(chainetl(&[
            "run",
            &write_spec(dir.path(), &format!("f{i}.toml"), &per_chain(&sim.url(), &fresh, decoding)),
        ]));
        let spec = write_spec(dir.path(), &format!("c{i}.toml"), &per_chain(&dead_url(), &out, decoding));
        changed_exactly(&spec, &out, &fresh, &["events", "transfer"]);
    }
}

/// Two exports of one chain, one a window, whose rows share compacted
/// partitions: decoding added to one of them cannot tell its rows from
/// the other's there, and is refused (exit 2, naming the other export)
/// before anything changes; added to both alike, it is made from the
/// stored rows.
#[test]
fn decoding_added_to_one_of_two_exports_sharing_compacted_partitions_is_refused() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, fresh) = (dir.path().join("out"), dir.path().join("fresh"));
    let decode = "decode = true\nalso_raw = true\ntable = \"transfer\"";
    let body = |url: &str, uri: &Path, first: &str, second: &str| {
        per_chain(url, uri, "")
            .replacen("\n\n[[export]]", &format!("\n{first}\n[[export]]"), 1)
            .replace(
                "chains = [\"bsc\"]\nwindow = \"40000000..40000199\"\nchunk_blocks = 100",
                "chains = [\"ethereum\"]\nwindow = \"20000100..20000199\"\nchunk_blocks = 50",
            )
            + second
    };
    ok(chainetl(&[
        "run",
        &write_spec(dir.path(), "raw.toml", &body(&sim.url(), &out, "", "")),
    ]));
    let snapshot = || snapshot(&out);
    let before = snapshot();
    let one = write_spec(dir.path(), "one.toml", &body(&dead_url(), &out, "", decode));
    let o = chainetl(&["run", &one]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("hold rows of export[0] beside export[1]'s"), "{}", text(&o));
    assert_eq!(snapshot(), before, "refused before anything changed");
    ok(chainetl(&[
        "run",
        &write_spec(dir.path(), "f.toml", &body(&sim.url(), &fresh, decode, decode)),
    ]));
    let both = write_spec(dir.path(), "both.toml", &body(&dead_url(), &out, decode, decode));
    changed_exactly(&both, &out, &fresh, &["events", "transfer"]);
}

/// An export appended in an earlier run, then left out of the spec again:
/// refused as any removed export is (its rows would stay in the output
/// with no export of the job's naming them). Found by `model_long`.
#[test]
fn an_appended_export_left_out_again_is_refused() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let body = midnight(&sim.url(), &out, "parquet", "", FIRST_DAY_COMPACTED, "");
    let first = body[..body.rfind("[[export]]").unwrap()].to_string();
    ok(chainetl(&["run", &write_spec(dir.path(), "first.toml", &first)]));
    ok(chainetl(&["run", &write_spec(dir.path(), "both.toml", &body)]));
    let o = chainetl(&["run", &write_spec(dir.path(), "again.toml", &first)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("export[1] (blocks on base), appended in an earlier run, was removed"),
        "{}",
        text(&o)
    );
}
