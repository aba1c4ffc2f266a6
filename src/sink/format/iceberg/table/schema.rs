//! Iceberg schemas: their JSON form (read liberally, written as the spec
//! gives it), the Arrow schema a writer has turned into one with field
//! ids, the ids put back on Arrow fields so data files carry them, and
//! the name mapping for files written without ids.
//!
//! Ids are stable: a column keeps the id it was given when it joined the
//! table, found by name; a column the table lacks gets the next id after
//! `last-column-id` and joins as optional (files written before it read it
//! as null). Nothing else changes a table's schema here: a column of
//! another type, or one that would go from optional to required, is
//! refused.

use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema, TimeUnit};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The Arrow field metadata key the Parquet writer turns into a field id.
pub const FIELD_ID_KEY: &str = parquet::arrow::PARQUET_FIELD_ID_META_KEY;

/// Why an Arrow schema cannot be, or join, a table's schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// No Iceberg type holds the column's values as they are.
    #[error("column {column}: no Iceberg (format version 2) type holds {arrow}{hint}")]
    Unsupported {
        /// The column (a path for nested fields: `topics.element`).
        column: String,
        /// Its Arrow type.
        arrow: String,
        /// What would do instead, if anything.
        hint: &'static str,
    },
    /// The table has the column with another type.
    #[error("column {column} is {table} in the table; the writer has {writer} (a type never changes)")]
    TypeChanged {
        /// The column.
        column: String,
        /// Its type in the table.
        table: String,
        /// Its type in the writer's schema.
        writer: String,
    },
    /// The writer may write nulls into a column the table requires.
    #[error("column {column} is required in the table; the writer's may be null")]
    NowNullable {
        /// The column.
        column: String,
    },
    /// The writer lacks a column the table requires: its files could not
    /// be read.
    #[error("column {column} is required in the table and missing from the writer's schema (columns are only ever added)")]
    MissingRequired {
        /// The column.
        column: String,
    },
    /// A column the writer names is not in the table.
    #[error("column {column} is not in the table's schema")]
    Unknown {
        /// The column.
        column: String,
    },
}

/// What would do instead of Arrow type `t`, which has no Iceberg type.
fn hint_of(t: &DataType) -> &'static str {
    match t {
        DataType::Timestamp(..) | DataType::Time32(_) | DataType::Time64(_) => " (times must be microseconds)",
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => {
            " (no unsigned integers: a wider signed one, or a decimal)"
        }
        DataType::Decimal128(..) | DataType::Decimal256(..) => " (at most 38 digits, a scale of 0 or more)",
        DataType::Map(..) => " (maps are not written here)",
        _ => "",
    }
}

/// A primitive Iceberg type (format version 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Primitive {
    /// `boolean`.
    Boolean,
    /// `int`: 32-bit signed.
    Int,
    /// `long`: 64-bit signed.
    Long,
    /// `float`.
    Float,
    /// `double`.
    Double,
    /// `decimal(P,S)`.
    Decimal {
        /// Digits, at most 38.
        precision: u8,
        /// Digits after the point.
        scale: u8,
    },
    /// `date`: days since 1970-01-01.
    Date,
    /// `time`: microseconds since midnight.
    Time,
    /// `timestamp`: microseconds, no zone.
    Timestamp,
    /// `timestamptz`: microseconds since the epoch, UTC.
    Timestamptz,
    /// `string`: UTF-8.
    String,
    /// `uuid`.
    Uuid,
    /// `fixed[L]`.
    Fixed(u32),
    /// `binary`.
    Binary,
}

impl Primitive {
    /// The type's name in the JSON form.
    pub fn name(&self) -> String {
        match self {
            Primitive::Boolean => "boolean".into(),
            Primitive::Int => "int".into(),
            Primitive::Long => "long".into(),
            Primitive::Float => "float".into(),
            Primitive::Double => "double".into(),
            Primitive::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
            Primitive::Date => "date".into(),
            Primitive::Time => "time".into(),
            Primitive::Timestamp => "timestamp".into(),
            Primitive::Timestamptz => "timestamptz".into(),
            Primitive::String => "string".into(),
            Primitive::Uuid => "uuid".into(),
            Primitive::Fixed(n) => format!("fixed[{n}]"),
            Primitive::Binary => "binary".into(),
        }
    }

