//! `chainetl report`'s data: where a job stands, read from its state and
//! run reports without taking the lease, writing anything or sending a
//! request to the service. The page (`crate::cli`'s report page) is drawn
//! from exactly this, serialised ([`Overview`], `--format json`).
//!
//! # Invariants
//!
//! - **Read only.** What `status` reads (units of the frozen windows and
//!   their checkpoints, marks, periods, interrupted operations), the
//!   compaction records, the newest [`RUNS`] run reports and, a table, the
//!   files readers see (as `status` reads them: one listing, or the
//!   table's log) and its version.
//! - **One count of files.** A table's files and bytes are those readers
//!   see, as `status` and `verify` count them
//!   ([`crate::state::LiveTable`]); a strip's and a cell's `files` and
//!   `bytes` are what the units' checkpoints say they wrote (before a
//!   compaction or a rewrite replaced it), kept in the JSON and not shown
//!   on the page.
//! - **A run that changed the output says what it changed**
//!   ([`RunLine::changed`]), never "nothing to do".
//! - **Each unit in exactly one state** ([`CellState`]), so a strip's
//!   counts add up to its units.
//! - **No secret.** The whole document passes through
//!   `crate::util::redact` and is read back before it is returned, so the
//!   page and the JSON show the same masked text; the run reports it
//!   quotes were redacted when written.
//! - **Typed both ways.** The document is these structs: `--format json`
//!   serialises them, the page reads their fields. A stored run report is
//!   read into [`StoredRun`], whose every field has a default, so a report
//!   written by any version reads (what it lacks shows as 0 or blank).
//!   Fields are added, never renamed: scripts read this document.
//! - **Bounded.** At most [`RUNS`] runs and [`FAILURES`] failures; one
//!   cell a unit (a year on seven chains is ~3,500).

use super::status_view::{InterruptedLine, PeriodLine};
use crate::job::error::RunError;
use crate::job::run::report_format::RefusedLine;
use crate::job::run::series::Series;
use crate::sink::Sink;
use crate::sink::format::CommitLine;
use crate::spec::Spec;
use crate::state::{JobFile, StateError, StateStore};
use serde::{Deserialize, Serialize};
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
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

impl CellState {
    /// Every state, from done to not begun (the page's legend order).
    pub const ALL: [CellState; 5] = [
        CellState::Committed,
        CellState::Compacted,
        CellState::InProgress,
        CellState::Failed,
        CellState::NotStarted,
    ];
}

/// Units by state; a state no unit is in is absent (0).
pub type Counts = BTreeMap<CellState, u64>;

/// One unit of a strip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Unit id.
    pub unit: String,
    /// What it owns (`blocks 100..199`, a time window).
    pub range: String,
    /// Where it stands.
    pub state: CellState,
    /// Rows committed.
    pub rows: u64,
    /// Files its checkpoint says it wrote (see [`Strip::files`]).
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// One export on one chain: its window as a strip of units.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    pub counts: Counts,
    /// Rows, files and bytes committed.
    pub rows: u64,
    /// Files its units' checkpoints say they wrote (not what readers see
    /// after a compaction or a rewrite: that is [`TableLine::files`]).
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// The units, in window order.
    pub cells: Vec<Cell>,
}

/// One run, from its report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunLine {
    /// Run id.
    pub run_id: String,
    /// Start and end (RFC 3339).
    pub started_at: String,
    /// End.
    pub finished_at: String,
    /// Seconds.
    pub elapsed_secs: f64,
    /// How it ended, as its report says (`succeeded`, `nothing_to_do`,
    /// `failed`, `interrupted`: [`super::RunStatus`]; older reports other
    /// words), so kept as text.
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
    pub series: Option<Series>,
    /// What the run changed in the output from its files (a conversion to
    /// another format, a rewrite into another layout, columns left out),
    /// in words (`crate::job::change::convert::Converted::what`); absent
    /// where it changed nothing so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<String>,
}

