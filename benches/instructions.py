"""Instructions a row of the export path: the 100,000-row events job of
(b) (1,000 blocks × 100 events, 1,000-row pages, `compact = false`) run
under `valgrind --tool=cachegrind --cache-sim=no` against `chainetl sim`.

CPU time on a shared 2-core machine varies by ±20% from run to run, but
this count repeats within 0.3%, so it tells a change of 1% in the
conversion's cost (docs/performance.md). It is not a time: memcpy
and SIMD code count few instructions for much work. Compare binaries:

  python benches/instructions.py [BIN ...]   (default: target/release/chainetl)

Prints one JSON object per binary: instructions, rows, instructions a
row, and the bytes of the Parquet files written. Needs valgrind (Debian:
`apt-get install valgrind`).
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import BIN, OUT, Sim, report, spec  # noqa: E402

BLOCKS = 1_000


def parquet_bytes(root):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) if "_chainetl" not in d for f in fs if f.endswith(".parquet"))


def count(binary, url):
    name = "instructions"
    path = spec(name, url, BLOCKS)
    shutil.rmtree(os.path.join(OUT, name), ignore_errors=True)
    p = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", binary, "run", path, "-q"],
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        sys.exit(f"failed: {binary}\n{p.stderr[-2000:]}")
    m = re.search(r"I\s+refs:\s+([\d,]+)", p.stderr)
    if not m:
        sys.exit(f"no instruction count from valgrind:\n{p.stderr[-2000:]}")
    ir = int(m.group(1).replace(",", ""))
    rows = sum(t["rows"] for t in report(name)["exports"].values())
    return {"binary": binary, "instructions": ir, "rows": rows, "instructions_per_row": round(ir / rows), "parquet_bytes": parquet_bytes(os.path.join(OUT, name))}


def main():
    if not shutil.which("valgrind"):
        sys.exit("valgrind is not installed (Debian: apt-get install valgrind)")
    os.makedirs(OUT, exist_ok=True)
    sim = Sim()
    try:
        for binary in sys.argv[1:] or [BIN]:
            print(json.dumps(count(os.path.abspath(binary), sim.url)))
    finally:
        sim.stop()


if __name__ == "__main__":
    main()
