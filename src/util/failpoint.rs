//! Test-only crash points. `CHAINETL_FAILPOINT=name:N` aborts the process
//! (like kill -9: no destructors, no flushing) the N-th time `name` is hit.
//! Names: `during-file-write`, `after-file-write` (file durable, checkpoint
//! not yet written), `during-checkpoint` (temporary checkpoint written, not
//! yet renamed into place), `during-fresh` (after each data file `--fresh`
//! deletes); compaction: `compact-recorded` (swap recorded, nothing
//! written), `compact-writing` (after each batch of an output),
//! `compact-written` (outputs durable and hidden, swap not recorded),
//! `compact-swapping` (swap recorded, nothing published), `compact-deleting`
//! (after each input deleted).
//!
//! Invariant: only a build with the `failpoints` cargo feature honours the
//! variable. `cargo test` turns the feature on (the package is its own
//! dev-dependency with it, so the binary the integration tests run has
//! it); `cargo build --release`, `make build` and the Docker image do not,
//! and there [`hit`] is an empty function the optimiser removes. The check
//! is `cfg!` rather than `#[cfg]` so that both builds type-check the hook.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

static CONFIG: OnceLock<Option<(String, u64)>> = OnceLock::new();
static HITS: AtomicU64 = AtomicU64::new(0);

/// Whether this build honours `CHAINETL_FAILPOINT`.
pub const ENABLED: bool = cfg!(feature = "failpoints");

/// Aborts the process if the configured failpoint is `name` and its count
/// is reached (only in a build with the `failpoints` feature).
#[inline]
pub fn hit(name: &str) {
    if !ENABLED {
        return;
    }
    let cfg = CONFIG.get_or_init(|| {
        let v = std::env::var("CHAINETL_FAILPOINT").ok()?;
        let (n, count) = v.split_once(':').unwrap_or((&v, "1"));
        Some((n.to_string(), count.parse().unwrap_or(1)))
    });
    if let Some((n, count)) = cfg
        && n == name
        && HITS.fetch_add(1, Ordering::SeqCst) + 1 >= *count
    {
        eprintln!("failpoint {name} reached: aborting");
        std::process::abort();
    }
}
