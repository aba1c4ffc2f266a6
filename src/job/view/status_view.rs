//! `chainetl status`'s document ([`StatusView`]): the one struct that
//! `status --format json` serialises and `status`'s text reads, built from
//! the job's state ([`super::inspect::JobStatus`]) without I/O.
//!
//! # Invariants
//!
//! - **The JSON is a contract.** Its fields (`job`, `state`, `units`,
//!   `units_done`, `rows`, `periods_exported`, `marks`, `interrupted`,
//!   `files`, `bytes`, `tables`, and `refused` while the newest run met a
//!   refusal) are added to, never renamed or reshaped. What only the text
//!   shows is `#[serde(skip)]`, so it never changes the document.
//! - **Files and bytes are those readers see**, a table and in all
//!   ([`crate::state::LiveTable`], as `report` and `verify` count them),
//!   never the checkpoints' (what units wrote, before compaction or a
//!   rewrite replaced it).
//! - **Instants stay whole.** Times are kept as the state recorded them
//!   (RFC 3339, to the nanosecond); the text shows them to the second.
//! - The lines of the other views that say the same thing are these
//!   ([`InterruptedLine`], [`PeriodLine`]): the report names an
//!   interrupted operation as `status` does.

use super::inspect::JobStatus;
use crate::job::run::report::ExportKey;
use crate::job::run::report_format::RefusedLine;
use crate::spec::Spec;
use crate::state::{Interrupted, LiveTable};
use crate::vocab::{Chain, Dataset};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What `status` shows of a job.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusView {
    /// Job name.
    pub job: String,
    /// `not_started`, `in_progress`, `complete` or `interrupted`
    /// ([`JobStatus::state`]).
    pub state: String,
    /// Units of the frozen windows.
    pub units: usize,
    /// Of those, units done.
    pub units_done: usize,
    /// Rows committed.
    pub rows: u64,
    /// Files readers see, over every table (written by `status` but while
    /// a conversion or a rewrite is interrupted, when files are in flight;
    /// absent from documents of builds before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<u64>,
    /// Their bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Files and bytes readers see, a table of the spec (none before the
    /// first run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<LiveTable>,
    /// Aligned periods exported completely.
    pub periods_exported: Vec<PeriodLine>,
    /// High-water marks of incremental exports.
    pub marks: Vec<MarkLine>,
    /// Operations begun and not finished.
    pub interrupted: Vec<InterruptedLine>,
    /// What the service refused in the newest run (the key, or a chain's
    /// endpoint), once each, while units are left; absent otherwise. The
    /// units it left are not started (or resume), never failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<RefusedLine>,
    /// The columns of each table whose exports leave some out (`columns`,
    /// `exclude_columns`); absent where every table holds all its columns.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub columns: BTreeMap<String, Vec<String>>,
    /// The REST catalog the tables are committed through and read from
    /// (`[output.catalog]`); absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog: Option<CatalogLine>,
    /// Text only: the output's location, as the spec names it.
    #[serde(skip)]
    pub output: String,
    /// Text only: one line an export and chain, in [`ExportKey`] order.
    #[serde(skip)]
    pub exports: Vec<ExportLine>,
    /// Text only: whether the spec has aligned or incremental exports
    /// (which leave periods and marks rather than units).
    #[serde(skip)]
    pub per_run: bool,
}

/// The REST catalog of a job's tables.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogLine {
    /// Its URI.
    pub uri: String,
    /// Each table's identifier there (`chain.blocks`), by table.
    pub tables: BTreeMap<String, String>,
}

impl CatalogLine {
    /// The catalog of `spec`'s tables, if it names one.
    pub fn of(spec: &Spec) -> Option<CatalogLine> {
        spec.output.catalog.as_ref().map(|c| CatalogLine {
            uri: c.uri.clone(),
            tables: spec.catalog_tables(),
        })
    }

    /// In words: `tables in the REST catalog at <uri>: chain.blocks (blocks/), …`.
    pub fn text(&self) -> String {
        let tables: Vec<String> = self.tables.iter().map(|(t, id)| format!("{id} ({t}/)")).collect();
        format!("tables in the REST catalog at {}: {}", self.uri, tables.join(", "))
    }
}

/// One export on one chain: its units of the frozen window.
#[derive(Debug, Clone)]
pub struct ExportLine {
    /// The export and chain.
    pub key: ExportKey,
    /// Units.
    pub units: u64,
    /// Units done.
    pub units_done: u64,
    /// Rows committed.
    pub rows: u64,
    /// The newest checkpoint's time (RFC 3339); None: no unit begun.
    pub last_commit: Option<String>,
}

