"""The hand-written exporter chainetl is measured against: what a data
engineer writes in an afternoon. Sequential paging with urllib, JSON into
Python lists, pyarrow into one Parquet file per chunk of pages.

usage: python_exporter.py BASE_URL CHAIN WINDOW OUT_DIR [PAGE_SIZE]
prints: rows=<n> seconds=<s>
"""
import json
import os
import sys
import time
import urllib.parse
import urllib.request

import pyarrow as pa
import pyarrow.parquet as pq


def main():
    base, chain, window, out = sys.argv[1:5]
    limit = int(sys.argv[5]) if len(sys.argv) > 5 else 1000
    os.makedirs(out, exist_ok=True)
    cols = {k: [] for k in ["block_number", "block_timestamp", "contract_address", "data", "log_index", "topics", "transaction_hash", "transaction_index"]}
    cursor, rows, part, start = None, 0, 0, time.time()

    def flush():
        nonlocal part, cols
        if cols["block_number"]:
            pq.write_table(pa.table(cols), os.path.join(out, f"part-{part:05}.parquet"), compression="zstd")
            part += 1
            cols = {k: [] for k in cols}

    while True:
        q = {"window": window, "limit": limit, "sort_by": "earliest"}
        if cursor:
            q["cursor"] = cursor
        with urllib.request.urlopen(f"{base}/v2/{chain}/events?{urllib.parse.urlencode(q)}") as r:
            page = json.load(r)
        for e in page["events"]:
            for k in cols:
                cols[k].append(e.get(k))
            rows += 1
        if len(cols["block_number"]) >= 100_000:
            flush()
        cursor = page.get("next_cursor")
        if not cursor:
            break
    flush()
    print(f"rows={rows} seconds={time.time() - start:.3f}")


if __name__ == "__main__":
    main()
