//! What a dataset is, declared once per dataset in its own file
//! ([`super::blocks::DECLARATION`], [`super::events::DECLARATION`],
//! [`super::portfolio::DECLARATION`], [`super::tokens::DECLARATION`]):
//! its columns (name, type, nullability), natural key (the sort order of
//! its files), partition keys, the columns people look rows up by (bloom
//! filters by default) and those whose values repeat (dictionary
//! encoded). The Arrow schema (the contract of the Parquet files and of
//! `schemas/<dataset>.json`), the DDL of `chainetl schema`, the writer's
//! encodings and compaction's sort order are all read from here, and a
//! decoder's columns are placed by name ([`Declaration::batch`]).

use crate::spec::HashEncoding;
use crate::vocab::Dataset;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use std::sync::Arc;

/// The type of a column, before the output's hash encoding is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// UTF-8 text.
    Text,
    /// A 64-bit integer.
    Int64,
    /// A 64-bit float.
    Float64,
    /// An exact integer of up to 38 digits: `Decimal128(38, 0)`.
    Decimal,
    /// A hash, address or byte string: `0x` text or raw bytes
    /// (`output.hash_encoding`).
    Hex,
    /// A list of [`Kind::Hex`] values.
    HexList,
    /// Microseconds since the epoch, UTC.
    Timestamp,
    /// A day (days since 1970-01-01).
    Date,
}

impl Kind {
    /// The Arrow type under hash encoding `enc`.
    pub fn arrow(self, enc: HashEncoding) -> DataType {
        let hex = || {
            if enc == HashEncoding::Binary {
                DataType::Binary
            } else {
                DataType::Utf8
            }
        };
        match self {
            Kind::Text => DataType::Utf8,
            Kind::Int64 => DataType::Int64,
            Kind::Float64 => DataType::Float64,
            Kind::Decimal => DataType::Decimal128(38, 0),
            Kind::Hex => hex(),
            Kind::HexList => DataType::List(Arc::new(Field::new("item", hex(), true))),
            Kind::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            Kind::Date => DataType::Date32,
        }
    }
}

/// One column of a dataset.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// Its name.
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
    /// Whether it may be null.
    pub nullable: bool,
}

/// A required column.
pub(super) const fn required(name: &'static str, kind: Kind) -> Column {
    Column {
        name,
        kind,
        nullable: false,
    }
}

/// A column that may be null.
pub(super) const fn optional(name: &'static str, kind: Kind) -> Column {
    Column {
        name,
        kind,
        nullable: true,
    }
}

/// Everything about a dataset that is not how its rows are decoded.
#[derive(Debug)]
pub struct Declaration {
    /// The dataset.
    pub dataset: Dataset,
    /// Its columns, in file order.
    pub columns: &'static [Column],
    /// Its natural key, in sort order: what its files are sorted by and
    /// what no two rows share.
    pub key: &'static [&'static str],
    /// The partition keys its rows have (`output.partition_by` chooses
    /// among them): `chain`, and `date` (the UTC day) where rows have one.
    pub partition_by: &'static [&'static str],
    /// Columns people look rows up by: [`Dataset::lookup_columns`],
    /// bloom filters by default (`output.bloom_filters`).
    pub lookups: &'static [&'static str],
    /// The column whose UTC day is a row's `date` partition (a timestamp,
    /// or a `date`); None where rows have no day.
    pub day: Option<&'static str>,
    /// Columns whose values repeat a lot, so dictionary encoding pays.
    pub dictionary: &'static [&'static str],
}

/// Every dataset's declaration, in [`Dataset::ALL`] order.
pub const DECLARATIONS: [&Declaration; 4] = [
    &super::blocks::DECLARATION,
    &super::events::DECLARATION,
    &super::portfolio::DECLARATION,
    &super::tokens::DECLARATION,
];

/// The declaration of `dataset`.
pub fn declaration(dataset: Dataset) -> &'static Declaration {
    match dataset {
        Dataset::Blocks => &super::blocks::DECLARATION,
        Dataset::Events => &super::events::DECLARATION,
        Dataset::Portfolio => &super::portfolio::DECLARATION,
        Dataset::Tokens => &super::tokens::DECLARATION,
    }
}

impl Declaration {
    /// The Arrow schema under hash encoding `enc`.
    pub fn schema(&self, enc: HashEncoding) -> SchemaRef {
        let fields: Vec<Field> = self
            .columns
            .iter()
            .map(|c| Field::new(c.name, c.kind.arrow(enc), c.nullable))
            .collect();
        Arc::new(Schema::new(fields))
    }

    /// A batch of the declared schema from a decoder's columns, each
    /// placed by its name. A name not declared, declared twice or missing
    /// is an error (a decoder out of step with its declaration), as is an
    /// array of the wrong type or length.
    pub fn batch(&self, enc: HashEncoding, named: Vec<(&'static str, ArrayRef)>) -> Result<RecordBatch, String> {
        let mut slots: Vec<Option<ArrayRef>> = vec![None; self.columns.len()];
        for (name, array) in named {
            let Some(i) = self.columns.iter().position(|c| c.name == name) else {
                return Err(format!("column `{name}` is not declared for {}", self.dataset.name()));
            };
            if slots[i].replace(array).is_some() {
                return Err(format!("column `{name}` filled twice"));
            }
        }
        let mut arrays = Vec::with_capacity(slots.len());
        for (slot, c) in slots.into_iter().zip(self.columns) {
            arrays.push(slot.ok_or_else(|| format!("column `{}` not filled", c.name))?);
        }
        RecordBatch::try_new(self.schema(enc), arrays).map_err(|e| e.to_string())
    }
}

/// The Arrow schema of `dataset`.
pub fn schema(dataset: Dataset, enc: HashEncoding) -> SchemaRef {
    declaration(dataset).schema(enc)
}

/// The natural key of a table's rows, in sort order: what its files are
/// sorted by. A table is known by the first column of a declared key it
/// holds (decoded event tables share the raw events' key); key columns a
/// file does not hold (partition keys) are left out.
pub fn natural_key(columns: &[&str]) -> Vec<&'static str> {
    DECLARATIONS
        .iter()
        .map(|d| d.key)
        .find(|key| columns.contains(&key[0]))
        .map(|key| key.iter().copied().filter(|k| columns.contains(k)).collect())
        .unwrap_or_default()
}

