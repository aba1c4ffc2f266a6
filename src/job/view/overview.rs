//! `chainetl report`'s data: where a job stands, read from its state and
//! run reports without taking the lease, writing anything or sending a
//! request to the service. The page (`crate::cli`'s report page) is drawn
//! from exactly this, serialised ([`Overview`], `--format json`).
//!
//! # Invariants
//!
//! - **Read only.** What `status` reads (units of the frozen windows and
//!   their checkpoints, marks, periods, interrupted operations), the
//!   compaction records, the newest [`RUNS`] run reports and one listing
//!   of the job's files a table; in `delta`, each table's version.
//! - **Each unit in exactly one state** ([`CellState`]), so a strip's
//!   counts add up to its units.
//! - **No secret.** The whole document passes through
//!   `crate::util::redact` before it is returned; the run reports it
//!   quotes were redacted when written.
//! - **Bounded.** At most [`RUNS`] runs and [`FAILURES`] failures; one
//!   cell a unit (a year on seven chains is ~3,500).

use crate::job::error::RunError;
use crate::sink::Sink;
use crate::spec::Spec;
use crate::state::{JobFile, StateStore};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// Run reports read (the newest).
pub const RUNS: usize = 100;
/// Failed units listed (the newest run's first).
pub const FAILURES: usize = 200;
/// Runs whose time series the document carries (the newest).
pub const SERIES_RUNS: usize = 6;
/// Commits listed a Delta table (the newest).
pub const COMMITS: usize = 5;
/// The document's schema version.
pub const OVERVIEW_VERSION: u32 = 1;

/// Where a unit stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CellState {
    /// Done; its files are the table's.
    Committed,
    /// Done, and its rows are in compacted files.
    Compacted,
    /// Begun (a checkpoint) and not done: in flight, or a run died.
    InProgress,
    /// Not done, and the newest run that tried it failed it.
    Failed,
    /// No checkpoint yet.
    NotStarted,
}

/// One unit of a strip.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// Unit id.
    pub unit: String,
    /// What it owns (`blocks 100..199`, a time window).
    pub range: String,
    /// Where it stands.
    pub state: CellState,
    /// Rows committed.
    pub rows: u64,
    /// Files committed.
    pub files: u64,
    /// Bytes committed.
    pub bytes: u64,
}

/// One export on one chain: its window as a strip of units.
#[derive(Debug, Clone, Serialize)]
pub struct Strip {
    /// Export index.
    pub export: usize,
    /// Dataset.
    pub dataset: String,
    /// Chain.
    pub chain: String,
    /// The frozen window (empty for an export without one: aligned,
    /// incremental).
    pub window: String,
    /// Units by state.
    pub counts: BTreeMap<String, u64>,
    /// Rows, files and bytes committed.
    pub rows: u64,
    /// Files committed.
    pub files: u64,
    /// Bytes committed.
    pub bytes: u64,
    /// The units, in window order.
    pub cells: Vec<Cell>,
}

/// One run, from its report.
#[derive(Debug, Clone, Serialize)]
pub struct RunLine {
    /// Run id.
    pub run_id: String,
    /// Start and end (RFC 3339).
    pub started_at: String,
    /// End.
    pub finished_at: String,
    /// Seconds.
    pub elapsed_secs: f64,
    /// How it ended (`ok`, `partial`, `failed`, `interrupted`, …).
    pub status: String,
    /// Rows committed.
    pub rows: u64,
    /// Requests sent.
    pub requests: u64,
    /// Retried attempts.
    pub retries: u64,
    /// 429 answers.
    pub throttled: u64,
    /// 5xx answers.
    pub server_errors: u64,
    /// Units failed.
    pub failed: u64,
    /// `K/N` with `--shard`.
    pub shard: Option<String>,
    /// Rows per second over the run.
    pub rows_per_sec: f64,
    /// Requests per second over the run.
    pub requests_per_sec: f64,
    /// The newest [`SERIES_RUNS`] runs: the run report's `series` (its
    /// figures over time, cumulative, column-wise; see `crate::job::run::series`);
    /// None for older runs and runs from before it was recorded.
    pub series: Option<serde_json::Value>,
}

