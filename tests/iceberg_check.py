"""Reads chainetl's Iceberg tables the way users do, for tests/it/iceberg_format.rs.

usage: iceberg_check.py TABLE_DIR KEY[,KEY…] [PARQUET_DIR]

Prints one JSON document:
- versions: every snapshot of the current one's ancestry, oldest first
  (pyiceberg's StaticTable from the folder's version hint, time travel by
  snapshot id, each data file read once: table_rows.iceberg_snapshots):
  its sequence number (`version`), operation, rows, distinct keys, and
  whether it holds every key of its parent (`holds_parent`); for a
  blocks table, also broken_links and gaps, as tests/delta_check.py says
  them;
- rows: the current snapshot's rows, each a sorted-key JSON string,
  sorted; with PARQUET_DIR, parquet_rows: the same of the hive-partitioned
  Parquet folder (pyarrow), over the same columns;
- polars_rows: the current row count as Polars' scan_iceberg reads it
  (its own reader; with POLARS_PYICEBERG set, reader_override="pyiceberg",
  for adopted files without field ids), or the reader's error;
- catalog_rows: the row count after registering the table in a SQL
  catalog (sqlite) with register_table, from its manifests (pyiceberg's
  count);
- types: every column's Arrow type as pyiceberg reads it;
- partitions: the partition spec, `name=transform(source)`;
- field_ids: whether every data file's columns carry field ids;
- files: the current snapshot's data files;
- properties: the table's properties.
"""

import json
import os
import sys
import tempfile

from table_rows import broken_links, gaps, holds, iceberg_snapshots, key_set, rows_of


def main():
    import polars as pl
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.table import StaticTable

    path, keys = sys.argv[1], sys.argv[2].split(",")
    t = StaticTable.from_metadata(path)
    m = t.metadata
    ancestry = []
    s = m.current_snapshot()
    while s is not None:
        ancestry.append(s)
        s = m.snapshot_by_id(s.parent_snapshot_id) if s.parent_snapshot_id is not None else None
    ancestry.reverse()
    # Each snapshot reads only the columns its checks need.
    names = {f.name for f in m.schema().fields}
    chain = ["chain", "number", "hash", "parent_hash"] if "parent_hash" in names else []
    needed = tuple(dict.fromkeys(keys + chain))
    snapshots, parent = [], None
    for s, a in iceberg_snapshots(t, ancestry, needed):
        k = key_set(a, keys)
        entry = {
            "version": s.sequence_number,
            "operation": s.summary.operation.value if s.summary else None,
            "rows": a.num_rows,
            "distinct": len(k),
            "holds_parent": parent is None or holds(k, parent),
        }
        if "parent_hash" in a.column_names:
            entry["broken_links"] = broken_links(a)
            entry["gaps"] = gaps(a)
        snapshots.append(entry)
        parent = k
    table = t.scan().to_arrow()
    columns = [f.name for f in table.schema]
    spec = m.spec()
    schema = m.schema()
    files = [task.file.file_path for task in t.scan().plan_files()]
    out = {
        "versions": snapshots,
        "rows": rows_of(table, columns),
        "types": {f.name: str(f.type) for f in table.schema},
        "partitions": [f"{f.name}={f.transform}({schema.find_column_name(f.source_id)})" for f in spec.fields],
        "files": sorted(files),
        "properties": dict(m.properties),
    }
    ids = True
    for f in files:
        local = f[len("file://"):] if f.startswith("file://") else f
        for field in pq.read_schema(local):
            if not (field.metadata or {}).get(b"PARQUET:field_id"):
                ids = False
    out["field_ids"] = ids
    try:
        if os.environ.get("POLARS_PYICEBERG"):
            out["polars_rows"] = pl.scan_iceberg(t, reader_override="pyiceberg").collect().height
        else:
            out["polars_rows"] = pl.scan_iceberg(t).collect().height
    except Exception as e:  # noqa: BLE001 - reported to the test as text
        out["polars_rows"] = f"{type(e).__name__}: {e}"
    with tempfile.TemporaryDirectory() as d:
        catalog = SqlCatalog("chainetl", uri=f"sqlite:///{d}/catalog.db", warehouse=f"file://{d}")
        catalog.create_namespace("chain")
        name = "chain." + os.path.basename(path.rstrip("/"))
        location = t.metadata_location
        registered = catalog.register_table(name, location)
        # The rows its manifests count (every file is read above).
        out["catalog_rows"] = registered.scan().count()
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
