//! The `parquet` format: a hive-partitioned folder of Parquet files a
//! table (`<uri>/<table>/<key>=<value>/…/<name>.parquet`). A file is
//! visible once uploaded under its final name ([`crate::storage::Storage::upload`]
//! makes that whole or nothing), so there is nothing to publish, and what
//! readers see is what a listing of the folder finds. Nothing makes a
//! replace atomic: a reader listing a folder while files are swapped can
//! see both the old and the new (never neither), which is why the job
//! writes replacements before it deletes what they replace.

use super::{Change, Committed, LiveFile, Retention, TableFormat, TableVersion, Vacuumed};
use crate::sink::{Sink, SinkError};
use crate::spec::OutputFormat;
use crate::storage::Storage;
use arrow_schema::SchemaRef;

/// The `parquet` format.
#[derive(Debug, Clone, Copy)]
pub struct Hive;

#[async_trait::async_trait]
impl TableFormat for Hive {
    fn format(&self) -> OutputFormat {
        OutputFormat::Parquet
    }

    fn table_words(&self) -> &'static str {
        "folder"
    }

    fn log_words(&self) -> &'static str {
        "folder's listing"
    }

    fn store_refusal(&self, _: &Storage) -> Option<String> {
        None
    }

    fn publishes(&self) -> bool {
        false
    }

    async fn check_table(&self, _: &Sink, _: &str, _: &SchemaRef) -> Result<(), SinkError> {
        Ok(())
    }

    async fn live_files(&self, _: &Sink, _: &str) -> Result<Option<Vec<LiveFile>>, SinkError> {
        Ok(None)
    }

    async fn recorded_version(&self, _: &Sink, _: &str, _: &str) -> Result<i64, SinkError> {
        Ok(0)
    }

    /// A folder publishes nothing: no footer to read, nothing to commit.
    async fn prepare(&self, _: &Sink, _: &str, _: Change) -> Result<Option<Change>, SinkError> {
        Ok(None)
    }

    /// Files are seen once uploaded; the removed ones are the caller's to
    /// delete once the new ones are revealed.
    async fn commit(&self, _: &Sink, _: &str, change: Change) -> Result<Committed, SinkError> {
        Ok(Committed { to_delete: change.removes })
    }

    async fn has_table(&self, _: &Sink, _: &str) -> Result<bool, SinkError> {
        Ok(false)
    }

    async fn table_version(&self, _: &Sink, _: &str, _: usize) -> Result<Option<TableVersion>, SinkError> {
        Ok(None)
    }

    async fn vacuum(&self, _: &Sink, _: &str, _: &Retention) -> Result<Vacuumed, SinkError> {
        Ok(Vacuumed::default())
    }

    async fn forget(&self, _: &Sink, _: &str) -> Result<bool, SinkError> {
        Ok(false)
    }
}
