//! Apache Iceberg tables (format version 2) over the output's storage,
//! written on the table spec itself: metadata JSON with serde, manifests
//! and manifest lists in Avro, every byte through [`Storage`].
//!
//! # On disk
//!
//! A table at `<output>/<table>/` (its `location`: `file:///abs/<table>`
//! or `s3://bucket/<prefix>/<table>`, as Iceberg wants absolute URIs)
//! keeps, under `metadata/`:
//!
//! - `v<N>.metadata.json`: version `N` of the table's metadata (schemas,
//!   partition specs, properties, snapshots and their logs), `N` from 1;
//! - `version-hint.text`: the latest `N`, as digits alone — the file-system
//!   layout of Hadoop tables, which DuckDB's `iceberg_scan`, pyiceberg's
//!   `StaticTable.from_metadata(<table>)` and Spark's `HadoopCatalog` read;
//! - `snap-<snapshot id>-<attempt>-<uuid>.avro`: a snapshot's manifest list;
//! - `<uuid>-m<n>.avro`: manifests, each listing data files with their
//!   partition tuple, counts and column bounds ([`stats`]).
//!
//! Data files stay where the job wrote them (`chain=…/date=…/x.parquet`):
//! the manifests name them by absolute path.
//!
//! # Invariants
//!
//! - **A version is written once, whole.** `v<N+1>.metadata.json` is
//!   written with [`Storage::create_if_absent`] (a hard link of a fsynced
//!   file locally, a conditional PUT on S3): of two writers that built
//!   on version `N`, one creates it and the other is told it lost
//!   ([`Attempt::Conflict`]); [`Table::commit`] then reloads, checks its
//!   change again on the new version (the files it removes must still be
//!   there; parts whose transaction ids the table now records are left
//!   out) and retries, a bounded number of times. Manifests and manifest
//!   lists are written before the version that names them, so no reader
//!   ever meets a version naming a file not yet there.
//! - **The hint is part of the commit.** `version-hint.text` is what
//!   readers of the file-system layout follow, so a commit points it at
//!   its version before it returns (a failure there fails the commit's
//!   caller). A writer dying between the two leaves it behind: every
//!   writer's load ([`Table::load_to_write`]: a run's table check, each
//!   commit, an expiry) points it at the newest version first, and
//!   `verify` reports a hint behind ([`Table::hint_behind`]). With two
//!   writers it may name an older version for a moment: readers here
//!   start at it and step forward while `v<N+1>` exists, and list
//!   `metadata/` when it is missing or names a deleted version.
//! - **Exactly once, in the table's history.** A snapshot's summary
//!   records each transaction id `(application, version)` whose files it
//!   adds, as `chainetl.txn.<application>` = version; a part whose
//!   application already has that version (or a later one) in the current
//!   snapshot's ancestry is in, and is not added again
//!   ([`Current::recorded_version`]). Snapshots expired by
//!   [`Table::expire`] take their summaries with them: past the
//!   retention, the live files (named per unit) are the record.
//! - **Bounded metadata.** Each commit that would leave more than
//!   [`Limits::merge_manifests_at`] manifests folds small ones together;
//!   the metadata log keeps [`Limits::previous_versions`] entries, and
//!   [`Table::expire`] drops old snapshots, their manifest lists and
//!   manifests, and metadata files past that many.
//! - **Field ids are stable** ([`schema`]): a column keeps its id; a new
//!   column is a metadata-only commit with a new id, optional.
//! - **Identity-partitioned columns are optional** in the table's schema,
//!   whatever the writer's: a data file may lack them (one adopted from a
//!   hive folder, where `chain` is only in the path), and readers then
//!   take the value from the file's partition tuple — pyiceberg only for
//!   optional columns.

pub mod manifest;
pub mod metadata;
pub mod partition;
pub mod schema;
pub mod stats;

mod catalog_commit;
mod commit;
mod foreign;
mod history;
mod pointer;
mod relayout;
#[cfg(test)]
mod tests;

pub use commit::{Attempt, Change, Part};
pub use history::{Expired, Retention, Settled, nothing_settled};
pub use metadata::{Operation, Snapshot, TableMetadata};
pub use partition::{PartitionKey, PartitionSpec, PartitionValue, Transform};
pub(crate) use pointer::version_of;
pub use relayout::NewLayout;
pub use stats::DataFile;

use crate::storage::{Storage, StorageError};
use metadata::{NAME_MAPPING, SortOrder};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The prefix of the summary keys recording transaction ids.
pub const TXN_PREFIX: &str = "chainetl.txn.";

