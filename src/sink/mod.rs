//! Parquet writing through one `object_store` code path for local disk and
//! S3: where files go, what they are named, and when they become visible
//! and durable. What counts as committed is [`crate::state`]'s business.
//!
//! # Layout
//!
//! A data file's path, relative to the output root (`<uri>/`), is
//! `<dataset>/<partition dirs>/<job>-<unit>-<seq:06>.parquet`:
//!
//! - `<dataset>`: `blocks`, `events`, `portfolio` or `tokens`;
//! - `<partition dirs>` ([`Sink::partition_dir`]): hive keys in the order
//!   of `output.partition_by`, each present only if configured:
//!   `chain=<chain>`, then `date=<YYYY-MM-DD>` (UTC day of the row; rows
//!   without a day, such as tokens, get no `date` directory). One unit
//!   writes one file per partition it spans, each with its own sequence;
//! - the name ([`file_name`], read back strictly by [`parse_file_name`]):
//!   the job's name, the unit id ([`crate::plan::is_unit_id`]) and a
//!   sequence number of at least six digits, counted per unit from 0 in
//!   the order the unit opens files. The same job, unit and sequence
//!   always name the same file, which is what lets `state` tell committed
//!   files from orphans.
//!
//! For example `events/chain=base/date=2024-01-02/daily-e0-events-base-b100-200-000003.parquet`.
//! The store's own key prefix (`s3://bucket/<prefix>/`) comes before all of
//! it ([`crate::storage::Storage::path`]).
//!
//! # Visibility and durability
//!
//! A file is written through [`crate::storage::Storage::upload`]: it
//! appears under its final name whole or not at all. A file is *durable*
//! when [`UnitWriter::finish`] returns it ([`crate::storage::Storage::make_durable`]);
//! only then may a checkpoint count it. A file that fails before
//! completion is aborted.

mod clusters;
mod compact;
mod encoding;
pub mod format;
mod layout;
mod merge;
mod merge_input;
mod merge_output;
mod open_file;
mod order;
pub(crate) mod reader;
mod relayout;
mod splice;
mod unit_writer;

#[cfg(test)]
pub(crate) mod tests;

pub use compact::{MergeInput, Merged};
pub use layout::{compacted_name, file_name, hidden_name, parse_compacted_name, parse_file_name};
pub use relayout::{Relaid, Relayout, RelayoutInput};
pub use unit_writer::UnitWriter;

use crate::decode::schema;
use crate::spec::Output;
use crate::storage::{OpenError, Storage};
use crate::vocab::Dataset;
use arrow_schema::SchemaRef;
use parquet::file::properties::WriterProperties;
use std::sync::Arc;

