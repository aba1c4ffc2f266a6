//! The table format: how the files a job writes become the tables readers
//! read. One interface ([`TableFormat`]), one implementation a format,
//! each in its own room holding its log and its adapter: [`hive`]
//! (`parquet`: a hive-partitioned folder of Parquet files), [`delta`]
//! (`delta`: a Delta Lake table over each folder, its log in
//! [`delta::table`]) and [`iceberg`] (`iceberg`: an Apache Iceberg table
//! over each folder, its metadata in [`iceberg::table`]). [`for_output`]
//! is the one place that picks the implementation; the job asks the
//! interface, never which format it writes; [`crate::storage`] keeps the
//! bytes and objects they are made of.
//!
//! # One transaction
//!
//! Every write to a table is one [`Change`]: files joining (each group
//! with the transaction id that records it, and the files' footers once
//! read), files leaving, and where the spec changed the table's layout
//! the schema it takes. A writer reads what readers see now
//! ([`TableFormat::live_files`], [`TableFormat::recorded_version`]),
//! makes its change, and hands it to [`TableFormat::commit`]: one commit
//! where the format has them (readers see the table before or after,
//! never between), each part whose transaction id the table records
//! already left out. [`TableFormat::prepare`] checks a change against the
//! table first — every footer read and fitting, removals the table no
//! longer holds left out — so that a conversion refuses before anything is
//! recorded and commits after; [`publish`] is the two together.
//!
//! What a format cannot do it says by what it returns, not by switches:
//! a folder has no log, so its [`TableFormat::live_files`] is `None` (a
//! listing is the view), its commit publishes nothing and hands the
//! removed files back to delete ([`Committed::to_delete`]), and a format
//! that keeps earlier versions hands back none (they stay for the
//! versions that read them, until a vacuum). The one switch,
//! [`TableFormat::publishes`], says when a file becomes visible: once
//! uploaded, or once a commit adds it — after the checkpoint that counts
//! it, so the job publishes.
//!
//! Units of one process finishing together make one commit a table
//! ([`group`]: the one commit queue, whatever the format); other commits
//! wait for the table's turn.
//!
//! # What else a format answers
//!
//! - **Layout** ([`TableFormat::check_table`]): a table is created with,
//!   or checked against, the job's partition columns and schema before
//!   anything is written into it; [`TableFormat::file_schema`]: what the
//!   format's readers resolve a file's columns by (Iceberg's field ids).
//! - **The store** ([`TableFormat::store_refusal`]).
//! - **The pointer readers follow** ([`TableFormat::pointer_behind`],
//!   [`TableFormat::settle_pointer`]): Iceberg's `version-hint.text`.
//! - **Earlier versions** ([`TableFormat::vacuum`],
//!   [`TableFormat::table_version`]).
//! - **Adopting and forgetting** ([`TableFormat::has_table`],
//!   [`TableFormat::forget`]): a conversion commits another format's files
//!   as the table's ([`Joining::adopted`]) and deletes the old format's
//!   own records of the folder.
//!
//! A change names stored files by their path under the output root
//! (`<table>/<partition dirs>/<name>.parquet`), their bytes and their
//! rows; a format that records statistics takes them from the file's
//! footer, read once ([`crate::sink::reader::footer`]).

pub mod delta;
mod group;
pub mod hive;
pub mod iceberg;

use super::{Sink, SinkError, WrittenFile};
use crate::spec::{Output, OutputFormat};
use crate::storage::Storage;
use arrow_schema::SchemaRef;
use parquet::file::metadata::ParquetMetaData;
use std::collections::HashSet;
use std::sync::Arc;

/// A stored file joining a table: where it is, its bytes, its rows where
/// they are known (else its footer says), and its footer once read.
#[derive(Debug, Clone)]
pub struct Stored {
    /// Path relative to the output root.
    pub rel: String,
    /// Bytes.
    pub bytes: u64,
    /// Rows, if known.
    pub rows: Option<u64>,
    /// Its footer, once read (or kept by the writer that wrote it).
    pub footer: Option<Arc<ParquetMetaData>>,
}

