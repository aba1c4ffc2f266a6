//! What a dataset is, declared once per dataset in its own file (the
//! words of a declaration are here; every declaration, and what is read
//! from all of them, is [`super::declared`]):
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
