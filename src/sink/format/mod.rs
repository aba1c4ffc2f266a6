//! The table format: how the files a job writes become the tables readers
//! read. One interface ([`TableFormat`]), one implementation a format,
//! each in its own room: [`hive`] (`parquet`: a hive-partitioned folder of
//! Parquet files), [`delta`] (`delta`: a Delta Lake table over each
//! folder, its log kept by [`crate::storage::delta`]) and [`iceberg`]
//! (`iceberg`: an Apache Iceberg table over each folder, its metadata
//! kept by [`crate::storage::iceberg`]). [`for_output`] is the
//! one place that picks the implementation; the job asks the interface,
//! never which format it writes.
//!
//! # What a format answers
//!
//! - **When a file becomes visible** ([`TableFormat::publishes`]): in a
//!   hive folder, once it is uploaded under its final name; in a format
//!   with a log, once a commit adds it — after the checkpoint that counts
//!   it, so the job publishes ([`TableFormat::publish_written`],
//!   [`TableFormat::publish_stored`], [`TableFormat::publish_whole`]).
//! - **What readers see now** ([`TableFormat::live_files`]): the files of
//!   a table's current version, or `None` where the folder's listing is
//!   the view.
//! - **Idempotence** ([`TableFormat::recorded_version`]): the version a
//!   writer's transaction id last recorded in a table, so a commit made
//!   again after a crash is found and not made twice.
//! - **Layout** ([`TableFormat::check_table`]): a table is created with,
//!   or checked against, the job's partition columns and schema before
//!   anything is written into it.
//! - **The store** ([`TableFormat::store_refusal`]): whether the output's
//!   store can hold the format's tables at all.
//! - **How a file is written** ([`TableFormat::file_schema`]): what the
//!   format's readers resolve a file's columns by (Iceberg's field ids).
//! - **Replacing files** ([`TableFormat::replace`]): compaction, a
//!   rewrite into another layout; one commit where the format has them
//!   (readers see the old files or the new, never both), and where it
//!   does not, the replaced files are the caller's to delete once the new
//!   ones are revealed.
//! - **Earlier versions** ([`TableFormat::keeps_versions`],
//!   [`TableFormat::vacuum`], [`TableFormat::table_version`]): a format
//!   with a log keeps replaced files for the versions that read them,
//!   until a vacuum past the retention.
//! - **Adopting and forgetting** ([`TableFormat::has_table`],
//!   [`TableFormat::forget`]): a conversion makes another format's files
//!   the table's ([`TableFormat::publish_whole`] with adopted files) and
//!   deletes the old format's own records of the folder.
//!
//! A publication names stored files by their path under the output root
//! (`<table>/<partition dirs>/<name>.parquet`), their bytes and their
//! rows; a format that records statistics reads them from the file's
//! footer. Every publication carries a transaction id `(application,
//! version)`: one already in the table is not made again.

pub mod delta;
mod group;
pub mod hive;
pub mod iceberg;

use super::{Sink, SinkError, WrittenFile};
use crate::spec::{Output, OutputFormat};
use crate::storage::Storage;
use crate::storage::delta::{CommitLine, LiveFile};
use arrow_schema::SchemaRef;
use std::collections::HashSet;
use std::sync::Arc;

/// A stored file to publish: where it is, its bytes, and its rows where
/// they are known (else its footer says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// Path relative to the output root.
    pub rel: String,
    /// Bytes.
    pub bytes: u64,
    /// Rows, if known.
    pub rows: Option<u64>,
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

/// Files replacing others in a table, in one change where the format has
/// them.
#[derive(Debug, Clone, Default)]
pub struct Replacement {
    /// The files joining, and the transaction ids the change records.
    pub joining: Vec<Joining>,
    /// Files leaving (paths relative to the output root).
    pub removes: Vec<String>,
    /// The rows stay the same, only their files change (a compaction, a
    /// new layout), rather than a change of the table's data.
    pub rearranges: bool,
    /// The change may be in the table already (made again after a crash):
    /// where its transaction ids all are, it is not made again.
    pub again: bool,
    /// The table's schema (the writer's): a table not yet made is made
    /// with it.
    pub schema: Option<SchemaRef>,
    /// The spec changed the table's partition columns, column types or
    /// the columns it holds: where the table was made otherwise, the
    /// change gives it `schema`'s layout too (a column `schema` lacks
    /// leaves the table).
    pub relayout: bool,
}

/// A commit made ready by [`TableFormat::prepare`], in the form the
/// format that made it keeps.
pub struct Prepared(pub Box<dyn std::any::Any + Send + Sync>);

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
}

