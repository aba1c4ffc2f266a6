//! The files and bytes of each table that readers see: the one source of
//! the files and bytes `status` (text and JSON), `report` (page and JSON)
//! and `verify` show.
//!
//! # Invariants
//!
//! - **What readers see, never what was written.** Where the format
//!   records a table's files (Delta's log, Iceberg's snapshots), the files
//!   of its current version, with the sizes it records; else (`parquet`)
//!   the job's files in the table's folder, which a reader globbing
//!   `**/*.parquet` reads. Files kept only for earlier versions, unit files
//!   a compaction or a rewrite replaced, and compacted files not yet
//!   revealed (`_<name>.pending`) are not counted. Checkpoints count what
//!   units wrote, which compaction and rewrites change: they are never the
//!   source of these figures.
//! - **The job's files only** (names that parse as its own, as everywhere
//!   in [`super`]): another job's files in a shared folder are its own.
//! - **Every table of the spec has a line**, 0 files where it holds none,
//!   in the order of the table names.
//! - **One counting function** ([`LiveTable::tally`]) over one listing
//!   ([`StateStore::live_files`]); `verify` tallies the listing it checks.

use super::{JobFile, Listed, StateError, StateStore};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// One table's files that readers see, and their bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveTable {
    /// Its directory under the output.
    pub table: String,
    /// Files.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Of those, compacted files.
    #[serde(skip)]
    pub compacted_files: u64,
}

impl LiveTable {
    /// One line a table of `tables` (in their order), counting the files
    /// of `listed` under it; hidden compaction outputs are not counted.
    pub fn tally(tables: &BTreeSet<String>, listed: &[Listed]) -> Vec<LiveTable> {
        tables
            .iter()
            .map(|t| {
                let dir = format!("{t}/");
                let files: Vec<&Listed> = listed
                    .iter()
                    .filter(|f| f.rel.starts_with(&dir) && !matches!(f.kind, JobFile::Hidden(_)))
                    .collect();
                LiveTable {
                    table: t.clone(),
                    files: files.len() as u64,
                    bytes: files.iter().map(|f| f.bytes).sum(),
                    compacted_files: files.iter().filter(|f| matches!(f.kind, JobFile::Compacted(..))).count() as u64,
                }
            })
            .collect()
    }

    /// Files and bytes over `tables`.
    pub fn total(tables: &[LiveTable]) -> (u64, u64) {
        tables.iter().fold((0, 0), |(f, b), t| (f + t.files, b + t.bytes))
    }
}

impl StateStore {
    /// The job's files under `tables` that readers see (see the module
    /// doc): the tables' current versions where the format records them,
    /// else the job's files in the folders, hidden ones left out.
    pub async fn live_files(&self, tables: &BTreeSet<String>) -> Result<Vec<Listed>, StateError> {
        Ok(match self.list_live_files(tables).await? {
            Some(live) => live,
            None => self
                .list_files(tables)
                .await?
                .into_iter()
                .filter(|f| !matches!(f.kind, JobFile::Hidden(_)))
                .collect(),
        })
    }

    /// [`LiveTable::tally`] of [`StateStore::live_files`].
    pub async fn live_tables(&self, tables: &BTreeSet<String>) -> Result<Vec<LiveTable>, StateError> {
        Ok(LiveTable::tally(tables, &self.live_files(tables).await?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(rel: &str, kind: JobFile, bytes: u64) -> Listed {
        Listed {
            rel: rel.into(),
            kind,
            bytes,
        }
    }

    #[test]
    fn every_table_has_a_line_and_hidden_files_are_not_counted() {
        let tables: BTreeSet<String> = ["blocks", "events", "tokens"].map(String::from).into();
        let files = [
            listed("blocks/chain=base/a.parquet", JobFile::Unit("u".into(), 0), 10),
            listed("blocks/chain=base/b.parquet", JobFile::Compacted(1, 0), 20),
            listed("blocks/chain=base/_c.pending", JobFile::Hidden(2), 40),
            listed("events/x.parquet", JobFile::Unit("v".into(), 3), 5),
            // Not under a table of the spec's.
            listed("blocks2/y.parquet", JobFile::Unit("w".into(), 0), 7),
        ];
        let got = LiveTable::tally(&tables, &files);
        let line = |table: &str, files, bytes, compacted_files| LiveTable {
            table: table.into(),
            files,
            bytes,
            compacted_files,
        };
        assert_eq!(
            got,
            vec![line("blocks", 2, 30, 1), line("events", 1, 5, 0), line("tokens", 0, 0, 0)]
        );
        assert_eq!(LiveTable::total(&got), (3, 35));
    }
}
