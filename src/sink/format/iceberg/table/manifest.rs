//! Manifests and manifest lists: Avro files, in the format version 2
//! schemas with the field ids the spec gives (`field-id` on record
//! fields, `element-id` on arrays, maps with int keys as arrays of
//! `k<id>_v<id>` records, logical type `map`), record names as the
//! reference implementation writes them, deflate-compressed, with the
//! key-value metadata readers look for (`schema`, `partition-spec`,
//! `format-version`, `content`, …).
//!
//! Read liberally, by field name: fields a version 2 writer may leave out
//! are optional here, unions with null unwrapped, int-keyed maps read as
//! arrays or as Avro maps.

use super::metadata::FORMAT_VERSION;
use super::partition::{PartitionField, PartitionSpec, PartitionValue};
use super::schema::{Primitive, Schema};
use super::stats::DataFile;
use apache_avro::types::Value;
use apache_avro::{Codec, DeflateSettings, Reader, Writer};
use serde_json::json;
use std::collections::BTreeMap;

/// A manifest entry's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Carried from an earlier snapshot.
    Existing,
    /// Added by the snapshot that wrote the manifest.
    Added,
    /// Removed by the snapshot that wrote the manifest.
    Deleted,
}

impl Status {
    fn code(self) -> i32 {
        match self {
            Status::Existing => 0,
            Status::Added => 1,
            Status::Deleted => 2,
        }
    }

    fn of(code: i32) -> Option<Status> {
        Some(match code {
            0 => Status::Existing,
            1 => Status::Added,
            2 => Status::Deleted,
            _ => return None,
        })
    }
}

/// One row of a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestEntry {
    /// Whether the file was carried, added or removed.
    pub status: Status,
    /// The snapshot that added (or removed) it; inherited when `None`.
    pub snapshot_id: Option<i64>,
    /// Its data sequence number; inherited when `None` (added only).
    pub sequence_number: Option<i64>,
    /// The sequence number of the snapshot that added it; likewise.
    pub file_sequence_number: Option<i64>,
    /// The file.
    pub file: DataFile,
}

/// One row of a manifest list: a manifest and its counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestFile {
    /// Its location (an absolute URI).
    pub path: String,
    /// Its bytes.
    pub length: i64,
    /// The partition spec its files are of.
    pub spec_id: i32,
    /// 0: data files; 1: delete files.
    pub content: i32,
    /// The sequence number of the snapshot that added it.
    pub sequence_number: i64,
    /// The lowest data sequence number of its live files.
    pub min_sequence_number: i64,
    /// The snapshot that added it.
    pub added_snapshot_id: i64,
    /// Entries added.
    pub added_files: i32,
    /// Entries carried.
    pub existing_files: i32,
    /// Entries removed.
    pub deleted_files: i32,
    /// Rows of entries added.
    pub added_rows: i64,
    /// Rows of entries carried.
    pub existing_rows: i64,
    /// Rows of entries removed.
    pub deleted_rows: i64,
    /// Per partition field: (contains null, lower, upper).
    pub partitions: Vec<FieldSummary>,
}

/// A manifest's summary of one partition field.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldSummary {
    /// Whether a file's value is null.
    pub contains_null: bool,
    /// Whether a value is NaN, where known.
    pub contains_nan: Option<bool>,
    /// The lowest value, serialized.
    pub lower_bound: Option<Vec<u8>>,
    /// The highest value, serialized.
    pub upper_bound: Option<Vec<u8>>,
}

/// What a manifest is written with: the table schema, the spec its files
/// are of, and the table location their paths are under.
#[derive(Debug, Clone, Copy)]
pub struct ManifestContext<'a> {
    /// The table's current schema.
    pub schema: &'a Schema,
    /// The spec of every entry's file.
    pub spec: &'a PartitionSpec,
    /// The table's location, without a trailing `/`.
    pub location: &'a str,
}

