//! Compaction records, one per partition this job compacted: settled ones
//! in `compactions.json` ([`CompactionIndex`]), one being changed (a swap
//! or a repair) in `compacted/<partition key>.json` (the partition's
//! directory with `/` as `__`) until it is folded in; and the job's
//! compacted files found by name.
//!
//! The record is what makes a compaction exactly-once (see *The swap* in
//! the job stage's compaction, and *Compaction records* in [`super`]): the
//! swap is recorded before any input is deleted, so a crash at any moment
//! leaves either the inputs (the outputs, still hidden, are deleted) or
//! the outputs (the inputs left are deleted).

use super::{Compaction, CompactionIndex, STATE_VERSION, StateError, StateStore};
use crate::sink::parse_compacted_name;
use std::collections::{BTreeMap, BTreeSet};

/// The job's compaction records as stored.
#[derive(Debug, Clone, Default)]
pub struct Compactions {
    /// Every record, by partition (a file in `compacted/` over the index).
    pub records: Vec<Compaction>,
    /// The index's [`CompactionIndex::settled`].
    pub settled: Option<String>,
    /// Records in `compacted/`, not folded into the index.
    pub loose: usize,
}

/// One of the job's files under its tables, found by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobFile {
    /// A unit's file: unit id and sequence.
    Unit(String, u64),
    /// A revealed compacted file: generation and sequence.
    Compacted(u64, u64),
    /// A compacted file not yet revealed (`_<name>.pending`): generation.
    Hidden(u64),
}

impl JobFile {
    /// The compaction generation a compacted file's name takes (revealed
    /// or hidden); none for a unit's file.
    pub fn generation(&self) -> Option<u64> {
        match self {
            JobFile::Compacted(g, _) | JobFile::Hidden(g) => Some(*g),
            JobFile::Unit(..) => None,
        }
    }
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
    pub(super) fn compaction_path(&self, partition: &str) -> String {
        format!("{}/compacted/{}.json", self.dir, partition.replace('/', "__"))
    }

    pub(super) fn index_path(&self) -> String {
        format!("{}/compactions.json", self.dir)
    }

    /// Every compaction record of the job.
    pub async fn load_compactions(&self) -> Result<Vec<Compaction>, StateError> {
        Ok(self.load_compaction_state().await?.records)
    }

    /// The job's compaction records and the index's `settled`: a listing
    /// of `compacted/` and its files, then the index (read after them: a
    /// fold writes the index before it deletes the files it took in). A
    /// record naming a file that is not one of this job's, or not in the
    /// record's partition, is refused: its files are deleted on its word.
    pub async fn load_compaction_state(&self) -> Result<Compactions, StateError> {
        let loose: Vec<(String, Compaction)> = self.load_dir_listed("compacted").await?;
        let index: Option<CompactionIndex> = self.read_doc(&self.index_path()).await?;
        let index_path = self.index_path();
        let (indexed, settled) = index.map(|i| (i.records, i.settled)).unwrap_or_default();
        let mut by: BTreeMap<String, Compaction> = BTreeMap::new();
        let n = loose.len();
        for (rel, c) in indexed.into_iter().map(|c| (index_path.clone(), c)).chain(loose) {
            if let Err(what) = self.check_compaction(&c) {
                use super::docs::Versioned;
                return Err(StateError::Corrupt {
                    path: self.location(&rel),
                    message: format!("{what}; {}", Compaction::FIX),
                    source: None,
                });
            }
            by.insert(c.partition.clone(), c);
        }
        Ok(Compactions {
            records: by.into_values().collect(),
            settled,
            loose: n,
        })
    }

    /// Folds the settled records of `compacted/` into the index, which
    /// says `settled` from now on (None when a record is left unsettled),
    /// then deletes those files. Only with the whole job's lease (the one
    /// writer of compaction records). Dying between leaves a file and an
    /// entry that say the same. Writes nothing when nothing changes.
    pub async fn fold_compactions(&self, settled: Option<String>) -> Result<(), StateError> {
        let loose: Vec<(String, Compaction)> = self.load_dir_listed("compacted").await?;
        let index: Option<CompactionIndex> = self.read_doc(&self.index_path()).await?;
        let mut index = index.unwrap_or_default();
        let calm = |c: &Compaction| c.pending.is_none() && c.dissolving.is_empty();
        let settled = settled.filter(|_| loose.iter().all(|(_, c)| calm(c)));
        if loose.iter().all(|(_, c)| !calm(c)) && index.settled == settled {
            return Ok(());
        }
        let mut by: BTreeMap<String, Compaction> = index.records.drain(..).map(|c| (c.partition.clone(), c)).collect();
        let mut folded = Vec::new();
        for (rel, c) in loose.into_iter().filter(|(_, c)| calm(c)) {
            by.insert(c.partition.clone(), c);
            folded.push(rel);
        }
        index.version = STATE_VERSION;
        index.records = by.into_values().collect();
        index.settled = settled;
        index.updated_at = chrono::Utc::now().to_rfc3339();
        self.write_compact_doc(&self.index_path(), &index).await?;
        crate::util::failpoint::hit("during-compaction-fold");
        for rel in folded {
            self.sink.delete(&rel).await?;
        }
        Ok(())
    }

