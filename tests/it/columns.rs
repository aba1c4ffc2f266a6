//! Choosing the columns an export writes (`columns`, `exclude_columns`):
//! files and Delta tables hold only those, every engine reads them with
//! the rows of a full export; a finished job leaves more out from the
//! files it holds, with no request, exact through kill -9; a column left
//! out cannot come back from the stored rows.

use crate::changing::{TABLES, dead_url, run_without_requests};
use crate::common::*;
use crate::delta::{check, every_version_exact, keys_of};
use std::collections::BTreeSet;
use std::path::Path;

/// A job of blocks on ethereum, `extra` among the export's keys.
fn blocks_spec(url: &str, uri: &Path, format: &str, extra: &str) -> String {
    format!(
        "name = \"cols\"\n[source]\nbase_url = \"{url}\"\nmax_concurrency = 4\nmax_retries = 1\n[output]\nuri = \"{}\"\nformat = \"{format}\"\n\
         [[export]]\ndataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000199\"\n{extra}\n",
        uri.display()
    )
}

/// The five-table job of `crate::changing`, its blocks export cut in four
/// units, not compacted (a group a unit to rewrite), `blocks` among its keys.
fn job_spec(url: &str, uri: &Path, format: &str, blocks: &str) -> String {
    crate::changing::body(url, &uri.to_string_lossy(), format, "compact = false").replace(
        "dataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000199\"\n",
        &format!("dataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000199\"\nchunk_blocks = 50\n{blocks}\n"),
    )
}

/// The columns any Parquet file of `table` under `out` holds.
fn file_columns(out: &Path, table: &str) -> BTreeSet<String> {
    let rows = duckdb(&format!(
        "select column_name from (describe select * from read_parquet('{}/{table}/**/*.parquet', hive_partitioning = false, union_by_name = true))",
        out.display()
    ));
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect()
}

/// `table` under `out` holds the rows of `reference`'s, each as often, over
/// the columns `out`'s files have (DuckDB, partition keys from the paths).
fn same_rows_over_own_columns(out: &Path, reference: &Path, table: &str) {
    let cols = file_columns(out, table)
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let q = |a: &Path, b: &Path| {
        format!(
            "select count(*) from (select chain, {cols} from read_parquet('{}/{table}/**/*.parquet', hive_partitioning = true) \
             except all select chain, {cols} from read_parquet('{}/{table}/**/*.parquet', hive_partitioning = true))",
            a.display(),
            b.display()
        )
    };
    assert_eq!(duckdb(&q(out, reference))[0][0], "0", "{table}: a row the reference lacks");
    assert_eq!(duckdb(&q(reference, out))[0][0], "0", "{table}: a row of the reference missing");
    let keys = keys_of(table);
    let got = read_rows(&out.join(table), keys);
    assert!(!got.is_empty(), "{table} has rows");
    assert_eq!(got, read_rows(&reference.join(table), keys), "{table}: each key once");
}

