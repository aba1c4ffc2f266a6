//! Reading a job without running it: `status` (units, checkpoints, marks,
//! periods), `plan` (the next run's units against the job's frozen windows
//! and checkpoints) and `verify` (every committed file against its
//! checkpoint). None takes the lease or writes anything.

use crate::job::error::RunError;
use crate::job::run::report_format::RefusedLine;
use crate::plan::{self, Segment, Unit};
use crate::sink::Sink;
use crate::spec::{JobIdentity, OutputFormat, Spec};
use crate::state::{Depth, FileProblem, Interrupted, JobState, LiveTable, Mark, Progress, StateStore, UnitState};
use crate::vocab::window::Resolved;
use std::collections::HashMap;
use std::sync::Arc;

/// What `status` shows of a job.
#[derive(Debug, Default)]
pub struct JobStatus {
    /// Units of the frozen windows (none before the first run).
    pub units: Vec<Unit>,
    /// Their checkpoints, by unit id.
    pub states: HashMap<String, UnitState>,
    /// High-water marks of incremental exports.
    pub marks: Vec<Mark>,
    /// Aligned periods exported completely.
    pub periods: Vec<Segment>,
    /// Operations begun and not finished (a compaction swap, a repair, a
    /// `--fresh` clearing).
    pub interrupted: Vec<Interrupted>,
    /// What the service refused in the run that ended last (its report's
    /// `refused[]`), while units are left to do.
    pub refused: Vec<RefusedLine>,
    /// The files and bytes readers see, a table of the spec
    /// ([`crate::state::LiveTable`]; none before the first run).
    pub tables: Vec<LiveTable>,
}

impl JobStatus {
    /// Where the job stands, as `status --format json` and `report` say
    /// it: `interrupted`, `not_started`, `complete` or `in_progress`.
    pub fn state(&self) -> &'static str {
        let done = self
            .units
            .iter()
            .filter(|u| self.states.get(&u.id).is_some_and(|st| st.done))
            .count();
        // Aligned and incremental exports leave periods and marks rather
        // than units of a frozen window.
        let ran = !self.units.is_empty() || !self.periods.is_empty() || !self.marks.is_empty();
        if !self.interrupted.is_empty() {
            "interrupted"
        } else if !ran {
            "not_started"
        } else if done == self.units.len() && self.marks.iter().all(|m| m.repair_from.is_none()) {
            "complete"
        } else {
            "in_progress"
        }
    }
}

/// A job's units, checkpoints, marks and exported periods, for `status`.
pub async fn status(spec: &Spec) -> Result<JobStatus, RunError> {
    let sink = Arc::new(Sink::open(&spec.output)?);
    let state = StateStore::new(sink.clone(), &spec.name);
    // After an interrupted --fresh the next run starts over: not started.
    if state.clear_interrupted().await? {
        return Ok(JobStatus {
            interrupted: vec![Interrupted::fresh()],
            ..JobStatus::default()
        });
    }
    let migration = state.load_migration().await?;
    let (units, states, mut interrupted, tables) = match state.load_job().await? {
        Some(job) => {
            let mut interrupted = Interrupted::of_compactions(&state.load_compactions().await?);
            interrupted.extend(state.interrupted_repair(spec, &job).await?);
            // Part way between two formats or layouts, files are in flight
            // (as `verify` says): counted once the run finishes the change.
            // Best effort: a table a reader of this build cannot read (or
            // a catalog credential this machine lacks) costs the figures,
            // not the command.
            let tables = match migration {
                Some(_) => Vec::new(),
                None => {
                    let counted = match stored_state(spec, &sink, &state, &job) {
                        Ok(stored) => stored.live_tables(&spec.tables()).await.map_err(|e| e.to_string()),
                        Err(e) => Err(e.to_string()),
                    };
                    counted.unwrap_or_else(|e| {
                        tracing::warn!("the tables' files could not be counted: {}", crate::util::redact::redact(&e));
                        Vec::new()
                    })
                }
            };
            (
                plan::plan(spec, &job.windows, job.cutting(spec), &[]),
                state.load_units().await?,
                interrupted,
                tables,
            )
        }
        None => (Vec::new(), HashMap::new(), Vec::new(), Vec::new()),
    };
    if let Some(m) = migration {
        interrupted.insert(0, Interrupted::conversion(&m));
    }
    let mut status = JobStatus {
        units,
        states,
        marks: state.load_marks().await?,
        periods: state.load_periods().await?,
        interrupted,
        refused: Vec::new(),
        tables,
    };
    if status.state() != "complete" {
        status.refused = last_refusals(&state).await?;
    }
    Ok(status)
}

/// The state of the job's output as its files are now: in the format the
/// job recorded, where a run has not converted it to the spec's yet.
pub(crate) fn stored_state(spec: &Spec, sink: &Arc<Sink>, state: &StateStore, job: &JobState) -> Result<StateStore, RunError> {
    match job.identity.as_ref().map(|i| i.format()) {
        Some(f) if f != spec.output.format.name() => {
            let format = RunError::recorded_format(spec, &f)?;
            Ok(crate::job::change::convert::Old::of(spec, sink, format)?.state)
        }
        _ => Ok(state.clone()),
    }
}