/// A name Avro accepts: letters, digits and `_`, not starting with a
/// digit; anything else as the reference implementation escapes it
/// (`_x` and the character's code in hex).
fn avro_name(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit()) {
            out.push(c);
        } else if i == 0 && c.is_ascii_digit() {
            out.push('_');
            out.push(c);
        } else {
            out.push_str(&format!("_x{:X}", c as u32));
        }
    }
    if out.is_empty() { "_".into() } else { out }
}

/// The Avro type of a partition value of type `t`.
fn partition_avro_type(t: Primitive, field: &PartitionField) -> Result<serde_json::Value, String> {
    Ok(match t {
        Primitive::Boolean => json!("boolean"),
        Primitive::Int => json!("int"),
        Primitive::Long => json!("long"),
        Primitive::Date => json!({"type": "int", "logicalType": "date"}),
        Primitive::String => json!("string"),
        Primitive::Binary => json!("bytes"),
        other => {
            return Err(format!(
                "partition {}: values of type {} are not written here",
                field.name,
                other.name()
            ));
        }
    })
}

fn optional(name: &str, t: serde_json::Value, id: i32) -> serde_json::Value {
    json!({"name": name, "type": ["null", t], "default": null, "field-id": id})
}

fn int_map(name: &str, id: i32, key_id: i32, value_id: i32, value: &str) -> serde_json::Value {
    let entry = json!({
        "type": "record",
        "name": format!("k{key_id}_v{value_id}"),
        "fields": [
            {"name": "key", "type": "int", "field-id": key_id},
            {"name": "value", "type": value, "field-id": value_id},
        ],
    });
    optional(name, json!({"type": "array", "items": entry, "logicalType": "map"}), id)
}

/// The `manifest_entry` schema of a manifest of `spec`'s files.
fn entry_schema(ctx: &ManifestContext<'_>) -> Result<serde_json::Value, String> {
    let types = ctx.spec.result_types(ctx.schema)?;
    let mut partition_fields = Vec::new();
    for (f, t) in ctx.spec.fields.iter().zip(types) {
        partition_fields.push(optional(&avro_name(&f.name), partition_avro_type(t, f)?, f.field_id));
    }
    let data_file = json!({
        "type": "record",
        "name": "r2",
        "fields": [
            {"name": "content", "type": "int", "field-id": 134},
            {"name": "file_path", "type": "string", "field-id": 100},
            {"name": "file_format", "type": "string", "field-id": 101},
            {"name": "partition", "type": {"type": "record", "name": "r102", "fields": partition_fields}, "field-id": 102},
            {"name": "record_count", "type": "long", "field-id": 103},
            {"name": "file_size_in_bytes", "type": "long", "field-id": 104},
            int_map("column_sizes", 108, 117, 118, "long"),
            int_map("value_counts", 109, 119, 120, "long"),
            int_map("null_value_counts", 110, 121, 122, "long"),
            int_map("nan_value_counts", 137, 138, 139, "long"),
            int_map("lower_bounds", 125, 126, 127, "bytes"),
            int_map("upper_bounds", 128, 129, 130, "bytes"),
            optional("key_metadata", json!("bytes"), 131),
            optional("split_offsets", json!({"type": "array", "items": "long", "element-id": 133}), 132),
            optional("equality_ids", json!({"type": "array", "items": "int", "element-id": 136}), 135),
            optional("sort_order_id", json!("int"), 140),
        ],
    });
    Ok(json!({
        "type": "record",
        "name": "manifest_entry",
        "fields": [
            {"name": "status", "type": "int", "field-id": 0},
            optional("snapshot_id", json!("long"), 1),
            optional("sequence_number", json!("long"), 3),
            optional("file_sequence_number", json!("long"), 4),
            {"name": "data_file", "type": data_file, "field-id": 2},
        ],
    }))
}

fn some(v: Value) -> Value {
    Value::Union(1, Box::new(v))
}

fn none() -> Value {
    Value::Union(0, Box::new(Value::Null))
}

fn opt<T>(v: Option<T>, f: impl FnOnce(T) -> Value) -> Value {
    v.map_or_else(none, |x| some(f(x)))
}

