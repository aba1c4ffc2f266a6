//! Rewriting a job's stored files into the layout its spec now asks for
//! (`partition_by`, `bloom_filters`, `compression`, `row_group_rows`,
//! `hash_encoding`: see `crate::spec`'s layout keys), without columns an
//! export no longer writes (`columns`, `exclude_columns`), or with derived
//! tables made from them (`derive`), from the rows the output holds, with
//! no request to the service. The data side is `crate::sink`'s relayout.
//!
//! # What is rewritten, and who owns it after
//!
//! Every file of the job a reader sees (for a change that only leaves
//! columns out, every file of the tables that lose them; none where the
//! format drops a column from its schema alone), in groups, each written
//! again whole:
//!
//! - **a unit's files** (those its checkpoint counts, or all of a unit of
//!   a closed period or segment, which has none) become new files of the
//!   same unit, at sequences above every file it has: its checkpoint then
//!   counts the new ones in place of the old, and its rows and pages stay;
//! - **a compaction record's files** become compacted files of a new
//!   generation (one a record, above every generation the job used), in
//!   the partitions their rows now belong to; each partition's record then
//!   lists those files, and every unit file the records they came from
//!   replaced (so a repair finds the units whose rows they hold).
//!
//! # Exactly once
//!
//! Refusals come first, before anything is written: a `delta` table whose
//! partition columns or column types would change while it holds other
//! jobs' files, a repair not finished, a unit part way into its tables.
//! Then `migration.json` records the rewrite (phase `rewrite`, see
//! `crate::state`'s migration record), and only the spec that asked for it
//! may run. Outputs are written hidden; a group's document
//! (`rewrite/<key>.json`) is saved once its outputs are durable, so a run
//! killed meanwhile writes only the groups without one (hidden files no
//! document names are deleted first). Phase `swap` then:
//!
//! - `parquet`: table by table, each group's outputs are revealed
//!   (renamed from their hidden names), then its inputs deleted;
//! - `delta`: table by table, its outputs are revealed (no version reads
//!   them yet), then one commit removes the inputs and adds the outputs
//!   (`dataChange = false`) with the transaction
//!   `(chainetl-<job>-relayout, n)`, so a commit made again after a crash
//!   finds itself in the log; where `partition_by`, `hash_encoding` or the
//!   columns written changed, the same commit also replaces the table's
//!   metadata (partition columns, schema), every file a data change; files of units waiting for
//!   their incremental segment stay out of the tables, as before;
//!
//! and last the checkpoints and records are set from the documents, which
//! is idempotent. The documents go, then `job.json` records the new
//! identity, then the record goes.
//!
//! # What readers see meanwhile
//!
//! `delta`: the old files until the table's one commit, the new ones from
//! it; never a row twice or missing. `parquet`: between a group's reveal
//! and the deletion of its inputs (milliseconds locally, a request a file
//! on S3), a reader listing the folder can see that group's rows twice —
//! the window a compaction has (see `docs/output.md`).

mod derive;
mod swap;

use super::convert::{Converted, parquet_files, table_schemas};
use crate::job::error::RunError;
use crate::job::maintain::compact::Compactor;
use crate::job::tables::{compaction_app_id, relayout_app_id};
use crate::sink::{MergeInput, Relayout, RelayoutInput, Sink, WrittenFile};
use crate::spec::changes::lines_of;
use crate::spec::{FormatChange, JobIdentity, LayoutChange, LayoutKey, Spec};
use crate::state::{CommittedFile, JobFile, JobState, Listed, Migration, Phase, Rewrite, STATE_VERSION, StateStore};
use arrow_schema::SchemaRef;
use futures::{StreamExt, TryStreamExt};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

/// Groups written at once: the work is CPU (decode and encode).
const AT_ONCE: usize = 2;

/// One group of files to write again (see the module doc).
#[derive(Debug, Clone)]
struct Group {
    /// The unit whose files these are; None: a compaction record's.
    unit: Option<String>,
    /// The record's partition.
    partition: Option<String>,
    /// The files, by table, in the order to read them.
    inputs: BTreeMap<String, Vec<Listed>>,
    /// `delta`: in the tables' current versions.
    live: bool,
    /// A unit's first new sequence; a record's new generation.
    start: u64,
    /// A record's: the unit files it replaced.
    replaced: Vec<String>,
}

