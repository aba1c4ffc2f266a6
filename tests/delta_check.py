"""Reads chainetl's Delta tables the way users do, for tests/it/delta.rs.

usage: delta_check.py TABLE_DIR KEY[,KEY…] [PARQUET_DIR]

Prints one JSON document:
- versions: for every version of the table, its rows and distinct keys
  (deltalake, time travel); with DELTA_CHECK_LATEST set, the latest only;
  with DELTA_CHECK_FROM=N, versions N on; for a blocks table, also
  broken_links: consecutive blocks whose parent hash is not the block
  before's hash (two branches side by side), and gaps: block numbers
  missing between a chain's lowest and highest;
- rows: the latest version's rows (deltalake), each a sorted-key JSON
  string, sorted; with PARQUET_DIR, parquet_rows: the same of the
  hive-partitioned Parquet folder (pyarrow), over the same columns;
- polars_rows / duckdb_rows: the latest version's row count as Polars'
  read_delta and DuckDB (over deltalake's Arrow dataset) see it;
- types: the Arrow type of every column, as deltalake reads it;
- files: the latest version's files;
- operations: every commit's operation (WRITE, OPTIMIZE, …), oldest first.

deltalake can abort the interpreter at exit (a thread left running), so
the script ends with os._exit once its output is flushed.
"""

import json
import os
import sys

from table_rows import broken_links, gaps, key_set, rows_of


def main():
    import deltalake
    import duckdb
    import polars as pl
    import pyarrow as pa
    import pyarrow.dataset as ds

    path, keys = sys.argv[1], sys.argv[2].split(",")
    latest = deltalake.DeltaTable(path)
    versions = []
    first = latest.version() if os.environ.get("DELTA_CHECK_LATEST") else int(os.environ.get("DELTA_CHECK_FROM", "0"))
    # Each version reads only the columns its checks need.
    names = {f.name for f in latest.schema().fields}
    chain = ["chain", "number", "hash", "parent_hash"] if "parent_hash" in names else []
    needed = list(dict.fromkeys(keys + chain))
    # A version is read through its files, each file read once: a file's
    # name is never given other bytes, and versions share most files.
    read = {}
    table_at = latest if first == latest.version() else deltalake.DeltaTable(path, version=first)
    for v in range(first, latest.version() + 1):
        if v > first:
            table_at.load_as_version(v)
        dataset = table_at.to_pyarrow_dataset()
        parts = []
        for f in dataset.get_fragments():
            if f.path not in read:
                read[f.path] = f.to_table(schema=dataset.schema, columns=needed)
            parts.append(read[f.path])
        t = pa.concat_tables(parts) if parts else dataset.schema.empty_table().select(needed)
        n = t.num_rows
        entry = {"version": v, "rows": n, "distinct": len(key_set(t, keys))}
        if "parent_hash" in t.column_names:
            entry["broken_links"] = broken_links(t)
            entry["gaps"] = gaps(t)
        versions.append(entry)
    table = latest.to_pyarrow_table()
    columns = [f.name for f in table.schema]
    out = {
        "versions": versions,
        "types": {f.name: str(f.type) for f in table.schema},
        "partitions": latest.metadata().partition_columns,
        "rows": rows_of(table, columns),
        "polars_rows": pl.read_delta(path).height,
        "files": sorted(latest.file_uris()),
        "operations": [h.get("operation") for h in reversed(latest.history())],
    }
    dataset = latest.to_pyarrow_dataset()
    out["duckdb_rows"] = duckdb.sql("select count(*) from dataset").fetchall()[0][0]
    if len(sys.argv) > 3:
        parquet = ds.dataset(sys.argv[3], format="parquet", partitioning="hive").to_table()
        for name in columns:
            if name in parquet.column_names and parquet.schema.field(name).type != table.schema.field(name).type:
                parquet = parquet.set_column(
                    parquet.column_names.index(name), name, parquet.column(name).cast(table.schema.field(name).type)
                )
        out["parquet_rows"] = rows_of(parquet, [c for c in columns if c in parquet.column_names])
    print(json.dumps(out))
    sys.stdout.flush()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - reported to the test as text
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
        sys.stdout.flush()
        os._exit(1)
    os._exit(0)
