//! Compaction without decoding: an input's row groups copied into an
//! output as they are, column chunk by column chunk, with their
//! statistics, page index and bloom filters, under a new footer.
//!
//! # Invariants
//!
//! - **Only what reads the same.** An input is copied only when its
//!   Parquet schema is the output's, column by column, every column chunk
//!   has an offset index, and every bloom filter has a recorded length; in
//!   a sorted compaction, every row group must also declare the output's
//!   sorting columns (a declaration [`super::unit_writer`] makes only after
//!   checking every row). Anything else is decoded and merged
//!   ([`super::merge`]).
//! - **Bytes unchanged.** A copied column chunk is the input's bytes; only
//!   the offsets in its metadata and offset index move with it.
//! - **Checked bytes.** The caller reads the input whole, in order, a row
//!   group per ranged request ([`read_span`]), and checks it against the
//!   checksum it was committed with.
//! - **Bounded memory.** One row group's column chunks, and the input's
//!   bloom filters, are held at a time (the filters are read with one
//!   request, which the store may widen over the gaps between them: at
//!   most the input's size, never more).

use super::SinkError;
use super::merge_input::Input;
use bytes::{Buf, Bytes};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::bloom_filter::Sbbf;
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::ParquetError;
use parquet::file::metadata::{ParquetMetaData, SortingColumn};
use parquet::file::reader::{ChunkReader, Length};
use parquet::schema::types::SchemaDescriptor;
use std::collections::HashMap;
use std::ops::Range;

/// Bytes of a file from offset `start` on: what a copied row group's
/// column chunks (or one bloom filter) are read from.
pub(super) struct Span {
    start: u64,
    bytes: Bytes,
}

impl Span {
    /// The bytes held.
    pub(super) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    fn slice(&self, start: u64, len: Option<usize>) -> parquet::errors::Result<Bytes> {
        let off = start
            .checked_sub(self.start)
            .and_then(|o| usize::try_from(o).ok())
            .filter(|&o| o <= self.bytes.len())
            .ok_or_else(|| ParquetError::General(format!("offset {start} is outside the bytes read")))?;
        let end = match len {
            Some(n) => off.checked_add(n).filter(|&e| e <= self.bytes.len()),
            None => Some(self.bytes.len()),
        }
        .ok_or_else(|| ParquetError::General(format!("{len:?} bytes at {start} run past the bytes read")))?;
        Ok(self.bytes.slice(off..end))
    }
}

impl Length for Span {
    fn len(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }
}

impl ChunkReader for Span {
    type T = bytes::buf::Reader<Bytes>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        Ok(self.slice(start, None)?.reader())
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        self.slice(start, Some(length))
    }
}

/// Whether `input`'s row groups can be copied into an output of Arrow
/// schema `schema` (Parquet schema `descr`) whose row groups declare
/// `sorting`.
pub(super) fn copyable(
    input: &Input,
    schema: &arrow_schema::Schema,
    descr: &parquet::schema::types::SchemaDescriptor,
    sorting: Option<&Vec<parquet::file::metadata::SortingColumn>>,
) -> bool {
    let (Some(builder), Some(_)) = (&input.builder, &input.checksum) else {
        return false;
    };
    let fields = builder.schema().fields();
    fields.len() == schema.fields().len()
        && fields
            .iter()
            .zip(schema.fields())
            .all(|(a, b)| a.name() == b.name() && a.data_type() == b.data_type() && a.is_nullable() == b.is_nullable())
        && can_copy(&input.meta, descr, sorting)
}
/// Whether `meta`'s row groups can be copied into a file of schema
/// `descr` whose row groups declare `sorting` (see the module's
/// invariants).
fn can_copy(meta: &ParquetMetaData, descr: &SchemaDescriptor, sorting: Option<&Vec<SortingColumn>>) -> bool {
    let schema = meta.file_metadata().schema_descr();
    if schema.num_columns() != descr.num_columns() || (0..descr.num_columns()).any(|i| schema.column(i) != descr.column(i)) {
        return false;
    }
    let mut end = 0;
    for r in 0..meta.num_row_groups() {
        let Some((lo, hi)) = row_group_range(meta, r) else {
            return false;
        };
        if lo < end {
            return false;
        }
        end = hi;
    }
    meta.row_groups().iter().enumerate().all(|(r, rg)| {
        let index = meta.page_index_for_row_group(r);
        (sorting.is_none() || rg.sorting_columns() == sorting)
            && rg.columns().iter().enumerate().all(|(c, col)| {
                index.offset_index(c).is_some() && (col.bloom_filter_offset().is_none() || col.bloom_filter_length().is_some())
            })
    })
}

