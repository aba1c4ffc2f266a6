//! Compaction as a job step: which partitions are finished, and the
//! exactly-once swap of their files for a few right-sized, sorted ones
//! (the data side is [`crate::sink`]'s merge; the record [`crate::state`]'s).
//!
//! Where each part of compaction lives:
//!
//! - **decides** (which partitions, which files, when): this module and
//!   a run's pass (when a run compacts) and `chainetl compact`;
//! - **swaps** (exactly once, and recovers a dead run's swap; `verify
//!   --repair` of compacted partitions): this module and [`swap`];
//! - **records** (`compacted/<partition>.json`, `compactions.json`):
//!   `crate::state`'s `compactions.rs`;
//! - **writes** (the data side): `crate::sink`'s `compact.rs` (the merge
//!   and its outputs), `clusters.rs` (which inputs overlap), `splice.rs`
//!   (copying column chunks as they are), `merge.rs` (merging rows that
//!   interleave), `order.rs` (the sort order files declare).
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
//! revealed (renamed from their hidden names) and the inputs deleted; the record drops `pending`.
//! A crash before `swapping` is rolled back (hidden outputs deleted), after
//! it rolled forward, by the next run or `chainetl compact`. A reader
//! listing the partition between the first rename and the last delete
//! can see rows twice; no reader sees a row missing.
//!
//! # Formats with commits (`delta`)
//!
//! Where the format publishes ([`crate::sink::format::TableFormat`]), the
//! files are those of the tables' current versions (read from the logs,
//! not listed), a unit's files are final once published, and rolling
//! forward is one commit (the format's `replace`): the inputs removed
//! and the outputs added (`dataChange = false`) with the transaction
//! `(chainetl-<job>-compact, generation)`, so a swap finished again after
//! a crash finds itself in the log and commits nothing. Generations go on
//! above every one a table's log has, so no file name a version
//! references is written again. The inputs stay on storage for the
//! earlier versions until `vacuum`. Partitions holding files that units
//! exported again are to replace wait until they have.

mod step;
mod swap;

pub use step::finish_swaps;

use crate::job::error::RunError;
use crate::sink::format::{Change, Joining, Stored};
use crate::sink::{MergeInput, Sink, compacted_name};
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
    /// Partitions left as they were because an input could not be read:
    /// `partition: error`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
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
    /// In the `delta` format, the last generation each table's log has
    /// (or this process gave out): see *Delta tables* in the module doc.
    generations: std::sync::Mutex<HashMap<String, u64>>,
}