/// The age past which a metadata file no snapshot names is a leftover
/// of an attempt that died, not part of a commit in flight (Iceberg's
/// orphan-file removal keeps files younger than three days by default).
/// A commit whose own files are older than [`STAGED_CHECK_AFTER`] when
/// it names them checks they are still there.
pub const ORPHAN_AGE: std::time::Duration = std::time::Duration::from_secs(3 * 24 * 3600);

/// How long after writing its manifests a commit checks they still exist
/// before naming them: a commit that slow (a paused process) may meet a
/// vacuum, or another engine's orphan removal, that took them for
/// leftovers.
const STAGED_CHECK_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

/// The age past which a temporary file of the version hint is a dead
/// writer's (a live one renames it within milliseconds).
const HINT_TMP_AGE: std::time::Duration = std::time::Duration::from_secs(600);

/// Who writes the snapshots (`engine-name`, `engine-version`).
const ENGINE: &str = "chainetl";

/// Errors of an Iceberg table.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IcebergError {
    /// Reading or writing the table's files failed.
    #[error("iceberg table {table}: {source}")]
    Storage {
        /// The table's path under the output.
        table: String,
        /// Cause.
        #[source]
        source: StorageError,
    },
    /// A metadata file, manifest list or manifest cannot be read.
    #[error("iceberg table {table}: {path}: {message}")]
    Unreadable {
        /// The table's path under the output.
        table: String,
        /// The file, under the output.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// The table is not laid out as the writer's files are: other
    /// partitioning, or columns it cannot take (see [`schema::SchemaError`]).
    #[error("iceberg table {table}: {message}")]
    Layout {
        /// The table's path under the output.
        table: String,
        /// Both layouts, and what differs.
        message: String,
    },
    /// The change cannot be made as asked.
    #[error("iceberg table {table}: {message}")]
    Refused {
        /// The table's path under the output.
        table: String,
        /// What is wrong.
        message: String,
    },
    /// The catalog the table's commits go through failed or refused.
    #[error("iceberg table {table}: {source}")]
    Catalog {
        /// The table's path under the output.
        table: String,
        /// Cause.
        #[source]
        source: crate::sink::format::iceberg::catalog::CatalogError,
    },
    /// Other writers kept committing first.
    #[error("iceberg table {table}: no commit landed in {attempts} attempts (other writers kept committing first); retry the run")]
    Conflict {
        /// The table's path under the output.
        table: String,
        /// Attempts made.
        attempts: u32,
    },
}

/// The limits of a table's metadata, with their defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Manifests a snapshot may list before a commit folds the small ones
    /// together (default 100, the reference implementation's
    /// `commit.manifest.min-count-to-merge`): what bounds a reader's work
    /// per scan over a long job of small appends.
    pub merge_manifests_at: usize,
    /// The size a folded manifest grows to (default 8 MiB, the reference
    /// implementation's `commit.manifest.target-size-bytes`).
    pub manifest_target_bytes: u64,
    /// Previous metadata files the metadata log lists and
    /// [`Table::expire`] keeps (default 100, as
    /// `write.metadata.previous-versions-max`).
    pub previous_versions: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            merge_manifests_at: 100,
            manifest_target_bytes: 8 << 20,
            previous_versions: 100,
        }
    }
}

/// A table's metadata at one version: what a reader sees now.
#[derive(Debug, Clone, PartialEq)]
pub struct Current {
    /// The version (`v<N>.metadata.json`).
    pub version: u64,
    /// The metadata.
    pub metadata: TableMetadata,
    /// The metadata file a catalog points at (`None`: the file-system
    /// layout's `v<version>.metadata.json`).
    pub metadata_location: Option<String>,
}

impl Current {
    /// The current schema.
    pub fn schema(&self) -> &schema::Schema {
        // Checked when read: the current schema exists.
        self.metadata.schema().unwrap_or(&self.metadata.schemas[0])
    }

    /// The default partition spec.
    pub fn spec(&self) -> &PartitionSpec {
        self.metadata.spec().unwrap_or(&self.metadata.partition_specs[0])
    }

    /// The current snapshot, if the table has one.
    pub fn snapshot(&self) -> Option<&Snapshot> {
        self.metadata.current_snapshot()
    }

    /// The highest version application `app` recorded in the summaries of
    /// the current snapshot and its ancestors still kept, or in the table's
    /// properties (where [`Table::expire`] moves the ids of the snapshots
    /// it drops).
    pub fn recorded_version(&self, app: &str) -> Option<i64> {
        let key = format!("{TXN_PREFIX}{app}");
        let kept = self.metadata.properties.get(&key).and_then(|v| v.parse().ok());
        self.metadata
            .ancestry()
            .iter()
            .filter_map(|s| s.summary.get(&key)?.parse().ok())
            .chain(kept)
            .max()
    }

