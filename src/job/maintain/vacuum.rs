//! `chainetl vacuum` (and the end of every unsharded run of a delta job):
//! deleting what the job's Delta tables no longer need.
//!
//! A file removed from a table (by `--fresh`, a compaction, a repair) stays on storage while a
//! version within `output.delta_retention` reads it (time travel, and
//! readers that opened an older version). Vacuum deletes a file of this
//! job's under the spec's tables only when all hold:
//!
//! - it is not in the table's current version;
//! - no commit at or after the cutoff (now − retention) removed it;
//! - no checkpoint of the job counts it while its unit is not yet
//!   published (a run that died between the two; the next run adds it),
//!   and no compaction record names it in a swap not yet finished;
//! - it was written before the cutoff (a file being written, or one a
//!   run is about to commit, is newer).
//!
//! So files of uncommitted work that a run left, which no version ever
//! read, go too once they are older than the retention. Log files no
//! version within the retention needs (commits and checkpoints before the
//! newest checkpoint at or before the oldest such version) are deleted
//! too, so the log stays short however many commits a table has had.
//! Files of other jobs sharing the output are never touched.

use crate::job::error::RunError;
use crate::sink::{Sink, SinkError};
use crate::spec::Spec;
use crate::state::StateStore;
use serde::Serialize;
use std::collections::HashSet;

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

fn failed(table: &str, e: impl std::fmt::Display) -> RunError {
    RunError::Sink(SinkError::Write {
        path: table.into(),
        source: format!("vacuum: {e}").into(),
    })
}

/// Vacuums the tables of `spec` (see the module doc). A no-op for
/// `parquet` outputs, which delete replaced files at once.
pub async fn vacuum_tables(spec: &Spec, sink: &Sink, state: &StateStore) -> Result<VacuumSummary, RunError> {
    let retention = spec.output.delta_retention;
    let mut out = VacuumSummary {
        retention_secs: retention.as_secs(),
        ..VacuumSummary::default()
    };
    let Some(delta) = sink.delta() else {
        return Ok(out);
    };
    let storage = sink.storage();
    let cutoff = chrono::Utc::now().timestamp_millis() - retention.as_millis() as i64;
    let pending: HashSet<String> = state
        .load_units()
        .await?
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
    for table in spec.tables() {
        let t = delta.table(sink, &table);
        if !t.exists(storage).await.map_err(|e| failed(&table, e))? {
            continue;
        }
        let live: HashSet<String> = t
            .blocking(|t| t.live_files())
            .await
            .map_err(|e| failed(&table, e))?
            .into_iter()
            .map(|f| format!("{table}/{}", f.path))
            .collect();
        let recent: HashSet<String> = t
            .removed_since(storage, cutoff)
            .await
            .map_err(|e| failed(&table, e))?
            .into_iter()
            .map(|p| format!("{table}/{p}"))
            .collect();
        let log = format!("{table}/_delta_log/");
        for m in storage.list(&format!("{table}/")).await.map_err(|e| failed(&table, e))? {
            let rel = storage.rel_of(&m.location);
            let name = rel.rsplit('/').next().unwrap_or_default();
            if rel.starts_with(&log) || !state.owns_data_file(name) {
                continue;
            }
            if live.contains(&rel) || recent.contains(&rel) || pending.contains(&rel) || m.last_modified.timestamp_millis() >= cutoff {
                continue;
            }
            storage.delete(&rel).await.map_err(|e| failed(&table, e))?;
            out.files += 1;
            out.bytes += m.size;
        }
        out.log_files += t.clean_log(storage, cutoff).await.map_err(|e| failed(&table, e))?;
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
