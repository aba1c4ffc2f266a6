//! Compaction's data side: merging one partition's files into files of
//! about a target size, rows sorted by the table's natural key
//! ([`crate::decode::natural_key`]). Which files, when, and the record
//! that makes the swap exactly-once are the caller's ([`crate::state`],
//! [`crate::job`]).
//!
//! # Invariants
//!
//! - **Nothing visible until revealed.** Outputs are written under a
//!   hidden name ([`hidden_name`]: `_` first, no `.parquet` last, so neither
//!   engines listing a directory nor `*.parquet` globs read it) and become
//!   visible only through [`Sink::reveal`], a rename, which the caller
//!   does after recording them.
//! - **Rows unchanged.** The outputs hold exactly the inputs' rows: their
//!   counts are checked against the inputs' footers before
//!   [`Sink::merge`] returns.
//! - **Declared order is true.** Outputs declare their sorting columns only
//!   when every row was checked to follow the one before; inputs that are
//!   not sorted (a server that returned pages out of order) give outputs
//!   without the declaration, never a false one.
//! - **Bounded memory, little CPU.** Inputs whose key ranges (from their
//!   footers' statistics) do not overlap are copied one after another: row
//!   group by row group without decoding ([`super::splice`]) where their
//!   encoding allows, else decoded batch by batch. Only inputs that overlap
//!   are merged, each read in small batches. An output file holds either
//!   copied or encoded row groups, so a partition mixing both gets a new
//!   file where one kind follows the other. A copied row group stays the
//!   size it was, so a partition whose inputs hold fewer than
//!   [`MIN_COPIED_ROW_GROUP_ROWS`] rows per row group on average (a
//!   portfolio's or tokens' files of a few rows each) is re-encoded whole:
//!   copying would leave readers a footer of thousands of tiny row groups.

use super::clusters::{clusters, first_key_range, runs};
use super::encoding::for_schema;
use super::layout::hidden_name;
use super::merge::Merger;
use super::merge_input::Input;
use super::merge_output::{Out, Stop};
use super::reader::StoreReader;
use super::splice;
use super::{Sink, SinkError, WrittenFile};
use crate::decode::natural_key;
use object_store::ObjectStoreExt;
use parquet::arrow::ParquetRecordBatchStreamBuilder;
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::file::metadata::PageIndexPolicy;
use parquet::file::properties::WriterProperties;

/// Fewest rows per row group, on average over a partition's inputs, for
/// copying them as they are (see the module's invariants): row groups
/// smaller than this cost readers more in footer and page overhead than
/// re-encoding costs once.
pub(super) const MIN_COPIED_ROW_GROUP_ROWS: u64 = 256;

/// One file to merge.
#[derive(Debug, Clone)]
pub struct MergeInput {
    /// Path relative to the output root.
    pub rel: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// The checksum it was committed with ([`crate::storage::checksum`]): an input
    /// is copied without decoding only when its bytes are checked against
    /// one, so compaction never carries damaged bytes into a new file.
    pub checksum: Option<String>,
}

/// What a merge wrote.
#[derive(Debug)]
pub struct Merged {
    /// The outputs, under their final names (still hidden: see [`Sink::reveal`]).
    pub files: Vec<WrittenFile>,
    /// Rows read from the inputs.
    pub rows: u64,
    /// Rows of each input, in the order given (its footer's count).
    pub input_rows: Vec<u64>,
    /// Whether the outputs declare their sort order.
    pub sorted: bool,
}

