//! The k-way merge of inputs whose key ranges overlap, and the check that
//! what compaction writes is in key order (see [`super::compact`]).

use super::SinkError;
use super::merge_input::Input;
use super::merge_output::{Out, Stop};
use super::reader::StoreReader;
use arrow_array::RecordBatch;
use arrow_row::{OwnedRow, RowConverter, Rows, SortField};
use arrow_schema::SchemaRef;
use arrow_select::interleave::interleave_record_batch;
use futures::StreamExt;
use parquet::arrow::async_reader::ParquetRecordBatchStream;

/// Rows per batch read from the inputs merged at once, together, and per
/// batch written.
const MERGE_BATCH_ROWS: usize = 8192;
/// Inputs that together hold at most this many bytes (uncompressed, as
/// their footers say) are read whole and sorted in memory, so that rows
/// the server returned out of order still end up sorted.
const SORT_IN_MEMORY_BYTES: u64 = 64 * 1024 * 1024;

/// One input being read: its stream, current batch and the batch's keys.
struct Cursor {
    rel: String,
    stream: ParquetRecordBatchStream<StoreReader>,
    batch: Option<RecordBatch>,
    rows: Option<Rows>,
    pos: usize,
}

/// The merge's running state: the output schema, key encoding, and the
/// key of the last row written (to check the order across batches).
pub(super) struct Merger {
    schema: SchemaRef,
    key: Vec<usize>,
    conv: RowConverter,
    check: bool,
    last: Option<OwnedRow>,
}

fn error(rel: &str, e: impl std::error::Error + Send + Sync + 'static) -> Stop {
    Stop::Failed(SinkError::Write {
        path: rel.into(),
        source: Box::new(e),
    })
}

/// An input could not be read.
fn unreadable(rel: &str, e: impl std::error::Error + Send + Sync + 'static) -> Stop {
    Stop::Failed(SinkError::Read {
        path: rel.into(),
        source: Box::new(e),
    })
}

impl Merger {
    /// A merge into `schema`, sorted by columns `key`; `check`: verify
    /// and require key order.
    pub(super) fn new(schema: &SchemaRef, key: &[usize], check: bool) -> Result<Merger, Box<dyn std::error::Error + Send + Sync>> {
        let fields = key.iter().map(|&i| SortField::new(schema.field(i).data_type().clone())).collect();
        Ok(Merger {
            schema: schema.clone(),
            key: key.to_vec(),
            conv: RowConverter::new(fields)?,
            check: check && !key.is_empty(),
            last: None,
        })
    }

    /// Writes the rows of inputs `members` (of `inputs`) to `out`, merged.
    pub(super) async fn cluster(&mut self, inputs: &mut [Input], members: &[usize], out: &mut Out<'_>) -> Result<(), Stop> {
        let in_memory = members.iter().map(|&i| inputs[i].mem_bytes).sum::<u64>() <= SORT_IN_MEMORY_BYTES;
        let batch_rows = (MERGE_BATCH_ROWS / members.len().max(1)).max(256);
        let mut cursors = Vec::with_capacity(members.len());
        for &i in members {
            let rel = inputs[i].rel.clone();
            let Some(builder) = inputs[i].builder.take() else {
                continue;
            };
            let stream = builder.with_batch_size(batch_rows).build().map_err(|e| unreadable(&rel, e))?;
            let mut c = Cursor {
                rel,
                stream,
                batch: None,
                rows: None,
                pos: 0,
            };
            self.advance(&mut c).await?;
            cursors.push(c);
        }
        if in_memory && self.check {
            return self.sort_in_memory(cursors, out).await;
        }
        if let [c] = cursors.as_mut_slice() {
            while let Some(batch) = c.batch.take() {
                let picks: Vec<(usize, usize)> = (0..batch.num_rows()).map(|r| (0, r)).collect();
                c.batch = Some(batch);
                self.flush(std::slice::from_ref(c), &picks, out).await?;
                self.advance(c).await?;
            }
            return Ok(());
        }
        let mut picks: Vec<(usize, usize)> = Vec::with_capacity(MERGE_BATCH_ROWS);
        while let Some(b) = smallest(&cursors) {
            picks.push((b, cursors[b].pos));
            cursors[b].pos += 1;
            let exhausted = cursors[b].batch.as_ref().is_none_or(|x| cursors[b].pos >= x.num_rows());
            if exhausted || picks.len() >= MERGE_BATCH_ROWS {
                self.flush(&cursors, &picks, out).await?;
                picks.clear();
            }
            if exhausted {
                self.advance(&mut cursors[b]).await?;
            }
        }
        self.flush(&cursors, &picks, out).await
    }