impl RunLine {
    /// Whether the run found nothing to do (every unit done already, no
    /// new confirmed block, the period exported).
    pub fn had_nothing_to_do(&self) -> bool {
        // A report of an older build says `nothing_to_do` of a run that
        // converted or rewrote the output.
        self.status == crate::job::run::report_format::RunStatus::NothingToDo.as_str() && self.changed.is_none()
    }
}

/// A unit not done whose newest try failed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TableLine {
    /// Its directory under the output.
    pub table: String,
    /// The job's files there that readers see (unit and compacted; in
    /// `delta` and `iceberg`, those of the current version), as `status`
    /// and `verify` count them ([`crate::state::LiveTable`]).
    pub files: u64,
    /// Bytes.
    pub bytes: u64,
    /// Of those, compacted files.
    pub compacted_files: u64,
    /// Rows the job committed there (checkpoints and compaction records).
    pub rows: u64,
    /// `delta`: the table's version (None: no table yet).
    pub delta_version: Option<u64>,
    /// `iceberg`: the current snapshot's id (None: no snapshot yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<i64>,
    /// `iceberg`: its sequence number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_number: Option<i64>,
    /// `iceberg`: the table's metadata version (`v<N>.metadata.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata_version: Option<u64>,
    /// `delta`: its newest [`COMMITS`] commits the log still has, newest first.
    pub last_commits: Vec<CommitLine>,
    /// `iceberg` with `[output.catalog]`: the table's identifier in the
    /// catalog (`chain.blocks`), whose current metadata the figures read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog_identifier: Option<String>,
}

/// Where an incremental export stands on a chain.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MarkLine {
    /// Export index.
    pub export: usize,
    /// Chain.
    pub chain: String,
    /// First block (or day, as unix seconds) not exported yet.
    pub next: u64,
    /// Reorgs repaired so far.
    pub reorgs: u64,
    /// Whether a reorg repair is unfinished.
    pub repairing: bool,
    /// The chain's confirmations, as the spec says (None: the export is
    /// no longer incremental).
    pub confirmations: Option<u64>,
}

/// What the next run will do.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NextRun {
    /// Units not done.
    pub units: u64,
    /// Their requests as the cut guessed them when it balanced the units
    /// (from a typical density; the data decides): rough. The page says
    /// what is known: at least one request a unit.
    pub requests_estimated: u64,
}

/// Everything the page shows (`chainetl report --format json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    pub counts: Counts,
    /// Rows committed.
    pub rows: u64,
    /// One strip an export and chain.
    pub coverage: Vec<Strip>,
    /// Incremental exports' marks.
    pub marks: Vec<MarkLine>,
    /// Aligned periods exported.
    pub periods: Vec<PeriodLine>,
    /// The newest runs, oldest first.
    pub runs: Vec<RunLine>,
    /// Units not done whose newest try failed.
    pub failures: Vec<Failure>,
    /// What the service refused in the newest run (the key, or a chain's
    /// endpoint), once each, while units are left (as `status` says it);
    /// the units it left are not started, not failed. Absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<RefusedLine>,
    /// Operations begun and not finished.
    pub interrupted: Vec<InterruptedLine>,
    /// What the next run will do.
    pub next_run: NextRun,
    /// The output's tables.
    pub tables: Vec<TableLine>,
}

/// The fields of a run report (`super::report::RunSummary`) the overview
/// reads. Each has a default: a report from before a field was written
/// reads with it 0 or blank.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct StoredRun {
    /// Run id.
    pub run_id: String,
    /// Start (RFC 3339).
    pub started_at: String,
    /// End (RFC 3339).
    pub finished_at: String,
    /// Seconds.
    pub elapsed_secs: f64,
    /// How it ended.
    pub status: String,
    /// Requests sent.
    pub requests: u64,
    /// Retried attempts.
    pub retries: u64,
    /// 429 answers.
    pub throttled: u64,
    /// 5xx answers.
    pub server_errors: u64,
    /// Units failed.
    pub failed: Vec<StoredFailure>,
    /// `K/N` with `--shard`.
    pub shard: Option<String>,
    /// Per export and chain (its rows are the run's).
    pub tallies: Vec<StoredTally>,
    /// Its figures over time; one that does not read is left out, the
    /// run's line kept.
    #[serde(deserialize_with = "or_none")]
    pub series: Option<Series>,
    /// The change of the output it made first; one that does not read is
    /// left out, the run's line kept.
    #[serde(deserialize_with = "or_none")]
    pub conversion: Option<crate::job::change::convert::Converted>,
}