    /// The highest version `app` recorded in the summaries of the current
    /// snapshot's ancestors among `kept`, or in the properties.
    pub(crate) fn recorded_version_kept(&self, app: &str, kept: &std::collections::HashSet<i64>) -> Option<i64> {
        let key = format!("{TXN_PREFIX}{app}");
        let props = self.metadata.properties.get(&key).and_then(|v| v.parse().ok());
        self.metadata
            .ancestry()
            .iter()
            .filter(|s| kept.contains(&s.snapshot_id))
            .filter_map(|s| s.summary.get(&key)?.parse().ok())
            .chain(props)
            .max()
    }

    /// The transaction ids snapshot `s` records.
    pub fn txns(s: &Snapshot) -> Vec<(String, i64)> {
        s.summary
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix(TXN_PREFIX)?.to_string(), v.parse().ok()?)))
            .collect()
    }
}

/// What became of writing a table's next version.
#[derive(Debug)]
pub(crate) enum Written {
    /// Made: the table now.
    Made(Arc<Current>),
    /// Not made: another writer made the next version first.
    Lost,
    /// Not known to be made (a catalog's answer lost): it may land yet,
    /// so the files it names are kept.
    Unknown,
}

/// One Iceberg table of the output.
#[derive(Debug)]
pub struct Table {
    rel: String,
    location: String,
    limits: Limits,
    /// The last version this process read or wrote: loading steps forward
    /// from it, reading only what was committed since.
    last: Mutex<Option<Arc<Current>>>,
    /// The field ids the files about to be adopted carry
    /// ([`Table::carry_ids`]).
    carried: Mutex<Option<schema::FieldIds>>,
    /// The REST catalog commits go through (`None`: the file-system
    /// layout, `version-hint.text`).
    catalog: Option<Arc<crate::sink::format::iceberg::catalog::RestCatalog>>,
    /// Whether this process looked for metadata other writers left
    /// (`foreign`), once before its first write.
    foreign_checked: std::sync::atomic::AtomicBool,
}

impl Table {
    /// The table at `rel` (a dataset's or decoded table's folder) of
    /// `storage`, with the default [`Limits`].
    pub fn new(storage: &Storage, rel: &str) -> Table {
        Table::with_limits(storage, rel, Limits::default())
    }

