//! The parts, each alone: schemas and their ids, partition values,
//! metadata documents, manifests and manifest lists, a footer's metrics.

use super::*;
use crate::sink::format::iceberg::table::manifest::{self, FieldSummary, ManifestContext, ManifestEntry, ManifestFile, Status};
use crate::sink::format::iceberg::table::metadata::TableMetadata;
use crate::sink::format::iceberg::table::schema::{self, Primitive, SchemaError, Type};

#[test]
fn every_type_of_the_datasets_maps_and_ids_number_nested_fields_last() {
    let (s, last) = schema::from_arrow(&events_schema()).unwrap();
    let names: Vec<(i32, &str, String, bool)> = s
        .fields
        .iter()
        .map(|f| (f.id, f.name.as_str(), f.field_type.show(), f.required))
        .collect();
    assert_eq!(
        names,
        [
            (1, "chain", "string".to_string(), true),
            (2, "block_number", "long".into(), true),
            (3, "block_timestamp", "timestamptz".into(), true),
            (4, "transaction_hash", "string".into(), true),
            (5, "value", "decimal(38,0)".into(), false),
            (6, "day", "date".into(), false),
            (7, "removed", "boolean".into(), false),
            (8, "raw", "binary".into(), false),
            (9, "topics", "list<string>".into(), false),
        ]
    );
    let Type::List {
        element_id,
        element_required,
        ..
    } = &s.fields[8].field_type
    else {
        panic!("{:?}", s.fields[8]);
    };
    assert_eq!((*element_id, *element_required, last), (10, false, 10));
    // The JSON form, as the spec writes it, reads back the same.
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["fields"][4]["type"], "decimal(38,0)");
    assert_eq!(json["fields"][8]["type"]["element-id"], 10);
    assert_eq!(json["fields"][8]["type"]["element-required"], false);
    assert_eq!(json["type"], "struct");
    let back: schema::Schema = serde_json::from_value(json).unwrap();
    assert_eq!(back, s);
    // Blanks in parameters are read.
    assert_eq!(
        Primitive::parse("decimal(38, 0)"),
        Some(Primitive::Decimal { precision: 38, scale: 0 })
    );
    assert_eq!(Primitive::parse("fixed[32]"), Some(Primitive::Fixed(32)));
}

#[test]
fn types_without_an_iceberg_form_are_refused_by_column() {
    for (t, hint) in [
        (DataType::UInt64, "unsigned"),
        (DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())), "microseconds"),
        (DataType::Float16, ""),
    ] {
        let e = schema::from_arrow(&Schema::new(vec![Field::new("x", t.clone(), true)])).unwrap_err();
        assert!(matches!(&e, SchemaError::Unsupported { column, .. } if column == "x"), "{e}");
        assert!(e.to_string().contains(hint), "{e}");
    }
    let map = DataType::Map(
        Arc::new(Field::new(
            "entries",
            DataType::Struct(vec![Field::new("k", DataType::Utf8, false), Field::new("v", DataType::Utf8, true)].into()),
            false,
        )),
        false,
    );
    let e = schema::from_arrow(&Schema::new(vec![Field::new("m", map, true)])).unwrap_err();
    assert!(e.to_string().starts_with("column m:"), "{e}");
}

#[test]
fn a_new_column_joins_with_the_next_id_and_old_ones_keep_theirs() {
    let (s, last) = schema::from_arrow(&events_schema()).unwrap();
    assert!(schema::evolve(&s, last, &events_schema()).unwrap().is_none());
    let mut fields: Vec<Field> = events_schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.insert(2, Field::new("gas_used", DataType::Int64, false));
    let e = schema::evolve(&s, last, &Schema::new(fields)).unwrap().unwrap();
    assert_eq!(e.added, ["gas_used"]);
    assert_eq!(e.last_column_id, 11);
    assert_eq!(e.schema.schema_id, 1);
    let added = e.schema.field("gas_used").unwrap();
    // Appended, optional (files written before read null), id after the last.
    assert_eq!((added.id, added.required), (11, false));
    assert_eq!(e.schema.fields.last().unwrap().name, "gas_used");
    for f in &s.fields {
        assert_eq!(e.schema.field(&f.name).unwrap().id, f.id);
    }
}

