//! Reading a data file of the output back (compaction's inputs): an
//! `AsyncFileReader` over the object store, for a file of known size.

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
            // The footer's length is checked against the size before anything
            // past it is read, so a damaged file cannot make us allocate more.
            let metadata = ParquetMetaDataReader::new()
                .with_arrow_reader_options(options)
                .load_and_finish(self, size)
                .await?;
            Ok(Arc::new(metadata))
        }
        .boxed()
    }
}
