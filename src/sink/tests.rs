//! The sink on its own: names, partitions, and files that appear only
//! whole, on local disk and on an in-memory object store. The fixtures are
//! shared with `state`'s tests.

use super::open_file::Chunks;
use super::*;
use crate::decode::Decoded;
use crate::spec::{Compression, HashEncoding};
use crate::vocab::chain::Chain;
use arrow_array::RecordBatch;
use arrow_array::{Int64Array, StringArray};
use arrow_schema::{DataType, Field, Schema};
use futures::TryStreamExt;
use std::path::Path as FsPath;

/// 2024-01-01, in days since 1970-01-01.
pub(crate) const JAN_1: i32 = 19723;

/// An output at `uri`, partitioned by chain and date.
pub(crate) fn output(uri: &str) -> Output {
    Output {
        uri: uri.into(),
        partition_by: vec!["chain".into(), "date".into()],
        compression: Compression::Zstd(1),
        row_group_rows: 10_000,
        file_rows: 1_000_000,
        file_bytes: 256 << 20,
        commit_interval: std::time::Duration::from_secs(1),
        commit_pages: 1,
        hash_encoding: HashEncoding::Hex,
        memory_budget: 64 << 20,
        compact: true,
        target_file_bytes: 256 << 20,
        bloom_filters: vec!["transaction_hash".into()],
        endpoint: None,
        region: None,
        allow_http: None,
        format: crate::spec::OutputFormat::Parquet,
        delta_retention: std::time::Duration::from_secs(7 * 24 * 3600),
        catalog: None,
        table_properties: Default::default(),
    }
}

/// A sink on local directory `dir`.
pub(crate) fn local_sink(dir: &FsPath) -> Arc<Sink> {
    Arc::new(Sink::open(&output(&dir.to_string_lossy())).unwrap())
}

/// A sink on a fresh in-memory object store, under `prefix`.
pub(crate) fn memory_sink(prefix: &str) -> Arc<Sink> {
    let store = Arc::new(object_store::memory::InMemory::new());
    Arc::new(Sink::with_store(&output("memory://test"), store, prefix).unwrap())
}

/// The schema of the test rows: a number and a payload.
pub(crate) fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("n", DataType::Int64, false),
        Field::new("payload", DataType::Utf8, false),
    ]))
}