    /// Reads a type name, allowing blanks around parameters.
    pub fn parse(name: &str) -> Option<Primitive> {
        let n: String = name.chars().filter(|c| !c.is_whitespace()).collect();
        Some(match n.as_str() {
            "boolean" => Primitive::Boolean,
            "int" => Primitive::Int,
            "long" => Primitive::Long,
            "float" => Primitive::Float,
            "double" => Primitive::Double,
            "date" => Primitive::Date,
            "time" => Primitive::Time,
            "timestamp" => Primitive::Timestamp,
            "timestamptz" => Primitive::Timestamptz,
            "string" => Primitive::String,
            "uuid" => Primitive::Uuid,
            "binary" => Primitive::Binary,
            _ => {
                if let Some(len) = n.strip_prefix("fixed[").and_then(|r| r.strip_suffix(']')) {
                    Primitive::Fixed(len.parse().ok()?)
                } else {
                    let args = n.strip_prefix("decimal(")?.strip_suffix(')')?;
                    let (p, s) = args.split_once(',')?;
                    Primitive::Decimal {
                        precision: p.parse().ok()?,
                        scale: s.parse().ok()?,
                    }
                }
            }
        })
    }
}

/// An Iceberg type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    /// A primitive.
    Primitive(Primitive),
    /// A struct of fields.
    Struct(Vec<NestedField>),
    /// A list.
    List {
        /// The element's field id.
        element_id: i32,
        /// Whether no element is null.
        element_required: bool,
        /// The element's type.
        element: Box<Type>,
    },
    /// A map (read and kept; never made from an Arrow schema here).
    Map {
        /// The key's field id.
        key_id: i32,
        /// The key's type.
        key: Box<Type>,
        /// The value's field id.
        value_id: i32,
        /// Whether no value is null.
        value_required: bool,
        /// The value's type.
        value: Box<Type>,
    },
}

impl Type {
    /// Whether `self` and `other` are the same type, whatever the field ids
    /// of nested fields.
    pub fn same_shape(&self, other: &Type) -> bool {
        match (self, other) {
            (Type::Primitive(a), Type::Primitive(b)) => a == b,
            (Type::Struct(a), Type::Struct(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(x, y)| x.name == y.name && x.required == y.required && x.field_type.same_shape(&y.field_type))
            }
            (
                Type::List {
                    element_required: r1,
                    element: e1,
                    ..
                },
                Type::List {
                    element_required: r2,
                    element: e2,
                    ..
                },
            ) => r1 == r2 && e1.same_shape(e2),
            (Type::Map { key: k1, value: v1, .. }, Type::Map { key: k2, value: v2, .. }) => k1.same_shape(k2) && v1.same_shape(v2),
            _ => false,
        }
    }

    /// The type as a person reads it (`list<string>`).
    pub fn show(&self) -> String {
        match self {
            Type::Primitive(p) => p.name(),
            Type::Struct(fields) => format!(
                "struct<{}>",
                fields
                    .iter()
                    .map(|f| format!("{}: {}", f.name, f.field_type.show()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Type::List { element, .. } => format!("list<{}>", element.show()),
            Type::Map { key, value, .. } => format!("map<{}, {}>", key.show(), value.show()),
        }
    }
}

/// A field of a struct (a table's column, or a nested one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct NestedField {
    /// Its id, unique in the table's schema.
    pub id: i32,
    /// Its name.
    pub name: String,
    /// Whether it is never null.
    pub required: bool,
    /// Its type.
    #[serde(rename = "type")]
    pub field_type: Type,
    /// Its comment, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// Its value in rows written before it was added, kept as read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_default: Option<serde_json::Value>,
    /// Its value in rows written without it, kept as read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_default: Option<serde_json::Value>,
}

/// A table schema: its id and its columns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Schema {
    /// Always `struct`.
    #[serde(rename = "type", default = "struct_name")]
    pub kind: String,
    /// Its id among the table's schemas.
    #[serde(default)]
    pub schema_id: i32,
    /// Columns that identify a row, if declared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub identifier_field_ids: Vec<i32>,
    /// The columns, in order.
    pub fields: Vec<NestedField>,
}

fn struct_name() -> String {
    "struct".into()
}

impl Schema {
    /// A schema of `fields` with id `schema_id`.
    pub fn new(schema_id: i32, fields: Vec<NestedField>) -> Schema {
        Schema {
            kind: struct_name(),
            schema_id,
            identifier_field_ids: Vec::new(),
            fields,
        }
    }