#[test]
fn a_blocks_export_without_logs_bloom_is_read_exactly_by_every_engine() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (full, except, only) = (dir.path().join("full"), dir.path().join("except"), dir.path().join("only"));
    let run = |name: &str, uri: &Path, extra: &str| {
        let s = write_spec(dir.path(), name, &blocks_spec(&sim.url(), uri, "parquet", extra));
        let o = chainetl(&["run", &s, "--summary", "json"]);
        assert!(o.status.success(), "{name}: {}", text(&o));
        (s, serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap())
    };
    run("full.toml", &full, "");
    let (except_spec, summary) = run("except.toml", &except, "exclude_columns = [\"logs_bloom\"]");
    let (_, only_summary) = run("only.toml", &only, "columns = [\"hash\", \"miner\", \"gas_used\"]");
    let all: BTreeSet<String> = file_columns(&full, "blocks");
    assert!(all.contains("logs_bloom"), "{all:?}");
    let mut without = all.clone();
    without.remove("logs_bloom");
    assert_eq!(file_columns(&except, "blocks"), without);
    // Key, sort and partition columns are kept though not listed (`chain`
    // and `date` live in the paths).
    let listed: BTreeSet<String> = ["gas_used", "hash", "miner", "number", "timestamp"].map(String::from).into();
    assert_eq!(file_columns(&only, "blocks"), listed);
    assert!(
        summary["columns"]["blocks"]
            .as_array()
            .is_some_and(|c| c.len() == 20 && !c.contains(&"logs_bloom".into())),
        "the report names the columns: {summary}"
    );
    assert_eq!(
        only_summary["columns"]["blocks"].as_array().map(Vec::len),
        Some(6),
        "{only_summary}"
    );
    let rows = read_rows(&full.join("blocks"), &["chain", "number"]).len() as u64;
    assert!(rows > 0);
    for out in [&except, &only] {
        same_rows_over_own_columns(out, &full, "blocks");
        let r = check_script("engines_check.py", &[out.to_str().unwrap(), "blocks"], &[]);
        let cols = file_columns(out, "blocks");
        for engine in ["duckdb", "polars", "pyarrow", "spark"] {
            assert_eq!(r["blocks"][engine]["rows"].as_u64(), Some(rows), "{engine} counts differently: {r}");
            let seen: BTreeSet<String> = r["blocks"][engine]["types"].as_object().unwrap().keys().cloned().collect();
            let want: BTreeSet<String> = cols.iter().cloned().chain(["chain".to_string(), "date".to_string()]).collect();
            assert_eq!(seen, want, "{engine} sees the columns written and the partition keys: {r}");
        }
    }
    // `schema --spec` and `status` say what the files hold.
    let o = chainetl(&["schema", "--spec", &except_spec, "--format", "duckdb"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("extra_data") && !text(&o).contains("logs_bloom"), "{}", text(&o));
    let st = chainetl(&["status", &except_spec, "--format", "json"]);
    let st: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    assert!(
        st["columns"]["blocks"]
            .as_array()
            .is_some_and(|c| c.contains(&"extra_data".into()) && !c.contains(&"logs_bloom".into())),
        "{st}"
    );
    let st = chainetl(&["status", &except_spec]);
    assert!(
        text(&st).contains("blocks holds the columns chain, base_fee_per_gas"),
        "{}",
        text(&st)
    );
}

#[test]
fn a_delta_export_holds_only_the_columns_chosen() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (pq, except, only) = (dir.path().join("pq"), dir.path().join("except"), dir.path().join("only"));
    for (name, uri, format, extra) in [
        ("pq.toml", &pq, "parquet", ""),
        (
            "except.toml",
            &except,
            "delta",
            "exclude_columns = [\"logs_bloom\", \"extra_data\"]",
        ),
        ("only.toml", &only, "delta", "columns = [\"hash\", \"gas_used\"]"),
    ] {
        let s = write_spec(dir.path(), name, &blocks_spec(&sim.url(), uri, format, extra));
        let o = chainetl(&["run", &s]);
        assert!(o.status.success(), "{name}: {}", text(&o));
        assert!(chainetl(&["verify", &s]).status.success(), "{name}");
    }
    for (out, absent, present) in [
        (&except, &["logs_bloom", "extra_data"][..], &["hash", "miner", "parent_hash"][..]),
        (
            &only,
            &["logs_bloom", "miner", "parent_hash"][..],
            &["hash", "gas_used", "number", "timestamp"][..],
        ),
    ] {
        let doc = check(&out.join("blocks"), keys_of("blocks"), Some(&pq.join("blocks")));
        every_version_exact(&doc, "blocks");
        let n = doc["rows"].as_array().unwrap().len() as u64;
        assert!(n > 0);
        assert_eq!(
            doc["rows"], doc["parquet_rows"],
            "the parquet export's rows, over the table's columns"
        );
        assert_eq!(doc["polars_rows"].as_u64(), Some(n));
        assert_eq!(doc["duckdb_rows"].as_u64(), Some(n));
        let types = doc["types"].as_object().unwrap();
        for c in absent {
            assert!(!types.contains_key(*c), "{c}: {types:?}");
        }
        for c in present {
            assert!(types.contains_key(*c), "{c}: {types:?}");
        }
        for c in absent {
            assert!(!file_columns(out, "blocks").contains(*c), "{c} is in no file");
        }
    }
}

