//! The actions chainetl writes itself: a table's first commit, the
//! commit that replaces a table's layout, and the `add` rows (with
//! statistics) of files `sink` wrote.

use super::{AddFile, ENGINE_INFO, LiveFile};
use arrow_array::builder::{MapBuilder, MapFieldNames, StringBuilder};
use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Schema};
use std::sync::Arc;

/// `schema`'s columns and their Delta types, as [`Layout::columns`].
pub fn delta_columns(schema: &Schema) -> Result<Vec<(String, serde_json::Value)>, String> {
    schema
        .fields()
        .iter()
        .map(|f| Ok((f.name().clone(), delta_type(f.data_type())?)))
        .collect()
}

/// Column `f` in Delta's JSON form (nullable, as `nullable` says).
pub fn delta_field(f: &arrow_schema::Field, nullable: bool) -> Result<serde_json::Value, String> {
    Ok(serde_json::json!({"name": f.name(), "type": delta_type(f.data_type())?, "nullable": nullable, "metadata": {}}))
}

/// The table's first commit: protocol and metadata, one JSON action a line.
pub(super) fn first_commit(schema: &Schema, partition_columns: &[String], checkpoint_interval: u64) -> Result<String, String> {
    let schema_string = schema_string(schema, partition_columns)?;
    let now = chrono::Utc::now().timestamp_millis();
    let protocol = serde_json::json!({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}});
    let metadata = serde_json::json!({"metaData": {
        "id": table_id(),
        "format": {"provider": "parquet", "options": {}},
        "schemaString": schema_string,
        "partitionColumns": partition_columns,
        "configuration": {"delta.checkpointInterval": checkpoint_interval.to_string()},
        "createdTime": now,
    }});
    let info = serde_json::json!({"commitInfo": {"timestamp": now, "operation": "CREATE TABLE", "engineInfo": ENGINE_INFO}});
    Ok(format!("{info}\n{protocol}\n{metadata}\n"))
}

/// `metaData.schemaString` of a table of `schema` partitioned by
/// `partitions` (each must be a column).
fn schema_string(schema: &Schema, partitions: &[String]) -> Result<String, String> {
    let fields: Vec<serde_json::Value> = schema
        .fields()
        .iter()
        .map(|f| delta_field(f, f.is_nullable()))
        .collect::<Result<_, String>>()?;
    for p in partitions {
        if schema.field_with_name(p).is_err() {
            return Err(format!("partition column {p} is not a column of the table"));
        }
    }
    Ok(serde_json::json!({"type": "struct", "fields": fields}).to_string())
}

/// The commit that replaces a table's layout (see
/// [`super::Table::replace`]), one JSON action a line: `commitInfo` (a
/// `WRITE` in mode `Overwrite`, as Spark writes `overwriteSchema`), the
/// transaction ids `txns`, `metaData` — `current` (the table's, whose id,
/// configuration and creation time stay) with `schema` and `partitions` —,
/// a `remove` of each of `removes` and an `add` of each of `adds`; every
/// file action a data change.
pub(super) fn replace_commit(
    current: serde_json::Value,
    schema: &Schema,
    partitions: &[String],
    removes: &[LiveFile],
    adds: &[AddFile],
    txns: &[(String, i64)],
) -> Result<String, String> {
    let mut metadata = current;
    if !metadata.is_object() {
        return Err("the table's metadata is not an object".into());
    }
    metadata["schemaString"] = schema_string(schema, partitions)?.into();
    metadata["partitionColumns"] = serde_json::json!(partitions);
    let now = chrono::Utc::now().timestamp_millis();
    let mut lines = vec![serde_json::json!({"commitInfo": {
        "timestamp": now,
        "operation": "WRITE",
        "operationParameters": {"mode": "Overwrite", "partitionBy": serde_json::json!(partitions).to_string()},
        "isBlindAppend": false,
        "engineInfo": ENGINE_INFO,
    }})];
    for (app, version) in txns {
        lines.push(serde_json::json!({"txn": {"appId": app, "version": version, "lastUpdated": now}}));
    }
    lines.push(serde_json::json!({ "metaData": metadata }));
    for f in removes {
        let values: serde_json::Map<String, serde_json::Value> =
            partition_values(&f.path).into_iter().map(|(k, v)| (k, v.into())).collect();
        lines.push(serde_json::json!({"remove": {
            "path": f.path,
            "deletionTimestamp": now,
            "dataChange": true,
            "extendedFileMetadata": true,
            "partitionValues": values,
            "size": f.size,
        }}));
    }
    for (f, stats) in adds.iter().zip(stats_json(adds)?) {
        let values: serde_json::Map<String, serde_json::Value> =
            f.partition_values.iter().map(|(k, v)| (k.clone(), v.clone().into())).collect();
        lines.push(serde_json::json!({"add": {
            "path": f.path,
            "partitionValues": values,
            "size": f.size,
            "modificationTime": f.modification_time,
            "dataChange": true,
            "stats": stats,
        }}));
    }
    let mut doc = String::new();
    for l in lines {
        doc.push_str(&l.to_string());
        doc.push('\n');
    }
    Ok(doc)
}

