//! Delta as a [`TableFormat`]: what the job asks of a table format,
//! answered from the tables' logs and made by [`DeltaTables`]' commits.

use super::{COMMIT_ATTEMPTS, DeltaTables, Publication};
use crate::sink::format::{Joining, Owned, Prepared, Replacement, Retention, Stored, TableFormat, TableVersion, Vacuumed};
use crate::sink::{Sink, SinkError, WrittenFile};
use crate::storage::delta::{AddFile, Change, DeltaError, LiveFile, Part};
use arrow_schema::{Schema, SchemaRef};
use std::collections::HashSet;

#[async_trait::async_trait]
impl TableFormat for DeltaTables {
    fn format(&self) -> crate::spec::OutputFormat {
        crate::spec::OutputFormat::Delta
    }

    fn table_words(&self) -> &'static str {
        "Delta table"
    }

    fn log_words(&self) -> &'static str {
        "Delta log"
    }

    fn store_refusal(&self, storage: &crate::storage::Storage) -> Option<String> {
        (!storage.creates_conditionally()).then(|| {
            "format = \"delta\" needs a store that creates objects only if absent (each Delta commit is put-if-absent \
             of its log file), and this one is configured not to (AWS_CONDITIONAL_PUT=disabled); unset it for AWS S3 \
             and stores that support conditional writes, or use format = \"parquet\""
                .to_string()
        })
    }

    fn publishes(&self) -> bool {
        true
    }

    async fn check_table(&self, sink: &Sink, table: &str, schema: &SchemaRef) -> Result<(), SinkError> {
        DeltaTables::check_table(self, sink, table, schema).await
    }

    async fn live_files(&self, sink: &Sink, table: &str) -> Result<Option<Vec<LiveFile>>, SinkError> {
        let t = self.table(sink, table);
        let failed = |e| log_unread(table, e);
        if !t.exists(sink.storage()).await.map_err(failed)? {
            return Ok(Some(Vec::new()));
        }
        Ok(Some(t.blocking(|t| t.live_files()).await.map_err(failed)?))
    }

    async fn recorded_version(&self, sink: &Sink, table: &str, app: &str) -> Result<i64, SinkError> {
        let t = self.table(sink, table);
        let failed = |e| log_unread(table, e);
        if !t.exists(sink.storage()).await.map_err(failed)? {
            return Ok(0);
        }
        let app = app.to_string();
        Ok(t.blocking(move |t| t.app_version(&app)).await.map_err(failed)?.unwrap_or(0))
    }

    async fn publish_written(
        &self,
        sink: &Sink,
        table: &str,
        schema: &SchemaRef,
        files: &[WrittenFile],
        txn: (String, i64),
    ) -> Result<(), SinkError> {
        let (file_schema, _) = sink.file_columns(schema);
        let adds = files
            .iter()
            .map(|f| self.add_of(table, &file_schema, f))
            .collect::<Result<Vec<_>, _>>()?;
        let p = Publication {
            table: table.to_string(),
            schema: schema.clone(),
            files: adds,
            txn,
            may_be_in: false,
        };
        self.publish(sink, p).await.map(|_| ())
    }

    async fn publish_stored(
        &self,
        sink: &Sink,
        table: &str,
        schema: &SchemaRef,
        files: Vec<Stored>,
        txn: (String, i64),
    ) -> Result<(), SinkError> {
        let joining = Joining {
            files,
            schema: Some(schema.clone()),
            txn: Some(txn.clone()),
            adopted: false,
        };
        let adds = self.adds(sink, table, &joining).await?;
        let p = Publication {
            table: table.to_string(),
            schema: schema.clone(),
            files: adds,
            txn,
            may_be_in: true,
        };
        self.publish(sink, p).await.map(|_| ())
    }

    async fn prepare(&self, sink: &Sink, table: &str, joining: Vec<Joining>, removes: Vec<String>) -> Result<Option<Prepared>, SinkError> {
        let mut parts = Vec::new();
        for j in &joining {
            let adds = self.adds(sink, table, j).await?;
            parts.push(Part { adds, txn: j.txn.clone() });
        }
        let dir = format!("{table}/");
        let removes: Vec<String> = removes.iter().filter_map(|r| r.strip_prefix(&dir)).map(String::from).collect();
        // Only what the table still has: a crash after an earlier commit
        // of the same change removed the rest (its transaction ids then
        // say its parts are in).
        let removes = if removes.is_empty() {
            removes
        } else {
            let live: HashSet<String> = TableFormat::live_files(self, sink, table)
                .await?
                .into_iter()
                .flatten()
                .map(|f| f.path)
                .collect();
            removes.into_iter().filter(|p| live.contains(p)).collect()
        };
        if parts.is_empty() && removes.is_empty() {
            return Ok(None);
        }
        let change = Change {
            parts,
            removes,
            rearranges: false,
            may_be_in: true,
        };
        Ok(Some(Prepared(Box::new(change))))
    }

    async fn commit_prepared(&self, sink: &Sink, table: &str, prepared: Prepared) -> Result<(), SinkError> {
        let change = prepared.0.downcast::<Change>().map_err(|_| SinkError::Write {
            path: table.into(),
            source: "a change another format prepared cannot be committed to a Delta table".into(),
        })?;
        self.commit(sink, table, *change).await.map(|_| ())
    }

    async fn withdraw(&self, sink: &Sink, table: &str, owned: Owned) -> Result<Option<HashSet<String>>, SinkError> {
        let t = self.table(sink, table);
        let failed = |e: DeltaError| SinkError::Write {
            path: table.into(),
            source: format!("removing the job's files from its Delta log: {e}").into(),
        };
        if !t.exists(sink.storage()).await.map_err(failed)? {
            return Ok(None);
        }
        let removed = t
            .blocking(move |t| {
                let removes: Vec<String> = t
                    .live_files()?
                    .into_iter()
                    .filter(|f| f.path.rsplit('/').next().is_some_and(|n| owned(n)))
                    .map(|f| f.path)
                    .collect();
                if !removes.is_empty() {
                    let change = Change {
                        removes: removes.clone(),
                        ..Default::default()
                    };
                    t.commit(&change, COMMIT_ATTEMPTS)?;
                }
                Ok(removes)
            })
            .await
            .map_err(failed)?;
        Ok(Some(removed.into_iter().map(|p| format!("{table}/{p}")).collect()))
    }

    async fn replace(&self, sink: &Sink, table: &str, r: Replacement) -> Result<Vec<String>, SinkError> {
        let relayout = match &r.schema {
            Some(schema) if r.relayout => self.needs_replacing(sink, table, schema).await?,
            _ => false,
        };
        let adds_any = r.joining.iter().any(|j| !j.files.is_empty());
        if !adds_any && r.removes.is_empty() && !relayout {
            return Ok(Vec::new());
        }
        // A table may be new (a derived one), or lack columns it gains.
        if let Some(schema) = r.schema.as_ref().filter(|_| !relayout && adds_any) {
            DeltaTables::check_table(self, sink, table, schema).await?;
        }
        let mut parts = Vec::with_capacity(r.joining.len());
        for j in &r.joining {
            parts.push(Part {
                adds: self.adds(sink, table, j).await?,
                txn: j.txn.clone(),
            });
        }
        let dir = format!("{table}/");
        let change = Change {
            parts,
            removes: r.removes.iter().filter_map(|p| p.strip_prefix(&dir)).map(String::from).collect(),
            rearranges: r.rearranges,
            may_be_in: r.again,
        };
        match &r.schema {
            Some(schema) if relayout => self.replace_layout(sink, table, schema, change).await?,
            _ => self.commit(sink, table, change).await?,
        };
        Ok(Vec::new())
    }

    fn keeps_versions(&self) -> bool {
        true
    }

    fn drops_columns(&self) -> bool {
        false
    }

    // Readers of a Delta table read the columns of its schema, but the bytes
    // of a column left out would stay in its files: they are written again,
    // and the commit that swaps them in gives the table its new schema.
    fn drops_columns_in_place(&self) -> bool {
        false
    }

    async fn has_table(&self, sink: &Sink, table: &str) -> Result<bool, SinkError> {
        self.table(sink, table)
            .exists(sink.storage())
            .await
            .map_err(|e| log_unread(table, e))
    }

    async fn table_version(&self, sink: &Sink, table: &str, commits: usize) -> Result<Option<TableVersion>, SinkError> {
        let t = self.table(sink, table);
        let failed = |e| log_unread(table, e);
        if !t.exists(sink.storage()).await.map_err(failed)? {
            return Ok(None);
        }
        let version = t.blocking(|t| t.snapshot().map(|s| s.version())).await.map_err(failed)?;
        let last_commits = t.last_commits(sink.storage(), version, commits).await;
        Ok(Some(TableVersion {
            version,
            last_commits,
            of_snapshots: false,
            snapshot: None,
        }))
    }

    async fn vacuum(&self, sink: &Sink, table: &str, keep: &Retention) -> Result<Vacuumed, SinkError> {
        super::vacuum::vacuum(self, sink, table, keep).await
    }

    async fn forget(&self, sink: &Sink, table: &str) -> Result<bool, SinkError> {
        super::vacuum::delete_log(sink, table).await
    }
}