/// Errors of the write stage.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SinkError {
    /// The output location cannot be used.
    #[error("output {uri}: {message}{}", source.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
    Config {
        /// The configured URI.
        uri: String,
        /// What is wrong, or what failed.
        message: String,
        /// Cause, when something failed (rather than the URI being wrong).
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// Deleting a file failed.
    #[error("deleting {path}: {source}")]
    Delete {
        /// Object path.
        path: String,
        /// Cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Reading a file back (compaction's inputs) failed.
    #[error("reading {path}: {source}")]
    Read {
        /// Object path.
        path: String,
        /// Cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Writing a file failed.
    #[error("writing {path}: {source}")]
    Write {
        /// Object path.
        path: String,
        /// Cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// An opened output location: its storage and how Parquet files are
/// written there.
#[derive(Debug)]
pub struct Sink {
    storage: Arc<Storage>,
    props: WriterProperties,
    partition_by: Vec<String>,
    /// How written files become the tables readers read.
    format: Arc<dyn format::TableFormat>,
}

impl From<OpenError> for SinkError {
    fn from(OpenError { uri, message, source }: OpenError) -> Self {
        SinkError::Config { uri, message, source }
    }
}

/// A file that is complete and durable.
#[derive(Debug, Clone)]
pub struct WrittenFile {
    /// Path relative to the output root.
    pub rel: String,
    /// Rows in it.
    pub rows: u64,
    /// Bytes in it.
    pub bytes: u64,
    /// The checksum of its bytes ([`crate::storage::checksum`]), computed as they were written.
    pub checksum: String,
    /// Its footer, when this process wrote it (the `delta` format takes
    /// the file's statistics from it).
    pub footer: Option<Arc<parquet::file::metadata::ParquetMetaData>>,
}

impl Sink {
    /// Opens `output.uri`: a local path, `file:///abs`, or `s3://bucket/prefix`
    /// (credentials and endpoint from the standard AWS variables).
    pub fn open(output: &Output) -> Result<Sink, SinkError> {
        let storage = Storage::open(output)?;
        Sink::build(output, storage)
    }

    /// An output on an object store built by the caller (an S3 client with
    /// its own credentials, an in-memory store), writing under `prefix`.
    /// `output.uri` only names it in messages. Its state is written the
    /// object-store way (single PUTs, conditional PUTs for leases), whatever
    /// the store keeps its objects in.
    pub fn with_store(output: &Output, store: Arc<dyn object_store::ObjectStore>, prefix: &str) -> Result<Sink, SinkError> {
        Sink::build(output, Storage::with_store(output, store, prefix))
    }

    /// This output as `output` (another format) would write it, on the
    /// same storage (its fence and the versions of documents it saw).
    pub fn as_output(&self, output: &Output) -> Result<Sink, SinkError> {
        Sink::built(output, self.storage.clone())
    }

    fn build(output: &Output, storage: Storage) -> Result<Sink, SinkError> {
        Sink::built(output, Arc::new(storage))
    }

    fn built(output: &Output, storage: Arc<Storage>) -> Result<Sink, SinkError> {
        Ok(Sink {
            storage,
            props: encoding::writer_properties(output)?,
            partition_by: output.partition_by.clone(),
            format: format::for_output(output),
        })
    }

    /// The output's table format.
    pub fn format(&self) -> &dyn format::TableFormat {
        self.format.as_ref()
    }

    /// The output's storage: every read and write of files and documents.
    pub fn storage(&self) -> &Arc<Storage> {
        &self.storage
    }

    /// Removes the file at `rel` (missing is fine).
    pub async fn delete(&self, rel: &str) -> Result<(), SinkError> {
        self.storage.delete(rel).await.map_err(|e| SinkError::Delete {
            path: rel.into(),
            source: Box::new(e),
        })
    }
}

/// `col` as type `to` where the two differ only in nested fields' names
/// and metadata (an Iceberg file's list items carry their field id; a
/// file adopted from another format's carry none): the same values under
/// `to`'s fields. `None` where the types differ otherwise.
pub(crate) fn with_nested_fields(col: &arrow_array::ArrayRef, to: &arrow_schema::DataType) -> Option<arrow_array::ArrayRef> {
    if col.data_type() == to {
        return Some(col.clone());
    }
    if !col.data_type().equals_datatype(to) {
        return None;
    }
    let data = col.to_data().into_builder().data_type(to.clone()).build().ok()?;
    Some(arrow_array::make_array(data))
}

/// The schema of `dataset` under `output`'s encoding.
pub fn schema_for(dataset: Dataset, output: &Output) -> SchemaRef {
    schema(dataset, output.hash_encoding)
}

/// The schema of the table `export` writes of its dataset: its
/// dataset's under `output`'s encoding, without the columns it does not
/// write (`columns`, `exclude_columns`).
pub fn export_schema(export: &crate::spec::Export, output: &Output) -> SchemaRef {
    selected_schema(export, schema_for(export.dataset, output))
}

/// `full`, the schema of one of `export`'s tables, without the columns
/// the export does not write.
pub fn selected_schema(export: &crate::spec::Export, full: SchemaRef) -> SchemaRef {
    if export.dropped_columns.is_empty() {
        return full;
    }
    let fields: Vec<_> = full.fields().iter().filter(|f| export.writes_column(f.name())).cloned().collect();
    Arc::new(arrow_schema::Schema::new_with_metadata(fields, full.metadata().clone()))
}

/// The Parquet writer properties a unit's data file of `schema` is
/// written with under `output`, rows declared sorted by `key` (column
/// names; empty for none). The writer's own, so `benches/parquet_floor.rs`
/// measures the encoder as exports configure it.
pub fn file_properties(
    output: &Output,
    schema: &arrow_schema::Schema,
    key: &[&str],
) -> Result<parquet::file::properties::WriterProperties, SinkError> {
    Ok(encoding::for_schema(&encoding::writer_properties(output)?, schema, key))
}
