//! Checkpoints and resume. State lives with the output, under
//! `<output>/_chainetl/<job>/`, so a job resumes from any machine:
//!
//! - `job.json`: format version, job name, identity (what the job exports
//!   and its files' layout) and its hash, the frozen windows, the page size
//!   units were cut for; written once, create-if-absent;
//! - `exports/e<i>.json`: an export appended after the job started: its
//!   identity and frozen window (create-if-absent, so shards agree);
//! - `units/<unit>.json`: per unit, the cursor after the last committed
//!   page, the next file sequence number, rows/files/bytes committed, each
//!   committed file (path, rows, bytes), `done`;
//! - `marks/e<i>-<chain>.json`: an incremental export's high-water mark and
//!   the hashes of its last exported blocks;
//! - `segments/<id>.json`: a slice of an aligned or incremental export fixed
//!   by a run before its units start; `periods/<id>.json`: a finished period;
//! - `leases/<scope>.{lock,json}`: the run holding the job ([`lease`]);
//! - `runs/<run-id>.json`: run reports; `clearing.json`: a `--fresh` in progress.
//!
//! Crash invariant (the exactly-once rule): a unit's data files are made
//! durable *before* its checkpoint is written, and file names are
//! deterministic (`<job>-<unit>-<seq>.parquet`). So after a crash every
//! file with `seq < next_seq` is committed and every file with
//! `seq >= next_seq` is an orphan of uncommitted work, which
//! [`StateStore::remove_orphans`] deletes before the unit fetches again from
//! its cursor. A unit without a checkpoint therefore owns no committed
//! file: deleting a checkpoint makes the unit start over, its files removed
//! first (the safe fix for a damaged one, and how `verify --repair` works).
//! Checkpoints are written tmp → fsync → rename locally (temporary names
//! unique per process and call) and as a single PUT on object stores, so
//! they are never seen half-written.
//!
//! Ownership: a job's files are only those whose names parse strictly as its
//! own (`<job>-` then a unit id, see [`crate::plan::is_unit_id`], then a
//! sequence), never a name prefix: jobs sharing an output never touch each
//! other's files. One run writes a job (or a shard) at a time: [`lease`].

pub mod lease;

use crate::plan::{Segment, Unit};
use crate::sink::{Sink, SinkError, parse_file_name};
use crate::spec::Dataset;
use crate::vocab::chain::Chain;
use crate::vocab::window::Resolved;
use futures::TryStreamExt;
use object_store::{ObjectStoreExt, PutPayload};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Version of the state format this build reads and writes.
pub const STATE_VERSION: u32 = 1;

/// Errors reading or writing state.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// Storage failed.
    #[error("state {path}: {action}: {source}")]
    Io {
        /// Object path.
        path: String,
        /// What was being done: `reading`, `writing`, `creating`, `listing`, `encoding`.
        action: &'static str,
        /// Cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The file is not ours or is from another version.
    #[error("state file {path} is unreadable: {message}")]
    Corrupt {
        /// Where the file is, as a user finds it (the output's URI joined with its path).
        path: String,
        /// What is wrong, and the safe fix.
        message: String,
        /// The parse error, when it did not parse.
        #[source]
        source: Option<serde_json::Error>,
    },
    /// Removing files failed.
    #[error(transparent)]
    Sink(#[from] SinkError),
}

impl StateError {
    /// Storage failed at `path` while doing `action`.
    pub(crate) fn io(path: &str, action: &'static str, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> StateError {
        StateError::Io {
            path: path.into(),
            action,
            source: source.into(),
        }
    }
}

/// A state document carrying its format version.
trait Versioned {
    fn version(&self) -> u32;
    /// What to do when the document cannot be read: the safe fix.
    const FIX: &'static str = "re-run with --fresh to start the job over (this deletes its output)";
}

impl Versioned for JobState {
    fn version(&self) -> u32 {
        self.version
    }
}

impl JobState {
    /// The page size to cut units for: the one frozen when the job started,
    /// so a resumed run (or another shard) finds the same units even with a
    /// different `page_size` in the spec.
    pub fn cut_page_size(&self, spec: &crate::spec::Spec) -> u32 {
        self.page_size.unwrap_or(spec.source.page_size)
    }
}

impl Versioned for UnitState {
    fn version(&self) -> u32 {
        self.version
    }
    // Safe because a unit without a checkpoint owns no committed file: the
    // next run removes every file of the unit before fetching it again.
    const FIX: &'static str = "delete this file and re-run: the unit is exported again from the start, \
         its earlier files removed first (the rest of the job is kept)";
}

impl Versioned for Mark {
    fn version(&self) -> u32 {
        self.version
    }
    const FIX: &'static str = "restore it from a backup, or re-run with --fresh to start the job over \
         (this deletes its output); do not delete it alone: the export would start again from `start` \
         beside the files it already wrote";
}

impl Versioned for SegmentDoc {
    fn version(&self) -> u32 {
        self.version
    }
}

/// A block as exported: its number and hash, to notice later that a
/// reorg replaced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TailBlock {
    /// Block number.
    pub number: u64,
    /// Its hash when it was exported.
    pub hash: String,
}

