//! Compaction's data side: merging one partition's files into files of
//! about a target size, rows sorted by the table's natural key
//! ([`super::encoding::natural_key`]). Which files, when, and the record
//! that makes the swap exactly-once are the caller's ([`crate::state`],
//! [`crate::job`]).
//!
//! # Invariants
//!
//! - **Nothing visible until published.** Outputs are written under a
//!   hidden name ([`hidden_name`]: `_` first, no `.parquet` last, so neither
//!   engines listing a directory nor `*.parquet` globs read it) and become
//!   visible only through [`Sink::publish`], a rename, which the caller
//!   does after recording them.
//! - **Rows unchanged.** The outputs hold exactly the inputs' rows: their
//!   counts are checked against the inputs' footers before
//!   [`Sink::merge`] returns.
//! - **Declared order is true.** Outputs declare their sorting columns only
//!   when every row was checked to follow the one before; inputs that are
//!   not sorted (a server that returned pages out of order) give outputs
//!   without the declaration, never a false one.
//! - **Bounded memory.** Inputs whose key ranges (from their footers'
//!   statistics) do not overlap are copied one after another; only inputs
//!   that overlap are merged, each read in small batches.

use super::encoding::{natural_key, sorted_by};
use super::merge::Merger;
use super::open_file::OpenFile;
use super::reader::StoreReader;
use super::unit_writer::make_durable;
use super::{Sink, SinkError, WrittenFile};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use object_store::ObjectStoreExt;
use parquet::arrow::ParquetRecordBatchStreamBuilder;
use parquet::file::properties::WriterProperties;
use parquet::file::statistics::Statistics;

/// What a merge wrote.
#[derive(Debug)]
pub struct Merged {
    /// The outputs, under their final names (still hidden: see [`Sink::publish`]).
    pub files: Vec<WrittenFile>,
    /// Rows read from the inputs.
    pub rows: u64,
    /// Whether the outputs declare their sort order.
    pub sorted: bool,
}

/// The hidden name an output has until it is published: `_<name>.pending`
/// in the same directory.
pub fn hidden_name(rel: &str) -> String {
    match rel.rsplit_once('/') {
        Some((dir, name)) => format!("{dir}/_{name}.pending"),
        None => format!("_{rel}.pending"),
    }
}

/// A key bound from a footer's statistics.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Bound {
    Int(i64),
    Bytes(Vec<u8>),
}

/// One input: its reader, and the range of its first key column.
pub(super) struct Input {
    pub(super) rel: String,
    pub(super) builder: Option<ParquetRecordBatchStreamBuilder<StoreReader>>,
    rows: u64,
    /// Bytes of its rows uncompressed, as its footer says.
    pub(super) mem_bytes: u64,
    range: Option<(Bound, Bound)>,
}

/// Where merged rows go: files of about the target size, rolled in turn.
pub(super) struct Out<'a> {
    sink: &'a Sink,
    name_of: &'a dyn Fn(u64) -> String,
    schema: SchemaRef,
    props: WriterProperties,
    target: usize,
    open: Option<OpenFile>,
    done: Vec<WrittenFile>,
}

impl Out<'_> {
    pub(super) async fn write(&mut self, batch: &RecordBatch) -> Result<(), SinkError> {
        if self.open.is_none() {
            let rel = (self.name_of)(self.done.len() as u64);
            let file = OpenFile::create_with(self.sink, hidden_name(&rel), self.schema.clone(), self.props.clone())?;
            self.open = Some(file);
        }
        let Some(f) = self.open.as_mut() else {
            return Ok(());
        };
        f.write(batch).await?;
        f.rows += batch.num_rows() as u64;
        crate::util::failpoint::hit("compact-writing");
        if f.writer.bytes_written() + f.writer.in_progress_size() >= self.target {
            self.roll().await?;
        }
        Ok(())
    }

    async fn roll(&mut self) -> Result<(), SinkError> {
        if let Some(f) = self.open.take() {
            let rows = f.rows;
            let (hidden, checksum) = f.close().await?;
            let bytes = make_durable(self.sink, &hidden).await?;
            let rel = (self.name_of)(self.done.len() as u64);
            self.done.push(WrittenFile {
                rel,
                rows,
                bytes,
                checksum,
            });
        }
        Ok(())
    }

    async fn abort(&mut self) {
        if let Some(f) = self.open.take() {
            f.abort().await;
        }
    }
}

