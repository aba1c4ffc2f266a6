"""chainetl benchmarks, all against `chainetl sim` processes on this machine.

  (a) drain:   full 1000-event pages fetched and discarded by wrk (the source's limit here)
  (b) chainetl exporting >= 1M event rows to Parquet (CPU-bound: no added latency)
  (c) the hand-written Python exporter (benches/python_exporter.py) on the same pages
  (d) chainetl peak RSS at 1M and at 4M rows
  (e) latency-bound: --latency-ms 50, max_concurrency 16, 100-row pages (Little's law: 320 pages/s)
  (f) quota-bound: --quota-rps 100: share of the quota used and share of requests answered 429
  (g) decoding: the (b) job decoded into a table per event
  (h) compaction: files per partition and mean file size before and after, for the demo and a
      7-day events job; compaction's rows/s; DuckDB query times before/after (point lookup by
      transaction hash, a contract filter over the week, a per-day aggregate) as ratios
  (j) compaction's cost: the (b) job with the default settings (compaction on) beside (b),
      CPU µs per row and peak RSS, at 1M and 4M rows
  (k) the conversion against DuckDB: the same pages saved as JSON files, turned into zstd
      Parquet by DuckDB on one thread (CPU µs per row; also with topic0..topic3 added, the
      columns chainetl writes), beside chainetl's export-path CPU per row on the same window;
      and the export path's own stages alone, in memory, on one thread
      (benches/parquet_floor.rs): the pages read and decoded, and the Parquet writer
      re-writing chainetl's rows as the export configures it: a floor under its CPU
  (i) scale: plan time, state objects, `status` time and no-op re-run time for jobs of ~1k, 6k
      and 10k units and a synthetic 100k-unit state, on local disk and on moto S3, and how each
      grows with units (benches/scale.py; CHAINETL_BIN_BEFORE=<older build> adds its figures)
  (n) columns: a blocks job with every column, and with exclude_columns = ["logs_bloom",
      "extra_data"]: bytes written, CPU µs per row and rows/s of each
  (o) formats: the (b) job in parquet, delta and iceberg, CPU µs per row, rows/s, peak RSS on
      local disk; and a 20-unit job on moto S3 behind a counting proxy, every store request
      by method and per committed unit, and the Iceberg job through a REST catalog: its
      requests to the store and to the catalog per committed unit (benches/formats.py)
(b)-(g) and (n) run with output.compact = false, so they measure the export alone. (b) states CPU µs
per row at 1 M, 4 M and (full mode) 16 M rows: `cpu_us_per_row_by_rows`.

usage: bench.py full|smoke     (smoke: small sizes, for CI)
Results are printed and written to bench-out/results.json.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import formats  # noqa: E402
import scale  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("CHAINETL_BIN") or os.path.join(ROOT, "target/release/chainetl")
OUT = os.path.join(ROOT, "bench-out")
FROZEN = "2025-06-01T00:00:00Z"
FIRST = 20_000_000


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Sim:
    def __init__(self, *flags, events_per_block=100):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [BIN, "sim", "--port", str(self.port), "--frozen-at", FROZEN, "--events-per-block", str(events_per_block), *flags],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def run_measured(cmd):
    """Runs cmd; returns (seconds, peak RSS in MiB, stdout)."""
    t = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate()
    # communicate() has reaped the child; ru_maxrss of children is cumulative,
    # so use wait4 through a fresh child instead.
    secs = time.time() - t
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err.decode()[-2000:]}")
    return secs, out.decode(), err.decode()


def run_rss(cmd, cpu=None):
    """Runs cmd and returns (seconds, peak RSS MiB) using wait4; `cpu`, a
    list, gets the child's CPU seconds (user + system) appended."""
    t = time.time()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execv(cmd[0], cmd)
    _, status, ru = os.wait4(pid, 0)
    secs = time.time() - t
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed ({status}): {' '.join(cmd)}")
    if cpu is not None:
        cpu.append(ru.ru_utime + ru.ru_stime)
    return secs, ru.ru_maxrss / 1024.0


def spec(name, url, blocks, page_size=1000, concurrency=8, chunk=1000, extra="", export_extra="", output_extra="compact = false"):
    path = os.path.join(OUT, f"{name}.toml")
    with open(path, "w") as f:
        f.write(
            f"""name = "{name}"
[source]
base_url = "{url}"
max_concurrency = {concurrency}
page_size = {page_size}
max_retries = 50
{extra}
[output]
uri = "{OUT}/{name}"
{output_extra}
[[export]]
dataset = "events"
chains = ["ethereum"]
window = "{FIRST}..{FIRST + blocks - 1}"
"""
            + (f"chunk_blocks = {chunk}\n" if chunk else "")
            + export_extra
        )
    return path