    /// The top-level column named `name`.
    pub fn field(&self, name: &str) -> Option<&NestedField> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The field (at any depth) with id `id`.
    pub fn field_by_id(&self, id: i32) -> Option<&NestedField> {
        fn find(fields: &[NestedField], id: i32) -> Option<&NestedField> {
            fields.iter().find_map(|f| {
                if f.id == id {
                    return Some(f);
                }
                match &f.field_type {
                    Type::Struct(inner) => find(inner, id),
                    _ => None,
                }
            })
        }
        find(&self.fields, id)
    }

    /// The highest field id the schema uses (0 when none).
    pub fn highest_id(&self) -> i32 {
        fn walk(t: &Type) -> i32 {
            match t {
                Type::Primitive(_) => 0,
                Type::Struct(fields) => fields.iter().map(|f| f.id.max(walk(&f.field_type))).max().unwrap_or(0),
                Type::List { element_id, element, .. } => (*element_id).max(walk(element)),
                Type::Map {
                    key_id,
                    value_id,
                    key,
                    value,
                    ..
                } => (*key_id).max(*value_id).max(walk(key)).max(walk(value)),
            }
        }
        self.fields.iter().map(|f| f.id.max(walk(&f.field_type))).max().unwrap_or(0)
    }

    /// The table's name mapping (`schema.name-mapping.default`): every
    /// field's id by name, so files written without ids are read by name.
    /// List elements answer to `element` (Iceberg's and Spark's name) and
    /// `item` (Arrow's).
    pub fn name_mapping(&self) -> serde_json::Value {
        fn of_fields(fields: &[NestedField]) -> Vec<serde_json::Value> {
            fields.iter().map(|f| mapping(f.id, vec![f.name.clone()], &f.field_type)).collect()
        }
        fn mapping(id: i32, names: Vec<String>, t: &Type) -> serde_json::Value {
            let mut m = serde_json::json!({"field-id": id, "names": names});
            let inner = match t {
                Type::Primitive(_) => Vec::new(),
                Type::Struct(fields) => of_fields(fields),
                Type::List { element_id, element, .. } => {
                    vec![mapping(*element_id, vec!["element".into(), "item".into()], element)]
                }
                Type::Map {
                    key_id,
                    key,
                    value_id,
                    value,
                    ..
                } => vec![
                    mapping(*key_id, vec!["key".into()], key),
                    mapping(*value_id, vec!["value".into()], value),
                ],
            };
            if !inner.is_empty() {
                m["fields"] = inner.into();
            }
            m
        }
        serde_json::Value::Array(of_fields(&self.fields))
    }

    /// [`Schema::name_mapping`] for a table whose mapping is `existing`
    /// (its property's text): the names it maps keep their ids, and the
    /// schema's other columns are added. Files without ids are the ones
    /// adopted before a change gave a column a new id (a new type) or
    /// dropped it; older snapshots still read them, by those names, under
    /// their old ids.
    pub fn name_mapping_over(&self, existing: Option<&str>) -> serde_json::Value {
        let mut entries = match existing.and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok()) {
            Some(serde_json::Value::Array(entries)) => entries,
            _ => return self.name_mapping(),
        };
        let named = |e: &serde_json::Value, name: &str| {
            e.get("names")
                .and_then(|n| n.as_array())
                .is_some_and(|n| n.iter().any(|x| x.as_str() == Some(name)))
        };
        let serde_json::Value::Array(fresh) = self.name_mapping() else {
            return self.name_mapping();
        };
        for (f, entry) in self.fields.iter().zip(fresh) {
            if !entries.iter().any(|e| named(e, &f.name)) {
                entries.push(entry);
            }
        }
        serde_json::Value::Array(entries)
    }
}

/// A fresh schema (id 0) for rows of `arrow`: ids from 1, in order, a
/// column's nested fields numbered after every top-level column (as the
/// reference implementation numbers them). Returns it and the highest id.
pub fn from_arrow(arrow: &ArrowSchema) -> Result<(Schema, i32), SchemaError> {
    let mut next = arrow.fields().len() as i32;
    let mut fields = Vec::with_capacity(arrow.fields().len());
    for (i, f) in arrow.fields().iter().enumerate() {
        let field_type = type_of(f.data_type(), f.name(), &mut next)?;
        fields.push(field(i as i32 + 1, f, field_type, !f.is_nullable()));
    }
    Ok((Schema::new(0, fields), next))
}

/// Field ids by column name: a column's and, for a list, its element's.
pub type FieldIds = BTreeMap<String, (i32, Option<i32>)>;

