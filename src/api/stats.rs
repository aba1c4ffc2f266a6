//! Counters of the client's work, shared by its clones.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of everything the client did, for progress and reports.
#[derive(Debug, Default)]
pub struct Stats {
    /// Requests sent (every attempt).
    pub requests: AtomicU64,
    /// Attempts that were retried.
    pub retries: AtomicU64,
    /// 429 answers.
    pub throttled: AtomicU64,
    /// 5xx answers.
    pub server_errors: AtomicU64,
    /// Connection errors, resets and timeouts.
    pub transport_errors: AtomicU64,
    /// Bodies that were cut short or did not parse.
    pub bad_bodies: AtomicU64,
    /// Response bytes received.
    pub bytes: AtomicU64,
}

impl Stats {
    /// Reads a counter.
    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}