def report(name):
    d = os.path.join(OUT, name, "_chainetl", name, "runs")
    return json.load(open(os.path.join(d, sorted(os.listdir(d))[-1])))


def chainetl(name, url, blocks, **kw):
    path = spec(name, url, blocks, **kw)
    cpu = []
    # A delta output starts over by removing it (--fresh is for parquet).
    shutil.rmtree(os.path.join(OUT, name), ignore_errors=True)
    secs, rss = run_rss([BIN, "run", path, "-q"], cpu)
    r = report(name)
    rows = sum(t["rows"] for t in r["exports"].values())
    return {"rows": rows, "seconds": round(secs, 3), "rows_per_sec": round(rows / secs), "cpu_seconds": round(cpu[0], 3), "peak_rss_mib": round(rss, 1), "requests": r["requests"], "throttled": r["throttled"], "report": r}


# The simulator's four events, decoded (g): every log fits one of them.
DECODE_ALL = """decode = true
signatures = [
  "event Transfer(address indexed from, address indexed to, uint256 value)",
  "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
  "event Approval(address indexed owner, address indexed spender, uint256 value)",
  "event Swap(address indexed sender, uint amount0In, uint amount1In, uint amount0Out, uint amount1Out, address indexed to)",
  "event Sync(uint112 reserve0, uint112 reserve1)",
]
"""


