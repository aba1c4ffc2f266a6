//! Cleanup of what dead writers leave behind: data files of uncommitted
//! work (orphans, invariant 1 of [`super`]), temporary state files, and
//! local staging files of unfinished uploads. Each removes only names this
//! job wrote.

use super::{JobFile, StateError, StateStore, UnitState};
use crate::plan::Unit;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Deletes the files under `roots` (recursively) that `remove` selects;
/// returns how many were deleted. A directory that does not exist has
/// nothing to clean; one that cannot be read, or a file that cannot be
/// deleted, is logged and left: leftovers are harmless (listings and the
/// job's file names never include them) and the next run tries again.
fn remove_local_files(mut roots: Vec<PathBuf>, remove: impl Fn(&Path) -> bool) -> usize {
    let mut removed = 0;
    while let Some(dir) = roots.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                tracing::warn!("cleanup: cannot read {}: {e}", dir.display());
                continue;
            }
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                roots.push(p);
            } else if remove(&p) {
                match std::fs::remove_file(&p) {
                    Ok(()) => removed += 1,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => tracing::warn!("cleanup: cannot delete {}: {e}", p.display()),
                }
            }
        }
    }
    removed
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
        let ours: HashSet<&str> = units.iter().map(|u| u.id.as_str()).collect();
        // Another shard may be uploading its own units' files right now;
        // compaction never runs beside a shard (the whole job's lease).
        let mut removed = self.remove_local_staging(tables, |f| match f {
            JobFile::Unit(unit, _) => ours.contains(unit.as_str()),
            JobFile::Compacted(..) | JobFile::Hidden(..) => true,
        });
        if units.iter().all(|u| states.get(&u.id).is_some_and(|s| s.done)) {
            return Ok(removed);
        }
        for (rel, unit, seq) in self.data_files(tables).await? {
            if !ours.contains(unit.as_str()) {
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
    pub fn remove_stale_tmp(&self) -> usize {
        let Some(root) = self.sink.local_root() else {
            return 0;
        };
        remove_local_files(vec![root.join(&self.dir)], |p| p.extension().is_some_and(|x| x == "tmp"))
    }

    /// Local multipart staging files (`<file>#<n>`) of this job's files
    /// that `which` selects.
    pub(super) fn remove_local_staging(&self, tables: &BTreeSet<String>, which: impl Fn(&JobFile) -> bool) -> usize {
        let Some(root) = self.sink.local_root() else {
            return 0;
        };
        remove_local_files(tables.iter().map(|t| root.join(t)).collect(), |p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.split_once('#'))
                .and_then(|(file, _)| self.classify(file))
                .is_some_and(|f| which(&f))
        })
    }
}