impl<'a> Compactor<'a> {
    /// Compaction of `spec`'s job, deciding by `now` (unix seconds) which
    /// days are over.
    pub fn new(spec: &'a Spec, state: &'a StateStore, sink: &'a Sink, now: i64) -> Compactor<'a> {
        Compactor {
            spec,
            state,
            sink,
            now,
            generations: Default::default(),
        }
    }
}

/// A pass folds the records it wrote into the index after this many
/// partitions, so a pass that dies leaves few records to read one by one.
const FOLD_EVERY: usize = 256;

/// Where a unit's rows stand, for compaction.
struct Finality {
    states: HashMap<String, UnitState>,
    /// `delta` format: files units exported again are to replace (their
    /// partitions wait until they have).
    replacing: HashSet<String>,
    pending: HashSet<(usize, Option<Chain>)>,
    marks: HashMap<(usize, Chain), Mark>,
}

/// Why a partition is not compacted now.
#[derive(Debug, PartialEq, Eq)]
enum Wait {
    /// Until the job's state changes (a unit commits or finishes, a
    /// segment closes, a mark moves): nothing else makes a file final.
    State,
    /// Until a later pass, whatever the state: its day is not over, or a
    /// file is in the way.
    Later,
}

impl Finality {
    /// A digest of everything [`Compactor::inputs`] decides by, but the
    /// files and the day: equal digests and a pass that left nothing
    /// [`Wait::Later`] mean a new pass would compact nothing. Files are
    /// durable before a checkpoint counts them, so no final file appears
    /// without the state changing.
    fn digest(&self, spec: &Spec) -> String {
        let mut units: Vec<(&str, bool, u64, bool)> = self
            .states
            .values()
            .map(|s| (s.unit.as_str(), s.done, s.next_seq, s.published))
            .collect();
        units.sort_unstable();
        let mut pending: Vec<(usize, String)> = self
            .pending
            .iter()
            .map(|(e, c)| (*e, c.map(|c| c.to_string()).unwrap_or_default()))
            .collect();
        pending.sort_unstable();
        let mut marks: Vec<serde_json::Value> = self
            .marks
            .values()
            .map(|m| {
                let horizon = m.tail.iter().map(|t| t.number).min();
                serde_json::json!([m.export, m.chain.to_string(), m.next, m.repair_from, horizon])
            })
            .collect();
        marks.sort_unstable_by_key(|m| m.to_string());
        let doc = serde_json::json!({
            "units": units,
            "pending": pending,
            "marks": marks,
            "tables": spec.tables(),
            "target": spec.output.target_file_bytes,
        });
        alloy_primitives::keccak256(doc.to_string()).to_string()
    }
}

impl Compactor<'_> {
    /// Finishes interrupted swaps and repairs, then compacts every finished
    /// partition with more than one file to merge. Stops between
    /// partitions when `stopping` says so.
    pub async fn run(&self, stopping: &dyn Fn() -> bool) -> Result<CompactSummary, RunError> {
        let started = Instant::now();
        let stored = self.state.load_compaction_state().await?;
        let mut records: BTreeMap<String, Compaction> = BTreeMap::new();
        for mut c in stored.records {
            if !self.recover(&mut c).await? {
                continue;
            }
            records.insert(c.partition.clone(), c);
        }
        let states = self.state.load_units().await?;
        let marks = self.state.load_marks().await?;
        let replacing = states
            .values()
            .flat_map(|s| s.replaces.iter())
            .chain(marks.iter().flat_map(|m| m.replacing.iter()))
            .cloned()
            .collect();
        let finality = Finality {
            states,
            replacing,
            pending: self.state.load_segments().await?.iter().map(|s| (s.export, s.chain)).collect(),
            marks: marks.into_iter().map(|m| ((m.export, m.chain), m)).collect(),
        };
        let mut sum = CompactSummary::default();
        let digest = finality.digest(self.spec);
        // Nothing changed since a pass left every partition settled: no
        // file can have become final, so the output is not listed.
        if stored.loose == 0 && stored.settled.as_deref() == Some(digest.as_str()) {
            sum.secs = started.elapsed().as_secs_f64();
            return Ok(sum);
        }
        let mut by_partition: BTreeMap<String, Vec<Listed>> = BTreeMap::new();
        let tables = self.spec.tables();
        let files = match self.state.list_live_files(&tables).await? {
            Some(live) => live,
            None => self.state.list_files(&tables).await?,
        };
        for f in files {
            let dir = f.rel.rsplit_once('/').map_or("", |(d, _)| d).to_string();
            by_partition.entry(dir).or_default().push(f);
        }
        let mut later = false;
        for (partition, mut files) in by_partition {
            if stopping() {
                later = true;
                break;
            }
            let record = records.remove(&partition).unwrap_or_else(|| Compaction {
                version: STATE_VERSION,
                partition: partition.clone(),
                ..Default::default()
            });
            // No swap is in progress here (a dead run's was finished
            // above): a hidden output is one a killed run's upload left
            // landing after its swap was rolled back. No reader sees it;
            // it goes.
            if record.pending.is_none() {
                for f in files.iter().filter(|f| matches!(f.kind, JobFile::Hidden(_))) {
                    self.state.delete_data(&f.rel).await?;
                }
            }
            let back = self.back_beside_compacted(&record, &files, &finality);
            if !back.is_empty() {
                // Each is recorded as replaced already (that is how it
                // was found): a run that dies between the deletes finds
                // the rest the same way.
                for rel in &back {
                    self.state.delete_data(rel).await?;
                }
                tracing::warn!(
                    "compaction: {} file(s) of units compacted in {partition} were back beside the compacted files, which already holds their rows: removed",
                    back.len()
                );
                files.retain(|f| !back.contains(&f.rel));
            }
            let inputs = match self.inputs(&record, &files, &finality) {
                Ok(inputs) => inputs,
                Err(wait) => {
                    later |= wait == Wait::Later;
                    continue;
                }
            };
            let (skipped, done) = (sum.skipped.len(), sum.partitions);
            self.compact(record, inputs, &files, &finality, &mut sum).await?;
            later |= sum.skipped.len() > skipped;
            if sum.partitions > done && sum.partitions % FOLD_EVERY == 0 {
                self.state.fold_compactions(None).await?;
            }
        }
        self.state.fold_compactions((!later).then_some(digest)).await?;
        sum.secs = started.elapsed().as_secs_f64();
        Ok(sum)
    }