impl Group {
    fn key(&self) -> (Option<&String>, Option<&String>) {
        (self.unit.as_ref(), self.partition.as_ref())
    }
}

/// Rewrites the job's stored files into `spec`'s layout as `change` says,
/// holding the whole job's lease, then records the spec's identity as the
/// job's. Returns the job as recorded and what was done.
pub(crate) async fn rewrite(
    spec: &Spec,
    sink: &Arc<Sink>,
    state: &StateStore,
    mut job: JobState,
    change: &FormatChange,
    now: i64,
) -> Result<(JobState, Converted), RunError> {
    let started = Instant::now();
    let identity = JobIdentity::of(spec);
    let mut migration = match state.load_migration().await? {
        Some(m) => {
            tracing::info!(layout = %lines_of(&m.layout), "finishing an interrupted rewrite of the output's files");
            m
        }
        None => {
            refuse(spec, sink, state, &job).await?;
            Compactor::new(spec, state, sink, now).recover_all().await?;
            // Every refusal a group can meet is met before anything is recorded.
            inventory(spec, state, &job).await?;
            // A killed run's uncommitted files would otherwise be left in
            // the old layout, below the sequences the units go on from.
            let removed = delete_uncommitted(spec, state, &job).await?;
            tracing::debug!(files = removed, "uncommitted files removed before the rewrite");
            let mut m = Migration::new(spec.output.format, spec.output.format, identity.clone());
            m.layout = change.layout.clone();
            m.phase = Phase::Rewrite;
            m.rewrite_version = Some(
                state
                    .recorded_version(spec.tables().iter().map(String::as_str), &relayout_app_id(spec))
                    .await?
                    + 1,
            );
            state.save_migration(&m).await?;
            crate::util::failpoint::hit("rewrite-recorded");
            m
        }
    };
    let mut out = Converted {
        from: migration.from.to_string(),
        to: migration.to.to_string(),
        layout: migration.layout.iter().map(ToString::to_string).collect(),
        ..Default::default()
    };
    if migration.phase == Phase::Rewrite {
        write_groups(spec, sink, state, &job, &migration.layout).await?;
        migration.phase = Phase::Swap;
        state.save_migration(&migration).await?;
        crate::util::failpoint::hit("rewrite-written");
    }
    let docs = state.load_rewrites().await?;
    if migration.phase == Phase::Swap {
        swap::swap(spec, sink, state, &docs, &migration).await?;
        // The documents go next; once one is gone they no longer say the
        // whole rewrite, so the swap is not made from them again.
        migration.phase = Phase::Applied;
        state.save_migration(&migration).await?;
        crate::util::failpoint::hit("rewrite-applied");
    }
    let outputs = docs.iter().flat_map(|d| d.outputs.iter());
    out.files = docs.iter().map(|d| d.outputs.len()).sum();
    out.rows = outputs.clone().map(|f| f.rows).sum();
    out.bytes = outputs.clone().map(|f| f.bytes).sum();
    out.deleted = docs.iter().map(|d| d.inputs.len()).sum();
    out.tables = outputs.filter_map(|f| f.path.split('/').next()).collect::<BTreeSet<_>>().len();
    state.delete_rewrites().await?;
    job.spec_hash = identity.hash();
    job.identity = Some(identity);
    state.end_migration(&job).await?;
    out.secs = started.elapsed().as_secs_f64();
    tracing::info!(
        layout = %out.layout.join("; "),
        files = out.files,
        rows = out.rows,
        "rewrote the output's files into the spec's layout, from the files it holds, with no request to the service"
    );
    Ok((job, out))
}

/// What a rewrite making `layout` would read: files and bytes (for `plan`).
pub(crate) async fn planned(spec: &Spec, state: &StateStore, job: &JobState, layout: &[LayoutChange]) -> Result<(usize, u64), RunError> {
    let groups = rewritten(spec, job.identity.as_ref(), layout, inventory(spec, state, job).await?);
    let files = groups.iter().flat_map(|g| g.inputs.values().flatten());
    Ok((files.clone().count(), files.map(|f| f.bytes).sum()))
}

