//! Storage conformance: the guarantees `sink` and `state` promise, each
//! checked by one function generic over the store ([`Backend`]) and run
//! on local disk (a tempdir) and on S3 (moto, started like in `s3.rs`):
//!
//! - a file appears whole or not at all, even when its writer is killed;
//! - a checkpoint write is atomic: readers see the old or the new document;
//! - put-if-absent: the first creator of a job, segment or lease wins and
//!   every other one gets its document, or Busy;
//! - listing shows exactly what was committed, across many objects (more
//!   than one S3 listing page) and nested prefixes;
//! - the storage interface itself (`chainetl::storage::Storage`) behaves
//!   the same on both: get of nothing is `None`, atomic put replaces,
//!   create-if-absent has one winner among concurrent creators, delete of
//!   nothing succeeds, a chunked read returns every byte.
//!
//! Crashes are real: the writer is this test binary started again as a
//! child process (`child_process`, an ignored test that does nothing
//! unless `CHAINETL_STORAGE_CHILD` says what to do), killed with SIGKILL.

use crate::common::{Moto, http_client};
use chainetl::decode::Decoded;
use chainetl::plan::Segment;
use chainetl::sink::{Sink, UnitWriter, file_name};
use chainetl::spec::{Compression, HashEncoding, Output};
use chainetl::state::lease::{Lease, LeaseError};
use chainetl::state::{JobState, Mark, STATE_VERSION, StateError, StateStore, UnitState};
use chainetl::vocab::chain::Chain;
use chainetl::vocab::window::Resolved;
use futures::{StreamExt, TryStreamExt};
use object_store::{ObjectStore, ObjectStoreExt};
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The raw blocks table, as state lists files by table.
const BLOCKS_TABLE: [&str; 1] = ["blocks"];

const SECRET: &str = "moto-secret-never-logged-7f3a";
const JOB: &str = "conf";
const UNIT: &str = "e0-blocks-ethereum-b100-200";
/// 2024-01-01, in days since 1970-01-01.
const JAN_1: i32 = 19723;

/// An output at `uri`, partitioned by chain and date.
fn output(uri: &str) -> Output {
    Output {
        uri: uri.into(),
        partition_by: vec!["chain".into(), "date".into()],
        compression: Compression::Zstd(1),
        row_group_rows: 10_000,
        file_rows: 1_000_000,
        file_bytes: 256 << 20,
        commit_interval: Duration::from_secs(1),
        commit_pages: 1,
        hash_encoding: HashEncoding::Hex,
        memory_budget: 64 << 20,
        compact: true,
        target_file_bytes: 256 << 20,
        bloom_filters: vec!["transaction_hash".into()],
        endpoint: None,
        region: None,
        allow_http: None,
        format: chainetl::spec::OutputFormat::Parquet,
        delta_retention: std::time::Duration::from_secs(7 * 24 * 3600),
        catalog: None,
        table_properties: Default::default(),
    }
}

/// Where one test's output is, as a tab-separated line a child process
/// can open it from.
#[derive(Debug, Clone)]
enum Place {
    /// A directory.
    Local(PathBuf),
    /// moto's port, the bucket, the key prefix.
    S3(u16, String, String),
}

impl Place {
    fn encode(&self) -> String {
        match self {
            Place::Local(p) => format!("local\t{}", p.display()),
            Place::S3(port, bucket, prefix) => format!("s3\t{port}\t{bucket}\t{prefix}"),
        }
    }

    fn decode(s: &str) -> Place {
        let parts: Vec<&str> = s.split('\t').collect();
        match parts.as_slice() {
            ["local", p] => Place::Local(PathBuf::from(p)),
            ["s3", port, bucket, prefix] => Place::S3(port.parse().unwrap(), bucket.to_string(), prefix.to_string()),
            _ => panic!("bad place {s}"),
        }
    }

    /// A sink on it: through `Sink::open` for local disk, through an S3
    /// client with the test credentials for S3.
    fn sink(&self) -> Arc<Sink> {
        match self {
            Place::Local(p) => Arc::new(Sink::open(&output(&p.to_string_lossy())).unwrap()),
            Place::S3(port, bucket, prefix) => {
                let store = s3_client(*port, bucket);
                Arc::new(Sink::with_store(&output(&format!("s3://{bucket}/{prefix}")), Arc::new(store), prefix).unwrap())
            }
        }
    }
}