/// A unit not done whose newest try failed.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    /// Unit id.
    pub unit: String,
    /// Chain.
    pub chain: String,
    /// Dataset.
    pub dataset: String,
    /// What it owns.
    pub range: String,
    /// The error, as the run reported it.
    pub error: String,
    /// The run that failed it.
    pub run_id: String,
    /// When that run began (RFC 3339).
    pub started_at: String,
}

/// A table of the output.
#[derive(Debug, Clone, Serialize)]
pub struct TableLine {
    /// Its directory under the output.
    pub table: String,
    /// The job's files there (unit and compacted), and their bytes.
    pub files: u64,
    /// Bytes.
    pub bytes: u64,
    /// Of those, compacted files.
    pub compacted_files: u64,
    /// Rows the job committed there (checkpoints and compaction records).
    pub rows: u64,
    /// `delta`: the table's version (None: no table yet).
    pub delta_version: Option<u64>,
    /// `delta`: its newest [`COMMITS`] commits the log still has, newest first.
    pub last_commits: Vec<crate::storage::delta::CommitLine>,
}

/// What the next run will do.
#[derive(Debug, Clone, Serialize)]
pub struct NextRun {
    /// Units not done.
    pub units: u64,
    /// Their estimated requests.
    pub requests_estimated: u64,
}

/// Everything the page shows (`chainetl report --format json`).
#[derive(Debug, Clone, Serialize)]
pub struct Overview {
    /// [`OVERVIEW_VERSION`].
    pub version: u32,
    /// Job name.
    pub job: String,
    /// When this was read (RFC 3339).
    pub generated_at: String,
    /// The chainetl that read it.
    pub chainetl_version: String,
    /// The output's location.
    pub output: String,
    /// `parquet` or `delta`.
    pub format: String,
    /// As `status --format json` says: `not_started`, `in_progress`,
    /// `complete`, `interrupted`.
    pub state: String,
    /// Units by state, over the whole job.
    pub counts: BTreeMap<String, u64>,
    /// Rows committed.
    pub rows: u64,
    /// One strip an export and chain.
    pub coverage: Vec<Strip>,
    /// Incremental exports' marks.
    pub marks: Vec<serde_json::Value>,
    /// Aligned periods exported.
    pub periods: Vec<serde_json::Value>,
    /// The newest runs, oldest first.
    pub runs: Vec<RunLine>,
    /// Units not done whose newest try failed.
    pub failures: Vec<Failure>,
    /// Operations begun and not finished.
    pub interrupted: Vec<crate::state::Interrupted>,
    /// What the next run will do.
    pub next_run: NextRun,
    /// The output's tables.
    pub tables: Vec<TableLine>,
}

fn count(map: &mut BTreeMap<String, u64>, state: CellState) {
    let key = serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    *map.entry(key).or_default() += 1;
}