/// Refuses a rewrite that cannot be made now (see the module doc; where
/// the format records a table's layout, new partition columns or column
/// types of a table that holds other jobs' files).
async fn refuse(spec: &Spec, sink: &Arc<Sink>, state: &StateStore, job: &JobState) -> Result<(), RunError> {
    derive::refuse_tables(spec, sink, job).await?;
    // Keys a table's metadata holds (where the format records one): one
    // commit a table replaces it with the files, which must then all be
    // this job's.
    let now = JobIdentity::of(spec);
    for key in LayoutKey::ALL.into_iter().filter(|k| k.changes_columns()) {
        let key = key.name();
        let stored = job.identity.as_ref().and_then(|i| i.layout_value(key));
        if stored.is_some_and(|v| Some(v) != now.layout_value(key)) {
            let foreign = super::convert::foreign_files(sink, state, &spec.tables().into_iter().collect()).await?;
            if let Some((table, n)) = foreign.iter().next() {
                return Err(RunError::Migration(format!(
                    "job `{}`: the {} table {table} holds {n} file{} of other jobs sharing the output: its \
                     {key} cannot change under them; keep {key} as it is, or give the job an output of its own \
                     (--fresh, another uri)",
                    spec.name,
                    spec.output.format,
                    if *n == 1 { "" } else { "s" }
                )));
            }
        }
    }
    let unfinished = |what: String| {
        RunError::Migration(format!(
            "job `{}`: {what} is not finished: run once more with the layout the job has, to finish it, then change \
             the layout",
            spec.name
        ))
    };
    if let Some(what) = super::convert::unfinished_repair(state).await? {
        return Err(unfinished(what));
    }
    // A reorg repair begun in the mark, its segment not yet planned.
    if let Some(m) = state.load_marks().await?.iter().find(|m| m.repair_from.is_some()) {
        return Err(unfinished(format!("a reorg repair of export[{}] on {}", m.export, m.chain)));
    }
    Ok(())
}

/// The job's files a reader sees (and, where the format publishes, those
/// waiting for their segment), in groups. Refused when a unit's files are
/// part in its tables and part waiting.
async fn inventory(spec: &Spec, state: &StateStore, job: &JobState) -> Result<Vec<Group>, RunError> {
    let tables = spec.tables();
    let listed = state.list_files(&tables).await?;
    // What readers see: a published table's files, or (None) every file
    // in the folder.
    let live: Option<HashSet<String>> = state
        .list_live_files(&tables)
        .await?
        .map(|l| l.into_iter().map(|f| f.rel).collect());
    let files: Vec<Listed> = match &live {
        Some(_) => {
            let keep = super::convert::published_files(state, &tables).await?;
            listed.iter().filter(|f| keep.contains(&f.rel)).cloned().collect()
        }
        None => parquet_files(spec, state, job, true).await?.files.into_values().flatten().collect(),
    };
    let states = state.load_units().await?;
    let records = state.load_compactions().await?;
    // Sequences above every file a unit has, in any table.
    let mut top: HashMap<&str, u64> = HashMap::new();
    for f in &listed {
        if let JobFile::Unit(u, seq) = &f.kind {
            let t = top.entry(u.as_str()).or_default();
            *t = (*t).max(seq + 1);
        }
    }
    let mut units: BTreeMap<String, Vec<Listed>> = BTreeMap::new();
    let mut compacted: BTreeMap<String, Vec<Listed>> = BTreeMap::new();
    for f in files {
        match &f.kind {
            JobFile::Unit(u, _) => units.entry(u.clone()).or_default().push(f),
            JobFile::Compacted(..) => {
                let dir = f.rel.rsplit_once('/').map_or("", |(d, _)| d).to_string();
                compacted.entry(dir).or_default().push(f);
            }
            JobFile::Hidden(_) => {}
        }
    }
    let is_live = |group: &str, files: &[Listed]| -> Result<bool, RunError> {
        let Some(live) = &live else {
            return Ok(true);
        };
        let n = files.iter().filter(|f| live.contains(&f.rel)).count();
        if n != 0 && n != files.len() {
            return Err(RunError::Migration(format!(
                "job `{}`: {group} has files in its tables and files waiting to join them: run once more with the \
                 layout the job has (it publishes them), then change the layout",
                spec.name
            )));
        }
        Ok(n > 0)
    };
    let by_table = |files: Vec<Listed>| {
        let mut out: BTreeMap<String, Vec<Listed>> = BTreeMap::new();
        for f in files {
            out.entry(f.rel.split('/').next().unwrap_or_default().to_string())
                .or_default()
                .push(f);
        }
        // In each table, day by day and in the order they were written.
        for files in out.values_mut() {
            files.sort_by(|a, b| (day_of(&a.rel), seq_of(a)).cmp(&(day_of(&b.rel), seq_of(b))));
        }
        out
    };
    let mut groups = Vec::new();
    for (unit, files) in units {
        let live = is_live(&format!("unit {unit}"), &files)?;
        let start = states
            .get(&unit)
            .map_or(0, |s| s.next_seq)
            .max(top.get(unit.as_str()).copied().unwrap_or(0));
        groups.push(Group {
            unit: Some(unit),
            partition: None,
            inputs: by_table(files),
            live,
            start,
            replaced: Vec::new(),
        });
    }
    for (partition, files) in compacted {
        let live = is_live(&format!("compacted partition {partition}"), &files)?;
        let replaced = records
            .iter()
            .find(|r| r.partition == partition)
            .map(|r| r.replaced.clone())
            .unwrap_or_default();
        groups.push(Group {
            unit: None,
            partition: Some(partition),
            inputs: by_table(files),
            live,
            start: 0,
            replaced,
        });
    }
    let derived = derive::derivations(spec, job)?;
    if derived.is_empty() {
        return Ok(groups);
    }
    derive::select(spec, job, groups, &derived, state.format())
}