impl Sink {
    /// Merges `inputs` (`(rel, bytes)`: files of one partition and table)
    /// into hidden files whose final names are `name_of(0)`, `name_of(1)`,
    /// …, each of about `target` bytes, sorted by the table's natural key
    /// where the inputs allow it. Outputs of an earlier attempt under the
    /// same names are overwritten.
    pub async fn merge(&self, inputs: &[MergeInput], name_of: &dyn Fn(u64) -> String, target: usize) -> Result<Merged, SinkError> {
        match self.merge_once(inputs, name_of, target, true).await {
            Ok(m) => Ok(m),
            Err(Stop::Failed(e)) => Err(e),
            Err(Stop::Unsorted) => {
                tracing::info!(
                    "compaction: rows of {} are not in key order; its compacted files do not declare a sort order",
                    inputs.first().map(|i| i.rel.as_str()).unwrap_or("")
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
        inputs: &[MergeInput],
        name_of: &dyn Fn(u64) -> String,
        target: usize,
        sorted: bool,
    ) -> Result<Merged, Stop> {
        let mut opened = Vec::with_capacity(inputs.len());
        for input in inputs {
            opened.push(self.open_input(input).await?);
        }
        let Some(first) = opened.first().and_then(|i| i.builder.as_ref()) else {
            return Ok(Merged {
                files: Vec::new(),
                rows: 0,
                input_rows: vec![0; opened.len()],
                sorted,
            });
        };
        // Files of a partition written by releases with other columns (one
        // added since) are not merged: taking the first one's columns
        // would drop a newer column's values, or fail on every run. The
        // partition stays as it is, said as skipped.
        let columns = |s: &arrow_schema::Schema| -> Vec<String> { s.fields().iter().map(|f| f.name().clone()).collect() };
        let want = columns(first.schema());
        if let Some(other) = opened
            .iter()
            .find(|i| i.builder.as_ref().is_some_and(|b| columns(b.schema()) != want))
        {
            return Err(Stop::Failed(SinkError::Read {
                path: other.rel.clone(),
                source: format!(
                    "its columns differ from {}'s (a release that added a column wrote one of them): files of \
                     different columns are not merged",
                    opened[0].rel
                )
                .into(),
            }));
        }
        let table = opened[0].rel.split('/').next().unwrap_or_default();
        let (schema, _) = self.file_schema(table, first.schema());
        let (key, props) = self.output_encoding(&schema, sorted);
        let input_rows: Vec<u64> = opened.iter().map(|i| i.rows).collect();
        let rows: u64 = input_rows.iter().sum();
        let mut out = Out::new(self, name_of, schema.clone(), props, target);
        let mut merge = Merger::new(&schema, &key, sorted).map_err(|e| self.failed("(schema)", e))?;
        let descr = parquet::arrow::ArrowSchemaConverter::new()
            .convert(&schema)
            .map_err(|e| self.failed("(schema)", Box::new(e)))?;
        let sorting = out.props.sorting_columns().filter(|_| sorted).cloned();
        let key_fields: Vec<arrow_schema::FieldRef> = key.iter().map(|&i| schema.fields()[i].clone()).collect();
        let groups: u64 = opened.iter().map(|i| i.meta.num_row_groups() as u64).sum();
        let copying = groups > 0 && rows / groups >= MIN_COPIED_ROW_GROUP_ROWS;
        let result = async {
            for cluster in clusters(&opened) {
                let runs = match copying {
                    true => runs(self, &opened, cluster, &key_fields, sorting.as_ref()).await?,
                    false => vec![cluster],
                };
                for run in runs {
                    match run[..] {
                        [i] if copying && splice::copyable(&opened[i], &schema, &descr, sorting.as_ref()) => out.copy(&opened[i]).await?,
                        _ => merge.cluster(&mut opened, &run, &mut out).await?,
                    }
                }
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
            input_rows,
            sorted,
        })
    }

    /// The key columns of outputs of `schema` (indexes), and their writer
    /// properties: declaring the key as their sort order when `sorted`.
    fn output_encoding(&self, schema: &arrow_schema::Schema, sorted: bool) -> (Vec<usize>, WriterProperties) {
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let key: Vec<usize> = natural_key(&names)
            .iter()
            .filter_map(|k| names.iter().position(|n| n == k))
            .collect();
        let key_names: Vec<&str> = if sorted {
            key.iter().map(|&i| names[i]).collect()
        } else {
            Vec::new()
        };
        let props = for_schema(&self.props, schema, &key_names);
        (key, props)
    }

    fn failed(&self, rel: &str, e: Box<dyn std::error::Error + Send + Sync>) -> SinkError {
        SinkError::Write {
            path: rel.into(),
            source: e,
        }
    }

    /// Opens an input's footer: its reader, rows, and first key's range.
    async fn open_input(&self, input: &MergeInput) -> Result<Input, SinkError> {
        let (rel, bytes) = (input.rel.as_str(), input.bytes);
        let reader = StoreReader::new(self.storage().store().clone(), self.storage().path(rel), bytes);
        let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional);
        let builder = ParquetRecordBatchStreamBuilder::new_with_options(reader, options)
            .await
            .map_err(|e| SinkError::Read {
                path: rel.into(),
                source: Box::new(e),
            })?;
        let meta = builder.metadata().clone();
        let rows = meta.file_metadata().num_rows().max(0) as u64;
        let range = first_key_range(&meta, builder.schema());
        let mem_bytes = meta.row_groups().iter().map(|rg| rg.total_byte_size().max(0) as u64).sum();
        Ok(Input {
            rel: rel.into(),
            bytes,
            checksum: input.checksum.clone(),
            builder: Some(builder),
            meta,
            rows,
            mem_bytes,
            range,
        })
    }

    /// Makes a merged file visible under its final name: renames it from
    /// its hidden name. Idempotent: a file already renamed is left as it is.
    pub async fn reveal(&self, rel: &str) -> Result<(), SinkError> {
        let hidden = self.storage().path(&hidden_name(rel));
        match self.storage().store().rename(&hidden, &self.storage().path(rel)).await {
            Ok(()) => Ok(()),
            Err(object_store::Error::NotFound { .. }) => match self.storage().store().head(&self.storage().path(rel)).await {
                Ok(_) => Ok(()),
                Err(e) => Err(self.failed(rel, Box::new(e))),
            },
            Err(e) => Err(self.failed(rel, Box::new(e))),
        }
    }
}
