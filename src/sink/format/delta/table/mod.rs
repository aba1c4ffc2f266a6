//! Delta Lake tables over the output's storage: a table at
//! `<output>/<table>/` with `_delta_log/`, created with its schema and
//! partition columns, and changed in commits that may add files, remove
//! files and record transaction identifiers (`txn`: application id and
//! version) — which is what lets a writer learn from the log whether its
//! files are in.
//!
//! # Protocol
//!
//! Reader version 1, writer version 2: the lowest that carry `txn`
//! actions and non-null columns; no table features, so every Delta reader
//! (delta-rs, Polars, DuckDB's delta extension, Spark with delta-spark)
//! reads the tables. Log checkpoints are classic single-file (V1)
//! checkpoints, written every [`Table::checkpoint_interval`] commits.
//!
//! # Written here rather than by `delta_kernel`
//!
//! - **The table's first commit** (`protocol` + `metaData`, version 0):
//!   `delta_kernel` 0.30's create-table builder is behind its unstable
//!   `internal-api` feature. The document is small and fixed: the protocol
//!   above, the schema in Delta's JSON form, the partition columns and
//!   `delta.checkpointInterval`. It is created with create-if-absent, so
//!   concurrent creators agree on one.
//! - **The add actions' metadata**: our files are written by `sink`, not
//!   by the kernel's Parquet writer, so their `add` rows (path relative to
//!   the table, partition values, size, time, statistics) are built here
//!   ([`AddFile`]).
//!
//! - **A commit that replaces the table's layout** ([`Table::replace`]):
//!   new partition columns or column types, with every file of the table
//!   written again in one commit (`metaData` + removes + adds + `txn`).
//!   The kernel's transactions change metadata only by adding columns.
//!   The commit is put-if-absent at the next version, as the kernel's are.
//!
//! - **What vacuum needs from the log**: which files were removed after a
//!   cutoff ([`Table::removed_since`], read from the commit files written
//!   since), and deleting expired log files ([`Table::clean_log`]).
//!   `delta_kernel` 0.30 has neither a vacuum nor a log cleanup.
//!
//! Everything else — reading the log, snapshots, committing by
//! put-if-absent of `_delta_log/<version>.json`, transaction identifiers,
//! removes, checkpoints and `_last_checkpoint` — is the kernel's. Its calls
//! block (its engine runs I/O on a background runtime of its own): async
//! callers run them on a blocking thread through [`Table::blocking`]. Its
//! engine reads through [`commit_cache`], so a process reads each commit
//! file from storage once, not once a question it asks of the log.

pub use crate::sink::format::LiveFile;
use crate::storage::{Storage, StorageError};
use arrow_array::{Array, ArrayRef, StringArray};
use arrow_schema::Schema;
use delta_kernel::Snapshot;
use delta_kernel::committer::FileSystemCommitter;
use delta_kernel::engine::arrow_data::ArrowEngineData;
use delta_kernel::engine_data::FilteredEngineData;
use delta_kernel::snapshot::SnapshotRef;
use delta_kernel::transaction::{CommitResult, UpdateTableOperation};
use delta_kernel_default_engine::DefaultEngine;
use delta_kernel_default_engine::executor::tokio::TokioMultiThreadExecutor;
use std::collections::HashSet;
use std::sync::Arc;

mod actions;
mod commit_cache;
mod log;
#[cfg(test)]
mod tests;

use actions::{add_batch, first_commit, replace_commit};
pub use actions::{delta_columns, delta_field, partition_values};

/// Who writes the commits (`commitInfo.engineInfo`).
const ENGINE_INFO: &str = concat!("chainetl/", env!("CARGO_PKG_VERSION"));

/// Errors of the Delta log.
#[derive(Debug, thiserror::Error)]
pub enum DeltaError {
    /// The kernel refused or failed.
    #[error("delta table {table}: {source}")]
    Kernel {
        /// The table's path under the output.
        table: String,
        /// Cause.
        #[source]
        source: delta_kernel::KernelError,
    },
    /// Reading or writing the log failed.
    #[error("delta table {table}: {source}")]
    Storage {
        /// The table's path under the output.
        table: String,
        /// Cause.
        #[source]
        source: StorageError,
    },
    /// The change cannot be made as asked.
    #[error("delta table {table}: {message}")]
    Refused {
        /// The table's path under the output.
        table: String,
        /// What is wrong.
        message: String,
    },
}

