//! The test hooks outside the v2 paths: inject a reorg, move a frozen
//! clock, list the reorgs injected so far, count what was answered.

use super::data::Fork;
use super::reply::{ApiError, bad, json_response};
use super::state::Sim;
use crate::vocab::chain::Chain;
use crate::vocab::window::iso;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Reorgs the last `depth` blocks up to the head, of one chain or all.
pub(super) fn inject_reorg(sim: &Sim, depth: u64, chain: Option<Chain>) -> Vec<Fork> {
    let now = sim.now_ms();
    Chain::ALL
        .into_iter()
        .filter(|c| chain.is_none_or(|x| x == *c))
        .map(|c| {
            let head = sim.data.head(c, now);
            sim.data.reorg(c, (head + 1).saturating_sub(depth.max(1)))
        })
        .collect()
}

fn params(q: &Option<String>) -> HashMap<String, String> {
    form_urlencoded::parse(q.as_deref().unwrap_or("").as_bytes()).into_owned().collect()
}

/// `POST /_sim/reorg?depth=K[&chain=C]`.
pub(super) async fn reorg(State(sim): State<Arc<Sim>>, RawQuery(q): RawQuery) -> Response {
    let p = params(&q);
    let Some(depth) = p.get("depth").and_then(|d| d.parse::<u64>().ok()).filter(|d| *d >= 1) else {
        return bad("depth: expected a number of blocks >= 1").into_response();
    };
    let chain = match p.get("chain").map(|c| c.parse::<Chain>()) {
        None => None,
        Some(Ok(c)) => Some(c),
        Some(Err(m)) => return bad(m).into_response(),
    };
    json_response(&inject_reorg(&sim, depth, chain))
}

/// `POST /_sim/advance?secs=N`: moves a frozen clock forward.
pub(super) async fn advance(State(sim): State<Arc<Sim>>, RawQuery(q): RawQuery) -> Response {
    let p = params(&q);
    let Some(secs) = p.get("secs").and_then(|d| d.parse::<i64>().ok()).filter(|d| *d >= 0) else {
        return bad("secs: expected a number of seconds >= 0").into_response();
    };
    let r = sim
        .frozen_ms
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |t| (t != i64::MIN).then_some(t + secs * 1000));
    match r {
        Ok(t) => json_response(&serde_json::json!({ "now": iso((t + secs * 1000).div_euclid(1000)) })),
        Err(_) => ApiError(
            StatusCode::CONFLICT,
            "not_frozen",
            "the clock runs; start with --freeze-head or --frozen-at".into(),
        )
        .into_response(),
    }
}

/// `GET /_sim/forks`.
pub(super) async fn forks(State(sim): State<Arc<Sim>>) -> Response {
    json_response(&sim.data.forks())
}

/// `GET /_sim/stats`: what the simulator has answered on the v2 paths —
/// `requests` received, `unauthorized` (401s), `forbidden` (403s), and
/// `first_refusal_ms`, the wall clock's unix ms at the first 401 or 403
/// (null before one).
pub(super) async fn stats(State(sim): State<Arc<Sim>>) -> Response {
    let s = &sim.stats;
    let first = s.first_refusal_ms.load(Ordering::SeqCst);
    json_response(&serde_json::json!({
        "requests": s.requests.load(Ordering::SeqCst),
        "unauthorized": s.unauthorized.load(Ordering::SeqCst),
        "forbidden": s.forbidden.load(Ordering::SeqCst),
        "first_refusal_ms": (first > 0).then_some(first),
    }))
}
