//! Finishing a dead run's compaction swaps, for `verify --repair`.
//! (`chainetl compact` opens the job as a run does, then compacts: see
//! the run room; a run compacts at its end and while following.)

use super::Compactor;
use crate::job::error::RunError;
use crate::sink::Sink;
use crate::spec::Spec;
use crate::state::StateStore;

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
