//! Maintenance of the files a job committed, with no request to the
//! service: compaction ([`compact`]: which partitions are finished, and
//! the exactly-once swap of their files for a few right-sized ones, also
//! how `verify --repair` finishes a dead run's swap) and vacuum
//! ([`vacuum`]: deleting what a Delta table's versions within the
//! retention no longer read). Both, and `verify --repair`, first point
//! the pointer readers follow at each table's current version where a
//! writer died before it did ([`settle_pointers`]).

pub mod compact;
pub mod vacuum;

use crate::job::error::RunError;
use crate::sink::Sink;
use crate::spec::Spec;

/// Points the pointer readers of `spec`'s tables follow at each table's
/// current version where it lags (Iceberg's `version-hint.text`); how
/// many moved. Safe without the job's lease: every writer of a table does
/// the same before it commits.
pub async fn settle_pointers(spec: &Spec, sink: &Sink) -> Result<usize, RunError> {
    let moved = crate::sink::format::settle_pointers(sink, &spec.tables()).await?;
    if moved > 0 {
        tracing::info!(tables = moved, "pointed the tables' version pointers at their newest versions");
    }
    Ok(moved)
}

/// [`settle_pointers`] on the job's output.
pub async fn settle_job_pointers(spec: &Spec) -> Result<usize, RunError> {
    settle_pointers(spec, &Sink::open(&spec.output)?).await
}
