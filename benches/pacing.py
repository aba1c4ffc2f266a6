"""Pacing under a request quota: what share of the quota
chainetl turns into accepted requests, and what share of its requests the
service answers 429, in four scenarios against the built-in simulator:

  after_burst  a 200-block job spends the quota's burst, then at once a
               2,000-block job (max_concurrency 16, page_size 100)
  fresh        the 2,000-block job against a fresh simulator
  shards       --shard 1/3, 2/3, 3/3 of a 3,000-block job started together
  latency      no quota, 50 ms latency, 16 in flight: requests/s against
               Little's law (16 / 0.05 s)

Usage: python benches/pacing.py [smoke|full]  (CHAINETL_BIN: the binary).
Prints one JSON object; figures belong here, not in timed tests.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import BIN, Sim  # noqa: E402

FIRST = 20_000_000
QUOTA = 100.0


def spec(d, name, url, first, blocks, concurrency=16, page_size=100):
    path = os.path.join(d, f"{name}.toml")
    with open(path, "w") as f:
        f.write(
            f"""name = "{name}"
[source]
base_url = "{url}"
max_concurrency = {concurrency}
page_size = {page_size}
max_retries = 100
[output]
uri = "{d}/out"
compact = false
[[export]]
dataset = "events"
chains = ["ethereum"]
window = "{first}..{first + blocks - 1}"
chunk_blocks = 50
"""
        )
    return path


def run(*args):
    p = subprocess.run([BIN, *args, "-q"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"failed: {args}\n{p.stderr[-2000:]}")


def report(d, name):
    runs = os.path.join(d, "out", "_chainetl", name, "runs")
    return json.load(open(os.path.join(runs, "latest.json")))


def figures(reports, wall, quota=QUOTA):
    requests = sum(r["requests"] for r in reports)
    throttled = sum(r["throttled"] for r in reports)
    accepted = requests - throttled
    return {
        "accepted": accepted,
        "secs": round(wall, 2),
        "share_of_quota": round(accepted / wall / quota, 3),
        "share_429": round(throttled / max(requests, 1), 4),
    }


def single(d, blocks, spend):
    """One job, after a job that spent the quota's burst if `spend`."""
    sim = Sim("--quota-rps", str(QUOTA))
    try:
        if spend:
            run("run", spec(d, "spend", sim.url, FIRST + 100_000, 200))
        run("run", spec(d, "job", sim.url, FIRST, blocks))
        r = report(d, "job")
        return figures([r], r["elapsed_secs"])
    finally:
        sim.stop()


def shards(d, blocks):
    sim = Sim("--quota-rps", str(QUOTA))
    try:
        s = spec(d, "shards", sim.url, FIRST, blocks)
        t = time.time()
        procs = [subprocess.Popen([BIN, "run", s, "--shard", f"{k}/3", "-q"], stderr=subprocess.PIPE, text=True) for k in (1, 2, 3)]
        for p in procs:
            if p.wait() != 0:
                sys.exit(f"shard failed: {p.stderr.read()[-2000:]}")
        wall = time.time() - t
        runs = os.path.join(d, "out", "_chainetl", "shards", "runs")
        reps = [json.load(open(os.path.join(runs, f))) for f in os.listdir(runs) if f != "latest.json"]
        return figures(reps, wall)
    finally:
        sim.stop()


def latency(d, blocks):
    sim = Sim("--latency-ms", "50")
    try:
        s = spec(d, "latency", sim.url, FIRST, blocks)
        run("run", s)
        r = report(d, "latency")
        wall = r["elapsed_secs"]
        return {"requests_per_sec": round(r["requests"] / wall, 1), "littles_law": 16 / 0.05, "share": round(r["requests"] / wall / (16 / 0.05), 3)}
    finally:
        sim.stop()


def main():
    smoke = len(sys.argv) > 1 and sys.argv[1] == "smoke"
    blocks = 600 if smoke else 2_000
    out = {}
    for name, f, n in [
        ("after_burst", lambda d, n: single(d, n, spend=True), blocks),
        ("fresh", lambda d, n: single(d, n, spend=False), blocks),
        ("shards", shards, blocks * 3 // 2),
        ("latency", latency, blocks),
    ]:
        d = tempfile.mkdtemp(prefix=f"pacing-{name}-")
        try:
            out[name] = f(d, n)
        finally:
            shutil.rmtree(d, ignore_errors=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