#[test]
fn columns_never_change_type_nor_lose_what_the_table_requires() {
    let (s, last) = schema::from_arrow(&events_schema()).unwrap();
    let with = |name: &str, f: Option<Field>| {
        let fields: Vec<Field> = events_schema()
            .fields()
            .iter()
            .filter_map(|g| if g.name() == name { f.clone() } else { Some(g.as_ref().clone()) })
            .collect();
        Schema::new(fields)
    };
    let retyped = with("block_number", Some(Field::new("block_number", DataType::Utf8, false)));
    let e = schema::evolve(&s, last, &retyped).unwrap_err();
    assert_eq!(
        e.to_string(),
        "column block_number is long in the table; the writer has string (a type never changes)"
    );
    let nullable = with("block_number", Some(Field::new("block_number", DataType::Int64, true)));
    assert!(matches!(schema::evolve(&s, last, &nullable), Err(SchemaError::NowNullable { .. })));
    let missing = with("block_number", None);
    assert!(matches!(
        schema::evolve(&s, last, &missing),
        Err(SchemaError::MissingRequired { .. })
    ));
    // An optional column the writer lacks stays, read as null in its files.
    assert!(schema::evolve(&s, last, &with("raw", None)).unwrap().is_none());
    // A dictionary of strings is a string.
    let dict = with(
        "chain",
        Some(Field::new(
            "chain",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            false,
        )),
    );
    assert!(schema::evolve(&s, last, &dict).unwrap().is_none());
}

#[test]
fn arrow_fields_get_their_ids_for_the_parquet_writer_nested_too() {
    let (s, _) = schema::from_arrow(&events_schema()).unwrap();
    let file = Schema::new(events_schema().fields().iter().skip(1).cloned().collect::<Vec<_>>());
    let tagged = schema::with_field_ids(&file, &s).unwrap();
    let id = |f: &Field| f.metadata().get(schema::FIELD_ID_KEY).cloned();
    assert_eq!(id(tagged.field(0)).as_deref(), Some("2"));
    let DataType::List(element) = tagged.field_with_name("topics").unwrap().data_type() else {
        panic!()
    };
    assert_eq!(id(element).as_deref(), Some("10"));
    let stranger = Schema::new(vec![Field::new("nope", DataType::Int64, true)]);
    assert_eq!(
        schema::with_field_ids(&stranger, &s).unwrap_err(),
        SchemaError::Unknown { column: "nope".into() }
    );
    // A column of another type (hashes as bytes, the table's as text)
    // takes no id: the file is read by name once the table's column is
    // the new one.
    let retyped = Schema::new(vec![Field::new("transaction_hash", DataType::Binary, false)]);
    assert!(
        matches!(schema::with_field_ids(&retyped, &s), Err(SchemaError::TypeChanged { .. })),
        "{:?}",
        schema::with_field_ids(&retyped, &s)
    );
    let mapping = s.name_mapping();
    assert_eq!(mapping[0], serde_json::json!({"field-id": 1, "names": ["chain"]}));
    assert_eq!(mapping[8]["fields"][0]["field-id"], 10);
    assert_eq!(mapping[8]["fields"][0]["names"], serde_json::json!(["element", "item"]));
    // Over an older mapping, a name keeps the id files without ids were
    // adopted under (a column retyped or dropped since), and a new column
    // joins.
    let older = serde_json::json!([{"field-id": 1, "names": ["chain"]}, {"field-id": 40, "names": ["transaction_hash"]}, {"field-id": 41, "names": ["gone"]}]);
    let over = s.name_mapping_over(Some(&older.to_string()));
    let ids: Vec<(String, i64)> = over
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["names"][0].as_str().unwrap().to_string(), e["field-id"].as_i64().unwrap()))
        .collect();
    assert!(
        ids.contains(&("transaction_hash".into(), 40)) && ids.contains(&("gone".into(), 41)),
        "{ids:?}"
    );
    assert_eq!(ids.iter().filter(|(n, _)| n == "chain").count(), 1, "{ids:?}");
    assert_eq!(
        ids.len(),
        mapping.as_array().unwrap().len() + 1,
        "every column of the schema, and the dropped one: {ids:?}"
    );
}

#[test]
fn hive_keys_become_identity_on_chain_and_the_day_of_the_timestamp() {
    use crate::sink::format::iceberg::table::partition::keys_of_folders;
    let hive = ["chain".to_string(), "date".to_string()];
    assert_eq!(keys_of_folders(&hive, Some("block_timestamp")).unwrap(), keys());
    assert_eq!(
        keys_of_folders(&hive, Some("date")).unwrap(),
        [PartitionKey::identity("chain"), PartitionKey::identity("date")]
    );
    assert_eq!(keys_of_folders(&hive[..1], None).unwrap(), [PartitionKey::identity("chain")]);
    assert!(
        keys_of_folders(&hive, None)
            .unwrap_err()
            .contains("no column its day is taken from")
    );
}

