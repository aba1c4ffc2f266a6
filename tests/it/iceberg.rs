//! Iceberg tables written by `chainetl::sink::format::iceberg::table` on local disk,
//! read back as users read them: pyiceberg's `StaticTable.from_metadata`
//! on the table's folder (through `version-hint.text`) and DuckDB's
//! `iceberg_scan` (its iceberg and avro extensions from PyPI, in an
//! environment of their own: `scripts/iceberg-duckdb-venv`). Each reads
//! the exact rows at every snapshot — two appends (one of a file adopted
//! as hive wrote it: no field ids, no `chain` column), then a replace
//! (compaction) — and the column statistics, which prune files.

use crate::common::{python, python_output};
use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, BooleanArray, Decimal128Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType, Field, Schema};
use chainetl::sink::format::iceberg::table::{Attempt, Change, Current, DataFile, Part, PartitionKey, Table};
use chainetl::storage::Storage;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

/// 2024-01-02T00:00:00Z, microseconds.
const T0: i64 = 1_704_153_600_000_000;
const HOUR: i64 = 3_600_000_000;

/// The table's columns, as the writer has them.
fn table_schema() -> Schema {
    Schema::new(vec![
        Field::new("chain", DataType::Utf8, false),
        Field::new("block_number", DataType::Int64, false),
        Field::new(
            "block_timestamp",
            DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("transaction_hash", DataType::Utf8, false),
        Field::new("value", DataType::Decimal128(38, 0), true),
        Field::new("topics", DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))), true),
        Field::new("removed", DataType::Boolean, true),
    ])
}

/// A row of block `n` of `chain`: one an hour from T0, so blocks 24 on
/// are the next day.
fn row(chain: &str, n: i64) -> Value {
    let value = if n % 5 == 4 {
        Value::Null
    } else {
        json!(format!("{}", (n as i128) * 10i128.pow(30)))
    };
    json!([
        chain,
        n,
        T0 + n * HOUR,
        format!("0x{:064x}", n * 7919),
        value,
        [format!("0x{n:02x}"), "0xff"],
        n % 2 == 1
    ])
}

fn sorted(mut rows: Vec<Value>) -> Vec<Value> {
    rows.sort_by_key(|r| r.to_string());
    rows
}

/// Writes blocks `blocks` of `chain` as a Parquet file at `path` under
/// the table: with the table's field ids and every column, or (`hive`)
/// as a hive folder holds them, without ids and without `chain`. Its
/// manifest entry.
async fn put(storage: &Storage, t: &Table, c: &Current, path: &str, chain: &str, blocks: std::ops::Range<i64>, hive: bool) -> DataFile {
    let full = table_schema();
    let schema = if hive {
        Schema::new(full.fields().iter().skip(1).cloned().collect::<Vec<_>>())
    } else {
        t.file_schema(c, &full).unwrap()
    };
    let ns: Vec<i64> = blocks.collect();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for f in schema.fields() {
        columns.push(match f.name().as_str() {
            "chain" => Arc::new(StringArray::from_iter_values(ns.iter().map(|_| chain))),
            "block_number" => Arc::new(Int64Array::from_iter_values(ns.iter().copied())),
            "block_timestamp" => {
                Arc::new(TimestampMicrosecondArray::from_iter_values(ns.iter().map(|n| T0 + n * HOUR)).with_timezone("UTC"))
            }
            "transaction_hash" => Arc::new(StringArray::from_iter_values(ns.iter().map(|n| format!("0x{:064x}", n * 7919)))),
            "value" => Arc::new(
                Decimal128Array::from_iter(ns.iter().map(|n| (n % 5 != 4).then(|| (*n as i128) * 10i128.pow(30))))
                    .with_precision_and_scale(38, 0)
                    .unwrap(),
            ),
            "topics" => {
                let DataType::List(item) = f.data_type() else { unreachable!() };
                let mut b = ListBuilder::new(StringBuilder::new()).with_field(item.clone());
                for n in &ns {
                    b.values().append_value(format!("0x{n:02x}"));
                    b.values().append_value("0xff");
                    b.append(true);
                }
                Arc::new(b.finish())
            }
            "removed" => Arc::new(BooleanArray::from_iter(ns.iter().map(|n| Some(n % 2 == 1)))),
            other => panic!("{other}"),
        });
    }
    let schema = Arc::new(schema);
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let mut bytes = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut bytes, schema, None).unwrap();
    w.write(&batch).unwrap();
    let footer = w.close().unwrap();
    let size = bytes.len() as u64;
    storage.put_atomic(&format!("{}/{path}", t.rel()), bytes).await.unwrap();
    DataFile::from_footer(c.schema(), c.spec(), None, path, size, &footer).unwrap()
}

