//! Tables made, changed, checkpointed and cleaned on local disk.

use super::*;
use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::{DataType, Field};

fn output(uri: &str) -> crate::spec::Output {
    crate::spec::Output {
        uri: uri.into(),
        partition_by: vec!["chain".into()],
        compression: crate::spec::Compression::Zstd(1),
        row_group_rows: 1000,
        file_rows: 1000,
        file_bytes: 1 << 20,
        commit_interval: std::time::Duration::from_secs(1),
        commit_pages: 1,
        hash_encoding: crate::spec::HashEncoding::Hex,
        memory_budget: 1 << 20,
        compact: false,
        target_file_bytes: 1 << 20,
        bloom_filters: vec![],
        endpoint: None,
        region: None,
        allow_http: None,
        format: crate::spec::OutputFormat::Delta,
        delta_retention: std::time::Duration::from_secs(7 * 24 * 3600),
        catalog: None,
        table_properties: Default::default(),
    }
}

/// A one-column Parquet file of `n` rows at `rel`; its size.
async fn data_file(storage: &Storage, rel: &str, n: i64) -> u64 {
    let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from_iter_values(0..n)) as ArrayRef]).unwrap();
    let mut bytes = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut bytes, schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let size = bytes.len() as u64;
    storage.put_atomic(rel, bytes).await.unwrap();
    size
}

fn add(path: &str, size: u64, rows: i64) -> AddFile {
    AddFile {
        path: path.into(),
        partition_values: vec![("chain".into(), "base".into())],
        size,
        rows: rows as u64,
        modification_time: 0,
        stats: vec![ColumnStats {
            name: "n".into(),
            min: Arc::new(Int64Array::from(vec![0])),
            max: Arc::new(Int64Array::from(vec![rows - 1])),
            nulls: 0,
        }],
    }
}

/// Table `events` (partitioned by `chain`, a nullable `n`), created,
/// checkpointing every 100 commits.
async fn events_table(storage: &Storage) -> Arc<Table> {
    let schema = Schema::new(vec![
        Field::new("chain", DataType::Utf8, false),
        Field::new("n", DataType::Int64, true),
    ]);
    let t = Arc::new(Table::new(storage, "events", 100));
    t.create_if_absent(storage, &schema, &["chain".into()]).await.unwrap();
    t
}

/// A writer's temporary file beside the first commit (another shard
/// creating the table at that moment) is no table: it is created, not
/// read as one with no version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_temporary_file_in_the_log_is_no_table_yet() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Arc::new(Storage::open(&output(&dir.path().to_string_lossy())).unwrap());
    let log = dir.path().join("events/_delta_log");
    std::fs::create_dir_all(&log).unwrap();
    std::fs::write(log.join(format!("{:020}.json.999.0.tmp", 0)), b"{}").unwrap();
    let t = Table::new(&storage, "events", 100);
    assert!(!t.exists(&storage).await.unwrap(), "a temporary file is no commit");
    let t = events_table(&storage).await;
    assert!(t.exists(&storage).await.unwrap());
    assert_eq!(
        tokio::task::spawn_blocking(move || t.snapshot().map(|s| s.version()))
            .await
            .unwrap()
            .unwrap(),
        0
    );
}