/// The first and last byte (exclusive) of row group `rg`'s column
/// chunks; None when its metadata gives negative offsets.
fn row_group_range(meta: &ParquetMetaData, rg: usize) -> Option<(u64, u64)> {
    let mut range: Option<(u64, u64)> = None;
    for c in meta.row_group(rg).columns() {
        let start = u64::try_from(c.dictionary_page_offset().unwrap_or(c.data_page_offset())).ok()?;
        let end = start.checked_add(u64::try_from(c.compressed_size()).ok()?)?;
        range = Some(range.map_or((start, end), |(a, b)| (a.min(start), b.max(end))));
    }
    range
}

/// Where row group `rg`'s column chunks end (of an input [`can_copy`] accepted).
pub(super) fn row_group_end(meta: &ParquetMetaData, rg: usize) -> u64 {
    row_group_range(meta, rg).map_or(0, |(_, end)| end)
}

/// Bytes `range` of file `path`.
pub(super) async fn read_span(store: &dyn ObjectStore, path: &Path, range: Range<u64>) -> Result<Span, SinkError> {
    let start = range.start;
    let bytes = if range.is_empty() {
        Bytes::new()
    } else {
        store.get_range(path, range).await.map_err(|e| SinkError::Read {
            path: path.to_string(),
            source: Box::new(e),
        })?
    };
    Ok(Span { start, bytes })
}

/// Every bloom filter of file `path` (footer `meta`), by row group and
/// column, read with one request.
pub(super) async fn read_bloom_filters(
    store: &dyn ObjectStore,
    path: &Path,
    meta: &ParquetMetaData,
) -> Result<HashMap<(usize, usize), Sbbf>, SinkError> {
    let error = |e: Box<dyn std::error::Error + Send + Sync>| SinkError::Read {
        path: path.to_string(),
        source: e,
    };
    let mut at = Vec::new();
    let mut ranges = Vec::new();
    for (r, rg) in meta.row_groups().iter().enumerate() {
        for (c, col) in rg.columns().iter().enumerate() {
            let (Some(off), Some(len)) = (col.bloom_filter_offset(), col.bloom_filter_length()) else {
                continue;
            };
            let (Ok(off), Ok(len)) = (u64::try_from(off), u64::try_from(len)) else {
                return Err(error("a bloom filter at a negative offset".into()));
            };
            at.push((r, c));
            ranges.push(off..off + len);
        }
    }
    if ranges.is_empty() {
        return Ok(HashMap::new());
    }
    let read = store.get_ranges(path, &ranges).await.map_err(|e| error(Box::new(e)))?;
    let mut filters = HashMap::with_capacity(at.len());
    for (((r, c), range), bytes) in at.into_iter().zip(ranges).zip(read) {
        let span = Span { start: range.start, bytes };
        if let Some(f) = Sbbf::read_from_column_chunk(meta.row_group(r).column(c), &span).map_err(|e| error(Box::new(e)))? {
            filters.insert((r, c), f);
        }
    }
    Ok(filters)
}

/// What closing each column of row group `rg` (of footer `meta`) would
/// have returned, its bloom filters taken from `filters`.
pub(super) fn closed_columns(meta: &ParquetMetaData, rg: usize, filters: &mut HashMap<(usize, usize), Sbbf>) -> Vec<ColumnCloseResult> {
    let group = meta.row_group(rg);
    let index = meta.page_index_for_row_group(rg);
    group
        .columns()
        .iter()
        .enumerate()
        .map(|(c, col)| ColumnCloseResult {
            bytes_written: col.compressed_size().max(0) as u64,
            rows_written: group.num_rows().max(0) as u64,
            metadata: col.clone(),
            bloom_filter: filters.remove(&(rg, c)),
            column_index: index.column_index(c).cloned(),
            offset_index: index.offset_index(c).cloned(),
        })
        .collect()
}