fn or_none<'de, D: serde::Deserializer<'de>, T: serde::de::DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    Ok(Option::<serde_json::Value>::deserialize(d)?.and_then(|v| serde_json::from_value(v).ok()))
}

/// A failed unit, as a run report lists it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct StoredFailure {
    /// Unit id.
    pub unit: String,
    /// Chain (text: a chain this build does not know still reads).
    pub chain: String,
    /// Dataset.
    pub dataset: String,
    /// What it owns.
    pub range: String,
    /// The error.
    pub error: String,
}

/// The part of a run report's tally the overview sums.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct StoredTally {
    /// Rows committed by the run.
    pub rows: u64,
}

/// The run reports of `state`, newest [`RUNS`], oldest first; one that does
/// not read as a run report is left out, with a warning.
async fn stored_runs(state: &StateStore) -> Result<Vec<StoredRun>, RunError> {
    let docs = state.load_run_reports(RUNS).await?;
    Ok(docs
        .into_iter()
        .filter_map(|doc| match serde_json::from_value::<StoredRun>(doc) {
            Ok(r) => Some(r),
            Err(e) => {
                tracing::warn!("a run report does not read ({e}); left out of the report");
                None
            }
        })
        .collect())
}

/// Reads the job `spec` names (see the module doc), secrets masked.
pub async fn overview(spec: &Spec) -> Result<Overview, RunError> {
    let status = super::inspect::status(spec).await?;
    let sink = Arc::new(Sink::open(&spec.output)?);
    let state = StateStore::new(sink.clone(), &spec.name);
    let job = state.load_job().await?;
    let records = state.load_compactions().await?;
    let reports = stored_runs(&state).await?;
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
        for f in &r.failed {
            failed.entry(f.unit.clone()).or_insert_with(|| Failure {
                unit: f.unit.clone(),
                chain: f.chain.clone(),
                dataset: f.dataset.clone(),
                range: f.range.clone(),
                error: f.error.clone(),
                run_id: r.run_id.clone(),
                started_at: r.started_at.clone(),
            });
        }
    }
    let mut strips: BTreeMap<(usize, String), Strip> = BTreeMap::new();
    let mut counts = BTreeMap::new();
    let mut next = NextRun::default();
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
        *counts.entry(cell_state).or_default() += 1;
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
        *strip.counts.entry(cell_state).or_default() += 1;
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
            .map(|m| MarkLine {
                export: m.export,
                chain: m.chain.name().into(),
                next: m.next,
                reorgs: m.reorgs,
                repairing: m.repair_from.is_some(),
                confirmations: spec
                    .exports
                    .get(m.export)
                    .and_then(|e| e.incremental.as_ref())
                    .map(|i| i.confirmations(m.chain)),
            })
            .collect(),
        periods: status
            .periods
            .iter()
            .map(|p| PeriodLine {
                export: p.export,
                window: p.window.to_string(),
            })
            .collect(),
        runs: reports
            .iter()
            .enumerate()
            .map(|(i, r)| run_line(r, i + SERIES_RUNS >= reports.len()))
            .collect(),
        failures,
        refused: status.refused.clone(),
        interrupted: status.interrupted.iter().map(InterruptedLine::from).collect(),
        next_run: next,
        tables: tables(spec, &sink, &state, &records, &status.tables).await?,
    };
    redacted(&out)
}