/// High-water mark of an incremental export on one chain
/// (`marks/e<idx>-<chain>.json`): everything below `next` is exported and
/// committed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Mark {
    /// Format version.
    pub version: u32,
    /// Export index.
    pub export: usize,
    /// Chain.
    pub chain: Chain,
    /// First block (or, for portfolios, unix second of the first day) not exported yet.
    pub next: u64,
    /// Hashes of the last exported blocks, oldest first.
    #[serde(default)]
    pub tail: Vec<TailBlock>,
    /// A reorg repair in progress: files of blocks from here on are being replaced.
    #[serde(default)]
    pub repair_from: Option<u64>,
    /// Reorgs repaired so far.
    #[serde(default)]
    pub reorgs: u64,
    /// Time of the last change (RFC 3339).
    pub updated_at: String,
}

/// A pending segment as stored (`segments/<key>.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SegmentDoc {
    /// Format version.
    pub version: u32,
    /// The segment.
    #[serde(flatten)]
    pub segment: Segment,
    /// When a run fixed it (RFC 3339).
    pub created_at: String,
}

/// Job-level state, written once when the job starts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobState {
    /// Format version.
    pub version: u32,
    /// Job name.
    pub name: String,
    /// Spec content hash.
    pub spec_hash: String,
    /// Frozen windows, one per export.
    pub windows: Vec<Option<Resolved>>,
    /// The page size the windows were cut into units for (frozen with them;
    /// absent in jobs started before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_size: Option<u32>,
    /// When the job was first started (RFC 3339).
    pub created_at: String,
    /// chainetl version that started it.
    pub chainetl_version: String,
    /// What the job exports and how its files are laid out (absent in jobs
    /// started before it was recorded: those compare `spec_hash`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<crate::spec::JobIdentity>,
}

/// An export appended to a job after it started (`exports/e<idx>.json`):
/// its identity and its window, frozen when it was added.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AddedExport {
    /// Format version.
    pub version: u32,
    /// Export index.
    pub export: usize,
    /// What it exports.
    pub identity: crate::spec::ExportIdentity,
    /// Its frozen window.
    pub window: Option<Resolved>,
    /// When it was added (RFC 3339).
    pub created_at: String,
}

impl Versioned for AddedExport {
    fn version(&self) -> u32 {
        self.version
    }
}

