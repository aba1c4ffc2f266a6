//! Data files as a manifest records them: path, partition tuple, size,
//! rows and column metrics, the metrics read from the file's Parquet
//! footer alone (the row groups' column chunk metadata and statistics),
//! so a file published again after a crash gets the same entry without
//! being read whole.
//!
//! # Metrics
//!
//! For each top-level primitive column the file holds (found by its field
//! id, or by name through the table's schema for a file written without
//! ids): bytes on disk (`column_sizes`), values including nulls
//! (`value_counts`), nulls (`null_value_counts`) and bounds
//! (`lower_bounds`, `upper_bounds`) in Iceberg's binary single-value
//! serialization. Strings and binaries are truncated to 16 characters
//! (bytes), the reference implementation's default, the upper bound
//! rounded up so it still bounds. Floats get no bounds (a reader must
//! never see NaN there, and Parquet's statistics do not promise it);
//! nested columns get none. A column missing statistics in a row group
//! gets no null count or bounds: absent means unknown, which never
//! prunes a file wrongly.

use super::partition::{PartitionSpec, PartitionValue};
use super::schema::{Primitive, Schema, Type};
use parquet::basic::{LogicalType, TimeUnit};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::statistics::Statistics;
use std::collections::BTreeMap;

/// Characters (strings) or bytes (binaries) kept of a bound.
pub const TRUNCATE_BOUNDS: usize = 16;

/// A data file as a manifest entry records it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DataFile {
    /// Path relative to the table's location (`chain=base/date=…/x.parquet`).
    pub path: String,
    /// The partition spec its tuple is of.
    pub spec_id: i32,
    /// Its partition tuple, one value per field of the spec.
    pub partition: Vec<PartitionValue>,
    /// Rows.
    pub record_count: u64,
    /// Bytes.
    pub file_size: u64,
    /// Column id → bytes of its chunks.
    pub column_sizes: BTreeMap<i32, i64>,
    /// Column id → values, nulls included.
    pub value_counts: BTreeMap<i32, i64>,
    /// Column id → nulls.
    pub null_value_counts: BTreeMap<i32, i64>,
    /// Column id → NaNs (kept as read; never written from a footer).
    pub nan_value_counts: BTreeMap<i32, i64>,
    /// Column id → lower bound, serialized.
    pub lower_bounds: BTreeMap<i32, Vec<u8>>,
    /// Column id → upper bound, serialized.
    pub upper_bounds: BTreeMap<i32, Vec<u8>>,
    /// Where each row group starts, ascending (readers split on them).
    pub split_offsets: Vec<i64>,
    /// Its sort order, if declared.
    pub sort_order_id: Option<i32>,
}

impl DataFile {
    /// The entry of the Parquet file at `path` (relative to the table),
    /// `size` bytes, with footer `footer`, in a table of `schema`
    /// partitioned by `spec`: its partition tuple from its path's hive
    /// folders, its rows and metrics from the footer.
    ///
    /// `order`: the table's sort order and its columns
    /// ([`super::TableMetadata::write_order`]); the file is said to be of
    /// it where every row group's footer declares its rows sorted by
    /// those columns (or more after them), ascending, nulls first.
    pub fn from_footer(
        schema: &Schema,
        spec: &PartitionSpec,
        order: Option<(i32, &[i32])>,
        path: &str,
        size: u64,
        footer: &ParquetMetaData,
    ) -> Result<DataFile, String> {
        let partition = spec.values_of_path(schema, path)?;
        let mut file = DataFile {
            path: path.to_string(),
            spec_id: spec.spec_id,
            partition,
            record_count: footer.file_metadata().num_rows().max(0) as u64,
            file_size: size,
            ..DataFile::default()
        };
        file.read_metrics(schema, footer);
        file.sort_order_id = order.filter(|(_, ids)| sorted_by(schema, footer, ids)).map(|(id, _)| id);
        Ok(file)
    }

