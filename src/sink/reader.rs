//! Reading a data file of the output back (compaction's inputs): an
//! `AsyncFileReader` over the object store, for a file of known size.
//!
//! A footer is read with the file's last [`FOOTER_READ`] bytes, one
//! request: the footer's length, the footer and, before it, the page
//! indexes, where they fit (parquet reads them from what it has). On S3 a
//! request is what is billed and what takes the time; the bytes are
//! small beside a file's.

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::{FutureExt, TryFutureExt};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use std::ops::Range;
use std::sync::Arc;

/// Bytes read from a file's end to find its footer (and page indexes) in
/// one request: a whole small file.
const FOOTER_READ: usize = 64 * 1024;

/// A Parquet file in the store, `size` bytes long.
#[derive(Debug, Clone)]
pub(super) struct StoreReader {
    store: Arc<dyn ObjectStore>,
    path: Path,
    size: u64,
}

impl StoreReader {
    pub(super) fn new(store: Arc<dyn ObjectStore>, path: Path, size: u64) -> StoreReader {
        StoreReader { store, path, size }
    }
}

fn external(e: object_store::Error) -> ParquetError {
    ParquetError::External(Box::new(e))
}

impl AsyncFileReader for StoreReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        self.store.get_range(&self.path, range).map_err(external).boxed()
    }

    fn get_byte_ranges(&mut self, ranges: Vec<Range<u64>>) -> BoxFuture<'_, Result<Vec<Bytes>>> {
        async move { self.store.get_ranges(&self.path, &ranges).await.map_err(external) }.boxed()
    }

    fn get_metadata<'a>(&'a mut self, options: Option<&'a ArrowReaderOptions>) -> BoxFuture<'a, Result<Arc<ParquetMetaData>>> {
        async move {
            let size = self.size;
            // The first read is at most FOOTER_READ bytes; the footer's length
            // is checked against the size before anything more is read, so a
            // damaged file cannot make us allocate more.
            let metadata = ParquetMetaDataReader::new()
                .with_arrow_reader_options(options)
                .with_prefetch_hint(Some(FOOTER_READ))
                .load_and_finish(self, size)
                .await?;
            Ok(Arc::new(metadata))
        }
        .boxed()
    }
}

/// The footer of stored file `rel` (`bytes` long): the one reader of a
/// committed file's footer — the table formats' statistics and checks,
/// `verify`'s row counts. One range read where the footer fits in
/// [`FOOTER_READ`] bytes, two otherwise; the footer's length is checked
/// against the size first, so a damaged file cannot make us read or
/// allocate past it. The outer error is the store's; the inner one says
/// why the bytes are not a readable Parquet file.
pub(crate) async fn footer_or_why(
    storage: &crate::storage::Storage,
    rel: &str,
    bytes: u64,
) -> std::result::Result<std::result::Result<Arc<ParquetMetaData>, String>, object_store::Error> {
    if bytes < 12 {
        return Ok(Err(format!("{bytes} bytes is too short")));
    }
    let mut reader = StoreReader::new(storage.store().clone(), storage.path(rel), bytes);
    match reader.get_metadata(None).await {
        Ok(footer) => Ok(Ok(footer)),
        Err(ParquetError::External(e)) => match e.downcast::<object_store::Error>() {
            Ok(store) => Err(*store),
            Err(other) => Ok(Err(other.to_string())),
        },
        Err(e) => Ok(Err(e.to_string())),
    }
}

/// [`footer_or_why`], either failure as the sink's.
pub(crate) async fn footer(
    storage: &crate::storage::Storage,
    rel: &str,
    bytes: u64,
) -> std::result::Result<Arc<ParquetMetaData>, super::SinkError> {
    let read = |source: Box<dyn std::error::Error + Send + Sync>| super::SinkError::Read { path: rel.into(), source };
    match footer_or_why(storage, rel, bytes).await {
        Ok(Ok(footer)) => Ok(footer),
        Ok(Err(why)) => Err(read(why.into())),
        Err(e) => Err(read(Box::new(e))),
    }
}

/// The Arrow schema the footer of file `rel` records.
pub(crate) fn footer_schema(rel: &str, footer: &ParquetMetaData) -> std::result::Result<arrow_schema::Schema, super::SinkError> {
    let meta = footer.file_metadata();
    parquet::arrow::parquet_to_arrow_schema(meta.schema_descr(), meta.key_value_metadata()).map_err(|e| super::SinkError::Read {
        path: rel.into(),
        source: Box::new(e),
    })
}
