//! The `parquet` format: a hive-partitioned folder of Parquet files a
//! table (`<uri>/<table>/<key>=<value>/…/<name>.parquet`). A file is
//! visible once uploaded under its final name ([`crate::storage::Storage::upload`]
//! makes that whole or nothing), so there is nothing to publish, and what
//! readers see is what a listing of the folder finds. Nothing makes a
//! replace atomic: a reader listing a folder while files are swapped can
//! see both the old and the new (never neither), which is why the job
//! writes replacements before it deletes what they replace.

use super::{Joining, Owned, Prepared, Replacement, Retention, Stored, TableFormat, TableVersion, Vacuumed};
use crate::sink::{Sink, SinkError, WrittenFile};
use crate::spec::OutputFormat;
use crate::storage::Storage;
use crate::storage::delta::LiveFile;
use arrow_schema::SchemaRef;
use std::collections::HashSet;

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

    async fn publish_written(&self, _: &Sink, _: &str, _: &SchemaRef, _: &[WrittenFile], _: (String, i64)) -> Result<(), SinkError> {
        Ok(())
    }

    async fn publish_stored(&self, _: &Sink, _: &str, _: &SchemaRef, _: Vec<Stored>, _: (String, i64)) -> Result<(), SinkError> {
        Ok(())
    }

    async fn prepare(&self, _: &Sink, _: &str, _: Vec<Joining>, _: Vec<String>) -> Result<Option<Prepared>, SinkError> {
        Ok(None)
    }

    async fn commit_prepared(&self, _: &Sink, _: &str, _: Prepared) -> Result<(), SinkError> {
        Ok(())
    }

    async fn withdraw(&self, _: &Sink, _: &str, _: Owned) -> Result<Option<HashSet<String>>, SinkError> {
        Ok(None)
    }

    async fn replace(&self, _: &Sink, _: &str, r: Replacement) -> Result<Vec<String>, SinkError> {
        Ok(r.removes)
    }

    fn keeps_versions(&self) -> bool {
        false
    }

    fn drops_columns(&self) -> bool {
        true
    }

    // A folder's schema is its files': they are written again without the
    // columns.
    fn drops_columns_in_place(&self) -> bool {
        false
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
