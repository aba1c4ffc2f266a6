//! Live counters of a run, one set per export: atomics the unit tasks
//! update as pages arrive and units finish, read by whoever renders them
//! (the command line's bars and progress lines); and the figures a run
//! keeps of each export on each chain ([`ExportKey`], [`Tally`],
//! [`MarkProgress`]), which the run's shared state holds and the report
//! and the live view read.
//!
//! The completed fraction ([`ExportProgress::fraction`]) counts units: a
//! finished unit is one whole step, a unit in flight counts by its pages
//! against its request estimate but never past [`IN_FLIGHT_CAP`] of a
//! step. So 100% means every unit of the run is done, however wrong the
//! estimates were, and the figure never goes back.

use crate::api::Stats;
use crate::plan::Unit;
use crate::vocab::{Chain, Dataset};
use serde::{Serialize, Serializer};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A unit's step, in the fixed-point parts the counters use.
pub const STEP: u64 = 1_000;
/// The most a unit in flight counts for, in parts of [`STEP`].
pub const IN_FLIGHT_CAP: u64 = 900;

/// Counters of one export.
#[derive(Debug, Default)]
pub struct ExportProgress {
    /// Label, e.g. `export[0] events (ethereum, base)`.
    pub label: String,
    /// Units to do in this run.
    pub units_total: AtomicU64,
    /// Units finished in this run.
    pub units_done: AtomicU64,
    /// Rows written in this run.
    pub rows: AtomicU64,
    /// Estimated requests of this run's units.
    pub work_total: AtomicU64,
    /// Work done, in estimated requests.
    pub work_done: AtomicU64,
    /// Credit of the units in flight, in parts of [`STEP`].
    pub in_flight: AtomicU64,
    /// Request counters of this export, one per chain.
    pub stats: Vec<Arc<Stats>>,
}

/// What a unit in flight counts for after `pages` of its `estimate`.
pub fn unit_credit(pages: u64, estimate: u64) -> u64 {
    (pages.saturating_mul(STEP) / estimate.max(1)).min(IN_FLIGHT_CAP)
}

impl ExportProgress {
    /// A request counter summed over the export's chains.
    pub fn sum(&self, f: impl Fn(&Stats) -> &AtomicU64) -> u64 {
        self.stats.iter().map(|s| Stats::get(f(s))).sum()
    }

    /// Records a fetched page of `rows` rows; a unit in flight moves from
    /// `credit` to `new_credit` (see [`unit_credit`]).
    pub fn page(&self, rows: u64, credit: u64, new_credit: u64) {
        self.rows.fetch_add(rows, Ordering::Relaxed);
        self.work_done.fetch_add(1, Ordering::Relaxed);
        self.in_flight.fetch_add(new_credit.saturating_sub(credit), Ordering::Relaxed);
    }

    /// Records a finished unit that had `estimate` requests, took `pages`
    /// and was credited `credit` while in flight.
    pub fn unit_done(&self, estimate: u64, pages: u64, credit: u64) {
        self.units_done.fetch_add(1, Ordering::Relaxed);
        self.work_done.fetch_add(estimate.saturating_sub(pages), Ordering::Relaxed);
        self.release(credit);
    }

