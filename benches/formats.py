"""(o) formats: the same events job in parquet, delta and iceberg.

- CPU per row, rows/s and peak RSS on local disk: the 1 M-row job of (b)
  (`compact = false`), the three formats interleaved, `reps` runs each,
  medians and ranges.
- S3 requests per committed unit: a job of 20 units on a local
  S3-compatible server (moto) behind a counting proxy, compaction on (the
  defaults), each format from an empty prefix: every request the run
  sent to the store, by method, and divided by the units committed.
  `iceberg+catalog` is the Iceberg job committing through a REST catalog
  (tests/rest_catalog.py, pyiceberg's commit logic, writing its metadata
  files to moto directly): the run's requests to the store as above, and
  its requests to the catalog by kind (`catalog_by_action`), each per
  committed unit.

usage: formats.py full|smoke    (also section (o) of bench.py)
"""
import http.client
import http.server
import json
import os
import shutil
import socketserver
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale  # noqa: E402  (free_port, start, CREDS)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("CHAINETL_BIN") or os.path.join(ROOT, "target/release/chainetl")
OUT = os.path.join(ROOT, "bench-out", "formats")
FIRST = 20_000_000
FORMATS = ["parquet", "delta", "iceberg"]
CATALOG = "iceberg+catalog"


class Counter:
    """Requests seen by the proxy, by method (a GET with `list-type` is a LIST)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}

    def add(self, kind):
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1

    def take(self):
        with self.lock:
            out, self.counts = self.counts, {}
        return out


def proxy(upstream_port, counter):
    """A reverse proxy to the store that counts each request."""

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def forward(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            kind = self.command
            if kind == "GET" and "list-type" in self.path:
                kind = "LIST"
            counter.add(kind)
            conn = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection",)}
            conn.request(self.command, self.path, body=body, headers=headers)
            r = conn.getresponse()
            data = r.read()
            self.send_response(r.status)
            for k, v in r.getheaders():
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            conn.close()

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = forward

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True

    port = scale.free_port()
    server = Server(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, port


def spec(name, url, uri, fmt, blocks, chunk, output_extra):
    path = os.path.join(OUT, f"{name}.toml")
    with open(path, "w") as f:
        f.write(f"""name = "{name}"
