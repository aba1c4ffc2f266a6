//! Segments: aligned periods (`align = "day"`/`"hour"`: the current period
//! of each aligned export, recorded in `segments/` before its units start)
//! and, at the end of every pass, the closing of segments whose units are
//! all done — across shards, so whichever shard finishes last closes it.
//! A closed aligned period is recorded in `periods/` and its unit
//! checkpoints dropped; an incremental segment moves its export's mark
//! ([`super::incremental`]).

use super::Passes;
use super::error::RunError;
use super::incremental::{self, Finished};
use super::report::{ExportKey, FailedUnit};
use super::report_format::SegmentStatus;
use crate::plan::{self, Segment, Unit};
use crate::spec::Export;
use crate::state::UnitState;
use crate::vocab::Chain;
use std::collections::HashMap;

impl Passes<'_> {
    /// Records the current period of every aligned export, unless it is
    /// exported already or pending.
    pub(super) async fn open_periods(&mut self) -> Result<(), RunError> {
        let state = &self.shared.state;
        for e in &self.shared.spec.exports {
            let Some(seg) = plan::aligned_segment(e, self.now) else {
                continue;
            };
            if self.pending.contains(&seg) {
                continue;
            }
            if state.period_done(&seg).await? {
                self.out.covered.push((seg.clone(), SegmentStatus::AlreadyExported));
                tracing::info!(export = e.index, "export[{}]: period {} is already exported", e.index, seg.window);
            } else {
                let s = state.create_segment(&seg).await?;
                if !self.pending.contains(&s) {
                    self.pending.push(s);
                }
            }
        }
        Ok(())
    }

    /// Closes the pending segments whose units are all done.
    pub(super) async fn close_segments(&mut self) -> Result<(), RunError> {
        let states = self.shared.state.load_units().await?;
        let spec = self.shared.spec.clone();
        for seg in self.pending.clone() {
            let Some(e) = spec.exports.get(seg.export) else {
                continue;
            };
            let units = self.segment_units(&seg);
            if !units.iter().all(|u| states.get(&u.id).is_some_and(|s| s.done)) {
                continue;
            }
            if e.incremental.is_some() {
                self.close_incremental(e, &seg, &units, &states).await;
            } else {
                self.close_period(&seg, &units).await?;
            }
        }
        Ok(())
    }

    /// A segment's own units: the plan also holds the fixed exports' units,
    /// whose checkpoints must outlive the segment.
    fn segment_units(&self, seg: &Segment) -> Vec<Unit> {
        let spec = &self.shared.spec;
        plan::plan(spec, &self.job.windows, self.job.cutting(spec), std::slice::from_ref(seg))
            .into_iter()
            .filter(|u| seg.owns(u))
            .collect()
    }

    /// An aligned period done: recorded, its segment and checkpoints dropped.
    async fn close_period(&mut self, seg: &Segment, units: &[Unit]) -> Result<(), RunError> {
        let state = &self.shared.state;
        state.save_period_done(seg).await?;
        state.remove_segment(seg).await?;
        let ids: Vec<String> = units.iter().map(|u| u.id.clone()).collect();
        state.delete_units(&ids).await?;
        self.pending.retain(|s| s != seg);
        self.out.covered.push((seg.clone(), SegmentStatus::Exported));
        Ok(())
    }

    /// An incremental segment done: checked against the chain, the mark
    /// moved past it (or rewound by a reorg). A failure is the export's on
    /// that chain, not the run's.
    async fn close_incremental(&mut self, e: &Export, seg: &Segment, units: &[Unit], states: &HashMap<String, UnitState>) {
        let chain = seg.chain.unwrap_or(Chain::Ethereum);
        let key = ExportKey {
            export: e.index,
            dataset: e.dataset,
            chain,
        };
        let client = self.client_for(key);
        let finished = incremental::finish_segment(&client, &self.shared.state, e, seg, units, states, &mut self.pending).await;
        if let Ok(Some(m)) = self.shared.state.load_mark(e.index, chain).await {
            self.shared.note_mark(key, m.next);
        }
        match finished {
            Ok(Finished::Advanced) => self.out.covered.push((seg.clone(), SegmentStatus::Exported)),
            Ok(Finished::Reorg(r)) => {
                self.last_cut.remove(&(e.index, r.chain));
                self.out.reorgs.push(r);
            }
            Err(err) if err.said_once() => {}
            Err(err) => self.out.failed.push(FailedUnit {
                unit: seg.id(),
                chain,
                dataset: e.dataset,
                range: seg.window.to_string(),
                error: err.to_string(),
            }),
        }
    }
}