#[test]
fn a_column_selection_the_dataset_cannot_have_is_refused_with_its_columns() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let s = write_spec(
        dir.path(),
        "bad.toml",
        &blocks_spec(
            "sim",
            &out,
            "parquet",
            "exclude_columns = [\"logs_bloom\", \"number\", \"logsbloom\"]\ncolumns = [\"hash\"]",
        ),
    );
    let o = chainetl(&["validate", &s]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("bad.toml:"), "{t}");
    assert!(
        t.contains("`number` is always written: blocks keeps chain, number, timestamp"),
        "{t}"
    );
    assert!(
        t.contains("`logsbloom` is not a column of blocks; its columns: chain, base_fee_per_gas, difficulty"),
        "{t}"
    );
    assert!(t.contains("this export has `columns` too"), "{t}");
    let s = write_spec(
        dir.path(),
        "tokens.toml",
        &format!(
            "name = \"t\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"{}\"\n[[export]]\ndataset = \"tokens\"\nchains = [\"ethereum\"]\naddresses = [\"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48\"]\ncolumns = [\"symbol\", \"topic0\"]\n",
            out.display()
        ),
    );
    let o = chainetl(&["validate", &s]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("`topic0` is not a column of tokens; its columns: chain, address, decimals, name, standard, symbol"),
        "{}",
        text(&o)
    );
}

/// A finished parquet job leaves `logs_bloom` and `extra_data` out of its
/// blocks: the files are written again from those it holds with no
/// request, killed at every step, and end equal to a fresh export of the
/// new spec; the other tables are not rewritten. Bringing a column back
/// is refused.
#[test]
fn a_finished_parquet_job_leaves_columns_out_with_no_request_through_kill_9() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, fresh) = (dir.path().join("out"), dir.path().join("fresh"));
    let dropped = "exclude_columns = [\"logs_bloom\", \"extra_data\"]";
    let s = |name: &str, url: &str, uri: &Path, blocks: &str| write_spec(dir.path(), name, &job_spec(url, uri, "parquet", blocks));
    let o = chainetl(&["run", &s("fresh.toml", &sim.url(), &fresh, dropped)]);
    assert!(o.status.success(), "{}", text(&o));
    let o = chainetl(&["run", &s("p.toml", &sim.url(), &out, "")]);
    assert!(o.status.success(), "{}", text(&o));
    let events_before: BTreeSet<String> = parquet_files(&out.join("events")).iter().map(|p| p.display().to_string()).collect();
    let new = s("new-dead.toml", &dead_url(), &out, dropped);
    let p = chainetl(&["plan", &new]);
    assert!(p.status.success(), "{}", text(&p));
    assert!(
        text(&p).contains("exclude_columns") && text(&p).contains("0 requests"),
        "{}",
        text(&p)
    );
    for point in [
        "rewrite-recorded:1",
        "during-rewrite:2",
        "rewrite-written:1",
        "during-rewrite-swap:3",
        "rewrite-checkpointed:1",
        "rewrite-applied:1",
        "migration-recorded:1",
    ] {
        let o = crash_bin(point).args(["run", &new, "-q"]).output().unwrap();
        assert!(!o.status.success(), "{point}: the run should have died\n{}", text(&o));
    }
    let summary = run_without_requests(bin().args(["run", &new, "--summary", "json"]));
    assert!(summary["conversion"].is_null(), "finished by the run that died last: {summary}");
    assert_eq!(file_columns(&out, "blocks"), file_columns(&fresh, "blocks"));
    assert!(!file_columns(&out, "blocks").contains("logs_bloom"));
    for t in TABLES {
        same_rows_over_own_columns(&out, &fresh, t);
    }
    let events_after: BTreeSet<String> = parquet_files(&out.join("events")).iter().map(|p| p.display().to_string()).collect();
    assert_eq!(events_before, events_after, "a table whose columns stay is not written again");
    let v = chainetl(&["verify", &new]);
    assert!(v.status.success(), "{}", text(&v));
    // Done: the job goes on as one started without them.
    let again = run_without_requests(bin().args(["run", &s("again.toml", &sim.url(), &out, dropped), "--summary", "json"]));
    assert!(again["conversion"].is_null(), "{again}");
    // A column back: the stored rows do not hold it.
    let back = s("back.toml", &sim.url(), &out, "exclude_columns = [\"extra_data\"]");
    for cmd in ["run", "plan"] {
        let o = chainetl(&[cmd, &back]);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", text(&o));
        let t = text(&o);
        assert!(t.contains("do not hold column `logs_bloom`") && t.contains("--fresh"), "{cmd}: {t}");
    }
}

