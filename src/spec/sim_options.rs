//! The simulator's settings: the `[source.sim]` table of a spec and the
//! flags of `chainetl sim`, one type for both so their names and defaults
//! cannot drift apart. Defined here, where the spec is validated, so that
//! `spec` needs nothing of `sim`; `sim` re-exports it.

use serde::Deserialize;

/// Simulator settings; the same names serve as CLI flags and as the
/// `[source.sim]` table of a spec.
#[derive(Debug, Clone, clap::Args, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimOptions {
    /// Seed of all generated data.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Mean number of events per block.
    #[arg(long, default_value_t = 40)]
    pub events_per_block: u32,
    /// Requests per second allowed before answering 429 with Retry-After (0: no quota).
    #[arg(long, default_value_t = 0.0)]
    pub quota_rps: f64,
    /// Share of requests answered with a 5xx (some with HTML bodies).
    #[arg(long, default_value_t = 0.0)]
    pub error_rate: f64,
    /// Share of requests whose connection is reset mid-body.
    #[arg(long, default_value_t = 0.0)]
    pub reset_rate: f64,
    /// Share of requests whose JSON body is cut short.
    #[arg(long, default_value_t = 0.0)]
    pub truncate_rate: f64,
    /// Milliseconds added to every response.
    #[arg(long, default_value_t = 0)]
    pub latency_ms: u64,
    /// Freeze the chain head at the moment the simulator starts.
    #[arg(long)]
    pub freeze_head: bool,
    /// Freeze the simulator clock at this ISO instant (implies a frozen head).
    #[arg(long)]
    pub frozen_at: Option<String>,
    /// When set, requests carrying another bearer key get 401 (no key is still accepted).
    #[arg(long, env = "CHAINETL_SIM_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Treat the end of time intervals as inclusive.
    #[arg(long)]
    pub inclusive_end: bool,
    /// Render event topics as JSON numbers instead of 0x-hex strings.
    #[arg(long)]
    pub topics_as_numbers: bool,
    /// Upper bound of events examined per request when filters are selective.
    #[arg(long, default_value_t = 200_000)]
    pub scan_budget: u64,
    /// Inject a reorg at start: the last K blocks of every chain (up to the
    /// head) get new hashes and new events. More at run time with
    /// `POST /_sim/reorg?depth=K`.
    #[arg(long, default_value_t = 0)]
    pub reorg_depth: u64,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            seed: 42,
            events_per_block: 40,
            quota_rps: 0.0,
            error_rate: 0.0,
            reset_rate: 0.0,
            truncate_rate: 0.0,
            latency_ms: 0,
            freeze_head: false,
            frozen_at: None,
            api_key: None,
            inclusive_end: false,
            topics_as_numbers: false,
            scan_budget: 200_000,
            reorg_depth: 0,
        }
    }
}
