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
            .unit_file_seqs(tables, unit_prefix)
            .await?
            .into_iter()
            .map(|(rel, unit, _)| (rel, unit))
            .collect())
    }

    /// [`StateStore::unit_files`], with each file's sequence.
    pub async fn unit_file_seqs(&self, tables: &BTreeSet<String>, unit_prefix: &str) -> Result<Vec<(String, String, u64)>, StateError> {
        Ok(self
            .data_files(tables)
            .await?
            .into_iter()
            .filter(|(_, unit, _)| unit.starts_with(unit_prefix))
            .collect())
    }

    /// Whether the output's table format publishes committed files (see
    /// [`crate::sink::format::TableFormat::publishes`]).
    pub fn publishes(&self) -> bool {
        self.sink.format().publishes()
    }

    /// The output's table format.
    pub fn format(&self) -> &dyn crate::sink::format::TableFormat {
        self.sink.format()
    }

    /// The highest version application `app` recorded in any of
    /// `tables`: 0 where none (see
    /// [`crate::sink::format::TableFormat::recorded_version`]).
    pub async fn recorded_version<'a>(&self, tables: impl IntoIterator<Item = &'a str>, app: &str) -> Result<i64, StateError> {
        let mut top = 0;
        for table in tables {
            top = top.max(self.sink.format().recorded_version(&self.sink, table, app).await?);
        }
        Ok(top)
    }

    /// Whether file name `name` is one of this job's data files (a unit's
    /// or a compacted one).
    pub fn owns_data_file(&self, name: &str) -> bool {
        matches!(
            self.classify(name),
            Some(super::compactions::JobFile::Unit(..) | super::compactions::JobFile::Compacted(..))
        )
    }

    /// Deletes one data file (reorg repair, compaction inputs and leftovers).
    pub async fn delete_data(&self, rel: &str) -> Result<(), StateError> {
        Ok(self.sink.delete(rel).await?)
    }
}

