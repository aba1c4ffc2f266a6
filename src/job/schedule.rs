//! Which units a pass runs, in what order, and how many at once.
//!
//! A pass plans every unit of the frozen windows and pending segments
//! (this shard's share with `--shard K/N`: a deterministic split by unit
//! id), removes the files of uncommitted work those units left, and runs
//! the units not yet done, largest first, at most [`units_in_flight`] at
//! once. The request slots themselves are the client's
//! ([`crate::api::Limiter`]); this only keeps them busy.

use super::error::{RunError, UnitError};
use super::report::{ExportKey, FailedUnit};
use super::setup::Shared;
use super::{JobEvent, Passes};
use crate::plan::{self, Unit};
use crate::spec::Spec;
use crate::state::UnitState;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// A unit to run and its checkpoint, if it has one.
pub(crate) type Todo = (Arc<Unit>, Option<UnitState>);

/// Parses `K/N`.
pub fn parse_shard(s: &str) -> Result<(usize, usize), RunError> {
    let (k, n) = s.split_once('/').ok_or_else(|| RunError::Shard(s.into()))?;
    match (k.trim().parse::<usize>(), n.trim().parse::<usize>()) {
        (Ok(k), Ok(n)) if k >= 1 && k <= n => Ok((k, n)),
        _ => Err(RunError::Shard(s.into())),
    }
}

/// Units paged at once: a quarter again the request slots, so that while
/// some units commit or start, others have a request ready for every slot
/// (decoding happens as pages arrive, off the unit's loop); each unit in
/// flight holds pages and open files, so not more.
pub fn units_in_flight(spec: &Spec) -> usize {
    spec.source.max_concurrency + spec.source.max_concurrency.div_ceil(4)
}

impl Passes<'_> {
    /// This pass's units not yet done, largest first; counts newly planned
    /// units into the tallies and removes files of uncommitted work.
    pub(super) async fn plan_pass(&mut self) -> Result<Vec<Todo>, RunError> {
        let spec = &self.shared.spec;
        let mut units = plan::plan(spec, &self.job.windows, self.job.cutting(spec), &self.pending);
        if let Some((k, n)) = self.opts.shard {
            units = plan::shard(units, k, n);
        }
        let state = &self.shared.state;
        // This run's finished units are folded into a manifest as it
        // reads them: a run holds the lease of exactly these units.
        let ours: HashSet<&str> = units.iter().map(|u| u.id.as_str()).collect();
        let states = state.load_units_folding(|id| ours.contains(id)).await?;
        if self.opts.shard.is_none() {
            state.merge_manifests(crate::state::MERGE_IN_RUN_AT).await?;
        }
        if self.out.passes == 1 {
            self.opts.tell(JobEvent::Planned {
                spec,
                windows: &self.job.windows,
                segments: &self.pending,
                units: &units,
                states: &states,
            });
        }
        // Files of uncommitted work belong to units a run started. After
        // its first pass, a run has planned every unit any run started:
        // a segment is recorded before its units start, and the first pass
        // plans every recorded one. So a later pass looks only at units it
        // planned before (one that failed, or was dropped by a reorg repair
        // and planned again), not at those of segments cut since.
        let earlier: Vec<Unit>;
        let sweep: &[Unit] = if self.out.passes <= 1 {
            &units
        } else {
            earlier = units.iter().filter(|u| self.seen.contains(&u.id)).cloned().collect();
            &earlier
        };
        let removed = state.remove_orphans(sweep, &states, &spec.tables()).await?;
        if removed > 0 {
            tracing::info!(files = removed, "removed files of uncommitted work left by an interrupted run");
        }
        self.out.orphans_removed += removed;
        let todo = self.select(units, &states);
        for (u, _) in &todo {
            if let Some(p) = self.shared.progress.get(u.export) {
                p.units_total.fetch_add(1, Ordering::Relaxed);
                p.work_total.fetch_add(u.estimated_requests, Ordering::Relaxed);
            }
        }
        Ok(todo)
    }

    /// The units not yet done, largest first (what is left of them, by the
    /// estimate): the job ends on its shortest units, so the request slots
    /// stay busy until close to the end.
    fn select(&mut self, units: Vec<Unit>, states: &HashMap<String, UnitState>) -> Vec<Todo> {
        let mut todo = Vec::new();
        for u in units {
            let st = states.get(&u.id).cloned();
            let done = st.as_ref().is_some_and(|s| s.done);
            if self.seen.insert(u.id.clone()) {
                self.shared.tally(ExportKey::of(&u), |t| {
                    t.units += 1;
                    t.rows_before += st.as_ref().map_or(0, |s| s.rows);
                    t.units_done += u64::from(done);
                });
                self.out.units_already_done += usize::from(done);
            }
            if !done {
                todo.push((Arc::new(u), st));
            }
        }
        todo.sort_by_key(|(u, st)| std::cmp::Reverse(u.estimated_requests.saturating_sub(st.as_ref().map_or(0, |s| s.pages))));
        todo
    }
}

/// Pages `todo` units concurrently; returns the ones that failed.
pub(crate) async fn execute(shared: &Arc<Shared>, todo: Vec<Todo>) -> Vec<FailedUnit> {
    let sem = Arc::new(tokio::sync::Semaphore::new(units_in_flight(&shared.spec)));
    let mut set = tokio::task::JoinSet::new();
    let mut running: HashMap<tokio::task::Id, Arc<Unit>> = HashMap::new();
    for (unit, st) in todo {
        let Ok(permit) = sem.clone().acquire_owned().await else {
            break;
        };
        if shared.stopping() {
            break;
        }
        let task_shared = shared.clone();
        let task_unit = unit.clone();
        let handle = set.spawn(async move {
            let _permit = permit;
            super::run_unit::run(&task_shared, &task_unit, st).await
        });
        running.insert(handle.id(), unit);
    }
    let mut failed = Vec::new();
    while let Some(joined) = set.join_next_with_id().await {
        let (id, result) = match joined {
            Ok((id, r)) => (id, r.map_err(|e| Box::new(e) as Box<dyn std::error::Error>)),
            Err(e) => (e.id(), Err(format!("the unit's task failed: {e}").into())),
        };
        let Some(unit) = running.remove(&id) else {
            continue;
        };
        match result {
            Ok(()) => {}
            Err(e) if e.downcast_ref::<UnitError>().is_some_and(UnitError::said_once) => {}
            Err(e) => {
                tracing::error!(unit = %unit.id, chain = %unit.chain, dataset = %unit.dataset, range = %unit.range, "unit failed: {e}");
                failed.push(FailedUnit::of(&unit, &*e));
            }
        }
    }
    failed
}
