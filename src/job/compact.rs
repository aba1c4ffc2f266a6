//! Compaction as a job step: which partitions are finished, and the
//! exactly-once swap of their files for a few right-sized, sorted ones
//! (the data side is [`crate::sink`]'s merge; the record [`crate::state`]'s).
//!
//! # Which files
//!
//! Only files whose rows can no longer change: a file of a unit with a
//! checkpoint that is done and counts it; or, for aligned and incremental
//! exports, a file of a closed segment (no segment of the export and chain
//! pending), and for incremental exports only below the reorg horizon (the
//! oldest block of the mark's tail, below which a reorg repair never
//! deletes). A date partition still receiving an incremental export's
//! files (its day is not over) waits for the next day, so follow mode
//! rewrites each day once; a partition with no date waits for
//! [`UNDATED_BATCH`] new files. Compacted files smaller than half the
//! target are merged again with new files; larger ones are left alone.
//!
//! # The swap
//!
//! With the job's whole lease held: the record says what is replaced
//! (`pending`) before anything is written; outputs are written hidden;
//! the record says `swapping` once they are all durable; outputs are
//! published (renamed) and the inputs deleted; the record drops `pending`.
//! A crash before `swapping` is rolled back (hidden outputs deleted), after
//! it rolled forward, by the next run or `chainetl compact`. A reader
//! listing the partition between the first rename and the last delete
//! can see rows twice; no reader sees a row missing.

use super::error::RunError;
use crate::sink::{Sink, compacted_name};
use crate::spec::Spec;
use crate::state::{CommittedFile, Compaction, JobFile, Listed, Mark, PendingCompaction, STATE_VERSION, StateStore, UnitState};
use crate::vocab::Chain;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Instant;

/// New files an undated partition of an incremental export collects
/// before it is compacted.
pub const UNDATED_BATCH: usize = 32;

/// What a compaction did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CompactSummary {
    /// Partitions compacted.
    pub partitions: usize,
    /// Files replaced.
    pub files_in: usize,
    /// Files written.
    pub files_out: usize,
    /// Rows rewritten.
    pub rows: u64,
    /// Bytes replaced.
    pub bytes_in: u64,
    /// Bytes written.
    pub bytes_out: u64,
    /// Seconds spent.
    pub secs: f64,
}

/// What compaction needs of the job.
pub struct Compactor<'a> {
    /// The spec.
    pub spec: &'a Spec,
    /// The job's state.
    pub state: &'a StateStore,
    /// The output.
    pub sink: &'a Sink,
    /// Unix seconds: which day is over.
    pub now: i64,
}

/// Where a unit's rows stand, for compaction.
struct Finality {
    states: HashMap<String, UnitState>,
    pending: HashSet<(usize, Option<Chain>)>,
    marks: HashMap<(usize, Chain), Mark>,
}