/// The field ids a data file carries (`file`: its Arrow schema, as its
/// footer records it), by column name: each top-level column's and, for a
/// list, its element's. Empty where it carries none (a file written
/// without them).
pub fn carried_ids(file: &ArrowSchema) -> FieldIds {
    let id = |f: &Field| f.metadata().get(FIELD_ID_KEY).and_then(|v| v.parse::<i32>().ok());
    file.fields()
        .iter()
        .filter_map(|f| {
            let element = match f.data_type() {
                DataType::List(e) | DataType::LargeList(e) => id(e),
                _ => None,
            };
            Some((f.name().clone(), (id(f)?, element)))
        })
        .collect()
}

/// `schema` (a new table's, numbered from 1) with the ids `carried` names
/// (a data file's, [`carried_ids`]): files adopted from an output that was
/// an Iceberg table before keep the ids its readers resolve their columns
/// by, so the table made for them takes the same. A column the files do
/// not carry takes an id after every carried one. Returns the schema and
/// its highest id; `None` where `carried` names no column of `schema`, or
/// one of another kind (a list's element id on a column that is none).
pub fn renumbered(schema: &Schema, carried: &FieldIds) -> Option<(Schema, i32)> {
    if !schema.fields.iter().any(|f| carried.contains_key(&f.name)) {
        return None;
    }
    let mut next = carried.values().flat_map(|(id, e)| [Some(*id), *e]).flatten().max().unwrap_or(0);
    let mut fresh = || {
        next += 1;
        next
    };
    let mut fields = Vec::with_capacity(schema.fields.len());
    for f in &schema.fields {
        let mut g = f.clone();
        match (carried.get(&f.name), &mut g.field_type) {
            (Some((id, element)), Type::List { element_id, .. }) => {
                g.id = *id;
                *element_id = match element {
                    Some(e) => *e,
                    None => fresh(),
                };
            }
            (Some((_, Some(_))), _) => return None,
            (Some((id, None)), Type::Primitive(_)) => g.id = *id,
            (Some(_), _) => return None,
            (None, Type::List { element_id, .. }) => {
                g.id = fresh();
                *element_id = fresh();
            }
            (None, Type::Primitive(_)) => g.id = fresh(),
            (None, _) => return None,
        }
        fields.push(g);
    }
    let mut ids: Vec<i32> = fields
        .iter()
        .flat_map(|f| match &f.field_type {
            Type::List { element_id, .. } => vec![f.id, *element_id],
            _ => vec![f.id],
        })
        .collect();
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    // Two columns given one id (files that disagree with each other).
    if ids.len() != n {
        return None;
    }
    let last = ids.last().copied().unwrap_or(0);
    Some((Schema::new(schema.schema_id, fields), last))
}

fn field(id: i32, f: &Field, field_type: Type, required: bool) -> NestedField {
    NestedField {
        id,
        name: f.name().clone(),
        required,
        field_type,
        doc: None,
        initial_default: None,
        write_default: None,
    }
}

/// The Iceberg type of Arrow type `t` (column `path`), numbering nested
/// fields from `*last + 1`.
fn type_of(t: &DataType, path: &str, last: &mut i32) -> Result<Type, SchemaError> {
    let p = |p: Primitive| Ok(Type::Primitive(p));
    match t {
        DataType::Boolean => p(Primitive::Boolean),
        DataType::Int8 | DataType::Int16 | DataType::Int32 => p(Primitive::Int),
        DataType::Int64 => p(Primitive::Long),
        DataType::Float32 => p(Primitive::Float),
        DataType::Float64 => p(Primitive::Double),
        DataType::Decimal128(precision, scale) if *precision <= 38 && *scale >= 0 => p(Primitive::Decimal {
            precision: *precision,
            scale: *scale as u8,
        }),
        DataType::Date32 => p(Primitive::Date),
        DataType::Time64(TimeUnit::Microsecond) => p(Primitive::Time),
        DataType::Timestamp(TimeUnit::Microsecond, None) => p(Primitive::Timestamp),
        DataType::Timestamp(TimeUnit::Microsecond, Some(_)) => p(Primitive::Timestamptz),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => p(Primitive::String),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => p(Primitive::Binary),
        DataType::FixedSizeBinary(n) if *n > 0 => p(Primitive::Fixed(*n as u32)),
        DataType::Dictionary(_, v) => type_of(v, path, last),
        DataType::List(e) | DataType::LargeList(e) => {
            *last += 1;
            let element_id = *last;
            let element = type_of(e.data_type(), &format!("{path}.element"), last)?;
            Ok(Type::List {
                element_id,
                element_required: !e.is_nullable(),
                element: Box::new(element),
            })
        }
        DataType::Struct(children) => {
            let first = *last + 1;
            *last += children.len() as i32;
            let mut fields = Vec::with_capacity(children.len());
            for (i, c) in children.iter().enumerate() {
                let t = type_of(c.data_type(), &format!("{path}.{}", c.name()), last)?;
                fields.push(field(first + i as i32, c, t, !c.is_nullable()));
            }
            Ok(Type::Struct(fields))
        }
        other => Err(SchemaError::Unsupported {
            column: path.to_string(),
            arrow: other.to_string(),
            hint: hint_of(other),
        }),
    }
}

