//! Changing how a job's rows are stored, from the rows its output holds,
//! with no request to the service: today, the output format. Each side
//! is the formats' ([`crate::sink::format::TableFormat`]): a format that
//! publishes adopts the files the old output's readers saw; one that
//! published settles which files stay and forgets its records. The
//! sections below say it for the two formats there are.
//!
//! A run whose spec changes only `output.format` (besides what a run may
//! change anyway: appended exports, added chains, operational settings)
//! converts the output first, holding the whole job's lease, then runs as
//! a job started in the new format. It is recorded in `migration.json`
//! (see `crate::state`'s migration record) before anything changes, so a
//! crash at any point is finished by the next run of the same spec.
//!
//! # parquet → delta: the files are adopted, not rewritten
//!
//! The files a parquet reader of the job sees, less work not committed,
//! join each table in **one commit a table**: the committed files of
//! every unit (with the unit's transaction id, `(chainetl-<job>-<unit>,
//! next_seq)`, exactly what a delta run records, so the run that follows
//! publishes nothing twice), the current compacted files, and the files
//! of units whose checkpoints a closed period or segment dropped. Each
//! `add` carries statistics from the file's footer. A table that already
//! holds some of them (a conversion killed after its commit) gets only
//! the rest; files of the job a table holds that are no longer the job's
//! output leave it in the same commit. Left out, and so deleted by the
//! next pass as any orphan would be: files past a unit's checkpoint, and
//! files of units of a pending incremental segment, which in `delta`
//! join their tables with their segment, once it is checked against the
//! chain. Done units are then marked published.
//!
//! # delta → parquet: the current versions' files stay
//!
//! A parquet reader lists the folder, so what stays is what the tables'
//! current versions read, plus what the job's checkpoints count that the
//! logs do not have yet (files of a pending incremental segment, or of a
//! unit whose run died before its commit). Everything else of the job's
//! under its tables — files kept for earlier versions, uncommitted work —
//! is deleted, then the tables' `_delta_log/` folders (recorded as the
//! phase `logs` first: once a log is partly gone it no longer says which
//! files are current). Refused before anything changes: a table holding
//! other jobs' files (its log is theirs too), and a repair not finished
//! (`verify --repair` or a reorg repair, whose files replace others in
//! one commit): the run in `delta` finishes it first.
//!
//! # What readers see meanwhile
//!
//! Converting to delta, each table appears whole at its one commit; the
//! parquet files stay as they were. Converting to parquet, the Delta
//! tables read as before until their logs go; a parquet reader listing a
//! folder before the conversion ends can see files of earlier versions
//! (rows twice), the window `docs/changing-a-job.md` describes.

use crate::job::error::RunError;
use crate::job::maintain::compact::Compactor;
use crate::job::tables::{export_tables, unit_app_id};
use crate::plan;
use crate::sink::Sink;
use crate::sink::format::{Change, Joining, Stored};
use crate::spec::FormatChange;
use crate::spec::{JobIdentity, OutputFormat, Spec};
use crate::state::{JobFile, JobState, Listed, Migration, Phase, StateStore, UnitState};
use arrow_schema::SchemaRef;
use futures::{StreamExt, TryStreamExt};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

/// Footers read (or files deleted) at once.
const AT_ONCE: usize = 16;

/// A write-stage error of a conversion to `to`: a file that cannot join a
/// table as it is refuses it (exit 2); anything else is worth a retry.
fn sink_failed(to: OutputFormat, e: crate::sink::SinkError) -> RunError {
    match e {
        crate::sink::SinkError::Config { .. } => RunError::Migration(format!("converting to {to}: {e}")),
        e => RunError::Sink(e),
    }
}

/// What a conversion did (a run report's `conversion`; read back by the
/// report, every field defaulted).
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
#[serde(default)]
pub struct Converted {
    /// The format the output was in.
    pub from: String,
    /// The format it is in now.
    pub to: String,
    /// Tables converted.
    pub tables: usize,
    /// Files the output holds in the new format (adopted, or kept).
    pub files: usize,
    /// Their rows, as their footers or checkpoints say.
    pub rows: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Files deleted: kept only for earlier Delta versions, or not committed.
    pub deleted: usize,
    /// Requests sent to the service: none.
    pub requests: u64,
    /// A rewrite into another layout (`to` is `from`): the changed layout
    /// keys, one line a key.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub layout: Vec<String>,
    /// Seconds spent.
    pub secs: f64,
}

