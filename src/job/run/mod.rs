//! Running a job: the stage that wires `spec → plan → fetch → decode →
//! sink → state` together for `chainetl run`. Nothing else imports more
//! than one later stage.
//!
//! A run takes the job's lease, opens its state (`crate::job::change`'s
//! `prepare`: the job is the same, grown, changed, or refused before
//! anything is deleted), makes a change of the output first if the spec
//! asks for one, then makes passes until there is nothing left to do (see
//! [`Passes::run`]): each pass cuts new segments of incremental exports,
//! plans the units of every window and pending segment, removes files of
//! uncommitted work, runs the units not yet done under the request slots,
//! and closes segments whose units are all done. Follow mode then waits
//! for the next poll.
//!
//! Where each part lives:
//! - [`setup`]: client settings, the service (or the built-in simulator),
//!   what unit tasks share ([`Shared`]);
//! - [`pass`]: a pass, top to bottom — periods opened, incremental exports
//!   stepped, units planned and run, segments closed, compaction and the
//!   next poll;
//! - [`schedule`]: running a pass's units, how many at once;
//! - [`run_unit`]: one unit's page → decode → write → commit;
//! - [`publish`]: making a committed unit's files visible to the readers
//!   of a table format that keeps a log (Delta);
//! - [`incremental`] and [`reorg`]: high-water marks, follow mode, reorg repair;
//! - [`counters`], [`live`] and [`series`]: live figures, the handle on
//!   them, and the figures over time;
//! - [`report`] and [`report_format`]: tallies, the run summary and the
//!   run report's schema.
//!
//! Invariants kept here (the commit rule itself is [`crate::state`]'s): a
//! checkpoint is written only after the files it covers are durable, and
//! only in page order; a segment is recorded before any of its units start;
//! nothing is written or deleted before the lease is held and the spec is
//! checked against the job's identity. The engine prints nothing: it
//! returns values and tells an optional [`Observer`] what it is doing.

pub mod counters;
pub mod incremental;
pub mod live;
mod pass;
pub(crate) mod publish;
pub mod reorg;
pub mod report;
pub mod report_format;
pub mod run_unit;
mod sampler;
pub mod schedule;
pub mod series;
pub mod setup;

use super::error::RunError;
use crate::job::change::{convert, prepare, relayout};
use crate::job::maintain::compact;
use crate::plan::{self, Segment, Unit};
use crate::sink::Sink;
use crate::spec::Spec;
use crate::state::UnitState;
use crate::vocab::window::Resolved;
use counters::ExportProgress;
use live::Live;
use pass::Passes;
use report::RunSummary;
use setup::Shared;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::watch;

/// Passes made right after a reorg repair, to export again what it removed
/// in the same run. A chain that reorganises on every pass would otherwise
/// keep a run repairing forever; past this, the run ends (or, following,
/// waits for its next poll) and the next pass carries on.
pub const MAX_REPAIR_PASSES: u64 = 20;

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Delete earlier output and state first.
    pub fresh: bool,
    /// `(k, n)`: run shard k of n (1-based).
    pub shard: Option<(usize, usize)>,
    /// Keep exporting newly confirmed blocks until a signal.
    pub follow: bool,
    /// Resolve relative windows against this instant (unix seconds) instead of now.
    pub as_of: Option<i64>,
    /// Units to export again from the start (`verify --repair`): their
    /// checkpoints are deleted first, so their files count as uncommitted
    /// and are removed before they are fetched again.
    pub repair: Vec<String>,
    /// Told what the run is doing (the command line renders it).
    pub observer: Option<Observer>,
}

/// What a run tells its observer as it goes.
#[derive(Debug)]
#[non_exhaustive]
pub enum JobEvent<'a> {
    /// The first pass is planned: what the run will do.
    Planned {
        /// The spec.
        spec: &'a Spec,
        /// The frozen windows, by export.
        windows: &'a [Option<Resolved>],
        /// Aligned periods and incremental segments pending.
        segments: &'a [Segment],
        /// The units of this pass (this shard).
        units: &'a [Unit],
        /// Their checkpoints, by unit id.
        states: &'a HashMap<String, UnitState>,
    },
    /// The run is set up: a handle on its figures as they change.
    Started {
        /// The handle (keep a clone).
        live: &'a Live,
    },
    /// A pass starts its units; the live counters, one per export.
    Fetching {
        /// Counters by export index.
        progress: &'a [Arc<ExportProgress>],
    },
}

