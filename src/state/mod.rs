//! Checkpoints, resume, leases and orphan cleanup: what a job has committed,
//! kept with the output so that a job resumes from any machine and shards
//! of one job never write the same object.
//!
//! # Invariants
//!
//! 1. **Data before checkpoint (exactly once).** A unit's data files are
//!    complete and durable (see [`crate::sink`]) *before* the checkpoint
//!    that counts them is written. File names are deterministic
//!    (`<job>-<unit>-<seq>.parquet`), so after a crash every file of a unit
//!    with `seq < next_seq` is committed and every file with
//!    `seq >= next_seq` is an orphan of uncommitted work, which
//!    [`StateStore::remove_orphans`] deletes before the unit fetches again
//!    from its cursor.
//! 2. **A unit without a checkpoint owns no committed file.** Deleting a
//!    unit's checkpoint makes it start over, its files removed first: the
//!    safe fix for a damaged checkpoint, and how `verify --repair` works.
//! 3. **No document is ever seen half-written.** Documents that change are
//!    replaced atomically; documents that several runs (shards) may create
//!    at once are created with an atomic create-if-absent, and every
//!    creator reads back the one that won (see *Atomicity* below).
//! 4. **Ownership by exact name.** A job's files are only those whose
//!    names parse strictly as its own (`<job>-`, then a unit id, see
//!    [`crate::plan::is_unit_id`], then a sequence of at least six digits),
//!    never a name prefix: jobs sharing an output never delete, rewrite or
//!    count each other's files, and state lives under the job's own
//!    directory.
//! 5. **One writer per job or shard**: a lease ([`lease`]) is held for as
//!    long as a run may write the job's files or state.
//! 6. **`--fresh` finishes once started**: its marker is written first and
//!    removed last, and state goes before data ([`StateStore::clear`]).
//! 7. **Versioned documents.** Every document carries `version`
//!    ([`STATE_VERSION`]; older ones down to [`OLDEST_STATE_VERSION`] are
//!    read as they are); a document of another version, or one that does
//!    not parse, is a [`StateError::Corrupt`] naming its location and the
//!    safe fix, never silently ignored or overwritten.
//! 8. **No secret reaches state.** Documents are redacted
//!    ([`crate::util::redact`]) as they are written.
//!
//! # On-disk format
//!
//! Paths are relative to the output root (`<uri>/`). Documents are
//! pretty-printed JSON.
//!
//! | Path under `_chainetl/<job>/` | Written by | When | Atomicity |
//! |---|---|---|---|
//! | `job.json` ([`JobState`]) | [`StateStore::create_job`] | the job's first run, before any unit | create-if-absent |
//! | `exports/e<i>.json` ([`AddedExport`]) | [`StateStore::create_added_export`] | a run finds export `i` appended to the spec | create-if-absent |
//! | `units/<unit>.json` ([`UnitState`]) | [`StateStore::save_unit`] | after each commit of the unit (its files durable first); deleted once folded into a manifest, by [`StateStore::delete_units`] once its segment is complete or a reorg repair redoes it, and by `verify --repair` | conditional replace |
//! | `manifests/<seq:010>-<time>-<pid>-<n>.json` ([`Manifest`], compact JSON) | [`StateStore::fold_units`] (finished units' checkpoints, at the start of each pass and the end of a run), [`StateStore::delete_units`] (`dropped` units), [`StateStore::merge_manifests`] (all in one, by a run holding the whole job: at its end once there are [`MERGE_AT`], between passes once there are [`MERGE_IN_RUN_AT`]) | see *Manifests* | create-if-absent, a name no other writer uses; deleted by the merge that replaces it |
//! | `compacted/<partition, '/' as "__">.json` ([`Compaction`]) | [`StateStore::save_compaction`] | a compaction of the partition begins, reaches its swap and ends; a `verify --repair` dissolves it (the record left names no file, its generations kept taken) | conditional replace; folded into `compactions.json` once settled, deleted by [`StateStore::delete_compaction`] |
//! | `compactions.json` ([`CompactionIndex`], compact JSON) | [`StateStore::fold_compactions`] (at the end of a compaction pass, and every few hundred partitions in one), [`StateStore::delete_compaction`] | see *Compaction records* | conditional replace, by the one holder of the whole job's lease |
//! | `marks/e<i>-<chain>.json` ([`Mark`]) | [`StateStore::save_mark`] | a segment of an incremental export is complete (the mark advances), and when a reorg repair begins and ends | atomic replace |
//! | `segments/e<i>-<chain>.json` (incremental) or `segments/<segment-id>.json` (aligned) ([`SegmentDoc`]) | [`StateStore::create_segment`] | before the segment's units start; deleted by [`StateStore::remove_segment`] when it is complete or replaced | create-if-absent |
//! | `periods/<segment-id>.json` ([`SegmentDoc`]) | [`StateStore::save_period_done`] | an aligned period is complete | atomic replace |
//! | `runs/<run-id>.json` (run report, its schema versioned by the job stage) | [`StateStore::save_doc`] | at the end of every run; never read back | atomic replace |
//! | `runs/latest.json` (a copy of the last run's report) | [`StateStore::save_doc`] | after that run's own report | atomic replace |
//! | `migration.json` ([`Migration`]) | [`StateStore::save_migration`] | a run begins a change of the output's format (made from the rows it holds), and reaches a phase of it | atomic replace; deleted by [`StateStore::end_migration`] after `job.json` records the new identity |
//! | `repair.json` ([`Repair`]) | [`StateStore::begin_repair`] | a repair (`verify --repair`, checkpoints gone under compacted rows) is about to make units export again, before any of their rows leaves | atomic replace, by the holder of the whole job's lease; deleted by [`StateStore::end_repair`] once every unit is exported again |
//! | `clearing.json` (`{started_at, seq_floor, generation_floor}`: the floors the job starts over from, read as plain JSON from `job.json`, the records and the files first) | [`StateStore::clear`] | first thing a `--fresh` writes, last thing it deletes (between them it deletes everything above but the leases) | atomic replace |
//! | `leases/<scope>.lock` (local disk) | [`lease::Lease::acquire`] | taken for the whole run; holds the holder's JSON, rewritten in place and read tolerantly | OS lock (`flock`) on the open file |
//! | `leases/<scope>.json` (object stores) | [`lease::Lease::acquire`] | taken for the whole run, renewed every [`lease::RENEW`], deleted on release | create-if-absent, then PUTs conditional on the ETag |
//! | `…/<name>.<pid>.<n>.tmp` (local disk) | the atomic writes below | exists only during a write | removed by the write; leftovers of a dead writer by [`StateStore::remove_stale_tmp`] under the whole job's lease |
//!
//! Data files are the sink's (see [`crate::sink`] for partition paths, and
//! [`crate::storage`] for staging names and when a file is durable); state names them,
//! `<dataset>/<partition dirs>/<job>-<unit>-<seq:06>.parquet` (e.g.
//! `events/chain=base/date=2024-01-02/daily-e0-events-base-b100-200-000003.parquet`),
//! and deletes them: orphans ([`StateStore::remove_orphans`]), files a
//! reorg repair replaces ([`StateStore::delete_data`]), and everything of
//! the job on `--fresh` ([`StateStore::clear`]).
//!
//! # Atomicity
//!
//! - **Atomic replace** and **create-if-absent**: [`crate::storage`]'s
//!   (a temporary file, fsync, rename or hard link on local disk; one PUT,
//!   `PutMode::Create`, on object stores).
//! - **Conditional replace** (object stores; the single-writer documents:
//!   `units/`, `compacted/`, `compactions.json`): the PUT is conditional
//!   on the version this process last read or wrote of the document
//!   (`PutMode::Update` on its ETag; `PutMode::Create` where it last saw
//!   none; unconditional where it never saw it). If another run changed it
//!   (a holder paused past its lease), nothing is written and the fence
//!   closes for good (see [`crate::storage::versions`]); a conditional PUT
//!   refused because it had itself landed (a retry) is recognised by its
//!   bytes.
//! - **Leases**: see [`lease`].
//!
//! # Manifests
//!
//! A unit's checkpoint is `units/<unit>.json` while it runs; once the unit
//! is done, its checkpoint moves into a manifest, which holds many. Reading
//! a job's units ([`StateStore::load_units`]) is then a listing and a read
//! per manifest and per unit in progress, however many units are finished.
//! The units' checkpoints are the manifests applied in order (`seq`, then
//! name; a later entry of a unit replaces an earlier one, `dropped` removes
//! it), then the per-unit files over them. Why no step loses or revives an
//! entry, whatever dies when:
//!
//! - **Fold** (a run, holding the lease of the units it folds: its own
//!   shard's): write a manifest holding the done per-unit checkpoints, then
//!   delete those files. Dying between leaves both, identical: the
//!   per-unit file wins and says the same, and the next fold deletes it
//!   without writing the entry again. A per-unit file is thus never older
//!   than a manifest entry of its unit, which is why it may win.
//! - **Drop** ([`StateStore::delete_units`]: a closed period, a reorg
//!   repair, `verify --repair`): delete the per-unit files first, then
//!   write a manifest dropping the units that manifests hold, applying
//!   after every manifest there is. Dying between leaves the units as they
//!   were before (done, their files in place); the other order could leave
//!   a per-unit file that the drop hides. A reorg repair and `verify
//!   --repair` redo the drop. Closing a segment records it closed (period
//!   done, or mark moved) and removes it before the drop, so a crash there
//!   leaves the units' entries in the manifests for good: true of their
//!   files, and never planned again, they cost bytes, not rows.
//! - **Merge** (only a run holding the whole job's lease, or `chainetl
//!   compact`, which a job run only in shards needs; no other run writes a
//!   manifest meanwhile): write one manifest with every unit as
//!   the manifests say, applying after all of them, then delete them
//!   oldest first. Whatever is left of them is their newest part, which
//!   changes nothing after the merged one: a unit the merged one lacks was
//!   dropped last, by a manifest that is either gone with every entry
//!   before it, or still there after them.
//! - **Shards** never write the same manifest (names are unique per
//!   process and call, and created with create-if-absent) and fold only
//!   their own units, so concurrent folds only add entries of disjoint
//!   units; two manifests of one `seq` hold different units.
//! - **A shard dropping another shard's units** (whichever shard finds a
//!   segment's units all done closes it, and drops them all) while that
//!   shard folds them: the fold read the per-unit files before the drop
//!   deleted them, and its manifest may apply after the drop's, or the drop
//!   may not have named units no manifest held yet. So a fold deletes each
//!   per-unit file only if it is still there, and drops again, in a
//!   manifest after its own, every unit whose file was already gone. If
//!   the file was there, the drop deletes it later and then lists the
//!   manifests, which by then hold the fold's entry, and drops it after it.
//!   Without this, a unit a reorg repair dropped could come back as done
//!   and its rows never be exported again.
//! - **Exactly-once is untouched**: an entry is a checkpoint as its unit
//!   committed it (`done`, `next_seq`, `committed`), so orphan cleanup,
//!   `verify` and compaction read the same thing from a manifest as from a
//!   per-unit file. `--fresh` deletes manifests with the rest of the state.
//! - **Older builds** (state format 1) do not read manifests: they would
//!   take finished units for not started and export them again. The first
//!   run of this build writes `job.json` as format 2 ([`STATE_VERSION`])
//!   before it writes a manifest, so such a build refuses the job.
//!
//! # Compaction records
//!
//! A partition's compaction record says which compacted files hold which
//! unit files' rows, and a swap or repair in progress (see
//! [`crate::job`]'s compaction for the swap). Only a run holding the whole
//! job's lease writes them, so there is one writer. A record being changed
//! is its own file, `compacted/<partition>.json`, which stands over the
//! record's entry in `compactions.json`; once settled (no swap, no repair)
//! it is folded in. Reading them all ([`StateStore::load_compaction_state`])
//! is a listing of `compacted/`, a read of each file there (none when no
//! compaction was cut short), then one read of the index.
//!
//! - **Fold** ([`StateStore::fold_compactions`]): write the index with the
//!   settled files' records, then delete those files. Dying between leaves
//!   a file and an entry that say the same. A reader lists and reads the
//!   files before the index, so a record a fold moves meanwhile is in the
//!   index it reads.
//! - **Delete** ([`StateStore::delete_compaction`]): the entry first, then
//!   the file, which stands for the record while it is there. `verify
//!   --repair` deletes no record: it replaces one with a record that names
//!   no file and keeps its generations taken.
//! - **Settled**: the index keeps a digest of the job's state (units'
//!   `done` and `next_seq`, pending segments, marks, tables, target size)
//!   from the last pass that left every partition compacted or waiting for
//!   the state to change. Files are durable before a checkpoint counts
//!   them, so with the same digest no file became final: the pass lists no
//!   file. A partition waiting for its day to end, or with a replaced file
//!   back in it, leaves the digest unset, so the next pass looks again.

