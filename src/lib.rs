//! chainetl: export blockchain data from the Blockchain Data Service (v2)
//! into partitioned Parquet on local disk or S3.
//!
//! Stages, each a module that knows only the ones before it:
//! `spec` → `plan` → `fetch` (through `api`) → `decode` → `sink` → `state`.
//! `sim` is the built-in simulator of the service; `run` drives a job and
//! `incremental` its high-water marks, follow mode and reorg repair.
#![warn(missing_docs, unreachable_pub)]
#![deny(unused_must_use)]

pub mod api;
pub mod cli;
pub mod decode;
pub mod fetch;
pub mod incremental;
pub mod plan;
pub mod progress;
pub mod run;
pub mod sim;
pub mod sink;
pub mod spec;
pub mod state;
pub mod util;
pub mod vocab;

// The vocabulary and support modules under their first names.
pub use util::{failpoint, redact};
pub use vocab::{chain, evm, window};
