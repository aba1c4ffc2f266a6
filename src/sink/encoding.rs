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

/// `props` for files of `schema`: each column's encoding chosen by its
/// type ([`value_encoding`]), and, when `key` (column names of `schema`)
/// is not empty, rows declared sorted ascending by it, as each row
/// group's sorting columns: leaf indexes of the Parquet schema, which a
/// list column before them shifts.
pub(super) fn for_schema(props: &WriterProperties, schema: &arrow_schema::Schema, key: &[&str]) -> WriterProperties {
    use parquet::file::metadata::SortingColumn;
    // A schema Parquet cannot hold fails when its writer is made, with
    // that error; the properties do not matter then.
    let Ok(descr) = parquet::arrow::ArrowSchemaConverter::new().convert(schema) else {
        return props.clone();
    };
    let mut builder = props.clone().into_builder();
    for leaf in descr.columns() {
        if let Some(encoding) = value_encoding(props, leaf) {
            builder = builder.set_column_encoding(leaf.path().clone(), encoding);
        }
    }
    if key.is_empty() {
        return builder.build();
    }
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
    builder.set_sorting_columns(Some(sorting)).build()
}

/// The encoding of a column without a dictionary, where it is not PLAIN:
/// - strings and binaries: DELTA_BYTE_ARRAY. Hex values share prefixes
///   with the row before (`0x000000…` of a padded address, a topic or a
///   transaction hash repeated across a transaction's logs), which it
///   stores once, so zstd compresses fewer bytes and files stay the same
///   size (figures: docs/performance.md);
/// - 32- and 64-bit integers: DELTA_BINARY_PACKED (block numbers,
///   timestamps and indexes grow by small steps).
///
/// Both are in the Parquet format since 2.0 and read by every reader the
/// docs name (Spark since 3.3; docs/output.md, "Encodings").
fn value_encoding(props: &WriterProperties, leaf: &parquet::schema::types::ColumnDescriptor) -> Option<parquet::basic::Encoding> {
    use parquet::basic::{Encoding, Type};
    if props.dictionary_enabled(leaf.path()) {
        return None;
    }
    match leaf.physical_type() {
        Type::BYTE_ARRAY => Some(Encoding::DELTA_BYTE_ARRAY),
        Type::INT32 | Type::INT64 => Some(Encoding::DELTA_BINARY_PACKED),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::builder::{ListBuilder, StringBuilder};
    use arrow_array::{ArrayRef, FixedSizeBinaryArray, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::basic::Encoding;
    use std::sync::Arc;

    /// Each column's encodings as the written file's footer lists them.
    fn encodings_of(file: bytes::Bytes) -> Vec<(String, Vec<Encoding>)> {
        let reader = parquet::file::reader::SerializedFileReader::new(file).unwrap();
        let meta = parquet::file::reader::FileReader::metadata(&reader);
        meta.row_group(0)
            .columns()
            .iter()
            .map(|c| (c.column_path().string(), c.encodings().collect()))
            .collect()
    }

    #[test]
    fn hex_strings_share_prefixes_integers_are_delta_packed_and_dictionaries_stay() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("block_number", DataType::Int64, false),
            Field::new("transaction_hash", DataType::Utf8, false),
            Field::new("contract_address", DataType::Utf8, false),
            Field::new("topics", DataType::new_list(DataType::Utf8, true), false),
            Field::new("hash", DataType::FixedSizeBinary(32), false),
        ]));
        let output = super::super::tests::output("/unused");
        let props = for_schema(&writer_properties(&output).unwrap(), &schema, &["block_number"]);
        let hashes: Vec<String> = (0..100).map(|i| format!("0x{:064x}", i / 3)).collect();
        let mut topics = ListBuilder::new(StringBuilder::new());
        for h in &hashes {
            topics.values().append_value(h);
            topics.append(true);
        }
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values(0..100)),
            Arc::new(StringArray::from_iter_values(&hashes)),
            Arc::new(StringArray::from_iter_values(
                hashes.iter().map(|_| "0xdac17f958d2ee523a2206206994597c13d831ec7"),
            )),
            Arc::new(topics.finish()),
            Arc::new(FixedSizeBinaryArray::try_from_iter((0..100u8).map(|i| [i; 32])).unwrap()),
        ];
        let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
        let mut buf = Vec::new();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, schema, Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let buf = bytes::Bytes::from(buf);
        let got = encodings_of(buf.clone());
        let of = |col: &str| got.iter().find(|(c, _)| c == col).map(|(_, e)| e.clone()).unwrap();
        assert!(of("block_number").contains(&Encoding::DELTA_BINARY_PACKED), "{got:?}");
        assert!(of("transaction_hash").contains(&Encoding::DELTA_BYTE_ARRAY), "{got:?}");
        assert!(of("topics.list.item").contains(&Encoding::DELTA_BYTE_ARRAY), "{got:?}");
        assert!(of("contract_address").contains(&Encoding::RLE_DICTIONARY), "{got:?}");
        assert!(of("hash").contains(&Encoding::PLAIN), "{got:?}");
        // The sort order is still declared, and the rows read back whole.
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(buf).unwrap();
        assert_eq!(reader.metadata().row_group(0).sorting_columns().map(|s| s.len()), Some(1));
        let back: Vec<RecordBatch> = reader.build().unwrap().collect::<Result<_, _>>().unwrap();
        assert_eq!(back, vec![batch]);
    }
}