impl Compactor<'_> {
    /// Finishes interrupted swaps and repairs, then compacts every finished
    /// partition with more than one file to merge. Stops between
    /// partitions when `stopping` says so.
    pub async fn run(&self, stopping: &dyn Fn() -> bool) -> Result<CompactSummary, RunError> {
        let started = Instant::now();
        let mut records: BTreeMap<String, Compaction> = BTreeMap::new();
        for mut c in self.state.load_compactions().await? {
            if !self.recover(&mut c).await? {
                continue;
            }
            records.insert(c.partition.clone(), c);
        }
        let finality = Finality {
            states: self.state.load_units().await?,
            pending: self.state.load_segments().await?.iter().map(|s| (s.export, s.chain)).collect(),
            marks: self.state.load_marks().await?.into_iter().map(|m| ((m.export, m.chain), m)).collect(),
        };
        let mut by_partition: BTreeMap<String, Vec<Listed>> = BTreeMap::new();
        for f in self.state.list_files(&self.spec.tables()).await? {
            let dir = f.rel.rsplit_once('/').map_or("", |(d, _)| d).to_string();
            by_partition.entry(dir).or_default().push(f);
        }
        let mut sum = CompactSummary::default();
        for (partition, files) in by_partition {
            if stopping() {
                break;
            }
            let record = records.remove(&partition).unwrap_or_else(|| Compaction {
                version: STATE_VERSION,
                partition: partition.clone(),
                ..Default::default()
            });
            let Some(inputs) = self.inputs(&record, &files, &finality) else {
                continue;
            };
            self.compact(record, inputs, &files, &mut sum).await?;
        }
        sum.secs = started.elapsed().as_secs_f64();
        Ok(sum)
    }

    /// The files of a partition to merge now, or None if it waits.
    fn inputs(&self, record: &Compaction, files: &[Listed], finality: &Finality) -> Option<Vec<Listed>> {
        let replaced: HashSet<&str> = record.replaced.iter().map(String::as_str).collect();
        let target = self.spec.output.target_file_bytes as u64;
        let mut units = Vec::new();
        let mut incremental = false;
        for f in files {
            let JobFile::Unit(unit, seq) = &f.kind else {
                continue;
            };
            if replaced.contains(f.rel.as_str()) {
                tracing::warn!("compaction: {} is recorded as compacted but is still there; left as it is", f.rel);
                return None;
            }
            match self.finished(unit, *seq, finality) {
                Some(inc) => incremental |= inc,
                // A partition still being written waits for all of it.
                None => return None,
            }
            units.push(f.clone());
        }
        if units.is_empty() {
            return None;
        }
        let undated = !record.partition.contains("/date=");
        if incremental {
            let day = crate::vocab::window::date_string(self.now.div_euclid(86_400) as i32);
            let open_day = record.partition.rsplit_once("/date=").is_some_and(|(_, d)| d >= day.as_str());
            if open_day || (undated && units.len() < UNDATED_BATCH) {
                return None;
            }
        }
        let small: Vec<Listed> = files
            .iter()
            .filter(|f| matches!(f.kind, JobFile::Compacted(g, _) if g == record.generation) && f.bytes < target / 2)
            .cloned()
            .collect();
        if units.len() + small.len() < 2 {
            return None;
        }
        Some(small.into_iter().chain(units).collect())
    }

    /// Whether file `seq` of `unit` is final: None if not; Some(true) for
    /// an incremental export's, Some(false) for another's.
    fn finished(&self, unit: &str, seq: u64, f: &Finality) -> Option<bool> {
        let (export, chain) = unit_export(unit)?;
        let e = self.spec.exports.get(export)?;
        let st = f.states.get(unit);
        if st.is_some_and(|s| !s.done || seq >= s.next_seq) {
            return None;
        }
        if !e.per_run() {
            return st.map(|_| false);
        }
        if f.pending.contains(&(export, Some(chain))) || f.pending.contains(&(export, None)) {
            return None;
        }
        if e.incremental.is_none() {
            return Some(false);
        }
        let mark = f.marks.get(&(export, chain))?;
        let horizon = mark.tail.iter().map(|t| t.number).min().unwrap_or(mark.next);
        let (_, end) = crate::plan::block_range_of(unit)?;
        (mark.repair_from.is_none() && end <= horizon).then_some(true)
    }

    /// Compacts one partition: record, write hidden, record the swap,
    /// publish, delete the inputs, record done.
    async fn compact(&self, mut record: Compaction, inputs: Vec<Listed>, files: &[Listed], sum: &mut CompactSummary) -> Result<(), RunError> {
        // Never a name a file of the partition already has, whatever the
        // record says.
        let present = files.iter().filter_map(|f| match f.kind {
            JobFile::Compacted(g, _) | JobFile::Hidden(g) => Some(g),
            JobFile::Unit(..) => None,
        });
        let generation = present.fold(record.generation, u64::max) + 1;
        record.pending = Some(PendingCompaction {
            generation,
            swapping: false,
            inputs: inputs.iter().map(|f| f.rel.clone()).collect(),
            outputs: Vec::new(),
        });
        record.updated_at = chrono::Utc::now().to_rfc3339();
        self.state.save_compaction(&record).await?;
        crate::util::failpoint::hit("compact-recorded");
        let partition = record.partition.clone();
        let job = self.spec.name.clone();
        let name_of = move |seq: u64| format!("{partition}/{}", compacted_name(&job, generation, seq));
        let pairs: Vec<(String, u64)> = inputs.iter().map(|f| (f.rel.clone(), f.bytes)).collect();
        let merged = self.sink.merge(&pairs, &name_of, self.spec.output.target_file_bytes).await?;
        crate::util::failpoint::hit("compact-written");
        let outputs: Vec<CommittedFile> = merged
            .files
            .iter()
            .map(|w| CommittedFile {
                path: w.rel.clone(),
                rows: w.rows,
                bytes: w.bytes,
            })
            .collect();
        let replaced_units = inputs.iter().filter(|f| matches!(f.kind, JobFile::Unit(..))).map(|f| f.rel.clone());
        record.replaced.extend(replaced_units);
        let gone: HashSet<&str> = inputs.iter().map(|f| f.rel.as_str()).collect();
        record.files.retain(|f| !gone.contains(f.path.as_str()));
        record.files.extend(outputs.iter().cloned());
        record.generation = generation;
        if let Some(p) = record.pending.as_mut() {
            p.swapping = true;
            p.outputs = outputs;
        }
        self.state.save_compaction(&record).await?;
        crate::util::failpoint::hit("compact-swapping");
        sum.partitions += 1;
        sum.files_in += inputs.len();
        sum.files_out += merged.files.len();
        sum.rows += merged.rows;
        sum.bytes_in += inputs.iter().map(|f| f.bytes).sum::<u64>();
        sum.bytes_out += merged.files.iter().map(|f| f.bytes).sum::<u64>();
        self.finish_swap(&mut record).await
    }

    /// Rolls a swap forward: publishes the outputs, deletes the inputs,
    /// and records the partition without the swap.
    async fn finish_swap(&self, record: &mut Compaction) -> Result<(), RunError> {
        let Some(p) = record.pending.clone() else {
            return Ok(());
        };
        for out in &p.outputs {
            self.sink.publish(&out.path).await?;
        }
        for rel in &p.inputs {
            self.state.delete_file(rel).await?;
            crate::util::failpoint::hit("compact-deleting");
        }
        record.pending = None;
        record.updated_at = chrono::Utc::now().to_rfc3339();
        self.state.save_compaction(record).await?;
        Ok(())
    }

    /// Finishes every swap and repair a dead run left (first thing a run
    /// holding the whole job does, so readers see no swap half done for
    /// longer than it takes).
    pub async fn recover_all(&self) -> Result<(), RunError> {
        for mut c in self.state.load_compactions().await? {
            self.recover(&mut c).await?;
        }
        Ok(())
    }

    /// `verify --repair` of `units`: every compacted partition holding rows
    /// of one of them is dissolved, and with it every unit whose rows it
    /// holds, and so on (a unit's rows may span partitions). Returns the
    /// units to export again, `units` included. Refused when one of them
    /// has no checkpoint to delete (a closed period's or segment's unit),
    /// since nothing would export it again.
    pub async fn dissolve_for(&self, units: &[String]) -> Result<Vec<String>, RunError> {
        self.recover_all().await?;
        let records = self.state.load_compactions().await?;
        let units_of = |c: &Compaction| -> Vec<String> {
            c.replaced
                .iter()
                .filter_map(|r| r.rsplit('/').next())
                .filter_map(|n| n.strip_prefix(&format!("{}-", self.spec.name)).and_then(crate::sink::parse_file_name))
                .map(|(u, _)| u.to_string())
                .collect()
        };
        let mut all: HashSet<String> = units.iter().cloned().collect();
        let mut hit = vec![false; records.len()];
        loop {
            let mut grew = false;
            for (i, c) in records.iter().enumerate() {
                let us = units_of(c);
                if !hit[i] && us.iter().any(|u| all.contains(u)) {
                    hit[i] = true;
                    grew = true;
                    all.extend(us);
                }
            }
            if !grew {
                break;
            }
        }
        let states = self.state.load_units().await?;
        let mut all: Vec<String> = all.into_iter().collect();
        all.sort();
        if let Some(u) = all.iter().find(|u| !states.contains_key(*u)) {
            return Err(RunError::Repair(format!(
                "unit {u} shares compacted files with the units to repair but has no checkpoint to export it again from; \
                 re-run with --fresh to export the job again"
            )));
        }
        for c in records.iter().enumerate().filter(|(i, _)| hit[*i]).map(|(_, c)| c) {
            let mut c = c.clone();
            c.dissolving = all.clone();
            c.updated_at = chrono::Utc::now().to_rfc3339();
            self.state.save_compaction(&c).await?;
        }
        for c in records.iter().enumerate().filter(|(i, _)| hit[*i]).map(|(_, c)| c) {
            let mut c = c.clone();
            c.dissolving = all.clone();
            self.dissolve(&c).await?;
        }
        Ok(all)
    }

    /// Finishes what a dead run left of a record: a repair's dissolving,
    /// or a swap (rolled back before `swapping`, forward after). Returns
    /// whether the record still stands.
    async fn recover(&self, c: &mut Compaction) -> Result<bool, RunError> {
        if !c.dissolving.is_empty() {
            self.dissolve(c).await?;
            return Ok(false);
        }
        match c.pending.clone() {
            Some(p) if p.swapping => self.finish_swap(c).await?,
            Some(p) => {
                self.delete_hidden(&c.partition, Some(p.generation)).await?;
                c.pending = None;
                c.updated_at = chrono::Utc::now().to_rfc3339();
                self.state.save_compaction(c).await?;
            }
            None => {}
        }
        Ok(true)
    }

    /// Deletes the job's unpublished outputs in a partition (of one
    /// generation, or all).
    async fn delete_hidden(&self, partition: &str, generation: Option<u64>) -> Result<(), RunError> {
        let table = partition.split('/').next().unwrap_or_default().to_string();
        for f in self.state.list_files(&[table].into()).await? {
            let here = f.rel.rsplit_once('/').is_some_and(|(d, _)| d == partition);
            if here && matches!(f.kind, JobFile::Hidden(g) if generation.is_none_or(|x| x == g)) {
                self.state.delete_file(&f.rel).await?;
            }
        }
        Ok(())
    }

    /// `verify --repair` of a compacted partition, finished: the units to
    /// export again lose their checkpoints, then the compacted files and
    /// the record go. Their unit files are gone already, so nothing of
    /// theirs is left twice; until the units run, their rows are missing.
    pub async fn dissolve(&self, c: &Compaction) -> Result<(), RunError> {
        self.state.delete_units(&c.dissolving).await?;
        self.delete_hidden(&c.partition, None).await?;
        for f in &c.files {
            self.state.delete_file(&f.path).await?;
        }
        if let Some(p) = &c.pending {
            for f in &p.outputs {
                self.state.delete_file(&f.path).await?;
            }
        }
        self.state.delete_compaction(&c.partition).await?;
        Ok(())
    }
}

