//! Sorting columns and compaction by copying: every file whose
//! rows are in key order declares it, no other does; compaction of inputs
//! that do not overlap copies their column chunks byte for byte.

use crate::common::*;
use crate::compact::{EVENT_KEY, files_by_partition, spec};
use arrow_row::{RowConverter, SortField};
use parquet::file::reader::{FileReader, SerializedFileReader};
use std::path::{Path, PathBuf};

/// The natural key of a table's files (partition keys left out).
const KEYS: &[&[&str]] = &[
    &["block_number", "log_index"],
    &["number"],
    &["wallet_address", "date", "token_address"],
    &["address"],
];

/// The sorting columns `f` declares (by name) in every row group alike,
/// and whether its rows are in its table's key order.
fn declared_and_actual(f: &Path) -> (Option<Vec<String>>, bool, Vec<String>) {
    let r = SerializedFileReader::new(std::fs::File::open(f).unwrap()).unwrap();
    let meta = r.metadata();
    let descr = meta.file_metadata().schema_descr();
    let declared: Vec<Option<Vec<String>>> = meta
        .row_groups()
        .iter()
        .map(|rg| {
            rg.sorting_columns()
                .map(|cols| cols.iter().map(|c| descr.column(c.column_idx as usize).path().string()).collect())
        })
        .collect();
    assert!(declared.windows(2).all(|w| w[0] == w[1]), "{f:?}: row groups differ: {declared:?}");
    let names: Vec<String> = (0..descr.num_columns()).map(|i| descr.column(i).path().string()).collect();
    let key: Vec<String> = KEYS
        .iter()
        .find(|k| names.iter().any(|n| n == k[0]))
        .unwrap()
        .iter()
        .filter(|k| names.iter().any(|n| n == *k))
        .map(|k| k.to_string())
        .collect();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(f).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let mut conv: Option<RowConverter> = None;
    let mut last: Option<arrow_row::OwnedRow> = None;
    let mut in_order = true;
    for b in reader {
        let b = b.unwrap();
        let cols: Vec<_> = key.iter().map(|k| b.column_by_name(k).unwrap().clone()).collect();
        let conv =
            conv.get_or_insert_with(|| RowConverter::new(cols.iter().map(|c| SortField::new(c.data_type().clone())).collect()).unwrap());
        let rows = conv.convert_columns(&cols).unwrap();
        for r in rows.iter() {
            if last.as_ref().is_some_and(|l| l.row() > r) {
                in_order = false;
            }
            last = Some(r.owned());
        }
    }
    (declared.into_iter().next().flatten(), in_order, key)
}

/// A portfolio export of three wallets (one holding nothing) from `first`
/// to the simulator's frozen day.
fn portfolio_export(first: &str) -> String {
    format!(
        "[[export]]\ndataset = \"portfolio\"\nchains = [\"ethereum\"]\n\
         wallets = [\"0x28c6c06298d514db089934071355e5743bf21d60\", \"0xd8da6bf26964af9d7eed9e10e9029ca7ad5a3ba3\", \"0x00000000000000000000000000000000000000aa\"]\n\
         window = \"{first}T00:00:00Z..2025-06-01T00:00:00Z\"\n"
    )
}

fn files_of(out: &Path, table: &str) -> Vec<PathBuf> {
    parquet_files(&out.join(table))
}

#[test]
fn every_unit_file_whose_rows_are_in_order_declares_its_sorting_columns_and_no_other_does() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = write_spec(
        dir.path(),
        "job.toml",
        &(format!(
            r#"name = "job"
[source]
base_url = "{}"
page_size = 50
[output]
uri = "{}"
compact = false
[[export]]
dataset = "events"
chains = ["ethereum"]
window = "20000000..20000299"
chunk_blocks = 100
[[export]]
dataset = "blocks"
chains = ["base"]
window = "2025-05-30T23:00:00Z..2025-05-31T01:00:00Z"
"#,
            sim.url(),
            out.display()
        ) + &portfolio_export("2025-05-20")),
    );
    let o = chainetl(&["run", &s]);
    assert!(o.status.success(), "{}", text(&o));
    for table in ["events", "blocks"] {
        let files = files_of(&out, table);
        assert!(files.len() >= 2, "{table}: {files:?}");
        for f in files {
            let (declared, in_order, key) = declared_and_actual(&f);
            assert!(in_order, "{f:?}: the server's rows are in order");
            assert_eq!(declared, Some(key), "{f:?} (a unit's file, not compacted) declares its order");
        }
    }
    // The simulator lists a wallet's holdings of a day in no particular
    // token order: files whose rows came out of order declare nothing.
    let (mut declared, mut undeclared) = (0, 0);
    for f in files_of(&out, "portfolio") {
        let (d, in_order, key) = declared_and_actual(&f);
        match d {
            Some(d) => {
                assert!(in_order, "{f:?} declares an order its rows do not have");
                assert_eq!(d, key);
                declared += 1;
            }
            None => {
                assert!(!in_order, "{f:?}: rows in order, yet no order declared");
                undeclared += 1;
            }
        }
    }
    assert!(undeclared > 0 && declared > 0, "{declared} declared, {undeclared} not");
    let v = chainetl(&["verify", &s]);
    assert!(v.status.success(), "{}", text(&v));
}