    fn read_metrics(&mut self, schema: &Schema, footer: &ParquetMetaData) {
        let groups = footer.row_groups();
        let descr = footer.file_metadata().schema_descr();
        for (i, col) in descr.columns().iter().enumerate() {
            let parts = col.path().parts();
            let [name] = parts else { continue };
            let info = col.self_type().get_basic_info();
            let field = if info.has_id() {
                schema.field_by_id(info.id())
            } else {
                schema.field(name)
            };
            let Some(field) = field.filter(|f| schema.fields.iter().any(|t| t.id == f.id)) else {
                continue;
            };
            let Type::Primitive(t) = field.field_type else { continue };
            let id = field.id;
            let mut sizes = 0i64;
            let mut values = 0i64;
            let mut nulls = Some(0i64);
            let mut bounds: Option<Option<(Bound, Bound)>> = None;
            let unit = match col.logical_type_ref() {
                Some(LogicalType::Timestamp(ts)) => Some(ts.unit),
                _ => None,
            };
            for g in groups {
                let chunk = g.column(i);
                sizes += chunk.compressed_size();
                values += chunk.num_values();
                let stats = chunk.statistics();
                let group_nulls = stats.and_then(|s| s.null_count_opt()).map(|n| n as i64);
                nulls = nulls.zip(group_nulls).map(|(a, b)| a + b);
                // Row groups of nulls only have no bounds and need none.
                if group_nulls == Some(chunk.num_values()) {
                    continue;
                }
                let group = stats.and_then(|s| bounds_of(s, t, unit));
                bounds = Some(match (bounds.unwrap_or(group.clone()), group) {
                    (Some((lo, hi)), Some((glo, ghi))) => Some((lo.min(glo), hi.max(ghi))),
                    _ => None,
                });
            }
            self.column_sizes.insert(id, sizes);
            self.value_counts.insert(id, values);
            if let Some(n) = nulls {
                self.null_value_counts.insert(id, n);
            }
            if let Some(Some((lo, hi))) = bounds
                && let (Some(lo), Some(hi)) = (serialize(&lo, t, false), serialize(&hi, t, true))
            {
                self.lower_bounds.insert(id, lo);
                self.upper_bounds.insert(id, hi);
            }
        }
        let mut offsets: Vec<i64> = groups
            .iter()
            .filter_map(|g| {
                g.columns()
                    .first()
                    .map(|c| c.dictionary_page_offset().unwrap_or_else(|| c.data_page_offset()))
            })
            .collect();
        offsets.sort_unstable();
        self.split_offsets = offsets;
    }
}

/// A bound as read from a row group's statistics, comparable with
/// another of the same column.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Bound {
    Bool(bool),
    Int(i64),
    Decimal(i128),
    Bytes(Vec<u8>),
}

/// A row group's (min, max) of a column of type `t` from its Parquet
/// statistics; `None` where they are missing or not comparable as `t`'s.
fn bounds_of(s: &Statistics, t: Primitive, unit: Option<TimeUnit>) -> Option<(Bound, Bound)> {
    fn pair<T, B>(s: &parquet::file::statistics::ValueStatistics<T>, f: impl Fn(&T) -> Option<B>) -> Option<(B, B)> {
        Some((f(s.min_opt()?)?, f(s.max_opt()?)?))
    }
    use Primitive as P;
    match (t, s) {
        (P::Boolean, Statistics::Boolean(v)) => pair(v, |b| Some(Bound::Bool(*b))),
        (P::Int | P::Date | P::Long, Statistics::Int32(v)) => pair(v, |i| Some(Bound::Int(i64::from(*i)))),
        (P::Long, Statistics::Int64(v)) => pair(v, |i| Some(Bound::Int(*i))),
        (P::Timestamp | P::Timestamptz, Statistics::Int64(v)) => {
            let (lo, hi) = pair(v, |i| Some(*i))?;
            // Iceberg's timestamps are microseconds: other units scaled,
            // nanoseconds rounded outwards so the bounds still bound.
            let (lo, hi) = match unit? {
                TimeUnit::MICROS => (lo, hi),
                TimeUnit::MILLIS => (lo.checked_mul(1000)?, hi.checked_mul(1000)?),
                TimeUnit::NANOS => (lo.div_euclid(1000), -(-hi).div_euclid(1000)),
            };
            Some((Bound::Int(lo), Bound::Int(hi)))
        }
        (P::Decimal { .. }, Statistics::Int32(v)) => pair(v, |i| Some(Bound::Decimal(i128::from(*i)))),
        (P::Decimal { .. }, Statistics::Int64(v)) => pair(v, |i| Some(Bound::Decimal(i128::from(*i)))),
        (P::Decimal { .. }, Statistics::FixedLenByteArray(v)) => pair(v, |b| decimal_of(b.data()).map(Bound::Decimal)),
        (P::Decimal { .. }, Statistics::ByteArray(v)) => pair(v, |b| decimal_of(b.data()).map(Bound::Decimal)),
        (P::String | P::Binary, Statistics::ByteArray(v)) => pair(v, |b| Some(Bound::Bytes(b.data().to_vec()))),
        (P::Fixed(_) | P::Uuid, Statistics::FixedLenByteArray(v)) => pair(v, |b| Some(Bound::Bytes(b.data().to_vec()))),
        _ => None,
    }
}

/// A big-endian two's complement integer of at most 16 bytes.
fn decimal_of(b: &[u8]) -> Option<i128> {
    if b.is_empty() || b.len() > 16 {
        return None;
    }
    let fill = if b[0] & 0x80 != 0 { 0xff } else { 0 };
    let mut full = [fill; 16];
    full[16 - b.len()..].copy_from_slice(b);
    Some(i128::from_be_bytes(full))
}

/// `b` in Iceberg's binary single-value serialization for type `t`, a
/// string or binary truncated (an `upper` bound rounded up); `None` when
/// it cannot be written (an upper bound with nothing to round up).
fn serialize(b: &Bound, t: Primitive, upper: bool) -> Option<Vec<u8>> {
    Some(match (b, t) {
        (Bound::Bool(v), _) => vec![u8::from(*v)],
        (Bound::Int(v), Primitive::Int | Primitive::Date) => i32::try_from(*v).ok()?.to_le_bytes().to_vec(),
        (Bound::Int(v), _) => v.to_le_bytes().to_vec(),
        (Bound::Decimal(v), _) => decimal_bytes(*v),
        (Bound::Bytes(v), Primitive::String) => truncate_string(std::str::from_utf8(v).ok()?, upper)?.into_bytes(),
        (Bound::Bytes(v), Primitive::Binary) => truncate_binary(v, upper)?,
        (Bound::Bytes(v), _) => v.clone(),
    })
}