def median(xs):
    return sorted(xs)[len(xs) // 2]


def median_run(runs, key):
    return sorted(runs, key=lambda r: r[key])[len(runs) // 2]


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "full"
    smoke = mode == "smoke"
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    res = {"mode": mode, "machine": f"{os.cpu_count()} cores"}
    blocks_1m = 1_000 if smoke else 10_000
    blocks_4m = 2_000 if smoke else 40_000

    sim = Sim()
    try:
        # (a) drain with wrk at the same concurrency as chainetl (8).
        if shutil.which("wrk"):
            url = f"{sim.url}/v2/ethereum/events?window={FIRST}..{FIRST + 99}&limit=1000&sort_by=earliest"
            dur = "3s" if smoke else "10s"
            out = subprocess.run(["wrk", "-t2", "-c8", f"-d{dur}", url], capture_output=True, text=True).stdout
            rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
            tput = re.search(r"Transfer/sec:\s+([\d.]+\w+)", out).group(1)
            res["a_drain"] = {"pages_per_sec": round(rps), "rows_per_sec": round(rps * 1000), "transfer_per_sec": tput}
        # (b) + (d) chainetl, CPU-bound. Peak RSS of one run varies by a few
        # percent with how the units' row groups happen to line up, so each
        # size runs `reps` times and the medians are reported, with the ranges.
        reps = 1 if smoke else 3
        small = [chainetl("cpu1m", sim.url, blocks_1m) for _ in range(reps)]
        big = [chainetl("cpu4m", sim.url, blocks_4m) for _ in range(reps)]
        b = median_run(small, "rows_per_sec")
        res["b_chainetl"] = {k: v for k, v in b.items() if k != "report"}
        res["b_chainetl"]["rows_per_sec_runs"] = [r["rows_per_sec"] for r in small]
        rss_small = [r["peak_rss_mib"] for r in small]
        rss_big = [r["peak_rss_mib"] for r in big]
        res["d_rss"] = {
            "rows_small": small[0]["rows"],
            "rss_small_mib": median(rss_small),
            "rss_small_runs": rss_small,
            "rows_big": big[0]["rows"],
            "rss_big_mib": median(rss_big),
            "rss_big_runs": rss_big,
        }
        # (m) changing the format of (b)'s last output from its files.
        res["m_conversion"] = conversion_bench(blocks_1m, small)
        res["m_conversion"]["decode_from_stored"] = derive_bench(sim.url, blocks_1m)
        # (g) decoding: the same events job decoded into a table per event
        # (no raw table), against the raw job of (b); CPU µs per log.
        # (CHAINETL_BENCH_RAW_ONLY=1: binaries from before decoding existed.)
        dec = [] if os.environ.get("CHAINETL_BENCH_RAW_ONLY") else [chainetl("decoded", sim.url, blocks_1m, export_extra=DECODE_ALL) for _ in range(reps)]
        g = median_run(dec, "rows_per_sec") if dec else None
        raw_cpu = median([r["cpu_seconds"] / r["rows"] * 1e6 for r in small])
        res["b_chainetl"]["cpu_us_per_row"] = round(raw_cpu, 3)
        # CPU per row by size: 1 M and 4 M rows are (b)'s and (d)'s
        # runs (medians); 16 M rows one run, in full mode only (~70 s).
        by_size = {
            str(small[0]["rows"]): round(raw_cpu, 3),
            str(big[0]["rows"]): round(median([r["cpu_seconds"] / r["rows"] * 1e6 for r in big]), 3),
        }
        if not smoke:
            huge = chainetl("cpu16m", sim.url, 160_000)
            by_size[str(huge["rows"])] = round(huge["cpu_seconds"] / huge["rows"] * 1e6, 3)
            res["d_rss"]["rows_16m"] = huge["rows"]
            res["d_rss"]["rss_16m_mib"] = huge["peak_rss_mib"]
            shutil.rmtree(os.path.join(OUT, "cpu16m"), ignore_errors=True)
        res["b_chainetl"]["cpu_us_per_row_by_rows"] = by_size
        dec_cpu = median([r["cpu_seconds"] / r["rows"] * 1e6 for r in dec]) if dec else None
        res["g_decoded"] = {} if not dec else {
            "rows": g["rows"],
            "rows_per_sec": g["rows_per_sec"],
            "rows_per_sec_runs": [r["rows_per_sec"] for r in dec],
            "undecodable": sum(t["undecodable"] for t in g["report"]["exports"].values()),
            "cpu_us_per_row_raw": round(raw_cpu, 3),
            "cpu_us_per_row_decoded": round(dec_cpu, 3),
            "decoding_share_of_raw_cost": round(dec_cpu / raw_cpu - 1, 3),
            "peak_rss_mib": g["peak_rss_mib"],
        }
        # What the bloom filters cost to write: (b) without them.
        nb = [chainetl("nobloom", sim.url, blocks_1m, output_extra="compact = false\nbloom_filters = []") for _ in range(reps)]
        nb_cpu = median([r["cpu_seconds"] / r["rows"] * 1e6 for r in nb])
        res["b_chainetl"]["cpu_us_per_row_without_bloom_filters"] = round(nb_cpu, 3)
        res["b_chainetl"]["rows_per_sec_without_bloom_filters"] = median_run(nb, "rows_per_sec")["rows_per_sec"]
        # (l) the same job as Delta tables: wall and CPU against (b), and
        # the Delta commits it made per second.
        dl = [chainetl("delta1m", sim.url, blocks_1m, output_extra='compact = false\nformat = "delta"') for _ in range(reps)]
        res["l_delta"] = delta_figures(small, dl, os.path.join(OUT, "delta1m", "events", "_delta_log"))
        # (j) the same jobs with the default settings: compaction on.
        dflt = [chainetl("cpu1m_default", sim.url, blocks_1m, output_extra="") for _ in range(reps)]
        dflt_big = chainetl("cpu4m_default", sim.url, blocks_4m, output_extra="")
        dflt_cpu = median([r["cpu_seconds"] / r["rows"] * 1e6 for r in dflt])
        res["j_compaction_cost"] = {
            "cpu_us_per_row_compact_false": round(raw_cpu, 3),
            "cpu_us_per_row_defaults": round(dflt_cpu, 3),
            "defaults_over_compact_false": round(dflt_cpu / raw_cpu, 3),
            "peak_rss_mib_defaults": median([r["peak_rss_mib"] for r in dflt]),
            "peak_rss_mib_defaults_big": dflt_big["peak_rss_mib"],
            "rows_big": dflt_big["rows"],
        }
        # (n) a blocks job with and without its widest columns.
        res["n_columns"] = columns_bench(sim.url, 20_000 if smoke else 200_000, reps)
        # (k) DuckDB on the same pages.
        res["k_duckdb"] = duckdb_comparison(sim.url, 500 if smoke else 2_000)
        # (c) the Python exporter, on a slice (its rate does not depend on size).
        py_blocks = 200 if smoke else 2_000
        window = f"{FIRST}..{FIRST + py_blocks - 1}"
        secs, out, _ = run_measured([sys.executable, os.path.join(ROOT, "benches/python_exporter.py"), sim.url, "ethereum", window, os.path.join(OUT, "python")])
        rows = int(re.search(r"rows=(\d+)", out).group(1))
        res["c_python"] = {"rows": rows, "seconds": round(secs, 3), "rows_per_sec": round(rows / secs)}
    finally:
        sim.stop()

    # (e) latency-bound.
    sim = Sim("--latency-ms", "50")
    try:
        # 6,000 blocks, ~20 s, cut into units automatically (no
        # chunk_blocks: what a user gets): 105 units of 50 blocks, then the
        # last eighth of the window in 75 units of 10.
        blocks = 600 if smoke else 6_000
        e = chainetl("latency", sim.url, blocks, page_size=100, concurrency=16, chunk=None)
        pps = e["requests"] / e["seconds"]
        res["e_latency"] = {"pages_per_sec": round(pps, 1), "littles_law_limit": 320, "share": round(pps / 320, 3), "rows": e["rows"], "seconds": e["seconds"]}
    finally:
        sim.stop()

    # (f) quota-bound.
    quota = 100
    sim = Sim("--quota-rps", str(quota), "--latency-ms", "10")
    try:
        blocks = 400 if smoke else 2_000
        f = chainetl("quota", sim.url, blocks, page_size=100, concurrency=16, chunk=25)
        ok = f["requests"] - f["throttled"]
        res["f_quota"] = {
            "quota_rps": quota,
            "successful_rps": round(ok / f["seconds"], 1),
            "quota_used": round(ok / f["seconds"] / quota, 3),
            "share_429": round(f["throttled"] / max(f["requests"], 1), 4),
            "requests": f["requests"],
        }
    finally:
        sim.stop()

    res["h_compaction"] = compaction_bench(smoke)
    res["i_scale"] = scale.scale_bench(smoke)
    res["o_formats"] = formats.formats_bench(smoke)

    b, c = res["b_chainetl"], res["c_python"]
    res["ratios"] = {"chainetl_over_python": round(b["rows_per_sec"] / c["rows_per_sec"], 1)}
    if "a_drain" in res:
        res["ratios"]["chainetl_over_drain"] = round(b["rows_per_sec"] / res["a_drain"]["rows_per_sec"], 3)
    d = res["d_rss"]
    res["ratios"]["rss_growth_small_to_big"] = round(d["rss_big_mib"] / d["rss_small_mib"] - 1, 3)
    if smoke:
        # 0.1 M and 0.2 M rows end before memory reaches its plateau (units
        # in flight each holding their pages and open files): the growth
        # figure means something only at the full sizes.
        res["ratios"]["note"] = "smoke sizes: peak RSS is still ramping up, so its growth is not a flatness measure; run `make bench`"
    json.dump(res, open(os.path.join(OUT, "results.json"), "w"), indent=2)
    print(json.dumps(res, indent=2))


def conversion_bench(blocks, fresh):
    """(m): the output of (b)'s last run converted parquet → delta, then
    back, then re-partitioned, from its files, pointed at a port nothing
    answers (one request would fail the run): wall, CPU and peak RSS,
    against a fresh export."""
    name = "cpu1m"
    dead = f"http://127.0.0.1:{free_port()}"
    out = {}
    for to in ("delta", "parquet"):
        path = spec(name, dead, blocks, output_extra=f'compact = false\nformat = "{to}"')
        cpu = []
        secs, rss = run_rss([BIN, "run", path, "-q"], cpu)
        r = report(name)
        c = r.get("conversion") or {}
        out[f"to_{to}"] = {
            "seconds": round(secs, 3),
            "cpu_seconds": round(cpu[0], 3),
            "peak_rss_mib": round(rss, 1),
            "requests": r["requests"],
            "files": c.get("files"),
            "rows": c.get("rows"),
        }
    # The same output laid out anew from its files: (chain, date) → chain.
    path = spec(name, dead, blocks, output_extra='compact = false\npartition_by = ["chain"]')
    cpu = []
    secs, rss = run_rss([BIN, "run", path, "-q"], cpu)
    r = report(name)
    c = r.get("conversion") or {}
    out["partition_by"] = {
        "seconds": round(secs, 3),
        "cpu_seconds": round(cpu[0], 3),
        "peak_rss_mib": round(rss, 1),
        "requests": r["requests"],
        "files": c.get("files"),
        "rows": c.get("rows"),
    }
    wall = median([r["seconds"] for r in fresh])
    cpu = median([r["cpu_seconds"] for r in fresh])
    out["fresh_export_seconds"] = wall
    out["fresh_export_cpu_seconds"] = cpu
    out["to_delta_wall_over_fresh_export"] = round(out["to_delta"]["seconds"] / wall, 4)
    out["to_delta_cpu_over_fresh_export"] = round(out["to_delta"]["cpu_seconds"] / cpu, 4)
    out["partition_by_cpu_over_fresh_export"] = round(out["partition_by"]["cpu_seconds"] / cpu, 4)
    return out


def derive_bench(url, blocks):
    """(m): decoding added (with also_raw) to a finished raw export of the
    events (g) decodes, made from its stored logs with no request (pointed
    at a port nothing answers), against a fresh export of the decoding spec."""
    raw = DECODE_ALL.replace("decode = true\n", "")
    dec = DECODE_ALL + 'also_raw = true\n'
    fresh = chainetl("derive-fresh", url, blocks, export_extra=dec)
    chainetl("derive", url, blocks, export_extra=raw)
    path = spec("derive", f"http://127.0.0.1:{free_port()}", blocks, export_extra=dec)
    cpu = []
    secs, rss = run_rss([BIN, "run", path, "-q"], cpu)
    r = report("derive")
    c = r.get("conversion") or {}
    return {
        "seconds": round(secs, 3),
        "cpu_seconds": round(cpu[0], 3),
        "peak_rss_mib": round(rss, 1),
        "requests": r["requests"],
        "files": c.get("files"),
        "rows_read": c.get("rows"),
        "fresh_decoding_export_cpu_seconds": fresh["cpu_seconds"],
        "fresh_decoding_export_seconds": fresh["seconds"],
        "cpu_over_fresh_decoding_export": round(cpu[0] / fresh["cpu_seconds"], 4),
    }


def delta_figures(parquet, delta, log):
    """(l): the delta runs against the parquet runs of the same job."""
    wall = [r["seconds"] for r in delta]
    cpu = [r["cpu_seconds"] for r in delta]
    commits = len([n for n in os.listdir(log) if n.endswith(".json")]) - 1
    last = delta[-1]
    return {
        "rows": last["rows"],
        "seconds": median(wall),
        "seconds_runs": wall,
        "cpu_seconds": median(cpu),
        "cpu_seconds_runs": cpu,
        "parquet_seconds": median([r["seconds"] for r in parquet]),
        "parquet_cpu_seconds": median([r["cpu_seconds"] for r in parquet]),
        "wall_over_parquet": round(median(wall) / median([r["seconds"] for r in parquet]), 3),
        "cpu_over_parquet": round(median(cpu) / median([r["cpu_seconds"] for r in parquet]), 3),
        "peak_rss_mib": median([r["peak_rss_mib"] for r in delta]),
        "commits": commits,
        "commits_per_sec": round(commits / last["seconds"], 1),
    }


def duckdb_comparison(url, blocks):
    """(k): CPU µs per event row of DuckDB (one thread) turning saved pages
    into zstd Parquet, and of chainetl exporting the same window."""
    import urllib.parse
    import urllib.request

    pages = os.path.join(OUT, "duckdb-pages")
    shutil.rmtree(pages, ignore_errors=True)
    os.makedirs(pages)
    base = f"{url}/v2/ethereum/events?window={FIRST}..{FIRST + blocks - 1}&limit=1000&sort_by=earliest"
    cursor, n = None, 0
    for _ in range(100_000):
        body = urllib.request.urlopen(base + (f"&cursor={urllib.parse.quote(cursor)}" if cursor else "")).read()
        with open(os.path.join(pages, f"page-{n:06d}.json"), "wb") as f:
            f.write(body)
        n += 1
        cursor = json.loads(body).get("next_cursor")
        if not cursor:
            break
    script = (
        "import duckdb, resource, sys\n"
        "con = duckdb.connect()\n"
        "con.execute('SET threads = 1')\n"
        # A long COPY draws a progress bar on stdout, where the figures go.
        "con.execute('SET enable_progress_bar = false')\n"
        "r0 = resource.getrusage(resource.RUSAGE_SELF)\n"
        "con.execute(f\"COPY (SELECT {sys.argv[3]} FROM (SELECT unnest(events) AS e FROM read_json('{sys.argv[1]}/*.json', format = 'auto', maximum_object_size = 100000000))) TO '{sys.argv[2]}' (FORMAT parquet, COMPRESSION zstd)\")\n"
        "r1 = resource.getrusage(resource.RUSAGE_SELF)\n"
        "rows = con.execute(f\"SELECT count(*) FROM read_parquet('{sys.argv[2]}')\").fetchone()[0]\n"
        "print(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime, rows)\n"
    )
    target = os.path.join(OUT, "duckdb.parquet")

    def duckdb(columns):
        out = subprocess.run([sys.executable, "-c", script, pages, target, columns], capture_output=True, text=True, check=True).stdout.split()
        return float(out[0]) / int(out[1]) * 1e6

    runs = [duckdb("e.*") for _ in range(2)]
    # The columns chainetl writes: the page's, and topic0..topic3.
    flat = ", ".join(f"e.topics[{i + 1}] AS topic{i}" for i in range(4))
    same_columns = [duckdb(f"e.*, {flat}") for _ in range(2)]
    ours = [chainetl("duckdb_same", url, blocks) for _ in range(2)]
    ours_us = [r["cpu_seconds"] / r["rows"] * 1e6 for r in ours]
    floor = parquet_floor("duckdb_same", pages)
    shutil.rmtree(pages, ignore_errors=True)
    return {
        "rows": ours[0]["rows"],
        "pages": n,
        "duckdb_cpu_us_per_row": [round(x, 3) for x in runs],
        "chainetl_cpu_us_per_row": [round(x, 3) for x in ours_us],
        "chainetl_over_duckdb": round(min(ours_us) / min(runs), 3),
        # DuckDB writing the columns chainetl writes (topic0..topic3 too).
        "duckdb_same_columns_cpu_us_per_row": [round(x, 3) for x in same_columns],
        "chainetl_over_duckdb_same_columns": round(min(ours_us) / min(same_columns), 3),
        # The export path's own stages alone, in memory, on one thread
        # (benches/parquet_floor.rs): reading and decoding the pages, and
        # the Parquet writer re-writing chainetl's rows as the export
        # configures it, and with parts of it turned off.
        "stages_cpu_us_per_row": floor,
        "parquet_writer_over_duckdb": round(floor["as-configured"] / min(runs), 3),
        "stages_over_duckdb": round((floor["read-and-decode"] + floor["as-configured"]) / min(runs), 3),
    }


def parquet_floor(name, pages):
    """CPU µs a row of the export path's stages alone (benches/parquet_floor.rs),
    by variant: the pages saved under `pages` read and decoded; output
    `name`'s rows re-written by the Parquet writer."""
    root = os.path.join(OUT, name)
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) if "_chainetl" not in d for f in fs if f.endswith(".parquet"))
    bodies = sorted(os.path.join(pages, f) for f in os.listdir(pages) if f.endswith(".json"))
    p = subprocess.run(
        ["cargo", "bench", "-q", "--bench", "parquet_floor", "--", os.path.join(OUT, f"{name}.toml"), *bodies, *files],
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        sys.exit(f"parquet_floor failed:\n{p.stderr[-2000:]}")
    return {v["variant"]: v["cpu_us_per_row"] for v in map(json.loads, p.stdout.splitlines())}


def layout(root):
    """Files per partition directory and mean file size under `root`."""
    parts, sizes = {}, []
    for d, _, files in os.walk(root):
        if "_chainetl" in d:
            continue
        pq = [f for f in files if f.endswith(".parquet")]
        if pq:
            parts[d] = len(pq)
            sizes += [os.path.getsize(os.path.join(d, f)) for f in pq]
    n = sum(parts.values())
    return {"files": n, "partitions": len(parts), "files_per_partition": round(n / max(len(parts), 1), 2), "mean_file_kib": round(sum(sizes) / max(n, 1) / 1024, 1)}


def query_times(root):
    """Median seconds of three DuckDB queries over the events under `root`."""
    import duckdb

    src = f"read_parquet('{root}/events/**/*.parquet', hive_partitioning = true)"
    con = duckdb.connect()
    tx = con.execute(f"select transaction_hash from {src} using sample 1 rows").fetchall()[0][0]
    contract = con.execute(f"select contract_address from {src} group by 1 order by count(*) desc limit 1").fetchall()[0][0]
    qs = {
        "point_lookup_tx_hash": f"select * from {src} where transaction_hash = '{tx}'",
        "contract_filter_week": f"select count(*), max(block_number) from {src} where contract_address = '{contract}'",
        "per_day_aggregate": f"select date, count(*), count(distinct contract_address) from {src} group by date order by date",
    }
    out = {}
    for k, q in qs.items():
        times = []
        for _ in range(3):
            c = duckdb.connect()
            t = time.time()
            c.execute(q).fetchall()
            times.append(time.time() - t)
        out[k] = round(median(times), 4)
    return out


def columns_bench(url, blocks, reps):
    """(n): blocks of ethereum with every column, then without `logs_bloom`
    and `extra_data`: the bytes of the files, CPU µs per row, rows/s
    (medians of `reps` runs)."""
    res = {}
    for label, extra in (("all_columns", ""), ("without_logs_bloom_extra_data", 'exclude_columns = ["logs_bloom", "extra_data"]\n')):
        runs = []
        for _ in range(reps):
            name = f"blocks_{label}"
            path = os.path.join(OUT, f"{name}.toml")
            with open(path, "w") as f:
                f.write(f"""name = "{name}"
[source]
base_url = "{url}"
max_concurrency = 8
max_retries = 50
[output]
uri = "{OUT}/{name}"
compact = false
[[export]]
dataset = "blocks"
chains = ["ethereum"]
window = "{FIRST}..{FIRST + blocks - 1}"
{extra}""")
            shutil.rmtree(os.path.join(OUT, name), ignore_errors=True)
            cpu = []
            secs, _ = run_rss([BIN, "run", path, "-q"], cpu)
            rows = sum(t["rows"] for t in report(name)["exports"].values())
            data = os.path.join(OUT, name, "blocks")
            size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(data) for f in fs)
            runs.append({"rows": rows, "bytes": size, "cpu_us_per_row": round(cpu[0] / rows * 1e6, 3), "rows_per_sec": round(rows / secs)})
        res[label] = {
            "rows": runs[0]["rows"],
            "bytes": median([r["bytes"] for r in runs]),
            "cpu_us_per_row": median([r["cpu_us_per_row"] for r in runs]),
            "rows_per_sec": median([r["rows_per_sec"] for r in runs]),
        }
    a, b = res["all_columns"], res["without_logs_bloom_extra_data"]
    res["bytes_ratio"] = round(b["bytes"] / max(a["bytes"], 1), 3)
    res["cpu_ratio"] = round(b["cpu_us_per_row"] / max(a["cpu_us_per_row"], 1e-9), 3)
    return res


