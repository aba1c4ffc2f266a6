//! Format conformance: what readers of a table format are promised, each
//! guarantee checked by one function generic over the format
//! ([`TableFormat`]) and the store ([`Backend`]), and run for every format
//! on local disk (a tempdir) and on S3 (moto, started as in `s3.rs`),
//! through the CLI on the simulator:
//!
//! - every committed row is seen exactly once by the format's reader, with
//!   the simulator's values: after a run, after a re-run (which sends no
//!   request) and after compaction;
//! - a replace (compaction; `verify --repair` of a damaged file) never
//!   shows old and new rows together where the format promises it: a
//!   reader of the table while a compaction is frozen at each of its steps,
//!   and every snapshot the format keeps of the repair. Before the swap
//!   every format shows the table as it was (the new files are hidden);
//!   at the format's own swap steps only a format whose replace is atomic
//!   promises each row once, and the others once the replace is done;
//! - kill -9 at each step of publish (a run) and of replace (a
//!   compaction): readers never see a row twice after a killed run, and
//!   a re-run ends with every row once and `verify` clean; kill -9 at each
//!   step of a repair's publish: `verify` names the repair while it
//!   stands, and `verify --repair` finishes it;
//! - `verify` finds a missing file and a damaged (bit-flipped) one, exits
//!   1 naming both, and `verify --repair` restores every row;
//! - a change of a finished job (re-partitioned, re-encoded, a column left
//!   out, compacted after; converted into every other format and back) is
//!   made from its files with no request, through kill -9 at its steps,
//!   and reads exactly the simulator's rows after;
//! - a second job sharing the output (same uri, format and layout, another
//!   name and window), the two at work at once (running, one compacting
//!   while the other runs, both compacting): each job's rows are seen
//!   once, no row twice at any version of the two compactions, and
//!   `verify` of each passes.
//!
//! A reader is the format's own: pyarrow over the hive folder for
//! `parquet`, deltalake over the log for `delta` (what the log says, not
//! the files on storage, which keeps replaced files for older versions).
//! Crash points are the tests' tool's (`crate::common::crash_bin`);
//! `name:1:stop` freezes the process there (SIGSTOP) for a reader to look.
//!
//! A new format joins by implementing [`TableFormat`] (its spec name, its
//! reader, whether its replace is atomic, the crash points of its own
//! steps) and adding itself to the list in [`conformance!`].

use crate::common::*;
use crate::truth;
use chainetl::sim::data::SimData;
use chainetl::vocab::chain::Chain;
use futures::TryStreamExt;
use object_store::{ObjectStore, ObjectStoreExt};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A table format as the suite needs to know it; one implementation per
/// value of `output.format`.
pub(crate) trait TableFormat {
    /// The spec's `output.format`.
    fn name(&self) -> &'static str;

    /// Python source defining `snapshots(uri, since, columns)`: the columns
    /// `columns` of the table at `uri`
    /// (a local path or `s3://bucket/key`) as this format's readers read
    /// it, a list of `(version, pyarrow.Table)`. A format that keeps
    /// versions returns every version from `since` on (`since < 0`: the
    /// latest only); one that keeps none returns what a reader reads now,
    /// as version 0; `(0, None)` where there is no table yet. It may call
    /// the driver's `s3()` (storage options for deltalake-style readers)
    /// and `filesystem(uri)` (a pyarrow filesystem and the path in it).
    fn reader(&self) -> &'static str;

    /// Whether a reader sees a replace (compaction, a repair) whole: the
    /// old rows or the new, never both, never neither.
    fn atomic_replace(&self) -> bool;

    /// Crash points of the steps at which a run makes a unit's durable
    /// files visible in this format, besides the steps every format has
    /// ([`PUBLISH`]).
    fn publish_steps(&self) -> &'static [&'static str];

    /// Crash points of a compaction's swap in this format (after the new
    /// files are durable and the swap recorded, [`BEFORE_SWAP`]).
    fn swap_steps(&self) -> &'static [&'static str];
}

/// A hive-partitioned folder of Parquet files. A file is visible once it
/// is complete, so a unit's files need no step of their own; but the
/// format cannot promise an atomic replace: a reader listing the folder
/// while a compaction deletes the files it merged sees their rows twice
/// (or, in a repair, missing). What it does promise: before the swap the
/// folder is as it was, and once the replace is done each row is there
/// once (see *What readers see meanwhile* in docs/changing-a-job.md).
pub(crate) struct Parquet;

impl TableFormat for Parquet {
    fn name(&self) -> &'static str {
        "parquet"
    }

    /// The folder's complete files (`.parquet`, no part of the path
    /// hidden with `_` or `.`), hive partitions from their paths, as
    /// Spark and DuckDB's `read_parquet('…/**/*.parquet')` list them.
    fn reader(&self) -> &'static str {
        r#"
def snapshots(uri, since, columns):
    import pyarrow.dataset as ds
    from pyarrow import fs as pafs
    fs, base = filesystem(uri)
    files = [
        f.path for f in fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
        if f.type == pafs.FileType.File and f.path.endswith(".parquet")
        and not any(p.startswith(("_", ".")) for p in f.path[len(base):].split("/"))
    ]
    if not files:
        return [(0, None)]
    part = ds.partitioning(flavor="hive")
    return [(0, ds.dataset(files, filesystem=fs, format="parquet", partitioning=part, partition_base_dir=base).to_table(columns=columns))]