impl Converted {
    /// What the change did to the output, in words (the run's summary and
    /// the report's line of the run say it so):
    /// `converted 2 tables from parquet to delta (3 files, 8850 rows)`, or
    /// `rewrote 3 files of 2 tables into the spec's layout (<keys>), 8850 rows`.
    pub fn what(&self) -> String {
        use crate::util::words::count;
        if self.layout.is_empty() {
            format!(
                "converted {} from {} to {} ({}, {})",
                count(self.tables as u64, "table"),
                self.from,
                self.to,
                count(self.files as u64, "file"),
                count(self.rows, "row")
            )
        } else {
            format!(
                "rewrote {} of {} into the spec's layout ({}), {}",
                count(self.files as u64, "file"),
                count(self.tables as u64, "table"),
                self.layout.join("; "),
                count(self.rows, "row")
            )
        }
    }
}

/// The spec as it was before the change: the same, in format `from`.
pub(crate) fn spec_in(spec: &Spec, from: OutputFormat) -> Spec {
    let mut old = spec.clone();
    old.output.format = from;
    old
}

/// Converts the job's output as `change` says, holding the whole job's
/// lease, then records the spec's identity as the job's. Returns the job
/// as recorded and what was done.
pub(crate) async fn convert(
    spec: &Spec,
    sink: &Arc<Sink>,
    state: &StateStore,
    mut job: JobState,
    change: &FormatChange,
    now: i64,
) -> Result<(JobState, Converted), RunError> {
    let started = Instant::now();
    let old = Old::of(spec, sink, change.from)?;
    old.state.set_seq_floor(job.seq_floor);
    let identity = JobIdentity::of(spec);
    let mut migration = match state.load_migration().await? {
        Some(m) => {
            tracing::info!(from = %m.from, to = %m.to, "finishing an interrupted conversion of the output's format");
            m
        }
        None => Migration::new(change.from, change.to, identity.clone()),
    };
    // The old format's records go first (what its readers saw stays), then
    // the new format's are made from the files.
    let mut done = Converted::default();
    if old.sink.format().publishes() {
        done = settle(spec, sink, &old, &mut migration, now).await?;
    }
    if sink.format().publishes() {
        done = adopt(spec, sink, state, &job, &old, &mut migration, now).await?;
    }
    job.spec_hash = identity.hash();
    job.identity = Some(identity);
    state.end_migration(&job).await?;
    done.from = change.from.to_string();
    done.to = change.to.to_string();
    done.secs = started.elapsed().as_secs_f64();
    tracing::info!(
        from = %done.from,
        to = %done.to,
        tables = done.tables,
        files = done.files,
        deleted = done.deleted,
        "converted the output's format from the files it holds, with no request to the service"
    );
    Ok((job, done))
}

/// The job as it was: its spec, output and state in the old format.
pub(crate) struct Old {
    pub(crate) spec: Spec,
    pub(crate) sink: Arc<Sink>,
    pub(crate) state: StateStore,
}

impl Old {
    /// `spec`'s job as format `format` reads it, on `sink`'s storage.
    pub(crate) fn of(spec: &Spec, sink: &Sink, format: OutputFormat) -> Result<Old, RunError> {
        let spec = spec_in(spec, format);
        let sink = Arc::new(sink.as_output(&spec.output)?);
        let state = StateStore::new(sink.clone(), &spec.name);
        Ok(Old { spec, sink, state })
    }
}

/// Each table of `spec` and its schema (the writers', partition columns
/// they lack left out).
pub(crate) fn table_schemas(spec: &Spec) -> Result<BTreeMap<String, SchemaRef>, RunError> {
    let decoders = crate::job::tables::decoders(spec)?;
    let mut out = BTreeMap::new();
    for e in &spec.exports {
        let logs = decoders.get(e.index).cloned().flatten();
        for (table, schema) in export_tables(spec, e, logs.as_deref()) {
            out.entry(table).or_insert(schema);
        }
    }
    Ok(out)
}

