//! chainetl: export blockchain data from the Blockchain Data Service (v2)
//! into partitioned Parquet, Delta Lake or Apache Iceberg tables on local
//! disk or S3.
//!
//! Stages, each a module that knows only the ones before it:
//! `spec` → `plan` → `api` → `fetch` → `decode` → `storage` → `sink` →
//! `state` → `job` → `cli`. `job` runs a job and is the only stage that wires the
//! others together; `cli` is the command-line face (arguments, rendering,
//! exit codes). Every stage may use the shared vocabulary (`vocab`: chains,
//! datasets, windows, EVM values) and support (`util`: redaction, crash
//! points). `sim` is the built-in simulator of the service; it knows only
//! the vocabulary and the spec.
#![warn(missing_docs, unreachable_pub)]
#![deny(unused_must_use)]

pub mod api;
pub mod cli;
pub mod decode;
pub mod fetch;
pub mod job;
pub mod plan;
pub mod sim;
pub mod sink;
pub mod spec;
pub mod state;
pub mod storage;
pub mod util;
pub mod vocab;