"#
    }

    fn atomic_replace(&self) -> bool {
        false
    }

    fn publish_steps(&self) -> &'static [&'static str] {
        &[]
    }

    /// The merged files are published, then each merged input deleted.
    fn swap_steps(&self) -> &'static [&'static str] {
        &["compact-deleting"]
    }
}

/// A Delta Lake table: readers read the files the log's version names,
/// so a unit's files join in one commit and a replace is one commit.
pub(crate) struct Delta;

impl TableFormat for Delta {
    fn name(&self) -> &'static str {
        "delta"
    }

    /// deltalake (delta-rs), a version at a time (time travel). The log is
    /// read once for the latest version, and once from `since` on: each
    /// later version is the one before brought forward (`load_as_version`).
    fn reader(&self) -> &'static str {
        r#"
def snapshots(uri, since, columns):
    import deltalake
    opts = s3() if uri.startswith("s3://") else None
    try:
        table = deltalake.DeltaTable(uri, storage_options=opts)
    except deltalake.exceptions.TableNotFoundError:
        return [(0, None)]
    latest = table.version()
    if since < 0 or since == latest:
        return [(latest, table.to_pyarrow_table(columns=columns))]
    if since > latest:
        return []
    table = deltalake.DeltaTable(uri, version=since, storage_options=opts)
    out = []
    for v in range(since, latest + 1):
        if v > since:
            table.load_as_version(v)
        out.append((v, table.to_pyarrow_table(columns=columns)))
    return out
"#
    }

    fn atomic_replace(&self) -> bool {
        true
    }

    fn publish_steps(&self) -> &'static [&'static str] {
        &["before-delta-commit", "after-delta-commit"]
    }

    /// The merged files published (renamed from hidden), then the one
    /// commit removing the inputs and adding them.
    fn swap_steps(&self) -> &'static [&'static str] {
        &["compact-published", "compact-committed"]
    }
}

/// An Apache Iceberg table: readers read the files the current metadata
/// version's snapshot names, so a unit's files join in one snapshot and a
/// replace is one snapshot.
pub(crate) struct Iceberg;

impl TableFormat for Iceberg {
    fn name(&self) -> &'static str {
        "iceberg"
    }

    /// pyiceberg's `StaticTable` over the table's folder (its version
    /// hint), a snapshot at a time by sequence number (time travel).
    fn reader(&self) -> &'static str {
        r#"
def snapshots(uri, since, columns):
    from pyiceberg.table import StaticTable
    from pyarrow import fs as pafs
    fs, base = filesystem(uri)
    if fs.get_file_info(base + "/metadata/version-hint.text").type == pafs.FileType.NotFound:
        return [(0, None)]
    props = {}
    if uri.startswith("s3://"):
        o = s3()
        props = {"s3.endpoint": o["AWS_ENDPOINT_URL"], "s3.access-key-id": o["AWS_ACCESS_KEY_ID"],
                 "s3.secret-access-key": o["AWS_SECRET_ACCESS_KEY"], "s3.region": o["AWS_REGION"]}
    t = StaticTable.from_metadata(uri, properties=props)
    current = t.metadata.current_snapshot()
    if current is None:
        return [(0, None)]
    first = current.sequence_number if since < 0 else since
    snaps = sorted((s for s in t.metadata.snapshots if s.sequence_number >= first), key=lambda s: s.sequence_number)
    from table_rows import iceberg_snapshots
    return [(s.sequence_number, a) for s, a in iceberg_snapshots(t, snaps, tuple(columns))]
"#
    }

    fn atomic_replace(&self) -> bool {
        true
    }

    fn publish_steps(&self) -> &'static [&'static str] {
        &["before-delta-commit", "after-delta-commit"]
    }

    /// The merged files published (renamed from hidden), then the one
    /// snapshot replacing the inputs with them.
    fn swap_steps(&self) -> &'static [&'static str] {
        &["compact-published", "compact-committed"]
    }
}

/// Steps of publishing a unit's files every format has: within a file
/// (not yet complete), and after its files are durable, before its
/// checkpoint. (A checkpoint's own atomicity is `storage.rs`'s.)
const PUBLISH: &[&str] = &["during-file-write", "after-file-write"];

/// Steps of a compaction before its swap: recorded, writing the merged
/// files, written (hidden), swap recorded. Every format shows the table as
/// it was at each.
const BEFORE_SWAP: &[&str] = &["compact-recorded", "compact-writing", "compact-written", "compact-swapping"];

/// The driver around a format's reader: prints `RESULT` and, per
/// snapshot, its version and its rows sorted, each the text of its
/// [`COLUMNS`] joined by tabs (NULL for null, 0x-hex for bytes, else
/// Arrow's text of the value, which for integers and strings is Python's;
/// a column of any other type fails the read). Made by Arrow's kernels a
/// column at a time: a snapshot is thousands of rows, and one Python
/// object a value cost the driver most of its time.
const DRIVER: &str = r#"
import json, os, sys
env = os.environ

def s3():
    return {"AWS_ENDPOINT_URL": env["AWS_ENDPOINT_URL"], "AWS_ACCESS_KEY_ID": env["AWS_ACCESS_KEY_ID"],
            "AWS_SECRET_ACCESS_KEY": env["AWS_SECRET_ACCESS_KEY"], "AWS_REGION": env["AWS_REGION"],
            "AWS_ALLOW_HTTP": "true"}