/// A finished Delta job leaves `logs_bloom` out of its blocks: one commit
/// swaps in files without it and gives the table its new schema, with no
/// request; killed at every step, every version holds each key once.
#[test]
fn a_finished_delta_job_leaves_columns_out_in_one_commit_with_no_request() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, pq) = (dir.path().join("out"), dir.path().join("pq"));
    let dropped = "exclude_columns = [\"logs_bloom\"]";
    let s =
        |name: &str, url: &str, uri: &Path, format: &str, blocks: &str| write_spec(dir.path(), name, &job_spec(url, uri, format, blocks));
    let o = chainetl(&["run", &s("pq.toml", &sim.url(), &pq, "parquet", dropped)]);
    assert!(o.status.success(), "{}", text(&o));
    let o = chainetl(&["run", &s("d.toml", &sim.url(), &out, "delta", "")]);
    assert!(o.status.success(), "{}", text(&o));
    let versions = |t: &str| check(&out.join(t), keys_of(t), None)["operations"].as_array().unwrap().len();
    let before: Vec<usize> = TABLES.iter().map(|t| versions(t)).collect();
    let new = s("new.toml", &dead_url(), &out, "delta", dropped);
    crate::relayout::killed_at_every_delta_rewrite_step(&new, &out);
    let summary = run_without_requests(bin().args(["run", &new, "--summary", "json"]));
    assert!(
        summary["conversion"]["layout"][0]
            .as_str()
            .is_some_and(|l| l.contains("exclude_columns")),
        "the last run finishes it: {summary}"
    );
    for (t, before) in TABLES.iter().zip(before) {
        let doc = check(&out.join(t), keys_of(t), Some(&pq.join(t)));
        every_version_exact(&doc, t);
        assert_eq!(doc["rows"], doc["parquet_rows"], "{t}: the rows of the parquet export");
        let ops = doc["operations"].as_array().unwrap().len();
        let want = if *t == "blocks" { before + 1 } else { before };
        assert_eq!(ops, want, "{t}: one commit rewrote blocks, none the others");
    }
    let doc = check(&out.join("blocks"), keys_of("blocks"), None);
    assert!(!doc["types"].as_object().unwrap().contains_key("logs_bloom"), "{doc}");
    let files: Vec<String> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().replace("file://", ""))
        .collect();
    let list = files.iter().map(|f| format!("'{f}'")).collect::<Vec<_>>().join(", ");
    let names = duckdb(&format!(
        "select column_name from (describe select * from read_parquet([{list}], union_by_name = true))"
    ));
    assert!(!names.to_string().contains("logs_bloom"), "no current file holds it: {names}");
    let v = chainetl(&["verify", &new]);
    assert!(v.status.success(), "{}", text(&v));
    let back = s("back.toml", &dead_url(), &out, "delta", "");
    let o = chainetl(&["run", &back]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("do not hold column `logs_bloom`"), "{}", text(&o));
}

