//! The Blockchain Data Service simulator: the whole v2 interface over real
//! HTTP, with deterministic data ([`data`]) and optional fault injection.
//!
//! It serves `chainetl sim --port PORT` and, in-process on a loopback port,
//! specs whose `base_url` is `"sim"`. Its choices where the spec is silent:
//! time intervals are half-open (`--inclusive-end` makes them closed), list
//! endpoints default to `sort_by=latest`, portfolio days come newest first,
//! topics are 0x-hex strings (`--topics-as-numbers` renders them as JSON
//! numbers), and errors are `{"error": {"code", "message"}}`.
//!
//! Test hooks outside the v2 paths: `POST /_sim/reorg?depth=K[&chain=C]`
//! replaces the last K blocks up to the head (new hashes, new events),
//! `POST /_sim/advance?secs=N` moves a frozen clock forward, and
//! `GET /_sim/forks` lists the reorgs injected so far.

pub mod data;
mod json;
mod server;

/// The simulator's settings, defined with the spec that validates them
/// (`[source.sim]`) so that `spec` needs nothing of `sim`.
pub use crate::spec::SimOptions;
pub use server::{SimHandle, serve, spawn};
