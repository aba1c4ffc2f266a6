"""Reads each table of a chainetl output with DuckDB, Polars, pyarrow and
Spark, with no schema hints and no casts, and prints per table and engine
the row count and every column's type in one vocabulary, as JSON (used by
the tests; also a read snippet for each engine)."""
import json
import re
import sys

import duckdb
import polars as pl
import pyarrow.dataset as ds
import java_runtime

java_runtime.require()

from pyspark.sql import SparkSession


def norm(t):
    """An engine's type name in one vocabulary."""
    t = str(t).lower()
    t = re.sub(r"\s+", "", t)
    table = [
        (r"^(bigint|int64|long)$", "int64"),
        (r"^(integer|int32|int)$", "int32"),
        (r"^(varchar|string|utf8|large_string|str)$", "string"),
        (r"^(date|date32\[day\])$", "date"),
        (r"^(double|float64)$", "float64"),
        (r"^(boolean|bool)$", "bool"),
        (r"^timestamp.*(utc|withtimezone|tz=).*$", "timestamp_utc"),
        (r"^datetime\(time_unit='us',time_zone='utc'\)$", "timestamp_utc"),
        (r"^timestamp$", "timestamp_utc"),  # Spark: session-zone instants
        (r"^decimal\((\d+),(\d+)\)$", r"decimal(\1,\2)"),
        (r"^decimal128\((\d+),(\d+)\)$", r"decimal(\1,\2)"),
        (r"^decimal\(precision=(\d+),scale=(\d+)\)$", r"decimal(\1,\2)"),
    ]
    for pat, rep in table:
        if re.match(pat, t):
            return re.sub(pat, rep, t)
    m = re.match(r"^(varchar\[\]|array<string>|list<item:string>|list\(string\)|list<element:string>|list\[string\])$", t)
    if m:
        return "list<string>"
    return t


root, tables = sys.argv[1], sys.argv[2:]
spark = (
    SparkSession.builder.master("local[2]")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.session.timeZone", "UTC")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
out = {}
for t in tables:
    path = f"{root}/{t}"
    r = {}
    rel = duckdb.sql(f"select * from read_parquet('{path}/**/*.parquet', hive_partitioning = true)")
    r["duckdb"] = {"rows": duckdb.sql(f"select count(*) from read_parquet('{path}/**/*.parquet', hive_partitioning = true)").fetchall()[0][0], "types": {c: norm(ty) for c, ty in zip(rel.columns, rel.types)}}
    df = pl.scan_parquet(f"{path}/**/*.parquet", hive_partitioning=True).collect()
    r["polars"] = {"rows": df.height, "types": {c: norm(ty) for c, ty in df.schema.items()}}
    tab = ds.dataset(path, partitioning="hive").to_table()
    r["pyarrow"] = {"rows": tab.num_rows, "types": {f.name: norm(f.type) for f in tab.schema}}
    sdf = spark.read.parquet(path)
    r["spark"] = {"rows": sdf.count(), "types": {f.name: norm(f.dataType.simpleString()) for f in sdf.schema.fields}}
    out[t] = r
print("RESULT " + json.dumps(out))