impl Stored {
    /// File `rel` of `bytes` bytes and, if known, `rows` rows; its footer
    /// not read yet.
    pub fn at(rel: impl Into<String>, bytes: u64, rows: Option<u64>) -> Stored {
        Stored {
            rel: rel.into(),
            bytes,
            rows,
            footer: None,
        }
    }

    /// A file this process wrote, with the footer it kept.
    pub fn written(f: &WrittenFile) -> Stored {
        Stored {
            rel: f.rel.clone(),
            bytes: f.bytes,
            rows: Some(f.rows),
            footer: f.footer.clone(),
        }
    }

    /// Its rows: as known, else as its footer says.
    pub fn row_count(&self) -> u64 {
        self.rows
            .or_else(|| self.footer.as_ref().map(|f| f.file_metadata().num_rows().max(0) as u64))
            .unwrap_or(0)
    }
}

/// Files joining a table together, with the transaction id that says they
/// did.
#[derive(Debug, Clone)]
pub struct Joining {
    /// The files.
    pub files: Vec<Stored>,
    /// The writer's schema (the table's, partition columns it lacks left
    /// out); None: each file's own, read from its footer (files the job's
    /// merges wrote).
    pub schema: Option<SchemaRef>,
    /// `(application id, version)`.
    pub txn: Option<(String, i64)>,
    /// Files another format (or a hive folder) wrote, adopted as they are:
    /// each checked against `schema` (a file that cannot join the table as
    /// it is refuses the change with [`SinkError::Config`]).
    pub adopted: bool,
}

/// One change to a table (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct Change {
    /// The files joining, and the transaction ids the change records.
    pub joining: Vec<Joining>,
    /// Files leaving (paths relative to the output root).
    pub removes: Vec<String>,
    /// The rows stay the same, only their files change (a compaction, a
    /// new layout), rather than a change of the table's data.
    pub rearranges: bool,
    /// The change may be in the table already (made again after a crash):
    /// where its transaction ids all are, it is not made again, and
    /// removals the table no longer holds are left out.
    pub again: bool,
    /// The table's schema (the writer's): a table not yet made is made
    /// with it.
    pub schema: Option<SchemaRef>,
    /// The spec changed the table's partition columns, column types or
    /// the columns it holds: where the table was made otherwise, the
    /// change gives it `schema`'s layout too (a column `schema` lacks
    /// leaves the table).
    pub relayout: bool,
    /// Made ready by [`TableFormat::prepare`]: footers read and checked,
    /// removals those the table held then.
    pub(crate) prepared: bool,
}

impl Change {
    /// One unit's files for one table (`schema`: the writer's), recording
    /// `txn`; `again`: published again after a crash (the table may hold
    /// them).
    pub fn publication(schema: &SchemaRef, files: Vec<Stored>, txn: (String, i64), again: bool) -> Change {
        Change {
            joining: vec![Joining {
                files,
                schema: Some(schema.clone()),
                txn: Some(txn),
                adopted: false,
            }],
            again,
            ..Change::default()
        }
    }

    /// Files `joining` and `removes` leaving, made again after a crash as
    /// often as it takes (a segment's files, a conversion's adoption).
    pub fn whole(joining: Vec<Joining>, removes: Vec<String>) -> Change {
        Change {
            joining,
            removes,
            again: true,
            ..Change::default()
        }
    }

    /// Whether it only adds units' files, each group with its transaction
    /// id, under the writer's schema: what units finishing together in a
    /// process commit as one ([`group`]).
    pub fn is_publication(&self) -> bool {
        self.removes.is_empty()
            && !self.relayout
            && !self.rearranges
            && !self.joining.is_empty()
            && self
                .joining
                .iter()
                .all(|j| j.txn.is_some() && j.schema.is_some() && !j.adopted && !j.files.is_empty())
    }