/// Statistics of one column of a file, for data skipping.
#[derive(Debug, Clone)]
pub struct ColumnStats {
    /// Column name.
    pub name: String,
    /// The smallest value: a one-row array of the column's type (null when
    /// every value is null).
    pub min: ArrayRef,
    /// The largest value, likewise.
    pub max: ArrayRef,
    /// Null values.
    pub nulls: u64,
}

/// A file joining the table, as its `add` action records it.
#[derive(Debug, Clone)]
pub struct AddFile {
    /// Path relative to the table's root (`chain=base/date=…/x.parquet`).
    pub path: String,
    /// Partition column → value, as in the path.
    pub partition_values: Vec<(String, String)>,
    /// Bytes.
    pub size: u64,
    /// Rows (`stats.numRecords`).
    pub rows: u64,
    /// Milliseconds since the epoch.
    pub modification_time: i64,
    /// Per-column statistics; every file of one commit has the same
    /// columns in the same order.
    pub stats: Vec<ColumnStats>,
}

/// Files joining the table together with the transaction identifier
/// that says they did.
#[derive(Debug, Clone, Default)]
pub struct Part {
    /// The files.
    pub adds: Vec<AddFile>,
    /// `(application id, version)`: recorded in the commit that adds
    /// `adds`; a part whose application already has this version (or a
    /// later one) in the log is in, and is left out.
    pub txn: Option<(String, i64)>,
}

/// How a table is laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Partition columns, in order.
    pub partitions: Vec<String>,
    /// Every column and its Delta type, in order.
    pub columns: Vec<(String, serde_json::Value)>,
    /// Whether the table drops transaction ids after a while
    /// (`delta.setTransactionRetentionDuration`): then the log no longer
    /// says whether old files were added.
    pub forgets_transactions: bool,
}

/// One commit's worth of change.
#[derive(Debug, Clone, Default)]
pub struct Change {
    /// Files joining the table.
    pub parts: Vec<Part>,
    /// Files leaving it (paths relative to the table); each must be in the
    /// current version, or the commit is refused. When the parts carry
    /// transaction ids and all of them are in the log, the removes are
    /// taken as made too, and nothing is committed.
    pub removes: Vec<String>,
    /// True when the change rearranges rows without changing them
    /// (compaction: `dataChange = false`).
    pub rearranges: bool,
    /// Whether parts may already be in the log (files published again
    /// after a crash), so their transaction ids are checked before the
    /// first attempt too, not only after a conflict.
    pub may_be_in: bool,
}

/// One Delta table of the output.
pub struct Table {
    rel: String,
    url: url::Url,
    engine: Arc<DefaultEngine<TokioMultiThreadExecutor>>,
    /// The last snapshot this process saw, brought up to date before each
    /// use (reading only the log written since, not the whole log).
    last: std::sync::Mutex<Option<SnapshotRef>>,
    /// The layout a writer checked its files against ([`Table::layout`]):
    /// every commit checks the table still has it, so files of one layout
    /// never join a table another process has given another.
    checked: std::sync::Mutex<Option<Layout>>,
    checkpoint_interval: u64,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Table({})", self.rel)
    }
}

impl Table {
    /// The table at `rel` (a dataset's or decoded table's folder) of
    /// `storage`, checkpointing every `checkpoint_interval` commits.
    pub fn new(storage: &Storage, rel: &str, checkpoint_interval: u64) -> Table {
        let (url, store) = storage.table_location(rel);
        // Each commit file is read from storage once a process: the
        // kernel reads the log since the checkpoint for every question.
        let store: Arc<dyn object_store::ObjectStore> = Arc::new(commit_cache::CommitCache::new(store));
        let engine = DefaultEngine::builder(store).with_task_executor(executor()).build();
        Table {
            rel: rel.trim_matches('/').to_string(),
            url,
            engine: Arc::new(engine),
            last: std::sync::Mutex::new(None),
            checked: std::sync::Mutex::new(None),
            checkpoint_interval: checkpoint_interval.max(1),
        }
    }

