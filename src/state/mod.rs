//! Checkpoints and resume. State lives with the output, under
//! `<output>/_chainetl/<job>/`, so a job resumes from any machine:
//!
//! - `job.json`: format version, job name, identity (what the job exports
//!   and its files' layout) and its hash, the frozen windows, the page size
//!   units were cut for; written once, create-if-absent;
//! - `exports/e<i>.json`: an export appended after the job started: its
//!   identity and frozen window (create-if-absent, so shards agree);
//! - `units/<unit>.json`: per unit, the cursor after the last committed
//!   page, the next file sequence number, rows/files/bytes committed, each
//!   committed file (path, rows, bytes), `done`;
//! - `marks/e<i>-<chain>.json`: an incremental export's high-water mark and
//!   the hashes of its last exported blocks;
//! - `segments/<id>.json`: a slice of an aligned or incremental export fixed
//!   by a run before its units start; `periods/<id>.json`: a finished period;
//! - `leases/<scope>.{lock,json}`: the run holding the job ([`lease`]);
//! - `runs/<run-id>.json`: run reports; `clearing.json`: a `--fresh` in progress.
//!
//! Crash invariant (the exactly-once rule): a unit's data files are made
//! durable *before* its checkpoint is written, and file names are
//! deterministic (`<job>-<unit>-<seq>.parquet`). So after a crash every
//! file with `seq < next_seq` is committed and every file with
//! `seq >= next_seq` is an orphan of uncommitted work, which
//! [`StateStore::remove_orphans`] deletes before the unit fetches again from
//! its cursor. A unit without a checkpoint therefore owns no committed
//! file: deleting a checkpoint makes the unit start over, its files removed
//! first (the safe fix for a damaged one, and how `verify --repair` works).
//! Checkpoints are written tmp → fsync → rename locally (temporary names
//! unique per process and call) and as a single PUT on object stores, so
//! they are never seen half-written.
//!
//! Ownership: a job's files are only those whose names parse strictly as its
//! own (`<job>-` then a unit id, see [`crate::plan::is_unit_id`], then a
//! sequence), never a name prefix: jobs sharing an output never touch each
//! other's files. One run writes a job (or a shard) at a time: [`lease`].

mod cleanup;
mod docs;
mod files;
mod fresh;
mod job;
pub mod lease;
mod marks;
mod persist;
mod segments;
mod units;
mod verify;

pub use docs::{AddedExport, CommittedFile, JobState, Mark, SegmentDoc, TailBlock, UnitState};
pub use verify::FileProblem;

use crate::sink::{Sink, SinkError};
use std::sync::Arc;

/// Version of the state format this build reads and writes.
pub const STATE_VERSION: u32 = 1;

/// Errors reading or writing state.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// Storage failed.
    #[error("state {path}: {action}: {source}")]
    Io {
        /// Object path.
        path: String,
        /// What was being done: `reading`, `writing`, `creating`, `listing`, `encoding`.
        action: &'static str,
        /// Cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The file is not ours or is from another version.
    #[error("state file {path} is unreadable: {message}")]
    Corrupt {
        /// Where the file is, as a user finds it (the output's URI joined with its path).
        path: String,
        /// What is wrong, and the safe fix.
        message: String,
        /// The parse error, when it did not parse.
        #[source]
        source: Option<serde_json::Error>,
    },
    /// Removing files failed.
    #[error(transparent)]
    Sink(#[from] SinkError),
}

impl StateError {
    /// Storage failed at `path` while doing `action`.
    pub(crate) fn io(path: &str, action: &'static str, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> StateError {
        StateError::Io {
            path: path.into(),
            action,
            source: source.into(),
        }
    }
}

/// Reads and writes one job's state.
#[derive(Debug, Clone)]
pub struct StateStore {
    sink: Arc<Sink>,
    job: String,
    dir: String,
}

impl StateStore {
    /// The state of job `job` in `sink`'s output.
    pub fn new(sink: Arc<Sink>, job: &str) -> StateStore {
        StateStore {
            sink,
            job: job.into(),
            dir: format!("_chainetl/{job}"),
        }
    }

    /// The output's URI as configured.
    pub fn output_uri(&self) -> &str {
        self.sink.uri()
    }

    /// File stem prefix of this job's data files.
    pub fn file_prefix(&self, unit: &str) -> String {
        format!("{}-{unit}", self.job)
    }

    /// Where `rel` is, as a user finds it: the output's URI joined with it.
    fn location(&self, rel: &str) -> String {
        format!("{}/{rel}", self.sink.uri().trim_end_matches('/'))
    }
}
