//! What a run did: per export and chain tallies ([`Tally`], keyed by
//! [`ExportKey`]), the failures, and the [`RunSummary`] returned to the
//! caller and written as the run report `_chainetl/<job>/runs/<run id>.json`
//! (redacted; one per run, never rewritten) and copied to
//! `runs/latest.json` (replaced atomically, so it is always a whole
//! report: the last run that ended). Its schema is in [`super::report_format`].

use super::RunOptions;
pub use super::counters::{ExportKey, MarkProgress, Tally};
use super::reorg::Reorg;
use super::report_format::{CoveredSegment, Keyed, REPORT_VERSION, RefusedLine, RunStatus, SegmentStatus};
use super::setup::Shared;
use crate::api::{Endpoint, Resource, Stats};
use crate::plan::{Segment, Unit};
use crate::state::{JobState, Mark, StateStore};
use crate::vocab::Chain;
use crate::vocab::Dataset;
use crate::vocab::window::Resolved;
use serde::Serialize;
use std::collections::BTreeMap;

/// A failed unit.
#[derive(Debug, Clone, Serialize)]
pub struct FailedUnit {
    /// Unit id.
    pub unit: String,
    /// Chain.
    pub chain: Chain,
    /// Dataset.
    pub dataset: Dataset,
    /// Its range.
    pub range: String,
    /// The error.
    pub error: String,
}

impl FailedUnit {
    /// `unit` failed with `error`.
    pub fn of(unit: &Unit, error: &dyn std::error::Error) -> FailedUnit {
        FailedUnit {
            unit: unit.id.clone(),
            chain: unit.chain,
            dataset: unit.dataset,
            range: unit.range.to_string(),
            error: error.to_string(),
        }
    }
}

/// What a run did; serialised, the run report.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    /// The report's schema version ([`REPORT_VERSION`]).
    pub version: u32,
    /// How the run ended.
    pub status: RunStatus,
    /// This run's id (the report's file name without `.json`).
    pub run_id: String,
    /// Job name.
    pub job: String,
    /// Spec hash.
    pub spec_hash: String,
    /// Per export and chain.
    pub exports: BTreeMap<ExportKey, Tally>,
    /// Requests sent, retries, 429s, 5xx.
    pub requests: u64,
    /// Retried attempts.
    pub retries: u64,
    /// 429 answers.
    pub throttled: u64,
    /// 5xx answers.
    pub server_errors: u64,
    /// Orphan files removed before resuming.
    pub orphans_removed: usize,
    /// Units skipped because they were already done.
    pub units_already_done: usize,
    /// Units failed.
    pub failed: Vec<FailedUnit>,
    /// Whether a signal stopped the run.
    pub interrupted: bool,
    /// What stopped the whole job, said once (the service could not be
    /// reached; the key refused: `refused[0].text`).
    pub error: Option<String>,
    /// What the service refused (the key, or chains' endpoints), said once
    /// each; the units it left are not in `failed`.
    pub refused: Vec<RefusedLine>,
    /// Decoding exports (by export and chain) none of whose logs in this
    /// run fit a decoded event, so that their decoded tables got no row:
    /// the spec's signatures miss the contract's events (the run exits 2).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub undecoded: Vec<String>,
    /// Seconds elapsed.
    pub elapsed_secs: f64,
    /// Start (RFC 3339).
    pub started_at: String,
    /// End (RFC 3339).
    pub finished_at: String,
    /// Where the run report was written.
    pub report: Option<String>,
    /// The frozen windows, by export.
    pub windows: Vec<Option<Resolved>>,
    /// Aligned periods still unfinished when the run ended.
    pub periods: Vec<Resolved>,
    /// High-water marks of incremental exports when the run ended.
    pub marks: Vec<MarkSummary>,
    /// Reorgs detected and repaired.
    pub reorgs: Vec<Reorg>,
    /// Passes made (more than one in follow mode or after a reorg repair).
    pub passes: u64,
    /// What compaction did, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction: Option<crate::job::maintain::compact::CompactSummary>,
    /// A change of the output's format this run made first, from the files
    /// the output holds (no request).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversion: Option<crate::job::change::convert::Converted>,
    /// The columns of each table whose exports leave some out (`columns`,
    /// `exclude_columns`); absent where every table holds all its columns.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub columns: BTreeMap<String, Vec<String>>,
    /// `exports` as a list, each keyed by `export`, `dataset` and `chain`.
    pub tallies: Vec<Keyed<Tally>>,
    /// Aligned periods and incremental segments this run covered.
    pub segments: Vec<CoveredSegment>,
    /// Incremental exports: the mark when the run began (`from`) and ended
    /// (`next`), and the lag last measured.
    pub incremental: Vec<Keyed<MarkProgress>>,
    /// The chainetl that ran.
    pub chainetl_version: String,
    /// The commit it was built from (12 hex digits, or `unknown`).
    pub chainetl_commit: String,
    /// `K/N` with `--shard`.
    pub shard: Option<String>,
    /// Whether it ran with `--follow`.
    pub follow: bool,
    /// `--as-of`, as an ISO instant.
    pub as_of: Option<String>,
    /// The run's figures over time, bounded ([`super::series`]).
    pub series: super::series::Series,
}

