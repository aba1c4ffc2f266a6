//! The simulator's settings: the `[source.sim]` table of a spec and the
//! flags of `chainetl sim`, one type for both so their names and defaults
//! cannot drift apart. Defined here, where the spec is validated, so that
//! `spec` needs nothing of `sim`; `sim` re-exports it.

use super::defaults;
use serde::Deserialize;

/// Simulator settings; the same names serve as CLI flags and as the
/// `[source.sim]` table of a spec.
#[derive(Debug, Clone, clap::Args, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimOptions {
    /// Seed of all generated data.
    #[arg(long, default_value_t = defaults::SIM_SEED)]
    pub seed: u64,
    /// Mean number of events per block.
    #[arg(long, default_value_t = defaults::SIM_EVENTS_PER_BLOCK)]
    pub events_per_block: u32,
    /// Requests per second allowed before answering 429 with Retry-After (0: no quota).
    #[arg(long, default_value_t = defaults::SIM_QUOTA_RPS)]
    pub quota_rps: f64,
    /// Share of requests answered with a 5xx (some with HTML bodies).
    #[arg(long, default_value_t = defaults::SIM_FAULT_RATE)]
    pub error_rate: f64,
    /// Share of requests whose connection is reset mid-body.
    #[arg(long, default_value_t = defaults::SIM_FAULT_RATE)]
    pub reset_rate: f64,
    /// Share of requests whose JSON body is cut short.
    #[arg(long, default_value_t = defaults::SIM_FAULT_RATE)]
    pub truncate_rate: f64,
    /// Milliseconds added to every response.
    #[arg(long, default_value_t = defaults::SIM_LATENCY_MS)]
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
    /// Resources answered with 403, as `CHAIN/ENDPOINT` (endpoint `blocks`,
    /// `events`, `portfolio` or `tokens`; `*` for every chain or endpoint):
    /// what a key whose plan lacks them gets. Repeat for more.
    #[arg(long, value_name = "CHAIN/ENDPOINT")]
    pub forbid: Vec<String>,
    /// Treat the end of time intervals as inclusive.
    #[arg(long)]
    pub inclusive_end: bool,
    /// Render event topics as JSON numbers instead of 0x-hex strings.
    #[arg(long)]
    pub topics_as_numbers: bool,
    /// Upper bound of events examined per request when filters are selective.
    #[arg(long, default_value_t = defaults::SIM_SCAN_BUDGET)]
    pub scan_budget: u64,
    /// Inject a reorg at start: the last K blocks of every chain (up to the
    /// head) get new hashes and new events. More at run time with
    /// `POST /_sim/reorg?depth=K`.
    #[arg(long, default_value_t = defaults::SIM_REORG_DEPTH)]
    pub reorg_depth: u64,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            seed: defaults::SIM_SEED,
            events_per_block: defaults::SIM_EVENTS_PER_BLOCK,
            quota_rps: defaults::SIM_QUOTA_RPS,
            error_rate: defaults::SIM_FAULT_RATE,
            reset_rate: defaults::SIM_FAULT_RATE,
            truncate_rate: defaults::SIM_FAULT_RATE,
            latency_ms: defaults::SIM_LATENCY_MS,
            freeze_head: false,
            frozen_at: None,
            api_key: None,
            forbid: Vec::new(),
            inclusive_end: false,
            topics_as_numbers: false,
            scan_budget: defaults::SIM_SCAN_BUDGET,
            reorg_depth: defaults::SIM_REORG_DEPTH,
        }
    }
}

/// The endpoints a `forbid` entry names, as the simulator's paths group
/// them (`portfolio` is `/wallets/{wallet}/portfolio/daily`).
pub const FORBID_ENDPOINTS: [&str; 4] = ["blocks", "events", "portfolio", "tokens"];

/// One `forbid` entry, `CHAIN/ENDPOINT`, read: the chain and the endpoint,
/// None for `*` (every one).
pub fn parse_forbid(entry: &str) -> Result<(Option<crate::vocab::Chain>, Option<&'static str>), String> {
    let bad = || {
        format!(
            "`{entry}`: expected CHAIN/ENDPOINT, the chain one of {} or `*`, the endpoint one of {} or `*`",
            crate::vocab::Chain::ALL.map(|c| c.name()).join(", "),
            FORBID_ENDPOINTS.join(", ")
        )
    };
    let (chain, endpoint) = entry.split_once('/').ok_or_else(bad)?;
    let chain = match chain.trim() {
        "*" => None,
        c => Some(c.parse::<crate::vocab::Chain>().map_err(|_| bad())?),
    };
    let endpoint = match endpoint.trim() {
        "*" => None,
        e => Some(*FORBID_ENDPOINTS.iter().find(|x| **x == e).ok_or_else(bad)?),
    };
    Ok((chain, endpoint))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Chain;

    #[test]
    fn a_forbid_entry_is_a_chain_and_an_endpoint_either_of_them_any() {
        assert_eq!(parse_forbid("arbitrum/events"), Ok((Some(Chain::Arbitrum), Some("events"))));
        assert_eq!(parse_forbid("*/portfolio"), Ok((None, Some("portfolio"))));
        assert_eq!(parse_forbid("base/*"), Ok((Some(Chain::Base), None)));
        for bad in ["arbitrum", "arbitrum/logs", "mars/events", "/events", ""] {
            let e = parse_forbid(bad).unwrap_err();
            assert!(e.contains(&format!("`{bad}`")) && e.contains("tokens"), "{e}");
        }
    }
}