/// What the service refused in the run that ended last, as its report
/// says (a report that does not say reads as nothing refused).
async fn last_refusals(state: &StateStore) -> Result<Vec<RefusedLine>, RunError> {
    /// The part of a run report read here.
    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct Refusals {
        refused: Vec<RefusedLine>,
    }
    let latest = state.load_latest_report().await?;
    Ok(latest
        .and_then(|doc| serde_json::from_value::<Refusals>(doc).ok())
        .map(|r| r.refused)
        .unwrap_or_default())
}

/// What `verify` found: operations begun and not finished, and committed
/// files that are missing or changed.
#[derive(Debug, Default)]
pub struct Verification {
    /// Operations begun and not finished; their files are not problems.
    pub interrupted: Vec<Interrupted>,
    /// Committed files missing or changed, and rows missing or twice.
    pub problems: Vec<FileProblem>,
    /// The rows readers see, per table and chain, against those the job
    /// committed.
    pub rows: Vec<crate::state::TableRows>,
    /// Compacted partitions whose rows were checked file by file only.
    pub uncounted: usize,
    /// Table folders the job shares with another job that writes them in
    /// another format or layout (one line each, naming the job and keys).
    pub mixed: Vec<String>,
    /// Whether the job has state at its output at all (false: it never
    /// ran there, and there was nothing to check).
    pub started: bool,
    /// The files and bytes readers see, a table, from the listing checked
    /// ([`crate::state::LiveTable`], as `status` and `report` count them).
    pub tables: Vec<LiveTable>,
}

/// The operations the job's state records as begun and not finished, and
/// every committed file of the job that is missing or not as its checkpoint
/// recorded it (`chainetl verify`), checked to `depth`; `progress` counts
/// the files and bytes read.
pub async fn verify(spec: &Spec, depth: Depth, progress: &Progress) -> Result<Verification, RunError> {
    let sink = Arc::new(Sink::open(&spec.output)?);
    let state = StateStore::new(sink.clone(), &spec.name);
    if state.clear_interrupted().await? {
        return Ok(Verification {
            interrupted: vec![Interrupted::fresh()],
            started: true,
            ..Default::default()
        });
    }
    let Some(job) = state.load_job().await? else {
        return Ok(Verification::default());
    };
    // Part way between two formats, the files are checked once the run
    // that finishes the conversion has made them one or the other.
    if let Some(m) = state.load_migration().await? {
        return Ok(Verification {
            interrupted: vec![Interrupted::conversion(&m)],
            started: true,
            ..Default::default()
        });
    }
    // Not converted yet: the files are checked as they are.
    let state = stored_state(spec, &sink, &state, &job)?;
    let states = state.load_units().await?;
    let verified = state.verify(&spec.tables(), &states, depth, progress).await?;
    let mixed = match &job.identity {
        Some(identity) => crate::job::change::sharing::mixes(identity, &state)
            .await?
            .into_iter()
            .map(|(_, line)| line)
            .collect(),
        None => Vec::new(),
    };
    let mut interrupted = Interrupted::of_compactions(&state.load_compactions().await?);
    interrupted.extend(state.interrupted_repair(spec, &job).await?);
    Ok(Verification {
        interrupted,
        problems: verified.problems,
        rows: verified.rows,
        uncounted: verified.uncounted,
        mixed,
        started: true,
        tables: verified.tables,
    })
}

/// What `chainetl plan` shows: the job as the next `run` would see it.
/// For a job with state, its frozen windows (never resolved again), its
/// recorded segments and its checkpoints; for a new one, the windows
/// resolved now (or at `--as-of`) and no checkpoints.
#[derive(Debug, Default)]
pub struct PlanView {
    /// When the job started (its state's `created_at`); None: a new job.
    pub started: Option<String>,
    /// The windows by export: frozen, or resolved for a new job.
    pub windows: Vec<Option<Resolved>>,
    /// Aligned periods and incremental segments the next run would work on.
    pub segments: Vec<Segment>,
    /// The units of the next run.
    pub units: Vec<Unit>,
    /// Their checkpoints, by unit id.
    pub states: HashMap<String, UnitState>,
    /// The change of output format the run makes first, from the files
    /// the output holds.
    pub conversion: Option<ConversionPlan>,
}

/// A change of output format `plan` foresees: made from the stored files,
/// with no request.
#[derive(Debug, Clone, Default)]
pub struct ConversionPlan {
    /// The format the output is in.
    pub from: String,
    /// The spec's.
    pub to: String,
    /// Files the output keeps in the new format (adopted, or left).
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
    /// A rewrite into another layout (`to` is `from`): the changed layout
    /// keys, one line a key; the files are those rewritten.
    pub layout: Vec<String>,
}