def filesystem(uri):
    from pyarrow import fs
    if uri.startswith("s3://"):
        o = s3()
        return fs.S3FileSystem(access_key=o["AWS_ACCESS_KEY_ID"], secret_key=o["AWS_SECRET_ACCESS_KEY"],
                               region=o["AWS_REGION"], endpoint_override=o["AWS_ENDPOINT_URL"]), uri[len("s3://"):]
    return fs.LocalFileSystem(), os.path.abspath(uri)

def text(col):
    import pyarrow as pa
    import pyarrow.compute as pc
    t = col.type
    if pa.types.is_dictionary(t):
        col, t = col.cast(t.value_type), t.value_type
    if any(f(t) for f in (pa.types.is_binary, pa.types.is_large_binary, pa.types.is_binary_view, pa.types.is_fixed_size_binary)):
        return pa.array(["NULL" if v is None else "0x" + v.hex() for v in col.to_pylist()], pa.string())
    # Arrow's text is Python's only for these (not for floats, booleans, times).
    if not any(f(t) for f in (pa.types.is_integer, pa.types.is_string, pa.types.is_large_string, pa.types.is_string_view, pa.types.is_null)):
        raise TypeError(f"a column of {t}: the driver has no text for it")
    return pc.fill_null(pc.cast(col, pa.string()), "NULL")

def rows(t, columns):
    import pyarrow.compute as pc
    if t is None or t.num_rows == 0:
        return []
    joined = pc.binary_join_element_wise(*[text(t.column(c)) for c in columns], "\t")
    return pc.take(joined, pc.sort_indices(joined)).to_pylist()

def main():
    uri, since, columns = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
    out = [{"version": version, "rows": rows(t, columns)} for version, t in snapshots(uri, since, columns)]
    print("RESULT " + json.dumps(out))
    sys.stdout.flush()
"#;

/// The columns compared: every value of an event but its timestamp (whose
/// text differs between readers).
const COLUMNS: &[&str] = &[
    "chain",
    "block_number",
    "log_index",
    "contract_address",
    "data",
    "topic0",
    "topic1",
    "topic2",
    "topic3",
    "transaction_hash",
    "transaction_index",
];

/// A store the guarantees are checked on, with a simulator to export from.
pub(crate) trait Backend {
    /// The simulator's URL.
    fn sim_url(&self) -> String;

    /// The output URI of a fresh output named `name`.
    fn uri(&self, name: &str) -> String;

    /// `args` on `c` (the CLI, the crash tool, a reader), with what it
    /// needs to reach this store.
    fn on(&self, c: Command, args: &[&str]) -> Command;

    /// After a process was killed: waits until the store acted on every
    /// request it had sent.
    fn settle(&self) {}

    /// The data files under `table` of the output `uri` (paths relative
    /// to the table, the Delta log left out), sorted.
    fn data_files(&self, uri: &str, table: &str) -> Vec<String>;

    /// Deletes the file `rel` of `table`.
    fn delete(&self, uri: &str, table: &str, rel: &str);

    /// Flips one bit in the middle of the file `rel` of `table`, its size
    /// unchanged.
    fn flip_bit(&self, uri: &str, table: &str, rel: &str);
}

/// A tempdir.
pub(crate) struct LocalDisk {
    sim: Sim,
    dir: tempfile::TempDir,
}

impl LocalDisk {
    pub(crate) fn start() -> LocalDisk {
        LocalDisk {
            sim: Sim::start(frozen()),
            dir: tempfile::tempdir().unwrap(),
        }
    }
}

impl Backend for LocalDisk {
    fn sim_url(&self) -> String {
        self.sim.url()
    }

    fn uri(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    fn on(&self, mut c: Command, args: &[&str]) -> Command {
        c.args(args).env_remove("RUST_LOG");
        c
    }

    fn data_files(&self, uri: &str, table: &str) -> Vec<String> {
        let root = Path::new(uri).join(table);
        parquet_files(&root)
            .into_iter()
            .map(|p| p.strip_prefix(&root).unwrap().to_string_lossy().into_owned())
            .filter(|p| !p.starts_with("_delta_log"))
            .collect()
    }

    fn delete(&self, uri: &str, table: &str, rel: &str) {
        std::fs::remove_file(Path::new(uri).join(table).join(rel)).unwrap();
    }

    fn flip_bit(&self, uri: &str, table: &str, rel: &str) {
        let p: PathBuf = Path::new(uri).join(table).join(rel);
        let mut b = std::fs::read(&p).unwrap();
        let mid = b.len() / 2;
        b[mid] ^= 0x01;
        std::fs::write(&p, b).unwrap();
    }
}

/// moto behind the proxy of `s3.rs`, one bucket.
pub(crate) struct S3(crate::s3::S3);

impl S3 {
    pub(crate) fn start() -> S3 {
        S3(crate::s3::S3::start("formats"))
    }

    fn key(&self, uri: &str, table: &str, rel: &str) -> object_store::path::Path {
        let prefix = uri.strip_prefix(&format!("s3://{}/", self.0.bucket)).unwrap();
        object_store::path::Path::from(format!("{prefix}/{table}/{rel}"))
    }
}

impl Backend for S3 {
    fn sim_url(&self) -> String {
        self.0.sim.url()
    }

