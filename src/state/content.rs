//! Reading committed files back for `verify`: each file the state counts is
//! checked against what was recorded when it was committed — present, the
//! recorded size, and then either its content checksum (the default: the
//! whole file is read, [`Depth::Content`]) or its Parquet footer's row count
//! (`verify --quick`, and files committed before checksums were recorded).
//!
//! Files are read [`FILES_IN_FLIGHT`] at a time, each streamed (see
//! [`crate::storage::checksum`]), so memory stays bounded; [`Progress`] counts
//! files and bytes for the terminal. A file the store cannot read for a
//! reason of the store (not of the file) is an error, not a problem of the
//! file: `verify --repair` must not redo a unit because the store was
//! briefly unreachable.

use super::{FileProblem, StateError, StateStore};
use futures::{StreamExt, TryStreamExt};
use object_store::ObjectStoreExt;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Files read at once: enough to keep an object store's latency hidden,
/// few enough to leave the machine usable.
const FILES_IN_FLIGHT: usize = 4;

/// How deeply `verify` checks each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Depth {
    /// Size, then the whole content against its checksum.
    #[default]
    Content,
    /// Size and the footer's row count (two small reads per file).
    Quick,
}

/// What `verify` has done so far, and of how much (shared with a ticker).
#[derive(Debug, Default)]
pub struct Progress {
    /// Files to check.
    pub files: AtomicU64,
    /// Files checked.
    pub files_done: AtomicU64,
    /// Bytes of the files to read whole.
    pub bytes: AtomicU64,
    /// Bytes read so far.
    pub bytes_read: AtomicU64,
    /// Files checked by size and row count only, having no checksum.
    pub without_checksum: AtomicU64,
}

/// One file to check, as a checkpoint or compaction record recorded it.
#[derive(Debug, Clone)]
pub(super) struct Check {
    /// The file as committed.
    pub(super) file: super::CommittedFile,
    /// `committed` (a unit's file) or `compacted`.
    pub(super) by: &'static str,
    /// The unit reported, and every unit whose rows the file holds (shared
    /// by the files of a partition: a year's closure can be long).
    pub(super) unit: String,
    pub(super) units: std::sync::Arc<[String]>,
}

impl StateStore {
    /// The problems of `checks` (in their order), given the sizes listed.
    pub(super) async fn check_files(
        &self,
        checks: Vec<Check>,
        sizes: &HashMap<&str, u64>,
        depth: Depth,
        progress: &Progress,
    ) -> Result<Vec<FileProblem>, StateError> {
        let reads_whole = |c: &Check| depth == Depth::Content && c.file.checksum.is_some();
        progress.files.fetch_add(checks.len() as u64, Ordering::Relaxed);
        let whole: u64 = checks
            .iter()
            .filter(|c| reads_whole(c) && sizes.get(c.file.path.as_str()) == Some(&c.file.bytes))
            .map(|c| c.file.bytes)
            .sum();
        progress.bytes.fetch_add(whole, Ordering::Relaxed);
        if depth == Depth::Content {
            let bare = checks.iter().filter(|c| c.file.checksum.is_none()).count();
            progress.without_checksum.fetch_add(bare as u64, Ordering::Relaxed);
        }
        // The first error of the store stops the whole check (the rest
        // would be read for nothing).
        let found: Vec<Option<String>> = futures::stream::iter(checks.iter().map(|c| async move {
            let what = self
                .check_one(c, sizes.get(c.file.path.as_str()).copied(), reads_whole(c), progress)
                .await;
            progress.files_done.fetch_add(1, Ordering::Relaxed);
            what
        }))
        .buffered(FILES_IN_FLIGHT)
        .try_collect()
        .await?;
        Ok(checks
            .into_iter()
            .zip(found)
            .filter_map(|(c, what)| {
                Some(FileProblem {
                    unit: c.unit,
                    units: c.units.to_vec(),
                    path: c.file.path,
                    what: what?,
                })
            })
            .collect())
    }

    /// What is wrong with one file, if anything.
    async fn check_one(&self, c: &Check, size: Option<u64>, whole: bool, progress: &Progress) -> Result<Option<String>, StateError> {
        let f = &c.file;
        let missing = || {
            let extra = if c.by == "compacted" { ", compacted" } else { "" };
            format!("missing ({} rows{extra})", f.rows)
        };
        let Some(size) = size else {
            return Ok(Some(missing()));
        };
        if size != f.bytes {
            return Ok(Some(format!("changed: {size} bytes, {} when {}", f.bytes, c.by)));
        }
        if let (true, Some(want)) = (whole, &f.checksum) {
            let got = match crate::storage::checksum::of_file(self.storage(), &f.path, &progress.bytes_read).await {
                Ok(got) => got,
                // Deleted since it was listed.
                Err(e) if e.is_not_found() => return Ok(Some(missing())),
                Err(e) => return Err(StateError::io(&f.path, "reading", e)),
            };
            return Ok((&got != want).then(|| format!("changed: its content is not what was {} ({got}, {want} when {})", c.by, c.by)));
        }
        Ok(match self.parquet_rows(&f.path, size).await? {
            Ok(rows) if rows == f.rows => None,
            Ok(rows) => Some(format!("changed: {rows} rows, {} when {}", f.rows, c.by)),
            Err(e) => Some(format!("changed: not a readable Parquet file ({e})")),
        })
    }

    /// Rows in a Parquet file of `size` bytes, from its footer (two range
    /// reads; the metadata length is checked against the size first, so a
    /// damaged file cannot make us read or allocate past it). The outer
    /// error is the store's; the inner one says why the file is not a
    /// readable Parquet file.
    async fn parquet_rows(&self, rel: &str, size: u64) -> Result<Result<u64, String>, StateError> {
        use parquet::file::metadata::{FooterTail, ParquetMetaDataReader};
        let path = self.storage().path(rel);
        if size < 12 {
            return Ok(Err(format!("{size} bytes is too short")));
        }
        let read = |range: std::ops::Range<u64>| {
            let path = path.clone();
            async move {
                self.storage()
                    .store()
                    .get_range(&path, range)
                    .await
                    .map_err(|e| StateError::io(rel, "reading", e))
            }
        };
        let tail = read(size - 8..size).await?;
        let Ok(tail) = <[u8; 8]>::try_from(tail.as_ref()) else {
            return Ok(Err(format!("the store returned {} bytes of an 8-byte footer", tail.len())));
        };
        let len = match FooterTail::try_new(&tail) {
            Ok(t) => t.metadata_length() as u64,
            Err(e) => return Ok(Err(e.to_string())),
        };
        if len + 12 > size {
            return Ok(Err(format!("footer length {len} exceeds the file")));
        }
        let meta = read(size - 8 - len..size - 8).await?;
        Ok(ParquetMetaDataReader::decode_metadata(&meta)
            .map(|m| m.file_metadata().num_rows().max(0) as u64)
            .map_err(|e| e.to_string()))
    }
}