/// An Iceberg export with `columns` holds only those; a finished Iceberg
/// job that leaves a column out rewrites the table that loses it, one
/// snapshot replacing its files and dropping the column from its schema,
/// with no request, killed at each step: readers (pyiceberg, Polars, a
/// SQL catalog) no longer see the column, no current file holds it,
/// every snapshot is exact, the other tables keep their files; a column
/// brought back is refused.
#[test]
fn a_finished_iceberg_job_leaves_columns_out_in_one_snapshot_with_no_request() {
    use crate::iceberg_format::{check as ice_check, every_snapshot_exact};
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, pq, only) = (dir.path().join("out"), dir.path().join("pq"), dir.path().join("only"));
    let dropped = "exclude_columns = [\"logs_bloom\"]";
    let s =
        |name: &str, url: &str, uri: &Path, format: &str, blocks: &str| write_spec(dir.path(), name, &job_spec(url, uri, format, blocks));
    let o = chainetl(&["run", &s("pq.toml", &sim.url(), &pq, "parquet", dropped)]);
    assert!(o.status.success(), "{}", text(&o));
    let o = chainetl(&["run", &s("i.toml", &sim.url(), &out, "iceberg", "")]);
    assert!(o.status.success(), "{}", text(&o));
    let o = chainetl(&[
        "run",
        &s("only.toml", &sim.url(), &only, "iceberg", "columns = [\"hash\", \"gas_used\"]"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let doc = ice_check(&only.join("blocks"), keys_of("blocks"), None);
    let types: BTreeSet<&String> = doc["types"].as_object().unwrap().keys().collect();
    assert!(
        types.contains(&"hash".to_string()) && types.contains(&"number".to_string()),
        "{types:?}"
    );
    assert!(
        !types.contains(&"miner".to_string()) && !types.contains(&"logs_bloom".to_string()),
        "{types:?}"
    );
    let files_before = ice_check(&out.join("events"), keys_of("events"), None)["files"].clone();
    let new = s("new.toml", &dead_url(), &out, "iceberg", dropped);
    for point in [
        "during-rewrite:3",
        "rewrite-published:1",
        "during-rewrite-commit:1",
        "rewrite-committed:1",
    ] {
        let o = crash_bin(point).args(["run", &new, "-q"]).output().unwrap();
        assert!(!o.status.success(), "{point}: the run should have died\n{}", text(&o));
        for t in TABLES {
            every_snapshot_exact(&ice_check(&out.join(t), keys_of(t), None), t);
        }
    }
    run_without_requests(bin().args(["run", &new, "--summary", "json"]));
    for t in TABLES {
        let doc = ice_check(&out.join(t), keys_of(t), Some(&pq.join(t)));
        every_snapshot_exact(&doc, t);
        assert_eq!(doc["rows"], doc["parquet_rows"], "{t}: the rows of the parquet export");
        let n = doc["rows"].as_array().unwrap().len() as u64;
        assert_eq!(doc["polars_rows"].as_u64(), Some(n), "{t}: polars {}", doc["polars_rows"]);
        assert_eq!(doc["catalog_rows"].as_u64(), Some(n), "{t}: catalog");
    }
    let doc = ice_check(&out.join("blocks"), keys_of("blocks"), None);
    assert!(!doc["types"].as_object().unwrap().contains_key("logs_bloom"), "{doc}");
    assert_eq!(doc["field_ids"], true, "rewritten files carry the table's ids");
    let files = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("'{}'", f.as_str().unwrap().replace("file://", "")))
        .collect::<Vec<_>>();
    let names = duckdb(&format!(
        "select column_name from (describe select * from read_parquet([{}], union_by_name = true))",
        files.join(", ")
    ));
    assert!(!names.to_string().contains("logs_bloom"), "no current file holds it: {names}");
    let events = ice_check(&out.join("events"), keys_of("events"), None);
    assert_eq!(events["files"], files_before, "a table that keeps its columns keeps its files");
    let v = chainetl(&["verify", &new]);
    assert!(v.status.success(), "{}", text(&v));
    let back = s("back.toml", &dead_url(), &out, "iceberg", "");
    let o = chainetl(&["run", &back]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("do not hold column `logs_bloom`"), "{}", text(&o));
}

/// The job of `crate::changing` with `transfers` (its decoding export,
/// `also_raw`) taking `keys`, not compacted.
fn decoded_spec(url: &str, uri: &Path, format: &str, keys: &str) -> String {
    let signatures = "signatures = [\"event Transfer(address indexed from, address indexed to, uint256 value)\"]\n";
    crate::changing::body(url, &uri.to_string_lossy(), format, "compact = false").replace(signatures, &format!("{signatures}{keys}\n"))
}

/// The columns of `table` under `out` in `format`: its files' (parquet),
/// or the table's schema (Delta, Iceberg) without the partition keys.
fn table_columns(out: &Path, table: &str, format: &str) -> BTreeSet<String> {
    let doc = match format {
        "parquet" => return file_columns(out, table),
        "delta" => check(&out.join(table), keys_of(table), None),
        _ => crate::iceberg_format::check(&out.join(table), keys_of(table), None),
    };
    let types = doc["types"].as_object().unwrap().keys().cloned();
    types.filter(|c| c != "chain" && c != "date").collect()
}

/// A decoding export chooses among its decoded tables' columns (a wide
/// integer's `_f64`, a parameter): a fresh export holds only those, and a
/// finished job leaves them out with no request — in parquet, Delta and
/// Iceberg, with the rows of a fresh export, `verify` clean; its raw
/// table, which has neither column, keeps its files.
#[test]
fn a_decoding_export_leaves_decoded_columns_out_fresh_and_finished_in_every_format() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let dropped = "exclude_columns = [\"value_f64\", \"to\"]";
    let reference = dir.path().join("reference");
    let s =
        |name: &str, url: &str, uri: &Path, format: &str, keys: &str| write_spec(dir.path(), name, &decoded_spec(url, uri, format, keys));
    let o = chainetl(&["run", &s("reference.toml", &sim.url(), &reference, "parquet", dropped)]);
    assert!(o.status.success(), "{}", text(&o));
    let full = file_columns(&reference, "transfers");
    assert!(full.contains("value") && full.contains("from"), "{full:?}");
    assert!(!full.contains("value_f64") && !full.contains("to"), "{full:?}");
    let sch = chainetl(&["schema", "--spec", &s("schema.toml", &sim.url(), &reference, "parquet", dropped)]);
    assert!(sch.status.success(), "{}", text(&sch));
    assert!(!text(&sch).contains("value_f64") && text(&sch).contains("value"), "{}", text(&sch));
    for format in ["parquet", "delta", "iceberg"] {
        let (fresh, out) = (dir.path().join(format!("fresh-{format}")), dir.path().join(format!("out-{format}")));
        let o = chainetl(&[
            "run",
            &s(&format!("f-{format}.toml"), &sim.url(), &fresh, format, dropped),
            "--summary",
            "json",
        ]);
        assert!(o.status.success(), "{format}: {}", text(&o));
        let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let listed = summary["columns"]["transfers"].as_array().cloned().unwrap_or_default();
        assert!(
            listed.contains(&"value".into()) && !listed.contains(&"value_f64".into()),
            "{format}: the report names the columns: {summary}"
        );
        assert!(summary["columns"]["events"].is_null(), "events loses none: {summary}");
        assert_eq!(table_columns(&fresh, "transfers", format), full, "{format}: a fresh export");
        let o = chainetl(&["run", &s(&format!("o-{format}.toml"), &sim.url(), &out, format, "")]);
        assert!(o.status.success(), "{format}: {}", text(&o));
        assert!(table_columns(&out, "transfers", format).contains("value_f64"), "{format}");
        let events_before = parquet_files(&out.join("events"));
        let new = s(&format!("n-{format}.toml"), &dead_url(), &out, format, dropped);
        let summary = run_without_requests(bin().args(["run", &new, "--summary", "json"]));
        assert!(
            summary["conversion"]["layout"][0]
                .as_str()
                .is_some_and(|l| l.contains("exclude_columns")),
            "{format}: {summary}"
        );
        assert_eq!(table_columns(&out, "transfers", format), full, "{format}: the finished job");
        assert_eq!(
            parquet_files(&out.join("events")),
            events_before,
            "{format}: events keeps its files"
        );
        for t in ["transfers", "events"] {
            match format {
                "parquet" => same_rows_over_own_columns(&out, &reference, t),
                "delta" => {
                    let doc = check(&out.join(t), keys_of(t), Some(&reference.join(t)));
                    every_version_exact(&doc, t);
                    assert_eq!(doc["rows"], doc["parquet_rows"], "{t}: the reference's rows");
                }
                _ => {
                    let doc = crate::iceberg_format::check(&out.join(t), keys_of(t), Some(&reference.join(t)));
                    crate::iceberg_format::every_snapshot_exact(&doc, t);
                    assert_eq!(doc["rows"], doc["parquet_rows"], "{t}: the reference's rows");
                }
            }
        }
        let v = chainetl(&["verify", &new]);
        assert!(v.status.success(), "{format}: {}", text(&v));
        let back = s(&format!("b-{format}.toml"), &dead_url(), &out, format, "exclude_columns = [\"to\"]");
        let o = chainetl(&["run", &back]);
        assert_eq!(o.status.code(), Some(2), "{format}: {}", text(&o));
        assert!(text(&o).contains("do not hold column `value_f64`"), "{format}: {}", text(&o));
    }
}

