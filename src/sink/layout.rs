//! Where a unit's files go and what they are named (the *Layout* section
//! of [`super`]): partition directories, and file names that say which
//! unit and sequence a file is, read back strictly.

use super::Sink;
use crate::vocab::chain::Chain;
use crate::vocab::window::date_string;
use arrow_schema::{Schema, SchemaRef};
use std::sync::Arc;

impl Sink {
    /// Partition directory of a row group: `<table>/chain=<c>/date=<d>`
    /// (`table`: a dataset's name, or a decoded table's).
    pub fn partition_dir(&self, table: &str, chain: Chain, day: Option<i32>) -> String {
        let mut dir = table.to_string();
        for key in &self.partition_by {
            match (key.as_str(), day) {
                ("chain", _) => dir.push_str(&format!("/chain={chain}")),
                ("date", Some(d)) => dir.push_str(&format!("/date={}", date_string(d))),
                _ => {}
            }
        }
        dir
    }

    pub(super) fn partitions_by_date(&self) -> bool {
        self.partition_by.iter().any(|k| k == "date")
    }

    /// The columns of `schema` that a file holds: all but the partition
    /// keys, which live only in the path (`chain`, and `date` where a table
    /// has that column). Spark and DuckDB write hive partitions the same
    /// way, and it is the one layout that every engine reads without a
    /// schema hint: a key both in the path and in the file makes pyarrow
    /// refuse to merge the path's string with the file's type.
    pub fn file_columns(&self, schema: &SchemaRef) -> (SchemaRef, Vec<usize>) {
        let keep: Vec<usize> = (0..schema.fields().len())
            .filter(|&i| !self.partition_by.iter().any(|k| k == schema.field(i).name()))
            .collect();
        let fields: Vec<_> = keep.iter().map(|&i| schema.field(i).clone()).collect();
        (Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())), keep)
    }
}

impl Sink {
    /// [`Sink::file_columns`] as a file of `table` is written in the
    /// output's format (with Iceberg's field ids).
    pub fn file_schema(&self, table: &str, schema: &SchemaRef) -> (SchemaRef, Vec<usize>) {
        let (columns, keep) = self.file_columns(schema);
        (self.format.file_schema(table, columns), keep)
    }
}

/// File name of sequence `seq` of a unit whose files are named
/// `<prefix>-…` (`prefix` is `<job>-<unit>`).
pub fn file_name(prefix: &str, seq: u64) -> String {
    format!("{prefix}-{seq:06}.parquet")
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

/// File name of output `seq` of generation `generation` of a job's
/// compaction of a partition: `<job>-compacted-<generation:06>-<seq:06>.parquet`.
/// No unit id starts with `compacted`, so it is never read as a unit's file.
pub fn compacted_name(job: &str, generation: u64, seq: u64) -> String {
    format!("{job}-compacted-{generation:06}-{seq:06}.parquet")
}

/// The generation and sequence of a compacted file's name without the
/// job's name (`compacted-<generation>-<seq>.parquet`), read strictly.
pub fn parse_compacted_name(name: &str) -> Option<(u64, u64)> {
    let stem = name.strip_prefix("compacted-")?.strip_suffix(".parquet")?;
    let (g, s) = stem.split_once('-')?;
    let digits = |x: &str| x.len() >= 6 && x.bytes().all(|b| b.is_ascii_digit());
    (digits(g) && digits(s)).then_some(())?;
    Some((g.parse().ok()?, s.parse().ok()?))
}

/// The hidden name an output has until it is revealed: `_<name>.pending`
/// in the same directory.
pub fn hidden_name(rel: &str) -> String {
    match rel.rsplit_once('/') {
        Some((dir, name)) => format!("{dir}/_{name}.pending"),
        None => format!("_{rel}.pending"),
    }
}