def compaction_bench(smoke):
    """(h): the demo and a week of events, before and after compaction."""
    res = {}
    demo = os.path.join(ROOT, "pipelines/demo.toml")
    for label, on in (("before", "false"), ("after", "true")):
        uri = os.path.join(OUT, f"demo-{label}")
        run_measured([BIN, "run", demo, "--fresh", "-q", "--set", f"output.uri={uri}", "--set", f"output.compact={on}"])
        res[f"demo_{label}"] = layout(uri)
    sim = Sim(events_per_block=20)
    try:
        days = 1 if smoke else 7
        path = os.path.join(OUT, "week.toml")
        with open(path, "w") as f:
            f.write(f"""name = "week"
[source]
base_url = "{sim.url}"
max_concurrency = 8
[output]
uri = "{OUT}/week"
compact = false
[[export]]
dataset = "events"
chains = ["ethereum"]
window = "2025-05-{32 - days:02d}T00:00:00Z..2025-06-01T00:00:00Z"
""")
        run_measured([BIN, "run", path, "--fresh", "-q"])
        before = layout(os.path.join(OUT, "week"))
        qb = query_times(os.path.join(OUT, "week"))
        t = time.time()
        _, out, _ = run_measured([BIN, "compact", path])
        secs = time.time() - t
        rows = int(re.search(r"([\d]+) rows in", out).group(1))
        after = layout(os.path.join(OUT, "week"))
        qa = query_times(os.path.join(OUT, "week"))
        res["week_events"] = {
            "rows": rows,
            "before": before,
            "after": after,
            "compaction_seconds": round(secs, 2),
            "compaction_rows_per_sec": round(rows / secs),
            "duckdb_seconds_before": qb,
            "duckdb_seconds_after": qa,
            "duckdb_before_over_after": {k: round(qb[k] / max(qa[k], 1e-6), 2) for k in qb},
        }
    finally:
        sim.stop()
    return res


if __name__ == "__main__":
    main()