/// One unit's checkpoint.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct UnitState {
    /// Format version.
    pub version: u32,
    /// Unit id.
    pub unit: String,
    /// Cursor of the next page to fetch (None: from the start, or done).
    pub cursor: Option<String>,
    /// Sequence number of the next file.
    pub next_seq: u64,
    /// Rows committed.
    pub rows: u64,
    /// Files committed.
    pub files: u64,
    /// Bytes committed.
    pub bytes: u64,
    /// Pages committed.
    pub pages: u64,
    /// Whether the unit is complete.
    pub done: bool,
    /// Time of the last commit (RFC 3339).
    pub updated_at: String,
    /// Blocks units: parent hash of the first block exported, for continuity checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_parent_hash: Option<String>,
    /// Blocks units: number and hash of the last block exported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_block: Option<TailBlock>,
    /// Every file committed, for `verify` (absent in checkpoints written
    /// before it was recorded: those are checked by sequence number only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub committed: Vec<CommittedFile>,
}

/// A committed data file, as its checkpoint records it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CommittedFile {
    /// Path relative to the output root.
    pub path: String,
    /// Rows in it.
    pub rows: u64,
    /// Its size in bytes.
    pub bytes: u64,
}

/// A committed file that is not as its checkpoint says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileProblem {
    /// The unit that committed it.
    pub unit: String,
    /// Path relative to the output root.
    pub path: String,
    /// What is wrong.
    pub what: String,
}

/// A temporary name beside `path`, unique to this process and call, so two
/// writers of one document (two runs of a job, however they came to run at
/// once) can never interleave their bytes in one file.
fn unique_tmp(path: &std::path::Path) -> std::path::PathBuf {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(format!(".{}.{n}.tmp", std::process::id()));
    path.with_file_name(name)
}

/// Deletes the files under `roots` (recursively) that `remove` selects;
/// returns how many were deleted. Directories that cannot be read are skipped.
fn remove_local_files(mut roots: Vec<std::path::PathBuf>, remove: impl Fn(&std::path::Path) -> bool) -> usize {
    let mut removed = 0;
    while let Some(dir) = roots.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                roots.push(p);
            } else if remove(&p) && std::fs::remove_file(&p).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}

/// Reads and writes one job's state.
#[derive(Debug, Clone)]
pub struct StateStore {
    sink: Arc<Sink>,
    job: String,
    dir: String,
}

impl StateStore {
    /// The state of job `job` in `sink`'s output.
    pub fn new(sink: Arc<Sink>, job: &str) -> StateStore {
        StateStore {
            sink,
            job: job.into(),
            dir: format!("_chainetl/{job}"),
        }
    }

    /// The output's URI as configured.
    pub fn output_uri(&self) -> &str {
        self.sink.uri()
    }

    /// File stem prefix of this job's data files.
    pub fn file_prefix(&self, unit: &str) -> String {
        format!("{}-{unit}", self.job)
    }

    /// Where `rel` is, as a user finds it: the output's URI joined with it.
    fn location(&self, rel: &str) -> String {
        format!("{}/{rel}", self.sink.uri().trim_end_matches('/'))
    }

