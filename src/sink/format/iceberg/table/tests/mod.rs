//! Tables made, changed, read back and expired on local disk.

use super::*;
use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::file::metadata::ParquetMetaData;
use std::collections::BTreeSet;

mod catalog;
mod parts;

/// 2024-01-02T00:00:00Z in microseconds (day 19724).
const T0: i64 = 19_724 * 86_400 * 1_000_000;

/// An events-like table: every type the datasets use.
fn events_schema() -> Schema {
    Schema::new(vec![
        Field::new("chain", DataType::Utf8, false),
        Field::new("block_number", DataType::Int64, false),
        Field::new(
            "block_timestamp",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("transaction_hash", DataType::Utf8, false),
        Field::new("value", DataType::Decimal128(38, 0), true),
        Field::new("day", DataType::Date32, true),
        Field::new("removed", DataType::Boolean, true),
        Field::new("raw", DataType::Binary, true),
        Field::new("topics", DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))), true),
    ])
}

/// `chain` as is, `date` the day of `block_timestamp`.
fn keys() -> Vec<PartitionKey> {
    vec![PartitionKey::identity("chain"), PartitionKey::day("date", "block_timestamp")]
}

/// A Parquet file of `schema`'s columns (those of [`events_schema`] it
/// has) holding `rows` (block number, hash, value), `group` rows a row group.
fn parquet_of(schema: SchemaRef, rows: &[(i64, &str, Option<i128>)], group: usize) -> Vec<u8> {
    let columns: Vec<ArrayRef> = schema
        .fields()
        .iter()
        .map(|f| -> ArrayRef {
            match f.name().as_str() {
                "chain" => Arc::new(StringArray::from_iter_values(rows.iter().map(|_| "base"))),
                "block_number" => Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
                "block_timestamp" => {
                    Arc::new(TimestampMicrosecondArray::from_iter_values(rows.iter().map(|r| T0 + r.0)).with_timezone("UTC"))
                }
                "transaction_hash" => Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))),
                "value" => Arc::new(
                    Decimal128Array::from_iter(rows.iter().map(|r| r.2))
                        .with_precision_and_scale(38, 0)
                        .unwrap(),
                ),
                "day" => Arc::new(Date32Array::from_iter_values(rows.iter().map(|_| 19_724))),
                "removed" => Arc::new(BooleanArray::from_iter(rows.iter().map(|r| Some(r.0 % 2 == 1)))),
                "raw" => Arc::new(BinaryArray::from_iter_values(rows.iter().map(|r| r.0.to_le_bytes()))),
                "topics" => {
                    let mut b = ListBuilder::new(StringBuilder::new()).with_field(match f.data_type() {
                        DataType::List(e) => e.clone(),
                        _ => unreachable!(),
                    });
                    for r in rows {
                        b.values().append_value(r.1);
                        b.append(true);
                    }
                    Arc::new(b.finish())
                }
                other => panic!("no column {other}"),
            }
        })
        .collect();
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(group))
        .build();
    let mut bytes = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut bytes, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    bytes
}

fn footer_of(bytes: &[u8]) -> ParquetMetaData {
    parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&bytes::Bytes::copy_from_slice(bytes))
        .unwrap()
}

/// An output on local disk at `dir`.
fn storage(dir: &std::path::Path) -> Storage {
    let text = format!(
        "name = \"t\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"{}\"\n[[export]]\ndataset = \"blocks\"\n\
         chains = [\"base\"]\nwindow = \"100..199\"\n",
        dir.display()
    );
    let spec = crate::spec::Spec::parse("t.toml", &text).unwrap();
    Storage::open(&spec.output).unwrap()
}

