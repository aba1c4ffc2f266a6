"""(i) scale: what a job's cost does with its unit count.

For events jobs of about 1k, 6k and 10k units on seven chains (hour-long
units: `chunk_duration = "1h"`), exported once through the simulator, and a
synthetic 100k-unit state (one manifest written directly):
`plan` time, state objects, `status` time, the time of a no-op re-run,
`verify` time (by footers with `--quick`, and by content), and
`report`'s time and page size (the page must stay under 2 MB and 5 s at
a year on seven chains, ~3,500 units: between the first two jobs),
on local disk and on a local S3-compatible server (moto), with the default
settings (compaction on, so the finished job's partitions are compacted). With
CHAINETL_BIN_BEFORE set to an earlier build, the same figures for it
(per-unit checkpoints) on the same jobs.

usage: scale.py full|smoke    (also section (i) of bench.py)
"""
import datetime
import json
import os
import shutil
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("CHAINETL_BIN") or os.path.join(ROOT, "target/release/chainetl")
BEFORE = os.environ.get("CHAINETL_BIN_BEFORE")
OUT = os.path.join(ROOT, "bench-out", "scale")
FROZEN = "2025-06-01T00:00:00Z"
CHAINS = ["ethereum", "apechain", "arbitrum", "avalanche", "base", "bsc", "polygon"]
CREDS = {"AWS_ACCESS_KEY_ID": "scale", "AWS_SECRET_ACCESS_KEY": "scale-secret", "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port):
    for _ in range(400):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nothing listens on {port}")


def start(cmd, port):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    return p


def spec(name, sim_url, uri, days, extra=""):
    path = os.path.join(OUT, f"{name}.toml")
    first = datetime.datetime(2025, 6, 1, tzinfo=datetime.timezone.utc) - datetime.timedelta(days=days)
    window = f"{first.strftime('%Y-%m-%dT%H:%M:%SZ')}..{FROZEN}"
    with open(path, "w") as f:
        f.write(f"""name = "{name}"
[source]
base_url = "{sim_url}"
max_concurrency = 16
[output]
uri = "{uri}"
{extra}
[[export]]
dataset = "events"
chains = {json.dumps(CHAINS)}
window = "{window}"
chunk_duration = "1h"
""")
    return path


def timed(cmd, env):
    t = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stderr[-2000:]}")
    return round(time.time() - t, 3), p.stdout


def state_objects(uri, name, s3):
    if s3 is None:
        root = os.path.join(uri, "_chainetl", name)
        return sum(len(fs) for _, _, fs in os.walk(root))
    bucket, prefix = uri[len("s3://"):].split("/", 1)
    n, token = 0, None
    while True:
        kw = {"Bucket": bucket, "Prefix": f"{prefix}/_chainetl/{name}/"}
        if token:
            kw["ContinuationToken"] = token
        r = s3.list_objects_v2(**kw)
        n += r.get("KeyCount", 0)
        if not r.get("IsTruncated"):
            return n
        token = r["NextContinuationToken"]


def measure(binary, name, sim_url, uri, days, env, s3):
    """Exports the job once, then times plan, status and a no-op re-run."""
    path = spec(name, sim_url, uri, days)
    export_secs, _ = timed([binary, "run", path, "-q"], env)
    plan_secs, out = timed([binary, "plan", path, "--summary"], env)
    status_secs, out = timed([binary, "status", path], env)
    noop_secs, out = timed([binary, "run", path], env)
    assert " 0 requests" in out, out
    units = 7 * 24 * days
    row = {"units": units, "export_seconds": export_secs, "plan_seconds": plan_secs, "state_objects": state_objects(uri, name, s3), "status_seconds": status_secs, "noop_run_seconds": noop_secs}
    if binary == BIN:
        # verify: every file by size and footer rows (--quick) or by content,
        # and the rows counted from the records (no data page read for that).
        row["verify_quick_seconds"], out = timed([binary, "verify", path, "--quick", "-q"], env)
        assert "rows as committed" in out, out
        row["verify_seconds"], _ = timed([binary, "verify", path, "-q"], env)
        page = os.path.join(OUT, f"{name}-report.html")
        row["report_seconds"], _ = timed([binary, "report", path, "--out", page], env)
        row["report_bytes"] = os.path.getsize(page)
    return row