impl PlanView {
    /// The plan of a job that has no state yet, at `now`. Pure.
    pub fn new_job(spec: &Spec, now: i64) -> PlanView {
        let windows = plan::freeze_windows(spec, now);
        let segments: Vec<Segment> = spec.exports.iter().filter_map(|e| plan::aligned_segment(e, now)).collect();
        let units = plan::plan(spec, &windows, plan::Cutting::latest(spec.source.page_size), &segments);
        PlanView {
            started: None,
            windows,
            segments,
            units,
            states: HashMap::new(),
            conversion: None,
        }
    }
}

/// The plan of the job's next run, read from its state without taking the
/// lease or writing anything. `as_of` is checked as `run` checks it; a spec
/// that `run` would refuse as changed is refused the same way.
pub async fn plan_view(spec: &Spec, as_of: Option<i64>) -> Result<PlanView, RunError> {
    let now = as_of.unwrap_or_else(|| plan::job_now(spec));
    crate::job::run::preflight(spec).await?;
    let sink = Arc::new(Sink::open(&spec.output)?);
    let state = StateStore::new(sink.clone(), &spec.name);
    // After an interrupted --fresh the next run starts over.
    if state.clear_interrupted().await? {
        return Ok(PlanView::new_job(spec, now));
    }
    let Some(job) = state.load_job().await? else {
        return Ok(PlanView::new_job(spec, now));
    };
    let compared = match &job.identity {
        Some(stored) => stored.compare(&JobIdentity::of(spec)),
        None if job.spec_hash != spec.content_hash() => crate::spec::Comparison {
            changes: vec!["the spec (its hash differs from the job's)".into()],
            ..Default::default()
        },
        None => Default::default(),
    };
    crate::job::change::prepare::one_change_a_run(spec, &compared)?;
    let changes = compared.changes;
    crate::job::change::prepare::migration_of(spec, &state, &JobIdentity::of(spec)).await?;
    if !changes.is_empty() {
        return Err(RunError::JobChanged {
            name: spec.name.clone(),
            changes,
            deletes: crate::job::change::prepare::fresh_deletes(spec, &state).await?,
        });
    }
    crate::job::change::prepare::check_as_of(spec, &job, as_of)?;
    let mut windows = job.windows.clone();
    let stored = job.identity.as_ref().map_or(windows.len(), |i| i.exports.len());
    windows.truncate(stored);
    let fresh = plan::freeze_windows(spec, now);
    for e in spec.exports.iter().skip(stored) {
        // An appended export: frozen by the run that first saw it, or now.
        let w = match state.load_added_export(e.index).await? {
            Some(added) => added.window,
            None => fresh.get(e.index).copied().flatten(),
        };
        windows.push(w);
    }
    let mut segments = state.load_segments().await?;
    for seg in spec.exports.iter().filter_map(|e| plan::aligned_segment(e, now)) {
        if !segments.contains(&seg) && !state.period_done(&seg).await? {
            segments.push(seg);
        }
    }
    let units = plan::plan(spec, &windows, job.cutting(spec), &segments);
    let conversion = match compared.format {
        Some((from, to)) => Some(conversion_plan(spec, &sink, &state, &job, from, to).await?),
        None if !compared.layout.is_empty() => {
            let (files, bytes) = crate::job::change::relayout::planned(spec, &state, &job, &compared.layout).await?;
            let format = spec.output.format.name().to_string();
            Some(ConversionPlan {
                from: format.clone(),
                to: format,
                files,
                bytes,
                layout: compared.layout.iter().map(ToString::to_string).collect(),
            })
        }
        None => None,
    };
    Ok(PlanView {
        started: Some(job.created_at.clone()),
        windows,
        segments,
        units,
        states: state.load_units().await?,
        conversion,
    })
}

/// What converting the job's output from `from` to `to` keeps: the files
/// a parquet reader sees that the job committed, or the Delta tables'
/// current files.
async fn conversion_plan(
    spec: &Spec,
    sink: &Arc<Sink>,
    state: &StateStore,
    job: &crate::state::JobState,
    from: OutputFormat,
    to: OutputFormat,
) -> Result<ConversionPlan, RunError> {
    let old = crate::job::change::convert::Old::of(spec, sink, from)?;
    let (files, bytes) = if !old.sink.format().publishes() {
        let stored = crate::job::change::convert::parquet_files(spec, state, job, false).await?;
        let files: Vec<_> = stored.files.into_values().flatten().collect();
        (files.len(), files.iter().map(|f| f.bytes).sum())
    } else {
        let tables = spec.tables();
        // A conversion killed while deleting the logs: what is left stays.
        let keep = crate::job::change::convert::published_files(&old.state, &tables).await.ok();
        let kept: Vec<_> = old
            .state
            .list_files(&tables)
            .await?
            .into_iter()
            .filter(|f| {
                keep.as_ref()
                    .map_or(!matches!(f.kind, crate::state::JobFile::Hidden(_)), |k| k.contains(&f.rel))
            })
            .collect();
        (kept.len(), kept.iter().map(|f| f.bytes).sum())
    };
    Ok(ConversionPlan {
        from: from.to_string(),
        to: to.to_string(),
        files,
        bytes,
        layout: Vec::new(),
    })
}