/// Writes a file of `rows` rows (block numbers from `first`) at `path`
/// of table `events`, with the table's field ids; its entry.
async fn put_file(storage: &Storage, current: &Current, path: &str, first: i64, rows: i64) -> DataFile {
    let file_columns = Schema::new(events_schema().fields().iter().skip(1).cloned().collect::<Vec<_>>());
    let tagged = schema::with_field_ids(&file_columns, current.schema()).unwrap();
    let hashes: Vec<String> = (first..first + rows).map(|n| format!("0x{n:04x}")).collect();
    let data: Vec<(i64, &str, Option<i128>)> = hashes
        .iter()
        .enumerate()
        .map(|(i, h)| (first + i as i64, h.as_str(), Some(1)))
        .collect();
    let bytes = parquet_of(Arc::new(tagged), &data, 1000);
    let size = bytes.len() as u64;
    let footer = footer_of(&bytes);
    storage.put_atomic(&format!("events/{path}"), bytes).await.unwrap();
    DataFile::from_footer(current.schema(), current.spec(), None, path, size, &footer).unwrap()
}

fn part(files: Vec<DataFile>, app: &str, v: i64) -> Part {
    Part {
        files,
        txn: Some((app.into(), v)),
    }
}

fn append(parts: Vec<Part>) -> Change {
    Change {
        parts,
        ..Change::default()
    }
}

async fn made(storage: &Storage) -> (Table, Arc<Current>) {
    let t = Table::new(storage, "events");
    let (created, c) = t
        .create_if_absent(storage, &events_schema(), &keys(), &BTreeMap::new())
        .await
        .unwrap();
    assert!(created);
    (t, c)
}

fn committed(a: Attempt) -> Arc<Current> {
    match a {
        Attempt::Committed(c) => c,
        other => panic!("not committed: {other:?}"),
    }
}

fn paths(files: &[DataFile]) -> Vec<String> {
    let mut p: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
    p.sort();
    p
}

#[tokio::test]
async fn a_table_is_found_by_its_hint_by_a_listing_or_by_stepping_past_a_stale_hint() {
    let dir = tempfile::tempdir().unwrap();
    let s = storage(dir.path());
    let (t, v1) = made(&s).await;
    assert_eq!(v1.version, 1);
    assert!(
        t.location().starts_with("file:///") && t.location().ends_with("/events"),
        "{}",
        t.location()
    );
    let hint = || std::fs::read_to_string(dir.path().join("events/metadata/version-hint.text")).unwrap();
    assert_eq!(hint(), "1");
    let (again, same) = Table::new(&s, "events")
        .create_if_absent(&s, &events_schema(), &keys(), &BTreeMap::new())
        .await
        .unwrap();
    assert!(!again);
    assert_eq!(same.metadata.table_uuid, v1.metadata.table_uuid);
    let f = put_file(&s, &v1, "chain=base/date=2024-01-02/a.parquet", 0, 3).await;
    let v2 = committed(t.commit(&s, &append(vec![part(vec![f], "a", 1)]), 3).await.unwrap());
    assert_eq!((v2.version, hint()), (2, "2".to_string()));
    let fresh = || async { Table::new(&s, "events").load(&s).await.unwrap().unwrap().version };
    std::fs::write(dir.path().join("events/metadata/version-hint.text"), "1").unwrap();
    assert_eq!(fresh().await, 2, "a stale hint is stepped past");
    std::fs::write(dir.path().join("events/metadata/version-hint.text"), "garbage").unwrap();
    assert_eq!(fresh().await, 2, "an unreadable hint: the listing");
    std::fs::remove_file(dir.path().join("events/metadata/version-hint.text")).unwrap();
    assert_eq!(fresh().await, 2, "no hint: the listing");
    assert!(Table::new(&s, "blocks").load(&s).await.unwrap().is_none());
}