/// A callback told of [`JobEvent`]s, on the run's task (keep it quick).
#[derive(Clone)]
pub struct Observer(Arc<dyn Fn(&JobEvent<'_>) + Send + Sync>);

impl Observer {
    /// An observer calling `f`.
    pub fn new(f: impl Fn(&JobEvent<'_>) + Send + Sync + 'static) -> Observer {
        Observer(Arc::new(f))
    }
}

impl fmt::Debug for Observer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Observer")
    }
}

impl RunOptions {
    fn tell(&self, event: JobEvent<'_>) {
        if let Some(o) = &self.observer {
            (o.0)(&event);
        }
    }
}

/// Runs the job to completion (or until `cancel` turns true). Aligned
/// exports run the current period (and finish earlier unfinished ones);
/// incremental exports run from their mark to the confirmed head. With
/// `opts.follow` it then keeps polling and exporting newly confirmed blocks
/// until cancelled.
pub async fn run(mut spec: Spec, opts: RunOptions, cancel: watch::Receiver<bool>) -> Result<RunSummary, RunError> {
    let started = Instant::now();
    fit_open_file_limit(&mut spec)?;
    let started_at = chrono::Utc::now().to_rfc3339();
    if opts.follow && !spec.exports.iter().any(|e| e.incremental.is_some()) {
        return Err(RunError::Follow);
    }
    // Everything a run needs is checked before anything is written or
    // deleted (a --fresh that then fails would have lost the output): the
    // API key variable here, the output's access by taking the lease.
    let cfg = setup::client_config(&spec)?;
    let sink = Arc::new(Sink::open(&spec.output)?);
    if let Some(why) = sink.format().store_refusal(sink.storage()) {
        return Err(RunError::Environment(format!("output {}: {why}", spec.output.uri)));
    }
    // A --fresh clears every shard's work: it needs the whole job.
    let scope = crate::state::lease::scope(if opts.fresh { None } else { opts.shard });
    let lease = crate::state::lease::Lease::acquire(sink.clone(), &spec.name, &scope).await?;
    let result = run_leased(spec, opts, cancel, cfg, sink, started, started_at).await;
    lease.release().await;
    result
}

/// What `run` refuses before it sends a request or writes anything, for
/// `plan` to refuse the same way, with the same message (exit 2), in the
/// same order: an open-file limit too low for one request, the API key's
/// variable, a store the format cannot commit to, and another job's
/// different layout of a shared output. (A catalog's credential is met at
/// its first request, which may come after the service's: not here.)
/// `run` makes the same checks on its own way there (the lease comes
/// between them).
pub async fn preflight(spec: &Spec) -> Result<(), RunError> {
    fit_open_file_limit(&mut spec.clone())?;
    setup::client_config(spec)?;
    let sink = Arc::new(Sink::open(&spec.output)?);
    if let Some(why) = sink.format().store_refusal(sink.storage()) {
        return Err(RunError::Environment(format!("output {}: {why}", spec.output.uri)));
    }
    let state = crate::state::StateStore::new(sink, &spec.name);
    crate::job::change::sharing::refuse_mixing(spec, &state, false).await
}

/// Lowers `max_concurrency` to what the open-file limit allows (see
/// [`crate::util::fd_limit`]), saying so, rather than failing units.
/// Refuses to start where even one request slot does not fit.
fn fit_open_file_limit(spec: &mut Spec) -> Result<(), RunError> {
    use crate::util::fd_limit::{PER_SLOT, RESERVED, concurrency_within, current};
    let Some(limit) = current() else {
        return Ok(());
    };
    if limit < RESERVED + PER_SLOT {
        return Err(RunError::Environment(format!(
            "the open-file limit (ulimit -n) is {limit}: a run needs at least {} descriptors; raise it",
            RESERVED + PER_SLOT
        )));
    }
    let wanted = spec.source.max_concurrency;
    let fits = concurrency_within(limit, wanted);
    if fits < wanted {
        tracing::warn!(
            "the open-file limit is {limit} (ulimit -n, as high as the hard limit lets this process raise it): \
             running {fits} requests at once instead of max_concurrency = {wanted}, since each needs sockets and files; \
             raise the hard limit (ulimit -Hn, LimitNOFILE=, or the container's nofile) for more"
        );
        spec.source.max_concurrency = fits;
    }
    Ok(())
}

/// [`run`], holding the job's lease.
async fn run_leased(
    spec: Spec,
    opts: RunOptions,
    cancel: watch::Receiver<bool>,
    cfg: crate::api::ClientConfig,
    sink: Arc<Sink>,
    started: Instant,
    started_at: String,
) -> Result<RunSummary, RunError> {
    let now = opts.as_of.unwrap_or_else(|| plan::job_now(&spec));
    let prepare::Opened { state, job, convert } = prepare::open(&spec, sink.clone(), opts.fresh, now).await?;
    // Refused before a conversion changes anything.
    prepare::check_as_of(&spec, &job, opts.as_of)?;
    // A change of format is made first, from the stored files, holding
    // the whole job: shards would each see part of the job's files.
    let (job, conversion) = match &convert {
        Some(c) if opts.shard.is_some() && !c.converts() => {
            return Err(RunError::Migration(format!(
                "job `{}`: its files are laid out otherwise than the spec says ({}): run once without --shard to \
                 rewrite them (from the files the output holds, with no request to the service), then run the shards",
                spec.name,
                c.layout_lines()
            )));
        }
        Some(c) if opts.shard.is_some() => {
            return Err(RunError::Migration(format!(
                "job `{}`: its output is in format {}, and the spec says {}: run once without --shard to convert it \
                 (from the files the output holds, with no request to the service), then run the shards",
                spec.name, c.from, c.to
            )));
        }
        Some(c) if !c.converts() => {
            let (job, done) = relayout::rewrite(&spec, &sink, &state, job, c, now).await?;
            (job, Some(done))
        }
        Some(c) => {
            let (job, done) = convert::convert(&spec, &sink, &state, job, c, now).await?;
            (job, Some(done))
        }
        None => (job, None),
    };
    // Temporary state files are unique per process, but a shard's lease
    // does not exclude the other shards' writes in progress.
    if opts.fresh || opts.shard.is_none() {
        state.remove_stale_tmp().await;
    }
    let c = compact::Compactor::new(&spec, &state, &sink, now);
    let repair = if opts.shard.is_none() {
        c.start(&opts.repair).await?
    } else {
        // A shard cannot dissolve partitions other shards' units share:
        // exporting such a unit again beside its compacted rows would
        // double them, so the shard stops before fetching anything.
        let records = state.load_compactions().await?;
        if let Some(r) = records.iter().find(|r| !r.dissolving.is_empty()) {
            return Err(RunError::Repair(format!(
                "a repair of the compacted partition {} was interrupted: run once without --shard \
                 (or `chainetl compact`) to finish it before the shards export its units again",
                r.partition
            )));
        }
        let waiting = c.uncheckpointed(&records).await?;
        if let Some(u) = waiting.first() {
            return Err(RunError::Repair(format!(
                "unit {u}{} has rows in compacted files but no checkpoint: run once without --shard \
                 (or `chainetl compact`) so that they are removed before the unit is exported again",
                if waiting.len() > 1 {
                    format!(" and {} more", waiting.len() - 1)
                } else {
                    String::new()
                }
            )));
        }
        opts.repair.clone()
    };
    state.begin_repair(&repair).await?;
    prepare::delete_repaired(&spec, &state, &repair).await?;
    let (client, sim) = setup::connect(&spec, cfg, &cancel).await?;
    let shared = Arc::new(Shared::new(spec, client, sink, state, started, cancel)?);
    *shared.conversion.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = conversion.clone();
    let mut passes = Passes::new(shared.clone(), &job, &opts, now).await?;
    passes.out.conversion = conversion;
    shared.take_sample();
    let sampler = sampler::spawn_sampler(shared.clone());
    let result = passes.run().await;
    drop(sampler);
    shared.take_last_sample();
    if let Some(sim) = sim {
        sim.task.abort();
    }
    result?;
    if shared.state.end_repair(&shared.spec, &job).await? {
        tracing::info!("repair finished: every unit it exported again is done");
    }
    Ok(report::summarize(&shared, &job, &opts, passes.out, started_at).await?)
}

/// `chainetl compact`: finishes interrupted swaps and compacts every
/// finished partition of the job, whatever `output.compact` says. Holds the
/// whole job's lease. None when the job has not run yet.
pub async fn compact_job(spec: &Spec, as_of: Option<i64>) -> Result<Option<compact::CompactSummary>, RunError> {
    let sink = std::sync::Arc::new(Sink::open(&spec.output)?);
    let lease = crate::state::lease::Lease::acquire(sink.clone(), &spec.name, &crate::state::lease::scope(None)).await?;
    let result = async {
        let probe = crate::state::StateStore::new(sink.clone(), &spec.name);
        if probe.clear_interrupted().await? || probe.load_job().await?.is_none() {
            return Ok(None);
        }
        let now = as_of.unwrap_or_else(|| chrono::Utc::now().timestamp());
        let (state, _job) = prepare::prepare(spec, sink.clone(), false, now).await?;
        state.remove_stale_tmp().await;
        crate::job::maintain::settle_pointers(spec, &sink).await?;
        let c = compact::Compactor::new(spec, &state, &sink, now);
        // Rows of units whose checkpoint is gone go before anything is
        // merged again; the next run exports those units again.
        c.start(&[]).await?;
        let done = c.run(&|| false).await?;
        // Holding the whole job, this is where a job run only in shards
        // gets its manifests (one or more a shard run) merged into one.
        state.fold_units(|_| true).await?;
        state.merge_manifests(crate::state::MERGE_AT).await?;
        Ok(Some(done))
    }
    .await;
    lease.release().await;
    result
}