    fn uri(&self, name: &str) -> String {
        format!("s3://{}/{name}", self.0.bucket)
    }

    fn on(&self, c: Command, args: &[&str]) -> Command {
        let mut c = self.0.cmd_on(c, args);
        c.env_remove("RUST_LOG");
        c
    }

    fn settle(&self) {
        self.0.settle();
    }

    fn data_files(&self, uri: &str, table: &str) -> Vec<String> {
        let store = self.0.store();
        let root = self.key(uri, table, "");
        let root = root.as_ref().trim_end_matches('/').to_string();
        let metas: Vec<_> = self.0.sim.rt.block_on(async {
            store
                .list(Some(&object_store::path::Path::from(root.as_str())))
                .try_collect()
                .await
                .unwrap()
        });
        let mut out: Vec<String> = metas
            .iter()
            .map(|m| m.location.as_ref()[root.len() + 1..].to_string())
            .filter(|p| p.ends_with(".parquet") && !p.starts_with("_delta_log"))
            .collect();
        out.sort();
        out
    }

    fn delete(&self, uri: &str, table: &str, rel: &str) {
        let store = self.0.store();
        self.0.sim.rt.block_on(store.delete(&self.key(uri, table, rel))).unwrap();
    }

    fn flip_bit(&self, uri: &str, table: &str, rel: &str) {
        let store = self.0.store();
        let key = self.key(uri, table, rel);
        self.0.sim.rt.block_on(async {
            let mut b = store.get(&key).await.unwrap().bytes().await.unwrap().to_vec();
            let mid = b.len() / 2;
            b[mid] ^= 0x01;
            store.put(&key, b.into()).await.unwrap();
        });
    }
}

/// Start of 2025-05-31 UTC, in unix seconds: each chain's window crosses
/// it, so each has two date partitions.
const MIDNIGHT: i64 = 1_748_649_600;

/// A chain's blocks exported by a job: `first..=last`, in units of `chunk`.
#[derive(Clone, Copy)]
struct Window {
    chain: Chain,
    first: u64,
    last: u64,
    chunk: u64,
}

/// The windows of the suite's jobs: ethereum (200 blocks in units of 50)
/// and base (100 in units of 25), each across midnight; `part` 1 is the
/// blocks right after `part` 0's (a second job sharing the output).
fn windows(part: u64) -> [Window; 2] {
    let data = SimData::new(42, 30);
    let at = |chain: Chain, before: u64, len: u64, chunk: u64| {
        let midnight = data.blocks_in_time(chain, MIDNIGHT, MIDNIGHT + 1, false).0;
        let first = midnight - before + part * len;
        Window {
            chain,
            first,
            last: first + len - 1,
            chunk,
        }
    };
    [at(Chain::Ethereum, 100, 200, 50), at(Chain::Base, 50, 100, 25)]
}

/// The simulator's rows of `windows`, as [`COLUMNS`], sorted.
fn truth_of(windows: &[Window]) -> Vec<Vec<String>> {
    let data = SimData::new(42, 30);
    let idx: Vec<usize> = COLUMNS
        .iter()
        .map(|c| truth::EVENT_COLS.iter().position(|e| e == c).unwrap())
        .collect();
    let mut rows: Vec<Vec<String>> = windows
        .iter()
        .flat_map(|w| truth::events(&data, w.chain, w.first, w.last, &[], None))
        .map(|r| idx.iter().map(|&i| r[i].clone()).collect())
        .collect();
    rows.sort();
    rows
}

/// What readers can read of a table: one snapshot, its version (0 for a
/// format with no versions) and its rows.
struct Snapshot {
    version: u64,
    rows: Vec<Vec<String>>,
}

/// How `rows` differ from `want`: rows there twice, rows missing, rows
/// the source does not have; `None` if they are `want` exactly.
fn differences(rows: &[Vec<String>], want: &[Vec<String>], exact: bool) -> Option<String> {
    if rows == want {
        return None;
    }
    let mut count: BTreeMap<&Vec<String>, i64> = BTreeMap::new();
    for r in want {
        *count.entry(r).or_default() -= 1;
    }
    for r in rows {
        *count.entry(r).or_default() += 1;
    }
    let wanted: std::collections::HashSet<&Vec<String>> = want.iter().collect();
    let (mut twice, mut missing, mut foreign) = (0, 0, 0);
    let mut example = None;
    for (r, n) in count {
        if !wanted.contains(r) {
            foreign += n;
        } else if n > 0 {
            twice += n;
        } else if n < 0 && exact {
            missing -= n;
        } else {
            continue;
        }
        example.get_or_insert_with(|| r.clone());
    }
    (twice + missing + foreign > 0).then(|| {
        format!(
            "{} rows read, {} committed: {twice} there twice, {missing} missing, {foreign} not in the source (e.g. {:?})",
            rows.len(),
            want.len(),
            example.unwrap()
        )
    })
}

/// One job of the suite on one backend in one format: its spec and output.
struct Job<'a> {
    format: &'a dyn TableFormat,
    backend: &'a dyn Backend,
    _dir: tempfile::TempDir,
    spec: String,
    uri: String,
    /// Which windows it exports ([`windows`]).
    part: u64,
    /// The rows it commits.
    want: Vec<Vec<String>>,
}

