//! The query parameters of the v2 endpoints, checked as the service
//! documents them; a bad one is a 400 naming it and what was expected.

use super::reply::{ApiError, bad};
use super::state::Sim;
use crate::vocab::chain::Chain;
use crate::vocab::evm::is_address;
use crate::vocab::window::{Resolved, Window};
use axum::http::StatusCode;

/// Rows per page of the list endpoints (blocks, events) when the query
/// names no `limit`, and the most it may name.
pub(super) const LIST_LIMIT: u64 = 50;
pub(super) const MAX_LIST_LIMIT: u64 = 1000;
/// Days per portfolio page, when named and at most.
pub(super) const MAX_PORTFOLIO_LIMIT: u64 = 31;
/// Block numbers one `numbers` query may name.
pub(super) const MAX_NUMBERS: usize = 1000;
/// The window of a portfolio query that names none.
pub(super) const PORTFOLIO_WINDOW_SECS: i64 = 30 * 86_400;

/// A chain of the path; an unknown one is a 404.
pub(super) fn parse_chain(name: &str) -> Result<Chain, ApiError> {
    name.parse()
        .map_err(|e: String| ApiError(StatusCode::NOT_FOUND, "unknown_chain", e))
}

/// The query string as pairs; repeated keys are kept.
pub(super) fn query_pairs(raw: &Option<String>) -> Vec<(String, String)> {
    match raw {
        Some(q) => form_urlencoded::parse(q.as_bytes()).into_owned().collect(),
        None => Vec::new(),
    }
}

/// The last value of `name`.
pub(super) fn param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// `limit`, from 1 to `max`.
pub(super) fn limit(pairs: &[(String, String)], max: u64, default: u64) -> Result<u64, ApiError> {
    match param(pairs, "limit") {
        None => Ok(default),
        Some(v) => match v.parse::<u64>() {
            Ok(n) if (1..=max).contains(&n) => Ok(n),
            _ => Err(bad(format!("limit must be an integer from 1 to {max}, got `{v}`"))),
        },
    }
}

/// An optional address parameter.
pub(super) fn address_param(pairs: &[(String, String)], name: &str) -> Result<Option<[u8; 20]>, ApiError> {
    match param(pairs, name) {
        None => Ok(None),
        Some(v) => parse_address(v)
            .map(Some)
            .ok_or_else(|| bad(format!("{name} must match ^0x[a-fA-F0-9]{{40}}$, got `{v}`"))),
    }
}

/// The 20 bytes of a 0x address.
pub(super) fn parse_address(v: &str) -> Option<[u8; 20]> {
    if !is_address(v) {
        return None;
    }
    let mut out = [0u8; 20];
    hex::decode_to_slice(&v[2..], &mut out).ok()?;
    Some(out)
}

/// `sort_by`: newest first unless `earliest`.
fn descending(pairs: &[(String, String)]) -> Result<bool, ApiError> {
    match param(pairs, "sort_by") {
        None | Some("latest") => Ok(true),
        Some("earliest") => Ok(false),
        Some(v) => Err(bad(format!("sort_by must be `latest` or `earliest`, got `{v}`"))),
    }
}

/// `window`, resolved against the simulator's clock.
pub(super) fn window(pairs: &[(String, String)], now: i64) -> Result<Option<Resolved>, ApiError> {
    match param(pairs, "window") {
        None => Ok(None),
        Some(v) => Window::parse_service(v).map(|w| Some(w.resolve(now))).map_err(bad),
    }
}

/// What the two block-based list endpoints (blocks, events) share.
pub(super) struct ListQuery {
    pub(super) chain: Chain,
    pub(super) pairs: Vec<(String, String)>,
    pub(super) limit: u64,
    pub(super) desc: bool,
    pub(super) window: Option<Resolved>,
}

impl ListQuery {
    pub(super) fn parse(sim: &Sim, chain: &str, q: &Option<String>) -> Result<ListQuery, ApiError> {
        let chain = parse_chain(chain)?;
        let pairs = query_pairs(q);
        let limit = limit(&pairs, MAX_LIST_LIMIT, LIST_LIMIT)?;
        let desc = descending(&pairs)?;
        let window = window(&pairs, sim.now_ms() / 1000)?;
        Ok(ListQuery {
            chain,
            pairs,
            limit,
            desc,
            window,
        })
    }
}

/// The block range `[lo, hi)` a window selects on `chain`, clipped to the head.
pub(super) fn block_range(sim: &Sim, chain: Chain, w: Option<Resolved>) -> (u64, u64) {
    let head = sim.data.head(chain, sim.now_ms());
    let (lo, hi) = match w {
        None => (0, head + 1),
        Some(Resolved::Blocks { first, last }) => (first, last.saturating_add(1)),
        Some(Resolved::Time { start, end }) => sim.data.blocks_in_time(chain, start, end, sim.opts.inclusive_end),
    };
    (lo.min(head + 1), hi.min(head + 1))
}