/// Where an incremental export stands on a chain.
#[derive(Debug, Clone, Serialize)]
pub struct MarkSummary {
    /// Export index.
    pub export: usize,
    /// Chain.
    pub chain: Chain,
    /// First block (or day, as unix seconds) not exported yet.
    pub next: u64,
    /// Reorgs repaired so far.
    pub reorgs: u64,
}

impl From<&Mark> for MarkSummary {
    fn from(m: &Mark) -> MarkSummary {
        MarkSummary {
            export: m.export,
            chain: m.chain,
            next: m.next,
            reorgs: m.reorgs,
        }
    }
}

impl RunSummary {
    /// Rows committed by this run.
    pub fn rows(&self) -> u64 {
        self.exports.values().map(|t| t.rows).sum()
    }
}

/// What the pass loop gathered, for the summary.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub(crate) failed: Vec<FailedUnit>,
    pub(crate) reorgs: Vec<Reorg>,
    pub(crate) orphans_removed: usize,
    pub(crate) units_already_done: usize,
    pub(crate) passes: u64,
    /// Aligned periods still pending.
    pub(crate) periods: Vec<Resolved>,
    /// Compaction's work, summed over the run.
    pub(crate) compaction: Option<crate::job::maintain::compact::CompactSummary>,
    /// The conversion of the output's format made first.
    pub(crate) conversion: Option<crate::job::change::convert::Converted>,
    /// Segments finished, or found finished, by this run.
    pub(crate) covered: Vec<(Segment, SegmentStatus)>,
}

/// The tallies with the request counters and reorgs folded in.
pub(crate) fn final_tallies(shared: &Shared, reorgs: &[Reorg]) -> BTreeMap<ExportKey, Tally> {
    let mut tallies = shared.tallies();
    for r in reorgs {
        let key = ExportKey {
            export: r.export,
            dataset: r.dataset,
            chain: r.chain,
        };
        if let Some(t) = tallies.get_mut(&key) {
            t.reorgs += 1;
        }
    }
    for (k, t) in tallies.iter_mut() {
        if let Some(s) = shared.stats.get(k) {
            t.requests = Stats::get(&s.requests);
            t.retries = Stats::get(&s.retries);
            t.throttled = Stats::get(&s.throttled);
            t.server_errors = Stats::get(&s.server_errors);
        }
        t.rows_per_sec = if t.elapsed_secs > 0.0 {
            t.rows as f64 / t.elapsed_secs
        } else {
            0.0
        };
    }
    tallies
}

