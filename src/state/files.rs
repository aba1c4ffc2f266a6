//! The job's data files, found by name: only names this job wrote (its
//! exact name, a unit id, a sequence; invariant 4 of [`super`]) count,
//! never a file of another job sharing the output.

use super::compactions::JobFile;
use super::{StateError, StateStore};
use std::collections::BTreeSet;

impl StateStore {
    /// This job's data files under the given tables (directories under the
    /// output: a dataset's, or a decoded table's): `(rel, unit, seq)`.
    pub(super) async fn data_files(&self, tables: &BTreeSet<String>) -> Result<Vec<(String, String, u64)>, StateError> {
        Ok(self
            .data_files_sized(tables)
            .await?
            .into_iter()
            .map(|(rel, unit, seq, _)| (rel, unit, seq))
            .collect())
    }

    /// This job's data files, and their sizes: `(rel, unit, seq, bytes)`.
    pub(super) async fn data_files_sized(&self, tables: &BTreeSet<String>) -> Result<Vec<(String, String, u64, u64)>, StateError> {
        Ok(self
            .list_files(tables)
            .await?
            .into_iter()
            .filter_map(|f| match f.kind {
                JobFile::Unit(unit, seq) => Some((f.rel, unit, seq, f.bytes)),
                _ => None,
            })
            .collect())
    }

    /// This job's data files under `tables` of units whose id starts with
    /// `unit_prefix`: `(rel, unit)`.
    pub async fn unit_files(&self, tables: &BTreeSet<String>, unit_prefix: &str) -> Result<Vec<(String, String)>, StateError> {
        Ok(self
            .data_files(tables)
            .await?
            .into_iter()
            .filter(|(_, unit, _)| unit.starts_with(unit_prefix))
            .map(|(rel, unit, _)| (rel, unit))
            .collect())
    }

    /// Deletes one data file (reorg repair, compaction inputs and leftovers).
    pub async fn delete_data(&self, rel: &str) -> Result<(), StateError> {
        Ok(self.sink.delete(rel).await?)
    }
}