#[tokio::test]
async fn appends_then_a_replace_keep_each_file_once_and_record_their_units() {
    let dir = tempfile::tempdir().unwrap();
    let s = storage(dir.path());
    let (t, c) = made(&s).await;
    let a = put_file(&s, &c, "chain=base/date=2024-01-02/a.parquet", 0, 3).await;
    let b = put_file(&s, &c, "chain=base/date=2024-01-03/b.parquet", 3, 2).await;
    let x = put_file(&s, &c, "chain=eth/date=2024-01-02/x.parquet", 5, 4).await;
    let c2 = committed(
        t.commit(&s, &append(vec![part(vec![a.clone(), b.clone()], "unit-1", 7)]), 3)
            .await
            .unwrap(),
    );
    assert_eq!(c2.snapshot().unwrap().sequence_number, 1);
    let c3 = committed(t.commit(&s, &append(vec![part(vec![x.clone()], "unit-2", 2)]), 3).await.unwrap());
    let first = c3.metadata.snapshots[0].clone();
    assert_eq!(first.operation(), "append");
    assert_eq!((first.count("added-records"), first.count("total-records")), (Some(5), Some(5)));
    assert_eq!(c3.snapshot().unwrap().count("total-data-files"), Some(3));
    assert_eq!(c3.snapshot().unwrap().parent_snapshot_id, Some(first.snapshot_id));
    assert_eq!(c3.snapshot().unwrap().sequence_number, 2);
    assert_eq!((c3.recorded_version("unit-1"), c3.recorded_version("unit-2")), (Some(7), Some(2)));
    assert_eq!(Current::txns(&first), [("unit-1".to_string(), 7)]);
    assert_eq!(c3.recorded_version("unit-3"), None);
    let live = t.live_files(&s, &c3).await.unwrap();
    assert_eq!(paths(&live), paths(&[a.clone(), b.clone(), x.clone()]));
    assert_eq!(live.iter().find(|f| f.path == a.path).unwrap(), &a, "an entry reads back whole");

    // Compaction: a and b into ab, one snapshot, the same rows.
    let ab = put_file(&s, &c3, "chain=base/date=2024-01-02/ab.parquet", 0, 5).await;
    let swap = Change {
        parts: vec![part(vec![ab.clone()], "compact", 1)],
        removes: vec![a.path.clone(), b.path.clone()],
        rearranges: true,
        ..Change::default()
    };
    let c4 = committed(t.commit(&s, &swap, 3).await.unwrap());
    let snap = c4.snapshot().unwrap();
    assert_eq!(snap.operation(), "replace");
    assert_eq!(
        (snap.count("deleted-data-files"), snap.count("deleted-records")),
        (Some(2), Some(5))
    );
    assert_eq!((snap.count("total-data-files"), snap.count("total-records")), (Some(2), Some(9)));
    assert_eq!(paths(&t.live_files(&s, &c4).await.unwrap()), paths(&[ab, x.clone()]));
    // The snapshot before still reads the files it had.
    let before = c4.metadata.snapshot(c3.snapshot().unwrap().snapshot_id).unwrap();
    assert_eq!(paths(&t.snapshot_files(&s, &c4, before).await.unwrap()).len(), 3);
    // A removal of a file the table does not have is refused by name.
    let gone = Change {
        removes: vec![a.path.clone()],
        ..Change::default()
    };
    let e = t.commit(&s, &gone, 3).await.unwrap_err().to_string();
    assert!(
        e.contains("cannot remove chain=base/date=2024-01-02/a.parquet: not in the table's snapshot"),
        "{e}"
    );
    // An overwrite (a repair) and a delete name themselves.
    let y = put_file(&s, &c4, "chain=eth/date=2024-01-02/y.parquet", 5, 4).await;
    let repair = Change {
        parts: vec![Part { files: vec![y], txn: None }],
        removes: vec![x.path.clone()],
        ..Change::default()
    };
    assert_eq!(
        committed(t.commit(&s, &repair, 3).await.unwrap()).snapshot().unwrap().operation(),
        "overwrite"
    );
    let delete = Change {
        removes: vec!["chain=eth/date=2024-01-02/y.parquet".into()],
        ..Change::default()
    };
    let c6 = committed(t.commit(&s, &delete, 3).await.unwrap());
    assert_eq!(c6.snapshot().unwrap().operation(), "delete");
    assert_eq!(c6.snapshot().unwrap().count("total-records"), Some(5));
}

