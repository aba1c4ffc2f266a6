//! `GET /v2/{chain}/tokens/{address}`.

use super::json;
use super::params::{parse_address, parse_chain};
use super::reply::{ApiError, bad, ok_json};
use super::state::Sim;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use std::sync::Arc;

pub(super) async fn token(State(sim): State<Arc<Sim>>, Path((chain, address)): Path<(String, String)>) -> Result<Response, ApiError> {
    let chain = parse_chain(&chain)?;
    let addr = parse_address(&address).ok_or_else(|| bad(format!("token_address must match ^0x[a-fA-F0-9]{{40}}$, got `{address}`")))?;
    let t = sim.data.token(chain, &addr).ok_or_else(|| {
        ApiError(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no token contract at {address} on {chain}"),
        )
    })?;
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"{\"token\":");
    json::token(&mut out, &t);
    out.push(b'}');
    Ok(ok_json(out))
}