/// The partition keys the rows of a table with `columns` have (see
/// [`natural_key`] for how the table is known): decoded event tables have
/// the raw events'.
pub fn partition_keys(columns: &[&str]) -> &'static [&'static str] {
    DECLARATIONS
        .iter()
        .find(|d| columns.contains(&d.key[0]))
        .map(|d| d.partition_by)
        .unwrap_or(&["chain"])
}

/// The column whose UTC day is the `date` partition of a table with
/// `columns` (see [`natural_key`] for how the table is known): a
/// timestamp, or a `date`; None where its rows have no day.
pub fn day_column(columns: &[&str]) -> Option<&'static str> {
    DECLARATIONS.iter().find(|d| columns.contains(&d.key[0])).and_then(|d| d.day)
}

/// The schema as the JSON document kept in `schemas/<dataset>.json`.
pub fn schema_json(dataset: Dataset) -> String {
    let s = schema(dataset, HashEncoding::Hex);
    let cols: Vec<serde_json::Value> = s
        .fields()
        .iter()
        .map(|f| serde_json::json!({"name": f.name(), "type": type_name(f.data_type()), "nullable": f.is_nullable()}))
        .collect();
    let doc = serde_json::json!({"dataset": dataset.name(), "columns": cols});
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

/// A stable, engine-neutral name of an Arrow type.
pub fn type_name(t: &DataType) -> String {
    match t {
        DataType::Utf8 => "string".into(),
        DataType::Binary => "binary".into(),
        DataType::Boolean => "bool".into(),
        DataType::Int64 => "int64".into(),
        DataType::Float64 => "float64".into(),
        DataType::Date32 => "date32".into(),
        DataType::Decimal128(p, s) => format!("decimal128({p},{s})"),
        DataType::Timestamp(TimeUnit::Microsecond, Some(tz)) => format!("timestamp[us, tz={tz}]"),
        DataType::List(f) => format!("list<{}>", type_name(f.data_type())),
        other => format!("{other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};

    #[test]
    fn every_declared_name_is_a_column_of_its_dataset() {
        for d in DECLARATIONS {
            let names: Vec<&str> = d.columns.iter().map(|c| c.name).collect();
            let mut distinct = names.clone();
            distinct.sort();
            distinct.dedup();
            assert_eq!(distinct.len(), names.len(), "{:?}: a column declared twice", d.dataset);
            for n in d.key.iter().chain(d.lookups).chain(d.dictionary) {
                assert!(names.contains(n), "{:?}: `{n}` is not one of its columns", d.dataset);
            }
            assert!(d.partition_by.contains(&"chain"));
            assert!(d.partition_by.iter().all(|k| ["chain", "date"].contains(k)));
        }
        for (d, dataset) in DECLARATIONS.iter().zip(Dataset::ALL) {
            assert_eq!(d.dataset, dataset);
        }
    }

    #[test]
    fn the_vocabulary_names_each_datasets_columns_and_those_always_kept() {
        for d in DECLARATIONS {
            let names: Vec<&str> = d.columns.iter().map(|c| c.name).collect();
            assert_eq!(d.dataset.columns(), names.as_slice(), "{:?}", d.dataset);
            // `date` is a partition key of rows without a `date` column too.
            let mut kept: Vec<&str> = d
                .key
                .iter()
                .chain(d.partition_by)
                .chain(&d.day)
                .copied()
                .filter(|c| names.contains(c))
                .collect();
            kept.sort_unstable();
            kept.dedup();
            let mut said = d.dataset.kept_columns().to_vec();
            said.sort_unstable();
            assert_eq!(said, kept, "{:?}", d.dataset);
        }
    }

    #[test]
    fn a_batch_is_filled_by_name_whatever_the_order() {
        let d = &super::super::tokens::DECLARATION;
        let text = |v: &str| Arc::new(StringArray::from(vec![v])) as ArrayRef;
        let mut named = vec![
            ("symbol", text("SYM")),
            ("chain", text("base")),
            ("address", text("0xab")),
            ("decimals", Arc::new(Int64Array::from(vec![6])) as ArrayRef),
            ("standard", text("erc20")),
            ("name", text("Name")),
        ];
        let b = d.batch(HashEncoding::Hex, named.clone()).unwrap();
        let col = |n: &str| {
            b.column_by_name(n)
                .unwrap()
                .as_any()
                .downcast_ref::<StringArray>()
                .map(|a| a.value(0).to_string())
        };
        assert_eq!((col("name"), col("symbol")), (Some("Name".into()), Some("SYM".into())));
        named.push(("name", text("again")));
        assert!(d.batch(HashEncoding::Hex, named.clone()).unwrap_err().contains("twice"));
        named.truncate(5);
        assert!(d.batch(HashEncoding::Hex, named.clone()).unwrap_err().contains("`name` not filled"));
        named.push(("nome", text("x")));
        assert!(d.batch(HashEncoding::Hex, named).unwrap_err().contains("not declared"));
    }
}
