//! Runs a job: freeze windows, plan units, resume from checkpoints, page
//! units concurrently, decode, write, commit. The commit rule lives in
//! [`crate::state`]; this module keeps to it: a checkpoint is written only
//! after the files it covers are durable, and only in page order.

use crate::api::{ApiError, Client, ClientConfig, Secret, Stats};
use crate::decode::{self, Ctx, DecodeError};
use crate::fetch::{Page, Pager};
use crate::incremental::{self, Finished, Reorg};
use crate::plan::{self, Segment, Unit};
use crate::progress::ExportProgress;
use crate::sim;
use crate::sink::{Sink, SinkError, UnitWriter, schema_for};
use crate::spec::{BaseUrl, Dataset, Export, ExportIdentity, JobIdentity, Spec};
use crate::state::{JobState, STATE_VERSION, StateError, StateStore, UnitState};
use crate::vocab::chain::Chain;
use crate::vocab::window::Resolved;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::watch;

/// Errors that stop a job before or outside its units.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The spec changed under the same job name.
    #[error(
        "job `{name}` was started with a different spec (hash {old}, now {new}); \
         its output and checkpoints would not match. Re-run with --fresh to start over \
         (this deletes the job's earlier output), or give the job another name"
    )]
    SpecChanged {
        /// Job name.
        name: String,
        /// Stored hash.
        old: String,
        /// Current hash.
        new: String,
    },
    /// What the job exports changed under the same job name.
    #[error(
        "job `{name}` was started with a different spec: its output and checkpoints would not match:\n{}\n\
         Settings of how to fetch (base_url, api_key_env, concurrency, rate, page size, timeouts, retries, \
         memory, compression) may change between runs, exports may be appended and chains added. \
         To start over, re-run with --fresh: it deletes the job's {deletes}. Or give the job another name.",
        changes.iter().map(|c| format!("  {c}")).collect::<Vec<_>>().join("\n")
    )]
    JobChanged {
        /// Job name.
        name: String,
        /// One line per changed key.
        changes: Vec<String>,
        /// What `--fresh` would delete.
        deletes: String,
    },
    /// Another run holds the job's lease.
    #[error(transparent)]
    Lease(#[from] crate::state::lease::LeaseError),
    /// The API key variable is named but not set.
    #[error("source.api_key_env names ${0}, but that variable is not set")]
    MissingKey(String),
    /// The API key variable holds something that cannot be a key.
    #[error("source.api_key_env names ${var}, but its value {why}: set it to the key alone")]
    BadKey {
        /// The variable's name (never its value: it is a secret).
        var: String,
        /// What is wrong with the value.
        why: &'static str,
    },
    /// Output problems.
    #[error(transparent)]
    Sink(#[from] SinkError),
    /// State problems.
    #[error(transparent)]
    State(#[from] StateError),
    /// Client could not start.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// The simulator could not start.
    #[error("the built-in simulator failed to start: {0}")]
    Sim(String),
    /// `--follow` without an incremental export.
    #[error("--follow needs an export with incremental = true (and a start): it follows the chain's head")]
    Follow,
    /// `--as-of` for a job whose relative windows were frozen at another instant.
    #[error(
        "--as-of: job `{name}` froze its relative windows when it started ({created}); \
         use align = \"day\" or \"hour\" for scheduled runs of a spec, or --fresh, or another job name"
    )]
    AsOf {
        /// Job name.
        name: String,
        /// When the job started.
        created: String,
    },
    /// Bad shard argument.
    #[error("--shard {0}: expected K/N with 1 <= K <= N")]
    Shard(String),
}