impl<'a> Job<'a> {
    /// Job `name` exporting the events of [`windows`]`(part)` into the
    /// output `output` (not compacting at the end of a run: `chainetl
    /// compact` does). Nothing run yet.
    fn new(format: &'a dyn TableFormat, backend: &'a dyn Backend, name: &str, output: &str, part: u64) -> Job<'a> {
        Job::with(format, backend, name, output, part, &backend.sim_url(), "", "")
    }

    /// This job changed: in `format`, with `output` and `export` (lines
    /// of TOML) added to its output and to each export, from `url`.
    fn changed(&self, format: &'a dyn TableFormat, url: &str, output: &str, export: &str) -> Job<'a> {
        let name = self.spec.rsplit('/').next().unwrap().trim_end_matches(".toml");
        let out = self.uri.rsplit('/').next().unwrap();
        Job::with(format, self.backend, name, out, self.part, url, output, export)
    }

    #[allow(clippy::too_many_arguments)]
    fn with(
        format: &'a dyn TableFormat,
        backend: &'a dyn Backend,
        name: &str,
        output: &str,
        part: u64,
        url: &str,
        more_output: &str,
        more_export: &str,
    ) -> Job<'a> {
        let dir = tempfile::tempdir().unwrap();
        let uri = backend.uri(output);
        let ws = windows(part);
        let mut body = format!(
            "name = \"{name}\"\n[source]\nbase_url = \"{url}\"\nmax_concurrency = 4\npage_size = 500\nmax_retries = 1\n\
             [output]\nuri = \"{uri}\"\nformat = \"{}\"\ncommit_pages = 2\ncompact = false\n{more_output}\n",
            format.name(),
        );
        for w in &ws {
            body += &format!(
                "[[export]]\ndataset = \"events\"\nchains = [\"{}\"]\nwindow = \"{}..{}\"\nchunk_blocks = {}\n{more_export}\n",
                w.chain.name(),
                w.first,
                w.last,
                w.chunk
            );
        }
        let spec = write_spec(dir.path(), &format!("{name}.toml"), &body);
        Job {
            format,
            backend,
            _dir: dir,
            spec,
            uri,
            part,
            want: truth_of(&ws),
        }
    }

    /// `chainetl <command> SPEC <more>`, asserting its exit code.
    fn cli(&self, command: &str, more: &[&str], code: i32) -> Output {
        let mut args = vec![command, self.spec.as_str()];
        args.extend(more);
        let o = self.backend.on(bin(), &args).output().unwrap();
        assert_eq!(o.status.code(), Some(code), "{args:?} ({}): {}", self.format.name(), text(&o));
        o
    }

    /// `chainetl <command> SPEC <more>` started, not waited for.
    fn start(&self, command: &str, more: &[&str]) -> Child {
        let mut args = vec![command, self.spec.as_str()];
        args.extend(more);
        self.backend
            .on(bin(), &args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Waits for a [`Job::start`]ed process, asserting it exited 0.
    fn done(&self, child: Child) {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{} ({}): {}", self.spec, self.format.name(), text(&o));
    }

    /// `chainetl <args>` killed (abort, as kill -9) at crash point `point`.
    fn killed_at(&self, point: &str, args: &[&str]) {
        let o = self.backend.on(crash_bin(point), args).output().unwrap();
        assert!(
            !o.status.success() && String::from_utf8_lossy(&o.stderr).contains("failpoint"),
            "{args:?} was to die at {point} ({}): {}",
            self.format.name(),
            text(&o)
        );
        self.backend.settle();
    }

    /// `chainetl <args>` killed at crash point `point`, or done (exit 0)
    /// where it never reaches it (a step a format does not have, or work
    /// an earlier kill left finished).
    fn killed_or_done(&self, point: &str, args: &[&str]) {
        let o = self.backend.on(crash_bin(point), args).output().unwrap();
        let died = !o.status.success() && String::from_utf8_lossy(&o.stderr).contains("failpoint");
        assert!(
            died || o.status.success(),
            "{args:?} at {point} ({}): {}",
            self.format.name(),
            text(&o)
        );
        self.backend.settle();
    }

    /// `chainetl <args>` frozen (SIGSTOP) at crash point `step`.
    fn frozen_at(&self, step: &str, args: &[&str]) -> Frozen<'_> {
        let child = self
            .backend
            .on(crash_bin(&format!("{step}:1:stop")), args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut f = Frozen {
            child: Some(child),
            backend: self.backend,
        };
        let t = Instant::now();
        while !crate::lease::stopped(f.child().id()) {
            if f.child().try_wait().unwrap().is_some() {
                let out = f.child.take().unwrap().wait_with_output().unwrap();
                panic!("{args:?} ended before step {step} ({}): {}", self.format.name(), text(&out));
            }
            assert!(t.elapsed() < Duration::from_secs(60), "{args:?} never reached {step}");
            std::thread::sleep(Duration::from_millis(20));
        }
        f
    }

    /// The events table's snapshots from version `since` on (`-1`: the latest),
    /// as the format's reader reads them.
    fn snapshots(&self, since: i64) -> Vec<Snapshot> {
        // The read-back scripts' helpers (tests/table_rows.py) importable;
        // the folder as a JSON string, which Python reads as written.
        let tests = serde_json::Value::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests"));
        let script = format!(
            "import sys\nsys.path.insert(0, {tests})\n{DRIVER}\n{}\nmain()\n",
            self.format.reader()
        );
        let table = format!("{}/events", self.uri);
        let o = python_output(&mut self.backend.on(
            Command::new(python()),
            &["-c", &script, &table, &since.to_string(), &COLUMNS.join(",")],
        ))
        .expect("python with pyarrow and deltalake (run `make test`, which installs them)");
        let stdout = String::from_utf8_lossy(&o.stdout);
        let line = stdout
            .lines()
            .find_map(|l| l.strip_prefix("RESULT "))
            .unwrap_or_else(|| panic!("the {} reader of {table} failed:\n{}", self.format.name(), text(&o)));
        #[derive(serde::Deserialize)]
        struct Read {
            version: u64,
            rows: Vec<String>,
        }
        let doc: Vec<Read> = serde_json::from_str(line).unwrap();
        doc.into_iter()
            .map(|s| {
                let mut rows: Vec<Vec<String>> = s.rows.iter().map(|r| r.split('\t').map(String::from).collect()).collect();
                // Nearly sorted already (the reader sorts the rows' text),
                // which makes this sort a pass.
                rows.sort();
                Snapshot { version: s.version, rows }
            })
            .collect()
    }

    /// What a reader reads now.
    fn read(&self) -> Snapshot {
        self.snapshots(-1).pop().unwrap()
    }

    /// Asserts a reader now sees exactly `want` (each row once).
    fn assert_reads(&self, want: &[Vec<String>], when: &str) {
        let now = self.read();
        if let Some(d) = differences(&now.rows, want, true) {
            panic!("{} on {}, {when}: {d}", self.format.name(), self.uri);
        }
    }
}

/// A process frozen at a crash point; killed (SIGKILL) when dropped.
struct Frozen<'a> {
    child: Option<Child>,
    backend: &'a dyn Backend,
}

