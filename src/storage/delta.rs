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
//! - **What vacuum needs from the log**: which files were removed after a
//!   cutoff ([`Table::removed_since`], read from the commit files written
//!   since), and deleting expired log files ([`Table::clean_log`]).
//!   `delta_kernel` 0.30 has neither a vacuum nor a log cleanup.
//!
//! Everything else — reading the log, snapshots, committing by
//! put-if-absent of `_delta_log/<version>.json`, transaction identifiers,
//! removes, checkpoints and `_last_checkpoint` — is the kernel's. Its calls
//! block (its engine runs I/O on a background runtime of its own): callers
//! run them on a blocking thread.

use super::{Storage, StorageError};
use arrow_array::builder::{MapBuilder, MapFieldNames, StringBuilder};
use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Schema};
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

/// A file of the table's current version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveFile {
    /// Path relative to the table's root.
    pub path: String,
    /// Bytes, as recorded.
    pub size: u64,
    /// Rows, as recorded (`stats.numRecords`), if recorded.
    pub rows: Option<u64>,
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

/// `schema`'s columns and their Delta types, as [`Layout::columns`].
pub fn delta_columns(schema: &Schema) -> Result<Vec<(String, serde_json::Value)>, String> {
    schema
        .fields()
        .iter()
        .map(|f| Ok((f.name().clone(), delta_type(f.data_type())?)))
        .collect()
}

/// One commit's worth of change.
#[derive(Debug, Clone, Default)]
pub struct Change {
    /// Files joining the table.
    pub parts: Vec<Part>,
    /// Files leaving it (paths relative to the table); each must be in the
    /// current version, or the commit is refused.
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
        let engine = DefaultEngine::builder(store).with_task_executor(executor()).build();
        Table {
            rel: rel.trim_matches('/').to_string(),
            url,
            engine: Arc::new(engine),
            last: std::sync::Mutex::new(None),
            checkpoint_interval: checkpoint_interval.max(1),
        }
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
    pub async fn exists(&self, storage: &Storage) -> Result<bool, DeltaError> {
        let rel = format!("{}/_delta_log/{:020}.json", self.rel, 0);
        match storage.get(&rel).await {
            Ok(v) => Ok(v.is_some()),
            Err(source) => Err(DeltaError::Storage {
                table: self.rel.clone(),
                source,
            }),
        }
    }

