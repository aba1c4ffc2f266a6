"""Reads a chainetl output directory with Spark and prints, per dataset, the
row count and the Spark types of every column, as JSON (used by the tests)."""
import json
import sys

from pyspark.sql import SparkSession

spark = (
    SparkSession.builder.master("local[2]")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.session.timeZone", "UTC")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
out = {}
for d in sys.argv[2:]:
    df = spark.read.parquet(f"{sys.argv[1]}/{d}")
    out[d] = {"rows": df.count(), "types": {f.name: f.dataType.simpleString() for f in df.schema.fields}}
print("RESULT " + json.dumps(out))