#[tokio::test]
async fn a_part_the_table_records_is_not_added_again_and_summaries_carry_custom_keys() {
    let dir = tempfile::tempdir().unwrap();
    let s = storage(dir.path());
    let (t, c) = made(&s).await;
    let a = put_file(&s, &c, "chain=base/date=2024-01-02/a.parquet", 0, 3).await;
    let mut change = append(vec![part(vec![a.clone()], "unit-1", 3)]);
    change.summary.insert("chainetl.job".into(), "j".into());
    change.summary.insert("operation".into(), "mine".into());
    let c2 = committed(t.commit(&s, &change, 3).await.unwrap());
    assert_eq!(c2.snapshot().unwrap().summary["chainetl.job"], "j");
    assert_eq!(c2.snapshot().unwrap().operation(), "append", "the standard keys win");
    // Published again after a crash: found in the summary, not added.
    change.may_be_in = true;
    match t.commit(&s, &change, 3).await.unwrap() {
        Attempt::AlreadyIn(c) => assert_eq!(c.version, 2),
        other => panic!("{other:?}"),
    }
    // A removal that went with the part is taken as made.
    change.removes = vec!["chain=base/date=2024-01-02/gone.parquet".into()];
    assert!(matches!(t.commit(&s, &change, 3).await.unwrap(), Attempt::AlreadyIn(_)));
    let avro = |dir: &std::path::Path| {
        std::fs::read_dir(dir.join("events/metadata"))
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".avro"))
            .count()
    };
    let before = avro(dir.path());
    // A stale base is a conflict for a caller's own retries; what the
    // attempt wrote is deleted.
    let stale = t.load(&s).await.unwrap().unwrap();
    let b = put_file(&s, &stale, "chain=base/date=2024-01-02/b.parquet", 3, 1).await;
    let other = Table::new(&s, "events");
    committed(
        other
            .commit(&s, &append(vec![part(vec![b.clone()], "unit-2", 1)]), 3)
            .await
            .unwrap(),
    );
    let after_other = avro(dir.path());
    let c = put_file(&s, &stale, "chain=base/date=2024-01-02/c.parquet", 4, 1).await;
    assert!(matches!(
        t.try_commit(&s, &stale, &append(vec![part(vec![c.clone()], "unit-3", 1)]))
            .await
            .unwrap(),
        Attempt::Conflict
    ));
    assert_eq!(avro(dir.path()), after_other);
    assert!(after_other > before);
    // The same change through commit() reloads and lands.
    let c4 = committed(t.commit(&s, &append(vec![part(vec![c], "unit-3", 1)]), 3).await.unwrap());
    assert_eq!(c4.version, 4);
    assert_eq!(t.live_files(&s, &c4).await.unwrap().len(), 3);
}

/// An output on an object store (in memory, as S3 under `s3://bucket/out`):
/// conditional PUTs, no rename, no folders.
fn object_store() -> Storage {
    let text = "name = \"t\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"s3://bucket/out\"\n[[export]]\n\
                dataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"100..199\"\n";
    let spec = crate::spec::Spec::parse("t.toml", text).unwrap();
    Storage::with_store(&spec.output, Arc::new(object_store::memory::InMemory::new()), "out")
}

#[tokio::test]
async fn writers_racing_on_one_table_all_land_each_file_once() {
    let dir = tempfile::tempdir().unwrap();
    race(&storage(dir.path())).await;
    let s3 = object_store();
    race(&s3).await;
    assert_eq!(Table::new(&s3, "events").location(), "s3://bucket/out/events");
}

async fn race(s: &Storage) {
    let (_, c) = made(s).await;
    let mut files = Vec::new();
    for i in 0..12 {
        files.push(put_file(s, &c, &format!("chain=base/date=2024-01-02/f{i}.parquet"), i, 1).await);
    }
    // Three writers, each its own table object (as three processes).
    let writers: Vec<Table> = (0..3).map(|_| Table::new(s, "events")).collect();
    let runs = writers.iter().enumerate().map(|(w, t)| {
        let files = &files;
        async move {
            for i in (w..12).step_by(3) {
                let change = append(vec![part(vec![files[i].clone()], &format!("unit-{i}"), 1)]);
                committed(t.commit(s, &change, 50).await.unwrap());
            }
        }
    });
    futures::future::join_all(runs).await;
    let now = Table::new(s, "events").load(s).await.unwrap().unwrap();
    assert_eq!(now.version, 13);
    assert_eq!(now.metadata.ancestry().len(), 12);
    assert_eq!(paths(&writers[0].live_files(s, &now).await.unwrap()), paths(&files));
    for i in 0..12 {
        assert_eq!(now.recorded_version(&format!("unit-{i}")), Some(1));
    }
    assert_eq!(now.snapshot().unwrap().count("total-data-files"), Some(12));
    // No attempt that lost left a file behind: one list and one
    // manifest a snapshot.
    let avro = s
        .list("events/metadata/")
        .await
        .unwrap()
        .iter()
        .filter(|m| m.location.as_ref().ends_with(".avro"))
        .count();
    assert_eq!(avro, 24);
}