    /// Reads every cursor whole, sorts the rows by key, and writes them.
    async fn sort_in_memory(&mut self, mut cursors: Vec<Cursor>, out: &mut Out<'_>) -> Result<(), Stop> {
        let mut batches = Vec::new();
        for c in cursors.iter_mut() {
            while let Some(b) = c.batch.take() {
                batches.push(b);
                self.advance(c).await?;
            }
        }
        let all = arrow_select::concat::concat_batches(&self.schema, &batches).map_err(|e| error("(sort)", e))?;
        drop(batches);
        let keys: Vec<_> = self.key.iter().map(|&i| all.column(i).clone()).collect();
        let rows = self.conv.convert_columns(&keys).map_err(|e| error("(sort)", e))?;
        let mut order: Vec<u32> = (0..all.num_rows() as u32).collect();
        order.sort_by(|&a, &b| rows.row(a as usize).cmp(&rows.row(b as usize)));
        for chunk in order.chunks(MERGE_BATCH_ROWS) {
            let first = rows.row(chunk[0] as usize);
            if self.last.as_ref().is_some_and(|l| l.row() > first) {
                return Err(Stop::Unsorted);
            }
            self.last = Some(rows.row(chunk[chunk.len() - 1] as usize).owned());
            let idx = arrow_array::UInt32Array::from(chunk.to_vec());
            let part = arrow_select::take::take_record_batch(&all, &idx).map_err(|e| error("(sort)", e))?;
            out.write(&part).await?;
        }
        Ok(())
    }

    /// Loads a cursor's next non-empty batch, projected to the output
    /// schema by column name (older files may hold more columns).
    async fn advance(&self, c: &mut Cursor) -> Result<(), Stop> {
        c.batch = None;
        c.rows = None;
        c.pos = 0;
        while let Some(next) = c.stream.next().await {
            let batch = next.map_err(|e| unreadable(&c.rel, e))?;
            if batch.num_rows() == 0 {
                continue;
            }
            let mut columns = Vec::with_capacity(self.schema.fields().len());
            for f in self.schema.fields() {
                let Some(col) = batch.column_by_name(f.name()) else {
                    return Err(Stop::Failed(SinkError::Read {
                        path: c.rel.clone(),
                        source: format!("has no column `{}`: files of another layout cannot be merged", f.name()).into(),
                    }));
                };
                columns.push(super::with_nested_fields(col, f.data_type()).unwrap_or_else(|| col.clone()));
            }
            let batch = RecordBatch::try_new(self.schema.clone(), columns).map_err(|e| error(&c.rel, e))?;
            if !self.key.is_empty() {
                let keys: Vec<_> = self.key.iter().map(|&i| batch.column(i).clone()).collect();
                c.rows = Some(self.conv.convert_columns(&keys).map_err(|e| error(&c.rel, e))?);
            }
            c.batch = Some(batch);
            return Ok(());
        }
        Ok(())
    }

    /// Writes the picked rows (`(cursor, row)`), checking their order.
    async fn flush(&mut self, cursors: &[Cursor], picks: &[(usize, usize)], out: &mut Out<'_>) -> Result<(), Stop> {
        if picks.is_empty() {
            return Ok(());
        }
        if self.check {
            let key = |&(c, r): &(usize, usize)| cursors[c].rows.as_ref().map(|rows| rows.row(r));
            let mut prev = self.last.as_ref().map(|o| o.row());
            for p in picks {
                let k = key(p);
                if let (Some(a), Some(b)) = (prev, k)
                    && a > b
                {
                    return Err(Stop::Unsorted);
                }
                prev = k;
            }
            self.last = key(&picks[picks.len() - 1]).map(|r| r.owned());
        }
        let empty = RecordBatch::new_empty(self.schema.clone());
        let batches: Vec<&RecordBatch> = cursors.iter().map(|c| c.batch.as_ref().unwrap_or(&empty)).collect();
        let merged = interleave_record_batch(&batches, picks).map_err(|e| error("(merge)", e))?;
        out.write(&merged).await?;
        Ok(())
    }
}

/// The cursor whose current row has the smallest key (ties: the earlier
/// cursor), or None when every cursor is exhausted.
fn smallest(cursors: &[Cursor]) -> Option<usize> {
    let mut best: Option<(usize, Option<arrow_row::Row<'_>>)> = None;
    for (i, c) in cursors.iter().enumerate() {
        if c.batch.is_none() {
            continue;
        }
        let r = c.rows.as_ref().map(|rows| rows.row(c.pos));
        let smaller = match (&best, r) {
            (None, _) => true,
            (Some((_, Some(b))), Some(r)) => r < *b,
            _ => false,
        };
        if smaller {
            best = Some((i, r));
        }
    }
    best.map(|(i, _)| i)
}