/// What a vacuum of a table deleted.
#[derive(Debug, Clone, Copy, Default)]
pub struct Vacuumed {
    /// Data files.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
    /// The format's own records (log files).
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
    /// uploaded. Where it is, a unit is finished only once published, and
    /// an incremental export's files wait for their segment, so that a
    /// reorg repair's removals and the segment's files land in one commit.
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

    /// Publishes files one unit commit wrote to `table` (`schema`: the
    /// writer's), recording `txn`.
    async fn publish_written(
        &self,
        sink: &Sink,
        table: &str,
        schema: &SchemaRef,
        files: &[WrittenFile],
        txn: (String, i64),
    ) -> Result<(), SinkError>;

    /// Publishes stored files a checkpoint counts that `table` lacks (a run
    /// died between the two; `schema`: the writer's), recording `txn`; the
    /// table may hold them.
    async fn publish_stored(
        &self,
        sink: &Sink,
        table: &str,
        schema: &SchemaRef,
        files: Vec<Stored>,
        txn: (String, i64),
    ) -> Result<(), SinkError>;

    /// Publishes `joining` and removes `removes` (paths relative to the
    /// output root) from `table` in one commit; removals the table no
    /// longer holds are left out, and a commit whose transaction ids are
    /// all in the table already is not made again.
    async fn publish_whole(&self, sink: &Sink, table: &str, joining: Vec<Joining>, removes: Vec<String>) -> Result<(), SinkError> {
        match self.prepare(sink, table, joining, removes).await? {
            Some(p) => self.commit_prepared(sink, table, p).await,
            None => Ok(()),
        }
    }

    /// [`TableFormat::publish_whole`]'s commit made ready — every file's
    /// footer read and checked, the removals the table still holds found
    /// — so that a change can refuse before anything is recorded, and
    /// commit after. `None`: nothing to commit (or the format publishes
    /// nothing).
    async fn prepare(&self, sink: &Sink, table: &str, joining: Vec<Joining>, removes: Vec<String>) -> Result<Option<Prepared>, SinkError>;

    /// Commits what [`TableFormat::prepare`] made ready.
    async fn commit_prepared(&self, sink: &Sink, table: &str, prepared: Prepared) -> Result<(), SinkError>;

    /// Withdraws every file `owned` names (by file name) from what readers
    /// of `table` see, in one change (`--fresh`): the files withdrawn
    /// (paths relative to the output root), which the table's earlier
    /// versions still read, so they stay on storage until vacuumed; `None`
    /// where the format keeps no earlier versions (or the table is not
    /// made), and a file withdrawn is a file to delete.
    async fn withdraw(&self, sink: &Sink, table: &str, owned: Owned) -> Result<Option<HashSet<String>>, SinkError>;

    /// Replaces files in `table` as `r` says (see [`Replacement`]). Files
    /// joining are stored under their final names already. Returns the
    /// files to delete now (paths relative to the output root): in a
    /// format without earlier versions, the removed ones; in one with,
    /// none (they stay for the versions that read them, until vacuumed).
    async fn replace(&self, sink: &Sink, table: &str, r: Replacement) -> Result<Vec<String>, SinkError>;

    /// Whether replaced and withdrawn files stay on storage for the
    /// table's earlier versions, until a vacuum.
    fn keeps_versions(&self) -> bool;

    /// Whether a change of the output may drop columns a table has.
    fn drops_columns(&self) -> bool;
    /// Whether leaving columns out of a table (`columns`,
    /// `exclude_columns`) is a change of its schema alone: its files stay
    /// as they are and readers no longer see the columns, made by
    /// [`TableFormat::replace`] with no file and [`Replacement::relayout`]
    /// set. Else (the default) the table's files are written again without
    /// them, and replace the old ones in one change that also gives the
    /// table `schema`'s columns, where the format records them.
    fn drops_columns_in_place(&self) -> bool {
        false
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

/// Withdraws `owned` files from what readers of `table` see in every
/// format the output may hold it in — the job's own, and one another
/// format left there (a job switched from Delta with `--fresh` leaves a
/// log that must not name files about to be deleted) — and returns what
/// the job's own format keeps for its earlier versions (see
/// [`TableFormat::withdraw`]).
pub async fn withdraw_everywhere(sink: &Sink, table: &str, owned: Owned) -> Result<Option<HashSet<String>>, SinkError> {
    let own = sink.format();
    let kept = own.withdraw(sink, table, owned.clone()).await?;
    for other in every_format().iter().filter(|f| f.format() != own.format()) {
        other.withdraw(sink, table, owned.clone()).await?;
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
    implementation(output.format, output.bloom_filters.clone())
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
