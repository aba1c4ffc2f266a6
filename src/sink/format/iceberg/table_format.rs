//! Iceberg as a [`TableFormat`]: what the job asks of a table format,
//! answered from the tables' metadata and made by [`IcebergTables`]'
//! snapshots.

use super::{COMMIT_ATTEMPTS, Footed, IcebergTables, data_files, footer_of, footers_of, iceberg_error};
use crate::sink::format::{Joining, Owned, Prepared, Replacement, Retention, Stored, TableFormat, TableVersion, Vacuumed};
use crate::sink::{Sink, SinkError, WrittenFile};
use crate::storage::delta::{CommitLine, LiveFile};
use crate::storage::iceberg::{self as ice, Current, Table};
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
        (!storage.creates_conditionally()).then(|| {
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

    async fn publish_written(
        &self,
        sink: &Sink,
        table: &str,
        schema: &SchemaRef,
        files: &[WrittenFile],
        txn: (String, i64),
    ) -> Result<(), SinkError> {
        let mut footed = Vec::with_capacity(files.len());
        for f in files {
            footed.push(match &f.footer {
                Some(footer) => Footed {
                    rel: f.rel.clone(),
                    bytes: f.bytes,
                    footer: footer.clone(),
                },
                None => footer_of(sink, &f.rel, f.bytes).await?,
            });
        }
        self.publish(sink, table, schema, footed, txn, false).await
    }

    async fn publish_stored(
        &self,
        sink: &Sink,
        table: &str,
        schema: &SchemaRef,
        files: Vec<Stored>,
        txn: (String, i64),
    ) -> Result<(), SinkError> {
        let listed: Vec<(String, u64)> = files.into_iter().map(|f| (f.rel, f.bytes)).collect();
        let footed = footers_of(sink, &listed).await?;
        self.publish(sink, table, schema, footed, txn, true).await
    }

    async fn prepare(&self, sink: &Sink, table: &str, joining: Vec<Joining>, removes: Vec<String>) -> Result<Option<Prepared>, SinkError> {
        let t = self.table(sink, table);
        // A table not made yet is made (by the caller's check, once every
        // file is found to fit) as the writer's schema makes it: the same
        // ids and spec as if it were made now.
        let current = match self.current(sink, table).await? {
            Some(c) => c,
            None => match joining.iter().find_map(|j| j.schema.clone()) {
                Some(schema) => Arc::new(self.would_make(sink, &t, &schema)?),
                None => return Ok(None),
            },
        };
        let mut parts = Vec::with_capacity(joining.len());
        for j in &joining {
            let footed = self.joining_files(sink, j).await?;
            parts.push(ice::Part {
                files: data_files(&t, &current, None, &footed)?,
                txn: j.txn.clone(),
            });
        }
        let removes = self.still_live(sink, table, &removes).await?;
        if parts.is_empty() && removes.is_empty() {
            return Ok(None);
        }
        let change = ice::Change {
            parts,
            removes,
            may_be_in: true,
            ..ice::Change::default()
        };
        Ok(Some(Prepared(Box::new(change))))
    }

    async fn commit_prepared(&self, sink: &Sink, table: &str, prepared: Prepared) -> Result<(), SinkError> {
        let change = prepared.0.downcast::<ice::Change>().map_err(|_| SinkError::Write {
            path: table.into(),
            source: "a change another format prepared cannot be committed to an Iceberg table".into(),
        })?;
        self.commit(sink, table, *change).await
    }

    async fn withdraw(&self, sink: &Sink, table: &str, owned: Owned) -> Result<Option<HashSet<String>>, SinkError> {
        let Some(current) = self.current(sink, table).await? else {
            return Ok(None);
        };
        let t = self.table(sink, table);
        let removes: Vec<String> = t
            .live_files(sink.storage(), &current)
            .await
            .map_err(iceberg_error)?
            .into_iter()
            .map(|f| f.path)
            .filter(|p| p.rsplit('/').next().is_some_and(|n| owned(n)))
            .collect();
        if !removes.is_empty() {
            let change = ice::Change {
                removes: removes.clone(),
                ..ice::Change::default()
            };
            self.commit(sink, table, change).await?;
        }
        Ok(Some(removes.into_iter().map(|p| format!("{table}/{p}")).collect()))
    }

    async fn replace(&self, sink: &Sink, table: &str, r: Replacement) -> Result<Vec<String>, SinkError> {
        let adds_any = r.joining.iter().any(|j| !j.files.is_empty());
        if !adds_any && r.removes.is_empty() && !r.relayout {
            return Ok(Vec::new());
        }
        let t = self.table(sink, table);
        let committer = self.committer(sink, table);
        let current = match (&r.schema, self.current(sink, table).await?) {
            // A table may be new (a derived one), or lack columns it gains.
            (Some(schema), c) if !r.relayout || c.is_none() => {
                let _turn = committer.group.turn().await;
                self.ready(sink, &t, schema).await?
            }
            (_, Some(c)) => c,
            _ => return Ok(Vec::new()),
        };
        let layout = match &r.schema {
            Some(schema) if r.relayout => {
                let keys = Self::keys(sink, table, schema)?;
                t.new_layout(&current, schema, &keys).map_err(iceberg_error)?
            }
            _ => None,
        };
        if !adds_any && r.removes.is_empty() && layout.is_none() {
            // Laid out so already, and nothing to replace.
            return Ok(Vec::new());
        }
        let mut parts = Vec::with_capacity(r.joining.len());
        for j in &r.joining {
            let footed = self.joining_files(sink, j).await?;
            parts.push(ice::Part {
                files: data_files(&t, &current, layout.as_ref(), &footed)?,
                txn: j.txn.clone(),
            });
        }
        let removes = if r.again {
            self.still_live(sink, table, &r.removes).await?
        } else {
            strip(table, &r.removes)
        };
        let change = ice::Change {
            parts,
            removes,
            rearranges: r.rearranges,
            may_be_in: r.again,
            layout,
            ..ice::Change::default()
        };
        self.commit(sink, table, change).await?;
        Ok(Vec::new())
    }

    fn keeps_versions(&self) -> bool {
        true
    }

    fn drops_columns(&self) -> bool {
        true
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
        if t.hint_behind(sink.storage()).await.map_err(iceberg_error)?.is_none() {
            return Ok(false);
        }
        t.load_to_write(sink.storage()).await.map_err(iceberg_error)?;
        Ok(true)
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

    async fn vacuum(&self, sink: &Sink, table: &str, keep: &Retention) -> Result<Vacuumed, SinkError> {
        vacuum(self, sink, table, keep).await
    }

    async fn forget(&self, sink: &Sink, table: &str) -> Result<bool, SinkError> {
        forget(sink, table).await
    }
}

impl IcebergTables {
    /// The footers of `j`'s files; adopted ones checked against the
    /// writer's columns first.
    async fn joining_files(&self, sink: &Sink, j: &Joining) -> Result<Vec<Footed>, SinkError> {
        let listed: Vec<(String, u64)> = j.files.iter().map(|f| (f.rel.clone(), f.bytes)).collect();
        let footed = footers_of(sink, &listed).await?;
        if let (true, Some(schema)) = (j.adopted, &j.schema) {
            let (want, _) = sink.file_columns(schema);
            for f in &footed {
                let meta = f.footer.file_metadata();
                let have = parquet::arrow::parquet_to_arrow_schema(meta.schema_descr(), meta.key_value_metadata()).map_err(|e| {
                    SinkError::Read {
                        path: f.rel.clone(),
                        source: Box::new(e),
                    }
                })?;
                if let Some(refusal) = crate::sink::format::adoption_refusal(&f.rel, &have, &want, "Iceberg table") {
                    return Err(refusal);
                }
            }
        }
        Ok(footed)
    }

    /// The table as [`Table::create_if_absent`] would make it now for
    /// rows of `schema`, without making it.
    fn would_make(&self, sink: &Sink, t: &Table, schema: &SchemaRef) -> Result<Current, SinkError> {
        let keys = Self::keys(sink, t.rel(), schema)?;
        t.draft(schema, &keys, &Default::default()).map_err(iceberg_error)
    }

    /// Those of `removes` (paths relative to the output root) the table
    /// still holds, relative to the table: a crash after an earlier
    /// commit of the same change removed the rest.
    async fn still_live(&self, sink: &Sink, table: &str, removes: &[String]) -> Result<Vec<String>, SinkError> {
        let removes = strip(table, removes);
        if removes.is_empty() {
            return Ok(removes);
        }
        let live: HashSet<String> = TableFormat::live_files(self, sink, table)
            .await?
            .into_iter()
            .flatten()
            .map(|f| f.path)
            .collect();
        Ok(removes.into_iter().filter(|p| live.contains(p)).collect())
    }
}

/// `paths` under the output root, those of `table`, relative to it.
fn strip(table: &str, paths: &[String]) -> Vec<String> {
    let dir = format!("{table}/");
    paths.iter().filter_map(|p| p.strip_prefix(&dir)).map(String::from).collect()
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
    let expired = t.expire(storage, retention, COMMIT_ATTEMPTS).await.map_err(iceberg_error)?;
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