/// The groups a change writes again: where it only leaves columns out
/// ([`LayoutChange::Columns`]), the files of the tables that lose them
/// (`was`: the job's identity before the change; without one, every table
/// of the export) — else all. (Every format writes them again: a
/// column left out by a schema change alone would keep its bytes, and
/// files with and without it in one partition would never compact.)
fn rewritten(spec: &Spec, was: Option<&JobIdentity>, layout: &[LayoutChange], groups: Vec<Group>) -> Vec<Group> {
    if layout.is_empty() {
        return groups;
    }
    let mut tables = BTreeSet::new();
    for change in layout {
        let LayoutChange::Columns { export, .. } = change else {
            return groups;
        };
        let Some(e) = spec.exports.get(*export) else { continue };
        let before = was.and_then(|w| w.exports.get(*export));
        let loses = |t: &String| before.is_none_or(|b| b.dropped_from(t) != e.dropped_from(t));
        tables.extend(e.tables().into_iter().filter(loses));
    }
    groups
        .into_iter()
        .filter_map(|mut g| {
            g.inputs.retain(|table, _| tables.contains(table));
            (!g.inputs.is_empty()).then_some(g)
        })
        .collect()
}

fn day_of(rel: &str) -> &str {
    rel.split('/').find_map(|d| d.strip_prefix("date=")).unwrap_or("")
}

fn seq_of(f: &Listed) -> u64 {
    match f.kind {
        JobFile::Unit(_, s) | JobFile::Compacted(_, s) => s,
        JobFile::Hidden(_) => 0,
    }
}