fn map_value<V: Clone>(m: &BTreeMap<i32, V>, f: impl Fn(V) -> Value) -> Value {
    if m.is_empty() {
        return none();
    }
    let items = m
        .iter()
        .map(|(k, v)| Value::Record(vec![("key".into(), Value::Int(*k)), ("value".into(), f(v.clone()))]))
        .collect();
    some(Value::Array(items))
}

fn avro_error(e: apache_avro::Error) -> String {
    e.to_string()
}

/// The bytes of an Avro file of `schema` (JSON) holding `rows`, with
/// key-value metadata `meta`. The header is written here, with `schema`
/// as given: the Avro library writes its own rendering of a schema, which
/// drops the `logicalType: map` that tells Iceberg readers an array of
/// key/value records is a map.
fn avro_file(schema: &serde_json::Value, meta: &[(&str, String)], rows: Vec<Value>) -> Result<Vec<u8>, String> {
    let parsed = apache_avro::Schema::parse(schema).map_err(avro_error)?;
    let codec = Codec::Deflate(DeflateSettings::default());
    let marker: [u8; 16] = std::array::from_fn(|_| fastrand::u8(..));
    let mut header = b"Obj\x01".to_vec();
    let mut entries: Vec<(&str, Vec<u8>)> = vec![
        ("avro.schema", schema.to_string().into_bytes()),
        ("avro.codec", b"deflate".to_vec()),
    ];
    entries.extend(meta.iter().map(|(k, v)| (*k, v.as_bytes().to_vec())));
    zigzag(&mut header, entries.len() as i64);
    for (k, v) in entries {
        zigzag(&mut header, k.len() as i64);
        header.extend_from_slice(k.as_bytes());
        zigzag(&mut header, v.len() as i64);
        header.extend_from_slice(&v);
    }
    zigzag(&mut header, 0);
    header.extend_from_slice(&marker);
    let mut w = Writer::builder()
        .schema(&parsed)
        .writer(header)
        .codec(codec)
        .marker(marker)
        .has_header(true)
        .build()
        .map_err(avro_error)?;
    for row in rows {
        w.append_value(row).map_err(avro_error)?;
    }
    w.into_inner().map_err(avro_error)
}