fn committed(a: Attempt) -> Arc<Current> {
    match a {
        Attempt::Committed(c) => c,
        other => panic!("not committed: {other:?}"),
    }
}

/// pyiceberg, on the table's folder: every snapshot's operation, summary
/// and rows; the current rows; the files with their decoded bounds; the
/// files scans plan under filters.
const PYICEBERG: &str = r#"
import decimal, json, sys
import pyarrow as pa
from pyiceberg.table import StaticTable
from pyiceberg.expressions import EqualTo, GreaterThanOrEqual

COLS = ["chain", "block_number", "block_timestamp", "transaction_hash", "value", "topics", "removed"]

def rows(arrow):
    cols = []
    for name in COLS:
        c = arrow.column(name)
        if pa.types.is_timestamp(c.type):
            c = c.cast(pa.int64())
        cols.append(c.to_pylist())
    return [[str(v) if isinstance(v, decimal.Decimal) else v for v in r] for r in zip(*cols)]

t = StaticTable.from_metadata(sys.argv[1])
out = {"format_version": t.metadata.format_version, "snapshots": [], "current": rows(t.scan().to_arrow())}
for s in t.snapshots():
    out["snapshots"].append({
        "operation": s.summary.operation.value,
        "summary": dict(s.summary.additional_properties),
        "rows": rows(t.scan(snapshot_id=s.snapshot_id).to_arrow()),
    })
files = t.inspect.files().to_pylist()
metrics = lambda f, col: f["readable_metrics"][col]
out["files"] = sorted([{
    "path": f["file_path"].rsplit("/", 3)[-3:],
    "records": f["record_count"],
    "block_number": [metrics(f, "block_number")["lower_bound"], metrics(f, "block_number")["upper_bound"]],
    "hash_lower": metrics(f, "transaction_hash")["lower_bound"],
    "value_nulls": metrics(f, "value")["null_value_count"],
} for f in files], key=json.dumps)
plan = lambda e: sorted(task.file.file_path.rsplit("/", 1)[-1] for task in t.scan(row_filter=e).plan_files())
out["plan_blocks_from_20"] = plan(GreaterThanOrEqual("block_number", 20))
out["plan_ethereum"] = plan(EqualTo("chain", "ethereum"))
out["field_ids"] = {f.name: f.field_id for f in t.schema().fields}
print("RESULT " + json.dumps(out))
"#;

/// DuckDB's iceberg extension, on the table's folder: the current rows
/// and every snapshot's.
const DUCKDB: &str = r#"
import importlib.util, json, os, sys
import duckdb

con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
for ext in ["avro", "iceberg"]:
    pkg = os.path.dirname(importlib.util.find_spec("duckdb_extension_" + ext).origin)
    con.load_extension(os.path.join(pkg, "extensions", "v" + duckdb.__version__, ext + ".duckdb_extension"))
table = sys.argv[1]
SELECT = ("select chain, block_number, epoch_us(block_timestamp), transaction_hash, value::varchar, topics, removed "
          "from iceberg_scan(?{})")
def rows(extra="", *args):
    return [list(r) for r in con.execute(SELECT.format(extra), [table, *args]).fetchall()]
out = {"current": rows(), "snapshots": []}
for (seq, sid, ts, manifest_list) in con.execute("select sequence_number, snapshot_id, timestamp_ms, manifest_list from iceberg_snapshots(?) order by sequence_number", [table]).fetchall():
    out["snapshots"].append(rows(", snapshot_from_id = ?", sid))
print("RESULT " + json.dumps(out, default=str))
"#;

/// Runs `script` with `py` on `table`; the JSON of its `RESULT` line.
fn read_with(py: &str, script: &str, table: &Path) -> Value {
    let out = if py == python() {
        python_output(Command::new(py).arg("-c").arg(script).arg(table))
    } else {
        Command::new(py).arg("-c").arg(script).arg(table).output()
    }
    .expect("python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let Some(line) = stdout.lines().find_map(|l| l.strip_prefix("RESULT ")) else {
        panic!("{py} on {}:\n{stdout}\n{}", table.display(), String::from_utf8_lossy(&out.stderr));
    };
    serde_json::from_str(line).unwrap()
}

fn rows_of(v: &Value) -> Vec<Value> {
    sorted(v.as_array().unwrap().clone())
}

