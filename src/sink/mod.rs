//! Parquet writing through one `object_store` code path for local disk and
//! S3. Files are hive-partitioned (`<dataset>/chain=…/date=…/`), named
//! deterministically per unit and sequence (`<unit>-<seq>.parquet`), and
//! become visible only when complete: `BufWriter` stages the bytes and the
//! object appears on completion (rename locally, multipart completion on
//! S3); a failed file is aborted. Locally the finished file is fsynced
//! before a checkpoint may point past it.

mod chunks;
mod encoding;
mod layout;
mod open;
mod open_file;
mod unit_writer;

pub use layout::{file_name, parse_file_name};
pub use unit_writer::UnitWriter;

use crate::decode::schema;
use crate::spec::{Dataset, Output};
use arrow::datatypes::SchemaRef;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::file::properties::WriterProperties;
use std::path::PathBuf;
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

/// An opened output location.
#[derive(Debug)]
pub struct Sink {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    local_root: Option<PathBuf>,
    props: WriterProperties,
    partition_by: Vec<String>,
    uri: String,
    /// Upload part size: S3 needs at least 5 MiB per part.
    part_bytes: usize,
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
}

impl Sink {
    /// The object store.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The output URI as configured.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Local directory of the output, when it is on local disk.
    pub fn local_root(&self) -> Option<&PathBuf> {
        self.local_root.as_ref()
    }

    /// Object path of `rel` (relative to the output root).
    pub fn path(&self, rel: &str) -> Path {
        if self.prefix.is_empty() {
            Path::from(rel)
        } else {
            Path::from(format!("{}/{rel}", self.prefix))
        }
    }

    /// `rel` of an object path under the root.
    pub fn rel_of(&self, p: &Path) -> String {
        let s = p.as_ref();
        if self.prefix.is_empty() {
            s.to_string()
        } else {
            s.strip_prefix(&format!("{}/", self.prefix)).unwrap_or(s).to_string()
        }
    }

    /// Removes an object (missing is fine).
    pub async fn delete(&self, rel: &str) -> Result<(), SinkError> {
        match self.store.delete(&self.path(rel)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(SinkError::Delete {
                path: rel.into(),
                source: Box::new(e),
            }),
        }
    }
}

/// The schema of `dataset` under `output`'s encoding.
pub fn schema_for(dataset: Dataset, output: &Output) -> SchemaRef {
    schema(dataset, output.hash_encoding)
}
