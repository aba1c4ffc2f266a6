//! S3 output on a real S3-compatible server (moto, from PyPI, started on
//! loopback), reached through a TCP proxy the tests can stop and restart to
//! take the endpoint away mid-run without losing the server's data. Also:
//! shards of one job at once into one bucket.

use crate::common::*;
use crate::truth;
use chainetl::sim::data::SimData;
use chainetl::vocab::chain::Chain;
use futures::TryStreamExt;
use object_store::{ObjectStore, ObjectStoreExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) const SECRET: &str = "moto-secret-never-logged-7f3a";

/// The connections being relayed, by the order the proxy accepted them
/// in, with the client's port.
type Live = std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<u64, u16>>>;

/// One relayed connection, listed in [`Live`] while it lives (dropped with
/// its task, also when [`Proxy::down`] aborts it).
struct Relaying(Live, u64);

impl Relaying {
    fn new(live: &Live, index: u64, client_port: u16) -> Relaying {
        live.lock().unwrap().insert(index, client_port);
        Relaying(live.clone(), index)
    }
}

impl Drop for Relaying {
    fn drop(&mut self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.1);
    }
}

/// A TCP forwarder that can be stopped (connections refused) and restarted.
struct Proxy {
    port: u16,
    target: u16,
    task: Option<tokio::task::JoinHandle<()>>,
    /// Connections being relayed.
    live: Live,
}

/// Relays one connection until the store has closed its side: when the
/// client goes (a killed run's socket closes or resets), the store still
/// gets the end of what was sent and is read to its end, so the relay
/// outlives every request the store is still acting on. A relay that
/// dropped the store's socket with the client's would leave moto storing
/// a request nobody waits for, landing after [`Proxy::settle`] said all
/// was quiet.
async fn relay(inbound: &mut tokio::net::TcpStream, outbound: tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut from_client, mut to_client) = inbound.split();
    let (mut from_store, mut to_store) = outbound.into_split();
    let up = async {
        let _ = tokio::io::copy(&mut from_client, &mut to_store).await;
        let _ = to_store.shutdown().await;
    };
    let down = async {
        let mut buf = vec![0u8; 64 * 1024];
        let mut client_gone = false;
        // Ends when the store closes, which it does once the client's side
        // has ended (and `down` aborts it; `settle` waits 30 s at most).
        while let Ok(n) = from_store.read(&mut buf).await
            && n > 0
        {
            if !client_gone && to_client.write_all(&buf[..n]).await.is_err() {
                client_gone = true;
            }
        }
        let _ = to_client.shutdown().await;
    };
    tokio::join!(up, down);
}

impl Proxy {
    fn start(rt: &tokio::runtime::Runtime, target: u16) -> Proxy {
        let mut p = Proxy {
            port: free_port(),
            target,
            task: None,
            live: Default::default(),
        };
        p.up(rt);
        p
    }

    fn up(&mut self, rt: &tokio::runtime::Runtime) {
        let (port, target) = (self.port, self.target);
        let listener = rt.block_on(tokio::net::TcpListener::bind(("127.0.0.1", port))).unwrap();
        let live = self.live.clone();
        self.task = Some(rt.spawn(async move {
            let mut conns = tokio::task::JoinSet::new();
            let mut accepted = 0u64;
            while let Ok((mut inbound, client)) = listener.accept().await {
                accepted += 1;
                let relaying = Relaying::new(&live, accepted, client.port());
                conns.spawn(async move {
                    let _relaying = relaying;
                    if let Ok(outbound) = tokio::net::TcpStream::connect(("127.0.0.1", target)).await {
                        relay(&mut inbound, outbound).await;
                    }
                });
            }
        }));
    }