/// Why a unit failed.
#[derive(Debug, thiserror::Error)]
pub enum UnitError {
    /// Fetching failed.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// A response had a bad value.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// Writing failed.
    #[error(transparent)]
    Sink(#[from] SinkError),
    /// Checkpointing failed.
    #[error(transparent)]
    State(#[from] StateError),
    /// The server looped or repeated rows.
    #[error(transparent)]
    Paging(#[from] crate::fetch::guard::PagingError),
    /// The chain's head or hashes could not be read from the answers.
    #[error("{0}")]
    Chain(String),
}

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Delete earlier output and state first.
    pub fresh: bool,
    /// `(k, n)`: run shard k of n (1-based).
    pub shard: Option<(usize, usize)>,
    /// How to show progress.
    pub display: Option<crate::progress::Display>,
    /// Print the plan in a few lines before fetching.
    pub intro: bool,
    /// Keep exporting newly confirmed blocks until a signal.
    pub follow: bool,
    /// Resolve relative windows against this instant (unix seconds) instead of now.
    pub as_of: Option<i64>,
    /// Units to export again from the start (`verify --repair`): their
    /// checkpoints are deleted first, so their files count as uncommitted
    /// and are removed before they are fetched again.
    pub repair: Vec<String>,
}

/// Figures of one export on one chain.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Tally {
    /// Units in the plan (this shard).
    pub units: u64,
    /// Units complete.
    pub units_done: u64,
    /// Rows committed in this run.
    pub rows: u64,
    /// Files committed in this run.
    pub files: u64,
    /// Bytes committed in this run.
    pub bytes: u64,
    /// Rows committed by earlier runs.
    pub rows_before: u64,
    /// Requests sent (every attempt).
    pub requests: u64,
    /// Retried attempts.
    pub retries: u64,
    /// 429 answers.
    pub throttled: u64,
    /// 5xx answers.
    pub server_errors: u64,
    /// Reorgs detected and repaired.
    pub reorgs: u64,
    /// Seconds from the start of the run to this export's last commit.
    pub elapsed_secs: f64,
    /// Rows per second over that time.
    pub rows_per_sec: f64,
}

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

/// What a run did.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    /// Job name.
    pub job: String,
    /// Spec hash.
    pub spec_hash: String,
    /// Per (export index, dataset, chain).
    pub exports: BTreeMap<String, Tally>,
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
    /// What stopped the whole job, said once (the service could not be reached).
    pub error: Option<String>,
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

impl RunSummary {
    /// Rows committed by this run.
    pub fn rows(&self) -> u64 {
        self.exports.values().map(|t| t.rows).sum()
    }
}

/// Key of a tally: `e<idx> <dataset> <chain>`.
pub fn tally_key(export: usize, dataset: Dataset, chain: Chain) -> String {
    format!("e{export} {dataset} {chain}")
}

/// Opens the job's state in `sink`, finishes or does a `--fresh`, and
/// freezes (or reloads) the windows. A job whose spec changed is refused
/// before anything is deleted, unless `fresh`; a grown job (exports
/// appended, chains added) continues, the appended exports' windows frozen
/// now.
pub async fn prepare(spec: &Spec, sink: Arc<Sink>, fresh: bool, now: i64) -> Result<(StateStore, JobState), RunError> {
    let state = StateStore::new(sink.clone(), &spec.name);
    state.remove_stale_tmp();
    let interrupted = state.clear_interrupted().await?;
    if interrupted && !fresh {
        tracing::warn!("an earlier --fresh did not finish: finishing it, so the job starts over");
    }
    if fresh || interrupted {
        let datasets: HashSet<Dataset> = spec.exports.iter().map(|e| e.dataset).collect();
        let n = state.clear(&datasets).await?;
        tracing::info!(removed = n, "--fresh: removed the job's earlier output and state");
    }
    let identity = JobIdentity::of(spec);
    let job = match state.load_job().await? {
        Some(job) => adopt(spec, &state, job, &identity, now).await?,
        None => {
            let job = JobState {
                version: STATE_VERSION,
                name: spec.name.clone(),
                spec_hash: identity.hash(),
                windows: plan::freeze_windows(spec, now),
                page_size: Some(spec.source.page_size),
                created_at: chrono::Utc::now().to_rfc3339(),
                chainetl_version: env!("CARGO_PKG_VERSION").into(),
                identity: Some(identity.clone()),
            };
            // Another shard may have created it first, from another spec.
            let job = state.create_job(&job).await?;
            adopt(spec, &state, job, &identity, now).await?
        }
    };
    Ok((state, job))
}

/// A job found in state, checked against `spec`: the same job, or grown
/// (exports appended: their windows frozen now, or adopted from the shard
/// that froze them first). Returns the job with a window for every export.
async fn adopt(spec: &Spec, state: &StateStore, mut job: JobState, identity: &JobIdentity, now: i64) -> Result<JobState, RunError> {
    let Some(stored) = job.identity.clone() else {
        // Started before identities were recorded: the whole spec hash.
        let hash = spec.content_hash();
        if job.spec_hash != hash {
            return Err(RunError::SpecChanged {
                name: spec.name.clone(),
                old: job.spec_hash,
                new: hash,
            });
        }
        return Ok(job);
    };
    let mut changes = stored.changes(identity);
    if changes.is_empty() && spec.exports.len() > stored.exports.len() {
        let frozen = plan::freeze_windows(spec, now);
        for e in &spec.exports[stored.exports.len()..] {
            let want = crate::state::AddedExport {
                version: STATE_VERSION,
                export: e.index,
                identity: ExportIdentity::of(e),
                window: frozen.get(e.index).copied().flatten(),
                created_at: chrono::Utc::now().to_rfc3339(),
            };
            let got = state.create_added_export(&want).await?;
            changes.extend(got.identity.changes(&want.identity, e.index));
            job.windows.truncate(e.index);
            job.windows.push(got.window);
        }
    }
    if changes.is_empty() {
        return Ok(job);
    }
    let units = state.load_units().await.unwrap_or_default();
    let (files, rows) = units.values().fold((0, 0), |(f, r), u| (f + u.files, r + u.rows));
    Err(RunError::JobChanged {
        name: spec.name.clone(),
        changes,
        deletes: format!(
            "{files} committed file{} ({rows} rows) and its state under {}/_chainetl/{}/",
            if files == 1 { "" } else { "s" },
            state.output_uri().trim_end_matches('/'),
            spec.name
        ),
    })
}

/// Parses `K/N`.
pub fn parse_shard(s: &str) -> Result<(usize, usize), RunError> {
    let (k, n) = s.split_once('/').ok_or_else(|| RunError::Shard(s.into()))?;
    match (k.trim().parse::<usize>(), n.trim().parse::<usize>()) {
        (Ok(k), Ok(n)) if k >= 1 && k <= n => Ok((k, n)),
        _ => Err(RunError::Shard(s.into())),
    }
}

struct Shared {
    client: Client,
    sink: Arc<Sink>,
    state: StateStore,
    spec: Arc<Spec>,
    tallies: Mutex<BTreeMap<String, Tally>>,
    stats: HashMap<String, Arc<Stats>>,
    progress: Vec<Arc<ExportProgress>>,
    started: Instant,
    cancel: watch::Receiver<bool>,
}

/// Runs the job to completion (or until `cancel` turns true). Aligned
/// exports run the current period (and finish earlier unfinished ones);
/// incremental exports run from their mark to the confirmed head. With
/// `opts.follow` it then keeps polling and exporting newly confirmed blocks
/// until cancelled.
pub async fn run(spec: Spec, opts: RunOptions, cancel: watch::Receiver<bool>) -> Result<RunSummary, RunError> {
    let started = Instant::now();
    let started_at = chrono::Utc::now().to_rfc3339();
    if opts.follow && !spec.exports.iter().any(|e| e.incremental.is_some()) {
        return Err(RunError::Follow);
    }
    // Everything a run needs is checked before anything is written or
    // deleted (a --fresh that then fails would have lost the output): the
    // API key variable here, the output's access by taking the lease.
    if let BaseUrl::Http(u) = &spec.source.base_url {
        crate::util::redact::register_url(u);
    }
    let cfg = client_config(&spec)?;
    let sink = Arc::new(Sink::open(&spec.output)?);
    // A --fresh clears every shard's work: it needs the whole job.
    let scope = crate::state::lease::scope(if opts.fresh { None } else { opts.shard });
    let lease = crate::state::lease::Lease::acquire(sink.clone(), &spec.name, &scope).await?;
    let result = run_leased(spec, opts, cancel, cfg, sink, started, started_at).await;
    lease.release().await;
    result
}

/// [`run`], holding the job's lease.
async fn run_leased(
    spec: Spec,
    opts: RunOptions,
    cancel: watch::Receiver<bool>,
    mut cfg: ClientConfig,
    sink: Arc<Sink>,
    started: Instant,
    started_at: String,
) -> Result<RunSummary, RunError> {
    let now = opts.as_of.unwrap_or_else(|| plan::job_now(&spec));
    let (state, job) = prepare(&spec, sink.clone(), opts.fresh, now).await?;
    if !opts.repair.is_empty() {
        tracing::info!(
            units = opts.repair.len(),
            "repair: exporting units again whose files are missing or changed"
        );
        state.delete_units(&opts.repair).await?;
    }
    if let Some(as_of) = opts.as_of {
        let want = plan::freeze_windows(&spec, as_of);
        let stored = job.identity.as_ref().map_or(job.windows.len(), |i| i.exports.len());
        if want.iter().take(stored).ne(job.windows.iter().take(stored)) {
            return Err(RunError::AsOf {
                name: spec.name.clone(),
                created: job.created_at.clone(),
            });
        }
    }

    let mut sim_handle = None;
    let base_url = match &spec.source.base_url {
        BaseUrl::Http(u) => u.clone(),
        BaseUrl::Sim(o) => {
            let h = sim::spawn(o.clone()).await.map_err(RunError::Sim)?;
            let url = h.base_url();
            sim_handle = Some(h);
            url
        }
    };
    cfg.base_url = base_url;
    let client = Client::new(cfg)?.with_cancel(cancel.clone());
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    for e in &spec.exports {
        for c in &e.chains {
            tallies.entry(tally_key(e.index, e.dataset, *c)).or_default();
        }
    }
    let stats: HashMap<String, Arc<Stats>> = tallies.keys().map(|k| (k.clone(), Arc::new(Stats::default()))).collect();
    let progress: Vec<Arc<ExportProgress>> = spec
        .exports
        .iter()
        .map(|e| {
            let chains: Vec<&str> = e.chains.iter().map(|c| c.name()).collect();
            Arc::new(ExportProgress {
                label: format!("export[{}] {} ({})", e.index, e.dataset, chains.join(", ")),
                stats: e
                    .chains
                    .iter()
                    .filter_map(|c| stats.get(&tally_key(e.index, e.dataset, *c)).cloned())
                    .collect(),
                ..Default::default()
            })
        })
        .collect();
    let shared = Arc::new(Shared {
        client: client.clone(),
        sink,
        state: state.clone(),
        spec: Arc::new(spec.clone()),
        tallies: Mutex::new(tallies),
        stats,
        progress: progress.clone(),
        started,
        cancel: cancel.clone(),
    });
    let mut ticker = None;

    let mut pending = state.load_segments().await?;
    let mut seen: HashSet<String> = HashSet::new();
    let mut last_cut: HashMap<(usize, Chain), Instant> = HashMap::new();
    let mut failed = Vec::new();
    let mut reorgs: Vec<Reorg> = Vec::new();
    let mut orphans_removed = 0;
    let mut already = 0;
    let mut pass = 0u64;
    let mut cancel_rx = cancel.clone();
    loop {
        pass += 1;
        let reorgs_before = reorgs.len();
        if pass == 1 {
            for e in &spec.exports {
                let Some(seg) = plan::aligned_segment(e, now) else {
                    continue;
                };
                if pending.contains(&seg) {
                    continue;
                }
                if state.period_done(&seg).await? {
                    tracing::info!(export = e.index, "export[{}]: period {} is already exported", e.index, seg.window);
                } else {
                    let s = state.create_segment(&seg).await?;
                    if !pending.contains(&s) {
                        pending.push(s);
                    }
                }
            }
        }
        let clock = opts.as_of.unwrap_or_else(|| plan::job_now(&spec));
        for e in spec.exports.iter().filter(|e| e.incremental.is_some()) {
            for &chain in &e.chains {
                let cut = last_cut.get(&(e.index, chain)).is_none_or(|t| t.elapsed() >= e.roll_interval);
                let before = pending.len();
                match step_incremental(&shared, e, chain, clock, cut, &mut pending, &mut reorgs).await {
                    Ok(()) => {}
                    // Said once for the job (interrupted, or the service down).
                    Err(UnitError::Api(ApiError::Cancelled | ApiError::ServiceDown { .. })) => {}
                    Err(err) => {
                        tracing::error!(export = e.index, %chain, "incremental export failed: {err}");
                        failed.push(FailedUnit {
                            unit: format!("e{}-{}-{} (mark)", e.index, e.dataset, chain),
                            chain,
                            dataset: e.dataset,
                            range: "high-water mark".into(),
                            error: err.to_string(),
                        });
                    }
                }
                if pending.len() > before {
                    last_cut.insert((e.index, chain), Instant::now());
                }
            }
        }

        let mut units = plan::plan(&spec, &job.windows, job.cut_page_size(&spec), &pending);
        if let Some((k, n)) = opts.shard {
            units = plan::shard(units, k, n);
        }
        let states = state.load_units().await?;
        if pass == 1 && opts.intro {
            eprint!("{}", crate::cli::intro(&spec, &job.windows, &pending, &units, &states));
        }
        let removed = state.remove_orphans(&units, &states).await?;
        if removed > 0 {
            tracing::info!(files = removed, "removed files of uncommitted work left by an interrupted run");
        }
        orphans_removed += removed;
        let mut todo = Vec::new();
        if let Ok(mut tallies) = shared.tallies.lock() {
            for u in units {
                let st = states.get(&u.id).cloned();
                if seen.insert(u.id.clone()) {
                    let t = tallies.entry(tally_key(u.export, u.dataset, u.chain)).or_default();
                    t.units += 1;
                    if let Some(s) = &st {
                        t.rows_before += s.rows;
                    }
                    if st.as_ref().is_some_and(|s| s.done) {
                        t.units_done += 1;
                        already += 1;
                    }
                }
                if !st.as_ref().is_some_and(|s| s.done) {
                    todo.push((Arc::new(u), st));
                }
            }
        }
        // Largest first (what is left of them, by the estimate): the job
        // ends on its shortest units, so the request slots stay busy until
        // close to the end.
        todo.sort_by_key(|(u, st)| std::cmp::Reverse(u.estimated_requests.saturating_sub(st.as_ref().map_or(0, |s| s.pages))));
        for (u, _) in &todo {
            if let Some(p) = progress.get(u.export) {
                p.units_total.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                p.work_total.fetch_add(u.estimated_requests, std::sync::atomic::Ordering::Relaxed);
            }
        }
        if ticker.is_none() {
            ticker = opts.display.and_then(|d| crate::progress::spawn(d, progress.clone()));
        }
        failed.extend(execute(&shared, todo, &cancel).await);

        // Segments whose units are all done (across shards) are checked and closed.
        let states = state.load_units().await?;
        for seg in pending.clone() {
            let Some(e) = spec.exports.get(seg.export) else {
                continue;
            };
            // Only the segment's own units: the plan also holds the fixed
            // exports' units, whose checkpoints must outlive the segment.
            let seg_units: Vec<Unit> = plan::plan(&spec, &job.windows, job.cut_page_size(&spec), std::slice::from_ref(&seg))
                .into_iter()
                .filter(|u| seg.owns(u))
                .collect();
            if !seg_units.iter().all(|u| states.get(&u.id).is_some_and(|s| s.done)) {
                continue;
            }
            if e.incremental.is_some() {
                let key = tally_key(e.index, e.dataset, seg.chain.unwrap_or(Chain::Ethereum));
                let client = shared
                    .stats
                    .get(&key)
                    .map_or_else(|| client.clone(), |s| client.with_stats(s.clone()));
                match incremental::finish_segment(&client, &state, e, &seg, &seg_units, &states, &mut pending).await {
                    Ok(Finished::Advanced) => {}
                    Ok(Finished::Reorg(r)) => {
                        last_cut.remove(&(e.index, r.chain));
                        reorgs.push(r);
                    }
                    Err(UnitError::Api(ApiError::Cancelled | ApiError::ServiceDown { .. })) => {}
                    Err(err) => failed.push(FailedUnit {
                        unit: seg.id(),
                        chain: seg.chain.unwrap_or(Chain::Ethereum),
                        dataset: e.dataset,
                        range: seg.window.to_string(),
                        error: err.to_string(),
                    }),
                }
            } else {
                state.save_period_done(&seg).await?;
                state.remove_segment(&seg).await?;
                let ids: Vec<String> = seg_units.iter().map(|u| u.id.clone()).collect();
                state.delete_units(&ids).await?;
                pending.retain(|s| s != &seg);
            }
        }
        if *cancel.borrow() || !failed.is_empty() || client.service_down().is_some() {
            break;
        }
        if reorgs.len() > reorgs_before && pass < 20 {
            // Re-export what the repair removed in this same run.
            continue;
        }
        if !opts.follow {
            break;
        }
        let poll = spec
            .exports
            .iter()
            .filter(|e| e.incremental.is_some())
            .map(|e| e.poll_interval)
            .min()
            .unwrap_or(std::time::Duration::from_secs(15));
        tokio::select! {
            _ = tokio::time::sleep(poll) => {}
            _ = cancel_rx.changed() => {}
        }
        if *cancel.borrow() {
            break;
        }
    }
    if let Some(t) = ticker {
        t.finish();
    }
    if let Some(h) = sim_handle {
        h.task.abort();
    }
    let mut tallies = shared.tallies.lock().map(|t| t.clone()).unwrap_or_default();
    for r in &reorgs {
        if let Some(t) = tallies.get_mut(&tally_key(r.export, r.dataset, r.chain)) {
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
    let marks = state.load_marks().await.unwrap_or_default();
    let total = |f: fn(&Tally) -> u64| tallies.values().map(f).sum::<u64>();
    let mut summary = RunSummary {
        job: spec.name.clone(),
        spec_hash: job.spec_hash.clone(),
        requests: total(|t| t.requests),
        retries: total(|t| t.retries),
        throttled: total(|t| t.throttled),
        server_errors: total(|t| t.server_errors),
        exports: tallies,
        orphans_removed,
        units_already_done: already,
        failed,
        interrupted: *cancel.borrow(),
        error: client.service_down().map(|e| e.to_string()),
        elapsed_secs: started.elapsed().as_secs_f64(),
        started_at,
        finished_at: chrono::Utc::now().to_rfc3339(),
        report: None,
        windows: job.windows.clone(),
        periods: pending.iter().filter(|s| s.chain.is_none()).map(|s| s.window).collect(),
        marks: marks
            .iter()
            .map(|m| MarkSummary {
                export: m.export,
                chain: m.chain,
                next: m.next,
                reorgs: m.reorgs,
            })
            .collect(),
        reorgs,
        passes: pass,
    };
    let run_id = format!("{}-{}", chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ"), std::process::id());
    let mut doc = serde_json::to_value(&summary).unwrap_or_default();
    crate::util::redact::redact_json(&mut doc);
    if let Some(obj) = doc.as_object_mut() {
        obj.insert("chainetl_version".into(), env!("CARGO_PKG_VERSION").into());
        obj.insert("shard".into(), opts.shard.map(|(k, n)| format!("{k}/{n}")).into());
        obj.insert("follow".into(), opts.follow.into());
        obj.insert("as_of".into(), opts.as_of.map(crate::vocab::window::iso).into());
    }
    match state.save_doc(&format!("runs/{run_id}.json"), &doc).await {
        Ok(rel) => summary.report = Some(rel),
        Err(e) => tracing::warn!("could not write the run report: {e}"),
    }
    Ok(summary)
}

/// One pass of an incremental export on one chain: finish a repair left
/// by a crash, check the exported tail for reorgs, and (when `cut`) record
/// a segment up to the confirmed head unless one is still pending.
async fn step_incremental(
    shared: &Shared,
    e: &Export,
    chain: Chain,
    now: i64,
    cut: bool,
    pending: &mut Vec<Segment>,
    reorgs: &mut Vec<Reorg>,
) -> Result<(), UnitError> {
    let state = &shared.state;
    let client = match shared.stats.get(&tally_key(e.index, e.dataset, chain)) {
        Some(s) => shared.client.with_stats(s.clone()),
        None => shared.client.clone(),
    };
    let mut mark = state
        .load_mark(e.index, chain)
        .await?
        .unwrap_or_else(|| incremental::initial_mark(e, chain));
    if let Some(from) = mark.repair_from {
        reorgs.push(incremental::repair(state, e, &mut mark, from, pending).await?);
    }
    if e.dataset != Dataset::Portfolio
        && let Some(r) = incremental::check_tail(&client, state, e, &mut mark, pending).await?
    {
        reorgs.push(r);
    }
    if !cut || pending.iter().any(|s| s.export == e.index && s.chain == Some(chain)) {
        return Ok(());
    }
    if let Some(window) = incremental::next_window(&client, e, &mark, now).await? {
        let seg = state
            .create_segment(&Segment {
                export: e.index,
                chain: Some(chain),
                window,
            })
            .await?;
        if !pending.contains(&seg) {
            pending.push(seg);
        }
    }
    Ok(())
}

/// Pages `todo` units concurrently; returns the ones that failed.
async fn execute(shared: &Arc<Shared>, todo: Vec<(Arc<Unit>, Option<UnitState>)>, cancel: &watch::Receiver<bool>) -> Vec<FailedUnit> {
    // Units in flight: enough to keep every request slot busy while some
    // units decode or write.
    let in_flight = units_in_flight(&shared.spec);
    let sem = Arc::new(tokio::sync::Semaphore::new(in_flight));
    let mut set = tokio::task::JoinSet::new();
    for (unit, st) in todo {
        let Ok(permit) = sem.clone().acquire_owned().await else {
            break;
        };
        if *cancel.borrow() || shared.client.service_down().is_some() {
            break;
        }
        let shared = shared.clone();
        set.spawn(async move {
            let _permit = permit;
            let r = run_unit(&shared, &unit, st).await;
            (unit, r)
        });
    }
    let mut failed = Vec::new();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok((_, Ok(()))) => {}
            // The job says this once, not each unit in turn.
            Ok((_, Err(UnitError::Api(ApiError::ServiceDown { .. })))) => {}
            Ok((unit, Err(e))) => {
                tracing::error!(unit = %unit.id, chain = %unit.chain, dataset = %unit.dataset, range = %unit.range, "unit failed: {e}");
                failed.push(FailedUnit {
                    unit: unit.id.clone(),
                    chain: unit.chain,
                    dataset: unit.dataset,
                    range: unit.range.to_string(),
                    error: e.to_string(),
                });
            }
            Err(e) => failed.push(FailedUnit {
                unit: "?".into(),
                chain: Chain::Ethereum,
                dataset: Dataset::Blocks,
                range: String::new(),
                error: format!("unit task panicked: {e}"),
            }),
        }
    }
    failed
}

/// Units paged at once: a quarter again the request slots, so that while
/// some units commit or start, others have a request ready for every slot
/// (decoding happens as pages arrive, off the unit's loop); each unit in
/// flight holds pages and open files, so not more.
fn units_in_flight(spec: &Spec) -> usize {
    spec.source.max_concurrency + spec.source.max_concurrency.div_ceil(4)
}

/// Client settings from the spec; the key is read from the environment here
/// and nowhere else.
/// The base URL is set once known (the built-in simulator's is known only
/// once it listens), so that the key is checked before anything starts.
pub fn client_config(spec: &Spec) -> Result<ClientConfig, RunError> {
    let mut cfg = ClientConfig::new(String::new());
    if let Some(var) = &spec.source.api_key_env {
        let key = match std::env::var(var) {
            Ok(k) => k,
            Err(std::env::VarError::NotPresent) => return Err(RunError::MissingKey(var.clone())),
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(RunError::BadKey {
                    var: var.clone(),
                    why: "is not valid UTF-8",
                });
            }
        };
        // An empty key would send `Authorization: Bearer ` and a line break
        // would fail every request: both are set-up mistakes (exit 2), and
        // the message names the variable, never the value.
        if key.is_empty() {
            return Err(RunError::BadKey {
                var: var.clone(),
                why: "is empty",
            });
        }
        if key.chars().any(char::is_control) {
            return Err(RunError::BadKey {
                var: var.clone(),
                why: "holds a line break or another control character",
            });
        }
        crate::util::redact::register(&key);
        cfg.api_key = Some(Secret::new(key));
        cfg.api_key_env = Some(var.clone());
    }
    cfg.timeout = spec.source.timeout;
    cfg.max_retries = spec.source.max_retries;
    cfg.max_concurrency = spec.source.max_concurrency;
    cfg.requests_per_second = spec.source.requests_per_second;
    cfg.max_response_bytes = spec.source.max_response_bytes;
    cfg.max_retry_after = spec.source.max_retry_after;
    Ok(cfg)
}

async fn run_unit(shared: &Shared, unit: &Arc<Unit>, st: Option<UnitState>) -> Result<(), UnitError> {
    let spec = &shared.spec;
    let Some(export) = spec.exports.get(unit.export) else {
        return Ok(());
    };
    let mut st = st.unwrap_or_else(|| UnitState {
        version: STATE_VERSION,
        unit: unit.id.clone(),
        ..Default::default()
    });
    let key = tally_key(unit.export, unit.dataset, unit.chain);
    let client = match shared.stats.get(&key) {
        Some(s) => shared.client.with_stats(s.clone()),
        None => shared.client.clone(),
    };
    let progress = shared.progress.get(unit.export).cloned().unwrap_or_default();
    let mut pager = Pager::start(
        client,
        unit.clone(),
        export,
        spec.source.page_size,
        spec.output.hash_encoding,
        st.cursor.clone(),
    );
    let schema = schema_for(unit.dataset, &spec.output);
    let mut writer = UnitWriter::new(
        shared.sink.clone(),
        unit.dataset,
        unit.chain,
        &shared.state.file_prefix(&unit.id),
        schema,
        st.next_seq,
        spec.output.memory_budget / units_in_flight(spec),
    );
    let out = &spec.output;
    let mut pending = Pending {
        cursor: st.cursor.clone(),
        rows: 0,
        pages: 0,
    };
    let mut last_commit = Instant::now();
    let mut page_no = 0u64;
    let mut guard = crate::fetch::guard::PageGuard::new(unit.chain, unit.dataset, &unit.id, st.cursor.as_deref());
    let result: Result<bool, UnitError> = async {
        loop {
            if *shared.cancel.borrow() {
                return Ok(false);
            }
            let f = match pager.next().await {
                Ok(Some(f)) => f,
                Ok(None) => return Ok(true),
                // A signal: keep what is buffered (committed below).
                Err(ApiError::Cancelled) => return Ok(false),
                Err(e) => return Err(e.into()),
            };
            page_no += 1;
            let ctx = Ctx {
                unit,
                page: page_no,
                enc: out.hash_encoding,
            };
            let decoded = match f.page {
                Page::Blocks(b) => {
                    note_block_edges(&mut st, &unit.range, &b);
                    decode::blocks::decode(ctx, &b)?
                }
                Page::Events(decoded) => decoded?,
                Page::Portfolio(p) => decode::portfolio::decode(ctx, &p)?,
                Page::Tokens(t) => decode::tokens::decode(ctx, &t)?,
            };
            guard.check(page_no, &decoded.batch, f.next.as_deref())?;
            let rows = decoded.batch.num_rows() as u64;
            writer.write(decoded).await?;
            progress.page(rows);
            pending.rows += rows;
            pending.pages += 1;
            let last = f.next.is_none();
            pending.cursor = f.next;
            if last {
                return Ok(true);
            }
            if pending.pages >= out.commit_pages as u64
                || last_commit.elapsed() >= out.commit_interval
                || writer.max_open_rows() >= out.file_rows as u64
                || writer.max_open_bytes() >= out.file_bytes
            {
                commit(shared, &mut writer, &mut st, &mut pending, false, &key).await?;
                last_commit = Instant::now();
            }
        }
    }
    .await;
    match result {
        Ok(done) => {
            commit(shared, &mut writer, &mut st, &mut pending, done, &key).await?;
            if done {
                progress.unit_done(unit.estimated_requests, page_no);
            }
            Ok(())
        }
        Err(e) => {
            // Rows since the last commit are discarded: the cursor has not
            // moved past them, so the next run fetches them again.
            writer.abort().await;
            Err(e)
        }
    }
}

/// Records, for reorg checks, the parent hash of a block unit's first block
/// and the hash of its last block as exported. They reach the checkpoint
/// with the next commit, together with the rows they describe.
fn note_block_edges(st: &mut UnitState, range: &crate::plan::UnitRange, blocks: &[crate::api::types::Block]) {
    let crate::plan::UnitRange::Blocks { start, end } = *range else {
        return;
    };
    for b in blocks {
        let Some(n) = b.number.map(|n| n.0 as u64).filter(|n| (start..end).contains(n)) else {
            continue;
        };
        if n == start
            && let Some(p) = &b.parent_hash
        {
            st.first_parent_hash = Some(p.to_ascii_lowercase());
        }
        if let Some(h) = &b.hash
            && st.last_block.as_ref().is_none_or(|l| n > l.number)
        {
            st.last_block = Some(crate::state::TailBlock {
                number: n,
                hash: h.to_ascii_lowercase(),
            });
        }
    }
}

struct Pending {
    cursor: Option<String>,
    rows: u64,
    pages: u64,
}

async fn commit(
    shared: &Shared,
    writer: &mut UnitWriter,
    st: &mut UnitState,
    pending: &mut Pending,
    done: bool,
    key: &str,
) -> Result<(), UnitError> {
    if pending.pages == 0 && !done {
        return Ok(());
    }
    let files = writer.finish().await?;
    if !files.is_empty() {
        crate::util::failpoint::hit("after-file-write");
    }
    st.cursor = if done { None } else { pending.cursor.clone() };
    st.next_seq = writer.next_seq;
    st.rows += pending.rows;
    st.pages += pending.pages;
    st.files += files.len() as u64;
    st.committed.extend(files.iter().map(|f| crate::state::CommittedFile {
        path: f.rel.clone(),
        rows: f.rows,
        bytes: f.bytes,
    }));
    let bytes: u64 = files.iter().map(|f| f.bytes).sum();
    st.bytes += bytes;
    st.done = done;
    st.updated_at = chrono::Utc::now().to_rfc3339();
    shared.state.save_unit(st).await?;
    if let Ok(mut t) = shared.tallies.lock() {
        let t = t.entry(key.to_string()).or_default();
        t.rows += pending.rows;
        t.files += files.len() as u64;
        t.bytes += bytes;
        t.elapsed_secs = shared.started.elapsed().as_secs_f64();
        if done {
            t.units_done += 1;
        }
    }
    *pending = Pending {
        cursor: st.cursor.clone(),
        rows: 0,
        pages: 0,
    };
    Ok(())
}

/// What `status` shows of a job.
#[derive(Debug, Default)]
pub struct JobStatus {
    /// Units of the frozen windows (none before the first run).
    pub units: Vec<Unit>,
    /// Their checkpoints, by unit id.
    pub states: HashMap<String, UnitState>,
    /// High-water marks of incremental exports.
    pub marks: Vec<crate::state::Mark>,
    /// Aligned periods exported completely.
    pub periods: Vec<Segment>,
}

/// A job's units, checkpoints, marks and exported periods, for `status`.
pub async fn status(spec: &Spec) -> Result<JobStatus, RunError> {
    let sink = Arc::new(Sink::open(&spec.output)?);
    let state = StateStore::new(sink, &spec.name);
    // After an interrupted --fresh the next run starts over: not started.
    if state.clear_interrupted().await? {
        return Ok(JobStatus::default());
    }
    let (units, states) = match state.load_job().await? {
        Some(job) => (
            plan::plan(spec, &job.windows, job.cut_page_size(spec), &[]),
            state.load_units().await?,
        ),
        None => (Vec::new(), HashMap::new()),
    };
    Ok(JobStatus {
        units,
        states,
        marks: state.load_marks().await?,
        periods: state.load_periods().await?,
    })
}

/// Every committed file of the job that is missing or not as its checkpoint
/// recorded it (`chainetl verify`).
pub async fn verify(spec: &Spec) -> Result<Vec<crate::state::FileProblem>, RunError> {
    let sink = Arc::new(Sink::open(&spec.output)?);
    let state = StateStore::new(sink, &spec.name);
    if state.clear_interrupted().await? || state.load_job().await?.is_none() {
        return Ok(Vec::new());
    }
    let datasets: HashSet<Dataset> = spec.exports.iter().map(|e| e.dataset).collect();
    let states = state.load_units().await?;
    Ok(state.verify(&datasets, &states).await?)
}
