//! How rows are encoded: the Parquet writer properties every file of an
//! output shares (codec, dictionaries, statistics, page and row group
//! sizes).

use super::SinkError;
use crate::spec::{Compression, Output};
use parquet::basic::{GzipLevel, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

/// Columns whose values repeat a lot, so dictionary encoding pays.
const DICTIONARY_COLUMNS: &[&str] = &[
    "chain",
    "contract_address",
    "topic0",
    "miner",
    "wallet_address",
    "token_address",
    "token_name",
    "token_standard",
    "token_symbol",
    "name",
    "standard",
    "symbol",
];

/// Size of a data page before compression.
const DATA_PAGE_BYTES: usize = 32 * 1024;

/// The writer properties of `output`'s files.
pub(super) fn writer_properties(output: &Output) -> Result<WriterProperties, SinkError> {
    let compression = match output.compression {
        Compression::Zstd(level) => {
            let level = ZstdLevel::try_new(level).map_err(|e| SinkError::Config {
                uri: output.uri.clone(),
                message: format!("zstd level {level}"),
                source: Some(Box::new(e)),
            })?;
            parquet::basic::Compression::ZSTD(level)
        }
        Compression::Snappy => parquet::basic::Compression::SNAPPY,
        Compression::Lz4 => parquet::basic::Compression::LZ4_RAW,
        Compression::Gzip => parquet::basic::Compression::GZIP(GzipLevel::default()),
        Compression::None => parquet::basic::Compression::UNCOMPRESSED,
    };
    // Dictionaries only where values repeat: on hashes they cost memory
    // (a dictionary per column per open file) and time, and save nothing.
    let mut props = WriterProperties::builder().set_dictionary_enabled(false);
    for col in DICTIONARY_COLUMNS {
        props = props.set_column_dictionary_enabled(ColumnPath::from(*col), true);
    }
    Ok(props
        .set_compression(compression)
        .set_statistics_enabled(EnabledStatistics::Page)
        // Small pages keep the uncompressed buffer of every open column
        // small, so bounded memory still allows large row groups; and each
        // column's zstd context is sized by its page, so small pages keep
        // the compressors' memory small too, for slightly larger files.
        .set_data_page_size_limit(DATA_PAGE_BYTES)
        .set_max_row_group_row_count(Some(output.row_group_rows))
        .set_created_by(concat!("chainetl version ", env!("CARGO_PKG_VERSION")).to_string())
        .build())
}