fn s3_client(port: u16, bucket: &str) -> object_store::aws::AmazonS3 {
    chainetl::util::tls::install();
    object_store::aws::AmazonS3Builder::new()
        .with_bucket_name(bucket)
        .with_access_key_id("testing")
        .with_secret_access_key(SECRET)
        .with_region("us-east-1")
        .with_endpoint(format!("http://127.0.0.1:{port}"))
        .with_allow_http(true)
        .build()
        .unwrap()
}

/// A store the guarantees are checked on.
trait Backend {
    /// A fresh output of its own, named `name`.
    fn place(&self, name: &str) -> Place;

    /// Bytes written but not visible as a file: local staging files
    /// (`<name>#<n>`), S3 multipart uploads in progress. Relative to the
    /// output root.
    fn partial_uploads(&self, place: &Place) -> Vec<String>;
}

struct LocalDisk {
    dir: tempfile::TempDir,
}

impl LocalDisk {
    fn new() -> LocalDisk {
        LocalDisk {
            dir: tempfile::tempdir().unwrap(),
        }
    }
}

impl Backend for LocalDisk {
    fn place(&self, name: &str) -> Place {
        Place::Local(self.dir.path().join(name))
    }

    fn partial_uploads(&self, place: &Place) -> Vec<String> {
        let Place::Local(root) = place else { unreachable!() };
        files_on_disk(root).into_iter().filter(|f| f.contains('#')).collect()
    }
}

struct S3 {
    moto: &'static Moto,
    bucket: String,
}

impl S3 {
    /// A bucket of its own named after `bucket` on the suite's moto.
    fn start(bucket: &str) -> S3 {
        let moto = Moto::shared();
        S3 {
            moto,
            bucket: moto.bucket(bucket),
        }
    }
}

impl Backend for S3 {
    fn place(&self, name: &str) -> Place {
        Place::S3(self.moto.port, self.bucket.clone(), format!("t/{name}"))
    }

    fn partial_uploads(&self, place: &Place) -> Vec<String> {
        let Place::S3(port, bucket, prefix) = place else { unreachable!() };
        let url = format!("http://127.0.0.1:{port}/{bucket}?uploads");
        // On a thread of its own: the caller may be inside a runtime.
        let body = std::thread::scope(|s| s.spawn(|| http_get(&url)).join().unwrap());
        body.split("<Key>")
            .skip(1)
            .filter_map(|k| k.split_once("</Key>"))
            .filter_map(|(k, _)| k.strip_prefix(&format!("{prefix}/")).map(str::to_string))
            .collect()
    }
}

/// The body of a GET of `url`, on a runtime of its own.
fn http_get(url: &str) -> String {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async { http_client().get(url).send().await.unwrap().text().await.unwrap() })
}

/// Every file under `dir` on disk, relative, sorted.
fn files_on_disk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

/// Every object the store lists under the output, relative, sorted.
async fn listed(sink: &Sink) -> Vec<String> {
    let root = sink.storage().path("");
    let prefix = (!root.as_ref().is_empty()).then_some(&root);
    let metas: Vec<_> = sink.storage().store().list(prefix).try_collect().await.unwrap();
    let mut out: Vec<String> = metas.iter().map(|m| sink.storage().rel_of(&m.location)).collect();
    out.sort();
    out
}

fn schema() -> arrow_schema::SchemaRef {
    use arrow_schema::{DataType, Field, Schema};
    Arc::new(Schema::new(vec![
        Field::new("n", DataType::Int64, false),
        Field::new("payload", DataType::Utf8, false),
    ]))
}

