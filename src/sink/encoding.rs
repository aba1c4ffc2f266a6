//! How rows are encoded: the Parquet writer properties every file of an
//! output shares (codec, dictionaries, statistics and the page index, bloom
//! filters, page and row group sizes), and the sort order files declare.
//! Which columns get dictionaries, and each table's key, come from the
//! datasets' declarations ([`crate::decode::columns`]).

use super::SinkError;
use crate::decode::DECLARATIONS;
use crate::spec::{Compression, Output};
use parquet::basic::{GzipLevel, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

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
    let dictionary: std::collections::BTreeSet<&str> = DECLARATIONS.iter().flat_map(|d| d.dictionary.iter().copied()).collect();
    for col in dictionary {
        props = props.set_column_dictionary_enabled(ColumnPath::from(col), true);
    }
    // A row group holds at most `row_group_rows` distinct values; the
    // writer folds each filter down to what its values need when the row
    // group ends, so sizing it for that costs memory only while writing.
    for col in &output.bloom_filters {
        props = props
            .set_column_bloom_filter_enabled(ColumnPath::from(col.as_str()), true)
            .set_column_bloom_filter_max_ndv(ColumnPath::from(col.as_str()), output.row_group_rows as u64);
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

/// `props` declaring that rows are sorted ascending by `key` (column names
/// of `schema`), as each row group's sorting columns: leaf indexes of the
/// Parquet schema, which a list column before them shifts.
pub(super) fn sorted_by(props: &WriterProperties, schema: &arrow_schema::Schema, key: &[&str]) -> Result<WriterProperties, SinkError> {
    use parquet::file::metadata::SortingColumn;
    let descr = parquet::arrow::ArrowSchemaConverter::new()
        .convert(schema)
        .map_err(|e| SinkError::Write {
            path: "(schema)".into(),
            source: Box::new(e),
        })?;
    let leaves: Vec<String> = descr.columns().iter().map(|c| c.path().string()).collect();
    let sorting = key
        .iter()
        .filter_map(|k| leaves.iter().position(|l| l == k))
        .map(|i| SortingColumn {
            column_idx: i as i32,
            descending: false,
            nulls_first: true,
        })
        .collect();
    Ok(props.clone().into_builder().set_sorting_columns(Some(sorting)).build())
}
