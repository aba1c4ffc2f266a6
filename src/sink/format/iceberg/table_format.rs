//! Iceberg as a [`TableFormat`]: what the job asks of a table format,
//! answered from the tables' metadata and made by [`IcebergTables`]'
//! snapshots.

use super::table::{self as ice, Current, Table};
use super::{COMMIT_ATTEMPTS, IcebergTables, data_files, iceberg_error};
use crate::sink::format::{
    Change, CommitLine, Committed, LiveFile, Retention, Settled, TableFormat, TableVersion, Vacuumed, prepare_neutral, read_footers,
    still_live, within,
};
use crate::sink::{Sink, SinkError};
use arrow_schema::SchemaRef;
use std::collections::HashSet;
use std::sync::Arc;

#[async_trait::async_trait]
impl TableFormat for IcebergTables {
    fn format(&self) -> crate::spec::OutputFormat {
        crate::spec::OutputFormat::Iceberg
    }

    fn table_words(&self) -> &'static str {
        "Iceberg table"
    }

    fn log_words(&self) -> &'static str {
        "Iceberg metadata"
    }

    fn store_refusal(&self, storage: &crate::storage::Storage) -> Option<String> {
        // A catalog arbitrates commits; the store's puts need no condition.
        (self.catalog().is_none() && !storage.creates_conditionally()).then(|| {
            "format = \"iceberg\" needs a store that creates objects only if absent (each Iceberg commit is a \
             put-if-absent of the table's next metadata file), and this one is configured not to \
             (AWS_CONDITIONAL_PUT=disabled); unset it for AWS S3 and stores that support conditional writes, or use \
             format = \"parquet\""
                .to_string()
        })
    }

    fn publishes(&self) -> bool {
        true
    }

    async fn check_table(&self, sink: &Sink, table: &str, schema: &SchemaRef) -> Result<(), SinkError> {
        let committer = self.committer(sink, table);
        let mut ready = committer.group.turn().await;
        self.ready(sink, &committer.table, schema).await?;
        *ready = true;
        Ok(())
    }

    fn file_schema(&self, table: &str, schema: SchemaRef) -> SchemaRef {
        IcebergTables::file_schema(self, table, schema)
    }

    async fn live_files(&self, sink: &Sink, table: &str) -> Result<Option<Vec<LiveFile>>, SinkError> {
        let Some(current) = self.current(sink, table).await? else {
            return Ok(Some(Vec::new()));
        };
        let t = self.table(sink, table);
        let files = t.live_files(sink.storage(), &current).await.map_err(iceberg_error)?;
        Ok(Some(
            files
                .into_iter()
                .map(|f| LiveFile {
                    path: f.path,
                    size: f.file_size,
                    rows: Some(f.record_count),
                })
                .collect(),
        ))
    }

    async fn recorded_version(&self, sink: &Sink, table: &str, app: &str) -> Result<i64, SinkError> {
        Ok(self.current(sink, table).await?.and_then(|c| c.recorded_version(app)).unwrap_or(0))
    }

    /// The neutral checks, then how each file fits the table (its
    /// partition tuple and statistics under the table's spec, or the spec
    /// a table not made yet is made with), so that a conversion refuses
    /// before anything is recorded.
    async fn prepare(&self, sink: &Sink, table: &str, change: Change) -> Result<Option<Change>, SinkError> {
        let Some(change) = prepare_neutral(self, sink, table, change).await? else {
            return Ok(None);
        };
        let t = self.table(sink, table);
        self.carry_adopted_ids(sink, &t, &change).await?;
        let current = match self.current(sink, table).await? {
            Some(c) => c,
            None => match change.joining.iter().find_map(|j| j.schema.clone()) {
                Some(schema) => Arc::new(self.would_make(sink, &t, &schema)?),
                None => return Ok(Some(change)),
            },
        };
        for j in &change.joining {
            data_files(&t, &current, None, &j.files)?;
        }
        Ok(Some(change))
    }

    async fn commit(&self, sink: &Sink, table: &str, mut change: Change) -> Result<Committed, SinkError> {
        read_footers(self, sink, &mut change).await?;
        let change = match change.into_publication() {
            Ok(p) => {
                let units = p.joining.into_iter().filter_map(|j| Some((j.files, j.txn?))).collect();
                self.publish(sink, table, &p.schema, units, p.again).await?;
                return Ok(Committed::default());
            }
            Err(change) => change,
        };
        // A prepared change commits even transaction ids alone (units
        // whose files are in already record their versions).
        let records = change.is_prepared() && !change.joining.is_empty();
        if !change.adds_any() && change.removes.is_empty() && !change.relayout && !records {
            return Ok(Committed::default());
        }
        let t = self.table(sink, table);
        let committer = self.committer(sink, table);
        let current = match (&change.schema, self.current(sink, table).await?) {
            // A table may be new (a derived one), or lack columns it gains.
            (Some(schema), c) if !change.relayout || c.is_none() => {
                let _turn = committer.group.turn().await;
                self.ready(sink, &t, schema).await?
            }
            (_, Some(c)) => c,
            _ => return Ok(Committed::default()),
        };
        let layout = match &change.schema {
            Some(schema) if change.relayout => {
                let keys = Self::keys(sink, table, schema)?;
                t.new_layout(&current, schema, &keys).map_err(iceberg_error)?
            }
            _ => None,
        };
        if !change.adds_any() && change.removes.is_empty() && layout.is_none() && !records {
            // Laid out so already, and nothing to replace.
            return Ok(Committed::default());
        }
        let mut parts = Vec::with_capacity(change.joining.len());
        for j in &change.joining {
            parts.push(ice::Part {
                files: data_files(&t, &current, layout.as_ref(), &j.files)?,
                txn: j.txn.clone(),
            });
        }
        let removes = if change.again && !change.is_prepared() {
            within(table, &still_live(self, sink, table, change.removes).await?)
        } else {
            within(table, &change.removes)
        };
        let commit = ice::Change {
            parts,
            removes,
            rearranges: change.rearranges,
            may_be_in: change.again,
            layout,
            ..ice::Change::default()
        };
        self.commit_change(sink, table, commit).await?;
        Ok(Committed::default())
    }

    async fn pointer_behind(&self, sink: &Sink, table: &str) -> Result<Option<(String, String)>, SinkError> {
        let t = self.table(sink, table);
        let Some((hinted, newest)) = t.hint_behind(sink.storage()).await.map_err(iceberg_error)? else {
            return Ok(None);
        };
        let named = match hinted {
            Some(v) => format!("names v{v}.metadata.json"),
            None => "names no readable version".to_string(),
        };
        Ok(Some((
            format!("{table}/metadata/version-hint.text"),
            format!(
                "{named}, and the newest metadata is v{newest}.metadata.json: readers that follow the hint (DuckDB's \
                 iceberg_scan, pyiceberg's StaticTable, Spark's HadoopCatalog) read an older table (a writer died \
                 between the two); `verify --repair`, the next run or a compaction points it at the newest"
            ),
        )))
    }

    async fn settle_pointer(&self, sink: &Sink, table: &str) -> Result<bool, SinkError> {
        let t = self.table(sink, table);
        let behind = t.hint_behind(sink.storage()).await.map_err(iceberg_error)?.is_some();
        // A writer's load: it points the hint, and refuses a table another
        // writer committed to before anything is written for it.
        t.load_to_write(sink.storage()).await.map_err(iceberg_error)?;
        Ok(behind)
    }

    async fn has_table(&self, sink: &Sink, table: &str) -> Result<bool, SinkError> {
        Ok(self.current(sink, table).await?.is_some())
    }

    async fn table_version(&self, sink: &Sink, table: &str, commits: usize) -> Result<Option<TableVersion>, SinkError> {
        let Some(current) = self.current(sink, table).await? else {
            return Ok(None);
        };
        let last_commits = current
            .metadata
            .ancestry()
            .into_iter()
            .take(commits)
            .map(|s| CommitLine {
                version: s.sequence_number.max(0) as u64,
                timestamp: chrono::DateTime::from_timestamp_millis(s.timestamp_ms).map(|t| t.to_rfc3339()),
                operation: s.operation().to_string(),
                adds: s.count("added-data-files").unwrap_or(0),
                removes: s.count("deleted-data-files").unwrap_or(0),
                data_change: s.operation() != ice::Operation::Replace.name(),
                metadata: false,
            })
            .collect();
        Ok(Some(TableVersion {
            version: current.version,
            last_commits,
            of_snapshots: true,
            snapshot: current.snapshot().map(|s| (s.snapshot_id, s.sequence_number)),
        }))
    }

    fn maintains(&self) -> bool {
        true
    }

    async fn maintain(&self, sink: &Sink, table: &str, settled: &Settled) -> Result<usize, SinkError> {
        let t = self.table(sink, table);
        let Some(current) = self.current(sink, table).await? else {
            return Ok(0);
        };
        let Some(retention) = ice::Retention::of_properties(&current, chrono::Utc::now().timestamp_millis()) else {
            return Ok(0);
        };
        let expired = t
            .expire(sink.storage(), retention, settled.as_ref(), COMMIT_ATTEMPTS)
            .await
            .map_err(iceberg_error)?;
        if !expired.snapshots.is_empty() {
            tracing::debug!(
                table,
                snapshots = expired.snapshots.len(),
                files = expired.metadata_files_deleted,
                "expired iceberg snapshots past the table's history.expire properties"
            );
        }
        Ok(expired.snapshots.len())
    }

    async fn vacuum(&self, sink: &Sink, table: &str, keep: &Retention) -> Result<Vacuumed, SinkError> {
        vacuum(self, sink, table, keep).await
    }

    async fn forget(&self, sink: &Sink, table: &str) -> Result<bool, SinkError> {
        forget(sink, table).await
    }
}