/// `doc` with every string masked (`crate::util::redact`) and read back:
/// what the page draws is what `--format json` prints.
fn redacted(doc: &Overview) -> Result<Overview, RunError> {
    // Only a secret inside one of chainetl's own words (a unit's state)
    // could make the masked document unreadable.
    let unreadable = |e: serde_json::Error| RunError::State(StateError::io("report", "encoding", e));
    let mut v = serde_json::to_value(doc).map_err(unreadable)?;
    crate::util::redact::redact_json(&mut v);
    serde_json::from_value(v).map_err(unreadable)
}

/// A run report's line, with its time series if `series`.
fn run_line(r: &StoredRun, series: bool) -> RunLine {
    let rows: u64 = r.tallies.iter().map(|t| t.rows).sum();
    let secs = r.elapsed_secs;
    let per_sec = |x: u64| if secs > 0.0 { (x as f64 / secs * 10.0).round() / 10.0 } else { 0.0 };
    RunLine {
        run_id: r.run_id.clone(),
        started_at: r.started_at.clone(),
        finished_at: r.finished_at.clone(),
        elapsed_secs: secs,
        status: r.status.clone(),
        rows,
        requests: r.requests,
        retries: r.retries,
        throttled: r.throttled,
        server_errors: r.server_errors,
        failed: r.failed.len() as u64,
        shard: r.shard.clone(),
        rows_per_sec: per_sec(rows),
        requests_per_sec: per_sec(r.requests),
        series: r.series.clone().filter(|_| series),
        changed: r.conversion.as_ref().map(crate::job::change::convert::Converted::what),
    }
}