/// Avro's encoding of a long: zig-zag, then 7 bits a byte.
fn zigzag(out: &mut Vec<u8>, n: i64) {
    let mut z = ((n << 1) ^ (n >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8 & 0x7f) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// A manifest of `entries` (data files of `ctx.spec`), as bytes.
pub fn write_manifest(ctx: &ManifestContext<'_>, entries: &[ManifestEntry]) -> Result<Vec<u8>, String> {
    let schema = entry_schema(ctx)?;
    let types = ctx.spec.result_types(ctx.schema)?;
    let mut rows = Vec::with_capacity(entries.len());
    for e in entries {
        let f = &e.file;
        if f.partition.len() != types.len() {
            return Err(format!(
                "{}: {} partition values for {} fields",
                f.path,
                f.partition.len(),
                types.len()
            ));
        }
        let partition = ctx
            .spec
            .fields
            .iter()
            .zip(&types)
            .zip(&f.partition)
            .map(|((field, t), v)| Ok((avro_name(&field.name), partition_avro_value(v, *t, &f.path)?)))
            .collect::<Result<Vec<_>, String>>()?;
        let data_file = Value::Record(vec![
            ("content".into(), Value::Int(0)),
            ("file_path".into(), Value::String(format!("{}/{}", ctx.location, f.path))),
            ("file_format".into(), Value::String("PARQUET".into())),
            ("partition".into(), Value::Record(partition)),
            ("record_count".into(), Value::Long(f.record_count as i64)),
            ("file_size_in_bytes".into(), Value::Long(f.file_size as i64)),
            ("column_sizes".into(), map_value(&f.column_sizes, Value::Long)),
            ("value_counts".into(), map_value(&f.value_counts, Value::Long)),
            ("null_value_counts".into(), map_value(&f.null_value_counts, Value::Long)),
            ("nan_value_counts".into(), map_value(&f.nan_value_counts, Value::Long)),
            ("lower_bounds".into(), map_value(&f.lower_bounds, Value::Bytes)),
            ("upper_bounds".into(), map_value(&f.upper_bounds, Value::Bytes)),
            ("key_metadata".into(), none()),
            (
                "split_offsets".into(),
                opt((!f.split_offsets.is_empty()).then_some(&f.split_offsets), |s| {
                    Value::Array(s.iter().map(|o| Value::Long(*o)).collect())
                }),
            ),
            ("equality_ids".into(), none()),
            ("sort_order_id".into(), opt(f.sort_order_id, Value::Int)),
        ]);
        rows.push(Value::Record(vec![
            ("status".into(), Value::Int(e.status.code())),
            ("snapshot_id".into(), opt(e.snapshot_id, Value::Long)),
            ("sequence_number".into(), opt(e.sequence_number, Value::Long)),
            ("file_sequence_number".into(), opt(e.file_sequence_number, Value::Long)),
            ("data_file".into(), data_file),
        ]));
    }
    let fields: Vec<&PartitionField> = ctx.spec.fields.iter().collect();
    let meta = [
        ("schema", serde_json::to_string(ctx.schema).unwrap_or_default()),
        ("schema-id", ctx.schema.schema_id.to_string()),
        ("partition-spec", serde_json::to_string(&fields).unwrap_or_default()),
        ("partition-spec-id", ctx.spec.spec_id.to_string()),
        ("format-version", FORMAT_VERSION.to_string()),
        ("content", "data".into()),
    ];
    avro_file(&schema, &meta, rows)
}

fn partition_avro_value(v: &PartitionValue, t: Primitive, path: &str) -> Result<Value, String> {
    let inner = match (v, t) {
        (PartitionValue::Null, _) => return Ok(none()),
        (PartitionValue::Boolean(b), Primitive::Boolean) => Value::Boolean(*b),
        (PartitionValue::Int(i), Primitive::Int) => Value::Int(*i),
        (PartitionValue::Int(i), Primitive::Date) => Value::Date(*i),
        (PartitionValue::Long(l), Primitive::Long) => Value::Long(*l),
        (PartitionValue::String(s), Primitive::String) => Value::String(s.clone()),
        (PartitionValue::Binary(b), Primitive::Binary) => Value::Bytes(b.clone()),
        (v, t) => return Err(format!("{path}: partition value {v:?} is not a {}", t.name())),
    };
    Ok(some(inner))
}

/// Why a manifest's entries cannot be taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManifestError {
    /// Not a manifest a reader can read: not Avro, an entry missing what a
    /// reader needs.
    Unreadable(String),
    /// Read, but listing what chainetl's tables never hold and another
    /// engine wrote: a delete file, a file outside the table.
    Foreign(String),
}

impl std::fmt::Display for ManifestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ManifestError::Unreadable(m) | ManifestError::Foreign(m) => f.write_str(m),
        }
    }
}

impl From<String> for ManifestError {
    fn from(m: String) -> Self {
        ManifestError::Unreadable(m)
    }
}

impl From<&str> for ManifestError {
    fn from(m: &str) -> Self {
        ManifestError::Unreadable(m.to_string())
    }
}