    async fn read(&self, rel: &str) -> Result<Option<Vec<u8>>, StateError> {
        match self.sink.store().get(&self.sink.path(rel)).await {
            Ok(r) => Ok(Some(r.bytes().await.map_err(|e| StateError::io(rel, "reading", e))?.to_vec())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(StateError::io(rel, "reading", e)),
        }
    }

    /// Writes `bytes` at `rel` atomically.
    async fn write(&self, rel: &str, bytes: Vec<u8>) -> Result<(), StateError> {
        if let Some(root) = self.sink.local_root() {
            let path = root.join(rel);
            let rel_s = rel.to_string();
            return tokio::task::spawn_blocking(move || -> std::io::Result<()> {
                use std::io::Write;
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                let tmp = unique_tmp(&path);
                let mut f = std::fs::File::create(&tmp)?;
                f.write_all(&bytes)?;
                f.sync_all()?;
                crate::util::failpoint::hit("during-checkpoint");
                std::fs::rename(&tmp, &path)?;
                if let Some(parent) = path.parent()
                    && let Ok(d) = std::fs::File::open(parent)
                {
                    let _ = d.sync_all();
                }
                Ok(())
            })
            .await
            .map_err(|e| StateError::io(&rel_s, "writing", e))?
            .map_err(|e| StateError::io(&rel_s, "writing", e));
        }
        self.sink
            .store()
            .put(&self.sink.path(rel), PutPayload::from(bytes))
            .await
            .map(|_| ())
            .map_err(|e| StateError::io(rel, "writing", e))
    }

    /// The job state, if the job ran before.
    pub async fn load_job(&self) -> Result<Option<JobState>, StateError> {
        self.read_doc(&format!("{}/job.json", self.dir)).await
    }

    /// Reads a JSON state document of this build's format version.
    async fn read_doc<T: DeserializeOwned + Versioned>(&self, rel: &str) -> Result<Option<T>, StateError> {
        let Some(bytes) = self.read(rel).await? else {
            return Ok(None);
        };
        let corrupt = |what: String, source: Option<serde_json::Error>| StateError::Corrupt {
            path: self.location(rel),
            message: format!("{what}; {}", T::FIX),
            source,
        };
        let doc: T = serde_json::from_slice(&bytes).map_err(|e| corrupt(format!("not a chainetl state document ({e})"), Some(e)))?;
        if doc.version() != STATE_VERSION {
            return Err(corrupt(
                format!("state format version {} is not {STATE_VERSION}", doc.version()),
                None,
            ));
        }
        Ok(Some(doc))
    }

    /// Writes a JSON document atomically.
    async fn write_doc(&self, rel: &str, doc: &impl Serialize) -> Result<(), StateError> {
        // Last line: no secret reaches a state document, whatever a server
        // sent (state holds cursors and messages that came from it).
        let json = serde_json::to_vec_pretty(doc).map_err(|e| StateError::io(rel, "encoding", e))?;
        self.write(rel, crate::util::redact::redact_bytes(json)).await
    }

    /// Objects under `rel_prefix` (relative to the output root).
    async fn list(&self, rel_prefix: &str) -> Result<Vec<object_store::ObjectMeta>, StateError> {
        let prefix = self.sink.path(rel_prefix);
        self.sink
            .store()
            .list(Some(&prefix))
            .try_collect()
            .await
            .map_err(|e| StateError::io(prefix.as_ref(), "listing", e))
    }

    /// Every unit checkpoint, by unit id.
    pub async fn load_units(&self) -> Result<HashMap<String, UnitState>, StateError> {
        let mut out = HashMap::new();
        for m in self.list(&format!("{}/units", self.dir)).await? {
            let rel = self.sink.rel_of(&m.location);
            if !rel.ends_with(".json") {
                continue;
            }
            if let Some(st) = self.read_doc::<UnitState>(&rel).await? {
                out.insert(st.unit.clone(), st);
            }
        }
        Ok(out)
    }

    /// Writes one unit's checkpoint.
    pub async fn save_unit(&self, st: &UnitState) -> Result<(), StateError> {
        self.write_doc(&format!("{}/units/{}.json", self.dir, st.unit), st).await
    }

    /// Writes an arbitrary JSON document under the job's state directory (run reports).
    pub async fn save_doc(&self, name: &str, doc: &serde_json::Value) -> Result<String, StateError> {
        let rel = format!("{}/{name}", self.dir);
        self.write_doc(&rel, doc).await?;
        Ok(rel)
    }

    /// This job's data files under the given datasets: `(rel, unit, seq)`.
    async fn data_files(&self, datasets: &HashSet<Dataset>) -> Result<Vec<(String, String, u64)>, StateError> {
        Ok(self
            .data_files_sized(datasets)
            .await?
            .into_iter()
            .map(|(rel, unit, seq, _)| (rel, unit, seq))
            .collect())
    }

    /// This job's data files, and their sizes: `(rel, unit, seq, bytes)`.
    /// Only names this job wrote (its exact name, a unit id, a sequence)
    /// count: never a file of another job sharing the output.
    async fn data_files_sized(&self, datasets: &HashSet<Dataset>) -> Result<Vec<(String, String, u64, u64)>, StateError> {
        let mut out = Vec::new();
        let prefix = format!("{}-", self.job);
        for d in datasets {
            for m in self.list(d.name()).await? {
                let Some(name) = m.location.filename() else {
                    continue;
                };
                let Some(rest) = name.strip_prefix(&prefix) else {
                    continue;
                };
                if let Some((unit, seq)) = parse_file_name(rest) {
                    out.push((self.sink.rel_of(&m.location), unit.to_string(), seq, m.size));
                }
            }
        }
        Ok(out)
    }

    /// Checks every file the checkpoints of `datasets` say was committed:
    /// it exists, has the recorded size, and its Parquet footer holds the
    /// recorded rows. Checkpoints written before files were recorded are
    /// checked by sequence number (every sequence below `next_seq` exists).
    pub async fn verify(&self, datasets: &HashSet<Dataset>, states: &HashMap<String, UnitState>) -> Result<Vec<FileProblem>, StateError> {
        let files = self.data_files_sized(datasets).await?;
        let sizes: HashMap<&str, u64> = files.iter().map(|(rel, _, _, b)| (rel.as_str(), *b)).collect();
        let mut seqs: HashMap<&str, HashSet<u64>> = HashMap::new();
        for (_, unit, seq, _) in &files {
            seqs.entry(unit.as_str()).or_default().insert(*seq);
        }
        let mut problems = Vec::new();
        let mut ids: Vec<&String> = states.keys().collect();
        ids.sort();
        for id in ids {
            let st = &states[id];
            let problem = |path: &str, what: String| FileProblem {
                unit: id.clone(),
                path: path.into(),
                what,
            };
            if st.committed.is_empty() {
                let present = seqs.get(id.as_str());
                for seq in (0..st.next_seq).filter(|s| !present.is_some_and(|p| p.contains(s))) {
                    let name = crate::sink::file_name(&self.file_prefix(id), seq);
                    problems.push(problem(&name, "missing".into()));
                }
                continue;
            }
            for f in &st.committed {
                match sizes.get(f.path.as_str()) {
                    None => problems.push(problem(&f.path, format!("missing ({} rows)", f.rows))),
                    Some(&b) if b != f.bytes => problems.push(problem(&f.path, format!("changed: {b} bytes, {} when committed", f.bytes))),
                    Some(&b) => match self.parquet_rows(&f.path, b).await {
                        Ok(rows) if rows == f.rows => {}
                        Ok(rows) => problems.push(problem(&f.path, format!("changed: {rows} rows, {} when committed", f.rows))),
                        Err(e) => problems.push(problem(&f.path, format!("changed: not a readable Parquet file ({e})"))),
                    },
                }
            }
        }
        Ok(problems)
    }

    /// Rows in a Parquet file of `size` bytes, from its footer (two range
    /// reads; the metadata length is checked against the size first, so a
    /// damaged file cannot make us read or allocate past it).
    async fn parquet_rows(&self, rel: &str, size: u64) -> Result<u64, String> {
        use parquet::file::metadata::{FooterTail, ParquetMetaDataReader};
        let path = self.sink.path(rel);
        if size < 12 {
            return Err(format!("{size} bytes is too short"));
        }
        let tail = self
            .sink
            .store()
            .get_range(&path, size - 8..size)
            .await
            .map_err(|e| e.to_string())?;
        let tail: [u8; 8] = tail.as_ref().try_into().map_err(|_| "short read".to_string())?;
        let len = FooterTail::try_new(&tail).map_err(|e| e.to_string())?.metadata_length() as u64;
        if len + 12 > size {
            return Err(format!("footer length {len} exceeds the file"));
        }
        let meta = self
            .sink
            .store()
            .get_range(&path, size - 8 - len..size - 8)
            .await
            .map_err(|e| e.to_string())?;
        let meta = ParquetMetaDataReader::decode_metadata(&meta).map_err(|e| e.to_string())?;
        Ok(meta.file_metadata().num_rows().max(0) as u64)
    }

    /// Deletes files of `units` that no checkpoint covers (written after the
    /// unit's last commit by a run that died), and local staging leftovers.
    /// Returns how many were removed.
    pub async fn remove_orphans(&self, units: &[Unit], states: &HashMap<String, UnitState>) -> Result<usize, StateError> {
        let ours: HashSet<&str> = units.iter().map(|u| u.id.as_str()).collect();
        let datasets: HashSet<Dataset> = units.iter().map(|u| u.dataset).collect();
        let mut removed = 0;
        for (rel, unit, seq) in self.data_files(&datasets).await? {
            if !ours.contains(unit.as_str()) {
                continue;
            }
            let committed = states.get(&unit).map_or(0, |s| s.next_seq);
            if seq >= committed {
                self.sink.delete(&rel).await?;
                removed += 1;
            }
        }
        removed += self.remove_local_staging(&datasets);
        Ok(removed)
    }

    /// Temporary state files left by writers that died mid-write (their
    /// names are unique per process, so nothing else replaces them). Only
    /// called while holding the job's lease: no live writer has one open.
    /// Object stores write state in single PUTs and leave none.
    pub fn remove_stale_tmp(&self) -> usize {
        let Some(root) = self.sink.local_root() else {
            return 0;
        };
        remove_local_files(vec![root.join(&self.dir)], |p| p.extension().is_some_and(|x| x == "tmp"))
    }

    /// Local multipart staging files (`<file>.parquet#<n>`) of this job.
    fn remove_local_staging(&self, datasets: &HashSet<Dataset>) -> usize {
        let Some(root) = self.sink.local_root() else {
            return 0;
        };
        let prefix = format!("{}-", self.job);
        remove_local_files(datasets.iter().map(|d| root.join(d.name())).collect(), |p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.split_once('#'))
                .and_then(|(file, _)| file.strip_prefix(&prefix))
                .and_then(parse_file_name)
                .is_some()
        })
    }

    /// Marker of a `--fresh` in progress: while it exists the job's state
    /// and files cannot be trusted, so every run finishes the clearing first.
    fn clearing_marker(&self) -> String {
        format!("{}/clearing.json", self.dir)
    }

    /// Whether a `--fresh` was interrupted before it finished.
    pub async fn clear_interrupted(&self) -> Result<bool, StateError> {
        Ok(self.read(&self.clearing_marker()).await?.is_some())
    }

    /// `--fresh`: deletes the job's data files and its state. Crash-safe: the
    /// marker goes first and state before data, because checkpoints that
    /// outlived their files would make a later run skip units whose rows are
    /// gone; a run that finds the marker finishes the clearing.
    pub async fn clear(&self, datasets: &HashSet<Dataset>) -> Result<usize, StateError> {
        let marker = self.clearing_marker();
        self.write_doc(&marker, &serde_json::json!({ "started_at": chrono::Utc::now().to_rfc3339() }))
            .await?;
        let leases = format!("{}/leases/", self.dir);
        for m in self.list(&self.dir).await? {
            let rel = self.sink.rel_of(&m.location);
            // The lease is the clearing run's own: it outlives the clearing.
            if rel != marker && !rel.starts_with(&leases) {
                self.sink.delete(&rel).await?;
            }
        }
        let mut removed = 0;
        for (rel, _, _) in self.data_files(datasets).await? {
            self.sink.delete(&rel).await?;
            crate::util::failpoint::hit("during-fresh");
            removed += 1;
        }
        removed += self.remove_local_staging(datasets);
        self.sink.delete(&marker).await?;
        Ok(removed)
    }
}