/// A column chunk: its column's path and its bytes.
type Chunk = (String, Vec<u8>);

/// Every column chunk of `f`, in file order.
fn column_chunks(f: &Path) -> Vec<Chunk> {
    let bytes = std::fs::read(f).unwrap();
    let r = SerializedFileReader::new(std::fs::File::open(f).unwrap()).unwrap();
    let mut out = Vec::new();
    for rg in r.metadata().row_groups() {
        for c in rg.columns() {
            let (start, len) = c.byte_range();
            out.push((c.column_path().string(), bytes[start as usize..(start + len) as usize].to_vec()));
        }
    }
    out
}

#[test]
fn compaction_of_inputs_that_do_not_overlap_copies_their_column_chunks_byte_for_byte() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = spec(dir.path(), &out, &sim.url(), "job", "compact = false\ncommit_pages = 1");
    assert!(chainetl(&["run", &s, "-q"]).status.success());
    let rows_before = read_rows(&out.join("events"), EVENT_KEY);
    // Each partition's inputs in key order (a unit's files by sequence,
    // units by their first block): the chunks the outputs must hold.
    let mut want: Vec<(PathBuf, Vec<Chunk>)> = Vec::new();
    for (part, mut names) in files_by_partition(&out.join("events"), "job") {
        assert!(names.len() >= 3, "{part:?}: {names:?}");
        names.sort_by_key(|n| {
            let f = part.join(n);
            let r = SerializedFileReader::new(std::fs::File::open(&f).unwrap()).unwrap();
            let rg = r.metadata().row_group(0);
            let min = match rg.column(0).statistics().unwrap() {
                parquet::file::statistics::Statistics::Int64(v) => *v.min_opt().unwrap(),
                s => panic!("{s:?}"),
            };
            (min, n.clone())
        });
        want.push((part.clone(), names.iter().flat_map(|n| column_chunks(&part.join(n))).collect()));
    }
    let c = chainetl(&["compact", &s]);
    assert!(c.status.success(), "{}", text(&c));
    assert_eq!(read_rows(&out.join("events"), EVENT_KEY), rows_before, "the same rows");
    for (part, chunks) in want {
        let files = files_by_partition(&part, "job").into_values().next().unwrap();
        assert_eq!(files.len(), 1, "{part:?}: {files:?}");
        assert!(files[0].starts_with("job-compacted-"), "{files:?}");
        let f = part.join(&files[0]);
        let got = column_chunks(&f);
        assert_eq!(got.len(), chunks.len(), "{f:?}: as many column chunks as the inputs");
        assert!(got == chunks, "{f:?}: column chunks differ from the inputs'");
        let (declared, in_order, key) = declared_and_actual(&f);
        assert!(in_order);
        assert_eq!(declared, Some(key));
        // The page index and bloom filters came along.
        let r = SerializedFileReader::new(std::fs::File::open(&f).unwrap()).unwrap();
        for rg in r.metadata().row_groups() {
            for c in rg.columns() {
                assert!(c.offset_index_offset().is_some(), "{f:?}: no offset index");
            }
            let tx = rg
                .columns()
                .iter()
                .find(|c| c.column_path().string() == "transaction_hash")
                .unwrap();
            assert!(tx.bloom_filter_offset().is_some(), "{f:?}: no bloom filter");
        }
    }
    // DuckDB reads it, bloom filters and page index included.
    let tx = &rows_before[rows_before.len() / 2][3];
    let root = out.display();
    let got = duckdb(&format!(
        "select count(*) from read_parquet('{root}/events/**/*.parquet', hive_partitioning = true) where transaction_hash = '{tx}'"
    ));
    assert_ne!(got[0][0], "0", "{got}");
    let v = chainetl(&["verify", &s]);
    assert!(v.status.success(), "{}", text(&v));
}

#[test]
fn files_of_a_few_rows_each_are_compacted_into_whole_row_groups_not_copied() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = write_spec(
        dir.path(),
        "job.toml",
        &(format!(
            r#"name = "job"
[source]
base_url = "{}"
[output]
uri = "{}"
"#,
            sim.url(),
            out.display()
        ) + &portfolio_export("2025-05-25")),
    );
    let o = chainetl(&["run", &s]);
    assert!(o.status.success(), "{}", text(&o));
    let by = files_by_partition(&out.join("portfolio"), "job");
    assert!(!by.is_empty());
    let mut compacted = 0;
    for (part, files) in by {
        assert_eq!(files.len(), 1, "{part:?}: {files:?}");
        let f = part.join(&files[0]);
        let r = SerializedFileReader::new(std::fs::File::open(&f).unwrap()).unwrap();
        if files[0].starts_with("job-compacted-") {
            compacted += 1;
            assert_eq!(r.metadata().num_row_groups(), 1, "{f:?}: a row group per input was copied");
        }
        let (declared, in_order, key) = declared_and_actual(&f);
        assert!(in_order, "{f:?}: compaction sorts");
        assert_eq!(declared, Some(key));
    }
    assert!(compacted > 0, "nothing was compacted");
}
