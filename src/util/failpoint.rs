//! Test-only crash points: once armed with `name` and `N`, the N-th
//! [`hit`] of `name` aborts the process (like kill -9: no destructors, no
//! flushing). Names: `during-file-write`, `after-file-write` (file durable,
//! checkpoint not yet written), `during-checkpoint` (temporary checkpoint
//! written, not yet renamed into place), `during-fresh` (after each data
//! file `--fresh` deletes), `during-fold`, `during-merge`,
//! `during-compaction-fold` (state folds); compaction: `compact-recorded`
//! (swap recorded, nothing written), `compact-writing` (after each batch of
//! an output), `compact-written` (outputs durable and hidden, swap not
//! recorded), `compact-swapping` (swap recorded, nothing published),
//! `compact-deleting` (after each input deleted); changing the output's
//! format: `conversion-recorded` (its record written, nothing changed),
//! `during-conversion` (after each table's commit, or each file deleted),
//! `conversion-logs` (every file deleted, the Delta logs not yet),
//! `during-log-delete` (after each Delta log file deleted),
//! `migration-recorded` (the job's new identity written, the record not
//! yet deleted); publishing a unit's files in a format with commits:
//! `before-table-commit`, `after-table-commit` (armed by their old names
//! `before-delta-commit`, `after-delta-commit` too); a table format's
//! commit: `table-manifests-written` (an
//! Iceberg commit's manifests and manifest list written, its metadata
//! version not), `table-version-written` (the metadata version made, the
//! version hint readers follow not yet pointed at it).
//!
//! Invariant: nothing in the library or the `chainetl` binary arms a crash
//! point, and nothing here reads the environment. Only the test tool
//! `tests/bin/chainetl-failpoints.rs` (an example target: `cargo test`
//! builds it, `cargo build`, `make build` and `cargo install` do not) calls
//! [`arm`], from a variable of its own. So the binary users run is the same
//! build whatever ran before it, and an unarmed [`hit`] is one relaxed
//! atomic load.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Crash points renamed, by their old names (which still arm them).
const RENAMED: [(&str, &str); 2] = [
    ("before-delta-commit", "before-table-commit"),
    ("after-delta-commit", "after-table-commit"),
];

static ARMED: AtomicBool = AtomicBool::new(false);
static POINT: OnceLock<(String, u64, bool)> = OnceLock::new();
static HITS: AtomicU64 = AtomicU64::new(0);

/// Arms the crash point `spec` (`name`, `name:N`, N counting from 1, or
/// `name:N:stop`): the N-th hit of `name` aborts, or with `stop` freezes
/// the whole process with SIGSTOP (a paused VM or container) until it is
/// sent SIGCONT. For the test tool only; a second call is ignored.
pub fn arm(spec: &str) {
    let mut parts = spec.split(':');
    let name = parts.next().unwrap_or_default();
    let name = RENAMED.iter().find(|(old, _)| *old == name).map_or(name, |(_, new)| *new);
    let count = parts.next().and_then(|c| c.parse().ok()).unwrap_or(1);
    let stop = parts.next() == Some("stop");
    if POINT.set((name.to_string(), count, stop)).is_ok() {
        ARMED.store(true, Ordering::Release);
    }
}

/// Aborts the process if the armed crash point is `name` and its count is
/// reached; does nothing if no point is armed.
#[inline]
pub fn hit(name: &str) {
    if !ARMED.load(Ordering::Relaxed) {
        return;
    }
    if let Some((n, count, stop)) = POINT.get()
        && n == name
    {
        let hit = HITS.fetch_add(1, Ordering::SeqCst) + 1;
        if *stop && hit == *count {
            eprintln!("failpoint {name} reached: stopping (SIGSTOP)");
            // SAFETY: raise only sends this process a signal.
            unsafe { libc::raise(libc::SIGSTOP) };
        } else if !*stop && hit >= *count {
            eprintln!("failpoint {name} reached: aborting");
            std::process::abort();
        }
    }
}