/// Reads the job `spec` names (see the module doc): an [`Overview`] as
/// JSON, secrets masked.
pub async fn overview(spec: &Spec) -> Result<serde_json::Value, RunError> {
    let status = super::inspect::status(spec).await?;
    let sink = Arc::new(Sink::open(&spec.output)?);
    let state = StateStore::new(sink.clone(), &spec.name);
    let job = state.load_job().await?;
    let records = state.load_compactions().await?;
    let reports = state.load_run_reports(RUNS).await?;
    // Units whose files a compaction replaced: their rows are compacted.
    let compacted: HashSet<String> = records
        .iter()
        .flat_map(|r| r.replaced.iter().filter_map(|p| p.rsplit('/').next()))
        .filter_map(|name| match state.classify(name) {
            Some(JobFile::Unit(u, _)) => Some(u),
            _ => None,
        })
        .collect();
    // The newest run's error for each unit it failed.
    let mut failed: HashMap<String, Failure> = HashMap::new();
    for r in reports.iter().rev() {
        let run_id = r["run_id"].as_str().unwrap_or_default().to_string();
        for f in r["failed"].as_array().into_iter().flatten() {
            let unit = f["unit"].as_str().unwrap_or_default().to_string();
            failed.entry(unit.clone()).or_insert_with(|| Failure {
                unit,
                chain: f["chain"].as_str().unwrap_or_default().into(),
                dataset: f["dataset"].as_str().unwrap_or_default().into(),
                range: f["range"].as_str().unwrap_or_default().into(),
                error: f["error"].as_str().unwrap_or_default().into(),
                run_id: run_id.clone(),
                started_at: r["started_at"].as_str().unwrap_or_default().into(),
            });
        }
    }
    let mut strips: BTreeMap<(usize, String), Strip> = BTreeMap::new();
    let mut counts = BTreeMap::new();
    let mut next = NextRun {
        units: 0,
        requests_estimated: 0,
    };
    for u in &status.units {
        let st = status.states.get(&u.id);
        let cell_state = match st {
            Some(s) if s.done && compacted.contains(&u.id) => CellState::Compacted,
            Some(s) if s.done => CellState::Committed,
            // Checkpointed since the run that failed it began: a later
            // run took it up (and died, or holds it now).
            Some(s) if failed.get(&u.id).is_some_and(|f| s.updated_at.as_str() > f.started_at.as_str()) => CellState::InProgress,
            _ if failed.contains_key(&u.id) => CellState::Failed,
            Some(_) => CellState::InProgress,
            None => CellState::NotStarted,
        };
        if !st.is_some_and(|s| s.done) {
            next.units += 1;
            next.requests_estimated += u.estimated_requests;
        }
        count(&mut counts, cell_state);
        let strip = strips.entry((u.export, u.chain.name().to_string())).or_insert_with(|| Strip {
            export: u.export,
            dataset: u.dataset.name().to_string(),
            chain: u.chain.name().to_string(),
            window: job
                .as_ref()
                .and_then(|j| j.windows.get(u.export).copied().flatten())
                .map(|w| w.to_string())
                .unwrap_or_default(),
            counts: BTreeMap::new(),
            rows: 0,
            files: 0,
            bytes: 0,
            cells: Vec::new(),
        });
        count(&mut strip.counts, cell_state);
        let (rows, files, bytes) = st.map_or((0, 0, 0), |s| (s.rows, s.files, s.bytes));
        strip.rows += rows;
        strip.files += files;
        strip.bytes += bytes;
        strip.cells.push(Cell {
            unit: u.id.clone(),
            range: u.range.to_string(),
            state: cell_state,
            rows,
            files,
            bytes,
        });
    }
    let not_done: HashSet<&str> = status
        .units
        .iter()
        .filter(|u| !status.states.get(&u.id).is_some_and(|s| s.done))
        .map(|u| u.id.as_str())
        .collect();
    let retried = |f: &Failure| {
        status
            .states
            .get(&f.unit)
            .is_some_and(|s| s.updated_at.as_str() > f.started_at.as_str())
    };
    let mut failures: Vec<Failure> = failed
        .into_values()
        .filter(|f| not_done.contains(f.unit.as_str()) && !retried(f))
        .collect();
    failures.sort_by(|a, b| b.run_id.cmp(&a.run_id).then(a.unit.cmp(&b.unit)));
    failures.truncate(FAILURES);
    let out = Overview {
        version: OVERVIEW_VERSION,
        job: spec.name.clone(),
        generated_at: chrono::Utc::now().to_rfc3339(),
        chainetl_version: env!("CARGO_PKG_VERSION").into(),
        output: state.output_uri().to_string(),
        format: spec.output.format.name().to_string(),
        state: status.state().into(),
        counts,
        rows: status.states.values().map(|s| s.rows).sum(),
        coverage: strips.into_values().collect(),
        marks: status
            .marks
            .iter()
            .map(|m| {
                let confirmations = spec
                    .exports
                    .get(m.export)
                    .and_then(|e| e.incremental.as_ref())
                    .map(|i| i.confirmations(m.chain));
                serde_json::json!({"export": m.export, "chain": m.chain.name(), "next": m.next, "reorgs": m.reorgs,
                    "repairing": m.repair_from.is_some(), "confirmations": confirmations})
            })
            .collect(),
        periods: status
            .periods
            .iter()
            .map(|p| serde_json::json!({"export": p.export, "window": p.window.to_string()}))
            .collect(),
        runs: reports
            .iter()
            .enumerate()
            .map(|(i, r)| run_line(r, i + SERIES_RUNS >= reports.len()))
            .collect(),
        failures,
        interrupted: status.interrupted,
        next_run: next,
        tables: tables(spec, &sink, &state, &records).await?,
    };
    let mut v = serde_json::to_value(&out).unwrap_or_default();
    crate::util::redact::redact_json(&mut v);
    Ok(v)
}