impl IcebergTables {
    /// The field ids `change`'s adopted files carry (written by an earlier
    /// Iceberg table of the output, before a conversion away from it):
    /// the table takes them where it is made now, or has no snapshot yet
    /// ([`Table::carry_ids`]). Refused (exit 2) where the files disagree
    /// with each other, or with a table that holds files already.
    async fn carry_adopted_ids(&self, sink: &Sink, t: &Table, change: &Change) -> Result<(), SinkError> {
        let mut ids = ice::schema::FieldIds::new();
        let refused = |rel: &str, message: String| SinkError::Config {
            uri: rel.into(),
            message,
            source: None,
        };
        for f in change.joining.iter().filter(|j| j.adopted).flat_map(|j| &j.files) {
            let Some(footer) = &f.footer else { continue };
            let have = crate::sink::reader::footer_schema(&f.rel, footer)?;
            for (name, id) in ice::schema::carried_ids(&have) {
                match ids.get(&name) {
                    Some(was) if *was != id => {
                        return Err(refused(
                            &f.rel,
                            format!(
                                "its column {name} carries Iceberg field id {} and other files of the table {}: \
                                 files of two Iceberg tables cannot join one; start over with --fresh",
                                id.0, was.0
                            ),
                        ));
                    }
                    _ => {
                        ids.insert(name, id);
                    }
                }
            }
        }
        if ids.is_empty() {
            return Ok(());
        }
        if let Some(current) = self.current(sink, t.rel()).await?
            && current.snapshot().is_some()
            && let Some((name, (id, _))) = ids
                .iter()
                .find(|(name, (id, _))| current.schema().field(name).is_some_and(|f| f.id != *id))
        {
            return Err(refused(
                t.rel(),
                format!(
                    "files to adopt carry Iceberg field id {id} for column {name}, and the table gives it {}: \
                     another table's files cannot join it; start over with --fresh",
                    current.schema().field(name).map_or(0, |f| f.id)
                ),
            ));
        }
        t.carry_ids(ids);
        Ok(())
    }