/// An aligned period exported completely.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeriodLine {
    /// Export index.
    pub export: usize,
    /// The period (`2025-05-31T00:00:00Z..2025-06-01T00:00:00Z`).
    pub window: String,
}

/// Where an incremental export stands on a chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MarkLine {
    /// Export index.
    pub export: usize,
    /// Chain.
    pub chain: Chain,
    /// First block (or day, as unix seconds) not exported yet.
    pub next: u64,
    /// Reorgs repaired so far.
    pub reorgs: u64,
    /// Text only: a reorg repair is unfinished.
    #[serde(skip)]
    pub repairing: bool,
    /// Text only: the mark counts days (portfolios), not blocks.
    #[serde(skip)]
    pub by_day: bool,
}

/// An operation begun and not finished, in words ([`Interrupted`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterruptedLine {
    /// A word for scripts (`compaction_swap`, `compaction`, `repair`,
    /// `rewrite`, `conversion`, `fresh`).
    pub kind: String,
    /// Where: a partition, or the job.
    pub at: String,
    /// What was interrupted.
    pub what: String,
    /// What readers see until it ends.
    pub readers: String,
    /// What finishes it.
    pub finish: String,
}

impl From<&Interrupted> for InterruptedLine {
    fn from(op: &Interrupted) -> InterruptedLine {
        InterruptedLine {
            kind: op.kind.name().into(),
            at: op.at.clone(),
            what: op.what.into(),
            readers: op.readers.into(),
            finish: op.finish.into(),
        }
    }
}

/// `status`'s view of the job `spec` names, from what [`super::inspect::status`] read.
pub fn status_view(spec: &Spec, status: &JobStatus) -> StatusView {
    let mut lines: BTreeMap<ExportKey, ExportLine> = BTreeMap::new();
    for u in &status.units {
        let key = ExportKey::of(u);
        let line = lines.entry(key).or_insert_with(|| ExportLine {
            key,
            units: 0,
            units_done: 0,
            rows: 0,
            last_commit: None,
        });
        line.units += 1;
        if let Some(st) = status.states.get(&u.id) {
            line.rows += st.rows;
            line.units_done += u64::from(st.done);
            // RFC 3339 in UTC throughout: the text's order is the time's.
            if !st.updated_at.is_empty() && line.last_commit.as_ref().is_none_or(|l| st.updated_at > *l) {
                line.last_commit = Some(st.updated_at.clone());
            }
        }
    }
    let exports: Vec<ExportLine> = lines.into_values().collect();
    // Part way between two formats or layouts the files are in flight:
    // no figure rather than a wrong one.
    let changing = status.interrupted.iter().any(|op| op.kind.changes_output());
    let (files, bytes) = LiveTable::total(&status.tables);
    let (files, bytes) = if changing { (None, None) } else { (Some(files), Some(bytes)) };
    StatusView {
        job: spec.name.clone(),
        state: status.state().into(),
        units: status.units.len(),
        units_done: exports.iter().map(|e| e.units_done as usize).sum(),
        rows: status.states.values().map(|st| st.rows).sum(),
        files,
        bytes,
        tables: status.tables.clone(),
        periods_exported: status
            .periods
            .iter()
            .map(|p| PeriodLine {
                export: p.export,
                window: p.window.to_string(),
            })
            .collect(),
        marks: status
            .marks
            .iter()
            .map(|m| MarkLine {
                export: m.export,
                chain: m.chain,
                next: m.next,
                reorgs: m.reorgs,
                repairing: m.repair_from.is_some(),
                by_day: spec.exports.get(m.export).is_some_and(|e| e.dataset == Dataset::Portfolio),
            })
            .collect(),
        interrupted: status.interrupted.iter().map(InterruptedLine::from).collect(),
        refused: status.refused.clone(),
        columns: spec.selected_columns(),
        catalog: CatalogLine::of(spec),
        output: spec.output.uri.clone(),
        exports,
        per_run: spec.exports.iter().any(|e| e.per_run()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `status --format json` as chainetl 0.2.0 printed it: marks and an
    /// aligned period; an interrupted compaction swap.
    const DOCUMENTS: [&str; 2] = [
        include_str!("../../../tests/fixtures/views/status-marks-periods.json"),
        include_str!("../../../tests/fixtures/views/status-interrupted.json"),
    ];

    #[test]
    fn a_0_2_0_status_document_reads_into_the_struct_and_back_byte_for_byte() {
        for doc in DOCUMENTS {
            let typed: StatusView = serde_json::from_str(doc).unwrap();
            // As `status --format json` prints it (sorted keys, pretty).
            let back = serde_json::to_string_pretty(&serde_json::to_value(&typed).unwrap()).unwrap();
            assert_eq!(back, doc.trim_end());
        }
    }
}
