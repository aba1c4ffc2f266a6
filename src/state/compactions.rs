//! Compaction records: `compacted/<partition key>.json`, one per partition
//! this job compacted (the partition's directory with `/` as `__`), and the
//! job's compacted files found by name.
//!
//! The record is what makes a compaction exactly-once (see *Compaction* in
//! [`super`]): the swap is recorded before any input is deleted, so a
//! crash at any moment leaves either the inputs (the outputs, still
//! hidden, are deleted) or the outputs (the inputs left are deleted).

use super::{Compaction, StateError, StateStore};
use crate::sink::parse_compacted_name;
use std::collections::BTreeSet;

/// One of the job's files under its tables, found by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobFile {
    /// A unit's file: unit id and sequence.
    Unit(String, u64),
    /// A published compacted file: generation and sequence.
    Compacted(u64, u64),
    /// A compacted file not yet published (`_<name>.pending`): generation.
    Hidden(u64),
}

/// A file of the job: where it is, what it is, its size.
#[derive(Debug, Clone)]
pub struct Listed {
    /// Path relative to the output root.
    pub rel: String,
    /// What its name says it is.
    pub kind: JobFile,
    /// Bytes.
    pub bytes: u64,
}

impl StateStore {
    /// `compacted/<partition, '/' as "__">.json`: a name of characters
    /// object stores keep as they are (no table name holds `=`, so two
    /// partitions never share one).
    fn compaction_path(&self, partition: &str) -> String {
        format!("{}/compacted/{}.json", self.dir, partition.replace('/', "__"))
    }

    /// Every compaction record of the job.
    pub async fn load_compactions(&self) -> Result<Vec<Compaction>, StateError> {
        self.load_dir("compacted").await
    }

    /// Writes a compaction record atomically.
    pub async fn save_compaction(&self, c: &Compaction) -> Result<(), StateError> {
        self.write_doc(&self.compaction_path(&c.partition), c).await
    }

    /// Deletes a partition's compaction record.
    pub async fn delete_compaction(&self, partition: &str) -> Result<(), StateError> {
        Ok(self.sink.delete(&self.compaction_path(partition)).await?)
    }

    /// Deletes one data file of the job (compaction inputs and leftovers).
    pub async fn delete_file(&self, rel: &str) -> Result<(), StateError> {
        Ok(self.sink.delete(rel).await?)
    }

    /// Every file of the job under `tables`, by name: unit files, compacted
    /// files and compacted files not yet published. Names of other jobs,
    /// and staging files, are not listed.
    pub async fn list_files(&self, tables: &BTreeSet<String>) -> Result<Vec<Listed>, StateError> {
        let mut out = Vec::new();
        for t in tables {
            for m in self.list(t).await? {
                let Some(name) = m.location.filename() else {
                    continue;
                };
                if let Some(kind) = self.classify(name) {
                    out.push(Listed {
                        rel: self.sink.rel_of(&m.location),
                        kind,
                        bytes: m.size,
                    });
                }
            }
        }
        Ok(out)
    }

    /// What file name `name` is to this job, if it is one of its files.
    pub(super) fn classify(&self, name: &str) -> Option<JobFile> {
        let prefix = format!("{}-", self.job);
        if let Some(hidden) = name.strip_prefix('_').and_then(|n| n.strip_suffix(".pending")) {
            let (generation, _) = parse_compacted_name(hidden.strip_prefix(&prefix)?)?;
            return Some(JobFile::Hidden(generation));
        }
        let rest = name.strip_prefix(&prefix)?;
        if let Some((generation, seq)) = parse_compacted_name(rest) {
            return Some(JobFile::Compacted(generation, seq));
        }
        let (unit, seq) = crate::sink::parse_file_name(rest)?;
        Some(JobFile::Unit(unit.to_string(), seq))
    }
}