/// The entries of a manifest of files of spec `spec_id`, their paths made
/// relative to `location`. Refused: not Avro, an entry missing what a
/// reader needs ([`ManifestError::Unreadable`]); a delete file, a file
/// outside the table ([`ManifestError::Foreign`]).
pub fn read_manifest(bytes: &[u8], location: &str, spec_id: i32) -> Result<Vec<ManifestEntry>, ManifestError> {
    let reader = Reader::new(bytes).map_err(avro_error)?;
    let mut out = Vec::new();
    for row in reader {
        let row = row.map_err(avro_error)?;
        let r = record(&row).ok_or("an entry is not a record")?;
        let status = int(r, "status")
            .and_then(|s| Status::of(s as i32))
            .ok_or("an entry without a status")?;
        let f = get(r, "data_file").and_then(record).ok_or("an entry without data_file")?;
        if int(f, "content").unwrap_or(0) != 0 {
            return Err(ManifestError::Foreign("a delete file in a data manifest".into()));
        }
        let abs = string(f, "file_path").ok_or("a data file without file_path")?;
        let path = relative(&abs, location).map_err(ManifestError::Foreign)?;
        let partition = match get(f, "partition") {
            Some(Value::Record(fields)) => fields.iter().map(|(_, v)| partition_value(v)).collect::<Result<_, _>>()?,
            _ => Vec::new(),
        };
        let file = DataFile {
            path,
            spec_id,
            partition,
            record_count: int(f, "record_count").ok_or("a data file without record_count")?.max(0) as u64,
            file_size: int(f, "file_size_in_bytes").ok_or("a data file without file_size_in_bytes")?.max(0) as u64,
            column_sizes: int_map_of(f, "column_sizes", as_long),
            value_counts: int_map_of(f, "value_counts", as_long),
            null_value_counts: int_map_of(f, "null_value_counts", as_long),
            nan_value_counts: int_map_of(f, "nan_value_counts", as_long),
            lower_bounds: int_map_of(f, "lower_bounds", as_bytes),
            upper_bounds: int_map_of(f, "upper_bounds", as_bytes),
            split_offsets: match get(f, "split_offsets") {
                Some(Value::Array(items)) => items.iter().filter_map(as_long).collect(),
                _ => Vec::new(),
            },
            sort_order_id: int(f, "sort_order_id").map(|v| v as i32),
        };
        out.push(ManifestEntry {
            status,
            snapshot_id: int(r, "snapshot_id"),
            sequence_number: int(r, "sequence_number"),
            file_sequence_number: int(r, "file_sequence_number"),
            file,
        });
    }
    Ok(out)
}

/// `abs` (a file's location) relative to the table's `location`.
pub fn relative(abs: &str, location: &str) -> Result<String, String> {
    abs.strip_prefix(location)
        .and_then(|r| r.strip_prefix('/'))
        .map(String::from)
        .ok_or_else(|| format!("{abs} is not under the table's location {location}"))
}

fn partition_value(v: &Value) -> Result<PartitionValue, String> {
    Ok(match unwrap(v) {
        Value::Null => PartitionValue::Null,
        Value::Boolean(b) => PartitionValue::Boolean(*b),
        Value::Int(i) | Value::Date(i) => PartitionValue::Int(*i),
        Value::Long(l) | Value::TimestampMicros(l) | Value::LocalTimestampMicros(l) => PartitionValue::Long(*l),
        Value::String(s) => PartitionValue::String(s.clone()),
        Value::Bytes(b) | Value::Fixed(_, b) => PartitionValue::Binary(b.clone()),
        other => return Err(format!("a partition value of a type chainetl does not read: {other:?}")),
    })
}

fn unwrap(v: &Value) -> &Value {
    match v {
        Value::Union(_, inner) => unwrap(inner),
        v => v,
    }
}

fn record(v: &Value) -> Option<&[(String, Value)]> {
    match unwrap(v) {
        Value::Record(fields) => Some(fields),
        _ => None,
    }
}

/// Field `name` of record `r`, unless absent or null.
fn get<'a>(r: &'a [(String, Value)], name: &str) -> Option<&'a Value> {
    r.iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| unwrap(v))
        .filter(|v| !matches!(v, Value::Null))
}

fn as_long(v: &Value) -> Option<i64> {
    match unwrap(v) {
        Value::Int(i) => Some(i64::from(*i)),
        Value::Long(l) => Some(*l),
        _ => None,
    }
}

fn as_bytes(v: &Value) -> Option<Vec<u8>> {
    match unwrap(v) {
        Value::Bytes(b) | Value::Fixed(_, b) => Some(b.clone()),
        _ => None,
    }
}

