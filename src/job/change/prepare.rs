//! Opening a job's state before a run: finishing an interrupted `--fresh`
//! or doing one, then checking the spec against the job's recorded
//! identity. A job whose exports changed is refused before anything is
//! deleted; a grown job (exports appended, chains added) continues, the
//! appended exports' windows frozen now and recorded in `exports/e<i>.json`;
//! a job whose output format changed is to be converted from the rows its
//! output holds ([`Opened::convert`], done by `super::convert` before
//! anything else), which only `run` does.

use crate::job::error::RunError;
use crate::plan;
use crate::sink::Sink;
use crate::spec::changes::lines_of;
use crate::spec::{ExportIdentity, FormatChange, JobIdentity, LayoutChange, Spec};
use crate::state::{AddedExport, JobState, Phase, STATE_VERSION, StateStore};
use std::sync::Arc;

/// A job's state, opened for a run.
#[derive(Debug)]
pub struct Opened {
    /// The job's state.
    pub state: StateStore,
    /// Its document (windows for every export of the spec).
    pub job: JobState,
    /// The output's format is to change first.
    pub convert: Option<FormatChange>,
}

/// Opens the job's state in `sink`, finishes or does a `--fresh`, and
/// freezes (or reloads) the windows. A job whose spec changed is refused
/// before anything is deleted, unless `fresh`; a grown job (exports
/// appended, chains added) continues, the appended exports' windows frozen
/// now. A job whose output format changed is refused here, naming the
/// command that converts it (`run`, see [`open`]).
pub async fn prepare(spec: &Spec, sink: Arc<Sink>, fresh: bool, now: i64) -> Result<(StateStore, JobState), RunError> {
    let opened = open(spec, sink, fresh, now).await?;
    if let Some(c) = &opened.convert {
        return Err(RunError::unconverted(spec, c));
    }
    Ok((opened.state, opened.job))
}

/// [`prepare`], with a change of output format allowed: returned in
/// [`Opened::convert`] for the run to make first. Also the way on for a
/// conversion a dead run left (`migration.json`), which only the spec that
/// asked for it may take.
pub async fn open(spec: &Spec, sink: Arc<Sink>, fresh: bool, now: i64) -> Result<Opened, RunError> {
    let state = StateStore::new(sink.clone(), &spec.name);
    let identity = JobIdentity::of(spec);
    super::sharing::refuse_mixing(spec, &state, fresh).await?;
    let interrupted = state.clear_interrupted().await?;
    if interrupted && !fresh {
        tracing::warn!("an earlier --fresh did not finish: finishing it, so the job starts over");
    }
    let (mut seq_floor, mut generation_floor) = (0, 0);
    if fresh || interrupted {
        // A conversion killed while deleting the old format's logs
        // leaves logs that no longer read: they go first, as it would
        // have finished. A record that no longer reads is no way back
        // from --fresh: it goes with the rest of the state.
        if let Ok(Some(m)) = state.load_migration().await
            && m.phase == Phase::Logs
        {
            super::convert::forget(spec, &sink, m.from, &tables_to_clear(spec, &state).await).await?;
        }
        let cleared = state.clear(&tables_to_clear(spec, &state).await).await?;
        (seq_floor, generation_floor) = (cleared.seq_floor, cleared.generation_floor);
        tracing::info!(removed = cleared.removed, "--fresh: removed the job's earlier output and state");
    }
    let job = match state.load_job().await? {
        Some(job) => state.upgrade_job(job).await?,
        None => {
            let job = JobState {
                version: STATE_VERSION,
                name: spec.name.clone(),
                spec_hash: identity.hash(),
                windows: plan::freeze_windows(spec, now),
                page_size: Some(spec.source.page_size),
                cut_rule: Some(crate::vocab::cuts::CutRule::LATEST.version()),
                created_at: chrono::Utc::now().to_rfc3339(),
                chainetl_version: env!("CARGO_PKG_VERSION").into(),
                identity: Some(identity.clone()),
                seq_floor,
                generation_floor,
            };
            // Another shard may have created it first, from another spec.
            state.create_job(&job).await?
        }
    };
    super::relayout::undo(spec, &state, &job).await?;
    let (job, convert) = adopt(spec, &state, job, &identity, now).await?;
    state.set_seq_floor(job.seq_floor);
    state.set_generation_floor(job.generation_floor);
    Ok(Opened { state, job, convert })
}

