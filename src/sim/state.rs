//! The simulator's state, shared by its handlers: its data, options and
//! clock, the quota's bucket, the fault rolls, and what it answered.

use super::data::SimData;
use crate::spec::SimOptions;
use crate::vocab::chain::Chain;
use crate::vocab::window::parse_instant;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Instant;
use tokio::sync::Mutex;

/// One running simulator, shared by its handlers.
pub(super) struct Sim {
    pub(super) data: SimData,
    pub(super) opts: SimOptions,
    /// Unix ms the clock is frozen at, or `i64::MIN` when it runs.
    pub(super) frozen_ms: AtomicI64,
    /// Seals cursors and seeds the fault rolls.
    pub(super) secret: u64,
    requests: AtomicU64,
    /// The quota's token bucket: tokens, and when it was last filled.
    pub(super) bucket: Mutex<(f64, Instant)>,
    /// `--forbid`, read: (chain, endpoint), None for every one.
    pub(super) forbidden: Vec<(Option<Chain>, Option<&'static str>)>,
    /// What it answered, for `GET /_sim/stats`.
    pub(super) stats: SimStats,
}

/// What the simulator has answered on the v2 paths: tests count a
/// client's requests here, on the server's side.
#[derive(Debug, Default)]
pub(super) struct SimStats {
    /// Requests received.
    pub(super) requests: AtomicU64,
    /// Answered 401 (a wrong key).
    pub(super) unauthorized: AtomicU64,
    /// Answered 403 (`--forbid`).
    pub(super) forbidden: AtomicU64,
    /// Unix ms (the wall clock, not the simulator's) of the first 401 or
    /// 403; 0 before one.
    pub(super) first_refusal_ms: AtomicI64,
}

impl Sim {
    /// The simulator's clock, in unix milliseconds.
    pub(super) fn now_ms(&self) -> i64 {
        match self.frozen_ms.load(Ordering::Relaxed) {
            i64::MIN => chrono::Utc::now().timestamp_millis(),
            t => t,
        }
    }

    /// A deterministic draw in `[0, 1)` per request, for fault injection.
    pub(super) fn roll(&self) -> f64 {
        let n = self.requests.fetch_add(1, Ordering::Relaxed);
        let z = mix(self.secret ^ 0x5eed, n);
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Mixes two words into one (splitmix64's finalizer): fault rolls, cursor
/// seals and query fingerprints.
pub(super) fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The simulator's state from its options, which are checked here too:
/// `chainetl sim` takes them straight from the command line.
pub(super) fn start(opts: SimOptions) -> Result<Sim, String> {
    let frozen_ms = match (&opts.frozen_at, opts.freeze_head) {
        (Some(t), _) => Some(parse_instant(t).map_err(|e| format!("--frozen-at: {e}"))? * 1000),
        (None, true) => Some(chrono::Utc::now().timestamp_millis()),
        (None, false) => None,
    };
    for (name, v) in [
        ("--error-rate", opts.error_rate),
        ("--reset-rate", opts.reset_rate),
        ("--truncate-rate", opts.truncate_rate),
    ] {
        if !(0.0..=1.0).contains(&v) {
            return Err(format!("{name} must be between 0 and 1, got {v}"));
        }
    }
    if opts.quota_rps < 0.0 {
        return Err("--quota-rps must not be negative".into());
    }
    let forbidden = opts
        .forbid
        .iter()
        .map(|f| crate::spec::parse_forbid(f).map_err(|m| format!("--forbid {m}")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Sim {
        data: SimData::new(opts.seed, opts.events_per_block),
        secret: mix(opts.seed, 0xc0ff_ee00),
        frozen_ms: AtomicI64::new(frozen_ms.unwrap_or(i64::MIN)),
        requests: AtomicU64::new(0),
        bucket: Mutex::new((opts.quota_rps.max(1.0), Instant::now())),
        forbidden,
        stats: SimStats::default(),
        opts,
    })
}