    /// Waits (at most 30 s) until the store has answered every request a
    /// killed client had sent: a request the kernel had sent for a killed
    /// process still lands, and a successor started sooner could be passed
    /// by it (see *One writer per job* in docs/exactly-once.md); on a
    /// loaded machine, this proxy and moto can hold one for seconds.
    ///
    /// Exact, not timed: the kernel hands the proxy connections in the
    /// order they were made, so once a probe connection made now has been
    /// accepted, every connection of the killed client has been too; each
    /// lives until the store has closed its side ([`relay`]), which it does
    /// only after acting on what it read. So this waits for the probe to be
    /// accepted, then for every connection accepted before it to end.
    fn settle(&self) {
        let t = Instant::now();
        let deadline = Duration::from_secs(30);
        let probe = std::net::TcpStream::connect(("127.0.0.1", self.port)).expect("connect a probe to the proxy");
        let port = probe.local_addr().unwrap().port();
        let index = loop {
            // The latest with that port: an earlier connection's port may
            // be the kernel's to give again once it closed.
            let found = self.live.lock().unwrap().iter().rev().find(|(_, p)| **p == port).map(|(i, _)| *i);
            if let Some(i) = found {
                break i;
            }
            assert!(
                t.elapsed() < deadline,
                "the proxy did not accept a probe connection in {deadline:?}"
            );
            std::thread::sleep(Duration::from_millis(5));
        };
        drop(probe);
        while self.live.lock().unwrap().range(..index).next().is_some() {
            assert!(
                t.elapsed() < deadline,
                "the proxy still relays a connection of the killed run after {deadline:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Drops the listener and every open connection.
    fn down(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub(crate) struct S3 {
    pub(crate) sim: Sim,
    proxy: Proxy,
    pub(crate) bucket: String,
}

impl S3 {
    /// A simulator, and a bucket of its own named after `bucket` on the
    /// suite's moto, reached through a proxy of its own.
    pub(crate) fn start(bucket: &str) -> S3 {
        let mut opts = frozen();
        opts.latency_ms = 10;
        let sim = Sim::start(opts);
        let moto = Moto::shared();
        let proxy = Proxy::start(&sim.rt, moto.port);
        S3 {
            sim,
            proxy,
            bucket: moto.bucket(bucket),
        }
    }

    /// The endpoint runs and readers reach the store at (the proxy).
    pub(crate) fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.proxy.port)
    }

    pub(crate) fn cmd(&self, args: &[&str]) -> Command {
        self.cmd_on(bin(), args)
    }

    /// `args` on `c` (the CLI, or the crash-point tool), with this server's credentials.
    pub(crate) fn cmd_on(&self, mut c: Command, args: &[&str]) -> Command {
        c.args(args)
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", SECRET)
            .env("AWS_REGION", "us-east-1")
            .env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{}", self.proxy.port))
            .env("AWS_ALLOW_HTTP", "true");
        c
    }

    /// Waits until moto has acted on every request a killed run had sent
    /// (see [`Proxy::settle`]).
    pub(crate) fn settle(&self) {
        self.proxy.settle();
    }

    pub(crate) fn store(&self) -> object_store::aws::AmazonS3 {
        chainetl::util::tls::install();
        object_store::aws::AmazonS3Builder::new()
            .with_bucket_name(&self.bucket)
            .with_access_key_id("testing")
            .with_secret_access_key(SECRET)
            .with_region("us-east-1")
            .with_endpoint(format!("http://127.0.0.1:{}", self.proxy.port))
            .with_allow_http(true)
            .build()
            .unwrap()
    }

    /// Copies every object under `prefix` into `dir`; returns the keys.
    pub(crate) fn download(&self, prefix: &str, dir: &Path) -> Vec<String> {
        let store = self.store();
        self.sim.rt.block_on(async {
            let p = object_store::path::Path::from(prefix);
            let metas: Vec<_> = store.list(Some(&p)).try_collect().await.unwrap();
            let mut keys = Vec::new();
            for m in metas {
                let bytes = store.get(&m.location).await.unwrap().bytes().await.unwrap();
                let rel = m.location.as_ref().strip_prefix(&format!("{prefix}/")).unwrap().to_string();
                let local = dir.join(&rel);
                std::fs::create_dir_all(local.parent().unwrap()).unwrap();
                std::fs::write(&local, &bytes).unwrap();
                keys.push(rel);
            }
            keys
        })
    }
}

const FIRST: u64 = 20_000_000;
const LAST: u64 = 20_000_449;

pub(crate) fn spec(dir: &Path, bucket: &str, url: &str) -> String {
    write_spec(
        dir,
        "s3.toml",
        &format!(
            r#"name = "s3job"
[source]
base_url = "{url}"
page_size = 200
max_concurrency = 4
max_retries = 20
[output]
uri = "s3://{bucket}/exports/v1"
commit_pages = 2
commit_interval_secs = 1
[[export]]
dataset = "events"
chains = ["ethereum", "base"]
window = "{FIRST}..{LAST}"
chunk_blocks = 75
"#
        ),
    )
}

fn expected() -> Vec<Vec<String>> {
    let data = SimData::new(42, 30);
    let mut want = truth::events(&data, Chain::Ethereum, FIRST, LAST, &[], None);
    want.extend(truth::events(&data, Chain::Base, FIRST, LAST, &[], None));
    want.sort();
    want
}

/// Reads the bucket back: exactly the source rows, only complete Parquet
/// files and state documents, and the secret nowhere.
pub(crate) fn assert_bucket_exact(s3: &S3) {
    let local = tempfile::tempdir().unwrap();
    let keys = s3.download("exports/v1", local.path());
    for k in &keys {
        assert!(
            (k.starts_with("events/") && k.ends_with(".parquet")) || (k.starts_with("_chainetl/s3job/") && k.ends_with(".json")),
            "unexpected object {k}"
        );
        let body = std::fs::read(local.path().join(k)).unwrap();
        assert!(!String::from_utf8_lossy(&body).contains(SECRET), "the secret leaked into {k}");
    }
    let got = read_rows(&local.path().join("events"), truth::EVENT_COLS);
    let want = expected();
    assert_eq!(
        got.len(),
        want.len(),
        "rows in the bucket differ from the source; {}",
        which_files(local.path(), &keys, &want)
    );
    assert!(got == want);
}

/// What a failed [`assert_bucket_exact`] needs to be understood: each data
/// file's rows, how many of them another file also has or the source
/// lacks, and the units' checkpoints.
fn which_files(root: &Path, keys: &[String], want: &[Vec<String>]) -> String {
    let want: std::collections::HashSet<&Vec<String>> = want.iter().collect();
    let mut seen: std::collections::HashMap<Vec<String>, Vec<String>> = Default::default();
    let mut out = String::from("files:\n");
    for k in keys.iter().filter(|k| k.ends_with(".parquet")) {
        let one = tempfile::tempdir().unwrap();
        let dst = one.path().join(k);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(root.join(k), &dst).unwrap();
        let rows = read_rows(&one.path().join("events"), truth::EVENT_COLS);
        let foreign = rows.iter().filter(|r| !want.contains(r)).count();
        out += &format!("  {k}: {} rows, {foreign} not in the source\n", rows.len());
        for r in rows {
            seen.entry(r).or_default().push(k.clone());
        }
    }
    let mut twice: std::collections::BTreeMap<Vec<String>, usize> = Default::default();
    for files in seen.values().filter(|f| f.len() > 1) {
        *twice.entry(files.clone()).or_default() += 1;
    }
    out += "rows in more than one file:\n";
    for (files, n) in twice {
        out += &format!("  {n} rows in {files:?}\n");
    }
    for k in keys.iter().filter(|k| k.contains("/units/")) {
        out += &format!("{k}: {}\n", std::fs::read_to_string(root.join(k)).unwrap_or_default());
    }
    out
}

#[test]
fn s3_export_then_kill_9_resume_then_endpoint_outage() {
    let mut s3 = S3::start("bkt-main");
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), &s3.bucket, &s3.sim.url());

    // Killed at growing moments, resumed until done.
    let mut kills = 0;
    for attempt in 0..30u64 {
        let mut child = s3
            .cmd(&["run", &spec, "-q"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let wait = Duration::from_millis(300 + attempt * 150);
        let t = Instant::now();
        let done = loop {
            if let Some(st) = child.try_wait().unwrap() {
                assert!(st.success(), "attempt {attempt}: {st:?}");
                break true;
            }
            if t.elapsed() > wait {
                child.kill().unwrap();
                child.wait().unwrap();
                s3.proxy.settle();
                kills += 1;
                break false;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        if done {
            break;
        }
    }
    assert!(kills >= 2, "killed only {kills} times");
    assert_bucket_exact(&s3);

    // The endpoint goes away mid-run and comes back: the run retries or
    // fails with exit 1; re-runs end with exactly the source rows.
    let o = s3.cmd(&["run", &spec, "--fresh", "-q"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let child = s3
        .cmd(&["run", &spec, "--fresh"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    s3.proxy.down();
    std::thread::sleep(Duration::from_secs(2));
    s3.proxy.up(&s3.sim.rt);
    let o = child.wait_with_output().unwrap();
    assert!(matches!(o.status.code(), Some(0) | Some(1)), "{}", text(&o));
    assert!(!text(&o).contains(SECRET));
    eprintln!("OUTAGE RUN: {:?} {}", o.status, text(&o));
    for _ in 0..3 {
        let o = s3.cmd(&["run", &spec, "-q"]).output().unwrap();
        eprintln!("RERUN: {:?} {}", o.status, text(&o));
        if o.status.success() {
            break;
        }
    }
    assert_bucket_exact(&s3);
}

#[test]
fn an_unreachable_s3_endpoint_fails_clearly_within_the_timeout() {
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), "nobucket", "sim");
    let t = Instant::now();
    let o = bin()
        .args(["run", &spec, "-q"])
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"))
        .env("AWS_ALLOW_HTTP", "true")
        .output()
        .unwrap();
    assert!(t.elapsed() < Duration::from_secs(90), "took {:?}", t.elapsed());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let msg = text(&o);
    assert!(
        msg.contains("_chainetl/s3job") && msg.contains(&format!("127.0.0.1:{port}")),
        "{msg}"
    );
    assert!(!msg.contains(SECRET));
}

#[test]
fn three_shards_at_once_write_exactly_one_runs_rows() {
    let s3 = S3::start("bkt-shards");
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), &s3.bucket, &s3.sim.url());
    let children: Vec<Child> = (1..=3)
        .map(|k| {
            s3.cmd(&["run", &spec, "-q", "--shard", &format!("{k}/3")])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
    }
    assert_bucket_exact(&s3);
    let o = s3.cmd(&["status", &spec]).output().unwrap();
    let t = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(t.contains("7/7") && t.contains("complete"), "status shows every shard's units: {t}");
    // Each shard did its own share.
    let o = s3.cmd(&["run", &spec, "--shard", "2/3"]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains(" 0 requests"), "{}", text(&o));
}

#[test]
fn s3_jobs_sharing_a_prefix_and_two_runs_of_one_job_stay_apart() {
    let s3 = S3::start("bkt-seams");
    let dir = tempfile::tempdir().unwrap();
    let base = spec(dir.path(), &s3.bucket, &s3.sim.url());
    let named = |name: &str| {
        let p = dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &p,
            std::fs::read_to_string(&base)
                .unwrap()
                .replace("name = \"s3job\"", &format!("name = \"{name}\"")),
        )
        .unwrap();
        p.to_string_lossy().into_owned()
    };
    let (x, xy) = (named("x"), named("x-y"));
    for s in [&x, &xy] {
        let o = s3.cmd(&["run", s, "-q"]).output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
    }
    let objects = |job: &str| {
        let local = tempfile::tempdir().unwrap();
        let mut keys: Vec<String> = s3
            .download("exports/v1/events", local.path())
            .into_iter()
            .filter(|k| {
                let name = k.rsplit('/').next().unwrap();
                name.starts_with(&format!("{job}-e0-")) || name.starts_with(&format!("{job}-compacted-"))
            })
            .collect();
        keys.sort();
        keys
    };
    let before = objects("x-y");
    assert!(!before.is_empty());
    let o = s3.cmd(&["run", &x, "--fresh", "-q"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(objects("x-y"), before, "--fresh of job x deleted objects of job x-y");
    let o = s3.cmd(&["run", &xy]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains(" 0 requests"), "{}", text(&o));

    // Two runs of one job at once: one holds the lease, the other says who does.
    let children: Vec<Child> = (0..2)
        .map(|_| {
            s3.cmd(&["run", &x, "--fresh", "-q"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<_> = children.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    assert!(outs.iter().any(|o| o.status.success()), "{}", text(&outs[0]));
    for o in &outs {
        assert!(
            o.status.success() || (o.status.code() == Some(1) && text(o).contains("already running")),
            "{}",
            text(o)
        );
    }
    // A run killed while holding the lease: the next run on this host sees
    // its holder is gone and takes the lease over at once.
    let mut child = s3.cmd(&["run", &x, "--fresh", "-q"]).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(700));
    child.kill().unwrap();
    child.wait().unwrap();
    let t = Instant::now();
    let o = s3.cmd(&["run", &x, "-q"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "waited for the dead holder's lease to expire"
    );
    assert_eq!(objects("x-y"), before);
}

#[test]
fn kill_9_during_compaction_on_s3_then_rerun_is_exact() {
    let s3 = S3::start("bkt-compact");
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), &s3.bucket, &s3.sim.url());
    for point in ["compact-writing:3", "compact-swapping:1", "compact-deleting:5"] {
        let o = s3.cmd_on(crash_bin(point), &["run", &spec, "--fresh", "-q"]).output().unwrap();
        assert!(!o.status.success(), "{point}: the failpoint must crash the run");
        assert!(String::from_utf8_lossy(&o.stderr).contains("failpoint"), "{point}: {}", text(&o));
        // Verify and status name the interrupted compaction
        // (not damaged files), and verify exits 1 while it stands.
        let v = s3.cmd(&["verify", &spec]).output().unwrap();
        let t = text(&v);
        assert_eq!(v.status.code(), Some(1), "{point}: {t}");
        let kind = if point.starts_with("compact-writing") {
            "a compaction was interrupted"
        } else {
            "a compaction swap was interrupted"
        };
        assert!(t.contains(kind) && t.contains("chainetl compact"), "{point}: {t}");
        assert!(!t.contains("missing or changed"), "{point}: no file is damaged: {t}");
        let st = s3.cmd(&["status", &spec, "--format", "json"]).output().unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&st)));
        assert_eq!(doc["state"], "interrupted", "{point}: {doc}");
        let o = s3.cmd(&["run", &spec, "-q"]).output().unwrap();
        assert!(o.status.success(), "{point}: {}", text(&o));
        assert_bucket_exact(&s3);
        let local = tempfile::tempdir().unwrap();
        let mut per_partition: std::collections::BTreeMap<String, usize> = Default::default();
        for k in s3.download("exports/v1/events", local.path()) {
            let (dir, name) = k.rsplit_once('/').unwrap();
            assert!(name.starts_with("s3job-compacted-"), "{point}: {k} is not compacted");
            *per_partition.entry(dir.to_string()).or_default() += 1;
        }
        assert!(!per_partition.is_empty());
        assert!(per_partition.values().all(|n| *n == 1), "{point}: {per_partition:?}");
    }
}

/// Behind the fence, a unit's checkpoint is written on S3 only
/// if it is still the version its writer last saw. Two holders of one job
/// (two sinks, as two processes) on moto: the old one, whose lease passed
/// to the new one, cannot overwrite the new one's checkpoint, nor bring
/// back one the new holder folded away, and writes nothing after.
#[test]
fn a_stale_holders_checkpoint_write_is_refused_by_s3_itself() {
    use chainetl::sink::Sink;
    use chainetl::state::{StateStore, UnitState};
    let s3 = S3::start("bkt-fencing");
    let dir = tempfile::tempdir().unwrap();
    let path = spec(dir.path(), &s3.bucket, &s3.sim.url());
    let spec = chainetl::spec::Spec::load(&path).unwrap();
    let store: std::sync::Arc<dyn ObjectStore> = std::sync::Arc::new(s3.store());
    let holder = || {
        StateStore::new(
            std::sync::Arc::new(Sink::with_store(&spec.output, store.clone(), "exports/v1").unwrap()),
            "s3job",
        )
    };
    let (old, new) = (holder(), holder());
    let unit = |id: &str, next_seq: u64, done: bool| UnitState {
        version: chainetl::state::STATE_VERSION,
        unit: id.into(),
        next_seq,
        done,
        updated_at: "2025-06-01T00:00:00Z".into(),
        ..Default::default()
    };
    let (a, b) = ("e0-events-ethereum-b20000000-20000075", "e0-events-ethereum-b20000075-20000150");
    s3.sim.rt.block_on(async {
        old.save_unit(&unit(a, 1, false)).await.unwrap();
        old.save_unit(&unit(b, 1, false)).await.unwrap();
        // The new holder takes both over: rewrites a, finishes and folds b.
        new.load_units().await.unwrap();
        new.save_unit(&unit(a, 2, false)).await.unwrap();
        new.save_unit(&unit(b, 3, true)).await.unwrap();
        new.fold_units(|_| true).await.unwrap();
        // The old holder's next checkpoint of b would stand over the fold.
        let e = old.save_unit(&unit(b, 2, false)).await.unwrap_err().to_string();
        assert!(e.contains("another run removed this document") && e.contains(b), "{e}");
        // a's checkpoint, which the new holder rewrote, is refused too (and
        // from then on the old holder's fence is closed for good).
        assert!(old.save_unit(&unit(a, 9, false)).await.is_err());
        let units = new.load_units().await.unwrap();
        assert_eq!((units[a].next_seq, units[b].next_seq, units[b].done), (2, 3, true));
        // The new holder carries on.
        new.save_unit(&unit(a, 3, false)).await.unwrap();
        assert_eq!(holder().load_units().await.unwrap()[a].next_seq, 3);
    });
}

/// `verify` reads every object on S3 (streamed): a byte flipped
/// in a compacted object is named, and `--repair` restores exact rows.
#[test]
fn a_flipped_byte_on_s3_is_found_by_verify_and_repaired() {
    let s3 = S3::start("bkt-rot");
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), &s3.bucket, &s3.sim.url());
    let o = s3.cmd(&["run", &spec, "-q"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let store = s3.store();
    let key = s3.sim.rt.block_on(async {
        let p = object_store::path::Path::from("exports/v1/events");
        let metas: Vec<_> = store.list(Some(&p)).try_collect().await.unwrap();
        let m = metas.into_iter().find(|m| m.location.as_ref().ends_with(".parquet")).unwrap();
        let mut b = store.get(&m.location).await.unwrap().bytes().await.unwrap().to_vec();
        let mid = b.len() / 2;
        b[mid] ^= 0x01;
        store.put(&m.location, b.into()).await.unwrap();
        m.location.to_string()
    });
    let v = s3.cmd(&["verify", &spec]).output().unwrap();
    let t = text(&v);
    assert_eq!(v.status.code(), Some(1), "{t}");
    let name = key.rsplit('/').next().unwrap();
    assert!(t.contains(name) && t.contains("content is not what was"), "{t}");
    let r = s3.cmd(&["verify", &spec, "--repair"]).output().unwrap();
    assert!(r.status.success(), "{}", text(&r));
    assert_bucket_exact(&s3);
    let again = s3.cmd(&["verify", &spec]).output().unwrap();
    assert!(again.status.success(), "{}", text(&again));
}
