"""Reads a chainetl output directory with Spark and prints, per dataset, the
row count and the Spark types of every column, as JSON (used by the tests).
With SPARK_MERGE_SCHEMA set, files of different columns are read by name
(`mergeSchema`), and each dataset also gets `nulls`: per column, its nulls."""
import json
import os
import sys

import java_runtime

java_runtime.require()

from pyspark.sql import SparkSession

spark = (
    SparkSession.builder.master("local[2]")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.session.timeZone", "UTC")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
out = {}
merge = bool(os.environ.get("SPARK_MERGE_SCHEMA"))
for d in sys.argv[2:]:
    reader = spark.read.option("mergeSchema", "true") if merge else spark.read
    df = reader.parquet(f"{sys.argv[1]}/{d}")
    out[d] = {"rows": df.count(), "types": {f.name: f.dataType.simpleString() for f in df.schema.fields}}
    if merge:
        from pyspark.sql import functions as F

        row = df.select([F.count(F.when(F.col(c).isNull(), 1)).alias(c) for c in df.columns]).first()
        out[d]["nulls"] = row.asDict()
print("RESULT " + json.dumps(out))
