//! Parquet writing through one `object_store` code path for local disk and
//! S3. Files are hive-partitioned (`<dataset>/chain=…/date=…/`), named
//! deterministically per unit and sequence (`<unit>-<seq>.parquet`), and
//! become visible only when complete: `BufWriter` stages the bytes and the
//! object appears on completion (rename locally, multipart completion on
//! S3); a failed file is aborted. Locally the finished file is fsynced
//! before a checkpoint may point past it.

use crate::decode::{Decoded, schema};
use crate::spec::{Compression, Dataset, Output};
use crate::vocab::chain::Chain;
use crate::vocab::window::date_string;
use arrow::array::BooleanArray;
use arrow::compute::filter_record_batch;
use arrow::datatypes::SchemaRef;
use object_store::buffered::BufWriter;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::arrow::ArrowWriter;
use parquet::basic::{GzipLevel, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Errors of the write stage.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SinkError {
    /// The output location cannot be used.
    #[error("output {uri}: {message}{}", source.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
    Config {
        /// The configured URI.
        uri: String,
        /// What is wrong, or what failed.
        message: String,
        /// Cause, when something failed (rather than the URI being wrong).
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// Deleting a file failed.
    #[error("deleting {path}: {source}")]
    Delete {
        /// Object path.
        path: String,
        /// Cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Writing a file failed.
    #[error("writing {path}: {source}")]
    Write {
        /// Object path.
        path: String,
        /// Cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Columns whose values repeat a lot, so dictionary encoding pays.
const DICTIONARY_COLUMNS: &[&str] = &[
    "chain",
    "contract_address",
    "topic0",
    "miner",
    "wallet_address",
    "token_address",
    "token_name",
    "token_standard",
    "token_symbol",
    "name",
    "standard",
    "symbol",
];

/// An opened output location.
#[derive(Debug)]
pub struct Sink {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    local_root: Option<PathBuf>,
    props: WriterProperties,
    partition_by: Vec<String>,
    uri: String,
    /// Upload part size: S3 needs at least 5 MiB per part.
    part_bytes: usize,
}

/// A file that is complete and durable.
#[derive(Debug, Clone)]
pub struct WrittenFile {
    /// Path relative to the output root.
    pub rel: String,
    /// Rows in it.
    pub rows: u64,
    /// Bytes in it.
    pub bytes: u64,
}

impl Sink {
    /// Opens `output.uri`: a local path, `file:///abs`, or `s3://bucket/prefix`
    /// (credentials and endpoint from the standard AWS variables).
    pub fn open(output: &Output) -> Result<Sink, SinkError> {
        let uri = output.uri.clone();
        let cfg = |message: &str, source: Option<Box<dyn std::error::Error + Send + Sync>>| SinkError::Config {
            uri: uri.clone(),
            message: message.into(),
            source,
        };
        let (store, prefix, local_root): (Arc<dyn ObjectStore>, String, Option<PathBuf>) = if let Some(rest) = uri.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(cfg("no bucket in the URI: expected s3://bucket/prefix", None));
            }
            let mut b = object_store::aws::AmazonS3Builder::from_env().with_bucket_name(bucket);
            if let Some(e) = &output.endpoint {
                b = b.with_endpoint(e);
            }
            if let Some(r) = &output.region {
                b = b.with_region(r);
            } else if std::env::var("AWS_REGION").is_err() && std::env::var("AWS_DEFAULT_REGION").is_err() {
                b = b.with_region("us-east-1");
            }
            if let Some(h) = output.allow_http {
                b = b.with_allow_http(h);
            }
            // Fail within about a minute when the endpoint is unreachable,
            // rather than hanging.
            use object_store::ClientConfigKey as C;
            use object_store::aws::AmazonS3ConfigKey as K;
            b = b
                .with_config(K::Client(C::ConnectTimeout), "5s")
                .with_config(K::Client(C::Timeout), "60s");
            let store = b
                .with_retry(object_store::RetryConfig {
                    max_retries: 5,
                    retry_timeout: std::time::Duration::from_secs(60),
                    ..Default::default()
                })
                .build()
                .map_err(|e| cfg("cannot configure the S3 client", Some(Box::new(e))))?;
            (Arc::new(store), prefix.trim_matches('/').to_string(), None)
        } else {
            let path = uri.strip_prefix("file://").unwrap_or(&uri);
            let dir = PathBuf::from(path);
            std::fs::create_dir_all(&dir).map_err(|e| cfg("cannot create the directory", Some(Box::new(e))))?;
            let dir = dir
                .canonicalize()
                .map_err(|e| cfg("cannot resolve the directory", Some(Box::new(e))))?;
            let store = LocalFileSystem::new_with_prefix(&dir).map_err(|e| cfg("cannot open the directory", Some(Box::new(e))))?;
            (Arc::new(store), String::new(), Some(dir))
        };
        let compression = match output.compression {
            Compression::Zstd(level) => parquet::basic::Compression::ZSTD(ZstdLevel::try_new(level).unwrap_or_default()),
            Compression::Snappy => parquet::basic::Compression::SNAPPY,
            Compression::Lz4 => parquet::basic::Compression::LZ4_RAW,
            Compression::Gzip => parquet::basic::Compression::GZIP(GzipLevel::default()),
            Compression::None => parquet::basic::Compression::UNCOMPRESSED,
        };
        // Dictionaries only where values repeat: on hashes they cost memory
        // (a dictionary per column per open file) and time, and save nothing.
        let mut props = WriterProperties::builder().set_dictionary_enabled(false);
        for col in DICTIONARY_COLUMNS {
            props = props.set_column_dictionary_enabled(ColumnPath::from(*col), true);
        }
        let props = props
            .set_compression(compression)
            .set_statistics_enabled(EnabledStatistics::Page)
            // Small pages keep the uncompressed buffer of every open column
            // small, so bounded memory still allows large row groups; and
            // each column's zstd context is sized by its page: at 128 KiB
            // pages those contexts were ~60 MB of a 155 MB peak at 8
            // requests in flight, at 32 KiB ~30 MB, for 2% more bytes.
            .set_data_page_size_limit(32 * 1024)
            .set_max_row_group_row_count(Some(output.row_group_rows))
            .set_created_by(concat!("chainetl version ", env!("CARGO_PKG_VERSION")).to_string())
            .build();
        let part_bytes = if local_root.is_some() { 1024 * 1024 } else { 5 * 1024 * 1024 };
        Ok(Sink {
            store,
            prefix,
            local_root,
            props,
            partition_by: output.partition_by.clone(),
            uri,
            part_bytes,
        })
    }

    /// The object store.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The output URI as configured.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Local directory of the output, when it is on local disk.
    pub fn local_root(&self) -> Option<&PathBuf> {
        self.local_root.as_ref()
    }

    /// Object path of `rel` (relative to the output root).
    pub fn path(&self, rel: &str) -> Path {
        if self.prefix.is_empty() {
            Path::from(rel)
        } else {
            Path::from(format!("{}/{rel}", self.prefix))
        }
    }

    /// `rel` of an object path under the root.
    pub fn rel_of(&self, p: &Path) -> String {
        let s = p.as_ref();
        if self.prefix.is_empty() {
            s.to_string()
        } else {
            s.strip_prefix(&format!("{}/", self.prefix)).unwrap_or(s).to_string()
        }
    }

    /// Partition directory of a row group: `<dataset>/chain=<c>/date=<d>`.
    pub fn partition_dir(&self, dataset: Dataset, chain: Chain, day: Option<i32>) -> String {
        let mut dir = dataset.name().to_string();
        for key in &self.partition_by {
            match (key.as_str(), day) {
                ("chain", _) => dir.push_str(&format!("/chain={chain}")),
                ("date", Some(d)) => dir.push_str(&format!("/date={}", date_string(d))),
                _ => {}
            }
        }
        dir
    }

    fn partitions_by_date(&self) -> bool {
        self.partition_by.iter().any(|k| k == "date")
    }

    /// Removes an object (missing is fine).
    pub async fn delete(&self, rel: &str) -> Result<(), SinkError> {
        match self.store.delete(&self.path(rel)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(SinkError::Delete {
                path: rel.into(),
                source: Box::new(e),
            }),
        }
    }
}

/// File name of sequence `seq` of `unit`.
pub fn file_name(unit_id: &str, seq: u64) -> String {
    format!("{unit_id}-{seq:06}.parquet")
}

/// The unit id and sequence of a file name written by [`file_name`] for a
/// file stem without the job's name (`<unit>-<seq>.parquet`), read strictly:
/// anything else is not one of that job's files.
pub fn parse_file_name(name: &str) -> Option<(&str, u64)> {
    let stem = name.strip_suffix(".parquet")?;
    let (unit, seq) = stem.rsplit_once('-')?;
    (seq.len() >= 6 && seq.bytes().all(|b| b.is_ascii_digit())).then_some(())?;
    crate::plan::is_unit_id(unit).then_some(())?;
    Some((unit, seq.parse().ok()?))
}

/// The encoder's output: bytes in fixed-size chunks handed to the upload
/// without further copies. (`AsyncArrowWriter` collects a row group in one
/// `Vec` that doubles as it grows, then copies it again into the upload
/// buffer: three copies of every row group at its end, and 2–3× its size
/// in memory.)
#[derive(Default)]
struct Chunks {
    done: Vec<bytes::Bytes>,
    current: Vec<u8>,
}

/// Size of an output chunk.
const CHUNK_BYTES: usize = 256 * 1024;

impl std::io::Write for Chunks {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.len() >= CHUNK_BYTES / 2 {
            // A whole page: its own exact-size chunk.
            self.seal();
            self.done.push(bytes::Bytes::copy_from_slice(buf));
            return Ok(buf.len());
        }
        if self.current.capacity() - self.current.len() < buf.len() {
            self.seal();
        }
        if self.current.capacity() == 0 {
            self.current.reserve_exact(CHUNK_BYTES);
        }
        self.current.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Chunks {
    fn seal(&mut self) {
        if !self.current.is_empty() {
            self.done.push(std::mem::take(&mut self.current).into());
        }
    }

    /// The bytes written so far, in order.
    fn take(&mut self) -> Vec<bytes::Bytes> {
        self.seal();
        std::mem::take(&mut self.done)
    }
}

struct OpenFile {
    rel: String,
    writer: ArrowWriter<Chunks>,
    out: BufWriter,
    rows: u64,
}

impl OpenFile {
    fn error(&self, e: impl std::error::Error + Send + Sync + 'static) -> SinkError {
        SinkError::Write {
            path: self.rel.clone(),
            source: Box::new(e),
        }
    }

    /// Hands what the encoder has produced to the upload.
    async fn drain(&mut self) -> Result<(), SinkError> {
        for b in self.writer.inner_mut().take() {
            self.out.put(b).await.map_err(|e| self.error(e))?;
        }
        Ok(())
    }

    async fn write(&mut self, batch: &arrow::record_batch::RecordBatch) -> Result<(), SinkError> {
        let groups = self.writer.flushed_row_groups().len();
        self.writer.write(batch).map_err(|e| self.error(e))?;
        if self.writer.flushed_row_groups().len() != groups {
            self.drain().await?;
        }
        Ok(())
    }

    /// Ends the row group in progress.
    async fn end_row_group(&mut self) -> Result<(), SinkError> {
        self.writer.flush().map_err(|e| self.error(e))?;
        self.drain().await
    }

    /// Writes the footer and completes the upload. A failed completion
    /// leaves nothing visible (the single PUT, or the multipart
    /// completion, did not happen); before it, a failure aborts the upload.
    async fn close(mut self) -> Result<String, SinkError> {
        let encoded = async {
            self.writer.finish().map_err(|e| self.error(e))?;
            self.writer.sync().map_err(|e| self.error(e))?;
            self.drain().await
        }
        .await;
        if let Err(e) = encoded {
            let _ = self.out.abort().await;
            return Err(e);
        }
        use tokio::io::AsyncWriteExt;
        // Not aborted on failure: a `BufWriter` cannot be aborted once shut down.
        self.out.shutdown().await.map_err(|e| self.error(e))?;
        Ok(self.rel)
    }

    async fn abort(mut self) {
        let _ = self.out.abort().await;
    }
}

/// Writes one unit's rows: one open file per partition until the next commit.
pub struct UnitWriter {
    sink: Arc<Sink>,
    dataset: Dataset,
    chain: Chain,
    unit_id: String,
    schema: SchemaRef,
    /// Sequence number of the next file to open.
    pub next_seq: u64,
    open: BTreeMap<Option<i32>, OpenFile>,
    /// End a row group early once an open file buffers this many bytes.
    flush_bytes: usize,
}

impl UnitWriter {
    /// A writer whose first file gets sequence `next_seq`, buffering at
    /// most about `memory_share` bytes of unflushed row groups.
    pub fn new(
        sink: Arc<Sink>,
        dataset: Dataset,
        chain: Chain,
        unit_id: &str,
        schema: SchemaRef,
        next_seq: u64,
        memory_share: usize,
    ) -> UnitWriter {
        let flush_bytes = memory_share.max(1024 * 1024);
        UnitWriter {
            sink,
            dataset,
            chain,
            unit_id: unit_id.into(),
            schema,
            next_seq,
            open: BTreeMap::new(),
            flush_bytes,
        }
    }

    /// Rows in the largest open file (to roll files by size).
    pub fn max_open_rows(&self) -> u64 {
        self.open.values().map(|f| f.rows).max().unwrap_or(0)
    }

    /// Bytes (written and buffered) of the largest open file (to roll files by size).
    pub fn max_open_bytes(&self) -> usize {
        self.open
            .values()
            .map(|f| f.writer.bytes_written() + f.writer.in_progress_size())
            .max()
            .unwrap_or(0)
    }

    /// Rows written since the last commit.
    pub fn open_rows(&self) -> u64 {
        self.open.values().map(|f| f.rows).sum()
    }

    /// Appends decoded rows, routed to their date partition.
    pub async fn write(&mut self, d: Decoded) -> Result<(), SinkError> {
        if d.batch.num_rows() == 0 {
            return Ok(());
        }
        let days = match (&d.days, self.sink.partitions_by_date()) {
            (Some(days), true) => days,
            _ => return self.write_part(None, &d.batch).await,
        };
        let first = days[0];
        if days.iter().all(|x| *x == first) {
            return self.write_part(Some(first), &d.batch).await;
        }
        let mut distinct: Vec<i32> = days.clone();
        distinct.sort_unstable();
        distinct.dedup();
        for day in distinct {
            let mask = BooleanArray::from(days.iter().map(|x| *x == day).collect::<Vec<bool>>());
            let part = filter_record_batch(&d.batch, &mask).map_err(|e| SinkError::Write {
                path: self.unit_id.clone(),
                source: Box::new(e),
            })?;
            self.write_part(Some(day), &part).await?;
        }
        Ok(())
    }

    async fn write_part(&mut self, day: Option<i32>, batch: &arrow::record_batch::RecordBatch) -> Result<(), SinkError> {
        if !self.open.contains_key(&day) {
            let rel = format!(
                "{}/{}",
                self.sink.partition_dir(self.dataset, self.chain, day),
                file_name(&self.unit_id, self.next_seq)
            );
            self.next_seq += 1;
            let out = BufWriter::with_capacity(self.sink.store.clone(), self.sink.path(&rel), self.sink.part_bytes).with_max_concurrency(2);
            let writer = ArrowWriter::try_new(Chunks::default(), self.schema.clone(), Some(self.sink.props.clone())).map_err(|e| {
                SinkError::Write {
                    path: rel.clone(),
                    source: Box::new(e),
                }
            })?;
            self.open.insert(day, OpenFile { rel, writer, out, rows: 0 });
        }
        let Some(f) = self.open.get_mut(&day) else {
            return Ok(());
        };
        f.write(batch).await?;
        f.rows += batch.num_rows() as u64;
        // Memory stays bounded whatever the job's size: when the unit's open
        // files (one per day it spans) together buffer its share, end the
        // largest row group early.
        if self.open.values().map(|f| f.writer.in_progress_size()).sum::<usize>() >= self.flush_bytes
            && let Some(f) = self.open.values_mut().max_by_key(|f| f.writer.in_progress_size())
        {
            f.end_row_group().await?;
        }
        crate::util::failpoint::hit("during-file-write");
        Ok(())
    }

    /// Completes every open file and makes it durable. On error the
    /// remaining files are aborted, so no partial object is left visible.
    pub async fn finish(&mut self) -> Result<Vec<WrittenFile>, SinkError> {
        let mut done = Vec::new();
        let open = std::mem::take(&mut self.open);
        let mut iter = open.into_values();
        while let Some(f) = iter.next() {
            let rows = f.rows;
            let rel = match f.close().await {
                Ok(rel) => rel,
                Err(e) => {
                    for rest in iter {
                        rest.abort().await;
                    }
                    return Err(e);
                }
            };
            let bytes = match self.sink.store.head(&self.sink.path(&rel)).await {
                Ok(meta) => meta.size,
                Err(e) => {
                    return Err(SinkError::Write {
                        path: rel,
                        source: Box::new(e),
                    });
                }
            };
            if let Some(root) = &self.sink.local_root {
                let file = root.join(&rel);
                tokio::task::spawn_blocking(move || std::fs::File::open(&file).and_then(|f| f.sync_all()))
                    .await
                    .map_err(|e| SinkError::Write {
                        path: rel.clone(),
                        source: Box::new(e),
                    })?
                    .map_err(|e| SinkError::Write {
                        path: rel.clone(),
                        source: Box::new(e),
                    })?;
            }
            done.push(WrittenFile { rel, rows, bytes });
        }
        Ok(done)
    }

    /// Drops every open file without completing it.
    pub async fn abort(&mut self) {
        for (_, f) in std::mem::take(&mut self.open) {
            f.abort().await;
        }
    }
}

/// The schema of `dataset` under `output`'s encoding.
pub fn schema_for(dataset: Dataset, output: &Output) -> SchemaRef {
    schema(dataset, output.hash_encoding)
}
