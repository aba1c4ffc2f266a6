//! Writing one unit's rows: rows are routed to their partition, one open
//! file per partition until the next commit, and every file is completed
//! and made durable together ([`UnitWriter::finish`]) before the unit's
//! checkpoint may count them.
//!
//! A file declares the table's sorting columns when every row it holds was
//! checked ([`KeyOrder`]) to follow the one before. A batch that breaks the
//! order completes the partition's open file early (its rows so far are in
//! order, so its declaration is true) and goes, with the rest of the
//! partition's rows for this writer, to files that declare none. A file
//! completed early is returned by the next [`UnitWriter::finish`] with the
//! others, so the checkpoint counts it like any other.

use super::encoding::for_schema;
use super::layout::file_name;
use super::open_file::OpenFile;
use super::order::KeyOrder;
use super::{Sink, SinkError, WrittenFile};
use crate::decode::Decoded;
use crate::decode::natural_key;
use crate::vocab::chain::Chain;
use arrow_array::BooleanArray;
use arrow_schema::SchemaRef;
use arrow_select::filter::filter_record_batch;
use parquet::file::properties::WriterProperties;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Writes one unit's rows: one open file per partition until the next commit.
pub struct UnitWriter {
    sink: Arc<Sink>,
    /// The table's directory under the output.
    table: String,
    chain: Chain,
    unit_id: String,
    /// The schema of the files: the table's, without partition keys.
    /// Batches are matched to it by column name: a decoder's hold every
    /// column of the dataset, of which the table may hold fewer.
    schema: SchemaRef,
    /// Sequence number of the next file to open.
    pub next_seq: u64,
    open: BTreeMap<Option<i32>, OpenFile>,
    /// End a row group early once an open file buffers this many bytes.
    flush_bytes: usize,
    /// The properties of a file of `schema` that declares no order.
    props: WriterProperties,
    /// The key columns (indexes of `schema`) and the properties of a file
    /// that declares them; None when the table has no key.
    sorted: Option<(Vec<usize>, WriterProperties)>,
    /// The order of each open file that declares its sorting columns.
    orders: BTreeMap<Option<i32>, KeyOrder>,
    /// Partitions whose rows broke the key order: their files declare none.
    unordered: BTreeSet<Option<i32>>,
    /// Files completed early, for the next [`UnitWriter::finish`].
    closed: Vec<WrittenFile>,
    /// Files are written under their hidden names ([`super::hidden_name`])
    /// for the caller to publish ([`Sink::publish`]).
    hidden: bool,
}

impl UnitWriter {
    /// A writer whose first file gets sequence `next_seq`, buffering at
    /// most about `memory_share` bytes of unflushed row groups. `unit_id`
    /// is the start of its files' names: `<job>-<unit>`.
    pub fn new(
        sink: Arc<Sink>,
        table: &str,
        chain: Chain,
        unit_id: &str,
        schema: SchemaRef,
        next_seq: u64,
        memory_share: usize,
    ) -> UnitWriter {
        let flush_bytes = memory_share.max(1024 * 1024);
        let (schema, _) = sink.file_schema(table, &schema);
        let sorted = declared_order(&sink, &schema);
        let props = for_schema(&sink.props, &schema, &[]);
        UnitWriter {
            sink,
            table: table.into(),
            chain,
            unit_id: unit_id.into(),
            schema,
            next_seq,
            open: BTreeMap::new(),
            flush_bytes,
            props,
            sorted,
            orders: BTreeMap::new(),
            unordered: BTreeSet::new(),
            closed: Vec::new(),
            hidden: false,
        }
    }

    /// This writer, writing its files under their hidden names: the
    /// [`WrittenFile`]s it returns name them so, and the caller publishes
    /// them ([`Sink::publish`] with the final name).
    pub fn hidden(mut self) -> UnitWriter {
        self.hidden = true;
        self
    }

    /// The table's directory under the output.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// Rows in the largest open file (to roll files by size).
    pub fn max_open_rows(&self) -> u64 {
        self.open.values().map(|f| f.rows).max().unwrap_or(0)
    }