#[tokio::test]
async fn columns_join_by_a_metadata_only_commit_and_partitioning_must_match() {
    let dir = tempfile::tempdir().unwrap();
    let s = storage(dir.path());
    let t = Table::new(&s, "events");
    let props = BTreeMap::from([("write.parquet.compression-codec".to_string(), "zstd".to_string())]);
    let c1 = t.prepare(&s, &events_schema(), &keys(), &props, 3).await.unwrap();
    assert_eq!(c1.metadata.properties["write.parquet.compression-codec"], "zstd");
    assert_eq!(t.prepare(&s, &events_schema(), &keys(), &props, 3).await.unwrap().version, 1);
    let mut fields: Vec<Field> = events_schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(Field::new("gas_used", DataType::Int64, true));
    let wider = Schema::new(fields);
    let c2 = t.prepare(&s, &wider, &keys(), &props, 3).await.unwrap();
    assert_eq!((c2.version, c2.metadata.current_schema_id, c2.metadata.last_column_id), (2, 1, 11));
    assert_eq!(c2.metadata.schemas.len(), 2);
    assert!(c2.snapshot().is_none(), "no snapshot: metadata only");
    assert!(c2.metadata.properties[metadata::NAME_MAPPING].contains("gas_used"));
    assert_eq!(c2.metadata.metadata_log.len(), 1);
    let tagged = t
        .file_schema(&c2, &Schema::new(vec![Field::new("gas_used", DataType::Int64, true)]))
        .unwrap();
    assert_eq!(tagged.field(0).metadata()[schema::FIELD_ID_KEY], "11");
    let e = t.prepare(&s, &wider, &keys()[..1], &props, 3).await.unwrap_err();
    assert!(matches!(e, IcebergError::Layout { .. }));
    assert_eq!(
        e.to_string(),
        "iceberg table events: partitioned by chain=identity(chain), date=day(block_timestamp); this job writes files \
         partitioned by chain=identity(chain) (another job sharing the output with another output.partition_by?)"
    );
    let narrow: Vec<Field> = wider
        .fields()
        .iter()
        .map(|f| {
            if f.name() == "gas_used" {
                Field::new("gas_used", DataType::Utf8, true)
            } else {
                f.as_ref().clone()
            }
        })
        .collect();
    let e = t.prepare(&s, &Schema::new(narrow), &keys(), &props, 3).await.unwrap_err();
    assert!(
        e.to_string()
            .contains("column gas_used is long in the table; the writer has string"),
        "{e}"
    );
}