fn int(r: &[(String, Value)], name: &str) -> Option<i64> {
    get(r, name).and_then(as_long)
}

fn string(r: &[(String, Value)], name: &str) -> Option<String> {
    match get(r, name)? {
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

fn boolean(r: &[(String, Value)], name: &str) -> Option<bool> {
    match get(r, name)? {
        Value::Boolean(b) => Some(*b),
        _ => None,
    }
}

/// An int-keyed map field, stored as an array of key/value records (or
/// as an Avro map with the keys as strings).
fn int_map_of<V>(r: &[(String, Value)], name: &str, f: impl Fn(&Value) -> Option<V>) -> BTreeMap<i32, V> {
    let mut out = BTreeMap::new();
    match get(r, name) {
        Some(Value::Array(items)) => {
            for item in items.iter().filter_map(record) {
                if let (Some(k), Some(v)) = (int(item, "key"), get(item, "value").and_then(&f)) {
                    out.insert(k as i32, v);
                }
            }
        }
        Some(Value::Map(m)) => {
            for (k, v) in m {
                if let (Ok(k), Some(v)) = (k.parse(), f(v)) {
                    out.insert(k, v);
                }
            }
        }
        _ => {}
    }
    out
}

fn list_schema() -> serde_json::Value {
    let summary = json!({
        "type": "record",
        "name": "r508",
        "fields": [
            {"name": "contains_null", "type": "boolean", "field-id": 509},
            optional("contains_nan", json!("boolean"), 518),
            optional("lower_bound", json!("bytes"), 510),
            optional("upper_bound", json!("bytes"), 511),
        ],
    });
    json!({
        "type": "record",
        "name": "manifest_file",
        "fields": [
            {"name": "manifest_path", "type": "string", "field-id": 500},
            {"name": "manifest_length", "type": "long", "field-id": 501},
            {"name": "partition_spec_id", "type": "int", "field-id": 502},
            {"name": "content", "type": "int", "field-id": 517},
            {"name": "sequence_number", "type": "long", "field-id": 515},
            {"name": "min_sequence_number", "type": "long", "field-id": 516},
            {"name": "added_snapshot_id", "type": "long", "field-id": 503},
            {"name": "added_files_count", "type": "int", "field-id": 504},
            {"name": "existing_files_count", "type": "int", "field-id": 505},
            {"name": "deleted_files_count", "type": "int", "field-id": 506},
            {"name": "added_rows_count", "type": "long", "field-id": 512},
            {"name": "existing_rows_count", "type": "long", "field-id": 513},
            {"name": "deleted_rows_count", "type": "long", "field-id": 514},
            optional("partitions", json!({"type": "array", "items": summary, "element-id": 508}), 507),
            optional("key_metadata", json!("bytes"), 519),
        ],
    })
}

/// The manifest list of snapshot `snapshot_id` (child of `parent`, at
/// sequence number `sequence_number`) holding `manifests`, as bytes.
pub fn write_manifest_list(
    snapshot_id: i64,
    parent: Option<i64>,
    sequence_number: i64,
    manifests: &[ManifestFile],
) -> Result<Vec<u8>, String> {
    let rows = manifests
        .iter()
        .map(|m| {
            let partitions = m
                .partitions
                .iter()
                .map(|s| {
                    Value::Record(vec![
                        ("contains_null".into(), Value::Boolean(s.contains_null)),
                        ("contains_nan".into(), opt(s.contains_nan, Value::Boolean)),
                        ("lower_bound".into(), opt(s.lower_bound.clone(), Value::Bytes)),
                        ("upper_bound".into(), opt(s.upper_bound.clone(), Value::Bytes)),
                    ])
                })
                .collect();
            Value::Record(vec![
                ("manifest_path".into(), Value::String(m.path.clone())),
                ("manifest_length".into(), Value::Long(m.length)),
                ("partition_spec_id".into(), Value::Int(m.spec_id)),
                ("content".into(), Value::Int(m.content)),
                ("sequence_number".into(), Value::Long(m.sequence_number)),
                ("min_sequence_number".into(), Value::Long(m.min_sequence_number)),
                ("added_snapshot_id".into(), Value::Long(m.added_snapshot_id)),
                ("added_files_count".into(), Value::Int(m.added_files)),
                ("existing_files_count".into(), Value::Int(m.existing_files)),
                ("deleted_files_count".into(), Value::Int(m.deleted_files)),
                ("added_rows_count".into(), Value::Long(m.added_rows)),
                ("existing_rows_count".into(), Value::Long(m.existing_rows)),
                ("deleted_rows_count".into(), Value::Long(m.deleted_rows)),
                ("partitions".into(), some(Value::Array(partitions))),
                ("key_metadata".into(), none()),
            ])
        })
        .collect();
    let meta = [
        ("snapshot-id", snapshot_id.to_string()),
        ("parent-snapshot-id", parent.map_or_else(|| "null".into(), |p| p.to_string())),
        ("sequence-number", sequence_number.to_string()),
        ("format-version", FORMAT_VERSION.to_string()),
    ];
    avro_file(&list_schema(), &meta, rows)
}

/// The manifests of a manifest list. Refused: not Avro, or a row missing
/// its path, length, spec or the snapshot that added it.
pub fn read_manifest_list(bytes: &[u8]) -> Result<Vec<ManifestFile>, String> {
    let reader = Reader::new(bytes).map_err(avro_error)?;
    let mut out = Vec::new();
    for row in reader {
        let row = row.map_err(avro_error)?;
        let r = record(&row).ok_or("a manifest list row is not a record")?;
        let count = |name: &str| int(r, name).unwrap_or(0);
        // A file count a writer left out is "assumed non-zero".
        let files = |name: &str| int(r, name).map_or(1, |n| n as i32);
        let partitions = match get(r, "partitions") {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(record)
                .map(|s| FieldSummary {
                    contains_null: boolean(s, "contains_null").unwrap_or(true),
                    contains_nan: boolean(s, "contains_nan"),
                    lower_bound: get(s, "lower_bound").and_then(as_bytes),
                    upper_bound: get(s, "upper_bound").and_then(as_bytes),
                })
                .collect(),
            _ => Vec::new(),
        };
        out.push(ManifestFile {
            path: string(r, "manifest_path").ok_or("a manifest without manifest_path")?,
            length: int(r, "manifest_length").ok_or("a manifest without manifest_length")?,
            spec_id: int(r, "partition_spec_id").ok_or("a manifest without partition_spec_id")? as i32,
            content: count("content") as i32,
            sequence_number: count("sequence_number"),
            min_sequence_number: count("min_sequence_number"),
            added_snapshot_id: int(r, "added_snapshot_id").ok_or("a manifest without added_snapshot_id")?,
            added_files: files("added_files_count"),
            existing_files: files("existing_files_count"),
            deleted_files: files("deleted_files_count"),
            added_rows: count("added_rows_count"),
            existing_rows: count("existing_rows_count"),
            deleted_rows: count("deleted_rows_count"),
            partitions,
        });
    }
    Ok(out)
}

/// The partition summaries of files `files` of a spec with `fields` fields.
pub fn summarize(fields: usize, files: &[&DataFile]) -> Vec<FieldSummary> {
    (0..fields)
        .map(|i| {
            let mut s = FieldSummary::default();
            let mut lo: Option<&PartitionValue> = None;
            let mut hi: Option<&PartitionValue> = None;
            for v in files.iter().filter_map(|f| f.partition.get(i)) {
                if *v == PartitionValue::Null {
                    s.contains_null = true;
                    continue;
                }
                lo = Some(lo.map_or(v, |l| l.min(v)));
                hi = Some(hi.map_or(v, |h| h.max(v)));
            }
            s.lower_bound = lo.and_then(PartitionValue::to_bytes);
            s.upper_bound = hi.and_then(PartitionValue::to_bytes);
            s
        })
        .collect()
}