/// The unscaled value of a decimal as the spec stores it: two's
/// complement, big-endian, in as few bytes as hold it.
pub fn decimal_bytes(v: i128) -> Vec<u8> {
    let b = v.to_be_bytes();
    let mut start = 0;
    while start < 15 {
        let (x, next) = (b[start], b[start + 1]);
        if (x == 0x00 && next & 0x80 == 0) || (x == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    b[start..].to_vec()
}

/// `s` cut to [`TRUNCATE_BOUNDS`] characters; as an upper bound, its last
/// kept character is the next one up (the next after it, where it is the
/// last possible), so the result is above every string it begins.
fn truncate_string(s: &str, upper: bool) -> Option<String> {
    if s.chars().count() <= TRUNCATE_BOUNDS {
        return Some(s.to_string());
    }
    let mut kept: Vec<char> = s.chars().take(TRUNCATE_BOUNDS).collect();
    if !upper {
        return Some(kept.into_iter().collect());
    }
    while let Some(last) = kept.pop() {
        let mut next = last as u32 + 1;
        // Surrogates are no characters: skip over them.
        if (0xD800..=0xDFFF).contains(&next) {
            next = 0xE000;
        }
        if let Some(c) = char::from_u32(next) {
            kept.push(c);
            return Some(kept.into_iter().collect());
        }
    }
    None
}

/// `b` cut to [`TRUNCATE_BOUNDS`] bytes; as an upper bound, its last
/// byte below 0xff incremented and those after it dropped.
fn truncate_binary(b: &[u8], upper: bool) -> Option<Vec<u8>> {
    if b.len() <= TRUNCATE_BOUNDS {
        return Some(b.to_vec());
    }
    let mut kept = b[..TRUNCATE_BOUNDS].to_vec();
    if !upper {
        return Some(kept);
    }
    while let Some(last) = kept.pop() {
        if last < 0xff {
            kept.push(last + 1);
            return Some(kept);
        }
    }
    None
}

/// Whether every row group of `footer` declares its rows sorted by the
/// columns `ids` of `schema` (top-level, by name), in that order, each
/// ascending with nulls first, possibly by more columns after them. A
/// column the file lacks is an identity partition's (`date` of a
/// portfolio's files), one value in the whole file: any order is sorted
/// by it.
fn sorted_by(schema: &Schema, footer: &ParquetMetaData, ids: &[i32]) -> bool {
    let leaves: Vec<String> = footer
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.path().string())
        .collect();
    let Some(named) = ids
        .iter()
        .map(|id| schema.field_by_id(*id).map(|f| f.name.as_str()))
        .collect::<Option<Vec<&str>>>()
    else {
        return false;
    };
    let want: Vec<usize> = named.iter().filter_map(|n| leaves.iter().position(|l| l == n)).collect();
    !want.is_empty()
        && !footer.row_groups().is_empty()
        && footer.row_groups().iter().all(|g| {
            g.sorting_columns().is_some_and(|cols| {
                cols.len() >= want.len()
                    && cols
                        .iter()
                        .zip(&want)
                        .all(|(c, w)| c.column_idx as usize == *w && !c.descending && c.nulls_first)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_take_the_fewest_bytes_that_hold_them() {
        assert_eq!(decimal_bytes(0), [0x00]);
        assert_eq!(decimal_bytes(127), [0x7f]);
        assert_eq!(decimal_bytes(128), [0x00, 0x80]);
        assert_eq!(decimal_bytes(-1), [0xff]);
        assert_eq!(decimal_bytes(-129), [0xff, 0x7f]);
        assert_eq!(decimal_bytes(i128::MAX).len(), 16);
        assert_eq!(decimal_of(&decimal_bytes(-123_456_789)), Some(-123_456_789));
    }

    #[test]
    fn truncated_bounds_still_bound() {
        let long = "0x".to_string() + &"ab".repeat(32);
        let lo = truncate_string(&long, false).unwrap();
        let hi = truncate_string(&long, true).unwrap();
        assert_eq!(lo.len(), TRUNCATE_BOUNDS);
        assert!(lo.as_str() <= long.as_str() && hi.as_str() > long.as_str(), "{lo} {hi}");
        assert_eq!(truncate_string("short", true).unwrap(), "short");
        let max = char::MAX.to_string().repeat(20);
        assert_eq!(truncate_string(&max, true), None);
        assert_eq!(truncate_binary(&[0xff; 20], true), None);
        let mut b = vec![1u8; 15];
        b.extend([0xff, 0xff, 7]);
        assert_eq!(truncate_binary(&b, true).unwrap(), [vec![1u8; 14], vec![2u8]].concat());
    }
}