/// A file without bounds of a column (every value null) commits with
/// files that have them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_with_and_without_a_columns_bounds_commit_together() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Arc::new(Storage::open(&output(&dir.path().to_string_lossy())).unwrap());
    let t = events_table(&storage).await;
    let a = data_file(&storage, "events/chain=base/a.parquet", 10).await;
    let b = data_file(&storage, "events/chain=base/b.parquet", 5).await;
    let with = add("chain=base/a.parquet", a, 10);
    let without = AddFile {
        stats: Vec::new(),
        ..add("chain=base/b.parquet", b, 5)
    };
    let change = Change {
        parts: vec![Part {
            adds: vec![without, with],
            txn: None,
        }],
        ..Change::default()
    };
    let tt = t.clone();
    let v = tokio::task::spawn_blocking(move || tt.commit(&change, 4)).await.unwrap().unwrap();
    assert_eq!(v, 1);
    let log = std::fs::read_to_string(dir.path().join(format!("events/_delta_log/{:020}.json", 1))).unwrap();
    assert!(log.contains(r#"\"maxValues\":{\"n\":9}"#), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_add_remove_and_record_transaction_ids_and_checkpoints_follow_the_interval() {
    let dir = tempfile::tempdir().unwrap();
    let out = output(&dir.path().to_string_lossy());
    let storage = Arc::new(Storage::open(&out).unwrap());
    let schema = Schema::new(vec![
        Field::new("chain", DataType::Utf8, false),
        Field::new("n", DataType::Int64, false),
    ]);
    let t = Arc::new(Table::new(&storage, "events", 2));
    assert!(!t.exists(&storage).await.unwrap());
    assert!(t.create_if_absent(&storage, &schema, &["chain".into()]).await.unwrap());
    assert!(!t.create_if_absent(&storage, &schema, &["chain".into()]).await.unwrap());
    assert!(t.exists(&storage).await.unwrap());
    let a = data_file(&storage, "events/chain=base/a.parquet", 10).await;
    let b = data_file(&storage, "events/chain=base/b.parquet", 5).await;
    let c = data_file(&storage, "events/chain=base/c.parquet", 15).await;
    let tt = t.clone();
    tokio::task::spawn_blocking(move || {
        let first = Change {
            parts: vec![Part {
                adds: vec![add("chain=base/a.parquet", a, 10), add("chain=base/b.parquet", b, 5)],
                txn: Some(("chainetl-j-u1".into(), 3)),
            }],
            ..Change::default()
        };
        assert_eq!(tt.commit(&first, 4).unwrap(), 1);
        // Published again (after a crash): the log says it is in.
        let again = Change {
            may_be_in: true,
            ..first.clone()
        };
        assert_eq!(tt.commit(&again, 4).unwrap(), 1);
        assert_eq!(tt.app_version("chainetl-j-u1").unwrap(), Some(3));
        assert_eq!(tt.app_version("other").unwrap(), None);
        let mut live = tt.live_files().unwrap();
        live.sort_by(|x, y| x.path.cmp(&y.path));
        assert_eq!(
            live.iter().map(|f| (f.path.as_str(), f.rows)).collect::<Vec<_>>(),
            [("chain=base/a.parquet", Some(10)), ("chain=base/b.parquet", Some(5))]
        );
        // Version 2: one commit swaps a and b for c; a checkpoint follows.
        let swap = Change {
            parts: vec![Part {
                adds: vec![add("chain=base/c.parquet", c, 15)],
                txn: None,
            }],
            removes: vec!["chain=base/a.parquet".into(), "chain=base/b.parquet".into()],
            rearranges: true,
            ..Change::default()
        };
        assert_eq!(tt.commit(&swap, 4).unwrap(), 2);
        let live = tt.live_files().unwrap();
        assert_eq!(live.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["chain=base/c.parquet"]);
        // A file not in the table cannot be removed.
        let gone = Change {
            removes: vec!["chain=base/a.parquet".into()],
            ..Change::default()
        };
        let e = tt.commit(&gone, 4).unwrap_err().to_string();
        assert!(e.contains("not in the table's version 2"), "{e}");
        assert_eq!(tt.app_version("chainetl-j-u1").unwrap(), Some(3));
    })
    .await
    .unwrap();
    let log = dir.path().join("events/_delta_log");
    assert!(log.join("_last_checkpoint").exists());
    assert!(log.join(format!("{:020}.checkpoint.parquet", 2)).exists());
    let v2 = std::fs::read_to_string(log.join(format!("{:020}.json", 2))).unwrap();
    assert!(v2.contains(r#""dataChange":false"#), "{v2}");
    // A new process reads the table from the checkpoint.
    let fresh = Table::new(&storage, "events", 2);
    let v = tokio::task::spawn_blocking(move || (fresh.snapshot().unwrap().version(), fresh.app_version("chainetl-j-u1").unwrap()))
        .await
        .unwrap();
    assert_eq!(v, (2, Some(3)));
    // Version 3, later: the log before the checkpoint (2) is expired
    // for a reader from version 3 on, and goes; the removes of the
    // swap at version 2 are found from a cutoff before it.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let v2_time = std::fs::metadata(log.join(format!("{:020}.json", 2))).unwrap().modified().unwrap();
    let v2_ms = v2_time.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    // The removes carry the commit's time, which the file's mtime (a
    // coarse clock, and written later) can differ from by milliseconds on
    // a loaded machine: the cutoff is the earliest of them.
    let deleted_at = v2
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|a| a["remove"]["deletionTimestamp"].as_i64())
        .min()
        .unwrap();
    assert!((deleted_at - v2_ms).abs() < 60_000, "{deleted_at} {v2_ms}");
    let removed = t.removed_since(&storage, deleted_at).await.unwrap();
    assert_eq!(
        removed,
        ["chain=base/a.parquet", "chain=base/b.parquet"]
            .into_iter()
            .map(String::from)
            .collect()
    );
    let tt = t.clone();
    tokio::task::spawn_blocking(move || {
        let again = Change {
            removes: vec!["chain=base/c.parquet".into()],
            ..Change::default()
        };
        tt.commit(&again, 4).unwrap()
    })
    .await
    .unwrap();
    let v3_time = std::fs::metadata(log.join(format!("{:020}.json", 3))).unwrap().modified().unwrap();
    let v3_ms = v3_time.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    assert_eq!(t.clean_log(&storage, v3_ms).await.unwrap(), 2, "versions 0 and 1");
    assert!(!log.join(format!("{:020}.json", 0)).exists());
    assert!(log.join(format!("{:020}.json", 2)).exists() && log.join(format!("{:020}.json", 3)).exists());
    let fresh = Table::new(&storage, "events", 2);
    let v = tokio::task::spawn_blocking(move || fresh.snapshot().unwrap().version())
        .await
        .unwrap();
    assert_eq!(v, 3, "the table opens from its checkpoint");
}

/// How long a table of 10,000 commits (a checkpoint every 100) takes to
/// open from a new process: run with `cargo test --release --lib
/// sink::format::delta::table::tests::opening -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, not a check"]
async fn opening_a_table_of_10000_commits() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Arc::new(Storage::open(&output(&dir.path().to_string_lossy())).unwrap());
    let t = events_table(&storage).await;
    let tt = t.clone();
    let started = std::time::Instant::now();
    tokio::task::spawn_blocking(move || {
        for i in 0..10_000u64 {
            let change = Change {
                parts: vec![Part {
                    adds: vec![add(&format!("chain=base/f{i}.parquet"), 100, 10)],
                    txn: Some((format!("chainetl-j-u{}", i % 500), i as i64 + 1)),
                }],
                ..Change::default()
            };
            tt.commit(&change, 4).unwrap();
        }
    })
    .await
    .unwrap();
    println!("10,000 commits in {:.1} s", started.elapsed().as_secs_f64());
    for _ in 0..3 {
        let fresh = Table::new(&storage, "events", 100);
        let opened = std::time::Instant::now();
        let (v, app) =
            tokio::task::spawn_blocking(move || (fresh.snapshot().unwrap().version(), fresh.app_version("chainetl-j-u7").unwrap()))
                .await
                .unwrap();
        println!(
            "opened version {v} and read a transaction id ({app:?}) in {:.3} s",
            opened.elapsed().as_secs_f64()
        );
    }
}