mod compactions;
mod docs;
mod files;
pub use files::Cleared;
mod job;
pub mod lease;
mod live;
mod migration;
mod neighbours;
mod persist;
mod repair;
mod rows;
mod units;
mod verify;

#[cfg(test)]
mod tests;

pub use compactions::{Compactions, JobFile, Listed, repair_closure};
pub use docs::{
    AddedExport, CommittedFile, Compaction, CompactionIndex, JobState, Mark, PendingCompaction, SegmentDoc, TailBlock, UnitState,
};
pub use live::LiveTable;
pub use migration::{Migration, Phase, Rewrite};
pub use neighbours::Neighbour;
pub use persist::{Removed, Superseded};
pub use repair::Repair;
pub use rows::TableRows;
pub use units::{MERGE_AT, MERGE_IN_RUN_AT, Manifest};
pub use verify::{Depth, Progress};
pub use verify::{FileProblem, Interrupted, Operation, Verified};

use crate::sink::{Sink, SinkError};
use std::sync::Arc;

/// Version of the state format this build writes. 2: finished units'
/// checkpoints live in manifests and settled compaction records in
/// `compactions.json`, which a build of version 1 does not read (it would
/// take a job's finished units for not started); `job.json` says 2 from
/// the first run of this build on, so such a build refuses the job.
pub const STATE_VERSION: u32 = 2;
/// The oldest state format this build reads: a job that an older build
/// started carries on, its documents read as they are.
pub const OLDEST_STATE_VERSION: u32 = 1;

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
        let source = source.into();
        // The store's or the file system's own error, not its wrapper.
        let source = match source.downcast::<crate::storage::StorageError>() {
            Ok(e) => e.into_cause(),
            Err(other) => other,
        };
        StateError::Io {
            path: path.into(),
            action,
            source,
        }
    }
}

