//! `chainetl compact`. (A run compacts at its end and while following:
//! `compact_finished` in `crate::job::pass`.)

use super::{CompactSummary, Compactor};
use crate::job::error::RunError;
use crate::sink::Sink;
use crate::spec::Spec;
use crate::state::StateStore;

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
        let c = Compactor::new(spec, &state, &sink, now);
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
        // A conversion of the output's format finishes its swaps itself,
        // in the format they were begun in.
        if state.load_migration().await?.is_some() {
            return Ok(Vec::new());
        }
        let c = Compactor::new(spec, &state, &sink, chrono::Utc::now().timestamp());
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