impl StateStore {
    /// The sequence a unit without a checkpoint starts its files at: 0,
    /// or in the `delta` format after a `--fresh`, one above every file
    /// the job had (those stay on storage for the tables' earlier
    /// versions). Kept in `job.json`; set by [`StateStore::set_seq_floor`].
    pub fn seq_floor(&self) -> u64 {
        self.floor.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sets the floor (from the job's document).
    pub fn set_seq_floor(&self, floor: u64) {
        self.floor.store(floor, std::sync::atomic::Ordering::Relaxed);
    }

    /// The generation a partition's compactions start above: 0, or after
    /// a `--fresh`, every generation the job had taken. Kept in
    /// `job.json`; set by [`StateStore::set_generation_floor`].
    pub fn generation_floor(&self) -> u64 {
        self.generation_floor.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sets the generation floor (from the job's document).
    pub fn set_generation_floor(&self, floor: u64) {
        self.generation_floor.store(floor, std::sync::atomic::Ordering::Relaxed);
    }

    /// Deletes files of `units` under `tables` that no checkpoint covers
    /// (written after the unit's last commit by a run that died; in the
    /// `delta` format, units with files in a table that no checkpoint
    /// counts restart, `states` updated), and local
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
        states: &mut HashMap<String, UnitState>,
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
        // Where files are published: where units of incremental exports
        // start (above what a reorg repair rewound), and what a repair's
        // next segment replaces.
        let marks = if self.publishes() { self.load_marks().await? } else { Vec::new() };
        let replacing: HashSet<&str> = marks.iter().flat_map(|m| m.replacing.iter().map(String::as_str)).collect();
        // An incremental export's units (those with a mark) publish with
        // their segment: no table holds their files before it closes, and
        // what a repair re-plans is in the mark's `replacing`.
        let adoptable: HashSet<String> = units
            .iter()
            .filter(|u| !marks.iter().any(|m| m.export == u.export && m.chain == u.chain))
            .map(|u| u.id.clone())
            .collect();
        let (in_versions, restarted) = self.adopt_uncounted(&adoptable, states, tables, &replacing).await?;
        states.extend(restarted);
        let start: HashMap<&str, u64> = units
            .iter()
            .map(|u| {
                let rewound = marks
                    .iter()
                    .find(|m| m.export == u.export && m.chain == u.chain)
                    .map_or(0, |m| m.seq_floor);
                (u.id.as_str(), rewound.max(self.seq_floor()))
            })
            .collect();
        for (rel, unit, seq) in self.data_files(tables).await? {
            if !ours.contains(&unit) || in_versions.contains(&rel) || replacing.contains(rel.as_str()) {
                continue;
            }
            // Without a checkpoint, the unit's files from the floor on are
            // its own uncommitted ones; those below are an earlier
            // generation's, which Delta tables keep until `vacuum`.
            let floor = start.get(unit.as_str()).copied().unwrap_or_else(|| self.seq_floor());
            let committed = states.get(&unit).map_or(floor, |s| s.next_seq);
            if seq >= committed {
                self.sink.delete(&rel).await?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// The `delta` format's side of [`StateStore::remove_orphans`]: files
    /// of `units` in a table's current version that their checkpoint
    /// neither counts nor replaces (a checkpoint deleted by hand, or
    /// restored from an older backup). The log, not the checkpoint, says
    /// what readers see: the unit is restarted above them
    /// ([`StateStore::restart_units`]), and its new files replace them
    /// once it is done. Returns every file of the job the tables have
    /// (never deleted here) and the restarted units' new checkpoints.
    async fn adopt_uncounted(
        &self,
        units: &HashSet<String>,
        states: &HashMap<String, UnitState>,
        tables: &BTreeSet<String>,
        replacing: &HashSet<&str>,
    ) -> Result<(HashSet<String>, HashMap<String, UnitState>), StateError> {
        if units.is_empty() {
            return Ok(Default::default());
        }
        let Some(live) = self.list_live_files(tables).await? else {
            return Ok(Default::default());
        };
        let counted = |unit: &str, rel: &str, seq: u64| {
            replacing.contains(rel)
                || states.get(unit).is_some_and(|s| {
                    s.committed.iter().any(|f| f.path == rel)
                        || s.replaces.iter().any(|r| r == rel)
                        || (s.committed.is_empty() && s.files > 0 && seq < s.next_seq)
                })
        };
        let mut above: HashMap<String, u64> = HashMap::new();
        for f in &live {
            let JobFile::Unit(unit, seq) = &f.kind else { continue };
            if !units.contains(unit) || counted(unit, &f.rel, *seq) {
                continue;
            }
            let next = above.entry(unit.clone()).or_default();
            *next = (*next).max(seq + 1);
        }
        let in_tables: HashSet<String> = live.into_iter().map(|f| f.rel).collect();
        if above.is_empty() {
            return Ok((in_tables, HashMap::new()));
        }
        let ids: Vec<String> = above.keys().cloned().collect();
        tracing::warn!(
            units = ids.len(),
            "the {}s hold files of {} unit{} that no checkpoint counts (a checkpoint deleted or restored from a backup): \
             exporting {} again, to replace those files in one commit",
            self.sink.format().table_words(),
            ids.len(),
            if ids.len() == 1 { "" } else { "s" },
            if ids.len() == 1 { "it" } else { "them" },
        );
        self.restart_units(&ids, &above, tables, &[]).await?;
        let restarted = self
            .load_units()
            .await?
            .into_iter()
            .filter(|(id, _)| above.contains_key(id))
            .collect();
        Ok((in_tables, restarted))
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
    ///
    /// A table with a Delta log loses the job's files in one commit first
    /// (readers see all of them or none). In the `delta` format they then
    /// stay on storage for the versions before it (`vacuum` deletes them
    /// after the retention), and the job's file sequences go on above theirs
    /// ([`StateStore::seq_floor`]), so no name is ever written twice; in
    /// `parquet` they are deleted. Compactions go on above every generation
    /// the job had taken ([`StateStore::generation_floor`]): a killed run's
    /// upload of a compacted file may land after the clearing.
    pub async fn clear(&self, tables: &BTreeSet<String>) -> Result<Cleared, StateError> {
        let marker = self.clearing_marker();
        // The floors so far: the job's, or a clearing's killed part-way (in
        // its marker, since the job's document goes with the state). Read
        // as plain JSON: a document that no longer reads as what it was
        // (the state `--fresh` is the way out of) still gives its floors.
        let job_and_marker = self.plain_docs(&[format!("{}/job.json", self.dir), marker.clone()]).await?;
        let floor_of = |key: &str| job_and_marker.iter().filter_map(|d| d[key].as_u64()).max().unwrap_or(0);
        let previous = floor_of("seq_floor");
        let listed = self.list_files(tables).await?;
        let seq_floor = listed
            .iter()
            .filter_map(|f| match f.kind {
                JobFile::Unit(_, seq) => Some(seq + 1),
                _ => None,
            })
            .fold(previous, u64::max);
        // Generations a record keeps taken leave no file when rolled back
        // or dissolved: the records' own count, read as plain JSON too.
        let mut records: Vec<String> = self
            .list(&format!("{}/compacted/", self.dir))
            .await?
            .iter()
            .map(|m| self.storage().rel_of(&m.location))
            .collect();
        records.push(self.index_path());
        let recorded: Vec<serde_json::Value> = self
            .plain_docs(&records)
            .await?
            .into_iter()
            .flat_map(|d| match d.get("records") {
                Some(serde_json::Value::Array(all)) => all.clone(),
                _ => vec![d],
            })
            .collect();
        let generation_floor = listed
            .iter()
            .filter_map(|f| f.kind.generation())
            .chain(
                recorded
                    .iter()
                    .flat_map(|r| [&r["generation"], &r["rolled_back"], &r["pending"]["generation"]].map(|g| g.as_u64().unwrap_or(0))),
            )
            .fold(floor_of("generation_floor"), u64::max);
        self.write_doc(
            &marker,
            &serde_json::json!({
                "started_at": chrono::Utc::now().to_rfc3339(),
                "seq_floor": seq_floor,
                "generation_floor": generation_floor,
            }),
        )
        .await?;
        let mut in_versions: std::collections::HashMap<String, HashSet<String>> = Default::default();
        let job = self.job.clone();
        let owned: crate::sink::format::Owned = std::sync::Arc::new(move |name| super::compactions::classify(&job, name).is_some());
        for table in tables {
            if let Some(removed) = crate::sink::format::withdraw_everywhere(&self.sink, table, owned.clone()).await? {
                in_versions.insert(table.clone(), removed);
            }
        }
        let leases = format!("{}/leases/", self.dir);
        for m in self.list(&self.dir).await? {
            let rel = self.storage().rel_of(&m.location);
            // The lease is the clearing run's own: it outlives the clearing.
            if rel != marker && !rel.starts_with(&leases) {
                self.sink.delete(&rel).await?;
            }
        }
        let mut removed = 0;
        for f in listed {
            let table = f.rel.split('/').next().unwrap_or_default();
            // Kept for a table's earlier versions: what this change
            // withdrew, and files of earlier generations (below the floor
            // the job had) that an earlier one withdrew. A file no version
            // ever read (written in parquet, or uncommitted) goes.
            let earlier = matches!(f.kind, JobFile::Unit(_, seq) if seq < previous);
            let read_by_versions = in_versions.get(table).is_some_and(|r| r.contains(&f.rel) || earlier);
            if !read_by_versions {
                self.sink.delete(&f.rel).await?;
                crate::util::failpoint::hit("during-fresh");
            }
            removed += 1;
        }
        // A rewrite's outputs not yet published (no Delta version reads them).
        for rel in self.list_hidden(tables).await? {
            self.sink.delete(&rel).await?;
            removed += 1;
        }
        removed += self.remove_staging(tables, |_| true).await;
        self.sink.delete(&marker).await?;
        Ok(Cleared {
            removed,
            seq_floor,
            generation_floor,
        })
    }

    /// The documents at `rels` that exist and read as JSON, whatever they
    /// hold; a read that fails is an error.
    async fn plain_docs(&self, rels: &[String]) -> Result<Vec<serde_json::Value>, StateError> {
        let mut out = Vec::new();
        for rel in rels {
            if let Some(doc) = self.read(rel).await?.and_then(|b| serde_json::from_slice(&b).ok()) {
                out.push(doc);
            }
        }
        Ok(out)
    }
}

/// What [`StateStore::clear`] did, and the floors the job starts over from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cleared {
    /// Files removed.
    pub removed: usize,
    /// [`StateStore::seq_floor`]'s.
    pub seq_floor: u64,
    /// [`StateStore::generation_floor`]'s.
    pub generation_floor: u64,
}