/// A job found in state, checked against `spec`: the same job, or grown
/// (exports appended: their windows frozen now, or adopted from the shard
/// that froze them first), possibly in another output format. Returns the
/// job with a window for every export, and the change of format to make.
async fn adopt(
    spec: &Spec,
    state: &StateStore,
    mut job: JobState,
    identity: &JobIdentity,
    now: i64,
) -> Result<(JobState, Option<FormatChange>), RunError> {
    let migration = migration_of(spec, state, identity).await?;
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
        return Ok((job, None));
    };
    let mut compared = stored.compare(identity);
    let mut changes = compared.changes.clone();
    // An export appended in an earlier run is the job's too: a spec
    // without it removes it.
    if spec.exports.len() >= stored.exports.len()
        && let Some(added) = state.load_added_export(spec.exports.len()).await?
    {
        changes.push(format!(
            "export[{}] ({} on {}), appended in an earlier run, was removed (exports may be appended, not removed)",
            added.export,
            added.identity.dataset().unwrap_or("?"),
            added.identity.chains.join(", ")
        ));
    }
    if changes.is_empty() && spec.exports.len() > stored.exports.len() {
        let frozen = plan::freeze_windows(spec, now);
        for e in &spec.exports[stored.exports.len()..] {
            let want = AddedExport {
                version: STATE_VERSION,
                export: e.index,
                identity: ExportIdentity::of(e),
                window: frozen.get(e.index).copied().flatten(),
                created_at: chrono::Utc::now().to_rfc3339(),
            };
            let got = state.create_added_export(&want).await?;
            // Leaving more columns out is made from its files, as for
            // the exports the job started with.
            match got.identity.columns_dropped(&want.identity, e.index) {
                Some(c) if got.identity.changes(&want.identity, e.index).len() == 1 => compared.layout.push(c),
                _ => changes.extend(got.identity.changes(&want.identity, e.index)),
            }
            job.windows.truncate(e.index);
            job.windows.push(got.window);
        }
    }
    if changes.is_empty() {
        one_change_a_run(spec, &compared)?;
        let convert = match compared.format {
            Some((from, to)) => Some(FormatChange {
                from,
                to,
                layout: Vec::new(),
            }),
            None if !compared.layout.is_empty() => Some(FormatChange {
                from: spec.output.format,
                to: spec.output.format,
                layout: compared.layout,
            }),
            None => None,
        };
        if convert.is_none() && migration.is_some() {
            // Its job document was written; only the record was left.
            state.end_migration(&job).await?;
        }
        return Ok((job, convert));
    }
    if let Some((from, to)) = &compared.format {
        changes.push(format!(
            "(output.format: was {from}, now {to} — that alone `chainetl run` makes from the stored files, with no request)"
        ));
    }
    for l in &compared.layout {
        changes.push(format!(
            "({l} — that alone `chainetl run` makes from the stored files, with no request)"
        ));
    }
    Err(RunError::JobChanged {
        name: spec.name.clone(),
        changes,
        deletes: fresh_deletes(spec, state).await?,
    })
}

/// Refuses a spec that changes two of the output format, the layout and
/// an export's derived tables: each is made from the stored files, one a
/// run.
pub(crate) fn one_change_a_run(spec: &Spec, compared: &crate::spec::Comparison) -> Result<(), RunError> {
    let (derived, layout): (Vec<LayoutChange>, Vec<LayoutChange>) = compared.layout.iter().cloned().partition(LayoutChange::is_derived);
    if !derived.is_empty() && (!layout.is_empty() || compared.format.is_some()) {
        let other = match &compared.format {
            Some((from, to)) => format!("the output format (was {from}, now {to})"),
            None => format!("how its files are laid out ({})", lines_of(&layout)),
        };
        return Err(RunError::Migration(format!(
            "job `{}`: the spec changes {other} and the tables derived from the stored rows ({}): make one change a \
             run, each from the stored files with no request",
            spec.name,
            lines_of(&derived)
        )));
    }
    match &compared.format {
        Some((from, to)) if !compared.layout.is_empty() => Err(RunError::Migration(format!(
            "job `{}`: the spec changes the output format (was {from}, now {to}) and how its files are laid out ({}): \
             make one change a run, each from the stored files with no request — first the format, then the layout \
             (or the other way round)",
            spec.name,
            lines_of(&compared.layout)
        ))),
        _ => Ok(()),
    }
}