def synthetic(binary, sim_url, env, uri, s3=None):
    """A 100k-unit job's state written directly: one job run on a shard
    that owns nothing much freezes job.json, then one manifest holds every
    unit as done (no data files: a re-run has nothing to do)."""
    name = "syn100k-s3" if s3 else "syn100k"
    days = 30
    path = spec(name, sim_url, uri, days, extra="")
    with open(path) as f:
        text = f.read().replace('chunk_duration = "1h"', 'chunk_duration = "3m"')
    with open(path, "w") as f:
        f.write(text)
    _, out = timed([binary, "plan", path], env)
    ids = [line.split()[0] for line in out.splitlines() if line.startswith("e0-")]
    timed([binary, "run", path, "-q", "--shard", f"{len(ids)}/{len(ids)}"], env)
    entries = [{"version": 1, "unit": u, "cursor": None, "next_seq": 0, "rows": 0, "files": 0, "bytes": 0, "pages": 1, "done": True, "updated_at": FROZEN} for u in ids]
    manifest = json.dumps({"version": 1, "seq": 0, "units": entries, "created_at": FROZEN})
    if s3 is None:
        state = os.path.join(uri, "_chainetl", name)
        shutil.rmtree(os.path.join(state, "units"), ignore_errors=True)
        shutil.rmtree(os.path.join(state, "manifests"), ignore_errors=True)
        os.makedirs(os.path.join(state, "manifests"))
        with open(os.path.join(state, "manifests", "0000000000-synthetic.json"), "w") as f:
            f.write(manifest)
    else:
        bucket, prefix = uri[len("s3://"):].split("/", 1)
        state = f"{prefix}/_chainetl/{name}/"
        for sub in ("units/", "manifests/"):
            for o in s3.list_objects_v2(Bucket=bucket, Prefix=state + sub).get("Contents", []):
                s3.delete_object(Bucket=bucket, Key=o["Key"])
        s3.put_object(Bucket=bucket, Key=state + "manifests/0000000000-synthetic.json", Body=manifest.encode())
    plan_secs, _ = timed([binary, "plan", path, "--summary"], env)
    status_secs, _ = timed([binary, "status", path], env)
    noop_secs, out = timed([binary, "run", path], env)
    assert " 0 requests" in out, out
    return {"units": len(ids), "plan_seconds": plan_secs, "state_objects": state_objects(uri, name, s3), "status_seconds": status_secs, "noop_run_seconds": noop_secs}


def growth(rows):
    """How each figure grows from the smallest job to the largest, against units."""
    a, b = rows[0], rows[-1]
    out = {"units": round(b["units"] / a["units"], 1)}
    for k in ("plan_seconds", "state_objects", "status_seconds", "noop_run_seconds"):
        out[k] = round(b[k] / max(a[k], 1e-3), 1)
    return out


def scale_bench(smoke, python=sys.executable):
    import boto3

    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    sim_port, moto_port = free_port(), free_port()
    sim = start([BIN, "sim", "--port", str(sim_port), "--frozen-at", FROZEN, "--events-per-block", "1"], sim_port)
    moto = start([python, "-m", "moto.server", "-p", str(moto_port)], moto_port)
    sim_url, endpoint = f"http://127.0.0.1:{sim_port}", f"http://127.0.0.1:{moto_port}"
    env = dict(os.environ, AWS_ENDPOINT_URL=endpoint, **CREDS)
    s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="scale", aws_secret_access_key="scale-secret", region_name="us-east-1")
    s3.create_bucket(Bucket="scale")
    local_days = [6] if smoke else [6, 36, 60]
    s3_days = [6] if smoke else [6, 36]
    res = {}
    try:
        builds = [("after", BIN)] + ([("before", BEFORE)] if BEFORE else [])
        for label, binary in builds:
            # The earlier build is measured up to the S3 sizes (the point of
            # comparison), so the section ends in minutes.
            days = local_days if label == "after" else s3_days
            local = [measure(binary, f"{label}-l{d}", sim_url, os.path.join(OUT, f"{label}-l{d}"), d, env, None) for d in days]
            if label == "after" and not smoke:
                local.append(synthetic(binary, sim_url, env, os.path.join(OUT, "syn100k")))
            remote = [measure(binary, f"{label}-s{d}", sim_url, f"s3://scale/{label}-s{d}", d, env, s3) for d in s3_days]
            if label == "after" and not smoke:
                remote.append(synthetic(binary, sim_url, env, "s3://scale/syn100k", s3))
            res[label] = {"local": local, "s3": remote, "growth_local": growth(local), "growth_s3": growth(remote)}
    finally:
        sim.kill()
        moto.kill()
    return res


if __name__ == "__main__":
    r = scale_bench(len(sys.argv) > 1 and sys.argv[1] == "smoke")
    print(json.dumps(r, indent=2))