impl StateStore {
    /// Writes the job state unless another process (a shard) did first, and
    /// returns whichever state won, so every shard freezes the same windows.
    pub async fn create_job(&self, job: &JobState) -> Result<JobState, StateError> {
        self.create_doc(&format!("{}/job.json", self.dir), job).await
    }

    /// Writes `doc` at `rel` unless it exists, and returns whichever
    /// document is there afterwards: an atomic create-if-absent (a hard link
    /// locally, `PutMode::Create` on object stores) so that concurrent
    /// shards agree.
    async fn create_doc<T: Serialize + DeserializeOwned + Versioned + Clone>(&self, rel: &str, doc: &T) -> Result<T, StateError> {
        let bytes = serde_json::to_vec_pretty(doc).map_err(|e| StateError::io(rel, "encoding", e))?;
        let created = if let Some(root) = self.sink.local_root() {
            let path = root.join(rel);
            let tmp = unique_tmp(&path);
            let r = (|| -> std::io::Result<bool> {
                use std::io::Write;
                if let Some(p) = path.parent() {
                    std::fs::create_dir_all(p)?;
                }
                let mut f = std::fs::File::create(&tmp)?;
                f.write_all(&bytes)?;
                f.sync_all()?;
                // hard_link fails if the target exists: an atomic create-if-absent.
                let won = match std::fs::hard_link(&tmp, &path) {
                    Ok(()) => true,
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
                    Err(e) => return Err(e),
                };
                std::fs::remove_file(&tmp)?;
                Ok(won)
            })();
            r.map_err(|e| StateError::io(rel, "creating", e))?
        } else {
            let opts = object_store::PutOptions {
                mode: object_store::PutMode::Create,
                ..Default::default()
            };
            match self
                .sink
                .store()
                .put_opts(&self.sink.path(rel), PutPayload::from(bytes.clone()), opts)
                .await
            {
                Ok(_) => true,
                Err(object_store::Error::AlreadyExists { .. }) | Err(object_store::Error::Precondition { .. }) => false,
                Err(object_store::Error::NotImplemented { .. }) => {
                    self.write(rel, bytes).await?;
                    true
                }
                Err(e) => return Err(StateError::io(rel, "creating", e)),
            }
        };
        if created {
            return Ok(doc.clone());
        }
        let vanished = || {
            let e = std::io::Error::new(std::io::ErrorKind::NotFound, "the document vanished while it was being created");
            StateError::io(rel, "creating", e)
        };
        self.read_doc(rel).await?.ok_or_else(vanished)
    }