/// Why a merge stopped.
pub(super) enum Stop {
    Unsorted,
    Failed(SinkError),
}

impl From<SinkError> for Stop {
    fn from(e: SinkError) -> Stop {
        Stop::Failed(e)
    }
}

impl Sink {
    /// Merges `inputs` (`(rel, bytes)`: files of one partition and table)
    /// into hidden files whose final names are `name_of(0)`, `name_of(1)`,
    /// …, each of about `target` bytes, sorted by the table's natural key
    /// where the inputs allow it. Outputs of an earlier attempt under the
    /// same names are overwritten.
    pub async fn merge(&self, inputs: &[(String, u64)], name_of: &dyn Fn(u64) -> String, target: usize) -> Result<Merged, SinkError> {
        match self.merge_once(inputs, name_of, target, true).await {
            Ok(m) => Ok(m),
            Err(Stop::Failed(e)) => Err(e),
            Err(Stop::Unsorted) => {
                tracing::info!(
                    "compaction: rows of {} are not in key order; its compacted files do not declare a sort order",
                    inputs.first().map(|(r, _)| r.as_str()).unwrap_or("")
                );
                match self.merge_once(inputs, name_of, target, false).await {
                    Ok(m) => Ok(m),
                    Err(Stop::Failed(e)) => Err(e),
                    Err(Stop::Unsorted) => unreachable!("an unsorted merge checks no order"),
                }
            }
        }
    }

    async fn merge_once(
        &self,
        inputs: &[(String, u64)],
        name_of: &dyn Fn(u64) -> String,
        target: usize,
        sorted: bool,
    ) -> Result<Merged, Stop> {
        let mut opened = Vec::with_capacity(inputs.len());
        for (rel, bytes) in inputs {
            opened.push(self.open_input(rel, *bytes).await?);
        }
        let Some(first) = opened.first().and_then(|i| i.builder.as_ref()) else {
            return Ok(Merged {
                files: Vec::new(),
                rows: 0,
                sorted,
            });
        };
        let (schema, _) = self.file_columns(first.schema());
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let key: Vec<usize> = natural_key(&names)
            .iter()
            .filter_map(|k| names.iter().position(|n| n == k))
            .collect();
        let props = if sorted {
            let key_names: Vec<&str> = key.iter().map(|&i| names[i]).collect();
            sorted_by(&self.props, &schema, &key_names)?
        } else {
            self.props.clone()
        };
        let rows: u64 = opened.iter().map(|i| i.rows).sum();
        let mut out = Out {
            sink: self,
            name_of,
            schema: schema.clone(),
            props,
            target,
            open: None,
            done: Vec::new(),
        };
        let mut merge = Merger::new(&schema, &key, sorted).map_err(|e| self.failed("(schema)", e))?;
        let result = async {
            for cluster in clusters(&mut opened) {
                merge.cluster(&mut opened, &cluster, &mut out).await?;
            }
            out.roll().await?;
            Ok(())
        }
        .await;
        if let Err(e) = result {
            out.abort().await;
            // A retry without the sort order may write fewer outputs: none
            // of this attempt's may be left behind.
            for f in &out.done {
                let _ = self.delete(&hidden_name(&f.rel)).await;
            }
            return Err(e);
        }
        let written: u64 = out.done.iter().map(|f| f.rows).sum();
        if written != rows {
            return Err(Stop::Failed(self.failed(
                &name_of(0),
                format!("compaction wrote {written} rows of the inputs' {rows}").into(),
            )));
        }
        Ok(Merged {
            files: out.done,
            rows,
            sorted,
        })
    }