    /// Runs `call` — kernel calls, which block until their I/O is done —
    /// on a blocking thread.
    pub async fn blocking<T: Send + 'static>(
        self: &Arc<Self>,
        call: impl FnOnce(&Table) -> Result<T, DeltaError> + Send + 'static,
    ) -> Result<T, DeltaError> {
        let t = self.clone();
        tokio::task::spawn_blocking(move || call(&t))
            .await
            .unwrap_or_else(|e| Err(self.refused(format!("the thread reading its log failed: {e}"))))
    }

    /// The table's path under the output.
    pub fn rel(&self) -> &str {
        &self.rel
    }

    fn kernel(&self, source: delta_kernel::KernelError) -> DeltaError {
        DeltaError::Kernel {
            table: self.rel.clone(),
            source,
        }
    }

    fn refused(&self, message: impl Into<String>) -> DeltaError {
        DeltaError::Refused {
            table: self.rel.clone(),
            message: message.into(),
        }
    }

    /// Whether the table has a log (its first commit).
    /// (Its log, not its first commit, which log cleanup deletes once a
    /// checkpoint covers it.)
    /// Only commits and checkpoints count: a writer's temporary file
    /// beside the first commit (another shard creating the table) is no
    /// table yet.
    pub async fn exists(&self, storage: &Storage) -> Result<bool, DeltaError> {
        Ok(self.log_files(storage).await?.iter().any(|m| {
            log::commit_version(&m.location).is_some()
                || m.location
                    .filename()
                    .is_some_and(|n| n.ends_with(".checkpoint.parquet") || n == "_last_checkpoint")
        }))
    }

    /// Creates the table — version 0, its schema and partition columns —
    /// unless it exists. Whether this call created it.
    pub async fn create_if_absent(&self, storage: &Storage, schema: &Schema, partition_columns: &[String]) -> Result<bool, DeltaError> {
        if self.exists(storage).await? {
            return Ok(false);
        }
        let doc = first_commit(schema, partition_columns, self.checkpoint_interval).map_err(|m| self.refused(m))?;
        let rel = format!("{}/_delta_log/{:020}.json", self.rel, 0);
        storage
            .create_if_absent(&rel, doc.into_bytes())
            .await
            .map_err(|source| DeltaError::Storage {
                table: self.rel.clone(),
                source,
            })
    }

    /// The table as it is now: the last snapshot seen, updated with the
    /// commits since, or read whole the first time.
    pub fn snapshot(&self) -> Result<SnapshotRef, DeltaError> {
        let last = self.last.lock().ok().and_then(|l| l.clone());
        let snapshot = match last {
            Some(s) => Snapshot::builder_from(s).build(self.engine.as_ref()),
            None => Snapshot::builder_for(self.url.as_str()).build(self.engine.as_ref()),
        }
        .map_err(|e| self.kernel(e))?;
        self.remember(&snapshot);
        Ok(snapshot)
    }

    fn remember(&self, snapshot: &SnapshotRef) {
        if let Ok(mut l) = self.last.lock()
            && l.as_ref().is_none_or(|s| s.version() <= snapshot.version())
        {
            *l = Some(snapshot.clone());
        }
    }

    /// The table's partition columns and columns, to check a writer
    /// agrees with the table it writes to.
    /// Remembered as the layout this process's commits expect.
    pub fn layout(&self) -> Result<Layout, DeltaError> {
        let layout = layout_of(&self.snapshot()?);
        if let Ok(mut c) = self.checked.lock() {
            *c = Some(layout.clone());
        }
        Ok(layout)
    }

    /// Refuses a commit on `snapshot` when the table no longer has the
    /// layout this process checked: other partition columns, or a column
    /// it checked gone or of another type (columns added since are fine:
    /// files without them read them as null).
    fn still_laid_out(&self, snapshot: &SnapshotRef) -> Result<(), DeltaError> {
        let Some(checked) = self.checked.lock().ok().and_then(|c| c.clone()) else {
            return Ok(());
        };
        let now = layout_of(snapshot);
        if now.partitions != checked.partitions || checked.columns.iter().any(|c| !now.columns.contains(c)) {
            return Err(self.refused(format!(
                "layout: the table's partition columns or column types changed at version {} while this run wrote \
                 to it (another job sharing the output changed its partition_by or hash_encoding?): these files \
                 are of the old layout; re-run, and the run says what to change",
                snapshot.version()
            )));
        }
        Ok(())
    }

    /// The last version recorded for application `app_id`, if any.
    pub fn app_version(&self, app_id: &str) -> Result<Option<i64>, DeltaError> {
        let snapshot = self.snapshot()?;
        snapshot
            .get_app_id_version(app_id, self.engine.as_ref())
            .map_err(|e| self.kernel(e))
    }

    /// Whether application `app` has `version` (or a later one) in the
    /// log of `snapshot`: its part of a change is in.
    fn logged(&self, snapshot: &SnapshotRef, app: &str, version: i64) -> Result<bool, DeltaError> {
        Ok(snapshot
            .get_app_id_version(app, self.engine.as_ref())
            .map_err(|e| self.kernel(e))?
            .is_some_and(|v| v >= version))
    }

    /// The files of the current version.
    pub fn live_files(&self) -> Result<Vec<LiveFile>, DeltaError> {
        self.live_files_of(&self.snapshot()?)
    }

    /// The files of `snapshot`.
    fn live_files_of(&self, snapshot: &SnapshotRef) -> Result<Vec<LiveFile>, DeltaError> {
        let scan = snapshot.clone().scan_builder().build().map_err(|e| self.kernel(e))?;
        let mut out = Vec::new();
        for meta in scan.scan_metadata(self.engine.as_ref()).map_err(|e| self.kernel(e))? {
            let meta = meta.map_err(|e| self.kernel(e))?;
            out = meta
                .visit_scan_files(out, |out: &mut Vec<LiveFile>, f| {
                    out.push(LiveFile {
                        path: f.path,
                        size: f.size.max(0) as u64,
                        rows: f.stats.map(|s| s.num_records),
                    })
                })
                .map_err(|e| self.kernel(e))?;
        }
        Ok(out)
    }

    /// Makes `change` in one commit on the current version; a version
    /// conflict (another writer's commit landed first) is retried on the
    /// new version, up to `attempts` times, leaving out the parts the log
    /// says are in by then. Returns the version committed, or the current
    /// one when nothing was left to commit.
    pub fn commit(&self, change: &Change, attempts: u32) -> Result<u64, DeltaError> {
        let operation = if change.rearranges {
            UpdateTableOperation::Optimize
        } else if change.removes.is_empty() {
            UpdateTableOperation::Write
        } else {
            UpdateTableOperation::Delete
        };
        for attempt in 0..attempts.max(1) {
            let snapshot = self.snapshot()?;
            self.still_laid_out(&snapshot)?;
            let mut parts: Vec<&Part> = Vec::new();
            for part in &change.parts {
                let is_in = match &part.txn {
                    Some((app, version)) if attempt > 0 || change.may_be_in => self.logged(&snapshot, app, *version)?,
                    _ => false,
                };
                if !is_in {
                    parts.push(part);
                }
            }
            // Removes go with the parts' transaction ids: once every part
            // of a change that has them is in, so are its removes (a swap
            // committed by a run that died before recording it).
            let has_txn = change.parts.iter().any(|p| p.txn.is_some());
            if parts.is_empty() && (change.removes.is_empty() || has_txn) {
                return Ok(snapshot.version());
            }
            let adds: Vec<AddFile> = parts.iter().flat_map(|p| p.adds.iter().cloned()).collect();
            let adds = if adds.is_empty() {
                None
            } else {
                Some(add_batch(&adds).map_err(|m| self.refused(m))?)
            };
            let mut txn = snapshot
                .clone()
                .update_table(operation.clone(), ENGINE_INFO, !change.rearranges)
                .build(self.engine.as_ref(), Box::new(FileSystemCommitter::new()))
                .map_err(|e| self.kernel(e))?;
            for (app, version) in parts.iter().filter_map(|p| p.txn.as_ref()) {
                txn = txn.with_transaction_id(app.clone(), *version);
            }
            if !change.removes.is_empty() {
                for data in self.removals(&snapshot, &change.removes)? {
                    txn.remove_files(data);
                }
            }
            if let Some(batch) = adds {
                txn.add_files(Box::new(ArrowEngineData::new(batch)));
            }
            match txn.commit(self.engine.as_ref()).map_err(|e| self.kernel(e))? {
                CommitResult::Committed(c) => {
                    let version = c.commit_version();
                    if let Some(s) = c.post_commit_snapshot() {
                        self.remember(s);
                        if version > 0 && version % self.checkpoint_interval == 0 {
                            self.checkpoint(s);
                        }
                    }
                    return Ok(version);
                }
                CommitResult::Conflicted(_) | CommitResult::Retryable(_) => {
                    // Writers that collided back off apart (a blocking
                    // thread: the kernel's calls block anyway).
                    std::thread::sleep(backoff(attempt));
                }
            }
        }
        Err(self.refused(format!(
            "no commit landed in {attempts} attempts (other writers kept committing first); retry the run"
        )))
    }

    /// Adds the columns `fields` (Delta's JSON form of a column: name,
    /// type, `nullable: true`, metadata) that the table lacks, in one
    /// metadata-only commit (`ALTER TABLE`, `dataChange = false`): files
    /// written before read them as null. A conflict with another writer is
    /// retried on the new version, adding only what is still missing.
    /// Returns the version committed, or None when nothing was missing.
    pub fn add_columns(&self, fields: &[serde_json::Value], attempts: u32) -> Result<Option<u64>, DeltaError> {
        for attempt in 0..attempts.max(1) {
            let snapshot = self.snapshot()?;
            let schema = snapshot.schema();
            // One another writer added meanwhile must have the type asked for.
            for f in fields {
                if let Some(h) = f["name"].as_str().and_then(|n| schema.field(n)) {
                    let ty = serde_json::to_value(h.data_type()).unwrap_or_default();
                    if ty != f["type"] {
                        return Err(self.refused(format!(
                            "layout: column {} has type {ty} in the table; this job writes {}",
                            h.name(),
                            f["type"]
                        )));
                    }
                }
            }
            let have: HashSet<String> = schema.fields().map(|f| f.name().to_string()).collect();
            let missing: Vec<&serde_json::Value> = fields
                .iter()
                .filter(|f| f["name"].as_str().is_some_and(|n| !have.contains(n)))
                .collect();
            if missing.is_empty() {
                return Ok(None);
            }
            let mut builder = snapshot.clone().update_table(UpdateTableOperation::AlterTable, ENGINE_INFO, false);
            for f in missing {
                let field: delta_kernel::schema::StructField =
                    serde_json::from_value(f.clone()).map_err(|e| self.refused(format!("layout: column {f}: {e}")))?;
                builder = builder.add_column(field);
            }
            // A change the kernel will not make (a name differing only in
            // case, a table with column mapping) is for the user to fix.
            let txn = builder
                .build(self.engine.as_ref(), Box::new(FileSystemCommitter::new()))
                .map_err(|e| self.refused(format!("layout: the columns cannot be added: {e}")))?;
            match txn.commit(self.engine.as_ref()).map_err(|e| self.kernel(e))? {
                CommitResult::Committed(c) => {
                    if let Some(s) = c.post_commit_snapshot() {
                        self.remember(s);
                    }
                    self.layout()?;
                    return Ok(Some(c.commit_version()));
                }
                CommitResult::Conflicted(_) | CommitResult::Retryable(_) => {
                    std::thread::sleep(backoff(attempt));
                }
            }
        }
        Err(self.refused(format!(
            "no commit adding columns landed in {attempts} attempts (other writers kept committing first); retry the run"
        )))
    }

    /// Makes `change` in one commit that also gives the table `schema`
    /// (partition columns included) and `partitions`: a layout the
    /// kernel's transactions cannot change to (other partition columns,
    /// columns removed or of another type). The current version's files
    /// must be exactly `change.removes` — every file is written again in
    /// the new layout, so a file left out would be read in the old one.
    /// Idempotent as [`Table::commit`]: once every part's transaction id is
    /// in the log, nothing is committed. A version conflict is retried on
    /// the new version, up to `attempts` times. Returns the version.
    pub async fn replace(
        self: &Arc<Self>,
        storage: &Storage,
        change: Change,
        schema: Arc<Schema>,
        partitions: Vec<String>,
        attempts: u32,
    ) -> Result<u64, DeltaError> {
        let change = Arc::new(change);
        for attempt in 0..attempts.max(1) {
            let (c, s, p) = (change.clone(), schema.clone(), partitions.clone());
            let (version, doc) = self.blocking(move |t| t.replacement(&c, &s, &p)).await?;
            let Some(doc) = doc else {
                return Ok(version);
            };
            let rel = format!("{}/_delta_log/{version:020}.json", self.rel);
            let created = storage
                .create_if_absent(&rel, doc.into_bytes())
                .await
                .map_err(|source| DeltaError::Storage {
                    table: self.rel.clone(),
                    source,
                })?;
            if created {
                self.blocking(move |t| {
                    let s = t.snapshot()?;
                    if version > 0 && version % t.checkpoint_interval == 0 {
                        t.checkpoint(&s);
                    }
                    t.layout().map(|_| ())
                })
                .await?;
                return Ok(version);
            }
            tokio::time::sleep(backoff(attempt)).await;
        }
        Err(self.refused(format!(
            "no commit replacing the layout landed in {attempts} attempts (other writers kept committing first); retry the run"
        )))
    }

    /// The version [`Table::replace`] would commit and its document; no
    /// document when every part's transaction id is in the log already.
    fn replacement(&self, change: &Change, schema: &Schema, partitions: &[String]) -> Result<(u64, Option<String>), DeltaError> {
        let snapshot = self.snapshot()?;
        let txns: Vec<(String, i64)> = change.parts.iter().filter_map(|p| p.txn.clone()).collect();
        let mut made = !txns.is_empty();
        for (app, version) in &txns {
            made &= self.logged(&snapshot, app, *version)?;
        }
        if made {
            return Ok((snapshot.version(), None));
        }
        // Only tables as chainetl makes them: no table features (deletion
        // vectors, column mapping, in-commit timestamps) this document
        // would have to honour, and not append-only.
        let protocol = serde_json::to_value(snapshot.table_configuration().protocol()).unwrap_or_default();
        let current = serde_json::to_value(snapshot.table_configuration().metadata())
            .map_err(|e| self.refused(format!("the table's metadata: {e}")))?;
        let (reader, writer) = (protocol["minReaderVersion"].as_i64(), protocol["minWriterVersion"].as_i64());
        let append_only = current["configuration"]["delta.appendOnly"]
            .as_str()
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        if reader.is_none_or(|r| r > 1) || writer.is_none_or(|w| w > 2) || append_only {
            return Err(self.refused(format!(
                "layout: the table (protocol reader {}, writer {}{}) is not one chainetl can re-lay out: give the job \
                 an output of its own, or keep its partition_by and hash_encoding",
                reader.unwrap_or_default(),
                writer.unwrap_or_default(),
                if append_only { ", append-only" } else { "" }
            )));
        }
        let live = self.live_files_of(&snapshot)?;
        let wanted: HashSet<&str> = change.removes.iter().map(String::as_str).collect();
        if let Some(other) = live.iter().find(|f| !wanted.contains(f.path.as_str())) {
            return Err(self.refused(format!(
                "layout: {} is in the table but not written again in the new layout (another job's, added after this \
                 rewrite began?): the rewrite cannot finish while the table holds it. Give that job an output of its \
                 own (`chainetl run --fresh` of its spec deletes its files here), then re-run this one",
                other.path
            )));
        }
        if let Some(missing) = wanted.iter().find(|p| !live.iter().any(|f| f.path == **p)) {
            return Err(self.refused(format!(
                "cannot remove {missing}: it is not in the table's version {}",
                snapshot.version()
            )));
        }
        let adds: Vec<AddFile> = change.parts.iter().flat_map(|p| p.adds.iter().cloned()).collect();
        let doc = replace_commit(current, schema, partitions, &live, &adds, &txns).map_err(|m| self.refused(m))?;
        Ok((snapshot.version() + 1, Some(doc)))
    }

    /// Writes a checkpoint of `snapshot` (and `_last_checkpoint`). A
    /// failure costs readers only speed: it is logged, not raised.
    fn checkpoint(&self, snapshot: &SnapshotRef) {
        match snapshot.checkpoint(self.engine.as_ref(), None) {
            Ok((_, s)) => self.remember(&s),
            Err(e) => tracing::warn!(table = %self.rel, version = snapshot.version(), error = %e, "delta checkpoint failed"),
        }
    }

    /// The current version's scan rows of `paths`, selected for removal;
    /// refused when one of them is not in the table.
    fn removals(&self, snapshot: &SnapshotRef, paths: &[String]) -> Result<Vec<FilteredEngineData>, DeltaError> {
        let wanted: HashSet<&str> = paths.iter().map(String::as_str).collect();
        let mut found = HashSet::new();
        let mut out = Vec::new();
        let scan = snapshot.clone().scan_builder().build().map_err(|e| self.kernel(e))?;
        for meta in scan.scan_metadata(self.engine.as_ref()).map_err(|e| self.kernel(e))? {
            let meta = meta.map_err(|e| self.kernel(e))?;
            let (data, selected) = meta.scan_files.into_parts();
            let data = ArrowEngineData::try_from_engine_data(data).map_err(|e| self.kernel(e))?;
            let batch = data.record_batch();
            let Some(col) = batch.column_by_name("path").and_then(|c| c.as_any().downcast_ref::<StringArray>()) else {
                return Err(self.refused("the kernel's scan rows have no path column"));
            };
            let mut selection = vec![false; batch.num_rows()];
            let mut any = false;
            for (i, s) in selection.iter_mut().enumerate() {
                let live = selected.get(i).copied().unwrap_or(true);
                if live && col.is_valid(i) && wanted.contains(col.value(i)) {
                    found.insert(col.value(i).to_string());
                    *s = true;
                    any = true;
                }
            }
            if any {
                out.push(FilteredEngineData::try_new(data, selection).map_err(|e| self.kernel(e))?);
            }
        }
        if let Some(missing) = wanted.iter().find(|p| !found.contains(**p)) {
            return Err(self.refused(format!(
                "cannot remove {missing}: it is not in the table's version {}",
                snapshot.version()
            )));
        }
        Ok(out)
    }
}