/// What a writer's Arrow schema makes of a table's schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Evolution {
    /// The schema with the writer's new columns (id: the current one's + 1).
    pub schema: Schema,
    /// The highest column id after it (`last-column-id`).
    pub last_column_id: i32,
    /// The columns added, in order.
    pub added: Vec<String>,
}

/// Checks `arrow` (a writer's schema) against `current` (a table's
/// schema whose highest assigned id is `last_column_id`): `None` when the
/// table has every column the writer writes, with its type; else the
/// schema with the new columns appended, optional, with ids after
/// `last_column_id`. Refused: a column of another type, a column the
/// table requires that the writer may leave null or lacks.
pub fn evolve(current: &Schema, last_column_id: i32, arrow: &ArrowSchema) -> Result<Option<Evolution>, SchemaError> {
    let mut last = last_column_id.max(current.highest_id());
    let mut added = Vec::new();
    let mut new_fields = Vec::new();
    for f in arrow.fields() {
        match current.field(f.name()) {
            Some(have) => {
                // Type check with throwaway ids: only the shape counts.
                let want = type_of(f.data_type(), f.name(), &mut 0)?;
                if !have.field_type.same_shape(&want) {
                    return Err(SchemaError::TypeChanged {
                        column: f.name().clone(),
                        table: have.field_type.show(),
                        writer: want.show(),
                    });
                }
                if have.required && f.is_nullable() {
                    return Err(SchemaError::NowNullable { column: f.name().clone() });
                }
            }
            None => {
                last += 1;
                let id = last;
                let t = type_of(f.data_type(), f.name(), &mut last)?;
                new_fields.push(field(id, f, t, false));
                added.push(f.name().clone());
            }
        }
    }
    if let Some(gone) = current
        .fields
        .iter()
        .find(|c| c.required && arrow.field_with_name(&c.name).is_err())
    {
        return Err(SchemaError::MissingRequired { column: gone.name.clone() });
    }
    if added.is_empty() {
        return Ok(None);
    }
    let mut fields = current.fields.clone();
    fields.extend(new_fields);
    Ok(Some(Evolution {
        schema: Schema::new(current.schema_id + 1, fields),
        last_column_id: last,
        added,
    }))
}

/// The schema (id `schema_id`) of a table rewritten for rows of `arrow`
/// (every file replaced in one change): a column `current` has with the
/// same name and shape keeps its id and whether it is required; any
/// other gets a new id after `last_column_id` (a column whose type
/// changed is a new column under the old name: its old values are not
/// read as the new type); a column `arrow` lacks is dropped. Columns
/// named in `optional` are never required. Returns it and the highest
/// id assigned.
pub fn relaid(
    current: &Schema,
    last_column_id: i32,
    arrow: &ArrowSchema,
    schema_id: i32,
    optional: &[&str],
) -> Result<(Schema, i32), SchemaError> {
    let mut last = last_column_id.max(current.highest_id());
    let mut fields = Vec::with_capacity(arrow.fields().len());
    for f in arrow.fields() {
        let want = type_of(f.data_type(), f.name(), &mut 0)?;
        let kept = current.field(f.name()).filter(|have| have.field_type.same_shape(&want));
        let mut nf = match kept {
            Some(have) => NestedField {
                required: have.required && !f.is_nullable(),
                ..have.clone()
            },
            None => {
                last += 1;
                let id = last;
                let t = type_of(f.data_type(), f.name(), &mut last)?;
                field(id, f, t, !f.is_nullable())
            }
        };
        if optional.contains(&f.name().as_str()) {
            nf.required = false;
        }
        fields.push(nf);
    }
    Ok((Schema::new(schema_id, fields), last))
}