    /// Records an export appended to the job unless a run (another shard)
    /// did first; returns whichever record won, so every shard freezes the
    /// same window for it.
    pub async fn create_added_export(&self, doc: &AddedExport) -> Result<AddedExport, StateError> {
        self.create_doc(&format!("{}/exports/e{}.json", self.dir, doc.export), doc).await
    }

    fn mark_path(&self, export: usize, chain: Chain) -> String {
        format!("{}/marks/e{export}-{chain}.json", self.dir)
    }

    /// The high-water mark of an incremental export on a chain.
    pub async fn load_mark(&self, export: usize, chain: Chain) -> Result<Option<Mark>, StateError> {
        self.read_doc(&self.mark_path(export, chain)).await
    }

    /// Every high-water mark of the job.
    pub async fn load_marks(&self) -> Result<Vec<Mark>, StateError> {
        self.load_dir("marks").await
    }

    /// Every JSON document under `<job>/<sub>/`.
    async fn load_dir<T: DeserializeOwned + Versioned>(&self, sub: &str) -> Result<Vec<T>, StateError> {
        let mut out = Vec::new();
        for m in self.list(&format!("{}/{sub}", self.dir)).await? {
            let rel = self.sink.rel_of(&m.location);
            if rel.ends_with(".json")
                && let Some(doc) = self.read_doc::<T>(&rel).await?
            {
                out.push(doc);
            }
        }
        Ok(out)
    }