impl Frozen<'_> {
    fn child(&mut self) -> &mut Child {
        self.child.as_mut().unwrap()
    }
}

impl Drop for Frozen<'_> {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
            self.backend.settle();
        }
    }
}

/// Every committed row is seen exactly once, with the simulator's values:
/// after a run, after a re-run (no request sent) and after compaction.
fn every_committed_row_is_seen_once(f: &dyn TableFormat, b: &dyn Backend) {
    let job = Job::new(f, b, "once", "out", 0);
    job.cli("run", &["-q"], 0);
    job.assert_reads(&job.want, "after a run");
    let o = job.cli("run", &["--summary", "json"], 0);
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert_eq!(summary["requests"], 0, "a re-run of a done job fetches nothing: {summary}");
    job.assert_reads(&job.want, "after a re-run");
    job.cli("compact", &[], 0);
    job.assert_reads(&job.want, "after compaction");
    let after = b.data_files(&job.uri, "events");
    assert!(
        after.iter().any(|p| p.contains("once-compacted-")),
        "compaction wrote merged files: {after:?}"
    );
}

/// A replace never shows old and new rows together where the format
/// promises it. A compaction frozen at each of its steps in turn (then
/// killed, so the next one finishes or undoes its swap first): a reader
/// sees every row once before the swap in every format, and during it in
/// a format whose replace is atomic; every snapshot the format keeps of
/// the compaction and of a repair (`verify --repair` of a merged file
/// with a flipped bit) is exact if its replace is atomic, the last one in
/// any case.
fn a_replace_never_shows_old_and_new_rows_together(f: &dyn TableFormat, b: &dyn Backend) {
    let job = Job::new(f, b, "swap", "out", 0);
    job.cli("run", &["-q"], 0);
    let start = job.read().version;
    for step in BEFORE_SWAP.iter().chain(f.swap_steps()) {
        let frozen = job.frozen_at(step, &["compact", &job.spec]);
        let promised = f.atomic_replace() || BEFORE_SWAP.contains(step);
        if promised {
            job.assert_reads(&job.want, &format!("while a compaction is frozen at {step}"));
        }
        drop(frozen);
    }
    job.cli("compact", &[], 0);
    assert_snapshots_exact(&job, start, "of the compaction");
    // A merged file damaged: the repair exports its units again and
    // replaces it.
    let merged = b.data_files(&job.uri, "events");
    let merged = merged.iter().find(|p| p.contains("swap-compacted-")).unwrap();
    b.flip_bit(&job.uri, "events", merged);
    let start = job.read().version + 1;
    job.cli("verify", &["--repair"], 0);
    assert_snapshots_exact(&job, start, "of the repair");
    job.cli("verify", &[], 0);
}

/// Every snapshot of `job`'s table from version `since` on holds every
/// row once, if the format's replace is atomic; the last one in any case.
fn assert_snapshots_exact(job: &Job, since: u64, what: &str) {
    let snaps = job.snapshots(since as i64);
    let last = snaps.last().unwrap().version;
    for s in &snaps {
        if (job.format.atomic_replace() || s.version == last)
            && let Some(d) = differences(&s.rows, &job.want, true)
        {
            panic!("{} on {}, version {} {what}: {d}", job.format.name(), job.uri, s.version);
        }
    }
}