#[tokio::test]
async fn many_small_appends_fold_into_few_manifests() {
    let dir = tempfile::tempdir().unwrap();
    let s = storage(dir.path());
    let limits = Limits {
        merge_manifests_at: 4,
        ..Limits::default()
    };
    let t = Table::with_limits(&s, "events", limits);
    let (_, mut c) = t.create_if_absent(&s, &events_schema(), &keys(), &BTreeMap::new()).await.unwrap();
    let mut files = Vec::new();
    for i in 0..10 {
        let f = put_file(&s, &c, &format!("chain=base/date=2024-01-02/f{i}.parquet"), i * 10, 2).await;
        files.push(f.clone());
        c = committed(t.commit(&s, &append(vec![part(vec![f], "u", i)]), 3).await.unwrap());
        let list = t
            .manifest_list(&s, &c, &c.snapshot().unwrap().manifest_list)
            .await
            .unwrap()
            .unwrap();
        assert!(list.len() <= 4, "{} manifests after {} appends", list.len(), i + 1);
    }
    assert_eq!(paths(&t.live_files(&s, &c).await.unwrap()), paths(&files));
    // Folded entries keep the sequence numbers they were added at.
    let list = t
        .manifest_list(&s, &c, &c.snapshot().unwrap().manifest_list)
        .await
        .unwrap()
        .unwrap();
    let folded = list.iter().find(|m| m.existing_files > 1).expect("a folded manifest");
    let entries = t.manifest_entries(&s, &c, folded).await.unwrap().unwrap();
    assert!(
        entries
            .iter()
            .all(|e| e.sequence_number.is_some_and(|q| q < c.metadata.last_sequence_number))
    );
    assert_eq!(
        folded.min_sequence_number,
        entries.iter().filter_map(|e| e.sequence_number).min().unwrap()
    );
}