    /// Takes back the in-flight credit of a unit that failed.
    pub fn release(&self, credit: u64) {
        let _ = self
            .in_flight
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| Some(v.saturating_sub(credit)));
    }

    /// `(done, total)` in parts of [`STEP`]: finished units, plus the
    /// credit of those in flight; `done < total` until every unit is done.
    pub fn fraction(&self) -> (u64, u64) {
        let total = self.units_total.load(Ordering::Relaxed);
        let done = self.units_done.load(Ordering::Relaxed).min(total);
        let flight = self.in_flight.load(Ordering::Relaxed);
        let parts = done * STEP + flight.min((total - done) * IN_FLIGHT_CAP);
        (parts, total * STEP)
    }

    /// Percent of the run's units done (0 to 100; 100 only when all are).
    pub fn percent(&self) -> u64 {
        match self.fraction() {
            (_, 0) => 100,
            (done, total) if done >= total => 100,
            (done, total) => (done * 100 / total).min(99),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_counts_units_and_reaches_100_only_when_all_are_done() {
        let p = ExportProgress::default();
        p.units_total.store(4, Ordering::Relaxed);
        assert_eq!(p.percent(), 0);
        // Far more pages than estimated: a unit in flight stays below a step.
        let mut credit = 0;
        for page in 1..=50 {
            let c = unit_credit(page, 2);
            p.page(10, credit, c);
            credit = c;
        }
        assert_eq!(p.percent(), 22);
        p.unit_done(2, 50, credit);
        assert_eq!(p.percent(), 25);
        p.unit_done(1, 1, 0);
        p.unit_done(1, 1, 0);
        assert_eq!(p.percent(), 75);
        p.page(1, 0, unit_credit(1, 1));
        assert_eq!(p.percent(), 97);
        p.release(unit_credit(1, 1));
        assert_eq!(p.percent(), 75);
        p.unit_done(1, 1, 0);
        assert_eq!((p.percent(), p.rows.load(Ordering::Relaxed)), (100, 501));
    }
}

/// One export on one chain: what a tally counts. Ordered by its name, as
/// tables and reports list it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExportKey {
    /// Export index in the spec.
    pub export: usize,
    /// Its dataset.
    pub dataset: Dataset,
    /// The chain.
    pub chain: Chain,
}

impl ExportKey {
    /// The key of a unit's export and chain.
    pub fn of(unit: &Unit) -> ExportKey {
        ExportKey {
            export: unit.export,
            dataset: unit.dataset,
            chain: unit.chain,
        }
    }
}

/// `e<idx> <dataset> <chain>`: the key's name in reports and tables.
impl fmt::Display for ExportKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&format!("e{} {} {}", self.export, self.dataset, self.chain))
    }
}

impl Ord for ExportKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.to_string().cmp(&other.to_string())
    }
}

impl PartialOrd for ExportKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for ExportKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Figures of one export on one chain.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Tally {
    /// Units in the plan (this shard).
    pub units: u64,
    /// Units complete.
    pub units_done: u64,
    /// Units (and incremental marks or segments) that failed in this run.
    pub units_failed: u64,
    /// Rows committed in this run.
    pub rows: u64,
    /// Files committed in this run.
    pub files: u64,
    /// Bytes committed in this run.
    pub bytes: u64,
    /// Rows committed by earlier runs.
    pub rows_before: u64,
    /// Requests sent (every attempt).
    pub requests: u64,
    /// Retried attempts.
    pub retries: u64,
    /// 429 answers.
    pub throttled: u64,
    /// 5xx answers.
    pub server_errors: u64,
    /// Reorgs detected and repaired.
    pub reorgs: u64,
    /// Decoding exports: logs that fit no decoded event (left out of the
    /// decoded tables; kept in the raw table with `also_raw`).
    pub undecodable: u64,
    /// Decoding exports: of the undecodable logs, those that carried a
    /// decoded event's topic0 but whose topics and data fit none of its
    /// tables.
    pub layout_mismatched: u64,
    /// Decoding exports: why those logs did not fit, and a signature (or
    /// preset) that fits them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_hint: Option<String>,
    /// Decoding exports: wide integers too large for `_decimal38` (null there).
    pub decimal38_nulls: u64,
    /// Decoding exports: `string` values that were not UTF-8 (written as hex).
    pub invalid_utf8: u64,
    /// Seconds from the start of the run to this export's last commit.
    pub elapsed_secs: f64,
    /// Rows per second over that time.
    pub rows_per_sec: f64,
}

/// Where an incremental export stands on a chain during a run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MarkProgress {
    /// First block (or day, as unix seconds) not exported, when the run
    /// first looked.
    pub from: u64,
    /// The same, now.
    pub next: u64,
    /// Newest block the service reported at the last measure.
    pub head: Option<u64>,
    /// The head less the chain's confirmations.
    pub confirmed: Option<u64>,
    /// Confirmed blocks not exported yet.
    pub lag_blocks: Option<u64>,
    /// Seconds between the last exported block (or day) and the confirmed
    /// head (or the end of yesterday).
    pub lag_seconds: Option<f64>,
}
