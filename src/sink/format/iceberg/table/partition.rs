//! Partition specs and partition values.
//!
//! chainetl's tables are partitioned as its hive folders are: identity on
//! `chain`, and the UTC day as Iceberg's `day` transform of the row's
//! timestamp (or identity on a `date` column). A partition field is named
//! after its hive key (`chain`, `date`), so a data file's partition tuple
//! is read from its path's `key=value` folders, and Iceberg's own
//! partition paths would look the same.

use super::schema::{Primitive, Schema, Type};
use serde::{Deserialize, Serialize};

/// The first partition field id (as the reference implementation
/// numbers them).
pub const FIRST_PARTITION_ID: i32 = 1000;

/// The value hive writes for a null partition value.
const HIVE_NULL: &str = "__HIVE_DEFAULT_PARTITION__";

/// A partition spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PartitionSpec {
    /// Its id among the table's specs.
    pub spec_id: i32,
    /// Its fields, in tuple order.
    #[serde(default)]
    pub fields: Vec<PartitionField>,
}

/// A field of a partition spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PartitionField {
    /// The column it is derived from.
    pub source_id: i32,
    /// Its id (the partition tuple's field id in manifests).
    pub field_id: i32,
    /// Its name.
    pub name: String,
    /// The transform, as the spec writes it (`identity`, `day`, …).
    pub transform: String,
}

/// A transform chainetl partitions by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transform {
    /// The value itself.
    Identity,
    /// Days since 1970-01-01 of a date or timestamp.
    Day,
}

impl Transform {
    /// Its name in a spec.
    pub fn name(self) -> &'static str {
        match self {
            Transform::Identity => "identity",
            Transform::Day => "day",
        }
    }
}

/// A partition field as a job asks for it: a name (the hive key), the
/// column it is derived from, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionKey {
    /// The field's name: the hive key of the files' folders.
    pub name: String,
    /// The source column's name.
    pub source: String,
    /// The transform.
    pub transform: Transform,
}

impl PartitionKey {
    /// Identity on column `column`, named after it (`chain`).
    pub fn identity(column: &str) -> PartitionKey {
        PartitionKey {
            name: column.into(),
            source: column.into(),
            transform: Transform::Identity,
        }
    }

    /// The day of column `source` (a timestamp), named `name` (`date`).
    pub fn day(name: &str, source: &str) -> PartitionKey {
        PartitionKey {
            name: name.into(),
            source: source.into(),
            transform: Transform::Day,
        }
    }
}

/// The partition keys of a table whose files are in hive folders named
/// by `hive_keys` (`chain`, `date`, in order): `chain` (and any other
/// key) as itself; `date` as the day of `day_source` (a timestamp
/// column), or as itself where `day_source` is the `date` column itself.
pub fn keys_of_folders(hive_keys: &[String], day_source: Option<&str>) -> Result<Vec<PartitionKey>, String> {
    hive_keys
        .iter()
        .map(|k| match (k.as_str(), day_source) {
            ("date", Some(source)) if source != "date" => Ok(PartitionKey::day("date", source)),
            ("date", Some(_)) => Ok(PartitionKey::identity("date")),
            ("date", None) => Err("partition date: the table has no column its day is taken from".to_string()),
            (other, _) => Ok(PartitionKey::identity(other)),
        })
        .collect()
}

/// One value of a partition tuple, typed by its field's result type:
/// `Int` holds `int` and `date` (days), `Long` holds `long` and
/// timestamps (microseconds).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PartitionValue {
    /// No value.
    Null,
    /// A `boolean`.
    Boolean(bool),
    /// An `int` or a `date`.
    Int(i32),
    /// A `long`, `timestamp` or `timestamptz`.
    Long(i64),
    /// A `string`.
    String(String),
    /// A `binary`.
    Binary(Vec<u8>),
}

impl PartitionValue {
    /// The value in Iceberg's binary single-value serialization (a bound
    /// in a manifest list's partition summary); `None` for null.
    pub fn to_bytes(&self) -> Option<Vec<u8>> {
        Some(match self {
            PartitionValue::Null => return None,
            PartitionValue::Boolean(b) => vec![u8::from(*b)],
            PartitionValue::Int(i) => i.to_le_bytes().to_vec(),
            PartitionValue::Long(l) => l.to_le_bytes().to_vec(),
            PartitionValue::String(s) => s.as_bytes().to_vec(),
            PartitionValue::Binary(b) => b.clone(),
        })
    }
}