    /// The table at `rel` of `storage`, with `limits`.
    pub fn with_limits(storage: &Storage, rel: &str, limits: Limits) -> Table {
        let rel = rel.trim_matches('/').to_string();
        let (url, _) = storage.table_location(&rel);
        // A local path as it is (not percent-encoded): what readers open.
        let location = match url.to_file_path() {
            Ok(p) if url.scheme() == "file" => format!("file://{}", p.display()),
            _ => url.as_str().to_string(),
        };
        Table {
            rel,
            location: location.trim_end_matches('/').to_string(),
            limits,
            last: Mutex::new(None),
            carried: Mutex::new(None),
            catalog: None,
            foreign_checked: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The table with its commits through `catalog`.
    pub fn with_catalog(mut self, catalog: Option<Arc<crate::sink::format::iceberg::catalog::RestCatalog>>) -> Table {
        self.catalog = catalog;
        self
    }

    /// The catalog the table's commits go through, if any.
    pub fn catalog(&self) -> Option<&crate::sink::format::iceberg::catalog::RestCatalog> {
        self.catalog.as_deref()
    }

    /// The table's path under the output.
    pub fn rel(&self) -> &str {
        &self.rel
    }

    /// The table's location as a new table's metadata gives it.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The limits it commits with.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The version this process last read or wrote, without reading
    /// storage: the ids its writers tag their files' columns with.
    pub fn cached(&self) -> Option<Arc<Current>> {
        self.last.lock().ok().and_then(|l| l.clone())
    }

    pub(crate) fn storage_error(&self, source: StorageError) -> IcebergError {
        IcebergError::Storage {
            table: self.rel.clone(),
            source,
        }
    }

    pub(crate) fn refused(&self, message: impl Into<String>) -> IcebergError {
        IcebergError::Refused {
            table: self.rel.clone(),
            message: message.into(),
        }
    }

    pub(crate) fn layout(&self, message: impl Into<String>) -> IcebergError {
        IcebergError::Layout {
            table: self.rel.clone(),
            message: message.into(),
        }
    }

    pub(crate) fn unreadable(&self, path: &str, message: impl Into<String>) -> IcebergError {
        IcebergError::Unreadable {
            table: self.rel.clone(),
            path: path.to_string(),
            message: message.into(),
        }
    }

    /// `metadata/<name>` under the output root.
    pub(super) fn metadata_rel(&self, name: &str) -> String {
        format!("{}/metadata/{name}", self.rel)
    }

    /// The path under the output root of `abs`, a location `current`'s
    /// metadata names (relative to its `location`, so a table whose
    /// output moved is still read from where it is now).
    pub fn rel_of(&self, current: &Current, abs: &str) -> Result<String, IcebergError> {
        // A file outside the table's location was added by another writer
        // (files registered from elsewhere): no retry reads it here.
        let inner = manifest::relative(abs, &current.metadata.location).map_err(|m| self.layout(m))?;
        Ok(format!("{}/{inner}", self.rel))
    }

    /// Creates the table — version 1: `arrow`'s columns with fresh ids,
    /// partitioned by `keys`, with `properties` and the name mapping —
    /// unless a version exists. Whether this call created it, and the
    /// table as it is.
    pub async fn create_if_absent(
        &self,
        storage: &Storage,
        arrow: &arrow_schema::Schema,
        keys: &[PartitionKey],
        properties: &BTreeMap<String, String>,
    ) -> Result<(bool, Arc<Current>), IcebergError> {
        if let Some(c) = self.load_to_write(storage).await? {
            return Ok((false, c));
        }
        let draft = self.draft(arrow, keys, properties)?;
        if let Some(catalog) = &self.catalog {
            if let Some(folder) = self.folder_latest(storage).await? {
                return self.catalog_register(catalog, storage, &folder).await;
            }
            return self.catalog_create(catalog, &draft).await;
        }
        match self.write_file_version(storage, None, draft.metadata).await? {
            Some(c) => Ok((true, c)),
            // Another creator won: its table is the table.
            None => match self.load(storage).await? {
                Some(c) => Ok((false, c)),
                None => Err(self.refused("version 1 was created by another writer and is gone")),
            },
        }
    }

    /// Makes the table, where this process makes it, with the field ids
    /// `ids` (by column name: a data file's, [`schema::carried_ids`])
    /// rather than fresh ones: files about to be adopted that an earlier
    /// Iceberg table of the output wrote are read by those ids. A table
    /// made already that has no snapshot takes them too
    /// ([`Table::prepare`]).
    pub fn carry_ids(&self, ids: schema::FieldIds) {
        if let Ok(mut c) = self.carried.lock() {
            *c = (!ids.is_empty()).then_some(ids);
        }
    }

    /// Version 1 of the table as [`Table::create_if_absent`] makes it,
    /// not written.
    pub fn draft(
        &self,
        arrow: &arrow_schema::Schema,
        keys: &[PartitionKey],
        properties: &BTreeMap<String, String>,
    ) -> Result<Current, IcebergError> {
        let (mut schema, mut last_column_id) = schema::from_arrow(arrow).map_err(|e| self.layout(e.to_string()))?;
        let carried = self.carried.lock().ok().and_then(|c| c.clone());
        if let Some((s, last)) = carried.as_ref().and_then(|c| schema::renumbered(&schema, c)) {
            (schema, last_column_id) = (s, last);
        }
        // Files adopted from hive folders lack the identity-partitioned
        // columns (`chain`): readers fill them from the partition tuple,
        // and pyiceberg only where the column is optional.
        for k in keys.iter().filter(|k| k.transform == Transform::Identity) {
            if let Some(f) = schema.fields.iter_mut().find(|f| f.name == k.source) {
                f.required = false;
            }
        }
        let spec = PartitionSpec::of_keys(0, keys, &schema, partition::FIRST_PARTITION_ID).map_err(|m| self.layout(m))?;
        let mut props = properties.clone();
        props.insert(NAME_MAPPING.into(), schema.name_mapping().to_string());
        let metadata = TableMetadata {
            format_version: metadata::FORMAT_VERSION,
            table_uuid: metadata::uuid4(),
            location: self.location.clone(),
            last_sequence_number: 0,
            last_updated_ms: chrono::Utc::now().timestamp_millis(),
            last_column_id,
            schemas: vec![schema],
            current_schema_id: 0,
            last_partition_id: partition::FIRST_PARTITION_ID - 1 + spec.fields.len() as i32,
            partition_specs: vec![spec],
            default_spec_id: 0,
            properties: props,
            current_snapshot_id: None,
            snapshots: Vec::new(),
            snapshot_log: Vec::new(),
            metadata_log: Vec::new(),
            sort_orders: vec![SortOrder::unsorted()],
            default_sort_order_id: 0,
            refs: BTreeMap::new(),
            statistics: Vec::new(),
            partition_statistics: Vec::new(),
        };
        let mut metadata = metadata;
        metadata.declare_key_order();
        Ok(Current {
            version: 1,
            metadata,
            metadata_location: None,
        })
    }

    /// The table ready for files of rows of `arrow` partitioned by `keys`:
    /// created if absent; else checked to be partitioned so (refused
    /// otherwise, with both layouts) and given the columns of `arrow` it
    /// lacks ([`Table::add_columns`]). Returns the table as it is then.
    pub async fn prepare(
        &self,
        storage: &Storage,
        arrow: &arrow_schema::Schema,
        keys: &[PartitionKey],
        properties: &BTreeMap<String, String>,
        attempts: u32,
    ) -> Result<Arc<Current>, IcebergError> {
        let (created, current) = self.create_if_absent(storage, arrow, keys, properties).await?;
        if created {
            return Ok(current);
        }
        let current = match self.renumber_empty(storage, &current, arrow, keys, properties).await? {
            Some(c) => c,
            None => current,
        };
        if !current.spec().is_of(keys, current.schema()) {
            let want: Vec<String> = keys
                .iter()
                .map(|k| format!("{}={}({})", k.name, k.transform.name(), k.source))
                .collect();
            return Err(self.layout(format!(
                "partitioned by {}; this job writes files partitioned by {} (another job sharing the output with \
                 another output.partition_by?)",
                current.spec().show(current.schema()),
                if want.is_empty() { "nothing".into() } else { want.join(", ") }
            )));
        }
        match self.add_columns(storage, arrow, attempts).await? {
            Some(c) => Ok(c),
            None => Ok(current),
        }
    }

    /// `current` with the ids [`Table::carry_ids`] gave, where it has no
    /// snapshot (no file was ever committed under its ids) and its columns
    /// have others: a new schema and partition spec in the next version.
    /// `None` where nothing changes (or another writer made the next
    /// version first: the caller's checks then run on what it made).
    async fn renumber_empty(
        &self,
        storage: &Storage,
        current: &Current,
        arrow: &arrow_schema::Schema,
        keys: &[PartitionKey],
        properties: &BTreeMap<String, String>,
    ) -> Result<Option<Arc<Current>>, IcebergError> {
        if !current.metadata.snapshots.is_empty() || self.carried.lock().ok().and_then(|c| c.clone()).is_none() {
            return Ok(None);
        }
        let draft = self.draft(arrow, keys, properties)?;
        let ids = |s: &schema::Schema| s.fields.iter().map(|f| (f.name.clone(), f.id)).collect::<Vec<_>>();
        if ids(draft.schema()) == ids(current.schema()) {
            return Ok(None);
        }
        let mut m = current.metadata.clone();
        let mut schema = draft.schema().clone();
        schema.schema_id = m.schemas.iter().map(|s| s.schema_id).max().unwrap_or(0) + 1;
        let spec_id = m.partition_specs.iter().map(|s| s.spec_id).max().unwrap_or(0) + 1;
        let spec = PartitionSpec::of_keys(spec_id, keys, &schema, m.last_partition_id + 1).map_err(|e| self.layout(e))?;
        m.last_partition_id += spec.fields.len() as i32;
        m.last_column_id = m.last_column_id.max(draft.metadata.last_column_id);
        m.properties.insert(NAME_MAPPING.into(), schema.name_mapping().to_string());
        m.current_schema_id = schema.schema_id;
        m.schemas.push(schema);
        m.default_spec_id = spec_id;
        m.partition_specs.push(spec);
        self.log_previous(current, &mut m);
        let made = self.write_version(storage, Some(current), m).await?;
        if let Some(c) = &made {
            tracing::info!(table = %self.rel, version = c.version, "gave the iceberg table the field ids the files it adopts carry");
        }
        Ok(made)
    }

    /// The writer's data files' Arrow schema for `arrow` (the file's
    /// columns, a subset of the table's): each field with the id the
    /// table's current schema gives it, for the Parquet writer.
    pub fn file_schema(&self, current: &Current, arrow: &arrow_schema::Schema) -> Result<arrow_schema::Schema, IcebergError> {
        schema::with_field_ids(arrow, current.schema()).map_err(|e| self.layout(e.to_string()))
    }
}

/// How long a writer that lost a commit race waits before its
/// `attempt`-th retry: random up to a ceiling that doubles (10 ms to
/// 640 ms), so writers that collided back off apart.
fn backoff(attempt: u32) -> std::time::Duration {
    let ceiling = 10u64 << attempt.min(6);
    std::time::Duration::from_millis(fastrand::u64(1..=ceiling))
}