/// `count` rows from `start` on `day`, with payloads that barely compress.
fn rows(start: i64, count: usize, day: i32, payload_bytes: usize) -> Decoded {
    use arrow_array::{Int64Array, StringArray};
    let n: Vec<i64> = (start..start + count as i64).collect();
    let payload: Vec<String> = n
        .iter()
        .map(|i| {
            let mut x = (*i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut s = String::with_capacity(payload_bytes + 16);
            while s.len() < payload_bytes {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                s.push_str(&format!("{x:016x}"));
            }
            s.truncate(payload_bytes);
            s
        })
        .collect();
    let batch =
        arrow_array::RecordBatch::try_new(schema(), vec![Arc::new(Int64Array::from(n)), Arc::new(StringArray::from(payload))]).unwrap();
    Decoded {
        batch,
        days: Some(vec![day; count]),
        dropped: 0,
    }
}

fn writer(sink: &Arc<Sink>, job: &str, unit: &str) -> UnitWriter {
    UnitWriter::new(
        sink.clone(),
        "blocks",
        Chain::Ethereum,
        &format!("{job}-{unit}"),
        schema(),
        0,
        1 << 20,
    )
}

/// Rows of the Parquet object at `rel`: the `n` column.
async fn read_n(sink: &Sink, rel: &str) -> Vec<i64> {
    use arrow_array::Int64Array;
    let bytes = sink
        .storage()
        .store()
        .get(&sink.storage().path(rel))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
        .unwrap()
        .build()
        .unwrap();
    let mut out = Vec::new();
    for b in reader {
        let b = b.unwrap();
        out.extend(b.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().iter().copied());
    }
    out
}

fn run<F: Future<Output = ()>>(f: F) {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// This test binary again, doing `action` on `place` until it is killed.
struct ChildProcess {
    child: Child,
    lines: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl ChildProcess {
    fn start(action: &str, place: &Place) -> ChildProcess {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "storage::child_process",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env("CHAINETL_STORAGE_CHILD", format!("{action}\t{}", place.encode()))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        ChildProcess { child, lines }
    }

    /// Waits for the child to print `marker` (the test harness may have
    /// started the line).
    fn wait_for(&mut self, marker: &str) {
        for line in self.lines.by_ref() {
            if line.unwrap().contains(marker) {
                return;
            }
        }
        panic!("the child process ended before printing {marker}");
    }

    /// SIGKILL: no destructor, no flush, no abort of uploads.
    fn kill(mut self) {
        self.child.kill().unwrap();
        let status = self.child.wait().unwrap();
        assert!(!status.success());
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the crash tests run in a child process: `write` (a unit's file,
/// left open midway), `checkpoint` (one unit's checkpoint, rewritten
/// without end), `lease` (the job's lease, held).
#[test]
#[ignore = "a child process of the storage crash tests"]
fn child_process() {
    let Ok(what) = std::env::var("CHAINETL_STORAGE_CHILD") else {
        return;
    };
    let (action, place) = what.split_once('\t').unwrap();
    let sink = Place::decode(place).sink();
    // Each arm waits to be killed holding what it made: an open file, a lease.
    let until_killed = || tokio::time::sleep(Duration::from_secs(600));
    run(async move {
        match action {
            "write" => {
                let mut w = writer(&sink, JOB, UNIT);
                // Past S3's 5 MiB first part, so bytes are uploaded before the file is complete.
                for i in 0..8 {
                    w.write(rows(i * 10_000, 10_000, JAN_1, 256)).await.unwrap();
                }
                println!("MIDWAY");
                until_killed().await;
                drop(w);
            }
            "checkpoint" => {
                let state = StateStore::new(sink, JOB);
                for n in 1.. {
                    state.save_unit(&big_checkpoint(n)).await.unwrap();
                    if n == 1 {
                        println!("SAVED");
                    }
                }
            }
            "lease" => {
                let lease = Lease::acquire(sink, JOB, "all").await.unwrap();
                println!("HELD");
                until_killed().await;
                drop(lease);
            }
            other => panic!("unknown action {other}"),
        }
    });
}

// (a) A file appears whole or not at all.

/// While a unit's file is written, and after its writer is killed midway,
/// no listing shows it under its final name, though its bytes are in the
/// store; a finished file is listed with every row.
async fn a_file_appears_whole_or_not_at_all(b: &impl Backend) {
    let place = b.place("whole");
    let sink = place.sink();
    let name = format!("blocks/chain=ethereum/date=2024-01-01/{}", file_name(&format!("{JOB}-{UNIT}"), 0));

    let mut child = ChildProcess::start("write", &place);
    child.wait_for("MIDWAY");
    let partial = b.partial_uploads(&place);
    assert!(
        partial.iter().any(|p| p.starts_with(&name)),
        "the test never got bytes of an unfinished file into the store: {partial:?}"
    );
    assert_eq!(listed(&sink).await, Vec::<String>::new(), "an unfinished file is listed");
    child.kill();
    assert_eq!(listed(&sink).await, Vec::<String>::new(), "a killed writer's file is listed");
    if let Place::Local(root) = &place {
        let globbed: Vec<String> = files_on_disk(root).into_iter().filter(|f| f.ends_with(".parquet")).collect();
        assert_eq!(globbed, Vec::<String>::new(), "`*.parquet` finds a partial file");
    }

    // The same file written to the end: listed, whole.
    let mut w = writer(&sink, JOB, UNIT);
    for i in 0..8 {
        w.write(rows(i * 10_000, 10_000, JAN_1, 256)).await.unwrap();
        assert_eq!(listed(&sink).await, Vec::<String>::new());
    }
    let files = w.finish().await.unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!((files[0].rel.as_str(), files[0].rows), (name.as_str(), 80_000));
    assert_eq!(listed(&sink).await, vec![name.clone()]);
    assert_eq!(read_n(&sink, &name).await, (0..80_000).collect::<Vec<i64>>());
}

#[test]
fn local_disk_a_file_appears_whole_or_not_at_all() {
    let b = LocalDisk::new();
    run(a_file_appears_whole_or_not_at_all(&b));
}

#[test]
fn s3_a_file_appears_whole_or_not_at_all() {
    let b = S3::start("conf-whole");
    run(a_file_appears_whole_or_not_at_all(&b));
}

// (b) A checkpoint write is atomic.

/// Checkpoint `n`: every field says `n`, and it is large enough (hundreds
/// of KiB) that a write in place would be seen half done.
fn big_checkpoint(n: u64) -> UnitState {
    UnitState {
        version: STATE_VERSION,
        unit: UNIT.into(),
        cursor: Some(format!("cursor-{n}")),
        next_seq: n,
        rows: n,
        files: n,
        updated_at: format!("{n}"),
        committed: (0..3000)
            .map(|i| chainetl::state::CommittedFile {
                path: format!("blocks/{JOB}-{UNIT}-{i:06}.parquet"),
                rows: n,
                bytes: n,
                checksum: Some(format!("xxh64:{n:016x}")),
            })
            .collect(),
        ..Default::default()
    }
}

/// Whether `st` is one whole checkpoint as [`big_checkpoint`] writes it.
fn whole(st: &UnitState) -> bool {
    let n = st.next_seq;
    st.cursor.as_deref() == Some(format!("cursor-{n}").as_str())
        && st.rows == n
        && st.committed.len() == 3000
        && st.committed.iter().all(|f| f.rows == n && f.bytes == n)
}

/// Readers racing a writer, and a writer killed mid-write, only ever see
/// a whole checkpoint, the old one or the new one.
async fn a_checkpoint_write_is_atomic(b: &impl Backend) {
    let place = b.place("atomic");
    let state = StateStore::new(place.sink(), JOB);
    state.save_unit(&big_checkpoint(1)).await.unwrap();

    let writer = {
        let state = state.clone();
        tokio::spawn(async move {
            for n in 2..=40 {
                state.save_unit(&big_checkpoint(n)).await.unwrap();
            }
        })
    };
    let mut seen = BTreeSet::new();
    while !writer.is_finished() {
        let units = state.load_units().await.expect("a reader saw a torn checkpoint");
        let st = &units[UNIT];
        assert!(whole(st), "a reader saw a mix of two checkpoints: next_seq {}", st.next_seq);
        seen.insert(st.next_seq);
    }
    writer.await.unwrap();
    assert_eq!(state.load_units().await.unwrap()[UNIT].next_seq, 40);
    assert!(seen.len() >= 2, "the readers never raced the writer: saw only {seen:?}");

    // A writer killed at an arbitrary moment.
    let mut child = ChildProcess::start("checkpoint", &place);
    child.wait_for("SAVED");
    for _ in 0..20 {
        let st = &state.load_units().await.expect("a reader saw a torn checkpoint")[UNIT];
        assert!(whole(st));
    }
    child.kill();
    let after = state.load_units().await.expect("a killed writer left a torn checkpoint");
    assert_eq!(after.len(), 1, "temporary files are not checkpoints: {:?}", after.keys());
    assert!(whole(&after[UNIT]));
}

#[test]
fn local_disk_a_checkpoint_write_is_atomic() {
    let b = LocalDisk::new();
    run(a_checkpoint_write_is_atomic(&b));
}

#[test]
fn s3_a_checkpoint_write_is_atomic() {
    let b = S3::start("conf-atomic");
    run(a_checkpoint_write_is_atomic(&b));
}

// (c) Put-if-absent.

fn job_state(spec_hash: String) -> JobState {
    JobState {
        version: STATE_VERSION,
        name: JOB.into(),
        spec_hash,
        windows: vec![Some(Resolved::Blocks { first: 100, last: 199 })],
        page_size: Some(100),
        cut_rule: None,
        created_at: "2024-01-01T00:00:00Z".into(),
        chainetl_version: "test".into(),
        identity: None,
        seq_floor: 0,
        generation_floor: 0,
    }
}

/// Eight creators at once, each with its own client: exactly one job
/// document and one segment win, every creator gets the winner; a lease
/// held by another process is Busy until that process dies.
async fn put_if_absent(b: &impl Backend) {
    let place = b.place("create");
    let creators: Vec<StateStore> = (0..8).map(|_| StateStore::new(place.sink(), JOB)).collect();

    let jobs = futures::future::join_all(
        creators
            .iter()
            .enumerate()
            .map(|(i, s)| async move { s.create_job(&job_state(format!("creator-{i}"))).await.unwrap().spec_hash }),
    )
    .await;
    let winner = &jobs[0];
    assert!(jobs.iter().all(|j| j == winner), "creators disagree: {jobs:?}");
    assert_eq!(&creators[3].load_job().await.unwrap().unwrap().spec_hash, winner);

    let segments = futures::future::join_all(creators.iter().enumerate().map(|(i, s)| async move {
        let seg = Segment {
            export: 0,
            chain: Some(Chain::Base),
            window: Resolved::Blocks {
                first: 100,
                last: 200 + i as u64,
            },
        };
        s.create_segment(&seg).await.unwrap()
    }))
    .await;
    assert!(segments.iter().all(|s| *s == segments[0]), "creators disagree: {segments:?}");
    assert_eq!(creators[5].load_segments().await.unwrap(), vec![segments[0].clone()]);

    // The lease: held by another process, Busy; once it is dead, ours.
    let sink = place.sink();
    let mut holder = ChildProcess::start("lease", &place);
    holder.wait_for("HELD");
    match Lease::acquire(sink.clone(), JOB, "all").await {
        Err(LeaseError::Busy { holder, .. }) => assert!(holder.contains("pid "), "{holder}"),
        other => panic!("a second run got the lease: {other:?}"),
    }
    match Lease::acquire(sink.clone(), JOB, "shard-1-of-2").await {
        Err(LeaseError::Busy { .. }) => {}
        other => panic!("an overlapping shard got the lease: {other:?}"),
    }
    holder.kill();
    let t = Instant::now();
    let lease = Lease::acquire(sink.clone(), JOB, "all").await.expect("the dead holder's lease");
    assert!(t.elapsed() < Duration::from_secs(10), "waited for the lease to expire");
    lease.release().await;
}

#[test]
fn local_disk_put_if_absent() {
    let b = LocalDisk::new();
    run(put_if_absent(&b));
}

#[test]
fn s3_put_if_absent() {
    let b = S3::start("conf-create");
    run(put_if_absent(&b));
}

// (d) The storage interface's primitives, on both backends alike.

/// Every operation of `Storage` that `sink` and `state` build on.
async fn storage_primitives(b: &impl Backend) {
    let place = b.place("primitives");
    let storage = place.sink().storage().clone();
    let rel = "_chainetl/p/docs/a.json";
    assert!(storage.get(rel).await.unwrap().is_none(), "nothing there yet");
    storage.delete(rel).await.expect("deleting nothing succeeds");

    storage.put_atomic(rel, b"one".to_vec()).await.unwrap();
    storage.put_atomic(rel, b"two".to_vec()).await.unwrap();
    assert_eq!(storage.get(rel).await.unwrap().unwrap().bytes.as_ref(), b"two");

    // Eight creators, each with its own client: one wins, the others find it.
    let creators: Vec<_> = (0..8).map(|_| place.sink().storage().clone()).collect();
    let won = futures::future::join_all(creators.iter().enumerate().map(|(i, s)| async move {
        s.create_if_absent("_chainetl/p/docs/b.json", format!("creator-{i}").into_bytes())
            .await
            .unwrap()
    }))
    .await;
    assert_eq!(won.iter().filter(|w| **w).count(), 1, "{won:?}");
    let winner = won.iter().position(|w| *w).unwrap();
    let there = storage.get("_chainetl/p/docs/b.json").await.unwrap().unwrap();
    assert_eq!(there.bytes.as_ref(), format!("creator-{winner}").as_bytes());

    // A chunked read sees every byte of an object larger than one chunk.
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    storage.put_atomic("_chainetl/p/big.bin", big.clone()).await.unwrap();
    let mut read = Vec::new();
    let n = storage
        .read_chunks("_chainetl/p/big.bin", |c| read.extend_from_slice(c))
        .await
        .unwrap();
    assert_eq!((n as usize, read == big), (big.len(), true));
    let e = storage.read_chunks("_chainetl/p/none.bin", |_| {}).await.unwrap_err();
    assert!(e.is_not_found(), "{e:?}");

    let listed: BTreeSet<String> = storage
        .list("_chainetl/p")
        .await
        .unwrap()
        .iter()
        .map(|m| storage.rel_of(&m.location))
        .collect();
    let want: BTreeSet<String> = ["_chainetl/p/docs/a.json", "_chainetl/p/docs/b.json", "_chainetl/p/big.bin"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(listed, want, "no temporary or staging name is listed");
    storage.delete(rel).await.unwrap();
    assert!(storage.get(rel).await.unwrap().is_none());
}

#[test]
fn local_disk_storage_primitives() {
    let b = LocalDisk::new();
    run(storage_primitives(&b));
}

#[test]
fn s3_storage_primitives() {
    let b = S3::start("conf-primitives");
    run(storage_primitives(&b));
}

// (e) Listing.

/// More unit checkpoints than one S3 listing page holds.
const MANY: usize = 1100;

fn unit_id(i: usize) -> String {
    format!("e0-blocks-ethereum-b{}-{}", i * 100, i * 100 + 100)
}

/// Commits checkpoints of units `0..MANY` (unit `i` at `next_seq` `i`),
/// many at once.
async fn commit_many_checkpoints(state: &StateStore) {
    futures::stream::iter(0..MANY)
        .map(|i| {
            let state = state.clone();
            async move {
                let st = UnitState {
                    version: STATE_VERSION,
                    unit: unit_id(i),
                    next_seq: i as u64,
                    ..Default::default()
                };
                state.save_unit(&st).await
            }
        })
        .buffer_unordered(32)
        .try_collect::<Vec<()>>()
        .await
        .unwrap();
}

/// Commits data files of units 0, 1 and 2: two commits each, over three
/// days. Returns each committed file's path and unit.
async fn commit_data_files(sink: &Arc<Sink>) -> BTreeMap<String, String> {
    let mut committed = BTreeMap::new();
    for u in 0..3 {
        let mut w = writer(sink, JOB, &unit_id(u));
        for commit in 0..2 {
            for day in 0..3 {
                w.write(rows(0, 10, JAN_1 + day, 8)).await.unwrap();
            }
            for f in w.finish().await.unwrap() {
                committed.insert(f.rel, unit_id(u));
            }
            assert_eq!(w.next_seq, 3 * (commit + 1));
        }
    }
    committed
}

/// Listing finds exactly what was committed: every checkpoint of many,
/// marks and segments in their own directories, data files in nested
/// partitions; not another job's, not a file still being written, not
/// what was deleted.
async fn listing_shows_exactly_what_was_committed(b: &impl Backend) {
    let place = b.place("list");
    let sink = place.sink();
    let state = StateStore::new(sink.clone(), JOB);
    let other = StateStore::new(sink.clone(), &format!("{JOB}-x"));

    commit_many_checkpoints(&state).await;
    let theirs = UnitState {
        unit: unit_id(0),
        version: STATE_VERSION,
        ..Default::default()
    };
    other.save_unit(&theirs).await.unwrap();
    let units = state.load_units().await.unwrap();
    assert_eq!(units.len(), MANY);
    assert!((0..MANY).all(|i| units[&unit_id(i)].next_seq == i as u64));

    for chain in [Chain::Ethereum, Chain::Base, Chain::Polygon] {
        let mark = Mark {
            version: STATE_VERSION,
            export: 0,
            chain,
            next: 7,
            tail: vec![],
            repair_from: None,
            reorgs: 0,
            replacing: vec![],
            seq_floor: 0,
            updated_at: String::new(),
        };
        state.save_mark(&mark).await.unwrap();
    }
    let chains: BTreeSet<String> = state.load_marks().await.unwrap().iter().map(|m| m.chain.to_string()).collect();
    assert_eq!(chains.len(), 3);
    for i in 0..12 {
        let window = Resolved::Blocks {
            first: i * 10,
            last: i * 10 + 9,
        };
        let segment = Segment {
            export: 0,
            chain: None,
            window,
        };
        state.create_segment(&segment).await.unwrap();
    }
    assert_eq!(state.load_segments().await.unwrap().len(), 12);

    let committed = commit_data_files(&sink).await;
    let mut theirs = writer(&sink, &format!("{JOB}-x"), &unit_id(0));
    theirs.write(rows(0, 10, JAN_1, 8)).await.unwrap();
    theirs.finish().await.unwrap();
    let mut unfinished = writer(&sink, JOB, &unit_id(3));
    unfinished.write(rows(0, 10, JAN_1, 8)).await.unwrap();

    let files: BTreeMap<String, String> = state
        .unit_files(&BLOCKS_TABLE.iter().map(|t| t.to_string()).collect(), "")
        .await
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(files.len(), 18);
    assert_eq!(files, committed);
    let one: Vec<(String, String)> = state
        .unit_files(&BLOCKS_TABLE.iter().map(|t| t.to_string()).collect(), &unit_id(1))
        .await
        .unwrap();
    assert_eq!(one.len(), 6);
    assert!(one.iter().all(|(_, u)| *u == unit_id(1)));

    // What is deleted is no longer listed.
    let half: Vec<String> = (0..MANY / 2).map(unit_id).collect();
    state.delete_units(&half).await.unwrap();
    let rel = committed.keys().next().unwrap().clone();
    state.delete_data(&rel).await.unwrap();
    let units = state.load_units().await.unwrap();
    assert_eq!(units.len(), MANY - MANY / 2);
    assert!(half.iter().all(|u| !units.contains_key(u)));
    let files = state
        .unit_files(&BLOCKS_TABLE.iter().map(|t| t.to_string()).collect(), "")
        .await
        .unwrap();
    assert_eq!(files.len(), 17);
    assert!(files.iter().all(|(f, _)| *f != rel));
    unfinished.abort().await;
}

#[test]
fn local_disk_listing_shows_exactly_what_was_committed() {
    let b = LocalDisk::new();
    run(listing_shows_exactly_what_was_committed(&b));
}

#[test]
fn s3_listing_shows_exactly_what_was_committed() {
    let b = S3::start("conf-list");
    run(listing_shows_exactly_what_was_committed(&b));
}

/// A state document that cannot be read is an error naming it, on every
/// store (never taken for an absent document).
#[test]
fn s3_a_corrupt_checkpoint_is_an_error_naming_it() {
    let b = S3::start("conf-corrupt");
    run(async move {
        let place = b.place("corrupt");
        let sink = place.sink();
        let state = StateStore::new(sink.clone(), JOB);
        let rel = format!("_chainetl/{JOB}/units/{UNIT}.json");
        sink.storage()
            .store()
            .put(&sink.storage().path(&rel), b"{\"version\"".to_vec().into())
            .await
            .unwrap();
        match state.load_units().await {
            Err(e @ StateError::Corrupt { .. }) => {
                assert!(e.to_string().contains(&format!("s3://{}/t/corrupt/{rel}", b.bucket)), "{e}")
            }
            other => panic!("{other:?}"),
        }
    });
}
