//! Which of a partition's compaction inputs overlap in key order: those
//! that do are merged, the rest are written one after another (see
//! [`super::compact`]).
//!
//! Footers give each input's range of its *first* key column, which is
//! enough to group inputs ([`clusters`]) but too coarse within a group:
//! consecutive files of one unit usually share the block at their seam.
//! [`runs`] splits such a group by the exact first and last keys of inputs
//! that declare the output's sort order (read from one page per key
//! column), so only inputs whose rows truly interleave are merged.

use super::merge_input::{Bound, Input};
use super::reader::StoreReader;
use super::{Sink, SinkError};
use arrow_array::RecordBatch;
use arrow_row::{OwnedRow, RowConverter, SortField};
use arrow_schema::{FieldRef, Schema};
use futures::TryStreamExt;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions, RowSelection, RowSelector};
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};
use parquet::file::metadata::{ParquetMetaData, SortingColumn};
use parquet::file::statistics::Statistics;

/// The range of the first natural-key column of a file with footer `meta`
/// and Arrow schema `schema`, from its row groups' statistics.
pub(super) fn first_key_range(meta: &ParquetMetaData, schema: &Schema) -> Option<(Bound, Bound)> {
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let first_key = crate::decode::natural_key(&names).first().copied()?;
    let descr = meta.file_metadata().schema_descr();
    let leaf = descr.columns().iter().position(|c| c.path().string() == first_key)?;
    let mut range: Option<(Bound, Bound)> = None;
    for rg in meta.row_groups() {
        let (lo, hi) = bounds(rg.column(leaf).statistics()?)?;
        range = Some(match range {
            None => (lo, hi),
            Some((a, b)) => (a.min(lo), b.max(hi)),
        });
    }
    range
}

/// The min and max a column chunk's statistics give, for the key types.
fn bounds(s: &Statistics) -> Option<(Bound, Bound)> {
    match s {
        Statistics::Int32(v) => Some((Bound::Int(i64::from(*v.min_opt()?)), Bound::Int(i64::from(*v.max_opt()?)))),
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
pub(super) fn clusters(inputs: &[Input]) -> Vec<Vec<usize>> {
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

/// `cluster` split into runs that follow each other in full key order
/// (`key`: the output's key columns): each run's first row comes after
/// every row of the runs before it. Only when every member declares
/// `sorting` on every row group (so its first and last rows are its
/// smallest and largest keys); otherwise, or in an unsorted compaction
/// (`sorting` None), the cluster stays whole.
pub(super) async fn runs(
    sink: &Sink,
    inputs: &[Input],
    cluster: Vec<usize>,
    key: &[FieldRef],
    sorting: Option<&Vec<SortingColumn>>,
) -> Result<Vec<Vec<usize>>, SinkError> {
    let Some(sorting) = sorting else {
        return Ok(vec![cluster]);
    };
    if cluster.len() < 2 || key.is_empty() {
        return Ok(vec![cluster]);
    }
    let error = |rel: &str, e: Box<dyn std::error::Error + Send + Sync>| SinkError::Read {
        path: rel.into(),
        source: e,
    };
    let conv =
        RowConverter::new(key.iter().map(|f| SortField::new(f.data_type().clone())).collect()).map_err(|e| error("(key)", Box::new(e)))?;
    let mut ends: Vec<(OwnedRow, OwnedRow, usize)> = Vec::with_capacity(cluster.len());
    for &i in &cluster {
        let input = &inputs[i];
        let declared = input.meta.row_groups().iter().all(|rg| rg.sorting_columns() == Some(sorting));
        if !declared || input.rows == 0 {
            return Ok(vec![cluster]);
        }
        let Some((first, last)) = first_and_last(sink, input, key, &conv).await.map_err(|e| error(&input.rel, e))? else {
            return Ok(vec![cluster]);
        };
        ends.push((first, last, i));
    }
    ends.sort_by(|a, b| a.0.cmp(&b.0).then(a.2.cmp(&b.2)));
    let mut out: Vec<(Vec<usize>, OwnedRow)> = Vec::new();
    for (first, last, i) in ends {
        match out.last_mut() {
            Some((members, end)) if first <= *end => {
                members.push(i);
                if last > *end {
                    *end = last;
                }
            }
            _ => out.push((vec![i], last)),
        }
    }
    Ok(out.into_iter().map(|(m, _)| m).collect())
}

/// The keys of `input`'s first and last rows, read from the pages that
/// hold them; None when its rows are not what its footer says.
async fn first_and_last(
    sink: &Sink,
    input: &Input,
    key: &[FieldRef],
    conv: &RowConverter,
) -> Result<Option<(OwnedRow, OwnedRow)>, Box<dyn std::error::Error + Send + Sync>> {
    let n = input.rows as usize;
    let mut selection = vec![RowSelector::select(1)];
    if n > 2 {
        selection.push(RowSelector::skip(n - 2));
    }
    if n > 1 {
        selection.push(RowSelector::select(1));
    }
    let meta = ArrowReaderMetadata::try_new(input.meta.clone(), ArrowReaderOptions::new())?;
    let mask = ProjectionMask::columns(input.meta.file_metadata().schema_descr(), key.iter().map(|f| f.name().as_str()));
    let reader = StoreReader::new(sink.storage().store().clone(), sink.storage().path(&input.rel), input.bytes);
    let batches: Vec<RecordBatch> = ParquetRecordBatchStreamBuilder::new_with_metadata(reader, meta)
        .with_projection(mask)
        .with_row_selection(RowSelection::from(selection))
        .build()?
        .try_collect()
        .await?;
    let mut columns = Vec::with_capacity(key.len());
    for f in key {
        let parts: Vec<&dyn arrow_array::Array> = batches
            .iter()
            .filter_map(|b| b.column_by_name(f.name()))
            .map(|c| c.as_ref())
            .collect();
        columns.push(arrow_select::concat::concat(&parts)?);
    }
    let rows = conv.convert_columns(&columns)?;
    if rows.num_rows() != n.min(2) {
        return Ok(None);
    }
    Ok(Some((rows.row(0).owned(), rows.row(rows.num_rows() - 1).owned())))
}