    /// Bytes (written and buffered) of the largest open file (to roll files by size).
    pub fn max_open_bytes(&self) -> usize {
        self.open
            .values()
            .map(|f| f.bytes_written() + f.in_progress_size())
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

    async fn write_part(&mut self, day: Option<i32>, batch: &arrow_array::RecordBatch) -> Result<(), SinkError> {
        let keep = self
            .schema
            .fields()
            .iter()
            .map(|f| batch.schema_ref().index_of(f.name()))
            .collect::<Result<Vec<usize>, _>>()
            .map_err(|e| self.error(e))?;
        let batch = batch.project(&keep).map_err(|e| self.error(e))?;
        self.check_order(day, &batch).await?;
        if !self.open.contains_key(&day) {
            let rel = format!(
                "{}/{}",
                self.sink.partition_dir(&self.table, self.chain, day),
                file_name(&self.unit_id, self.next_seq)
            );
            self.next_seq += 1;
            let rel = if self.hidden { super::hidden_name(&rel) } else { rel };
            let props = match &self.sorted {
                Some((_, props)) if self.orders.contains_key(&day) => props.clone(),
                _ => self.props.clone(),
            };
            let file = OpenFile::create_with(&self.sink, rel, self.schema.clone(), props)?;
            self.open.insert(day, file);
        }
        let Some(f) = self.open.get_mut(&day) else {
            return Ok(());
        };
        f.write(&batch).await?;
        f.rows += batch.num_rows() as u64;
        // Memory stays bounded whatever the job's size: when the unit's open
        // files (one per day it spans) together buffer its share, end the
        // largest row group early.
        if self.open.values().map(|f| f.in_progress_size()).sum::<usize>() >= self.flush_bytes
            && let Some(f) = self.open.values_mut().max_by_key(|f| f.in_progress_size())
        {
            f.end_row_group().await?;
        }
        crate::util::failpoint::hit("during-file-write");
        Ok(())
    }

    /// Checks that `batch` continues partition `day`'s key order. When it
    /// does not, the partition's open file is completed now and the
    /// partition stops declaring an order.
    async fn check_order(&mut self, day: Option<i32>, batch: &arrow_array::RecordBatch) -> Result<(), SinkError> {
        let Some((key, _)) = &self.sorted else {
            return Ok(());
        };
        if self.unordered.contains(&day) {
            return Ok(());
        }
        if !self.orders.contains_key(&day) {
            if self.open.contains_key(&day) {
                return Ok(());
            }
            // A new file: it declares the order while its rows keep it.
            if let Some(order) = KeyOrder::new(&self.schema, key).map_err(|e| self.error(e))? {
                self.orders.insert(day, order);
            }
        }
        let Some(order) = self.orders.get_mut(&day) else {
            return Ok(());
        };
        if order.continues(batch).map_err(|e| SinkError::Write {
            path: self.unit_id.clone(),
            source: Box::new(e),
        })? {
            return Ok(());
        }
        self.orders.remove(&day);
        self.unordered.insert(day);
        if let Some(f) = self.open.remove(&day) {
            tracing::debug!(
                "{}: rows out of key order; later files of this partition declare no sort order",
                f.rel
            );
            let done = complete(&self.sink, f).await?;
            self.closed.push(done);
        }
        Ok(())
    }

    fn error(&self, e: impl std::error::Error + Send + Sync + 'static) -> SinkError {
        SinkError::Write {
            path: self.unit_id.clone(),
            source: Box::new(e),
        }
    }

    /// Completes every open file and makes it durable. On error the
    /// remaining files are aborted, so no partial object is left visible.
    pub async fn finish(&mut self) -> Result<Vec<WrittenFile>, SinkError> {
        let mut done = std::mem::take(&mut self.closed);
        self.orders.clear();
        let open = std::mem::take(&mut self.open);
        let mut iter = open.into_values();
        while let Some(f) = iter.next() {
            match complete(&self.sink, f).await {
                Ok(file) => done.push(file),
                Err(e) => {
                    for rest in iter {
                        rest.abort().await;
                    }
                    return Err(e);
                }
            }
        }
        Ok(done)
    }

    /// Drops every open file without completing it.
    pub async fn abort(&mut self) {
        // Files completed early are orphans now: their sequences are past
        // the checkpoint's, so the next run removes them.
        self.closed.clear();
        self.orders.clear();
        for (_, f) in std::mem::take(&mut self.open) {
            f.abort().await;
        }
    }
}

/// Completes open file `f` and makes it durable.
async fn complete(sink: &Sink, f: OpenFile) -> Result<WrittenFile, SinkError> {
    let rows = f.rows;
    let super::open_file::Closed {
        rel,
        checksum,
        bytes,
        footer,
    } = f.close().await?;
    make_durable(sink, &rel, bytes).await?;
    Ok(WrittenFile {
        rel,
        rows,
        bytes,
        checksum,
        footer: Some(footer),
    })
}

/// The key columns of files of `schema` (indexes) and the writer
/// properties that declare them, when the table has a key.
fn declared_order(sink: &Sink, schema: &arrow_schema::Schema) -> Option<(Vec<usize>, WriterProperties)> {
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let key_names = natural_key(&names);
    if key_names.is_empty() {
        return None;
    }
    let key = key_names.iter().filter_map(|k| names.iter().position(|n| n == k)).collect();
    Some((key, for_schema(&sink.props, schema, &key_names)))
}

/// Makes completed file `rel`, of `bytes` bytes, durable.
pub(super) async fn make_durable(sink: &Sink, rel: &str, bytes: u64) -> Result<(), SinkError> {
    sink.storage().make_durable(rel, bytes).await.map_err(|e| SinkError::Write {
        path: rel.into(),
        source: Box::new(e),
    })
}