/// `u256` columns are computed from a wide integer's stored text: with a
/// parameter left out they are still made with no request; with the
/// text's `_f64` left out, the change is refused (exit 2) and nothing is
/// written.
#[test]
fn u256_columns_come_from_stored_text_only_while_it_is_kept() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let (out, fresh, lost) = (dir.path().join("out"), dir.path().join("fresh"), dir.path().join("lost"));
    let s = |name: &str, url: &str, uri: &Path, keys: &str| write_spec(dir.path(), name, &decoded_spec(url, uri, "parquet", keys));
    let wide = "exclude_columns = [\"to\"]\nu256 = [\"decimal38\"]";
    for (name, uri, keys) in [
        ("fresh.toml", &fresh, wide),
        ("out.toml", &out, "exclude_columns = [\"to\"]"),
        ("lost.toml", &lost, "exclude_columns = [\"value_f64\"]"),
    ] {
        let o = chainetl(&["run", &s(name, &sim.url(), uri, keys)]);
        assert!(o.status.success(), "{name}: {}", text(&o));
    }
    run_without_requests(bin().args(["run", &s("wide.toml", &dead_url(), &out, wide), "--summary", "json"]));
    crate::derive::same_table(&out, &fresh, "transfers");
    let before = parquet_files(&lost.join("transfers"));
    let o = chainetl(&[
        "run",
        &s(
            "lost-wide.toml",
            &dead_url(),
            &lost,
            "exclude_columns = [\"value_f64\"]\nu256 = [\"decimal38\"]",
        ),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("do not hold `value_f64`"), "{}", text(&o));
    assert_eq!(parquet_files(&lost.join("transfers")), before, "nothing written");
}