/// How long a writer that lost a commit race waits before its
/// `attempt`-th retry: random up to a ceiling that doubles (10 ms to
/// 640 ms), so writers that collided back off apart.
fn backoff(attempt: u32) -> std::time::Duration {
    let ceiling = 10u64 << attempt.min(6);
    std::time::Duration::from_millis(fastrand::u64(1..=ceiling))
}

/// How the table of `snapshot` is laid out.
fn layout_of(snapshot: &SnapshotRef) -> Layout {
    Layout {
        partitions: snapshot.table_configuration().metadata().partition_columns().to_vec(),
        columns: snapshot
            .schema()
            .fields()
            .map(|f| (f.name().to_string(), serde_json::to_value(f.data_type()).unwrap_or_default()))
            .collect(),
        forgets_transactions: snapshot.table_properties().set_transaction_retention_duration.is_some(),
    }
}

/// The runtime every table's kernel I/O runs on: one for the process, of
/// its own (the kernel blocks the calling thread until its I/O is done),
/// with more than one thread — a checkpoint writes Parquet from inside
/// the log stream it reads, which deadlocks on the kernel's default
/// single-thread background executor.
fn executor() -> Arc<TokioMultiThreadExecutor> {
    static EXECUTOR: std::sync::OnceLock<Arc<TokioMultiThreadExecutor>> = std::sync::OnceLock::new();
    EXECUTOR
        .get_or_init(|| {
            let e = TokioMultiThreadExecutor::new_owned_runtime(Some(2), None)
                .unwrap_or_else(|e| panic!("cannot start the Delta log's runtime: {e}"));
            Arc::new(e)
        })
        .clone()
}
