//! Delta as a [`TableFormat`]: what the job asks of a table format,
//! answered from the tables' logs and made by [`DeltaTables`]' commits.

use super::DeltaTables;
use super::table::{self as log, DeltaError};
use crate::sink::format::{Change, Committed, LiveFile, Retention, TableFormat, TableVersion, Vacuumed, read_footers, within};
use crate::sink::{Sink, SinkError};
use arrow_schema::SchemaRef;

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

    async fn commit(&self, sink: &Sink, table: &str, mut change: Change) -> Result<Committed, SinkError> {
        read_footers(self, sink, &mut change).await?;
        let change = match change.into_publication() {
            Ok(p) => {
                let parts = self.parts(sink, table, &p.joining)?;
                self.publish(sink, table, &p.schema, parts, p.again).await?;
                return Ok(Committed::default());
            }
            Err(change) => change,
        };
        let relayout = match &change.schema {
            Some(schema) if change.relayout => self.needs_replacing(sink, table, schema).await?,
            _ => false,
        };
        let adds_any = change.adds_any();
        // A prepared change commits even transaction ids alone (units
        // whose files are in already record their versions).
        let records = change.is_prepared() && !change.joining.is_empty();
        if !adds_any && change.removes.is_empty() && !relayout && !records {
            return Ok(Committed::default());
        }
        // A table may be new (a derived one), or lack columns it gains.
        if let Some(schema) = change.schema.as_ref().filter(|_| !relayout && adds_any) {
            DeltaTables::check_table(self, sink, table, schema).await?;
        }
        let parts = self.parts(sink, table, &change.joining)?;
        let commit = log::Change {
            parts,
            removes: within(table, &change.removes),
            rearranges: change.rearranges,
            may_be_in: change.again,
        };
        match &change.schema {
            Some(schema) if relayout => self.replace_layout(sink, table, schema, commit).await?,
            _ => self.commit_change(sink, table, commit).await?,
        };
        Ok(Committed::default())
    }

    // Readers of a Delta table read the columns of its schema, and a
    // rewrite into fewer columns gives it its new schema in the commit
    // that swaps the files; but a derivation only ever adds to it.
    fn column_drop_refusal(&self) -> Option<&'static str> {
        Some("a Delta table's columns are only ever added")
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

/// A table's log that could not be read, named by its table.
fn log_unread(table: &str, e: DeltaError) -> SinkError {
    SinkError::Read {
        path: table.into(),
        source: format!("its Delta log: {e}").into(),
    }
}
