//! The simulator's HTTP server: the routes of the v2 interface and of the
//! test hooks, behind the fault-injection layer, over its state
//! ([`super::state`]).

use super::{admin, blocks, events, faults, portfolio, reply, tokens};
use crate::spec::SimOptions;
use axum::Router;
use axum::middleware;
use axum::routing::{get, post};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;

/// A running in-process simulator.
#[derive(Debug)]
pub struct SimHandle {
    /// The loopback address it listens on.
    pub addr: SocketAddr,
    /// The server task.
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl SimHandle {
    /// `http://addr`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// Starts a simulator on an ephemeral loopback port.
pub async fn spawn(opts: SimOptions) -> Result<SimHandle, String> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("cannot bind the simulator: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the simulator's address: {e}"))?;
    let app = router(opts)?;
    let task = tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(SimHandle { addr, task })
}

/// Serves the simulator on `listener` until the process ends.
pub async fn serve(opts: SimOptions, listener: TcpListener) -> Result<(), String> {
    let app = router(opts)?;
    axum::serve(listener, app).await.map_err(|e| e.to_string())
}

fn router(opts: SimOptions) -> Result<Router, String> {
    let sim = Arc::new(super::state::start(opts)?);
    if sim.opts.reorg_depth > 0 {
        admin::inject_reorg(&sim, sim.opts.reorg_depth, None);
    }
    Ok(Router::new()
        .route("/v2/{chain}/wallets/{wallet}/portfolio/daily", get(portfolio::portfolio))
        .route("/v2/{chain}/tokens/{address}", get(tokens::token))
        .route("/v2/{chain}/blocks", get(blocks::blocks))
        .route("/v2/{chain}/blocks/{number}", get(blocks::block_by_number))
        .route("/v2/{chain}/events", get(events::events))
        .fallback(reply::not_found)
        .layer(middleware::from_fn_with_state(sim.clone(), faults::faults))
        .route("/_sim/reorg", post(admin::reorg))
        .route("/_sim/advance", post(admin::advance))
        .route("/_sim/forks", get(admin::forks))
        .route("/_sim/stats", get(admin::stats))
        .with_state(sim))
}