/// Writes every group without a document (see *Exactly once*).
async fn write_groups(spec: &Spec, sink: &Arc<Sink>, state: &StateStore, job: &JobState, layout: &[LayoutChange]) -> Result<(), RunError> {
    let docs = state.load_rewrites().await?;
    let named: HashSet<String> = docs
        .iter()
        .flat_map(|d| d.outputs.iter().map(|f| crate::sink::hidden_name(&f.path)))
        .collect();
    // Hidden files no document names: a killed run's, written again below.
    for rel in state.list_hidden(&spec.tables()).await? {
        if !named.contains(&rel) {
            state.delete_data(&rel).await?;
        }
    }
    let done: HashSet<(Option<String>, Option<String>)> = docs.iter().map(|d| (d.unit.clone(), d.partition.clone())).collect();
    let mut groups = rewritten(spec, job.identity.as_ref(), layout, inventory(spec, state, job).await?);
    // Compacted files get generations above every one the job has used:
    // in records (a swap's rolled back too), documents, and any file's
    // name (one no record names too).
    let records = state.load_compactions().await?;
    let listed = state.list_files(&spec.tables()).await?;
    let used = records
        .iter()
        .map(|r| r.generation.max(r.rolled_back))
        .chain(docs.iter().map(|d| d.generation))
        .chain([job.generation_floor])
        .chain(listed.iter().filter_map(|f| f.kind.generation()))
        .max()
        .unwrap_or(0);
    let logged = state
        .recorded_version(spec.tables().iter().map(String::as_str), &compaction_app_id(spec))
        .await?
        .max(0) as u64;
    let mut generation = used.max(logged);
    for g in groups.iter_mut().filter(|g| g.partition.is_some()) {
        generation += 1;
        g.start = generation;
    }
    let todo: Vec<Group> = groups
        .into_iter()
        .filter(|g| !done.contains(&(g.unit.clone(), g.partition.clone())))
        .collect();
    let schemas = table_schemas(spec)?;
    let memory = (spec.output.memory_budget / AT_ONCE).max(1 << 20);
    let with = Writing {
        schemas,
        copying: Copying::of(spec, job, layout, state).await?,
        memory,
    };
    let derived = derive::derivations(spec, job)?;
    futures::stream::iter(todo)
        .map(|g| {
            let with = &with;
            let decoder = derive::of_group(spec, &derived, &g).and_then(|d| d.decoder.clone());
            async move {
                let doc = write_group(spec, sink, state, with, &g, decoder).await?;
                state.save_rewrite(&doc).await?;
                crate::util::failpoint::hit("during-rewrite");
                tracing::debug!(unit = ?g.key().0, partition = ?g.key().1, files = doc.outputs.len(), "rewritten");
                Ok::<_, RunError>(())
            }
        })
        .buffer_unordered(AT_ONCE)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

/// What every group is written with.
struct Writing {
    /// Each table's schema, as the spec writes it.
    schemas: BTreeMap<String, SchemaRef>,
    copying: Copying,
    /// A group's share of the memory budget.
    memory: usize,
}

/// Writes one group's files again, hidden (`decoder`: decodes them into
/// derived tables instead); returns its document.
async fn write_group(
    spec: &Spec,
    sink: &Arc<Sink>,
    state: &StateStore,
    with: &Writing,
    g: &Group,
    decoder: Option<Arc<crate::decode::abi::LogDecoder>>,
) -> Result<Rewrite, RunError> {
    let Writing { schemas, copying, memory } = with;
    let memory = *memory;
    let mut next_seq = g.start;
    let mut outputs: Vec<WrittenFile> = Vec::new();
    // Files read and kept as they are (raw logs decoded into derived tables).
    let mut kept: HashSet<&str> = HashSet::new();
    for (table, files) in &g.inputs {
        let Some(schema) = schemas.get(table) else {
            return Err(RunError::Migration(format!(
                "job `{}`: files under {table}/ are the job's, but the spec writes no table {table}",
                spec.name
            )));
        };
        let (prefix, chain, start) = match &g.unit {
            Some(u) => (
                state.file_prefix(u),
                crate::job::maintain::compact::unit_export(u).map(|(_, c)| c),
                next_seq,
            ),
            None => (format!("{}-compacted-{:06}", spec.name, g.start), None, 0),
        };
        let job = Relayout {
            table: table.clone(),
            schema: schema.clone(),
            prefix,
            next_seq: start,
            // Decoding writes a table a writer, sharing the group's memory.
            memory: memory / decoder.as_ref().map_or(1, |d| d.tables().len().max(1)),
            chain,
            decoded_schemas: decoder
                .iter()
                .flat_map(|d| {
                    d.tables()
                        .iter()
                        .map(|t| schemas.get(&t.table).cloned().unwrap_or_else(|| t.schema()))
                })
                .collect(),
            decoder: decoder.clone(),
        };
        if decoder.is_some() {
            kept.extend(files.iter().map(|f| f.rel.as_str()));
        } else if let Some(dir) = copying.one_partition(spec, schema, files) {
            // Every file's rows go whole to one partition, their columns
            // and encoding as they are: row groups are copied, not decoded.
            let name_of = |seq: u64| format!("{dir}/{}", crate::sink::file_name(&job.prefix, start + seq));
            let inputs: Vec<MergeInput> = files
                .iter()
                .map(|f| MergeInput {
                    rel: f.rel.clone(),
                    bytes: f.bytes,
                    checksum: copying.checksums.get(&f.rel).cloned().flatten(),
                })
                .collect();
            match sink.merge(&inputs, &name_of, spec.output.target_file_bytes).await {
                Ok(merged) => {
                    if g.unit.is_some() {
                        next_seq = start + merged.files.len() as u64;
                    }
                    outputs.extend(merged.files);
                    continue;
                }
                // Files that cannot be copied together (columns a release
                // added since, bytes that do not match their checksum) are
                // decoded and written again instead, which fills a missing
                // column with nulls, or fails on bytes it cannot read.
                Err(e @ crate::sink::SinkError::Read { .. }) => tracing::debug!("rewrite: row groups not copied: {e}"),
                Err(e) => return Err(e.into()),
            }
        }
        let inputs: Vec<RelayoutInput> = files
            .iter()
            .map(|f| RelayoutInput {
                rel: f.rel.clone(),
                bytes: f.bytes,
            })
            .collect();
        let done = sink.rewrite(&job, &inputs).await.map_err(|e| unreadable(spec, e))?;
        if let Some(d) = &decoder
            && done.counts.mismatched > 0
        {
            // As an export says it: the stored logs are kept, so a signature
            // corrected later (with `--fresh`, or a new export) decodes them.
            let hint = done.counts.shape.and_then(|shape| d.hint(shape)).unwrap_or_default();
            tracing::warn!(
                table,
                mismatched = done.counts.mismatched,
                "stored logs carry a decoded event's topic0 but fit none of its tables, and are left out of them: {hint}"
            );
        }
        if g.unit.is_some() {
            next_seq = done.next_seq;
        }
        outputs.extend(done.files);
    }

    Ok(Rewrite {
        version: STATE_VERSION,
        unit: g.unit.clone(),
        partition: g.partition.clone(),
        inputs: g
            .inputs
            .values()
            .flatten()
            .filter(|f| !kept.contains(f.rel.as_str()))
            .map(|f| f.rel.clone())
            .collect(),
        live: g.live,
        outputs: outputs.iter().map(CommittedFile::from).collect(),
        next_seq,
        replaced: g.replaced.clone(),
        generation: if g.unit.is_none() { g.start } else { 0 },
    })
}

/// Deletes the job's uncommitted unit files: past a unit's checkpoint, or
/// of a unit the next run plans that has none (a killed run's work, which
/// the units export again). Files a Delta table's current version holds
/// stay. Returns how many it deleted.
async fn delete_uncommitted(spec: &Spec, state: &StateStore, job: &JobState) -> Result<usize, RunError> {
    let tables = spec.tables();
    let states = state.load_units().await?;
    let segments = state.load_segments().await?;
    let planned: HashSet<String> = crate::plan::plan(spec, &job.windows, job.cutting(spec), &segments)
        .into_iter()
        .map(|u| u.id)
        .collect();
    let live: HashSet<String> = state
        .list_live_files(&tables)
        .await?
        .unwrap_or_default()
        .into_iter()
        .map(|f| f.rel)
        .collect();
    let mut n = 0;
    for f in state.list_files(&tables).await? {
        let JobFile::Unit(unit, seq) = &f.kind else {
            continue;
        };
        let uncommitted = match states.get(unit) {
            Some(st) => *seq >= st.next_seq,
            None => planned.contains(unit) && *seq >= job.seq_floor,
        };
        if uncommitted && !live.contains(&f.rel) {
            state.delete_data(&f.rel).await?;
            n += 1;
        }
    }
    Ok(n)
}

/// Undoes a rewrite `spec` did not ask for while nothing of it is
/// published (phase `rewrite`), when `spec` is the job as it stands (the
/// old spec: its identity is the job's): its hidden outputs and documents
/// are deleted, then the record. So the old spec, and its `verify
/// --repair`, can take the job back from a rewrite that cannot be made.
/// Returns whether it undid one.
pub(crate) async fn undo(spec: &Spec, state: &StateStore, job: &JobState) -> Result<bool, RunError> {
    let Some(m) = state.load_migration().await? else {
        return Ok(false);
    };
    let identity = JobIdentity::of(spec);
    if m.layout.is_empty() || m.phase != Phase::Rewrite || m.identity == identity || job.identity.as_ref() != Some(&identity) {
        return Ok(false);
    }
    // The tables the rewrite wrote too (a derived table the old spec lacks).
    let mut tables = spec.tables();
    tables.extend(m.identity.exports.iter().flat_map(|e| e.tables()).filter(|t| !t.is_empty()));
    for rel in state.list_hidden(&tables).await? {
        state.delete_data(&rel).await?;
    }
    state.delete_rewrites().await?;
    state.delete_migration().await?;
    tracing::warn!(
        layout = %lines_of(&m.layout),
        "a rewrite into another layout, begun {} and not yet published, was undone: the job keeps its layout",
        m.started_at
    );
    Ok(true)
}

/// A file that cannot be read back refuses the rewrite (exit 2): the
/// old spec undoes it (see [`undo`]), and its `verify --repair` exports
/// the file again.
fn unreadable(spec: &Spec, e: crate::sink::SinkError) -> RunError {
    match e {
        crate::sink::SinkError::Read { .. } => RunError::Migration(format!(
            "job `{}`: rewriting into the new layout: {e}; `chainetl verify` with the old spec names damaged files, \
             and `verify --repair` exports them again",
            spec.name
        )),
        e => RunError::Sink(e),
    }
}

/// When row groups can be copied as they are (compaction's merge) rather
/// than decoded and encoded again: a change that only drops partition
/// keys, so each file's rows go whole to one new partition.
struct Copying {
    /// The partition keys dropped; None: no copying.
    dropped: Option<Vec<String>>,
    /// Each committed file's checksum: a file is copied only when its
    /// bytes are checked against it.
    checksums: HashMap<String, Option<String>>,
}

impl Copying {
    async fn of(spec: &Spec, job: &JobState, layout: &[LayoutChange], state: &StateStore) -> Result<Copying, RunError> {
        let old: Option<Vec<String>> = job
            .identity
            .as_ref()
            .and_then(|i| i.layout_value("partition_by"))
            .and_then(|v| serde_json::from_value(v.clone()).ok());
        let only_keys = matches!(
            layout,
            [LayoutChange::Output {
                key: LayoutKey::PartitionBy,
                ..
            }]
        );
        let dropped = old
            .filter(|old| only_keys && spec.output.partition_by.iter().all(|k| old.contains(k)))
            .map(|old| {
                old.into_iter()
                    .filter(|k| !spec.output.partition_by.contains(k))
                    .collect::<Vec<_>>()
            });
        let mut checksums = HashMap::new();
        if dropped.is_some() {
            for st in state.load_units().await?.values() {
                checksums.extend(st.committed.iter().map(|c| (c.path.clone(), c.checksum.clone())));
            }
            for r in state.load_compactions().await? {
                checksums.extend(r.files.iter().map(|c| (c.path.clone(), c.checksum.clone())));
            }
        }
        Ok(Copying { dropped, checksums })
    }

    /// The one partition `files` (of a table of `schema`) go to, when
    /// their row groups can be copied there.
    fn one_partition(&self, spec: &Spec, schema: &SchemaRef, files: &[Listed]) -> Option<String> {
        let dropped = self.dropped.as_ref()?;
        // A dropped key the table has as a column would have to be put
        // back into the files.
        if dropped.iter().any(|k| schema.column_with_name(k).is_some()) {
            return None;
        }
        let dir_of = |rel: &str| {
            let mut parts = rel.split('/');
            let mut dir = parts.next().unwrap_or_default().to_string();
            let values: Vec<&str> = parts.collect();
            for key in &spec.output.partition_by {
                if let Some(v) = values
                    .iter()
                    .find(|p| p.strip_prefix(key.as_str()).is_some_and(|r| r.starts_with('=')))
                {
                    dir.push('/');
                    dir.push_str(v);
                }
            }
            dir
        };
        let first = dir_of(&files.first()?.rel);
        files.iter().all(|f| dir_of(&f.rel) == first).then_some(first)
    }
}
