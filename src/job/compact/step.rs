//! When compaction runs: at the end of a run and while following
//! ([`crate::job::Passes`]), and `chainetl compact`.

use super::{CompactSummary, Compactor};
use crate::job::error::RunError;
use crate::sink::Sink;
use crate::spec::Spec;
use crate::state::StateStore;
use std::time::Instant;

/// How often follow mode looks for finished partitions.
const FOLLOW_COMPACT_EVERY: std::time::Duration = std::time::Duration::from_secs(600);

impl crate::job::Passes<'_> {
    /// Compacts finished partitions when `output.compact` is on and this run
    /// holds the whole job (a shard leaves it to an unsharded run or
    /// `chainetl compact`): at the end of a run, and every
    /// [`FOLLOW_COMPACT_EVERY`] while following.
    pub(crate) async fn compact_finished(&mut self, end: bool) -> Result<(), RunError> {
        let shared = self.shared.clone();
        if !shared.spec.output.compact || self.opts.shard.is_some() {
            return Ok(());
        }
        if !end && self.last_compact.is_some_and(|t| t.elapsed() < FOLLOW_COMPACT_EVERY) {
            return Ok(());
        }
        self.last_compact = Some(Instant::now());
        let c = Compactor {
            spec: &shared.spec,
            state: &shared.state,
            sink: &shared.sink,
            now: self.opts.as_of.unwrap_or_else(|| chrono::Utc::now().timestamp()),
        };
        let done = c.run(&|| shared.stopping()).await?;
        if done.partitions > 0 {
            tracing::info!(
                partitions = done.partitions,
                files_in = done.files_in,
                files_out = done.files_out,
                rows = done.rows,
                "compacted {} partition{}: {} files into {}",
                done.partitions,
                if done.partitions == 1 { "" } else { "s" },
                done.files_in,
                done.files_out
            );
        }
        let total = self.out.compaction.get_or_insert_with(CompactSummary::default);
        total.partitions += done.partitions;
        total.files_in += done.files_in;
        total.files_out += done.files_out;
        total.rows += done.rows;
        total.bytes_in += done.bytes_in;
        total.bytes_out += done.bytes_out;
        total.secs += done.secs;
        total.skipped.extend(done.skipped);
        Ok(())
    }
}

/// `chainetl compact`: finishes interrupted swaps and compacts every
/// finished partition of the job, whatever `output.compact` says. Holds the
/// whole job's lease. None when the job has not run yet.
pub async fn compact_job(spec: &Spec, as_of: Option<i64>) -> Result<Option<CompactSummary>, RunError> {
    let sink = std::sync::Arc::new(Sink::open(&spec.output)?);
    let lease = crate::state::lease::Lease::acquire(sink.clone(), &spec.name, &crate::state::lease::scope(None)).await?;
    let result = async {
        let probe = StateStore::new(sink.clone(), &spec.name);
        if probe.clear_interrupted().await? || probe.load_job().await?.is_none() {
            return Ok(None);
        }
        let now = as_of.unwrap_or_else(|| chrono::Utc::now().timestamp());
        let (state, _job) = crate::job::prepare(spec, sink.clone(), false, now).await?;
        state.remove_stale_tmp().await;
        let c = Compactor {
            spec,
            state: &state,
            sink: &sink,
            now,
        };
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

/// `verify --repair`'s first step: finishes the compaction swaps a dead
/// run left (forward once `swapping`, else back), holding the whole job's
/// lease, with no request to the service. A repair or `--fresh` left
/// unfinished needs units exported again: the run that follows finishes
/// those. Returns the partitions whose swap it finished.
pub async fn finish_swaps(spec: &Spec) -> Result<Vec<String>, RunError> {
    let sink = std::sync::Arc::new(Sink::open(&spec.output)?);
    let lease = crate::state::lease::Lease::acquire(sink.clone(), &spec.name, &crate::state::lease::scope(None)).await?;
    let result = async {
        let state = StateStore::new(sink.clone(), &spec.name);
        let c = Compactor {
            spec,
            state: &state,
            sink: &sink,
            now: chrono::Utc::now().timestamp(),
        };
        let mut done = Vec::new();
        for mut record in state.load_compactions().await? {
            if record.pending.is_some() && record.dissolving.is_empty() {
                c.recover(&mut record).await?;
                done.push(record.partition);
            }
        }
        Ok(done)
    }
    .await;
    lease.release().await;
    result
}