    /// Writes a high-water mark atomically.
    pub async fn save_mark(&self, mark: &Mark) -> Result<(), StateError> {
        self.write_doc(&self.mark_path(mark.export, mark.chain), mark).await
    }

    /// Where a pending segment is stored: one per export and chain for
    /// incremental exports (so that concurrent shards cut the same one),
    /// one per period for aligned exports.
    fn segment_path(&self, seg: &Segment) -> String {
        match seg.chain {
            Some(c) => format!("{}/segments/e{}-{c}.json", self.dir, seg.export),
            None => format!("{}/segments/{}.json", self.dir, seg.id()),
        }
    }

    /// Pending segments, oldest first.
    pub async fn load_segments(&self) -> Result<Vec<Segment>, StateError> {
        let mut out: Vec<SegmentDoc> = self.load_dir("segments").await?;
        out.sort_by(|a, b| a.created_at.cmp(&b.created_at).then_with(|| a.segment.id().cmp(&b.segment.id())));
        Ok(out.into_iter().map(|d| d.segment).collect())
    }

    /// Records a pending segment unless one is already pending in its place;
    /// returns the one that is.
    pub async fn create_segment(&self, seg: &Segment) -> Result<Segment, StateError> {
        let doc = SegmentDoc {
            version: STATE_VERSION,
            segment: seg.clone(),
            created_at: chrono::Utc::now().to_rfc3339(),
        };
        Ok(self.create_doc(&self.segment_path(seg), &doc).await?.segment)
    }