/// The run's summary, its report written to the job's state.
pub(crate) async fn summarize(
    shared: &Shared,
    job: &JobState,
    opts: &RunOptions,
    outcome: Outcome,
    started_at: String,
) -> Result<RunSummary, crate::state::StateError> {
    let tallies = final_tallies(shared, &outcome.reorgs);
    let marks = shared.state.load_marks().await?;
    let segments = covered_segments(shared, &outcome.covered).await?;
    let total = |f: fn(&Tally) -> u64| tallies.values().map(f).sum::<u64>();
    let interrupted = *shared.cancel.borrow();
    let refused = refused_lines(shared, &tallies);
    let error = shared.client.service_down().map(|e| e.to_string()).or_else(|| {
        // The key refused stopped the whole job; a chain's endpoint did not.
        refused.first().filter(|r| r.chain.is_none()).map(|r| r.text.clone())
    });
    // A conversion or a rewrite of the output is work done, even with
    // every unit done already.
    let ran = total(|t| t.units) > outcome.units_already_done as u64 || !outcome.reorgs.is_empty() || outcome.conversion.is_some();
    // Only a job's first run: a later one's range may hold only logs of
    // another layout, in a job whose signatures fit its contract.
    let first_run = job.created_at.as_str() >= started_at.as_str();
    let undecoded = if first_run {
        undecoded_lines(&shared.spec, &tallies)
    } else {
        Vec::new()
    };
    let failed = error.is_some() || !outcome.failed.is_empty() || !refused.is_empty() || !undecoded.is_empty();
    let mut summary = RunSummary {
        version: REPORT_VERSION,
        status: RunStatus::of(interrupted, failed, ran),
        run_id: format!("{}-{}", chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ"), std::process::id()),
        job: job.name.clone(),
        spec_hash: job.spec_hash.clone(),
        requests: total(|t| t.requests),
        retries: total(|t| t.retries),
        throttled: total(|t| t.throttled),
        server_errors: total(|t| t.server_errors),
        tallies: tallies.iter().map(|(k, t)| Keyed::new(k, t.clone())).collect(),
        exports: tallies,
        orphans_removed: outcome.orphans_removed,
        units_already_done: outcome.units_already_done,
        failed: outcome.failed,
        interrupted,
        error,
        refused,
        undecoded,
        elapsed_secs: shared.started.elapsed().as_secs_f64(),
        started_at,
        finished_at: chrono::Utc::now().to_rfc3339(),
        report: None,
        windows: job.windows.clone(),
        periods: outcome.periods,
        marks: marks.iter().map(MarkSummary::from).collect(),
        reorgs: outcome.reorgs,
        passes: outcome.passes,
        compaction: outcome.compaction,
        conversion: outcome.conversion,
        columns: shared.spec.selected_columns(),
        segments,
        incremental: shared.marks_live().iter().map(|(k, m)| Keyed::new(k, m.clone())).collect(),
        chainetl_version: env!("CARGO_PKG_VERSION").into(),
        chainetl_commit: crate::util::build::COMMIT.into(),
        shard: opts.shard.map(|(k, n)| format!("{k}/{n}")),
        follow: opts.follow,
        as_of: opts.as_of.map(crate::vocab::window::iso),
        series: shared.series(),
    };
    summary.report = write_report(&shared.state, &summary).await;
    Ok(summary)
}

/// A line for each decoding export and chain whose logs in the job's first
/// run all failed to decode, where nothing was written before either: a
/// spec whose signatures miss the contract's events, not a range that
/// happened to hold only logs of another layout (an ERC-721 Transfer among
/// ERC-20 ones) in a job that decodes. Each decoded log makes one row: without
/// `also_raw` the export wrote none, with it only the raw table's row of
/// each log.
fn undecoded_lines(spec: &crate::spec::Spec, tallies: &BTreeMap<ExportKey, Tally>) -> Vec<String> {
    let mut out = Vec::new();
    for (k, t) in tallies {
        let Some(d) = spec.exports.get(k.export).and_then(|e| e.decoding.as_ref()) else {
            continue;
        };
        let raw_rows = if d.also_raw { t.undecodable } else { 0 };
        if t.undecodable == 0 || t.rows != raw_rows || t.rows_before > 0 {
            continue;
        }
        out.push(format!(
            "export[{}] on {}: none of the {} logs fit a decoded event, so no decoded table got a row{}: \
             copy the events from the contract's ABI, `indexed` marks included (`chainetl plan` shows each event's topic0)",
            k.export,
            k.chain,
            t.undecodable,
            t.decode_hint.as_ref().map(|h| format!(" ({h})")).unwrap_or_default()
        ));
    }
    out
}

/// A line for each refusal the run met, with the units it left: every
/// unit's for the key, the refused endpoint's on its chain for a 403.
fn refused_lines(shared: &Shared, tallies: &BTreeMap<ExportKey, Tally>) -> Vec<RefusedLine> {
    let base = shared.client.shown_base_url();
    shared
        .client
        .refusals()
        .iter()
        .map(|r| {
            let (units, done) = tallies
                .iter()
                .filter(|(k, _)| {
                    r.covers(Resource {
                        chain: k.chain,
                        endpoint: Endpoint::of(k.dataset),
                    })
                })
                .fold((0, 0), |(u, d), (_, t)| (u + t.units, d + t.units_done));
            RefusedLine::of(r, base, units, units.saturating_sub(done))
        })
        .collect()
}

/// The segments finished or found finished, then those still recorded
/// (unfinished) in the state.
async fn covered_segments(shared: &Shared, covered: &[(Segment, SegmentStatus)]) -> Result<Vec<CoveredSegment>, crate::state::StateError> {
    let spec = &shared.spec;
    let mut out: Vec<CoveredSegment> = covered.iter().map(|(s, st)| CoveredSegment::of(spec, s, *st)).collect();
    for s in shared.state.load_segments().await? {
        out.push(CoveredSegment::of(spec, &s, SegmentStatus::Unfinished));
    }
    Ok(out)
}

/// Writes the run report, then `runs/latest.json`; a failure to write
/// them is logged, not fatal (the run's work is committed by then).
async fn write_report(state: &StateStore, summary: &RunSummary) -> Option<String> {
    let mut doc = match serde_json::to_value(summary) {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!("could not write the run report: {e}");
            return None;
        }
    };
    crate::util::redact::redact_json(&mut doc);
    let rel = match state.save_doc(&format!("runs/{}.json", summary.run_id), &doc).await {
        Ok(rel) => rel,
        Err(e) => {
            tracing::warn!("could not write the run report: {e}");
            return None;
        }
    };
    // Written after the run's own report, so latest.json names a report that exists.
    if let Some(obj) = doc.as_object_mut() {
        obj.insert("report".into(), rel.clone().into());
    }
    if let Err(e) = state.save_doc("runs/latest.json", &doc).await {
        tracing::warn!("could not write runs/latest.json: {e}");
    }
    Some(rel)
}