/// kill -9 at each step of publish (a run) and of replace (a compaction),
/// one after another on one output: after each killed run a reader sees
/// no row twice; a re-run then ends with every row once, and `verify`
/// passes. (A repair's steps: [`kill_9_at_each_step_of_a_repair`].)
fn kill_9_at_each_step_of_publish_and_replace(f: &dyn TableFormat, b: &dyn Backend) {
    let job = Job::new(f, b, "kill", "out", 0);
    for step in PUBLISH.iter().chain(f.publish_steps()) {
        job.killed_at(&format!("{step}:2"), &["run", &job.spec, "-q"]);
        let now = job.read();
        if let Some(d) = differences(&now.rows, &job.want, false) {
            panic!("{} on {}, after a run killed at {step}: {d}", f.name(), job.uri);
        }
    }
    job.cli("run", &["-q"], 0);
    job.assert_reads(&job.want, "after the killed runs and a re-run");
    for step in BEFORE_SWAP.iter().chain(f.swap_steps()) {
        job.killed_at(step, &["compact", &job.spec]);
    }
    job.cli("compact", &[], 0);
    job.assert_reads(&job.want, "after the killed compactions and a re-run");
    let files = b.data_files(&job.uri, "events");
    assert!(files.iter().any(|p| p.contains("kill-compacted-")), "{files:?}");
    job.cli("verify", &[], 0);
}

/// kill -9 at each step of a repair's publish (`verify --repair` of a
/// merged file with a flipped bit: its files dissolved, their units
/// exported again, the new files published in its place): while the
/// repair stands `verify` says so (exit 1, as docs/exactly-once.md's
/// *Operations left unfinished* promises), and `verify --repair` finishes
/// it: every row once, `verify` clean.
fn kill_9_at_each_step_of_a_repair(f: &dyn TableFormat, b: &dyn Backend) {
    let job = Job::new(f, b, "mend", "out", 0);
    job.cli("run", &["-q"], 0);
    job.cli("compact", &[], 0);
    let files = b.data_files(&job.uri, "events");
    let merged = files.iter().find(|p| p.contains("mend-compacted-")).unwrap();
    b.flip_bit(&job.uri, "events", merged);
    for step in PUBLISH.iter().chain(f.publish_steps()) {
        job.killed_at(step, &["verify", &job.spec, "--repair"]);
        // (Readers meanwhile: parquet may miss the units' rows, delta
        // still reads the damaged file; both as documented.)
        job.cli("verify", &[], 1);
    }
    job.cli("verify", &["--repair"], 0);
    job.assert_reads(&job.want, "after the killed repairs and verify --repair");
    job.cli("verify", &[], 0);
}

/// `verify` finds a missing file and a damaged one (a bit flipped), exits
/// 1 naming each, and `verify --repair` restores every row.
fn verify_finds_a_missing_or_damaged_file_and_repair_restores_it(f: &dyn TableFormat, b: &dyn Backend) {
    let job = Job::new(f, b, "rot", "out", 0);
    job.cli("run", &["-q"], 0);
    let files = b.data_files(&job.uri, "events");
    let (gone, flipped) = (&files[0], &files[files.len() - 1]);
    b.delete(&job.uri, "events", gone);
    b.flip_bit(&job.uri, "events", flipped);
    let name = |p: &str| p.rsplit('/').next().unwrap().to_string();
    let said = text(&job.cli("verify", &[], 1));
    assert!(said.contains(&name(gone)), "{}: verify names the missing file: {said}", f.name());
    assert!(said.contains(&name(flipped)), "{}: verify names the damaged file: {said}", f.name());
    job.cli("verify", &["--repair"], 0);
    job.assert_reads(&job.want, "after verify --repair");
    job.cli("verify", &[], 0);
}

/// A second job sharing the output (same uri, format and layout; its own
/// name and window, writing the same partitions), the two at work at
/// once: both running (the second as its first shard), then the first
/// compacting while the second runs its other shard, then both
/// compacting. Each job's rows are seen once after each (and no row twice
/// at any version the format keeps of the two compactions), and `verify`
/// of each passes.
fn a_second_job_sharing_the_output_keeps_each_jobs_rows_once(f: &dyn TableFormat, b: &dyn Backend) {
    let one = Job::new(f, b, "one", "shared", 0);
    let two = Job::new(f, b, "two", "shared", 1);
    let mut both = [one.want.clone(), two.want.clone()].concat();
    both.sort();
    let at_once = |a: (&Job, &str, &[&str]), b: (&Job, &str, &[&str])| {
        let started = [a, b].map(|(job, command, more)| (job, job.start(command, more)));
        for (job, child) in started {
            job.done(child);
        }
    };
    at_once((&one, "run", &["-q"]), (&two, "run", &["-q", "--shard", "1/2"]));
    at_once((&one, "compact", &[]), (&two, "run", &["-q", "--shard", "2/2"]));
    two.cli("run", &["-q"], 0);
    one.assert_reads(&both, "after both jobs ran, one compacting meanwhile");
    let before = one.read().version;
    at_once((&one, "compact", &[]), (&two, "compact", &[]));
    one.assert_reads(&both, "after both compacted at once");
    // Nor twice at any version the two compactions made.
    for s in one.snapshots(before as i64) {
        if let Some(d) = differences(&s.rows, &both, false) {
            panic!("{} on {}, version {}: {d}", f.name(), one.uri, s.version);
        }
    }
    let files = b.data_files(&one.uri, "events");
    for job in ["one", "two"] {
        let compacted = format!("{job}-compacted-");
        assert!(files.iter().any(|p| p.contains(&compacted)), "{job} compacted: {files:?}");
    }
    one.cli("verify", &[], 0);
    two.cli("verify", &[], 0);
}