    /// The units' files of a publication ([`Change::is_publication`]),
    /// their footers read: the change back where it is not one.
    pub fn into_publication(self) -> Result<Publication, Change> {
        if !self.is_publication() {
            return Err(self);
        }
        let schema = self
            .joining
            .iter()
            .find_map(|j| j.schema.clone())
            .unwrap_or_else(|| Arc::new(arrow_schema::Schema::empty()));
        Ok(Publication {
            schema,
            joining: self.joining,
            again: self.again,
        })
    }

    /// Whether it adds any file.
    pub fn adds_any(&self) -> bool {
        self.joining.iter().any(|j| !j.files.is_empty())
    }

    /// Whether [`TableFormat::prepare`] made it ready.
    pub fn is_prepared(&self) -> bool {
        self.prepared
    }
}

/// Units' files for one table, committed together ([`Change::into_publication`]).
#[derive(Debug, Clone)]
pub struct Publication {
    /// The writer's schema.
    pub schema: SchemaRef,
    /// Each unit's files, with the transaction id that records them
    /// (every group has one).
    pub joining: Vec<Joining>,
    /// Published again after a crash: the table may hold them.
    pub again: bool,
}

/// What a commit leaves to its caller.
#[derive(Debug, Clone, Default)]
pub struct Committed {
    /// Files to delete now (paths relative to the output root): in a
    /// format without earlier versions, the ones the change removed; in
    /// one with them, none (they stay for the versions that read them,
    /// until vacuumed).
    pub to_delete: Vec<String>,
}

/// A file of a table's current version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveFile {
    /// Path relative to the table's root.
    pub path: String,
    /// Bytes, as recorded.
    pub size: u64,
    /// Rows, as recorded, if recorded.
    pub rows: Option<u64>,
}

/// One commit of a table, as `status` and the report show it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CommitLine {
    /// Its version (Iceberg: the snapshot's sequence number).
    pub version: u64,
    /// When it was made (RFC 3339), if it says.
    pub timestamp: Option<String>,
    /// The operation (`WRITE`, `OPTIMIZE`, `append`, `replace`, …), or empty.
    pub operation: String,
    /// Files it added.
    pub adds: u64,
    /// Files it removed.
    pub removes: u64,
    /// Whether it changed the data (not only rearranged it).
    pub data_change: bool,
    /// Whether it set the table's metadata (a schema).
    pub metadata: bool,
}

/// What a table's current version is, for `status` and the report.
#[derive(Debug, Clone)]
pub struct TableVersion {
    /// The version readers read.
    pub version: u64,
    /// The newest commits, newest first.
    pub last_commits: Vec<CommitLine>,
    /// Whether the format's versions hold snapshots (Iceberg's metadata
    /// versions) rather than being the log's (Delta's).
    pub of_snapshots: bool,
    /// The current snapshot's id and sequence number, where there is one.
    pub snapshot: Option<(i64, i64)>,
}

/// What a vacuum keeps of a table besides its current version.
#[derive(Clone)]
pub struct Retention {
    /// Files removed or written at or after this instant (milliseconds
    /// since the epoch) stay.
    pub cutoff_ms: i64,
    /// Files the job's records still need (paths relative to the output
    /// root): work a run is to publish, a swap not finished.
    pub pending: HashSet<String>,
    /// Which file names are the job's: only those are deleted.
    pub owned: Owned,
    /// Which transaction ids the job needs kept no more: a unit's, once
    /// its records say it is published at that version or later
    /// ([`Settled`]).
    pub settled: Settled,
}

/// Which transaction ids `(application, version)` a job needs no more in a
/// table's records: those of units its state records as published at that
/// version or later (see [`crate::job::tables::settled_txns`]).
pub type Settled = Arc<dyn Fn(&str, i64) -> bool + Send + Sync>;