    /// Creates the table — version 0, its schema and partition columns —
    /// unless it exists. Whether this call created it.
    pub async fn create_if_absent(&self, storage: &Storage, schema: &Schema, partition_columns: &[String]) -> Result<bool, DeltaError> {
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
    pub fn layout(&self) -> Result<Layout, DeltaError> {
        let snapshot = self.snapshot()?;
        Ok(Layout {
            partitions: snapshot.table_configuration().metadata().partition_columns().to_vec(),
            columns: snapshot
                .schema()
                .fields()
                .map(|f| (f.name().to_string(), serde_json::to_value(f.data_type()).unwrap_or_default()))
                .collect(),
            forgets_transactions: snapshot.table_properties().set_transaction_retention_duration.is_some(),
        })
    }

    /// The last version recorded for application `app_id`, if any.
    pub fn app_version(&self, app_id: &str) -> Result<Option<i64>, DeltaError> {
        let snapshot = self.snapshot()?;
        snapshot
            .get_app_id_version(app_id, self.engine.as_ref())
            .map_err(|e| self.kernel(e))
    }

    /// The files of the current version.
    pub fn live_files(&self) -> Result<Vec<LiveFile>, DeltaError> {
        let snapshot = self.snapshot()?;
        let scan = snapshot.scan_builder().build().map_err(|e| self.kernel(e))?;
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
            let mut parts: Vec<&Part> = Vec::new();
            for part in &change.parts {
                let is_in = match &part.txn {
                    Some((app, version)) if attempt > 0 || change.may_be_in => snapshot
                        .get_app_id_version(app, self.engine.as_ref())
                        .map_err(|e| self.kernel(e))?
                        .is_some_and(|v| v >= *version),
                    _ => false,
                };
                if !is_in {
                    parts.push(part);
                }
            }
            if parts.is_empty() && change.removes.is_empty() {
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
                    let ceiling = 10u64 << attempt.min(6);
                    std::thread::sleep(std::time::Duration::from_millis(fastrand::u64(1..=ceiling)));
                }
            }
        }
        Err(self.refused(format!(
            "no commit landed in {attempts} attempts (other writers kept committing first); retry the run"
        )))
    }

    /// Writes a checkpoint of `snapshot` (and `_last_checkpoint`). A
    /// failure costs readers only speed: it is logged, not raised.
    fn checkpoint(&self, snapshot: &SnapshotRef) {
        match snapshot.checkpoint(self.engine.as_ref(), None) {
            Ok((_, s)) => self.remember(&s),
            Err(e) => tracing::warn!(table = %self.rel, version = snapshot.version(), error = %e, "delta checkpoint failed"),
        }
    }

    /// Paths (relative to the table) of the files removed by commits at or
    /// after `cutoff_ms` (milliseconds since the epoch): files a version
    /// within the retention still reads. Only commit files written after
    /// the cutoff (less a minute of clock slack) are read.
    pub async fn removed_since(&self, storage: &Storage, cutoff_ms: i64) -> Result<HashSet<String>, DeltaError> {
        let mut out = HashSet::new();
        for m in self.log_files(storage).await? {
            if m.last_modified.timestamp_millis() < cutoff_ms - 60_000 || commit_version(&m.location).is_none() {
                continue;
            }
            let rel = storage.rel_of(&m.location);
            let Some(obj) = storage.get(&rel).await.map_err(|source| self.storage_error(source))? else {
                continue;
            };
            for line in obj.bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let Ok(action) = serde_json::from_slice::<serde_json::Value>(line) else {
                    return Err(self.refused(format!("{rel}: a line is not JSON")));
                };
                let remove = &action["remove"];
                if let Some(path) = remove["path"].as_str()
                    && remove["deletionTimestamp"].as_i64().is_none_or(|t| t >= cutoff_ms)
                {
                    out.insert(path.to_string());
                }
            }
        }
        Ok(out)
    }

    /// Deletes the log files no version at or after `cutoff_ms` needs:
    /// commits and checkpoints older than the newest checkpoint at or
    /// before the oldest such version, written before the cutoff. Returns
    /// how many it deleted.
    pub async fn clean_log(&self, storage: &Storage, cutoff_ms: i64) -> Result<usize, DeltaError> {
        let files = self.log_files(storage).await?;
        let commits: Vec<(u64, i64)> = files
            .iter()
            .filter_map(|m| Some((commit_version(&m.location)?, m.last_modified.timestamp_millis())))
            .collect();
        let checkpoints: Vec<u64> = files.iter().filter_map(|m| checkpoint_version(&m.location)).collect();
        // The oldest version a reader within the retention may ask for.
        let Some(oldest) = commits.iter().filter(|(_, t)| *t >= cutoff_ms).map(|(v, _)| *v).min() else {
            return Ok(0);
        };
        let Some(keep_from) = checkpoints.iter().copied().filter(|c| *c <= oldest).max() else {
            return Ok(0);
        };
        let mut deleted = 0;
        for m in &files {
            let old = m.last_modified.timestamp_millis() < cutoff_ms;
            let expired = commit_version(&m.location)
                .or_else(|| checkpoint_version(&m.location))
                .or_else(|| crc_version(&m.location))
                .is_some_and(|v| v < keep_from);
            if old && expired {
                storage
                    .delete(&storage.rel_of(&m.location))
                    .await
                    .map_err(|source| self.storage_error(source))?;
                deleted += 1;
            }
        }
        Ok(deleted)
    }

    async fn log_files(&self, storage: &Storage) -> Result<Vec<object_store::ObjectMeta>, DeltaError> {
        storage
            .list(&format!("{}/_delta_log/", self.rel))
            .await
            .map_err(|source| self.storage_error(source))
    }

    fn storage_error(&self, source: StorageError) -> DeltaError {
        DeltaError::Storage {
            table: self.rel.clone(),
            source,
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

/// The version of a commit file (`<20 digits>.json`).
fn commit_version(p: &object_store::path::Path) -> Option<u64> {
    let name = p.filename()?;
    let v = name.strip_suffix(".json")?;
    (v.len() == 20).then(|| v.parse().ok()).flatten()
}

/// The version of a single-file checkpoint (`<20 digits>.checkpoint.parquet`).
fn checkpoint_version(p: &object_store::path::Path) -> Option<u64> {
    let v = p.filename()?.strip_suffix(".checkpoint.parquet")?;
    (v.len() == 20).then(|| v.parse().ok()).flatten()
}

/// The version of a checksum file (`<20 digits>.crc`).
fn crc_version(p: &object_store::path::Path) -> Option<u64> {
    let v = p.filename()?.strip_suffix(".crc")?;
    (v.len() == 20).then(|| v.parse().ok()).flatten()
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

/// The table's first commit: protocol and metadata, one JSON action a line.
fn first_commit(schema: &Schema, partition_columns: &[String], checkpoint_interval: u64) -> Result<String, String> {
    let fields: Vec<serde_json::Value> = schema
        .fields()
        .iter()
        .map(|f| Ok(serde_json::json!({"name": f.name(), "type": delta_type(f.data_type())?, "nullable": f.is_nullable(), "metadata": {}})))
        .collect::<Result<_, String>>()?;
    for p in partition_columns {
        if schema.field_with_name(p).is_err() {
            return Err(format!("partition column {p} is not a column of the table"));
        }
    }
    let schema_string = serde_json::json!({"type": "struct", "fields": fields}).to_string();
    let now = chrono::Utc::now().timestamp_millis();
    let protocol = serde_json::json!({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}});
    let metadata = serde_json::json!({"metaData": {
        "id": table_id(),
        "format": {"provider": "parquet", "options": {}},
        "schemaString": schema_string,
        "partitionColumns": partition_columns,
        "configuration": {"delta.checkpointInterval": checkpoint_interval.to_string()},
        "createdTime": now,
    }});
    let info = serde_json::json!({"commitInfo": {"timestamp": now, "operation": "CREATE TABLE", "engineInfo": ENGINE_INFO}});
    Ok(format!("{info}\n{protocol}\n{metadata}\n"))
}

/// A random (version 4) UUID for the table's metadata.
fn table_id() -> String {
    let mut b = [0u8; 16];
    for chunk in b.chunks_mut(8) {
        chunk.copy_from_slice(&fastrand::u64(..).to_le_bytes());
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

/// Delta's name of an Arrow type.
fn delta_type(t: &DataType) -> Result<serde_json::Value, String> {
    Ok(match t {
        DataType::Utf8 => "string".into(),
        DataType::Binary => "binary".into(),
        DataType::Boolean => "boolean".into(),
        DataType::Int32 => "integer".into(),
        DataType::Int64 => "long".into(),
        DataType::Float64 => "double".into(),
        DataType::Date32 => "date".into(),
        DataType::Decimal128(p, s) => format!("decimal({p},{s})").into(),
        DataType::Timestamp(_, Some(_)) => "timestamp".into(),
        DataType::Dictionary(_, v) => delta_type(v)?,
        DataType::List(f) => {
            serde_json::json!({"type": "array", "elementType": delta_type(f.data_type())?, "containsNull": f.is_nullable()})
        }
        other => return Err(format!("no Delta type for {other}")),
    })
}

/// The add actions' metadata for `files`, in the kernel's add-files shape.
fn add_batch(files: &[AddFile]) -> Result<RecordBatch, String> {
    let path: ArrayRef = Arc::new(StringArray::from_iter_values(files.iter().map(|f| f.path.as_str())));
    let names = MapFieldNames {
        entry: "key_value".into(),
        key: "key".into(),
        value: "value".into(),
    };
    let mut pv = MapBuilder::new(Some(names), StringBuilder::new(), StringBuilder::new());
    for f in files {
        for (k, v) in &f.partition_values {
            pv.keys().append_value(k);
            pv.values().append_value(v);
        }
        pv.append(true).map_err(|e| e.to_string())?;
    }
    let pv: ArrayRef = Arc::new(pv.finish());
    let size: ArrayRef = Arc::new(Int64Array::from_iter_values(files.iter().map(|f| f.size as i64)));
    let time: ArrayRef = Arc::new(Int64Array::from_iter_values(files.iter().map(|f| f.modification_time)));
    let stats = stats_array(files)?;
    let kv = DataType::Struct(vec![Field::new("key", DataType::Utf8, false), Field::new("value", DataType::Utf8, true)].into());
    let schema = Schema::new(vec![
        Field::new("path", DataType::Utf8, false),
        Field::new(
            "partitionValues",
            DataType::Map(Arc::new(Field::new("key_value", kv, false)), false),
            false,
        ),
        Field::new("size", DataType::Int64, false),
        Field::new("modificationTime", DataType::Int64, false),
        Field::new("stats", stats.data_type().clone(), true),
    ]);
    RecordBatch::try_new(Arc::new(schema), vec![path, pv, size, time, Arc::new(stats)]).map_err(|e| e.to_string())
}

/// `stats` of the add actions: numRecords, nullCount, minValues,
/// maxValues and tightBounds. The columns are every column any file has
/// statistics of; a file without them for a column (no bounds: every value
/// null, or a row group without statistics) has nulls there, which readers
/// take as "unknown" and never skip on.
fn stats_array(files: &[AddFile]) -> Result<StructArray, String> {
    let records: ArrayRef = Arc::new(Int64Array::from_iter_values(files.iter().map(|f| f.rows as i64)));
    let mut columns: Vec<(&str, DataType)> = Vec::new();
    for c in files.iter().flat_map(|f| &f.stats) {
        match columns.iter().find(|(n, _)| *n == c.name) {
            Some((_, t)) if t != c.min.data_type() || t != c.max.data_type() => {
                return Err(format!("statistics of {} of two types: {t} and {}", c.name, c.min.data_type()));
            }
            Some(_) => {}
            None => columns.push((c.name.as_str(), c.min.data_type().clone())),
        }
    }
    let mut nulls = Vec::new();
    let mut mins = Vec::new();
    let mut maxes = Vec::new();
    for (name, t) in &columns {
        let of = |f: &'_ AddFile| f.stats.iter().find(|c| c.name == *name).cloned();
        nulls.push((
            Arc::new(Field::new(*name, DataType::Int64, true)),
            Arc::new(Int64Array::from_iter(files.iter().map(|f| of(f).map(|c| c.nulls as i64)))) as ArrayRef,
        ));
        let unknown = arrow_array::new_null_array(t, 1);
        for (out, pick) in [(&mut mins, true), (&mut maxes, false)] {
            let parts: Vec<ArrayRef> = files
                .iter()
                .map(|f| match of(f) {
                    Some(c) if pick => c.min,
                    Some(c) => c.max,
                    None => unknown.clone(),
                })
                .collect();
            let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
            let values = arrow_select::concat::concat(&refs).map_err(|e| format!("statistics of {name}: {e}"))?;
            out.push((Arc::new(Field::new(*name, values.data_type().clone(), true)), values));
        }
    }
    let group = |cols: Vec<(Arc<Field>, ArrayRef)>| -> ArrayRef {
        if cols.is_empty() {
            Arc::new(StructArray::new_empty_fields(files.len(), None))
        } else {
            Arc::new(StructArray::from(cols))
        }
    };
    let parts: Vec<(Arc<Field>, ArrayRef)> = vec![
        (Arc::new(Field::new("numRecords", DataType::Int64, true)), records),
        (field_of("nullCount", &group(nulls.clone())), group(nulls)),
        (field_of("minValues", &group(mins.clone())), group(mins)),
        (field_of("maxValues", &group(maxes.clone())), group(maxes)),
        (
            Arc::new(Field::new("tightBounds", DataType::Boolean, true)),
            Arc::new(BooleanArray::from(vec![true; files.len()])) as ArrayRef,
        ),
    ];
    Ok(StructArray::from(parts))
}

fn field_of(name: &str, a: &ArrayRef) -> Arc<Field> {
    Arc::new(Field::new(name, a.data_type().clone(), true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(uri: &str) -> crate::spec::Output {
        crate::spec::Output {
            uri: uri.into(),
            partition_by: vec!["chain".into()],
            compression: crate::spec::Compression::Zstd(1),
            row_group_rows: 1000,
            file_rows: 1000,
            file_bytes: 1 << 20,
            commit_interval: std::time::Duration::from_secs(1),
            commit_pages: 1,
            hash_encoding: crate::spec::HashEncoding::Hex,
            memory_budget: 1 << 20,
            compact: false,
            target_file_bytes: 1 << 20,
            bloom_filters: vec![],
            endpoint: None,
            region: None,
            allow_http: None,
            format: crate::spec::OutputFormat::Delta,
            delta_retention: std::time::Duration::from_secs(7 * 24 * 3600),
        }
    }

    /// A one-column Parquet file of `n` rows at `rel`; its size.
    async fn data_file(storage: &Storage, rel: &str, n: i64) -> u64 {
        let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]));
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from_iter_values(0..n)) as ArrayRef]).unwrap();
        let mut bytes = Vec::new();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut bytes, schema, None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let size = bytes.len() as u64;
        storage.put_atomic(rel, bytes).await.unwrap();
        size
    }

    fn add(path: &str, size: u64, rows: i64) -> AddFile {
        AddFile {
            path: path.into(),
            partition_values: vec![("chain".into(), "base".into())],
            size,
            rows: rows as u64,
            modification_time: 0,
            stats: vec![ColumnStats {
                name: "n".into(),
                min: Arc::new(Int64Array::from(vec![0])),
                max: Arc::new(Int64Array::from(vec![rows - 1])),
                nulls: 0,
            }],
        }
    }

    /// A file without bounds of a column (every value null) commits with
    /// files that have them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn files_with_and_without_a_columns_bounds_commit_together() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Arc::new(Storage::open(&output(&dir.path().to_string_lossy())).unwrap());
        let schema = Schema::new(vec![
            Field::new("chain", DataType::Utf8, false),
            Field::new("n", DataType::Int64, true),
        ]);
        let t = Arc::new(Table::new(&storage, "events", 100));
        t.create_if_absent(&storage, &schema, &["chain".into()]).await.unwrap();
        let a = data_file(&storage, "events/chain=base/a.parquet", 10).await;
        let b = data_file(&storage, "events/chain=base/b.parquet", 5).await;
        let with = add("chain=base/a.parquet", a, 10);
        let without = AddFile {
            stats: Vec::new(),
            ..add("chain=base/b.parquet", b, 5)
        };
        let change = Change {
            parts: vec![Part {
                adds: vec![without, with],
                txn: None,
            }],
            ..Change::default()
        };
        let tt = t.clone();
        let v = tokio::task::spawn_blocking(move || tt.commit(&change, 4)).await.unwrap().unwrap();
        assert_eq!(v, 1);
        let log = std::fs::read_to_string(dir.path().join(format!("events/_delta_log/{:020}.json", 1))).unwrap();
        assert!(log.contains(r#"\"maxValues\":{\"n\":9}"#), "{log}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn commits_add_remove_and_record_transaction_ids_and_checkpoints_follow_the_interval() {
        let dir = tempfile::tempdir().unwrap();
        let out = output(&dir.path().to_string_lossy());
        let storage = Arc::new(Storage::open(&out).unwrap());
        let schema = Schema::new(vec![
            Field::new("chain", DataType::Utf8, false),
            Field::new("n", DataType::Int64, false),
        ]);
        let t = Arc::new(Table::new(&storage, "events", 2));
        assert!(!t.exists(&storage).await.unwrap());
        assert!(t.create_if_absent(&storage, &schema, &["chain".into()]).await.unwrap());
        assert!(!t.create_if_absent(&storage, &schema, &["chain".into()]).await.unwrap());
        assert!(t.exists(&storage).await.unwrap());
        let a = data_file(&storage, "events/chain=base/a.parquet", 10).await;
        let b = data_file(&storage, "events/chain=base/b.parquet", 5).await;
        let c = data_file(&storage, "events/chain=base/c.parquet", 15).await;
        let tt = t.clone();
        tokio::task::spawn_blocking(move || {
            let first = Change {
                parts: vec![Part {
                    adds: vec![add("chain=base/a.parquet", a, 10), add("chain=base/b.parquet", b, 5)],
                    txn: Some(("chainetl-j-u1".into(), 3)),
                }],
                ..Change::default()
            };
            assert_eq!(tt.commit(&first, 4).unwrap(), 1);
            // Published again (after a crash): the log says it is in.
            let again = Change {
                may_be_in: true,
                ..first.clone()
            };
            assert_eq!(tt.commit(&again, 4).unwrap(), 1);
            assert_eq!(tt.app_version("chainetl-j-u1").unwrap(), Some(3));
            assert_eq!(tt.app_version("other").unwrap(), None);
            let mut live = tt.live_files().unwrap();
            live.sort_by(|x, y| x.path.cmp(&y.path));
            assert_eq!(
                live.iter().map(|f| (f.path.as_str(), f.rows)).collect::<Vec<_>>(),
                [("chain=base/a.parquet", Some(10)), ("chain=base/b.parquet", Some(5))]
            );
            // Version 2: one commit swaps a and b for c; a checkpoint follows.
            let swap = Change {
                parts: vec![Part {
                    adds: vec![add("chain=base/c.parquet", c, 15)],
                    txn: None,
                }],
                removes: vec!["chain=base/a.parquet".into(), "chain=base/b.parquet".into()],
                rearranges: true,
                ..Change::default()
            };
            assert_eq!(tt.commit(&swap, 4).unwrap(), 2);
            let live = tt.live_files().unwrap();
            assert_eq!(live.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["chain=base/c.parquet"]);
            // A file not in the table cannot be removed.
            let gone = Change {
                removes: vec!["chain=base/a.parquet".into()],
                ..Change::default()
            };
            let e = tt.commit(&gone, 4).unwrap_err().to_string();
            assert!(e.contains("not in the table's version 2"), "{e}");
            assert_eq!(tt.app_version("chainetl-j-u1").unwrap(), Some(3));
        })
        .await
        .unwrap();
        let log = dir.path().join("events/_delta_log");
        assert!(log.join("_last_checkpoint").exists());
        assert!(log.join(format!("{:020}.checkpoint.parquet", 2)).exists());
        let v2 = std::fs::read_to_string(log.join(format!("{:020}.json", 2))).unwrap();
        assert!(v2.contains(r#""dataChange":false"#), "{v2}");
        // A new process reads the table from the checkpoint.
        let fresh = Table::new(&storage, "events", 2);
        let v = tokio::task::spawn_blocking(move || (fresh.snapshot().unwrap().version(), fresh.app_version("chainetl-j-u1").unwrap()))
            .await
            .unwrap();
        assert_eq!(v, (2, Some(3)));
        // Version 3, later: the log before the checkpoint (2) is expired
        // for a reader from version 3 on, and goes; the removes of the
        // swap at version 2 are found from a cutoff before it.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let v2_time = std::fs::metadata(log.join(format!("{:020}.json", 2))).unwrap().modified().unwrap();
        let v2_ms = v2_time.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
        let removed = t.removed_since(&storage, v2_ms - 1).await.unwrap();
        assert_eq!(
            removed,
            ["chain=base/a.parquet", "chain=base/b.parquet"]
                .into_iter()
                .map(String::from)
                .collect()
        );
        let tt = t.clone();
        tokio::task::spawn_blocking(move || {
            let again = Change {
                removes: vec!["chain=base/c.parquet".into()],
                ..Change::default()
            };
            tt.commit(&again, 4).unwrap()
        })
        .await
        .unwrap();
        let v3_time = std::fs::metadata(log.join(format!("{:020}.json", 3))).unwrap().modified().unwrap();
        let v3_ms = v3_time.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
        assert_eq!(t.clean_log(&storage, v3_ms).await.unwrap(), 2, "versions 0 and 1");
        assert!(!log.join(format!("{:020}.json", 0)).exists());
        assert!(log.join(format!("{:020}.json", 2)).exists() && log.join(format!("{:020}.json", 3)).exists());
        let fresh = Table::new(&storage, "events", 2);
        let v = tokio::task::spawn_blocking(move || fresh.snapshot().unwrap().version())
            .await
            .unwrap();
        assert_eq!(v, 3, "the table opens from its checkpoint");
    }
}