/// Each table of the spec: the job's files there, and its Delta version.
async fn tables(
    spec: &Spec,
    sink: &Arc<Sink>,
    state: &StateStore,
    records: &[crate::state::Compaction],
    live: &[crate::state::LiveTable],
) -> Result<Vec<TableLine>, RunError> {
    let names = spec.tables();
    let units = state.load_units().await?;
    // The files readers see, as `status` counted them (none before the
    // first run).
    let live = if live.is_empty() {
        crate::state::LiveTable::tally(&names, &[])
    } else {
        live.to_vec()
    };
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
    for (t, files) in names.iter().zip(&live) {
        let version = sink.format().table_version(sink, t, COMMITS).await?;
        let snapshot = version.as_ref().and_then(|v| v.snapshot);
        let (delta_version, metadata_version) = match &version {
            Some(v) if v.of_snapshots => (None, Some(v.version)),
            Some(v) => (Some(v.version), None),
            None => (None, None),
        };
        let last_commits = version.map(|v| v.last_commits).unwrap_or_default();
        out.push(TableLine {
            table: t.clone(),
            files: files.files,
            bytes: files.bytes,
            compacted_files: files.compacted_files,
            rows: by_table.get(t).copied().unwrap_or(0),
            delta_version,
            snapshot_id: snapshot.map(|s| s.0),
            sequence_number: snapshot.map(|s| s.1),
            metadata_version,
            last_commits,
            catalog_identifier: spec.output.catalog.as_ref().map(|c| c.identifier(t)),
        });
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::Value;

    /// `report --format json` as chainetl 0.2.0 printed it: a Delta job
    /// with an incremental and an aligned export, a failed, a succeeded
    /// and a nothing-to-do run; a job with failed units and shards; a job
    /// with an interrupted compaction swap.
    pub(crate) const DOCUMENTS: [&str; 3] = [
        include_str!("../../../tests/fixtures/views/report-delta-marks-periods.json"),
        include_str!("../../../tests/fixtures/views/report-failures-shard.json"),
        include_str!("../../../tests/fixtures/views/report-interrupted.json"),
    ];

    /// The run reports 0.2.0 wrote for the first document's three runs.
    const RUN_REPORTS: [&str; 3] = [
        include_str!("../../../tests/fixtures/views/run-report-failed.json"),
        include_str!("../../../tests/fixtures/views/run-report-succeeded.json"),
        include_str!("../../../tests/fixtures/views/run-report-nothing-to-do.json"),
    ];

    /// Every key path of `v` (`runs[].series.t[]`), arrays' items merged.
    fn paths(v: &Value, at: &str, out: &mut std::collections::BTreeSet<String>) {
        match v {
            Value::Object(o) => {
                for (k, item) in o {
                    let p = format!("{at}.{k}");
                    out.insert(p.clone());
                    paths(item, &p, out);
                }
            }
            Value::Array(a) => a.iter().for_each(|item| paths(item, &format!("{at}[]"), out)),
            _ => {}
        }
    }

    #[test]
    fn a_0_2_0_report_document_reads_into_the_structs_and_back_field_for_field() {
        for doc in DOCUMENTS {
            let old: Value = serde_json::from_str(doc).unwrap();
            let typed: Overview = serde_json::from_value(old.clone()).unwrap();
            let back = serde_json::to_value(&typed).unwrap();
            let (mut was, mut now) = (Default::default(), Default::default());
            paths(&old, "", &mut was);
            paths(&back, "", &mut now);
            assert_eq!(
                was.symmetric_difference(&now).collect::<Vec<_>>(),
                Vec::<&String>::new(),
                "fields renamed, added or lost"
            );
            assert_eq!(back, old, "every value as 0.2.0 printed it");
        }
    }

    #[test]
    fn a_0_2_0_run_report_reads_into_the_line_0_2_0_drew_from_it() {
        let doc: Overview = serde_json::from_str(DOCUMENTS[0]).unwrap();
        assert_eq!(doc.runs.len(), RUN_REPORTS.len());
        for (report, line) in RUN_REPORTS.iter().zip(&doc.runs) {
            let stored: StoredRun = serde_json::from_str(report).unwrap();
            assert_eq!(run_line(&stored, true), *line);
            // Older lines carry no series.
            assert_eq!(run_line(&stored, false).series, None);
        }
        assert!(doc.runs[2].had_nothing_to_do() && !doc.runs[1].had_nothing_to_do());
    }

    #[test]
    fn a_run_report_missing_fields_or_with_an_odd_series_still_reads() {
        let stored: StoredRun = serde_json::from_str(r#"{"run_id": "r", "series": [1, 2]}"#).unwrap();
        let line = run_line(&stored, true);
        assert_eq!((line.run_id.as_str(), line.rows, line.series), ("r", 0, None));
    }

    #[test]
    fn a_run_that_converted_or_rewrote_the_output_says_so_and_is_not_idle() {
        // As an older build wrote it: `nothing_to_do`, with its conversion.
        let stored: StoredRun = serde_json::from_str(
            r#"{"run_id": "r", "status": "nothing_to_do", "conversion": {"from": "parquet", "to": "parquet",
                "tables": 2, "files": 3, "rows": 8850, "bytes": 10, "layout": ["output.partition_by: was [], now []"]}}"#,
        )
        .unwrap();
        let line = run_line(&stored, true);
        assert_eq!(
            line.changed.as_deref(),
            Some("rewrote 3 files of 2 tables into the spec's layout (output.partition_by: was [], now []), 8850 rows")
        );
        assert!(!line.had_nothing_to_do());
        let idle: StoredRun = serde_json::from_str(r#"{"run_id": "r", "status": "nothing_to_do", "conversion": 7}"#).unwrap();
        assert!(
            run_line(&idle, true).had_nothing_to_do(),
            "a conversion that does not read is left out"
        );
    }

    #[test]
    fn a_secret_in_the_document_is_masked_on_both_sides() {
        crate::util::redact::register("sk-overview-SECRET-41");
        let doc = Overview {
            failures: vec![Failure {
                error: "refused sk-overview-SECRET-41".into(),
                ..Failure::default()
            }],
            ..Overview::default()
        };
        let masked = redacted(&doc).unwrap();
        assert_eq!(masked.failures[0].error, "refused ***");
    }
}