/// What a parquet output of the job holds that the job committed.
pub(crate) struct ParquetFiles {
    /// The files, by table.
    pub(crate) files: BTreeMap<String, Vec<Listed>>,
    /// The units' checkpoints.
    pub(crate) states: HashMap<String, UnitState>,
    /// Units of a pending incremental segment: in `delta`, their files
    /// join the tables with their segment, once it is checked against the
    /// chain.
    pub(crate) held: HashSet<String>,
}

/// The files a parquet reader of the job sees that the job committed, by
/// table: the job's files under its tables, less hidden compaction
/// outputs, compacted files no compaction record names (of a generation
/// a later swap replaced), unit files a compaction replaced, files past a
/// unit's checkpoint, files of units without a checkpoint that the next
/// run plans (uncommitted work), and, unless `with_held`, files of `held`
/// units.
pub(crate) async fn parquet_files(spec: &Spec, state: &StateStore, job: &JobState, with_held: bool) -> Result<ParquetFiles, RunError> {
    let states = state.load_units().await?;
    let records = state.load_compactions().await?;
    let segments = state.load_segments().await?;
    let planned: HashMap<String, plan::Unit> = plan::plan(spec, &job.windows, job.cutting(spec), &segments)
        .into_iter()
        .map(|u| (u.id.clone(), u))
        .collect();
    let held: HashSet<String> = planned
        .values()
        .filter(|u| spec.exports.get(u.export).is_some_and(|e| e.incremental.is_some()))
        .map(|u| u.id.clone())
        .collect();
    let replaced: HashSet<&str> = records.iter().flat_map(|r| r.replaced.iter().map(String::as_str)).collect();
    let compacted: HashSet<&str> = records.iter().flat_map(|r| r.files.iter().map(|f| f.path.as_str())).collect();
    let mut files: BTreeMap<String, Vec<Listed>> = BTreeMap::new();
    for f in state.list_files(&spec.tables()).await? {
        let committed = match &f.kind {
            JobFile::Hidden(_) => false,
            JobFile::Compacted(..) => compacted.contains(f.rel.as_str()),
            JobFile::Unit(unit, seq) => {
                !replaced.contains(f.rel.as_str())
                    && (with_held || !held.contains(unit))
                    && match states.get(unit) {
                        Some(st) => *seq < st.next_seq && (st.committed.is_empty() || st.committed.iter().any(|c| c.path == f.rel)),
                        None => !planned.contains_key(unit) && *seq >= job.seq_floor,
                    }
            }
        };
        if committed {
            let table = f.rel.split('/').next().unwrap_or_default().to_string();
            files.entry(table).or_default().push(f);
        }
    }
    Ok(ParquetFiles { files, states, held })
}

