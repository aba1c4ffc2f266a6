//! Reading a job without running it: `status` (units, checkpoints, marks,
//! periods) and `verify` (every committed file against its checkpoint).
//! Neither takes the lease nor writes anything.

use super::error::RunError;
use crate::plan::{self, Segment, Unit};
use crate::sink::Sink;
use crate::spec::Spec;
use crate::state::{FileProblem, Mark, StateStore, UnitState};
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
pub async fn verify(spec: &Spec) -> Result<Vec<FileProblem>, RunError> {
    let sink = Arc::new(Sink::open(&spec.output)?);
    let state = StateStore::new(sink, &spec.name);
    if state.clear_interrupted().await? || state.load_job().await?.is_none() {
        return Ok(Vec::new());
    }
    let states = state.load_units().await?;
    Ok(state.verify(&spec.tables(), &states).await?)
}