/// Reads and writes one job's state.
#[derive(Debug, Clone)]
pub struct StateStore {
    sink: Arc<Sink>,
    job: String,
    dir: String,
    /// The sequence a unit without a checkpoint starts its files at (see
    /// [`StateStore::seq_floor`]), once loaded.
    floor: Arc<std::sync::atomic::AtomicU64>,
    /// The generation compactions start above (see
    /// [`StateStore::generation_floor`]), once loaded.
    generation_floor: Arc<std::sync::atomic::AtomicU64>,
}

impl StateStore {
    /// The state of job `job` in `sink`'s output.
    pub fn new(sink: Arc<Sink>, job: &str) -> StateStore {
        StateStore {
            sink,
            job: job.into(),
            dir: format!("_chainetl/{job}"),
            floor: Arc::default(),
            generation_floor: Arc::default(),
        }
    }

    /// The output's URI as configured.
    pub fn output_uri(&self) -> &str {
        self.storage().uri()
    }

    /// The output's storage.
    fn storage(&self) -> &crate::storage::Storage {
        self.sink.storage()
    }

    /// File stem prefix of this job's data files.
    pub fn file_prefix(&self, unit: &str) -> String {
        format!("{}-{unit}", self.job)
    }

    /// Where `rel` is, as a user finds it: the output's URI joined with it.
    fn location(&self, rel: &str) -> String {
        format!("{}/{rel}", self.storage().uri().trim_end_matches('/'))
    }
}