/// What a vacuum of a table deleted.
#[derive(Debug, Clone, Copy, Default)]
pub struct Vacuumed {
    /// Data files.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
    /// The format's own records (log files, metadata files).
    pub log_files: usize,
}

/// Which file names (the last part of a path) are the job's own.
pub type Owned = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// A table format (see the module doc).
#[async_trait::async_trait]
pub trait TableFormat: std::fmt::Debug + Send + Sync {
    /// The format, as a spec names it.
    fn format(&self) -> OutputFormat;

    /// A table of the format, in words for messages ("Delta table").
    fn table_words(&self) -> &'static str;

    /// What records a table's files and versions, in words for messages
    /// ("Delta log").
    fn log_words(&self) -> &'static str;

    /// Why the store cannot hold this format's tables, if it cannot.
    fn store_refusal(&self, storage: &Storage) -> Option<String>;

    /// Whether a committed file is seen by readers only once the job
    /// publishes it (a commit the format records), rather than once it is
    /// uploaded. Where it is, a unit is finished only once published, an
    /// incremental export's files wait for their segment (so that a reorg
    /// repair's removals and the segment's files land in one commit), and
    /// replaced files stay for the table's earlier versions until a
    /// vacuum.
    fn publishes(&self) -> bool;

    /// Creates `table` for rows of `schema` (the writer's) unless it
    /// exists, and checks one that exists has the job's layout.
    async fn check_table(&self, sink: &Sink, table: &str, schema: &SchemaRef) -> Result<(), SinkError>;

    /// The schema a file of `table` is written with, for `schema` (its
    /// columns): as it is, or with what the format's readers resolve
    /// columns by (Iceberg's field ids).
    fn file_schema(&self, _table: &str, schema: SchemaRef) -> SchemaRef {
        schema
    }

    /// The files readers of `table` see now (paths relative to the table),
    /// with the sizes the format records; `None` where every data file in
    /// the table's folder is seen (a listing is the view). A table not yet
    /// made has none.
    async fn live_files(&self, sink: &Sink, table: &str) -> Result<Option<Vec<LiveFile>>, SinkError>;

    /// The version `app`'s commits last recorded in `table`: 0 where none
    /// (or the format records none).
    async fn recorded_version(&self, sink: &Sink, table: &str, app: &str) -> Result<i64, SinkError>;

    /// `change` made ready against `table` as it is now, before anything
    /// is recorded: every joining file's footer read (adopted files
    /// checked against the writer's columns), removals the table no
    /// longer holds left out. `None`: nothing to commit. A format with
    /// more to check (how files fit its partitioning) checks it here too.
    async fn prepare(&self, sink: &Sink, table: &str, change: Change) -> Result<Option<Change>, SinkError> {
        prepare_neutral(self, sink, table, change).await
    }

    /// Makes `change` to `table`: one commit where the format has them
    /// (see [`Change`]). Files joining are stored under their final names
    /// already.
    async fn commit(&self, sink: &Sink, table: &str, change: Change) -> Result<Committed, SinkError>;