impl PartitionSpec {
    /// The spec (id `spec_id`) of `keys` over `schema`, field ids from
    /// `first_id`. Refused: a key whose column the schema lacks, or whose
    /// column's type the transform does not take.
    pub fn of_keys(spec_id: i32, keys: &[PartitionKey], schema: &Schema, first_id: i32) -> Result<PartitionSpec, String> {
        let mut fields = Vec::with_capacity(keys.len());
        for (i, k) in keys.iter().enumerate() {
            let source = schema
                .field(&k.source)
                .ok_or_else(|| format!("partition {}: column {} is not in the table", k.name, k.source))?;
            let Type::Primitive(p) = &source.field_type else {
                return Err(format!("partition {}: column {} is not of a primitive type", k.name, k.source));
            };
            if k.transform == Transform::Day && !matches!(p, Primitive::Date | Primitive::Timestamp | Primitive::Timestamptz) {
                return Err(format!(
                    "partition {}: the day transform takes a date or timestamp, and {} is {}",
                    k.name,
                    k.source,
                    p.name()
                ));
            }
            if k.name != k.source && schema.field(&k.name).is_some() {
                return Err(format!("partition {}: a column has that name", k.name));
            }
            fields.push(PartitionField {
                source_id: source.id,
                field_id: first_id + i as i32,
                name: k.name.clone(),
                transform: k.transform.name().into(),
            });
        }
        Ok(PartitionSpec { spec_id, fields })
    }

    /// Whether the spec is `keys` over `schema`: the same fields, names,
    /// source columns and transforms, in order (field ids aside).
    pub fn is_of(&self, keys: &[PartitionKey], schema: &Schema) -> bool {
        self.fields.len() == keys.len()
            && self.fields.iter().zip(keys).all(|(f, k)| {
                f.name == k.name && f.transform == k.transform.name() && schema.field(&k.source).is_some_and(|c| c.id == f.source_id)
            })
    }

    /// The spec as a person reads it: `chain=identity(chain), date=day(block_timestamp)`.
    pub fn show(&self, schema: &Schema) -> String {
        let shown: Vec<String> = self
            .fields
            .iter()
            .map(|f| {
                let source = schema
                    .field_by_id(f.source_id)
                    .map_or_else(|| format!("#{}", f.source_id), |c| c.name.clone());
                format!("{}={}({source})", f.name, f.transform)
            })
            .collect();
        if shown.is_empty() {
            "unpartitioned".into()
        } else {
            shown.join(", ")
        }
    }

    /// Each field's result type: the source column's type for identity,
    /// `date` for day; refused for a transform chainetl does not write.
    pub fn result_types(&self, schema: &Schema) -> Result<Vec<Primitive>, String> {
        self.fields
            .iter()
            .map(|f| {
                let source = schema
                    .field_by_id(f.source_id)
                    .ok_or_else(|| format!("partition {}: its column (id {}) is not in the schema", f.name, f.source_id))?;
                let Type::Primitive(p) = source.field_type else {
                    return Err(format!("partition {}: column {} is not primitive", f.name, source.name));
                };
                match f.transform.as_str() {
                    "identity" => Ok(p),
                    "day" => Ok(Primitive::Date),
                    other => Err(format!("partition {}: transform {other} is not one chainetl writes", f.name)),
                }
            })
            .collect()
    }

    /// The partition tuple of the data file at `path` (relative to the
    /// table) from its hive folders, `name=value`: one value per field, by
    /// the field's name, parsed as the field's result type (a day as
    /// `YYYY-MM-DD`). Refused when a folder is missing or its value is not
    /// of the type.
    pub fn values_of_path(&self, schema: &Schema, path: &str) -> Result<Vec<PartitionValue>, String> {
        let types = self.result_types(schema)?;
        let mut dirs: Vec<&str> = path.split('/').collect();
        dirs.pop();
        let folders: Vec<(&str, &str)> = dirs.iter().filter_map(|d| d.split_once('=')).collect();
        self.fields
            .iter()
            .zip(types)
            .map(|(f, t)| {
                let (_, raw) = folders
                    .iter()
                    .find(|(k, _)| *k == f.name)
                    .ok_or_else(|| format!("{path}: no {}=… folder for partition {}", f.name, f.name))?;
                parse_value(&percent_decode(raw), t).ok_or_else(|| format!("{path}: {}={raw} is not a {}", f.name, t.name()))
            })
            .collect()
    }
}

/// `raw` (a hive folder's value) as a value of type `t`.
fn parse_value(raw: &str, t: Primitive) -> Option<PartitionValue> {
    if raw == HIVE_NULL {
        return Some(PartitionValue::Null);
    }
    Some(match t {
        Primitive::String => PartitionValue::String(raw.to_string()),
        Primitive::Boolean => PartitionValue::Boolean(raw.parse().ok()?),
        Primitive::Int => PartitionValue::Int(raw.parse().ok()?),
        Primitive::Long => PartitionValue::Long(raw.parse().ok()?),
        Primitive::Date => {
            let day = chrono::NaiveDate::parse_from_str(raw, "%Y-%m-%d").ok()?;
            let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1)?;
            PartitionValue::Int(i32::try_from((day - epoch).num_days()).ok()?)
        }
        _ => return None,
    })
}

/// Hive's escaping of folder values undone (`%2F` → `/`); a `%` not
/// followed by two hex digits stays.
fn percent_decode(raw: &str) -> String {
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(v) = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| raw.to_string())
}