    /// Forgets a pending segment (complete, or replaced by a reorg repair).
    pub async fn remove_segment(&self, seg: &Segment) -> Result<(), StateError> {
        self.sink.delete(&self.segment_path(seg)).await?;
        Ok(())
    }

    fn period_path(&self, seg: &Segment) -> String {
        format!("{}/periods/{}.json", self.dir, seg.id())
    }

    /// Whether an aligned period was exported completely.
    pub async fn period_done(&self, seg: &Segment) -> Result<bool, StateError> {
        Ok(self.read(&self.period_path(seg)).await?.is_some())
    }

    /// The aligned periods exported completely, oldest first.
    pub async fn load_periods(&self) -> Result<Vec<Segment>, StateError> {
        let mut out: Vec<Segment> = self
            .load_dir::<SegmentDoc>("periods")
            .await?
            .into_iter()
            .map(|d| d.segment)
            .collect();
        out.sort_by_key(|s| (s.export, s.id()));
        Ok(out)
    }

    /// Records an aligned period as complete.
    pub async fn save_period_done(&self, seg: &Segment) -> Result<(), StateError> {
        let doc = SegmentDoc {
            version: STATE_VERSION,
            segment: seg.clone(),
            created_at: chrono::Utc::now().to_rfc3339(),
        };
        self.write_doc(&self.period_path(seg), &doc).await
    }

    /// Deletes one data file (reorg repair).
    pub async fn delete_data(&self, rel: &str) -> Result<(), StateError> {
        Ok(self.sink.delete(rel).await?)
    }

    /// Deletes unit checkpoints that a completed segment no longer needs.
    pub async fn delete_units(&self, ids: &[String]) -> Result<(), StateError> {
        for id in ids {
            self.sink.delete(&format!("{}/units/{id}.json", self.dir)).await?;
        }
        Ok(())
    }

    /// This job's committed data files of units whose id starts with
    /// `unit_prefix`: `(rel, unit)`.
    pub async fn unit_files(&self, dataset: Dataset, unit_prefix: &str) -> Result<Vec<(String, String)>, StateError> {
        let set = HashSet::from([dataset]);
        Ok(self
            .data_files(&set)
            .await?
            .into_iter()
            .filter(|(_, unit, _)| unit.starts_with(unit_prefix))
            .map(|(rel, unit, _)| (rel, unit))
            .collect())
    }
}
