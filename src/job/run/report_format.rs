//! The parts of the run report ([`crate::job::RunSummary`]) a scheduler reads
//! without inferring: the run's outcome ([`RunStatus`]), figures keyed by
//! `{export, dataset, chain}` objects ([`Keyed`]), and what each run
//! covered ([`CoveredSegment`]: aligned periods and incremental segments).
//!
//! The report's schema is versioned ([`REPORT_VERSION`], the document's
//! `version`): fields are added, never renamed or reshaped; a change that
//! would break a reader bumps the version. Reports before `version` was
//! written are version 1.

use super::counters::ExportKey;
use crate::api::Refusal;
use crate::plan::Segment;
use crate::spec::Spec;
use crate::vocab::Chain;
use crate::vocab::Dataset;
use crate::vocab::window::Resolved;
use serde::{Deserialize, Serialize};

/// Version of the run report's schema (its `version`).
/// 2: `version`, `status`, `run_id`, `tallies`, `segments`, `incremental`,
/// and `runs/latest.json`.
pub const REPORT_VERSION: u32 = 2;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every unit it ran is done, or it changed the output from its files
    /// (a conversion or a rewrite: the report's `conversion`) (exit 0).
    Succeeded,
    /// Nothing was left to export: every unit was done already, no new
    /// block was confirmed, the period was exported; and the output was not
    /// converted or rewritten (exit 0).
    NothingToDo,
    /// Units failed, or the job stopped on an error (exit 1; 2 when the
    /// service refused the key or a chain's endpoint: `refused`).
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
    /// `ran` is whether it ran any unit, repaired a reorg or changed the
    /// output.
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

/// What the service refused, said once for the run, not once a unit (the
/// run report's `refused[]`; `status` and `report` show the newest run's):
/// the key (401: the run stopped at once) or one chain's endpoint (403:
/// its requests stopped, the rest of the job ran). The units it left are
/// not failed: those never tried stay not started, those begun resume.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RefusedLine {
    /// 401 (the key) or 403 (a chain's endpoint).
    pub status: u16,
    /// The chain refused (403); None: every chain (401).
    pub chain: Option<String>,
    /// The endpoint refused (403): `blocks`, `events`, `portfolio`, `tokens`.
    pub endpoint: Option<String>,
    /// The variable the key was read from, never the key; None: no key was sent.
    pub variable: Option<String>,
    /// The service's message, secrets masked.
    pub message: String,
    /// Units (of the refused endpoint, for a 403) in the run's plan.
    pub units: u64,
    /// Of those, units not done when the run ended.
    pub units_left: u64,
    /// The line as the run printed it: what was refused, what to check,
    /// what is left.
    pub text: String,
}

impl RefusedLine {
    /// The line of `r`, met by a run of the service at `base_url` (as
    /// shown: any password masked) whose plan held `units`, `units_left`
    /// of them not done, of what `r` covers.
    pub fn of(r: &Refusal, base_url: &str, units: u64, units_left: u64) -> RefusedLine {
        let left = format!("{units_left} of {units} unit{} left to do", if units == 1 { "" } else { "s" });
        let kept = "work already committed is kept, and the next run resumes from it";
        let message = &r.message;
        let text = match (&r.resource, &r.variable) {
            (None, Some(var)) => format!(
                "the service at {base_url} refused the API key in ${var} (HTTP {}: {message}): check that the \
                 variable holds a valid, current key for this service; the run stopped at once, {left}; {kept}",
                r.status
            ),
            (None, None) => format!(
                "the service at {base_url} wants an API key (HTTP {}: {message}): check that source.api_key_env \
                 names a variable holding one; the run stopped at once, {left}; {kept}",
                r.status
            ),
            (Some(res), Some(var)) => format!(
                "the service at {base_url} refused {res} to the API key in ${var} (HTTP {}: {message}): check \
                 that the key's plan includes {res}, or leave {} out of the exports that need it; those requests \
                 stopped at once, {left}, the rest of the job ran; {kept}",
                r.status, res.chain
            ),
            (Some(res), None) => format!(
                "the service at {base_url} refused {res} without an API key (HTTP {}: {message}): check that \
                 source.api_key_env names a variable holding a key whose plan includes it, or leave {} out of \
                 the exports that need it; those requests stopped at once, {left}, the rest of the job ran; {kept}",
                r.status, res.chain
            ),
        };
        RefusedLine {
            status: r.status,
            chain: r.resource.map(|x| x.chain.name().to_string()),
            endpoint: r.resource.map(|x| x.endpoint.name().to_string()),
            variable: r.variable.clone(),
            message: r.message.clone(),
            units,
            units_left,
            text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_one_line_naming_the_variable_once_what_to_check_and_what_is_left() {
        use crate::api::{Endpoint, Resource};
        let mut r = Refusal {
            status: 401,
            resource: None,
            variable: Some("BDS_API_KEY".into()),
            url: "https://h/v2/base/events?window=1..2".into(),
            message: "unauthorized: bad key".into(),
        };
        let key = RefusedLine::of(&r, "https://h", 3528, 3528);
        assert_eq!(key.text.matches("$BDS_API_KEY").count(), 1, "{}", key.text);
        assert!(!key.text.contains('\n'));
        for part in [
            "HTTP 401",
            "unauthorized: bad key",
            "check that",
            "3528 of 3528 units left",
            "committed is kept",
        ] {
            assert!(key.text.contains(part), "{part}: {}", key.text);
        }
        assert_eq!((key.chain.as_deref(), key.endpoint.as_deref()), (None, None));
        r.variable = None;
        assert!(RefusedLine::of(&r, "https://h", 1, 1).text.contains("source.api_key_env"));
        r.status = 403;
        r.resource = Some(Resource {
            chain: Chain::Arbitrum,
            endpoint: Endpoint::Events,
        });
        let res = RefusedLine::of(&r, "https://h", 100, 40);
        assert!(res.text.contains("refused events on arbitrum without an API key"), "{}", res.text);
        assert!(res.text.contains("40 of 100 units left") && res.text.contains("the rest of the job ran"));
        assert_eq!((res.chain.as_deref(), res.endpoint.as_deref()), (Some("arbitrum"), Some("events")));
        // A report that lacks a field still reads.
        let read: RefusedLine = serde_json::from_str(r#"{"status": 401}"#).unwrap();
        assert_eq!((read.status, read.units_left, read.text.as_str()), (401, 0, ""));
    }

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