    fn failed(&self, rel: &str, e: Box<dyn std::error::Error + Send + Sync>) -> SinkError {
        SinkError::Write {
            path: rel.into(),
            source: e,
        }
    }

    /// Opens an input's footer: its reader, rows, and first key's range.
    async fn open_input(&self, rel: &str, bytes: u64) -> Result<Input, SinkError> {
        let reader = StoreReader::new(self.store.clone(), self.path(rel), bytes);
        let builder = ParquetRecordBatchStreamBuilder::new(reader).await.map_err(|e| SinkError::Read {
            path: rel.into(),
            source: Box::new(e),
        })?;
        let meta = builder.metadata().clone();
        let rows = meta.file_metadata().num_rows().max(0) as u64;
        let names: Vec<&str> = builder.schema().fields().iter().map(|f| f.name().as_str()).collect();
        let first_key = natural_key(&names).first().copied();
        let leaf = first_key.and_then(|k| builder.parquet_schema().columns().iter().position(|c| c.path().string() == k));
        let range = leaf.and_then(|leaf| {
            let mut range: Option<(Bound, Bound)> = None;
            for rg in meta.row_groups() {
                let (lo, hi) = bounds(rg.column(leaf).statistics()?)?;
                range = Some(match range {
                    None => (lo, hi),
                    Some((a, b)) => (a.min(lo), b.max(hi)),
                });
            }
            range
        });
        let mem_bytes = meta.row_groups().iter().map(|rg| rg.total_byte_size().max(0) as u64).sum();
        Ok(Input {
            rel: rel.into(),
            builder: Some(builder),
            rows,
            mem_bytes,
            range,
        })
    }

    /// Makes a merged file visible under its final name: renames it from
    /// its hidden name. Idempotent: a file already renamed is left as it is.
    pub async fn publish(&self, rel: &str) -> Result<(), SinkError> {
        let hidden = self.path(&hidden_name(rel));
        match self.store.rename(&hidden, &self.path(rel)).await {
            Ok(()) => Ok(()),
            Err(object_store::Error::NotFound { .. }) => match self.store.head(&self.path(rel)).await {
                Ok(_) => Ok(()),
                Err(e) => Err(self.failed(rel, Box::new(e))),
            },
            Err(e) => Err(self.failed(rel, Box::new(e))),
        }
    }
}

/// The min and max a column chunk's statistics give, for the key types.
fn bounds(s: &Statistics) -> Option<(Bound, Bound)> {
    match s {
        Statistics::Int64(v) => Some((Bound::Int(*v.min_opt()?), Bound::Int(*v.max_opt()?))),
        Statistics::ByteArray(v) => Some((
            Bound::Bytes(v.min_opt()?.data().to_vec()),
            Bound::Bytes(v.max_opt()?.data().to_vec()),
        )),
        _ => None,
    }
}

/// Inputs grouped so that groups follow each other in key order: inputs
/// sorted by their first key's minimum, and an input joins the group
/// before it when its range overlaps that group's. An input without a
/// range joins one group with every input.
fn clusters(inputs: &mut [Input]) -> Vec<Vec<usize>> {
    if inputs.iter().any(|i| i.range.is_none()) {
        return vec![(0..inputs.len()).collect()];
    }
    let mut order: Vec<usize> = (0..inputs.len()).collect();
    order.sort_by(|&a, &b| inputs[a].range.cmp(&inputs[b].range).then(inputs[a].rel.cmp(&inputs[b].rel)));
    let mut groups: Vec<(Vec<usize>, Bound)> = Vec::new();
    for i in order {
        let Some((lo, hi)) = inputs[i].range.clone() else {
            continue;
        };
        match groups.last_mut() {
            Some((members, end)) if lo <= *end => {
                members.push(i);
                if hi > *end {
                    *end = hi;
                }
            }
            _ => groups.push((vec![i], hi)),
        }
    }
    groups.into_iter().map(|(m, _)| m).collect()
}