/// A finished job changed, each change made from its files with no
/// request (the spec's source is a URL nothing answers at) and killed at
/// steps of its rewrite first: re-partitioned by chain, its hashes
/// re-encoded as bytes, a column left out (`topics`, a list whose items
/// carry field ids in Iceberg), compacted after; then converted into
/// every other format and back, killed at steps of each conversion. After
/// every kill a reader sees no row twice (and every row, where the
/// format's replace is atomic); after every change the format's reader
/// reads exactly the simulator's rows, and `verify` passes.
fn a_change_of_a_finished_job_is_made_from_its_files_exactly(f: &dyn TableFormat, b: &dyn Backend) {
    let job = Job::new(f, b, "chg", "out", 0);
    job.cli("run", &["-q"], 0);
    let dead = crate::changing::dead_url();
    let steps: [(&str, &str); 3] = [
        ("partition_by = [\"chain\"]", ""),
        ("partition_by = [\"chain\"]\nhash_encoding = \"binary\"", ""),
        (
            "partition_by = [\"chain\"]\nhash_encoding = \"binary\"",
            "exclude_columns = [\"topics\"]",
        ),
    ];
    let mut last = (String::new(), String::new());
    for (output, export) in steps {
        let now = job.changed(f, &dead, output, export);
        for point in ["rewrite-written:1", "rewrite-published:1", "rewrite-committed:1"] {
            now.killed_or_done(point, &["run", &now.spec, "-q"]);
            // (A folder's readers may see a group of files twice while it
            // is swapped, as documented.)
            if f.atomic_replace()
                && let Some(d) = differences(&now.read().rows, &now.want, true)
            {
                panic!("{} on {}, a change ({output} {export}) killed at {point}: {d}", f.name(), now.uri);
            }
        }
        let o = now.cli("run", &["--summary", "json"], 0);
        let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
        assert_eq!(summary["requests"], 0, "{}: a change is made from the files: {summary}", f.name());
        now.assert_reads(&now.want, &format!("after the change to {output} {export}"));
        now.cli("verify", &[], 0);
        last = (output.to_string(), export.to_string());
    }
    let now = job.changed(f, &dead, &last.0, &last.1);
    now.cli("compact", &[], 0);
    now.assert_reads(&now.want, "after compacting the changed output");
    now.cli("verify", &[], 0);
    for other in FORMATS.iter().filter(|o| o.name() != f.name()) {
        for (into, points) in [(*other, CONVERSION_STEPS), (f, CONVERSION_STEPS)] {
            let to = job.changed(into, &dead, &last.0, &last.1);
            for point in points {
                to.killed_or_done(point, &["run", &to.spec, "-q"]);
            }
            let o = to.cli("run", &["--summary", "json"], 0);
            let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
            assert_eq!(summary["requests"], 0, "{} → {}: {summary}", f.name(), into.name());
            to.assert_reads(&to.want, &format!("after converting into {}", into.name()));
            to.cli("verify", &[], 0);
        }
    }
}

/// Steps a conversion between formats is killed at.
const CONVERSION_STEPS: &[&str] = &["conversion-recorded:1", "during-conversion:1", "migration-recorded:1"];

/// Every format of the suite.
const FORMATS: [&dyn TableFormat; 3] = [&Parquet, &Delta, &Iceberg];

/// Each guarantee, for each format, on local disk and on S3: a test
/// `formats::<guarantee>::<format>::{local_disk, s3}` (with the
/// guarantee's attributes, such as `#[ignore = "…"]`).
macro_rules! conformance {
    ($formats:tt; $($(#[$attr:meta])* $guarantee:ident),* $(,)?) => {
        $( conformance!(@one [$(#[$attr])*] $guarantee $formats); )*
    };
    (@one $attrs:tt $guarantee:ident [$($format:ident = $imp:expr),* $(,)?]) => {
        mod $guarantee {
            $(
                mod $format {
                    conformance!(@with $attrs #[test] fn local_disk() {
                        super::super::$guarantee(&$imp, &super::super::LocalDisk::start());
                    });
                    conformance!(@with $attrs #[test] fn s3() {
                        super::super::$guarantee(&$imp, &super::super::S3::start());
                    });
                }
            )*
        }
    };
    (@with [$($attr:tt)*] $($item:tt)*) => {
        $($attr)* $($item)*
    };
}

conformance!(
    [parquet = super::super::Parquet, delta = super::super::Delta, iceberg = super::super::Iceberg];
    every_committed_row_is_seen_once,
    a_replace_never_shows_old_and_new_rows_together,
    kill_9_at_each_step_of_publish_and_replace,
    kill_9_at_each_step_of_a_repair,
    verify_finds_a_missing_or_damaged_file_and_repair_restores_it,
    a_second_job_sharing_the_output_keeps_each_jobs_rows_once,
    a_change_of_a_finished_job_is_made_from_its_files_exactly,
);