#[tokio::test]
async fn pyiceberg_and_duckdb_read_every_snapshot_exactly_and_prune_on_the_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "name = \"t\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"{}\"\n[[export]]\ndataset = \"blocks\"\n\
         chains = [\"base\"]\nwindow = \"100..199\"\n",
        dir.path().display()
    );
    let storage = Storage::open(&chainetl::spec::Spec::parse("t.toml", &text).unwrap().output).unwrap();
    let t = Table::new(&storage, "events");
    let keys = [PartitionKey::identity("chain"), PartitionKey::day("date", "block_timestamp")];
    let c = t.prepare(&storage, &table_schema(), &keys, &BTreeMap::new(), 10).await.unwrap();

    // Two appends: base's first day in two files and its second day; then
    // ethereum's first day as a hive folder holds it.
    let a = put(&storage, &t, &c, "chain=base/date=2024-01-02/a.parquet", "base", 0..10, false).await;
    let a2 = put(&storage, &t, &c, "chain=base/date=2024-01-02/a2.parquet", "base", 10..20, false).await;
    let b = put(&storage, &t, &c, "chain=base/date=2024-01-03/b.parquet", "base", 24..30, false).await;
    let unit = |files: Vec<DataFile>, app: &str| Part {
        files,
        txn: Some((app.into(), 1)),
    };
    let append = |parts: Vec<Part>| Change {
        parts,
        ..Change::default()
    };
    committed(
        t.commit(
            &storage,
            &append(vec![unit(vec![a.clone(), a2.clone()], "u-a"), unit(vec![b], "u-b")]),
            10,
        )
        .await
        .unwrap(),
    );
    let e = put(&storage, &t, &c, "chain=ethereum/date=2024-01-02/e.parquet", "ethereum", 0..5, true).await;
    let c3 = committed(t.commit(&storage, &append(vec![unit(vec![e], "u-e")]), 10).await.unwrap());
    // Compaction of base's first day: one file, the same rows.
    let aa = put(&storage, &t, &c3, "chain=base/date=2024-01-02/aa.parquet", "base", 0..20, false).await;
    let swap = Change {
        parts: vec![unit(vec![aa], "compact")],
        removes: vec![a.path.clone(), a2.path.clone()],
        rearranges: true,
        ..Change::default()
    };
    committed(t.commit(&storage, &swap, 10).await.unwrap());

    let base: Vec<Value> = (0..20).chain(24..30).map(|n| row("base", n)).collect();
    let with_eth: Vec<Value> = base.iter().cloned().chain((0..5).map(|n| row("ethereum", n))).collect();
    let expected = [sorted(base.clone()), sorted(with_eth.clone()), sorted(with_eth.clone())];
    let table = dir.path().join("events");

    let py = read_with(&python(), PYICEBERG, &table);
    assert_eq!(py["format_version"], 2);
    assert_eq!(rows_of(&py["current"]), expected[2]);
    let snaps = py["snapshots"].as_array().unwrap();
    let ops: Vec<&str> = snaps.iter().map(|s| s["operation"].as_str().unwrap()).collect();
    assert_eq!(ops, ["append", "append", "replace"]);
    for (s, want) in snaps.iter().zip(&expected) {
        assert_eq!(&rows_of(&s["rows"]), want, "snapshot {}", s["operation"]);
    }
    assert_eq!(snaps[0]["summary"]["chainetl.txn.u-a"], "1");
    assert_eq!(snaps[2]["summary"]["total-records"], "31");
    assert_eq!(snaps[2]["summary"]["deleted-data-files"], "2");
    // Bounds decoded by pyiceberg from the manifests: the statistics are
    // there, and scans skip files by them.
    let files = py["files"].as_array().unwrap();
    assert_eq!(files.len(), 3, "{files:?}");
    let of = |name: &str| {
        files
            .iter()
            .find(|f| f["path"][2] == name)
            .unwrap_or_else(|| panic!("{name}: {files:?}"))
    };
    assert_eq!(of("aa.parquet")["block_number"], json!([0, 19]));
    assert_eq!(of("aa.parquet")["records"], 20);
    assert_eq!(of("aa.parquet")["value_nulls"], 4);
    assert_eq!(of("b.parquet")["block_number"], json!([24, 29]));
    assert_eq!(
        of("e.parquet")["hash_lower"],
        format!("0x{}", "0".repeat(14)),
        "truncated to 16 characters"
    );
    assert_eq!(py["plan_blocks_from_20"], json!(["b.parquet"]));
    assert_eq!(py["plan_ethereum"], json!(["e.parquet"]));
    assert_eq!(py["field_ids"]["chain"], 1);
    assert_eq!(py["field_ids"]["removed"], 7);

    let venv = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/iceberg-duckdb-venv"))
        .output()
        .expect("scripts/iceberg-duckdb-venv");
    assert!(venv.status.success(), "{}", String::from_utf8_lossy(&venv.stderr));
    let duck_py = String::from_utf8(venv.stdout).unwrap().trim().to_string();
    let duck = read_with(&duck_py, DUCKDB, &table);
    assert_eq!(rows_of(&duck["current"]), expected[2]);
    let snaps = duck["snapshots"].as_array().unwrap();
    assert_eq!(snaps.len(), 3);
    for (s, want) in snaps.iter().zip(&expected) {
        assert_eq!(&rows_of(s), want);
    }
}
