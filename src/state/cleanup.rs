//! Cleanup of what dead writers leave behind: data files of uncommitted
//! work (orphans, invariant 1 of [`super`]), temporary state files, and
//! local staging files of unfinished uploads. Each removes only names this
//! job wrote.

use super::{JobFile, StateError, StateStore, UnitState};
use crate::plan::Unit;
use std::collections::{BTreeSet, HashMap, HashSet};

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