    /// Why a derivation cannot drop a column a table has (a format whose
    /// tables' columns a derivation only ever adds), if it cannot.
    fn column_drop_refusal(&self) -> Option<&'static str> {
        None
    }

    /// Where the pointer readers follow to `table`'s current version lags
    /// it (a writer died between making a version and pointing at it):
    /// the pointer's path under the output root and what its readers miss,
    /// in words. `None` where it names the current version, or the format
    /// has no pointer apart from its versions.
    async fn pointer_behind(&self, _sink: &Sink, _table: &str) -> Result<Option<(String, String)>, SinkError> {
        Ok(None)
    }

    /// Points the pointer readers follow at `table`'s current version
    /// (see [`TableFormat::pointer_behind`]), as every writer of the
    /// table does before it commits. Whether it moved.
    async fn settle_pointer(&self, _sink: &Sink, _table: &str) -> Result<bool, SinkError> {
        Ok(false)
    }

    /// Whether the format has made `table` (its own records of it exist),
    /// rather than there being only files in a folder.
    async fn has_table(&self, sink: &Sink, table: &str) -> Result<bool, SinkError>;

    /// The version readers of `table` read, and its newest `commits`
    /// commits; `None` where the format keeps no versions (or the table is
    /// not made).
    async fn table_version(&self, sink: &Sink, table: &str, commits: usize) -> Result<Option<TableVersion>, SinkError>;

    /// Keeps `table`'s own records within the bounds its properties set,
    /// as a long run (`--follow`) commits: for Iceberg, the snapshots
    /// `history.expire.*` keeps and the metadata versions
    /// `write.metadata.previous-versions-max` keeps. Data files are left
    /// for [`TableFormat::vacuum`]; transaction ids `settled` says the job
    /// needs no more are dropped from its records. How many records it
    /// dropped.
    async fn maintain(&self, _sink: &Sink, _table: &str, _settled: &Settled) -> Result<usize, SinkError> {
        Ok(0)
    }

    /// Whether [`TableFormat::maintain`] does anything (a run reads the
    /// job's checkpoints for it only then).
    fn maintains(&self) -> bool {
        false
    }

    /// Deletes files of `table` no version within the retention reads, and
    /// records no version within it needs (see [`Retention`]).
    async fn vacuum(&self, sink: &Sink, table: &str, keep: &Retention) -> Result<Vacuumed, SinkError>;

    /// Deletes the format's own records of `table` (a conversion away from
    /// it, once the files readers of another format are to see are
    /// settled), leaving the data files; oldest first, so a reader
    /// meanwhile fails rather than read an older version as current.
    /// Returns whether there were any.
    async fn forget(&self, sink: &Sink, table: &str) -> Result<bool, SinkError>;
}

/// [`TableFormat::prepare`] then [`TableFormat::commit`].
pub async fn publish(sink: &Sink, table: &str, change: Change) -> Result<Committed, SinkError> {
    let format = sink.format();
    match format.prepare(sink, table, change).await? {
        Some(ready) => format.commit(sink, table, ready).await,
        None => Ok(Committed::default()),
    }
}

/// What every format's [`TableFormat::prepare`] does.
pub(crate) async fn prepare_neutral<F: TableFormat + ?Sized>(
    format: &F,
    sink: &Sink,
    table: &str,
    mut change: Change,
) -> Result<Option<Change>, SinkError> {
    read_footers(format, sink, &mut change).await?;
    change.removes = still_live(format, sink, table, std::mem::take(&mut change.removes)).await?;
    if change.joining.is_empty() && change.removes.is_empty() && !change.relayout {
        return Ok(None);
    }
    change.prepared = true;
    Ok(Some(change))
}

/// Footers read at once (each a request on S3).
const FOOTERS_AT_ONCE: usize = 16;

/// Reads the footer of every file of `change` that has none yet, several
/// at once, and checks adopted files against the writer's columns (a
/// file that cannot join `format`'s table as it is refuses the change);
/// nothing where [`TableFormat::prepare`] did it already.
pub(crate) async fn read_footers<F: TableFormat + ?Sized>(format: &F, sink: &Sink, change: &mut Change) -> Result<(), SinkError> {
    use futures::{StreamExt, TryStreamExt};
    if change.prepared {
        return Ok(());
    }
    let words = format.table_words();
    let storage = sink.storage();
    let wanted: Vec<(usize, usize, String, u64)> = change
        .joining
        .iter()
        .enumerate()
        .flat_map(|(j, g)| g.files.iter().enumerate().map(move |(i, f)| (j, i, f)))
        .filter(|(_, _, f)| f.footer.is_none())
        .map(|(j, i, f)| (j, i, f.rel.clone(), f.bytes))
        .collect();
    let reads: Vec<_> = wanted
        .iter()
        .map(|(_, _, rel, bytes)| super::reader::footer(storage, rel, *bytes))
        .collect();
    let footers: Vec<Arc<ParquetMetaData>> = futures::stream::iter(reads).buffered(FOOTERS_AT_ONCE).try_collect().await?;
    for ((j, i, _, _), footer) in wanted.into_iter().zip(footers) {
        change.joining[j].files[i].footer = Some(footer);
    }
    for j in change.joining.iter().filter(|j| j.adopted) {
        let Some(schema) = &j.schema else { continue };
        let (want, _) = sink.file_columns(schema);
        for f in &j.files {
            let Some(footer) = &f.footer else { continue };
            let have = super::reader::footer_schema(&f.rel, footer)?;
            if let Some(refusal) = adoption_refusal(&f.rel, &have, &want, words) {
                return Err(refusal);
            }
        }
    }
    Ok(())
}

