//! Live counters of a run, one set per export: atomics the unit tasks
//! update as pages arrive and units finish, read by whoever renders them
//! (the command line's bars and progress lines).

use crate::api::Stats;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

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
    /// Estimated requests of this run's units (the bar's length).
    pub work_total: AtomicU64,
    /// Work done, in estimated requests.
    pub work_done: AtomicU64,
    /// Request counters of this export, one per chain.
    pub stats: Vec<Arc<Stats>>,
}

impl ExportProgress {
    /// A request counter summed over the export's chains.
    pub fn sum(&self, f: impl Fn(&Stats) -> &AtomicU64) -> u64 {
        self.stats.iter().map(|s| Stats::get(f(s))).sum()
    }

    /// Records a fetched page of `rows` rows.
    pub fn page(&self, rows: u64) {
        self.rows.fetch_add(rows, Ordering::Relaxed);
        self.work_done.fetch_add(1, Ordering::Relaxed);
    }

    /// Records a finished unit that had `estimate` requests and took `pages`.
    pub fn unit_done(&self, estimate: u64, pages: u64) {
        self.units_done.fetch_add(1, Ordering::Relaxed);
        // Credit the estimate's remainder so the bar reaches its end.
        self.work_done.fetch_add(estimate.saturating_sub(pages), Ordering::Relaxed);
    }
}
