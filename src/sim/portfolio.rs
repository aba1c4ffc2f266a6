//! `GET /v2/{chain}/wallets/{wallet}/portfolio/daily`: a wallet's holdings
//! per day, newest day first, paged by days.

use super::cursor::{Cursor, fingerprint, finish_list, page_start};
use super::json;
use super::params::{MAX_PORTFOLIO_LIMIT, PORTFOLIO_WINDOW_SECS, address_param, limit, parse_address, parse_chain, query_pairs, window};
use super::reply::{ApiError, bad, ok_json};
use super::state::Sim;
use crate::vocab::window::{Resolved, date_string, day_of};
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use std::sync::Arc;

pub(super) async fn portfolio(
    State(sim): State<Arc<Sim>>,
    Path((chain, wallet)): Path<(String, String)>,
    RawQuery(q): RawQuery,
) -> Result<Response, ApiError> {
    let chain = parse_chain(&chain)?;
    let wallet_addr =
        parse_address(&wallet).ok_or_else(|| bad(format!("wallet_address must match ^0x[a-fA-F0-9]{{40}}$, got `{wallet}`")))?;
    let pairs = query_pairs(&q);
    let limit = limit(&pairs, MAX_PORTFOLIO_LIMIT, MAX_PORTFOLIO_LIMIT)?;
    let token = address_param(&pairs, "token_address")?;
    let (lo, hi) = days(&sim, &pairs)?;
    let fp = fingerprint(&format!("portfolio/{}", wallet.to_ascii_lowercase()), chain, &pairs);
    let c = page_start(&sim, &pairs, fp, || Cursor {
        fp,
        lo,
        hi,
        pos: hi,
        idx: 0,
    })?;
    let mut out = Vec::with_capacity(4096);
    out.extend_from_slice(b"{\"portfolio\":[");
    let mut pos = c.pos;
    let mut taken = 0;
    while pos > c.lo && taken < limit {
        pos -= 1;
        if taken > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"date\":\"");
        out.extend_from_slice(date_string(pos as i32).as_bytes());
        out.extend_from_slice(b"\",\"holdings\":[");
        for (k, h) in sim
            .data
            .holdings(chain, &wallet_addr, pos as i32, token.as_ref())
            .iter()
            .enumerate()
        {
            if k > 0 {
                out.push(b',');
            }
            json::holding(&mut out, h);
        }
        out.extend_from_slice(b"]}");
        taken += 1;
    }
    finish_list(&mut out, (pos > c.lo).then_some(Cursor { pos, ..c }), sim.secret);
    Ok(ok_json(out))
}

/// The days `[lo, hi)` (day numbers) whose midnight lies in the query's
/// window (the last 30 days when none), clipped to today.
fn days(sim: &Sim, pairs: &[(String, String)]) -> Result<(u64, u64), ApiError> {
    let now = sim.now_ms() / 1000;
    let (start, end) = match window(pairs, now)? {
        None => (now - PORTFOLIO_WINDOW_SECS, now),
        Some(Resolved::Time { start, end }) => (start, end),
        Some(Resolved::Blocks { .. }) => {
            return Err(bad(
                "window: portfolios take a relative window or a time interval, not a block range",
            ));
        }
    };
    let end = end.min(now + 1);
    let first_day = day_of(start + 86_399) as i64;
    let last_excl = if sim.opts.inclusive_end {
        day_of(end) as i64 + 1
    } else {
        day_of(end + 86_399) as i64
    };
    Ok((first_day.max(0) as u64, last_excl.max(first_day).max(0) as u64))
}