/// Those of `removes` (paths relative to the output root) `table` still
/// holds: a crash after an earlier commit of the same change removed the
/// rest.
pub(crate) async fn still_live<F: TableFormat + ?Sized>(
    format: &F,
    sink: &Sink,
    table: &str,
    removes: Vec<String>,
) -> Result<Vec<String>, SinkError> {
    if removes.is_empty() {
        return Ok(removes);
    }
    let Some(live) = format.live_files(sink, table).await? else {
        return Ok(removes);
    };
    let live: HashSet<String> = live.into_iter().map(|f| format!("{table}/{}", f.path)).collect();
    Ok(removes.into_iter().filter(|p| live.contains(p)).collect())
}

/// `paths` under the output root, those of `table`, relative to it.
pub(crate) fn within(table: &str, paths: &[String]) -> Vec<String> {
    let dir = format!("{table}/");
    paths.iter().filter_map(|p| p.strip_prefix(&dir)).map(String::from).collect()
}

/// Withdraws every file `owned` names (by file name) from what readers
/// of `table` see in `format`, in one change (`--fresh`): the files
/// withdrawn (paths relative to the output root), which the table's
/// earlier versions still read, so they stay on storage until vacuumed;
/// `None` where the format keeps no versions (or the table is not made),
/// and a file withdrawn is a file to delete.
async fn withdraw(format: &dyn TableFormat, sink: &Sink, table: &str, owned: &Owned) -> Result<Option<HashSet<String>>, SinkError> {
    if !format.has_table(sink, table).await? {
        return Ok(None);
    }
    let Some(live) = format.live_files(sink, table).await? else {
        return Ok(None);
    };
    let removes: Vec<String> = live
        .into_iter()
        .filter(|f| f.path.rsplit('/').next().is_some_and(|n| owned(n)))
        .map(|f| format!("{table}/{}", f.path))
        .collect();
    if !removes.is_empty() {
        let change = Change {
            removes: removes.clone(),
            ..Change::default()
        };
        format.commit(sink, table, change).await?;
    }
    Ok(Some(removes.into_iter().collect()))
}

/// Withdraws `owned` files from what readers of `table` see in every
/// format the output may hold it in — the job's own, and one another
/// format left there (a job switched from Delta with `--fresh` leaves a
/// log that must not name files about to be deleted) — and returns what
/// the job's own format keeps for its earlier versions (see [`withdraw`]).
pub async fn withdraw_everywhere(sink: &Sink, table: &str, owned: Owned) -> Result<Option<HashSet<String>>, SinkError> {
    let own = sink.format();
    let kept = withdraw(own, sink, table, &owned).await?;
    for other in every_format().iter().filter(|f| f.format() != own.format()) {
        withdraw(other.as_ref(), sink, table, &owned).await?;
    }
    Ok(kept)
}

/// Points the pointer readers follow at each of `tables`' current
/// version where it lags ([`TableFormat::settle_pointer`]). How many
/// moved.
pub async fn settle_pointers(sink: &Sink, tables: impl IntoIterator<Item = &String>) -> Result<usize, SinkError> {
    let mut moved = 0;
    for table in tables {
        moved += usize::from(sink.format().settle_pointer(sink, table).await?);
    }
    Ok(moved)
}

