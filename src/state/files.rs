//! The job's data files, found by name: only names this job wrote (its
//! exact name, a unit id, a sequence; invariant 4 of [`super`]) count,
//! never a file of another job sharing the output.
//!
//! # Cleanup
//!
//! Cleanup of what dead writers leave behind: data files of uncommitted
//! work (orphans, invariant 1 of [`super`]), temporary state files, and
//! local staging files of unfinished uploads. Each removes only names this
//! job wrote.
//!
//! # `--fresh`
//!
//! `--fresh`: deleting a job's data files and state, crash-safely
//! (invariant 6 of [`super`]): the `clearing.json` marker goes first and
//! is removed last, state goes before data.

use super::compactions::JobFile;
use super::{StateError, StateStore, UnitState};
use crate::plan::Unit;
use std::collections::{BTreeSet, HashMap, HashSet};

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

impl StateStore {
    /// Deletes files of `units` under `tables` that no checkpoint covers
    /// (written after the unit's last commit by a run that died), and local
    /// staging leftovers of `units` and of compaction (not of other units:
    /// another shard may be writing them). Returns how many were removed.
    ///
    /// Only units not done can have orphans: a unit's last commit (done)
    /// counts every file it wrote, and nothing writes a done unit's files
    /// again (a unit exported again has lost its checkpoint first, so it is
    /// not done). So when every unit of `units` is done — a re-run with
    /// nothing to do — the output is not listed at all, which on an object
    /// store is a request per thousand files. Local staging files are
    /// still swept (a directory walk, no request), since a compaction
    /// killed mid-write leaves them too.
    pub async fn remove_orphans(
        &self,
        units: &[Unit],
        states: &HashMap<String, UnitState>,
        tables: &BTreeSet<String>,
    ) -> Result<usize, StateError> {
        let ours: HashSet<String> = units.iter().map(|u| u.id.clone()).collect();
        // Another shard may be uploading its own units' files right now;
        // compaction never runs beside a shard (the whole job's lease).
        let staging_of = ours.clone();
        let mut removed = self
            .remove_staging(tables, move |f| match f {
                JobFile::Unit(unit, _) => staging_of.contains(unit),
                JobFile::Compacted(..) | JobFile::Hidden(..) => true,
            })
            .await;
        if units.iter().all(|u| states.get(&u.id).is_some_and(|s| s.done)) {
            return Ok(removed);
        }
        for (rel, unit, seq) in self.data_files(tables).await? {
            if !ours.contains(&unit) {
                continue;
            }
            let committed = states.get(&unit).map_or(0, |s| s.next_seq);
            if seq >= committed {
                self.sink.delete(&rel).await?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// Temporary state files left by writers that died mid-write (their
    /// names are unique per process, so nothing else replaces them). Only
    /// called while holding the whole job's lease: no live writer has one
    /// open (a shard's lease would not exclude the other shards' writes).
    /// Object stores write state in single PUTs and leave none.
    pub async fn remove_stale_tmp(&self) -> usize {
        self.storage()
            .remove_leftovers(std::slice::from_ref(&self.dir), |name| name.ends_with(".tmp"))
            .await
    }

    /// Staging files (`<file>#<n>`) of unfinished uploads of this job's
    /// files that `which` selects.
    pub(super) async fn remove_staging(&self, tables: &BTreeSet<String>, which: impl Fn(&JobFile) -> bool + Send + 'static) -> usize {
        let tables: Vec<String> = tables.iter().cloned().collect();
        let job = self.job.clone();
        self.storage()
            .remove_leftovers(&tables, move |name| {
                name.split_once('#')
                    .and_then(|(file, _)| super::compactions::classify(&job, file))
                    .is_some_and(|f| which(&f))
            })
            .await
    }
}

impl StateStore {
    /// Marker of a `--fresh` in progress: while it exists the job's state
    /// and files cannot be trusted, so every run finishes the clearing first.
    fn clearing_marker(&self) -> String {
        format!("{}/clearing.json", self.dir)
    }

    /// Whether a `--fresh` was interrupted before it finished.
    pub async fn clear_interrupted(&self) -> Result<bool, StateError> {
        Ok(self.read(&self.clearing_marker()).await?.is_some())
    }

    /// `--fresh`: deletes the job's data files and its state. Crash-safe: the
    /// marker goes first and state before data, because checkpoints that
    /// outlived their files would make a later run skip units whose rows are
    /// gone; a run that finds the marker finishes the clearing.
    pub async fn clear(&self, tables: &BTreeSet<String>) -> Result<usize, StateError> {
        let marker = self.clearing_marker();
        self.write_doc(&marker, &serde_json::json!({ "started_at": chrono::Utc::now().to_rfc3339() }))
            .await?;
        let leases = format!("{}/leases/", self.dir);
        for m in self.list(&self.dir).await? {
            let rel = self.storage().rel_of(&m.location);
            // The lease is the clearing run's own: it outlives the clearing.
            if rel != marker && !rel.starts_with(&leases) {
                self.sink.delete(&rel).await?;
            }
        }
        let mut removed = 0;
        for f in self.list_files(tables).await? {
            self.sink.delete(&f.rel).await?;
            crate::util::failpoint::hit("during-fresh");
            removed += 1;
        }
        removed += self.remove_staging(tables, |_| true).await;
        self.sink.delete(&marker).await?;
        Ok(removed)
    }
}