/// Rows `start..start + days.len()`, row `i` on day `days[i]`, each with a
/// `payload_bytes`-long payload that does not compress much.
pub(crate) fn rows(start: i64, days: &[i32], payload_bytes: usize) -> Decoded {
    let n: Vec<i64> = (start..start + days.len() as i64).collect();
    let payload: Vec<String> = n
        .iter()
        .map(|i| {
            let mut s = String::with_capacity(payload_bytes + 16);
            let mut x = (*i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            while s.len() < payload_bytes {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                s.push_str(&format!("{x:016x}"));
            }
            s.truncate(payload_bytes);
            s
        })
        .collect();
    let batch = RecordBatch::try_new(schema(), vec![Arc::new(Int64Array::from(n)), Arc::new(StringArray::from(payload))]).unwrap();
    Decoded {
        batch,
        days: Some(days.to_vec()),
        dropped: 0,
    }
}

/// A writer of unit `e0-blocks-ethereum-b100-200` of job `job`, from sequence 0.
pub(crate) fn writer(sink: &Arc<Sink>, job: &str) -> UnitWriter {
    UnitWriter::new(
        sink.clone(),
        "blocks",
        Chain::Ethereum,
        &format!("{job}-e0-blocks-ethereum-b100-200"),
        schema(),
        0,
        1 << 20,
    )
}

/// Every object the store lists, relative to the sink's root, sorted.
pub(crate) async fn listed(sink: &Sink) -> Vec<String> {
    let metas: Vec<_> = sink.storage().store().list(None).try_collect().await.unwrap();
    let mut out: Vec<String> = metas.iter().map(|m| sink.storage().rel_of(&m.location)).collect();
    out.sort();
    out
}

/// Every file under `dir` on disk (staging files included), relative, sorted.
pub(crate) fn on_disk(dir: &FsPath) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

/// Rows of the Parquet file at `rel`, read back through the store: the `n` column.
pub(crate) async fn read_n(sink: &Sink, rel: &str) -> Vec<i64> {
    let bytes = sink.storage().get(rel).await.unwrap().map(|o| o.bytes).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
        .unwrap()
        .build()
        .unwrap();
    let mut out = Vec::new();
    for b in reader {
        let b = b.unwrap();
        let col = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        out.extend(col.values().iter().copied());
    }
    out
}

const UNIT: &str = "e0-blocks-ethereum-b100-200";

#[test]
fn file_names_round_trip_and_are_read_strictly() {
    let name = file_name(&format!("job-{UNIT}"), 3);
    assert_eq!(name, format!("job-{UNIT}-000003.parquet"));
    assert_eq!(parse_file_name(name.strip_prefix("job-").unwrap()), Some((UNIT, 3)));
    assert_eq!(parse_file_name(&format!("{UNIT}-1234567.parquet")), Some((UNIT, 1_234_567)));
    for not_ours in [
        format!("{UNIT}-3.parquet"),
        format!("{UNIT}-000003.parquet#1"),
        format!("{UNIT}-00000a.parquet"),
        format!("{UNIT}-000003.parq"),
        format!("x-{UNIT}-000003.parquet"),
        "e0-blocks-ethereum-000003.parquet".to_string(),
    ] {
        assert_eq!(parse_file_name(&not_ours), None, "{not_ours}");
    }
}

#[test]
fn partition_dirs_follow_partition_by() {
    let dir = tempfile::tempdir().unwrap();
    let mut out = output(&dir.path().to_string_lossy());
    let sink = Sink::open(&out).unwrap();
    assert_eq!(
        sink.partition_dir("events", Chain::Base, Some(JAN_1)),
        "events/chain=base/date=2024-01-01"
    );
    assert_eq!(sink.partition_dir("tokens", Chain::Base, None), "tokens/chain=base");
    out.partition_by = vec!["date".into()];
    let sink = Sink::open(&out).unwrap();
    assert_eq!(sink.partition_dir("events", Chain::Base, Some(JAN_1)), "events/date=2024-01-01");
    out.partition_by = vec![];
    let sink = Sink::open(&out).unwrap();
    assert_eq!(sink.partition_dir("events", Chain::Base, Some(JAN_1)), "events");
}

#[tokio::test]
async fn a_local_file_appears_only_when_finished_and_whole() {
    let dir = tempfile::tempdir().unwrap();
    let sink = local_sink(dir.path());
    let mut w = writer(&sink, "job");
    // 40 000 rows of 64 bytes: several row groups, past the 1 MiB part
    // size, so the bytes reach a staging file before the file is complete.
    for i in 0..4 {
        w.write(rows(i * 10_000, &[JAN_1; 10_000], 64)).await.unwrap();
        assert_eq!(listed(&sink).await, Vec::<String>::new(), "listed before it was finished");
        assert!(
            !on_disk(dir.path()).iter().any(|f| f.ends_with(".parquet")),
            "{:?}",
            on_disk(dir.path())
        );
    }
    assert!(
        on_disk(dir.path()).iter().any(|f| f.contains(".parquet#")),
        "the test never reached a staging file: {:?}",
        on_disk(dir.path())
    );
    let files = w.finish().await.unwrap();
    let want = format!("blocks/chain=ethereum/date=2024-01-01/job-{UNIT}-000000.parquet");
    assert_eq!(files.len(), 1);
    assert_eq!((files[0].rel.as_str(), files[0].rows), (want.as_str(), 40_000));
    assert_eq!(on_disk(dir.path()), vec![want.clone()], "staging files are left");
    assert_eq!(files[0].bytes, std::fs::metadata(dir.path().join(&want)).unwrap().len());
    assert_eq!(read_n(&sink, &want).await, (0..40_000).collect::<Vec<i64>>());
    assert_eq!(w.next_seq, 1);
}

#[tokio::test]
async fn an_object_store_file_is_listed_only_after_finish() {
    let sink = memory_sink("exports/v1");
    let mut w = writer(&sink, "job");
    w.write(rows(0, &[JAN_1; 100], 16)).await.unwrap();
    assert!(listed(&sink).await.is_empty());
    let files = w.finish().await.unwrap();
    let want = format!("blocks/chain=ethereum/date=2024-01-01/job-{UNIT}-000000.parquet");
    assert_eq!(listed(&sink).await, vec![want.clone()]);
    assert_eq!(files[0].rel, want);
    let key = sink.storage().path(&want);
    assert_eq!(key.as_ref(), format!("exports/v1/{want}"), "the store's prefix comes first");
    assert_eq!(read_n(&sink, &want).await, (0..100).collect::<Vec<i64>>());
}

#[tokio::test]
async fn rows_of_several_days_go_to_one_file_per_day_in_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let sink = local_sink(dir.path());
    let mut w = writer(&sink, "job");
    w.write(rows(0, &[JAN_1 + 1, JAN_1, JAN_1 + 1, JAN_1 + 2], 8)).await.unwrap();
    let mut files = w.finish().await.unwrap();
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    let got: Vec<(String, u64)> = files.iter().map(|f| (f.rel.clone(), f.rows)).collect();
    let name = |day: &str, seq: u64| format!("blocks/chain=ethereum/date={day}/{}", file_name(&format!("job-{UNIT}"), seq));
    assert_eq!(
        got,
        vec![(name("2024-01-01", 0), 1), (name("2024-01-02", 1), 2), (name("2024-01-03", 2), 1)],
        "one file per day, numbered in day order"
    );
    assert_eq!(read_n(&sink, &name("2024-01-02", 1)).await, vec![0, 2]);
    assert_eq!(w.next_seq, 3);
}

