//! The parts of the run report ([`crate::job::RunSummary`]) a scheduler reads
//! without inferring: the run's outcome ([`RunStatus`]), figures keyed by
//! `{export, dataset, chain}` objects ([`Keyed`]), and what each run
//! covered ([`CoveredSegment`]: aligned periods and incremental segments).
//!
//! The report's schema is versioned ([`REPORT_VERSION`], the document's
//! `version`): fields are added, never renamed or reshaped; a change that
//! would break a reader bumps the version. Reports before `version` was
//! written are version 1.

use super::report::ExportKey;
use crate::plan::Segment;
use crate::spec::Spec;
use crate::vocab::Chain;
use crate::vocab::Dataset;
use crate::vocab::window::Resolved;
use serde::Serialize;

/// Version of the run report's schema (its `version`).
/// 2: `version`, `status`, `run_id`, `tallies`, `segments`, `incremental`,
/// and `runs/latest.json`.
pub const REPORT_VERSION: u32 = 2;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every unit it ran is done (exit 0).
    Succeeded,
    /// Nothing was left to export: every unit was done already, no new
    /// block was confirmed, the period was exported (exit 0).
    NothingToDo,
    /// Units failed, or the job stopped on an error (exit 1).
    Failed,
    /// A signal stopped it; committed work is kept (exit 130/143).
    Interrupted,
}

impl RunStatus {
    /// Every status, in the order the metrics list them.
    pub const ALL: [RunStatus; 4] = [
        RunStatus::Succeeded,
        RunStatus::NothingToDo,
        RunStatus::Failed,
        RunStatus::Interrupted,
    ];

    /// The status as the report spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Succeeded => "succeeded",
            RunStatus::NothingToDo => "nothing_to_do",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }

    /// The status of a run: interrupted before failed before the rest;
    /// `ran` is whether it ran any unit or repaired a reorg.
    pub(crate) fn of(interrupted: bool, failed: bool, ran: bool) -> RunStatus {
        match (interrupted, failed, ran) {
            (true, _, _) => RunStatus::Interrupted,
            (_, true, _) => RunStatus::Failed,
            (_, _, true) => RunStatus::Succeeded,
            _ => RunStatus::NothingToDo,
        }
    }
}

/// A value of one export on one chain, its key spelled out.
#[derive(Debug, Clone, Serialize)]
pub struct Keyed<T> {
    /// Export index in the spec.
    pub export: usize,
    /// Its dataset.
    pub dataset: Dataset,
    /// The chain.
    pub chain: Chain,
    /// The figures.
    #[serde(flatten)]
    pub value: T,
}

impl<T> Keyed<T> {
    /// `value` under `key`.
    pub fn new(key: &ExportKey, value: T) -> Keyed<T> {
        Keyed {
            export: key.export,
            dataset: key.dataset,
            chain: key.chain,
            value,
        }
    }
}

/// What became of a segment a run covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SegmentStatus {
    /// This run finished it.
    Exported,
    /// An earlier run had exported it (an aligned period run again).
    AlreadyExported,
    /// Recorded and not finished when the run ended (the next run finishes it).
    Unfinished,
}

/// An aligned period or an incremental segment, and what the run did with it.
#[derive(Debug, Clone, Serialize)]
pub struct CoveredSegment {
    /// Export index.
    pub export: usize,
    /// Its dataset.
    pub dataset: Option<Dataset>,
    /// Incremental segments: the chain; aligned periods cover every chain of the export.
    pub chain: Option<Chain>,
    /// `aligned` or `incremental`.
    pub kind: &'static str,
    /// The range, as numbers (`{"kind": "time", "start", "end"}` in unix
    /// seconds, end excluded, or `{"kind": "blocks", "first", "last"}`).
    pub window: Resolved,
    /// The range as text (`2025-05-31T00:00:00Z..2025-06-01T00:00:00Z`, `100..200`).
    pub range: String,
    /// What the run did with it.
    pub status: SegmentStatus,
}

impl CoveredSegment {
    /// `seg` of `spec`, with `status`.
    pub fn of(spec: &Spec, seg: &Segment, status: SegmentStatus) -> CoveredSegment {
        CoveredSegment {
            export: seg.export,
            dataset: spec.exports.get(seg.export).map(|e| e.dataset),
            chain: seg.chain,
            kind: if seg.chain.is_some() { "incremental" } else { "aligned" },
            window: seg.window,
            range: seg.window.to_string(),
            status,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interrupted_wins_then_failed_then_work_done() {
        assert_eq!(RunStatus::of(true, true, true), RunStatus::Interrupted);
        assert_eq!(RunStatus::of(false, true, false), RunStatus::Failed);
        assert_eq!(RunStatus::of(false, false, true), RunStatus::Succeeded);
        assert_eq!(RunStatus::of(false, false, false), RunStatus::NothingToDo);
        let json = serde_json::to_string(&RunStatus::NothingToDo).unwrap();
        assert_eq!(json, "\"nothing_to_do\"");
    }
}
