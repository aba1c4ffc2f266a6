//! One input of a merge (compaction's, a rewrite's): its reader, its
//! footer, and the range of its first key column.

use super::reader::StoreReader;
use parquet::arrow::ParquetRecordBatchStreamBuilder;
use parquet::file::metadata::ParquetMetaData;

/// A key bound from a footer's statistics.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Bound {
    Int(i64),
    Bytes(Vec<u8>),
}

/// One input: its reader, and the range of its first key column.
pub(super) struct Input {
    pub(super) rel: String,
    /// Its size in bytes.
    pub(super) bytes: u64,
    /// The checksum it was committed with.
    pub(super) checksum: Option<String>,
    pub(super) builder: Option<ParquetRecordBatchStreamBuilder<StoreReader>>,
    /// Its footer, page index included.
    pub(super) meta: std::sync::Arc<ParquetMetaData>,
    pub(super) rows: u64,
    /// Bytes of its rows uncompressed, as its footer says.
    pub(super) mem_bytes: u64,
    pub(super) range: Option<(Bound, Bound)>,
}