    /// The table as [`Table::create_if_absent`] would make it now for
    /// rows of `schema`, without making it.
    fn would_make(&self, sink: &Sink, t: &Table, schema: &SchemaRef) -> Result<Current, SinkError> {
        let keys = Self::keys(sink, t.rel(), schema)?;
        t.draft(schema, &keys, &Default::default()).map_err(iceberg_error)
    }
}

/// Expires `table`'s snapshots past the retention and deletes the job's
/// data files no kept snapshot reads: not pending in the job's records,
/// and written before the cutoff (a file being written, or one a run is
/// about to commit, is newer). Files of other jobs are never touched.
async fn vacuum(tables: &IcebergTables, sink: &Sink, table: &str, keep: &Retention) -> Result<Vacuumed, SinkError> {
    let storage = sink.storage();
    let t = tables.table(sink, table);
    let mut out = Vacuumed::default();
    if tables.current(sink, table).await?.is_none() {
        return Ok(out);
    }
    let retention = ice::Retention {
        keep_since_ms: keep.cutoff_ms,
        keep_last: 0,
    };
    let expired = t
        .expire(storage, retention, keep.settled.as_ref(), COMMIT_ATTEMPTS)
        .await
        .map_err(iceberg_error)?;
    out.log_files = expired.metadata_files_deleted;
    let Some(current) = tables.current(sink, table).await? else {
        return Ok(out);
    };
    let read: HashSet<String> = t
        .referenced_files(storage, &current)
        .await
        .map_err(iceberg_error)?
        .into_iter()
        .map(|p| format!("{table}/{p}"))
        .collect();
    let metadata = format!("{table}/metadata/");
    let listed = storage.list(&format!("{table}/")).await.map_err(|e| SinkError::Write {
        path: table.into(),
        source: format!("vacuum: {e}").into(),
    })?;
    for m in listed {
        let rel = storage.rel_of(&m.location);
        let name = rel.rsplit('/').next().unwrap_or_default();
        if rel.starts_with(&metadata) || !(keep.owned)(name) {
            continue;
        }
        if read.contains(&rel) || keep.pending.contains(&rel) || m.last_modified.timestamp_millis() >= keep.cutoff_ms {
            continue;
        }
        sink.delete(&rel).await?;
        out.files += 1;
        out.bytes += m.size;
    }
    Ok(out)
}

/// Deletes `table`'s metadata (`<table>/metadata/`): the version hint
/// first, then the metadata versions oldest first, then manifests and
/// manifest lists. A reader meanwhile finds no hint and the newest
/// version still there, or no table, and never an older version read as
/// current. Whether there was any.
async fn forget(sink: &Sink, table: &str) -> Result<bool, SinkError> {
    let rank = |rel: &str| {
        let name = rel.rsplit('/').next().unwrap_or_default();
        match ice::version_of(name) {
            _ if name == "version-hint.text" => (0, 0),
            Some(v) => (1, v),
            None => (2, 0),
        }
    };
    crate::sink::format::delete_records(sink, &format!("{table}/metadata/"), rank).await
}