/// Decoding added to a raw events export that leaves identity columns out
/// (`transaction_index`, `transaction_hash`) is made from its stored logs
/// with no request, the decoded table leaving out the same columns: equal
/// to a fresh export of the new spec, in parquet and Delta.
#[test]
fn decoding_added_to_a_raw_export_leaving_columns_out_is_made_from_its_stored_logs() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let raw = "dataset = \"events\"\nchains = [\"polygon\"]\nwindow = \"20000000..20000099\"\n\
               signatures = [\"event Transfer(address indexed from, address indexed to, uint256 value)\"]\n\
               exclude_columns = [\"transaction_index\", \"transaction_hash\"]\n";
    let decode = "decode = true\nalso_raw = true\ntable = \"transfers\"\n";
    let spec = |url: &str, uri: &Path, format: &str, keys: &str| {
        format!(
            "name = \"dc\"\n[source]\nbase_url = \"{url}\"\nmax_retries = 1\n[output]\nuri = \"{}\"\nformat = \"{format}\"\n[[export]]\n{raw}{keys}",
            uri.display()
        )
    };
    for format in ["parquet", "delta"] {
        let (out, fresh) = (dir.path().join(format!("out-{format}")), dir.path().join(format!("fresh-{format}")));
        let s = |name: &str, url: &str, uri: &Path, keys: &str| {
            write_spec(dir.path(), &format!("{format}-{name}"), &spec(url, uri, format, keys))
        };
        for (name, uri, keys) in [("fresh.toml", &fresh, decode), ("out.toml", &out, "")] {
            let o = chainetl(&["run", &s(name, &sim.url(), uri, keys)]);
            assert!(o.status.success(), "{format} {name}: {}", text(&o));
        }
        let summary = run_without_requests(bin().args(["run", &s("new.toml", &dead_url(), &out, decode), "--summary", "json"]));
        assert!(summary["conversion"]["rows"].as_u64().is_some_and(|r| r > 0), "{format}: {summary}");
        let cols = file_columns(&out, "transfers");
        assert!(
            cols.contains("value") && !cols.contains("transaction_hash") && !cols.contains("transaction_index"),
            "{format}: {cols:?}"
        );
        if format == "parquet" {
            crate::derive::same_table(&out, &fresh, "transfers");
        } else {
            let doc = check(&out.join("transfers"), keys_of("transfers"), Some(&fresh.join("transfers")));
            every_version_exact(&doc, "transfers");
            assert_eq!(doc["rows"], doc["parquet_rows"], "the fresh export's rows");
            assert!(!doc["types"].as_object().unwrap().contains_key("transaction_hash"), "{doc}");
        }
        let v = chainetl(&["verify", &s("new.toml", &dead_url(), &out, decode)]);
        assert!(v.status.success(), "{format}: {}", text(&v));
    }
}

