//! Runs a job: freeze windows, plan units, resume from checkpoints, page
//! units concurrently, decode, write, commit. The commit rule lives in
//! [`crate::state`]; this module keeps to it: a checkpoint is written only
//! after the files it covers are durable, and only in page order.

use crate::api::{ApiError, Client, ClientConfig, Secret, Stats};
use crate::chain::Chain;
use crate::decode::{self, Ctx, DecodeError};
use crate::fetch::{Page, Pager};
use crate::plan::{self, Unit};
use crate::progress::ExportProgress;
use crate::sim;
use crate::sink::{Sink, SinkError, UnitWriter, schema_for};
use crate::spec::{BaseUrl, Dataset, Spec};
use crate::state::{JobState, STATE_VERSION, StateError, StateStore, UnitState};
use crate::window::Resolved;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::AtomicU64;
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
    /// The API key variable is named but not set.
    #[error("source.api_key_env names ${0}, but that variable is not set")]
    MissingKey(String),
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

/// Opens the output and the job's state, and freezes (or reloads) the windows.
pub async fn prepare(spec: &Spec, fresh: bool) -> Result<(Arc<Sink>, StateStore, JobState), RunError> {
    let sink = Arc::new(Sink::open(&spec.output)?);
    let state = StateStore::new(sink.clone(), &spec.name);
    if fresh {
        let datasets: HashSet<Dataset> = spec.exports.iter().map(|e| e.dataset).collect();
        let n = state.clear(&datasets).await?;
        tracing::info!(removed = n, "--fresh: removed the job's earlier output and state");
    }
    let hash = spec.content_hash();
    let job = match state.load_job().await? {
        Some(job) if job.spec_hash != hash => {
            return Err(RunError::SpecChanged {
                name: spec.name.clone(),
                old: job.spec_hash,
                new: hash,
            });
        }
        Some(job) => job,
        None => {
            let now = chrono::Utc::now();
            let job = JobState {
                version: STATE_VERSION,
                name: spec.name.clone(),
                spec_hash: hash,
                windows: plan::freeze_windows(spec, plan::job_now(spec)),
                created_at: now.to_rfc3339(),
                chainetl_version: env!("CARGO_PKG_VERSION").into(),
            };
            state.create_job(&job).await?
        }
    };
    Ok((sink, state, job))
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

/// Runs the job to completion (or until `cancel` turns true).
pub async fn run(spec: Spec, opts: RunOptions, cancel: watch::Receiver<bool>) -> Result<RunSummary, RunError> {
    let started = Instant::now();
    let started_at = chrono::Utc::now().to_rfc3339();
    let (sink, state, job) = prepare(&spec, opts.fresh).await?;
    let mut units = plan::plan(&spec, &job.windows, &[]);
    if let Some((k, n)) = opts.shard {
        units = plan::shard(units, k, n);
    }
    let states = state.load_units().await?;
    if opts.intro {
        eprint!("{}", crate::cli::intro(&spec, &job.windows, &units, &states));
    }
    let orphans_removed = state.remove_orphans(&units, &states).await?;
    if orphans_removed > 0 {
        tracing::info!(
            files = orphans_removed,
            "removed files of uncommitted work left by an interrupted run"
        );
    }
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut todo = Vec::new();
    let mut already = 0;
    for u in units {
        let t = tallies.entry(tally_key(u.export, u.dataset, u.chain)).or_default();
        t.units += 1;
        let st = states.get(&u.id).cloned();
        if let Some(s) = &st {
            t.rows_before += s.rows;
        }
        if st.as_ref().is_some_and(|s| s.done) {
            t.units_done += 1;
            already += 1;
        } else {
            todo.push((Arc::new(u), st));
        }
    }

    let mut sim_handle = None;
    let base_url = match &spec.source.base_url {
        BaseUrl::Http(u) => u.clone(),
        BaseUrl::Sim(opts) if !todo.is_empty() => {
            let h = sim::spawn(opts.clone()).await.map_err(RunError::Sim)?;
            let url = h.base_url();
            sim_handle = Some(h);
            url
        }
        BaseUrl::Sim(_) => "http://127.0.0.1:9".into(),
    };
    let client = Client::new(client_config(&spec, base_url)?)?;
    let stats: HashMap<String, Arc<Stats>> = tallies.keys().map(|k| (k.clone(), Arc::new(Stats::default()))).collect();
    let progress: Vec<Arc<ExportProgress>> = spec
        .exports
        .iter()
        .map(|e| {
            let chains: Vec<&str> = e.chains.iter().map(|c| c.name()).collect();
            let own: Vec<(&Arc<Unit>, &Option<UnitState>)> =
                todo.iter().filter(|(u, _)| u.export == e.index).map(|(u, s)| (u, s)).collect();
            Arc::new(ExportProgress {
                label: format!("export[{}] {} ({})", e.index, e.dataset, chains.join(", ")),
                units_total: AtomicU64::new(own.len() as u64),
                work_total: AtomicU64::new(own.iter().map(|(u, _)| u.estimated_requests).sum()),
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
    let ticker = opts.display.and_then(|d| crate::progress::spawn(d, progress));

    // Units in flight: enough to keep every request slot busy while some
    // units decode or write.
    let in_flight = units_in_flight(&spec);
    let sem = Arc::new(tokio::sync::Semaphore::new(in_flight));
    let mut set = tokio::task::JoinSet::new();
    for (unit, st) in todo {
        let Ok(permit) = sem.clone().acquire_owned().await else {
            break;
        };
        if *cancel.borrow() {
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
    if let Some(t) = ticker {
        t.finish();
    }
    if let Some(h) = sim_handle {
        h.task.abort();
    }
    let mut tallies = shared.tallies.lock().map(|t| t.clone()).unwrap_or_default();
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
        elapsed_secs: started.elapsed().as_secs_f64(),
        started_at,
        finished_at: chrono::Utc::now().to_rfc3339(),
        report: None,
        windows: job.windows.clone(),
    };
    let run_id = format!("{}-{}", chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ"), std::process::id());
    let mut doc = serde_json::to_value(&summary).unwrap_or_default();
    if let Some(obj) = doc.as_object_mut() {
        obj.insert("chainetl_version".into(), env!("CARGO_PKG_VERSION").into());
        obj.insert("shard".into(), opts.shard.map(|(k, n)| format!("{k}/{n}")).into());
    }
    match state.save_doc(&format!("runs/{run_id}.json"), &doc).await {
        Ok(rel) => summary.report = Some(rel),
        Err(e) => tracing::warn!("could not write the run report: {e}"),
    }
    Ok(summary)
}

/// Units paged at once: half again the request slots, so that while some
/// units decode, write or commit, others have a request ready for every
/// slot; each unit in flight holds pages and open files, so not more.
fn units_in_flight(spec: &Spec) -> usize {
    spec.source.max_concurrency + spec.source.max_concurrency.div_ceil(2)
}

/// Client settings from the spec; the key is read from the environment here
/// and nowhere else.
pub fn client_config(spec: &Spec, base_url: String) -> Result<ClientConfig, RunError> {
    let mut cfg = ClientConfig::new(base_url);
    if let Some(var) = &spec.source.api_key_env {
        let key = std::env::var(var).map_err(|_| RunError::MissingKey(var.clone()))?;
        cfg.api_key = Some(Secret::new(key));
        cfg.api_key_env = Some(var.clone());
    }
    cfg.timeout = spec.source.timeout;
    cfg.max_retries = spec.source.max_retries;
    cfg.max_concurrency = spec.source.max_concurrency;
    cfg.requests_per_second = spec.source.requests_per_second;
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
    let mut pager = Pager::start(client, unit.clone(), export, spec.source.page_size, st.cursor.clone());
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
    let result: Result<bool, UnitError> = async {
        loop {
            if *shared.cancel.borrow() {
                return Ok(false);
            }
            let Some(f) = pager.next().await? else {
                return Ok(true);
            };
            page_no += 1;
            let ctx = Ctx {
                unit,
                page: page_no,
                enc: out.hash_encoding,
            };
            let decoded = match &f.page {
                Page::Blocks(b) => decode::blocks::decode(ctx, b)?,
                Page::Events(e) => decode::events::decode(ctx, e)?,
                Page::Portfolio(p) => decode::portfolio::decode(ctx, p)?,
                Page::Tokens(t) => decode::tokens::decode(ctx, t)?,
            };
            let rows = decoded.batch.num_rows() as u64;
            writer.write(decoded).await?;
            progress.page(rows);
            pending.rows += rows;
            pending.pages += 1;
            pending.cursor = f.next.clone();
            if f.next.is_none() {
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
        crate::failpoint::hit("after-file-write");
    }
    st.cursor = if done { None } else { pending.cursor.clone() };
    st.next_seq = writer.next_seq;
    st.rows += pending.rows;
    st.pages += pending.pages;
    st.files += files.len() as u64;
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

/// Units of a job with their checkpoints, for `status`.
pub async fn status(spec: &Spec) -> Result<(JobState, Vec<Unit>, HashMap<String, UnitState>), RunError> {
    let sink = Arc::new(Sink::open(&spec.output)?);
    let state = StateStore::new(sink, &spec.name);
    let Some(job) = state.load_job().await? else {
        return Ok((
            JobState {
                version: STATE_VERSION,
                name: spec.name.clone(),
                spec_hash: spec.content_hash(),
                windows: plan::freeze_windows(spec, plan::job_now(spec)),
                created_at: String::new(),
                chainetl_version: String::new(),
            },
            Vec::new(),
            HashMap::new(),
        ));
    };
    let units = plan::plan(spec, &job.windows, &[]);
    let states = state.load_units().await?;
    Ok((job, units, states))
}
