//! The Blockchain Data Service simulator: the whole v2 interface over real
//! HTTP, with deterministic data ([`data`]) and optional fault injection.
//!
//! It serves `chainetl sim --port PORT` and, in-process on a loopback port,
//! specs whose `base_url` is `"sim"`. Its choices where the spec is silent:
//! time intervals are half-open (`--inclusive-end` makes them closed), list
//! endpoints default to `sort_by=latest`, portfolio days come newest first,
//! topics are 0x-hex strings (`--topics-as-numbers` renders them as JSON
//! numbers), and errors are `{"error": {"code", "message"}}`: 401 for a
//! bearer key other than `--api-key` (quoting the key sent back), 403 for
//! what `--forbid` names (a chain or endpoint the key's plan lacks).
//!
//! Test hooks outside the v2 paths: `POST /_sim/reorg?depth=K[&chain=C]`
//! replaces the last K blocks up to the head (new hashes, new events),
//! `POST /_sim/advance?secs=N` moves a frozen clock forward,
//! `GET /_sim/forks` lists the reorgs injected so far, and `GET /_sim/stats`
//! counts the requests received and the 401s and 403s answered.
//!
//! Invariants: the same seed gives the same data, the same answers and
//! the same cursors; a cursor is sealed with a secret of the seed and
//! bound to its query, so a forged or borrowed one is refused; every
//! query parameter is checked as the service documents it (a bad one is
//! a 400 naming it); which requests get a fault follows a sequence of
//! draws fixed by the seed.
//!
//! `sim` knows only the shared vocabulary and the spec (its options,
//! [`crate::spec::SimOptions`], are defined with the spec that validates them).

mod admin;
mod blocks;
mod cursor;
pub mod data;
mod events;
mod faults;
pub(crate) mod json;
mod params;
mod portfolio;
mod reply;
mod server;
mod state;
mod tokens;

/// The simulator's server: started in-process or on a listener.
pub use server::{SimHandle, serve, spawn};