#[test]
fn partition_values_come_from_the_hive_folders_typed_by_the_transform() {
    let (s, _) = schema::from_arrow(&events_schema()).unwrap();
    let spec = PartitionSpec::of_keys(0, &keys(), &s, 1000).unwrap();
    assert_eq!(spec.show(&s), "chain=identity(chain), date=day(block_timestamp)");
    assert_eq!(spec.fields[1].field_id, 1001);
    assert!(spec.is_of(&keys(), &s));
    assert!(!spec.is_of(&keys()[..1], &s));
    let v = spec.values_of_path(&s, "chain=base/date=2024-01-02/j-u-000001.parquet").unwrap();
    assert_eq!(v, [PartitionValue::String("base".into()), PartitionValue::Int(19724)]);
    let e = spec.values_of_path(&s, "chain=base/x.parquet").unwrap_err();
    assert!(e.contains("no date=… folder"), "{e}");
    let e = spec.values_of_path(&s, "chain=base/date=yesterday/x.parquet").unwrap_err();
    assert!(e.contains("date=yesterday is not a date"), "{e}");
    let escaped = spec
        .values_of_path(&s, "chain=a%2Fb/date=__HIVE_DEFAULT_PARTITION__/x.parquet")
        .unwrap();
    assert_eq!(escaped, [PartitionValue::String("a/b".into()), PartitionValue::Null]);
    let e = PartitionSpec::of_keys(0, &[PartitionKey::day("date", "chain")], &s, 1000).unwrap_err();
    assert!(e.contains("day transform takes a date or timestamp"), "{e}");
    let e = PartitionSpec::of_keys(0, &[PartitionKey::identity("nope")], &s, 1000).unwrap_err();
    assert!(e.contains("column nope is not in the table"), "{e}");
}