/// Export index and chain of a unit id (`e<i>-<dataset>-<chain>-…`).
pub fn unit_export(unit: &str) -> Option<(usize, Chain)> {
    let mut parts = unit.strip_prefix('e')?.splitn(4, '-');
    let export = parts.next()?.parse().ok()?;
    let _dataset = parts.next()?;
    let chain = parts.next()?.parse().ok()?;
    Some((export, chain))
}

/// How often follow mode looks for finished partitions.
const FOLLOW_COMPACT_EVERY: std::time::Duration = std::time::Duration::from_secs(600);

impl super::Passes<'_> {
    /// Compacts finished partitions when `output.compact` is on and this run
    /// holds the whole job (a shard leaves it to an unsharded run or
    /// `chainetl compact`): at the end of a run, and every
    /// [`FOLLOW_COMPACT_EVERY`] while following.
    pub(super) async fn compact_finished(&mut self, end: bool) -> Result<(), RunError> {
        let shared = self.shared.clone();
        if !shared.spec.output.compact || self.opts.shard.is_some() {
            return Ok(());
        }
        if !end && self.last_compact.is_some_and(|t| t.elapsed() < FOLLOW_COMPACT_EVERY) {
            return Ok(());
        }
        self.last_compact = Some(Instant::now());
        let c = Compactor {
            spec: &shared.spec,
            state: &shared.state,
            sink: &shared.sink,
            now: self.opts.as_of.unwrap_or_else(|| chrono::Utc::now().timestamp()),
        };
        let done = c.run(&|| shared.stopping()).await?;
        if done.partitions > 0 {
            tracing::info!(
                partitions = done.partitions,
                files_in = done.files_in,
                files_out = done.files_out,
                rows = done.rows,
                "compacted {} partition{}: {} files into {}",
                done.partitions,
                if done.partitions == 1 { "" } else { "s" },
                done.files_in,
                done.files_out
            );
        }
        let total = self.out.compaction.get_or_insert_with(CompactSummary::default);
        total.partitions += done.partitions;
        total.files_in += done.files_in;
        total.files_out += done.files_out;
        total.rows += done.rows;
        total.bytes_in += done.bytes_in;
        total.bytes_out += done.bytes_out;
        total.secs += done.secs;
        Ok(())
    }
}

/// `chainetl compact`: finishes interrupted swaps and compacts every
/// finished partition of the job, whatever `output.compact` says. Holds the
/// whole job's lease. None when the job has not run yet.
pub async fn compact_job(spec: &Spec, as_of: Option<i64>) -> Result<Option<CompactSummary>, RunError> {
    let sink = std::sync::Arc::new(Sink::open(&spec.output)?);
    let lease = crate::state::lease::Lease::acquire(sink.clone(), &spec.name, &crate::state::lease::scope(None)).await?;
    let result = async {
        let probe = StateStore::new(sink.clone(), &spec.name);
        if probe.clear_interrupted().await? || probe.load_job().await?.is_none() {
            return Ok(None);
        }
        let now = as_of.unwrap_or_else(|| chrono::Utc::now().timestamp());
        let (state, _job) = super::prepare(spec, sink.clone(), false, now).await?;
        let c = Compactor {
            spec,
            state: &state,
            sink: &sink,
            now,
        };
        c.recover_all().await?;
        Ok(Some(c.run(&|| false).await?))
    }
    .await;
    lease.release().await;
    result
}
