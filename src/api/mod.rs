//! Typed client of the Blockchain Data Service v2.
//!
//! Owns retries: 429, 5xx, timeouts, connection errors and truncated bodies
//! are retried with exponential backoff and jitter (`backon`), honouring
//! `Retry-After` up to `max_retry_after`; any other 4xx fails at once with
//! the server's message and the request URL. A 2xx body that is not the
//! documented JSON (not JSON at all, invalid UTF-8, or JSON of the wrong
//! shape) fails at once too: the service would send it again.
//!
//! Bounds, whatever the server does:
//! - memory: a body is read incrementally and never held past
//!   `max_response_bytes` (error bodies past [`ERROR_BODY_BYTES`]), so the
//!   client holds at most `max_concurrency` such bodies;
//! - time: each request (all its attempts and waits) ends within its
//!   budget, `timeout × (max_retries + 1)`;
//! - reachability: when no request of the client has reached the service
//!   for [`ClientConfig::down_after`], every request fails at once with one
//!   [`ApiError::ServiceDown`] (the job stops rather than each unit
//!   retrying to exhaustion in turn);
//! - cancellation: once the cancel signal is set, waits and requests in
//!   flight end at once and no request is sent;
//! - refusals: a 401 (the key) or a 403 (one chain's endpoint) is recorded
//!   for every clone of the client before its request slot is given up;
//!   every request it covers, in flight, waiting or not yet sent, then ends
//!   at once with it, and none is sent ([`refusal`]).
//!
//! The API key only ever travels in the `Authorization` header: it is in
//! no error, log line or `Debug` output; building a client registers it
//! with [`crate::util::redact`], and whatever a server quotes back (a 401
//! may quote the key) is passed through it before it reaches an error.
//!
//! `api` knows only the shared vocabulary, the cross-cutting support
//! ([`crate::util`]) and the spec's defaults.

mod attempt;
mod body;
mod client;
mod config;
mod endpoints;
mod error;
mod health;
mod limit;
mod outcome;
mod query;
pub mod refusal;
mod scan;
mod slots;
mod stats;
pub mod types;

pub use body::ERROR_BODY_BYTES;
pub use client::Client;
pub use config::{ClientConfig, MAX_BACKOFF, MIN_BACKOFF, Secret};
pub use error::ApiError;
pub use limit::Limiter;
pub use query::{BlocksQuery, EventsQuery, PortfolioQuery, Sort};
pub use refusal::{Endpoint, Refusal, Resource};
pub use stats::Stats;

/// Reads a 2xx body of `/v2/{chain}/events` the way [`Client::events`]
/// does: the single-pass reader of `scan`, or serde_json for any page it
/// leaves (same values and errors either way). Public so that
/// `benches/parquet_floor.rs` measures the export path's own reading.
pub fn read_events_page(body: &[u8]) -> serde_json::Result<types::EventsPage<'_>> {
    body::parse_with(body, scan::events_page)
}