    /// Whether every path `c` names is this job's file of the kind its
    /// place says, in `c`'s partition — a replaced unit file in `c`'s
    /// table (a rewrite into other partition keys moves compacted rows
    /// from the partitions their unit files were in).
    fn check_compaction(&self, c: &Compaction) -> Result<(), String> {
        let plain = |seg: &str| !seg.is_empty() && !seg.starts_with('.') && !seg.starts_with('_');
        if !c.partition.split('/').all(plain) || c.partition.starts_with(&self.dir) {
            return Err(format!("`{}` is not a partition of the output", c.partition));
        }
        let unit = |k: &JobFile| matches!(k, JobFile::Unit(..));
        let compacted = |k: &JobFile| matches!(k, JobFile::Compacted(..));
        let either = |k: &JobFile| unit(k) || compacted(k);
        let pending = c.pending.as_ref();
        let paths = c
            .files
            .iter()
            .map(|f| (f.path.as_str(), &compacted as &dyn Fn(&JobFile) -> bool))
            .chain(
                pending
                    .into_iter()
                    .flat_map(|p| p.inputs.iter())
                    .map(|p| (p.as_str(), &either as &dyn Fn(&JobFile) -> bool)),
            )
            .chain(
                pending
                    .into_iter()
                    .flat_map(|p| p.outputs.iter())
                    .map(|f| (f.path.as_str(), &compacted as &dyn Fn(&JobFile) -> bool)),
            );
        for (path, kind_ok) in paths {
            let ok = path
                .rsplit_once('/')
                .is_some_and(|(dir, name)| dir == c.partition && self.classify(name).is_some_and(|k| kind_ok(&k)));
            if !ok {
                return Err(format!("`{path}` is not one of this job's files in partition {}", c.partition));
            }
        }
        let table = c.partition.split('/').next().unwrap_or_default();
        for path in &c.replaced {
            let ok = path.rsplit_once('/').is_some_and(|(dir, name)| {
                dir.split('/').all(plain) && dir.split('/').next() == Some(table) && self.classify(name).is_some_and(|k| unit(&k))
            });
            if !ok {
                return Err(format!("`{path}` is not one of this job's unit files in table {table}"));
            }
        }
        Ok(())
    }

    /// Writes a compaction record atomically.
    pub async fn save_compaction(&self, c: &Compaction) -> Result<(), StateError> {
        self.write_doc(&self.compaction_path(&c.partition), c).await
    }

    /// Deletes a partition's compaction record: its index entry first,
    /// then its file (which, while it is there, stands for the record).
    pub async fn delete_compaction(&self, partition: &str) -> Result<(), StateError> {
        let index: Option<CompactionIndex> = self.read_doc(&self.index_path()).await?;
        if let Some(mut index) = index
            && index.records.iter().any(|c| c.partition == partition)
        {
            index.records.retain(|c| c.partition != partition);
            index.settled = None;
            index.updated_at = chrono::Utc::now().to_rfc3339();
            self.write_compact_doc(&self.index_path(), &index).await?;
        }
        Ok(self.sink.delete(&self.compaction_path(partition)).await?)
    }

    /// Every file of the job under `tables`, by name: unit files, compacted
    /// files and compacted files not yet revealed. Names of other jobs,
    /// and staging files, are not listed.
    pub async fn list_files(&self, tables: &BTreeSet<String>) -> Result<Vec<Listed>, StateError> {
        let mut out = Vec::new();
        for t in tables {
            // What a no-op re-run must not do (a request per thousand files).
            tracing::debug!(table = t.as_str(), "listing the job's data files");
            for m in self.list(t).await? {
                let Some(name) = m.location.filename() else {
                    continue;
                };
                if let Some(kind) = self.classify(name) {
                    out.push(Listed {
                        rel: self.storage().rel_of(&m.location),
                        kind,
                        bytes: m.size,
                    });
                }
            }
        }
        Ok(out)
    }

    /// In the `delta` format, the job's files in its tables' current
    /// versions — what readers see, rather than what storage holds (files
    /// removed from a table stay for its earlier versions) — with the
    /// sizes the logs record; None in `parquet`. Read from the logs, with
    /// no listing of the output.
    pub async fn list_live_files(&self, tables: &BTreeSet<String>) -> Result<Option<Vec<Listed>>, StateError> {
        let mut out = Vec::new();
        for table in tables {
            let Some(live) = self.sink.format().live_files(&self.sink, table).await? else {
                return Ok(None);
            };
            for f in live {
                let rel = format!("{table}/{}", f.path);
                if let Some(kind) = rel.rsplit('/').next().and_then(|n| self.classify(n)) {
                    out.push(Listed { rel, kind, bytes: f.size });
                }
            }
        }
        Ok(Some(out))
    }

    /// What file name `name` is to this job, if it is one of its files.
    pub fn classify(&self, name: &str) -> Option<JobFile> {
        classify(&self.job, name)
    }
}

/// Which of job `job`'s files `name` is, if any (see [`StateStore::classify`]).
pub(super) fn classify(job: &str, name: &str) -> Option<JobFile> {
    {
        let prefix = format!("{job}-");
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

/// The units a repair of `seed` acts on: every record holding rows of one
/// of them is dissolved, and with it every unit whose rows it holds, and
/// so on (a unit's rows may span partitions). `units_of[i]` are the units
/// of record `i`; returns the units, sorted, and which records are hit.
pub fn repair_closure(units_of: &[Vec<String>], seed: &[String]) -> (Vec<String>, Vec<bool>) {
    let mut all: std::collections::BTreeSet<String> = seed.iter().cloned().collect();
    let mut hit = vec![false; units_of.len()];
    loop {
        let mut grew = false;
        for (i, us) in units_of.iter().enumerate() {
            if !hit[i] && us.iter().any(|u| all.contains(u)) {
                hit[i] = true;
                grew = true;
                all.extend(us.iter().cloned());
            }
        }
        if !grew {
            return (all.into_iter().collect(), hit);
        }
    }
}