/// A run report's line, with its time series if `series`.
fn run_line(r: &serde_json::Value, series: bool) -> RunLine {
    let n = |k: &str| r[k].as_u64().unwrap_or(0);
    let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
    let rows: u64 = r["tallies"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["rows"].as_u64().unwrap_or(0))
        .sum();
    let secs = r["elapsed_secs"].as_f64().unwrap_or(0.0);
    let per_sec = |x: u64| if secs > 0.0 { (x as f64 / secs * 10.0).round() / 10.0 } else { 0.0 };
    RunLine {
        run_id: s("run_id"),
        started_at: s("started_at"),
        finished_at: s("finished_at"),
        elapsed_secs: secs,
        status: s("status"),
        rows,
        requests: n("requests"),
        retries: n("retries"),
        throttled: n("throttled"),
        server_errors: n("server_errors"),
        failed: r["failed"].as_array().map_or(0, |a| a.len() as u64),
        shard: r["shard"].as_str().map(String::from),
        rows_per_sec: per_sec(rows),
        requests_per_sec: per_sec(n("requests")),
        series: r.get("series").filter(|s| series && s.is_object()).cloned(),
    }
}

/// Each table of the spec: the job's files there, and its Delta version.
async fn tables(
    spec: &Spec,
    sink: &Arc<Sink>,
    state: &StateStore,
    records: &[crate::state::Compaction],
) -> Result<Vec<TableLine>, RunError> {
    let names = spec.tables();
    let listed = state.list_files(&names).await?;
    let units = state.load_units().await?;
    let table_of = |rel: &str| rel.split('/').next().unwrap_or_default().to_string();
    let replaced: HashSet<&str> = records.iter().flat_map(|r| r.replaced.iter().map(String::as_str)).collect();
    let committed = units
        .values()
        .flat_map(|s| s.committed.iter())
        .filter(|c| !replaced.contains(c.path.as_str()))
        .chain(records.iter().flat_map(|r| r.files.iter()));
    let mut by_table: HashMap<String, u64> = HashMap::new();
    for c in committed {
        *by_table.entry(table_of(&c.path)).or_default() += c.rows;
    }
    let mut out = Vec::new();
    for t in &names {
        let files: Vec<_> = listed
            .iter()
            .filter(|f| table_of(&f.rel) == *t && !matches!(f.kind, JobFile::Hidden(_)))
            .collect();
        let (mut delta_version, mut last_commits) = (None, Vec::new());
        if let Some(d) = sink.delta() {
            let table = d.table(sink, t);
            let failed = |e| crate::job::change::convert::io_failed(t, e);
            if table.exists(sink.storage()).await.map_err(failed)? {
                let v = table.blocking(|t| t.snapshot().map(|s| s.version())).await.map_err(failed)?;
                last_commits = table.last_commits(sink.storage(), v, COMMITS).await;
                delta_version = Some(v);
            }
        }
        out.push(TableLine {
            table: t.clone(),
            files: files.len() as u64,
            bytes: files.iter().map(|f| f.bytes).sum(),
            compacted_files: files.iter().filter(|f| matches!(f.kind, JobFile::Compacted(..))).count() as u64,
            rows: by_table.get(t).copied().unwrap_or(0),
            delta_version,
            last_commits,
        });
    }
    Ok(out)
}