/// Into a format that publishes: parquet → delta (see the module doc).
/// Everything that can refuse the conversion — a table of another layout,
/// an unfinished reorg repair, a footer that cannot be read — does so
/// before it is recorded, so the old spec still runs.
async fn adopt(
    spec: &Spec,
    sink: &Arc<Sink>,
    state: &StateStore,
    job: &JobState,
    old: &Old,
    migration: &mut Migration,
    now: i64,
) -> Result<Converted, RunError> {
    let to = sink.format().format();
    if let Some(m) = state.load_marks().await?.iter().find(|m| m.repair_from.is_some()) {
        return Err(RunError::Migration(format!(
            "job `{}`: a reorg repair of export[{}] on {} is not finished: run once more with format = \"{}\" to finish \
             it, then convert",
            spec.name, m.export, m.chain, migration.from
        )));
    }
    let schemas = table_schemas(spec)?;
    // A compaction a dead parquet run left is finished the parquet way.
    Compactor::new(&old.spec, &old.state, &old.sink, now).recover_all().await?;
    let stored = parquet_files(spec, state, job, false).await?;
    let mut out = Converted::default();
    let mut changes = Vec::new();
    for (table, schema) in &schemas {
        let files = stored.files.get(table).map(Vec::as_slice).unwrap_or_default();
        if let Some(p) = table_change(state, sink, table, schema, files, &stored).await? {
            changes.push((table, p));
        }
        out.tables += 1;
        out.files += files.len();
        out.bytes += files.iter().map(|f| f.bytes).sum::<u64>();
    }
    // Every file fits: the tables are created (or found with this
    // layout) last, so a refusal leaves no log in a parquet output.
    for (table, schema) in &schemas {
        sink.format().check_table(sink, table, schema).await.map_err(|e| match e {
            crate::sink::SinkError::Config { .. } => RunError::Environment(e.to_string()),
            e => RunError::Sink(e),
        })?;
    }
    state.save_migration(migration).await?;
    crate::util::failpoint::hit("conversion-recorded");
    for (table, prepared) in changes {
        sink.format().commit(sink, table, prepared).await?;
        crate::util::failpoint::hit("during-conversion");
    }
    tracing::debug!(format = %to, tables = out.tables, "the output's files adopted");
    out.rows = rows_of(
        stored.files.values().flatten().map(|f| f.rel.as_str()),
        &stored.states,
        &state.load_compactions().await?,
    );
    let marked = state.mark_published(&stored.held).await?;
    tracing::debug!(units = marked, "units marked published");
    Ok(out)
}

/// The commit that makes `table` hold `files` of the job, made ready
/// (footers read and checked against `schema`, the writer's): the files
/// not yet in it (each unit's with its transaction id), every unit with a
/// checkpoint counting files there recording its version, and the removal
/// of files of the job it holds that are no longer the job's output.
/// `None`: nothing to commit.
async fn table_change(
    state: &StateStore,
    sink: &Arc<Sink>,
    table: &str,
    schema: &SchemaRef,
    files: &[Listed],
    stored: &ParquetFiles,
) -> Result<Option<Change>, RunError> {
    let format = sink.format();
    let live: HashSet<String> = format
        .live_files(sink, table)
        .await?
        .into_iter()
        .flatten()
        .map(|f| format!("{table}/{}", f.path))
        .collect();
    let kept: HashSet<&str> = files.iter().map(|f| f.rel.as_str()).collect();
    let removes: Vec<String> = live
        .iter()
        .filter(|p| !kept.contains(p.as_str()) && p.rsplit('/').next().and_then(|n| state.classify(n)).is_some())
        .cloned()
        .collect();
    let states = &stored.states;
    let mut parts: BTreeMap<Option<String>, Vec<Stored>> = BTreeMap::new();
    for f in files.iter().filter(|f| !live.contains(&f.rel)) {
        let unit = match &f.kind {
            JobFile::Unit(u, _) if states.contains_key(u) => Some(u.clone()),
            _ => None,
        };
        parts.entry(unit).or_default().push(Stored::at(f.rel.clone(), f.bytes, None));
    }
    // Every unit with a checkpoint counting files here records its
    // version, whatever compaction made of its files — but a held unit,
    // whose files join with its segment under this very version.
    let dir = format!("{table}/");
    for (id, st) in states {
        if stored.held.contains(id) {
            continue;
        }
        let here = st.committed.iter().any(|c| c.path.starts_with(&dir))
            || files.iter().any(|f| matches!(&f.kind, JobFile::Unit(u, _) if u == id));
        if here && st.next_seq > 0 {
            parts.entry(Some(id.clone())).or_default();
        }
    }
    let joining: Vec<Joining> = parts
        .into_iter()
        .filter(|(unit, files)| unit.is_some() || !files.is_empty())
        .map(|(unit, files)| Joining {
            files,
            schema: Some(schema.clone()),
            txn: unit.and_then(|u| states.get(&u).map(|st| (unit_app_id(state, &u), st.next_seq as i64))),
            adopted: true,
        })
        .collect();
    format
        .prepare(sink, table, Change::whole(joining, removes))
        .await
        .map_err(|e| sink_failed(format.format(), e))
}