#[tokio::test]
async fn expiring_drops_old_snapshots_their_metadata_and_names_the_files_no_one_reads() {
    let dir = tempfile::tempdir().unwrap();
    let s = storage(dir.path());
    let limits = Limits {
        previous_versions: 2,
        ..Limits::default()
    };
    let t = Table::with_limits(&s, "events", limits);
    let (_, c) = t.create_if_absent(&s, &events_schema(), &keys(), &BTreeMap::new()).await.unwrap();
    let a = put_file(&s, &c, "chain=base/date=2024-01-02/a.parquet", 0, 3).await;
    let b = put_file(&s, &c, "chain=base/date=2024-01-02/b.parquet", 3, 3).await;
    committed(t.commit(&s, &append(vec![part(vec![a.clone()], "u1", 1)]), 3).await.unwrap());
    let c3 = committed(t.commit(&s, &append(vec![part(vec![b.clone()], "u2", 1)]), 3).await.unwrap());
    let ab = put_file(&s, &c3, "chain=base/date=2024-01-02/ab.parquet", 0, 6).await;
    let swap = Change {
        parts: vec![part(vec![ab.clone()], "compact", 1)],
        removes: vec![a.path.clone(), b.path.clone()],
        rearranges: true,
        ..Change::default()
    };
    let c4 = committed(t.commit(&s, &swap, 3).await.unwrap());
    // The next snapshot lists no manifest left without live files.
    let c = put_file(&s, &c4, "chain=base/date=2024-01-03/c.parquet", 6, 1).await;
    let c5 = committed(t.commit(&s, &append(vec![part(vec![c.clone()], "u3", 1)]), 3).await.unwrap());
    assert_eq!(
        t.manifest_list(&s, &c5, &c5.snapshot().unwrap().manifest_list)
            .await
            .unwrap()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(c5.metadata.metadata_log.len(), 2, "the log keeps the last previous versions");
    // Nothing is old enough: nothing goes.
    let young = Retention {
        keep_since_ms: 0,
        keep_last: 0,
    };
    let none = t.expire(&s, young, &nothing_settled, 3).await.unwrap();
    assert!(none.snapshots.is_empty() && none.unreferenced.is_empty());
    assert_eq!(
        none.metadata_files_deleted, 2,
        "v1 and v2: older than the last two previous versions"
    );
    let all_old = Retention {
        keep_since_ms: chrono::Utc::now().timestamp_millis() + 60_000,
        keep_last: 0,
    };
    let gone = t.expire(&s, all_old, &nothing_settled, 3).await.unwrap();
    assert_eq!(gone.snapshots.len(), 3);
    assert_eq!(gone.unreferenced, BTreeSet::from([a.path.clone(), b.path.clone()]));
    let now = Table::new(&s, "events").load(&s).await.unwrap().unwrap();
    assert_eq!(now.version, 6);
    assert_eq!(now.metadata.snapshots.len(), 1);
    assert!(
        now.metadata
            .snapshot_log
            .iter()
            .all(|e| now.metadata.snapshot(e.snapshot_id).is_some())
    );
    assert_eq!(paths(&t.live_files(&s, &now).await.unwrap()), paths(&[ab.clone(), c.clone()]));
    // Old metadata versions past the kept ones are gone, the rest read.
    let names: BTreeSet<String> = std::fs::read_dir(dir.path().join("events/metadata"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for v in 1..=3 {
        assert!(!names.contains(&format!("v{v}.metadata.json")), "{names:?}");
    }
    assert!(
        names.contains("v4.metadata.json") && names.contains("v6.metadata.json"),
        "{names:?}"
    );
    let avro = names.iter().filter(|n| n.ends_with(".avro")).count();
    assert_eq!(avro, 3, "the kept snapshot's list and its two manifests: {names:?}");
    assert_eq!(gone.metadata_files_deleted, 1 + 3 + 4, "v3, three lists, four manifests");
    // The unit records of expired snapshots move into the properties: a
    // unit committed before the retention is still known to be in.
    assert_eq!(now.recorded_version("u1"), Some(1));
    assert_eq!(now.metadata.properties.get("chainetl.txn.u1").map(String::as_str), Some("1"));
    assert_eq!((now.recorded_version("compact"), now.recorded_version("u3")), (Some(1), Some(1)));
    assert!(
        !now.metadata.properties.contains_key("chainetl.txn.u3"),
        "a record the kept snapshot has stays in its summary"
    );
}

/// Transaction ids the writer says are settled leave the table's records
/// as their snapshots expire, and a later expiry removes those an earlier
/// one moved into the properties: a long run's ids stay those in flight.
#[tokio::test]
async fn expiring_keeps_only_the_transaction_ids_not_settled() {
    let dir = tempfile::tempdir().unwrap();
    let s = storage(dir.path());
    let t = Table::new(&s, "events");
    let (_, c) = t.create_if_absent(&s, &events_schema(), &keys(), &BTreeMap::new()).await.unwrap();
    let mut files = Vec::new();
    for (i, unit) in ["u1", "u2", "u3"].into_iter().enumerate() {
        let f = put_file(&s, &c, &format!("chain=base/date=2024-01-02/{unit}.parquet"), i as i64 * 3, 3).await;
        committed(t.commit(&s, &append(vec![part(vec![f.clone()], unit, 2)]), 3).await.unwrap());
        files.push(f);
    }
    let all_old = || Retention {
        keep_since_ms: chrono::Utc::now().timestamp_millis() + 60_000,
        keep_last: 0,
    };
    // First nothing is settled: u1 and u2 (their snapshots dropped) move
    // into the properties.
    t.expire(&s, all_old(), &nothing_settled, 3).await.unwrap();
    let now = t.load(&s).await.unwrap().unwrap();
    assert_eq!(now.metadata.snapshots.len(), 1);
    let txn_keys = |c: &Current| -> BTreeSet<String> {
        c.metadata
            .properties
            .keys()
            .filter(|k| k.starts_with(TXN_PREFIX))
            .cloned()
            .collect()
    };
    assert_eq!(
        txn_keys(&now),
        BTreeSet::from(["chainetl.txn.u1".to_string(), "chainetl.txn.u2".to_string()])
    );
    // u1 is settled at version 2, u2 only at 1 (exported again since):
    // u1's property goes with no snapshot to expire; u2's stays.
    let settled = |app: &str, v: i64| (app == "u1" && v <= 2) || (app == "u2" && v <= 1);
    t.expire(&s, all_old(), &settled, 3).await.unwrap();
    let now = t.load(&s).await.unwrap().unwrap();
    assert_eq!(txn_keys(&now), BTreeSet::from(["chainetl.txn.u2".to_string()]));
    assert_eq!((now.recorded_version("u1"), now.recorded_version("u2")), (None, Some(2)));
    // A new unit: u3's snapshot expires settled, and no property is made.
    let f = put_file(&s, &now, "chain=base/date=2024-01-03/u4.parquet", 9, 3).await;
    committed(t.commit(&s, &append(vec![part(vec![f], "u4", 1)]), 3).await.unwrap());
    let settled = |app: &str, v: i64| app == "u3" && v <= 2;
    t.expire(&s, all_old(), &settled, 3).await.unwrap();
    let now = t.load(&s).await.unwrap().unwrap();
    assert_eq!(txn_keys(&now), BTreeSet::from(["chainetl.txn.u2".to_string()]));
    assert_eq!(now.recorded_version("u4"), Some(1), "the current snapshot's summary");
}

/// The snapshot current at the cutoff stays through an expiry: files a
/// later snapshot removed within the retention are its, and a reader may
/// have it open.
#[tokio::test]
async fn expiring_keeps_the_snapshot_current_at_the_cutoff() {
    let dir = tempfile::tempdir().unwrap();
    let s = storage(dir.path());
    let t = Table::new(&s, "events");
    let (_, c) = t.create_if_absent(&s, &events_schema(), &keys(), &BTreeMap::new()).await.unwrap();
    let a = put_file(&s, &c, "chain=base/date=2024-01-02/a.parquet", 0, 3).await;
    let b = put_file(&s, &c, "chain=base/date=2024-01-02/b.parquet", 3, 3).await;
    committed(t.commit(&s, &append(vec![part(vec![a.clone()], "u1", 1)]), 3).await.unwrap());
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let c2 = committed(t.commit(&s, &append(vec![part(vec![b.clone()], "u2", 1)]), 3).await.unwrap());
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let ab = put_file(&s, &c2, "chain=base/date=2024-01-02/ab.parquet", 0, 6).await;
    let swap = Change {
        parts: vec![part(vec![ab.clone()], "compact", 1)],
        removes: vec![a.path.clone(), b.path.clone()],
        rearranges: true,
        ..Change::default()
    };
    let c3 = committed(t.commit(&s, &swap, 3).await.unwrap());
    let cutoff = c3.snapshot().unwrap().timestamp_ms;
    let kept_at = c2.snapshot().unwrap().snapshot_id;
    let gone = t
        .expire(
            &s,
            Retention {
                keep_since_ms: cutoff,
                keep_last: 0,
            },
            &nothing_settled,
            3,
        )
        .await
        .unwrap();
    assert_eq!(gone.snapshots.len(), 1, "only the first snapshot: {gone:?}");
    assert!(gone.unreferenced.is_empty(), "a and b are the kept snapshot's: {gone:?}");
    let now = t.load(&s).await.unwrap().unwrap();
    assert!(now.metadata.snapshot(kept_at).is_some(), "the snapshot current at the cutoff stays");
}

/// A writer whose last version has no successor on storage any more
/// (another writer's expiry deleted the versions after it) commits on
/// the latest version, not on the deleted number.
#[tokio::test]
async fn a_writer_behind_deleted_versions_commits_on_the_latest() {
    let dir = tempfile::tempdir().unwrap();
    let s = storage(dir.path());
    let behind = Table::new(&s, "events");
    let (_, c1) = behind
        .create_if_absent(&s, &events_schema(), &keys(), &BTreeMap::new())
        .await
        .unwrap();
    let other = Table::new(&s, "events");
    let mut files = Vec::new();
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        let f = put_file(&s, &c1, &format!("chain=base/date=2024-01-02/{name}.parquet"), 3 * i as i64, 3).await;
        committed(other.commit(&s, &append(vec![part(vec![f.clone()], name, 1)]), 3).await.unwrap());
        files.push(f);
    }
    std::fs::remove_file(dir.path().join("events/metadata/v2.metadata.json")).unwrap();
    let d = put_file(&s, &c1, "chain=base/date=2024-01-02/d.parquet", 9, 3).await;
    let mine = committed(behind.commit(&s, &append(vec![part(vec![d.clone()], "d", 1)]), 3).await.unwrap());
    assert_eq!(mine.version, 5, "on v4, the latest");
    let fresh = Table::new(&s, "events").load(&s).await.unwrap().unwrap();
    assert_eq!(fresh.version, 5);
    files.push(d);
    assert_eq!(
        paths(&Table::new(&s, "events").live_files(&s, &fresh).await.unwrap()),
        paths(&files)
    );
}