/// `arrow` with each field's id from `schema` in its metadata
/// ([`FIELD_ID_KEY`]), nested fields too, so the Parquet files written
/// with it carry ids: what a reader resolves columns by. Every field must
/// be in `schema` with its shape.
pub fn with_field_ids(arrow: &ArrowSchema, schema: &Schema) -> Result<ArrowSchema, SchemaError> {
    let fields = arrow
        .fields()
        .iter()
        .map(|f| {
            let have = schema
                .field(f.name())
                .ok_or_else(|| SchemaError::Unknown { column: f.name().clone() })?;
            tag(f, have.id, &have.field_type, f.name())
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ArrowSchema::new_with_metadata(fields, arrow.metadata().clone()))
}

fn tag(f: &Field, id: i32, t: &Type, path: &str) -> Result<Field, SchemaError> {
    let mismatch = || SchemaError::TypeChanged {
        column: path.to_string(),
        table: t.show(),
        writer: f.data_type().to_string(),
    };
    let data_type = match (f.data_type(), t) {
        (DataType::List(e), Type::List { element_id, element, .. }) => {
            DataType::List(Arc::new(tag(e, *element_id, element, &format!("{path}.element"))?))
        }
        (DataType::LargeList(e), Type::List { element_id, element, .. }) => {
            DataType::LargeList(Arc::new(tag(e, *element_id, element, &format!("{path}.element"))?))
        }
        (DataType::Struct(children), Type::Struct(fields)) => {
            let tagged = children
                .iter()
                .map(|c| {
                    let have = fields.iter().find(|x| &x.name == c.name()).ok_or_else(mismatch)?;
                    tag(c, have.id, &have.field_type, &format!("{path}.{}", c.name()))
                })
                .collect::<Result<Vec<_>, _>>()?;
            DataType::Struct(Fields::from(tagged))
        }
        // Of the column's type: a file's value of another type (text
        // rewritten as bytes) under the column's id would be read as it.
        (dt, Type::Primitive(_)) if type_of(dt, path, &mut 0).is_ok_and(|w| w.same_shape(t)) => dt.clone(),
        _ => return Err(mismatch()),
    };
    let metadata = f.metadata().clone().with(FIELD_ID_KEY, id.to_string());
    Ok(Field::new(f.name(), data_type, f.is_nullable()).with_metadata(metadata))
}

impl Serialize for Type {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Type::Primitive(p) => s.serialize_str(&p.name()),
            Type::Struct(fields) => serde_json::json!({"type": "struct", "fields": fields}).serialize(s),
            Type::List {
                element_id,
                element_required,
                element,
            } => serde_json::json!({
                "type": "list",
                "element-id": element_id,
                "element-required": element_required,
                "element": element,
            })
            .serialize(s),
            Type::Map {
                key_id,
                key,
                value_id,
                value_required,
                value,
            } => serde_json::json!({
                "type": "map",
                "key-id": key_id,
                "key": key,
                "value-id": value_id,
                "value-required": value_required,
                "value": value,
            })
            .serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Type {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Type, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        type_from_json(&v).map_err(D::Error::custom)
    }
}

fn type_from_json(v: &serde_json::Value) -> Result<Type, String> {
    if let Some(name) = v.as_str() {
        return Primitive::parse(name)
            .map(Type::Primitive)
            .ok_or_else(|| format!("type {name} is not an Iceberg format version 2 type this reader knows"));
    }
    let int = |k: &str| {
        v.get(k)
            .and_then(|x| x.as_i64())
            .and_then(|x| i32::try_from(x).ok())
            .ok_or_else(|| format!("{k} missing or not an int"))
    };
    let flag = |k: &str| {
        v.get(k)
            .and_then(|x| x.as_bool())
            .ok_or_else(|| format!("{k} missing or not a boolean"))
    };
    let inner = |k: &str| {
        v.get(k)
            .ok_or_else(|| format!("{k} missing"))
            .and_then(type_from_json)
            .map(Box::new)
    };
    match v.get("type").and_then(|t| t.as_str()) {
        Some("struct") => {
            let fields = v.get("fields").cloned().unwrap_or_else(|| serde_json::json!([]));
            Ok(Type::Struct(serde_json::from_value(fields).map_err(|e| e.to_string())?))
        }
        Some("list") => Ok(Type::List {
            element_id: int("element-id")?,
            element_required: flag("element-required")?,
            element: inner("element")?,
        }),
        Some("map") => Ok(Type::Map {
            key_id: int("key-id")?,
            key: inner("key")?,
            value_id: int("value-id")?,
            value_required: flag("value-required")?,
            value: inner("value")?,
        }),
        other => Err(format!("unknown nested type {other:?}")),
    }
}
