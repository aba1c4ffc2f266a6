//! `chainetl vacuum` (and the end of every unsharded run of a job whose
//! format keeps earlier versions): deleting what the job's tables no
//! longer need, as its format says ([`crate::sink::format::TableFormat::vacuum`]).
//!
//! A file removed from a table (by `--fresh`, a compaction, a repair) stays on storage while a
//! version within `output.delta_retention` reads it (time travel, and
//! readers that opened an older version). What the job's records still
//! need stays too: files a checkpoint counts while its unit is not yet
//! published (a run that died between the two; the next run adds them),
//! and the inputs and outputs of a compaction swap not yet finished.
//! Files of other jobs sharing the output are never touched.

use crate::job::error::RunError;
use crate::sink::Sink;
use crate::sink::format::Retention;
use crate::spec::Spec;
use crate::state::StateStore;
use serde::Serialize;
use std::collections::HashSet;
use std::sync::Arc;

/// What a vacuum deleted.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VacuumSummary {
    /// Data files deleted.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Log files deleted.
    pub log_files: usize,
    /// The retention applied, in seconds.
    pub retention_secs: u64,
}

/// Vacuums the tables of `spec` (see the module doc). A no-op in a
/// format that deletes replaced files at once.
pub async fn vacuum_tables(spec: &Spec, sink: &Sink, state: &StateStore) -> Result<VacuumSummary, RunError> {
    let retention = spec.output.delta_retention;
    let mut out = VacuumSummary {
        retention_secs: retention.as_secs(),
        ..VacuumSummary::default()
    };
    let format = sink.format();
    // A format that publishes keeps replaced files for its earlier
    // versions; a folder deletes them at once.
    if !format.publishes() {
        return Ok(out);
    }
    let units = state.load_units().await?;
    let settled = crate::job::tables::settled_txns(state, &units, &state.load_marks().await?);
    let pending: HashSet<String> = units
        .into_values()
        .filter(|st| !st.published)
        .flat_map(|st| st.committed.into_iter().map(|f| f.path))
        .chain(
            // A compaction swap not yet committed (a run died in it): its
            // outputs and inputs are the next run's to finish.
            state
                .load_compactions()
                .await?
                .into_iter()
                .filter_map(|c| c.pending)
                .flat_map(|p| p.inputs.into_iter().chain(p.outputs.into_iter().map(|f| f.path))),
        )
        .collect();
    let owner = state.clone();
    let keep = Retention {
        cutoff_ms: chrono::Utc::now().timestamp_millis() - retention.as_millis() as i64,
        pending,
        owned: Arc::new(move |name: &str| owner.owns_data_file(name)),
        settled,
    };
    for table in spec.tables() {
        let v = format.vacuum(sink, &table, &keep).await?;
        out.files += v.files;
        out.bytes += v.bytes;
        out.log_files += v.log_files;
    }
    if out.files + out.log_files > 0 {
        tracing::info!(
            files = out.files,
            bytes = out.bytes,
            log_files = out.log_files,
            "vacuum: deleted files no version within the retention reads"
        );
    }
    Ok(out)
}

/// `chainetl vacuum SPEC`: with the whole job's lease, vacuums its tables.
/// `None` when the job has not run there.
pub async fn vacuum_job(spec: &Spec) -> Result<Option<VacuumSummary>, RunError> {
    let sink = std::sync::Arc::new(Sink::open(&spec.output)?);
    let lease = crate::state::lease::Lease::acquire(sink.clone(), &spec.name, &crate::state::lease::scope(None)).await?;
    let result = async {
        let state = StateStore::new(sink.clone(), &spec.name);
        let Some(job) = state.load_job().await? else {
            return Ok(None);
        };
        // Files not yet in a table (a conversion to delta not begun or not
        // finished) are not files the tables dropped.
        let recorded = job.identity.as_ref().map(|i| i.format());
        let migration = state.load_migration().await?;
        let from = match (&migration, recorded.as_deref()) {
            (Some(m), _) => Some(m.from),
            (None, Some(f)) if f != spec.output.format.name() => Some(RunError::recorded_format(spec, f)?),
            _ => None,
        };
        if let Some(from) = from {
            return Err(RunError::unconverted(
                spec,
                &crate::spec::FormatChange {
                    from,
                    to: spec.output.format,
                    layout: migration.map(|m| m.layout).unwrap_or_default(),
                },
            ));
        }
        Ok(Some(vacuum_tables(spec, &sink, &state).await?))
    }
    .await;
    lease.release().await;
    result
}