[source]
base_url = "{url}"
max_concurrency = 8
page_size = 1000
max_retries = 50
[output]
uri = "{uri}"
format = "{fmt}"
{output_extra}
[[export]]
dataset = "events"
chains = ["ethereum"]
window = "{FIRST}..{FIRST + blocks - 1}"
chunk_blocks = {chunk}
""")
    return path


def catalog_server(python, moto_port):
    """The test suite's REST catalog over a sqlite SqlCatalog, its metadata
    files written to moto directly (not through the counting proxy)."""
    d = os.path.join(OUT, "catalog")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    script = os.path.join(ROOT, "tests", "rest_catalog.py")
    env = dict(os.environ, **scale.CREDS)
    proc = subprocess.Popen(
        [python, script, "serve", "--dir", d, "--s3-endpoint", f"http://127.0.0.1:{moto_port}"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True,
    )
    line = proc.stdout.readline()
    if not line.startswith("LISTENING "):
        proc.kill()
        sys.exit(f"the REST catalog did not start: {line!r}")
    return proc, line.split()[1]


def catalog_stats(url):
    with urllib.request.urlopen(url + "/_stats", timeout=30) as r:
        return json.load(r)["requests"]


def run(path, env):
    """One run: wall seconds, CPU seconds, peak RSS (MiB)."""
    t = time.time()
    pid = os.fork()
    if pid == 0:
        os.environ.clear()
        os.environ.update(env)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(BIN, [BIN, "run", path, "-q"])
    _, status, ru = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {BIN} run {path}")
    return time.time() - t, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def report(root, name):
    d = os.path.join(root, "_chainetl", name, "runs")
    return json.load(open(os.path.join(d, sorted(os.listdir(d))[-1])))


def median(xs):
    return sorted(xs)[len(xs) // 2]


def formats_bench(smoke, python=sys.executable):
    import boto3

    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    sim_port, moto_port = scale.free_port(), scale.free_port()
    sim = scale.start([BIN, "sim", "--port", str(sim_port), "--frozen-at", "2025-06-01T00:00:00Z", "--events-per-block", "100"], sim_port)
    moto = scale.start([python, "-m", "moto.server", "-p", str(moto_port)], moto_port)
    sim_url = f"http://127.0.0.1:{sim_port}"
    counter = Counter()
    server, proxy_port = proxy(moto_port, counter)
    env = dict(os.environ, AWS_ENDPOINT_URL=f"http://127.0.0.1:{proxy_port}", **scale.CREDS)
    boto3.client(
        "s3", endpoint_url=f"http://127.0.0.1:{moto_port}", aws_access_key_id="scale", aws_secret_access_key="scale-secret", region_name="us-east-1"
    ).create_bucket(Bucket="formats")
    res = {"local": {}, "s3": {}}
    try:
        reps = 1 if smoke else 3
        blocks = 1_000 if smoke else 10_000
        runs = {f: [] for f in FORMATS}
        for _ in range(reps):
            for fmt in FORMATS:
                root = os.path.join(OUT, f"local-{fmt}")
                shutil.rmtree(root, ignore_errors=True)
                path = spec(f"local-{fmt}", sim_url, root, fmt, blocks, 1000, "compact = false")
                secs, cpu, rss = run(path, env)
                rows = sum(t["rows"] for t in report(root, f"local-{fmt}")["exports"].values())
                runs[fmt].append({"seconds": secs, "cpu": cpu, "rss": rss, "rows": rows})
        for fmt in FORMATS:
            rs = runs[fmt]
            cpu_us = [r["cpu"] / r["rows"] * 1e6 for r in rs]
            res["local"][fmt] = {
                "rows": rs[0]["rows"],
                "cpu_us_per_row": round(median(cpu_us), 3),
                "cpu_us_per_row_runs": [round(x, 3) for x in cpu_us],
                "rows_per_sec": round(median([r["rows"] / r["seconds"] for r in rs])),
                "peak_rss_mib": round(median([r["rss"] for r in rs]), 1),
            }
        for fmt in FORMATS:
            res["local"][fmt]["cpu_over_parquet"] = round(res["local"][fmt]["cpu_us_per_row"] / res["local"]["parquet"]["cpu_us_per_row"], 3)
        # S3: 20 units of 100 blocks (10,000 rows each), the defaults.
        s3_blocks = 2_000
        for fmt in FORMATS:
            name = f"s3-{fmt}"
            path = spec(name, sim_url, f"s3://formats/{name}", fmt, s3_blocks, 100, "")
            counter.take()
            secs, cpu, rss = run(path, env)
            counts = counter.take()
            total = sum(counts.values())
            units = s3_blocks // 100
            res["s3"][fmt] = {
                "units": units,
                "requests": total,
                "by_method": dict(sorted(counts.items())),
                "requests_per_unit": round(total / units, 1),
                "seconds": round(secs, 2),
            }
        # Iceberg through a REST catalog: the same job, the catalog's
        # requests counted by its own log.
        catalog, catalog_url = catalog_server(python, moto_port)
        try:
            name = "s3-iceberg-catalog"
            extra = f'[output.catalog]\ntype = "rest"\nuri = "{catalog_url}"\nnamespace = "bench"'
            path = spec(name, sim_url, f"s3://formats/{name}", "iceberg", s3_blocks, 100, extra)
            counter.take()
            before = catalog_stats(catalog_url)
            secs, cpu, rss = run(path, env)
            counts = counter.take()
            after = catalog_stats(catalog_url)
            by_action = {k: v - before.get(k, 0) for k, v in sorted(after.items()) if v - before.get(k, 0)}
            total, units = sum(counts.values()), s3_blocks // 100
            res["s3"][CATALOG] = {
                "units": units,
                "requests": total,
                "by_method": dict(sorted(counts.items())),
                "requests_per_unit": round(total / units, 1),
                "catalog_requests": sum(by_action.values()),
                "catalog_by_action": by_action,
                "catalog_requests_per_unit": round(sum(by_action.values()) / units, 1),
                "seconds": round(secs, 2),
            }
        finally:
            catalog.kill()
        for fmt in FORMATS + [CATALOG]:
            res["s3"][fmt]["over_parquet"] = round(res["s3"][fmt]["requests"] / res["s3"]["parquet"]["requests"], 2)
    finally:
        server.shutdown()
        sim.kill()
        moto.kill()
    return res


if __name__ == "__main__":
    print(json.dumps(formats_bench(len(sys.argv) > 1 and sys.argv[1] == "smoke"), indent=2))