impl DeltaTables {
    /// The `add`s of `joining`'s files: statistics from their footers, read
    /// against the writer's schema or, where none is given, each file's own.
    /// Adopted files are checked against the writer's schema first.
    /// Footers are read several at once (each a request on S3).
    async fn adds(&self, sink: &Sink, table: &str, joining: &Joining) -> Result<Vec<AddFile>, SinkError> {
        use futures::{StreamExt, TryStreamExt};
        let file_schema = joining.schema.as_ref().map(|s| sink.file_columns(s).0);
        // Collected first: a closure making the futures is not general
        // enough over lifetimes for the trait's `Send` futures.
        let adds: Vec<_> = joining
            .files
            .iter()
            .map(|f| self.add_one(sink, table, file_schema.as_deref(), joining.adopted, f))
            .collect();
        futures::stream::iter(adds).buffered(FOOTERS_AT_ONCE).try_collect().await
    }

    async fn add_one(&self, sink: &Sink, table: &str, schema: Option<&Schema>, adopted: bool, f: &Stored) -> Result<AddFile, SinkError> {
        match (schema, f.rows) {
            (Some(schema), _) if adopted => self.add_adopted(sink, table, &f.rel, f.bytes, schema).await,
            (Some(schema), Some(rows)) => self.add_from_storage(sink, table, schema, &f.rel, f.bytes, rows).await,
            _ => self.add_stored(sink, table, &f.rel, f.bytes, f.rows).await,
        }
    }
}

/// Footers read at once while adding stored files.
const FOOTERS_AT_ONCE: usize = 16;

/// A table's log that could not be read, named by its table.
fn log_unread(table: &str, e: DeltaError) -> SinkError {
    SinkError::Read {
        path: table.into(),
        source: format!("its Delta log: {e}").into(),
    }
}