/// The rows in `files`, as the checkpoints and compaction records count them.
fn rows_of<'a>(files: impl Iterator<Item = &'a str>, states: &HashMap<String, UnitState>, records: &[crate::state::Compaction]) -> u64 {
    let mut rows: HashMap<&str, u64> = HashMap::new();
    for st in states.values() {
        for c in &st.committed {
            rows.insert(c.path.as_str(), c.rows);
        }
    }
    for r in records {
        for c in &r.files {
            rows.insert(c.path.as_str(), c.rows);
        }
    }
    files.filter_map(|f| rows.get(f)).sum()
}

/// Out of a format that publishes: delta → parquet (see the module doc).
async fn settle(spec: &Spec, sink: &Arc<Sink>, old: &Old, migration: &mut Migration, now: i64) -> Result<Converted, RunError> {
    let tables = spec.tables();
    let mut out = Converted::default();
    if migration.phase != Phase::Logs {
        refuse_unfinished(&old.spec, &old.state).await?;
        refuse_shared(&old.spec, &foreign_files(&old.sink, &old.state, &tables).await?)?;
        old.state.save_migration(migration).await?;
        crate::util::failpoint::hit("conversion-recorded");
        Compactor::new(&old.spec, &old.state, &old.sink, now).recover_all().await?;
        let keep = published_files(&old.state, &tables).await?;
        let listed = old.state.list_files(&tables).await?;
        let doomed: Vec<&Listed> = listed.iter().filter(|f| !keep.contains(&f.rel)).collect();
        out.deleted = doomed.len();
        futures::stream::iter(doomed)
            .map(|f| async move {
                sink.delete(&f.rel).await?;
                crate::util::failpoint::hit("during-conversion");
                Ok::<_, RunError>(())
            })
            .buffer_unordered(AT_ONCE)
            .try_collect::<Vec<()>>()
            .await?;
        let kept: Vec<&Listed> = listed.iter().filter(|f| keep.contains(&f.rel)).collect();
        out.files = kept.len();
        out.bytes = kept.iter().map(|f| f.bytes).sum();
        out.rows = rows_of(
            kept.iter().map(|f| f.rel.as_str()),
            &old.state.load_units().await?,
            &old.state.load_compactions().await?,
        );
        migration.phase = Phase::Logs;
        old.state.save_migration(migration).await?;
        crate::util::failpoint::hit("conversion-logs");
    }
    for table in &tables {
        // Another job may have published to the table since the check
        // before anything was deleted (it holds a lease of its own): while
        // the log still reads, it is checked again. (One this conversion
        // began deleting no longer reads, and is finished.)
        let one: BTreeSet<String> = std::iter::once(table.clone()).collect();
        if let Ok(foreign) = foreign_files(&old.sink, &old.state, &one).await {
            refuse_shared(&old.spec, &foreign)?;
        }
        if old.sink.format().forget(sink, table).await? {
            out.tables += 1;
        }
    }
    Ok(out)
}

/// Refuses a conversion away from `old` (the spec in the old format) of
/// tables that hold other jobs' files.
fn refuse_shared(old: &Spec, foreign: &BTreeMap<String, usize>) -> Result<(), RunError> {
    let Some((table, n)) = foreign.iter().next() else {
        return Ok(());
    };
    let from = old.output.format;
    Err(RunError::Migration(format!(
        "job `{}`: the {from} table {table} holds {n} file{} of other jobs sharing the output: converting this job \
         to another format would delete the records they are read through; keep format = \"{from}\", or give the \
         job an output of its own (--fresh, another uri)",
        old.name,
        if *n == 1 { "" } else { "s" }
    )))
}

/// Deletes what format `from` records of `tables` (a conversion killed
/// while deleting them left records that no longer read), leaving the
/// files.
pub(crate) async fn forget(spec: &Spec, sink: &Sink, from: OutputFormat, tables: &BTreeSet<String>) -> Result<(), RunError> {
    let old = Old::of(spec, sink, from)?;
    for table in tables {
        old.sink.format().forget(sink, table).await?;
    }
    Ok(())
}