/// Each file's `stats` as the JSON text an `add` action carries, encoded
/// as the kernel encodes the statistics of the adds it commits (absent
/// values left out, timestamps `%Y-%m-%dT%H:%M:%S%.3fZ`).
fn stats_json(files: &[AddFile]) -> Result<Vec<String>, String> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let batch = RecordBatch::from(stats_array(files)?);
    let mut writer = arrow_json::WriterBuilder::new()
        .with_timestamp_format("%Y-%m-%dT%H:%M:%S%.3f".into())
        .with_timestamp_tz_format("%Y-%m-%dT%H:%M:%S%.3fZ".into())
        .build::<_, arrow_json::writer::LineDelimited>(Vec::new());
    writer.write(&batch).map_err(|e| format!("statistics: {e}"))?;
    writer.finish().map_err(|e| format!("statistics: {e}"))?;
    let text = String::from_utf8(writer.into_inner()).map_err(|e| format!("statistics: {e}"))?;
    let out: Vec<String> = text.lines().map(String::from).collect();
    if out.len() != files.len() {
        return Err(format!("statistics: {} lines for {} files", out.len(), files.len()));
    }
    Ok(out)
}

/// The partition values a file's path names (its hive `key=value`
/// folders, in order).
pub fn partition_values(path: &str) -> Vec<(String, String)> {
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    parts
        .into_iter()
        .filter_map(|d| d.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A random (version 4) UUID for the table's metadata.
fn table_id() -> String {
    let mut b = [0u8; 16];
    for chunk in b.chunks_mut(8) {
        chunk.copy_from_slice(&fastrand::u64(..).to_le_bytes());
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

/// Delta's name of an Arrow type.
fn delta_type(t: &DataType) -> Result<serde_json::Value, String> {
    Ok(match t {
        DataType::Utf8 => "string".into(),
        DataType::Binary => "binary".into(),
        DataType::Boolean => "boolean".into(),
        DataType::Int32 => "integer".into(),
        DataType::Int64 => "long".into(),
        DataType::Float64 => "double".into(),
        DataType::Date32 => "date".into(),
        DataType::Decimal128(p, s) => format!("decimal({p},{s})").into(),
        DataType::Timestamp(_, Some(_)) => "timestamp".into(),
        DataType::Dictionary(_, v) => delta_type(v)?,
        DataType::List(f) => {
            serde_json::json!({"type": "array", "elementType": delta_type(f.data_type())?, "containsNull": f.is_nullable()})
        }
        other => return Err(format!("no Delta type for {other}")),
    })
}

/// The add actions' metadata for `files`, in the kernel's add-files shape.
pub(super) fn add_batch(files: &[AddFile]) -> Result<RecordBatch, String> {
    let path: ArrayRef = Arc::new(StringArray::from_iter_values(files.iter().map(|f| f.path.as_str())));
    let names = MapFieldNames {
        entry: "key_value".into(),
        key: "key".into(),
        value: "value".into(),
    };
    let mut pv = MapBuilder::new(Some(names), StringBuilder::new(), StringBuilder::new());
    for f in files {
        for (k, v) in &f.partition_values {
            pv.keys().append_value(k);
            pv.values().append_value(v);
        }
        pv.append(true).map_err(|e| e.to_string())?;
    }
    let pv: ArrayRef = Arc::new(pv.finish());
    let size: ArrayRef = Arc::new(Int64Array::from_iter_values(files.iter().map(|f| f.size as i64)));
    let time: ArrayRef = Arc::new(Int64Array::from_iter_values(files.iter().map(|f| f.modification_time)));
    let stats = stats_array(files)?;
    let kv = DataType::Struct(vec![Field::new("key", DataType::Utf8, false), Field::new("value", DataType::Utf8, true)].into());
    let schema = Schema::new(vec![
        Field::new("path", DataType::Utf8, false),
        Field::new(
            "partitionValues",
            DataType::Map(Arc::new(Field::new("key_value", kv, false)), false),
            false,
        ),
        Field::new("size", DataType::Int64, false),
        Field::new("modificationTime", DataType::Int64, false),
        Field::new("stats", stats.data_type().clone(), true),
    ]);
    RecordBatch::try_new(Arc::new(schema), vec![path, pv, size, time, Arc::new(stats)]).map_err(|e| e.to_string())
}

/// `stats` of the add actions: numRecords, nullCount, minValues,
/// maxValues and tightBounds. The columns are every column any file has
/// statistics of; a file without them for a column (no bounds: every value
/// null, or a row group without statistics) has nulls there, which readers
/// take as "unknown" and never skip on.
fn stats_array(files: &[AddFile]) -> Result<StructArray, String> {
    let records: ArrayRef = Arc::new(Int64Array::from_iter_values(files.iter().map(|f| f.rows as i64)));
    let mut columns: Vec<(&str, DataType)> = Vec::new();
    for c in files.iter().flat_map(|f| &f.stats) {
        match columns.iter().find(|(n, _)| *n == c.name) {
            Some((_, t)) if t != c.min.data_type() || t != c.max.data_type() => {
                return Err(format!("statistics of {} of two types: {t} and {}", c.name, c.min.data_type()));
            }
            Some(_) => {}
            None => columns.push((c.name.as_str(), c.min.data_type().clone())),
        }
    }
    let mut nulls = Vec::new();
    let mut mins = Vec::new();
    let mut maxes = Vec::new();
    for (name, t) in &columns {
        let of = |f: &'_ AddFile| f.stats.iter().find(|c| c.name == *name).cloned();
        nulls.push((
            Arc::new(Field::new(*name, DataType::Int64, true)),
            Arc::new(Int64Array::from_iter(files.iter().map(|f| of(f).map(|c| c.nulls as i64)))) as ArrayRef,
        ));
        let unknown = arrow_array::new_null_array(t, 1);
        for (out, pick) in [(&mut mins, true), (&mut maxes, false)] {
            let parts: Vec<ArrayRef> = files
                .iter()
                .map(|f| match of(f) {
                    Some(c) if pick => c.min,
                    Some(c) => c.max,
                    None => unknown.clone(),
                })
                .collect();
            let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
            let values = arrow_select::concat::concat(&refs).map_err(|e| format!("statistics of {name}: {e}"))?;
            out.push((Arc::new(Field::new(*name, values.data_type().clone(), true)), values));
        }
    }
    let group = |cols: Vec<(Arc<Field>, ArrayRef)>| -> ArrayRef {
        if cols.is_empty() {
            Arc::new(StructArray::new_empty_fields(files.len(), None))
        } else {
            Arc::new(StructArray::from(cols))
        }
    };
    let parts: Vec<(Arc<Field>, ArrayRef)> = vec![
        (Arc::new(Field::new("numRecords", DataType::Int64, true)), records),
        (field_of("nullCount", &group(nulls.clone())), group(nulls)),
        (field_of("minValues", &group(mins.clone())), group(mins)),
        (field_of("maxValues", &group(maxes.clone())), group(maxes)),
        (
            Arc::new(Field::new("tightBounds", DataType::Boolean, true)),
            Arc::new(BooleanArray::from(vec![true; files.len()])) as ArrayRef,
        ),
    ];
    Ok(StructArray::from(parts))
}

fn field_of(name: &str, a: &ArrayRef) -> Arc<Field> {
    Arc::new(Field::new(name, a.data_type().clone(), true))
}