    /// The files of a partition to merge now, or why it waits.
    fn inputs(&self, record: &Compaction, files: &[Listed], finality: &Finality) -> Result<Vec<Listed>, Wait> {
        let replaced: HashSet<&str> = record.replaced.iter().map(String::as_str).collect();
        if files.iter().any(|f| finality.replacing.contains(&f.rel)) {
            return Err(Wait::State);
        }
        let target = self.spec.output.target_file_bytes as u64;
        let mut units = Vec::new();
        let mut incremental = false;
        for f in files {
            let JobFile::Unit(unit, seq) = &f.kind else {
                continue;
            };
            if replaced.contains(f.rel.as_str()) {
                tracing::warn!("compaction: {} is recorded as compacted but is still there; left as it is", f.rel);
                return Err(Wait::Later);
            }
            match self.finished(unit, *seq, finality) {
                Some(inc) => incremental |= inc,
                // A partition still being written waits for all of it.
                None => return Err(Wait::State),
            }
            units.push(f.clone());
        }
        if units.is_empty() {
            return Err(Wait::State);
        }
        let undated = !record.partition.contains("/date=");
        if incremental {
            let day = crate::vocab::window::date_string(self.now.div_euclid(86_400) as i32);
            let open_day = record.partition.rsplit_once("/date=").is_some_and(|(_, d)| d >= day.as_str());
            if open_day {
                return Err(Wait::Later);
            }
            if undated && units.len() < UNDATED_BATCH {
                return Err(Wait::State);
            }
        }
        let small: Vec<Listed> = files
            .iter()
            .filter(|f| matches!(f.kind, JobFile::Compacted(g, _) if g == record.generation) && f.bytes < target / 2)
            .cloned()
            .collect();
        if units.len() + small.len() < 2 {
            return Err(Wait::State);
        }
        Ok(small.into_iter().chain(units).collect())
    }

    /// Files `record` replaced (by their exact names: a unit file's name
    /// is its unit and sequence, never written again with other rows)
    /// that are in the partition again: a late upload of a killed run, or
    /// the unit exported again while its checkpoint could not be read.
    /// The compacted files hold those rows, and only those: a unit's
    /// other files, even in this partition (written there by a rewrite
    /// into another layout, or after the compaction), hold rows the
    /// compacted files do not. Only in a format whose readers list the
    /// folder (a published table's files are what it records), with no swap in progress,
    /// for units of fixed windows, and once each of them is done (one
    /// still being exported waits).
    fn back_beside_compacted(&self, record: &Compaction, files: &[Listed], finality: &Finality) -> Vec<String> {
        if record.files.is_empty() || record.pending.is_some() || !record.dissolving.is_empty() || self.sink.format().publishes() {
            return Vec::new();
        }
        let replaced: HashSet<&str> = record.replaced.iter().map(String::as_str).collect();
        let theirs: Vec<&Listed> = files
            .iter()
            .filter(|f| replaced.contains(f.rel.as_str()))
            .filter(|f| matches!(&f.kind, JobFile::Unit(u, _) if self.fixed_window(u)))
            .collect();
        let all_done = theirs
            .iter()
            .all(|f| matches!(&f.kind, JobFile::Unit(u, seq) if self.finished(u, *seq, finality).is_some()));
        if !all_done {
            return Vec::new();
        }
        theirs.into_iter().map(|f| f.rel.clone()).collect()
    }

