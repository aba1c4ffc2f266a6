//! Running a pass's units (planned by [`super::pass`]: this shard's share
//! with `--shard K/N`, a deterministic split by unit id, largest first), at
//! most [`units_in_flight`] at once. The request slots themselves are the
//! client's ([`crate::api::Limiter`]); this only keeps them busy, and tells
//! the client once every unit has started, from when a free slot goes to
//! the unit with the most requests left. Once the service refuses the key
//! no unit starts; a unit whose chain's endpoint it refused (a 403) is not
//! started either: both stay *not started*, said once for the run.

use super::report::FailedUnit;
use super::setup::{Shared, units_in_flight};
use crate::job::error::{RunError, UnitError};
use crate::plan::Unit;
use crate::state::UnitState;
use std::collections::HashMap;
use std::sync::Arc;

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

/// Pages `todo` units concurrently; returns the ones that failed.
pub(crate) async fn execute(shared: &Arc<Shared>, todo: Vec<Todo>) -> Vec<FailedUnit> {
    let sem = Arc::new(tokio::sync::Semaphore::new(units_in_flight(&shared.spec)));
    let mut set = tokio::task::JoinSet::new();
    let mut running: HashMap<tokio::task::Id, Arc<Unit>> = HashMap::new();
    shared.client.order_by_work_left(false);
    for (unit, st) in todo {
        let Ok(permit) = sem.clone().acquire_owned().await else {
            break;
        };
        if shared.stopping() {
            break;
        }
        if shared.client.refused(crate::fetch::resource(&unit)) {
            continue;
        }
        let task_shared = shared.clone();
        let task_unit = unit.clone();
        let handle = set.spawn(async move {
            let _permit = permit;
            super::run_unit::run(&task_shared, &task_unit, st).await
        });
        running.insert(handle.id(), unit);
    }
    // Every unit has started: the last ones should end together.
    shared.client.order_by_work_left(true);
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
                shared.tally(super::counters::ExportKey::of(&unit), |t| t.units_failed += 1);
                failed.push(FailedUnit::of(&unit, &*e));
            }
        }
    }
    failed
}