/// The conversion in progress, if any; refused unless `identity` (the
/// spec's) is the one that asked for it, as `run` and `plan` refuse it.
pub(crate) async fn migration_of(
    spec: &Spec,
    state: &StateStore,
    identity: &JobIdentity,
) -> Result<Option<crate::state::Migration>, RunError> {
    let migration = state.load_migration().await?;
    if let Some(m) = &migration
        && m.identity != *identity
        && !m.layout.is_empty()
    {
        return Err(RunError::Migration(format!(
            "job `{}`: a rewrite of its files into another layout ({}) was interrupted (begun {}); run the spec that \
             asked for it again to finish it (with no request to the service){}, or re-run with --fresh to start over \
             (this deletes the job's {})",
            spec.name,
            crate::spec::changes::lines_of(&m.layout),
            crate::vocab::window::iso_to_second(&m.started_at),
            if m.phase == Phase::Rewrite {
                "; nothing of it is published yet, so the spec the job had undoes it"
            } else {
                ""
            },
            fresh_deletes(spec, state).await?
        )));
    }
    if let Some(m) = &migration
        && m.identity != *identity
    {
        return Err(RunError::Migration(format!(
            "job `{}`: a conversion of its output from format {} to {} was interrupted (begun {}); \
             run the spec that asked for it again to finish it (with no request to the service), \
             or re-run with --fresh to start over (this deletes the job's {})",
            spec.name,
            m.from,
            m.to,
            crate::vocab::window::iso_to_second(&m.started_at),
            fresh_deletes(spec, state).await?
        )));
    }
    Ok(migration)
}

/// What `--fresh` would delete, said in the refusal of a changed job.
pub(crate) async fn fresh_deletes(spec: &Spec, state: &StateStore) -> Result<String, RunError> {
    let units = state.load_units().await?;
    let (files, rows) = units.values().fold((0, 0), |(f, r), u| (f + u.files, r + u.rows));
    Ok(format!(
        "{files} committed file{} ({rows} rows) and its state under {}/_chainetl/{}/",
        if files == 1 { "" } else { "s" },
        state.output_uri().trim_end_matches('/'),
        spec.name
    ))
}

/// `verify --repair`: the units to export again lose their checkpoints
/// first, so their files count as uncommitted and are removed (in the
/// `delta` format: restarted, their files in the tables replaced in one
/// commit once they are done; see [`StateStore::restart_units`]).
pub(crate) async fn delete_repaired(spec: &Spec, state: &StateStore, units: &[String]) -> Result<(), RunError> {
    if !units.is_empty() {
        tracing::info!(
            units = units.len(),
            "repair: exporting units again whose files are missing or changed"
        );
        state.restart_units(units, &Default::default(), &spec.tables(), &[]).await?;
    }
    Ok(())
}

/// `--as-of` must resolve the job's stored windows as they were frozen.
pub(crate) fn check_as_of(spec: &Spec, job: &JobState, as_of: Option<i64>) -> Result<(), RunError> {
    let Some(as_of) = as_of else {
        return Ok(());
    };
    let want = plan::freeze_windows(spec, as_of);
    let stored = job.identity.as_ref().map_or(job.windows.len(), |i| i.exports.len());
    if want.iter().take(stored).ne(job.windows.iter().take(stored)) {
        return Err(RunError::AsOf {
            name: spec.name.clone(),
            created: job.created_at.clone(),
        });
    }
    Ok(())
}

/// The tables `--fresh` clears: the spec's, and those the job recorded when
/// it started (a renamed decoded table, or a dropped `also_raw`, still has
/// the job's files). A job state that cannot be read adds nothing: its
/// files are still found under the spec's tables.
async fn tables_to_clear(spec: &Spec, state: &StateStore) -> std::collections::BTreeSet<String> {
    let mut tables = spec.tables();
    if let Ok(Some(job)) = state.load_job().await
        && let Some(identity) = job.identity
    {
        tables.extend(identity.exports.iter().flat_map(|e| e.tables()).filter(|t| !t.is_empty()));
    }
    tables
}