/// An export appended to a job that has run leaves columns out like the
/// exports the job started with: from its files, with no request; one
/// brought back is refused.
#[test]
fn an_appended_export_leaves_columns_out_from_its_files() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let tokens = "[[export]]\ndataset = \"tokens\"\nchains = [\"base\"]\naddresses = [\"0x833589fcd6edb6e08f4c7c32d4f71b54bda02913\"]\n";
    let s = |name: &str, url: &str, extra: &str| write_spec(dir.path(), name, &format!("{}{extra}", blocks_spec(url, &out, "parquet", "")));
    for (name, extra) in [("first.toml", ""), ("appended.toml", tokens)] {
        let o = chainetl(&["run", &s(name, &sim.url(), extra)]);
        assert!(o.status.success(), "{name}: {}", text(&o));
    }
    assert!(file_columns(&out, "tokens").contains("name"));
    let fewer = s("fewer.toml", &dead_url(), &format!("{tokens}exclude_columns = [\"name\"]\n"));
    let summary = run_without_requests(bin().args(["run", &fewer, "--summary", "json"]));
    assert!(
        summary["conversion"]["layout"][0]
            .as_str()
            .is_some_and(|l| l.contains("exclude_columns")),
        "{summary}"
    );
    let cols = file_columns(&out, "tokens");
    assert!(!cols.contains("name") && cols.contains("symbol"), "{cols:?}");
    let v = chainetl(&["verify", &fewer]);
    assert!(v.status.success(), "{}", text(&v));
    let o = chainetl(&["run", &s("back.toml", &dead_url(), tokens)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("do not hold column `name`"), "{}", text(&o));
}