    /// Whether file `seq` of `unit` is final: None if not; Some(true) for
    /// an incremental export's, Some(false) for another's.
    fn finished(&self, unit: &str, seq: u64, f: &Finality) -> Option<bool> {
        let (export, chain) = unit_export(unit)?;
        let e = self.spec.exports.get(export)?;
        let st = f.states.get(unit);
        // In a format that publishes, a unit's files are final once its
        // last ones are in the table.
        let publishes = self.sink.format().publishes();
        if st.is_some_and(|s| !s.done || seq >= s.next_seq || (publishes && !s.published)) {
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
    /// reveal, delete the inputs, record done.
    async fn compact(
        &self,
        mut record: Compaction,
        inputs: Vec<Listed>,
        files: &[Listed],
        finality: &Finality,
        sum: &mut CompactSummary,
    ) -> Result<(), RunError> {
        // Never a name a file of the partition already has, whatever the
        // record says, nor one of a swap rolled back, nor one the job had
        // before a `--fresh`.
        let present = files.iter().filter_map(|f| f.kind.generation());
        let last = present.fold(
            record.generation.max(record.rolled_back).max(self.state.generation_floor()),
            u64::max,
        );
        let generation = self.next_generation(&record.partition, last).await?;
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
        let pairs: Vec<MergeInput> = inputs
            .iter()
            .map(|f| MergeInput {
                rel: f.rel.clone(),
                bytes: f.bytes,
                checksum: committed_checksum(f, &record, finality),
            })
            .collect();
        let merged = match self.sink.merge(&pairs, &name_of, self.spec.output.target_file_bytes).await {
            Ok(m) => m,
            // A damaged input: the partition stays as it is (its swap
            // undone at once), the others go on.
            Err(e @ crate::sink::SinkError::Read { .. }) => {
                self.delete_hidden(&record.partition, Some(generation)).await?;
                record.pending = None;
                record.rolled_back = record.rolled_back.max(generation);
                self.state.save_compaction(&record).await?;
                tracing::warn!("compaction: partition {} left as it is: {e}", record.partition);
                sum.skipped.push(format!("{}: {e}", record.partition));
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        crate::util::failpoint::hit("compact-written");
        let outputs: Vec<CommittedFile> = merged.files.iter().map(CommittedFile::from).collect();
        for (f, rows) in inputs.iter().zip(&merged.input_rows) {
            if matches!(f.kind, JobFile::Unit(..)) {
                record.replaced.push(f.rel.clone());
                record.replaced_rows.insert(f.rel.clone(), *rows);
            }
        }
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
        self.finish_swap(&mut record, false).await
    }

    /// Rolls a swap forward: reveals the outputs, replaces the inputs
    /// with them in the table (in a format with commits, one commit; else
    /// the inputs are deleted), and records the partition without the
    /// swap. `again`: a dead run's swap, which may be in the table already.
    pub(super) async fn finish_swap(&self, record: &mut Compaction, again: bool) -> Result<(), RunError> {
        let Some(p) = record.pending.clone() else {
            return Ok(());
        };
        for out in &p.outputs {
            self.sink.reveal(&out.path).await?;
        }
        crate::util::failpoint::hit("compact-published");
        for rel in self.replace(&record.partition, &p, again).await? {
            self.state.delete_data(&rel).await?;
            crate::util::failpoint::hit("compact-deleting");
        }
        crate::util::failpoint::hit("compact-committed");
        record.pending = None;
        record.updated_at = chrono::Utc::now().to_rfc3339();
        self.state.save_compaction(record).await?;
        Ok(())
    }
}

impl Compactor<'_> {
    /// The generation of a new compaction of `partition`, whose files and
    /// record have generations up to `last`: the next one, and above every
    /// generation its table records (the compactions' transaction
    /// version, in a format with commits), so no name a version of the
    /// table references is written again — not after a repair dissolved
    /// the partition, nor after a `--fresh`.
    async fn next_generation(&self, partition: &str, last: u64) -> Result<u64, RunError> {
        let table = table_of(partition).to_string();
        let known = self.generations.lock().unwrap_or_else(|e| e.into_inner()).get(&table).copied();
        let logged = match known {
            Some(g) => g,
            None => {
                let app = crate::job::tables::compaction_app_id(self.spec);
                self.sink.format().recorded_version(self.sink, &table, &app).await?.max(0) as u64
            }
        };
        let generation = last.max(logged) + 1;
        self.generations.lock().unwrap_or_else(|e| e.into_inner()).insert(table, generation);
        Ok(generation)
    }

    /// The swap in the table: the inputs replaced by the outputs (no
    /// change of the rows), with the transaction
    /// `(chainetl-<job>-compact, generation)` — so a swap finished again
    /// after a crash is not committed twice. Returns the inputs to delete
    /// now: none where the table keeps them for its earlier versions,
    /// until `vacuum`.
    async fn replace(&self, partition: &str, p: &PendingCompaction, again: bool) -> Result<Vec<String>, RunError> {
        let outputs = p.outputs.iter().map(|f| Stored::at(f.path.clone(), f.bytes, Some(f.rows)));
        let r = Change {
            joining: vec![Joining {
                files: outputs.collect(),
                // A merge's files have their own schema.
                schema: None,
                txn: Some((crate::job::tables::compaction_app_id(self.spec), p.generation as i64)),
                adopted: false,
            }],
            removes: p.inputs.clone(),
            rearranges: true,
            again,
            ..Default::default()
        };
        Ok(self.sink.format().commit(self.sink, table_of(partition), r).await?.to_delete)
    }
}

/// The table a partition (`events/chain=base/date=…`) belongs to.
fn table_of(partition: &str) -> &str {
    partition.split('/').next().unwrap_or_default()
}

/// Export index and chain of a unit id (`e<i>-<dataset>-<chain>-…`).
pub fn unit_export(unit: &str) -> Option<(usize, Chain)> {
    let mut parts = unit.strip_prefix('e')?.splitn(4, '-');
    let export = parts.next()?.parse().ok()?;
    let _dataset = parts.next()?;
    let chain = parts.next()?.parse().ok()?;
    Some((export, chain))
}

/// The checksum `f` was committed with: in its unit's checkpoint, or in
/// the partition's compaction record for a compacted file.
fn committed_checksum(f: &Listed, record: &Compaction, finality: &Finality) -> Option<String> {
    let committed = match &f.kind {
        JobFile::Unit(unit, _) => &finality.states.get(unit)?.committed,
        JobFile::Compacted(..) | JobFile::Hidden(_) => &record.files,
    };
    committed.iter().find(|c| c.path == f.rel)?.checksum.clone()
}