/// A version 2 document as Java writes it: -1 for no snapshot, fields
/// this reader does not know, no refs.
const JAVA_DOC: &str = r#"{
  "format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "s3://b/wh/t",
  "last-sequence-number": 0, "last-updated-ms": 1602638573590, "last-column-id": 1,
  "current-schema-id": 0, "schemas": [{"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "x", "required": true, "type": "long", "doc": "a column"}]}],
  "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "last-partition-id": 999,
  "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}],
  "properties": {"owner": "someone"}, "current-snapshot-id": -1, "snapshots": [],
  "snapshot-log": [], "metadata-log": [], "some-future-field": {"a": 1}
}"#;

#[test]
fn metadata_is_read_liberally_and_written_as_version_2_requires() {
    let m = TableMetadata::parse(JAVA_DOC.as_bytes()).unwrap();
    assert_eq!(m.current_snapshot_id, None);
    assert_eq!(m.schema().unwrap().fields[0].doc.as_deref(), Some("a column"));
    let written: serde_json::Value = serde_json::from_slice(&m.to_json()).unwrap();
    for key in [
        "format-version",
        "table-uuid",
        "location",
        "last-sequence-number",
        "last-updated-ms",
        "last-column-id",
        "schemas",
        "current-schema-id",
        "partition-specs",
        "default-spec-id",
        "last-partition-id",
        "sort-orders",
        "default-sort-order-id",
    ] {
        assert!(written.get(key).is_some(), "{key} missing");
    }
    assert_eq!(written["current-snapshot-id"], -1);
    assert!(written.get("some-future-field").is_none() && written.get("schema").is_none());
    assert_eq!(TableMetadata::parse(&m.to_json()).unwrap(), m);
    for (from, to) in [
        ("\"format-version\": 2", "\"format-version\": 1"),
        ("\"format-version\": 2", "\"format-version\": 3"),
    ] {
        let e = TableMetadata::parse(JAVA_DOC.replace(from, to).as_bytes()).unwrap_err();
        assert!(e.contains("reads and writes format version 2 only"), "{e}");
    }
    let e = TableMetadata::parse(JAVA_DOC.replace("\"current-schema-id\": 0", "\"current-schema-id\": 4").as_bytes()).unwrap_err();
    assert!(e.contains("names no schema"), "{e}");
    let e = TableMetadata::parse(JAVA_DOC.replace("\"last-column-id\": 1", "\"last-column-id\": \"x\"").as_bytes()).unwrap_err();
    assert!(e.starts_with("last-column-id"), "{e}");
}

fn data_file(path: &str, rows: u64, partition: Vec<PartitionValue>) -> DataFile {
    DataFile {
        path: path.into(),
        spec_id: 0,
        partition,
        record_count: rows,
        file_size: rows * 10,
        value_counts: [(2, rows as i64)].into(),
        null_value_counts: [(2, 0)].into(),
        lower_bounds: [(2, 1i64.to_le_bytes().to_vec())].into(),
        upper_bounds: [(2, (rows as i64).to_le_bytes().to_vec())].into(),
        split_offsets: vec![4],
        ..DataFile::default()
    }
}

#[test]
fn manifests_and_lists_read_back_what_was_written_with_the_spec_field_ids() {
    let (s, _) = schema::from_arrow(&events_schema()).unwrap();
    let spec = PartitionSpec::of_keys(0, &keys(), &s, 1000).unwrap();
    let ctx = ManifestContext {
        schema: &s,
        spec: &spec,
        location: "file:///out/events",
    };
    let base = vec![PartitionValue::String("base".into()), PartitionValue::Int(19724)];
    let entries = vec![
        ManifestEntry {
            status: Status::Added,
            snapshot_id: Some(7),
            sequence_number: None,
            file_sequence_number: None,
            file: data_file("chain=base/date=2024-01-02/a.parquet", 5, base.clone()),
        },
        ManifestEntry {
            status: Status::Existing,
            snapshot_id: Some(3),
            sequence_number: Some(1),
            file_sequence_number: Some(1),
            file: data_file(
                "chain=base/date=2024-01-02/b.parquet",
                9,
                vec![PartitionValue::Null, PartitionValue::Int(1)],
            ),
        },
    ];
    let bytes = manifest::write_manifest(&ctx, &entries).unwrap();
    assert_eq!(manifest::read_manifest(&bytes, "file:///out/events", 0).unwrap(), entries);
    // The header names every field id and the table's schema and spec.
    let reader = apache_avro::Reader::new(&bytes[..]).unwrap();
    let meta = reader.user_metadata();
    assert_eq!(meta["format-version"], b"2");
    assert_eq!(meta["content"], b"data");
    assert_eq!(meta["partition-spec-id"], b"0");
    let spec_json: serde_json::Value = serde_json::from_slice(&meta["partition-spec"]).unwrap();
    assert_eq!(spec_json[1]["transform"], "day");
    // (The header as written: the library's own rendering of the schema
    // leaves out the map logical type.)
    let header = String::from_utf8_lossy(&bytes[..bytes.len().min(8192)]).into_owned();
    for id in [
        "\"field-id\":134",
        "\"field-id\":1001",
        "\"element-id\":133",
        "\"field-id\":127",
        "\"logicalType\":\"map\"",
    ] {
        assert!(header.contains(id), "{id} not in {header}");
    }
    // A path outside the table is refused.
    let e = manifest::read_manifest(&bytes, "file:///elsewhere", 0).unwrap_err();
    assert!(
        matches!(&e, manifest::ManifestError::Foreign(m) if m.contains("not under the table's location")),
        "{e}"
    );

    let m = ManifestFile {
        path: "file:///out/events/metadata/x-m0.avro".into(),
        length: bytes.len() as i64,
        spec_id: 0,
        content: 0,
        sequence_number: 2,
        min_sequence_number: 1,
        added_snapshot_id: 7,
        added_files: 1,
        existing_files: 1,
        deleted_files: 0,
        added_rows: 5,
        existing_rows: 9,
        deleted_rows: 0,
        partitions: manifest::summarize(2, &entries.iter().map(|e| &e.file).collect::<Vec<_>>()),
    };
    assert_eq!(
        m.partitions[0],
        FieldSummary {
            contains_null: true,
            contains_nan: None,
            lower_bound: Some(b"base".to_vec()),
            upper_bound: Some(b"base".to_vec()),
        }
    );
    assert_eq!(m.partitions[1].lower_bound, Some(1i32.to_le_bytes().to_vec()));
    assert_eq!(m.partitions[1].upper_bound, Some(19724i32.to_le_bytes().to_vec()));
    let list = manifest::write_manifest_list(7, Some(3), 2, std::slice::from_ref(&m)).unwrap();
    assert_eq!(manifest::read_manifest_list(&list).unwrap(), [m]);
    let reader = apache_avro::Reader::new(&list[..]).unwrap();
    assert_eq!(reader.user_metadata()["parent-snapshot-id"], b"3");
    assert!(serde_json::to_string(reader.writer_schema()).unwrap().contains("\"field-id\":517"));
}

#[test]
fn a_footer_gives_counts_and_bounds_of_each_column_by_field_id() {
    let (s, _) = schema::from_arrow(&events_schema()).unwrap();
    let spec = PartitionSpec::of_keys(0, &keys(), &s, 1000).unwrap();
    let file_schema = Schema::new(events_schema().fields().iter().skip(1).cloned().collect::<Vec<_>>());
    let tagged = Arc::new(schema::with_field_ids(&file_schema, &s).unwrap());
    let long_hash = format!("0x{}", "ab".repeat(32));
    // Three row groups of two rows: the last has only nulls in `value`.
    let rows = [
        (0, long_hash.as_str(), Some(5)),
        (1, "0x01", Some(-7)),
        (2, "0x02", Some(1)),
        (3, "0x02", Some(2)),
        (4, "0x02", None),
        (5, "0x02", None),
    ];
    let bytes = parquet_of(tagged, &rows, 2);
    let footer = footer_of(&bytes);
    let f = DataFile::from_footer(&s, &spec, None, "chain=base/date=2024-01-02/x.parquet", bytes.len() as u64, &footer).unwrap();
    assert_eq!((f.record_count, f.file_size), (6, bytes.len() as u64));
    assert_eq!(f.partition[0], PartitionValue::String("base".into()));
    assert_eq!(f.value_counts[&2], 6);
    assert_eq!(f.null_value_counts[&5], 2);
    assert_eq!(f.lower_bounds[&2], 0i64.to_le_bytes());
    assert_eq!(f.upper_bounds[&2], 5i64.to_le_bytes());
    // Timestamps: microseconds, 8 bytes; dates: days, 4 bytes.
    assert_eq!(f.lower_bounds[&3], T0.to_le_bytes());
    assert_eq!(f.upper_bounds[&3], (T0 + 5).to_le_bytes());
    assert_eq!(f.lower_bounds[&6], 19724i32.to_le_bytes());
    // Decimals: the fewest big-endian bytes.
    assert_eq!(f.lower_bounds[&5], [0xf9]);
    assert_eq!(f.upper_bounds[&5], [0x05]);
    assert_eq!(f.lower_bounds[&7], [0]);
    assert_eq!(f.upper_bounds[&7], [1]);
    // Strings cut to 16 characters; the upper bound rounded up.
    assert_eq!(f.lower_bounds[&4], b"0x01");
    assert_eq!(f.upper_bounds[&4], b"0xababababababac");
    assert!(f.column_sizes[&2] > 0 && !f.lower_bounds.contains_key(&9));
    assert_eq!(f.split_offsets.len(), 3);
    assert!(f.split_offsets.windows(2).all(|w| w[0] < w[1]));
    // A file written without ids is matched by name.
    let plain = parquet_of(Arc::new(file_schema), &[(0, "0x01", Some(1))], 10);
    let g = DataFile::from_footer(&s, &spec, None, "chain=base/date=2024-01-02/y.parquet", 1, &footer_of(&plain)).unwrap();
    assert_eq!(g.upper_bounds[&2], 0i64.to_le_bytes());
}

/// A table declares its natural key as its sort order, and a file whose
/// footer says its rows are sorted by it is listed as of that order; an
/// unsorted file, or one sorted otherwise, is not.
#[test]
fn a_table_declares_the_order_its_files_are_sorted_in() {
    use parquet::file::metadata::{RowGroupMetaData, SortingColumn};
    let dir = tempfile::tempdir().unwrap();
    let st = storage(dir.path());
    let drafted = Table::new(&st, "events")
        .draft(&events_schema(), &keys(), &BTreeMap::new())
        .unwrap();
    let m = &drafted.metadata;
    let (order, ids) = m.write_order().expect("an order of the key");
    assert_eq!((order.order_id, m.default_sort_order_id), (1, 1));
    assert_eq!(ids, vec![m.schema().unwrap().field("block_number").unwrap().id]);
    let spec = drafted.spec();
    let file_schema = Schema::new(events_schema().fields().iter().skip(1).cloned().collect::<Vec<_>>());
    let bytes = parquet_of(Arc::new(file_schema), &[(0, "0x01", Some(1)), (1, "0x02", Some(2))], 1);
    let plain = footer_of(&bytes);
    let sorted_by = |column_idx: i32, descending: bool| {
        let groups: Vec<RowGroupMetaData> = plain
            .row_groups()
            .iter()
            .map(|g| {
                g.clone()
                    .into_builder()
                    .set_sorting_columns(Some(vec![SortingColumn {
                        column_idx,
                        descending,
                        nulls_first: true,
                    }]))
                    .build()
                    .unwrap()
            })
            .collect();
        ParquetMetaData::new(plain.file_metadata().clone(), groups)
    };
    let path = "chain=base/date=2024-01-02/x.parquet";
    let order = Some((1, ids.as_slice()));
    let of = |footer: &ParquetMetaData| {
        DataFile::from_footer(m.schema().unwrap(), spec, order, path, 1, footer)
            .unwrap()
            .sort_order_id
    };
    assert_eq!(of(&sorted_by(0, false)), Some(1), "block_number is the file's first column");
    assert_eq!(of(&plain), None, "no order declared");
    assert_eq!(of(&sorted_by(1, false)), None, "sorted by another column");
    assert_eq!(of(&sorted_by(0, true)), None, "descending");
    // A column of the order the file lacks (an identity partition's,
    // one value in the file) takes no place in the file's order.
    let chain = m.schema().unwrap().field("chain").unwrap().id;
    let with_chain = [chain, ids[0]];
    let f = DataFile::from_footer(m.schema().unwrap(), spec, Some((1, &with_chain)), path, 1, &sorted_by(0, false)).unwrap();
    assert_eq!(f.sort_order_id, Some(1));
    // A table of another order keeps it.
    let mut other = m.clone();
    other.sort_orders.push(SortOrder::ascending(7, &[ids[0] + 1]));
    other.default_sort_order_id = 7;
    other.declare_key_order();
    assert_eq!((other.default_sort_order_id, other.sort_orders.len()), (7, 3));
}

/// A table made for files an earlier Iceberg table wrote takes the ids
/// they carry (a list's element id too); a column they lack takes an id
/// after every carried one; ids that collide, or a list's element id on
/// a column that is none, are no numbering.
#[test]
fn a_new_tables_ids_are_the_ones_adopted_files_carry() {
    let (fresh, _) = schema::from_arrow(&events_schema()).unwrap();
    let tagged = |f: Field, id: i32| {
        f.with_metadata(std::collections::HashMap::from([(
            schema::FIELD_ID_KEY.to_string(),
            id.to_string(),
        )]))
    };
    let item = tagged(Field::new("element", DataType::Utf8, true), 31);
    let file = Schema::new(vec![
        tagged(Field::new("block_number", DataType::Int64, false), 20),
        tagged(Field::new("topics", DataType::List(Arc::new(item)), true), 30),
    ]);
    let carried = schema::carried_ids(&file);
    assert_eq!(carried.get("topics"), Some(&(30, Some(31))));
    let (s, last) = schema::renumbered(&fresh, &carried).unwrap();
    let id = |name: &str| s.field(name).unwrap().id;
    assert_eq!((id("block_number"), id("topics")), (20, 30));
    match &s.field("topics").unwrap().field_type {
        Type::List { element_id, .. } => assert_eq!(*element_id, 31),
        other => panic!("{other:?}"),
    }
    // Every other column after the carried ones, no id twice.
    assert!(s.fields.iter().filter(|f| !carried.contains_key(&f.name)).all(|f| f.id > 31));
    let mut ids: Vec<i32> = s.fields.iter().map(|f| f.id).chain([31]).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), s.fields.len() + 1);
    assert_eq!(last, *ids.last().unwrap());
    assert!(s.name_mapping().to_string().contains("\"field-id\":20"));
    // Files that give two columns one id: no numbering.
    let clash = schema::FieldIds::from([("block_number".to_string(), (5, None)), ("removed".to_string(), (5, None))]);
    assert!(schema::renumbered(&fresh, &clash).is_none());
    // An element id on a column that is no list: no numbering.
    let odd = schema::FieldIds::from([("block_number".to_string(), (5, Some(6)))]);
    assert!(schema::renumbered(&fresh, &odd).is_none());
    // Files carrying no id of the table's columns: nothing to carry.
    assert!(schema::renumbered(&fresh, &schema::FieldIds::from([("other".to_string(), (1, None))])).is_none());
}
