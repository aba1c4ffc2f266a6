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
//! it ([`Sink::path`]).
//!
//! # Visibility and durability
//!
//! A file appears under its final name whole or not at all: the encoder's
//! bytes go to an `object_store` `BufWriter`, which keeps them out of
//! sight until the file is complete:
//!
//! - **Local disk:** the bytes go to a staging file beside the target,
//!   `<final name>#<n>` (`n` a small number unique among concurrent
//!   writers of that name), renamed to the final name on completion.
//!   Staging files are not listed by the store and do not match
//!   `*.parquet` globs; the ones a dead writer leaves are removed by
//!   `state` (`StateStore::remove_orphans`, `StateStore::clear`).
//! - **S3:** a small file is one PUT on completion; a larger one is a
//!   multipart upload of parts of at least 5 MiB, visible only once the
//!   upload is completed. An upload that is never completed (the writer
//!   died) leaves no object; its parts stay until a bucket lifecycle rule
//!   for incomplete multipart uploads reclaims them.
//!
//! A file that fails before completion is aborted. A file is *durable*
//! when [`UnitWriter::finish`] returns it: its upload is complete and,
//! locally, the file's bytes have been fsynced. Only then may a checkpoint
//! count it. (Locally the directory is not fsynced after the rename, so a
//! power loss, unlike a crash of the process, can lose a finished file's
//! name; `chainetl verify` then reports it missing.)

pub mod checksum;
mod chunks;
mod clusters;
mod compact;
mod encoding;
pub mod fence;
mod layout;
mod merge;
mod open;
mod open_file;
mod order;
mod reader;
mod splice;
mod unit_writer;
pub mod versions;

#[cfg(test)]
pub(crate) mod tests;

pub use compact::{MergeInput, Merged, hidden_name};
pub use encoding::natural_key;
pub use layout::{compacted_name, file_name, parse_compacted_name, parse_file_name};
pub use unit_writer::UnitWriter;

use crate::decode::schema;
use crate::spec::Output;
use crate::vocab::Dataset;
use arrow_schema::SchemaRef;
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

/// An opened output location.
#[derive(Debug)]
pub struct Sink {
    /// The store behind the lease's fence: every write of the run.
    store: Arc<dyn ObjectStore>,
    /// The same store, unfenced: the lease's own documents.
    unfenced: Arc<dyn ObjectStore>,
    fence: Arc<fence::Fence>,
    /// Versions of single-writer documents last seen (object stores).
    versions: versions::Versions,
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
    /// The checksum of its bytes ([`checksum`]), computed as they were written.
    pub checksum: String,
}

impl Sink {
    /// The object store; on object stores, writes pass only while the
    /// run's lease is valid by its own clock (see [`fence`]).
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The object store without the fence: for the lease's own documents,
    /// whose renewals are what keep the fence open.
    pub fn unfenced_store(&self) -> &Arc<dyn ObjectStore> {
        &self.unfenced
    }

    /// The fence the lease keeps open while it is valid.
    pub fn fence(&self) -> &fence::Fence {
        &self.fence
    }

    /// The versions of single-writer documents this process last read or
    /// wrote, for conditional writes (see [`versions`]).
    pub fn versions(&self) -> &versions::Versions {
        &self.versions
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
        let path = self.path(rel);
        match self.store.delete(&path).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => {
                self.versions.deleted(&path);
                Ok(())
            }
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
