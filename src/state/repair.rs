//! The record of a repair in progress (`repair.json`): the units a
//! `verify --repair` (or a run that found checkpoints gone under
//! compacted rows) exports again, from before any of their rows leaves
//! what readers see until every one of them is exported again — done,
//! and published where the format publishes.
//!
//! Between the two the units' rows are missing (or, where the format
//! publishes, still in the files they replace), and nothing else says
//! so: a unit restarted has no checkpoint, or one of nothing done, which
//! looks like work not yet begun. So `verify` and `status` name the
//! repair while the record stands, and `verify --repair` or the next run
//! finishes it (exporting the units); the run that finds them all done
//! deletes the record.
//!
//! `{version, units, started_at}`; written by the holder of the whole
//! job's lease (atomic replace), each time with the units of the repair
//! in progress kept; gone with the rest of the state on `--fresh`.

use super::docs::Versioned;
use super::{JobState, STATE_VERSION, StateError, StateStore, UnitState};
use crate::spec::Spec;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// A repair in progress (`repair.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repair {
    /// The state format version.
    pub version: u32,
    /// The units being exported again.
    pub units: Vec<String>,
    /// When the repair began (RFC 3339).
    pub started_at: String,
}

impl Versioned for Repair {
    fn version(&self) -> u32 {
        self.version
    }
    const FIX: &'static str = "delete it and run `chainetl verify SPEC` (it names what is still missing, and \
         `--repair` exports it again), or re-run with --fresh to start the job over (this deletes its output)";
}

impl Repair {
    /// The units of the repair not yet exported again, as `states` say:
    /// not done, or (`publishes`) not yet published, or still to replace
    /// the files they had; or with no checkpoint while the job still plans
    /// them (`planned`: restarted, not begun). A unit with no checkpoint
    /// the job no longer plans is finished: its period or segment closed,
    /// which drops the checkpoints of its finished units.
    pub fn pending<'a>(&'a self, states: &HashMap<String, UnitState>, publishes: bool, planned: &HashSet<String>) -> Vec<&'a str> {
        let finished = |s: &UnitState| s.done && (!publishes || s.published) && s.replaces.is_empty() && s.together.is_empty();
        self.units
            .iter()
            .filter(|u| match states.get(u.as_str()) {
                Some(s) => !finished(s),
                None => planned.contains(u.as_str()),
            })
            .map(String::as_str)
            .collect()
    }
}

impl StateStore {
    fn repair_path(&self) -> String {
        format!("{}/repair.json", self.dir)
    }

    /// The repair in progress, if any.
    pub async fn load_repair(&self) -> Result<Option<Repair>, StateError> {
        self.read_doc(&self.repair_path()).await
    }

    /// Records `units` as being exported again, beside those of a repair
    /// in progress: before any of their rows leaves what readers see.
    pub async fn begin_repair(&self, units: &[String]) -> Result<(), StateError> {
        if units.is_empty() {
            return Ok(());
        }
        let mut repair = self.load_repair().await?.unwrap_or_else(|| Repair {
            version: STATE_VERSION,
            units: Vec::new(),
            started_at: chrono::Utc::now().to_rfc3339(),
        });
        let before = repair.units.len();
        for u in units {
            if !repair.units.contains(u) {
                repair.units.push(u.clone());
            }
        }
        if repair.units.len() == before && before > 0 {
            return Ok(());
        }
        repair.version = STATE_VERSION;
        self.write_doc(&self.repair_path(), &repair).await
    }

    /// The repair in progress as an operation begun and not finished, if
    /// any of its units is still to export again.
    pub async fn interrupted_repair(&self, spec: &Spec, job: &JobState) -> Result<Option<super::Interrupted>, StateError> {
        let Some(repair) = self.load_repair().await? else {
            return Ok(None);
        };
        let planned = self.planned_units(spec, job).await?;
        let pending = repair.pending(&self.load_units().await?, self.publishes(), &planned).len();
        Ok((pending > 0).then(|| super::Interrupted::repair(pending)))
    }

    /// Ends the repair in progress once every unit of it is exported
    /// again; whether one ended.
    pub async fn end_repair(&self, spec: &Spec, job: &JobState) -> Result<bool, StateError> {
        let Some(repair) = self.load_repair().await? else {
            return Ok(false);
        };
        let planned = self.planned_units(spec, job).await?;
        if !repair.pending(&self.load_units().await?, self.publishes(), &planned).is_empty() {
            return Ok(false);
        }
        self.sink.delete(&self.repair_path()).await?;
        Ok(true)
    }

    /// The units `spec`'s job plans now (with its pending segments).
    async fn planned_units(&self, spec: &Spec, job: &JobState) -> Result<HashSet<String>, StateError> {
        let segments = self.load_segments().await?;
        Ok(crate::plan::plan(spec, &job.windows, job.cutting(spec), &segments)
            .into_iter()
            .map(|u| u.id)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(done: bool, published: bool, replaces: &[&str]) -> UnitState {
        UnitState {
            done,
            published,
            replaces: replaces.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_unit_is_repaired_once_done_and_where_the_format_publishes_published_with_nothing_left_to_replace() {
        let repair = Repair {
            version: STATE_VERSION,
            units: ["a", "b", "c", "d"].map(String::from).to_vec(),
            started_at: String::new(),
        };
        let states: HashMap<String, UnitState> = [
            ("a".to_string(), state(true, false, &[])),
            ("b".to_string(), state(true, true, &["events/x.parquet"])),
            ("c".to_string(), state(false, false, &[])),
        ]
        .into();
        // d has no checkpoint: restarted, not exported again yet while
        // the job plans it; once its period closed, done.
        let planned: HashSet<String> = ["a", "b", "c", "d"].map(String::from).into();
        assert_eq!(repair.pending(&states, false, &planned), ["b", "c", "d"]);
        assert_eq!(repair.pending(&states, true, &planned), ["a", "b", "c", "d"]);
        assert_eq!(repair.pending(&states, false, &HashSet::new()), ["b", "c"]);
        let states: HashMap<String, UnitState> = ["a", "b", "c", "d"].map(|u| (u.to_string(), state(true, true, &[]))).into();
        assert!(repair.pending(&states, true, &planned).is_empty());
    }
}