/// One implementation of each format (statistics on no column but the
/// tables' own).
fn every_format() -> [Arc<dyn TableFormat>; 3] {
    OutputFormat::ALL.map(|f| implementation(f, Vec::new()))
}

/// The implementation of `output.format`.
pub fn for_output(output: &Output) -> Arc<dyn TableFormat> {
    match output.format {
        OutputFormat::Iceberg => Arc::new(iceberg::IcebergTables::with_catalog(
            output.catalog.as_ref(),
            output.table_properties.clone(),
        )),
        f => implementation(f, output.bloom_filters.clone()),
    }
}

/// The implementation of `format`, keeping statistics of `stats_columns`
/// besides each table's key, where the format keeps them.
fn implementation(format: OutputFormat, stats_columns: Vec<String>) -> Arc<dyn TableFormat> {
    match format {
        OutputFormat::Parquet => Arc::new(hive::Hive),
        OutputFormat::Delta => Arc::new(delta::DeltaTables::new(
            crate::spec::defaults::DELTA_CHECKPOINT_INTERVAL,
            stats_columns,
        )),
        OutputFormat::Iceberg => Arc::new(iceberg::IcebergTables::new()),
    }
}

/// Deletes every object under `dir` (a format's own records of a table,
/// `<table>/_delta_log/`, `<table>/metadata/`) in the order `rank` gives
/// (lowest first; by path among equals), then the folder: a reader
/// meanwhile fails rather than read an older version as current.
/// Whether there were any.
pub(crate) async fn delete_records<K: Ord>(sink: &Sink, dir: &str, rank: impl Fn(&str) -> K) -> Result<bool, SinkError> {
    let unlisted = |e| SinkError::Write {
        path: dir.to_string(),
        source: Box::new(e),
    };
    let mut found: Vec<String> = sink
        .storage()
        .list(dir)
        .await
        .map_err(unlisted)?
        .iter()
        .map(|m| sink.storage().rel_of(&m.location))
        .collect();
    if found.is_empty() {
        return Ok(false);
    }
    found.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.cmp(b)));
    for rel in found {
        sink.delete(&rel).await?;
        crate::util::failpoint::hit("during-log-delete");
    }
    sink.storage().remove_empty_dir(dir).await.map_err(unlisted)?;
    Ok(true)
}

/// Why stored file `rel`, whose footer's columns are `have`, cannot be
/// adopted as it is into a table (`words`: "Delta table") whose writers
/// write `want` (the file columns): a file an older release wrote without
/// a column, or with another type, would break the table's schema for
/// readers. `None`: it can.
pub(crate) fn adoption_refusal(rel: &str, have: &arrow_schema::Schema, want: &arrow_schema::Schema, words: &str) -> Option<SinkError> {
    use arrow_schema::DataType;
    let plain = |t: &DataType| match t {
        DataType::Dictionary(_, v) => v.as_ref().clone(),
        t => t.clone(),
    };
    let mut why = Vec::new();
    for f in want.fields() {
        match have.field_with_name(f.name()) {
            Err(_) => why.push(format!("it has no column {}", f.name())),
            // Nested fields' names and metadata aside: an Iceberg file's
            // list items carry their field id.
            Ok(g) if !plain(g.data_type()).equals_datatype(&plain(f.data_type())) => {
                why.push(format!("its column {} is {}, not {}", f.name(), g.data_type(), f.data_type()))
            }
            Ok(_) => {}
        }
    }
    for g in have.fields() {
        if want.field_with_name(g.name()).is_err() {
            why.push(format!("it has a column {} the table does not", g.name()));
        }
    }
    (!why.is_empty()).then(|| SinkError::Config {
        uri: rel.into(),
        message: format!(
            "{}: a file another release wrote cannot join the {words} as it is; convert with that release, or start \
             over with --fresh",
            why.join("; ")
        ),
        source: None,
    })
}