/// A repair a format that publishes finishes in one commit a table — a
/// `verify --repair` (units exported again) or a reorg repair whose
/// segment is still to replace rewound files — cannot go on after the
/// conversion (`old`: the spec in the old format).
async fn refuse_unfinished(old: &Spec, state: &StateStore) -> Result<(), RunError> {
    match unfinished_repair(state).await? {
        Some(what) => Err(RunError::Migration(format!(
            "job `{}`: {what} is not finished: run once more with format = \"{}\" to finish it, then convert",
            old.name, old.output.format
        ))),
        None => Ok(()),
    }
}

/// A repair begun and not finished, said for a refusal: a `verify
/// --repair` of a compacted partition or of units exported again to
/// replace their files, or a reorg repair with files still to replace.
pub(crate) async fn unfinished_repair(state: &StateStore) -> Result<Option<String>, RunError> {
    if let Some(c) = state.load_compactions().await?.iter().find(|c| !c.dissolving.is_empty()) {
        return Ok(Some(format!("a repair of the compacted partition {}", c.partition)));
    }
    if let Some(u) = state
        .load_units()
        .await?
        .values()
        .find(|s| !s.replaces.is_empty() || !s.together.is_empty())
    {
        return Ok(Some(format!("unit {}, exported again to replace its files,", u.unit)));
    }
    if let Some(m) = state.load_marks().await?.iter().find(|m| !m.replacing.is_empty()) {
        return Ok(Some(format!("a reorg repair of export[{}] on {}", m.export, m.chain)));
    }
    Ok(None)
}

/// Tables whose current version holds files that are not the job's, and
/// how many (none where the format's readers list the folder).
pub(crate) async fn foreign_files(
    sink: &Arc<Sink>,
    state: &StateStore,
    tables: &BTreeSet<String>,
) -> Result<BTreeMap<String, usize>, RunError> {
    let mut out = BTreeMap::new();
    for table in tables {
        let Some(live) = sink.format().live_files(sink, table).await? else {
            continue;
        };
        let n = live
            .iter()
            .filter(|f| f.path.rsplit('/').next().and_then(|n| state.classify(n)).is_none())
            .count();
        if n > 0 {
            out.insert(table.clone(), n);
        }
    }
    Ok(out)
}

/// The job's files an output in a format that publishes holds for
/// readers, now or once published (paths relative to the output root):
/// those of the tables' current versions, and those checkpoints count
/// that the tables do not have yet — files of a unit at or above the
/// version its tables record for it (a pending segment's, or a run's
/// that died before its commit).
pub(crate) async fn published_files(state: &StateStore, tables: &BTreeSet<String>) -> Result<HashSet<String>, RunError> {
    let live = state.list_live_files(tables).await?.unwrap_or_default();
    let mut keep: HashSet<String> = live.into_iter().map(|f| f.rel).collect();
    let records = state.load_compactions().await?;
    let replaced: HashSet<&str> = records.iter().flat_map(|r| r.replaced.iter().map(String::as_str)).collect();
    for st in state.load_units().await?.values() {
        let waiting: Vec<&crate::state::CommittedFile> = st
            .committed
            .iter()
            .filter(|c| !keep.contains(&c.path) && !replaced.contains(c.path.as_str()))
            .collect();
        let mut recorded: HashMap<String, i64> = HashMap::new();
        for c in waiting {
            let table = c.path.split('/').next().unwrap_or_default().to_string();
            let version = match recorded.get(&table) {
                Some(v) => *v,
                None => {
                    let v = state.recorded_version([table.as_str()], &unit_app_id(state, &st.unit)).await?;
                    recorded.insert(table, v);
                    v
                }
            };
            let seq = c.path.rsplit('/').next().and_then(|n| state.classify(n)).and_then(|k| match k {
                JobFile::Unit(u, s) if u == st.unit => Some(s),
                _ => None,
            });
            if seq.is_some_and(|s| s as i64 >= version && s < st.next_seq) {
                keep.insert(c.path.clone());
            }
        }
    }
    Ok(keep)
}