#[tokio::test]
async fn an_aborted_writer_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let sink = local_sink(dir.path());
    let mut w = writer(&sink, "job");
    for i in 0..3 {
        w.write(rows(i * 10_000, &[JAN_1; 10_000], 64)).await.unwrap();
    }
    w.abort().await;
    assert!(listed(&sink).await.is_empty());
    assert_eq!(on_disk(dir.path()), Vec::<String>::new());
    assert!(w.finish().await.unwrap().is_empty(), "nothing is left to finish");
}

#[tokio::test]
async fn deleting_a_missing_file_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let sink = local_sink(dir.path());
    sink.delete("blocks/nothing.parquet").await.unwrap();
    memory_sink("p").delete("blocks/nothing.parquet").await.unwrap();
}

#[test]
fn an_s3_uri_without_a_bucket_is_a_config_error() {
    let e = Sink::open(&output("s3:///prefix")).unwrap_err();
    assert!(matches!(e, SinkError::Config { source: None, .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "output s3:///prefix: no bucket in the URI: expected s3://bucket/prefix"
    );
}

#[test]
fn a_directory_that_cannot_be_created_keeps_its_cause() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let uri = file.join("out").to_string_lossy().into_owned();
    let e = Sink::open(&output(&uri)).unwrap_err();
    let cause = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<std::io::Error>());
    assert!(cause.is_some(), "{e:?}");
    let msg = e.to_string();
    assert!(msg.starts_with(&format!("output {uri}: cannot create the directory: ")), "{msg}");
}

#[test]
fn chunks_keep_the_bytes_in_order_and_whole_pages_apart() {
    use std::io::Write;
    let mut c = Chunks::default();
    let big = vec![7u8; 200 * 1024];
    c.write_all(b"head").unwrap();
    c.write_all(&big).unwrap();
    c.write_all(b"tail").unwrap();
    let chunks = c.take();
    assert_eq!(chunks.len(), 3, "the page is a chunk of its own");
    assert_eq!(chunks[1].len(), big.len());
    let all: Vec<u8> = chunks.iter().flat_map(|b| b.iter().copied()).collect();
    assert_eq!(all, [b"head".as_slice(), &big, b"tail"].concat());
    assert!(c.take().is_empty());
}

/// A sink on a store counting its requests, under `prefix`.
fn counted_sink(prefix: &str) -> (Arc<Sink>, Arc<crate::storage::counted::Counted>) {
    let store = Arc::new(crate::storage::counted::Counted::default());
    (
        Arc::new(Sink::with_store(&output("memory://test"), store.clone(), prefix).unwrap()),
        store,
    )
}

#[tokio::test]
async fn a_finished_file_on_an_object_store_costs_its_upload_only() {
    use crate::storage::counted::Kind;
    let (sink, store) = counted_sink("exports/v1");
    let mut w = writer(&sink, "job");
    w.write(rows(0, &[JAN_1; 100], 16)).await.unwrap();
    let files = w.finish().await.unwrap();
    let kinds: Vec<Kind> = store.made().into_iter().map(|(k, _)| k).collect();
    assert_eq!(kinds, vec![Kind::Put], "one PUT, and no HEAD for the size the writer knows");
    let stored = sink.storage().get(&files[0].rel).await.unwrap().unwrap().bytes;
    assert_eq!(files[0].bytes, stored.len() as u64);
}

#[tokio::test]
async fn a_stored_files_footer_and_page_index_are_one_read() {
    use crate::storage::counted::Kind;
    let (sink, store) = counted_sink("exports/v1");
    let mut w = writer(&sink, "job");
    w.write(rows(0, &[JAN_1; 3000], 16)).await.unwrap();
    let f = w.finish().await.unwrap().remove(0);
    store.reset();
    let footer = reader::footer(sink.storage(), &f.rel, f.bytes).await.unwrap();
    assert_eq!(footer.file_metadata().num_rows(), 3000);
    assert_eq!(store.made().len(), 1, "{:?}", store.made());
    // A merge's inputs: each opened (footer and page index) with one read.
    store.reset();
    let input = |f: &WrittenFile| compact::MergeInput {
        rel: f.rel.clone(),
        bytes: f.bytes,
        checksum: Some(f.checksum.clone()),
    };
    let mut w = writer(&sink, "other");
    w.write(rows(5000, &[JAN_1; 2000], 16)).await.unwrap();
    let g = w.finish().await.unwrap().remove(0);
    store.reset();
    let merged = sink
        .merge(&[input(&f), input(&g)], &|n| format!("blocks/merged-{n}.parquet"), 1 << 30)
        .await
        .unwrap();
    assert_eq!(merged.rows, 5000);
    for rel in [&f.rel, &g.rel] {
        let path = sink.storage().path(rel);
        let reads: Vec<Kind> = store.made().into_iter().filter(|(_, p)| *p == path).map(|(k, _)| k).collect();
        assert!(
            reads.len() <= 2 && reads.iter().all(|k| *k == Kind::GetRange),
            "{rel}: its footer and page index in one read, its rows in one: {reads:?}"
        );
    }
}
